/* SPDX-License-Identifier: MIT */
/*
 * common/fdr_walk.h - step over one record of an FDR buffer: what it is and
 * how many bytes it takes (docs/format.md section 2).
 *
 * The rules every walker of records shares, in one place: the first byte's
 * low bit tells a function record (8 bytes) from a metadata record (16
 * bytes); a metadata kind beyond the known ones, or a function action
 * beyond Entry_Args, is not a record we can size; a custom or typed event
 * marker is followed by its payload, whose size (i32 at byte 1) must not be
 * negative. The reader (tools/reader/parser.c) uses the pieces, as it
 * streams with refills; the runtime's walkers of its own buffers
 * (runtime/file/trace_file.c, runtime/record/ring.c) use fdr_walk_next() on contiguous bytes.
 *
 * Contract: everything is static inline and always inlined, calls nothing
 * but memcpy (a builtin) and is never instrumented, so the runtime may use
 * it anywhere, signal handlers included; it reads only the bytes it is
 * given. Only stdint.h, string.h, errno.h and the format's declarations.
 */
#ifndef FDR_COMMON_FDR_WALK_H
#define FDR_COMMON_FDR_WALK_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <fdrtrace/format.h>

#define FDR_WALK_FN static inline __attribute__((always_inline, no_instrument_function))

/* rec->kind of a function record: above any kind a metadata byte can hold (7 bits). */
#define FDR_WALK_FUNCTION 0x80u

/**
 * struct fdr_walk_rec - one record, as the walker found it
 * @kind: enum fdrtrace_md_kind (unknown ones too: byte 0 >> 1), or
 *	FDR_WALK_FUNCTION
 * @action: a function record's enum fdrtrace_func_action
 * @payload: a custom or typed event's payload bytes (after the marker)
 */
struct fdr_walk_rec {
	unsigned kind;
	unsigned action;
	uint32_t payload;
};

/**
 * fdr_walk_head - what record starts with byte @b0
 * @b0: the record's first byte
 * @rec: its kind and action are set, also when it is not known
 *
 * Return: the record's fixed size (FDRTRACE_FUNC_RECORD_SIZE or
 * FDRTRACE_METADATA_RECORD_SIZE; an event's payload comes on top), or
 * -EPROTO for a metadata kind or a function action this format does not
 * have.
 */
FDR_WALK_FN int fdr_walk_head(uint8_t b0, struct fdr_walk_rec *rec)
{
	rec->payload = 0;
	if (b0 & 1) {
		rec->kind = b0 >> 1;
		rec->action = 0;
		return rec->kind < FDRTRACE_MD_KIND_COUNT ? FDRTRACE_METADATA_RECORD_SIZE : -EPROTO;
	}
	rec->kind = FDR_WALK_FUNCTION;
	rec->action = fdrtrace_func_word_action(b0);
	return rec->action <= FDRTRACE_FN_ENTRY_ARGS ? FDRTRACE_FUNC_RECORD_SIZE : -EPROTO;
}

/* Whether a record of @kind is followed by a payload (custom and typed events, FDRx). */
FDR_WALK_FN int fdr_walk_has_payload(unsigned kind)
{
	return kind == FDRTRACE_MD_CUSTOM_EVENT || kind == FDRTRACE_MD_TYPED_EVENT;
}

/**
 * fdr_walk_payload - the payload size an event marker announces
 * @marker: the marker's FDRTRACE_METADATA_RECORD_SIZE bytes
 * @rec: its @payload is set
 *
 * Return: 0, or -EBADMSG when the size is negative (no record is that).
 */
FDR_WALK_FN int fdr_walk_payload(const uint8_t *marker, struct fdr_walk_rec *rec)
{
	int32_t size;

	memcpy(&size, marker + 1, sizeof(size));
	if (size < 0)
		return -EBADMSG;
	rec->payload = (uint32_t)size;
	return 0;
}

/**
 * fdr_walk_next - step over the record at @p
 * @p: the record's first byte
 * @avail: the bytes from @p on (at least 1)
 * @rec: filled in
 *
 * Return: the bytes the record takes, its payload included; -ENODATA when
 * it (or its payload) runs past @avail: a truncated record; -EBADMSG when
 * an event's size is negative; -EPROTO for an unknown kind or action.
 */
FDR_WALK_FN long fdr_walk_next(const uint8_t *p, size_t avail, struct fdr_walk_rec *rec)
{
	int n = fdr_walk_head(p[0], rec);

	if (n < 0)
		return n;
	if (avail < (size_t)n)
		return -ENODATA;
	if (!fdr_walk_has_payload(rec->kind))
		return n;
	if (fdr_walk_payload(p, rec))
		return -EBADMSG;
	if (rec->payload > avail - (size_t)n)
		return -ENODATA;
	return n + (long)rec->payload;
}

#endif /* FDR_COMMON_FDR_WALK_H */
