/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/funcid_map.h - function address -> 28-bit function id.
 *
 * Ids are handed out from 1 in the order functions are first seen, and
 * never change for the life of the process (a fork child keeps them).
 * fdr_funcid_get() is lock-free and async-signal-safe; the flush thread
 * reads the id -> address array to name every id before it is used.
 */
#ifndef FDR_FUNCID_MAP_H
#define FDR_FUNCID_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

int fdr_funcid_init(void) fdr_hidden;
/* Initialisation failed after fdr_funcid_init(), no id given: unmap the map. */
void fdr_funcid_release(void) fdr_hidden;
/* Return: the id, or 0 when the table is full or the insert could not finish. */
uint32_t fdr_funcid_get(uintptr_t addr) fdr_hidden;
/*
 * Flush thread: map what new functions will need before a hook needs it
 * (level 0's pages a step at a time, the next level of the table, id ->
 * address entries ahead of the ids).
 * Return: true while level 0 has pages left to populate (call again soon).
 */
bool fdr_funcid_prepare(void) fdr_hidden;
/* Slow path, after a new id: should the flush thread be woken to prepare? */
bool fdr_funcid_needs_prepare(void) fdr_hidden;
/*
 * The id @addr already has, without giving it one: 0 when it has none
 * (or its insert is still in progress). Lock-free, async-signal-safe.
 */
uint32_t fdr_funcid_find(uintptr_t addr) fdr_hidden;
/* The ids the map can hand out: every id is below this (arrays indexed by id need no more). */
uint32_t fdr_funcid_capacity(void) fdr_hidden;
/* One past the highest id handed out so far (acquire). */
uint32_t fdr_funcid_limit(void) fdr_hidden;
/* The address of @id, 0 while its insert is still in progress. */
uintptr_t fdr_funcid_addr(uint32_t id) fdr_hidden;

#endif /* FDR_FUNCID_MAP_H */
