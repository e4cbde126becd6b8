/* SPDX-License-Identifier: MIT */
/*
 * cmd_convert.c - "fdrtrace convert --format chrome FILE -o OUT": Chrome
 * Trace Event JSON for Perfetto UI and chrome://tracing.
 *
 * Writes as it reads: one complete event ("ph":"X") per call, at the call's
 * exit; one instant event per application custom or typed event; process
 * and thread names (metadata events) at the end, once all are known.
 * Timestamps are microseconds of the trace's TSC (ticks / cycle_frequency),
 * so every thread of a trace shares one time base. Memory is the analysis
 * core's: stacks and names, never records.
 *
 * Contract: single-threaded.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "util.h"

#define CV_OUT_SIZE (1u << 20)
#define CV_LINE_MAX 256	/* room for one event line, without its name */

/* Complete events go through this buffer, the rest through stdio. */
struct cv {
	bool first;
	uint64_t events;
	char *out;
	size_t len;
};

static void cv_flush(struct cv *cv)
{
	if (cv->len)
		fwrite(cv->out, 1, cv->len, stdout);
	cv->len = 0;
}

/* Room for @n more bytes in the buffer (flushing it if needed). */
static char *cv_room(struct cv *cv, size_t n)
{
	if (cv->len + n > CV_OUT_SIZE)
		cv_flush(cv);
	return cv->out + cv->len;
}

static void cv_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void cv_sep(struct cv *cv)
{
	cv_flush(cv);
	fputs(cv->first ? "\n" : ",\n", stdout);
	cv->first = false;
	cv->events++;
}

static int32_t cv_pid(const struct analysis *a, const struct an_thread *t)
{
	return t->pid ? t->pid : a->pid;
}

/* Append @v as decimal. */
static char *cv_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Append nanoseconds as microseconds with three decimals: "12.345". */
static char *cv_us3(char *p, uint64_t ns)
{
	p = cv_u64(p, ns / 1000);
	*p++ = '.';
	*p++ = (char)('0' + ns / 100 % 10);
	*p++ = (char)('0' + ns / 10 % 10);
	*p++ = (char)('0' + ns % 10);
	return p;
}

static uint64_t cv_ns(const struct analysis *a, uint64_t ticks)
{
	return a->freq ? (uint64_t)((double)ticks * 1e9 / (double)a->freq + 0.5) : ticks * 1000;
}

/* The function's name as a JSON string, quotes included, made once. */
static const char *cv_json_name(struct analysis *a, struct an_func *fn)
{
	const char *s;
	char *q, *p;

	if (fn->uptr)
		return fn->uptr;
	s = an_func_name(a, fn);
	q = malloc(strlen(s) * 6 + 3);
	if (!q)
		return "\"?\"";
	p = q;
	*p++ = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c < 0x20) {
			p += sprintf(p, "\\u%04x", c);
		} else {
			*p++ = (char)c;
		}
	}
	*p++ = '"';
	*p = '\0';
	fn->uptr = q;
	return q;
}

static char *cv_i32(char *p, int32_t v)
{
	if (v < 0) {
		*p++ = '-';
		return cv_u64(p, (uint64_t)-(int64_t)v);
	}
	return cv_u64(p, (uint64_t)v);
}

static void cv_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		    uint64_t end, uint64_t dur, enum an_end how)
{
	static const char head[] = "\n{\"name\":";
	static const char mid[] = ",\"cat\":\"function\",\"ph\":\"X\",\"ts\":";
	static const char unwound[] = ",\"args\":{\"ended\":\"by an outer exit\"}";
	struct cv *cv = a->ctx;
	const char *name;
	size_t name_len;
	char *p, *start;

	(void)end;
	if (f->partial)
		return;
	cv->events++;
	name = cv_json_name(a, f->fn);
	name_len = strlen(name);
	if (name_len > CV_OUT_SIZE - CV_LINE_MAX)
		name = "\"?\"", name_len = 3;
	start = p = cv_room(cv, name_len + CV_LINE_MAX);
	if (!cv->first)
		*p++ = ',';
	cv->first = false;
	memcpy(p, head, sizeof(head) - 1);
	p += sizeof(head) - 1;
	memcpy(p, name, name_len);
	p += name_len;
	memcpy(p, mid, sizeof(mid) - 1);
	p += sizeof(mid) - 1;
	p = cv_us3(p, cv_ns(a, f->tsc));
	memcpy(p, ",\"dur\":", 7);
	p = cv_us3(p + 7, cv_ns(a, dur));
	memcpy(p, ",\"pid\":", 7);
	p = cv_i32(p + 7, cv_pid(a, t));
	memcpy(p, ",\"tid\":", 7);
	p = cv_i32(p + 7, t->tid);
	if (how == AN_END_UNWOUND) {
		memcpy(p, unwound, sizeof(unwound) - 1);
		p += sizeof(unwound) - 1;
	}
	*p++ = '}';
	cv->len += (size_t)(p - start);
}

static void cv_event(struct analysis *a, struct an_thread *t, const struct fdrtrace_event *ev)
{
	struct cv *cv = a->ctx;
	bool typed = ev->type == FDRTRACE_EV_TYPED_EVENT;

	cv_sep(cv);
	printf("{\"name\":\"%s\",\"cat\":\"event\",\"ph\":\"i\",\"s\":\"t\",\"ts\":",
	       typed ? "typed event" : "custom event");
	{
		char buf[32];

		fwrite(buf, 1, (size_t)(cv_us3(buf, cv_ns(a, ev->tsc)) - buf), stdout);
	}
	printf(",\"pid\":%" PRId32 ",\"tid\":%" PRId32 ",\"args\":{\"size\":%" PRIu32,
	       cv_pid(a, t), t->tid, ev->u.event.size);
	if (typed)
		printf(",\"type\":%u", ev->u.event.event_type);
	fputs("}}", stdout);
}

/*
 * A native stack: an instant event on its thread ("crash" at a fatal
 * signal, "recording started" at fdrtrace_start()), the frames in its args
 * as strings, innermost first: "NAME (MODULE+0xOFFSET)".
 */
static void cv_native(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
		      uint64_t tsc)
{
	struct cv *cv = a->ctx;
	bool crash = x->u.native_stack.why == FDRTRACE_NATIVE_SIGNAL;
	struct ns_frame f;
	uint64_t addr;
	char buf[64];

	cv_sep(cv);
	printf("{\"name\":\"%s\",\"cat\":\"native_stack\",\"ph\":\"i\",\"s\":\"t\",\"ts\":",
	       crash ? "crash" : "recording started");
	fwrite(buf, 1, (size_t)(cv_us3(buf, cv_ns(a, tsc)) - buf), stdout);
	printf(",\"pid\":%" PRId32 ",\"tid\":%" PRId32 ",\"args\":{", cv_pid(a, t), t->tid);
	if (crash)
		printf("\"signal\":%u,\"fault_address\":\"0x%" PRIx64 "\",", x->u.native_stack.signal,
		       x->u.native_stack.fault_address);
	fputs("\"stack\":[", stdout);
	for (uint32_t i = 0; ns_resolve(&a->ns, x, i, &addr, &f) == 0; i++) {
		char text[4096];

		if (f.module)
			snprintf(text, sizeof(text), "%s (%s+0x%" PRIx64 ")", f.name ? f.name : "??",
				 f.module, f.offset);
		else
			snprintf(text, sizeof(text), "%s (0x%" PRIx64 ", unknown module)",
				 f.name ? f.name : "??", addr);
		if (i)
			putchar(',');
		cv_json_str(text);
	}
	fputs("]}}", stdout);
}

/* A call still open at the end: a begin event with no end (Perfetto shows
 * it as "did not end"). */
static void cv_unfinished(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct cv *cv = a->ctx;
	char buf[32];

	if (f->partial)
		return;
	cv_sep(cv);
	fputs("{\"name\":", stdout);
	fputs(cv_json_name(a, f->fn), stdout);
	fputs(",\"cat\":\"function\",\"ph\":\"B\",\"ts\":", stdout);
	fwrite(buf, 1, (size_t)(cv_us3(buf, cv_ns(a, f->tsc)) - buf), stdout);
	printf(",\"pid\":%" PRId32 ",\"tid\":%" PRId32 ",\"args\":{\"ended\":\"never\"}}",
	       cv_pid(a, t), t->tid);
}

static const struct an_ops cv_ops = {
	.exit = cv_exit,
	.event = cv_event,
	.unfinished = cv_unfinished,
	.native = cv_native,
};

static const char convert_help[] =
	"Usage: fdrtrace convert --format chrome [options] FILE [-o OUT]\n"
	"\n"
	"Convert the trace FILE ('-': standard input) to Chrome Trace Event JSON,\n"
	"which Perfetto UI (ui.perfetto.dev) and chrome://tracing load: a complete\n"
	"event per call, thread and process names, custom events as instant events\n"
	"with their payload size. Timestamps are microseconds of the trace's clock.\n"
	"The output is written while the trace is read: memory stays bounded.\n"
	"\n"
	"Options:\n"
	"  -f, --format FMT      chrome (the only format, and the default)\n"
	"  -o, --output OUT      write to OUT (default: standard output)\n"
	"      --no-demangle     print C++ names as recorded\n"
	"  -q, --quiet           no summary of unmatched records on stderr\n"
	"  -h, --help            show this help\n"
	"\n"
	"Calls still open at the end of the trace (a crash, _exit) become begin\n"
	"events without an end; the summary on stderr says how many there were.\n";

int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-demangle", no_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char optstring[] = "f:o:qh";
	const char *out = NULL;
	struct tool_output output;
	struct analysis a;
	struct cv cv = { .first = true };
	int rc;
	uint32_t i;
	int c, status = EXIT_OK;

	memset(&a, 0, sizeof(a));
	a.demangle = true;
	a.ops = &cv_ops;
	a.ctx = &cv;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "chrome") && strcmp(optarg, "perfetto"))
				return tool_usage_err("convert", "unknown format '%s' (chrome)",
						      optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'D':
			a.demangle = false;
			break;
		case 'q':
			a.quiet = true;
			break;
		case 'h':
			return tool_print_help(convert_help);
		default:
			return tool_bad_option("convert", optstring, argv);
		}
	}
	if (optind != argc - 1)
		return tool_usage_err("convert", optind == argc ? "missing FILE" : "one FILE only");
	cv.out = malloc(CV_OUT_SIZE);
	if (!cv.out) {
		tool_err("out of memory");
		return EXIT_FAIL;
	}
	if (tool_output_open(&output, out)) {
		free(cv.out);
		return EXIT_FAIL;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", stdout);
	rc = an_run(&a, argv[optind]);
	cv_flush(&cv);
	free(cv.out);
	if (rc) {
		an_fini(&a);
		tool_output_close(&output, false);
		return EXIT_FAIL;
	}
	if (a.program) {
		cv_sep(&cv);
		printf("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRId32
		       ",\"args\":{\"name\":", a.pid);
		cv_json_str(a.program);
		fputs("}}", stdout);
	}
	for (i = 0; i < a.n_threads; i++) {
		const struct an_thread *t = a.threads[i];
		char buf[80];

		cv_sep(&cv);
		printf("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%" PRId32 ",\"tid\":%" PRId32
		       ",\"args\":{\"name\":", cv_pid(&a, t), t->tid);
		cv_json_str(an_thread_label(t, buf, sizeof(buf)));
		fputs("}}", stdout);
	}
	fputs("\n]}\n", stdout);
	an_summary(&a, "convert");
	an_fini(&a);
	if (tool_output_close(&output, true))
		status = EXIT_FAIL;
	return status;
}
