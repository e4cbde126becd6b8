/* SPDX-License-Identifier: MIT */
/*
 * cmd_stack.c - "fdrtrace stack FILE": folded stacks for flame graphs.
 *
 * The analysis core builds the calling-context tree (one node per distinct
 * call path); this prints one line per node, "outer;inner;leaf VALUE", with
 * the node's self time (nanoseconds by default) or its number of calls.
 * Memory grows with the number of distinct paths, not with records.
 *
 * Contract: single-threaded.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "util.h"

enum stk_unit { STK_NS, STK_US, STK_TICKS, STK_COUNT };

static const char stack_help[] =
	"Usage: fdrtrace stack [options] FILE\n"
	"\n"
	"Print the folded call stacks of the trace FILE ('-': standard input), one\n"
	"line per distinct call path: 'main;parse;lex 1234'. The value is the path's\n"
	"self time (time in the leaf, not in its callees) or its number of calls.\n"
	"Feed it to flamegraph.pl, inferno-flamegraph or speedscope.\n"
	"\n"
	"Options:\n"
	"  -c, --count           values are numbers of calls (default: time)\n"
	"  -u, --unit UNIT       time unit: ns (default), us or ticks\n"
	"  -t, --per-thread      start every stack with its thread's name\n"
	"      --inclusive       values are inclusive times (callees included)\n"
	"      --no-demangle     print C++ names as recorded\n"
	"  -q, --quiet           no summary of unmatched records, nor the count of\n"
	"                        application events, on stderr\n"
	"  -h, --help            show this help\n"
	"\n"
	"Calls still open at the end of the trace are not counted; the summary on\n"
	"stderr says how many there were. The application's custom and typed events\n"
	"are not in the stacks: a line on stderr counts them (see replay, convert).\n";

/* Print the path from the root down to @node, each name followed by ';'. */
static int stk_path(struct analysis *a, uint32_t node, uint32_t **path, uint32_t *cap)
{
	uint32_t n = 0, i;
	char buf[80];

	for (i = node; i; i = a->nodes[i].parent) {
		if (n == *cap) {
			uint32_t c = *cap ? *cap * 2 : 256;
			uint32_t *p = realloc(*path, c * sizeof(*p));

			if (!p)
				return -1;
			*path = p;
			*cap = c;
		}
		(*path)[n++] = i;
	}
	while (n--) {
		const struct an_node *nd = &a->nodes[(*path)[n]];

		if (nd->fn)
			fputs(an_func_name(a, nd->fn), stdout);
		else
			fputs(an_thread_label(nd->thread, buf, sizeof(buf)), stdout);
		putchar(';');
	}
	return 0;
}

int cmd_stack(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", no_argument, NULL, 'c' },
		{ "unit", required_argument, NULL, 'u' },
		{ "per-thread", no_argument, NULL, 't' },
		{ "inclusive", no_argument, NULL, 'I' },
		{ "no-demangle", no_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char optstring[] = "cu:tqh";
	enum stk_unit unit = STK_NS;
	bool count = false, inclusive = false;
	struct analysis a;
	uint32_t i, *path = NULL, path_cap = 0;
	int c, status = EXIT_OK;

	memset(&a, 0, sizeof(a));
	a.demangle = true;
	a.want_cct = true;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			count = true;
			break;
		case 'u':
			if (strcmp(optarg, "ns") == 0)
				unit = STK_NS;
			else if (strcmp(optarg, "us") == 0)
				unit = STK_US;
			else if (strcmp(optarg, "ticks") == 0)
				unit = STK_TICKS;
			else
				return tool_usage_err("stack", "unknown unit '%s'", optarg);
			break;
		case 't':
			a.cct_per_thread = true;
			break;
		case 'I':
			inclusive = true;
			break;
		case 'D':
			a.demangle = false;
			break;
		case 'q':
			a.quiet = true;
			break;
		case 'h':
			return tool_print_help(stack_help);
		default:
			return tool_bad_option("stack", optstring, argv);
		}
	}
	if (optind != argc - 1)
		return tool_usage_err("stack", optind == argc ? "missing FILE" : "one FILE only");
	if (an_run(&a, argv[optind])) {
		an_fini(&a);
		return EXIT_FAIL;
	}
	for (i = 1; i < a.n_nodes && !tool_stdout_failed(); i++) {
		const struct an_node *n = &a.nodes[i];
		uint64_t v, ticks = inclusive ? n->incl : n->self;

		if (!n->fn)
			continue;	/* a thread's root */
		if (count)
			v = n->calls;
		else if (unit == STK_TICKS || !a.freq)
			v = ticks;
		else
			v = (uint64_t)((double)ticks * (unit == STK_NS ? 1e9 : 1e6) /
				       (double)a.freq + 0.5);
		if (!v)
			continue;
		if (n->parent && stk_path(&a, n->parent, &path, &path_cap)) {
			tool_err("out of memory");
			status = EXIT_FAIL;
			break;
		}
		printf("%s %" PRIu64 "\n", an_func_name(&a, n->fn), v);
	}
	free(path);
	an_summary(&a, "stack");
	an_events_note(&a, "stack");
	an_fini(&a);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
