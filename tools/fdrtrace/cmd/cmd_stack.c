/* SPDX-License-Identifier: MIT */
/*
 * cmd_stack.c - "fdrtrace stack FILE": folded stacks for flame graphs.
 *
 * Builds the calling-context tree of the calls the selectors show (one node
 * per distinct path of shown calls, in the analysis core's node table) and
 * prints one line per node, "outer;inner;leaf VALUE", with
 * the node's self time (nanoseconds by default) or its number of calls.
 * Memory grows with the number of distinct paths, not with records.
 *
 * A line holds its whole path, so the output grows with the square of the
 * depth (50,000 nested calls: more than 3 GB from an 800 KB trace): the
 * calls deeper than STK_DEPTH_MAX levels are folded into one frame named
 * for it under each path that deep, which counts them (calls, self time;
 * the outermost one's duration with --inclusive). Long names make that
 * bound one of frames, not bytes (deep stacks of 4 KB names: 2 GB from a
 * 20 KB trace): a path longer than STK_LINE_MAX bytes keeps its outermost
 * frame and as many of its innermost as fit, its middle frames folded into
 * one, "[N frames folded: path over 16384 bytes]" (said on stderr). A line
 * is then at most STK_LINE_MAX bytes and its innermost name, one line per
 * distinct path of calls: the output is bounded by the input's calls.
 *
 * Contract: single-threaded.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"
#include "util.h"

enum stk_unit { STK_NS, STK_US, STK_TICKS, STK_COUNT };

#define STK_DEPTH_MAX 1000u
#define STK_DEEPER "[calls deeper than 1000 levels]"
#define STK_LINE_MAX 16384u	/* bytes of a path before its middle is folded */

/* The frame of the calls deeper than STK_DEPTH_MAX (an id no function has). */
static char stk_deeper_name[] = STK_DEEPER;
static struct an_func stk_deeper = {
	.id = 0xfffffffeu, .base = stk_deeper_name, .display = stk_deeper_name,
	.base_len = sizeof(STK_DEEPER) - 1,
};

/* The command's own long-only option. */
#define STK_OPT_INCLUSIVE CLI_OPT_CMD
#define STK_OPT_PER_PROCESS (CLI_OPT_CMD + 1)

struct stk {
	enum stk_unit unit;
	bool count, inclusive, per_thread, per_process;
	bool deeper;	/* calls were folded into stk_deeper */
	uint64_t long_paths;	/* paths whose middle was folded (STK_LINE_MAX) */
	struct sel sel;
};

static const struct option stk_longopts[] = {
	{ "count", no_argument, NULL, 'c' },
	{ "unit", required_argument, NULL, 'u' },
	{ "per-thread", no_argument, NULL, 'P' },
	{ "inclusive", no_argument, NULL, STK_OPT_INCLUSIVE },
	{ "per-process", no_argument, NULL, STK_OPT_PER_PROCESS },
	{ NULL, 0, NULL, 0 },
};

static int stk_option(struct cli *cl, int c, const char *arg)
{
	struct stk *k = cl->ctx;

	switch (c) {
	case 'c':
		k->count = true;
		break;
	case 'u':
		if (strcmp(arg, "ns") == 0)
			k->unit = STK_NS;
		else if (strcmp(arg, "us") == 0)
			k->unit = STK_US;
		else if (strcmp(arg, "ticks") == 0)
			k->unit = STK_TICKS;
		else
			return tool_usage_err("stack", "unknown unit '%s'", arg);
		break;
	case 'P':
		k->per_thread = true;
		break;
	case STK_OPT_INCLUSIVE:
		k->inclusive = true;
		break;
	case STK_OPT_PER_PROCESS:
		k->per_process = true;
		break;
	}
	return 0;
}

static const struct cli_cmd stack_cli = {
	.name = "stack",
	.usage =
	"Usage: fdrtrace stack [options] FILE|DIR...\n"
	"\n"
	"Print the folded call stacks of the trace FILE ('-': standard input), one\n"
	"line per distinct call path: 'main;parse;lex 1234'. The value is the path's\n"
	"self time (time in the leaf, not in its callees) or its number of calls.\n"
	"Feed it to flamegraph.pl, inferno-flamegraph or speedscope.\n"
	"\n"
	"The selectors keep the calls that replay would show: a path is made of shown\n"
	"calls only (with -F it begins at the matching function), and the time of a\n"
	"hidden call (-N, -D, -t, -r) counts in the self time of the innermost shown\n"
	"call around it, so the flame graph's widths stay the real times.\n"
	"\n"
	"A run (a directory of traces, one per process, or several FILEs): the stacks\n"
	"of every process, equal paths (by name) merged into one line; with\n"
	"--per-process each begins with 'PROGRAM PID;' (the program's file name);\n"
	"--pid selects processes. A ';' in a name becomes ':'.\n",
	.options =
	"  -c, --count           values are numbers of calls (default: time)\n"
	"  -u, --unit UNIT       time unit: ns (default), us or ticks\n"
	"  -P, --per-thread      start every stack with its thread's name\n"
	"      --inclusive       values are inclusive times (callees included)\n"
	"      --per-process     of a run, start every stack with its process\n",
	.epilog =
	"Calls still open at the end of the trace are not counted; the summary on\n"
	"stderr says how many there were. The application's custom and typed events\n"
	"are not in the stacks: a line on stderr counts them (see replay, convert).\n",
	.optstring = "cu:P",
	.longopts = stk_longopts,
	.groups = CLI_QUIET | CLI_SELECT | CLI_RUN,
	.min_files = 1,
	.max_files = CLI_MAX_FILES,
	.option = stk_option,
};

/* A shown call gets its tree node at its entry: its path is the shown calls around it. */
static void stk_enter(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct stk *k = a->ctx;
	struct sel_frame *fr = sel_enter(&k->sel, a, t), *up;
	uint32_t parent = 0;

	if (!fr || !fr->shown)
		return;
	if (fr->up) {
		up = sel_frame(&k->sel, t, fr->up);
		parent = up ? (uint32_t)up->user : 0;
	} else if (k->per_thread) {
		if (!t->uptr)
			t->uptr = (void *)(uintptr_t)an_node_child(a, 0, NULL, t);
		parent = (uint32_t)(uintptr_t)t->uptr;
	}
	if (parent && a->nodes[parent].depth >= STK_DEPTH_MAX) {
		/* the folded frame, once under the path; calls inside it stay in it */
		fr->user = a->nodes[parent].fn == &stk_deeper ?
			   parent : an_node_child(a, parent, &stk_deeper, t);
		k->deeper = true;
		return;
	}
	fr->user = an_node_child(a, parent, f->fn, t);
}

static void stk_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		     uint64_t end, uint64_t dur, enum an_end how)
{
	struct stk *k = a->ctx;
	struct sel_frame *fr = sel_frame(&k->sel, t, t->depth);
	struct an_node *n;

	(void)end;
	(void)how;
	if (!sel_exit(&k->sel, a, t, dur) || f->partial || !fr || !fr->user)
		return;
	n = &a->nodes[fr->user];
	n->calls++;
	/* inside the folded frame, only its outermost call's duration is inclusive */
	if (n->fn != &stk_deeper || fr->up == 0 ||
	    sel_frame(&k->sel, t, fr->up)->user != fr->user)
		n->incl += dur;
	if (!f->holed)	/* records lost inside it: its self time is not known */
		n->self += dur > fr->shown_children ? dur - fr->shown_children : 0;
}

static const struct an_ops stk_ops = {
	.enter = stk_enter,
	.exit = stk_exit,
};

/* The name of node @nd in a path (@buf: room for a thread's label). */
static const char *stk_name(struct analysis *a, const struct an_node *nd, char *buf, size_t n)
{
	return nd->fn ? an_func_name(a, nd->fn) : an_thread_label(nd->thread, buf, n);
}

/*
 * The nodes from @node up to the root in *@path (innermost first), their
 * count in *@n, and which to fold: [*@lo, *@hi) of *@path (none when
 * equal). A path of more than STK_LINE_MAX bytes keeps its outermost frame
 * and as many innermost frames as fit (its innermost always), so that a
 * line is bounded by STK_LINE_MAX and one name, whatever the depth and the
 * names' lengths. Return: 0, -1 out of memory.
 */
static int stk_frames(struct analysis *a, uint32_t node, uint32_t **path, uint32_t *cap,
		      uint32_t *n, uint32_t *lo, uint32_t *hi)
{
	uint32_t i, k = 0;
	size_t total = 0, len, kept;
	char buf[80];

	for (i = node; i; i = a->nodes[i].parent) {
		if (k == *cap) {
			uint32_t c = *cap ? *cap * 2 : 256;
			uint32_t *p = realloc(*path, c * sizeof(*p));

			if (!p)
				return -1;
			*path = p;
			*cap = c;
		}
		(*path)[k++] = i;
		total += strlen(stk_name(a, &a->nodes[i], buf, sizeof(buf))) + 1;
	}
	*n = k;
	*lo = *hi = 0;
	if (total <= STK_LINE_MAX || k < 3)
		return 0;
	/* the outermost, then the innermost ones while they fit */
	kept = strlen(stk_name(a, &a->nodes[(*path)[k - 1]], buf, sizeof(buf))) + 1 + 64;
	for (i = 0; i < k - 1; i++) {
		len = strlen(stk_name(a, &a->nodes[(*path)[i]], buf, sizeof(buf))) + 1;
		if (i && kept + len > STK_LINE_MAX)
			break;
		kept += len;
	}
	if (i < k - 1) {
		*lo = i;
		*hi = k - 1;
	}
	return 0;
}

/* The frame that stands for path[lo, hi) (STK_LINE_MAX). */
static const char *stk_folded(char *buf, size_t n, uint32_t frames)
{
	snprintf(buf, n, "[%" PRIu32 " frames folded: path over %u bytes]", frames, STK_LINE_MAX);
	return buf;
}

/* Print the path from the root down to @node, each name followed by ';'. */
static int stk_path(struct stk *k, struct analysis *a, uint32_t node, uint32_t **path,
		    uint32_t *cap)
{
	uint32_t n, lo, hi;
	char buf[80];

	if (stk_frames(a, node, path, cap, &n, &lo, &hi))
		return -1;
	k->long_paths += lo != hi;
	while (n--) {
		if (n >= lo && n < hi) {
			if (n == hi - 1)
				printf("%s;", stk_folded(buf, sizeof(buf), hi - lo));
			continue;
		}
		fputs(stk_name(a, &a->nodes[(*path)[n]], buf, sizeof(buf)), stdout);
		putchar(';');
	}
	return 0;
}

/* A growing text buffer for a run's folded lines. */
struct stk_text {
	char *p;
	size_t len, cap;
};

static int stk_put(struct stk_text *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* A name in a folded line: ';' separates frames, so it becomes ':' */
static int stk_put_name(struct stk_text *b, const char *s)
{
	size_t n = strlen(s), i, from = b->len;

	if (stk_put(b, s, n))
		return -1;
	for (i = from; i < b->len; i++)
		if (b->p[i] == ';' || b->p[i] == '\n')
			b->p[i] = ':';
	return 0;
}

/* The folded line of @node (without its value) in @b. */
static int stk_fold(struct stk *k, struct analysis *a, uint32_t node, struct stk_text *b,
		    uint32_t **path, uint32_t *cap)
{
	uint32_t n, lo, hi;
	char buf[80];

	if (stk_frames(a, node, path, cap, &n, &lo, &hi))
		return -1;
	k->long_paths += lo != hi;
	while (n--) {
		const char *name = stk_name(a, &a->nodes[(*path)[n]], buf, sizeof(buf));

		if (n >= lo && n < hi) {
			if (n != hi - 1)
				continue;
			name = stk_folded(buf, sizeof(buf), hi - lo);
		}
		if (stk_put_name(b, name) || (n && stk_put(b, ";", 1)))
			return -1;
	}
	return 0;
}

/* Say on stderr that paths were folded (STK_LINE_MAX), once per trace. */
static void stk_say_long(struct stk *k, const struct analysis *a)
{
	if (k->long_paths && !a->quiet) {
		tool_stderr_sync();
		fprintf(stderr, "fdrtrace stack: %s: %" PRIu64 " path%s longer than %u bytes: "
			"the middle frames of each folded into one, \"[N frames folded: path "
			"over %u bytes]\"\n", a->path, k->long_paths,
			k->long_paths == 1 ? "" : "s", STK_LINE_MAX, STK_LINE_MAX);
	}
	k->long_paths = 0;
}

/* stack of a run: the folded lines of every process, merged. */
static int stk_run(const struct cli *cl, struct stk *k, struct run_input *ri)
{
	static struct analysis a;	/* large: not on the stack */
	struct ri_names lines = { 0 };
	struct stk_text b = { 0 };
	uint64_t *val = NULL;
	uint32_t val_cap = 0, i, j, *path = NULL, path_cap = 0, read = 0, x;
	int status = EXIT_OK;
	char pre[64];

	for (x = 0; x < ri->n; x++) {
		const struct ri_trace *t = &ri->t[x];
		const char *prog = t->program ? t->program : t->path;

		if (!t->selected)
			continue;
		memset(&a, 0, sizeof(a));
		cli_apply(cl, &a);
		sel_init(&k->sel, &cl->sel);
		a.ops = &stk_ops;
		a.ctx = k;
		if (an_run(&a, t->path)) {
			status = EXIT_FAIL;
			goto next;
		}
		read++;
		for (i = 1; i < a.n_nodes; i++) {
			const struct an_node *n = &a.nodes[i];
			uint64_t v, ticks = k->inclusive ? n->incl : n->self;

			if (!n->fn)
				continue;
			if (k->count)
				v = n->calls;
			else if (k->unit == STK_TICKS || !a.freq)
				v = ri_ticks(ri, a.freq, ticks);
			else
				v = tool_scale(ticks, k->unit == STK_NS ? 1e9 : 1e6, a.freq);
			if (!v)
				continue;
			b.len = 0;
			if (k->per_process) {
				const char *base = strrchr(prog, '/');

				if (stk_put_name(&b, base ? base + 1 : prog))
					goto oom;
				snprintf(pre, sizeof(pre), " %d;", (int)t->pid);
				if (stk_put(&b, pre, strlen(pre)))
					goto oom;
			}
			if (stk_fold(k, &a, i, &b, &path, &path_cap))
				goto oom;
			j = ri_names_get(&lines, b.p, b.len);
			if (j == UINT32_MAX)
				goto oom;
			if (j >= val_cap) {
				uint32_t cap = val_cap ? val_cap * 2 : 1024;
				uint64_t *nv;

				while (cap <= j)
					cap *= 2;
				nv = realloc(val, cap * sizeof(*nv));
				if (!nv)
					goto oom;
				memset(nv + val_cap, 0, (cap - val_cap) * sizeof(*nv));
				val = nv;
				val_cap = cap;
			}
			val[j] += v;
		}
		if (k->deeper && !a.quiet)
			fprintf(stderr, "fdrtrace stack: %s: calls deeper than %u levels are "
				"folded into one frame, \"" STK_DEEPER "\", under each path that "
				"deep\n", a.path, STK_DEPTH_MAX);
		k->deeper = false;
		stk_say_long(k, &a);
		an_summary(&a, "stack");
		an_events_note(&a, "stack");
next:
		for (i = 0; i < a.n_threads; i++)
			a.threads[i]->uptr = NULL;	/* a node index, not memory */
		sel_fini(&k->sel);
		an_fini(&a);
		continue;
oom:
		tool_err("out of memory");
		status = EXIT_FAIL;
		for (i = 0; i < a.n_threads; i++)
			a.threads[i]->uptr = NULL;
		sel_fini(&k->sel);
		an_fini(&a);
		break;
	}
	if (k->sel.oom) {
		tool_err("out of memory: some calls are missing");
		status = EXIT_FAIL;
	}
	for (i = 0; i < lines.n && !tool_stdout_failed(); i++)
		printf("%s %" PRIu64 "\n", ri_names_str(&lines, i), val[i]);
	ri_say_read(ri, cl->quiet, read);
	ri_names_free(&lines);
	free(val);
	free(path);
	free(b.p);
	return status;
}

int cmd_stack(int argc, char **argv)
{
	struct stk k = { .unit = STK_NS };
	static struct analysis a;	/* large: not on the stack */
	struct run_input ri;
	struct cli cl;
	uint32_t i, *path = NULL, path_cap = 0;
	int status = EXIT_OK;

	if (!cli_parse(&stack_cli, &k, &cl, argc, argv, &status))
		return status;
	if (ri_open(&ri, &cl, 0, cl.n_files))
		return EXIT_FAIL;
	if (ri.run) {
		status = stk_run(&cl, &k, &ri);
		ri_close(&ri);
		if (tool_finish_stdout())
			status = EXIT_FAIL;
		return status;
	}
	memset(&a, 0, sizeof(a));
	cli_apply(&cl, &a);
	sel_init(&k.sel, &cl.sel);
	a.ops = &stk_ops;
	a.ctx = &k;
	if (an_run(&a, ri.t[0].path)) {
		sel_fini(&k.sel);
		an_fini(&a);
		ri_close(&ri);
		return EXIT_FAIL;
	}
	for (i = 1; i < a.n_nodes && !tool_stdout_failed(); i++) {
		const struct an_node *n = &a.nodes[i];
		uint64_t v, ticks = k.inclusive ? n->incl : n->self;

		if (!n->fn)
			continue;	/* a thread's root */
		if (k.count)
			v = n->calls;
		else if (k.unit == STK_TICKS || !a.freq)
			v = ticks;
		else
			v = tool_scale(ticks, k.unit == STK_NS ? 1e9 : 1e6, a.freq);
		if (!v)
			continue;
		if (n->parent && stk_path(&k, &a, n->parent, &path, &path_cap)) {
			tool_err("out of memory");
			status = EXIT_FAIL;
			break;
		}
		printf("%s %" PRIu64 "\n", an_func_name(&a, n->fn), v);
	}
	free(path);
	if (k.sel.oom) {
		tool_err("out of memory: some calls are missing");
		status = EXIT_FAIL;
	}
	if (k.deeper && !a.quiet) {
		tool_stderr_sync();
		fprintf(stderr, "fdrtrace stack: %s: calls deeper than %u levels are folded into "
			"one frame, \"" STK_DEEPER "\", under each path that deep\n", a.path,
			STK_DEPTH_MAX);
	}
	stk_say_long(&k, &a);
	an_summary(&a, "stack");
	an_events_note(&a, "stack");
	for (i = 0; i < a.n_threads; i++)
		a.threads[i]->uptr = NULL;	/* a node index, not memory */
	sel_fini(&k.sel);
	an_fini(&a);
	ri_close(&ri);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
