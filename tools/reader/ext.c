// SPDX-License-Identifier: MIT
/*
 * ext.c - decoding of fdrtrace's extension records (format.h), the custom
 * event payloads that start with FDRTRACE_EXT_MAGIC: the header, then the
 * body field by field as the schema, common/fdrx.def, lists them.
 *
 * Contract: pure functions over the caller's bytes; any thread, no state,
 * no allocation. Every field read is bounds-checked against the body; the
 * decoded strings and arrays point into the caller's payload.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <fdrtrace/reader.h>

#include "fdrx_schema.h"
#include "reader_internal.h"

/* A bounds-checked cursor over an extension body. */
struct ext_cursor {
	const uint8_t *p;
	size_t len;
	size_t pos;
	bool bad;	/* a read went past the end */
};

static const uint8_t *cur_take(struct ext_cursor *c, size_t n)
{
	const uint8_t *p;

	if (c->bad || n > c->len - c->pos) {
		c->bad = true;
		return NULL;
	}
	p = c->p + c->pos;
	c->pos += n;
	return p;
}

static uint8_t cur_u8(struct ext_cursor *c)
{
	const uint8_t *p = cur_take(c, 1);

	return p ? p[0] : 0;
}

static uint16_t cur_u16(struct ext_cursor *c)
{
	const uint8_t *p = cur_take(c, 2);

	return p ? rd_le16(p) : 0;
}

static uint32_t cur_u32(struct ext_cursor *c)
{
	const uint8_t *p = cur_take(c, 4);

	return p ? rd_le32(p) : 0;
}

static uint64_t cur_u64(struct ext_cursor *c)
{
	const uint8_t *p = cur_take(c, 8);

	return p ? rd_le64(p) : 0;
}

static struct fdrtrace_str cur_str(struct ext_cursor *c)
{
	struct fdrtrace_str s = { .ptr = "", .len = 0 };
	uint16_t len = cur_u16(c);
	const uint8_t *p = cur_take(c, len);

	if (p) {
		s.ptr = (const char *)p;
		s.len = len;
	}
	return s;
}

/*
 * Whether the group @g is there: at least its minimum of bytes left (its
 * flag set), as fdrx.def says. A bad body has no groups.
 */
static bool ext_group(struct fdrtrace_ext *ext, struct ext_cursor *c, const struct fdrx_field *g)
{
	if (c->bad || c->len - c->pos < g->min)
		return false;
	if (g->off >= 0)
		*(bool *)((uint8_t *)ext + g->off) = true;
	return true;
}

/* A config body's pairs: their count, then the bytes they take. */
static void ext_pairs(struct fdrtrace_ext *ext, struct ext_cursor *c, const struct fdrx_field *f)
{
	uint16_t pairs = cur_u16(c);
	size_t start = c->pos;
	const uint8_t *data;

	fdrx_set(ext, f->off, 2, pairs);
	for (unsigned i = 0; i < pairs && !c->bad; i++) {
		cur_str(c);
		cur_str(c);
	}
	if (c->bad)
		return;
	data = c->p + start;
	memcpy((uint8_t *)ext + f->data, &data, sizeof(data));
	fdrx_set(ext, f->data_len, 2, c->pos - start);
}

/*
 * Decode the body field by field, as the table (common/fdrx.def) lists
 * them. A read past the end marks the cursor bad and yields zeros, so
 * every field is set either way; the groups of later fields end the body
 * where an older or shorter one ends.
 */
static int ext_decode_body(struct fdrtrace_ext *ext, struct ext_cursor *c)
{
	const struct fdrx_field *f = fdrx_fields(ext->kind);
	uint8_t *base = (uint8_t *)ext;

	/* f NULL: a kind this reader does not know; the raw body is all there is. */
	for (; f && f->type != FDRX_T_END; f++) {
		const uint8_t *data;
		struct fdrtrace_str s;
		uint64_t n;

		switch (f->type) {
		case FDRX_T_U8:
			fdrx_set(ext, f->off, 1, cur_u8(c));
			break;
		case FDRX_T_U16:
			fdrx_set(ext, f->off, 2, cur_u16(c));
			break;
		case FDRX_T_U32:
			fdrx_set(ext, f->off, 4, cur_u32(c));
			break;
		case FDRX_T_U64:
			fdrx_set(ext, f->off, 8, cur_u64(c));
			break;
		case FDRX_T_STR:
			s = cur_str(c);
			memcpy(base + f->off, &s, sizeof(s));
			break;
		case FDRX_T_BYTES8:
		case FDRX_T_ARRAY:
			/* a count <= 0xffffffff: count * element fits in size_t on 64-bit hosts */
			n = f->type == FDRX_T_BYTES8 ? cur_u8(c) : cur_u32(c);
			fdrx_set(ext, f->off, f->type == FDRX_T_BYTES8 ? 1 : 4, n);
			data = cur_take(c, f->type == FDRX_T_BYTES8 ? n : n * fdrx_elem_size(f->show));
			memcpy(base + f->data, &data, sizeof(data));
			break;
		case FDRX_T_PAIRS:
			ext_pairs(ext, c, f);
			break;
		case FDRX_T_SINCE:
		case FDRX_T_VARIANT:
			if (!ext_group(ext, c, f))
				return c->bad ? -EBADMSG : 0;
			break;
		}
	}
	return c->bad ? -EBADMSG : 0;
}

/**
 * fdrtrace_ext_decode - decode a custom-event payload written by fdrtrace
 * (documented in fdrtrace/reader.h)
 */
rd_export int fdrtrace_ext_decode(const void *data, size_t len, struct fdrtrace_ext *ext)
{
	const uint8_t *p = data;
	struct ext_cursor c;
	struct fdrtrace_ext_header h;

	memset(ext, 0, sizeof(*ext));
	if (!p || len < sizeof(h) || memcmp(p, FDRTRACE_EXT_MAGIC, FDRTRACE_EXT_MAGIC_LEN) != 0)
		return -ENOENT;
	memcpy(&h, p, sizeof(h));
	ext->kind = h.kind;
	ext->version = h.version;
	ext->body = p + sizeof(h);
	/* The payload is exactly the header and the body it announces. */
	if ((size_t)h.body_len != len - sizeof(h) || h.version == 0)
		return -EBADMSG;
	ext->body_len = h.body_len;
	if (h.version > FDRTRACE_EXT_VERSION)
		return -ENOTSUP;

	c = (struct ext_cursor){ .p = ext->body, .len = ext->body_len };
	return ext_decode_body(ext, &c);
}

/**
 * fdrtrace_ext_config_pair - walk the pairs of an FDRTRACE_EXT_CONFIG body
 * (documented in fdrtrace/reader.h)
 */
rd_export int fdrtrace_ext_config_pair(const struct fdrtrace_ext *ext, size_t *pos,
				       struct fdrtrace_str *key, struct fdrtrace_str *value)
{
	struct ext_cursor c;

	if (ext->kind != FDRTRACE_EXT_CONFIG || !ext->u.config.data)
		return ext->kind == FDRTRACE_EXT_CONFIG && ext->u.config.pairs == 0 ? 0 : -EBADMSG;
	if (*pos >= ext->u.config.data_len)
		return *pos == ext->u.config.data_len ? 0 : -EBADMSG;
	c = (struct ext_cursor){ .p = ext->u.config.data, .len = ext->u.config.data_len, .pos = *pos };
	*key = cur_str(&c);
	*value = cur_str(&c);
	if (c.bad)
		return -EBADMSG;
	*pos = c.pos;
	return 1;
}

/**
 * fdrtrace_ext_native_frame - one frame of a native stack
 * (documented in fdrtrace/reader.h)
 */
rd_export int fdrtrace_ext_native_frame(const struct fdrtrace_ext *ext, uint32_t i,
					uint64_t *address, uint32_t *module_id)
{
	const uint8_t *f;

	if (ext->kind != FDRTRACE_EXT_NATIVE_STACK || !ext->u.native_stack.frames ||
	    i >= ext->u.native_stack.depth)
		return -EINVAL;
	f = ext->u.native_stack.frames + (size_t)i * FDRTRACE_NATIVE_FRAME_SIZE;
	*address = rd_le64(f);
	*module_id = rd_le32(f + 8);
	return 0;
}

/**
 * fdrtrace_ext_counted_pair - one pair of a counted record
 * (documented in fdrtrace/reader.h)
 */
rd_export int fdrtrace_ext_counted_pair(const struct fdrtrace_ext *ext, uint32_t i,
					uint32_t *func_id, uint64_t *calls)
{
	const uint8_t *f;

	if (ext->kind != FDRTRACE_EXT_COUNTED || !ext->u.counted.pairs || i >= ext->u.counted.count)
		return -EINVAL;
	f = ext->u.counted.pairs + (size_t)i * 12;
	*func_id = rd_le32(f);
	*calls = rd_le64(f + 4);
	return 0;
}
