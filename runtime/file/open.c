// SPDX-License-Identifier: MIT
/*
 * runtime/file/open.c - the trace file's life: its path, the unnamed file, its
 * name, the descriptors that are the trace's, trim and close.
 *
 * Contract: the file lock's holder changes what is here (trace_file.c says who
 * holds it), but for fdr_file_prepare() (initialisation, a fork child) and
 * fdr_file_forget() (a fork child). Async-signal-safe but for
 * fdr_file_prepare(): open, linkat, fstat, ftruncate, fcntl.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fd_high.h"
#include "file_internal.h"
#include "state.h"
#include "trace_file.h"

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

/*
 * An unnamed file in the trace's directory, opened with @flags (O_WRONLY
 * or O_RDWR), that fw_link() can name. Return: the descriptor, or a
 * negative errno when this way is not available here (no O_TMPFILE, or
 * no /proc to link it through). Async-signal-safe.
 */
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
