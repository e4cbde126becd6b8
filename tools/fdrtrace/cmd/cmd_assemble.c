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
 *
 * This file is the command, the output and the FDR records; a line's text
 * and fields are asm_text.c, the "ext KIND" records' payloads asm_ext.c
 * (asm.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "asm.h"
#include "util.h"

#define ASM_FLUSH_AT (1u << 20)		/* write out what is final past this */
#define ASM_PENDING_MAX (8u << 20)	/* a size=auto buffer held in memory */
#define ASM_PAD_MAX (1ull << 30)	/* "buf pad len=" whatever buffer_size says */
#define ASM_PAD_NO_HDR (64u << 10)	/* ... without a header's buffer_size */

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

static int asm_line(struct asm_state *s, char *text)
{
	struct asm_line l;
	uint8_t *payload;
	size_t i, n;
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
	if (strcmp(l.type, "ext") == 0) {
		rc = asm_ext_encode(s, &l, &payload, &n);
		return rc ? rc : asm_event(s, &l, false, payload, n);
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

