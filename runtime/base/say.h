/* SPDX-License-Identifier: MIT */
/*
 * runtime/base/say.h - the runtime's messages, on the standard error it
 * started with (say.c).
 */
#ifndef FDR_SAY_H
#define FDR_SAY_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler.h"

/* note the file behind descriptor 2 (the constructor, first thing) */
void fdr_say_init(void) fdr_hidden;
/* a message there, or nothing when descriptor 2 is another file or closed */
void fdr_say(const char *fmt, ...) fdr_hidden __attribute__((format(printf, 1, 2)));
/* the same for a message already formatted; async-signal-safe */
void fdr_say_raw(const char *msg, size_t len) fdr_hidden;
/* 2 when the flush thread's own descriptor table is to keep descriptor 2, else -1 */
int fdr_say_keep(void) fdr_hidden;
/* this thread has its own descriptor table (the flush thread), with a copy of 2 or not */
void fdr_say_private(bool kept) fdr_hidden;
/* verbosity=0: fdr_say() and fdr_say_raw() print nothing (say.c) */
extern bool fdr_say_silent fdr_hidden;

#endif /* FDR_SAY_H */
