// SPDX-License-Identifier: MIT
/*
 * tests/reliability/targets/slow_disk.c - preloaded, not instrumented:
 * every write to a regular file other than stdin, stdout and stderr (in
 * rel_target, only the trace file is one) takes 20 ms more, as on a disk
 * that another process keeps busy. With a small fixed pool and
 * on_full=wait, the program's threads then wait for buffers for tens of
 * milliseconds at a time, inside a hook.
 */
/* both names of each call defined here: pwrite and pwrite64 */
#undef _FILE_OFFSET_BITS
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static void slow_if_file(int fd)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct stat st;

	if (fd > 2 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		nanosleep(&ts, NULL);
}

ssize_t write(int fd, const void *p, size_t n)
{
	slow_if_file(fd);
	return syscall(SYS_write, fd, p, n);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	slow_if_file(fd);
	return syscall(SYS_writev, fd, iov, n);
}

ssize_t pwrite(int fd, const void *p, size_t n, off_t off)
{
	slow_if_file(fd);
	return syscall(SYS_pwrite64, fd, p, n, off);
}

ssize_t pwrite64(int fd, const void *p, size_t n, off64_t off)
{
	slow_if_file(fd);
	return syscall(SYS_pwrite64, fd, p, n, off);
}

/* x86-64: the offset in one register; the kernel also takes its high half, 0 */
ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	slow_if_file(fd);
	return syscall(SYS_pwritev, fd, iov, n, off, 0);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int n, off64_t off)
{
	slow_if_file(fd);
	return syscall(SYS_pwritev, fd, iov, n, off, 0);
}
