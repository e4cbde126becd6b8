/* SPDX-License-Identifier: MIT */
/*
 * info.h - what the two halves of "fdrtrace info" share: cmd_info.c (one
 * trace) calls info_run.c (a run directory; the time line both print),
 * never the reverse.
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDR_TOOL_INFO_H
#define FDR_TOOL_INFO_H

#include <stdint.h>

/**
 * info_time - print a "label: time" line of info's output
 * @label: the label, padded to info's column
 * @ns: ns since the epoch
 *
 * The time in UTC to the microsecond, and the ns count; the count alone
 * when it is no date.
 */
void info_time(const char *label, uint64_t ns);

/**
 * info_run - "fdrtrace info DIR": the run's processes, as a tree
 * @dir: the run directory
 *
 * Return: the exit status (EXIT_OK, or EXIT_FAIL when the directory cannot
 * be read or the output cannot be written: reported).
 */
int info_run(const char *dir);

#endif /* FDR_TOOL_INFO_H */
