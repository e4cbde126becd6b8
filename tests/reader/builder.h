/* SPDX-License-Identifier: MIT */
/*
 * builder.h - a test-only FDR trace builder: appends file headers, records
 * and payloads to a growing byte array, so that tests can write traces of
 * every version (valid or deliberately broken) byte by byte.
 *
 * Contract: test code only; aborts on allocation failure. Every append
 * returns the offset at which the bytes were written.
 */
#ifndef FDR_TEST_BUILDER_H
#define FDR_TEST_BUILDER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fdrtrace/format.h>

struct tb {
	uint8_t *data;
	size_t len;
	size_t cap;
};

static inline size_t tb_bytes(struct tb *b, const void *p, size_t n)
{
	size_t at = b->len;

	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + n)
			cap *= 2;
		b->data = realloc(b->data, cap);
		if (!b->data)
			abort();
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return at;
}

static inline void tb_free(struct tb *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static inline size_t tb_header(struct tb *b, uint16_t version, uint16_t type, uint64_t freq,
			       uint64_t buffer_size)
{
	struct fdrtrace_file_header h = {
		.version = version,
		.type = type,
		.bitfield = FDRTRACE_HDR_CONSTANT_TSC | FDRTRACE_HDR_NONSTOP_TSC,
		.cycle_frequency = freq,
		.buffer_size = buffer_size,
	};

	return tb_bytes(b, &h, sizeof(h));
}

/* A metadata record: type byte, @n bytes of @data at offset 1, zeros after. */
static inline size_t tb_md(struct tb *b, unsigned kind, const void *data, size_t n)
{
	uint8_t rec[16] = { FDRTRACE_MD_TYPE_BYTE(kind) };

	if (n)
		memcpy(rec + 1, data, n);
	return tb_bytes(b, rec, sizeof(rec));
}

static inline size_t tb_extents(struct tb *b, uint64_t size)
{
	return tb_md(b, FDRTRACE_MD_BUFFER_EXTENTS, &size, sizeof(size));
}

/* Set the BufferExtents at @at to cover everything appended after it. */
static inline void tb_close_extents(struct tb *b, size_t at)
{
	uint64_t size = b->len - at - 16;

	memcpy(b->data + at + 1, &size, sizeof(size));
}

static inline size_t tb_new_buffer(struct tb *b, int32_t tid)
{
	return tb_md(b, FDRTRACE_MD_NEW_BUFFER, &tid, sizeof(tid));
}

static inline size_t tb_walltime(struct tb *b, uint64_t sec, uint32_t usec)
{
	uint8_t d[12];

	memcpy(d, &sec, 8);
	memcpy(d + 8, &usec, 4);
	return tb_md(b, FDRTRACE_MD_WALLTIME, d, sizeof(d));
}

static inline size_t tb_pid(struct tb *b, int32_t pid)
{
	return tb_md(b, FDRTRACE_MD_PID, &pid, sizeof(pid));
}

static inline size_t tb_new_cpu(struct tb *b, uint16_t cpu, uint64_t tsc)
{
	uint8_t d[10];

	memcpy(d, &cpu, 2);
	memcpy(d + 2, &tsc, 8);
	return tb_md(b, FDRTRACE_MD_NEW_CPU_ID, d, sizeof(d));
}

static inline size_t tb_tsc_wrap(struct tb *b, uint64_t tsc)
{
	return tb_md(b, FDRTRACE_MD_TSC_WRAP, &tsc, sizeof(tsc));
}

static inline size_t tb_arg(struct tb *b, uint64_t arg)
{
	return tb_md(b, FDRTRACE_MD_CALL_ARGUMENT, &arg, sizeof(arg));
}

static inline size_t tb_eob(struct tb *b)
{
	return tb_md(b, FDRTRACE_MD_END_OF_BUFFER, NULL, 0);
}

static inline size_t tb_func(struct tb *b, enum fdrtrace_func_action action, uint32_t id,
			     uint32_t delta)
{
	struct fdrtrace_func_record f = { fdrtrace_func_word(action, id), delta };

	return tb_bytes(b, &f, sizeof(f));
}

/* Custom event, versions 1..3 (size, absolute TSC), then the payload. */
static inline size_t tb_custom_v1(struct tb *b, int32_t size, uint64_t tsc, const void *payload,
				  size_t n)
{
	uint8_t d[12];
	size_t at;

	memcpy(d, &size, 4);
	memcpy(d + 4, &tsc, 8);
	at = tb_md(b, FDRTRACE_MD_CUSTOM_EVENT, d, sizeof(d));
	tb_bytes(b, payload, n);
	return at;
}

/* Custom event, version 4 (size, absolute TSC, CPU), then the payload. */
static inline size_t tb_custom_v4(struct tb *b, int32_t size, uint64_t tsc, uint16_t cpu,
				  const void *payload, size_t n)
{
	uint8_t d[14];
	size_t at;

	memcpy(d, &size, 4);
	memcpy(d + 4, &tsc, 8);
	memcpy(d + 12, &cpu, 2);
	at = tb_md(b, FDRTRACE_MD_CUSTOM_EVENT, d, sizeof(d));
	tb_bytes(b, payload, n);
	return at;
}

/* Custom event, version 5 (size, TSC delta), then the payload. */
static inline size_t tb_custom_v5(struct tb *b, int32_t size, int32_t delta, const void *payload,
				  size_t n)
{
	uint8_t d[8];
	size_t at;

	memcpy(d, &size, 4);
	memcpy(d + 4, &delta, 4);
	at = tb_md(b, FDRTRACE_MD_CUSTOM_EVENT, d, sizeof(d));
	tb_bytes(b, payload, n);
	return at;
}

/* Typed event, version 5 (size, TSC delta, event type), then the payload. */
static inline size_t tb_typed(struct tb *b, int32_t size, int32_t delta, uint16_t type,
			      const void *payload, size_t n)
{
	uint8_t d[10];
	size_t at;

	memcpy(d, &size, 4);
	memcpy(d + 4, &delta, 4);
	memcpy(d + 8, &type, 2);
	at = tb_md(b, FDRTRACE_MD_TYPED_EVENT, d, sizeof(d));
	tb_bytes(b, payload, n);
	return at;
}

/* Append @byte until the array is @len bytes long (version 1 padding). */
static inline size_t tb_fill_to(struct tb *b, size_t len, uint8_t byte)
{
	size_t at = b->len;

	while (b->len < len)
		tb_bytes(b, &byte, 1);
	return at;
}

#endif /* FDR_TEST_BUILDER_H */
