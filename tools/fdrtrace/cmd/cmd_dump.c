/* SPDX-License-Identifier: MIT */
/*
 * cmd_dump.c - "fdrtrace dump FILE": every event as one line of text.
 *
 * The text form (docs/dump-format.md, fdrtrace-dump(1)) is lossless: each
 * line is decoded from the event's raw bytes, reserved bytes and payloads
 * included, so "fdrtrace assemble" rebuilds the identical file. Values the
 * reader derives (absolute TSC, wall time, thread) and decoded FDRx
 * extensions go into a trailing "# ..." comment, which assemble ignores.
 *
 * Contract: single-threaded; memory is the reader's (one record and one
 * payload). The dump checks that the reader's events cover the file without
 * gaps, since a gap would make the text lossy.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "fdrx_schema.h"
#include "util.h"

struct dump_opts {
	bool comments;
};

/* A length-counted string, printable, escaped, in double quotes. */
static void dump_str(const char *p, size_t n)
{
	size_t i;

	putchar('"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void dump_rsv(const uint8_t *p, size_t n)
{
	if (tool_all_zero(p, n))
		return;
	fputs(" rsv=", stdout);
	tool_print_hex(stdout, p, n);
}

static uint64_t dump_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t dump_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t dump_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A scalar field of an extension, as assemble's "ext" lines take it. */
static void dump_ext_value(const struct fdrx_field *f, uint64_t v)
{
	printf(" %s=", f->key);
	switch (f->show) {
	case FDRX_S_HEX:
		printf("0x%" PRIx64, v);
		break;
	case FDRX_S_SIGNED:
		printf("%" PRId32, (int32_t)(uint32_t)v);
		break;
	case FDRX_S_UNKNOWN:
		if (v == FDRTRACE_GAP_UNKNOWN) {
			fputs("unknown", stdout);
			break;
		}
		/* fall through */
	case FDRX_S_DEC:
		printf("%" PRIu64, v);
		break;
	default:
		fputs(fdrx_namer(f->show)((unsigned)v), stdout);
		break;
	}
}

/* An array's elements: 1,2,3 or 0xADDR@MODULE,... or ID:CALLS,... */
static void dump_ext_array(const struct fdrtrace_ext *x, const struct fdrx_field *f)
{
	uint32_t n = (uint32_t)fdrx_get(x, f->off, 4);
	const uint8_t *p;

	memcpy(&p, (const uint8_t *)x + f->data, sizeof(p));
	printf(" %s=%" PRIu32 " %s=", f->count_key, n, f->key);
	for (uint32_t i = 0; i < n; i++, p += fdrx_elem_size(f->show)) {
		fputs(i ? "," : "", stdout);
		if (f->show == FDRX_S_ID)
			printf("%" PRIu32, dump_u32(p));
		else if (f->show == FDRX_S_FRAME)
			printf("0x%" PRIx64 "@%" PRId32, dump_u64(p), (int32_t)dump_u32(p + 8));
		else
			printf("%" PRIu32 ":%" PRIu64, dump_u32(p), dump_u64(p + 4));
	}
}

/* A config body's pairs, as assemble's "ext config" takes them: k1= v1= k2= v2= ... */
static void dump_ext_pairs(const struct fdrtrace_ext *x)
{
	struct fdrtrace_str k, v;
	size_t pos = 0;
	unsigned i = 0;

	while (fdrtrace_ext_config_pair(x, &pos, &k, &v) == 1) {
		i++;
		printf(" k%u=", i);
		dump_str(k.ptr, k.len);
		printf(" v%u=", i);
		dump_str(v.ptr, v.len);
	}
	if (i != x->u.config.pairs)
		printf(" (%u pairs announced)", x->u.config.pairs);
}

/*
 * Whether a group of later fields is shown: when the body had it; a group
 * without a flag, when a value in it is not 0 or a later group is shown
 * (assemble writes a group only after the ones before it).
 */
static bool dump_ext_group(const struct fdrtrace_ext *x, const struct fdrx_field *g)
{
	const struct fdrx_field *f;

	if (g->off >= 0)
		return fdrx_group_present(x, g);
	for (f = g + 1; f->type != FDRX_T_END; f++) {
		if (f->type == FDRX_T_SINCE || f->type == FDRX_T_VARIANT)
			return dump_ext_group(x, f);
		if (fdrx_width(f->type) && fdrx_get(x, f->off, fdrx_width(f->type)))
			return true;
	}
	return false;
}

/* The "# FDRx ..." decoding of one of our extension payloads, field by field (fdrx.def). */
static void dump_ext(const uint8_t *data, size_t len)
{
	const struct fdrx_field *f;
	struct fdrtrace_ext x;
	struct fdrtrace_str str;
	const uint8_t *bytes;
	int rc = fdrtrace_ext_decode(data, len, &x);

	if (rc == -ENOENT)
		return;
	printf(" FDRx %s", fdrtrace_ext_kind_name(x.kind));
	if (rc == -EBADMSG) {
		fputs(" (malformed)", stdout);
		return;
	}
	if (rc == -ENOTSUP) {
		printf(" (extension version %u, newer than this reader)", x.version);
		return;
	}
	if (rc < 0) {
		printf(" (undecodable: %s)", strerror(-rc));
		return;
	}
	f = fdrx_fields(x.kind);
	if (!f) {
		printf(" kind=%u body_len=%u", x.kind, x.body_len);
		return;
	}
	for (; f->type != FDRX_T_END; f++) {
		switch (f->type) {
		case FDRX_T_STR:
			memcpy(&str, (const uint8_t *)&x + f->off, sizeof(str));
			printf(" %s=", f->key);
			dump_str(str.ptr, str.len);
			break;
		case FDRX_T_BYTES8:
			memcpy(&bytes, (const uint8_t *)&x + f->data, sizeof(bytes));
			printf(" %s=", f->key);
			tool_print_hex(stdout, bytes, fdrx_get(&x, f->off, 1));
			break;
		case FDRX_T_ARRAY:
			dump_ext_array(&x, f);
			break;
		case FDRX_T_PAIRS:
			dump_ext_pairs(&x);
			break;
		case FDRX_T_SINCE:
		case FDRX_T_VARIANT:
			if (!dump_ext_group(&x, f))
				return;
			break;
		default:
			dump_ext_value(f, fdrx_get(&x, f->off, fdrx_width(f->type)));
			break;
		}
	}
}

/* The trailing comment: what the reader derived for this event. */
static void dump_derived(const struct fdrtrace_event *ev, const struct dump_opts *o)
{
	if (!o->comments)
		return;
	fputs(" #", stdout);
	if (ev->type == FDRTRACE_EV_BUFFER_EXTENTS || ev->type == FDRTRACE_EV_NEW_BUFFER) {
		printf(" buffer=%" PRIu64 " offset=%" PRIu64, ev->buffer, ev->offset);
		return;
	}
	printf(" tsc=%" PRIu64, ev->tsc);
	if (ev->wall_ns)
		printf(" wall=%" PRIu64 ".%09" PRIu64, ev->wall_ns / 1000000000u,
		       ev->wall_ns % 1000000000u);
	printf(" tid=%" PRId32, ev->tid);
}

static const char *const dump_actions[8] = { "ent", "exi", "tex", "ena" };

static int dump_event(const struct fdrtrace_event *ev, const struct dump_opts *o)
{
	const uint8_t *r = ev->raw;

	switch (ev->type) {
	case FDRTRACE_EV_HEADER: {
		uint32_t bits = dump_u32(r + 4);

		printf("hdr fdr version=%u type=%u bitfield=0x%" PRIx32 " cycle_frequency=%" PRIu64
		       " buffer_size=%" PRIu64, dump_u16(r), dump_u16(r + 2), bits, dump_u64(r + 8),
		       dump_u64(r + 16));
		dump_rsv(r + 24, 8);
		if (o->comments && bits & (FDRTRACE_HDR_CONSTANT_TSC | FDRTRACE_HDR_NONSTOP_TSC))
			printf(" #%s%s", bits & FDRTRACE_HDR_CONSTANT_TSC ? " constant_tsc" : "",
			       bits & FDRTRACE_HDR_NONSTOP_TSC ? " nonstop_tsc" : "");
		break;
	}
	case FDRTRACE_EV_FUNCTION: {
		uint32_t word = dump_u32(r);
		unsigned act = fdrtrace_func_word_action(word);

		if (dump_actions[act])
			printf("fun %s", dump_actions[act]);
		else
			printf("fun act action=%u", act);
		printf(" id=%" PRIu32 " delta=%" PRIu32, fdrtrace_func_word_id(word), dump_u32(r + 4));
		dump_derived(ev, o);
		break;
	}
	case FDRTRACE_EV_NEW_BUFFER:
		printf("buf new tid=%" PRId32, (int32_t)dump_u32(r + 1));
		dump_rsv(r + 5, 11);
		dump_derived(ev, o);
		break;
	case FDRTRACE_EV_END_OF_BUFFER:
		fputs("buf eob", stdout);
		dump_rsv(r + 1, 15);
		break;
	case FDRTRACE_EV_NEW_CPU_ID:
		printf("cpu new cpu=%u tsc=%" PRIu64, dump_u16(r + 1), dump_u64(r + 3));
		dump_rsv(r + 11, 5);
		dump_derived(ev, o);
		break;
	case FDRTRACE_EV_TSC_WRAP:
		printf("cpu wrp tsc=%" PRIu64, dump_u64(r + 1));
		dump_rsv(r + 9, 7);
		dump_derived(ev, o);
		break;
	case FDRTRACE_EV_WALLTIME:
		printf("buf wal sec=%" PRIu64 " usec=%" PRIu32, dump_u64(r + 1), dump_u32(r + 9));
		dump_rsv(r + 13, 3);
		break;
	case FDRTRACE_EV_CALL_ARGUMENT:
		printf("arg val value=%" PRIu64, dump_u64(r + 1));
		dump_rsv(r + 9, 7);
		break;
	case FDRTRACE_EV_BUFFER_EXTENTS:
		printf("buf ext size=%" PRIu64, dump_u64(r + 1));
		dump_rsv(r + 9, 7);
		dump_derived(ev, o);
		break;
	case FDRTRACE_EV_PID:
		printf("buf pid pid=%" PRId32, (int32_t)dump_u32(r + 1));
		dump_rsv(r + 5, 11);
		break;
	case FDRTRACE_EV_CUSTOM_EVENT:
	case FDRTRACE_EV_TYPED_EVENT: {
		bool typed = ev->type == FDRTRACE_EV_TYPED_EVENT;
		size_t n = ev->raw_len > FDRTRACE_METADATA_RECORD_SIZE ?
				   ev->raw_len - FDRTRACE_METADATA_RECORD_SIZE : 0;

		printf("evt %s size=%" PRId32, typed ? "typ" : "cus", (int32_t)dump_u32(r + 1));
		if (typed) {
			printf(" delta=%" PRId32 " type=%u", (int32_t)dump_u32(r + 5), dump_u16(r + 9));
			dump_rsv(r + 11, 5);
		} else if (ev->version >= 5) {
			printf(" delta=%" PRId32, (int32_t)dump_u32(r + 5));
			dump_rsv(r + 9, 7);
		} else if (ev->version == 4) {
			printf(" tsc=%" PRIu64 " cpu=%u", dump_u64(r + 5), dump_u16(r + 13));
			dump_rsv(r + 15, 1);
		} else {
			printf(" tsc=%" PRIu64, dump_u64(r + 5));
			dump_rsv(r + 13, 3);
		}
		if (n) {
			fputs(" data=", stdout);
			tool_print_hex(stdout, r + FDRTRACE_METADATA_RECORD_SIZE, n);
		}
		dump_derived(ev, o);
		if (o->comments && !typed)
			dump_ext(r + FDRTRACE_METADATA_RECORD_SIZE, n);
		break;
	}
	case FDRTRACE_EV_PADDING:
	{
		/* Trailing zeros are implied by len (assemble zero-fills). */
		size_t n = ev->raw_len;

		while (n && !r[n - 1])
			n--;
		printf("buf pad len=%zu", ev->raw_len);
		if (n) {
			fputs(" data=", stdout);
			tool_print_hex(stdout, r, n);
		}
		break;
	}
	default:
		return -EINVAL;
	}
	putchar('\n');
	return 0;
}

static const char dump_help[] =
	"Usage: fdrtrace dump [-n] FILE\n"
	"\n"
	"Print every record of the trace FILE ('-': standard input) as one line of\n"
	"text, the file header first. The text is lossless: 'fdrtrace assemble'\n"
	"turns it back into the identical file. Derived values (absolute TSC, wall\n"
	"time, thread) and decoded fdrtrace extensions follow a '#'.\n"
	"\n"
	"Options:\n"
	"  -n, --no-comments  omit the trailing '# ...' comments\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 when the whole trace was read, 1 on a malformed trace (what\n"
	"was read is printed, then FILE:OFFSET: message on standard error) or an\n"
	"output error, 2 on a usage error. See fdrtrace-dump(1).\n";

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-comments", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dump_opts o = { .comments = true };
	struct fdrtrace_reader *rd;
	struct fdrtrace_event ev;
	const char *path;
	uint64_t expect = 0;
	int c, fd, status = EXIT_OK;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "nh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o.comments = false;
			break;
		case 'h':
			return tool_print_help(dump_help);
		default:
			return tool_bad_option("dump", "nh", argv);
		}
	}
	if (optind != argc - 1)
		return tool_usage_err("dump", optind == argc ? "missing FILE" : "one FILE only");
	path = argv[optind];
	fd = tool_open_input(path);
	if (fd < 0)
		return EXIT_FAIL;
	rd = fdrtrace_reader_open(fd);
	if (!rd) {
		tool_err("%s: %s", path, strerror(errno));
		tool_close_input(fd);
		return EXIT_FAIL;
	}
	while (fdrtrace_reader_read(rd, &ev) == 0) {
		if (ev.offset != expect) {
			fflush(stdout);
			fprintf(stderr, "%s:%" PRIu64 ": internal error: the reader skipped %" PRIu64
				" bytes; the dump would not be lossless\n", path, expect,
				ev.offset - expect);
			status = EXIT_FAIL;
			break;
		}
		expect = ev.offset + ev.size;
		if (dump_event(&ev, &o)) {
			fflush(stdout);
			fprintf(stderr, "%s:%" PRIu64 ": internal error: unknown event type %d\n",
				path, ev.offset, (int)ev.type);
			status = EXIT_FAIL;
			break;
		}
		if (tool_stdout_failed())
			break;
	}
	if (status == EXIT_OK && ev.state == FDRTRACE_ERROR) {
		uint64_t off = 0;

		fdrtrace_reader_error(rd, &off);
		fflush(stdout);
		fprintf(stderr, "%s:%" PRIu64 ": %s\n", path, off, fdrtrace_reader_errmsg(rd));
		status = EXIT_FAIL;
	}
	fdrtrace_reader_close(rd);
	tool_close_input(fd);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
