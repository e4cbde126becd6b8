// SPDX-License-Identifier: MIT
/*
 * runtime/base/say.c - the runtime's messages, on the standard error it
 * started with.
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
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "say.h"

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
 * The flush thread has a descriptor table of its own (placement.c,
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

/*
 * A message to a pipe whose reader is gone must fail with EPIPE, not end
 * the program with SIGPIPE: an exit line after `prog 2>&1 | head` turned
 * a program's exit status 0 into death by SIGPIPE (141). SIGPIPE is
 * blocked in this thread around the write; a SIGPIPE the write raised
 * (EPIPE, and none was pending before) is taken off the pending set
 * before the mask is restored, so it is never delivered. One the program
 * sent or had pending stays. Async-signal-safe (rt_sigtimedwait through
 * syscall(), with a zero timeout).
 */
struct say_pipe {
	sigset_t old;
	bool was_pending;
};

static notrace void say_pipe_block(struct say_pipe *sp)
{
	sigset_t pipe, pend;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &sp->old);
	sp->was_pending = sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE);
}

static notrace void say_pipe_restore(struct say_pipe *sp, bool epipe)
{
	sigset_t pipe;
	struct timespec zero = { 0, 0 };

	if (epipe && !sp->was_pending) {
		sigemptyset(&pipe);
		sigaddset(&pipe, SIGPIPE);
		syscall(SYS_rt_sigtimedwait, &pipe, NULL, &zero, (size_t)(_NSIG / 8));
	}
	pthread_sigmask(SIG_SETMASK, &sp->old, NULL);
}

/*
 * verbosity=0 (fdrtrace record runs its children so): nothing at all on
 * stderr from here; option errors are written by config.c itself. Set by
 * the constructor once the options are read, before anything is said.
 */
bool fdr_say_silent;

notrace void fdr_say(const char *fmt, ...)
{
	int saved_errno = errno;
	int fd;
	va_list ap;

	if (fdr_say_silent)
		return;
	fd = say_open();

	if (fd >= 0) {
		struct say_pipe sp;
		int r;

		say_pipe_block(&sp);
		va_start(ap, fmt);
		r = vdprintf(fd, fmt, ap);
		va_end(ap);
		say_pipe_restore(&sp, r < 0 && errno == EPIPE);
		say_close(fd);
	}
	errno = saved_errno;
}

/* Context: any, async-signal-safe (fstat, write; open and close in the flush thread). */
notrace void fdr_say_raw(const char *msg, size_t len)
{
	int saved_errno = errno;
	int fd;
	struct say_pipe sp;
	bool epipe = false;

	if (fdr_say_silent)
		return;	/* verbosity=0 (fdr_say()) */
	fd = say_open();
	if (fd < 0)
		return;
	say_pipe_block(&sp);
	while (len) {
		ssize_t r = write(fd, msg, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			epipe = r < 0 && errno == EPIPE;
			break;
		}
		msg += r;
		len -= (size_t)r;
	}
	say_pipe_restore(&sp, epipe);
	say_close(fd);
	errno = saved_errno;
}
