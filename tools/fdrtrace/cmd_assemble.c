/* SPDX-License-Identifier: MIT */
/*
 * cmd_assemble.c - "fdrtrace assemble TEXT [-o FILE]": the inverse of dump.
 *
 * Reads the text form documented in fdrtrace-dump(1) and docs/dump-format.md
 * and writes the bytes it describes. It encodes, it does not validate: any
 * byte sequence can be written (records out of order, wrong sizes, unknown
 * kinds through "md raw", arbitrary bytes through "raw hex"), because the
 * tests need broken traces as much as good ones.
 *
 * Contract: single-threaded. Memory is bounded by the largest stretch of
 * output that waits for a "size=auto" BufferExtents to be patched (one
 * buffer); everything before it is written out as soon as it is final.
 * Errors name "TEXT:LINE: message"; on any error the output file is removed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fdrtrace/format.h>

#include "util.h"

#define ASM_MAX_FIELDS 16

struct asm_field {
	const char *key;
	const char *val;
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

static int asm_emit(struct asm_state *s, const void *p, size_t n)
{
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
	return 0;
}

/* Write out what is final: everything, unless an extents size is pending. */
static int asm_flush(struct asm_state *s)
{
	if (s->ext_pending || !s->len)
		return 0;
	if (fwrite(s->buf, 1, s->len, s->out) != s->len) {
		tool_err("%s: write error: %s", s->out_name, strerror(errno));
		return -EIO;
	}
	s->out_base += s->len;
	s->len = 0;
	return 0;
}

/* Fill in the pending "size=auto": the bytes from after the record to here. */
static void asm_patch_extents(struct asm_state *s)
{
	uint64_t size;

	if (!s->ext_pending)
		return;
	size = asm_pos(s) - (s->ext_pos + FDRTRACE_METADATA_RECORD_SIZE);
	memcpy(s->buf + (s->ext_pos - s->out_base) + 1, &size, sizeof(size));
	s->ext_pending = false;
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

		if (errno || end == v || *end || x < min)
			return asm_err(s, "%s=%s: not a %u-bit integer", key, v, bits);
		*out = (uint64_t)x & max;
		return 0;
	}
	*out = strtoull(v, &end, 0);
	if (errno || end == v || *end || *out > max)
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
	b = malloc(strlen(f->val) / 2 + 1);
	if (!b) {
		tool_err("out of memory");
		return -ENOMEM;
	}
	for (p = f->val; *p; p++) {
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
		asm_patch_extents(s);
		if ((rc = asm_flush(s)))
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

/* "evt cus" and "evt typ": marker, then the payload. */
static int asm_event(struct asm_state *s, struct asm_line *l, bool typed)
{
	uint8_t rec[FDRTRACE_METADATA_RECORD_SIZE];
	uint8_t *data;
	size_t n;
	uint64_t size, delta = 0, tsc = 0, cpu = 0, etype = 0;
	int32_t size32, delta32;
	int rc;

	if ((rc = asm_need_hdr(s, typed ? "'evt typ'" : "'evt cus'")) ||
	    (rc = asm_hex(s, l, "data", 0, &data, &n)))
		return rc;
	if (n > INT32_MAX) {
		free(data);
		return asm_err(s, "data=: payload too large");
	}
	rc = asm_int(s, l, "size", 32, n, &size, NULL);
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
	uint64_t len, i;
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
	if (!rc && n)
		rc = asm_emit(s, data, n);
	free(data);
	for (i = n; !rc && i < len; i++) {
		static const uint8_t zero;

		rc = asm_emit(s, &zero, 1);
		if (!rc && i % 4096 == 0)
			rc = asm_flush(s);
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

static int asm_parse_line(struct asm_state *s, char *text, struct asm_line *l)
{
	char *save = NULL, *tok;
	char *hash = strchr(text, '#');

	if (hash)
		*hash = '\0';
	l->n = 0;
	l->type = strtok_r(text, " \t\r\n", &save);
	if (!l->type)
		return 0;
	l->subtype = strtok_r(NULL, " \t\r\n", &save);
	if (!l->subtype || strchr(l->subtype, '='))
		return asm_err(s, "'%s' needs a subtype (e.g. 'fun ent', 'buf new')", l->type);
	while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(tok, '=');
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
		l->f[l->n].used = false;
		l->n++;
	}
	return 1;
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
			return asm_event(s, &l, false);
		case R_TYP:
			return asm_event(s, &l, true);
		case R_PAD:
			return asm_pad(s, &l);
		case R_RAW:
			return asm_raw(s, &l);
		}
	}
	return asm_err(s, "unknown record '%s %s'", l.type, l.subtype);
}

static const char asm_help[] =
	"Usage: fdrtrace assemble [-o FILE] TEXT\n"
	"\n"
	"Write the binary trace that TEXT (the text form printed by 'fdrtrace dump',\n"
	"or written by hand; '-' is standard input) describes. dump then assemble\n"
	"gives back the identical file. Comments (#) and blank lines are ignored,\n"
	"fields may come in any order and default to 0; 'buf ext size=auto' and\n"
	"'buf pad len=auto' are computed. Nothing is validated: invalid traces can\n"
	"be written on purpose.\n"
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

	memset(&s, 0, sizeof(s));
	s.text_name = argv[optind];
	if (strcmp(s.text_name, "-") == 0) {
		in = stdin;
	} else if (!(in = fopen(s.text_name, "r"))) {
		tool_err("%s: %s", s.text_name, strerror(errno));
		return EXIT_FAIL;
	}
	if (!out_path || strcmp(out_path, "-") == 0) {
		s.out = stdout;
		s.out_name = "standard output";
	} else if (!(s.out = fopen(out_path, "wb"))) {
		tool_err("%s: %s", out_path, strerror(errno));
		if (in != stdin)
			fclose(in);
		return EXIT_FAIL;
	} else {
		s.out_name = out_path;
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
	if (!rc) {
		asm_patch_extents(&s);
		rc = asm_flush(&s);
	}
	free(s.buf);
	if (s.out == stdout) {
		if (tool_finish_stdout())
			rc = -EIO;
	} else if (fclose(s.out) != 0 && !rc) {
		tool_err("%s: write error: %s", out_path, strerror(errno));
		rc = -EIO;
	}
	if (rc && s.out != stdout)
		unlink(out_path);
	return rc ? EXIT_FAIL : EXIT_OK;
}
