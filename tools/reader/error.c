// SPDX-License-Identifier: MIT
/*
 * error.c - the reader's sticky error: set by the parser (parser.c) and
 * the source (source.c, a read error) with rd_fail(), read by the caller
 * with fdrtrace_reader_error(), _errmsg() and _errno() (fdrtrace/reader.h).
 *
 * Contract: a reader belongs to one thread at a time; no global state.
 * This file calls nothing of the reader's: it is the bottom of its calls.
 */
#include <stdarg.h>
#include <stdio.h>

#include <fdrtrace/reader.h>

#include "parser.h"
#include "reader_internal.h"

enum rd_step
rd_fail(struct fdrtrace_reader *r, enum fdrtrace_error e, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
	r->err = e;
	r->err_offset = offset;
	/* Only damage inside a buffer whose end we know can be stepped over. */
	r->err_skippable = r->in_buffer && (e == FDRTRACE_E_GRAMMAR || e == FDRTRACE_E_BAD_KIND ||
					     e == FDRTRACE_E_BAD_SIZE || e == FDRTRACE_E_OVERRUN);
	r->state = S_ERROR;
	return STEP_STOP;
}

rd_export enum fdrtrace_error fdrtrace_reader_error(const struct fdrtrace_reader *r,
						     uint64_t *offset)
{
	if (offset)
		*offset = r->err_offset;
	return r->err;
}

rd_export const char *fdrtrace_reader_errmsg(const struct fdrtrace_reader *r)
{
	return r->errmsg;
}

rd_export int fdrtrace_reader_errno(const struct fdrtrace_reader *r)
{
	return r->err_errno;
}
