/* SPDX-License-Identifier: MIT */
/*
 * analysis_summary.h - the end of an analysis (analysis_summary.c): ticks
 * to seconds, the lines on stderr that say what the numbers leave out, and
 * everything freed. Called by the commands, through analysis.h; uses only
 * the types (analysis_types.h).
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDR_TOOL_ANALYSIS_SUMMARY_H
#define FDR_TOOL_ANALYSIS_SUMMARY_H

#include <stdint.h>

#include "analysis_types.h"

/**
 * an_fini - free everything the core allocated
 * @a: the analysis
 */
void an_fini(struct analysis *a);

/**
 * an_seconds - ticks to seconds with the trace's cycle frequency
 * @a: the analysis
 * @ticks: a duration
 *
 * Return: seconds; the ticks themselves when the frequency is 0.
 */
double an_seconds(const struct analysis *a, uint64_t ticks);

/**
 * an_summary - print the one-line summary of imperfections on stderr
 * @a: the analysis
 * @cmd: the command's name, for the prefix
 *
 * Prints nothing when the trace was perfect (and not @quiet).
 */
void an_summary(const struct analysis *a, const char *cmd);

/**
 * an_events_note - say on stderr that the trace has application events
 * @a: the analysis
 * @cmd: the command's name, for the prefix
 *
 * For the commands that do not show application events (account, stack,
 * graph): one line "fdrtrace CMD: FILE: N application events (custom C,
 * typed T): see replay, convert or dump". Prints nothing when there were
 * none, or when @quiet.
 */
void an_events_note(const struct analysis *a, const char *cmd);

#endif /* FDR_TOOL_ANALYSIS_SUMMARY_H */
