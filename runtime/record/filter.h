/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/filter.h - filter/exclude (filter.c): which functions are
 * recorded.
 */
#ifndef FDR_FILTER_H
#define FDR_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

/*
 * The decisions' table, a byte per id (before recording starts, with
 * filter or exclude set). Return: 0 or -errno (no memory).
 */
int fdr_filter_init(void) fdr_hidden;
/* Flush thread: decide every id handed out so far (names looked up). */
void fdr_filter_decide(void) fdr_hidden;
/*
 * Slow path: should calls of @id be left out? Waits (at most 100 ms) for
 * the flush thread's decision; undecided counts as recorded.
 */
bool fdr_filter_skip(uint32_t id) fdr_hidden;

#endif /* FDR_FILTER_H */
