// SPDX-License-Identifier: MIT
/*
 * runtime/flush/snapshot.c - snapshots (ring policy): the ring and every thread's
 * partial buffer into a file of their own, on dump_signal, fdrtrace_flush()
 * or a latency trigger.
 *
 * Contract: the flush thread writes them (fl_snapshot(), holding fl_mutex
 * and the file lock); a request is an atomic counter or flag and a wake-up,
 * async-signal-safe. The finisher writes those still pending on its own
 * thread (fdr_flush_pending_snapshots()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "autoexclude.h"
#include "buffer_queue.h"
#include "clock.h"
#include "fd_high.h"
#include "flush.h"
#include "flush_internal.h"
#include "modules.h"
#include "ring.h"
#include "rtbuf.h"
#include "say.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"
#include "trace_file.h"
#include "trigger.h"

/* ---- snapshots (ring policy) ---- */

_Atomic int fl_snap_req;
_Atomic uint32_t fl_trig_req;	/* latency triggers fired, snapshots not yet written */
_Atomic uint32_t fl_snaps;	/* snapshots written (or failed) */
static struct fdr_rtbuf fl_snap_rb;

struct fl_partial {
	int32_t tid;
	uint64_t len;		/* 0: the thread had no buffer (its drops only) */
	uint8_t *copy;
	uint64_t rec[FDRTRACE_DROP_REASON_COUNT], bufs[FDRTRACE_DROP_REASON_COUNT];
};

struct fl_partials {
	struct fl_partial *p;
	uint32_t used, cap;
};

/*
 * Copy a thread's partial buffer and read the drops it has not reported
 * in a buffer yet (slot locked: a few microseconds, no I/O). The owner
 * subtracts its pending drops after it put them in its buffer and
 * publishes @pos after that: read here, drops are in the copy or pending,
 * or (between the two) in neither, never in both.
 */
static notrace void fl_copy_partial(struct fdr_thread *t, void *arg)
{
	struct fl_partials *ps = arg;
	uint8_t *pos = atomic_load_explicit(&t->pos, memory_order_acquire);
	struct fdr_buffer *b;
	struct fl_partial *p;
	bool drops = false;

	if (ps->used == ps->cap)
		return;
	p = &ps->p[ps->used];
	p->tid = t->tid;
	p->len = 0;
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		p->rec[r] = atomic_load_explicit(&t->drop_rec[r], memory_order_relaxed);
		p->bufs[r] = atomic_load_explicit(&t->drop_buf[r], memory_order_relaxed);
		drops |= p->rec[r] || p->bufs[r];
	}
	/* @buf only behind a non-NULL @pos: see fdr_snapshot_thread() */
	b = pos ? t->buf : NULL;
	if (b && pos > b->data && pos <= b->data + fdr_cfg.buffer_size) {
		p->len = (uint64_t)(pos - b->data);
		memcpy(p->copy, b->data, p->len);
	}
	if (p->len || drops)
		ps->used++;
}

/*
 * Write everything in memory to a new file, <trace>.snap<N>.fdr, and go
 * on: the ring's buffers stay for the next dump. Caller holds fl_mutex.
 * @why: said on stderr with the path (verbosity 1 and up); NULL: only at
 * verbosity 2 and up.
 */
static notrace void fl_snapshot(const char *why)
{
	char path[sizeof(fdr_path) + 32];
	size_t base = strlen(fdr_path);
	struct fdr_totals saved_totals, snap_totals;
	struct fl_partials ps = { 0 };
	uint8_t *saved_emitted = fl_emitted;
	uint32_t saved_scan = fl_scan_from;
	uint32_t n = atomic_load_explicit(&fl_snaps, memory_order_relaxed) + 1;
	uint64_t orphan_rec[FDRTRACE_DROP_REASON_COUNT] = { 0 };
	uint64_t orphan_bufs[FDRTRACE_DROP_REASON_COUNT] = { 0 };
	uint64_t upto;
	int saved_fd, fd, err;
	bool unnamed;
	size_t len;

	if (base > 4)
		base -= 4;	/* ".fdr" */
	snprintf(path, sizeof(path), "%.*s.snap%u.fdr", (int)base, fdr_path, n);
	/*
	 * Written unnamed and named when whole (below), as the trace is: the
	 * path of a snapshot being written shows nothing, so a program or a
	 * script that waits for the file reads it complete, and a program
	 * that waits for it does not run on (overwriting the ring) while it
	 * is written. Where unnamed files are not available: by name, at once.
	 */
	fd = fdr_file_open_unnamed();
	unnamed = fd >= 0;
	if (!unnamed)
		fd = fdr_fd_high(open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					       O_CLOEXEC, 0600));
	if (fd < 0) {
		if (fdr_cfg.verbosity >= 1)
			fdr_say("fdrtrace: cannot create snapshot %s: %s\n", path,
				strerrordesc_np(errno));
		goto out;
	}
	/*
	 * The ring's newest buffer now, then the partial buffers (copies): the
	 * ring is written up to that bound, so a buffer handed over after its
	 * copy (numbered as the copy) is not written again, and the copies are
	 * their threads' newest buffers in the snapshot.
	 */
	upto = fdr_ring_newest();
	/*
	 * The drops of overwritten buffers and of ended threads so far, before
	 * any buffer is written or copied: a buffer overwritten after this is
	 * in the snapshot or in neither (a thread ending meanwhile moves its
	 * pending drops here after it: neither), never in both.
	 */
	fdr_orphan_drops(orphan_rec, orphan_bufs, false);
	ps.cap = fdr_threads_slots_used() + 4;
	ps.p = calloc(ps.cap, sizeof(*ps.p));
	for (uint32_t i = 0; ps.p && i < ps.cap; i++) {
		ps.p[i].copy = malloc(fdr_cfg.buffer_size);
		if (!ps.p[i].copy) {
			ps.cap = i;
			break;
		}
	}
	if (!ps.p)
		ps.cap = 0;
	fl_emitted = NULL;	/* a fresh map: the snapshot names every id */
	if (fl_emitted_init() < 0)
		fl_emitted = NULL;
	fdr_file_lock(0);
	/*
	 * Modules loaded since the last scan go to the main trace first (its
	 * runtime buffer, written later to it): a scan reports each module once,
	 * and the scan in the snapshot's start records would keep them from it.
	 */
	fdr_modules_scan(fl_module_mapped, fl_module_unmapped, &fl_rb);
	/*
	 * Invariant: fdr_fd and fdr_totals are the snapshot's only while this
	 * thread holds the file lock; whoever takes the lock in between (the
	 * fatal-signal handler's crash dump) finds the trace's.
	 */
	saved_fd = fdr_fd;
	saved_totals = fdr_totals;
	fdr_file_use(fd, false);
	memset(&fdr_totals, 0, sizeof(fdr_totals));
	fdr_file_write_header();
	fdr_rtbuf_init(&fl_snap_rb, fl_rb.tid);
	fdr_write_start_records(&fl_snap_rb, fdr_fork_parent != 0, (uint32_t)fdr_fork_parent);
	/* the snapshot names every module again (the start records name only new ones) */
	fdr_modules_foreach_reported(fl_module_again, &fl_snap_rb);
	fdr_rtbuf_flush(&fl_snap_rb);
	snap_totals = fdr_totals;
	fdr_file_use(saved_fd, true);
	fdr_totals = saved_totals;
	fdr_file_unlock();
	fdr_threads_foreach(fl_copy_partial, &ps, 0);
	fdr_file_lock(0);
	saved_fd = fdr_fd;
	saved_totals = fdr_totals;
	fdr_file_use(fd, false);
	fdr_totals = snap_totals;
	fdr_flush_emit_funcs(&fl_snap_rb, true);
	fdr_rtbuf_flush(&fl_snap_rb);
	fdr_ring_write(true, upto, fdr_file_write_buffer);
	for (uint32_t i = 0; i < ps.used; i++)
		if (ps.p[i].len)
			fdr_file_write_buffer(ps.p[i].copy, ps.p[i].len);
	/* the drops not in a buffer yet, as the final trace will report them */
	for (uint32_t i = 0; i < ps.used; i++)
		fdr_rtbuf_add_drops(&fl_snap_rb, ps.p[i].tid, ps.p[i].rec, ps.p[i].bufs);
	fdr_rtbuf_add_drops(&fl_snap_rb, 0, orphan_rec, orphan_bufs);
	/* auto_exclude: every decision, the counts so far */
	fdr_ax_emit(&fl_snap_rb, fdr_rtbuf_add, false);
	fdr_rtbuf_flush(&fl_snap_rb);	/* counts them into the totals */
	len = fdr_close_record(fl_scratch, sizeof(fl_scratch), FDRTRACE_CLOSE_SNAPSHOT,
			       fdr_clock.freq, 0);
	if (len)
		fdr_rtbuf_add(&fl_snap_rb, fl_scratch, len);
	fdr_rtbuf_flush(&fl_snap_rb);
	fdr_file_trim();	/* fdr_fd is the snapshot's still: before it is named */
	err = unnamed ? fdr_file_link(fd, path) : 0;
	close(fd);
	fdr_file_use(saved_fd, true);
	fdr_totals = saved_totals;
	fdr_file_unlock();
	if (fl_emitted)
		munmap(fl_emitted, fl_id_bytes());
	if (err) {
		/* EEXIST: something is at the path (nothing is followed or replaced) */
		if (fdr_cfg.verbosity >= 1)
			fdr_say("fdrtrace: cannot create snapshot %s: %s\n", path,
				strerrordesc_np(-err));
	} else if (why && fdr_cfg.verbosity >= 1)
		fdr_say("fdrtrace: snapshot %s (%s)\n", path, why);
	else if (fdr_cfg.verbosity >= 2)
		fdr_say("fdrtrace: snapshot %s\n", path);
out:
	fl_emitted = saved_emitted;
	fl_scan_from = saved_scan;
	for (uint32_t i = 0; i < ps.cap; i++)
		free(ps.p[i].copy);
	free(ps.p);
	atomic_fetch_add_explicit(&fl_snaps, 1, memory_order_release);
}

/* Async-signal-safe: ask the flush thread for a snapshot. */
notrace void fdr_flush_request_snapshot(void)
{
	atomic_store_explicit(&fl_snap_req, 1, memory_order_release);
	fdr_flush_wake();
}

notrace void fdr_flush_request_trigger(void)
{
	/* release: the trigger's description (trigger.c) before the request */
	atomic_fetch_add_explicit(&fl_trig_req, 1, memory_order_release);
	fdr_flush_wake();
}

/* fdrtrace_flush() in ring policy: a snapshot, waited for (at most @timeout_ms). */
notrace int fdr_flush_snapshot_wait(unsigned timeout_ms)
{
	uint32_t before = atomic_load_explicit(&fl_snaps, memory_order_acquire);

	fdr_flush_request_snapshot();
	for (unsigned i = 0; i < timeout_ms; i++) {
		struct timespec ts = { 0, 1000000 };

		if (atomic_load_explicit(&fl_snaps, memory_order_acquire) != before)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

notrace void fl_request(struct fdr_thread *t, void *arg)
{
	(void)arg;
	atomic_store_explicit(&t->flush_req, 1, memory_order_relaxed);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
}

/*
 * The snapshots asked for (fdrtrace_flush() in ring policy, a signal, a
 * latency trigger) and not yet written; under fl_mutex. The flush
 * thread's rounds call it, and so does the final round on the exiting
 * thread (fl_finish_here()): a trigger that fired just before the exit,
 * while the flush thread slept, is written before the close.
 */
notrace void fl_requested_snapshots(void)
{
	if (atomic_exchange_explicit(&fl_snap_req, 0, memory_order_acquire))
		fl_snapshot(NULL);
	/* acquire: pairs with fdr_flush_request_trigger() */
	while (atomic_load_explicit(&fl_trig_req, memory_order_acquire)) {
		char why[1024];

		fdr_trigger_describe(why, sizeof(why));
		fl_snapshot(why);
		atomic_fetch_sub_explicit(&fl_trig_req, 1, memory_order_relaxed);
	}
}
