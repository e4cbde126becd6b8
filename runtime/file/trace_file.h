/* SPDX-License-Identifier: MIT */
/*
 * runtime/file/trace_file.h - the trace file (trace_file.c): creation,
 * writes, the runtime's own
 * buffers, the close record.
 */
#ifndef FDR_TRACE_FILE_H
#define FDR_TRACE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fdrtrace/format.h>

#include "compiler.h"

struct fdr_buffer;

/*
 * the path is fdr_path, the file opened unnamed (no other thread of the
 * program runs); writes are kept until fdr_file_create() names it
 */
int fdr_file_prepare(void) fdr_hidden;
/* create the file and write what was kept (caller holds the file lock); reports a failure */
int fdr_file_create(void) fdr_hidden;
/* the file exists (or recording never kept anything for it) */
bool fdr_file_created(void) fdr_hidden;
/*
 * The trace (the unnamed file before it is created) is at its descriptor
 * in the calling thread's table, written buffered, nothing failed: a
 * thread other than the flush thread can write it without opening it
 * again. Not where the program took the number, or the flush thread
 * opened it in its own table (by name, or for direct writes), nor under
 * a file size limit (SIGXFSZ). Caller holds the file lock.
 */
bool fdr_file_here(void) fdr_hidden;
/* a snapshot's file: written unnamed in the trace's directory, named when whole */
int fdr_file_open_unnamed(void) fdr_hidden;
/* name the unnamed file @fd @path (nothing there is replaced). Return: 0 or -errno */
int fdr_file_link(int fd, const char *path) fdr_hidden;
/* give back the disk blocks reserved past the end of fdr_fd (async-signal-safe) */
void fdr_file_trim(void) fdr_hidden;
/* direct writes: the partial last block into the file (file lock held), and whether one waits */
void fdr_file_settle(void) fdr_hidden;
bool fdr_file_unsettled(void) fdr_hidden;
/* the offset direct writes began at, -1 when the file is written buffered */
long long fdr_file_direct_from(void) fdr_hidden;
/* the flush thread settles the file once it has written nothing for this long */
#define FDR_SETTLE_MS 10
/* trim, then close the trace's descriptors (the finish) */
void fdr_file_close(void) fdr_hidden;
/* the thread id of the runtime's own buffers (the flush thread's), for the file's last unit */
void fdr_file_set_tid(int32_t tid) fdr_hidden;
/* a fork child: close the parent's descriptors, write nothing */
void fdr_file_forget(void) fdr_hidden;
/* the descriptors of the trace (at most 2, into @fds): the flush thread's table keeps them */
int fdr_file_fds(int fds[2]) fdr_hidden;
/* write to @fd from now on: the trace's own (@trace) or a snapshot's */
void fdr_file_use(int fd, bool trace) fdr_hidden;
/**
 * fdr_file_write_header() - the file header; fdr_file_write_buffer() - one
 * buffer of @len bytes, framed for the format version (v5: its
 * BufferExtents; v1: EndOfBuffer and padding), its records counted into
 * fdr_totals
 *
 * Context: the file lock's holder; async-signal-safe.
 * Return: 0, or -errno: the write failed, the file was cut back to its
 * last whole unit and recording stopped (reported once).
 */
int fdr_file_write_header(void) fdr_hidden;
int fdr_file_write_buffer(const uint8_t *data, uint64_t len) fdr_hidden;
/* the most buffers fdr_file_write_buffers() writes at once */
#define FDR_WRITE_BATCH 16u
/* up to FDR_WRITE_BATCH buffers in one write (-EINVAL past it); else as fdr_file_write_buffer() */
int fdr_file_write_buffers(struct fdr_buffer *const *bufs, unsigned count) fdr_hidden;
/* the header's cycle frequency, once refined (file lock held) */
void fdr_file_patch_freq(uint64_t freq) fdr_hidden;
/*
 * The close marker, how @how, from the totals written so far, the clock
 * frequency @freq and, for FDRTRACE_CLOSE_STOPPED, the errno @error of
 * the write that failed, into @buf. Return: its length, 0 if it does not
 * fit. Async-signal-safe.
 */
size_t fdr_close_record(uint8_t *buf, size_t cap, uint8_t how, uint64_t freq, int error) fdr_hidden;
/**
 * fdr_file_lock() - take the file lock: one writer at a time
 * @spin_limit:	give up after that many tries (0: wait)
 *
 * Acquire; pairs with fdr_file_unlock()'s release (the previous writer's
 * state). Not recursive. Async-signal-safe. Return: whether it is held.
 */
bool fdr_file_lock(unsigned spin_limit) fdr_hidden;
/* the calling thread holds the file lock (it is inside a write) */
bool fdr_file_locked_here(void) fdr_hidden;
void fdr_file_unlock(void) fdr_hidden;
/* a write failed: recording stopped for good */
bool fdr_file_failed(void) fdr_hidden;
/* recording stopped because the trace reached max_size (not a write error) */
bool fdr_file_max_size_hit(void) fdr_hidden;
/* the trace's path and descriptor (-1: none); changed under the file lock */
extern char fdr_path[4200] fdr_hidden;
extern int fdr_fd fdr_hidden;

/* Totals of what went into the file (flush thread / finisher only). */
struct fdr_totals {
	uint64_t records;
	uint64_t records_dropped;
	uint64_t buffers;
	uint64_t buffers_dropped;
	uint64_t dropped_by[FDRTRACE_DROP_REASON_COUNT];	/* records, per reason */
};
extern struct fdr_totals fdr_totals fdr_hidden;

/* How the process ends (enum fdrtrace_end and its value), for the close record. */
void fdr_set_end(uint8_t end, uint32_t value) fdr_hidden;

#endif /* FDR_TRACE_FILE_H */
