/* SPDX-License-Identifier: MIT */
/*
 * runtime/unwind/native_stack.h - native stacks through libunwind's local
 * unwinder.
 *
 * The trace's function records show instrumented calls only. A native
 * stack (FDRTRACE_EXT_NATIVE_STACK) shows every frame, instrumented or
 * not: the faulting thread's at a fatal signal, and the caller's of
 * fdrtrace_start(). Addresses are written with the id of the module that
 * holds them (the ids of the trace's module_map records); names are
 * looked up offline, by the fdrtrace command.
 */
#ifndef FDR_NATIVE_STACK_H
#define FDR_NATIVE_STACK_H

#include <stdint.h>

#include "compiler.h"

/* Frames kept per stack (the innermost); deeper ones are cut. */
#define FDR_NATIVE_MAX 64u

/**
 * fdr_native_init - allow native stacks from now on
 *
 * Nothing is unwound here: libunwind's one-time set-up (its address
 * space, memory validation and its pipe, the register-state cache's
 * memory) happens at the first stack taken, in the fatal-signal handler
 * or fdrtrace_start(), where it is as safe as the unwind itself
 * (native_stack.c's contract).
 *
 * Context: initialisation, before the fatal-signal handlers are installed.
 */
void fdr_native_init(void) fdr_hidden;

/**
 * fdr_native_from_signal - the interrupted thread's stack, from a signal's context
 * @uc: the third argument of an SA_SIGINFO handler (a ucontext_t)
 * @addrs: set to the frames' addresses, innermost (the interrupted
 *	instruction) first
 * @mods: set to each frame's module id (FDR_MODULE_UNKNOWN when none)
 * @max: room in @addrs and @mods
 *
 * Context: async-signal-safe (libunwind's local unwinder, see the file's
 * contract); the handler's own thread only.
 * Return: the number of frames written, 0 when unwinding is not set up.
 */
uint32_t fdr_native_from_signal(void *uc, uint64_t *addrs, uint32_t *mods,
				uint32_t max) fdr_hidden;

/**
 * fdr_native_here - the calling thread's stack, above a return address
 * @from: a return address on the stack: frames inside it (the runtime's)
 *	are skipped and the stack starts there; 0 keeps every frame
 * @addrs, @mods, @max: as fdr_native_from_signal()
 *
 * Context: any thread, not the hooks. Return: the frames written.
 */
uint32_t fdr_native_here(uintptr_t from, uint64_t *addrs, uint32_t *mods,
			 uint32_t max) fdr_hidden;

/**
 * fdr_native_module_mapped - the flush thread reported a module (module_map)
 * @id:		its id in the trace
 * @start, @size: the span of its segments in memory
 *
 * Kept in a fixed table for fdr_native_module_of(), the entry published
 * (release) before the count that covers it; past 1024 modules the frames
 * of later ones get FDR_MODULE_UNKNOWN.
 * Context: the flush thread (one writer); readers may run meanwhile.
 */
void fdr_native_module_mapped(uint32_t id, uint64_t start, uint64_t size) fdr_hidden;
/**
 * fdr_native_module_unmapped - the flush thread reported module @id unmapped
 * @id:		as given to fdr_native_module_mapped()
 *
 * Its span is emptied: no frame is found in it from now on.
 * Context: the flush thread; readers may run meanwhile.
 */
void fdr_native_module_unmapped(uint32_t id) fdr_hidden;
/**
 * fdr_native_module_of - the reported module that holds @addr
 * @addr:	an instruction address
 *
 * Context: any thread; async-signal-safe (no lock, acquire on the count).
 * Return: its id, or FDR_MODULE_UNKNOWN.
 */
uint32_t fdr_native_module_of(uint64_t addr) fdr_hidden;
/**
 * fdr_native_reset - forget every reported module
 *
 * Module ids start again from 0 in a new trace.
 * Context: a fork child, while it runs alone.
 */
void fdr_native_reset(void) fdr_hidden;

#endif /* FDR_NATIVE_STACK_H */
