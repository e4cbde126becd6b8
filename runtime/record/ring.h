/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/ring.h - the ring policy (ring.c): the pool as a flight
 * recorder, and each
 * thread's open calls at its buffers' starts.
 */
#ifndef FDR_RING_H
#define FDR_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thread.h"

void fdr_ring_put(struct fdr_buffer *b) fdr_hidden;
struct fdr_buffer *fdr_ring_take_oldest(void) fdr_hidden;
uint64_t fdr_ring_newest(void) fdr_hidden;
void fdr_ring_write(bool keep, uint64_t upto,
		    int (*write)(const uint8_t *data, uint64_t len)) fdr_hidden;
/* the calling thread's open calls at the start of its next buffer: @b's records up to @end walked */
void fdr_ring_stack_advance(struct fdr_buffer *b, const uint8_t *end) fdr_hidden;
size_t fdr_ring_stack_record(uint8_t *p, size_t room, int32_t tid, uint64_t tsc) fdr_hidden;
/* a pool-empty gap @g closed g->exited of the open calls and opened g->depth (g->ids), when known */
void fdr_ring_stack_gap(const struct fdr_gap *g) fdr_hidden;
/* fork child, before fdr_pool_reset(): the stack brought to the fork, buffers numbered anew */
void fdr_ring_fork_child(struct fdr_thread *t) fdr_hidden;

#endif /* FDR_RING_H */
