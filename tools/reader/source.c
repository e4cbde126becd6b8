// SPDX-License-Identifier: MIT
/*
 * source.c - where a reader's bytes come from: a file descriptor, read(2)
 * into a fixed I/O buffer of RD_IO_SIZE bytes, or the caller's memory
 * (fdrtrace_reader_feed()); and the reader's life, open to close. The
 * parser (parser.c) pulls more bytes with rd_refill() when the source's
 * are used up; it never seeks. A read error is made sticky with rd_fail()
 * (error.c); nothing here calls the parser.
 *
 * Contract: a reader belongs to one thread at a time; no global state.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fdrtrace/reader.h>

#include "parser.h"
#include "reader_internal.h"

/*
 * Make more source bytes available.
 * Return: 0 with new bytes, RD_ENDED at the end of the input, -EAGAIN when
 * a memory reader must be fed, -EIO with the error set.
 */
int rd_refill(struct fdrtrace_reader *r)
{
	ssize_t n;

	if (r->ended)
		return RD_ENDED;
	if (r->fd == FDRTRACE_FD_NONE)
		return -EAGAIN;
	do
		n = read(r->fd, r->io, RD_IO_SIZE);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		char buf[128];

		r->err_errno = errno;
		r->in_buffer = false;
		rd_fail(r, FDRTRACE_E_IO, r->pos + r->stage_len, "read error: %s",
			strerror_r(r->err_errno, buf, sizeof(buf)));
		return -EIO;
	}
	if (n == 0) {
		r->ended = true;
		return RD_ENDED;
	}
	r->src = r->io;
	r->src_len = (size_t)n;
	r->src_pos = 0;
	return 0;
}

rd_export struct fdrtrace_reader *fdrtrace_reader_open(int fd)
{
	struct fdrtrace_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->fd = fd < 0 ? FDRTRACE_FD_NONE : fd;
	if (r->fd != FDRTRACE_FD_NONE) {
		r->io = malloc(RD_IO_SIZE);
		if (!r->io) {
			free(r);
			errno = ENOMEM;
			return NULL;
		}
	}
	r->state = S_HEADER;
	return r;
}

rd_export int fdrtrace_reader_feed(struct fdrtrace_reader *r, const void *data, size_t len)
{
	if (!r || r->fd != FDRTRACE_FD_NONE || r->ended || (len && !data))
		return -EINVAL;
	if (r->src_pos < r->src_len)
		return -EBUSY;
	if (len == 0) {
		r->ended = true;
		return 0;
	}
	r->src = data;
	r->src_len = len;
	r->src_pos = 0;
	return 0;
}

rd_export void fdrtrace_reader_close(struct fdrtrace_reader *r)
{
	if (!r)
		return;
	free(r->stage);
	free(r->io);
	free(r);
}
