/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/trigger.h - latency triggers, ring policy (trigger.c).
 */
#ifndef FDR_TRIGGER_H
#define FDR_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/* trigger set and valid: the slow path asks fdr_trigger_uncached() before caching an id */
extern bool fdr_triggering fdr_hidden;
void fdr_trigger_init(void) fdr_hidden;
void fdr_trigger_reset_child(void) fdr_hidden;
/* flush thread: decide whether function @id, named @name, matches a trigger */
void fdr_trigger_decide(uint32_t id, const char *name) fdr_hidden;
/* slow path: keep @id out of the thread's id cache (undecided, or a trigger's)? */
bool fdr_trigger_uncached(uint32_t id) fdr_hidden;
/*
 * slow path, after the record of a call whose function was not in the id
 * cache (@written: the record reached the buffer; @candidate: the function
 * is a trigger's, or not decided yet)
 */
void fdr_trigger_call(uint32_t id, unsigned action, uint64_t tsc, bool written,
		      bool candidate) fdr_hidden;
/* flush thread: "trigger slow>10ms: a call of slow took 30.1 ms" */
void fdr_trigger_describe(char *buf, size_t cap) fdr_hidden;

#endif /* FDR_TRIGGER_H */
