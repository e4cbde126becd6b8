/* SPDX-License-Identifier: MIT */
/*
 * common/fdrx_schema.h - the FDRx table (fdrx.def) as data: one descriptor
 * per field, in body order, for the code that walks bodies field by field.
 *
 * Contract: for the tools and the tests (it needs struct fdrtrace_ext from
 * fdrtrace/reader.h); not for the runtime. Everything here is static and
 * constant: each includer gets its own copy of the descriptors, a few
 * hundred bytes. The checks below make the build fail when a row of the
 * table and the member of struct fdrtrace_ext it fills disagree in size,
 * or a kind's number differs from enum fdrtrace_ext_kind.
 */
#ifndef FDR_COMMON_FDRX_SCHEMA_H
#define FDR_COMMON_FDRX_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

/* What a descriptor describes (fdrx.def names the rows). */
enum fdrx_type {
	FDRX_T_END,		/* the kind has no more fields */
	FDRX_T_U8,
	FDRX_T_U16,
	FDRX_T_U32,
	FDRX_T_U64,
	FDRX_T_STR,		/* u16 length, bytes */
	FDRX_T_BYTES8,		/* u8 length, bytes */
	FDRX_T_ARRAY,		/* u32 count, count elements */
	FDRX_T_PAIRS,		/* u16 count, count (string, string) */
	FDRX_T_SINCE,		/* a group of later writers' fields (not a field) */
	FDRX_T_VARIANT,		/* a group of another form's fields (not a field) */
};

/* How text gives a value; for an array, what its elements are. */
enum fdrx_show {
	FDRX_S_DEC,
	FDRX_S_HEX,
	FDRX_S_SIGNED,
	FDRX_S_UNKNOWN,
	FDRX_S_REASON,
	FDRX_S_HOW,
	FDRX_S_WHY,
	FDRX_S_END,
	FDRX_S_ID,		/* array element: u32 */
	FDRX_S_FRAME,		/* array element: u64 address, u32 module */
	FDRX_S_COUNT,		/* array element: u32 function id, u64 calls */
};

/**
 * struct fdrx_field - one row of fdrx.def
 * @key: the text key (an array's elements; NULL for pairs and groups)
 * @count_key: an array's count
 * @type: enum fdrx_type
 * @show: enum fdrx_show
 * @min: a group: the bytes that must be left for it to be there
 * @off: offset in struct fdrtrace_ext of the value (an array's or a
 *	pair list's count, a byte string's length, a group's flag; -1: a
 *	group without a flag)
 * @data: offset of the pointer to an array's, pairs' or bytes' data
 * @data_len: offset of the pairs' byte count
 */
struct fdrx_field {
	const char *key;
	const char *count_key;
	uint8_t type;
	uint8_t show;
	uint16_t min;
	int16_t off;
	int16_t data;
	int16_t data_len;
};

#define FDRX_OFF(kind, field) ((int16_t)offsetof(struct fdrtrace_ext, u.kind.field))

#define FDRX_KIND(num, NAME, name) static const struct fdrx_field fdrx_fields_##name[] = {
#define FDRX_FIELD(kind, field, t, s)                                                              \
	{ .key = #field, .type = FDRX_T_##t, .show = FDRX_S_##s,                                   \
	  .off = FDRX_OFF(kind, field) },
#define FDRX_STR(kind, field) { .key = #field, .type = FDRX_T_STR, .off = FDRX_OFF(kind, field) },
#define FDRX_BYTES8(kind, len, field)                                                              \
	{ .key = #field, .type = FDRX_T_BYTES8, .off = FDRX_OFF(kind, len),                        \
	  .data = FDRX_OFF(kind, field) },
#define FDRX_ARRAY(kind, count, field, key_, elem)                                                 \
	{ .key = #key_, .count_key = #count, .type = FDRX_T_ARRAY, .show = FDRX_S_##elem,          \
	  .off = FDRX_OFF(kind, count), .data = FDRX_OFF(kind, field) },
#define FDRX_PAIRS(kind, count, data_, len)                                                        \
	{ .type = FDRX_T_PAIRS, .off = FDRX_OFF(kind, count), .data = FDRX_OFF(kind, data_),       \
	  .data_len = FDRX_OFF(kind, len) },
#define FDRX_SINCE(kind, flag, min_)                                                               \
	{ .type = FDRX_T_SINCE, .min = (min_), .off = FDRX_OFF(kind, flag) },
#define FDRX_SINCE_UNFLAGGED(kind, min_) { .type = FDRX_T_SINCE, .min = (min_), .off = -1 },
#define FDRX_VARIANT(kind, flag, min_)                                                             \
	{ .type = FDRX_T_VARIANT, .min = (min_), .off = FDRX_OFF(kind, flag) },
#define FDRX_END(kind) { .type = FDRX_T_END } };
#include "fdrx.def"

/**
 * struct fdrx_kind - one kind of fdrx.def
 * @name: its text name ("process", ...); NULL for a number not in the table
 * @fields: its fields, ended by FDRX_T_END
 */
struct fdrx_kind {
	const char *name;
	const struct fdrx_field *fields;
};

#define FDRX_KIND(num, NAME, name) [num] = { #name, fdrx_fields_##name },
static const struct fdrx_kind fdrx_kinds[FDRTRACE_EXT_KIND_COUNT] = {
#include "fdrx.def"
};

/* The table and the public declarations agree (format.h, reader.h). */
#define FDRX_W_U8 1
#define FDRX_W_U16 2
#define FDRX_W_U32 4
#define FDRX_W_U64 8
#define FDRX_MEMBER(kind, field) (((struct fdrtrace_ext *)0)->u.kind.field)
#define FDRX_KIND(num, NAME, name)                                                                 \
	_Static_assert(FDRTRACE_EXT_##NAME == (num), #NAME ": its number in format.h");
#define FDRX_FIELD(kind, field, t, s)                                                              \
	_Static_assert(sizeof(FDRX_MEMBER(kind, field)) == FDRX_W_##t,                          \
		       #kind "." #field ": its size in struct fdrtrace_ext");
#define FDRX_STR(kind, field)                                                                      \
	_Static_assert(sizeof(FDRX_MEMBER(kind, field)) == sizeof(struct fdrtrace_str),            \
		       #kind "." #field ": a struct fdrtrace_str");
#define FDRX_BYTES8(kind, len, field)                                                              \
	_Static_assert(sizeof(FDRX_MEMBER(kind, len)) == 1, #kind "." #len ": a u8");
#define FDRX_ARRAY(kind, count, field, key, elem)                                                  \
	_Static_assert(sizeof(FDRX_MEMBER(kind, count)) == 4, #kind "." #count ": a u32");
#define FDRX_PAIRS(kind, count, data, len)                                                         \
	_Static_assert(sizeof(FDRX_MEMBER(kind, count)) == 2, #kind "." #count ": a u16");         \
	_Static_assert(sizeof(FDRX_MEMBER(kind, len)) == 2, #kind "." #len ": a u16");
#define FDRX_SINCE(kind, flag, min)                                                                \
	_Static_assert(sizeof(FDRX_MEMBER(kind, flag)) == sizeof(bool), #kind "." #flag ": a bool");
#define FDRX_VARIANT(kind, flag, min) FDRX_SINCE(kind, flag, min)
#include "fdrx.def"
#undef FDRX_MEMBER

/* Bytes of one array element (enum fdrx_show FDRX_S_ID, _FRAME, _COUNT). */
static inline size_t fdrx_elem_size(unsigned show)
{
	return show == FDRX_S_ID ? 4 : show == FDRX_S_FRAME ? FDRTRACE_NATIVE_FRAME_SIZE : 4 + 8;
}

/* The names a u8 shown by name takes (fdrtrace/reader.h), or NULL. */
static inline const char *(*fdrx_namer(unsigned show))(unsigned)
{
	switch (show) {
	case FDRX_S_REASON:
		return fdrtrace_drop_reason_name;
	case FDRX_S_HOW:
		return fdrtrace_close_how_name;
	case FDRX_S_WHY:
		return fdrtrace_native_why_name;
	case FDRX_S_END:
		return fdrtrace_end_name;
	default:
		return NULL;
	}
}

/* The fields of @kind, or NULL for a kind the table does not have. */
static inline const struct fdrx_field *fdrx_fields(unsigned kind)
{
	return kind < FDRTRACE_EXT_KIND_COUNT ? fdrx_kinds[kind].fields : NULL;
}

/* Bytes of a scalar field's value; 0 for the other types. */
static inline unsigned fdrx_width(unsigned type)
{
	switch (type) {
	case FDRX_T_U8:
		return 1;
	case FDRX_T_U16:
		return 2;
	case FDRX_T_U32:
		return 4;
	case FDRX_T_U64:
		return 8;
	default:
		return 0;
	}
}

/*
 * A scalar field's value in a decoded @ext, @width bytes at @off. The
 * host is little-endian (x86-64), as the format: the low bytes of a u64
 * are the narrower integer.
 */
static inline uint64_t fdrx_get(const struct fdrtrace_ext *ext, int off, unsigned width)
{
	uint64_t v = 0;

	memcpy(&v, (const uint8_t *)ext + off, width);
	return v;
}

/* Store the low @width bytes of @v as the field at @off of @ext. */
static inline void fdrx_set(struct fdrtrace_ext *ext, int off, unsigned width, uint64_t v)
{
	memcpy((uint8_t *)ext + off, &v, width);
}

/* Whether the group @g of a decoded @ext is there (its flag). */
static inline bool fdrx_group_present(const struct fdrtrace_ext *ext, const struct fdrx_field *g)
{
	bool b;

	if (g->off < 0)
		return false;
	memcpy(&b, (const uint8_t *)ext + g->off, sizeof(b));
	return b;
}

/* The bytes field @f of a decoded @ext takes in the body (0 for a group). */
static inline size_t fdrx_field_len(const struct fdrtrace_ext *ext, const struct fdrx_field *f)
{
	struct fdrtrace_str s;

	switch (f->type) {
	case FDRX_T_STR:
		memcpy(&s, (const uint8_t *)ext + f->off, sizeof(s));
		return 2 + (size_t)s.len;
	case FDRX_T_BYTES8:
		return 1 + fdrx_get(ext, f->off, 1);
	case FDRX_T_ARRAY:
		return 4 + fdrx_get(ext, f->off, 4) * fdrx_elem_size(f->show);
	case FDRX_T_PAIRS:
		return 2 + fdrx_get(ext, f->data_len, 2);
	default:
		return fdrx_width(f->type);
	}
}

/*
 * fdrx_group_there - whether the group @g of a decoded @ext was in its
 * body, @n bytes of which the fields before @g took: its flag, or for a
 * group without one, whether the body held its fixed bytes (as the
 * decoder decided)
 */
static inline bool fdrx_group_there(const struct fdrtrace_ext *ext, const struct fdrx_field *g,
				    size_t n)
{
	return g->off >= 0 ? fdrx_group_present(ext, g) : ext->body_len >= n + g->min;
}

/*
 * fdrx_body_len - the bytes the table says a decoded @ext's body takes:
 * the fields of the groups that are there, with their strings and arrays
 * Return: that length, or 0 for a kind not in the table.
 */
static inline size_t fdrx_body_len(const struct fdrtrace_ext *ext)
{
	const struct fdrx_field *f = fdrx_fields(ext->kind);
	size_t n = 0;

	for (; f && f->type != FDRX_T_END; f++) {
		if ((f->type == FDRX_T_SINCE || f->type == FDRX_T_VARIANT) &&
		    !fdrx_group_there(ext, f, n))
			break;
		n += fdrx_field_len(ext, f);
	}
	return n;
}

#endif /* FDR_COMMON_FDRX_SCHEMA_H */
