// SPDX-License-Identifier: MIT
/*
 * runtime/record/drain.c - the record layer's view of the layers above
 * (drain.h):
 * the registered operations, and the defaults before registration.
 */
#include <stddef.h>

#include "drain.h"

static notrace bool dr_no_start(void)
{
	return false;
}

static notrace void dr_nothing(void)
{
}

static notrace struct fdr_buffer *dr_no_buffer(void)
{
	return NULL;
}

static notrace bool dr_false(void)
{
	return false;
}

/* No flush thread: nothing to start, wake or wait for. */
static const struct fdr_drain dr_none = {
	.start = dr_no_start,
	.wake = dr_nothing,
	.recorded = dr_nothing,
	.queued = dr_nothing,
	.starved = dr_nothing,
	.wait_buffer = dr_no_buffer,
	.wait_stalled = dr_false,
	.running = dr_false,
	.trigger = dr_nothing,
};

const struct fdr_drain *_Atomic fdr_drain_ops = &dr_none;

notrace void fdr_drain_connect(const struct fdr_drain *ops)
{
	/* release: pairs with fdr_drain_get()'s acquire load */
	atomic_store_explicit(&fdr_drain_ops, ops, memory_order_release);
}
