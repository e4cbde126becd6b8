/* SPDX-License-Identifier: MIT */
/*
 * analysis_gaps.c - losses in the analysis: a thread's gap (an FDRx drop
 * record, or a ring's overwritten buffers), held until its time comes and
 * then applied to the thread's stack, and the stack record a buffer opens
 * with (an_seed_stack()). A number computed from a trace with losses is
 * never built from a span whose records are missing (see analysis.h).
 *
 * Contract: single-threaded tool code. Allocates a held gap per drop
 * record; never per function record.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_gaps.h"

static void an_gap(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
		   bool followed);

/*
 * Ring policy: buffers of @t between the one it read last and this one
 * (@x, numbered) were overwritten. Their records are a gap from the last
 * record read for @t to this buffer's start (@tsc), of as many function
 * records as the two buffers' numbering says: every call open across it
 * spans the loss. The calls of the stack record that the thread's stack
 * already had, outermost first, stay (lost); the others end at the gap,
 * the record's others are pushed (lost), as an FDRx drop gap does.
 * The first buffer read of a thread, numbered above 1: its earlier
 * buffers were overwritten, a gap at the thread's start of the records
 * its records_before says, whose first TSC is unknown (0; an_ops.gap).
 */
static void an_ring_gap(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
			uint64_t tsc)
{
	uint64_t seen = t->ring_before + (t->records - t->ring_records);
	struct fdrtrace_ext g;
	uint32_t same = 0, n = x->u.stack.depth;

	/* a stack record with its outer calls left out cannot be lined up */
	while (!x->u.stack.skipped && same < n && same < t->depth) {
		uint32_t id;

		memcpy(&id, x->u.stack.ids + 4 * same, 4);
		if (t->stack[same].id != id)
			break;
		same++;
	}
	memset(&g, 0, sizeof(g));
	g.kind = FDRTRACE_EXT_DROP;
	g.u.drop.tid = x->u.stack.tid;
	g.u.drop.reason = FDRTRACE_DROP_OVERWRITTEN;
	g.u.drop.records = x->u.stack.records_before > seen ? x->u.stack.records_before - seen : 0;
	g.u.drop.buffers = x->u.stack.buffer_no - t->ring_no - 1;
	g.u.drop.gap = true;
	g.u.drop.first_tsc = !t->ring_no ? 0 : t->last_tsc && t->last_tsc < tsc ? t->last_tsc : tsc;
	g.u.drop.last_tsc = tsc;
	g.u.drop.exited = t->depth - same;
	g.u.drop.depth = n - same;
	g.u.drop.ids = x->u.stack.ids + 4 * (size_t)same;
	an_gap(a, t, &g, false);
}

/*
 * FDRTRACE_EXT_STACK: the calls open on the thread when its buffer began.
 * Numbered (ring policy): a buffer number more than one past the thread's
 * previous one is a gap (an_ring_gap()).
 */
void an_seed_stack(struct analysis *a, const struct fdrtrace_ext *x, uint64_t tsc)
{
	struct an_thread *t = an_thread_get(a, (int32_t)x->u.stack.tid);
	uint32_t i, n = x->u.stack.depth;
	bool same, gap;

	if (!t)
		return;
	if (x->u.stack.numbered && t->ring_no && x->u.stack.buffer_no <= t->ring_no &&
	    t == a->cur) {
		/*
		 * A buffer of the thread already read (or an older one): a
		 * snapshot can hold a thread's partial buffer twice, handed
		 * over and copied. Its records are not applied again.
		 */
		a->buf_repeat = true;
		a->st.repeated++;
		if (a->buf_ooo)
			a->st.out_of_order--;	/* not out of order: a repeat */
		a->buf_ooo = false;
		return;
	}
	if (x->u.stack.numbered) {
		/*
		 * A thread's first kept buffer numbered above 1 is a gap at its
		 * start, also when the buffer opens with a pool-empty gap (whose
		 * calls are on the stack already): records_before counts only
		 * records written in buffers, so the two never overlap.
		 */
		gap = t->ring_no ? x->u.stack.buffer_no > t->ring_no + 1 :
				   x->u.stack.buffer_no > 1 && !t->records;
		if (gap)
			an_ring_gap(a, t, x, tsc);
		t->ring_no = x->u.stack.buffer_no;
		t->ring_before = x->u.stack.records_before;
		t->ring_records = t->records;
		if (gap)
			return;
	}
	same = t->depth == n;
	for (i = 0; same && i < n; i++) {
		uint32_t id;

		memcpy(&id, x->u.stack.ids + 4 * i, 4);
		same = t->stack[i].id == id;
	}
	if (same)
		return;
	/* What we had does not match: the buffers in between were lost. */
	for (i = 0; i < t->depth; i++) {
		if (t->stack[i].lost) {
			a->st.spanning++;
			t->stack[i].fn->tally.spanning++;
		} else {
			a->st.unmatched_entries++;
		}
	}
	an_forget(a, t, 0);
	for (i = 0; i < n; i++) {
		uint32_t id;
		struct an_func *fn;

		memcpy(&id, x->u.stack.ids + 4 * i, 4);
		fn = an_func_get(a, id);
		if (!fn || !an_push(a, t, fn, tsc, true, false))
			return;
		if (a->ops && a->ops->enter)
			a->ops->enter(a, t, &t->stack[t->depth - 1]);
	}
}

/*
 * A gap in @t's records: every call open there spans the loss; the calls
 * the gap closed end at its start, those it opened are pushed, both
 * without a duration. @first_tsc 0: the thread's start (ring policy).
 */
static void an_gap_do(struct analysis *a, struct an_thread *t, uint64_t first_tsc,
		      uint64_t last_tsc, uint64_t records, unsigned reason, uint32_t exited,
		      uint32_t depth, const uint8_t *ids, bool followed)
{
	/* where the calls it closed end and those it opened begin (a thread's start: its end) */
	uint64_t at = first_tsc ? first_tsc : last_tsc;
	uint32_t i, n;

	a->st.gaps++;
	a->st.gap_records += records;
	/*
	 * The runtime followed the gap's calls (a drop record's exited and
	 * ids): the calls below those it closed are the same calls after it,
	 * so their exits are their own: timed, self unknown. Else (not
	 * followed; a ring's overwritten buffers, whose stack record matches
	 * by id only) none of them can be timed.
	 */
	followed = followed && exited != FDRTRACE_GAP_UNKNOWN;
	for (i = 0; i < t->depth; i++)
		t->stack[i].holed = followed && i + exited < t->depth && !t->stack[i].partial;
	if (a->ops && a->ops->gap)
		a->ops->gap(a, t, first_tsc, last_tsc, records, reason);
	for (i = 0; i < t->depth; i++) {
		if (!t->stack[i].holed) {
			t->stack[i].lost = true;
			t->stack[i].partial = true;
		}
	}
	if (exited == FDRTRACE_GAP_UNKNOWN)
		return;	/* which of them returned is not known: exits will say */
	for (n = exited; n && t->depth; n--)
		an_close_top(a, t, at, AN_END_LOST, false);
	for (i = 0; i < depth; i++) {
		struct an_func *fn;
		uint32_t id;

		memcpy(&id, ids + 4 * i, 4);
		fn = an_func_get(a, id);
		if (!fn || !an_push(a, t, fn, at, true, false))
			return;
		t->stack[t->depth - 1].lost = true;
		if (a->ops && a->ops->enter)
			a->ops->enter(a, t, &t->stack[t->depth - 1]);
	}
}

/*
 * A gap from a ring's numbering or (@followed) an FDRx drop record, applied
 * now.
 */
static void an_gap(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
		   bool followed)
{
	an_gap_do(a, t, x->u.drop.first_tsc, x->u.drop.last_tsc, x->u.drop.records,
		  x->u.drop.reason, x->u.drop.exited, x->u.drop.depth, x->u.drop.ids, followed);
}

/* The gap @t holds, applied where its time says (see an_gap_hold()). */
void an_gap_apply(struct analysis *a, struct an_thread *t)
{
	struct an_gap_held *g = t->held;

	t->held = NULL;
	an_gap_do(a, t, g->first_tsc, g->last_tsc, g->records, g->reason, g->exited, g->depth,
		  (const uint8_t *)g->ids, true);
	free(g);
}

/*
 * An FDRx drop gap in @t's own buffer, where its records resume. The hook
 * that was interrupted (re-entry) stamped its record before the signal
 * handler whose records were lost, and stores it after the drop record:
 * a record stamped before the gap's first TSC happened before the gap. So
 * the gap is held until the thread's first record stamped at or after its
 * first TSC, or anything else of the thread (an event, another extension
 * record, its next buffer, the end), and applied then: in time order.
 * Out of memory, it is applied at once, where it was read.
 */
void an_gap_hold(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x)
{
	struct an_gap_held *g;
	uint32_t depth = x->u.drop.exited == FDRTRACE_GAP_UNKNOWN ? 0 : x->u.drop.depth;

	if (t->held)
		an_gap_apply(a, t);
	g = x->u.drop.first_tsc ? malloc(sizeof(*g) + 4 * (size_t)depth) : NULL;
	if (!g) {
		an_gap(a, t, x, true);
		return;
	}
	g->first_tsc = x->u.drop.first_tsc;
	g->last_tsc = x->u.drop.last_tsc;
	g->records = x->u.drop.records;
	g->reason = x->u.drop.reason;
	g->exited = x->u.drop.exited;
	g->depth = depth;
	if (depth)
		memcpy(g->ids, x->u.drop.ids, 4 * (size_t)depth);
	t->held = g;
}
