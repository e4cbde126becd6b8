/* SPDX-License-Identifier: MIT */
/*
 * analysis_events.h - what each of the reader's events does to the
 * analysis (analysis_events.c), for the driver (analysis.c). Calls the
 * gaps, the stack and the names, below it.
 *
 * Contract: included only by analysis.c and analysis_events.c.
 * Single-threaded tool code.
 */
#ifndef FDR_TOOL_ANALYSIS_EVENTS_H
#define FDR_TOOL_ANALYSIS_EVENTS_H

#include <fdrtrace/reader.h>

#include "analysis_gaps.h"

/* What one event of the reader does to the analysis. */
void an_event(struct analysis *a, const struct fdrtrace_event *ev);
/* A run of function records from the reader's batch path, on a->cur. */
void an_functions(struct analysis *a, const struct fdrtrace_func_run *run);

#endif /* FDR_TOOL_ANALYSIS_EVENTS_H */
