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

/* The "# FDRx ..." decoding of one of our extension payloads. */
static void dump_ext(const uint8_t *data, size_t len)
{
	struct fdrtrace_ext x;
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
	switch (x.kind) {
	case FDRTRACE_EXT_PROCESS:
		printf(" pid=%" PRIu32 " ppid=%" PRIu32 " start_realtime_ns=%" PRIu64
		       " clock=%u freq_source=%u program=", x.u.process.pid, x.u.process.ppid,
		       x.u.process.start_realtime_ns, x.u.process.clock, x.u.process.freq_source);
		dump_str(x.u.process.program.ptr, x.u.process.program.len);
		if (x.u.process.has_cmdline) {
			printf(" start_tsc=%" PRIu64 " argc=%" PRIu32 " args=", x.u.process.start_tsc,
			       x.u.process.argc);
			dump_str(x.u.process.args.ptr, x.u.process.args.len);
		}
		break;
	case FDRTRACE_EXT_CONFIG: {
		struct fdrtrace_str k, v;
		size_t pos = 0;
		unsigned i = 0;

		/* As assemble's "ext config" takes them: k1= v1= k2= v2= ... */
		while (fdrtrace_ext_config_pair(&x, &pos, &k, &v) == 1) {
			i++;
			printf(" k%u=", i);
			dump_str(k.ptr, k.len);
			printf(" v%u=", i);
			dump_str(v.ptr, v.len);
		}
		if (i != x.u.config.pairs)
			printf(" (%u pairs announced)", x.u.config.pairs);
		break;
	}
	case FDRTRACE_EXT_MODULE_MAP:
		printf(" module_id=%" PRIu32 " load_base=0x%" PRIx64 " size=%" PRIu64 " build_id=",
		       x.u.module_map.module_id, x.u.module_map.load_base, x.u.module_map.size);
		tool_print_hex(stdout, x.u.module_map.build_id, x.u.module_map.build_id_len);
		fputs(" path=", stdout);
		dump_str(x.u.module_map.path.ptr, x.u.module_map.path.len);
		break;
	case FDRTRACE_EXT_MODULE_UNMAP:
		printf(" module_id=%" PRIu32 " load_base=0x%" PRIx64 " size=%" PRIu64,
		       x.u.module_unmap.module_id, x.u.module_unmap.load_base,
		       x.u.module_unmap.size);
		break;
	case FDRTRACE_EXT_FUNC:
		printf(" func_id=%" PRIu32 " address=0x%" PRIx64 " module_id=%" PRId32 " name=",
		       x.u.func.func_id, x.u.func.address, (int32_t)x.u.func.module_id);
		dump_str(x.u.func.name.ptr, x.u.func.name.len);
		break;
	case FDRTRACE_EXT_THREAD_NAME:
		printf(" tid=%" PRIu32 " name=", x.u.thread_name.tid);
		dump_str(x.u.thread_name.name.ptr, x.u.thread_name.name.len);
		break;
	case FDRTRACE_EXT_DROP:
		printf(" tid=%" PRIu32 " reason=%s records=%" PRIu64 " buffers=%" PRIu64,
		       x.u.drop.tid, fdrtrace_drop_reason_name(x.u.drop.reason), x.u.drop.records,
		       x.u.drop.buffers);
		if (x.u.drop.gap) {
			uint32_t i;

			printf(" first_tsc=%" PRIu64 " last_tsc=%" PRIu64, x.u.drop.first_tsc,
			       x.u.drop.last_tsc);
			if (x.u.drop.exited == FDRTRACE_GAP_UNKNOWN)
				fputs(" exited=unknown", stdout);
			else
				printf(" exited=%" PRIu32, x.u.drop.exited);
			printf(" depth=%" PRIu32 " ids=", x.u.drop.depth);
			for (i = 0; i < x.u.drop.depth; i++)
				printf("%s%" PRIu32, i ? "," : "", dump_u32(x.u.drop.ids + 4 * i));
		}
		break;
	case FDRTRACE_EXT_WAIT:
		printf(" tid=%" PRIu32 " first_tsc=%" PRIu64 " last_tsc=%" PRIu64, x.u.wait.tid,
		       x.u.wait.first_tsc, x.u.wait.last_tsc);
		break;
	case FDRTRACE_EXT_FORK:
		printf(" parent_pid=%" PRIu32 " child_pid=%" PRIu32, x.u.fork.parent_pid,
		       x.u.fork.child_pid);
		if (x.u.fork.has_point)
			printf(" parent_tid=%" PRIu32 " tsc=%" PRIu64 " serial=%" PRIu32,
			       x.u.fork.parent_tid, x.u.fork.tsc, x.u.fork.serial);
		break;
	case FDRTRACE_EXT_EXEC:
		printf(" pid=%" PRIu32 " path=", x.u.exec.pid);
		dump_str(x.u.exec.path.ptr, x.u.exec.path.len);
		if (x.u.exec.has_point)
			printf(" tid=%" PRIu32 " tsc=%" PRIu64, x.u.exec.tid, x.u.exec.tsc);
		break;
	case FDRTRACE_EXT_SPAWN:
		printf(" tid=%" PRIu32 " tsc=%" PRIu64 " serial=%" PRIu32 " child_pid=%" PRIu32,
		       x.u.spawn.tid, x.u.spawn.tsc, x.u.spawn.serial, x.u.spawn.child_pid);
		break;
	case FDRTRACE_EXT_EXCLUDED:
		printf(" func_id=%" PRIu32 " tsc=%" PRIu64 " calls=%" PRIu32 " sum_ticks=%" PRIu64
		       " threshold_ticks=%" PRIu64 " after=%" PRIu32 " undone=%u",
		       x.u.excluded.func_id, x.u.excluded.tsc, x.u.excluded.calls,
		       x.u.excluded.sum_ticks, x.u.excluded.threshold_ticks, x.u.excluded.after,
		       x.u.excluded.undone);
		break;
	case FDRTRACE_EXT_COUNTED: {
		uint32_t id;
		uint64_t calls;

		printf(" tid=%" PRIu32 " lost=%" PRIu64 " count=%" PRIu32 " counts=", x.u.counted.tid,
		       x.u.counted.lost, x.u.counted.count);
		for (uint32_t i = 0; fdrtrace_ext_counted_pair(&x, i, &id, &calls) == 0; i++)
			printf("%s%" PRIu32 ":%" PRIu64, i ? "," : "", id, calls);
		break;
	}
	case FDRTRACE_EXT_CLOSE:
		printf(" how=%s records=%" PRIu64 " records_dropped=%" PRIu64 " buffers=%" PRIu64
		       " buffers_dropped=%" PRIu64 " threads=%" PRIu32 " cycle_frequency=%" PRIu64
		       " end_realtime_ns=%" PRIu64, fdrtrace_close_how_name(x.u.close.how),
		       x.u.close.records, x.u.close.records_dropped, x.u.close.buffers,
		       x.u.close.buffers_dropped, x.u.close.threads, x.u.close.cycle_frequency,
		       x.u.close.end_realtime_ns);
		if (x.u.close.has_left_out)
			printf(" records_left_out=%" PRIu64, x.u.close.records_left_out);
		/* error is followed by end: given whenever end is, so that assemble keeps it */
		if (x.u.close.error || x.u.close.has_end)
			printf(" error=%" PRIu32, x.u.close.error);
		if (x.u.close.has_end)
			printf(" end=%s end_value=%" PRIu32, fdrtrace_end_name(x.u.close.end),
			       x.u.close.end_value);
		break;
	case FDRTRACE_EXT_STACK: {
		uint32_t i;

		printf(" tid=%" PRIu32 " depth=%" PRIu32 " ids=", x.u.stack.tid, x.u.stack.depth);
		for (i = 0; i < x.u.stack.depth; i++)
			printf("%s%" PRIu32, i ? "," : "", dump_u32(x.u.stack.ids + 4 * i));
		if (x.u.stack.numbered)
			printf(" buffer_no=%" PRIu64 " records_before=%" PRIu64 " skipped=%" PRIu32,
			       x.u.stack.buffer_no, x.u.stack.records_before, x.u.stack.skipped);
		break;
	}
	case FDRTRACE_EXT_NATIVE_STACK: {
		uint64_t addr;
		uint32_t i, mod;

		printf(" tid=%" PRIu32 " why=%s signal=%u fault_address=0x%" PRIx64 " depth=%" PRIu32
		       " frames=", x.u.native_stack.tid, fdrtrace_native_why_name(x.u.native_stack.why),
		       x.u.native_stack.signal, x.u.native_stack.fault_address,
		       x.u.native_stack.depth);
		/* as assemble's "ext native_stack" takes them: ADDRESS@MODULE,... */
		for (i = 0; fdrtrace_ext_native_frame(&x, i, &addr, &mod) == 0; i++)
			printf("%s0x%" PRIx64 "@%" PRId32, i ? "," : "", addr, (int32_t)mod);
		break;
	}
	default:
		printf(" kind=%u body_len=%u", x.kind, x.body_len);
		break;
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
