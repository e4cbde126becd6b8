/* SPDX-License-Identifier: MIT */
/*
 * runtime/file/file_internal.h - what the files of the file layer share.
 * The files form a stack, each calling only those below it:
 * file_state.c (the state, the lock, the primitives) < own.c (the trace's
 * own descriptor) < direct_io.c (direct writes) < open.c (the file's
 * life) < trace_file.c (header and buffers) < rtbuf.c (runtime buffers).
 * Each group of functions below is owned by the file it names; the state
 * is file_state.c's. Nothing outside runtime/file/ includes it; the
 * layer's interface is trace_file.h.
 *
 * Everything here is changed under the file lock (file_state.c:
 * fdr_file_lock()) unless its comment says otherwise.
 */
#ifndef FDR_FILE_INTERNAL_H
#define FDR_FILE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <fdrtrace/format.h>

#include "compiler.h"
#include "trace_file.h"

extern _Atomic int fw_lock fdr_hidden;	/* 0, or the thread id of the holder */
extern _Atomic bool fw_failed fdr_hidden;
/*
 * The path is chosen, the file not created yet: writes go to fw_early.
 * Changed under the file lock only; read without it by the flush thread's
 * loop and the finisher (relaxed: a stale "pending" only delays creation
 * to the next look, which takes the lock).
 */
extern _Atomic bool fw_pending fdr_hidden;
/*
 * The trace file, opened unnamed by fdr_file_prepare() and linked at the
 * trace path by fdr_file_create(); -1 when not open (no O_TMPFILE or no
 * /proc here: the file is created by name then). Opened that early
 * because fdr_file_prepare() runs while no other thread of the program
 * does (initialisation before main(), a fork child before fork()
 * returns): opened later, by the flush thread, it would take the lowest
 * free descriptor, the one a program that has just closed standard
 * error (xz, gnulib's close_stdout, a daemon reopening /dev/null) gets
 * from its next open. Never 0, 1 or 2 (fdr_fd_high()).
 */
extern int fw_unnamed fdr_hidden;
/*
 * The trace's descriptor (fw_unnamed, then fdr_fd) and the file it was
 * opened on. A program may close descriptors it did not open (a daemon's
 * close-all, closefrom(3) before an exec) and get the number back from
 * its next open: from then on the number is the program's, and nothing is
 * written to it, truncated, switched to O_DIRECT, linked or closed
 * (fw_ours()). @on: fdr_fd is the trace's (not a snapshot's,
 * fdr_file_use()). Changed under the file lock only.
 */
struct fw_own_state {
	int fd;
	bool on;
	dev_t dev;
	ino_t ino;
};
extern struct fw_own_state fw_own fdr_hidden;
extern uint8_t *fw_early fdr_hidden;
extern size_t fw_early_len fdr_hidden;
/* the trace's directory (fdr_path up to its last '/'; "/" for the root) */
extern char fw_dir[sizeof(fdr_path)] fdr_hidden;
/* fdr_path's length without ".fdr" once it is numbered (fw_path_numbered()); 0: not */
extern size_t fw_path_base fdr_hidden;
#define FW_EARLY_CAP (4u << 20)	/* reserved, touched only as far as written */
extern const uint8_t *fw_zeros fdr_hidden;	/* buffer_size zero bytes, for v1 padding */
#define FW_PREALLOC (8 << 20)
extern int fw_pre_fd fdr_hidden;	/* the file whose blocks are reserved up to fw_pre_end */
extern off_t fw_pre_end fdr_hidden;
extern bool fw_pre_refused fdr_hidden;	/* fallocate failed once: never again in this process */
extern struct fdrtrace_md_custom_event_v1 fw_pad_md fdr_hidden;

/*
 * The unit fw_writev() was given could not be written, and the file was
 * cut back to where it began: the errno, for the caller that knows what
 * the unit held (fw_stopped()); 0: none. Under the file lock.
 */
extern int fw_cut_err fdr_hidden;
/*
 * Where fw_writev() began writing its unit (-1: kept in memory, before the
 * file exists), and the last unit written whole: its file, offset and
 * what it held (fw_stopped() gives it up to make room on a full disk).
 * Under the file lock.
 */
extern off_t fw_unit_at fdr_hidden;
struct fw_last_state {
	int fd;
	off_t at;
	uint64_t records, buffers;
};
extern struct fw_last_state fw_last fdr_hidden;
/* RLIMIT_FSIZE when the file was created, or max_size if lower, bytes; 0: none (fw_room()) */
extern uint64_t fw_fsize_max fdr_hidden;
/* fw_fsize_max is max_size's (the option), not the kernel's limit */
extern bool fw_fsize_option fdr_hidden;
/* recording stopped at max_size (fdr_file_max_size_hit()) */
extern _Atomic bool fw_max_size_hit fdr_hidden;
/* the last unit (fw_stopped()): preamble, drop and close records */
extern uint8_t fw_stop_unit[512] fdr_hidden;

#define FW_DIO_CAP (1u << 20)		/* the stage: the largest direct write */
#define FW_DIO_ALIGN_MAX 65536u		/* a file system asking more is written buffered */
/* Direct writes (trace_file.c's opening comment); changed under the file lock only. */
struct fw_dio_state {
	int fd;			/* the file written direct; -1: none (written buffered) */
	int cand;		/* the trace file, its file system able to take direct writes */
	unsigned align;		/* offsets and lengths: a multiple of this, a power of 2 */
	_Atomic bool unsettled;	/* stage[0..len) is not in the file yet (read unlocked) */
	off_t base;		/* the file offset of stage[0]: a multiple of align */
	size_t len;		/* bytes staged */
	uint8_t *stage;		/* FW_DIO_CAP bytes, page aligned, touched as used */
	uint8_t *keep;		/* the partial block as a write began, for its cut */
	uint64_t watch_bytes;	/* direct_io=auto: written buffered in this window */
	uint64_t watch_ns;	/* and the writing thread's CPU time for it */
	unsigned watch_slow;	/* windows in a row that cost more */
	off_t from;		/* the offset direct writes began at; -1: never */
	off_t safe_end;		/* the end of a unit the file holds whole (a cut's fallback) */
};
extern struct fw_dio_state fw_dio fdr_hidden;

/* file_state.c */
notrace int fw_dio_mode(bool on) fdr_hidden;
notrace int fw_dio_stop(void) fdr_hidden;
notrace int fw_fail(const char *what, int err) fdr_hidden;
notrace void fw_fsize_probe(void) fdr_hidden;
notrace void fw_prealloc(off_t pos, size_t len) fdr_hidden;
notrace void fw_report(const char *what, int err) fdr_hidden;
notrace int fw_write_all(int fd, const uint8_t *p, size_t len, off_t off) fdr_hidden;

/* own.c */
notrace int fw_open_own(int flags) fdr_hidden;
notrace bool fw_ours(void) fdr_hidden;
notrace void fw_own_set(int fd) fdr_hidden;
notrace bool fw_same(int fd) fdr_hidden;
notrace bool fw_taken(void) fdr_hidden;

/* direct_io.c */
notrace uint64_t fw_cpu_ns(void) fdr_hidden;
notrace void fw_dio_probe(void) fdr_hidden;
notrace void fw_dio_watch(uint64_t bytes, uint64_t ns) fdr_hidden;
notrace int fw_dio_writev(const struct iovec *iov, int n, size_t total) fdr_hidden;
notrace int fw_write_through(const uint8_t *p, size_t len, off_t off) fdr_hidden;

#endif /* FDR_FILE_INTERNAL_H */
