// SPDX-License-Identifier: MIT
/*
 * runtime/flush/pool.c - the pool as the flush thread keeps it: grown when it
 * runs low (stream policy), and the waits for a free buffer (on_full=wait).
 *
 * Contract: fdr_flush_queued() and fdr_flush_starved() run on the program's
 * threads in the slow path (through the drain, drain.h): relaxed flags and a
 * wake-up, never a lock. The flush thread grows the pool between rounds
 * (fl_grow()). fdr_flush_wait_buffer() runs on a program's thread that may
 * wait: bounded, it gives up on a stall.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <time.h>

#include "buffer_queue.h"
#include "clock.h"
#include "ext_encode.h"
#include "flush.h"
#include "flush_internal.h"
#include "rtbuf.h"
#include "say.h"
#include "slowpath.h"
#include "state.h"
#include "trace_file.h"

/*
 * A buffer was queued (stream policy). Wake the flush thread when a
 * batch is ready (a sixteenth of the pool, at most FDR_WRITE_BATCH
 * buffers: written in one system call) or when half the pool or less is
 * free (and ask for a larger pool); below that the buffers wait for more, or for the flush
 * thread's next tick (at most 50 ms). One wake-up per batch instead of one
 * per buffer: on a machine with no idle core each wake-up preempts a
 * thread of the program. A nearly empty pool always wakes it at once,
 * whatever the timer says.
 */
_Atomic int fl_pressure;	/* the pool ran low: grow it (fl_grow()) */
static _Atomic bool fl_grow_failed;	/* no memory for more: the pool stays as it is */

/* May the pool grow now? (stream policy, below its limit, memory found so far) */
notrace bool fl_can_grow(void)
{
	return !atomic_load_explicit(&fl_grow_failed, memory_order_relaxed) &&
	       fdr_pool_count() < fdr_pool_limit();
}

notrace void fdr_flush_queued(void)
{
	uint64_t queued = atomic_load_explicit(&fdr_enqueued, memory_order_relaxed) -
			  atomic_load_explicit(&fdr_written, memory_order_relaxed);
	uint32_t count = fdr_pool_count();
	uint32_t batch = count / 16;
	bool low = fdr_pool_free() <= count / 2;

	if (low && fl_can_grow() && !atomic_load_explicit(&fl_pressure, memory_order_relaxed))
		atomic_store_explicit(&fl_pressure, 1, memory_order_relaxed);
	if (batch > FDR_WRITE_BATCH)
		batch = FDR_WRITE_BATCH;
	if (queued >= batch || low)
		fdr_flush_wake();
}

notrace void fdr_flush_starved(void)
{
	/*
	 * Once per round of the flush thread at most: it clears the flag
	 * when it grows the pool, and a thread still starved asks again.
	 * Nothing at all once the pool cannot grow.
	 */
	if (fl_can_grow() && !atomic_exchange_explicit(&fl_pressure, 1, memory_order_relaxed))
		fdr_flush_wake();
}

/* ---- the pool grows (stream policy) ---- */

/*
 * Each time the pool is found running low (fl_pressure: a handover saw
 * half of it or less free, or a thread found it empty), the flush
 * thread doubles its target size, up to fdr_pool_limit(), and adds the
 * buffers FL_GROW_STEP_BYTES at a time, between batches of writes
 * (fl_drain()): pre-faulting memory costs microseconds per page on some
 * machines (5-30 us on this project's virtual machine), and the buffers
 * already full must not wait for all of it. The pool's new size goes into the trace (an
 * FDRx config record, pool_buffers=N) once the target is reached.
 */
#define FL_GROW_STEP_BYTES (512u << 10)

uint32_t fl_grow_target;

notrace bool fl_growing(void)
{
	return fl_can_grow() && fdr_pool_count() < fl_grow_target;
}

/*
 * The data rate: buffers handed over per FL_RATE_WINDOW_NS, measured by
 * the flush thread on its rounds. The pool is kept large enough to hold
 * FL_POOL_LATENCY_NS of it, so that a flush thread kept from its core for
 * that long (every core busy, a shared machine) costs no records; a
 * program that records slowly never gets more than the start pool.
 */
#define FL_RATE_WINDOW_NS 50000000ull
#define FL_POOL_LATENCY_NS 50000000ull

uint64_t fl_rate_t0, fl_rate_n0;

static notrace uint32_t fl_rate_target(void)
{
	uint64_t now = fdr_clock_ns(CLOCK_MONOTONIC);
	uint64_t n = atomic_load_explicit(&fdr_enqueued, memory_order_relaxed);
	uint64_t want = 0;

	if (!fl_rate_t0) {
		fl_rate_t0 = now;
		fl_rate_n0 = n;
		return 0;
	}
	if (now - fl_rate_t0 < FL_RATE_WINDOW_NS)
		return 0;
	/* buffers per FL_POOL_LATENCY_NS at the rate of this window */
	want = (n - fl_rate_n0) * FL_POOL_LATENCY_NS / (now - fl_rate_t0);
	fl_rate_t0 = now;
	fl_rate_n0 = n;
	return want > fdr_pool_limit() ? fdr_pool_limit() : (uint32_t)want;
}

notrace void fl_grow(struct fdr_rtbuf *rb)
{
	uint32_t count = fdr_pool_count(), step, want = fl_rate_target();
	int added;

	if (atomic_exchange_explicit(&fl_pressure, 0, memory_order_relaxed) && !fl_growing() &&
	    fl_can_grow())
		fl_grow_target = count > fdr_pool_limit() - count ? fdr_pool_limit() : 2 * count;
	if (want > count && want > fl_grow_target && fl_can_grow())
		fl_grow_target = want;	/* the data rate asks for more than the pool holds */
	if (!fl_growing())
		return;
	step = (uint32_t)(FL_GROW_STEP_BYTES / fdr_cfg.buffer_size);
	if (!step)
		step = 1;
	if (step > fl_grow_target - count)
		step = fl_grow_target - count;
	added = fdr_pool_grow(step);
	if (added <= 0)
		atomic_store_explicit(&fl_grow_failed, true, memory_order_relaxed);
	if (!fl_growing()) {
		char num[24];
		const char *key = "pool_buffers", *val = num;
		size_t n;

		snprintf(num, sizeof(num), "%u", fdr_pool_count());
		n = fdr_ext_config(fl_scratch, sizeof(fl_scratch), 1, &key, &val);
		if (n)
			fdr_rtbuf_add(rb, fl_scratch, n);
		if (fdr_cfg.verbosity >= 2)
			fdr_say("fdrtrace: the pool is now %u buffers of %llu bytes%s\n",
				fdr_pool_count(), (unsigned long long)fdr_cfg.buffer_size,
				atomic_load_explicit(&fl_grow_failed, memory_order_relaxed)
					? " (no memory for more)" : "");
	}
}
/*
 * on_full=wait: a free buffer, waiting while the flush thread makes
 * progress. Gives up (NULL: the caller drops) when recording is ending,
 * the file failed, there is no flush thread, or no buffer came back for
 * FL_WAIT_STALL_MS: a flush thread blocked on a lock that the waiting
 * thread, or the code it interrupted, holds; or every buffer held,
 * partly filled, by threads that are themselves waiting (in the
 * program's own locks or condition variables) for the waiting thread.
 * Never a deadlock.
 */
#define FL_WAIT_STEP_MS 10u
#define FL_WAIT_STALL_MS 1000u

/*
 * Progress, for the waits: a buffer written (so put back) or the pool
 * grown. Both counts only grow (until a fork child resets them), so
 * their sum changes whenever either does.
 */
static notrace uint64_t fl_progress(void)
{
	return atomic_load_explicit(&fdr_written, memory_order_acquire) + fdr_pool_count();
}

/*
 * fl_progress() + 1 when a wait last gave up for a stall; 0: none since
 * the start (or the fork). Until progress moves past it, no thread waits
 * again: each gives up at once and drops. Without it each hook of a
 * starved thread waited its own FL_WAIT_STALL_MS, so a thread whose
 * progress the buffers' holders wait for made one call a second: zstd -T2
 * with buffer_max=2, its main and one worker thread each holding a
 * buffer in pthread_cond_wait() for the other workers, ran for ten
 * minutes and more (2026-12-02). Relaxed: a hint; a stale value costs at
 * most one more wait of FL_WAIT_STALL_MS, or one drop (a stall it marks
 * ends at the next buffer written).
 */
_Atomic uint64_t fl_stalled_at;

notrace bool fdr_flush_wait_stalled(void)
{
	return atomic_load_explicit(&fl_stalled_at, memory_order_relaxed) == fl_progress() + 1;
}

notrace struct fdr_buffer *fdr_flush_wait_buffer(void)
{
	uint64_t seen = fl_progress();
	uint64_t since = fdr_clock_ns(CLOCK_MONOTONIC);

	if (atomic_load_explicit(&fl_stalled_at, memory_order_relaxed) == seen + 1)
		return NULL;	/* still stalled: nothing came back since a wait gave up */
	for (;;) {
		struct fdr_buffer *b;
		uint64_t now;

		if (!fl_running || atomic_load_explicit(&fdr_phase, memory_order_acquire) !=
					   FDR_PHASE_RECORDING || fdr_file_failed())
			return NULL;
		fdr_flush_starved();	/* a larger pool, while it may grow */
		fdr_flush_wake();
		b = fdr_pool_get_wait(FL_WAIT_STEP_MS);
		if (b)
			return b;
		/*
		 * The stall is timed, not counted in steps: each put wakes
		 * every waiter and only one gets the buffer, so with many
		 * waiters a step often ends at once. Another waiter that gave
		 * up on the same stall ends this one too.
		 */
		now = fl_progress();
		if (now != seen) {
			seen = now;
			since = fdr_clock_ns(CLOCK_MONOTONIC);
		} else if (atomic_load_explicit(&fl_stalled_at, memory_order_relaxed) == seen + 1 ||
			   fdr_clock_ns(CLOCK_MONOTONIC) - since >= FL_WAIT_STALL_MS * 1000000ull) {
			atomic_store_explicit(&fl_stalled_at, seen + 1, memory_order_relaxed);
			return NULL;
		}
	}
}
