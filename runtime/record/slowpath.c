// SPDX-License-Identifier: MIT
/*
 * runtime/record/slowpath.c - the hooks' slow path, the thread registry and
 * the
 * per-thread buffers.
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
 * The thread registry is an array of slots, each holding a pointer to a
 * registered thread's TLS struct, with bit 0 as a tiny lock. The owner
 * takes its own slot lock only to hand a buffer over or to leave; the
 * finisher, fdrtrace_flush() and the fatal-signal handler take it to read
 * another thread's buffer. The owner never spins on its own slot for long:
 * the other holders only copy a few words under it (no I/O).
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
#include "fastpath_inline.h"
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

fdr_tls struct fdr_thread fdr_self;
/* buffers handed over to the queue (stream policy); the flush thread counts them written */
_Atomic uint64_t fdr_enqueued;
_Atomic uint64_t fdr_wait_ticks;

notrace void slow_count(struct fdr_thread *t, unsigned reason, uint64_t bufs)
{
	atomic_fetch_add_explicit(&t->drop_rec[reason], 1, memory_order_relaxed);
	if (bufs)
		atomic_fetch_add_explicit(&t->drop_buf[reason], bufs, memory_order_relaxed);
}

/*
 * A hook that found the gate neither ON nor OFF. LAZY: recording was asked
 * for and this is the process's first hook (or one racing it): start the
 * runtime (lifecycle.c, fdr_start_lazy(), through the drain: one starts, the others
 * wait for it), then record this call as any other. Not recursive: the
 * call is recorded only once the gate is ON. COUNTED: recording with
 * auto_exclude, every hook goes to autoexclude.c.
 */
static notrace fdr_noinline void slow_inactive(void *fn, unsigned action, int g)
{
	if (g == FDR_GATE_LAZY) {
		if (fdr_drain_start())
			fdr_record(fn, action);
	} else if (g == FDR_GATE_BEFORE_INIT)
		atomic_fetch_add_explicit(&fdr_before_init_drops, 1, memory_order_relaxed);
	else if (g == FDR_GATE_AFTER_FINI)
		atomic_fetch_add_explicit(&fdr_after_fini_drops, 1, memory_order_relaxed);
}

notrace void fdr_record_inactive(void *fn, unsigned action)
{
	int g = atomic_load_explicit(&fdr_gate, memory_order_relaxed);

	/* auto_exclude's every call: a jump, no frame (the rest in slow_inactive()) */
	if (likely(g == FDR_GATE_COUNTED))
		fdr_ax_record(fn, action);
	else
		slow_inactive(fn, action, g);
}

/*
 * Pool empty: follow the calls of the records dropped, so that the next
 * buffer can say which calls the gap closed and opened. Owner, guard held.
 */
notrace void slow_gap_note(struct fdr_gap *g, unsigned action, uint32_t id, uint64_t tsc)
{
	uint32_t d;

	if (!g->first_tsc)
		g->first_tsc = tsc;
	g->last_tsc = tsc;
	if (action == FDRTRACE_FN_ENTRY || action == FDRTRACE_FN_ENTRY_ARGS) {
		if (g->depth < FDR_GAP_IDS)
			g->ids[g->depth] = id;
		g->depth++;
		return;
	}
	if (!g->depth) {
		g->exited++;	/* a call open before the gap */
		return;
	}
	if (g->depth > FDR_GAP_IDS) {
		g->depth--;	/* deeper than the ids kept: trust the nesting */
		return;
	}
	/* the innermost call of this function entered in the gap (a longjmp skips some) */
	for (d = g->depth; d > 0; d--) {
		if (g->ids[d - 1] == id) {
			g->depth = d - 1;
			return;
		}
	}
	/* an older call's exit that unwound the gap's calls: how far, we cannot tell */
	g->unknown = true;
	g->depth = 0;
}

/* ---- buffers ---- */

notrace uint8_t *slow_cap_end(struct fdr_buffer *b)
{
	return b->data + fdr_cfg.buffer_size - (fdr_cfg.format_version == 1 ? FDR_V1_TAIL : 0);
}

/* Append a custom event (marker + payload) at @p; the caller checked room. */
notrace uint8_t *slow_put_custom(struct fdr_thread *t, uint8_t *p, const uint8_t *payload,
				 size_t len)
{
	p += fdr_custom_event_md(p, (uint32_t)len, t->last_tsc);
	memcpy(p, payload, len);
	return p + len;
}

/*
 * Report this thread's pending drops into its buffer at @p, where the
 * thread's records resume: a pool-empty gap or re-entry drops with their
 * span and the calls they opened and closed (format.h), others as counts.
 * Owner only, guard held. @short_of_room (may be NULL) is set when a
 * report did not fit below @lim (it stays pending). A signal handler may
 * run at any point in here and add re-entry drops: what it adds after the
 * count is read stays pending, never lost. Return: the new end of the
 * buffer's records (the caller publishes it).
 */
notrace uint8_t *slow_put_drops(struct fdr_thread *t, uint8_t *p, uint8_t *lim,
				bool *short_of_room)
{
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		uint64_t n = atomic_load_explicit(&t->drop_rec[r], memory_order_relaxed);
		uint64_t nb = atomic_load_explicit(&t->drop_buf[r], memory_order_relaxed);
		uint8_t payload[64 + 4 * FDR_GAP_IDS];
		size_t len;

		if (!n && !nb)
			continue;
		if (r == FDRTRACE_DROP_REENTRY && slow_held(t))
			continue;	/* a gap opens after the calls kept: those first (slow_resume()) */
		if (r == FDRTRACE_DROP_POOL_EMPTY && t->gap.first_tsc) {
			struct fdr_gap *g = &t->gap;
			bool known = !g->unknown && g->depth <= FDR_GAP_IDS;

			len = fdr_ext_gap(payload, sizeof(payload), (uint32_t)t->tid, (uint8_t)r, n, nb,
					  g->first_tsc, g->last_tsc,
					  known ? g->exited : FDRTRACE_GAP_UNKNOWN, known ? g->depth : 0,
					  g->ids);
		} else if (r == FDRTRACE_DROP_REENTRY &&
			   atomic_load_explicit(&t->re_first_tsc, memory_order_relaxed)) {
			/* a handler's calls nest inside the interrupted one: the stack is as it was */
			bool balanced = !atomic_load_explicit(&t->re_net, memory_order_relaxed) &&
					!atomic_load_explicit(&t->re_low, memory_order_relaxed);

			len = fdr_ext_gap(payload, sizeof(payload), (uint32_t)t->tid, (uint8_t)r, n, nb,
					  atomic_load_explicit(&t->re_first_tsc, memory_order_relaxed),
					  atomic_load_explicit(&t->re_last_tsc, memory_order_relaxed),
					  balanced ? 0 : FDRTRACE_GAP_UNKNOWN, 0, NULL);
		} else {
			len = fdr_ext_drop(payload, sizeof(payload), (uint32_t)t->tid, (uint8_t)r, n,
					   nb);
		}
		if (!len || p + FDRTRACE_METADATA_RECORD_SIZE + len > lim) {
			if (short_of_room)
				*short_of_room = true;
			break;
		}
		p = slow_put_custom(t, p, payload, len);
		if (r == FDRTRACE_DROP_REENTRY) {
			/*
			 * The gap is said: a handler interrupting us from here on
			 * starts a new one. Reset before the count is taken, so
			 * that a handler after the reset leaves a whole gap
			 * pending (its count, span and @re_pending); one between
			 * the count's read above and here keeps its count pending,
			 * reported with the next gap or alone.
			 */
			atomic_store_explicit(&t->re_pending, false, memory_order_relaxed);
			atomic_store_explicit(&t->re_first_tsc, 0, memory_order_relaxed);
			atomic_store_explicit(&t->re_net, 0, memory_order_relaxed);
			atomic_store_explicit(&t->re_low, 0, memory_order_relaxed);
			/* compiler fence: the order above holds for a handler on this thread */
			atomic_signal_fence(memory_order_seq_cst);
		}
		atomic_fetch_sub_explicit(&t->drop_rec[r], n, memory_order_relaxed);
		atomic_fetch_sub_explicit(&t->drop_buf[r], nb, memory_order_relaxed);
		if (r == FDRTRACE_DROP_POOL_EMPTY) {
			if (fdr_cfg.policy == FDR_POLICY_RING)
				fdr_ring_stack_gap(&t->gap);
			memset(&t->gap, 0, sizeof(t->gap));
		}
	}
	if (t->wait_last_tsc) {
		uint8_t payload[64];
		size_t len = fdr_ext_wait(payload, sizeof(payload), (uint32_t)t->tid,
					  t->wait_first_tsc, t->wait_last_tsc);

		if (len && p + FDRTRACE_METADATA_RECORD_SIZE + len <= lim) {
			p = slow_put_custom(t, p, payload, len);
			t->wait_first_tsc = t->wait_last_tsc = 0;
		} else if (short_of_room) {
			*short_of_room = true;
		}
	}
	return p;
}

/*
 * One function record at @p, after a TSCWrap when its delta from the last
 * record does not fit 32 bits (or the clock went back). Owner only, guard
 * held, room checked by the caller, which publishes @pos. Return: the new
 * end of the buffer's records.
 */
notrace uint8_t *slow_put_func(struct fdr_thread *t, uint8_t *p, unsigned action, uint32_t id,
			       uint64_t tsc)
{
	uint64_t rec;

	if (tsc - t->last_tsc > UINT32_MAX) {
		struct fdrtrace_md_tsc_wrap m = { .type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_TSC_WRAP),
						  .tsc = tsc };

		memcpy(p, &m, sizeof(m));
		p += sizeof(m);
		t->buf->meta += sizeof(m);
		t->rewind_floor = p;	/* short calls are never erased into it */
		t->last_tsc = tsc;
	}
	rec = fdrtrace_func_word(action, id) | ((tsc - t->last_tsc) << 32);
	memcpy(p, &rec, sizeof(rec));
	t->last_tsc = tsc;
	return p + sizeof(rec);
}

/* on_full=wait: a buffer the flush thread returns, or NULL (drop). */
static notrace struct fdr_buffer *slow_wait(struct fdr_thread *t)
{
	struct fdr_buffer *b;
	uint64_t t0, t1;
	unsigned cpu;

	/* the stall first: a starved thread drops each call, and the stack walk is slow */
	if (t->no_wait || fdr_drain_wait_stalled() || slow_in_handler(t))
		return NULL;
	slow_held_grow(t);
	t0 = fdr_clock_read(&cpu);
	b = fdr_drain_wait_buffer();
	t1 = fdr_clock_read(&cpu);
	if (!t->wait_last_tsc)
		t->wait_first_tsc = t0;
	t->wait_last_tsc = t1 > t0 ? t1 : t0;
	atomic_fetch_add_explicit(&fdr_wait_ticks, t1 > t0 ? t1 - t0 : 0, memory_order_relaxed);
	return b;
}

/* Take a buffer from the pool and write its preamble. Return: 0 or -ENOBUFS. */
notrace int slow_claim(struct fdr_thread *t, uint64_t tsc, unsigned cpu)
{
	struct fdr_buffer *b = fdr_pool_get();
	uint8_t *p, *pre, *cap_end;

	/*
	 * A record (or a drop) is on its way: the process needs its trace
	 * file. The flush thread links it at its next round: wake it once
	 * (not during its first wait, whose end is that round).
	 * acq_rel: the release pairs with fdr_has_records()'s acquire load
	 * (state.c); the first thread to set it wakes.
	 */
	if (!atomic_load_explicit(&fdr_recorded, memory_order_relaxed) &&
	    !atomic_exchange_explicit(&fdr_recorded, true, memory_order_acq_rel))
		fdr_drain_recorded();

	if (!b && fdr_cfg.policy == FDR_POLICY_RING)
		b = fdr_ring_take_oldest();
	else if (!b && fdr_cfg.on_full == FDR_ON_FULL_WAIT)
		b = slow_wait(t);	/* asks for a larger pool while it waits */
	if (!b) {
		fdr_fork_stack_record(t, NULL, 0, 0);	/* a gap comes first: its calls no longer known */
		if (fdr_cfg.policy == FDR_POLICY_STREAM)
			fdr_drain_starved();	/* a larger pool, while it may grow */
		if (!t->starved) {
			t->starved = true;
			atomic_fetch_add_explicit(&t->drop_buf[FDRTRACE_DROP_POOL_EMPTY], 1,
						  memory_order_relaxed);
		}
		return -ENOBUFS;
	}
	t->starved = false;
	b->tid = t->tid;
	b->len = 0;
	cap_end = slow_cap_end(b);
	p = b->data + fdr_preamble(b->data, t->tid, cpu, tsc);
	pre = p;
	t->last_tsc = tsc;
	t->cpu = cpu;
	/* the gap first, then (ring) the calls open once it is accounted for */
	p = slow_put_drops(t, p, cap_end - FDR_SLOW_RESERVE, NULL);
	if (fdr_cfg.policy == FDR_POLICY_RING)
		p += fdr_ring_stack_record(p, (size_t)(cap_end - FDR_SLOW_RESERVE - p), t->tid, tsc);
	else	/* a fork child's first buffer: the calls open at the fork */
		p += fdr_fork_stack_record(t, p, (size_t)(cap_end - FDR_SLOW_RESERVE - p), tsc);
	/* a buffer that opens with no report is counted without being read */
	b->meta = (uint32_t)(p - b->data);
	b->counted = p == pre && fdr_cfg.policy == FDR_POLICY_STREAM;
	t->rewind_floor = p;
	t->buf = b;
	/* release: the records before @pos; pairs with fdr_snapshot_thread()'s acquire load */
	atomic_store_explicit(&t->pos, p, memory_order_release);
	/* an ignored thread's hooks all take the slow path, which returns at once */
	atomic_store_explicit(&t->end,
			      t->ignored || fdr_all_slow ? NULL : cap_end - FDR_SLOW_RESERVE,
			      memory_order_relaxed);
	return 0;
}

/*
 * Hand the thread's buffer to the flush thread. Under the slot lock, so
 * that a finisher's snapshot and this handover never both write it.
 */
notrace int fdr_thread_handover(struct fdr_thread *t)
{
	struct fdr_buffer *b = t->buf;
	int phase;

	if (!b)
		return 0;
	if (fdr_cfg.policy == FDR_POLICY_RING)
		/* the open calls at the end of this buffer, for the next one's stack record */
		fdr_ring_stack_advance(b, atomic_load_explicit(&t->pos, memory_order_relaxed));
	slow_slot_lock(t->slot, t);
	/* acquire: pairs with the phase's release stores (state.h) */
	phase = atomic_load_explicit(&fdr_phase, memory_order_acquire);
	t->buf = NULL;
	/*
	 * Once recording ends, the final dump snapshots each thread's buffer
	 * in turn, under this lock, and only then writes the queue (exit) or
	 * takes what was queued since (fatal signal). A buffer handed over
	 * before its thread's snapshot is queued as usual: its thread got
	 * past the gate before it closed (preempted in the hook, say) and
	 * nothing else would write it. After the snapshot, the snapshot
	 * holds what it had: it is abandoned.
	 */
	if (phase == FDR_PHASE_RECORDING || !t->snapped) {
		b->len = (uint64_t)(atomic_load_explicit(&t->pos, memory_order_relaxed) - b->data);
		if (fdr_cfg.policy == FDR_POLICY_RING) {
			fdr_ring_put(b);
		} else {
			atomic_fetch_add_explicit(&fdr_enqueued, 1, memory_order_relaxed);
			fdr_queue_push(b);
		}
	}
	/* else: the final dump took this buffer's records; the buffer is abandoned */
	/* release: the records before @pos; pairs with fdr_snapshot_thread()'s acquire load */
	atomic_store_explicit(&t->pos, NULL, memory_order_release);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
	slow_slot_unlock(t->slot, t);
	if (phase == FDR_PHASE_RECORDING && fdr_cfg.policy != FDR_POLICY_RING)
		fdr_drain_queued();
	return 0;
}

/* Registered, with a buffer that has room for the slow path's worst case. */
notrace int fdr_thread_ensure(struct fdr_thread *t)
{
	if (t->state != FDR_T_ACTIVE && slow_register(t) < 0)
		return -EAGAIN;
	if (t->buf && atomic_exchange_explicit(&t->flush_req, 0, memory_order_relaxed)) {
		/* asked for (flush_interval_ms, dump_signal): written now, not with the next batch */
		fdr_thread_handover(t);
		fdr_drain_wake();
	}
	if (t->buf && atomic_load_explicit(&t->pos, memory_order_relaxed) <
			      slow_cap_end(t->buf) - FDR_SLOW_RESERVE) {
		/* restore @end in case another thread kicked it */
		atomic_store_explicit(&t->end,
				      t->ignored || fdr_all_slow ? NULL
								 : slow_cap_end(t->buf) - FDR_SLOW_RESERVE,
				      memory_order_relaxed);
		return 0;
	}
	if (t->buf)
		fdr_thread_handover(t);
	return 0;
}

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
