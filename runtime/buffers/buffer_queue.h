/* SPDX-License-Identifier: MIT */
/*
 * runtime/buffers/buffer_queue.h - the buffer pool and the full-buffer queue.
 *
 * The pool is buffer_max buffers of buffer_size bytes in one mapping,
 * pre-faulted at initialisation; in stream policy the flush thread may add
 * more (fdr_pool_grow(), each addition a pre-faulted mapping of its own). Free buffers sit on a lock-free stack
 * (a CAS on a tagged 64-bit head: generation in the high 32 bits, index+1
 * in the low 32 bits, so a pop that races with pop+push of the same buffer
 * fails its CAS instead of corrupting the stack). Full buffers go to the
 * flush thread through a liburcu wait-free concurrent queue.
 *
 * fdr_pool_get() and fdr_pool_put() are lock-free and async-signal-safe;
 * fdr_pool_get() never blocks: NULL means "no free buffer now".
 */
#ifndef FDR_BUFFER_QUEUE_H
#define FDR_BUFFER_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define _LGPL_SOURCE
#include <urcu/wfcqueue.h>

#include <fdrtrace/format.h>

#include "compiler.h"

/* A buffer's @ring_state, ring policy (ring.c) */
enum fdr_ring_state {
	FDR_RING_NONE = 0,	/* in the free pool, or owned by a thread */
	FDR_RING_FULL = 1,	/* handed over, waiting to be written or overwritten */
	FDR_RING_BUSY = 2,	/* being written by a dump, or taken back by a thread */
};

/**
 * struct fdr_buffer - a buffer of the pool, or a snapshot of one
 * @node: link in the full-buffer queue (to the flush thread)
 * @data: buffer_size bytes
 * @len: bytes of @data to write (set by whoever hands it over)
 * @tid: the thread that filled it
 * @index: position in the pool; UINT32_MAX for a snapshot node
 * @borrowed: a snapshot of a buffer still owned by a thread: write it, do
 *	not return it to the pool (the node belongs to the finisher)
 * @ring_state: ring policy only: FULL once handed over (it may then be
 *	written by a dump or taken back by a thread that found the pool
 *	empty), BUSY while one of those holds it, NONE otherwise
 * @ring_seq: ring policy only: the order of handovers (oldest smallest)
 * @drops: a snapshot's pending drop counts (records; buffers in @drop_bufs);
 *	ring policy: the drop counts the FDRx drop records in a handed-over
 *	buffer report (counted process-wide if it is overwritten)
 * @meta: stream policy, owner: the bytes from @data on that are not
 *	function records (the preamble, CPU and TSC records, call arguments)
 * @counted: stream policy: @meta is exact and the buffer holds no
 *	extension record, so it has (@len - @meta) / 8 function records and
 *	reports no drops: the flush thread counts it without reading it.
 *	Set by the owner when it claims the buffer, cleared when it writes an
 *	extension record; published with @len by the handover. False for
 *	snapshot nodes and every other buffer, which are read to be counted.
 */
struct fdr_buffer {
	struct cds_wfcq_node node;
	uint8_t *data;
	uint64_t len;
	int32_t tid;
	uint32_t index;
	bool borrowed;
	_Atomic uint32_t ring_state;	/* ring policy: enum fdr_ring_state */
	_Atomic uint64_t ring_seq;	/* ring policy: handover order, set before FULL */
	uint64_t ring_records;		/* ring policy: function records, set before FULL */
	uint64_t drops[FDRTRACE_DROP_REASON_COUNT];
	uint64_t drop_bufs[FDRTRACE_DROP_REASON_COUNT];
	uint32_t meta;
	bool counted;
};

/*
 * @buffer_max buffers now, pre-faulted; room for descriptors of up to
 * @limit (fdr_pool_grow()). Initialisation only.
 */
int fdr_pool_init(uint64_t buffer_size, uint64_t buffer_max, uint64_t limit) fdr_hidden;
/*
 * Flush thread only (one caller at a time): add up to @add pre-faulted
 * buffers to the free stack, no more than the limit. Return: the number
 * added, -ENOSPC at the limit, or -errno when no memory could be mapped.
 */
int fdr_pool_grow(uint32_t add) fdr_hidden;
/*
 * fdr_pool_prefault_step - fault in the next 256 KiB of the start pool's pages
 * that fdr_pool_init() left, while they are less than 512 KiB past the last
 * buffer ever handed out, or, with @whole, until the whole pool is (@all
 * on the first step: every page from the first, as a fork child's flush
 * thread does, so that its copy-on-write copies are not made in hooks).
 * Flush thread only; safe while hooks write into the buffers. Return: true
 * while a step is wanted now (call it again once a buffer further on has
 * been handed out, or with @whole).
 */
bool fdr_pool_prefault_step(bool all, bool whole) fdr_hidden;
uint32_t fdr_pool_limit(void) fdr_hidden;
struct fdr_buffer *fdr_pool_get(void) fdr_hidden;
void fdr_pool_put(struct fdr_buffer *b) fdr_hidden;
/*
 * on_full=wait: a free buffer, sleeping at most @timeout_ms for one to be
 * put back (NULL when none was). Not async-signal-safe in spirit: it
 * sleeps; callers decide whether they may.
 */
struct fdr_buffer *fdr_pool_get_wait(unsigned timeout_ms) fdr_hidden;
/*
 * Buffers on the free stack now: a hint for deciding when to wake the
 * flush thread (relaxed counter, may lag a concurrent get or put by one).
 */
uint32_t fdr_pool_free(void) fdr_hidden;
/* The pool's buffers by index (ring.c scans them). */
uint32_t fdr_pool_count(void) fdr_hidden;
struct fdr_buffer *fdr_pool_buffer(uint32_t index) fdr_hidden;
/* Every buffer free again, the queue empty (a fork child). */
void fdr_pool_reset(void) fdr_hidden;
/*
 * Initialisation failed after fdr_pool_init() (the flush thread could not
 * start): unmap the pool, which nothing has used, so that a program that
 * runs untraced gets its address space back.
 */
void fdr_pool_release(void) fdr_hidden;

/* Hand a buffer (or snapshot node) to the flush thread: wait-free. */
void fdr_queue_push(struct fdr_buffer *b) fdr_hidden;
/* Consumers hold the file lock (only one consumer at a time). */
struct fdr_buffer *fdr_queue_pop(bool blocking) fdr_hidden;
bool fdr_queue_empty(void) fdr_hidden;

#endif /* FDR_BUFFER_QUEUE_H */
