// SPDX-License-Identifier: MIT
/*
 * runtime/file/file_state.c - the file layer's state and the primitives
 * every file of it uses: the file lock, a whole write, the blocks
 * reserved ahead, the failure that stops recording, the file size limit,
 * and O_DIRECT on and off (trace_file.c's opening comment says how the
 * file is written).
 *
 * Contract: the bottom of the file layer; own.c, direct_io.c, open.c,
 * trace_file.c and rtbuf.c call it, it calls no other file of the layer.
 * Everything here is async-signal-safe. The state is changed under the
 * file lock unless file_internal.h says otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "file_internal.h"
#include "say.h"
#include "state.h"
#include "trace_file.h"

char fdr_path[4200];
int fdr_fd = -1;
struct fdr_totals fdr_totals;

/* The file layer's state: file_internal.h says what each is and who changes it. */
_Atomic int fw_lock;
_Atomic bool fw_failed;
_Atomic bool fw_pending;
int fw_unnamed = -1;
struct fw_own_state fw_own = { .fd = -1, .on = true };
uint8_t *fw_early;
size_t fw_early_len;
char fw_dir[sizeof(fdr_path)];
size_t fw_path_base;
const uint8_t *fw_zeros;
int fw_pre_fd = -1;
off_t fw_pre_end;
bool fw_pre_refused;
struct fdrtrace_md_custom_event_v1 fw_pad_md = {
	.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CUSTOM_EVENT),
};
int fw_cut_err;
off_t fw_unit_at = -1;
struct fw_last_state fw_last = { .fd = -1, .at = -1 };
uint64_t fw_fsize_max;
bool fw_fsize_option;
_Atomic bool fw_max_size_hit;
uint8_t fw_stop_unit[512];
struct fw_dio_state fw_dio = { .fd = -1, .cand = -1, .from = -1 };

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
 * Write all of @len bytes: at @off (pwrite(2)), or at the file's offset,
 * which moves (write(2)), when @off is negative. Return: 0 or an errno.
 */
notrace int fw_write_all(int fd, const uint8_t *p, size_t len, off_t off)
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

/*
 * Before writing @len bytes at @pos, the end of fdr_fd: reserve the blocks
 * ahead (see the top of the file). Async-signal-safe (lseek, the
 * fallocate system call).
 */
notrace void fw_prealloc(off_t pos, size_t len)
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
notrace void fw_report(const char *what, int err)
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

notrace int fw_fail(const char *what, int err)
{
	if (!atomic_exchange_explicit(&fw_failed, true, memory_order_relaxed)) {
		fw_report(what, err);
		fdr_stop_on_error();
	}
	return -err;
}

/*
 * The file size limit: the kernel's (the system call: async-signal-safe),
 * or max_size when it is lower.
 */
notrace void fw_fsize_probe(void)
{
	struct rlimit rl;

	fw_fsize_max = 0;
	if (!syscall(SYS_getrlimit, RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		fw_fsize_max = rl.rlim_cur ? rl.rlim_cur : 1;
	fw_fsize_option = fdr_cfg.max_size && (!fw_fsize_max || fdr_cfg.max_size < fw_fsize_max);
	if (fw_fsize_option)
		fw_fsize_max = fdr_cfg.max_size;
}

/* O_DIRECT on or off for fw_dio.fd (async-signal-safe). Return: 0 or an errno. */
notrace int fw_dio_mode(bool on)
{
	int fl = fcntl(fw_dio.fd, F_GETFL);

	if (fl < 0 || fcntl(fw_dio.fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT) < 0)
		return errno;
	return 0;
}

/*
 * Stop writing direct (a refusal, an error): the staged bytes go into the
 * file through the page cache, and its offset moves to the end for the
 * buffered writes that follow. Return: 0 or an errno.
 */
notrace int fw_dio_stop(void)
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
