/* SPDX-License-Identifier: MIT */
/*
 * analysis_internal.h - the bottom of the analysis core (its API is
 * analysis.h): what all its files share, and the function table's calls
 * (analysis_names.c).
 *
 * The core's files are a stack; each calls only the ones below it, and
 * includes the header of the layer right below (which includes the rest):
 *
 *   analysis.c          the driver: opening, reading (scan, stream,
 *                       reorder), the end                 analysis_events.h
 *   analysis_events.c   each event and run of function records, and the
 *                       call-stack machine's step per record (an_function())
 *                                                         analysis_gaps.h
 *   analysis_gaps.c     losses: gaps held and applied, stack records
 *                                                         analysis_stack.h
 *   analysis_stack.c    threads, calling-context nodes, open-call counts;
 *                       the push and pop inline in        analysis_stack.h
 *   analysis_names.c    functions by id (an_func_get() in analysis.h is its
 *                       inline fast path), modules, names  (this header)
 *   analysis_summary.c  the summary lines, an_fini(): beside the stack,
 *                       called by the commands             (this header)
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

/* analysis_names.c */

/* A payload's string as a name: printable, valid UTF-8, malloc()ed. */
char *an_strdup_str(struct fdrtrace_str s);
/* Forget @f's name: a record named it after it was first named. */
void an_func_rename(struct analysis *a, struct an_func *f);
/* Every function's base name, before the commands that print after the run. */
void an_names_settle(struct analysis *a);

#endif /* FDR_TOOL_ANALYSIS_INTERNAL_H */
