// SPDX-License-Identifier: MIT
/*
 * runtime/flush/flush_state.c - the flush layer's shared state and its
 * wake-up: the word the flush thread sleeps on, the runtime buffer its
 * records go into, the scratch buffer and which names are written.
 *
 * Contract: the bottom of the flush layer. names.c, pool.c, snapshot.c
 * and flush_thread.c use it; it calls no other file of the layer.
 * fdr_flush_wake() may be called from any thread, in a signal handler too
 * (one atomic add, and a futex wake only when the thread sleeps). The rest
 * is the flush thread's, or changed under fl_mutex (flush_thread.c).
 */
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "flush.h"
#include "flush_internal.h"
#include "rtbuf.h"

_Atomic uint64_t fdr_written;

bool fl_running;	/* the flush thread was started and has not been joined */
/*
 * The flush thread's futex word, bumped by every wake-up, and whether it
 * sleeps on it: the sleeper (flush_thread.c) stores fl_sleeping, then
 * loads fl_seq; the waker adds to fl_seq, then loads fl_sleeping (all
 * seq_cst), so one of the two sees the other.
 */
_Atomic uint32_t fl_seq;
_Atomic int fl_sleeping;

struct fdr_rtbuf fl_rb;
uint8_t *fl_emitted;	/* per id: FDRTRACE_EXT_FUNC written */
uint32_t fl_scan_from = 1;
uint8_t fl_scratch[8192];

/* The flush thread's id, which the runtime buffers carry (0 before it runs). */
notrace int32_t fdr_flush_tid(void)
{
	return fl_rb.tid;
}

/* The flush thread runs (started, not finished): a hook may wait for its decisions. */
notrace bool fdr_flush_running(void)
{
	return fl_running;
}

/* Wake the flush thread for a round now (any thread, async-signal-safe). */
notrace void fdr_flush_wake(void)
{
	/* seq_cst: pairs with the sleeper's store of fl_sleeping then load of fl_seq */
	atomic_fetch_add_explicit(&fl_seq, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&fl_sleeping, memory_order_seq_cst))
		syscall(SYS_futex, &fl_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
