/* SPDX-License-Identifier: MIT */
/*
 * cmd_convert.c - "fdrtrace convert --format chrome|perfetto FILE -o OUT":
 * the trace for trace viewers (Perfetto UI, chrome://tracing, speedscope).
 *
 * Writes as it reads. The selectors (select.h) decide which calls and
 * events are written, with replay's meaning; order.c puts each thread's
 * calls and events in start order within a bounded window; the format
 * (convert_chrome.c, convert_perfetto.c) writes them into the convert
 * core's output buffer (convert.c). Memory: the analysis core's stacks and
 * names, the selection's state per open call, and at most ORD_WINDOW
 * queued items; never per record.
 *
 * Contract: single-threaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "convert.h"
#include "input.h"
#include "util.h"

/*
 * A child of the trace being read (of a run) whose own trace does not say
 * where it was forked (no fork record's point): the parent's spawn record
 * for it, if any, does (cvt_spawn()).
 */
struct cvt_kid {
	int32_t pid;
	uint32_t serial;	/* its fork record's (0: none) */
	uint64_t start_tsc;
	bool found;
	int32_t tid;
	uint64_t tsc;
};

/* An on_full=wait wait not yet queued (cvt_wait()). */
struct cvt_wait {
	uint64_t first, last;
	bool pending;
};

struct cvt {
	const struct cv_format *fmt;
	bool xray;
	struct cv cv;
	struct sel sel;
	struct ord ord;
	struct cvt_wait *waits;	/* by struct an_thread.index */
	uint32_t n_waits;
	uint32_t waits_pending;
	/* of a run: the trace's first call (where the arrow from its parent ends) */
	struct an_thread *first_t;
	uint64_t first_tsc;
	/* of a run: the trace's children without a fork point, by pid */
	struct cvt_kid *kids;
	uint32_t n_kids;
	uint32_t n_kid_serials;	/* of them, with a fork record's serial */
};

/* Nesting level of an instant: inside the innermost written call. */
static uint32_t cvt_level(struct cvt *c, const struct an_thread *t)
{
	struct sel_frame *fr = sel_frame(&c->sel, t, t->depth);

	return fr ? fr->level + (fr->shown ? 1 : 0) : 0;
}

/*
 * on_full=wait: the thread waited from @first_tsc to @last_tsc for a buffer.
 * Its record opens the new buffer, before the record whose write waited,
 * whose time was read before the wait: the wait is queued after that
 * record is applied (cvt_wait_put()), so that it lies inside the call
 * open then, after the calls that ended before it.
 */
static void cvt_wait_put(struct cvt *c, struct analysis *a, struct an_thread *t, uint32_t level,
			 uint64_t after);

static void cvt_wait(struct analysis *a, struct an_thread *t, uint64_t first_tsc,
		     uint64_t last_tsc)
{
	struct cvt *c = a->ctx;
	struct cvt_wait *w;

	if (!sel_event(&c->sel, a, t, first_tsc))
		return;
	if (t->index >= c->n_waits) {
		uint32_t n = c->n_waits ? c->n_waits : 16;

		while (n <= t->index)
			n *= 2;
		w = realloc(c->waits, n * sizeof(*w));
		if (!w) {
			c->ord.oom = true;	/* reported: something is missing */
			return;
		}
		memset(w + c->n_waits, 0, (n - c->n_waits) * sizeof(*w));
		c->waits = w;
		c->n_waits = n;
	}
	w = &c->waits[t->index];
	if (w->pending)
		cvt_wait_put(c, a, t, cvt_level(c, t), 0);	/* two in a row: the first here */
	w->first = first_tsc;
	w->last = last_tsc > first_tsc ? last_tsc : first_tsc;
	w->pending = true;
	c->waits_pending++;
}

/*
 * Queue @t's pending wait at nesting @level, after the record of time
 * @after (0: none) that was applied since: a wait said to begin before
 * that record (a hand-made trace; a writer reads the time before it
 * waits) begins there, so that the slices stay nested and in order.
 */
static __attribute__((noinline)) void cvt_wait_put(struct cvt *c, struct analysis *a,
						   struct an_thread *t, uint32_t level,
						   uint64_t after)
{
	struct cvt_wait *w;
	struct ord_item it;

	if (t->index >= c->n_waits || !c->waits[t->index].pending)
		return;
	w = &c->waits[t->index];
	w->pending = false;
	c->waits_pending--;
	memset(&it, 0, sizeof(it));
	it.kind = ORD_WAIT;
	it.tsc = w->first > after ? w->first : after;
	it.dur = w->last > it.tsc ? w->last - it.tsc : 0;
	it.level = level;
	it.type = -1;
	ord_instant(&c->ord, a, t, &it);
}

/* tool_stderr_sync(): what was written so far goes out before a message. */
static void cvt_stderr_sync(void *ctx)
{
	cv_drain(ctx);
}

static void cvt_enter(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct cvt *c = a->ctx;
	struct sel_frame *fr = sel_enter(&c->sel, a, t);

	if (__builtin_expect(!c->first_t, 0) && !f->partial) {
		c->first_t = t;
		c->first_tsc = f->tsc;
	}
	/* A call entered before the trace has no known start: not written. */
	if (fr && fr->shown && !f->partial)
		fr->user = ord_open(&c->ord, a, t, f->fn, f->tsc, fr->level);
	if (__builtin_expect(c->waits_pending != 0, 0))
		cvt_wait_put(c, a, t, cvt_level(c, t), f->tsc);	/* inside the new call */
}

static void cvt_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		     uint64_t end, uint64_t dur, enum an_end how)
{
	struct cvt *c = a->ctx;
	struct sel_frame *fr = sel_frame(&c->sel, t, t->depth);
	bool shown = sel_exit(&c->sel, a, t, dur);

	if (fr && fr->user)
		ord_close(&c->ord, a, t, fr->user, f->tsc, dur, how == AN_END_UNWOUND, shown);
	/* beside the call that ended (the record's own: the calls it unwound end first) */
	if (__builtin_expect(c->waits_pending != 0, 0) && how != AN_END_UNWOUND)
		cvt_wait_put(c, a, t, fr ? fr->level : 0, end);
}

/*
 * cvt_exit() with no selector: every call is shown (sel_exit() is true for
 * each, and shown_children, which only a threshold reads, is not kept).
 */
static void cvt_exit_plain(struct analysis *a, struct an_thread *t, const struct an_frame *f,
			   uint64_t end, uint64_t dur, enum an_end how)
{
	struct cvt *c = a->ctx;
	struct sel_frame *fr = sel_frame(&c->sel, t, t->depth);

	if (fr && fr->user)
		ord_close(&c->ord, a, t, fr->user, f->tsc, dur, how == AN_END_UNWOUND, true);
	if (__builtin_expect(c->waits_pending != 0, 0) && how != AN_END_UNWOUND)
		cvt_wait_put(c, a, t, fr ? fr->level : 0, end);
}

static void cvt_typed_arg(struct cvt *c, struct analysis *a, struct an_thread *t,
			  const struct fdrtrace_event *ev);

static void cvt_event(struct analysis *a, struct an_thread *t, const struct fdrtrace_event *ev)
{
	struct cvt *c = a->ctx;
	struct ord_item it;

	if (!sel_event(&c->sel, a, t, ev->tsc))
		return;
	memset(&it, 0, sizeof(it));
	it.kind = ORD_EVENT;
	it.tsc = ev->tsc;
	it.level = cvt_level(c, t);
	it.size = ev->u.event.size;
	it.type = ev->type == FDRTRACE_EV_TYPED_EVENT ? (int32_t)ev->u.event.event_type : -1;
	ord_instant(&c->ord, a, t, &it);
	if (it.type >= 0)
		cvt_typed_arg(c, a, t, ev);
	if (c->waits_pending)
		cvt_wait_put(c, a, t, it.level, ev->tsc);
}

/*
 * A native stack (a crash, fdrtrace_start()): rare, so the thread's queue is
 * written out first (its open calls as begin events), then the event.
 */
static void cvt_native(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
		       uint64_t tsc)
{
	struct cvt *c = a->ctx;

	if (!sel_event(&c->sel, a, t, tsc))
		return;
	cvt_wait_put(c, a, t, cvt_level(c, t), 0);
	ord_finish(&c->ord, a, t, false);
	c->fmt->native(&c->cv, a, t, x, tsc);
}

/*
 * fdrtrace_log_arg()'s value for the innermost call of @t: it goes with the
 * call's slice (order.c keeps it with the queued item), when the call is
 * written.
 */
static void cvt_arg(struct analysis *a, struct an_thread *t, uint64_t value)
{
	struct cvt *c = a->ctx;
	struct sel_frame *fr = sel_frame(&c->sel, t, t->depth);
	struct ord_arg v = { .kind = ORD_ARG_VALUE, .v = value };

	if (fr && fr->user)
		ord_arg(&c->ord, a, t, fr->user, &v);
}

/*
 * A typed event inside a call: its type and payload (the first
 * ORD_ARG_BYTES bytes) go with the innermost written call's slice too.
 */
static void cvt_typed_arg(struct cvt *c, struct analysis *a, struct an_thread *t,
			  const struct fdrtrace_event *ev)
{
	struct ord_arg v = { .kind = ORD_ARG_TYPED, .type = ev->u.event.event_type };
	uint32_t d;

	for (d = t->depth; d > 0; d--) {
		struct sel_frame *fr = sel_frame(&c->sel, t, d);

		if (!fr || !fr->user)
			continue;
		v.size = ev->u.event.size;
		v.len = (uint8_t)(v.size < ORD_ARG_BYTES ? v.size : ORD_ARG_BYTES);
		if (v.len)
			memcpy(v.bytes, ev->u.event.data, v.len);
		ord_arg(&c->ord, a, t, fr->user, &v);
		return;
	}
}

/* The first of the kids (sorted by pid, cvt_kids()) of @pid: @c->n_kids when none. */
static uint32_t cvt_kid_first(const struct cvt *c, int32_t pid)
{
	uint32_t lo = 0, hi = c->n_kids;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->kids[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A spawn record: the point where the process started a child. It is the
 * arrow's start for the child it names (posix_spawn: @child_pid; a fork:
 * the @serial of the child's fork record), when that child's trace has no
 * fork point of its own. A pid may have been reused: of the spawns of one
 * pid, the latest before the child's start.
 */
static void cvt_spawn(struct analysis *a, int32_t tid, uint64_t tsc, uint32_t serial,
		      int32_t child_pid)
{
	struct cvt *c = a->ctx;
	/* by pid: its kids only; by serial: any (a fork child's, rare: its record had no time) */
	uint32_t i = child_pid ? cvt_kid_first(c, child_pid) : c->n_kid_serials ? 0 : c->n_kids;

	for (; i < c->n_kids; i++) {
		struct cvt_kid *k = &c->kids[i];

		if (child_pid && k->pid != child_pid)
			break;
		if (!child_pid && (!serial || k->serial != serial))
			continue;
		if (k->start_tsc && tsc > k->start_tsc)
			continue;	/* after it started: another child of that pid */
		if (k->found && tsc < k->tsc)
			continue;
		k->found = true;
		k->tid = tid;
		k->tsc = tsc;
	}
}

/* A call whose exit was lost with a damaged buffer: its end is unknown. */
static void cvt_dropped(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct cvt *c = a->ctx;
	struct sel_frame *fr = sel_frame(&c->sel, t, t->depth);

	(void)f;
	if (fr && fr->user)
		ord_lose(&c->ord, a, t, fr->user);
}

/*
 * A gap in the thread's records: the calls open here have no known end
 * (the analysis gives them none): each becomes a begin event marked lost;
 * the gap itself is an instant where it began.
 */
static void cvt_gap(struct analysis *a, struct an_thread *t, uint64_t first_tsc, uint64_t last_tsc,
		    uint64_t records, unsigned reason)
{
	struct cvt *c = a->ctx;
	struct ord_item it;
	bool timed = true;

	(void)reason;
	/*
	 * The calls timed across the gap (an_frame.holed) keep their ends when
	 * every open call is; when the gap ends some (their exits in it), a
	 * slice without an end cannot nest in one that ends: none ends.
	 */
	for (uint32_t d = 1; d <= t->depth; d++)
		timed &= t->stack[d - 1].holed;
	for (uint32_t d = 1; d <= t->depth && !timed; d++) {
		struct sel_frame *fr = sel_frame(&c->sel, t, d);

		if (fr && fr->user) {
			ord_lose(&c->ord, a, t, fr->user);
			fr->user = 0;
		}
	}
	if (!first_tsc)
		first_tsc = last_tsc;	/* the thread's start (an_ops.gap): at its first buffer */
	if (!sel_event(&c->sel, a, t, first_tsc))
		return;
	memset(&it, 0, sizeof(it));
	it.kind = ORD_GAP;
	it.tsc = first_tsc;
	it.level = cvt_level(c, t);
	it.size = records;
	it.type = -1;
	ord_instant(&c->ord, a, t, &it);
}

/* The first call still open at the end writes out the thread's queue. */
static void cvt_unfinished(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct cvt *c = a->ctx;

	(void)f;
	cvt_wait_put(c, a, t, cvt_level(c, t), 0);	/* the trace ended after it */
	ord_finish(&c->ord, a, t, true);
}

/* struct ord.lasts: the threshold as sel_exit() applies it */
static bool cvt_lasts(void *ctx, struct analysis *a, uint64_t dur)
{
	return sel_lasts(ctx, a, dur);
}

static const struct an_ops cvt_ops = {
	.enter = cvt_enter,
	.exit = cvt_exit,
	.event = cvt_event,
	.unfinished = cvt_unfinished,
	.dropped = cvt_dropped,
	.native = cvt_native,
	.gap = cvt_gap,
	.wait = cvt_wait,
	.arg = cvt_arg,
	.spawn = cvt_spawn,
};

static int cvt_option(struct cli *cl, int c, const char *arg)
{
	struct cvt *k = cl->ctx;

	if (c != 'f')
		return 0;
	k->xray = false;
	if (strcmp(arg, "chrome") == 0)
		k->fmt = &cv_chrome;
	else if (strcmp(arg, "perfetto") == 0)
		k->fmt = &cv_perfetto;
	else if (strcmp(arg, "xray") == 0)
		k->xray = true;
	else
		return tool_usage_err("convert", "unknown format '%s' (chrome, perfetto or xray)",
				      arg);
	return 0;
}

static const struct option cvt_longopts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_cmd convert_cli = {
	.name = "convert",
	.usage =
	"Usage: fdrtrace convert [--format chrome|perfetto|xray] [options] FILE|DIR... [-o OUT]\n"
	"\n"
	"Convert the trace FILE ('-': standard input) for trace viewers:\n"
	"  chrome    Chrome Trace Event JSON (Perfetto UI, chrome://tracing,\n"
	"            speedscope): a complete event per call\n"
	"  perfetto  Perfetto's protobuf trace (ui.perfetto.dev, trace_processor):\n"
	"            a track per thread, interned names, about half the size\n"
	"  xray      one thread's records (--tid, needed when several threads have\n"
	"            some) as one buffer of an FDR trace that llvm-xray 14 reads\n"
	"            whole: its account and stack misorder a thread of more than 16\n"
	"            buffers and stop on a trace of several threads. Name the\n"
	"            functions with 'fdrtrace extract-map FILE -o MAP'.\n"
	"Each thread's calls come in start order; application events, native stacks\n"
	"(a crash) and gaps in the trace are instant events; thread and process\n"
	"names are included.\n"
	"Timestamps are the trace's clock. The output is written while the trace is\n"
	"read: memory stays bounded. The selectors keep the calls replay would show.\n"
	"\n"
	"A run (a directory of traces, one per process, or several FILEs; chrome and\n"
	"perfetto): one output, a process track per process named by its command\n"
	"line with its threads under it, an arrow (flow) from where a parent forked\n"
	"or spawned a child (or an image exec'd) to the child's first call, and one\n"
	"time axis: the run's clock from its earliest start, at the earliest\n"
	"process's frequency.\n"
	"The traces are read one after another: memory stays that of one.\n",
	.options =
	"  -f, --format FMT      chrome (the default), perfetto or xray\n",
	.epilog =
	"Calls still open at the end of the trace (a crash, _exit) have a begin and\n"
	"no end; the summary on stderr says how many there were. A call open over\n"
	"more than 16384 later calls and events (of all threads) may be written as\n"
	"a begin/end pair instead of one complete event; with -t, only one that\n"
	"already lasted the threshold.\n",
	.optstring = "f:",
	.longopts = cvt_longopts,
	.groups = CLI_QUIET | CLI_SELECT | CLI_OUTPUT | CLI_RUN,
	.min_files = 1,
	.max_files = CLI_MAX_FILES,
	.option = cvt_option,
};

/* The thread @tid of @a; NULL when it has none. */
static struct an_thread *cvt_thread(struct analysis *a, int32_t tid)
{
	uint32_t i;

	for (i = 0; i < a->n_threads; i++)
		if (a->threads[i]->tid == tid)
			return a->threads[i];
	return NULL;
}

static int cvt_flow_cmp(const void *x, const void *y)
{
	const struct cv_flow *p = x, *q = y;

	return p->tsc < q->tsc ? -1 : p->tsc > q->tsc;
}

/* The arrow's name: how the child came to be. */
static const char *cvt_flow_name(const struct ri_trace *ch)
{
	if (ch->origin == RI_EXEC)
		return "exec";
	return ch->fork_rec ? "fork" : "spawn";
}

/* The spawn record found for child @pid (cvt_spawn()), or NULL. */
static const struct cvt_kid *cvt_kid_of(const struct cvt *c, int32_t pid, uint64_t start_tsc)
{
	for (uint32_t i = cvt_kid_first(c, pid); i < c->n_kids && c->kids[i].pid == pid; i++)
		if (c->kids[i].start_tsc == start_tsc && c->kids[i].found)
			return &c->kids[i];
	return NULL;
}

static int cvt_kid_cmp(const void *x, const void *y)
{
	const struct cvt_kid *p = x, *q = y;

	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

/*
 * Before trace @k of the run is read: its children whose traces have no
 * fork point, for cvt_spawn(). Out of memory: none (their arrows then
 * begin at their start).
 */
static void cvt_kids(struct cvt *c, const struct run_input *ri, uint32_t k)
{
	uint32_t n = 0;

	for (int32_t x = ri->t[k].first_child; x >= 0; x = ri->t[x].next_sibling)
		n += ri->t[x].origin == RI_FORK && !ri->t[x].fork_point && ri->t[x].selected;
	c->n_kids = c->n_kid_serials = 0;
	c->kids = n ? calloc(n, sizeof(*c->kids)) : NULL;
	if (!c->kids)
		return;
	for (int32_t x = ri->t[k].first_child; x >= 0; x = ri->t[x].next_sibling) {
		const struct ri_trace *ch = &ri->t[x];

		if (ch->origin != RI_FORK || ch->fork_point || !ch->selected)
			continue;
		c->kids[c->n_kids++] = (struct cvt_kid){
			.pid = ch->pid, .serial = ch->fork_serial, .start_tsc = ch->start_tsc,
		};
		c->n_kid_serials += ch->fork_serial != 0;
	}
	qsort(c->kids, c->n_kids, sizeof(*c->kids), cvt_kid_cmp);
}

/*
 * After trace @k of the run was read into @a: the arrow from its parent
 * ends at its first call (else at its main thread's start), and the arrows
 * to its children begin where it started them (the fork record's point,
 * the parent's spawn record for the child, the exec record's; else at the
 * child's start, on the main thread), in time order. Arrow ids: the
 * child's place in the run, from 1.
 */
static void cvt_flows(struct cvt *c, struct analysis *a, const struct run_input *ri, uint32_t k)
{
	const struct ri_trace *t = &ri->t[k];
	struct cv_flow fl, *out = NULL;
	uint32_t j, n = 0;

	if (t->parent >= 0 && ri->t[t->parent].selected) {
		memset(&fl, 0, sizeof(fl));
		fl.id = k + 1;
		fl.end = true;
		fl.name = cvt_flow_name(t);
		fl.pid = a->pid ? a->pid : t->pid;
		fl.t = c->first_t;
		fl.tsc = c->first_tsc;
		if (!fl.t) {
			fl.t = cvt_thread(a, fl.pid);
			fl.tsc = t->start_tsc;
		}
		c->fmt->flow(&c->cv, a, &fl);
	}
	for (int32_t x = t->first_child; x >= 0; x = ri->t[x].next_sibling) {
		const struct ri_trace *ch = &ri->t[x];
		const struct cvt_kid *kid;
		struct cv_flow *v;

		j = (uint32_t)x;
		if (!ch->selected)
			continue;
		v = realloc(out, (n + 1) * sizeof(*v));
		if (!v)
			break;
		out = v;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].id = j + 1;
		out[n].name = cvt_flow_name(ch);
		out[n].pid = a->pid ? a->pid : t->pid;
		if (ch->origin == RI_FORK && ch->fork_point) {
			out[n].t = cvt_thread(a, ch->parent_tid);
			out[n].tsc = ch->fork_tsc;
		} else if (ch->origin == RI_FORK && (kid = cvt_kid_of(c, ch->pid, ch->start_tsc))) {
			out[n].t = cvt_thread(a, kid->tid);
			out[n].tsc = kid->tsc;
		} else if (ch->origin == RI_EXEC && a->exec_point) {
			out[n].t = cvt_thread(a, a->exec_tid);
			out[n].tsc = a->exec_tsc;
		} else {
			out[n].t = cvt_thread(a, out[n].pid);
			out[n].tsc = ch->start_tsc;
		}
		n++;
	}
	if (n > 1)
		qsort(out, n, sizeof(*out), cvt_flow_cmp);
	for (j = 0; j < n; j++)
		c->fmt->flow(&c->cv, a, &out[j]);
	free(out);
}

/*
 * Convert trace @path (the @k-th of @ri when a run) into the output begun.
 * Return: 0, -EIO when it cannot be read, -ENOMEM.
 */
static int cvt_trace(struct cvt *c, const struct cli *cl, const struct run_input *ri, uint32_t k,
		     int *status)
{
	static struct analysis a;	/* large: not on the stack */
	const struct ri_trace *t = &ri->t[k];
	struct an_ops ops;
	char *name = NULL;
	uint32_t i;
	int rc;

	memset(&a, 0, sizeof(a));
	cli_apply(cl, &a);
	a.ctx = c;
	sel_init(&c->sel, &cl->sel);
	ops = cvt_ops;
	if (c->sel.plain)
		ops.exit = cvt_exit_plain;	/* no selector: every call shown */
	a.ops = &ops;
	ord_init(&c->ord, c->fmt->wr, &c->cv, c->fmt->split);
	if (cl->sel.threshold_ns) {
		c->ord.lasts = cvt_lasts;
		c->ord.lasts_ctx = &c->sel;
	}
	c->first_t = NULL;
	c->first_tsc = 0;
	if (ri->run) {
		cvt_kids(c, ri, k);
		/* one name for a process, whatever image: its pid's track is one */
		name = ri_process_name(ri, k);
		c->cv.proc_name = name ? name : ri_name(t);
		c->cv.uuid_base = (uint64_t)k << 33;
	}
	rc = an_run(&a, t->path) ? -EIO : 0;
	if (!rc) {
		for (i = 0; i < a.n_threads; i++) {
			cvt_wait_put(c, &a, a.threads[i], cvt_level(c, a.threads[i]), 0);
			ord_finish(&c->ord, &a, a.threads[i], true);
		}
		c->fmt->finish(&c->cv, &a);
		if (ri->run)
			cvt_flows(c, &a, ri, k);
		if (c->sel.oom || c->ord.oom) {
			/* the file is kept (valid, and said to be incomplete); the status says it */
			tool_err("%s: out of memory: some calls are missing from the output", t->path);
			*status = EXIT_FAIL;
		}
		if (c->ord.short_begun)
			tool_err("%s: %" PRIu64 " calls shorter than -t are in the output: open over "
				 "more than %u queued items (or a native stack), they were begun "
				 "before their duration was known", t->path, c->ord.short_begun,
				 ORD_HOLD_MAX);
		an_summary(&a, "convert");
	}
	ord_fini(&c->ord);
	if (!rc && c->ord.args_unwritten)
		tool_err("%s: %" PRIu64 " logged values are not in the output: their calls' begin "
			 "events were written before the values came, and the calls never ended "
			 "(lost, or open at the end of the trace)", t->path, c->ord.args_unwritten);
	/* a wait per thread of this trace: the next trace's threads are others */
	free(c->waits);
	c->waits = NULL;
	c->n_waits = c->waits_pending = 0;
	free(c->kids);
	c->kids = NULL;
	c->n_kids = c->n_kid_serials = 0;
	sel_fini(&c->sel);
	an_fini(&a);
	c->cv.proc_name = NULL;
	free(name);
	return rc;
}

int cmd_convert(int argc, char **argv)
{
	struct cvt c = { .fmt = &cv_chrome };
	struct tool_output output;
	struct run_input ri;
	struct cli cl;
	uint32_t k, read = 0;
	int rc, status = EXIT_OK;

	if (!cli_parse(&convert_cli, &c, &cl, argc, argv, &status))
		return status;
	if (ri_open(&ri, &cl, 0, cl.n_files))
		return EXIT_FAIL;
	if (c.xray && ri.run) {
		ri_close(&ri);
		return tool_usage_err("convert", "--format xray takes one trace, not a run "
				      "(--pid, or name the trace)");
	}
	if (tool_output_open(&output, cl.output)) {
		ri_close(&ri);
		return EXIT_FAIL;
	}
	if (c.xray) {
		status = cv_xray(ri.t[0].path, &cl.sel, cl.quiet);
		if (tool_output_close(&output, status == EXIT_OK) && status == EXIT_OK)
			status = EXIT_FAIL;
		ri_close(&ri);
		return status;
	}
	rc = cv_open(&c.cv, ri.run, ri.freq, ri.base);
	tool_stderr_hook(cvt_stderr_sync, &c.cv);
	if (!rc)
		rc = c.fmt->start(&c.cv);
	if (rc)
		tool_err("out of memory");
	for (k = 0; !rc && k < ri.n; k++) {
		if (!ri.t[k].selected)
			continue;
		rc = cvt_trace(&c, &cl, &ri, k, &status);
		if (rc == -EIO && ri.run) {
			status = EXIT_FAIL;	/* reported; the others are converted */
			rc = 0;
		} else if (!rc) {
			read++;
		}
	}
	if (!rc && ri.run)
		c.fmt->finish(&c.cv, NULL);
	ri_say_read(&ri, cl.quiet, read);
	tool_stderr_hook(NULL, NULL);
	cv_drain(&c.cv);
	if (c.fmt->fini)
		c.fmt->fini(&c.cv);
	cv_close(&c.cv);
	ri_close(&ri);
	if (tool_output_close(&output, !rc) || rc)
		status = EXIT_FAIL;
	return status;
}
