/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/fastpath_inline.h - the hooks' fast path, inline.
 *
 * Included by compiler-hooks/cyg_profile.c only. In order: test the gate
 * (one load, one predictable branch when recording is off), take the
 * per-thread guard, read the clock (and CPU), look the function up in the
 * thread's direct-mapped id cache, check CPU, delta and room, store one
 * 8-byte record and publish the new position with a release store (a
 * plain mov on x86-64). Anything unusual goes to fdr_record_slow()
 * (slowpath.c), which also releases the guard; a hook that finds the
 * guard taken (a signal handler's) goes to fdr_record_reentry() (held.c),
 * one that finds the gate neither ON nor OFF to fdr_record_inactive()
 * (inactive.c: the lazy start, auto_exclude). The store itself is
 * fdr_record_at() (slowpath_inline.h), which auto_exclude's timed calls
 * share. No locks, syscalls or allocation here, and errno is untouched.
 *
 * The two TSC clocks are read inline here, with no call on any path, so
 * that the compiler needs no stack frame and no saved registers: a clock
 * that needs a call (CLOCK_MONOTONIC_RAW, or a CPU number without rseq)
 * takes fdr_record_generic(), the same path around fdr_clock_read(). The
 * read is fdr_clock_read_fast()'s (clock_inline.h), written out: through
 * that helper gcc 12 allocates the hooks' registers differently and adds
 * a jump to the rdtsc path.
 */
#ifndef FDR_FASTPATH_INLINE_H
#define FDR_FASTPATH_INLINE_H

#include <string.h>

#include "clock.h"
#include "slowpath.h"
#include "slowpath_inline.h"
#include "state.h"
#include "thread.h"

static fdr_always_inline notrace void fdr_record(void *fn, unsigned action)
{
	struct fdr_thread *t = &fdr_self;
	uint32_t lo, hi, aux;
	unsigned cpu;

	/* relaxed: the slow path re-reads the gate with acquire before it touches shared state */
	if (unlikely(atomic_load_explicit(&fdr_gate, memory_order_relaxed) != FDR_GATE_ON))
		goto inactive;
	if (unlikely(t->guard))
		goto reentry;
	t->guard = FDR_GUARD_HOOK;
	/*
	 * The guard is set before the clock is read, as a signal handler on
	 * this thread sees it. A handler's calls then either all come before
	 * this record's clock (no guard yet: recorded as they come, before
	 * this record) or are kept while the guard is held, and the slow
	 * path, to which the handler sends this hook or the next, writes
	 * those before this record's clock ahead of it and the rest after
	 * (held.c, slow_put_held()). Reading the clock first put the calls of
	 * a handler that came in between ahead of an earlier record: time went
	 * back in the trace.
	 */
	atomic_signal_fence(memory_order_seq_cst);
	if (likely(fdr_clock.source == FDRTRACE_CLOCK_RDTSCP)) {
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
		cpu = aux & 0xfffu;	/* TSC_AUX: (node << 12) | cpu */
	} else {
#if FDR_HAVE_RSEQ
		int32_t id;

		if (unlikely(fdr_clock.source != FDRTRACE_CLOCK_RDTSC || !fdr_clock.cpu_from_rseq))
			goto generic;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		id = fdr_rseq_cpu_id();
		if (unlikely(id < 0))
			goto generic;
		cpu = (unsigned)id;
#else
		goto generic;
#endif
	}
	fdr_record_at(t, fn, action, ((uint64_t)hi << 32) | lo, cpu);
	return;

generic:
	fdr_record_generic(fn, action);
	return;
reentry:
	fdr_record_reentry(t, (uintptr_t)fn, action);
	return;
inactive:
	if (atomic_load_explicit(&fdr_gate, memory_order_relaxed) != FDR_GATE_OFF)
		fdr_record_inactive(fn, action);
}

#endif /* FDR_FASTPATH_INLINE_H */
