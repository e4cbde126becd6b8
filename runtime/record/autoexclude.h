/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/autoexclude.h - auto_exclude: hot short functions counted,
 * not timed.
 *
 * With auto_exclude=DURATION[;after=N] the gate's recording value is
 * FDR_GATE_COUNTED instead of FDR_GATE_ON: the hooks' inline fast path
 * (fastpath_inline.h) sends every call to fdr_record_inactive()
 * (slowpath.h), which is auto_exclude's hook (autoexclude.c). A function
 * whose first N timed calls took less than DURATION on average is then
 * *counted*: its later calls, and every
 * call nested inside one of them, add one to a per-thread count instead
 * of being recorded (no clock read, no store). The counts go into the
 * trace as FDRTRACE_EXT_COUNTED records, the decisions as
 * FDRTRACE_EXT_EXCLUDED records (include/fdrtrace/format.h).
 */
#ifndef FDR_AUTOEXCLUDE_H
#define FDR_AUTOEXCLUDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct fdr_thread;
struct fdr_rtbuf;

/*
 * Where the emitters below put each FDRx payload: the caller's runtime
 * buffer, through the file layer's fdr_rtbuf_add() (passed in: the file
 * layer is above this one). Async-signal-safe where the emitter is.
 */
typedef int (*fdr_ax_add_fn)(struct fdr_rtbuf *rb, const uint8_t *payload, size_t len);

/* N when the option does not say: calls timed before a function is decided */
#define FDR_AX_AFTER_DEFAULT 2048u
#define FDR_AX_AFTER_MIN 16u
#define FDR_AX_AFTER_MAX (1u << 24)	/* 16 N, the last decision point, fits 32 bits */

/**
 * fdr_ax_parse - parse the auto_exclude option
 * @text: "" or "off" (no auto_exclude), or DURATION[;after=N][;patch=on|off]
 *	(the two in any order; ',' also separates, in a quoted value):
 *	DURATION a whole number followed by ns, us or ms, N a whole number
 *	in [FDR_AX_AFTER_MIN, FDR_AX_AFTER_MAX]
 * @ns: set to DURATION in nanoseconds (on success, 0 when off)
 * @after: set to N (FDR_AX_AFTER_DEFAULT when not given)
 * @patch: set to whether counted functions' call sites are patched
 *	(autoexclude_patch.c; on when not given, false when off)
 *
 * Context: pure; any thread.
 * Return: 1 when on, 0 when off, -EINVAL when @text is none of these (then
 * @ns and @after are unchanged).
 */
int fdr_ax_parse(const char *text, uint64_t *ns, uint32_t *after, bool *patch) fdr_hidden;

/* auto_exclude is on in this process (set once at start, before the gate opens) */
extern bool fdr_ax_on fdr_hidden;

/* Start of recording, after the clock's frequency is known: parse, set fdr_gate_rec. */
void fdr_ax_init(void) fdr_hidden;
/*
 * Write the decisions not written yet into @rb with @add (the caller holds the file
 * lock: the flush thread's round, after fdr_flush_emit_funcs() named the ids).
 */
void fdr_ax_emit_decisions(struct fdr_rtbuf *rb, fdr_ax_add_fn add) fdr_hidden;
/*
 * Write every thread's counts into @rb with @add (the caller holds the file lock).
 * @take: into the trace itself, counting what is written as reported (the
 * next call writes only what was counted since); false for a snapshot's
 * file, which gets the counts since the start and every decision, and
 * leaves them for the trace. Async-signal-safe.
 */
void fdr_ax_emit(struct fdr_rtbuf *rb, fdr_ax_add_fn add, bool take) fdr_hidden;
/*
 * Counts not in the trace yet, on any thread or the process's table: a
 * process that only counted (a fork child running decided functions)
 * still needs its trace file. Async-signal-safe.
 */
bool fdr_ax_has_counts(void) fdr_hidden;
/* Stream policy, flush thread: fdr_ax_emit(@rb, @add, true) about once a second, or when asked. */
void fdr_ax_emit_periodic(struct fdr_rtbuf *rb, fdr_ax_add_fn add) fdr_hidden;
/* fdrtrace_flush(), dump_signal (stream): the next fdr_ax_emit_periodic() writes. Async-signal-safe. */
void fdr_ax_flush_soon(void) fdr_hidden;
/* Thread exit, after @t left the registry: its counts go to the process-wide table. */
void fdr_ax_thread_exit(struct fdr_thread *t) fdr_hidden;
/*
 * Flush thread, each round: patch the call sites of counted calls that
 * threads asked for (autoexclude_patch.c). It takes the loader's lock
 * (dl_iterate_phdr(), as the module scan of names.c does): called under
 * fl_mutex, which a fork waits for, so that no child inherits that lock
 * held or a site half patched. Return: true when threads asked for sites
 * not settled before (patched now, or found they cannot be): the next
 * round should come soon, while counted calls still take the hooks.
 */
bool fdr_ax_patch_round(void) fdr_hidden;
/* Whether call sites are patched at all (auto_exclude on, patch=on, not given up). */
bool fdr_ax_patch_on(void) fdr_hidden;
/* Fork child (one thread): the child's trace starts with no counts, every decision. */
void fdr_ax_after_fork_child(void) fdr_hidden;

#endif /* FDR_AUTOEXCLUDE_H */
