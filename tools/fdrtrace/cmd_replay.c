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
 * The selectors are select.c's; its state per open call (struct sel_frame)
 * also holds whether the call's opening line is out (RP_OPENED).
 *
 * Contract: single-threaded.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "util.h"

#define RP_PREVIEW 32	/* payload bytes shown of an application event */

/* struct sel_frame.user: the call's "name() {" line is out. */
#define RP_OPENED 1u

static void rp_enter(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	(void)f;
	sel_enter(a->ctx, a, t);
}

/*
 * A call's name: "()" after the function's name, unless it has its own (a
 * demangled C++ signature), then its location when it has one:
 * "helper() (a.c:2)".
 */
static void rp_call(struct analysis *a, struct an_func *fn)
{
	const char *name = an_func_name(a, fn);
	int n = (int)fn->base_len;

	if (!fn->base)
		n = (int)strlen(name);
	printf("%.*s%s%s", n, name, memchr(name, '(', (size_t)n) ? "" : "()", name + n);
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
static void rp_open_ancestors(struct analysis *a, struct an_thread *t, uint32_t upto)
{
	uint32_t i;

	for (i = 0; i < upto; i++) {
		struct sel_frame *s = sel_frame(a->ctx, t, i + 1);

		if (!s || !s->shown || (s->user & RP_OPENED))
			continue;
		rp_prefix(a, t, false, 0, s->level);
		rp_call(a, t->stack[i].fn);
		printf(" {%s\n", t->stack[i].partial ? " /* entered before the trace */" : "");
		s->user |= RP_OPENED;
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
	struct sel_frame *s = sel_frame(a->ctx, t, t->depth);

	*level = 0;
	if (!sel_event(a->ctx, a, t, tsc))
		return false;
	if (s) {
		*level = s->level + (s->shown ? 1 : 0);
		rp_open_ancestors(a, t, t->depth);
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

static void rp_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		    uint64_t end, uint64_t dur, enum an_end how)
{
	struct sel_frame *s = sel_frame(a->ctx, t, t->depth);
	bool shown = sel_exit(a->ctx, a, t, dur);

	(void)end;
	if (!s)
		return;
	if (f->partial) {
		/* Its entry was never seen: it was never opened here. */
		if (s->user & RP_OPENED) {
			rp_prefix(a, t, false, 0, s->level);
			printf("} /* %s */\n", an_func_name(a, f->fn));
		}
		return;
	}
	/* An opened call stays balanced even under the threshold (an event opened it). */
	if (!shown && !(s->shown && (s->user & RP_OPENED)))
		return;
	rp_open_ancestors(a, t, t->depth - 1);
	rp_prefix(a, t, true, dur, s->level);
	if (s->user & RP_OPENED) {
		printf("} /* %s */", an_func_name(a, f->fn));
	} else {
		rp_call(a, f->fn);
		putchar(';');
	}
	fputs(how == AN_END_UNWOUND ? " /* ended by an outer exit */\n" : "\n", stdout);
}

/* A call that never ended: close its opening line, if it was printed. */
static void rp_unfinished(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct sel_frame *s = sel_frame(a->ctx, t, t->depth);

	if (!s)
		return;
	/*
	 * Innermost first: a shown call that never returned is opened here if
	 * nothing under it completed (so were its shown callers, which come
	 * next), whatever the threshold: its duration is unknown.
	 */
	if (!(s->user & RP_OPENED) && s->shown)
		rp_open_ancestors(a, t, t->depth);
	if (!(s->user & RP_OPENED))
		return;
	rp_prefix(a, t, false, 0, s->level);
	printf("} /* %s: did not return */\n", an_func_name(a, f->fn));
}

/* A gap: where it is, how many records, how long; the calls open here are not timed. */
static void rp_gap(struct analysis *a, struct an_thread *t, uint64_t first_tsc, uint64_t last_tsc,
		   uint64_t records, unsigned reason)
{
	uint32_t level;

	if (!rp_place(a, t, first_tsc, &level))
		return;
	rp_prefix(a, t, false, 0, level);
	printf("[lost %" PRIu64 " record%s (%s) over %.6f s: the calls open here are not timed]\n",
	       records, records == 1 ? "" : "s", fdrtrace_drop_reason_name(reason),
	       an_seconds(a, last_tsc > first_tsc ? last_tsc - first_tsc : 0));
}

/* on_full=wait: the thread waited for the flush thread (nothing was lost). */
static void rp_wait(struct analysis *a, struct an_thread *t, uint64_t first_tsc, uint64_t last_tsc)
{
	uint32_t level;

	if (!rp_place(a, t, first_tsc, &level))
		return;
	rp_prefix(a, t, false, 0, level);
	printf("[waited %.6f s for a free buffer (on_full=wait)]\n",
	       an_seconds(a, last_tsc > first_tsc ? last_tsc - first_tsc : 0));
}

static const struct an_ops rp_ops = {
	.enter = rp_enter,
	.exit = rp_exit,
	.event = rp_event,
	.unfinished = rp_unfinished,
	.native = rp_native,
	.gap = rp_gap,
	.wait = rp_wait,
};

static const struct cli_cmd replay_cli = {
	.name = "replay",
	.usage =
	"Usage: fdrtrace replay [options] FILE\n"
	"\n"
	"Print the calls of the trace FILE ('-': standard input) as an indented call\n"
	"tree, one line per call with its duration, in the manner of uftrace replay:\n"
	"'name();' for a call whose callees are not shown, 'name() {' ... '} /* name */'\n"
	"around the others. Each line shows the thread id. The application's custom\n"
	"and typed events appear where they happened, inside the calls around them:\n"
	"'[event custom 5 bytes \"hello\"]', '[event typed type=7 2 bytes hex 0102]'\n"
	"(at most 32 bytes of the payload, as text when printable, else in hex).\n"
	"--tid and --time-range select events too; -F, -N, -D and -t do not hide them.\n",
	.optstring = "",
	.groups = CLI_QUIET | CLI_SELECT,
	.min_files = 1,
	.max_files = 1,
};

int cmd_replay(int argc, char **argv)
{
	struct analysis a;
	struct cli cl;
	struct sel sel;
	int status = EXIT_OK;

	if (!cli_parse(&replay_cli, NULL, &cl, argc, argv, &status))
		return status;
	memset(&a, 0, sizeof(a));
	cli_apply(&cl, &a);
	sel_init(&sel, &cl.sel);
	a.ops = &rp_ops;
	a.ctx = &sel;
	printf("# %11s  %9s   %s\n", "DURATION", "TID", "FUNCTION");
	if (an_run(&a, cl.files[0])) {
		status = EXIT_FAIL;
	} else {
		if (sel.oom)
			tool_err("out of memory: some calls are missing");
		an_summary(&a, "replay");
	}
	sel_fini(&sel);
	an_fini(&a);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
