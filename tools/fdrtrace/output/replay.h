/* SPDX-License-Identifier: MIT */
/*
 * replay.h - the replay command's state, shared by the command
 * (cmd_replay.c: its options, the traces of a run, one analysis per
 * trace) and the printer (replay_print.c: the analysis callbacks that
 * write the call tree's lines and their fields). Internal to the
 * fdrtrace command. Single-threaded.
 */
#ifndef FDRTRACE_REPLAY_H
#define FDRTRACE_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "outbuf.h"
#include "select.h"

#define RP_PREVIEW 32	/* payload bytes shown of an application event */
#define RP_INDENT_MAX 200u	/* levels indented; deeper lines say their level */

/* struct sel_frame.user: the call's "name() {" line is out. */
#define RP_OPENED 1u

/* An on_full=wait wait not printed yet (rp_wait()). */
struct rp_wait {
	uint64_t ticks, tsc;
	bool pending;
};

/* -f: the columns before the call tree, in the order given. */
enum rp_field { RF_TIME, RF_DELTA, RF_ELAPSED, RF_DURATION, RF_TID, RF_PID, RF_MODULE, RF_N };

static const struct {
	const char *name, *title;
	int width;
} rp_field_info[RF_N] = {
	[RF_TIME] = { "time", "TIME", 14 },
	[RF_DELTA] = { "delta", "DELTA", 13 },
	[RF_ELAPSED] = { "elapsed", "ELAPSED", 13 },
	[RF_DURATION] = { "duration", "DURATION", 13 },
	[RF_TID] = { "tid", "TID", 7 },
	[RF_PID] = { "pid", "PID", 7 },
	[RF_MODULE] = { "module", "MODULE", 16 },
};

#define RP_MAX_FIELDS 8

/* Values fdrtrace_log_arg() logged for one open call (by its entry's time and function). */
#define RP_ARGS 4

struct rp_args {
	uint64_t tsc;
	const struct an_func *fn;
	uint32_t n;	/* logged; the first RP_ARGS kept */
	uint64_t v[RP_ARGS];
};

/* A thread's: by depth, 0 the outermost. */
struct rp_arg_stack {
	struct rp_args *at;
	uint32_t cap;
};

/*
 * One replay: the selection (a->ctx points here), the output, the trace's
 * clock for durations, and the thread column " [    TID] | " of the last
 * thread printed.
 */
struct rp {
	struct sel sel;
	struct obuf ob;
	struct rp_wait *waits;	/* by struct an_thread.index */
	uint32_t n_waits, waits_pending;
	bool have_clock;
	struct fmt_dur clock;
	bool have_tid;
	int32_t tid;
	uint8_t tid_len;
	char tid_text[32];
	/*
	 * -f other than the default "duration,tid" (n_fields 0): the fields,
	 * the time of the first call (--time-range's origin), and each
	 * thread's last line's time (by an_thread.index), for delta
	 */
	uint8_t fields[RP_MAX_FIELDS];
	unsigned n_fields;
	bool have_base;
	uint64_t base_tsc;
	uint64_t *last;
	uint32_t n_last;
	/* by an_thread.index: the logged arguments of its open calls */
	struct rp_arg_stack *args;
	uint32_t n_args;
};

/*
 * The analysis callbacks that print the lines: rp_ops with selectors,
 * rp_plain_ops with none (no selection state: see rp_opened()). a->ctx is
 * the struct rp. With -f fields, the enter callback is replaced by
 * rp_enter_fields() or rp_enter_plain_fields(), which note the first
 * call's time (the origin of time and elapsed) and then do the same.
 */
extern const struct an_ops rp_ops, rp_plain_ops;
void rp_enter_fields(struct analysis *a, struct an_thread *t, const struct an_frame *f);
void rp_enter_plain_fields(struct analysis *a, struct an_thread *t, const struct an_frame *f);

/**
 * rp_wait_put - print @t's pending on_full=wait line, if it has one
 * @rp: the replay
 * @a: its analysis
 * @t: the thread
 * @depth: how many of @t's outermost open calls the line goes inside
 *
 * The command calls it for every thread once the trace is read: a wait
 * after the thread's last call is still pending then.
 */
void rp_wait_put(struct rp *rp, struct analysis *a, struct an_thread *t, uint32_t depth);

/**
 * rp_stderr_sync - flush the lines made so far, so that a message on
 * stderr comes after them (a tool_stderr_hook() callback)
 * @ctx: the replay's struct obuf
 */
void rp_stderr_sync(void *ctx);

#endif /* FDRTRACE_REPLAY_H */
