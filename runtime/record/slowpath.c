// SPDX-License-Identifier: MIT
/*
 * runtime/record/slowpath.c - the hooks' slow path: a call the inline fast
 * path could not record (fdr_record_slow(), fdr_record_generic()).
 *
 * Contract: fdr_record_slow() runs on the hook's thread with its guard
 * set, possibly inside a signal handler; it may not take a lock that a
 * hook could hold, call malloc or stdio, or block. It may make a few
 * syscalls (gettid once per thread, clock_gettime in the vDSO per buffer,
 * futex wake per buffer handed over; with on_full=wait, the waits, and
 * once per thread an mmap of its larger held-call ring, slow_held_grow()).
 * It saves and restores errno.
 * One exception to "never block": with filter/exclude set, the first call
 * of each function waits (nanosleep, at most 100 ms) for the flush thread
 * to decide whether it is recorded (filter.c, fdr_filter_skip()).
 *
 * Policies: in ring policy a full buffer is marked FULL in place
 * (ring.c) instead of being queued, and a thread that finds the pool
 * empty takes the oldest FULL buffer back; each new buffer then starts
 * with an FDRTRACE_EXT_STACK record. max_depth keeps @end NULL so that
 * every hook comes here to count depth; a function that filter/exclude
 * leaves out has ~addr in the id cache, so its calls miss the cache and
 * return from here after one compare.
 *
 * It takes buffers and hands them over through buffer.c, puts records
 * with put.c and writes the calls handlers kept (held.c); the thread
 * registry (registry.c) says who may read a thread's buffer.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "autoexclude.h"
#include "buffer_queue.h"
#include "clock.h"
#include "config.h"
#include "drain.h"
#include "ext_encode.h"
#include "slowpath_inline.h"
#include "filter.h"
#include "fork_stack.h"
#include "funcid_map.h"
#include "record_internal.h"
#include "records.h"
#include "ring.h"
#include "slowpath.h"
#include "state.h"
#include "sysunwind.h"
#include "thread.h"
#include "trigger.h"

/*
 * func_duration_threshold_us: when the record just before @pos is this
 * function's entry (so the call made no recorded calls, or all of them were
 * erased) and the call was shorter than the threshold, take the entry back
 * instead of writing the exit. Both count as FILTERED drops.
 * Return: true when the call was erased.
 */
static notrace bool slow_erase_short(struct fdr_thread *t, uint8_t *pos, uint32_t id, uint64_t tsc,
				     unsigned cpu)
{
	uint64_t prev;
	uint32_t word;

	if (!t->buf || cpu != t->cpu || pos - FDRTRACE_FUNC_RECORD_SIZE < t->rewind_floor)
		return false;
	memcpy(&prev, pos - FDRTRACE_FUNC_RECORD_SIZE, sizeof(prev));
	word = (uint32_t)prev;
	if ((word & 1) || fdrtrace_func_word_action(word) != FDRTRACE_FN_ENTRY ||
	    fdrtrace_func_word_id(word) != id || tsc - t->last_tsc >= fdr_min_ticks)
		return false;
	t->last_tsc -= prev >> 32;	/* back to the reference before the entry */
	/* release: the records before @pos; pairs with fdr_snapshot_thread()'s acquire load */
	atomic_store_explicit(&t->pos, pos - FDRTRACE_FUNC_RECORD_SIZE, memory_order_release);
	atomic_fetch_add_explicit(&t->drop_rec[FDRTRACE_DROP_FILTERED], 2, memory_order_relaxed);
	return true;
}

/*
 * A handler interrupted a hook of this thread: write the calls it kept
 * (those before @tsc, this hook's clock) and then the gap of those it
 * could only count, where the thread's records resume, in this buffer
 * when they fit, else at the start of a fresh one. Return: 0, or -ENOBUFS
 * when no buffer could be had.
 */
static notrace int slow_resume(struct fdr_thread *t, uint64_t tsc, unsigned cpu)
{
	/*
	 * Taken down first: a handler from here on raises it again, and so
	 * does what stays kept below (the calls after @tsc, or no room).
	 */
	atomic_store_explicit(&t->re_pending, false, memory_order_relaxed);
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	for (bool fresh = false;; fresh = true) {
		uint8_t *pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
		uint8_t *lim = slow_cap_end(t->buf) - FDR_SLOW_RESERVE;
		bool short_of_room = false;
		uint8_t *np = slow_put_held(t, pos, lim, tsc, &short_of_room);

		if (!short_of_room)
			np = slow_put_drops(t, np, lim, &short_of_room);
		/*
		 * What was written is kept, whatever follows: a handler that ran
		 * after its report left @re_pending set again, and that is no
		 * sign of a full buffer (handing the buffer over at the old
		 * position lost the report just written: a whole handler's
		 * calls, uncounted). Such a handler's calls are written by the
		 * next hook (fdr_record_slow() clears @end on its way out).
		 */
		if (np != pos)
			t->buf->counted = false;	/* a report: the flush thread reads it */
		t->rewind_floor = np;
		/* release: the records before @pos; pairs with fdr_snapshot_thread()'s acquire load */
		atomic_store_explicit(&t->pos, np, memory_order_release);
		if (slow_held(t))
			atomic_store_explicit(&t->re_pending, true, memory_order_relaxed);
		/*
		 * Short of room: on to a fresh buffer, as many as it takes
		 * (a wait's held calls can fill several); the calls before
		 * @tsc must all be out before this hook's record. A fresh
		 * buffer that took nothing never will: what is left stays kept.
		 */
		if (!short_of_room || (fresh && np == pos))
			return 0;
		/* the fresh buffer's preamble carries the drops (slow_claim()), then the calls */
		fdr_thread_handover(t);
		if (slow_claim(t, tsc, cpu) < 0)
			return -ENOBUFS;
	}
}

/*
 * max_depth: count this hook's call in @t->depth and say whether it is
 * deeper than max_depth (its record is left out). An exit need not be
 * the innermost open call's: a longjmp, or a C++ exception unwinding
 * frames built by clang (which calls no exit hook while unwinding),
 * skips the exits of the calls in between. So the outermost
 * FDR_DEPTH_FNS open calls keep their function (@depth_fn), and an exit
 * closes the innermost open call of its function with every call inside
 * it; an exit matching none (a call opened before recording (re)started)
 * leaves the depth as it is. Deeper than FDR_DEPTH_FNS, where entries are
 * not kept, the nesting is trusted (as the gap's is, slow_gap_note()): a
 * longjmp from there is followed only once it returns to a kept level's
 * exit. Owner only, guard held.
 */
static notrace bool slow_depth_deep(struct fdr_thread *t, uintptr_t addr, unsigned action)
{
	/* relaxed: after the caller's acquire load of the gate (state.h) */
	uint32_t epoch = atomic_load_explicit(&fdr_depth_epoch, memory_order_relaxed);

	if (unlikely(t->depth_epoch != epoch)) {
		/*
		 * Recording restarted: the calls open at the stop may have
		 * returned unseen. Count from here; the exit of a call opened
		 * before matches nothing counted.
		 */
		t->depth_epoch = epoch;
		t->depth = 0;
	}
	if (action == FDRTRACE_FN_ENTRY) {
		if (t->depth < FDR_DEPTH_FNS)
			t->depth_fn[t->depth] = addr;
		return ++t->depth > fdr_cfg.max_depth;
	}
	if (t->depth > FDR_DEPTH_FNS)
		return t->depth-- > fdr_cfg.max_depth;	/* its entry was not kept: trusted */
	for (uint64_t d = t->depth; d > 0; d--) {
		if (t->depth_fn[d - 1] == addr) {
			/* its entry was at depth d; the calls above it ended unseen */
			t->depth = d - 1;
			return d > fdr_cfg.max_depth;
		}
	}
	return t->depth > fdr_cfg.max_depth;
}

/*
 * No buffer for them: the calls handlers kept that came at or before
 * @upto go into the pool-empty gap, as the hook's own record does after
 * them (slow_gap_note()). Owner only, guard held.
 */
static notrace void slow_held_to_gap(struct fdr_thread *t, uint64_t upto)
{
	struct fdr_held_call h;
	uintptr_t addr;
	unsigned action;
	uint32_t id;

	while (slow_held_next(t, upto, &h, &addr, &action)) {
		id = slow_held_id(t, addr);
		if (id) {
			slow_count(t, FDRTRACE_DROP_POOL_EMPTY, 0);
			slow_gap_note(&t->gap, action, id, h.tsc);
		}
		atomic_fetch_add_explicit(&t->held_head, 1, memory_order_relaxed);
	}
}

notrace void fdr_record_slow(struct fdr_thread *t, uintptr_t addr, unsigned action, uint64_t tsc,
			     unsigned cpu)
{
	int saved_errno = errno;
	struct fdr_fcache_ent *ce = &t->cache[(addr >> 4) & (FDR_FCACHE_SIZE - 1)];
	bool candidate = false;	/* a latency trigger's function, or not decided yet */
	bool missed = false;	/* not in the id cache (a trigger may have its entry) */
	bool fresh;		/* this hook registers the thread */
	uint32_t id;
	uint8_t *pos;

	/* acquire: pairs with the release store of FDR_GATE_ON after initialisation */
	if (!fdr_gate_recording(atomic_load_explicit(&fdr_gate, memory_order_acquire)) ||
	    t->ignored)
		goto out;
	if (fdr_all_slow && slow_depth_deep(t, addr, action))
		goto filtered;	/* max_depth: deeper calls' entries and exits are not recorded */
	if (ce->addr == ~addr)
		goto filtered;	/* filter/exclude said no, once for all */
	fresh = t->state != FDR_T_ACTIVE;
	if (fdr_thread_ensure(t) < 0)
		goto out;
	id = ce->id;
	if (ce->addr != addr) {
		uint32_t before = fdr_funcid_limit();

		id = fdr_funcid_get(addr);

		/*
		 * A new id: with latency triggers the flush thread decides now
		 * whether it is one of theirs (a slow first call must fire); in
		 * any policy it maps what the next new functions need when the
		 * map runs short (funcid_map.c). Not for names alone: in ring
		 * policy the flush thread looks them up on its own (every 50 ms,
		 * and before any dump), and a wake here made the woken thread
		 * preempt this one on a busy machine, in the middle of the new
		 * function's first call, adding a scheduler tick (4 ms) to it.
		 */
		if (fdr_funcid_limit() != before && (fdr_triggering || fdr_funcid_needs_prepare()))
			fdr_drain_wake();

		if (!id) {
			slow_count(t, FDRTRACE_DROP_FILTERED, 0);
			goto out;
		}
		if (fdr_filtering && fdr_filter_skip(id)) {
			/* ~addr never equals a function's address: the fast path misses */
			ce->addr = ~addr;
			ce->id = id;
			goto filtered;
		}
		/* a trigger's calls (and undecided ones) all come here: never cached */
		missed = fdr_triggering;
		candidate = missed && fdr_trigger_uncached(id);
		if (!candidate) {
			ce->addr = addr;
			ce->id = id;
		}
	}
	if (!t->buf && slow_claim(t, tsc, cpu) < 0)
		goto no_buffer;
	/*
	 * A thread's first entry is stamped after its registration here (its
	 * state, its first buffer, the signal mask, a name): read as the hook
	 * began, the first call of main carried 20-200 us of it in its self
	 * time on this VM (a helper's C++ traces), and a thread's first
	 * function as much. Only then: the smaller work of later slow paths
	 * (an id's look-up, a buffer claimed, a gap reported) stays in the
	 * call it is done for, since stamping after it would move it into the
	 * caller's self time instead, and more so in a trace that lost records
	 * (the real suite's loss invariant on zstd saw it). The clock only
	 * moves forward on one CPU; on another the CPU record below says so.
	 * Before the calls a handler kept are written: those before this
	 * clock go ahead of the record (slow_resume()).
	 */
	if (fresh && (action == FDRTRACE_FN_ENTRY || action == FDRTRACE_FN_ENTRY_ARGS))
		tsc = fdr_clock_read(&cpu);
	if (unlikely(atomic_load_explicit(&t->re_pending, memory_order_relaxed)) &&
	    slow_resume(t, tsc, cpu) < 0)
		goto no_buffer;
	pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	if (action == FDRTRACE_FN_EXIT && fdr_min_ticks && slow_erase_short(t, pos, id, tsc, cpu)) {
		if (missed)
			fdr_trigger_call(id, action, tsc, false, candidate);
		goto out;
	}
	if (cpu != t->cpu) {
		struct fdrtrace_md_new_cpu_id m = { .type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_NEW_CPU_ID),
						    .cpu = (uint16_t)cpu, .tsc = tsc };

		memcpy(pos, &m, sizeof(m));
		pos += sizeof(m);
		t->buf->meta += sizeof(m);
		t->rewind_floor = pos;
		t->cpu = cpu;
		t->last_tsc = tsc;
	}
	/* release: the records before @pos; pairs with fdr_snapshot_thread()'s acquire load */
	atomic_store_explicit(&t->pos, slow_put_func(t, pos, action, id, tsc), memory_order_release);
	if (missed)
		fdr_trigger_call(id, action, tsc, true, candidate);	/* after the record */
	goto out;
no_buffer:
	/* the pool is empty: the calls kept before this one, then this one, go into the gap */
	slow_held_to_gap(t, tsc);
	slow_count(t, FDRTRACE_DROP_POOL_EMPTY, 0);
	slow_gap_note(&t->gap, action, id, tsc);
	if (missed)
		fdr_trigger_call(id, action, tsc, false, candidate);
	goto out;
filtered:
	slow_count(t, FDRTRACE_DROP_FILTERED, 0);
out:
	/* a handler ran meanwhile and kept or dropped calls: the next hook writes or says them */
	if (unlikely(atomic_load_explicit(&t->re_pending, memory_order_relaxed)))
		atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	errno = saved_errno;
}

/* The fast path for clocks that are not read inline (fastpath_inline.h); the guard is held. */
notrace void fdr_record_generic(void *fn, unsigned action)
{
	unsigned cpu;
	uint64_t tsc = fdr_clock_read(&cpu);

	fdr_record_at(&fdr_self, fn, action, tsc, cpu);
}
