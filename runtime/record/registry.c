// SPDX-License-Identifier: MIT
/*
 * runtime/record/registry.c - the thread registry: every recording thread's slot,
 * its registration and its exit, and the reads of other threads' buffers
 * under the slot lock.
 *
 * Contract: the registry is an array of slots, each holding a pointer to a
 * registered thread's TLS struct (thread.h), with bit 0 as a tiny lock
 * (FDR_SLOT_LOCKED). The owner takes its own slot lock only to hand a
 * buffer over or to leave; the finisher, fdrtrace_flush() and the
 * fatal-signal handler take it to read another thread's buffer
 * (fdr_threads_foreach(), fdr_snapshot_thread()). The owner never spins on
 * its own slot for long: the other holders only copy a few words under it
 * (no I/O). A thread leaves the registry in thread_exit.c, above this
 * file: the destructor of slow_key hands the last buffer over and moves
 * the thread's drop counts to the process-wide ones.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "autoexclude.h"
#include "buffer_queue.h"
#include "clock.h"
#include "record_internal.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"

_Atomic uintptr_t slow_slots[FDR_MAX_THREADS];
_Atomic uint32_t slow_slots_used;	/* high-water mark */
_Atomic uint32_t slow_threads_seen;
pthread_key_t slow_key;
bool slow_key_ok;

notrace uint32_t fdr_threads_slots_used(void)
{
	/*
	 * acquire: pairs with nothing stronger than the relaxed bump in
	 * slow_register(); the slots below it are read with acquire each
	 * (fdr_threads_foreach()). A slot taken after this read is a thread
	 * registering meanwhile, which the caller misses either way.
	 */
	return atomic_load_explicit(&slow_slots_used, memory_order_acquire);
}

notrace uint32_t fdr_threads_seen(void)
{
	return atomic_load_explicit(&slow_threads_seen, memory_order_relaxed);
}

/* ---- registry ---- */

/*
 * The owner's lock of its own slot: acquire on success pairs with the
 * release that unlocked it last (slow_slot_unlock(), or another holder's
 * release store in fdr_threads_foreach()), so what that holder wrote
 * (t->snapped, @end cleared, a snapshot's reads done) is seen here.
 */
notrace void slow_slot_lock(uint32_t slot, struct fdr_thread *t)
{
	uintptr_t expect = (uintptr_t)t;

	while (!atomic_compare_exchange_weak_explicit(&slow_slots[slot], &expect,
						      (uintptr_t)t | FDR_SLOT_LOCKED,
						      memory_order_acquire, memory_order_relaxed)) {
		expect = (uintptr_t)t;
		__asm__ __volatile__("pause");
	}
}

notrace void slow_slot_unlock(uint32_t slot, struct fdr_thread *t)
{
	/* release: pairs with the next holder's acquire CAS (slow_slot_lock(), fdr_threads_foreach()) */
	atomic_store_explicit(&slow_slots[slot], (uintptr_t)t, memory_order_release);
}

notrace int slow_register(struct fdr_thread *t)
{
	uint32_t used = atomic_load_explicit(&slow_slots_used, memory_order_relaxed);

	t->tid = (int32_t)syscall(SYS_gettid);
	t->leaving = false;
	t->cpu = UINT32_MAX;
	t->buf = NULL;
	t->starved = false;
	t->snapped = false;
	memset(&t->gap, 0, sizeof(t->gap));
	t->wait_first_tsc = t->wait_last_tsc = 0;
	t->sigmask = 0;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &t->sigmask, sizeof(t->sigmask));
	atomic_store_explicit(&t->pos, NULL, memory_order_relaxed);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
	for (uint32_t i = 0; i < FDR_MAX_THREADS; i++) {
		uintptr_t expect = 0;

		/*
		 * acq_rel: the release publishes the thread's reset state above
		 * to fdr_threads_foreach()'s acquire load of the slot; the
		 * acquire pairs with the release CAS of the thread that left the
		 * slot (slow_thread_exit()).
		 */
		if (atomic_compare_exchange_strong_explicit(&slow_slots[i], &expect, (uintptr_t)t,
							    memory_order_acq_rel,
							    memory_order_relaxed)) {
			t->slot = i;
			while (used <= i &&
			       !atomic_compare_exchange_weak_explicit(&slow_slots_used, &used, i + 1,
								      memory_order_relaxed,
								      memory_order_relaxed))
				;
			break;
		}
		if (i == FDR_MAX_THREADS - 1)
			return -EAGAIN;
	}
	if (slow_key_ok)
		pthread_setspecific(slow_key, t);
	atomic_fetch_add_explicit(&slow_threads_seen, 1, memory_order_relaxed);
	t->state = FDR_T_ACTIVE;
	return 0;
}

notrace void fdr_threads_foreach(void (*fn)(struct fdr_thread *t, void *arg), void *arg,
				 unsigned spin_limit)
{
	/* acquire: see fdr_threads_slots_used() (no release pairs with it; the slots' own do) */
	uint32_t used = atomic_load_explicit(&slow_slots_used, memory_order_acquire);

	for (uint32_t i = 0; i < used; i++) {
		/* acquire: pairs with slow_register()'s acq_rel CAS and the release unlocks */
		uintptr_t v = atomic_load_explicit(&slow_slots[i], memory_order_acquire);
		unsigned spins = 0;

		while (v) {
			if (v & FDR_SLOT_LOCKED) {
				if (spin_limit && ++spins > spin_limit)
					break;
				__asm__ __volatile__("pause");
				v = atomic_load_explicit(&slow_slots[i], memory_order_acquire);
				continue;
			}
			/*
			 * acquire: pairs with the owner's release unlock
			 * (slow_slot_unlock()): its handover's stores are seen by
			 * @fn. The release store after @fn pairs with the
			 * owner's acquire lock, or its leaving CAS
			 * (slow_thread_exit()).
			 */
			if (atomic_compare_exchange_weak_explicit(&slow_slots[i], &v,
								  v | FDR_SLOT_LOCKED,
								  memory_order_acquire,
								  memory_order_acquire)) {
				fn((struct fdr_thread *)v, arg);
				atomic_store_explicit(&slow_slots[i], v, memory_order_release);
				break;
			}
		}
	}
}

/*
 * Snapshot a thread's buffer into @node (caller holds the slot lock), for
 * the final dump: the buffer stays with its owner, the node says how much
 * of it is whole, and a handover after this abandons the buffer
 * (fdr_thread_handover()).
 */
notrace void fdr_snapshot_thread(struct fdr_thread *t, struct fdr_buffer *node)
{
	/*
	 * @pos first, with acquire: it pairs with the owner's release store
	 * of @pos in slow_claim(), which follows its store of @buf. A handover
	 * clears @pos under the slot lock we hold, so a non-NULL @pos is
	 * either the current buffer's (its @buf store happens before our read)
	 * or an older position in the same buffer; @buf is read only then.
	 * With @pos NULL the owner may be inside slow_claim() writing @buf, and
	 * we do not touch it (ThreadSanitizer caught that read, tests/tsan).
	 */
	uint8_t *pos = atomic_load_explicit(&t->pos, memory_order_acquire);
	struct fdr_buffer *b = pos ? t->buf : NULL;
	int32_t held;

	t->snapped = true;
	node->tid = t->tid;
	node->borrowed = true;
	node->counted = false;	/* read to be counted */
	node->index = UINT32_MAX;
	node->data = NULL;
	node->len = 0;
	if (b && pos && pos > b->data && pos <= b->data + fdr_cfg.buffer_size) {
		node->data = b->data;
		node->len = (uint64_t)(pos - b->data);
	}
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		node->drops[r] = atomic_exchange_explicit(&t->drop_rec[r], 0, memory_order_relaxed);
		node->drop_bufs[r] = atomic_exchange_explicit(&t->drop_buf[r], 0,
							      memory_order_relaxed);
	}
	/*
	 * Calls a handler kept that the owner has not written: not in the
	 * snapshot. Read from here while the owner may move: a claim being
	 * taken back can show one more than the slots hold, never more.
	 */
	held = (int32_t)(atomic_load_explicit(&t->held_tail, memory_order_relaxed) -
			 atomic_load_explicit(&t->held_head, memory_order_relaxed));
	if (held > 0)
		node->drops[FDRTRACE_DROP_REENTRY] +=
			(uint64_t)(held < (int32_t)slow_held_cap(t) ? held : (int32_t)slow_held_cap(t));
}

/**
 * fdr_orphan_drops - add the process-wide drop counts to @rec and @bufs
 * @rec:	records dropped, by reason
 * @bufs:	buffers dropped, by reason
 * @take:	true for the final trace (the counts are taken: zero after);
 *		false for a snapshot (left for the final trace)
 *
 * The drops no thread's buffer reports: records of overwritten buffers and
 * the drops they had reported, drops of threads that ended without a
 * buffer, drops before init.
 *
 * Context: any thread; async-signal-safe.
 */
notrace void fdr_orphan_drops(uint64_t *rec, uint64_t *bufs, bool take)
{
#define ORPHAN_READ(c) (take ? atomic_exchange_explicit(&(c), 0, memory_order_relaxed) \
			     : atomic_load_explicit(&(c), memory_order_relaxed))
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		rec[r] += ORPHAN_READ(fdr_orphan_rec[r]);
		bufs[r] += ORPHAN_READ(fdr_orphan_buf[r]);
	}
	rec[FDRTRACE_DROP_BEFORE_INIT] += ORPHAN_READ(fdr_before_init_drops);
#undef ORPHAN_READ
}
