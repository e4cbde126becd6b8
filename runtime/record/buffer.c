// SPDX-License-Identifier: MIT
/*
 * runtime/record/buffer.c - a thread's buffer: taken from the pool (or,
 * in ring policy, the ring's oldest) with its preamble written, waited for
 * with on_full=wait, and handed over to the flush thread under the slot
 * lock.
 *
 * Contract: owner thread, guard held, maybe in a signal handler (the
 * slow path, events.c, the thread-exit destructor); no allocation, no
 * lock but the thread's own slot lock. Calls put.c, held.c and
 * registry.c below it.
 */
#include <errno.h>
#include <string.h>

#include "buffer_queue.h"
#include "clock.h"
#include "config.h"
#include "drain.h"
#include "ext_encode.h"
#include "fork_stack.h"
#include "record_internal.h"
#include "records.h"
#include "ring.h"
#include "slowpath.h"
#include "state.h"
#include "sysunwind.h"
#include "thread.h"

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

notrace void fdr_mark_recorded(void)
{
	/*
	 * The flush thread links the file at its next round: wake it once
	 * (not during its first wait, whose end is that round). acq_rel: the
	 * release pairs with fdr_has_records()'s acquire load (state.c); the
	 * first thread to set it wakes.
	 */
	if (!atomic_load_explicit(&fdr_recorded, memory_order_relaxed) &&
	    !atomic_exchange_explicit(&fdr_recorded, true, memory_order_acq_rel))
		fdr_drain_recorded();
}

/* Take a buffer from the pool and write its preamble. Return: 0 or -ENOBUFS. */
notrace int slow_claim(struct fdr_thread *t, uint64_t tsc, unsigned cpu)
{
	struct fdr_buffer *b = fdr_pool_get();
	uint8_t *p, *pre, *cap_end;

	fdr_mark_recorded();	/* a record (or a drop) is on its way */

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
