/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/slowpath_inline.h - the record store after the clock
 * read, inline: fdr_record_at(), and fdr_record_generic() for clocks that
 * are not read inline.
 *
 * Used by the hooks' fast path (fastpath_inline.h) and by auto_exclude's
 * timed calls (autoexclude.c). The caller checked the gate and holds the
 * thread's guard; fdr_record_at() releases it, itself or through
 * fdr_record_slow() (slowpath.c, this header's own .c), which takes
 * everything unusual: an id not in the cache, another CPU, a delta that
 * does not fit, a full buffer, a duration threshold.
 */
#ifndef FDR_SLOWPATH_INLINE_H
#define FDR_SLOWPATH_INLINE_H

#include <string.h>

#include "clock.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"

void fdr_record_generic(void *fn, unsigned action) fdr_hidden fdr_noinline;

/* Everything after the clock read; the caller checked the gate and holds the guard. */
static fdr_always_inline notrace void fdr_record_at(struct fdr_thread *t, void *fn,
						    unsigned action, uint64_t tsc, unsigned cpu)
{
	uintptr_t addr = (uintptr_t)fn;
	struct fdr_fcache_ent *ce;
	uint64_t delta, rec;
	uint8_t *pos;

	ce = &t->cache[(addr >> 4) & (FDR_FCACHE_SIZE - 1)];
	pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	delta = tsc - t->last_tsc;	/* huge when the TSC went backwards */
	if (unlikely(ce->addr != addr || cpu != t->cpu || delta > UINT32_MAX ||
		     pos >= atomic_load_explicit(&t->end, memory_order_relaxed)))
		goto slow_path;
	/* short calls may be erased at their exit: the slow path decides (@action is a constant) */
	if (action == FDRTRACE_FN_EXIT && unlikely(fdr_min_ticks))
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
}

#endif /* FDR_SLOWPATH_INLINE_H */
