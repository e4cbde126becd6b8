/* SPDX-License-Identifier: MIT */
/*
 * runtime/flush/flush.h - the flush thread (flush_thread.c): drains, names,
 * grows the pool,
 * snapshots, finishes.
 */
#ifndef FDR_FLUSH_H
#define FDR_FLUSH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

struct fdr_buffer;
struct fdr_rtbuf;

/**
 * fdr_flush_start() - start the flush thread (start of recording)
 *
 * Context: the starting thread, once. Return: 0 or -errno (no memory for
 * the names' table, no thread).
 */
int fdr_flush_start(void) fdr_hidden;
/* the flush thread runs (started, not finished) */
bool fdr_flush_running(void) fdr_hidden;
/* wake the flush thread (a futex; async-signal-safe) */
void fdr_flush_wake(void) fdr_hidden;
/* A first record: wake the flush thread unless its first wait is still on. */
void fdr_flush_wake_recorded(void) fdr_hidden;
/* the flush thread's id: the thread id the runtime buffers carry (0 before it starts) */
int32_t fdr_flush_tid(void) fdr_hidden;
/* a buffer was queued: wake the flush thread when a batch is ready or the pool runs low */
void fdr_flush_queued(void) fdr_hidden;
/* a thread found the pool empty: the flush thread grows it (stream policy, when allowed) */
void fdr_flush_starved(void) fdr_hidden;
/* lc_finish()'s first step: requested snapshots, written on the exiting thread */
void fdr_flush_pending_snapshots(void) fdr_hidden;
/* _exit()'s first step: wait (bounded) for a latency trigger's snapshot; async-signal-safe */
void fdr_flush_triggers_wait(unsigned timeout_ms) fdr_hidden;
/**
 * fdr_flush_finish() - the flush thread's last round: the queue written,
 * then the drops and the close record saying @how (FDRTRACE_CLOSE_*)
 *
 * On the calling thread when the flush thread cannot be joined here (it
 * then stops on its own), else the flush thread does it and is joined.
 * Context: the finisher, once; nothing without a flush thread.
 */
void fdr_flush_finish(uint8_t how) fdr_hidden;
/* the coming finish is for an exec of @path: an FDRTRACE_EXT_EXEC record before the close */
void fdr_flush_note_exec(const char *path, uint32_t tid, uint64_t tsc) fdr_hidden;
/* wait (@timeout_ms at most) until @target buffers are written. Return: 0 or -ETIMEDOUT */
int fdr_flush_wait_written(uint64_t target, unsigned timeout_ms) fdr_hidden;
/*
 * FDRx func records into @rb for the ids not named yet (@names: with their
 * names, looked up; else from the ring policy's names cache only, as the
 * fatal-signal dump needs). Caller holds the file lock.
 */
void fdr_flush_emit_funcs(struct fdr_rtbuf *rb, bool names) fdr_hidden;
/* fork child (one thread): the flush thread's state as before its first start */
void fdr_flush_reset_child(void) fdr_hidden;
/* dump_signal, ring policy: ask the flush thread for a snapshot (async-signal-safe) */
void fdr_flush_request_snapshot(void) fdr_hidden;
/* a latency trigger fired: one snapshot more (async-signal-safe, lock-free) */
void fdr_flush_request_trigger(void) fdr_hidden;
/* ring policy, fatal-signal handler: let the flush thread name the ids so far (@ms at most) */
void fdr_flush_names_wait(unsigned ms) fdr_hidden;
/*
 * Wait (@ms at most) until the start records are written (by the starter,
 * or where it could not, by the flush thread): a dump that writes buffers
 * itself must not put them before those. Async-signal-safe (futex);
 * returns at once without a flush thread.
 */
void fdr_flush_started_wait(unsigned ms) fdr_hidden;
/*
 * Wait (@ms at most) until the flush thread runs, past its own set-up (the
 * C library's and a sanitizer's thread start, which may allocate; its
 * descriptor table; libgcc's unwinder for the fork's stack), waking it
 * out of its first wait for that: from then on it allocates only under
 * the mutex fdr_flush_fork_prepare() takes. For a fork. Returns at once
 * without a flush thread.
 */
void fdr_flush_alive_wait(unsigned ms) fdr_hidden;
/*
 * on_full=wait: a free buffer, waited for while the flush thread makes
 * progress; NULL (the caller drops) when recording ends, the file failed,
 * there is no flush thread, or nothing came back for a second (pool.c).
 */
struct fdr_buffer *fdr_flush_wait_buffer(void) fdr_hidden;
/*
 * on_full=wait: a wait gave up for a stall and no buffer came back since
 * (fdr_flush_wait_buffer() would return NULL at once). Cheap: for before
 * the costlier checks of whether the thread may wait at all.
 */
bool fdr_flush_wait_stalled(void) fdr_hidden;
/* fdrtrace_flush() in ring policy: a snapshot, waited for. Return: 0 or -ETIMEDOUT */
int fdr_flush_snapshot_wait(unsigned timeout_ms) fdr_hidden;
/* a fork child's own flush thread, at its first hook. Return: 0 or -errno */
int fdr_flush_start_child(void) fdr_hidden;
/* fork's prepare handler: hold the flush thread's mutex (no half-written buffer in the child) */
void fdr_flush_fork_prepare(void) fdr_hidden;
/* fork's parent handler: let it go */
void fdr_flush_fork_parent(void) fdr_hidden;
/*
 * The start records into @rb, then written: process, the runtime thread's
 * name, the fork record naming @parent (@forked), configuration, modules.
 * Caller holds the file lock. Return: fdr_rtbuf_flush()'s.
 */
int fdr_write_start_records(struct fdr_rtbuf *rb, bool forked, uint32_t parent) fdr_hidden;
/* buffers written (and put back), for fdr_flush_wait_written() and the waits' progress */
extern _Atomic uint64_t fdr_written fdr_hidden;

#endif /* FDR_FLUSH_H */
