// SPDX-License-Identifier: MIT
/*
 * tests/reliability/targets/die_at_first_write.c - preloaded, not
 * instrumented: the process ends with _exit(77) at its first write(2) or
 * writev(2) to a regular file other than stdin, stdout and stderr (in
 * rel_target, only the trace file is one), before a byte of it is
 * written: the worst moment for a process to end while its trace file
 * is being created.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static void die_if_file(int fd)
{
	struct stat st;

	if (fd > 2 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		_exit(77);
}

ssize_t write(int fd, const void *p, size_t n)
{
	die_if_file(fd);
	return syscall(SYS_write, fd, p, n);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	die_if_file(fd);
	return syscall(SYS_writev, fd, iov, n);
}
