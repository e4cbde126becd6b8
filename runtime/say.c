// SPDX-License-Identifier: MIT
/*
 * runtime/say.c - the runtime's messages, on the standard error it started with.
 *
 * A program may close its standard error (xz and gnulib's close_stdout do,
 * at exit, to catch write errors on it) and then open a file that takes
 * descriptor 2: a message written to "2" then would land in that file, the
 * program's data. So the runtime notes the file behind descriptor 2 at
 * initialisation and writes a message only while descriptor 2 is still
 * that file (same device and inode); otherwise the message is dropped
 * (the trace's own records say what the exit line would have said). It
 * keeps no descriptor of its own: a program that closes its standard
 * error to end a pipe must not find the pipe held open. Nor does the
 * flush thread's own descriptor table (below).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler.h"
#include "runtime.h"

/* Written once by fdr_say_init() (the constructor, one thread), read after. */
static bool say_known;
static dev_t say_dev;
static ino_t say_ino;

notrace void fdr_say_init(void)
{
	struct stat st;

	say_known = fstat(STDERR_FILENO, &st) == 0;
	if (say_known) {
		say_dev = st.st_dev;
		say_ino = st.st_ino;
	}
}

/*
 * The flush thread has a descriptor table of its own (flush_thread.c,
 * fl_own_files()). It keeps a copy of descriptor 2 only when that is a
 * regular file (the same open file, so messages land at the program's
 * offset; holding a file open ends nothing); a pipe, a FIFO, a terminal
 * or a socket it does not hold (a program that closes its end of a pipe
 * must see the reader get EOF). Either way a message is written only
 * while the program's descriptor 2 (/proc/self/fd/2: the process's
 * table) is still the file it started with; without a copy, through
 * that file opened again (non-blocking, so that a FIFO with no reader
 * fails at once, then blocking for the write) and closed after. Nothing
 * reaches a socket (it cannot be opened so).
 */
static fdr_tls bool say_private;	/* this thread's table is its own */
static fdr_tls bool say_kept;		/* and holds a copy of descriptor 2 */

notrace int fdr_say_keep(void)
{
	struct stat st;

	return say_known && fstat(STDERR_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
			       st.st_dev == say_dev && st.st_ino == say_ino ?
		       STDERR_FILENO :
		       -1;
}

notrace void fdr_say_private(bool kept)
{
	say_private = true;
	say_kept = kept;
}

/* The descriptor to write a message to, or -1. Async-signal-safe. */
static notrace int say_open(void)
{
	struct stat st;
	int fd = STDERR_FILENO;

	if (!say_known)
		return -1;
	if (say_private) {
		int fl;

		if (stat("/proc/self/fd/2", &st) || st.st_dev != say_dev || st.st_ino != say_ino)
			return -1;
		if (say_kept)
			return STDERR_FILENO;
		fd = open("/proc/self/fd/2", O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return -1;
		fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	if (fstat(fd, &st) == 0 && st.st_dev == say_dev && st.st_ino == say_ino)
		return fd;
	if (fd != STDERR_FILENO)
		close(fd);
	return -1;
}

static notrace void say_close(int fd)
{
	if (fd >= 0 && fd != STDERR_FILENO)
		close(fd);
}

notrace void fdr_say(const char *fmt, ...)
{
	int saved_errno = errno;
	int fd = say_open();
	va_list ap;

	if (fd >= 0) {
		va_start(ap, fmt);
		vdprintf(fd, fmt, ap);
		va_end(ap);
		say_close(fd);
	}
	errno = saved_errno;
}

/* Context: any, async-signal-safe (fstat, write; open and close in the flush thread). */
notrace void fdr_say_raw(const char *msg, size_t len)
{
	int saved_errno = errno;
	int fd = say_open();

	while (fd >= 0 && len) {
		ssize_t r = write(fd, msg, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		msg += r;
		len -= (size_t)r;
	}
	say_close(fd);
	errno = saved_errno;
}
