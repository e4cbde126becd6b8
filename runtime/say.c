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
 * error to end a pipe must not find the pipe held open.
 */
#include <errno.h>
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

/* Context: any, async-signal-safe (fstat). */
notrace bool fdr_say_ok(void)
{
	struct stat st;
	int saved_errno = errno;
	bool ok = say_known && fstat(STDERR_FILENO, &st) == 0 && st.st_dev == say_dev &&
		  st.st_ino == say_ino;

	errno = saved_errno;
	return ok;
}

notrace void fdr_say(const char *fmt, ...)
{
	int saved_errno = errno;
	va_list ap;

	if (!fdr_say_ok())
		return;
	va_start(ap, fmt);
	vdprintf(STDERR_FILENO, fmt, ap);
	va_end(ap);
	errno = saved_errno;
}

/* Context: any, async-signal-safe (fstat, write). */
notrace void fdr_say_raw(const char *msg, size_t len)
{
	int saved_errno = errno;

	if (fdr_say_ok()) {
		while (len) {
			ssize_t r = write(STDERR_FILENO, msg, len);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			msg += r;
			len -= (size_t)r;
		}
	}
	errno = saved_errno;
}
