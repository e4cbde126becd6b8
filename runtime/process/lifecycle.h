/* SPDX-License-Identifier: MIT */
/*
 * runtime/process/lifecycle.h - what the interposers and the record layer
 * (through drain.h) ask of
 * the process layer (lifecycle.c): start, exec, spawn, identity change.
 */
#ifndef FDR_LIFECYCLE_H
#define FDR_LIFECYCLE_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

/*
 * The constructor (priority 101): reads the options and arms recording.
 * Named so that the hooks' object can hold on to it (cyg_profile.c).
 */
void fdr_lifecycle_ctor(int argc, char **argv, char **envp) fdr_hidden;

/* creds.c, before set*id, setgroups, initgroups, chroot: name the trace while we may (lifecycle.c) */
void fdr_before_identity_change(void) fdr_hidden;

/*
 * Start recording, from the first hook (gate LAZY) or API
 * call. Return: true when recording (the gate is ON), false when the start
 * failed, is not this caller's to make (a vfork child, this thread's own
 * start, a guard held) or did not finish in time on another thread.
 */
bool fdr_start_lazy(void) fdr_hidden fdr_cold;

/*
 * exec.c, before an exec of @path: finish the trace as exit does, with an
 * FDRTRACE_EXT_EXEC record naming @path. Return: true when a trace was closed.
 */
bool fdr_before_exec(const char *path) fdr_hidden;

/*
 * A child started without a fork by thread @tid (spawn.c: posix_spawn) at
 * @tsc, its pid @child_pid: a spawn record in the thread's records
 * (fork.c; nothing when not recording).
 */
void fdr_spawn_note(uint32_t tid, uint64_t tsc, uint32_t child_pid) fdr_hidden;

#endif /* FDR_LIFECYCLE_H */
