// SPDX-License-Identifier: MIT
/*
 * runs.c - the reader's batch path, fdrtrace_reader_read_functions():
 * runs of function records handed out in place, without an event each,
 * where the grammar (parser.c) would take them one by one with the same
 * outcome; and fdrtrace_reader_leave_buffer(), for a consumer that reads
 * only some buffers (or only their preambles) and steps over the rest.
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
 * The batch path hands out only records that rd_step() would take as
 * RK_FUNCTION without staging and without an error: the state allows a
 * function record (the grammar's table, not a copy of it), the record lies
 * whole in the source and before the buffer's end, its first word has
 * bit 0 clear and an action of Entry, Exit or TailExit. At anything else it
 * stops and leaves the bytes where they are, so rd_step() decides (and
 * fails, when it must) exactly as it would have without the batch path.
 * Entry_Args is left to rd_step() because its CallArguments change the
 * state the next record is checked in.
 */

/*
 * The records at @p that may go into a run, at most @n; *@tscp goes from
 * the reference before the first to the TSC of the last taken. Return:
 * how many.
 */
static size_t rd_run_scan(const uint8_t *p, size_t n, uint64_t *tscp)
{
	uint64_t tsc = *tscp;
	size_t i;

	for (i = 0; i < n; i++, p += FDRTRACE_FUNC_RECORD_SIZE) {
		uint32_t word = rd_le32(p);
		uint32_t delta = rd_le32(p + 4);

		if ((word & 1) || fdrtrace_func_word_action(word) > FDRTRACE_FN_TAIL_EXIT)
			break;
		/* A TSC that wraps would break the run's order: one record at a time there. */
		if (tsc + delta < tsc)
			break;
		tsc += delta;
	}
	*tscp = tsc;
	return i;
}

/*
 * The first records of a run whose wall_ns is 0 while a later one's is not
 * (a WallTimeMarker that the TSC's distance to the buffer's first reference
 * takes to or below 0, in a damaged or hand-made trace): the run is cut
 * before the first record with a time, so that a run's times are all 0 or
 * none is. Return: how many records keep (at least 1); *@tscp the TSC of
 * the last kept.
 */
static size_t rd_run_cut_zero_wall(const struct fdrtrace_reader *r, const uint8_t *p, size_t n,
				   uint64_t *tscp)
{
	uint64_t tsc = r->tsc, prev = r->tsc;
	size_t i;

	for (i = 0; i < n; i++, p += FDRTRACE_FUNC_RECORD_SIZE) {
		tsc += rd_le32(p + 4);
		if (rd_wall_ns(r, tsc))
			break;
		prev = tsc;
	}
	*tscp = prev;
	return i;
}

rd_export size_t fdrtrace_reader_read_functions(struct fdrtrace_reader *r,
						struct fdrtrace_func_run *run, size_t max)
{
	const uint8_t *p;
	uint64_t left, tsc;
	size_t avail, n;

	/* A staged item, or no function record allowed here: rd_step() decides. */
	if (!max || r->stage_len || !r->in_buffer || !(rd_expected(r) & RK(RK_FUNCTION)))
		return 0;
	left = r->buf_end - r->pos;
	if (left < FDRTRACE_FUNC_RECORD_SIZE)
		return 0;
	avail = r->src_len - r->src_pos;
	/*
	 * A file reader refills only an empty I/O buffer: the bytes of a
	 * record cut by its end must be staged, which rd_fetch() does. A
	 * read error or the end of the file here is what rd_fetch() would
	 * have met at this same offset.
	 */
	if (!avail && r->fd != FDRTRACE_FD_NONE) {
		if (rd_refill(r))
			return 0;
		avail = r->src_len - r->src_pos;
	}
	n = avail / FDRTRACE_FUNC_RECORD_SIZE;
	if (n > left / FDRTRACE_FUNC_RECORD_SIZE)
		n = (size_t)(left / FDRTRACE_FUNC_RECORD_SIZE);
	if (n > max)
		n = max;
	if (!n)
		return 0;
	p = r->src + r->src_pos;
	tsc = r->tsc;
	n = rd_run_scan(p, n, &tsc);
	if (!n)
		return 0;

	run->first_wall_ns = rd_wall_ns(r, r->tsc + rd_le32(p + 4));
	run->last_wall_ns = rd_wall_ns(r, tsc);
	if (!run->first_wall_ns && run->last_wall_ns) {
		n = rd_run_cut_zero_wall(r, p, n, &tsc);
		run->last_wall_ns = 0;
	}
	run->records = p;
	run->count = n;
	run->offset = r->pos;
	run->serial = r->serial;
	run->tsc_before = r->tsc;
	run->tsc = tsc;
	run->version = r->version;
	run->tid = r->tid;
	run->pid = r->pid;
	run->cpu = r->cpu;
	run->buffer = r->buffers ? r->buffers - 1 : 0;

	/* What n calls of rd_function() leave behind. */
	r->src_pos += n * FDRTRACE_FUNC_RECORD_SIZE;
	r->pos += n * FDRTRACE_FUNC_RECORD_SIZE;
	r->serial += n;
	r->tsc = tsc;
	r->state = S_FUNCTION;	/* rd_next_state[RK_FUNCTION] */
	return n;
}

rd_export uint64_t fdrtrace_reader_wall_ns(const struct fdrtrace_reader *r, uint64_t tsc)
{
	return rd_wall_ns(r, tsc);
}

rd_export int fdrtrace_reader_leave_buffer(struct fdrtrace_reader *r)
{
	if (!r->in_buffer || r->state == S_ERROR || r->state == S_EOF || r->state == S_SKIPPING)
		return -EINVAL;
	if (r->fd != FDRTRACE_FD_NONE) {
		/* Never a seek: rd_skip() reads and discards up to the end. */
		r->state = S_SKIPPING;
		return 0;
	}
	/*
	 * A memory reader has nothing to read past: it drops what it holds,
	 * and the next feed is the stream from the buffer's end on, where
	 * the grammar is between buffers (as at the end of rd_skip()).
	 */
	r->src_pos = r->src_len;
	r->stage_len = 0;
	r->pos = r->buf_end;
	r->in_buffer = false;
	r->state = S_BETWEEN;
	return 0;
}
