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
#ifdef __SSE2__
#include <emmintrin.h>	/* x86-64's baseline: rd_run_block() */
#endif

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
 * Records are checked RD_RUN_BLOCK at a time, without a branch per record:
 * a record's low four bits y (the type bit, then the action) may go into a
 * run when y is 0, 2 or 4 (a function record: Entry, Exit, TailExit).
 * y + 10 is then 10, 12 or 14, with bits 0 and 4 clear; every other y
 * (odd: a metadata record; 6 and up: Entry_Args or an action with no
 * meaning) sets one of them. So the OR of y + 10 over a block has bit 0 or
 * bit 4 set exactly when some record of the block may not go. The deltas
 * are summed in 64 bits (at most RD_RUN_BLOCK times 2^32 - 1), and a block
 * whose sum would carry the TSC past 2^64 is taken record by record too.
 */
#define RD_RUN_BLOCK 16u
#define RD_RUN_BAD 0x11u

/* A block of RD_RUN_BLOCK records at @p: can all go? *@sum: their deltas. */
#ifdef __SSE2__
static inline bool rd_run_block(const uint8_t *p, uint64_t *sum)
{
	const __m128i low = _mm_set1_epi64x(0xf), ten = _mm_set1_epi64x(10);
	__m128i bad = _mm_setzero_si128(), s = _mm_setzero_si128();

	/* two records per 16 bytes: word in the low half of each lane, delta above */
#pragma GCC unroll 8
	for (unsigned k = 0; k < RD_RUN_BLOCK; k += 2) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)
					    (p + (size_t)k * FDRTRACE_FUNC_RECORD_SIZE));

		bad = _mm_or_si128(bad, _mm_add_epi64(_mm_and_si128(x, low), ten));
		s = _mm_add_epi64(s, _mm_srli_epi64(x, 32));
	}
	bad = _mm_or_si128(bad, _mm_unpackhi_epi64(bad, bad));
	s = _mm_add_epi64(s, _mm_unpackhi_epi64(s, s));
	*sum = (uint64_t)_mm_cvtsi128_si64(s);
	return !((uint64_t)_mm_cvtsi128_si64(bad) & RD_RUN_BAD);
}
#else
static inline bool rd_run_block(const uint8_t *p, uint64_t *sum)
{
	uint64_t bad = 0, s = 0;

	for (unsigned k = 0; k < RD_RUN_BLOCK; k++) {
		uint64_t x = rd_le64(p + (size_t)k * FDRTRACE_FUNC_RECORD_SIZE);

		bad |= (x & 0xf) + 10;
		s += x >> 32;
	}
	*sum = s;
	return !(bad & RD_RUN_BAD);
}
#endif

/*
 * The records at @p that may go into a run, at most @n; *@tscp goes from
 * the reference before the first to the TSC of the last taken. Return:
 * how many.
 */
static size_t rd_run_scan(const uint8_t *p, size_t n, uint64_t *tscp)
{
	uint64_t tsc = *tscp, sum;
	size_t i = 0;

	for (;;) {
		size_t stop = n - i < RD_RUN_BLOCK ? n : i + RD_RUN_BLOCK;

		if (stop - i == RD_RUN_BLOCK && rd_run_block(p + i * FDRTRACE_FUNC_RECORD_SIZE, &sum) &&
		    tsc + sum >= tsc) {
			tsc += sum;
			i = stop;
			continue;
		}
		/* The last records, or a block with one that may not go: one at a time. */
		for (; i < stop; i++) {
			const uint8_t *r = p + i * FDRTRACE_FUNC_RECORD_SIZE;
			uint32_t word = rd_le32(r);
			uint32_t delta = rd_le32(r + 4);

			if ((word & 1) || fdrtrace_func_word_action(word) > FDRTRACE_FN_TAIL_EXIT)
				break;
			/* A TSC that wraps would break the run's order: one record at a time there. */
			if (tsc + delta < tsc)
				break;
			tsc += delta;
		}
		if (i < stop || i == n)
			break;
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
