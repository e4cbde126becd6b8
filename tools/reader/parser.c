// SPDX-License-Identifier: MIT
/*
 * parser.c - the streaming FDR trace reader (fdrtrace/reader.h).
 *
 * Contract: a reader belongs to one thread at a time; nothing here is
 * shared between readers, and there is no global state. The parser never
 * seeks: it pulls bytes from a file descriptor with read(2) into a fixed
 * I/O buffer, or takes them from the caller's memory (fdrtrace_reader_feed()),
 * and walks them as a state machine. Its memory is bounded by the I/O
 * buffer plus one staged item: a record, a padding piece, or a custom/typed
 * event with its payload (capped at FDRTRACE_READER_MAX_PAYLOAD, and grown
 * only as bytes actually arrive, so a hostile size field never causes a big
 * allocation by itself).
 *
 * How bytes flow. Every event is one "item": a run of bytes at stream
 * offset r->pos. rd_fetch(n) makes the first n bytes of the item contiguous:
 * straight from the source when they are all there, otherwise by copying
 * what is there into the staging area and pulling more. Nothing about the
 * grammar changes until the item is complete; a memory reader that runs dry
 * returns FDRTRACE_REQUIRE_DATA with the partial item staged, and the next
 * read starts the same item again with the staged bytes.
 *
 * The grammar is the transition table rd_allowed[]: for the state named
 * after the last record seen, the set of record kinds that may come next
 * (plus RK_END, "the buffer may end here"). A per-version mask removes the
 * kinds a version does not have. Buffers are bounded: by header.buffer_size
 * from their NewBuffer in version 1, by their BufferExtents in version 2+.
 *
 * This file is the grammar and the event read; where the bytes come from
 * (the descriptor or the caller's memory, open and close) is source.c, the
 * sticky error error.c, the batch path of function records runs.c, and the
 * reader's state they share parser.h. Calls go one way: runs.c and this
 * file call source.c and error.c, source.c calls error.c, error.c nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fdrtrace/reader.h>

#include "fdr_walk.h"
#include "parser.h"
#include "reader_internal.h"

/* Version 1 buffer_size bounds: the preamble fits; no absurd sizes. */
#define RD_V1_BUFFER_MIN (3u * FDRTRACE_METADATA_RECORD_SIZE)
#define RD_V1_BUFFER_MAX (1ull << 32)

#define RD_BODY                                                                                    \
	(RK(FDRTRACE_MD_NEW_CPU_ID) | RK(FDRTRACE_MD_TSC_WRAP) | RK(FDRTRACE_MD_CUSTOM_EVENT) |   \
	 RK(FDRTRACE_MD_TYPED_EVENT) | RK(RK_FUNCTION) | RK(RK_FUNCTION_ARGS) |                   \
	 RK(FDRTRACE_MD_END_OF_BUFFER) | RK(RK_END))

/* The transition table: kinds allowed after each state (before version masking). */
static const unsigned rd_allowed[S_COUNT] = {
	[S_BETWEEN] = RK(FDRTRACE_MD_NEW_BUFFER) | RK(FDRTRACE_MD_BUFFER_EXTENTS),
	/* An extents of 0 bytes is an empty buffer: it may end right away. */
	[S_EXTENTS] = RK(FDRTRACE_MD_NEW_BUFFER) | RK(RK_END),
	[S_NEW_BUFFER] = RK(FDRTRACE_MD_WALLTIME),
	[S_WALLTIME] = RK(FDRTRACE_MD_PID) | RK(FDRTRACE_MD_NEW_CPU_ID),
	[S_PID] = RK(FDRTRACE_MD_NEW_CPU_ID),
	[S_NEW_CPU_ID] = RD_BODY,
	[S_TSC_WRAP] = RD_BODY,
	[S_CUSTOM_EVENT] = RD_BODY,
	[S_TYPED_EVENT] = RD_BODY,
	[S_FUNCTION] = RD_BODY,
	[S_FUNCTION_ARGS] = RD_BODY | RK(FDRTRACE_MD_CALL_ARGUMENT),
	[S_CALL_ARGUMENT] = RD_BODY | RK(FDRTRACE_MD_CALL_ARGUMENT),
	[S_END_OF_BUFFER] = RK(RK_END),
};

/* The state each record kind leads to. */
static const enum rd_state rd_next_state[RK_COUNT] = {
	[FDRTRACE_MD_NEW_BUFFER] = S_NEW_BUFFER,
	[FDRTRACE_MD_END_OF_BUFFER] = S_END_OF_BUFFER,
	[FDRTRACE_MD_NEW_CPU_ID] = S_NEW_CPU_ID,
	[FDRTRACE_MD_TSC_WRAP] = S_TSC_WRAP,
	[FDRTRACE_MD_WALLTIME] = S_WALLTIME,
	[FDRTRACE_MD_CUSTOM_EVENT] = S_CUSTOM_EVENT,
	[FDRTRACE_MD_CALL_ARGUMENT] = S_CALL_ARGUMENT,
	[FDRTRACE_MD_BUFFER_EXTENTS] = S_EXTENTS,
	[FDRTRACE_MD_TYPED_EVENT] = S_TYPED_EVENT,
	[FDRTRACE_MD_PID] = S_PID,
	[RK_FUNCTION] = S_FUNCTION,
	[RK_FUNCTION_ARGS] = S_FUNCTION_ARGS,
	[RK_END] = S_BETWEEN,
};

/* Kinds that exist in each FDR version. */
#define RD_V1_KINDS                                                                                \
	(RK(FDRTRACE_MD_NEW_BUFFER) | RK(FDRTRACE_MD_END_OF_BUFFER) | RK(FDRTRACE_MD_NEW_CPU_ID) |  \
	 RK(FDRTRACE_MD_TSC_WRAP) | RK(FDRTRACE_MD_WALLTIME) | RK(FDRTRACE_MD_CUSTOM_EVENT) |      \
	 RK(FDRTRACE_MD_CALL_ARGUMENT) | RK(RK_FUNCTION) | RK(RK_FUNCTION_ARGS) | RK(RK_END))
#define RD_V2_KINDS ((RD_V1_KINDS & ~RK(FDRTRACE_MD_END_OF_BUFFER)) | RK(FDRTRACE_MD_BUFFER_EXTENTS))
#define RD_V3_KINDS (RD_V2_KINDS | RK(FDRTRACE_MD_PID))
#define RD_V5_KINDS (RD_V3_KINDS | RK(FDRTRACE_MD_TYPED_EVENT))

static const unsigned rd_version_kinds[FDRTRACE_FDR_VERSION_MAX + 1] = {
	[1] = RD_V1_KINDS, [2] = RD_V2_KINDS, [3] = RD_V3_KINDS, [4] = RD_V3_KINDS, [5] = RD_V5_KINDS,
};

static const char *const rd_kind_names[RK_COUNT] = {
	[FDRTRACE_MD_NEW_BUFFER] = "NewBuffer",
	[FDRTRACE_MD_END_OF_BUFFER] = "EndOfBuffer",
	[FDRTRACE_MD_NEW_CPU_ID] = "NewCPUId",
	[FDRTRACE_MD_TSC_WRAP] = "TSCWrap",
	[FDRTRACE_MD_WALLTIME] = "WallTimeMarker",
	[FDRTRACE_MD_CUSTOM_EVENT] = "CustomEvent",
	[FDRTRACE_MD_CALL_ARGUMENT] = "CallArgument",
	[FDRTRACE_MD_BUFFER_EXTENTS] = "BufferExtents",
	[FDRTRACE_MD_TYPED_EVENT] = "TypedEvent",
	[FDRTRACE_MD_PID] = "Pid",
	[RK_FUNCTION] = "Function",
	[RK_FUNCTION_ARGS] = "Function",
	[RK_END] = "end of buffer",
};

/* The order in which messages list kinds: the grammar's. */
static const unsigned char rd_kind_order[] = {
	FDRTRACE_MD_BUFFER_EXTENTS, FDRTRACE_MD_NEW_BUFFER, FDRTRACE_MD_WALLTIME,
	FDRTRACE_MD_PID, FDRTRACE_MD_NEW_CPU_ID, FDRTRACE_MD_TSC_WRAP,
	FDRTRACE_MD_CUSTOM_EVENT, FDRTRACE_MD_TYPED_EVENT, FDRTRACE_MD_CALL_ARGUMENT,
	FDRTRACE_MD_END_OF_BUFFER, RK_FUNCTION, RK_FUNCTION_ARGS, RK_END,
};

static const enum fdrtrace_event_type rd_kind_event[RK_FUNCTION] = {
	[FDRTRACE_MD_NEW_BUFFER] = FDRTRACE_EV_NEW_BUFFER,
	[FDRTRACE_MD_END_OF_BUFFER] = FDRTRACE_EV_END_OF_BUFFER,
	[FDRTRACE_MD_NEW_CPU_ID] = FDRTRACE_EV_NEW_CPU_ID,
	[FDRTRACE_MD_TSC_WRAP] = FDRTRACE_EV_TSC_WRAP,
	[FDRTRACE_MD_WALLTIME] = FDRTRACE_EV_WALLTIME,
	[FDRTRACE_MD_CUSTOM_EVENT] = FDRTRACE_EV_CUSTOM_EVENT,
	[FDRTRACE_MD_CALL_ARGUMENT] = FDRTRACE_EV_CALL_ARGUMENT,
	[FDRTRACE_MD_BUFFER_EXTENTS] = FDRTRACE_EV_BUFFER_EXTENTS,
	[FDRTRACE_MD_TYPED_EVENT] = FDRTRACE_EV_TYPED_EVENT,
	[FDRTRACE_MD_PID] = FDRTRACE_EV_PID,
};

/* ------------------------------------------------------------------ */
/* Error messages (error.c makes them sticky)                          */
/* ------------------------------------------------------------------ */

/* "A", "A or B", "A, B or C" for the kinds in @mask. */
static void rd_kind_list(char *out, size_t size, unsigned mask)
{
	const char *names[RK_COUNT];
	size_t n = 0, used = 0;

	/* Both function kinds print as "Function": name it once. */
	if ((mask & RK(RK_FUNCTION)) && (mask & RK(RK_FUNCTION_ARGS)))
		mask &= ~RK(RK_FUNCTION_ARGS);
	for (size_t i = 0; i < RD_ARRAY_SIZE(rd_kind_order); i++)
		if (mask & RK(rd_kind_order[i]))
			names[n++] = rd_kind_names[rd_kind_order[i]];
	out[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++) {
		const char *sep = i == 0 ? "" : (i + 1 == n ? " or " : ", ");
		int w = snprintf(out + used, size - used, "%s%s", sep, names[i]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	if (n == 0)
		snprintf(out, size, "nothing");
}

/* The kinds that may come next, in this state and this version. */
unsigned rd_expected(const struct fdrtrace_reader *r)
{
	unsigned allowed = rd_allowed[r->state] & r->kinds;

	/* Version 1 buffers open with NewBuffer, later ones with BufferExtents. */
	if (r->state == S_BETWEEN)
		allowed &= r->version == 1 ? RK(FDRTRACE_MD_NEW_BUFFER) :
					     RK(FDRTRACE_MD_BUFFER_EXTENTS);
	return allowed;
}

static enum rd_step rd_grammar_fail(struct fdrtrace_reader *r, unsigned allowed, unsigned kind)
{
	char expected[200];

	rd_kind_list(expected, sizeof(expected), allowed);
	if (!(r->kinds & RK(kind)))
		return rd_fail(r, FDRTRACE_E_GRAMMAR, r->pos,
			       "expected %s, found %s (not part of version %u traces)", expected,
			       rd_kind_names[kind], r->version);
	if (kind == RK_END)
		return rd_fail(r, FDRTRACE_E_GRAMMAR, r->pos,
			       "expected %s, found end of buffer (buffer at offset %llu)", expected,
			       (unsigned long long)r->buf_start);
	return rd_fail(r, FDRTRACE_E_GRAMMAR, r->pos, "expected %s, found %s", expected,
		       rd_kind_names[kind]);
}

/*
 * The input ended inside an item (or a buffer). The error offset is where
 * the data ended; the message names the buffer (or record) that was cut.
 */
static enum rd_step rd_truncated(struct fdrtrace_reader *r, const char *what)
{
	uint64_t end = r->pos + r->stage_len;
	bool in_buffer = r->in_buffer;

	r->in_buffer = false;	/* truncation is never skippable */
	if (r->state == S_HEADER)
		return rd_fail(r, FDRTRACE_E_TRUNCATED, end,
			       "truncated: the file header needs 32 bytes, the input has %llu",
			       (unsigned long long)end);
	if (in_buffer)
		return rd_fail(r, FDRTRACE_E_TRUNCATED, end,
			       "truncated: buffer at offset %llu ends after %llu of its %llu bytes (in %s at offset %llu)",
			       (unsigned long long)r->buf_start,
			       (unsigned long long)(end - r->buf_start),
			       (unsigned long long)(r->buf_end - r->buf_start), what,
			       (unsigned long long)r->pos);
	return rd_fail(r, FDRTRACE_E_TRUNCATED, end,
		       "truncated: %s at offset %llu ends after %llu of its bytes", what,
		       (unsigned long long)r->pos, (unsigned long long)(end - r->pos));
}

/* ------------------------------------------------------------------ */
/* Bytes                                                                */
/* ------------------------------------------------------------------ */

/* Grow the staging area to hold at least @need bytes (at most @limit). */
static int rd_stage_reserve(struct fdrtrace_reader *r, size_t need, size_t limit)
{
	size_t cap = r->stage_cap ? r->stage_cap : 64;
	uint8_t *p;

	if (need <= r->stage_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > limit)
		cap = limit;
	p = realloc(r->stage, cap);
	if (!p) {
		r->in_buffer = false;
		rd_fail(r, FDRTRACE_E_NOMEM, r->pos, "out of memory staging %zu bytes", need);
		return -ENOMEM;
	}
	r->stage = p;
	r->stage_cap = cap;
	return 0;
}

/*
 * Make the first @n bytes of the current item contiguous at *@p.
 * Return: 0; RD_ENDED when the input ended first (r->stage_len bytes of the
 * item exist); -EAGAIN when a memory reader needs more; -EIO or -ENOMEM
 * with the error set.
 */
static int rd_fetch(struct fdrtrace_reader *r, size_t n, const uint8_t **p)
{
	for (;;) {
		size_t avail = r->src_len - r->src_pos;
		int ret;

		if (r->stage_len == 0 && avail >= n) {
			*p = r->src + r->src_pos;
			return 0;
		}
		if (r->stage_len >= n) {
			*p = r->stage;
			return 0;
		}
		if (avail) {
			size_t take = n - r->stage_len;

			if (take > avail)
				take = avail;
			/* Grow only by what has arrived: sizes cannot force a big allocation. */
			ret = rd_stage_reserve(r, r->stage_len + take, n);
			if (ret)
				return ret;
			memcpy(r->stage + r->stage_len, r->src + r->src_pos, take);
			r->stage_len += take;
			r->src_pos += take;
			continue;
		}
		ret = rd_refill(r);
		if (ret)
			return ret;
	}
}

/* The current item (@n bytes) is done: move past it. */
static void rd_consume(struct fdrtrace_reader *r, size_t n)
{
	if (r->stage_len)
		r->stage_len = 0;	/* staged exactly n bytes */
	else
		r->src_pos += n;
	r->pos += n;
}

/* ------------------------------------------------------------------ */
/* Events                                                               */
/* ------------------------------------------------------------------ */

static void rd_event(struct fdrtrace_reader *r, struct fdrtrace_event *ev,
		     enum fdrtrace_event_type type, const uint8_t *raw, size_t len)
{
	ev->state = FDRTRACE_OK;
	ev->offset = r->pos;
	ev->serial = r->serial++;
	ev->size = len;
	ev->type = type;
	ev->version = r->version;
	ev->tsc = r->tsc;
	ev->wall_ns = rd_wall_ns(r, r->tsc);
	ev->tid = r->tid;
	ev->pid = r->pid;
	ev->cpu = r->cpu;
	ev->buffer = r->buffers ? r->buffers - 1 : 0;
	ev->raw = raw;
	ev->raw_len = len;
}

/* Forget the previous buffer: a new one starts at r->pos. */
static void rd_start_buffer(struct fdrtrace_reader *r)
{
	r->buffers++;
	r->tid = 0;
	r->pid = 0;
	r->cpu = 0;
	r->tsc = 0;
	r->have_ref = false;
	r->first_ref = 0;
	r->have_wall = false;
	r->wall_sec = 0;
	r->wall_usec = 0;
}

static void rd_set_ref(struct fdrtrace_reader *r, uint64_t tsc)
{
	r->tsc = tsc;
	if (!r->have_ref) {
		r->have_ref = true;
		r->first_ref = tsc;
	}
}

static enum rd_step rd_header(struct fdrtrace_reader *r, struct fdrtrace_event *ev)
{
	const size_t len = sizeof(struct fdrtrace_file_header);
	const uint8_t *p;
	int ret;

	ret = rd_fetch(r, len, &p);
	if (ret == RD_ENDED)
		return rd_truncated(r, "file header");
	if (ret)
		return STEP_STOP;
	memcpy(&r->hdr, p, len);
	{
		static const uint8_t zero[sizeof(struct fdrtrace_file_header)];

		/* a file of zeros is no log at all, not a basic-mode one (type 0) */
		if (!memcmp(p, zero, len))
			return rd_fail(r, FDRTRACE_E_BAD_HEADER, 0,
				       "not an XRay trace: its %zu-byte file header is all zeros", len);
	}
	if (r->hdr.type == FDRTRACE_LOG_BASIC)
		return rd_fail(r, FDRTRACE_E_UNSUPPORTED, 2,
			       "XRay basic-mode log (type 0): not supported; fdrtrace reads FDR traces (type 1)");
	if (r->hdr.type != FDRTRACE_LOG_FDR)
		return rd_fail(r, FDRTRACE_E_BAD_HEADER, 2,
			       "unknown log type %u (expected 1, an FDR trace)", r->hdr.type);
	if (r->hdr.version < FDRTRACE_FDR_VERSION_MIN || r->hdr.version > FDRTRACE_FDR_VERSION_MAX)
		return rd_fail(r, FDRTRACE_E_UNSUPPORTED, 0,
			       "FDR version %u: not supported (this reader reads versions %u to %u)",
			       r->hdr.version, FDRTRACE_FDR_VERSION_MIN, FDRTRACE_FDR_VERSION_MAX);
	if (r->hdr.version == 1 &&
	    (r->hdr.buffer_size < RD_V1_BUFFER_MIN || r->hdr.buffer_size > RD_V1_BUFFER_MAX))
		return rd_fail(r, FDRTRACE_E_BAD_HEADER, 16,
			       "version 1 buffer_size %llu out of range (%u to %llu bytes)",
			       (unsigned long long)r->hdr.buffer_size, RD_V1_BUFFER_MIN,
			       (unsigned long long)RD_V1_BUFFER_MAX);
	/*
	 * No tick rate, no time: every duration would be made up (ticks taken
	 * for nanoseconds, or a division by zero). LLVM's XRay runtime writes
	 * 1000000000 (its clock_gettime() counter) when it cannot find the
	 * TSC's rate, and fdrtrace's runtime falls back the same way: only a
	 * damaged or hand-made header holds 0.
	 */
	if (!r->hdr.cycle_frequency)
		return rd_fail(r, FDRTRACE_E_BAD_HEADER, 8,
			       "cycle_frequency 0: the header gives no tick rate, so no time in "
			       "the trace can be computed");
	r->version = r->hdr.version;
	r->kinds = rd_version_kinds[r->version];

	rd_event(r, ev, FDRTRACE_EV_HEADER, p, len);
	ev->u.header.version = r->hdr.version;
	ev->u.header.type = r->hdr.type;
	ev->u.header.bitfield = r->hdr.bitfield;
	ev->u.header.cycle_frequency = r->hdr.cycle_frequency;
	ev->u.header.buffer_size = r->hdr.buffer_size;
	rd_consume(r, len);
	r->state = S_BETWEEN;
	return STEP_EVENT;
}

/* Version 1: the bytes after EndOfBuffer, in pieces of at most FDRTRACE_READER_PADDING_PIECE. */
static enum rd_step rd_padding(struct fdrtrace_reader *r, struct fdrtrace_event *ev)
{
	uint64_t left = r->buf_end - r->pos;
	size_t n = left < FDRTRACE_READER_PADDING_PIECE ? (size_t)left : FDRTRACE_READER_PADDING_PIECE;
	const uint8_t *p;
	int ret;

	ret = rd_fetch(r, n, &p);
	if (ret == RD_ENDED)
		return rd_truncated(r, "padding");
	if (ret)
		return STEP_STOP;
	rd_event(r, ev, FDRTRACE_EV_PADDING, p, n);
	rd_consume(r, n);
	return STEP_EVENT;
}

/* Discard the rest of a damaged buffer (after fdrtrace_reader_skip_buffer()). */
static enum rd_step rd_skip(struct fdrtrace_reader *r)
{
	for (;;) {
		uint64_t left = r->buf_end - r->pos;
		size_t avail;
		int ret;

		if (r->stage_len) {
			size_t drop = r->stage_len <= left ? r->stage_len : (size_t)left;

			/* Bytes staged past the end are the start of the next item. */
			memmove(r->stage, r->stage + drop, r->stage_len - drop);
			r->stage_len -= drop;
			r->pos += drop;
			left -= drop;
		}
		avail = r->src_len - r->src_pos;
		if (left && avail) {
			size_t drop = avail <= left ? avail : (size_t)left;

			r->src_pos += drop;
			r->pos += drop;
			left -= drop;
		}
		if (!left) {
			r->in_buffer = false;
			r->state = S_BETWEEN;
			return STEP_AGAIN;
		}
		ret = rd_refill(r);
		if (ret == RD_ENDED)
			return rd_truncated(r, "a skipped buffer");
		if (ret)
			return STEP_STOP;
	}
}

static enum rd_step rd_function(struct fdrtrace_reader *r, struct fdrtrace_event *ev,
				const uint8_t *p, unsigned kind)
{
	uint32_t word = rd_le32(p);
	uint32_t delta = rd_le32(p + 4);

	r->tsc += delta;
	rd_event(r, ev, FDRTRACE_EV_FUNCTION, p, FDRTRACE_FUNC_RECORD_SIZE);
	ev->u.func.action = (enum fdrtrace_func_action)fdrtrace_func_word_action(word);
	ev->u.func.func_id = fdrtrace_func_word_id(word);
	ev->u.func.delta = delta;
	rd_consume(r, FDRTRACE_FUNC_RECORD_SIZE);
	r->state = rd_next_state[kind];
	return STEP_EVENT;
}

/* Custom and typed events: the marker, then the payload it announces. */
static enum rd_step rd_payload_event(struct fdrtrace_reader *r, struct fdrtrace_event *ev,
				     const uint8_t *p, unsigned kind)
{
	const char *name = rd_kind_names[kind];
	struct fdr_walk_rec rec;
	int32_t size;
	uint64_t room;
	size_t total;
	int ret;

	if (fdr_walk_payload(p, &rec))
		return rd_fail(r, FDRTRACE_E_BAD_SIZE, r->pos, "%s with a negative size (%d)", name,
			       (int32_t)rd_le32(p + 1));
	size = (int32_t)rec.payload;
	if ((uint32_t)size > FDRTRACE_READER_MAX_PAYLOAD)
		return rd_fail(r, FDRTRACE_E_BAD_SIZE, r->pos,
			       "%s of %d bytes exceeds the reader's limit of %u bytes", name, size,
			       FDRTRACE_READER_MAX_PAYLOAD);
	room = r->buf_end - r->pos - FDRTRACE_METADATA_RECORD_SIZE;
	if ((uint64_t)size > room)
		return rd_fail(r, FDRTRACE_E_OVERRUN, r->pos,
			       "%s payload of %d bytes crosses the end of the buffer at offset %llu (%llu bytes left)",
			       name, size, (unsigned long long)r->buf_end, (unsigned long long)room);

	total = FDRTRACE_METADATA_RECORD_SIZE + (size_t)size;
	ret = rd_fetch(r, total, &p);
	if (ret == RD_ENDED)
		return rd_truncated(r, name);
	if (ret)
		return STEP_STOP;

	if (kind == FDRTRACE_MD_TYPED_EVENT || r->version >= 5) {
		int32_t delta = (int32_t)rd_le32(p + 5);

		/* A signed delta that moves the reference, as a function record's. */
		r->tsc += (uint64_t)(int64_t)delta;
		rd_event(r, ev, rd_kind_event[kind], p, total);
		ev->u.event.delta = delta;
		if (kind == FDRTRACE_MD_TYPED_EVENT)
			ev->u.event.event_type = rd_le16(p + 9);
	} else {
		/*
		 * Versions 1 to 4 carry an absolute TSC (and, in 4, a CPU) that
		 * belong to this event only; as in LLVM's expander, neither the
		 * TSC reference nor the buffer's CPU changes.
		 */
		rd_event(r, ev, rd_kind_event[kind], p, total);
		ev->tsc = rd_le64(p + 5);
		ev->wall_ns = rd_wall_ns(r, ev->tsc);
		if (r->version >= 4)
			ev->cpu = rd_le16(p + 13);
	}
	ev->u.event.size = (uint32_t)size;
	ev->u.event.data = p + FDRTRACE_METADATA_RECORD_SIZE;
	rd_consume(r, total);
	r->state = rd_next_state[kind];
	return STEP_EVENT;
}

static enum rd_step rd_metadata(struct fdrtrace_reader *r, struct fdrtrace_event *ev,
				const uint8_t *p, unsigned kind)
{
	const size_t len = FDRTRACE_METADATA_RECORD_SIZE;
	enum fdrtrace_event_type type = rd_kind_event[kind];

	switch (kind) {
	case FDRTRACE_MD_BUFFER_EXTENTS: {
		uint64_t size = rd_le64(p + 1);

		if (size > UINT64_MAX - r->pos - len)
			return rd_fail(r, FDRTRACE_E_BAD_SIZE, r->pos,
				       "BufferExtents size %llu is impossible",
				       (unsigned long long)size);
		rd_start_buffer(r);
		r->in_buffer = true;
		r->buf_start = r->pos;
		r->buf_end = r->pos + len + size;
		rd_event(r, ev, type, p, len);
		ev->u.extents.size = size;
		break;
	}
	case FDRTRACE_MD_NEW_BUFFER:
		if (r->version == 1)
			rd_start_buffer(r);
		r->tid = (int32_t)rd_le32(p + 1);
		rd_event(r, ev, type, p, len);
		break;
	case FDRTRACE_MD_WALLTIME:
		r->have_wall = true;
		r->wall_sec = rd_le64(p + 1);
		r->wall_usec = rd_le32(p + 9);
		rd_event(r, ev, type, p, len);
		ev->u.walltime.seconds = r->wall_sec;
		ev->u.walltime.micros = r->wall_usec;
		break;
	case FDRTRACE_MD_PID:
		r->pid = (int32_t)rd_le32(p + 1);
		rd_event(r, ev, type, p, len);
		break;
	case FDRTRACE_MD_NEW_CPU_ID:
		r->cpu = rd_le16(p + 1);
		rd_set_ref(r, rd_le64(p + 3));
		rd_event(r, ev, type, p, len);
		ev->u.ref.cpu = r->cpu;
		ev->u.ref.tsc = r->tsc;
		break;
	case FDRTRACE_MD_TSC_WRAP:
		rd_set_ref(r, rd_le64(p + 1));
		rd_event(r, ev, type, p, len);
		ev->u.ref.tsc = r->tsc;
		break;
	case FDRTRACE_MD_CALL_ARGUMENT:
		rd_event(r, ev, type, p, len);
		ev->u.arg.arg = rd_le64(p + 1);
		break;
	case FDRTRACE_MD_END_OF_BUFFER:
	default:
		rd_event(r, ev, type, p, len);
		break;
	}
	rd_consume(r, len);
	r->state = rd_next_state[kind];
	return STEP_EVENT;
}

static enum rd_step rd_record(struct fdrtrace_reader *r, struct fdrtrace_event *ev)
{
	unsigned allowed = rd_expected(r);
	struct fdr_walk_rec rec;
	const uint8_t *p;
	unsigned kind;
	size_t len;
	int ret, n;

	ret = rd_fetch(r, 1, &p);
	if (ret == RD_ENDED) {
		if (r->state == S_BETWEEN && r->stage_len == 0) {
			r->state = S_EOF;
			return STEP_STOP;
		}
		return rd_truncated(r, "a record");
	}
	if (ret)
		return STEP_STOP;

	/* Version 1 buffers have a fixed size from their first byte. */
	if (r->state == S_BETWEEN && r->version == 1) {
		r->in_buffer = true;
		r->buf_start = r->pos;
		r->buf_end = r->pos + r->hdr.buffer_size;
	}

	/* What the first byte says, by the rules every walker shares (fdr_walk.h). */
	n = fdr_walk_head(p[0], &rec);
	if (n < 0 && rec.kind == FDR_WALK_FUNCTION)
		return rd_fail(r, FDRTRACE_E_BAD_KIND, r->pos,
			       "unknown function record action %u (byte 0x%02x)", rec.action, p[0]);
	if (n < 0)
		return rd_fail(r, FDRTRACE_E_BAD_KIND, r->pos,
			       "unknown metadata record kind %u (byte 0x%02x)", rec.kind, p[0]);
	len = (size_t)n;
	if (rec.kind != FDR_WALK_FUNCTION)
		kind = rec.kind;
	else
		kind = rec.action == FDRTRACE_FN_ENTRY_ARGS ? RK_FUNCTION_ARGS : RK_FUNCTION;
	if (!(allowed & RK(kind)))
		return rd_grammar_fail(r, allowed, kind);
	if (r->in_buffer && len > r->buf_end - r->pos)
		return rd_fail(r, FDRTRACE_E_OVERRUN, r->pos,
			       "%s record of %zu bytes crosses the end of the buffer at offset %llu (%llu bytes left)",
			       rd_kind_names[kind], len, (unsigned long long)r->buf_end,
			       (unsigned long long)(r->buf_end - r->pos));

	ret = rd_fetch(r, len, &p);
	if (ret == RD_ENDED)
		return rd_truncated(r, rd_kind_names[kind]);
	if (ret)
		return STEP_STOP;

	if (kind == RK_FUNCTION || kind == RK_FUNCTION_ARGS)
		return rd_function(r, ev, p, kind);
	if (fdr_walk_has_payload(kind))
		return rd_payload_event(r, ev, p, kind);
	return rd_metadata(r, ev, p, kind);
}

static enum rd_step rd_step(struct fdrtrace_reader *r, struct fdrtrace_event *ev)
{
	switch (r->state) {
	case S_EOF:
	case S_ERROR:
		return STEP_STOP;
	case S_HEADER:
		return rd_header(r, ev);
	case S_SKIPPING:
		return rd_skip(r);
	default:
		break;
	}

	if (r->in_buffer && r->pos == r->buf_end) {
		unsigned allowed = rd_expected(r);

		if (!(allowed & RK(RK_END)))
			return rd_grammar_fail(r, allowed, RK_END);
		r->in_buffer = false;
		r->state = S_BETWEEN;
	}
	if (r->state == S_END_OF_BUFFER)
		return rd_padding(r, ev);
	return rd_record(r, ev);
}

/* ------------------------------------------------------------------ */
/* API                                                                  */
/* ------------------------------------------------------------------ */

rd_export int fdrtrace_reader_read(struct fdrtrace_reader *r, struct fdrtrace_event *ev)
{
	enum rd_step step;

	memset(ev, 0, sizeof(*ev));
	do
		step = rd_step(r, ev);
	while (step == STEP_AGAIN);
	if (step == STEP_EVENT)
		return 0;
	if (r->state == S_EOF)
		ev->state = FDRTRACE_EOF;
	else if (r->state == S_ERROR)
		ev->state = FDRTRACE_ERROR;
	else
		ev->state = FDRTRACE_REQUIRE_DATA;
	return -1;
}

rd_export int fdrtrace_reader_skip_buffer(struct fdrtrace_reader *r)
{
	if (r->state != S_ERROR || !r->err_skippable)
		return -ENOENT;
	r->err = FDRTRACE_E_NONE;
	r->err_offset = 0;
	r->errmsg[0] = '\0';
	r->err_skippable = false;
	r->state = S_SKIPPING;
	return 0;
}

rd_export int fdrtrace_reader_set_offset(struct fdrtrace_reader *r, uint64_t offset)
{
	if (r->state != S_BETWEEN || r->stage_len || r->src_pos != r->src_len)
		return -EBUSY;
	r->pos = offset;
	return 0;
}

rd_export const struct fdrtrace_file_header *fdrtrace_reader_header(const struct fdrtrace_reader *r)
{
	return r->version ? &r->hdr : NULL;
}

