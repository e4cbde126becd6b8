/* SPDX-License-Identifier: MIT */
/*
 * asm_ext.c - "ext KIND field=value ...": fdrtrace's extension records
 * (docs/format.md section 5) encoded from their fields, for "fdrtrace
 * assemble". The fields, their order and types are the table's
 * (common/fdrx.def), the same the reader decodes and dump prints, so a
 * dump comment's "FDRx KIND ..." can be copied into an ext line.
 *
 * Contract: single-threaded; a body is built in memory (at most 65535
 * bytes are kept: a longer one is refused) and handed back, for
 * cmd_assemble.c to write as a custom event. Calls only asm_text.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "asm.h"
#include "fdrx_schema.h"
#include "util.h"

/* A growing byte string; @oom once an allocation failed (reported at the end). */
struct asm_bytes {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

static void asm_put(struct asm_bytes *b, const void *v, size_t n)
{
	if (b->oom || !n)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		uint8_t *np;

		while (cap < b->n + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

/* A u8 given as a number or as one of the names @name_of(0..255) returns. */
static int asm_named_u8(struct asm_state *s, struct asm_line *l, const char *key,
			const char *(*name_of)(unsigned), uint64_t *v)
{
	struct asm_field *f = asm_find(l, key);
	unsigned i;

	if (f && f->len && (f->val[0] < '0' || f->val[0] > '9')) {
		for (i = 0; i < 256; i++)
			if (strcmp(name_of(i), f->val) == 0) {
				*v = i;
				return 0;
			}
		return asm_err(s, "%s=%s: not a number or a known name", key, f->val);
	}
	if (f)
		f->used = false;	/* let asm_int find it again */
	return asm_int(s, l, key, 8, 0, v, NULL);
}

/* A string: u16 length, bytes (a quoted value may hold any byte). */
static int asm_ext_str(struct asm_state *s, struct asm_line *l, const char *key,
		       struct asm_bytes *b)
{
	struct asm_field *f = asm_find(l, key);
	uint16_t n;

	if (f && f->len > UINT16_MAX)
		return asm_err(s, "%s=: longer than 65535 bytes", key);
	n = f ? (uint16_t)f->len : 0;
	asm_put(b, &n, sizeof(n));
	if (n)
		asm_put(b, f->val, n);
	return 0;
}

/* What each kind of array element looks like in text, for errors. */
static const char *const asm_elem_text[] = {
	[FDRX_S_ID] = "a comma-separated list of 32-bit ids",
	[FDRX_S_FRAME] = "ADDRESS@MODULE,... (module -1 when unknown)",
	[FDRX_S_COUNT] = "FUNC_ID:CALLS,...",
};

/*
 * One array element at @p into @out: an id (1), a frame (0x7f12@3, module
 * -1 when unknown) or a count (ID:CALLS). Return: where it ends (at ',' or
 * the end), NULL when it is malformed.
 */
static const char *asm_elem(unsigned show, const char *p, struct asm_bytes *out)
{
	unsigned long long a, c;
	long long m;
	char *end, *e2;

	errno = 0;
	a = strtoull(p, &end, 0);
	if (errno || end == p)
		return NULL;
	switch (show) {
	case FDRX_S_ID:
		if (a > UINT32_MAX || (*end && *end != ','))
			return NULL;
		asm_put(out, &(uint32_t){ (uint32_t)a }, 4);
		return end;
	case FDRX_S_FRAME:
		if (*end != '@')
			return NULL;
		m = strtoll(end + 1, &e2, 0);
		if (errno || e2 == end + 1 || m < -1 || m > UINT32_MAX || (*e2 && *e2 != ','))
			return NULL;
		asm_put(out, &(uint64_t){ a }, 8);
		asm_put(out, &(uint32_t){ (uint32_t)m }, 4);
		return e2;
	default:	/* FDRX_S_COUNT */
		if (*end != ':' || a > UINT32_MAX)
			return NULL;
		c = strtoull(end + 1, &e2, 0);
		if (errno || e2 == end + 1 || (*e2 && *e2 != ','))
			return NULL;
		asm_put(out, &(uint32_t){ (uint32_t)a }, 4);
		asm_put(out, &(uint64_t){ c }, 8);
		return e2;
	}
}

/* An array: key=E1,E2,... and count_key= (default: the number of elements). */
static int asm_ext_array(struct asm_state *s, struct asm_line *l, const struct fdrx_field *a,
			 struct asm_bytes *b)
{
	struct asm_field *f = asm_find(l, a->key);
	struct asm_bytes elems = { 0 };
	uint64_t count;
	uint32_t n = 0, c32;
	const char *p = f ? f->val : "";
	int rc;

	while (f && *p) {
		const char *end = asm_elem(a->show, p, &elems);

		if (!end) {
			free(elems.p);
			return asm_err(s, "%s=%s: expected %s", a->key, f->val, asm_elem_text[a->show]);
		}
		n++;
		p = *end ? end + 1 : end;
	}
	if ((rc = asm_int(s, l, a->count_key, 32, n, &count, NULL))) {
		free(elems.p);
		return rc;
	}
	c32 = (uint32_t)count;
	asm_put(b, &c32, sizeof(c32));
	if (elems.n)
		asm_put(b, elems.p, elems.n);
	b->oom |= elems.oom;
	free(elems.p);
	return 0;
}

/* config: keys and values given as k1=, v1=, k2=, v2=, ... (from 1). */
static int asm_ext_pairs(struct asm_state *s, struct asm_line *l, struct asm_bytes *b)
{
	struct asm_bytes body = { 0 };
	uint16_t pairs = 0;
	char key[16], val[16];
	int rc = 0;

	for (;;) {
		snprintf(key, sizeof(key), "k%u", pairs + 1u);
		snprintf(val, sizeof(val), "v%u", pairs + 1u);
		if (!asm_find(l, key) && !asm_find(l, val))
			break;
		/* asm_find() marked them; asm_ext_str() looks them up again. */
		if ((rc = asm_ext_str(s, l, key, &body)) || (rc = asm_ext_str(s, l, val, &body)))
			break;
		pairs++;
	}
	if (!rc) {
		asm_put(b, &pairs, sizeof(pairs));
		if (body.n)
			asm_put(b, body.p, body.n);
		b->oom |= body.oom;
	}
	free(body.p);
	return rc;
}

/* A byte string: u8 length, bytes (given in hex). */
static int asm_ext_bytes8(struct asm_state *s, struct asm_line *l, const char *key,
			  struct asm_bytes *b)
{
	uint8_t *hex;
	size_t n;
	int rc = asm_hex(s, l, key, UINT8_MAX, &hex, &n);

	if (!rc) {
		uint8_t n8 = (uint8_t)n;

		asm_put(b, &n8, 1);
		if (n)
			asm_put(b, hex, n);
	}
	free(hex);
	return rc;
}

/*
 * The body from the line's fields, in the table's order. A group of later
 * writers' fields is written when its first field is given (so an older
 * body can be written); a variant's fields are not taken from fields
 * (body=HEX appends them).
 */
static int asm_ext_body(struct asm_state *s, struct asm_line *l, const struct fdrx_field *f,
			struct asm_bytes *b)
{
	int rc = 0;

	for (; !rc && f->type != FDRX_T_END; f++) {
		const char *(*name_of)(unsigned) = fdrx_namer(f->show);
		unsigned w = fdrx_width(f->type);
		uint64_t v = 0;

		switch (f->type) {
		case FDRX_T_SINCE:
			if (f[1].type == FDRX_T_END || !asm_find(l, f[1].key))
				return 0;
			break;
		case FDRX_T_VARIANT:
			return 0;
		case FDRX_T_STR:
			rc = asm_ext_str(s, l, f->key, b);
			break;
		case FDRX_T_BYTES8:
			rc = asm_ext_bytes8(s, l, f->key, b);
			break;
		case FDRX_T_ARRAY:
			rc = asm_ext_array(s, l, f, b);
			break;
		case FDRX_T_PAIRS:
			rc = asm_ext_pairs(s, l, b);
			break;
		default:
			if (name_of)
				rc = asm_named_u8(s, l, f->key, name_of, &v);
			else
				rc = asm_int(s, l, f->key, w * 8, 0, &v, NULL);
			asm_put(b, &v, w);	/* little-endian host */
			break;
		}
	}
	return rc;
}

/* The kind called @name in the table, or 0. */
static unsigned asm_ext_kind(const char *name)
{
	for (unsigned k = 0; k < FDRTRACE_EXT_KIND_COUNT; k++)
		if (fdrx_kinds[k].name && strcmp(fdrx_kinds[k].name, name) == 0)
			return k;
	return 0;
}

static int asm_ext_unknown(struct asm_state *s, const char *name)
{
	char list[512];
	size_t used = 0;

	list[0] = '\0';
	for (unsigned k = 0; k < FDRTRACE_EXT_KIND_COUNT; k++)
		if (fdrx_kinds[k].name && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? ", " : "", fdrx_kinds[k].name);
	return asm_err(s, "unknown extension 'ext %s' (%s)", name, list);
}

/*
 * "ext KIND field=value ...": a custom event (marker fields as 'evt cus',
 * but its size is event_size=, default the payload's) whose payload is our
 * extension record of that kind. ext_version= and body_len= override the
 * header (for broken test traces); body= appends raw hex after the fields.
 * The record (header and body) is handed back in *@payload, *@n bytes.
 */
int asm_ext_encode(struct asm_state *s, struct asm_line *l, uint8_t **payload, size_t *n)
{
	struct fdrtrace_ext_header h;
	struct asm_bytes b = { 0 };
	uint64_t ver, body_len;
	uint8_t *extra;
	unsigned kind = asm_ext_kind(l->subtype);
	size_t extra_n;
	int rc;

	if (!kind)
		return asm_ext_unknown(s, l->subtype);
	memset(&h, 0, sizeof(h));
	asm_put(&b, &h, sizeof(h));	/* filled in below */
	rc = asm_ext_body(s, l, fdrx_fields(kind), &b);
	if (!rc)
		rc = asm_hex(s, l, "body", 0, &extra, &extra_n);
	if (!rc && extra_n)
		asm_put(&b, extra, extra_n);
	if (!rc)
		free(extra);
	if (!rc && b.oom) {
		tool_err("out of memory");
		rc = -ENOMEM;
	}
	if (!rc && b.n - sizeof(h) > UINT16_MAX)
		rc = asm_err(s, "the extension body is longer than 65535 bytes");
	if (!rc)
		rc = asm_int(s, l, "ext_version", 8, FDRTRACE_EXT_VERSION, &ver, NULL);
	if (!rc)
		rc = asm_int(s, l, "body_len", 16, b.n - sizeof(h), &body_len, NULL);
	if (rc) {
		free(b.p);
		return rc;
	}
	memcpy(h.magic, FDRTRACE_EXT_MAGIC, FDRTRACE_EXT_MAGIC_LEN);
	h.version = (uint8_t)ver;
	h.kind = (uint8_t)kind;
	h.body_len = (uint16_t)body_len;
	memcpy(b.p, &h, sizeof(h));
	*payload = b.p;
	*n = b.n;
	return 0;
}
