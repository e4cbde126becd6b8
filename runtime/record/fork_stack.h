/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/fork_stack.h - the calls open at a fork, for the child's
 * trace
 * (stream policy; runtime/record/fork_stack.c).
 */
#ifndef FDR_FORK_STACK_H
#define FDR_FORK_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct fdr_thread;

/* The fork's prepare handler, in the forking thread: take the calls open. */
void fdr_fork_stack_take(void) fdr_hidden;
/* The fork's parent handler: forget them. */
void fdr_fork_stack_parent(void) fdr_hidden;
/* The fork's child handler: the forking thread's first buffer is to name them. */
void fdr_fork_stack_child(void) fdr_hidden;

/**
 * fdr_fork_stack_record - the stack record of the calls open at the fork
 * @t: the thread claiming a buffer
 * @p: where the record goes, after the buffer's preamble; NULL when the
 *	claim found no buffer (the calls are then forgotten: a gap follows,
 *	and what it closed is not known against them)
 * @room: bytes free at @p
 * @tsc: the buffer's first TSC
 *
 * Once, in a fork child, for the thread that forked; nothing for any other
 * thread or claim.
 *
 * Context: the hooks' slow path (slow_claim()), @t's guard held.
 * Return: the bytes written at @p (0: none).
 */
size_t fdr_fork_stack_record(struct fdr_thread *t, uint8_t *p, size_t room, uint64_t tsc) fdr_hidden;

#endif /* FDR_FORK_STACK_H */
