// SPDX-License-Identifier: MIT
/*
 * runtime/file/own.c - the trace's own descriptor (fw_own): which file it
 * was opened on, whether the program has taken its number since, and the
 * trace opened again by its path when it has.
 *
 * Contract: calls file_state.c only; direct_io.c, open.c and trace_file.c
 * ask fw_ours() before they write, truncate or switch fdr_fd. Under the
 * file lock; async-signal-safe (open, fstat, lseek, pwrite, fcntl).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd_high.h"
#include "file_internal.h"
#include "trace_file.h"

/* @fd is now the trace's own descriptor (fw_own). Async-signal-safe. */
notrace void fw_own_set(int fd)
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
notrace bool fw_same(int fd)
{
	struct stat st;

	return fd >= 0 && fd == fw_own.fd && !fstat(fd, &st) && st.st_dev == fw_own.dev &&
	       st.st_ino == fw_own.ino;
}

/*
 * The trace opened again by its path with @flags, never following a link
 * nor blocking on a FIFO. Return: the descriptor, or a negative errno:
 * -ESTALE when something else is at the path now. Async-signal-safe.
 */
notrace int fw_open_own(int flags)
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

/*
 * The program closed the trace's descriptor (fdr_fd), and may have its
 * number now: leave that number alone and open the trace again by its
 * path, the same file or none, to go on at its end. A partial block a
 * direct write left staged is written to it; it is written buffered from
 * here. Async-signal-safe (open, fstat, lseek, pwrite). Return: 0, or a
 * negative errno when the path no longer leads to the trace (recording
 * stops, said once).
 */
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

/* Has the program taken the trace's descriptor: is fdr_fd its number, no longer its file? */
notrace bool fw_taken(void)
{
	return fdr_fd >= 0 && fw_own.on && fdr_fd == fw_own.fd && !fw_same(fdr_fd);
}

/*
 * Before fdr_fd is written, truncated or switched: when it is the trace's
 * descriptor and no longer its file, open the trace again (fw_reopen()).
 * Return: whether fdr_fd (perhaps a new one) may be used.
 */
notrace bool fw_ours(void)
{
	if (fdr_fd < 0)
		return false;
	return !fw_taken() || fw_reopen() == 0;
}
