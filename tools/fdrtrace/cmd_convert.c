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

struct cv {
	bool first;
	uint64_t events;
};

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
	fputs(cv->first ? "\n" : ",\n", stdout);
	cv->first = false;
	cv->events++;
}

static double cv_us(const struct analysis *a, uint64_t tsc)
{
	return a->freq ? (double)tsc * 1e6 / (double)a->freq : (double)tsc;
}

static int32_t cv_pid(const struct analysis *a, const struct an_thread *t)
{
	return t->pid ? t->pid : a->pid;
}

static void cv_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		    uint64_t end, uint64_t dur, enum an_end how)
{
	struct cv *cv = a->ctx;

	(void)end;
	if (f->partial)
		return;
	cv_sep(cv);
	fputs("{\"name\":", stdout);
	cv_json_str(an_func_name(a, f->fn));
	printf(",\"cat\":\"function\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%" PRId32
	       ",\"tid\":%" PRId32, cv_us(a, f->tsc),
	       a->freq ? (double)dur * 1e6 / (double)a->freq : (double)dur, cv_pid(a, t), t->tid);
	if (how == AN_END_UNWOUND)
		fputs(",\"args\":{\"ended\":\"by an outer exit\"}", stdout);
	putchar('}');
}

static void cv_event(struct analysis *a, struct an_thread *t, const struct fdrtrace_event *ev)
{
	struct cv *cv = a->ctx;
	bool typed = ev->type == FDRTRACE_EV_TYPED_EVENT;

	cv_sep(cv);
	printf("{\"name\":\"%s\",\"cat\":\"event\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f,"
	       "\"pid\":%" PRId32 ",\"tid\":%" PRId32 ",\"args\":{\"size\":%" PRIu32,
	       typed ? "typed event" : "custom event", cv_us(a, ev->tsc), cv_pid(a, t), t->tid,
	       ev->u.event.size);
	if (typed)
		printf(",\"type\":%u", ev->u.event.event_type);
	fputs("}}", stdout);
}

static const struct an_ops cv_ops = {
	.exit = cv_exit,
	.event = cv_event,
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
	"Calls still open at the end of the trace are left out; the summary on\n"
	"stderr says how many there were.\n";

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
	struct analysis a;
	struct cv cv = { .first = true };
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
	if (out && strcmp(out, "-") && !freopen(out, "w", stdout)) {
		tool_err("%s: %s", out, strerror(errno));
		return EXIT_FAIL;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", stdout);
	if (an_run(&a, argv[optind])) {
		an_fini(&a);
		if (out && strcmp(out, "-"))
			unlink(out);
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
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
