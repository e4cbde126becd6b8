/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/drain.h - the layers above the record layer, as it sees
 * them:
 * whoever starts recording and drains the buffers it hands over.
 *
 * The record layer (the slow path, the filter, the triggers) never calls
 * up by name: the process layer registers these operations once, in its
 * constructor, before the gate leaves FDR_GATE_BEFORE_INIT (a fork child
 * inherits them). Until then the defaults stand for "no flush thread":
 * nothing to start or wake, no buffer to wait for.
 */
#ifndef FDR_DRAIN_H
#define FDR_DRAIN_H

#include <stdatomic.h>
#include <stdbool.h>

#include "compiler.h"

struct fdr_buffer;

/**
 * struct fdr_drain - what the record layer asks of the layers above
 * @start:	start recording from a hook that found the gate LAZY
 *		(process layer); true when recording
 * @wake:	wake the flush thread (async-signal-safe)
 * @recorded:	the process's first record: its trace file is wanted
 *		(async-signal-safe)
 * @queued:	a buffer was queued (stream policy): wake the flush thread
 *		when a batch is ready or the pool runs low
 * @starved:	a thread found the pool empty: grow it, when allowed
 * @wait_buffer: on_full=wait: a free buffer, waited for (bounded); NULL
 *		when the wait gave up
 * @wait_stalled: on_full=wait: a wait gave up and nothing came back since
 * @running:	the flush thread runs (a hook may wait for its decisions)
 * @trigger:	a latency trigger fired: one snapshot more
 *		(async-signal-safe, lock-free)
 */
struct fdr_drain {
	bool (*start)(void);
	void (*wake)(void);
	void (*recorded)(void);
	void (*queued)(void);
	void (*starved)(void);
	struct fdr_buffer *(*wait_buffer)(void);
	bool (*wait_stalled)(void);
	bool (*running)(void);
	void (*trigger)(void);
};

/*
 * The operations in force. Release store by fdr_drain_connect(), acquire
 * loads by the wrappers below (a plain load on x86-64).
 */
extern const struct fdr_drain *_Atomic fdr_drain_ops fdr_hidden;

/**
 * fdr_drain_connect() - register the layers above
 * @ops:	the operations, static storage
 *
 * Context: the process layer's constructor, before the gate first opens.
 */
void fdr_drain_connect(const struct fdr_drain *ops) fdr_hidden;

static inline notrace const struct fdr_drain *fdr_drain_get(void)
{
	return atomic_load_explicit(&fdr_drain_ops, memory_order_acquire);
}

static inline notrace bool fdr_drain_start(void) { return fdr_drain_get()->start(); }
static inline notrace void fdr_drain_wake(void) { fdr_drain_get()->wake(); }
static inline notrace void fdr_drain_recorded(void) { fdr_drain_get()->recorded(); }
static inline notrace void fdr_drain_queued(void) { fdr_drain_get()->queued(); }
static inline notrace void fdr_drain_starved(void) { fdr_drain_get()->starved(); }
static inline notrace struct fdr_buffer *fdr_drain_wait_buffer(void)
{
	return fdr_drain_get()->wait_buffer();
}
static inline notrace bool fdr_drain_wait_stalled(void) { return fdr_drain_get()->wait_stalled(); }
static inline notrace bool fdr_drain_running(void) { return fdr_drain_get()->running(); }
static inline notrace void fdr_drain_trigger(void) { fdr_drain_get()->trigger(); }

#endif /* FDR_DRAIN_H */
