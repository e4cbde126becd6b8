/* SPDX-License-Identifier: MIT */
/*
 * analysis_internal.h - what the analysis core's files share (the core's
 * API is analysis.h).
 *
 *   analysis.c          opening, reading (scan, stream, reorder), the end
 *   analysis_names.c    functions by id, modules, names
 *   analysis_stack.c    threads, calling-context nodes, open-call counts
 *   analysis_stack.h    the call-stack machine's inline fast path
 *   analysis_gaps.c     losses: gaps held and applied, stack records
 *   analysis_events.c   each event and run of function records
 *   analysis_summary.c  the summary lines, an_fini()
 *
 * Contract: included only by those files. Single-threaded tool code.
 */
#ifndef FDR_TOOL_ANALYSIS_INTERNAL_H
#define FDR_TOOL_ANALYSIS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "analysis.h"

/*
 * A thread keeps at most AN_DEPTH_MAX open calls (a frame each, and each
 * command's state per open call): 9 MB of zero bytes read as 1.1 M nested
 * entries took 80-200 MB. A call past that depth is counted
 * (an_stats.too_deep, in the summary), not timed and not given to the
 * command; the next exit closes the innermost such call. Real stacks stay
 * far shallower (an 8 MiB stack holds some 100,000 of the smallest frames).
 */
#define AN_DEPTH_MAX (1u << 16)

/* The hash of the function and thread tables (open addressing). */
static inline uint32_t an_hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/*
 * A gap read where the thread's records resume, kept until the first record
 * stamped at or after its first TSC (struct an_thread.held).
 */
struct an_gap_held {
	uint64_t first_tsc, last_tsc, records;
	uint32_t reason, exited, depth;
	uint32_t ids[];
};

/* analysis_names.c */

/* A payload's string as a name: printable, valid UTF-8, malloc()ed. */
char *an_strdup_str(struct fdrtrace_str s);
/* Forget @f's name: a record named it after it was first named. */
void an_func_rename(struct analysis *a, struct an_func *f);
/* Every function's base name, before the commands that print after the run. */
void an_names_settle(struct analysis *a);

/* analysis_stack.c */

/* The thread of @tid, made on first sight; NULL when out of memory. */
struct an_thread *an_thread_get(struct analysis *a, int32_t tid);
/* Forget @t's calls above @depth, whose exits were lost (an_ops.dropped). */
void an_forget(struct analysis *a, struct an_thread *t, uint32_t depth);
/* Drop @t's counts of open calls per id (made again when needed). */
void an_open_forget(struct an_thread *t);
/* A frame of @id pushed (+1) or popped (-1), while @t's counts are kept. */
void an_open_note(struct an_thread *t, uint32_t id, int delta);
/* Frames of @id open on @t; UINT32_MAX when not known (walk the stack then). */
uint32_t an_open_count(struct an_thread *t, uint32_t id);
/* Is a call of @id open on @t (another thread has calls of it open too)? */
bool an_open_on(struct an_thread *t, uint32_t id);

/* analysis_gaps.c */

/* Apply the gap @t holds (struct an_gap_held), where its time says. */
void an_gap_apply(struct analysis *a, struct an_thread *t);
/* An FDRx drop gap in @t's own buffer: held until its time comes. */
void an_gap_hold(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x);
/* FDRTRACE_EXT_STACK: the calls open on the thread when its buffer began. */
void an_seed_stack(struct analysis *a, const struct fdrtrace_ext *x, uint64_t tsc);

/* Apply @t's held gap, if any, before what is not a function record. */
static inline void an_gap_settle(struct analysis *a, struct an_thread *t)
{
	if (t && t->held)
		an_gap_apply(a, t);
}

/* analysis_events.c */

/* What one event of the reader does to the analysis. */
void an_event(struct analysis *a, const struct fdrtrace_event *ev);
/* A run of function records from the reader's batch path, on a->cur. */
void an_functions(struct analysis *a, const struct fdrtrace_func_run *run);

#endif /* FDR_TOOL_ANALYSIS_INTERNAL_H */
