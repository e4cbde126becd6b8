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

/**
 * fdr_pool_init() - map the pool: @buffer_max buffers of @buffer_size bytes
 * @buffer_size:	bytes per buffer
 * @buffer_max:		buffers now, the first of them pre-faulted (the rest
 *			as buffers are handed out: fdr_pool_prefault_step())
 * @limit:		the most buffers fdr_pool_grow() may bring the pool to
 *			(descriptors are reserved for them, touched as used)
 *
 * Every buffer is put on the free stack and the full-buffer queue is made
 * empty (fdr_pool_reset()).
 * Context: initialisation only, before any hook may take a buffer.
 * Return: 0, or the negative errno of the mmap() that failed.
 */
int fdr_pool_init(uint64_t buffer_size, uint64_t buffer_max, uint64_t limit) fdr_hidden;
/**
 * fdr_pool_grow() - add up to @add pre-faulted buffers to the free stack
 * @add:	buffers wanted; fewer are added near the limit
 *
 * Each addition is one mapping of its own, populated here (MAP_POPULATE),
 * not in a hook's first store. The new descriptors are published (release)
 * before the pool's count says they exist (fdr_pool_count()'s acquire).
 * Context: the flush thread only (one caller at a time); hooks may take
 * and put buffers meanwhile.
 * Return: the number of buffers added, -ENOSPC at the limit, or the
 * negative errno of the mmap() that failed.
 */
int fdr_pool_grow(uint32_t add) fdr_hidden;
/**
 * fdr_pool_prefault_step() - fault in the next 256 KiB of the start pool
 * @all:	start again from the pool's first page (a fork child's flush
 *		thread, so that its copy-on-write copies are not made in hooks)
 * @whole:	go on to the end of the pool, not only 512 KiB past the last
 *		buffer ever handed out
 *
 * The pages fdr_pool_init() left are faulted in ahead of the buffers the
 * hooks reach (MADV_POPULATE_WRITE).
 * Context: the flush thread only; safe while hooks write into the buffers.
 * Return: true while a step is wanted now (call it again once a buffer
 * further on has been handed out, or with @whole).
 */
bool fdr_pool_prefault_step(bool all, bool whole) fdr_hidden;
/**
 * fdr_pool_limit() - the most buffers the pool may grow to
 *
 * Context: any thread, after fdr_pool_init().
 * Return: @limit of fdr_pool_init() (at least its @buffer_max).
 */
uint32_t fdr_pool_limit(void) fdr_hidden;
/**
 * fdr_pool_get() - take a buffer from the free stack
 *
 * A CAS on the tagged head: lock-free, never blocks. Acquire on success
 * pairs with fdr_pool_put()'s release, so the previous user's writes (and
 * the flush thread's reads) of the buffer come before the caller's.
 * Context: any thread, signal handlers too (async-signal-safe).
 * Return: the buffer, or NULL when none is free now.
 */
struct fdr_buffer *fdr_pool_get(void) fdr_hidden;
/**
 * fdr_pool_put() - give a buffer back to the free stack
 * @b:	a buffer of the pool (not a snapshot node)
 *
 * Lock-free; wakes the threads waiting in fdr_pool_get_wait(), if any (a
 * futex wake only then).
 * Context: any thread, signal handlers too (async-signal-safe).
 */
void fdr_pool_put(struct fdr_buffer *b) fdr_hidden;
/**
 * fdr_pool_get_wait() - on_full=wait: a free buffer, waiting for one
 * @timeout_ms:	the longest wait for a buffer to be put back
 *
 * Tries the free stack, and when it is empty sleeps on a futex until a
 * buffer is put back or @timeout_ms pass, then tries once more.
 * Context: a thread that may sleep (not a signal handler): the caller
 * decides (flush/pool.c, for the hooks' slow path).
 * Return: the buffer, or NULL when none came.
 */
struct fdr_buffer *fdr_pool_get_wait(unsigned timeout_ms) fdr_hidden;
/**
 * fdr_pool_free() - buffers on the free stack now
 *
 * A hint for deciding when to wake the flush thread or grow the pool: a
 * relaxed counter, which may lag a concurrent get or put by one.
 * Context: any thread; async-signal-safe.
 * Return: the count, never below 0.
 */
uint32_t fdr_pool_free(void) fdr_hidden;
/**
 * fdr_pool_count() - the pool's buffers, free or not
 *
 * Acquire: pairs with fdr_pool_grow()'s release, so every buffer below the
 * count has its descriptor (fdr_pool_buffer()).
 * Context: any thread; async-signal-safe (ring.c scans the buffers).
 * Return: the number of buffers.
 */
uint32_t fdr_pool_count(void) fdr_hidden;
/**
 * fdr_pool_buffer() - the pool's buffer number @index
 * @index:	below fdr_pool_count()
 *
 * Context: any thread; async-signal-safe.
 * Return: its descriptor (whoever owns it now).
 */
struct fdr_buffer *fdr_pool_buffer(uint32_t index) fdr_hidden;
/**
 * fdr_pool_reset() - every buffer free again, the full-buffer queue empty
 *
 * Context: initialisation, and a fork child while it runs alone (the
 * parent's other threads and their buffers are gone).
 */
void fdr_pool_reset(void) fdr_hidden;
/**
 * fdr_pool_release() - unmap the pool, which nothing has used
 *
 * Initialisation failed after fdr_pool_init() (the flush thread could not
 * start): a program that runs untraced gets its address space back.
 * Context: initialisation only, before any hook took a buffer.
 */
void fdr_pool_release(void) fdr_hidden;

/**
 * fdr_queue_push() - hand a buffer (or snapshot node) to the flush thread
 * @b:	its @len set
 *
 * Wait-free. The enqueue is a full barrier: the buffer's bytes are stored
 * before the link the consumer follows (fdr_queue_pop()).
 * Context: any thread, signal handlers too (async-signal-safe).
 */
void fdr_queue_push(struct fdr_buffer *b) fdr_hidden;
/**
 * fdr_queue_pop() - the oldest buffer handed over, out of the queue
 * @blocking:	wait out a push that is half done (a producer between its
 *		exchange and its link) instead of reporting the queue empty
 *
 * Context: one consumer at a time: the holder of the file lock (the flush
 * thread, the finisher, the fatal-signal dump).
 * Return: the buffer, or NULL when the queue is empty (or, without
 * @blocking, when the next one is not linked yet).
 */
struct fdr_buffer *fdr_queue_pop(bool blocking) fdr_hidden;
/**
 * fdr_queue_empty() - is no buffer waiting to be written?
 *
 * Context: any thread; async-signal-safe. A push under way may be missed.
 * Return: true when the queue is empty.
 */
bool fdr_queue_empty(void) fdr_hidden;

#endif /* FDR_BUFFER_QUEUE_H */
