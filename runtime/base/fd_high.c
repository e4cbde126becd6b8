// SPDX-License-Identifier: MIT
/*
 * runtime/base/fd_high.c - the runtime's own descriptors, out of the
 * program's way.
 *
 * Contract: fdr_fd_floor_init() once at start (before the runtime opens
 * what it keeps open); fdr_fd_high() from any thread, async-signal-safe.
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fd_high.h"

/* The lowest number the runtime's own descriptors take (fdr_fd_floor_init()). */
static int fdh_floor = 3;

/**
 * fdr_fd_floor_init - where the runtime's descriptors go: near the top
 * of the descriptor limit (at most 1024), a sixteenth of it below
 *
 * Call once at start, before the runtime opens what it keeps open.
 * Limits under 32 keep the floor at 3.
 */
notrace void fdr_fd_floor_init(void)
{
	struct rlimit rl;
	rlim_t top = 1024;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < top)
		top = rl.rlim_cur;
	fdh_floor = top >= 32 ? (int)(top - top / 16) : 3;
}

/**
 * fdr_fd_high - move a descriptor of ours out of the program's way
 * @fd: a descriptor the runtime opened, or a negative errno (returned as is)
 *
 * To the lowest free number from the floor up (960 under the usual limit
 * of 1024), so that the program's own opens get the numbers they get
 * untraced: bash's tests print them, and a script that lowers `ulimit -n`
 * then opens files ran out of descriptors that ours held. Never 0, 1 or
 * 2 either: a program started with standard error closed gets 2 from
 * its next open and writes there what it means for standard error.
 * Async-signal-safe (fcntl, close).
 * Return: the descriptor to use; @fd itself when it cannot be moved (no
 * descriptor free from the floor, and @fd above 2).
 */
notrace int fdr_fd_high(int fd)
{
	int moved;

	if (fd < 0 || fd >= fdh_floor)
		return fd;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, fdh_floor);
	if (moved < 0 && fd <= 2)
		moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (moved < 0)
		return fd;
	close(fd);
	return moved;
}
