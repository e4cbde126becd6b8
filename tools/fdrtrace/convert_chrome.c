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
 * never ended, with "args":{"ended":"unknown: records lost"} for one whose
 * exit was lost in a damaged buffer; an instant event ("ph":"i") per application event; process
 * and thread names (metadata events) at the end, once all are known.
 * Timestamps are microseconds with three decimals (nanosecond precision) of
 * the trace's TSC, so every thread shares one time base.
 *
 * Contract: single-threaded tool code.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

#define CH_LINE_MAX 256	/* room for one event line, without its name */

/* Append @v as decimal. */
static char *ch_u64(char *p, uint64_t v)
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

static char *ch_i32(char *p, int32_t v)
{
	if (v < 0) {
		*p++ = '-';
		return ch_u64(p, (uint64_t)-(int64_t)v);
	}
	return ch_u64(p, (uint64_t)v);
}

/* Append nanoseconds as microseconds with three decimals: "12.345". */
static char *ch_us3(char *p, uint64_t ns)
{
	p = ch_u64(p, ns / 1000);
	*p++ = '.';
	*p++ = (char)('0' + ns / 100 % 10);
	*p++ = (char)('0' + ns / 10 % 10);
	*p++ = (char)('0' + ns % 10);
	return p;
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

/* The function's name as a JSON string, quotes included, made once. */
static const char *ch_name(struct analysis *a, struct an_func *fn)
{
	const char *s;
	char *q;

	if (fn->uptr)
		return fn->uptr;
	s = an_func_name(a, fn);
	if (strlen(s) > CV_OUT_SIZE / 8)
		s = "?";
	q = malloc(strlen(s) * 6 + 3);
	if (!q)
		return "\"?\"";
	ch_json(q, s);
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

static char *ch_where(char *p, const struct analysis *a, const struct an_thread *t)
{
	p = ch_str(p, ",\"pid\":");
	p = ch_i32(p, cv_pid(a, t));
	p = ch_str(p, ",\"tid\":");
	return ch_i32(p, t->tid);
}

static void ch_call(struct cv *cv, struct analysis *a, struct an_thread *t,
		    const struct ord_item *it, char ph, const char *args)
{
	const char *name = ch_name(a, it->fn);
	size_t name_len = strlen(name);
	char *start, *p;

	p = ch_begin_line(cv, name_len);
	start = cv->out + cv->len;
	p = ch_str(p, "\"name\":");
	memcpy(p, name, name_len);
	p += name_len;
	p = ch_str(p, ",\"cat\":\"function\",\"ph\":\"");
	*p++ = ph;
	p = ch_str(p, "\",\"ts\":");
	p = ch_us3(p, cv_ns(a, it->tsc));
	if (ph == 'X') {
		/*
		 * The end's nanosecond minus the start's, not the duration's
		 * own: printed start + printed duration is then exactly the
		 * printed end, so a call that ends before its sibling starts
		 * (in ticks) never overlaps it in the JSON by a rounding.
		 */
		p = ch_str(p, ",\"dur\":");
		p = ch_us3(p, cv_ns(a, it->tsc + it->dur) - cv_ns(a, it->tsc));
	}
	p = ch_where(p, a, t);
	if (args)
		p = ch_str(p, args);
	ch_end_line(cv, start, p);
}

static void ch_complete(void *w, struct analysis *a, struct an_thread *t,
			const struct ord_item *it)
{
	ch_call(w, a, t, it, 'X',
		it->unwound ? ",\"args\":{\"ended\":\"by an outer exit\"}" : NULL);
}

static void ch_open(void *w, struct analysis *a, struct an_thread *t, const struct ord_item *it)
{
	const char *args = NULL;

	if (it->lost)
		args = ",\"args\":{\"ended\":\"unknown: records lost\"}";
	else if (!it->closed)
		args = ",\"args\":{\"ended\":\"never\"}";
	ch_call(w, a, t, it, 'B', args);
}

static void ch_close(void *w, struct analysis *a, struct an_thread *t, const struct ord_item *it,
		     uint64_t end_tsc)
{
	struct cv *cv = w;
	char *start, *p;

	p = ch_begin_line(cv, 0);
	start = cv->out + cv->len;
	p = ch_str(p, "\"ph\":\"E\",\"ts\":");
	p = ch_us3(p, cv_ns(a, end_tsc));
	p = ch_where(p, a, t);
	if (it->unwound)
		p = ch_str(p, ",\"args\":{\"ended\":\"by an outer exit\"}");
	ch_end_line(cv, start, p);
}

static void ch_instant(void *w, struct analysis *a, struct an_thread *t,
		       const struct ord_item *it)
{
	struct cv *cv = w;
	char *start, *p;

	p = ch_begin_line(cv, 0);
	start = cv->out + cv->len;
	if (it->kind == ORD_GAP)
		p = ch_str(p, "\"name\":\"records lost\",\"cat\":\"gap\"");
	else if (it->type >= 0)
		p = ch_str(p, "\"name\":\"typed event\",\"cat\":\"event\"");
	else
		p = ch_str(p, "\"name\":\"custom event\",\"cat\":\"event\"");
	p = ch_str(p, ",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	p = ch_us3(p, cv_ns(a, it->tsc));
	p = ch_where(p, a, t);
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

static const struct ord_writer ch_writer = {
	.complete = ch_complete,
	.begin = ch_open,
	.end = ch_close,
	.instant = ch_instant,
};

/*
 * A native stack: an instant event on its thread ("crash" at a fatal
 * signal, "recording started" at fdrtrace_start()), the frames in its args
 * as strings, innermost first: "NAME (MODULE+0xOFFSET)".
 */
static void ch_native(struct cv *cv, struct analysis *a, struct an_thread *t,
		      const struct fdrtrace_ext *x, uint64_t tsc)
{
	bool crash = x->u.native_stack.why == FDRTRACE_NATIVE_SIGNAL;
	char *start, *p;
	struct ns_frame f;
	uint64_t addr;

	p = ch_begin_line(cv, 0);
	start = cv->out + cv->len;
	p = ch_str(p, crash ? "\"name\":\"crash\"" : "\"name\":\"recording started\"");
	p = ch_str(p, ",\"cat\":\"native_stack\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	p = ch_us3(p, cv_ns(a, tsc));
	p = ch_where(p, a, t);
	p = ch_str(p, ",\"args\":{");
	if (crash)
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

	cv_put(cv, head, sizeof(head) - 1);
	return 0;
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
	uint32_t i;

	if (a->program)
		ch_meta(cv, "process_name", a->pid, NULL, a->program);
	for (i = 0; i < a->n_threads; i++) {
		const struct an_thread *t = a->threads[i];
		char buf[80];

		ch_meta(cv, "thread_name", cv_pid(a, t), &t->tid,
			an_thread_label(t, buf, sizeof(buf)));
	}
	cv_put(cv, "\n]}\n", 4);
}

const struct cv_format cv_chrome = {
	.name = "chrome",
	.wr = &ch_writer,
	.start = ch_start,
	.native = ch_native,
	.finish = ch_finish,
};
