/* SPDX-License-Identifier: MIT */
/*
 * replay_print.c - the lines of "fdrtrace replay": the call tree as
 * indented text, printed from the analysis core's callbacks.
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
 * also holds whether the call's opening line is out (RP_OPENED). Per
 * thread, t->uptr counts the outermost frames whose shown calls are all
 * opened. With no selector every call is shown, so a call is opened
 * exactly when its frame is below t->uptr: that run (rp_plain_ops) keeps
 * no selection state at all.
 *
 * Contract: single-threaded.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "outbuf.h"
#include "replay.h"
#include "util.h"

/*
 * The text before and after a name on a line, padded so that it is copied
 * whole (a constant-size copy, no call).
 */
#define RP_AFFIX 40

struct rp_affix {
	char s[RP_AFFIX];
	uint8_t n;
};

#define RP_AFFIX_OF(lit) { lit, sizeof(lit) - 1 }

static const struct rp_affix rp_none = RP_AFFIX_OF("");
static const struct rp_affix rp_close = RP_AFFIX_OF("} /* ");
static const struct rp_affix rp_open_end = RP_AFFIX_OF(" {\n");
static const struct rp_affix rp_open_early_end = RP_AFFIX_OF(" { /* entered before the trace */\n");
static const struct rp_affix rp_leaf_end = RP_AFFIX_OF(";\n");
static const struct rp_affix rp_leaf_unwound_end = RP_AFFIX_OF("; /* ended by an outer exit */\n");
static const struct rp_affix rp_close_end = RP_AFFIX_OF(" */\n");
static const struct rp_affix rp_close_unwound_end = RP_AFFIX_OF(" */ /* ended by an outer exit */\n");
static const struct rp_affix rp_never_end = RP_AFFIX_OF(": did not return */\n");
static const struct rp_affix rp_lost_end = RP_AFFIX_OF(": end lost with records */\n");
static const struct rp_affix rp_stopped_end = RP_AFFIX_OF(": open when recording stopped */\n");
/* records lost inside the call (an_frame.holed): timed, self unknown */
static const struct rp_affix rp_leaf_holed_end =
	RP_AFFIX_OF("; /* self unknown: lost records */\n");
static const struct rp_affix rp_close_holed_end =
	RP_AFFIX_OF(" */ /* self unknown: lost records */\n");

static const char rp_blanks[32] = "                                ";

/* A name's bytes are read 16 at a time: 15 more must be readable. */
#define RP_NAME_SLACK 16

/*
 * A function's two printed forms, made once (an_func.uptr): the call,
 * "name()" and its location ("helper() (a.c:2)"; no "()" when the name
 * has its own, a demangled C++ signature), and an_func_name()'s. Made again
 * when a record renames the function (@gen).
 */
struct rp_name {
	uint32_t gen;
	uint32_t call_len;
	uint32_t disp_len;
	char text[];	/* the call, then the name */
};

static const struct rp_name *rp_name_make(struct analysis *a, struct an_func *fn)
{
	struct rp_name *rn = fn->uptr;
	const char *name, *paren;
	size_t len, n;

	/* an_func_name() is called when the name is first printed, as before */
	name = an_func_name(a, fn);
	len = strlen(name);
	n = fn->base ? fn->base_len : len;
	paren = memchr(name, '(', n) ? "" : "()";
	free(rn);
	fn->uptr = rn = malloc(sizeof(*rn) + 2 * len + 2 + RP_NAME_SLACK);
	if (!rn)
		return NULL;
	rn->gen = fn->name_gen;
	memcpy(rn->text, name, n);
	memcpy(rn->text + n, paren, strlen(paren));
	memcpy(rn->text + n + strlen(paren), name + n, len - n);
	rn->call_len = (uint32_t)(len + strlen(paren));
	memcpy(rn->text + rn->call_len, name, len);
	rn->disp_len = (uint32_t)len;
	return rn;
}

static inline const struct rp_name *rp_name(struct analysis *a, struct an_func *fn)
{
	const struct rp_name *rn = fn->uptr;

	if (__builtin_expect(rn && rn->gen == fn->name_gen, 1))
		return rn;
	return rp_name_make(a, fn);
}

/* The call form of a name, or its an_func_name() form (with @len). */
static inline __attribute__((always_inline)) const char *
rp_text(struct analysis *a, struct an_func *fn, bool call, size_t *len)
{
	static const char unknown[RP_NAME_SLACK * 2] = "?()";	/* out of memory */
	const struct rp_name *rn = rp_name(a, fn);

	if (!rn) {
		*len = call ? 3 : 1;
		return unknown;
	}
	*len = call ? rn->call_len : rn->disp_len;
	return call ? rn->text : rn->text + rn->call_len;
}

/* printf into the output, for the rare lines (gaps, waits, crash stacks). */
static void rp_printf(struct rp *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rp_printf(struct rp *rp, const char *fmt, ...)
{
	char small[512], *big = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		ob_put(&rp->ob, small, (size_t)n);
		return;
	}
	va_start(ap, fmt);
	n = vasprintf(&big, fmt, ap);
	va_end(ap);
	if (n >= 0)
		ob_put(&rp->ob, big, (size_t)n);
	free(big);
}

/* t->uptr: how many frames from the outermost have their shown calls opened */
static inline uint32_t rp_opened(const struct an_thread *t)
{
	return (uint32_t)(uintptr_t)t->uptr;
}

static void rp_enter_plain(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct rp *rp = a->ctx;

	(void)f;
	if (rp_opened(t) > t->depth - 1)
		t->uptr = (void *)(uintptr_t)(t->depth - 1);
	if (__builtin_expect(rp->waits_pending != 0, 0) && rp->sel.plain)
		rp_wait_put(rp, a, t, t->depth);	/* inside the new call */
}

static void rp_enter(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct rp *rp = a->ctx;

	rp_enter_plain(a, t, f);
	sel_enter(&rp->sel, a, t);
	if (__builtin_expect(rp->waits_pending != 0, 0))
		rp_wait_put(rp, a, t, t->depth);
}

/* One time field's text at @p: @ticks in ns, us, ms or s, 13 columns. */
static char *rp_human(struct analysis *a, char *p, uint64_t ticks)
{
	return fmt_dur_slow(p, a->freq, ticks);
}

/*
 * rp_head() with -f: each field, right-aligned in its width, blanks where
 * the line has no such value (a line's time is its call's entry for a
 * call line and an opening line, its exit for a closing line; @tsc 0: not
 * known), then " | ".
 */
static __attribute__((noinline)) char *rp_head_fields(struct rp *rp, struct analysis *a,
						      struct an_thread *t, char *p, bool with_dur,
						      uint64_t dur, uint64_t tsc,
						      struct an_func *fn)
{
	uint64_t since = rp->have_base && tsc > rp->base_tsc ? tsc - rp->base_tsc : 0;
	uint64_t *last = NULL;

	if (tsc && !tool_grow(&rp->last, &rp->n_last, t->index, sizeof(*rp->last), 16))
		last = &rp->last[t->index];	/* out of memory: no delta */
	for (unsigned i = 0; i < rp->n_fields; i++) {
		int w = rp_field_info[rp->fields[i]].width;
		const char *mod;

		if (i)
			*p++ = ' ';
		switch (rp->fields[i]) {
		case RF_TIME:
			p += tsc ? sprintf(p, "%*.9f", w, an_seconds(a, since)) :
				   sprintf(p, "%*s", w, "");
			break;
		case RF_DELTA:
			if (last && *last && tsc >= *last)
				p = rp_human(a, p, tsc - *last);
			else
				p += sprintf(p, "%*s", w, "");
			break;
		case RF_ELAPSED:
			p = tsc ? rp_human(a, p, since) : p + sprintf(p, "%*s", w, "");
			break;
		case RF_DURATION:
			p = with_dur ? rp_human(a, p, dur) : p + sprintf(p, "%*s", w, "");
			break;
		case RF_TID:
			p += sprintf(p, "%*" PRId32, w, t->tid);
			break;
		case RF_PID:
			p += t->pid ? sprintf(p, "%*" PRId32, w, t->pid) : sprintf(p, "%*s", w, "");
			break;
		case RF_MODULE:
			mod = fn ? an_func_module(a, fn) : NULL;
			p += sprintf(p, "%*.*s", w, w, mod ? mod : "");
			break;
		}
	}
	if (last)
		*last = tsc;
	return fmt_lit(p, " | ");
}

/*
 * A line's start at @p (room for OB_PIECE bytes): the duration (or
 * blanks) and the thread; with -f, its fields. Return: the end.
 */
static inline char *rp_head(struct rp *rp, struct analysis *a, struct an_thread *t, char *p,
		     bool with_dur, uint64_t dur, uint64_t tsc, struct an_func *fn)
{
	if (__builtin_expect(rp->n_fields != 0, 0))
		return rp_head_fields(rp, a, t, p, with_dur, dur, tsc, fn);
	if (with_dur) {
		if (__builtin_expect(!rp->have_clock || rp->clock.freq != a->freq, 0)) {
			fmt_dur_init(&rp->clock, a->freq);
			rp->have_clock = true;
		}
		p = fmt_dur(p, &rp->clock, dur);
	} else {
		p = fmt_lit(p, "             ");
	}
	if (!rp->have_tid || rp->tid != t->tid) {
		char *e = fmt_lit(rp->tid_text, " [");

		e = fmt_i64_w(e, t->tid, 7);
		e = fmt_lit(e, "] | ");
		rp->tid_len = (uint8_t)(e - rp->tid_text);
		rp->tid = t->tid;
		rp->have_tid = true;
	}
	memcpy(p, rp->tid_text, sizeof(rp->tid_text));
	return p + rp->tid_len;
}

/*
 * The indentation of @level: two blanks a level, at most RP_INDENT_MAX
 * levels; a deeper line is indented that far and says its level,
 * "[level N] ". Unbounded, 50,000 nested calls made 5 GB of blanks from an
 * 800 KB trace (the output grew with the square of the depth).
 */
static void rp_indent(struct rp *rp, uint32_t level)
{
	char mark[32];
	int n;

	if (level <= RP_INDENT_MAX) {
		ob_fill(&rp->ob, ' ', 2 * (size_t)level);
		return;
	}
	ob_fill(&rp->ob, ' ', 2 * (size_t)RP_INDENT_MAX);
	n = snprintf(mark, sizeof(mark), "[level %" PRIu32 "] ", level);
	ob_put(&rp->ob, mark, (size_t)n);
}

/* A line's start and the indentation of @level, for a line built of pieces. */
static void rp_prefix(struct rp *rp, struct analysis *a, struct an_thread *t, bool with_dur,
		      uint64_t dur, uint32_t level, uint64_t tsc)
{
	ob_commit(&rp->ob, rp_head(rp, a, t, ob_room(&rp->ob), with_dur, dur, tsc, NULL));
	rp_indent(rp, level);
}

/*
 * A whole line about a call: its start, the indentation of @level, @pre,
 * @len bytes of @name (RP_NAME_SLACK more readable), @post. Built in place
 * with constant-size copies when it fits in OB_PIECE, else in pieces.
 */
static inline __attribute__((always_inline)) void
rp_line(struct rp *rp, struct analysis *a, struct an_thread *t, bool with_dur, uint64_t dur,
	uint32_t level, const struct rp_affix *pre, const char *name, size_t len,
	const struct rp_affix *post, uint64_t tsc, struct an_func *fn)
{
	char *start = ob_room(&rp->ob), *p = rp_head(rp, a, t, start, with_dur, dur, tsc, fn);
	size_t indent = 2 * (size_t)level, k;

	if ((size_t)(p - start) + indent + 32 + 2 * RP_AFFIX + len + RP_NAME_SLACK > OB_PIECE ||
	    level > RP_INDENT_MAX) {
		ob_commit(&rp->ob, p);
		rp_indent(rp, level);
		ob_put(&rp->ob, pre->s, pre->n);
		ob_put(&rp->ob, name, len);
		ob_put(&rp->ob, post->s, post->n);
		return;
	}
	/* most indentation is at most 32 blanks, most names at most 16 bytes */
	memcpy(p, rp_blanks, 32);
	for (k = 32; k < indent; k += 32)
		memcpy(p + k, rp_blanks, 32);
	p += indent;
	memcpy(p, pre->s, RP_AFFIX);
	p += pre->n;
	memcpy(p, name, 16);
	for (k = 16; k < len; k += 16)
		memcpy(p + k, name + k, 16);
	p += len;
	memcpy(p, post->s, RP_AFFIX);
	ob_commit(&rp->ob, p + post->n);
}

/* The arguments logged for frame @i of @t, or NULL. */
static const struct rp_args *rp_args_of(const struct rp *rp, const struct an_thread *t, uint32_t i)
{
	const struct rp_args *r;

	if (__builtin_expect(!rp->args, 1) || t->index >= rp->n_args || i >= rp->args[t->index].cap)
		return NULL;
	r = &rp->args[t->index].at[i];
	return r->n && r->tsc == t->stack[i].tsc && r->fn == t->stack[i].fn ? r : NULL;
}

/* One value: decimal, negative when it is a small negative number, else hex from 2^32. */
static int rp_arg_text(char *p, uint64_t v)
{
	if ((int64_t)v < 0 && (int64_t)v >= INT32_MIN)
		return sprintf(p, "%" PRId64, (int64_t)v);
	return sprintf(p, v < (1ull << 32) ? "%" PRIu64 : "0x%" PRIx64, v);
}

/*
 * The call form of frame @i with its logged arguments: "square(7)", or
 * "scale(int) (7)" for a name with its own parameter list; @buf is used
 * (room for OB_PIECE bytes). Without arguments, rp_text()'s.
 */
static const char *rp_call(struct rp *rp, struct analysis *a, struct an_thread *t, uint32_t i,
			   char *buf, size_t *len)
{
	const struct rp_args *r = rp_args_of(rp, t, i);
	const char *name = rp_text(a, t->stack[i].fn, !r, len);
	size_t n;
	char *p;

	if (!r)
		return name;
	n = *len < OB_PIECE - 200 ? *len : OB_PIECE - 200;
	memcpy(buf, name, n);
	p = buf + n;
	if (memchr(name, '(', n))
		*p++ = ' ';
	*p++ = '(';
	for (uint32_t k = 0; k < r->n && k < RP_ARGS; k++) {
		if (k)
			p = fmt_lit(p, ", ");
		p += rp_arg_text(p, r->v[k]);
	}
	if (r->n > RP_ARGS)
		p = fmt_lit(p, ", ...");
	*p++ = ')';
	memset(p, 0, RP_NAME_SLACK);	/* rp_line() copies 16 bytes at a time */
	*len = (size_t)(p - buf);
	return buf;
}

/* fdrtrace_log_arg()'s value for the innermost call of @t. */
static void rp_arg(struct analysis *a, struct an_thread *t, uint64_t value)
{
	struct rp *rp = a->ctx;
	const struct an_frame *f = &t->stack[t->depth - 1];
	struct rp_arg_stack *st;
	struct rp_args *r;

	/* out of memory: the line goes without it */
	if (tool_grow(&rp->args, &rp->n_args, t->index, sizeof(*rp->args), 8))
		return;
	st = &rp->args[t->index];
	if (tool_grow(&st->at, &st->cap, t->depth - 1, sizeof(*st->at), 16))
		return;
	r = &st->at[t->depth - 1];
	if (r->tsc != f->tsc || r->fn != f->fn || !r->n) {
		r->tsc = f->tsc;
		r->fn = f->fn;
		r->n = 0;
	}
	if (r->n < RP_ARGS)
		r->v[r->n] = value;
	r->n++;
}

/* Print the opening lines of the shown open calls around frame index @upto. */
static void rp_open_ancestors(struct rp *rp, struct analysis *a, struct an_thread *t,
			      uint32_t upto)
{
	uint32_t i = (uint32_t)(uintptr_t)t->uptr;
	const char *name;
	size_t len;

	/* Below t->uptr every shown call is open already (rp_enter() lowers it). */
	char buf[OB_PIECE];

	for (; rp->sel.plain && i < upto; i++) {
		name = rp_call(rp, a, t, i, buf, &len);
		rp_line(rp, a, t, false, 0, i, &rp_none, name, len,
			t->stack[i].partial ? &rp_open_early_end : &rp_open_end,
			t->stack[i].partial ? 0 : t->stack[i].tsc, t->stack[i].fn);
	}
	for (; i < upto; i++) {
		struct sel_frame *s = sel_frame(&rp->sel, t, i + 1);

		if (!s || !s->shown || (s->user & RP_OPENED))
			continue;
		name = rp_call(rp, a, t, i, buf, &len);
		rp_line(rp, a, t, false, 0, s->level, &rp_none, name, len,
			t->stack[i].partial ? &rp_open_early_end : &rp_open_end,
			t->stack[i].partial ? 0 : t->stack[i].tsc, t->stack[i].fn);
		s->user |= RP_OPENED;
	}
	if (upto > (uint32_t)(uintptr_t)t->uptr)
		t->uptr = (void *)(uintptr_t)upto;
}

/*
 * The payload's first RP_PREVIEW bytes: in double quotes when they are all
 * printable ASCII (a final NUL of the payload aside; '"' and '\\' escaped),
 * else "hex " and two digits a byte; "..." when the payload is longer.
 */
static void rp_preview(struct rp *rp, const uint8_t *p, uint32_t size)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t n = size < RP_PREVIEW ? size : RP_PREVIEW, i, text = n;
	char *o = ob_room(&rp->ob);	/* at most 4 + 2 * RP_PREVIEW + 3 bytes */
	bool printable = true;

	if (n == size && n && !p[n - 1])
		text = n - 1;	/* a C string with its terminator */
	for (i = 0; i < text && printable; i++)
		printable = p[i] >= 0x20 && p[i] < 0x7f;
	if (printable) {
		*o++ = '"';
		for (i = 0; i < text; i++) {
			if (p[i] == '"' || p[i] == '\\')
				*o++ = '\\';
			*o++ = (char)p[i];
		}
		*o++ = '"';
	} else {
		o = fmt_lit(o, "hex ");
		for (i = 0; i < n; i++) {
			*o++ = hex[p[i] >> 4];
			*o++ = hex[p[i] & 15];
		}
	}
	if (n < size)
		o = fmt_lit(o, "...");
	ob_commit(&rp->ob, o);
}

/*
 * Where a line that is not a call goes (an event, a native stack): one
 * level inside the innermost shown open call, whose opening lines are then
 * printed. Return: false when --tid or --time-range leave it out.
 */
static bool rp_place(struct rp *rp, struct analysis *a, struct an_thread *t, uint64_t tsc,
		     uint32_t *level)
{
	struct sel_frame *s = sel_frame(&rp->sel, t, t->depth);

	*level = 0;
	if (rp->sel.plain) {
		/* one inside the innermost call: every call is shown */
		*level = t->depth;
		rp_open_ancestors(rp, a, t, t->depth);
		return true;
	}
	if (!sel_event(&rp->sel, a, t, tsc))
		return false;
	if (s) {
		*level = s->level + (s->shown ? 1 : 0);
		rp_open_ancestors(rp, a, t, t->depth);
	}
	return true;
}

/* An application event: a line of its own, inside the innermost shown call. */
static void rp_event(struct analysis *a, struct an_thread *t, const struct fdrtrace_event *ev)
{
	struct rp *rp = a->ctx;
	uint32_t level, size = ev->u.event.size;

	if (!rp_place(rp, a, t, ev->tsc, &level))
		return;
	rp_prefix(rp, a, t, false, 0, level, ev->tsc);
	if (ev->type == FDRTRACE_EV_TYPED_EVENT)
		rp_printf(rp, "[event typed type=%u ", (unsigned)ev->u.event.event_type);
	else
		ob_put(&rp->ob, "[event custom ", 14);
	rp_printf(rp, "%" PRIu32 " byte%s", size, size == 1 ? "" : "s");
	if (size) {
		ob_put(&rp->ob, " ", 1);
		rp_preview(rp, ev->u.event.data, size);
	}
	ob_put(&rp->ob, "]\n", 2);
}

/*
 * A native stack (a fatal signal's, or fdrtrace_start()'s caller's): a
 * header line, then one line a frame, innermost first, where it happened
 * (a crash stack comes after the crashing thread's last call).
 */
static void rp_native(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
		      uint64_t tsc)
{
	struct rp *rp = a->ctx;
	struct ns_frame f;
	uint64_t addr;
	uint32_t level;

	if (!rp_place(rp, a, t, tsc, &level))
		return;
	rp_prefix(rp, a, t, false, 0, level, tsc);
	if (ns_kind(x) != NS_START) {
		rp_printf(rp, "[%s: signal %u (%s)%s", ns_kind(x) == NS_CRASH ? "crash" : "killed",
			  x->u.native_stack.signal,
			  sigabbrev_np(x->u.native_stack.signal) ?
				  sigabbrev_np(x->u.native_stack.signal) : "?",
			  x->u.native_stack.why == FDRTRACE_NATIVE_SENT ?
				  ", sent by another process" : "");
		if (x->u.native_stack.fault_address)
			rp_printf(rp, ", fault address 0x%" PRIx64,
				  x->u.native_stack.fault_address);
	} else {
		rp_printf(rp, "[recording started%s",
			  x->u.native_stack.why == FDRTRACE_NATIVE_START ?
				  " by fdrtrace_start()" : "");
	}
	rp_printf(rp, "; native stack, %" PRIu32 " frames, innermost first]\n",
		  x->u.native_stack.depth);
	for (uint32_t i = 0; ns_resolve(&a->ns, x, i, &addr, &f) == 0; i++) {
		rp_prefix(rp, a, t, false, 0, level, tsc);
		rp_printf(rp, "[  #%-2" PRIu32 " %s", i, f.name ? f.name : "??");
		if (f.module)
			rp_printf(rp, " (%s+0x%" PRIx64 ")]\n", f.module, f.offset);
		else
			rp_printf(rp, " (0x%" PRIx64 ", unknown module)]\n", addr);
	}
}

/*
 * rp_exit() when every call is shown: the call is opened when its frame is
 * below t->uptr. One line: its closing line (with no duration when its
 * entry was never seen), or its leaf line after its callers' opening lines.
 */
static void rp_exit_plain(struct analysis *a, struct an_thread *t, const struct an_frame *f,
			  uint64_t end, uint64_t dur, enum an_end how)
{
	struct rp *rp = a->ctx;
	uint32_t d = t->depth - 1;	/* the call's frame */
	bool opened = d < rp_opened(t);
	const struct rp_affix *post;
	const char *name;
	char buf[OB_PIECE];
	size_t len;

	if (f->partial) {
		/* Its entry was never seen: it was never opened here. */
		if (!opened)
			return;
		post = &rp_close_end;
	} else if (opened) {
		post = how == AN_END_UNWOUND ? &rp_close_unwound_end :
		       f->holed ? &rp_close_holed_end : &rp_close_end;
	} else {
		if (rp_opened(t) < d)
			rp_open_ancestors(rp, a, t, d);
		post = how == AN_END_UNWOUND ? &rp_leaf_unwound_end :
		       f->holed ? &rp_leaf_holed_end : &rp_leaf_end;
	}
	name = opened ? rp_text(a, f->fn, false, &len) : rp_call(rp, a, t, d, buf, &len);
	rp_line(rp, a, t, !f->partial, dur, d, opened ? &rp_close : &rp_none, name, len, post,
		opened ? end : f->tsc, f->fn);
	/* beside the call that ended (the record's own: the calls it unwound end first) */
	if (__builtin_expect(rp->waits_pending != 0, 0) && how != AN_END_UNWOUND)
		rp_wait_put(rp, a, t, d);
}

static void rp_exit_shown(struct rp *rp, struct analysis *a, struct an_thread *t,
			  const struct an_frame *f, struct sel_frame *s, bool shown, uint64_t end,
			  uint64_t dur, enum an_end how);

static void rp_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		    uint64_t end, uint64_t dur, enum an_end how)
{
	struct rp *rp = a->ctx;
	struct sel_frame *s = sel_frame(&rp->sel, t, t->depth);
	bool shown = sel_exit(&rp->sel, a, t, dur);

	if (__builtin_expect(rp->waits_pending != 0, 0) && how != AN_END_UNWOUND) {
		rp_exit_shown(rp, a, t, f, s, shown, end, dur, how);
		rp_wait_put(rp, a, t, t->depth - 1);	/* beside the call that ended */
		return;
	}
	rp_exit_shown(rp, a, t, f, s, shown, end, dur, how);
}

/* rp_exit()'s line, if any. */
static void rp_exit_shown(struct rp *rp, struct analysis *a, struct an_thread *t,
			  const struct an_frame *f, struct sel_frame *s, bool shown, uint64_t end,
			  uint64_t dur, enum an_end how)
{
	const char *name;
	size_t len;

	if (!s)
		return;
	if (f->partial) {
		/* Its entry was never seen: it was never opened here. */
		if (s->user & RP_OPENED) {
			name = rp_text(a, f->fn, false, &len);
			rp_line(rp, a, t, false, 0, s->level, &rp_close, name, len, &rp_close_end,
				end, f->fn);
		}
		return;
	}
	/* An opened call stays balanced even under the threshold (an event opened it). */
	if (!shown && !(s->shown && (s->user & RP_OPENED)))
		return;
	if ((uintptr_t)t->uptr < t->depth - 1)
		rp_open_ancestors(rp, a, t, t->depth - 1);
	if (s->user & RP_OPENED) {
		name = rp_text(a, f->fn, false, &len);
		rp_line(rp, a, t, true, dur, s->level, &rp_close, name, len,
			how == AN_END_UNWOUND ? &rp_close_unwound_end :
			f->holed ? &rp_close_holed_end : &rp_close_end, end, f->fn);
	} else {
		char buf[OB_PIECE];

		name = rp_call(rp, a, t, t->depth - 1, buf, &len);
		rp_line(rp, a, t, true, dur, s->level, &rp_none, name, len,
			how == AN_END_UNWOUND ? &rp_leaf_unwound_end :
			f->holed ? &rp_leaf_holed_end : &rp_leaf_end, f->tsc, f->fn);
	}
}

/*
 * A call whose end is not in the trace: close its opening line with @end,
 * opening it (and its shown callers) first if nothing under it completed.
 */
static void rp_endless(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		       const struct rp_affix *end)
{
	struct rp *rp = a->ctx;
	struct sel_frame *s = sel_frame(&rp->sel, t, t->depth);
	const char *name;
	size_t len;

	if (rp->sel.plain) {
		/* as below, every call shown: opened here when it is not yet */
		rp_open_ancestors(rp, a, t, t->depth);
		name = rp_text(a, f->fn, false, &len);
		rp_line(rp, a, t, false, 0, t->depth - 1, &rp_close, name, len, end, 0, f->fn);
		return;
	}
	if (!s)
		return;
	/*
	 * Innermost first: a shown call that never returned is opened here if
	 * nothing under it completed (so were its shown callers, which come
	 * next), whatever the threshold: its duration is unknown.
	 */
	if (!(s->user & RP_OPENED) && s->shown)
		rp_open_ancestors(rp, a, t, t->depth);
	if (!(s->user & RP_OPENED))
		return;
	name = rp_text(a, f->fn, false, &len);
	rp_line(rp, a, t, false, 0, s->level, &rp_close, name, len, end, 0, f->fn);
}

/*
 * A call that never ended (open when the trace ended): one the program
 * may have returned from after a write error stopped recording (the close
 * says so) is not said to have not returned.
 */
static void rp_unfinished(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct rp *rp = a->ctx;

	rp_wait_put(rp, a, t, t->depth);	/* the trace ended after it */
	rp_endless(a, t, f, a->st.stopped ? &rp_stopped_end : &rp_never_end);
}

/* A call whose exit was lost with damaged or cut records: its end is unknown. */
static void rp_dropped(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	rp_endless(a, t, f, &rp_lost_end);
}

/* A gap: where it is, how many records, how long; the calls open here are not timed. */
static void rp_gap(struct analysis *a, struct an_thread *t, uint64_t first_tsc, uint64_t last_tsc,
		   uint64_t records, unsigned reason)
{
	struct rp *rp = a->ctx;
	uint32_t level, holed = 0;

	if (!rp_place(rp, a, t, first_tsc ? first_tsc : last_tsc, &level))
		return;
	rp_prefix(rp, a, t, false, 0, level, first_tsc ? first_tsc : last_tsc);
	if (!first_tsc) {
		/* the thread's start: when those records were made is not known */
		rp_printf(rp, "[lost %" PRIu64 " record%s (%s) before the thread's first kept "
			  "buffer: the calls open here are not timed]\n", records,
			  records == 1 ? "" : "s", fdrtrace_drop_reason_name(reason));
		return;
	}
	for (uint32_t i = 0; i < t->depth; i++)
		holed += t->stack[i].holed && !t->stack[i].lost;
	rp_printf(rp, "[lost %" PRIu64 " record%s (%s) over %.6f s: %s]\n", records,
		  records == 1 ? "" : "s", fdrtrace_drop_reason_name(reason),
		  an_seconds(a, last_tsc > first_tsc ? last_tsc - first_tsc : 0),
		  !holed ? "the calls open here are not timed" :
		  holed == t->depth ? "the calls open here are timed, their self times unknown" :
		  "the innermost calls open here end in it, not timed; the others are timed, "
		  "their self times unknown");
}

/*
 * on_full=wait: the thread waited for the flush thread (nothing was lost).
 * The wait's record opens the new buffer, before the record whose write
 * waited, whose time was read before the wait: the wait is printed after
 * that record (rp_wait_put()), beside the call it ended or inside the call
 * it began, not inside a call that ended before it.
 */
static void rp_wait(struct analysis *a, struct an_thread *t, uint64_t first_tsc, uint64_t last_tsc)
{
	struct rp *rp = a->ctx;
	struct rp_wait *w;

	if (!sel_event(&rp->sel, a, t, first_tsc))
		return;
	if (tool_grow(&rp->waits, &rp->n_waits, t->index, sizeof(*rp->waits), 16)) {
		rp->sel.oom = true;	/* reported: something is missing */
		return;
	}
	w = &rp->waits[t->index];
	if (w->pending)
		rp_wait_put(rp, a, t, t->depth);	/* two in a row: the first here */
	w->ticks = last_tsc > first_tsc ? last_tsc - first_tsc : 0;
	w->tsc = first_tsc;
	w->pending = true;
	rp->waits_pending++;
}

/* Print @t's pending wait inside its @depth outermost open calls. */
__attribute__((noinline)) void rp_wait_put(struct rp *rp, struct analysis *a,
						  struct an_thread *t, uint32_t depth)
{
	struct rp_wait *w;
	uint32_t level = 0;

	if (t->index >= rp->n_waits || !rp->waits[t->index].pending)
		return;
	w = &rp->waits[t->index];
	w->pending = false;
	rp->waits_pending--;
	if (rp->sel.plain) {
		level = depth;
		rp_open_ancestors(rp, a, t, depth);
	} else if (depth) {
		struct sel_frame *s = sel_frame(&rp->sel, t, depth);

		if (s) {
			level = s->level + (s->shown ? 1 : 0);
			rp_open_ancestors(rp, a, t, depth);
		}
	}
	rp_prefix(rp, a, t, false, 0, level, w->tsc);
	rp_printf(rp, "[waited %.6f s for a free buffer (on_full=wait)]\n", an_seconds(a, w->ticks));
}

/* tool_stderr_sync(): the lines made so far go out before a message. */
void rp_stderr_sync(void *ctx)
{
	struct obuf *ob = ctx;

	ob_flush(ob);
	ot_drain(&ob->w);
}

const struct an_ops rp_ops = {
	.enter = rp_enter,
	.exit = rp_exit,
	.event = rp_event,
	.unfinished = rp_unfinished,
	.dropped = rp_dropped,
	.native = rp_native,
	.gap = rp_gap,
	.wait = rp_wait,
	.arg = rp_arg,
};

/* No selector: no selection state (see rp_opened()). */
const struct an_ops rp_plain_ops = {
	.enter = rp_enter_plain,
	.exit = rp_exit_plain,
	.event = rp_event,
	.unfinished = rp_unfinished,
	.dropped = rp_dropped,
	.native = rp_native,
	.gap = rp_gap,
	.wait = rp_wait,
	.arg = rp_arg,
};

/* -f: the first call's time is the origin of time and elapsed, as of --time-range. */
static void rp_note_base(struct rp *rp, const struct an_thread *t)
{
	if (!rp->have_base) {
		rp->base_tsc = t->stack[t->depth - 1].tsc;
		rp->have_base = true;
	}
}

void rp_enter_plain_fields(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	rp_note_base(a->ctx, t);
	rp_enter_plain(a, t, f);
}

void rp_enter_fields(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	rp_note_base(a->ctx, t);
	rp_enter(a, t, f);
}
