/* SPDX-License-Identifier: MIT */
/*
 * convert.h - the convert core: what the command (cmd_convert.c) shares
 * with the output formats (convert_chrome.c: Chrome Trace Event JSON;
 * convert_perfetto.c: Perfetto's protobuf trace; convert_xray.c: XRay's
 * own FDR form). The output buffer is convert.c's.
 *
 * cmd_convert.c runs the analysis, applies the selectors (select.h) and puts
 * each thread's calls and events in start order (order.h); a format writes
 * them through its struct ord_writer, and writes the header and the
 * process and thread names through struct cv_format. Output goes through
 * one buffer (cv_room()/cv_put()), handed when full to a thread that
 * writes it to stdout (out_thread.h) while the next one fills.
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDRTRACE_TOOL_CONVERT_H
#define FDRTRACE_TOOL_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "order.h"
#include "out_thread.h"
#include "ticks.h"
#include "util.h"

#define CV_OUT_SIZE (1u << 20)

/**
 * struct cv - one conversion
 * @out, @len: the output buffer and its fill
 * @events: events written
 * @fmt_state: the format's own state
 * @w: writes full buffers to stdout while the next one fills
 * @clk, @near: the trace's ticks to nanoseconds (cv_ns())
 * @run: the conversion is of a run (several traces, input.h): @run_freq
 *	and @run_base are its one time axis, @proc_name names the process
 *	of the trace being read, @uuid_base sets its threads' tracks apart
 *	(Perfetto), and the formats' @finish writes no trailer
 */
struct cv {
	char *out;
	size_t len;
	uint64_t events;
	void *fmt_state;
	struct out_thread w;
	struct tk_ns clk;
	struct tk_near near;
	bool run;
	uint64_t run_freq, run_base;
	const char *proc_name;
	uint64_t uuid_base;
};

/**
 * struct cv_flow - one end of an arrow between processes of a run: from
 * the point where a parent forked or spawned a child (or an image exec'd)
 * to the child's first event
 * @id: the arrow's id (the same at both ends)
 * @end: the child's end (false: the parent's)
 * @name: "fork", "spawn" (a child without a fork record: posix_spawn, or
 *	a fork child that exec'd before it ran traced code) or "exec"
 * @t: the thread of @a it is on; NULL: the process @pid's own track
 * @pid: the process
 * @tsc: where
 */
struct cv_flow {
	uint64_t id;
	bool end;
	const char *name;
	struct an_thread *t;
	int32_t pid;
	uint64_t tsc;
};

/**
 * struct cv_format - one output format
 * @name: its --format name
 * @split: it has no complete events (see order.h)
 * @wr: how it writes calls and instants
 * @start: before the trace is read; 0 or a negative errno
 * @native: a native stack (a crash, a start) of @t at @tsc, as an instant
 *	event; everything queued for @t is written before it
 * @finish: after it was read (process and thread names, trailer); of a
 *	run (@cv->run): after each trace its names, then once with @a NULL
 *	the trailer
 * @flow: an end of an arrow between processes (struct cv_flow), after the
 *	trace of @a was read
 * @fini: free the format's state (also after a failure)
 */
struct cv_format {
	const char *name;
	bool split;
	const struct ord_writer *wr;
	int (*start)(struct cv *cv);
	void (*native)(struct cv *cv, struct analysis *a, struct an_thread *t,
		       const struct fdrtrace_ext *x, uint64_t tsc);
	void (*finish)(struct cv *cv, struct analysis *a);
	void (*flow)(struct cv *cv, struct analysis *a, const struct cv_flow *fl);
	void (*fini)(struct cv *cv);
};

extern const struct cv_format cv_chrome;
extern const struct cv_format cv_perfetto;

/*
 * --format xray (convert_xray.c): one thread's records of the trace at
 * @path, as one buffer, on standard output. Return: an exit status.
 */
struct sel_opts;
int cv_xray(const char *path, const struct sel_opts *sel, bool quiet);

/**
 * cv_open - set up @cv's output to stdout (no writing thread yet), its
 * clock (ticks to nanoseconds) and its time axis
 * @cv: the conversion, zeroed
 * @run: the conversion is of a run (struct cv)
 * @run_freq, @run_base: the run's time axis
 *
 * Return: 0, or -ENOMEM without memory for the buffer (cv_close() then
 * too).
 */
int cv_open(struct cv *cv, bool run, uint64_t run_freq, uint64_t run_base);

/**
 * cv_drain - write out what the buffer holds and wait until everything
 * handed over is written (before a message on stderr, and at the end)
 * @cv: the conversion (may go on after it)
 */
void cv_drain(struct cv *cv);

/**
 * cv_close - free @cv's buffer, after cv_drain() and the format's fini
 * @cv: the conversion
 */
void cv_close(struct cv *cv);

/**
 * cv_flush - hand the buffer over to be written to stdout (ot_drain() on
 * @cv->w waits until it is)
 * @cv: the conversion
 */
void cv_flush(struct cv *cv);

/**
 * cv_room - space for @n more bytes of output (flushes the buffer if needed)
 * @cv: the conversion
 * @n: at most CV_OUT_SIZE
 *
 * Inline: called for every event written.
 *
 * Return: where to write; commit with cv->len += bytes written.
 */
static inline char *cv_room(struct cv *cv, size_t n)
{
	if (__builtin_expect(cv->len + n > CV_OUT_SIZE, 0))
		cv_flush(cv);
	return cv->out + cv->len;
}

/**
 * cv_put - append bytes to the output
 * @cv: the conversion
 * @p: the bytes
 * @n: how many (any size)
 */
void cv_put(struct cv *cv, const void *p, size_t n);

/**
 * cv_ns - ticks to nanoseconds with the trace's clock, exactly (ticks.h;
 * ticks * 1000 when the frequency is unknown); of a run, with the run's
 * frequency, from its base (earlier ticks are 0)
 * @cv: the conversion (its @clk is made again when the frequency changes;
 *	@near follows the times written)
 * @a: the analysis
 * @ticks: a TSC value
 *
 * Inline: called for every event written.
 *
 * Return: nanoseconds; UINT64_MAX when they do not fit.
 */
static inline uint64_t cv_ns(struct cv *cv, const struct analysis *a, uint64_t ticks)
{
	uint64_t freq = a->freq;

	if (__builtin_expect(cv->run, 0)) {
		freq = cv->run_freq ? cv->run_freq : a->freq;
		ticks = ticks > cv->run_base ? ticks - cv->run_base : 0;
	}
	if (__builtin_expect(cv->clk.freq != freq, 0)) {
		tk_ns_init(&cv->clk, freq);
		cv->near.ok = false;
	}
	return tk_ns_near(&cv->clk, &cv->near, ticks);
}

/**
 * cv_pid - the process id of a thread (the trace's when the buffer had none)
 * @a: the analysis
 * @t: the thread
 *
 * Return: the pid.
 */
static inline int32_t cv_pid(const struct analysis *a, const struct an_thread *t)
{
	return t->pid ? t->pid : a->pid;
}

#endif /* FDRTRACE_TOOL_CONVERT_H */
