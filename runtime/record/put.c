// SPDX-License-Identifier: MIT
/*
 * runtime/record/put.c - the bottom of the record layer: each thread's
 * state (fdr_self), the layer's counters, and the records the slow path
 * puts into a thread's buffer (function records, drops and gaps, custom
 * events).
 *
 * Contract: owner thread, guard held, maybe in a signal handler; no
 * locks, no allocation, no system call. The caller checked the room and
 * publishes @pos. Calls no other file of the layer but ring.c.
 */
#include <string.h>

#include "config.h"
#include "ext_encode.h"
#include "record_internal.h"
#include "records.h"
#include "ring.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"

fdr_tls struct fdr_thread fdr_self;
/* buffers handed over to the queue (stream policy); the flush thread counts them written */
_Atomic uint64_t fdr_enqueued;
/* on_full=wait: clock ticks all threads spent waiting (buffer.c, slow_wait()) */
_Atomic uint64_t fdr_wait_ticks;

/* One record (and @bufs buffers) more dropped for @reason on @t's counts. Owner or its handlers. */
notrace void slow_count(struct fdr_thread *t, unsigned reason, uint64_t bufs)
{
	atomic_fetch_add_explicit(&t->drop_rec[reason], 1, memory_order_relaxed);
	if (bufs)
		atomic_fetch_add_explicit(&t->drop_buf[reason], bufs, memory_order_relaxed);
}

/*
 * Pool empty: follow the calls of the records dropped, so that the next
 * buffer can say which calls the gap closed and opened. Owner, guard held.
 */
notrace void slow_gap_note(struct fdr_gap *g, unsigned action, uint32_t id, uint64_t tsc)
{
	uint32_t d;

	if (!g->first_tsc)
		g->first_tsc = tsc;
	g->last_tsc = tsc;
	if (action == FDRTRACE_FN_ENTRY || action == FDRTRACE_FN_ENTRY_ARGS) {
		if (g->depth < FDR_GAP_IDS)
			g->ids[g->depth] = id;
		g->depth++;
		return;
	}
	if (!g->depth) {
		g->exited++;	/* a call open before the gap */
		return;
	}
	if (g->depth > FDR_GAP_IDS) {
		g->depth--;	/* deeper than the ids kept: trust the nesting */
		return;
	}
	/* the innermost call of this function entered in the gap (a longjmp skips some) */
	for (d = g->depth; d > 0; d--) {
		if (g->ids[d - 1] == id) {
			g->depth = d - 1;
			return;
		}
	}
	/* an older call's exit that unwound the gap's calls: how far, we cannot tell */
	g->unknown = true;
	g->depth = 0;
}

/* Append a custom event (marker + payload) at @p; the caller checked room. */
notrace uint8_t *slow_put_custom(struct fdr_thread *t, uint8_t *p, const uint8_t *payload,
				 size_t len)
{
	p += fdr_custom_event_md(p, (uint32_t)len, t->last_tsc);
	memcpy(p, payload, len);
	return p + len;
}

/*
 * Report this thread's pending drops into its buffer at @p, where the
 * thread's records resume: a pool-empty gap or re-entry drops with their
 * span and the calls they opened and closed (format.h), others as counts.
 * Owner only, guard held. @short_of_room (may be NULL) is set when a
 * report did not fit below @lim (it stays pending). A signal handler may
 * run at any point in here and add re-entry drops: what it adds after the
 * count is read stays pending, never lost. Return: the new end of the
 * buffer's records (the caller publishes it).
 */
notrace uint8_t *slow_put_drops(struct fdr_thread *t, uint8_t *p, uint8_t *lim,
				bool *short_of_room)
{
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		uint64_t n = atomic_load_explicit(&t->drop_rec[r], memory_order_relaxed);
		uint64_t nb = atomic_load_explicit(&t->drop_buf[r], memory_order_relaxed);
		uint8_t payload[64 + 4 * FDR_GAP_IDS];
		size_t len;

		if (!n && !nb)
			continue;
		if (r == FDRTRACE_DROP_REENTRY && slow_held(t))
			continue;	/* a gap opens after the calls kept: those first (slow_resume()) */
		if (r == FDRTRACE_DROP_POOL_EMPTY && t->gap.first_tsc) {
			struct fdr_gap *g = &t->gap;
			bool known = !g->unknown && g->depth <= FDR_GAP_IDS;

			len = fdr_ext_gap(payload, sizeof(payload), (uint32_t)t->tid, (uint8_t)r, n, nb,
					  g->first_tsc, g->last_tsc,
					  known ? g->exited : FDRTRACE_GAP_UNKNOWN, known ? g->depth : 0,
					  g->ids);
		} else if (r == FDRTRACE_DROP_REENTRY &&
			   atomic_load_explicit(&t->re_first_tsc, memory_order_relaxed)) {
			/* a handler's calls nest inside the interrupted one: the stack is as it was */
			bool balanced = !atomic_load_explicit(&t->re_net, memory_order_relaxed) &&
					!atomic_load_explicit(&t->re_low, memory_order_relaxed);

			len = fdr_ext_gap(payload, sizeof(payload), (uint32_t)t->tid, (uint8_t)r, n, nb,
					  atomic_load_explicit(&t->re_first_tsc, memory_order_relaxed),
					  atomic_load_explicit(&t->re_last_tsc, memory_order_relaxed),
					  balanced ? 0 : FDRTRACE_GAP_UNKNOWN, 0, NULL);
		} else {
			len = fdr_ext_drop(payload, sizeof(payload), (uint32_t)t->tid, (uint8_t)r, n,
					   nb);
		}
		if (!len || p + FDRTRACE_METADATA_RECORD_SIZE + len > lim) {
			if (short_of_room)
				*short_of_room = true;
			break;
		}
		p = slow_put_custom(t, p, payload, len);
		if (r == FDRTRACE_DROP_REENTRY) {
			/*
			 * The gap is said: a handler interrupting us from here on
			 * starts a new one. Reset before the count is taken, so
			 * that a handler after the reset leaves a whole gap
			 * pending (its count, span and @re_pending); one between
			 * the count's read above and here keeps its count pending,
			 * reported with the next gap or alone.
			 */
			atomic_store_explicit(&t->re_pending, false, memory_order_relaxed);
			atomic_store_explicit(&t->re_first_tsc, 0, memory_order_relaxed);
			atomic_store_explicit(&t->re_net, 0, memory_order_relaxed);
			atomic_store_explicit(&t->re_low, 0, memory_order_relaxed);
			/* compiler fence: the order above holds for a handler on this thread */
			atomic_signal_fence(memory_order_seq_cst);
		}
		atomic_fetch_sub_explicit(&t->drop_rec[r], n, memory_order_relaxed);
		atomic_fetch_sub_explicit(&t->drop_buf[r], nb, memory_order_relaxed);
		if (r == FDRTRACE_DROP_POOL_EMPTY) {
			if (fdr_cfg.policy == FDR_POLICY_RING)
				fdr_ring_stack_gap(&t->gap);
			memset(&t->gap, 0, sizeof(t->gap));
		}
	}
	if (t->wait_last_tsc) {
		uint8_t payload[64];
		size_t len = fdr_ext_wait(payload, sizeof(payload), (uint32_t)t->tid,
					  t->wait_first_tsc, t->wait_last_tsc);

		if (len && p + FDRTRACE_METADATA_RECORD_SIZE + len <= lim) {
			p = slow_put_custom(t, p, payload, len);
			t->wait_first_tsc = t->wait_last_tsc = 0;
		} else if (short_of_room) {
			*short_of_room = true;
		}
	}
	return p;
}

/*
 * One function record at @p, after a TSCWrap when its delta from the last
 * record does not fit 32 bits (or the clock went back). Owner only, guard
 * held, room checked by the caller, which publishes @pos. Return: the new
 * end of the buffer's records.
 */
notrace uint8_t *slow_put_func(struct fdr_thread *t, uint8_t *p, unsigned action, uint32_t id,
			       uint64_t tsc)
{
	uint64_t rec;

	if (tsc - t->last_tsc > UINT32_MAX) {
		struct fdrtrace_md_tsc_wrap m = { .type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_TSC_WRAP),
						  .tsc = tsc };

		memcpy(p, &m, sizeof(m));
		p += sizeof(m);
		t->buf->meta += sizeof(m);
		t->rewind_floor = p;	/* short calls are never erased into it */
		t->last_tsc = tsc;
	}
	rec = fdrtrace_func_word(action, id) | ((tsc - t->last_tsc) << 32);
	memcpy(p, &rec, sizeof(rec));
	t->last_tsc = tsc;
	return p + sizeof(rec);
}
