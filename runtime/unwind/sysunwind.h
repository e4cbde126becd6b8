/* SPDX-License-Identifier: MIT */
/*
 * runtime/unwind/sysunwind.h - the system's unwinder (libgcc's), for walks
 * that
 * must be cheap: the calls open at a fork, and whether a thread runs a
 * signal handler (runtime/unwind/sysunwind.c).
 */
#ifndef FDR_SYSUNWIND_H
#define FDR_SYSUNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

/**
 * fdr_sysunwind_init - find the unwinder of a libgcc_s already loaded
 *
 * Looks its calls up (dlopen with RTLD_NOLOAD: libgcc_s is never loaded
 * for us) and walks once, so that their lazy binding is done here. Without
 * libgcc_s the calls below do nothing. Once per process image: later
 * calls (a fork child's flush thread) return at once.
 * Context: the start (on_full=wait: before the gate opens), or the flush
 * thread's set-up, before it lets a fork in (fdr_flush_alive_wait());
 * never two threads at once.
 */
void fdr_sysunwind_init(void) fdr_hidden;

/**
 * fdr_sysunwind_starts - where the functions of the calling thread's frames begin
 * @starts: set to each frame's function start (the initial location of the
 *	unwind information covering it), innermost first: this function's
 *	own frame, then its caller's
 * @max: room in @starts
 *
 * Context: any thread, not a fatal-signal handler. Return: the frames
 * written, 0 without the unwinder.
 */
uint32_t fdr_sysunwind_starts(uintptr_t *starts, uint32_t max) fdr_hidden;

/**
 * fdr_sysunwind_in_handler - does the calling thread run a signal handler?
 *
 * Walks the thread's stack for a frame a signal interrupted.
 *
 * Context: any thread, signal handlers included (the hooks' slow path).
 * Return: 1 a signal frame is on the stack; 0 the whole stack was walked
 * (to the program's entry point or libc's thread start) without one; -1
 * not known (no unwinder, or a frame without unwind information ended
 * the walk).
 */
int fdr_sysunwind_in_handler(void) fdr_hidden;

#endif /* FDR_SYSUNWIND_H */
