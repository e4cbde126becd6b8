/* SPDX-License-Identifier: MIT */
/*
 * analysis_gaps.h - losses in the analysis (analysis_gaps.c): a thread's
 * gap held until its time comes, then applied to its stack; the stack
 * record a buffer opens with. Calls only the stack (analysis_stack.h)
 * and what is below it.
 *
 * Contract: included only by analysis_gaps.c and the core's files above
 * it (analysis_events.h, so analysis_events.c and analysis.c).
 * Single-threaded tool code.
 */
#ifndef FDR_TOOL_ANALYSIS_GAPS_H
#define FDR_TOOL_ANALYSIS_GAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis_stack.h"

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

#endif /* FDR_TOOL_ANALYSIS_GAPS_H */
