// SPDX-License-Identifier: MIT
/*
 * runtime/file/trace_file.c - the trace file: header, buffers, runtime buffers.
 *
 * Contract: one writer at a time, the holder of the file lock (an atomic
 * flag: the flush thread, the finisher through the flush thread, or the
 * fatal-signal handler). Everything here is async-signal-safe except
 * fdr_file_prepare() (initialisation and fork child only): writev, pwrite and
 * clock_gettime, no allocation, no stdio.
 *
 * What a buffer looks like on disk:
 *   v5: BufferExtents(size) NewBuffer(tid) WallTimeMarker Pid NewCPUId records...
 *   v1: NewBuffer(tid) WallTimeMarker NewCPUId records... EndOfBuffer padding
 *	 (exactly buffer_size bytes)
 * Buffers in memory start with the same preamble (the v5 extents size is
 * filled in here, from the length being written, so a buffer snapshotted
 * while its owner still writes is never modified).
 *
 * A write error (disk full, EFBIG past ulimit -f, EIO) is reported once on
 * stderr and stops recording; the program goes on. The file is cut back
 * to the end of the last unit it holds whole, and a last unit goes there
 * (fw_stopped()): a drop record for the records of the unit that failed
 * and a close marker "stopped" naming the error, so that the trace itself
 * says it ends early and why. Under a file size limit (RLIMIT_FSIZE) a
 * write that would leave no room for that unit is not tried (fw_room()):
 * it fails with EFBIG, the last unit fits. On a full disk the last unit is
 * tried, and the file cut back again when it does not fit.
 *
 * The file is created lazily. fdr_file_prepare() (initialisation, fork
 * child) only chooses the path; what is written before the file exists
 * (the header and the start records) is kept in memory, in order, and
 * fdr_file_create() creates the file and writes it first. Whoever has
 * real data to write creates the file (the flush thread, the finisher,
 * the fatal-signal handler), so a process that never runs an
 * instrumented function leaves no file at all, and nothing is ever
 * unlinked. fdr_file_create() is async-signal-safe (open, write, linkat).
 *
 * The file appears whole: it is written unnamed (O_TMPFILE in the trace's
 * directory, opened by fdr_file_prepare(): see fw_unnamed) and only then
 * linked at the trace path, so a process ended
 * at any moment (_exit or SIGKILL on another thread while the flush
 * thread creates it) leaves no file or one that starts with the header
 * and the start records, never an empty one. Where there is no O_TMPFILE
 * (the file system or kernel has none) or no /proc to link it through,
 * the file is created by name and written at once, as before.
 *
 * Blocks ahead: once a file is past FW_PREALLOC bytes, its next
 * FW_PREALLOC bytes of disk blocks are reserved before they are written
 * (fallocate FALLOC_FL_KEEP_SIZE: the size does not change, so a reader
 * never sees them). A buffered write into reserved (unwritten) blocks
 * skips ext4's delayed-allocation bookkeeping per 4 KiB block: a fifth
 * to a third of what writing costs the flush thread (docs/performance.md).
 * fdr_file_trim() gives back what was reserved and not written, when the
 * file is closed or after the fatal-signal dump; a process killed outright
 * (SIGKILL, _exit) leaves at most FW_PREALLOC bytes of blocks reserved
 * past the end until the file is removed or truncated. A file system
 * that refuses (no fallocate, disk full) is written as before.
 *
 * Direct writes: once a trace outgrows what the kernel keeps dirty (a
 * few GB), each byte written through the page cache costs the writer
 * about 2 ns of CPU time here (allocating, reclaiming and writing back
 * pages; a core for 500 MB/s), and the pool grows while the flush thread
 * falls behind. Written with O_DIRECT, a byte costs a tenth of that and
 * goes at the disk's speed. So the trace file, where its file system
 * takes direct writes (statx reports an alignment), is written through
 * the page cache until that proves slow (direct_io=auto: fw_dio_watch()),
 * then direct; direct_io=always starts direct, off never is. Direct, what
 * is written is copied into the stage, an aligned area (a memcpy); whole
 * blocks go from the stage to the disk; the bytes of the last, partial
 * block stay in the stage until a later write completes the block. They
 * are written through the page cache only when the file must show them
 * (fdr_file_settle(): the flush thread idle for FDR_SETTLE_MS, the close,
 * the fatal-signal dump), and overwritten by the next direct write.
 * Invariant: the file holds every byte before fw_dio.base, the stage holds
 * fw_dio.base to the logical end (fewer than fw_dio.align bytes between
 * writes), and the file holds those too unless fw_dio.unsettled. A process
 * killed outright (SIGKILL) while the flush thread is busy loses at most
 * that partial block, at the end: the trace reads as cut there, as after a
 * kill during a write. A file system that refuses a direct write (EINVAL)
 * is written through the page cache from then on, the write redone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#ifdef FDR_CHECK_COUNTS
#include <stdlib.h>
#endif
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "buffer_queue.h"
#include "clock.h"
#include "config.h"
#include "ext_encode.h"
#include "fd_high.h"
#include "records.h"
#include "say.h"
#include "slowpath.h"
#include "state.h"
#include "trace_file.h"

char fdr_path[4200];
int fdr_fd = -1;
struct fdr_totals fdr_totals;

static _Atomic int fw_lock;	/* 0, or the thread id of the holder */
static _Atomic bool fw_failed;
/*
 * The path is chosen, the file not created yet: writes go to fw_early.
 * Changed under the file lock only; read without it by the flush thread's
 * loop and the finisher (relaxed: a stale "pending" only delays creation
 * to the next look, which takes the lock).
 */
static _Atomic bool fw_pending;
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
static int fw_unnamed = -1;
/*
 * The trace's descriptor (fw_unnamed, then fdr_fd) and the file it was
 * opened on. A program may close descriptors it did not open (a daemon's
 * close-all, closefrom(3) before an exec) and get the number back from
 * its next open: from then on the number is the program's, and nothing is
 * written to it, truncated, switched to O_DIRECT, linked or closed
 * (fw_ours()). @on: fdr_fd is the trace's (not a snapshot's,
 * fdr_file_use()). Changed under the file lock only.
 */
static struct {
	int fd;
	bool on;
	dev_t dev;
	ino_t ino;
} fw_own = { .fd = -1, .on = true };
static uint8_t *fw_early;
static size_t fw_early_len;
/* the trace's directory (fdr_path up to its last '/'; "/" for the root) */
static char fw_dir[sizeof(fdr_path)];
/* fdr_path's length without ".fdr" once it is numbered (fw_path_numbered()); 0: not */
static size_t fw_path_base;
#define FW_EARLY_CAP (4u << 20)	/* reserved, touched only as far as written */
static const uint8_t *fw_zeros;	/* buffer_size zero bytes, for v1 padding */
#define FW_PREALLOC (8 << 20)
static int fw_pre_fd = -1;	/* the file whose blocks are reserved up to fw_pre_end */
static off_t fw_pre_end;
static bool fw_pre_refused;	/* fallocate failed once: never again in this process */
static struct fdrtrace_md_custom_event_v1 fw_pad_md = {
	.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CUSTOM_EVENT),
};

/*
 * The unit fw_writev() was given could not be written, and the file was
 * cut back to where it began: the errno, for the caller that knows what
 * the unit held (fw_stopped()); 0: none. Under the file lock.
 */
static int fw_cut_err;
/*
 * Where fw_writev() began writing its unit (-1: kept in memory, before the
 * file exists), and the last unit written whole: its file, offset and
 * what it held (fw_stopped() gives it up to make room on a full disk).
 * Under the file lock.
 */
static off_t fw_unit_at = -1;
static struct {
	int fd;
	off_t at;
	uint64_t records, buffers;
} fw_last = { .fd = -1, .at = -1 };
/* RLIMIT_FSIZE when the file was created, or max_size if lower, bytes; 0: none (fw_room()) */
static uint64_t fw_fsize_max;
/* fw_fsize_max is max_size's (the option), not the kernel's limit */
static bool fw_fsize_option;
/* recording stopped at max_size (fdr_file_max_size_hit()) */
static _Atomic bool fw_max_size_hit;
/* the last unit (fw_stopped()): preamble, drop and close records */
static uint8_t fw_stop_unit[512];

#define FW_DIO_CAP (1u << 20)		/* the stage: the largest direct write */
#define FW_DIO_ALIGN_MAX 65536u		/* a file system asking more is written buffered */
/* Direct writes (see the top of the file); changed under the file lock only. */
static struct {
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
} fw_dio = { .fd = -1, .cand = -1, .from = -1 };

notrace bool fdr_file_lock(unsigned spin_limit)
{
	unsigned spins = 0;
	int expect = 0, self = (int)syscall(SYS_gettid);

	/* acquire: pairs with the release in fdr_file_unlock() (the previous writer's state) */
	while (!atomic_compare_exchange_weak_explicit(&fw_lock, &expect, self, memory_order_acquire,
						      memory_order_relaxed)) {
		expect = 0;
		if (spin_limit && ++spins > spin_limit)
			return false;
		if (spins > 1000) {
			struct timespec ts = { 0, 100000 };

			nanosleep(&ts, NULL);
		} else {
			__asm__ __volatile__("pause");
		}
	}
	return true;
}

notrace bool fdr_file_locked_here(void)
{
	return atomic_load_explicit(&fw_lock, memory_order_relaxed) == (int)syscall(SYS_gettid);
}

notrace void fdr_file_unlock(void)
{
	atomic_store_explicit(&fw_lock, 0, memory_order_release);
}

notrace bool fdr_file_failed(void)
{
	return atomic_load_explicit(&fw_failed, memory_order_relaxed);
}

/*
 * An unnamed file in the trace's directory, opened with @flags (O_WRONLY
 * or O_RDWR), that fw_link() can name. Return: the descriptor, or a
 * negative errno when this way is not available here (no O_TMPFILE, or
 * no /proc to link it through). Async-signal-safe.
 */
/*
 * /proc/thread-self/fd/@fd into @proc: this thread's descriptor (the flush
 * thread has a table of its own), the path fw_link() names a file through.
 */
#define FW_PROC_FD_LEN 48
static notrace const char *fw_proc_fd(char proc[FW_PROC_FD_LEN], int fd)
{
	static const char dir[] = "/proc/thread-self/fd/";

	memcpy(proc, dir, sizeof(dir));
	fdr_u64_text(proc + sizeof(dir) - 1, (uint64_t)fd);
	return proc;
}

static notrace int fw_open_unnamed(int flags)
{
	char proc[FW_PROC_FD_LEN];
	int fd = open(fw_dir, O_TMPFILE | flags | O_CLOEXEC, 0600);
	int err;

	if (fd < 0)
		return -errno;
	fd = fdr_fd_high(fd);
	/* the link fw_link() goes through: known now, not after the writes */
	if (access(fw_proc_fd(proc, fd), F_OK) == 0)
		return fd;
	err = errno;
	close(fd);
	return -err;
}

/* @fd is now the trace's own descriptor (fw_own). Async-signal-safe. */
static notrace void fw_own_set(int fd)
{
	struct stat st;

	fw_own.fd = -1;
	if (fd >= 0 && !fstat(fd, &st)) {
		fw_own.fd = fd;
		fw_own.dev = st.st_dev;
		fw_own.ino = st.st_ino;
	}
}

/* Is @fd still open on the file fw_own names? Async-signal-safe (fstat). */
static notrace bool fw_same(int fd)
{
	struct stat st;

	return fd >= 0 && fd == fw_own.fd && !fstat(fd, &st) && st.st_dev == fw_own.dev &&
	       st.st_ino == fw_own.ino;
}

/*
 * The program closed the trace's descriptor (fdr_fd), and may have its
 * number now: leave that number alone and open the trace again by its
 * path, the same file or none, to go on at its end. A partial block a
 * direct write left staged is written to it; it is written buffered from
 * here. Async-signal-safe (open, fstat, lseek, pwrite). Return: 0, or a
 * negative errno when the path no longer leads to the trace (recording
 * stops, said once).
 */
static notrace int fw_dio_stop(void);
static notrace int fw_fail(const char *what, int err);
static notrace void fw_report(const char *what, int err);

/*
 * The trace opened again by its path with @flags, never following a link
 * nor blocking on a FIFO. Return: the descriptor, or a negative errno:
 * -ESTALE when something else is at the path now. Async-signal-safe.
 */
static notrace int fw_open_own(int flags)
{
	struct stat st;
	int fd = open(fdr_path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_dev != fw_own.dev || st.st_ino != fw_own.ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static notrace int fw_reopen(void)
{
	int old = fdr_fd, fd, err = 0;

	fdr_fd = -1;
	if (fw_pre_fd == old)
		fw_pre_fd = -1;
	fd = fw_open_own(O_RDWR);
	if (fd < 0) {
		err = -fd;
	} else {
		fd = fdr_fd_high(fd);
		if (fw_dio.cand == old)
			fw_dio.cand = fd;
		if (fw_dio.fd == old) {
			fw_dio.fd = fd;
			err = fw_dio_stop();	/* the staged block, at its place */
		} else if (lseek(fd, 0, SEEK_END) < 0) {
			err = errno;
		}
	}
	if (!err) {
		fdr_fd = fd;
		fw_own.fd = fd;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	fw_own.fd = -1;
	if (fw_dio.fd == old || fw_dio.cand == old)
		fw_dio.fd = fw_dio.cand = -1;
	atomic_store_explicit(&fw_dio.unsettled, false, memory_order_relaxed);
	return fw_fail("its descriptor was closed by the program, and reopening it failed", err);
}

/*
 * Before fdr_fd is written, truncated or switched: when it is the trace's
 * descriptor and no longer its file, open the trace again (fw_reopen()).
 * Return: whether fdr_fd (perhaps a new one) may be used.
 */
/* Has the program taken the trace's descriptor: is fdr_fd its number, no longer its file? */
static notrace bool fw_taken(void)
{
	return fdr_fd >= 0 && fw_own.on && fdr_fd == fw_own.fd && !fw_same(fdr_fd);
}

static notrace bool fw_ours(void)
{
	if (fdr_fd < 0)
		return false;
	return !fw_taken() || fw_reopen() == 0;
}

notrace int fdr_file_fds(int fds[2])
{
	int n = 0;

	if (fw_unnamed >= 0)
		fds[n++] = fw_unnamed;
	if (fdr_fd >= 0 && fdr_fd != fw_unnamed)
		fds[n++] = fdr_fd;
	return n;
}

notrace void fdr_file_use(int fd, bool trace)
{
	fdr_fd = fd;
	fw_own.on = trace;
}

notrace void fdr_file_forget(void)
{
	if (fdr_fd >= 0 && fdr_fd != fw_own.fd)
		close(fdr_fd);	/* never identified (its fstat failed): ours */
	/*
	 * The trace's (fw_unnamed is it, or -1): also when its creation failed
	 * in the flush thread's table, leaving this table's copy open. A
	 * number the program took over is the program's.
	 */
	if (fw_own.fd >= 0 && fw_same(fw_own.fd))
		close(fw_own.fd);
	fdr_fd = fw_unnamed = fw_own.fd = -1;
	fw_own.on = true;
	fw_dio.fd = fw_dio.cand = -1;	/* their numbers may be reused by any file */
	atomic_store_explicit(&fw_dio.unsettled, false, memory_order_relaxed);
}

notrace int fdr_file_prepare(void)
{
	fdr_file_forget();	/* a fork child's descriptors and staged bytes are the parent's */
	atomic_store_explicit(&fw_pending, true, memory_order_relaxed);
	fw_early_len = 0;
	fw_path_base = 0;	/* fdr_path is this process's, not numbered yet */
	atomic_store_explicit(&fw_failed, false, memory_order_relaxed);
	atomic_store_explicit(&fw_lock, 0, memory_order_relaxed);
	memset(&fdr_totals, 0, sizeof(fdr_totals));
	fw_pre_fd = -1;	/* a fork child's descriptor may have the parent's number */
	fw_pre_end = 0;
	fw_dio.from = -1;
	fw_dio.len = 0;
	fw_dio.watch_bytes = fw_dio.watch_ns = fw_dio.watch_slow = 0;
	{
		const char *slash = strrchr(fdr_path, '/');
		size_t len = slash ? (size_t)(slash - fdr_path) : 0;

		if (slash && !len)
			len = 1;	/* "/x.fdr": the root */
		memcpy(fw_dir, slash ? fdr_path : ".", slash ? len : 1);
		fw_dir[slash ? len : 1] = '\0';
	}
	if (!fw_zeros) {
		void *z = mmap(NULL, fdr_cfg.buffer_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (z == MAP_FAILED)
			return -ENOMEM;
		fw_zeros = z;
	}
	if (!fw_early) {
		void *m = mmap(NULL, FW_EARLY_CAP, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (m == MAP_FAILED)
			return -ENOMEM;
		fw_early = m;
	}
	if (!fw_dio.stage && fdr_cfg.direct_io != FDR_DIO_OFF) {
		void *m = mmap(NULL, FW_DIO_CAP + FW_DIO_ALIGN_MAX, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (m != MAP_FAILED) {
			fw_dio.stage = m;	/* none: written buffered */
			fw_dio.keep = (uint8_t *)m + FW_DIO_CAP;
		}
	}
	fw_unnamed = fw_open_unnamed(O_RDWR);	/* see fw_unnamed */
	if (fw_unnamed < 0)
		fw_unnamed = -1;
	fw_own_set(fw_unnamed);
	return 0;
}

notrace bool fdr_file_created(void)
{
	return !atomic_load_explicit(&fw_pending, memory_order_relaxed);
}

notrace bool fdr_file_here(void)
{
	struct rlimit fsize;

	if (atomic_load_explicit(&fw_failed, memory_order_relaxed))
		return false;
	/*
	 * A write past a file size limit raises SIGXFSZ on the writing thread:
	 * the flush thread blocks it (its write fails with EFBIG), a program's
	 * thread would die of it.
	 */
	if (getrlimit(RLIMIT_FSIZE, &fsize) || fsize.rlim_cur != RLIM_INFINITY)
		return false;
	if (atomic_load_explicit(&fw_pending, memory_order_relaxed))
		return fw_unnamed >= 0 && fw_same(fw_unnamed);
	return fdr_fd >= 0 && fw_own.on && fw_dio.fd < 0 && fw_same(fdr_fd);
}


/*
 * Write all of @len bytes: at @off (pwrite(2)), or at the file's offset,
 * which moves (write(2)), when @off is negative. Return: 0 or an errno.
 */
static notrace int fw_write_all(int fd, const uint8_t *p, size_t len, off_t off)
{
	while (len) {
		ssize_t w = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		len -= (size_t)w;
		if (off >= 0)
			off += w;
	}
	return 0;
}

/* ---- direct writes (see the top of the file) ---- */

static notrace void fw_dio_begin(off_t end);
static notrace void fw_fsize_probe(void);

/* O_DIRECT on or off for fw_dio.fd (async-signal-safe). Return: 0 or an errno. */
static notrace int fw_dio_mode(bool on)
{
	int fl = fcntl(fw_dio.fd, F_GETFL);

	if (fl < 0 || fcntl(fw_dio.fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT) < 0)
		return errno;
	return 0;
}

/*
 * The file fdr_fd was just created (holding the fw_early_len bytes kept
 * before): may it be written direct? Its file system must report a
 * direct-I/O alignment (statx; tmpfs and kernels before 6.1 do not). With
 * direct_io=always it is, from now on; with auto, once writing it through
 * the page cache proves slow (fw_dio_watch()).
 */
static notrace void fw_dio_probe(void)
{
	struct statx st;
	unsigned align;

	fw_dio.fd = fw_dio.cand = -1;
	fw_dio.watch_bytes = fw_dio.watch_ns = fw_dio.watch_slow = 0;
	if (fdr_cfg.direct_io == FDR_DIO_OFF || !fw_dio.stage || fdr_fd < 0)
		return;
	/* the system call: async-signal-safe, and glibc's wrapper may emulate it */
	if (syscall(SYS_statx, fdr_fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &st) ||
	    !(st.stx_mask & STATX_DIOALIGN) || !st.stx_dio_offset_align)
		return;
	align = st.stx_dio_offset_align > st.stx_dio_mem_align ? st.stx_dio_offset_align
							       : st.stx_dio_mem_align;
	if (align < 4096)
		align = 4096;	/* whole pages: what the block layer and ext4 handle best */
	if (align & (align - 1) || align > FW_DIO_ALIGN_MAX)
		return;
	fw_dio.align = align;
	fw_dio.cand = fdr_fd;
	if (fdr_cfg.direct_io == FDR_DIO_ALWAYS)
		fw_dio_begin((off_t)fw_early_len);
}

/*
 * Write the trace file direct from now on; its bytes end at @end. The
 * stage starts with the partial block they end in, read back from the
 * page cache (the file holds it: settled). Nothing changes on a failure.
 */
static notrace void fw_dio_begin(off_t end)
{
	off_t base = end & ~(off_t)(fw_dio.align - 1);
	size_t len = (size_t)(end - base);

	if (fw_dio.cand < 0 || fw_dio.cand != fdr_fd || end < 0)
		return;
	for (size_t got = 0; got < len;) {
		ssize_t r = pread(fdr_fd, fw_dio.stage + got, len - got, base + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		got += (size_t)r;
	}
	fw_dio.fd = fdr_fd;
	if (fw_dio_mode(true)) {
		fw_dio.fd = fw_dio.cand = -1;
		return;
	}
	fw_dio.base = base;
	fw_dio.len = len;
	fw_dio.from = fw_dio.safe_end = end;
	atomic_store_explicit(&fw_dio.unsettled, false, memory_order_relaxed);
}

/* Where direct writes of the trace file began (-1: it is written through the page cache). */
notrace long long fdr_file_direct_from(void)
{
	return fw_dio.fd >= 0 ? (long long)fw_dio.from : -1;
}

/* The calling thread's CPU time, ns (async-signal-safe; precise, not sampled by ticks). */
static notrace uint64_t fw_cpu_ns(void)
{
	return fdr_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/*
 * direct_io=auto: @bytes were just written through the page cache in
 * @ns of the writer's CPU time. When two windows of FW_DIO_WINDOW bytes
 * in a row cost more than FW_DIO_NS_PER_BYTE each, the rest of the trace
 * goes direct. Measured here (docs/performance.md): 0.05-0.3 ns a byte
 * while the page cache takes the trace at memory speed, 1.5-2.9 once the
 * kernel's dirty limit is reached (a few GB into a big trace), against
 * 0.15-0.2 for a direct write. A page cache that stays fast keeps the
 * file: it takes a burst faster than any disk.
 */
#define FW_DIO_WINDOW (64ull << 20)
#define FW_DIO_NS_PER_BYTE 1

static notrace void fw_dio_watch(uint64_t bytes, uint64_t ns)
{
	fw_dio.watch_bytes += bytes;
	fw_dio.watch_ns += ns;
	if (fw_dio.watch_bytes < FW_DIO_WINDOW)
		return;
	if (fw_dio.watch_ns <= fw_dio.watch_bytes * FW_DIO_NS_PER_BYTE)
		fw_dio.watch_slow = 0;
	else if (++fw_dio.watch_slow >= 2)
		fw_dio_begin(lseek(fdr_fd, 0, SEEK_CUR));
	fw_dio.watch_bytes = fw_dio.watch_ns = 0;
}

/*
 * Stop writing direct (a refusal, an error): the staged bytes go into the
 * file through the page cache, and its offset moves to the end for the
 * buffered writes that follow. Return: 0 or an errno.
 */
static notrace int fw_dio_stop(void)
{
	int err = fw_dio_mode(false);

	if (!err && atomic_load_explicit(&fw_dio.unsettled, memory_order_relaxed))
		err = fw_write_all(fw_dio.fd, fw_dio.stage, fw_dio.len, fw_dio.base);
	if (!err && lseek(fw_dio.fd, fw_dio.base + (off_t)fw_dio.len, SEEK_SET) < 0)
		err = errno;
	atomic_store_explicit(&fw_dio.unsettled, false, memory_order_relaxed);
	fw_dio.fd = fw_dio.cand = -1;
	return err;
}

/*
 * Write @len bytes at @off of fdr_fd through the page cache, whether it is
 * written direct or not (O_DIRECT off around the write: a partial block, a
 * header field). On an error a direct file stops being one
 * (fw_dio_stop()). Async-signal-safe. Return: 0 or an errno.
 */
static notrace int fw_write_through(const uint8_t *p, size_t len, off_t off)
{
	bool direct;
	int err;

	if (!fw_ours())
		return EBADF;
	direct = fdr_fd == fw_dio.fd;
	err = direct ? fw_dio_mode(false) : 0;

	if (!err)
		err = fw_write_all(fdr_fd, p, len, off);
	if (!err && direct)
		err = fw_dio_mode(true);
	if (err && direct)
		fw_dio_stop();
	return err;
}

/**
 * fdr_file_settle - make the file show every byte written to it
 *
 * The partial block a direct write left in the stage goes into the file
 * through the page cache (the next direct write overwrites it). Caller
 * holds the file lock; async-signal-safe. Nothing to do for a file
 * written buffered, or for a snapshot's.
 */
notrace void fdr_file_settle(void)
{
	int err;

	if (fdr_fd < 0 || fdr_fd != fw_dio.fd ||
	    !atomic_load_explicit(&fw_dio.unsettled, memory_order_relaxed))
		return;
	err = fw_write_through(fw_dio.stage, fw_dio.len, fw_dio.base);
	if (err) {
		fw_fail("write failed", err);
		return;
	}
	fw_dio.safe_end = fw_dio.base + (off_t)fw_dio.len;
	atomic_store_explicit(&fw_dio.unsettled, false, memory_order_relaxed);
}

/* Is there a partial block in the stage the file does not show yet? (any thread) */
notrace bool fdr_file_unsettled(void)
{
	return atomic_load_explicit(&fw_dio.unsettled, memory_order_relaxed);
}

static notrace void fw_prealloc(off_t pos, size_t len);

/*
 * One unit (fw_writev()) written direct: copied into the stage, whole
 * blocks written from it, the partial last block kept. On an error the
 * file is cut back to where the unit began (its partial block as it was,
 * written through the page cache), as fw_writev() does. Return: 0, a
 * negative errno, or -EAGAIN when the file system refused the direct
 * write: the file is as before the unit, written buffered from now on,
 * and the caller writes the unit that way.
 */
static notrace int fw_dio_writev(const struct iovec *iov, int n, size_t total)
{
	const off_t base0 = fw_dio.base;
	const size_t len0 = fw_dio.len, mask = fw_dio.align - 1;
	int err = 0;

	memcpy(fw_dio.keep, fw_dio.stage, len0);
	fw_prealloc(base0 + (off_t)len0, total);
	for (int i = 0; i < n; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left) {
			size_t k = FW_DIO_CAP - fw_dio.len;

			if (k > left)
				k = left;
			memcpy(fw_dio.stage + fw_dio.len, p, k);
			fw_dio.len += k;
			p += k;
			left -= k;
			if (fw_dio.len < FW_DIO_CAP)
				continue;
			err = fw_write_all(fw_dio.fd, fw_dio.stage, FW_DIO_CAP, fw_dio.base);
			if (err)
				goto cut;
			fw_dio.base += FW_DIO_CAP;
			fw_dio.len = 0;
		}
	}
	if (fw_dio.len & ~mask) {
		size_t whole = fw_dio.len & ~mask;

		err = fw_write_all(fw_dio.fd, fw_dio.stage, whole, fw_dio.base);
		if (err)
			goto cut;
		fw_dio.base += (off_t)whole;
		fw_dio.len -= whole;
		memmove(fw_dio.stage, fw_dio.stage + whole, fw_dio.len);
	}
	/* the previous unit's end, if now on disk, or this one's */
	if (!fw_dio.len)
		fw_dio.safe_end = fw_dio.base;
	else if (base0 + (off_t)len0 <= fw_dio.base)
		fw_dio.safe_end = base0 + (off_t)len0;
	atomic_store_explicit(&fw_dio.unsettled, fw_dio.len != 0, memory_order_relaxed);
	return 0;
cut:
	{
		/* the file as it was before the unit: whole blocks to base0, then the partial one */
		const int fd = fw_dio.fd;
		const off_t safe = fw_dio.safe_end;
		int stop_err;

		fw_dio.base = base0;
		fw_dio.len = len0;
		memcpy(fw_dio.stage, fw_dio.keep, len0);
		(void)!ftruncate(fd, base0);
		atomic_store_explicit(&fw_dio.unsettled, len0 != 0, memory_order_relaxed);
		stop_err = fw_dio_stop();	/* the partial block through the page cache */
		if (!stop_err)
			fw_cut_err = err;
		else if (ftruncate(fd, safe) == 0 && lseek(fd, safe, SEEK_SET) >= 0)
			/* not even that (past ulimit -f, disk full): back to a unit it holds whole */
			fw_cut_err = err;
		/* refused (an alignment this file system wants and did not say): buffered from now on */
		if (err == EINVAL && !stop_err) {
			fw_cut_err = 0;
			return -EAGAIN;
		}
	}
	return fw_fail("write failed", err);
}

/*
 * Give the unnamed file @fd the trace's name, through /proc/thread-self/fd
 * (this thread's descriptors: the flush thread has a table of its own;
 * linkat's AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH). Like open's
 * O_EXCL | O_NOFOLLOW, it fails with EEXIST when anything is at the path
 * (a file, a planted symlink or fifo): nothing there is followed or
 * replaced. Async-signal-safe (fdr_u64_text()).
 * Return: 0 or an errno.
 */
static notrace int fw_link(int fd, const char *path)
{
	char proc[FW_PROC_FD_LEN];

	if (linkat(AT_FDCWD, fw_proc_fd(proc, fd), AT_FDCWD, path, AT_SYMLINK_FOLLOW) < 0)
		return errno;
	return 0;
}

/**
 * fdr_file_open_unnamed - an unnamed file in the trace's directory
 *
 * For a snapshot: it is written unnamed and named by fdr_file_link()
 * once whole, so that its path never shows a snapshot being written (a
 * program or a script that waits for the file reads it complete).
 *
 * Return: the descriptor (writable), or a negative errno when this way is
 * not available here (no O_TMPFILE, or no /proc to link it through): the
 * caller then creates the file by name.
 */
notrace int fdr_file_open_unnamed(void)
{
	return fw_open_unnamed(O_WRONLY);
}

/**
 * fdr_file_link - name the unnamed file @fd (fdr_file_open_unnamed()) @path
 *
 * Fails with -EEXIST when anything is at @path (nothing there is followed
 * or replaced), as open's O_EXCL | O_NOFOLLOW would.
 * Return: 0 or a negative errno.
 */
notrace int fdr_file_link(int fd, const char *path)
{
	return -fw_link(fd, path);
}

/*
 * Something is at the trace path already: an image this process ran
 * before an exec, of the same program name (a shell that execs itself),
 * or a file an earlier process of the same pid left. Nothing there is
 * touched; the trace takes the path with ".N" before ".fdr", N from 2
 * (fdr_path is rewritten: the exit line, a reopen and snapshots use the
 * name it got). Async-signal-safe. Return: false when there is no
 * ".fdr" end to number or the name would not fit.
 */
#define FW_NAME_TRIES 100

static notrace bool fw_path_numbered(unsigned n)
{
	size_t len = strlen(fdr_path), nl;
	char num[21];

	if (!fw_path_base) {
		if (len < 4 || memcmp(fdr_path + len - 4, ".fdr", 4) != 0)
			return false;
		fw_path_base = len - 4;
	}
	fdr_u64_text(num, n);
	nl = strlen(num);
	if (fw_path_base + 1 + nl + sizeof(".fdr") > sizeof(fdr_path))
		return false;
	fdr_path[fw_path_base] = '.';
	memcpy(fdr_path + fw_path_base + 1, num, nl);
	memcpy(fdr_path + fw_path_base + 1 + nl, ".fdr", sizeof(".fdr"));
	return true;
}

/*
 * The file, unnamed, already holding what was kept in memory; linked at
 * the trace path (numbered when something is there: fw_path_numbered()).
 * Readable too: a switch to direct writes reads its last partial block
 * back (fw_dio_begin()). Return: the descriptor; -EEXIST when something
 * is at the path and at every numbered one; -ENOSPC and the like when the early bytes could not be
 * written (@write_failed set: nothing is linked, so there is no file); any other
 * negative errno when this way is not available here (no O_TMPFILE, no
 * /proc), for the caller to create the file by name.
 */
static notrace int fw_create_whole(bool *write_failed)
{
	int fd = fw_unnamed, err;

	*write_failed = false;
	fw_unnamed = -1;
	if (fd < 0)
		return -EOPNOTSUPP;	/* fdr_file_prepare() could not open one */
	if (!fw_same(fd)) {
		/* the program closed it (its number may be the program's now): another */
		fd = fw_open_unnamed(O_RDWR);
		fw_own_set(fd);
		if (fd < 0)
			return fd;
	}
	err = fw_write_all(fd, fw_early, fw_early_len, -1);
	if (err) {
		*write_failed = true;
	} else {
		err = fw_link(fd, fdr_path);
		for (unsigned n = 2; err == EEXIST && n <= FW_NAME_TRIES && fw_path_numbered(n); n++)
			err = fw_link(fd, fdr_path);
		if (!err)
			return fd;
	}
	close(fd);
	return -err;
}

notrace int fdr_file_create(void)
{
	bool write_failed;
	int fd, err;

	if (!atomic_load_explicit(&fw_pending, memory_order_relaxed))
		return fdr_fd >= 0 ? 0 : -EBADF;
	if (atomic_load_explicit(&fw_failed, memory_order_relaxed))
		return -EIO;
	atomic_store_explicit(&fw_pending, false, memory_order_relaxed);
	fd = fw_create_whole(&write_failed);
	if (fd >= 0) {
		fdr_fd = fd;
		fw_fsize_probe();
		fw_dio_probe();
		return 0;
	}
	if (write_failed)
		/* the unnamed file is gone: the message must not suggest a trace at the path */
		return fw_fail("not created, its first write failed", -fd);
	if (fd != -EEXIST) {
		/* no O_TMPFILE or no /proc here: by name, then written at once */
		unsigned n = 2;

		do
			fd = open(fdr_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		while (fd < 0 && errno == EEXIST && n <= FW_NAME_TRIES && fw_path_numbered(n++));
		fd = fd < 0 ? -errno : fdr_fd_high(fd);
	}
	if (fd < 0) {
		if (!atomic_exchange_explicit(&fw_failed, true, memory_order_relaxed)) {
			fw_report(NULL, -fd);
			fdr_stop_on_error();
		}
		return fd;
	}
	fdr_fd = fd;
	fw_own_set(fd);
	err = fw_write_all(fd, fw_early, fw_early_len, -1);
	if (err)
		return fw_fail("write failed", err);
	fw_fsize_probe();
	fw_dio_probe();
	return 0;
}

/*
 * The blocks reserved past the end freed through the trace's path, when
 * the program has taken the trace's descriptor and nothing else is left
 * to write (fdr_file_trim()). Quiet: the trace is whole either way; a
 * failure (no descriptor free, another file at the path) leaves at most
 * FW_PREALLOC bytes reserved. Async-signal-safe.
 */
static notrace void fw_trim_by_path(void)
{
	struct stat st;
	int fd = fw_open_own(O_WRONLY);

	if (fd < 0)
		return;
	if (!fstat(fd, &st) && st.st_size < fw_pre_end)
		(void)!ftruncate(fd, st.st_size);
	close(fd);
}

notrace void fdr_file_trim(void)
{
	struct stat st;

	if (fw_taken() && !(fdr_fd == fw_dio.fd && fdr_file_unsettled())) {
		/*
		 * The program has the trace's number now, and every byte is
		 * written: reopening it to trim, and saying "recording stopped"
		 * when that failed (bash under `ulimit -n 8` with `exec 5>f`),
		 * told of a loss there was not.
		 */
		if (fdr_fd == fw_pre_fd && fw_pre_end)
			fw_trim_by_path();
		fw_pre_fd = -1;
		fw_pre_end = 0;
		return;
	}
	if (!fw_ours())
		return;
	fdr_file_settle();	/* the end is final: every byte in the file */
	if (fdr_fd < 0 || fdr_fd != fw_pre_fd)
		return;
	/* truncating to its own size frees the blocks reserved past the end */
	if (!fstat(fdr_fd, &st) && st.st_size < fw_pre_end)
		(void)!ftruncate(fdr_fd, st.st_size);
	fw_pre_fd = -1;
	fw_pre_end = 0;
}

notrace void fdr_file_close(void)
{
	fdr_file_trim();	/* nothing without a descriptor that is the trace's */
	fdr_file_forget();
}

/*
 * Before writing @len bytes at @pos, the end of fdr_fd: reserve the blocks
 * ahead (see the top of the file). Async-signal-safe (lseek, the
 * fallocate system call).
 */
static notrace void fw_prealloc(off_t pos, size_t len)
{
	if (fw_pre_refused)
		return;
	if (fdr_fd != fw_pre_fd) {
		/* another file now (a snapshot, a fork child's): nothing reserved in it yet */
		fw_pre_fd = fdr_fd;
		fw_pre_end = 0;
	}
	/* small traces never reserve anything */
	if (pos < FW_PREALLOC || pos + (off_t)len <= fw_pre_end)
		return;
	if (fw_pre_end < pos)
		fw_pre_end = pos;
	/* the system call itself: glibc's wrapper is one, but not on POSIX's signal-safe list */
	if (syscall(SYS_fallocate, fdr_fd, FALLOC_FL_KEEP_SIZE, fw_pre_end,
		    (off_t)len + FW_PREALLOC - (fw_pre_end - pos)) == 0)
		fw_pre_end = pos + (off_t)len + FW_PREALLOC;
	else
		fw_pre_refused = true;	/* EOPNOTSUPP, ENOSPC...: the write says what matters */
}

/*
 * Async-signal-safe "fdrtrace: PATH: what: description" on stderr. Not
 * strerror(): it translates (locale, malloc) and is not async-signal-safe;
 * strerrordesc_np() returns a constant string.
 */
static notrace void fw_report(const char *what, int err)
{
	char msg[4600];

	/* verbosity=0: the trace's close record says it (how=stopped, the errno) */
	if (fdr_cfg.verbosity < 1)
		return;
	const char *es = strerrordesc_np(err);
	size_t n = 0;
	const char *parts[] = { "fdrtrace: ", fdr_path, ": ", what, ": ", es,
				"; recording stopped\n" };

	if (!es)
		parts[5] = "unknown error";
	if (!what) {
		/* the file could not be created (@what NULL) */
		parts[0] = "fdrtrace: cannot create trace file ";
		parts[2] = "";
		parts[3] = "";
		parts[6] = "; recording off\n";
	}
	for (size_t i = 0; i < FDR_ARRAY_SIZE(parts); i++) {
		size_t l = strlen(parts[i]);

		if (n + l > sizeof(msg))
			l = sizeof(msg) - n;
		memcpy(msg + n, parts[i], l);
		n += l;
	}
	fdr_say_raw(msg, n);
}

static notrace int fw_fail(const char *what, int err)
{
	if (!atomic_exchange_explicit(&fw_failed, true, memory_order_relaxed)) {
		fw_report(what, err);
		fdr_stop_on_error();
	}
	return -err;
}

/*
 * The thread id the runtime's own units carry (the flush thread's, 0
 * before it starts; a fork child keeps its parent's until its own starts):
 * set by the flush layer (fdr_file_set_tid()), read for the last unit of
 * a stopped trace (fw_stop_write()). Plain: set once per flush thread,
 * before it writes; a stale 0 names the writing thread instead.
 */
static int32_t fw_rt_tid;

notrace void fdr_file_set_tid(int32_t tid)
{
	fw_rt_tid = tid;
}

/* The bytes the last unit needs (fw_stopped()): a whole buffer in v1. */
static notrace uint64_t fw_stop_room(void)
{
	return fdr_cfg.format_version == 1 ? fdr_cfg.buffer_size : sizeof(fw_stop_unit);
}

/*
 * The file size limit: the kernel's (the system call: async-signal-safe),
 * or max_size when it is lower.
 */
static notrace void fw_fsize_probe(void)
{
	struct rlimit rl;

	fw_fsize_max = 0;
	if (!syscall(SYS_getrlimit, RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		fw_fsize_max = rl.rlim_cur ? rl.rlim_cur : 1;
	fw_fsize_option = fdr_cfg.max_size && (!fw_fsize_max || fdr_cfg.max_size < fw_fsize_max);
	if (fw_fsize_option)
		fw_fsize_max = fdr_cfg.max_size;
}

notrace bool fdr_file_max_size_hit(void)
{
	return atomic_load_explicit(&fw_max_size_hit, memory_order_relaxed);
}

/*
 * May @len more bytes go into the file and leave room for the last unit
 * below the file size limit? Asked again of the kernel before saying no:
 * the program may have raised the limit since.
 */
static notrace bool fw_room(size_t len)
{
	off_t end;

	if (!fw_fsize_max)
		return true;
	end = fdr_fd == fw_dio.fd ? fw_dio.base + (off_t)fw_dio.len : lseek(fdr_fd, 0, SEEK_CUR);
	if (end < 0 || (uint64_t)end + len + fw_stop_room() <= fw_fsize_max)
		return true;
	fw_fsize_probe();
	return !fw_fsize_max || (uint64_t)end + len + fw_stop_room() <= fw_fsize_max;
}

/*
 * Write one unit (a header or a whole buffer). When the file takes only
 * part of it (disk full, RLIMIT_FSIZE), cut the file back to where the unit
 * began, so that the trace ends at a buffer boundary and reads cleanly.
 * lseek and ftruncate are async-signal-safe, as this must be.
 */
static notrace int fw_writev(struct iovec *iov, int n)
{
	size_t done = 0;
	uint64_t cpu0 = 0;
	int err;

	fw_cut_err = 0;
	fw_unit_at = -1;
	if (atomic_load_explicit(&fw_failed, memory_order_relaxed))
		return -EIO;
	if (fdr_fd < 0 && atomic_load_explicit(&fw_pending, memory_order_relaxed)) {
		/* before the file exists: keep the bytes, in order */
		size_t len = 0;

		for (int i = 0; i < n; i++)
			len += iov[i].iov_len;
		if (len > FW_EARLY_CAP - fw_early_len) {
			/* more start records than we keep: the file is needed now */
			err = fdr_file_create();
			if (err)
				return err;
		} else {
			for (int i = 0; i < n; i++) {
				memcpy(fw_early + fw_early_len, iov[i].iov_base, iov[i].iov_len);
				fw_early_len += iov[i].iov_len;
			}
			return 0;
		}
	}
	if (!fw_ours())
		return -EBADF;
	{
		size_t len = 0;

		for (int i = 0; i < n; i++)
			len += iov[i].iov_len;
		if (!fw_room(len)) {
			/* nothing written: the file ends where it did (the stage's bytes in it) */
			if (fdr_fd != fw_dio.fd || !fw_dio_stop())
				fw_cut_err = EFBIG;
			if (fw_fsize_option) {
				atomic_store_explicit(&fw_max_size_hit, true, memory_order_relaxed);
				return fw_fail("max_size reached", EFBIG);
			}
			return fw_fail("write failed", EFBIG);
		}
		if (fdr_fd == fw_dio.fd) {
			fw_unit_at = fw_dio.base + (off_t)fw_dio.len;
			err = fw_dio_writev(iov, n, len);
			if (err != -EAGAIN)
				return err;
		}
		fw_unit_at = lseek(fdr_fd, 0, SEEK_CUR);
		fw_prealloc(fw_unit_at, len);
		if (fdr_fd == fw_dio.cand && fw_dio.fd < 0)
			cpu0 = fw_cpu_ns();	/* direct_io=auto watches what the page cache costs */
	}
	while (n > 0) {
		ssize_t w = writev(fdr_fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			goto cut;
		}
		if (w == 0) {
			err = EIO;
			goto cut;
		}
		done += (size_t)w;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	if (cpu0)
		fw_dio_watch(done, fw_cpu_ns() - cpu0);
	return 0;
cut:
	if (done) {
		off_t end = lseek(fdr_fd, 0, SEEK_CUR);

		if (end >= (off_t)done && ftruncate(fdr_fd, end - (off_t)done) == 0 &&
		    lseek(fdr_fd, end - (off_t)done, SEEK_SET) >= 0)
			fw_cut_err = err;
	} else {
		fw_cut_err = err;
	}
	return fw_fail("write failed", err);
}

notrace int fdr_file_write_header(void)
{
	struct fdrtrace_file_header h;
	struct iovec iov;

	memset(&h, 0, sizeof(h));
	h.version = (uint16_t)fdr_cfg.format_version;
	h.type = FDRTRACE_LOG_FDR;
	h.bitfield = (fdr_clock.constant_tsc ? FDRTRACE_HDR_CONSTANT_TSC : 0) |
		     (fdr_clock.nonstop_tsc ? FDRTRACE_HDR_NONSTOP_TSC : 0);
	h.cycle_frequency = fdr_clock.freq;
	h.buffer_size = fdr_cfg.buffer_size;
	iov.iov_base = &h;
	iov.iov_len = sizeof(h);
	return fw_writev(&iov, 1);
}

notrace void fdr_file_patch_freq(uint64_t freq)
{
	const off_t off = offsetof(struct fdrtrace_file_header, cycle_frequency);
	int err;

	if (fdr_fd < 0 || fdr_file_failed())
		return;
	if (fdr_fd == fw_dio.fd && fw_dio.base == 0)
		memcpy(fw_dio.stage + off, &freq, sizeof(freq));	/* the next direct write has it too */
	/* the header was written through the page cache (fw_early): so is this */
	err = fw_write_through((const uint8_t *)&freq, sizeof(freq), off);
	if (err)
		fw_fail("header update failed", err);
}

/*
 * Count function records and (with @drops) add our drop notices to the
 * totals, reading what is written: for the buffers the writer could not
 * count itself (struct fdr_buffer's @counted: those with a report or an
 * event, snapshots, the flush thread's own). Runs of function records
 * (type bit 0 clear) go eight at a time: when the eight words starting at
 * a record all have bit 0 clear, each is a function record (by induction:
 * a function record is 8 bytes, so the next word starts the next record).
 * Metadata goes one record at a time. Return: the function records.
 */
static notrace uint64_t fw_count(const uint8_t *p, const uint8_t *end, bool drops)
{
	uint64_t records = 0;

	while (p < end) {
		uint8_t type;

		while (end - p >= 8 * FDRTRACE_FUNC_RECORD_SIZE) {
			uint64_t w[8];

			memcpy(w, p, sizeof(w));
			if ((w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7]) & 1)
				break;
			records += 8;
			p += sizeof(w);
		}
		if (p >= end)
			break;
		type = p[0];
		if (!(type & 1)) {
			records++;
			p += FDRTRACE_FUNC_RECORD_SIZE;
			continue;
		}
		if ((type >> 1) == FDRTRACE_MD_TYPED_EVENT) {
			int32_t size;

			memcpy(&size, p + 1, sizeof(size));
			p += FDRTRACE_METADATA_RECORD_SIZE;
			if (size < 0 || (size_t)size > (size_t)(end - p))
				return records;
			p += size;
			continue;
		}
		if ((type >> 1) == FDRTRACE_MD_CUSTOM_EVENT) {
			int32_t size;
			struct fdrtrace_ext_header eh;

			memcpy(&size, p + 1, sizeof(size));
			p += FDRTRACE_METADATA_RECORD_SIZE;
			if (size < 0 || (size_t)size > (size_t)(end - p))
				return records;
			if (drops && (size_t)size >= sizeof(eh) + 21) {
				memcpy(&eh, p, sizeof(eh));
				if (!memcmp(eh.magic, FDRTRACE_EXT_MAGIC, 4) &&
				    eh.kind == FDRTRACE_EXT_DROP) {
					uint64_t r, b;

					uint8_t reason = p[sizeof(eh) + 4];

					memcpy(&r, p + sizeof(eh) + 5, 8);
					memcpy(&b, p + sizeof(eh) + 13, 8);
					fdr_totals.records_dropped += r;
					fdr_totals.buffers_dropped += b;
					if (reason < FDRTRACE_DROP_REASON_COUNT)
						fdr_totals.dropped_by[reason] += r;
				}
			}
			p += size;
			continue;
		}
		p += FDRTRACE_METADATA_RECORD_SIZE;
	}
	return records;
}

/*
 * What one buffer adds to a write besides its bytes: the v5 extents
 * record, or v1's EndOfBuffer and padding marker. Kept per buffer of a
 * batch (fdr_file_write_buffers()), as each has its own size.
 */
struct fw_frame {
	struct fdrtrace_md_buffer_extents ext;
	struct fdrtrace_md_end_of_buffer eob;
	struct fdrtrace_md_custom_event_v1 pad;
};

/*
 * The function records of @data[@from..@len) into the totals: @b's own
 * count when its writer kept one (struct fdr_buffer's @counted; checked
 * against a reading in builds with FDR_CHECK_COUNTS), else read (with the
 * drop notices). @b is NULL for a buffer that is not a thread's.
 */
static notrace void fw_count_buffer(const struct fdr_buffer *b, const uint8_t *data,
				    uint64_t from, uint64_t len)
{
	if (b && b->counted && b->meta >= from && b->meta <= len &&
	    !((len - b->meta) % FDRTRACE_FUNC_RECORD_SIZE)) {
		uint64_t n = (len - b->meta) / FDRTRACE_FUNC_RECORD_SIZE;

#ifdef FDR_CHECK_COUNTS
		if (fw_count(data + from, data + len, false) != n) {
			static const char msg[] = "fdrtrace: FDR_CHECK_COUNTS: a buffer's kept count is wrong\n";

			fdr_say_raw(msg, sizeof(msg) - 1);
			abort();
		}
#endif
		fdr_totals.records += n;
		return;
	}
	fdr_totals.records += fw_count(data + from, data + len, true);
}

/* The bytes a buffer of @len bytes takes in the file: v1 pads every buffer to buffer_size. */
static inline notrace uint64_t fw_framed_len(uint64_t len)
{
	return fdr_cfg.format_version == 1 ? fdr_cfg.buffer_size : len;
}

/*
 * Append the iovecs of one buffer (at most 4) to @iov and count what it
 * holds (@b: the thread's buffer it is, or NULL). Return: the iovecs
 * added, or -EINVAL for a length no buffer has.
 */
static notrace int fw_frame_buffer(struct iovec *iov, struct fw_frame *f,
				   const struct fdr_buffer *b, const uint8_t *data, uint64_t len)
{
	int n = 0;

	if (fdr_cfg.format_version == 1) {
		uint64_t pad;

		memset(&f->eob, 0, sizeof(f->eob));
		f->eob.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_END_OF_BUFFER);
		if (len + sizeof(f->eob) > fw_framed_len(len))
			return -EINVAL;
		pad = fw_framed_len(len) - len - sizeof(f->eob);
		iov[n++] = (struct iovec){ (void *)data, len };
		iov[n++] = (struct iovec){ &f->eob, sizeof(f->eob) };
		if (pad % FDRTRACE_FUNC_RECORD_SIZE && pad >= FDRTRACE_METADATA_RECORD_SIZE) {
			/*
			 * llvm-xray 14 does not skip v1 padding: it reads it as
			 * 8-byte function records, and loses its footing when
			 * custom events left the padding unaligned. One
			 * custom-event marker whose payload is the rest of the
			 * padding keeps it aligned; readers that honour
			 * EndOfBuffer never look at these bytes.
			 */
			f->pad = fw_pad_md;
			f->pad.size = (int32_t)(pad - FDRTRACE_METADATA_RECORD_SIZE);
			iov[n++] = (struct iovec){ &f->pad, sizeof(f->pad) };
			pad -= FDRTRACE_METADATA_RECORD_SIZE;
		}
		if (pad)
			iov[n++] = (struct iovec){ (void *)fw_zeros, pad };
		fw_count_buffer(b, data, 0, len);
	} else {
		if (len < sizeof(f->ext))
			return -EINVAL;
		memset(&f->ext, 0, sizeof(f->ext));
		f->ext.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_BUFFER_EXTENTS);
		f->ext.size = len - sizeof(f->ext);
		iov[n++] = (struct iovec){ &f->ext, sizeof(f->ext) };
		iov[n++] = (struct iovec){ (void *)(data + sizeof(f->ext)), len - sizeof(f->ext) };
		fw_count_buffer(b, data, sizeof(f->ext), len);
	}
	fdr_totals.buffers++;
	return n;
}

/*
 * How the process ends, set by whoever ends it (fdr_set_end(): the exit
 * handler, _exit, a fatal signal's dump, exec) before it writes the close
 * marker, on the same thread or before handing the finish to the flush
 * thread (fdr_flush_finish(), whose wake-up and join order it). A close
 * that ends no process (a snapshot, a stop on error) says "unknown".
 */
static uint8_t fw_end;
static uint32_t fw_end_value;

notrace void fdr_set_end(uint8_t end, uint32_t value)
{
	fw_end = end;
	fw_end_value = value;
}

notrace size_t fdr_close_record(uint8_t *buf, size_t cap, uint8_t how, uint64_t freq, int error)
{
	struct fdr_ext_close_info c = {
		.how = how,
		.records = fdr_totals.records,
		.records_dropped = fdr_totals.records_dropped,
		.buffers = fdr_totals.buffers,
		.buffers_dropped = fdr_totals.buffers_dropped,
		.threads = fdr_threads_seen(),
		.cycle_frequency = freq,
		.records_left_out = fdr_totals.dropped_by[FDRTRACE_DROP_FILTERED],
		.error = error > 0 ? (uint32_t)error : 0,
	};

	if (how == FDRTRACE_CLOSE_EXIT || how == FDRTRACE_CLOSE_SIGNAL) {
		c.end = fw_end;
		c.end_value = fw_end_value;
	}

	c.end_realtime_ns = fdr_clock_ns(CLOCK_REALTIME);
	return fdr_ext_close(buf, cap, &c);
}

/* Append @len bytes of extension payload to the last unit at @n (fw_stopped()). */
static notrace size_t fw_stop_add(size_t n, const uint8_t *payload, size_t len, uint64_t tsc)
{
	if (!len || n + FDRTRACE_METADATA_RECORD_SIZE + len > sizeof(fw_stop_unit))
		return n;
	n += fdr_custom_event_md(fw_stop_unit + n, (uint32_t)len, tsc);
	memcpy(fw_stop_unit + n, payload, len);
	return n + len;
}

/* @records and @buffers were not written: counted as dropped for an I/O error. */
static notrace void fw_lost(uint64_t records, uint64_t buffers)
{
	fdr_totals.records -= records;
	fdr_totals.buffers -= buffers;
	fdr_totals.records_dropped += records;
	fdr_totals.buffers_dropped += buffers;
	fdr_totals.dropped_by[FDRTRACE_DROP_IO_ERROR] += records;
}

/*
 * Write the last unit at @at, the end of fdr_fd: a drop record for
 * @records and @buffers lost to the error @err, then the close marker
 * "stopped". Return: whether it is in the file (if not, the file is as
 * it was).
 */
static notrace bool fw_stop_write(uint64_t records, uint64_t buffers, int err, off_t at)
{
	const off_t end = at;
	uint8_t p[256];
	struct fw_frame f;
	struct iovec iov[4];
	unsigned cpu;
	uint64_t tsc;
	size_t n;
	int k;

	tsc = fdr_clock_read(&cpu);
	n = fdr_preamble(fw_stop_unit, fw_rt_tid ? fw_rt_tid : (int32_t)syscall(SYS_gettid), cpu, tsc);
	if (records || buffers)
		n = fw_stop_add(n, p, fdr_ext_drop(p, sizeof(p), 0, FDRTRACE_DROP_IO_ERROR,
						   records, buffers), tsc);
	n = fw_stop_add(n, p, fdr_close_record(p, sizeof(p), FDRTRACE_CLOSE_STOPPED,
					       fdr_clock.freq, err), tsc);
	{
		/* the totals stay those the close marker gives */
		const struct fdr_totals keep = fdr_totals;

		k = fw_frame_buffer(iov, &f, NULL, fw_stop_unit, n);
		fdr_totals = keep;
	}
	if (k < 0)
		return false;
	for (int i = 0; i < k; i++) {
		if (fw_write_all(fdr_fd, iov[i].iov_base, iov[i].iov_len, at)) {
			(void)!ftruncate(fdr_fd, end);
			return false;
		}
		at += (off_t)iov[i].iov_len;
	}
	lseek(fdr_fd, at, SEEK_SET);
	return true;
}

/*
 * A unit of @buffers buffers holding @records function records (counted
 * into the totals as it was framed) could not be written, and the file
 * was cut back to where it began (fw_cut_err): they are lost, and the
 * last unit goes where they would have (fw_stop_write()). When even that
 * does not fit (a full disk), the last unit written whole is given up to
 * make room, and lost with them. Caller holds the file lock;
 * async-signal-safe.
 */
static notrace void fw_stopped(uint64_t records, uint64_t buffers)
{
	const int err = fw_cut_err;
	struct stat st;

	fw_cut_err = 0;
	/* written through the page cache, at the end (the cut left it there) */
	if (!err || fdr_fd < 0 || fdr_fd == fw_dio.fd || !fw_ours() || fstat(fdr_fd, &st))
		return;
	fw_lost(records, buffers);
	if (fw_stop_write(records, buffers, err, st.st_size))
		return;
	if (fw_last.fd != fdr_fd || fw_last.at < 0 || fw_last.at >= st.st_size ||
	    ftruncate(fdr_fd, fw_last.at))
		return;
	fw_lost(fw_last.records, fw_last.buffers);
	fw_stop_write(records + fw_last.records, buffers + fw_last.buffers, err, fw_last.at);
	fw_last.at = -1;
}

/* A unit of @buffers buffers holding @records function records is in the file whole. */
static notrace void fw_written(uint64_t records, uint64_t buffers)
{
	fw_last.fd = fdr_fd;
	fw_last.at = fw_unit_at;
	fw_last.records = records;
	fw_last.buffers = buffers;
}

notrace int fdr_file_write_buffer(const uint8_t *data, uint64_t len)
{
	const uint64_t records = fdr_totals.records;
	struct fw_frame f;
	struct iovec iov[4];
	int n = fw_frame_buffer(iov, &f, NULL, data, len);

	if (n < 0)
		return n;
	n = fw_writev(iov, n);
	if (!n)
		fw_written(fdr_totals.records - records, 1);
	else if (fw_cut_err)
		fw_stopped(fdr_totals.records - records, 1);
	return n;
}

/*
 * Several buffers in one writev: one system call, and the page cache
 * gets whole runs of pages at once (larger folios), which is most of what
 * the flush thread costs per byte. A failed write cuts the file back to
 * where the batch began (fw_writev()), so the trace still ends at a
 * buffer boundary. Buffers with no bytes are skipped.
 */
notrace int fdr_file_write_buffers(struct fdr_buffer *const *bufs, unsigned count)
{
	const uint64_t records = fdr_totals.records, buffers = fdr_totals.buffers;
	struct fw_frame frames[FDR_WRITE_BATCH];
	struct iovec iov[4 * FDR_WRITE_BATCH];
	int n = 0;

	if (count > FDR_WRITE_BATCH)
		return -EINVAL;
	if (fw_fsize_max && count > 1) {
		uint64_t total = 0;

		for (unsigned i = 0; i < count; i++)
			if (bufs[i]->len && bufs[i]->data)
				total += fw_framed_len(bufs[i]->len);
		if (!fw_room(total)) {
			/* near the file size limit: as many whole buffers as fit, one at a time */
			for (unsigned i = 0; i < count; i++) {
				int err = fdr_file_write_buffers(&bufs[i], 1);

				if (err)
					return err;
			}
			return 0;
		}
	}
	for (unsigned i = 0; i < count; i++) {
		int k;

		if (!bufs[i]->len || !bufs[i]->data)
			continue;
		k = fw_frame_buffer(iov + n, &frames[i], bufs[i], bufs[i]->data, bufs[i]->len);
		if (k > 0)
			n += k;
	}
	if (!n)
		return 0;
	n = fw_writev(iov, n);
	if (!n)
		fw_written(fdr_totals.records - records, fdr_totals.buffers - buffers);
	else if (fw_cut_err)
		fw_stopped(fdr_totals.records - records, fdr_totals.buffers - buffers);
	return n;
}

/* ---- runtime buffers ---- */

static notrace size_t rb_cap(void)
{
	return fdr_cfg.buffer_size - (fdr_cfg.format_version == 1 ? FDR_V1_TAIL : 0);
}

/*
 * Not populated (2026-12-02): most runtime buffers hold a few hundred
 * bytes (a short process's start records, its names and close); two of
 * them populated at every start were 16 pages each, 0.05 ms on this
 * project's VM. A page a runtime record touches first faults then, in the
 * flush thread, the finisher, or a dump (a fault is async-signal-safe).
 */
notrace int fdr_rtbuf_init(struct fdr_rtbuf *rb, int32_t tid)
{
	if (!rb->data) {
		void *m = mmap(NULL, fdr_cfg.buffer_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return -errno;
		rb->data = m;
	}
	rb->cap = rb_cap();
	rb->len = 0;
	rb->tid = tid;
	return 0;
}

static uint64_t rb_tsc;

notrace int fdr_rtbuf_add(struct fdr_rtbuf *rb, const uint8_t *payload, size_t len)
{
	unsigned cpu;

	if (!rb->data || !len)
		return -EINVAL;
	if (rb->len && rb->len + FDRTRACE_METADATA_RECORD_SIZE + len > rb->cap) {
		int err = fdr_rtbuf_flush(rb);

		if (err)
			return err;
	}
	if (!rb->len) {
		rb_tsc = fdr_clock_read(&cpu);
		rb->len = fdr_preamble(rb->data, rb->tid, cpu, rb_tsc);
	}
	if (rb->len + FDRTRACE_METADATA_RECORD_SIZE + len > rb->cap)
		return -EMSGSIZE;	/* never fits in one buffer: dropped */
	rb->len += fdr_custom_event_md(rb->data + rb->len, (uint32_t)len, rb_tsc);
	memcpy(rb->data + rb->len, payload, len);
	rb->len += len;
	return 0;
}

/**
 * fdr_rtbuf_add_drops - add one drop record per reason with a count to @rb
 * @rb:		the runtime buffer
 * @tid:	the thread that dropped them (0: the process)
 * @rec:	records dropped, by reason
 * @bufs:	buffers dropped, by reason
 *
 * Context: whoever owns @rb; async-signal-safe.
 */
notrace void fdr_rtbuf_add_drops(struct fdr_rtbuf *rb, int32_t tid, const uint64_t *rec,
				 const uint64_t *bufs)
{
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		uint8_t p[64];
		size_t n;

		if (!rec[r] && !bufs[r])
			continue;
		n = fdr_ext_drop(p, sizeof(p), (uint32_t)tid, (uint8_t)r, rec[r], bufs[r]);
		if (n)
			fdr_rtbuf_add(rb, p, n);
	}
}

notrace int fdr_rtbuf_flush(struct fdr_rtbuf *rb)
{
	int err;

	if (!rb->len)
		return 0;
	err = fdr_file_write_buffer(rb->data, rb->len);
	rb->len = 0;
	return err;
}
