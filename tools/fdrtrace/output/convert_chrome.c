/* SPDX-License-Identifier: MIT */
/*
 * convert_chrome.c - convert's Chrome Trace Event JSON (Perfetto UI,
 * chrome://tracing, speedscope).
 *
 * {"displayTimeUnit":"ns","traceEvents":[ one event per line ]}: a complete
 * event ("ph":"X") per call, in start order per thread; a begin ("B") and
 * end ("E") pair for a call that was still open when the reorder window was
 * flushed (order.h); an instant event per native stack (a crash, with its
 * frames in args); a begin with "args":{"ended":"never"} for a call that
 * never ended ("after recording stopped" when a write error stopped
 * recording), with "args":{"ended":"unknown: records lost"} for one whose
 * exit was lost in a damaged buffer; the values logged inside a call
 * (fdrtrace_log_arg(): "arg0", "arg1", ...; typed events: "event0", ...)
 * in its event's args; an
 * instant event ("ph":"i") per application event; process
 * and thread names (metadata events) at the end, once all are known.
 * Timestamps are microseconds with three decimals (nanosecond precision) of
 * the trace's TSC, so every thread shares one time base.
 *
 * Contract: single-threaded tool code.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "outbuf.h"

#define CH_LINE_MAX 256	/* room for one event line, without its name */
#define CH_NAME_SLACK 16	/* a name is copied 16 bytes at a time */
#define CH_X_FAST 64		/* a complete event's start up to this is one copy */

/* Append @v as decimal. */
static inline char *ch_u64(char *p, uint64_t v)
{
	return fmt_u64(p, v);
}

static inline char *ch_i32(char *p, int32_t v)
{
	return fmt_i64(p, v);
}

/*
 * ".000" to ".999" (ch_frac) and "000" to "999" (ch_d3, and a byte of
 * padding): the three decimals of a time in microseconds, and the three
 * lowest digits of a start's microseconds; four bytes each (one copy),
 * filled by ch_start().
 */
static char ch_frac[1000][4];
static char ch_d3[1000][4];

static void ch_frac_init(void)
{
	for (unsigned r = 0; r < 1000; r++) {
		ch_d3[r][0] = (char)('0' + r / 100);
		ch_d3[r][1] = (char)('0' + r / 10 % 10);
		ch_d3[r][2] = (char)('0' + r % 10);
		ch_d3[r][3] = '.';
		ch_frac[r][0] = '.';
		memcpy(&ch_frac[r][1], ch_d3[r], 3);
	}
}

/* Append nanoseconds as microseconds with three decimals: "12.345". */
static inline char *ch_us3(char *p, uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned r = (unsigned)(ns - us * 1000);

	if (us < 10) {
		*p++ = (char)('0' + us);
	} else if (us < 100) {
		memcpy(p, &fmt_digits2[us * 2], 2);
		p += 2;
	} else {
		p = fmt_u64(p, us);
	}
	memcpy(p, ch_frac[r], 4);
	return p + 4;
}

static char *ch_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* @s as a JSON string, quotes included, into @p (room: 6 * strlen + 3). */
static char *ch_json(char *p, const char *s)
{
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
	return p;
}

/*
 * A function's two printed forms, made once (in an_func.uptr): its name as
 * a JSON string, quotes included (@len bytes at @text), and the start of
 * its complete events up to the timestamp (@x_len bytes at @text + @x_off):
 * ',\n{"name":NAME,"cat":"function","ph":"X","ts":'. Each is followed by
 * CH_NAME_SLACK bytes, so either can be copied 16 bytes at a time.
 */
struct ch_name {
	size_t len;
	size_t x_off, x_len;
	char text[];
};

#define CH_X_HEAD ",\n{\"name\":"
#define CH_X_TAIL ",\"cat\":\"function\",\"ph\":\"X\",\"ts\":"

/* The bytes ch_json() writes for @s, quotes included. */
static size_t ch_json_len(const char *s)
{
	size_t n = 2;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		n += c == '"' || c == '\\' ? 2 : c < 0x20 ? 6 : 1;
	}
	return n;
}

static const struct ch_name *ch_name(struct analysis *a, struct an_func *fn)
{
	struct ch_name *q;
	const char *s;
	size_t len, x_len, room;
	char *x;

	if (fn->uptr)
		return fn->uptr;
	s = an_func_name(a, fn);
	if (strlen(s) > CV_OUT_SIZE / 8)
		s = "?";
	len = ch_json_len(s);
	x_len = sizeof(CH_X_HEAD) - 1 + len + sizeof(CH_X_TAIL) - 1;
	/*
	 * Exactly what is read: the name's 16-byte copies (within its slack),
	 * and the start's (CH_X_FAST bytes of a short one, from its second
	 * byte for the first event; 16-byte copies of a long one): 170 bytes
	 * for a short name, where the worst case of every byte escaped took
	 * 256 and more (400,000 functions: 540 bytes each in convert).
	 */
	room = x_len + CH_NAME_SLACK > CH_X_FAST + 1 ? x_len + CH_NAME_SLACK : CH_X_FAST + 1;
	q = malloc(sizeof(*q) + len + CH_NAME_SLACK + room);
	if (!q)
		return NULL;
	q->len = (size_t)(ch_json(q->text, s) - q->text);
	q->x_off = q->len + CH_NAME_SLACK;
	x = fmt_lit(q->text + q->x_off, CH_X_HEAD);
	memcpy(x, q->text, q->len);
	x = fmt_lit(x + q->len, CH_X_TAIL);
	q->x_len = (size_t)(x - (q->text + q->x_off));
	fn->uptr = q;
	return q;
}

/* Start an event line: separator, then room for @extra bytes more. */
static char *ch_begin_line(struct cv *cv, size_t extra)
{
	char *p = cv_room(cv, extra + CH_LINE_MAX);

	if (cv->events++)
		*p++ = ',';
	*p++ = '\n';
	*p++ = '{';
	return p;
}

static void ch_end_line(struct cv *cv, char *start, char *p)
{
	*p++ = '}';
	cv->len += (size_t)(p - start);
}

/*
 * The format's state: the tail ',"pid":P,"tid":T' of the last thread
 * written, made again when another thread (or a new pid) comes; and the
 * digits of the last start's milliseconds (the same for a millisecond of
 * trace), made again when they change.
 */
struct ch_state {
	const struct an_thread *t;
	int32_t pid;
	size_t len;
	char text[48];
	bool have_ms;
	uint64_t ms;
	size_t ms_len;
	char ms_text[24];
};

/*
 * ch_us3() of a start time: the milliseconds' digits from the state, then
 * the three lower digits of the microseconds and the three decimals, each
 * from a table.
 */
static inline char *ch_ts(char *p, struct ch_state *st, uint64_t ns)
{
	uint64_t us = ns / 1000, ms;
	unsigned r = (unsigned)(ns - us * 1000);

	if (us < 1000)
		return ch_us3(p, ns);
	ms = us / 1000;
	if (__builtin_expect(!st->have_ms || st->ms != ms, 0)) {
		st->ms_len = (size_t)(fmt_u64(st->ms_text, ms) - st->ms_text);
		st->ms = ms;
		st->have_ms = true;
	}
	memcpy(p, st->ms_text, 16);	/* below 2^64 / 10^6: at most 14 digits */
	p += st->ms_len;
	memcpy(p, ch_d3[us - ms * 1000], 4);
	memcpy(p + 3, ch_frac[r], 4);
	return p + 7;
}

/* Make the state's tail for @t (another thread than the last, or a new pid). */
static void ch_where_make(struct ch_state *st, int32_t pid, const struct an_thread *t)
{
	char *e = fmt_lit(st->text, ",\"pid\":");

	e = ch_i32(e, pid);
	e = fmt_lit(e, ",\"tid\":");
	e = ch_i32(e, t->tid);
	st->len = (size_t)(e - st->text);
	st->pid = pid;
	st->t = t;
}

/* Append ',"pid":P,"tid":T' of @t. */
static inline char *ch_where(char *p, struct ch_state *st, const struct analysis *a,
			     const struct an_thread *t)
{
	int32_t pid = cv_pid(a, t);

	if (__builtin_expect(st->t != t || st->pid != pid, 0))
		ch_where_make(st, pid, t);
	memcpy(p, st->text, sizeof(st->text));
	return p + st->len;
}

/* Room ch_args() may need beyond the line's own (a typed event: 6 * 32 + 80). */
#define CH_ARGS_ROOM (ORD_ARGS * 280 + 64)

/*
 * A typed event's payload as replay shows it: a string when printable (a
 * final NUL of a whole payload left out), else hex; how many bytes were
 * left out when it is longer than ORD_ARG_BYTES.
 */
static char *ch_typed(char *p, const struct ord_arg *e)
{
	char text[ORD_ARG_BYTES + 1];
	size_t n = e->len;
	bool printable = true;

	if (n && n == e->size && e->bytes[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++)
		printable &= e->bytes[i] >= 0x20 && e->bytes[i] < 0x7f;
	p += sprintf(p, "{\"type\":%u,\"size\":%" PRIu32 ",", e->type, e->size);
	if (printable) {
		memcpy(text, e->bytes, n);
		text[n] = '\0';
		p = fmt_lit(p, "\"value\":");
		p = ch_json(p, text);
	} else {
		p = fmt_lit(p, "\"hex\":\"");
		for (size_t i = 0; i < e->len; i++)
			p += sprintf(p, "%02x", e->bytes[i]);
		*p++ = '"';
	}
	if (e->size > e->len)
		p += sprintf(p, ",\"bytes_left_out\":%" PRIu32, e->size - e->len);
	*p++ = '}';
	return p;
}

/*
 * The "args" of a slice, ',"args":{...}': the values logged inside the
 * call, fdrtrace_log_arg()'s by position, "arg0":7, and typed events',
 * "event0":{"type":7,"size":6,"value":"typed!"} ("args_left_out":N when
 * more than ORD_ARGS were logged), then "ended":@ended; nothing when
 * there are neither. A value is a JSON number when a viewer reads it
 * exactly (a small negative number as one, else below 2^53), else a
 * string of its hex.
 */
static char *ch_args(char *p, const struct ord_args *r, const char *ended)
{
	const char *sep = "";
	unsigned n_val = 0, n_ev = 0;

	if (!r && !ended)
		return p;
	p = fmt_lit(p, ",\"args\":{");
	for (uint32_t k = 0; r && k < r->n && k < ORD_ARGS; k++) {
		const struct ord_arg *e = &r->a[k];
		uint64_t v = e->v;

		if (e->kind == ORD_ARG_TYPED) {
			p += sprintf(p, "%s\"event%u\":", sep, n_ev++);
			p = ch_typed(p, e);
			sep = ",";
			continue;
		}
		p += sprintf(p, "%s\"arg%u\":", sep, n_val++);
		if ((int64_t)v < 0 && (int64_t)v >= INT32_MIN)
			p = fmt_i64(p, (int64_t)v);
		else if (v < (1ull << 53))
			p = fmt_u64(p, v);
		else
			p += sprintf(p, "\"0x%" PRIx64 "\"", v);
		sep = ",";
	}
	if (r && r->n > ORD_ARGS)
		p += sprintf(p, "%s\"args_left_out\":%" PRIu32, sep, r->n - ORD_ARGS), sep = ",";
	if (ended)
		p += sprintf(p, "%s\"ended\":\"%s\"", sep, ended);
	*p++ = '}';
	return p;
}

static void ch_call(struct cv *cv, struct analysis *a, struct an_thread *t,
		    const struct ord_item *it, char ph, const char *ended)
{
	const struct ch_name *name = ch_name(a, it->fn);
	const char *text = name ? name->text : "\"?\"";
	size_t name_len = name ? name->len : 3;
	uint64_t start_ns = cv_ns(cv, a, it->tsc);
	char *start, *p;

	p = ch_begin_line(cv, name_len + CH_ARGS_ROOM);
	start = cv->out + cv->len;
	p = fmt_lit(p, "\"name\":");
	if (name) {
		/* constant-size copies: the text has CH_NAME_SLACK bytes more */
		for (size_t k = 0; k < name_len; k += 16)
			memcpy(p + k, text + k, 16);
	} else {
		memcpy(p, text, name_len);
	}
	p += name_len;
	p = fmt_lit(p, ",\"cat\":\"function\",\"ph\":\"");
	*p++ = ph;
	p = fmt_lit(p, "\",\"ts\":");
	p = ch_ts(p, cv->fmt_state, start_ns);
	if (ph == 'X') {
		/*
		 * The end's nanosecond minus the start's, not the duration's
		 * own: printed start + printed duration is then exactly the
		 * printed end, so a call that ends before its sibling starts
		 * (in ticks) never overlaps it in the JSON by a rounding.
		 */
		p = fmt_lit(p, ",\"dur\":");
		p = ch_us3(p, cv_ns(cv, a, it->tsc + it->dur) - start_ns);
	}
	p = ch_where(p, cv->fmt_state, a, t);
	p = ch_args(p, it->args, ended);
	ch_end_line(cv, start, p);
}

/*
 * A complete event, the most of the output: ch_call()'s bytes for 'X'
 * without args, from the function's prepared start (ch_name()).
 */
static inline __attribute__((always_inline)) void
ch_complete(void *w, struct analysis *a, struct an_thread *t, const struct ord_item *it)
{
	struct cv *cv = w;
	const struct ch_name *name = ch_name(a, it->fn);
	uint64_t start_ns, end_ns;
	const char *x;
	size_t n, first;
	char *p;

	if (__builtin_expect(it->unwound || !name || it->args, 0)) {
		ch_call(w, a, t, it, 'X', it->unwound ? "by an outer exit" : NULL);
		return;
	}
	start_ns = cv_ns(cv, a, it->tsc);
	end_ns = cv_ns(cv, a, it->tsc + it->dur);
	p = cv_room(cv, name->x_len + CH_LINE_MAX);
	first = cv->events++ == 0;	/* the first event has no ',' before it */
	x = name->text + name->x_off + first;
	n = name->x_len - first;
	/* constant-size copies: the text has at least CH_NAME_SLACK bytes more */
	if (__builtin_expect(n <= CH_X_FAST, 1)) {
		memcpy(p, x, CH_X_FAST);
	} else {
		for (size_t k = 0; k < n; k += 16)
			memcpy(p + k, x + k, 16);
	}
	p = ch_ts(p + n, cv->fmt_state, start_ns);
	/* the end's nanosecond minus the start's: see ch_call() */
	p = fmt_lit(p, ",\"dur\":");
	p = ch_us3(p, end_ns - start_ns);
	p = ch_where(p, cv->fmt_state, a, t);
	*p++ = '}';
	cv->len = (size_t)(p - cv->out);
}

static void ch_open(void *w, struct analysis *a, struct an_thread *t, const struct ord_item *it)
{
	const char *ended = NULL;

	if (it->lost)
		ended = "unknown: records lost";
	else if (it->never && a->st.stopped)
		/* the program went on after a write error stopped recording */
		ended = "after recording stopped";
	else if (it->never)
		ended = "never";
	else if (!it->closed)
		/* written early (the window, a native stack): its end event follows, or a gap */
		ended = "unknown when written";
	ch_call(w, a, t, it, 'B', ended);
}

/* An end event; @args: values logged after its begin was written (viewers merge them). */
static void ch_close(void *w, struct analysis *a, struct an_thread *t, bool unwound,
		     uint64_t end_tsc, const struct ord_args *args)
{
	struct cv *cv = w;
	char *start, *p;

	p = ch_begin_line(cv, CH_ARGS_ROOM);
	start = cv->out + cv->len;
	p = ch_str(p, "\"ph\":\"E\",\"ts\":");
	p = ch_us3(p, cv_ns(cv, a, end_tsc));
	p = ch_where(p, cv->fmt_state, a, t);
	p = ch_args(p, args, unwound ? "by an outer exit" : NULL);
	ch_end_line(cv, start, p);
}

static void ch_instant(void *w, struct analysis *a, struct an_thread *t,
		       const struct ord_item *it)
{
	struct cv *cv = w;
	char *start, *p;

	p = ch_begin_line(cv, 0);
	start = cv->out + cv->len;
	if (it->kind == ORD_WAIT) {
		/* a complete event: the end's nanosecond minus the start's (ch_call()) */
		uint64_t start_ns = cv_ns(cv, a, it->tsc);

		p = ch_str(p, "\"name\":\"fdrtrace: waited for a buffer\",\"cat\":\"fdrtrace\","
			   "\"ph\":\"X\",\"ts\":");
		p = ch_us3(p, start_ns);
		p = ch_str(p, ",\"dur\":");
		p = ch_us3(p, cv_ns(cv, a, it->tsc + it->dur) - start_ns);
		p = ch_where(p, cv->fmt_state, a, t);
		p = ch_str(p, ",\"args\":{\"on_full\":\"wait\"}");
		ch_end_line(cv, start, p);
		return;
	}
	if (it->kind == ORD_GAP)
		p = ch_str(p, "\"name\":\"records lost\",\"cat\":\"gap\"");
	else if (it->type >= 0)
		p = ch_str(p, "\"name\":\"typed event\",\"cat\":\"event\"");
	else
		p = ch_str(p, "\"name\":\"custom event\",\"cat\":\"event\"");
	p = ch_str(p, ",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	p = ch_us3(p, cv_ns(cv, a, it->tsc));
	p = ch_where(p, cv->fmt_state, a, t);
	if (it->kind == ORD_GAP) {
		p = ch_str(p, ",\"args\":{\"records\":");
		p = ch_u64(p, it->size);
	} else {
		p = ch_str(p, ",\"args\":{\"size\":");
		p = ch_u64(p, it->size);
		if (it->type >= 0) {
			p = ch_str(p, ",\"type\":");
			p = ch_u64(p, (uint64_t)it->type);
		}
	}
	*p++ = '}';
	ch_end_line(cv, start, p);
}

static const struct ord_writer ch_writer;

/* ord_drain() with this format's calls made directly (struct ord_writer.drain). */
static void ch_drain(struct ord *o, struct analysis *a, struct an_thread *t, struct ord_queue *q)
{
	ord_drain_with(o, a, t, q, &ch_writer, false);
}

static const struct ord_writer ch_writer = {
	.complete = ch_complete,
	.begin = ch_open,
	.end = ch_close,
	.instant = ch_instant,
	.drain = ch_drain,
};

/*
 * A native stack: an instant event on its thread ("crash" at a fatal
 * signal, "killed by a signal" at one sent to end the process, "recording
 * started" at fdrtrace_start()), the frames in its args
 * as strings, innermost first: "NAME (MODULE+0xOFFSET)".
 */
static void ch_native(struct cv *cv, struct analysis *a, struct an_thread *t,
		      const struct fdrtrace_ext *x, uint64_t tsc)
{
	enum ns_kind kind = ns_kind(x);
	bool signalled = kind != NS_START;	/* then its number and address too */
	char *start, *p;
	struct ns_frame f;
	uint64_t addr;

	p = ch_begin_line(cv, 0);
	start = cv->out + cv->len;
	p = ch_str(p, kind == NS_START ? "\"name\":\"recording started\"" :
		   kind == NS_CRASH ? "\"name\":\"crash\"" : "\"name\":\"killed by a signal\"");
	p = ch_str(p, ",\"cat\":\"native_stack\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	p = ch_us3(p, cv_ns(cv, a, tsc));
	p = ch_where(p, cv->fmt_state, a, t);
	p = ch_str(p, ",\"args\":{");
	if (signalled)
		p += sprintf(p, "\"signal\":%u,\"fault_address\":\"0x%" PRIx64 "\",",
			     x->u.native_stack.signal, x->u.native_stack.fault_address);
	p = ch_str(p, "\"stack\":[");
	cv->len += (size_t)(p - start);
	for (uint32_t i = 0; ns_resolve(&a->ns, x, i, &addr, &f) == 0; i++) {
		char text[1024];

		if (f.module)
			snprintf(text, sizeof(text), "%s (%s+0x%" PRIx64 ")", f.name ? f.name : "??",
				 f.module, f.offset);
		else
			snprintf(text, sizeof(text), "%s (0x%" PRIx64 ", unknown module)",
				 f.name ? f.name : "??", addr);
		start = p = cv_room(cv, 6 * sizeof(text) + 4);
		if (i)
			*p++ = ',';
		p = ch_json(p, text);
		cv->len += (size_t)(p - start);
	}
	cv_put(cv, "]}}", 3);
}

static int ch_start(struct cv *cv)
{
	static const char head[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";

	cv->fmt_state = calloc(1, sizeof(struct ch_state));
	if (!cv->fmt_state)
		return -ENOMEM;
	ch_frac_init();
	cv_put(cv, head, sizeof(head) - 1);
	return 0;
}

static void ch_fini(struct cv *cv)
{
	free(cv->fmt_state);
	cv->fmt_state = NULL;
}

/* A metadata event naming a process or a thread. */
static void ch_meta(struct cv *cv, const char *what, int32_t pid, const int32_t *tid,
		    const char *name)
{
	size_t n = strlen(name);
	char *start, *p;

	if (n > CV_OUT_SIZE / 8)
		name = "?", n = 1;
	p = ch_begin_line(cv, 6 * n);
	start = cv->out + cv->len;
	p = ch_str(p, "\"name\":\"");
	p = ch_str(p, what);
	p = ch_str(p, "\",\"ph\":\"M\",\"pid\":");
	p = ch_i32(p, pid);
	if (tid) {
		p = ch_str(p, ",\"tid\":");
		p = ch_i32(p, *tid);
	}
	p = ch_str(p, ",\"args\":{\"name\":");
	p = ch_json(p, name);
	*p++ = '}';
	ch_end_line(cv, start, p);
}

static void ch_finish(struct cv *cv, struct analysis *a)
{
	struct ch_state *st = cv->fmt_state;
	uint32_t i;

	if (a && (cv->proc_name || a->program))
		ch_meta(cv, "process_name", a->pid, NULL, cv->proc_name ? cv->proc_name : a->program);
	for (i = 0; a && i < a->n_threads; i++) {
		const struct an_thread *t = a->threads[i];
		char buf[80];

		ch_meta(cv, "thread_name", cv_pid(a, t), &t->tid,
			an_thread_label(t, buf, sizeof(buf)));
	}
	if (cv->run)
		st->t = NULL;	/* the next trace's threads may be where these were */
	if (!a || !cv->run)
		cv_put(cv, "\n]}\n", 4);
}

/*
 * An end of an arrow between processes: a flow event, "s" at the parent's
 * end, "f" binding to the enclosing slice ("bp":"e") at the child's, with
 * the arrow's id; on the thread, or the process's main thread (tid = pid).
 */
static void ch_flow(struct cv *cv, struct analysis *a, const struct cv_flow *fl)
{
	char *start, *p;

	p = ch_begin_line(cv, 0);
	start = cv->out + cv->len;
	p = ch_str(p, "\"name\":\"");
	p = ch_str(p, fl->name);
	p = ch_str(p, fl->end ? "\",\"cat\":\"process\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" :
		   "\",\"cat\":\"process\",\"ph\":\"s\",\"id\":");
	p = ch_u64(p, fl->id);
	p = ch_str(p, ",\"ts\":");
	p = ch_us3(p, cv_ns(cv, a, fl->tsc));
	p = ch_str(p, ",\"pid\":");
	p = ch_i32(p, fl->pid);
	p = ch_str(p, ",\"tid\":");
	p = ch_i32(p, fl->t ? fl->t->tid : fl->pid);
	ch_end_line(cv, start, p);
}

const struct cv_format cv_chrome = {
	.name = "chrome",
	.wr = &ch_writer,
	.start = ch_start,
	.native = ch_native,
	.finish = ch_finish,
	.flow = ch_flow,
	.fini = ch_fini,
};
