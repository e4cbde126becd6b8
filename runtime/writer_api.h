/* SPDX-License-Identifier: MIT */
/*
 * runtime/writer_api.h - the hooks' fast path, inline.
 *
 * Included by compiler-hooks/cyg_profile.c only. In order: test the gate
 * (one load, one predictable branch when recording is off), read the
 * clock (and CPU), take the per-thread guard, look the function up in the
 * thread's direct-mapped id cache, check CPU, delta and room, store one
 * 8-byte record and publish the new position with a release store (a
 * plain mov on x86-64). Anything unusual goes to fdr_record_slow()
 * (writer.c), which also releases the guard. No locks, syscalls or
 * allocation here, and errno is untouched.
 */
#ifndef FDR_WRITER_API_H
#define FDR_WRITER_API_H

#include <string.h>

#include "clock.h"
#include "runtime.h"

static fdr_always_inline notrace void fdr_record(void *fn, unsigned action)
{
	uintptr_t addr = (uintptr_t)fn;
	struct fdr_thread *t;
	struct fdr_fcache_ent *ce;
	uint64_t tsc, delta, rec;
	uint8_t *pos;
	unsigned cpu;

	/* relaxed: the slow path re-reads the gate with acquire before it touches shared state */
	if (unlikely(atomic_load_explicit(&fdr_gate, memory_order_relaxed) != FDR_GATE_ON))
		goto inactive;
	tsc = fdr_clock_read(&cpu);
	t = &fdr_self;
	if (unlikely(t->guard))
		goto reentry;
	t->guard = 1;
	/* the guard is set before anything below, as seen by a signal handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);

	ce = &t->cache[(addr >> 4) & (FDR_FCACHE_SIZE - 1)];
	pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	delta = tsc - t->last_tsc;	/* huge when the TSC went backwards */
	if (unlikely(ce->addr != addr || cpu != t->cpu || delta > UINT32_MAX ||
		     pos >= atomic_load_explicit(&t->end, memory_order_relaxed)))
		goto slow_path;

	rec = fdrtrace_func_word(action, ce->id) | (delta << 32);
	memcpy(pos, &rec, sizeof(rec));
	t->last_tsc = tsc;
	/* release: the record's bytes before the position that covers them (snapshot readers) */
	atomic_store_explicit(&t->pos, pos + sizeof(rec), memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	return;

slow_path:
	fdr_record_slow(t, addr, action, tsc, cpu);
	return;
reentry:
	fdr_count_reentry(t);
	return;
inactive:
	if (atomic_load_explicit(&fdr_gate, memory_order_relaxed) != FDR_GATE_OFF)
		fdr_record_inactive();
}

#endif /* FDR_WRITER_API_H */
