/* SPDX-License-Identifier: MIT */
/*
 * parser.h - the reader's state, shared by its parts: the grammar
 * (parser.c: the state machine over items, records and buffers, and the
 * event read), the source (source.c: where the bytes come from, a file
 * descriptor or the caller's memory), the sticky error (error.c) and the
 * batch path (runs.c: runs of function records handed out without an
 * event each). Each part's functions are declared here, by the part that
 * defines them; calls go one way: runs.c and parser.c call source.c and
 * error.c, source.c calls error.c.
 *
 * Contract: included only by those .c files of tools/reader; a reader
 * belongs to one thread at a time (see parser.c).
 */
#ifndef FDR_READER_PARSER_H
#define FDR_READER_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fdrtrace/reader.h>

/* Bytes pulled from a file descriptor per read(2). */
#define RD_IO_SIZE (64u << 10)

__extension__ typedef __int128 rd_i128;

/*
 * Record kinds as the grammar sees them: the ten metadata kinds keep their
 * numbers, function records are split by whether arguments follow, and
 * RK_END stands for "the buffer ends here".
 */
enum rd_kind {
	RK_FUNCTION = FDRTRACE_MD_KIND_COUNT,
	RK_FUNCTION_ARGS,
	RK_END,
	RK_COUNT
};

#define RK(k) (1u << (k))

/* Parser states: where in the grammar we are, named after the last record. */
enum rd_state {
	S_HEADER,		/* nothing read yet */
	S_BETWEEN,		/* between buffers */
	S_EXTENTS,
	S_NEW_BUFFER,
	S_WALLTIME,
	S_PID,
	S_NEW_CPU_ID,
	S_TSC_WRAP,
	S_CUSTOM_EVENT,
	S_TYPED_EVENT,
	S_FUNCTION,
	S_FUNCTION_ARGS,	/* after an Entry_Args function record */
	S_CALL_ARGUMENT,
	S_END_OF_BUFFER,	/* v1: padding up to the boundary follows */
	S_SKIPPING,		/* discarding a damaged buffer */
	S_EOF,
	S_ERROR,
	S_COUNT
};

/* Results of one parser step. */
enum rd_step {
	STEP_EVENT,	/* *ev holds a complete event */
	STEP_AGAIN,	/* state changed without an event: step again */
	STEP_STOP,	/* r->state (or REQUIRE_DATA) says why */
};

/* rd_fetch() results besides 0. */
#define RD_ENDED 1

struct fdrtrace_reader {
	int fd;
	bool ended;		/* no bytes will come after the source's */

	/* The source: the I/O buffer (fd) or the caller's memory (feed). */
	const uint8_t *src;
	size_t src_len;
	size_t src_pos;
	uint8_t *io;

	/* The current item's first stage_len bytes, when they were split. */
	uint8_t *stage;
	size_t stage_len;
	size_t stage_cap;

	uint64_t pos;		/* stream offset of the current item */
	uint64_t serial;
	enum rd_state state;

	struct fdrtrace_file_header hdr;
	uint16_t version;
	unsigned kinds;		/* rd_version_kinds[version] */

	/* The current buffer. */
	bool in_buffer;
	uint64_t buf_start;
	uint64_t buf_end;
	uint64_t buffers;	/* buffers started so far */
	int32_t tid;
	int32_t pid;
	uint16_t cpu;
	uint64_t tsc;
	bool have_ref;
	uint64_t first_ref;
	bool have_wall;
	uint64_t wall_sec;
	uint32_t wall_usec;

	/* The sticky error. */
	enum fdrtrace_error err;
	uint64_t err_offset;
	int err_errno;
	bool err_skippable;
	char errmsg[256];
};

/*
 * rd_fail - make the reader's error sticky: state S_ERROR, @e at stream
 * @offset, the message from @fmt (error.c)
 * Return: STEP_STOP.
 */
__attribute__((format(printf, 4, 5))) enum rd_step
rd_fail(struct fdrtrace_reader *r, enum fdrtrace_error e, uint64_t offset, const char *fmt, ...);

/*
 * rd_expected - the record kinds (RK() bits, RK_END included) that may
 * come next in @r's state and version: the transition table's row (parser.c)
 */
unsigned rd_expected(const struct fdrtrace_reader *r);

/*
 * rd_refill - make more source bytes available (source.c).
 * Return: 0 with new bytes, RD_ENDED at the end of the input, -EAGAIN when
 * a memory reader must be fed, -EIO with the error set.
 */
int rd_refill(struct fdrtrace_reader *r);

/* Wall-clock ns of @tsc in the current buffer (0 before its WallTimeMarker). */
static inline uint64_t rd_wall_ns(const struct fdrtrace_reader *r, uint64_t tsc)
{
	rd_i128 ns;

	if (!r->have_wall)
		return 0;
	ns = (rd_i128)r->wall_sec * 1000000000 + (rd_i128)r->wall_usec * 1000;
	if (r->have_ref && r->hdr.cycle_frequency)
		ns += ((rd_i128)tsc - (rd_i128)r->first_ref) * 1000000000 /
		      (rd_i128)r->hdr.cycle_frequency;
	if (ns < 0)
		return 0;
	if (ns > (rd_i128)UINT64_MAX)
		return UINT64_MAX;
	return (uint64_t)ns;
}

#endif /* FDR_READER_PARSER_H */
