// SPDX-License-Identifier: MIT
/*
 * runtime/record/thread_exit.c - a thread leaving the registry: the
 * thread-exit destructor (the key fdr_registry_init() creates) writes what
 * the thread kept and dropped, hands its last buffer over and moves its
 * drop counts to the process-wide ones; a fork child forgets every other
 * thread (fdr_registry_after_fork_child()).
 *
 * Contract: above registry.c, buffer.c and autoexclude.c, whose
 * per-thread state it ends. The destructor runs on the exiting thread,
 * its guard taken first; a signal handler meanwhile is counted
 * (fdr_record_reentry(), @leaving). The fork child's part runs alone.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "autoexclude.h"
#include "clock.h"
#include "record_internal.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"

static notrace bool slow_has_drops(struct fdr_thread *t)
{
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++)
		if (atomic_load_explicit(&t->drop_rec[r], memory_order_relaxed) ||
		    atomic_load_explicit(&t->drop_buf[r], memory_order_relaxed))
			return true;
	return false;
}

/* pthread key destructor: the thread is exiting. */
static notrace void slow_thread_exit(void *arg)
{
	struct fdr_thread *t = &fdr_self;
	int saved_errno = errno;

	(void)arg;
	if (t->state != FDR_T_ACTIVE)
		return;
	t->guard = FDR_GUARD_BUSY;
	/* compiler fence: the guard is set before anything a handler on this thread could see */
	atomic_signal_fence(memory_order_seq_cst);
	/* acquire: pairs with the gate's release stores (state.h), as in the slow path */
	if (fdr_gate_recording(atomic_load_explicit(&fdr_gate, memory_order_acquire)) &&
	    (slow_has_drops(t) || slow_held(t))) {
		/* calls kept and drops not yet in the trace, before the thread is gone */
		unsigned cpu;
		uint64_t tsc = fdr_clock_read(&cpu);

		if (!t->buf)
			slow_claim(t, tsc, cpu);
		if (t->buf) {
			uint8_t *pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
			bool short_of_room = false;

			pos = slow_put_held(t, pos, slow_cap_end(t->buf), UINT64_MAX, &short_of_room);
			pos = slow_put_drops(t, pos, slow_cap_end(t->buf), NULL);
			t->buf->counted = false;
			/* release: the records before @pos; pairs with fdr_snapshot_thread()'s acquire load */
			atomic_store_explicit(&t->pos, pos, memory_order_release);
		}
	}
	/* kept calls no buffer took: counted, and reported with the thread's drops below */
	while (slow_held(t)) {
		atomic_fetch_add_explicit(&t->held_head, 1, memory_order_relaxed);
		slow_count(t, FDRTRACE_DROP_REENTRY, 0);
	}
	fdr_thread_handover(t);
	/* leave the registry: wait until no finisher/flusher holds our slot */
	{
		uintptr_t expect = (uintptr_t)t;

		/*
		 * acq_rel: the acquire pairs with the last holder's release
		 * unlock (its reads of this thread are done); the release pairs
		 * with the acquire CAS of the next thread to take the slot
		 * (slow_register()).
		 */
		while (!atomic_compare_exchange_weak_explicit(&slow_slots[t->slot], &expect, 0,
							      memory_order_acq_rel,
							      memory_order_relaxed)) {
			expect = (uintptr_t)t;
			sched_yield();
		}
	}
	/*
	 * From here a handler's re-entries count process-wide
	 * (fdr_record_reentry()); those counted on the thread before, and
	 * drops no buffer took, go there now. The order matters: a handler
	 * between the exchange below and a later @leaving would count into
	 * the thread's counters, which nothing reports once it is gone.
	 */
	t->leaving = true;
	/* compiler fence: @leaving before the moves below, for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	{
		/* no handler holds calls from here (@leaving, and the guard is ours); none are held */
		struct fdr_held_call *more = atomic_load_explicit(&t->held_more,
								  memory_order_relaxed);

		if (more) {
			atomic_store_explicit(&t->held_more, NULL, memory_order_relaxed);
			/* compiler fence: the ring unpublished before it is unmapped (a handler on this thread) */
			atomic_signal_fence(memory_order_seq_cst);
			munmap(more, FDR_WAIT_HELD_CALLS * sizeof(*more));
		}
	}
	fdr_ax_thread_exit(t);	/* auto_exclude's counts: no emitter reads the thread now */
	if (slow_has_drops(t)) {
		/* no buffer to say them in: the finish reports them (tid 0) */
		for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
			atomic_fetch_add_explicit(&fdr_orphan_rec[r],
						  atomic_exchange_explicit(&t->drop_rec[r], 0,
									   memory_order_relaxed),
						  memory_order_relaxed);
			atomic_fetch_add_explicit(&fdr_orphan_buf[r],
						  atomic_exchange_explicit(&t->drop_buf[r], 0,
									   memory_order_relaxed),
						  memory_order_relaxed);
		}
	}
	t->state = FDR_T_NEW;
	/* compiler fence: the state before the guard is given back (a handler on this thread) */
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	errno = saved_errno;
}

/* Fork child: this thread is alone; forget every other thread and buffer. */
notrace void fdr_registry_after_fork_child(void)
{
	struct fdr_thread *t = &fdr_self;

	for (uint32_t i = 0; i < FDR_MAX_THREADS; i++) {
		struct fdr_thread *o = (struct fdr_thread *)(atomic_load_explicit(
			&slow_slots[i], memory_order_relaxed) & ~FDR_SLOT_LOCKED);
		struct fdr_held_call *more;

		/* the parent's other threads are not here: their held-call rings are unused copies */
		if (o && o != t &&
		    (more = atomic_load_explicit(&o->held_more, memory_order_relaxed)))
			munmap(more, FDR_WAIT_HELD_CALLS * sizeof(*more));
		atomic_store_explicit(&slow_slots[i], 0, memory_order_relaxed);
	}
	atomic_store_explicit(&slow_slots_used, 0, memory_order_relaxed);
	atomic_store_explicit(&slow_threads_seen, 0, memory_order_relaxed);
	t->buf = NULL;
	atomic_store_explicit(&t->pos, NULL, memory_order_relaxed);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
	atomic_store_explicit(&t->flush_req, 0, memory_order_relaxed);
	for (unsigned r = 0; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		atomic_store_explicit(&t->drop_rec[r], 0, memory_order_relaxed);
		atomic_store_explicit(&t->drop_buf[r], 0, memory_order_relaxed);
		/* the parent's overwritten buffers and ended threads: its own to report */
		atomic_store_explicit(&fdr_orphan_rec[r], 0, memory_order_relaxed);
		atomic_store_explicit(&fdr_orphan_buf[r], 0, memory_order_relaxed);
	}
	memset(&t->gap, 0, sizeof(t->gap));
	atomic_store_explicit(&t->re_pending, false, memory_order_relaxed);
	atomic_store_explicit(&t->re_first_tsc, 0, memory_order_relaxed);
	atomic_store_explicit(&t->re_net, 0, memory_order_relaxed);
	atomic_store_explicit(&t->re_low, 0, memory_order_relaxed);
	atomic_store_explicit(&t->held_tail, 0, memory_order_relaxed);
	atomic_store_explicit(&t->held_head, 0, memory_order_relaxed);
	t->wait_first_tsc = t->wait_last_tsc = 0;
	atomic_store_explicit(&fdr_wait_ticks, 0, memory_order_relaxed);
	fdr_ax_after_fork_child();
	if (t->state == FDR_T_ACTIVE) {
		t->state = FDR_T_NEW;
		slow_register(t);
	}
}

notrace int fdr_registry_init(void)
{
	if (!slow_key_ok) {
		if (pthread_key_create(&slow_key, slow_thread_exit))
			return -EAGAIN;
		slow_key_ok = true;
	}
	return 0;
}
