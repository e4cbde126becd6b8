/* SPDX-License-Identifier: MIT */
/*
 * cmd_replay.c - "fdrtrace replay FILE": the call tree as indented text.
 *
 * Like uftrace replay: one line per call that has no shown callees
 * ("lex();" with its duration), and an opening "parse() {" and closing
 * "} /+ parse +/" line around calls that have. A line is printed when it
 * can be decided: an opening line when the first shown callee ends, a
 * closing or leaf line at the call's exit; so the output streams, and a
 * --threshold hides short calls without buffering (a callee never lasts
 * longer than its caller). Threads interleave in the order the trace is
 * read; every line names its thread.
 *
 * The application's custom and typed events appear where they happened, one
 * level inside the innermost shown open call (whose opening line is then
 * printed): "[event custom 5 bytes "hello"]", "[event typed type=7 4 bytes
 * hex 01020304]", with at most RP_PREVIEW bytes of the payload, as text
 * when they are printable, else in hex. --tid and --time-range apply to
 * them; -F, -N, -D and --threshold do not hide them (they are not calls).
 *
 * Per thread this keeps one small state per open call: shown, opened.
 *
 * Contract: single-threaded.
 */
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "util.h"

#define RP_MAX_PATTERNS 32
#define RP_PREVIEW 32	/* payload bytes shown of an application event */

/* Per open call. */
struct rp_slot {
	bool shown;	/* passes the filters (the threshold is decided at exit) */
	bool opened;	/* its "name() {" line is out */
	uint32_t level;	/* indentation level among shown calls */
};

struct rp_thread {
	struct rp_slot *slots;
	uint32_t cap;
	uint32_t filter_depth;	/* depth of the outermost -F match, 0: none open */
	uint32_t hide_depth;	/* depth of the outermost -N match, 0: none open */
};

struct rp {
	const char *only[RP_MAX_PATTERNS];
	unsigned n_only;
	const char *hide[RP_MAX_PATTERNS];
	unsigned n_hide;
	uint32_t max_depth;	/* 0: unlimited */
	uint64_t threshold_ns;
	bool have_tid;
	int32_t tid;
	double from_s, to_s;	/* seconds from the first call seen; to 0: no end */
	bool have_range;
	uint64_t base_tsc;
	bool have_base;
	bool oom;
};

static bool rp_match(const char *const *pats, unsigned n, const char *name)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (fnmatch(pats[i], name, 0) == 0)
			return true;
	return false;
}

static struct rp_thread *rp_thread(struct rp *rp, struct an_thread *t)
{
	struct rp_thread *rt = t->uptr;

	if (!rt) {
		rt = calloc(1, sizeof(*rt));
		if (!rt)
			rp->oom = true;
		t->uptr = rt;
	}
	return rt;
}

static double rp_sec(struct analysis *a, struct rp *rp, uint64_t tsc)
{
	return an_seconds(a, tsc >= rp->base_tsc ? tsc - rp->base_tsc : 0);
}

static void rp_enter(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct rp *rp = a->ctx;
	struct rp_thread *rt = rp_thread(rp, t);
	uint32_t d = t->depth;	/* 1 for the outermost */
	struct rp_slot *s, *parent;
	const char *name;

	if (!rt)
		return;
	if (!rp->have_base) {
		rp->base_tsc = f->tsc;
		rp->have_base = true;
	}
	if (d > rt->cap) {
		uint32_t cap = rt->cap ? rt->cap * 2 : 4;
		struct rp_slot *n;

		while (cap < d)
			cap *= 2;
		n = realloc(rt->slots, cap * sizeof(*n));
		if (!n) {
			rp->oom = true;
			return;
		}
		rt->slots = n;
		rt->cap = cap;
	}
	/* Frames opened above a finished filter region no longer count. */
	if (rt->filter_depth >= d)
		rt->filter_depth = 0;
	if (rt->hide_depth >= d)
		rt->hide_depth = 0;
	name = an_func_name(a, f->fn);
	if (rp->n_only && !rt->filter_depth && rp_match(rp->only, rp->n_only, name))
		rt->filter_depth = d;
	if (rp->n_hide && !rt->hide_depth && rp_match(rp->hide, rp->n_hide, name))
		rt->hide_depth = d;
	s = &rt->slots[d - 1];
	parent = d > 1 ? &rt->slots[d - 2] : NULL;
	s->opened = false;
	s->level = parent ? parent->level + (parent->shown ? 1 : 0) : 0;
	s->shown = !rt->hide_depth && (!rp->n_only || rt->filter_depth) &&
		   (!rp->have_tid || rp->tid == t->tid);
	if (s->shown && rp->max_depth && s->level >= rp->max_depth)
		s->shown = false;
	if (s->shown && rp->have_range) {
		double at = rp_sec(a, rp, f->tsc);

		if (at < rp->from_s || (rp->to_s > 0 && at > rp->to_s))
			s->shown = false;
	}
}

/* "()" after a name, unless it has its own (a demangled C++ signature). */
static const char *rp_parens(const char *name)
{
	size_t n = strlen(name);

	return n && name[n - 1] == ')' ? "" : "()";
}

static void rp_prefix(struct analysis *a, struct an_thread *t, bool with_dur, uint64_t dur,
		      uint32_t level)
{
	uint32_t i;

	if (with_dur) {
		double ns = a->freq ? (double)dur * 1e9 / (double)a->freq : (double)dur;

		if (ns < 1e3)
			printf("%10.3f ns", ns);
		else if (ns < 1e6)
			printf("%10.3f us", ns / 1e3);
		else if (ns < 1e9)
			printf("%10.3f ms", ns / 1e6);
		else
			printf("%10.3f  s", ns / 1e9);
	} else {
		printf("%13s", "");
	}
	printf(" [%7" PRId32 "] | ", t->tid);
	for (i = 0; i < level; i++)
		fputs("  ", stdout);
}

/* Print the opening lines of the shown open calls around frame index @upto. */
static void rp_open_ancestors(struct analysis *a, struct an_thread *t, struct rp_thread *rt,
			      uint32_t upto)
{
	uint32_t i;

	for (i = 0; i < upto; i++) {
		struct rp_slot *s = &rt->slots[i];

		if (!s->shown || s->opened)
			continue;
		rp_prefix(a, t, false, 0, s->level);
		printf("%s%s {%s\n", an_func_name(a, t->stack[i].fn),
		       rp_parens(an_func_name(a, t->stack[i].fn)),
		       t->stack[i].partial ? " /* entered before the trace */" : "");
		s->opened = true;
	}
}

/*
 * The payload's first RP_PREVIEW bytes: in double quotes when they are all
 * printable ASCII (a final NUL of the payload aside; '"' and '\\' escaped),
 * else "hex " and two digits a byte; "..." when the payload is longer.
 */
static void rp_preview(const uint8_t *p, uint32_t size)
{
	uint32_t n = size < RP_PREVIEW ? size : RP_PREVIEW, i, text = n;
	bool printable = true;

	if (n == size && n && !p[n - 1])
		text = n - 1;	/* a C string with its terminator */
	for (i = 0; i < text && printable; i++)
		printable = p[i] >= 0x20 && p[i] < 0x7f;
	if (printable) {
		putchar('"');
		for (i = 0; i < text; i++) {
			if (p[i] == '"' || p[i] == '\\')
				putchar('\\');
			putchar(p[i]);
		}
		putchar('"');
	} else {
		fputs("hex ", stdout);
		for (i = 0; i < n; i++)
			printf("%02x", p[i]);
	}
	if (n < size)
		fputs("...", stdout);
}

/*
 * Where a line that is not a call goes (an event, a native stack): one
 * level inside the innermost shown open call, whose opening lines are then
 * printed. Return: false when --tid or --time-range leave it out.
 */
static bool rp_place(struct analysis *a, struct an_thread *t, uint64_t tsc, uint32_t *level)
{
	struct rp *rp = a->ctx;
	struct rp_thread *rt;
	uint32_t d = t->depth;

	*level = 0;
	if (rp->have_tid && rp->tid != t->tid)
		return false;
	if (rp->have_range) {
		/* Before the first call, its time is 0. */
		double at = rp->have_base ? rp_sec(a, rp, tsc) : 0;

		if (at < rp->from_s || (rp->to_s > 0 && at > rp->to_s))
			return false;
	}
	rt = rp_thread(rp, t);
	if (!rt)
		return false;
	if (d && d <= rt->cap) {
		const struct rp_slot *s = &rt->slots[d - 1];

		*level = s->level + (s->shown ? 1 : 0);
		rp_open_ancestors(a, t, rt, d);
	}
	return true;
}

/* An application event: a line of its own, inside the innermost shown call. */
static void rp_event(struct analysis *a, struct an_thread *t, const struct fdrtrace_event *ev)
{
	uint32_t level, size = ev->u.event.size;

	if (!rp_place(a, t, ev->tsc, &level))
		return;
	rp_prefix(a, t, false, 0, level);
	if (ev->type == FDRTRACE_EV_TYPED_EVENT)
		printf("[event typed type=%u ", (unsigned)ev->u.event.event_type);
	else
		fputs("[event custom ", stdout);
	printf("%" PRIu32 " byte%s", size, size == 1 ? "" : "s");
	if (size) {
		putchar(' ');
		rp_preview(ev->u.event.data, size);
	}
	fputs("]\n", stdout);
}

static void rp_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		    uint64_t end, uint64_t dur, enum an_end how)
{
	struct rp *rp = a->ctx;
	struct rp_thread *rt = t->uptr;
	uint32_t d = t->depth;
	struct rp_slot *s;
	double ns;

	(void)end;
	if (!rt || d > rt->cap)
		return;
	s = &rt->slots[d - 1];
	if (f->partial) {
		/* Its entry was never seen: it was never opened here. */
		if (s->opened) {
			rp_prefix(a, t, false, 0, s->level);
			printf("} /* %s */\n", an_func_name(a, f->fn));
		}
		return;
	}
	ns = a->freq ? (double)dur * 1e9 / (double)a->freq : (double)dur;
	/* An opened call stays balanced even under the threshold (an event opened it). */
	if (!s->shown || (!s->opened && ns < (double)rp->threshold_ns))
		return;
	rp_open_ancestors(a, t, rt, d - 1);
	rp_prefix(a, t, true, dur, s->level);
	if (s->opened)
		printf("} /* %s */", an_func_name(a, f->fn));
	else
		printf("%s%s;", an_func_name(a, f->fn), rp_parens(an_func_name(a, f->fn)));
	fputs(how == AN_END_UNWOUND ? " /* ended by an outer exit */\n" : "\n", stdout);
}

/*
 * A native stack (a fatal signal's, or fdrtrace_start()'s caller's): a
 * header line, then one line a frame, innermost first, where it happened
 * (a crash stack comes after the crashing thread's last call).
 */
static void rp_native(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
		      uint64_t tsc)
{
	struct ns_frame f;
	uint64_t addr;
	uint32_t level;

	if (!rp_place(a, t, tsc, &level))
		return;
	rp_prefix(a, t, false, 0, level);
	if (x->u.native_stack.why == FDRTRACE_NATIVE_SIGNAL) {
		printf("[crash: signal %u (%s)", x->u.native_stack.signal,
		       sigabbrev_np(x->u.native_stack.signal) ?
			       sigabbrev_np(x->u.native_stack.signal) : "?");
		if (x->u.native_stack.fault_address)
			printf(", fault address 0x%" PRIx64, x->u.native_stack.fault_address);
	} else {
		printf("[recording started%s", x->u.native_stack.why == FDRTRACE_NATIVE_START ?
							 " by fdrtrace_start()" : "");
	}
	printf("; native stack, %" PRIu32 " frames, innermost first]\n",
	       x->u.native_stack.depth);
	for (uint32_t i = 0; ns_resolve(&a->ns, x, i, &addr, &f) == 0; i++) {
		rp_prefix(a, t, false, 0, level);
		printf("[  #%-2" PRIu32 " %s", i, f.name ? f.name : "??");
		if (f.module)
			printf(" (%s+0x%" PRIx64 ")]\n", f.module, f.offset);
		else
			printf(" (0x%" PRIx64 ", unknown module)]\n", addr);
	}
}

/* A call that never ended: close its opening line, if it was printed. */
static void rp_unfinished(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct rp_thread *rt = t->uptr;
	struct rp_slot *s;

	if (!rt || t->depth > rt->cap)
		return;
	s = &rt->slots[t->depth - 1];
	/*
	 * Innermost first: a shown call that never returned is opened here if
	 * nothing under it completed (so were its shown callers, which come
	 * next), whatever the threshold: its duration is unknown.
	 */
	if (!s->opened && s->shown)
		rp_open_ancestors(a, t, rt, t->depth);
	if (!s->opened)
		return;
	rp_prefix(a, t, false, 0, s->level);
	printf("} /* %s: did not return */\n", an_func_name(a, f->fn));
}

static const struct an_ops rp_ops = {
	.enter = rp_enter,
	.exit = rp_exit,
	.event = rp_event,
	.unfinished = rp_unfinished,
	.native = rp_native,
};

static int rp_parse_time(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1;

	if (end == s || v < 0)
		return -1;
	if (!*end || strcmp(end, "ns") == 0)
		mul = 1;
	else if (strcmp(end, "us") == 0)
		mul = 1e3;
	else if (strcmp(end, "ms") == 0)
		mul = 1e6;
	else if (strcmp(end, "s") == 0)
		mul = 1e9;
	else
		return -1;
	*ns = (uint64_t)(v * mul);
	return 0;
}

static const char replay_help[] =
	"Usage: fdrtrace replay [options] FILE\n"
	"\n"
	"Print the calls of the trace FILE ('-': standard input) as an indented call\n"
	"tree, one line per call with its duration, in the manner of uftrace replay:\n"
	"'name();' for a call whose callees are not shown, 'name() {' ... '} /* name */'\n"
	"around the others. Each line shows the thread id. The application's custom\n"
	"and typed events appear where they happened, inside the calls around them:\n"
	"'[event custom 5 bytes \"hello\"]', '[event typed type=7 2 bytes hex 0102]'\n"
	"(at most 32 bytes of the payload, as text when printable, else in hex).\n"
	"--tid and --time-range select events too; -F, -N, -D and -t do not hide them.\n"
	"\n"
	"Options:\n"
	"  -F, --filter GLOB     only calls inside a function matching GLOB (repeatable)\n"
	"  -N, --notrace GLOB    hide functions matching GLOB and their callees (repeatable)\n"
	"  -D, --depth N         at most N levels of shown calls\n"
	"  -t, --threshold TIME  hide calls shorter than TIME (e.g. 10us; units ns, us,\n"
	"                        ms, s; ns without a unit)\n"
	"      --tid TID         only the thread TID\n"
	"  -r, --time-range A~B  only calls that begin between A and B seconds after the\n"
	"                        first call of the trace (A~ or ~B leave an end open)\n"
	"      --no-demangle     print C++ names as recorded\n"
	"  -q, --quiet           no summary of unmatched records on stderr\n"
	"  -h, --help            show this help\n";

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "filter", required_argument, NULL, 'F' },
		{ "notrace", required_argument, NULL, 'N' },
		{ "depth", required_argument, NULL, 'D' },
		{ "threshold", required_argument, NULL, 't' },
		{ "tid", required_argument, NULL, 'T' },
		{ "time-range", required_argument, NULL, 'r' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char optstring[] = "F:N:D:t:r:qh";
	struct analysis a;
	struct rp rp;
	uint32_t i;
	int c, status = EXIT_OK;
	char *end;
	long v;

	memset(&a, 0, sizeof(a));
	memset(&rp, 0, sizeof(rp));
	a.demangle = true;
	a.ops = &rp_ops;
	a.ctx = &rp;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (rp.n_only == RP_MAX_PATTERNS)
				return tool_usage_err("replay", "too many -F patterns");
			rp.only[rp.n_only++] = optarg;
			break;
		case 'N':
			if (rp.n_hide == RP_MAX_PATTERNS)
				return tool_usage_err("replay", "too many -N patterns");
			rp.hide[rp.n_hide++] = optarg;
			break;
		case 'D':
			v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v <= 0 || v > INT32_MAX)
				return tool_usage_err("replay", "bad --depth '%s'", optarg);
			rp.max_depth = (uint32_t)v;
			break;
		case 't':
			if (rp_parse_time(optarg, &rp.threshold_ns))
				return tool_usage_err("replay", "bad --threshold '%s'", optarg);
			break;
		case 'T':
			v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v < INT32_MIN || v > INT32_MAX)
				return tool_usage_err("replay", "bad --tid '%s'", optarg);
			rp.have_tid = true;
			rp.tid = (int32_t)v;
			break;
		case 'r': {
			const char *tilde = strchr(optarg, '~');

			if (!tilde)
				return tool_usage_err("replay", "time range is A~B, not '%s'", optarg);
			rp.from_s = tilde == optarg ? 0 : strtod(optarg, &end);
			if (tilde != optarg && end != tilde)
				return tool_usage_err("replay", "bad time range '%s'", optarg);
			rp.to_s = tilde[1] ? strtod(tilde + 1, &end) : 0;
			if (tilde[1] && (*end || rp.to_s <= 0))
				return tool_usage_err("replay", "bad time range '%s'", optarg);
			rp.have_range = true;
			break;
		}
		case 'M':
			a.demangle = false;
			break;
		case 'q':
			a.quiet = true;
			break;
		case 'h':
			return tool_print_help(replay_help);
		default:
			return tool_bad_option("replay", optstring, argv);
		}
	}
	if (optind != argc - 1)
		return tool_usage_err("replay", optind == argc ? "missing FILE" : "one FILE only");
	printf("# %11s  %9s   %s\n", "DURATION", "TID", "FUNCTION");
	if (an_run(&a, argv[optind])) {
		status = EXIT_FAIL;
	} else {
		if (rp.oom)
			tool_err("out of memory: some calls are missing");
		an_summary(&a, "replay");
	}
	for (i = 0; i < a.n_threads; i++) {
		struct rp_thread *rt = a.threads[i]->uptr;

		if (rt)
			free(rt->slots);
		free(rt);
	}
	an_fini(&a);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
