/* SPDX-License-Identifier: MIT */
/*
 * cmd_assemble.c - "fdrtrace assemble TEXT [-o FILE]": the inverse of dump.
 *
 * Reads the text form documented in fdrtrace-dump(1) and docs/dump-format.md
 * and writes the bytes it describes. It encodes, it does not validate: any
 * byte sequence can be written (records out of order, wrong sizes, unknown
 * kinds through "md raw", arbitrary bytes through "raw hex"), because the
 * tests need broken traces as much as good ones. "ext KIND" lines encode
 * fdrtrace's extension payloads from named fields.
 *
 * Contract: single-threaded. Memory is bounded whatever the text says:
 * output is written out in pieces of ASM_FLUSH_AT bytes. A "size=auto"
 * BufferExtents is patched in place with pwrite when the output is a
 * regular file (not opened for appending); otherwise its buffer waits in
 * memory, and one longer than ASM_PENDING_MAX is refused. "buf pad" lengths
 * are refused above the header's buffer_size (a padding never leaves its
 * buffer) and above ASM_PAD_MAX in any case. Errors name "TEXT:LINE:
 * message"; on any error an output file is left as it was (util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "util.h"

#define ASM_MAX_FIELDS 16
#define ASM_FLUSH_AT (1u << 20)		/* write out what is final past this */
#define ASM_PENDING_MAX (8u << 20)	/* a size=auto buffer held in memory */
#define ASM_PAD_MAX (1ull << 30)	/* "buf pad len=" whatever buffer_size says */
#define ASM_PAD_NO_HDR (64u << 10)	/* ... without a header's buffer_size */

struct asm_field {
	const char *key;
	const char *val;
	size_t len;	/* of val: a quoted value may hold NUL bytes */
	bool used;
};

struct asm_line {
	const char *type;
	const char *subtype;
	struct asm_field f[ASM_MAX_FIELDS];
	int n;
};

struct asm_state {
	const char *text_name;
	unsigned long lineno;
	FILE *out;
	const char *out_name;
	/* Bytes not yet written; out_base is the file offset of buf[0]. */
	uint8_t *buf;
	size_t len, cap;
	uint64_t out_base;
	/* A "buf ext size=auto" waiting for its buffer's end. */
	bool ext_pending;
	uint64_t ext_pos;
	/* The output can be patched with pwrite at out_start + a position. */
	bool seekable;
	int out_fd;
	uint64_t out_start;
	/* From the last "hdr" line. */
	bool have_hdr;
	uint16_t version;
	uint64_t buffer_size;
	uint64_t data_start;
};

static int asm_err(struct asm_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int asm_err(struct asm_state *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%lu: ", s->text_name, s->lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

static uint64_t asm_pos(const struct asm_state *s)
{
	return s->out_base + s->len;
}

static int asm_flush(struct asm_state *s);

static int asm_emit(struct asm_state *s, const void *p, size_t n)
{
	if (!n)
		return 0;	/* s->buf may still be NULL: no memcpy(NULL, ...) */
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		uint8_t *nb;

		while (cap < s->len + n)
			cap *= 2;
		nb = realloc(s->buf, cap);
		if (!nb) {
			tool_err("out of memory");
			return -ENOMEM;
		}
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	if (s->len < ASM_FLUSH_AT)
		return 0;
	if (s->ext_pending && !s->seekable) {
		if (s->len - (s->ext_pos - s->out_base) <= ASM_PENDING_MAX)
			return 0;
		return asm_err(s, "a 'buf ext size=auto' buffer longer than %u bytes: give its "
			       "size, or write to a regular file", ASM_PENDING_MAX);
	}
	return asm_flush(s);
}

/*
 * Write out what is final: everything, unless an extents size is pending
 * on an output that cannot be patched later.
 */
static int asm_flush(struct asm_state *s)
{
	if ((s->ext_pending && !s->seekable) || !s->len)
		return 0;
	if (fwrite(s->buf, 1, s->len, s->out) != s->len) {
		tool_err("%s: write error: %s", s->out_name, strerror(errno));
		return -EIO;
	}
	s->out_base += s->len;
	s->len = 0;
	return 0;
}

/*
 * Fill in the pending "size=auto": the bytes from after the record to here,
 * in memory, or in the file when the record was written out already.
 * Return: 0, or -EIO (reported).
 */
static int asm_patch_extents(struct asm_state *s)
{
	uint64_t size;

	if (!s->ext_pending)
		return 0;
	s->ext_pending = false;
	size = asm_pos(s) - (s->ext_pos + FDRTRACE_METADATA_RECORD_SIZE);
	if (s->ext_pos >= s->out_base) {
		memcpy(s->buf + (s->ext_pos - s->out_base) + 1, &size, sizeof(size));
		return 0;
	}
	if (fflush(s->out) != 0 ||
	    pwrite(s->out_fd, &size, sizeof(size), (off_t)(s->out_start + s->ext_pos + 1)) !=
		    (ssize_t)sizeof(size)) {
		tool_err("%s: write error: %s", s->out_name, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* ---- fields ---- */

static struct asm_field *asm_find(struct asm_line *l, const char *key)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->f[i].key, key) == 0) {
			l->f[i].used = true;
			return &l->f[i];
		}
	return NULL;
}

/*
 * Parse field @key as an integer of @bits bits (signed or unsigned: any
 * value in -2^(bits-1) .. 2^bits-1 is taken, two's complement). Absent:
 * @def. "auto" is accepted only when @is_auto is not NULL.
 */
static int asm_int(struct asm_state *s, struct asm_line *l, const char *key, unsigned bits,
		   uint64_t def, uint64_t *out, bool *is_auto)
{
	struct asm_field *f = asm_find(l, key);
	const char *v;
	char *end;
	uint64_t max = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;

	if (is_auto)
		*is_auto = false;
	if (!f) {
		*out = def;
		return 0;
	}
	v = f->val;
	if (is_auto && strcmp(v, "auto") == 0) {
		*is_auto = true;
		*out = 0;
		return 0;
	}
	errno = 0;
	if (v[0] == '-') {
		long long x = strtoll(v, &end, 0);
		long long min = bits >= 64 ? INT64_MIN : -(1LL << (bits - 1));

		if (errno || end == v || end != v + f->len || x < min)
			return asm_err(s, "%s=%s: not a %u-bit integer", key, v, bits);
		*out = (uint64_t)x & max;
		return 0;
	}
	*out = strtoull(v, &end, 0);
	if (errno || end == v || end != v + f->len || *out > max)
		return asm_err(s, "%s=%s: not a %u-bit integer", key, v, bits);
	return 0;
}

static int asm_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parse field @key as hex bytes ('_' separators allowed) into a fresh
 * allocation. Absent: *out NULL, *n 0. @max limits the byte count (0: none).
 */
static int asm_hex(struct asm_state *s, struct asm_line *l, const char *key, size_t max,
		   uint8_t **out, size_t *n)
{
	struct asm_field *f = asm_find(l, key);
	const char *p;
	uint8_t *b;
	size_t k = 0;
	int hi = -1;

	*out = NULL;
	*n = 0;
	if (!f)
		return 0;
	b = malloc(f->len / 2 + 1);
	if (!b) {
		tool_err("out of memory");
		return -ENOMEM;
	}
	for (p = f->val; p < f->val + f->len; p++) {
		int d;

		if (*p == '_')
			continue;
		d = asm_hexval((unsigned char)*p);
		if (d < 0) {
			free(b);
			return asm_err(s, "%s=: '%c' is not a hex digit", key, *p);
		}
		if (hi < 0) {
			hi = d;
		} else {
			b[k++] = (uint8_t)(hi << 4 | d);
			hi = -1;
		}
	}
	if (hi >= 0) {
		free(b);
		return asm_err(s, "%s=: odd number of hex digits", key);
	}
	if (max && k > max) {
		free(b);
		return asm_err(s, "%s=: %zu bytes, at most %zu fit", key, k, max);
	}
	*out = b;
	*n = k;
	return 0;
}

/* The reserved bytes "rsv=" into @dst (@n bytes, zero-filled). */
static int asm_rsv(struct asm_state *s, struct asm_line *l, uint8_t *dst, size_t n)
{
	uint8_t *b;
	size_t k;
	int rc = asm_hex(s, l, "rsv", n, &b, &k);

	if (rc)
		return rc;
	memset(dst, 0, n);
	if (b)
		memcpy(dst, b, k);
	free(b);
	return 0;
}

static int asm_check_used(struct asm_state *s, struct asm_line *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!l->f[i].used)
			return asm_err(s, "'%s %s' has no field '%s'", l->type, l->subtype,
				       l->f[i].key);
	return 0;
}

static int asm_need_hdr(struct asm_state *s, const char *what)
{
	if (!s->have_hdr)
		return asm_err(s, "%s before the 'hdr' line: the version is unknown", what);
	return 0;
}

/* ---- records ---- */

static int asm_hdr(struct asm_state *s, struct asm_line *l)
{
	struct fdrtrace_file_header h;
	uint64_t v[5];
	int rc;

	if ((rc = asm_int(s, l, "version", 16, 0, &v[0], NULL)) ||
	    (rc = asm_int(s, l, "type", 16, FDRTRACE_LOG_FDR, &v[1], NULL)) ||
	    (rc = asm_int(s, l, "bitfield", 32, 0, &v[2], NULL)) ||
	    (rc = asm_int(s, l, "cycle_frequency", 64, 0, &v[3], NULL)) ||
	    (rc = asm_int(s, l, "buffer_size", 64, 0, &v[4], NULL)) ||
	    (rc = asm_rsv(s, l, h.reserved, sizeof(h.reserved))))
		return rc;
	h.version = (uint16_t)v[0];
	h.type = (uint16_t)v[1];
	h.bitfield = (uint32_t)v[2];
	h.cycle_frequency = v[3];
	h.buffer_size = v[4];
	s->have_hdr = true;
	s->version = h.version;
	s->buffer_size = h.buffer_size;
	s->data_start = asm_pos(s) + sizeof(h);
	return asm_emit(s, &h, sizeof(h));
}

static int asm_md_simple(struct asm_state *s, struct asm_line *l, enum fdrtrace_md_kind kind)
{
	struct fdrtrace_md_record r;
	uint64_t a = 0, b = 0;
	bool is_auto = false;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	r.type = FDRTRACE_MD_TYPE_BYTE(kind);
	switch (kind) {
	case FDRTRACE_MD_NEW_BUFFER: {
		struct fdrtrace_md_new_buffer m = { .type = r.type };

		if ((rc = asm_int(s, l, "tid", 32, 0, &a, NULL)) ||
		    (rc = asm_rsv(s, l, m.reserved, sizeof(m.reserved))))
			return rc;
		m.tid = (int32_t)(uint32_t)a;
		memcpy(&r, &m, sizeof(r));
		break;
	}
	case FDRTRACE_MD_END_OF_BUFFER:
		if ((rc = asm_rsv(s, l, r.data, sizeof(r.data))))
			return rc;
		break;
	case FDRTRACE_MD_NEW_CPU_ID: {
		struct fdrtrace_md_new_cpu_id m = { .type = r.type };

		if ((rc = asm_int(s, l, "cpu", 16, 0, &a, NULL)) ||
		    (rc = asm_int(s, l, "tsc", 64, 0, &b, NULL)) ||
		    (rc = asm_rsv(s, l, m.reserved, sizeof(m.reserved))))
			return rc;
		m.cpu = (uint16_t)a;
		m.tsc = b;
		memcpy(&r, &m, sizeof(r));
		break;
	}
	case FDRTRACE_MD_TSC_WRAP:
	case FDRTRACE_MD_CALL_ARGUMENT:
	case FDRTRACE_MD_BUFFER_EXTENTS: {
		/* Same image: a u64 at 1 and 7 reserved bytes. */
		struct fdrtrace_md_tsc_wrap m = { .type = r.type };
		const char *key = kind == FDRTRACE_MD_TSC_WRAP ? "tsc" :
				  kind == FDRTRACE_MD_CALL_ARGUMENT ? "value" : "size";

		if ((rc = asm_int(s, l, key, 64, 0, &a,
				  kind == FDRTRACE_MD_BUFFER_EXTENTS ? &is_auto : NULL)) ||
		    (rc = asm_rsv(s, l, m.reserved, sizeof(m.reserved))))
			return rc;
		m.tsc = a;
		memcpy(&r, &m, sizeof(r));
		break;
	}
	case FDRTRACE_MD_WALLTIME: {
		struct fdrtrace_md_walltime m = { .type = r.type };

		if ((rc = asm_int(s, l, "sec", 64, 0, &a, NULL)) ||
		    (rc = asm_int(s, l, "usec", 32, 0, &b, NULL)) ||
		    (rc = asm_rsv(s, l, m.reserved, sizeof(m.reserved))))
			return rc;
		m.seconds = a;
		m.micros = (uint32_t)b;
		memcpy(&r, &m, sizeof(r));
		break;
	}
	case FDRTRACE_MD_PID: {
		struct fdrtrace_md_pid m = { .type = r.type };

		if ((rc = asm_int(s, l, "pid", 32, 0, &a, NULL)) ||
		    (rc = asm_rsv(s, l, m.reserved, sizeof(m.reserved))))
			return rc;
		m.pid = (int32_t)(uint32_t)a;
		memcpy(&r, &m, sizeof(r));
		break;
	}
	default:
		return asm_err(s, "internal: no layout for metadata kind %d", (int)kind);
	}
	if ((rc = asm_check_used(s, l)))
		return rc;
	if (kind == FDRTRACE_MD_BUFFER_EXTENTS) {
		/* The previous buffer ends here. */
		if ((rc = asm_patch_extents(s)) || (rc = asm_flush(s)))
			return rc;
		if (is_auto) {
			s->ext_pending = true;
			s->ext_pos = asm_pos(s);
		}
	}
	return asm_emit(s, &r, sizeof(r));
}

static int asm_md_raw(struct asm_state *s, struct asm_line *l)
{
	struct fdrtrace_md_record r;
	uint8_t *b;
	size_t n;
	uint64_t kind;
	int rc;

	if ((rc = asm_int(s, l, "kind", 7, 0, &kind, NULL)) ||
	    (rc = asm_hex(s, l, "data", sizeof(r.data), &b, &n)))
		return rc;
	memset(&r, 0, sizeof(r));
	r.type = FDRTRACE_MD_TYPE_BYTE(kind);
	if (b)
		memcpy(r.data, b, n);
	free(b);
	if ((rc = asm_check_used(s, l)))
		return rc;
	return asm_emit(s, &r, sizeof(r));
}

static int asm_func(struct asm_state *s, struct asm_line *l, int action)
{
	struct fdrtrace_func_record r;
	uint64_t id, delta, act = (uint64_t)action;
	int rc;

	if ((action < 0 && (rc = asm_int(s, l, "action", 3, 0, &act, NULL))) ||
	    (rc = asm_int(s, l, "id", FDRTRACE_FUNC_ID_BITS, 0, &id, NULL)) ||
	    (rc = asm_int(s, l, "delta", 32, 0, &delta, NULL)) ||
	    (rc = asm_check_used(s, l)))
		return rc;
	r.word = ((uint32_t)act << 1) | ((uint32_t)id << 4);
	r.tsc_delta = (uint32_t)delta;
	return asm_emit(s, &r, sizeof(r));
}

/*
 * "evt cus" and "evt typ": marker, then the payload: @payload (@n bytes,
 * taken over) when not NULL, else the line's data= field.
 */
static int asm_event(struct asm_state *s, struct asm_line *l, bool typed, uint8_t *payload,
		     size_t n)
{
	uint8_t rec[FDRTRACE_METADATA_RECORD_SIZE];
	uint8_t *data = payload;
	uint64_t size, delta = 0, tsc = 0, cpu = 0, etype = 0;
	int32_t size32, delta32;
	int rc;

	if ((rc = asm_need_hdr(s, typed ? "'evt typ'" : payload ? "'ext'" : "'evt cus'")) ||
	    (!payload && (rc = asm_hex(s, l, "data", 0, &data, &n)))) {
		free(payload);
		return rc;
	}
	if (n > INT32_MAX) {
		free(data);
		return asm_err(s, "data=: payload too large");
	}
	/* An extension's own fields may be called "size". */
	rc = asm_int(s, l, payload ? "event_size" : "size", 32, n, &size, NULL);
	memset(rec, 0, sizeof(rec));
	if (!rc && (typed || s->version >= 5)) {
		rc = asm_int(s, l, "delta", 32, 0, &delta, NULL);
		if (!rc && typed)
			rc = asm_int(s, l, "type", 16, 0, &etype, NULL);
		if (!rc)
			rc = asm_rsv(s, l, rec + 11 - (typed ? 0 : 2), typed ? 5 : 7);
	} else if (!rc) {
		rc = asm_int(s, l, "tsc", 64, 0, &tsc, NULL);
		if (!rc && s->version == 4)
			rc = asm_int(s, l, "cpu", 16, 0, &cpu, NULL);
		if (!rc)
			rc = s->version == 4 ? asm_rsv(s, l, rec + 15, 1) : asm_rsv(s, l, rec + 13, 3);
	}
	if (!rc)
		rc = asm_check_used(s, l);
	if (rc) {
		free(data);
		return rc;
	}
	rec[0] = FDRTRACE_MD_TYPE_BYTE(typed ? FDRTRACE_MD_TYPED_EVENT : FDRTRACE_MD_CUSTOM_EVENT);
	size32 = (int32_t)(uint32_t)size;
	memcpy(rec + 1, &size32, 4);
	if (typed || s->version >= 5) {
		uint16_t t16 = (uint16_t)etype;

		delta32 = (int32_t)(uint32_t)delta;
		memcpy(rec + 5, &delta32, 4);
		if (typed)
			memcpy(rec + 9, &t16, 2);
	} else {
		uint16_t c16 = (uint16_t)cpu;

		memcpy(rec + 5, &tsc, 8);
		if (s->version == 4)
			memcpy(rec + 13, &c16, 2);
	}
	rc = asm_emit(s, rec, sizeof(rec));
	if (!rc && n)
		rc = asm_emit(s, data, n);
	free(data);
	return rc;
}

static int asm_pad(struct asm_state *s, struct asm_line *l)
{
	uint8_t *data;
	size_t n;
	uint64_t len, i, limit, chunk;
	bool is_auto;
	int rc;

	if ((rc = asm_hex(s, l, "data", 0, &data, &n)))
		return rc;
	rc = asm_int(s, l, "len", 64, n, &len, &is_auto);
	if (!rc)
		rc = asm_check_used(s, l);
	if (!rc && is_auto) {
		rc = asm_need_hdr(s, "'buf pad len=auto'");
		if (!rc && !s->buffer_size)
			rc = asm_err(s, "len=auto needs a non-zero buffer_size in 'hdr'");
		if (!rc) {
			uint64_t used = (asm_pos(s) - s->data_start) % s->buffer_size;

			len = used ? s->buffer_size - used : 0;
		}
	}
	if (!rc && n > len)
		rc = asm_err(s, "data= has %zu bytes, more than len=%llu", n, (unsigned long long)len);
	/* A padding fills the rest of one buffer: never more than buffer_size. */
	limit = s->have_hdr && s->buffer_size ? s->buffer_size : ASM_PAD_NO_HDR;
	if (limit > ASM_PAD_MAX)
		limit = ASM_PAD_MAX;
	if (!rc && len > limit)
		rc = asm_err(s, "len=%llu is more than a padding can be: %llu bytes (%s)",
			     (unsigned long long)len, (unsigned long long)limit,
			     limit == ASM_PAD_MAX ? "the most assemble writes" :
			     s->have_hdr && s->buffer_size ? "the header's buffer_size" :
			     "without a header's buffer_size");
	if (!rc && n)
		rc = asm_emit(s, data, n);
	free(data);
	for (i = n; !rc && i < len; i += chunk) {
		static const uint8_t zero[4096];

		chunk = len - i < sizeof(zero) ? len - i : sizeof(zero);
		rc = asm_emit(s, zero, (size_t)chunk);
	}
	return rc;
}

static int asm_raw(struct asm_state *s, struct asm_line *l)
{
	uint8_t *data;
	size_t n;
	int rc;

	if ((rc = asm_hex(s, l, "data", 0, &data, &n)))
		return rc;
	rc = asm_check_used(s, l);
	if (!rc && n)
		rc = asm_emit(s, data, n);
	free(data);
	return rc;
}

/* ---- "ext KIND": an fdrtrace extension record, encoded from its fields ---- */

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

/* The field types of extension bodies (include/fdrtrace/format.h). */
enum asm_ext_type {
	X_U8, X_U16, X_U32, X_U64,
	X_STR,		/* u16 length, bytes */
	X_BUILD_ID,	/* u8 length, bytes (given in hex) */
	X_IDS,		/* u32 depth, depth u32s (given as ids=1,2,3; depth= optional) */
	X_REASON,	/* u8, a number or an enum fdrtrace_drop_reason name */
	X_HOW,		/* u8, a number or an enum fdrtrace_close_how name */
	X_PAIRS,	/* u16 count, (key str, value str) pairs: given as k1= v1= k2= ... */
	X_WHY,		/* u8, a number or an enum fdrtrace_native_why name */
	X_FRAMES,	/* u32 depth, depth (u64 address, u32 module): given as
			 * frames=ADDRESS@MODULE,... (module -1: unknown); depth= optional */
	X_U32_OPT,	/* a u32 or u64 later writers append: left out, and every */
	X_U64_OPT,	/* field after it, when not given */
	X_END_OPT,	/* the same for a u8, a number or an enum fdrtrace_end name */
	X_COUNTS,	/* u32 count, count (u32 id, u64 calls): given as
			 * counts=ID:CALLS,...; count= optional */
};

struct asm_ext_field {
	const char *name;
	enum asm_ext_type type;
};

#define ASM_EXT_MAX_FIELDS 12

static const struct {
	const char *name;
	uint8_t kind;
	struct asm_ext_field f[ASM_EXT_MAX_FIELDS];
} asm_exts[] = {
	{ "process", FDRTRACE_EXT_PROCESS,
	  { { "pid", X_U32 }, { "ppid", X_U32 }, { "start_realtime_ns", X_U64 },
	    { "clock", X_U8 }, { "freq_source", X_U8 }, { "program", X_STR },
	    { "start_tsc", X_U64_OPT }, { "argc", X_U32 }, { "args", X_STR } } },
	{ "config", FDRTRACE_EXT_CONFIG, { { "", X_PAIRS } } },
	{ "module_map", FDRTRACE_EXT_MODULE_MAP,
	  { { "module_id", X_U32 }, { "load_base", X_U64 }, { "size", X_U64 },
	    { "build_id", X_BUILD_ID }, { "path", X_STR } } },
	{ "module_unmap", FDRTRACE_EXT_MODULE_UNMAP,
	  { { "module_id", X_U32 }, { "load_base", X_U64 }, { "size", X_U64 } } },
	{ "func", FDRTRACE_EXT_FUNC,
	  { { "func_id", X_U32 }, { "address", X_U64 }, { "module_id", X_U32 },
	    { "name", X_STR } } },
	{ "thread_name", FDRTRACE_EXT_THREAD_NAME, { { "tid", X_U32 }, { "name", X_STR } } },
	{ "drop", FDRTRACE_EXT_DROP,
	  { { "tid", X_U32 }, { "reason", X_REASON }, { "records", X_U64 },
	    { "buffers", X_U64 } } },
	{ "fork", FDRTRACE_EXT_FORK,
	  { { "parent_pid", X_U32 }, { "child_pid", X_U32 }, { "parent_tid", X_U32_OPT },
	    { "tsc", X_U64 }, { "serial", X_U32 } } },
	{ "exec", FDRTRACE_EXT_EXEC,
	  { { "pid", X_U32 }, { "path", X_STR }, { "tid", X_U32_OPT }, { "tsc", X_U64 } } },
	{ "close", FDRTRACE_EXT_CLOSE,
	  { { "how", X_HOW }, { "records", X_U64 }, { "records_dropped", X_U64 },
	    { "buffers", X_U64 }, { "buffers_dropped", X_U64 }, { "threads", X_U32 },
	    { "cycle_frequency", X_U64 }, { "end_realtime_ns", X_U64 },
	    { "records_left_out", X_U64_OPT }, { "error", X_U32_OPT }, { "end", X_END_OPT },
	    { "end_value", X_U32 } } },
	{ "stack", FDRTRACE_EXT_STACK, { { "tid", X_U32 }, { "ids", X_IDS } } },
	{ "native_stack", FDRTRACE_EXT_NATIVE_STACK,
	  { { "tid", X_U32 }, { "why", X_WHY }, { "signal", X_U8 }, { "fault_address", X_U64 },
	    { "frames", X_FRAMES } } },
	{ "wait", FDRTRACE_EXT_WAIT,
	  { { "tid", X_U32 }, { "first_tsc", X_U64 }, { "last_tsc", X_U64 } } },
	{ "spawn", FDRTRACE_EXT_SPAWN,
	  { { "tid", X_U32 }, { "tsc", X_U64 }, { "serial", X_U32 }, { "child_pid", X_U32 } } },
	{ "excluded", FDRTRACE_EXT_EXCLUDED,
	  { { "func_id", X_U32 }, { "tsc", X_U64 }, { "calls", X_U32 }, { "sum_ticks", X_U64 },
	    { "threshold_ticks", X_U64 }, { "after", X_U32 }, { "undone", X_U8 } } },
	{ "counted", FDRTRACE_EXT_COUNTED,
	  { { "tid", X_U32 }, { "lost", X_U64 }, { "counts", X_COUNTS } } },
};

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

/* stack: "ids=1,2,3" (and an optional depth= that overrides the count). */
static int asm_ext_ids(struct asm_state *s, struct asm_line *l, struct asm_bytes *b)
{
	struct asm_field *f = asm_find(l, "ids");
	struct asm_bytes ids = { 0 };
	uint64_t depth;
	uint32_t count = 0, d32;
	const char *p = f ? f->val : "";
	int rc;

	while (f && *p) {
		char *end;
		unsigned long long v;
		uint32_t id;

		errno = 0;
		v = strtoull(p, &end, 0);
		if (errno || end == p || v > UINT32_MAX || (*end && *end != ',')) {
			free(ids.p);
			return asm_err(s, "ids=%s: expected a comma-separated list of 32-bit ids",
				       f->val);
		}
		id = (uint32_t)v;
		asm_put(&ids, &id, sizeof(id));
		count++;
		p = *end ? end + 1 : end;
	}
	if ((rc = asm_int(s, l, "depth", 32, count, &depth, NULL))) {
		free(ids.p);
		return rc;
	}
	d32 = (uint32_t)depth;
	asm_put(b, &d32, sizeof(d32));
	if (ids.n)
		asm_put(b, ids.p, ids.n);
	b->oom |= ids.oom;
	free(ids.p);
	return 0;
}

/* native_stack: "frames=0x7f12@3,0x5566@-1" (and an optional depth= that overrides the count). */
static int asm_ext_frames(struct asm_state *s, struct asm_line *l, struct asm_bytes *b)
{
	struct asm_field *f = asm_find(l, "frames");
	struct asm_bytes frames = { 0 };
	uint64_t depth;
	uint32_t count = 0, d32;
	const char *p = f ? f->val : "";
	int rc;

	while (f && *p) {
		char *end, *mend;
		unsigned long long addr;
		long long mod;
		uint32_t m32;

		errno = 0;
		addr = strtoull(p, &end, 0);
		if (errno || end == p || *end != '@')
			goto bad;
		mod = strtoll(end + 1, &mend, 0);
		if (errno || mend == end + 1 || mod < -1 || mod > UINT32_MAX ||
		    (*mend && *mend != ','))
			goto bad;
		m32 = (uint32_t)mod;
		asm_put(&frames, &(uint64_t){ addr }, 8);
		asm_put(&frames, &m32, 4);
		count++;
		p = *mend ? mend + 1 : mend;
	}
	if ((rc = asm_int(s, l, "depth", 32, count, &depth, NULL))) {
		free(frames.p);
		return rc;
	}
	d32 = (uint32_t)depth;
	asm_put(b, &d32, sizeof(d32));
	if (frames.n)
		asm_put(b, frames.p, frames.n);
	b->oom |= frames.oom;
	free(frames.p);
	return 0;
bad:
	free(frames.p);
	return asm_err(s, "frames=%s: expected ADDRESS@MODULE,... (module -1 when unknown)",
		       f->val);
}

/* counted: counts=ID:CALLS,... (count= optional, as depth= for stacks) */
static int asm_ext_counts(struct asm_state *s, struct asm_line *l, struct asm_bytes *b)
{
	struct asm_field *f = asm_find(l, "counts");
	struct asm_bytes pairs = { 0 };
	uint64_t count;
	uint32_t n = 0, c32;
	const char *p = f ? f->val : "";
	int rc;

	while (f && *p) {
		char *end, *cend;
		unsigned long long id, calls;
		uint32_t id32;

		errno = 0;
		id = strtoull(p, &end, 0);
		if (errno || end == p || *end != ':' || id > UINT32_MAX)
			goto bad;
		calls = strtoull(end + 1, &cend, 0);
		if (errno || cend == end + 1 || (*cend && *cend != ','))
			goto bad;
		id32 = (uint32_t)id;
		asm_put(&pairs, &id32, 4);
		asm_put(&pairs, &(uint64_t){ calls }, 8);
		n++;
		p = *cend ? cend + 1 : cend;
	}
	if ((rc = asm_int(s, l, "count", 32, n, &count, NULL))) {
		free(pairs.p);
		return rc;
	}
	c32 = (uint32_t)count;
	asm_put(b, &c32, sizeof(c32));
	if (pairs.n)
		asm_put(b, pairs.p, pairs.n);
	b->oom |= pairs.oom;
	free(pairs.p);
	return 0;
bad:
	free(pairs.p);
	return asm_err(s, "counts=%s: expected FUNC_ID:CALLS,...", f->val);
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

static int asm_ext_body(struct asm_state *s, struct asm_line *l, size_t k, struct asm_bytes *b)
{
	const struct asm_ext_field *f;
	int rc = 0;

	for (f = asm_exts[k].f; !rc && f < asm_exts[k].f + ASM_EXT_MAX_FIELDS && f->name; f++) {
		uint64_t v = 0;
		uint8_t *hex;
		size_t n;

		switch (f->type) {
		case X_U32_OPT:
		case X_U64_OPT:
			if (!asm_find(l, f->name))
				return 0;
			/* fall through */
		case X_U8:
		case X_U16:
		case X_U32:
		case X_U64: {
			unsigned w = f->type == X_U8 ? 8 : f->type == X_U16 ? 16 :
				     f->type == X_U32 || f->type == X_U32_OPT ? 32 : 64;

			rc = asm_int(s, l, f->name, w, 0, &v, NULL);
			asm_put(b, &v, w / 8);	/* little-endian host */
			break;
		}
		case X_END_OPT:
			if (!asm_find(l, f->name))
				return 0;
			/* fall through */
		case X_REASON:
		case X_HOW:
		case X_WHY:
			rc = asm_named_u8(s, l, f->name,
					  f->type == X_REASON ? fdrtrace_drop_reason_name :
					  f->type == X_HOW    ? fdrtrace_close_how_name :
					  f->type == X_END_OPT ? fdrtrace_end_name :
								fdrtrace_native_why_name, &v);
			asm_put(b, &v, 1);
			break;
		case X_STR:
			rc = asm_ext_str(s, l, f->name, b);
			break;
		case X_BUILD_ID:
			rc = asm_hex(s, l, f->name, UINT8_MAX, &hex, &n);
			if (!rc) {
				uint8_t n8 = (uint8_t)n;

				asm_put(b, &n8, 1);
				if (n)
					asm_put(b, hex, n);
			}
			free(hex);
			break;
		case X_IDS:
			rc = asm_ext_ids(s, l, b);
			break;
		case X_FRAMES:
			rc = asm_ext_frames(s, l, b);
			break;
		case X_COUNTS:
			rc = asm_ext_counts(s, l, b);
			break;
		case X_PAIRS:
			rc = asm_ext_pairs(s, l, b);
			break;
		}
	}
	return rc;
}

/*
 * "ext KIND field=value ...": a custom event (marker fields as 'evt cus',
 * but its size is event_size=, default the payload's) whose payload is our
 * extension record of that kind. ext_version= and body_len= override the
 * header (for broken test traces); body= appends raw hex after the fields.
 */
static int asm_ext(struct asm_state *s, struct asm_line *l)
{
	struct fdrtrace_ext_header h;
	struct asm_bytes b = { 0 };
	uint64_t ver, body_len;
	uint8_t *extra;
	size_t k, n;
	int rc;

	memset(&h, 0, sizeof(h));
	for (k = 0; k < sizeof(asm_exts) / sizeof(asm_exts[0]); k++)
		if (strcmp(asm_exts[k].name, l->subtype) == 0)
			break;
	if (k == sizeof(asm_exts) / sizeof(asm_exts[0]))
		return asm_err(s, "unknown extension 'ext %s' (process, config, module_map, "
			       "module_unmap, func, thread_name, drop, fork, exec, close, stack, native_stack, "
			       "wait, spawn, excluded, counted)",
			       l->subtype);
	asm_put(&b, &h, sizeof(h));	/* filled in below */
	rc = asm_ext_body(s, l, k, &b);
	if (!rc)
		rc = asm_hex(s, l, "body", 0, &extra, &n);
	if (!rc && n)
		asm_put(&b, extra, n);
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
	h.kind = asm_exts[k].kind;
	h.body_len = (uint16_t)body_len;
	memcpy(b.p, &h, sizeof(h));
	return asm_event(s, l, false, b.p, b.n);
}

static const struct {
	const char *type, *subtype;
	int kind;	/* metadata kind, function action, or -1 */
	enum { R_HDR, R_MD, R_MD_RAW, R_FUNC, R_FUNC_RAW, R_CUS, R_TYP, R_PAD, R_RAW } how;
} asm_records[] = {
	{ "hdr", "fdr", -1, R_HDR },
	{ "buf", "ext", FDRTRACE_MD_BUFFER_EXTENTS, R_MD },
	{ "buf", "new", FDRTRACE_MD_NEW_BUFFER, R_MD },
	{ "buf", "wal", FDRTRACE_MD_WALLTIME, R_MD },
	{ "buf", "pid", FDRTRACE_MD_PID, R_MD },
	{ "buf", "eob", FDRTRACE_MD_END_OF_BUFFER, R_MD },
	{ "buf", "pad", -1, R_PAD },
	{ "cpu", "new", FDRTRACE_MD_NEW_CPU_ID, R_MD },
	{ "cpu", "wrp", FDRTRACE_MD_TSC_WRAP, R_MD },
	{ "arg", "val", FDRTRACE_MD_CALL_ARGUMENT, R_MD },
	{ "fun", "ent", FDRTRACE_FN_ENTRY, R_FUNC },
	{ "fun", "exi", FDRTRACE_FN_EXIT, R_FUNC },
	{ "fun", "tex", FDRTRACE_FN_TAIL_EXIT, R_FUNC },
	{ "fun", "ena", FDRTRACE_FN_ENTRY_ARGS, R_FUNC },
	{ "fun", "act", -1, R_FUNC_RAW },
	{ "evt", "cus", -1, R_CUS },
	{ "evt", "typ", -1, R_TYP },
	{ "md", "raw", -1, R_MD_RAW },
	{ "raw", "hex", -1, R_RAW },
};

/*
 * Split off the next token at *@pp. Blanks end a token, '#' starts a
 * comment; inside "..." neither does, and \" \\ \n \t \xNN are decoded (in
 * place: the decoded text is never longer). Sets *@len to the decoded
 * length. Return: 1 with *@tok, 0 at the end of the line, or -EINVAL.
 */
static int asm_token(struct asm_state *s, char **pp, char **tok, size_t *len)
{
	char *p = *pp, *out;

	if (!p)
		return 0;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (!*p || *p == '#')
		return 0;
	*tok = out = p;
	while (*p && !strchr(" \t\r\n#", *p)) {
		if (*p != '"') {
			*out++ = *p++;
			continue;
		}
		for (p++; *p != '"'; p++) {
			if (!*p || *p == '\n')
				return asm_err(s, "a string is not closed with '\"'");
			if (*p != '\\') {
				*out++ = *p;
				continue;
			}
			p++;
			if (*p == '"' || *p == '\\') {
				*out++ = *p;
			} else if (*p == 'n') {
				*out++ = '\n';
			} else if (*p == 't') {
				*out++ = '\t';
			} else if (*p == 'x' && asm_hexval((unsigned char)p[1]) >= 0 &&
				   asm_hexval((unsigned char)p[2]) >= 0) {
				*out++ = (char)(asm_hexval((unsigned char)p[1]) << 4 |
						asm_hexval((unsigned char)p[2]));
				p += 2;
			} else {
				return asm_err(s, "unknown escape in a string (use \\\" \\\\ \\n \\t \\xNN)");
			}
		}
		p++;
	}
	/* A comment right after the token ends the line. */
	*pp = *p == '#' || !*p ? NULL : p + 1;
	*len = (size_t)(out - *tok);
	*out = '\0';
	return 1;
}

static int asm_parse_line(struct asm_state *s, char *text, struct asm_line *l)
{
	char *p = text, *tok;
	size_t len;
	int rc;

	l->n = 0;
	if ((rc = asm_token(s, &p, &tok, &len)) <= 0)
		return rc;
	l->type = tok;
	if ((rc = asm_token(s, &p, &tok, &len)) < 0)
		return rc;
	if (!rc || strchr(tok, '='))
		return asm_err(s, "'%s' needs a subtype (e.g. 'fun ent', 'buf new')", l->type);
	l->subtype = tok;
	while ((rc = asm_token(s, &p, &tok, &len)) == 1) {
		char *eq = memchr(tok, '=', len);
		int i;

		if (!eq || eq == tok)
			return asm_err(s, "'%s': fields are key=value", tok);
		*eq = '\0';
		for (i = 0; i < l->n; i++)
			if (strcmp(l->f[i].key, tok) == 0)
				return asm_err(s, "field '%s' given twice", tok);
		if (l->n == ASM_MAX_FIELDS)
			return asm_err(s, "too many fields");
		l->f[l->n].key = tok;
		l->f[l->n].val = eq + 1;
		l->f[l->n].len = len - (size_t)(eq + 1 - tok);
		l->f[l->n].used = false;
		l->n++;
	}
	return rc < 0 ? rc : 1;
}

static int asm_line(struct asm_state *s, char *text)
{
	struct asm_line l;
	size_t i;
	int rc = asm_parse_line(s, text, &l);

	if (rc <= 0)
		return rc;
	for (i = 0; i < sizeof(asm_records) / sizeof(asm_records[0]); i++) {
		if (strcmp(asm_records[i].type, l.type) || strcmp(asm_records[i].subtype, l.subtype))
			continue;
		switch (asm_records[i].how) {
		case R_HDR:
			rc = asm_hdr(s, &l);
			return rc ? rc : asm_check_used(s, &l);
		case R_MD:
			return asm_md_simple(s, &l, (enum fdrtrace_md_kind)asm_records[i].kind);
		case R_MD_RAW:
			return asm_md_raw(s, &l);
		case R_FUNC:
		case R_FUNC_RAW:
			return asm_func(s, &l, asm_records[i].kind);
		case R_CUS:
			return asm_event(s, &l, false, NULL, 0);
		case R_TYP:
			return asm_event(s, &l, true, NULL, 0);
		case R_PAD:
			return asm_pad(s, &l);
		case R_RAW:
			return asm_raw(s, &l);
		}
	}
	if (strcmp(l.type, "ext") == 0)
		return asm_ext(s, &l);
	return asm_err(s, "unknown record '%s %s'", l.type, l.subtype);
}

static const char asm_help[] =
	"Usage: fdrtrace assemble [-o FILE] TEXT\n"
	"\n"
	"Write the binary trace that TEXT (the text form printed by 'fdrtrace dump',\n"
	"or written by hand; '-' is standard input) describes. dump then assemble\n"
	"gives back the identical file. Comments (#) and blank lines are ignored,\n"
	"fields may come in any order and default to 0; 'buf ext size=auto' and\n"
	"'buf pad len=auto' are computed; 'ext KIND field=...' writes fdrtrace's\n"
	"extension records from their fields. Nothing is validated: invalid traces\n"
	"can be written on purpose.\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE  write to FILE (default: standard output)\n"
	"  -h, --help         show this help\n"
	"\n"
	"See fdrtrace-assemble(1) and fdrtrace-dump(1) for the text form.\n";

int cmd_assemble(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct asm_state s;
	struct tool_output output;
	const char *out_path = NULL;
	FILE *in;
	char *line = NULL;
	size_t cap = 0;
	int c, rc = 0;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out_path = optarg;
			break;
		case 'h':
			return tool_print_help(asm_help);
		default:
			return tool_bad_option("assemble", "o:h", argv);
		}
	}
	if (optind != argc - 1)
		return tool_usage_err("assemble", optind == argc ? "missing TEXT" : "one TEXT only");

	c = tool_output_is_input("assemble", out_path, argv + optind, 1);
	if (c)
		return c;
	memset(&s, 0, sizeof(s));
	s.text_name = argv[optind];
	if (strcmp(s.text_name, "-") == 0) {
		in = stdin;
	} else if (!(in = fopen(s.text_name, "r"))) {
		tool_err("%s: %s", s.text_name, strerror(errno));
		return EXIT_FAIL;
	}
	if (tool_output_open(&output, out_path)) {
		if (in != stdin)
			fclose(in);
		return EXIT_FAIL;
	}
	s.out = stdout;
	s.out_name = out_path && strcmp(out_path, "-") ? out_path : "standard output";
	{
		struct stat sb;
		off_t at = lseek(STDOUT_FILENO, 0, SEEK_CUR);
		int fl = fcntl(STDOUT_FILENO, F_GETFL);

		/* pwrite ignores its offset on an O_APPEND descriptor. */
		s.out_fd = STDOUT_FILENO;
		s.seekable = fstat(STDOUT_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) && at >= 0 &&
			     fl >= 0 && !(fl & O_APPEND);
		s.out_start = at >= 0 ? (uint64_t)at : 0;
	}

	while (!rc && getline(&line, &cap, in) != -1) {
		s.lineno++;
		rc = asm_line(&s, line);
	}
	if (!rc && ferror(in)) {
		tool_err("%s: read error: %s", s.text_name, strerror(errno));
		rc = -EIO;
	}
	free(line);
	if (in != stdin)
		fclose(in);
	if (!rc && !(rc = asm_patch_extents(&s)))
		rc = asm_flush(&s);
	free(s.buf);
	if (tool_output_close(&output, !rc))
		rc = -EIO;
	return rc ? EXIT_FAIL : EXIT_OK;
}
