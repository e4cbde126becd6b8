// SPDX-License-Identifier: MIT
/*
 * runtime/file/direct_io.c - direct writes: the trace file written with O_DIRECT
 * once the page cache proves slow (trace_file.c's opening comment says how
 * and why).
 *
 * Contract: under the file lock, like every write; async-signal-safe
 * (pwritev, fcntl, clock_gettime). fw_dio is this file's state (kept in
 * file_state.c, with fw_dio_mode() and fw_dio_stop(), which own.c needs
 * below it); the other files of the layer read fw_dio.fd (is the file
 * written direct?).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "file_internal.h"
#include "state.h"
#include "trace_file.h"

/* ---- direct writes (trace_file.c's opening comment) ---- */

static notrace void fw_dio_begin(off_t end);

/*
 * The file fdr_fd was just created (holding the fw_early_len bytes kept
 * before): may it be written direct? Its file system must report a
 * direct-I/O alignment (statx; tmpfs and kernels before 6.1 do not). With
 * direct_io=always it is, from now on; with auto, once writing it through
 * the page cache proves slow (fw_dio_watch()).
 */
notrace void fw_dio_probe(void)
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
notrace uint64_t fw_cpu_ns(void)
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

notrace void fw_dio_watch(uint64_t bytes, uint64_t ns)
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
 * Write @len bytes at @off of fdr_fd through the page cache, whether it is
 * written direct or not (O_DIRECT off around the write: a partial block, a
 * header field). On an error a direct file stops being one
 * (fw_dio_stop()). Async-signal-safe. Return: 0 or an errno.
 */
notrace int fw_write_through(const uint8_t *p, size_t len, off_t off)
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

/*
 * One unit (fw_writev()) written direct: copied into the stage, whole
 * blocks written from it, the partial last block kept. On an error the
 * file is cut back to where the unit began (its partial block as it was,
 * written through the page cache), as fw_writev() does. Return: 0, a
 * negative errno, or -EAGAIN when the file system refused the direct
 * write: the file is as before the unit, written buffered from now on,
 * and the caller writes the unit that way.
 */
notrace int fw_dio_writev(const struct iovec *iov, int n, size_t total)
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
