/* SPDX-License-Identifier: MIT */
/*
 * order.c - start order in bounded memory (see order.h).
 *
 * Invariants, per thread queue:
 *   - items head..tail-1 are queued, in start order; an item whose sequence
 *     number is below head has been written (a call: as a complete event,
 *     or as a begin event when it was still open);
 *   - after every public call, the front item is open (or the queue is
 *     empty): closed and dead items at the front are written at once;
 *   - when a begun call closes, every item after it is one of its callees
 *     or an event inside it, all closed, so the queue drains completely
 *     before its end event;
 *   - o->queued is the sum of tail - head over all queues, at most
 *     o->limit after every public call (ORD_WINDOW; up to ORD_HOLD_MAX
 *     while calls that may end under the threshold are held);
 *   - with a threshold, every call written lasted it, or was begun early
 *     as a last resort and is counted in o->short_begun when it did not.
 *
 * Contract: single-threaded tool code.
 */
#include "order.h"

#include <stdlib.h>
#include <string.h>

#define ord_emit_front(o, a, t, q) ord_emit_front_with(o, a, t, q, (o)->wr, (o)->split)
#define ord_pop_ends(o, a, t, q, level) ord_pop_ends_with(o, a, t, q, level, (o)->wr)

void ord_init(struct ord *o, const struct ord_writer *wr, void *w, bool split)
{
	memset(o, 0, sizeof(*o));
	o->wr = wr;
	o->w = w;
	o->split = split;
	o->drain = wr->drain ? wr->drain : ord_drain;
	o->limit = ORD_WINDOW;
}

bool ord_ends_grow(struct ord *o, struct ord_queue *q)
{
	uint32_t cap = q->ends_cap ? q->ends_cap * 2 : 4;	/* 64 bytes */
	struct ord_end *n = realloc(q->ends, cap * sizeof(*n));

	if (!n) {
		o->oom = true;	/* the end is lost; reported */
		return false;
	}
	q->ends = n;
	q->ends_cap = cap;
	return true;
}

/* A call's late values that no end event will carry: counted, then freed. */
static void ord_late_drop(struct ord *o, struct ord_args *late)
{
	if (late)
		o->args_unwritten += late->n;
	free(late);
}

void ord_fini(struct ord *o)
{
	uint32_t i;

	for (i = 0; i < o->n_q; i++) {
		struct ord_queue *q = &o->q[i];

		for (uint64_t s = q->head; s < q->tail; s++)
			free(ord_at(q, s)->args);
		for (uint32_t k = 0; k < q->n_late; k++)
			ord_late_drop(o, q->late[k].args);
		free(q->ring);
		free(q->ends);
		free(q->late);
	}
	free(o->q);
	o->q = NULL;
	o->n_q = 0;
}

static struct ord_queue *ord_queue_grow(struct ord *o, const struct an_thread *t)
{
	{
		uint32_t n = o->n_q ? o->n_q : 16;
		struct ord_queue *p;

		while (n <= t->index)
			n *= 2;
		p = realloc(o->q, n * sizeof(*p));
		if (!p) {
			o->oom = true;
			return NULL;
		}
		memset(p + o->n_q, 0, (n - o->n_q) * sizeof(*p));
		o->q = p;
		o->n_q = n;
	}
	return &o->q[t->index];
}

static inline struct ord_queue *ord_queue(struct ord *o, const struct an_thread *t)
{
	if (__builtin_expect(t->index < o->n_q, 1))
		return &o->q[t->index];
	return ord_queue_grow(o, t);
}

/*
 * An empty ring goes back to the allocator while all the rings together
 * have room for more than ORD_RING_BUDGET items (order.h): a thread that
 * queued a whole window once does not keep that room for good. Nothing
 * refers to the ring of an empty queue (every sequence number is below
 * head); the next item grows a new one.
 */
void ord_release(struct ord *o, struct ord_queue *q)
{
	if (q->head != q->tail)
		return;
	if (q->moved) {
		/* back to positions, above every sequence number given out */
		q->head = q->tail = q->next_id;
		q->moved = false;
	}
	if (q->cap <= ORD_RING_KEEP || o->ring_items <= ORD_RING_BUDGET)
		return;
	free(q->ring);
	o->ring_items -= q->cap;
	q->ring = NULL;
	q->cap = 0;
}

void ord_drain(struct ord *o, struct analysis *a, struct an_thread *t, struct ord_queue *q)
{
	ord_drain_with(o, a, t, q, o->wr, o->split);
}

/*
 * The item of sequence number @seq, or NULL: *@written when it was written
 * (a call: begun), else it was dropped (dead) or never queued.
 */
static struct ord_item *ord_find(struct ord_queue *q, uint64_t seq, bool *written)
{
	uint64_t lo = q->head, hi = q->tail;

	*written = false;
	if (!q->moved) {
		*written = seq < q->head;
		return seq >= q->head && seq < q->tail ? ord_at(q, seq) : NULL;
	}
	if (lo == hi || seq < ord_at(q, lo)->id) {
		*written = true;
		return NULL;
	}
	while (lo < hi) {	/* ids increase along the queue */
		uint64_t mid = lo + (hi - lo) / 2, id = ord_at(q, mid)->id;

		if (id == seq)
			return ord_at(q, mid);
		if (id < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Drop the dead items from the queue; sequence numbers become ids. */
static void ord_drop_dead(struct ord *o, struct ord_queue *q)
{
	uint64_t r, w = q->head;

	if (!q->moved) {
		for (r = q->head; r < q->tail; r++)
			ord_at(q, r)->id = r;
		q->next_id = q->tail;
		q->moved = true;
	}
	for (r = q->head; r < q->tail; r++) {
		if (ord_at(q, r)->dead) {
			free(ord_at(q, r)->args);
			continue;
		}
		if (w != r)
			*ord_at(q, w) = *ord_at(q, r);
		w++;
	}
	o->queued -= q->tail - w;
	q->tail = w;
}

/*
 * With a threshold: write what is decided (closed items, and open calls
 * that already lasted the threshold at @now), stopping at the first call
 * that may still end under it; drop the dead items behind that one.
 * Return: false when the held items would exceed ORD_HOLD_MAX (the caller
 * then writes the thread out as without a threshold).
 */
static bool ord_hold(struct ord *o, struct analysis *a, struct an_thread *t, struct ord_queue *q,
		     uint64_t now)
{
	while (q->head < q->tail) {
		struct ord_item *it = ord_at(q, q->head);

		if (it->kind == ORD_CALL && !it->closed &&
		    !o->lasts(o->lasts_ctx, a, now > it->tsc ? now - it->tsc : 0))
			break;
		ord_emit_front(o, a, t, q);
	}
	if (q->head < q->tail)
		ord_drop_dead(o, q);
	else
		ord_release(o, q);
	if (o->queued <= ORD_WINDOW) {
		o->limit = ORD_WINDOW;
		return true;
	}
	if (o->queued + ORD_WINDOW / 2 > ORD_HOLD_MAX)
		return false;
	o->limit = o->queued + ORD_WINDOW / 2;	/* held: look again after that many more */
	return true;
}

/*
 * Keep the window: write out the thread that just grew (its time is @now)
 * when it is exceeded.
 */
static void ord_bound(struct ord *o, struct analysis *a, struct an_thread *t, struct ord_queue *q,
		      uint64_t now)
{
	if (o->queued <= o->limit)
		return;
	if (o->lasts && ord_hold(o, a, t, q, now))
		return;
	while (q->head < q->tail)
		ord_emit_front(o, a, t, q);
	ord_release(o, q);
	if (o->queued <= ORD_WINDOW)
		o->limit = ORD_WINDOW;
}

static struct ord_item *ord_push(struct ord *o, struct ord_queue *q)
{
	if (q->tail - q->head == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 4;	/* 224 bytes: a thread within 1 KiB */
		struct ord_item *n = malloc(cap * sizeof(*n));
		uint64_t s;

		if (!n) {
			o->oom = true;
			return NULL;
		}
		/* Keep each item at seq & (cap - 1) in the larger ring. */
		for (s = q->head; s < q->tail; s++)
			n[s & (cap - 1)] = *ord_at(q, s);
		free(q->ring);
		o->ring_items += cap - q->cap;
		q->ring = n;
		q->cap = cap;
	}
	o->queued++;
	return &q->ring[q->tail++ & (q->cap - 1)];
}

uint64_t ord_open_slow(struct ord *o, struct analysis *a, struct an_thread *t,
		       struct an_func *fn, uint64_t tsc, uint32_t level)
{
	struct ord_queue *q = ord_queue(o, t);
	struct ord_item *it;
	uint64_t seq;

	if (!q)
		return 0;
	it = ord_push(o, q);
	if (!it)
		return 0;
	seq = q->moved ? q->next_id++ : q->tail - 1;
	memset(it, 0, sizeof(*it));
	it->kind = ORD_CALL;
	it->fn = fn;
	it->tsc = tsc;
	it->level = level;
	it->id = seq;
	ord_bound(o, a, t, q, tsc);
	return seq + 1;
}

/*
 * The values logged since call @seq was written as a begin event, taken
 * off the queue's list (the caller frees them); NULL when there are none.
 * The list holds begun calls still open, innermost last: @seq is near
 * its end.
 */
static struct ord_args *ord_late_take(struct ord_queue *q, uint64_t seq)
{
	for (uint32_t k = q->n_late; k-- > 0;) {
		struct ord_args *r = q->late[k].args;

		if (q->late[k].seq != seq)
			continue;
		memmove(&q->late[k], &q->late[k + 1], (q->n_late - k - 1) * sizeof(*q->late));
		q->n_late--;
		return r;
	}
	return NULL;
}

/* Append @value to *@pr (made on first use); false when out of memory. */
static bool ord_args_add(struct ord_args **pr, const struct ord_arg *value)
{
	struct ord_args *r = *pr;

	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return false;
		*pr = r;
	}
	if (r->n < ORD_ARGS)
		r->a[r->n] = *value;
	if (r->n < UINT32_MAX)
		r->n++;
	return true;
}

void ord_arg(struct ord *o, struct analysis *a, struct an_thread *t, uint64_t seq,
	     const struct ord_arg *value)
{
	struct ord_queue *q = ord_queue(o, t);
	struct ord_item *it;
	bool written;
	uint32_t k;

	(void)a;
	if (!q || !seq--)
		return;
	it = ord_find(q, seq, &written);
	if (it) {
		if (it->kind == ORD_CALL && !ord_args_add(&it->args, value))
			o->oom = true;
		return;
	}
	if (!written)
		return;	/* dropped under the threshold */
	for (k = q->n_late; k-- > 0;)
		if (q->late[k].seq == seq)
			break;
	if (k == UINT32_MAX) {
		if (q->n_late == q->late_cap) {
			uint32_t cap = q->late_cap ? q->late_cap * 2 : 4;
			struct ord_late *n = realloc(q->late, cap * sizeof(*n));

			if (!n) {
				o->oom = true;
				return;
			}
			q->late = n;
			q->late_cap = cap;
		}
		k = q->n_late++;
		q->late[k] = (struct ord_late){ .seq = seq };
	}
	if (!ord_args_add(&q->late[k].args, value))
		o->oom = true;
}

void ord_close_slow(struct ord *o, struct analysis *a, struct an_thread *t, uint64_t seq,
		    uint64_t tsc, uint64_t dur, bool unwound, bool keep)
{
	struct ord_queue *q = ord_queue(o, t);
	struct ord_item *it;
	bool written;

	if (!q || !seq--)
		return;
	it = ord_find(q, seq, &written);
	if (written) {
		/* Written as a begin event: all after it are inside it, and closed. */
		struct ord_args *late = q->n_late ? ord_late_take(q, seq) : NULL;

		if (!keep)
			o->short_begun++;
		while (q->head < q->tail)
			ord_emit_front(o, a, t, q);
		if (o->split)
			ord_pop_ends(o, a, t, q, 0);
		o->wr->end(o->w, a, t, unwound, tsc + dur, late);
		free(late);
		ord_release(o, q);
		return;
	}
	if (!it)
		return;
	it->closed = true;
	it->dead = !keep;
	it->dur = dur;
	it->unwound = unwound;
	ord_drain(o, a, t, q);
}

void ord_lose(struct ord *o, struct analysis *a, struct an_thread *t, uint64_t seq)
{
	struct ord_queue *q = ord_queue(o, t);
	struct ord_item *it;
	bool written;

	if (!q || !seq--)
		return;
	it = ord_find(q, seq, &written);
	if (!it) {
		/* a begin event is out: it stays without an end, and its late values */
		if (written && q->n_late)
			ord_late_drop(o, ord_late_take(q, seq));
		return;
	}
	it->closed = true;
	it->lost = true;
	ord_drain(o, a, t, q);
}

void ord_instant(struct ord *o, struct analysis *a, struct an_thread *t,
		 const struct ord_item *src)
{
	struct ord_queue *q = ord_queue(o, t);
	struct ord_item *it;

	if (!q)
		return;
	it = ord_push(o, q);
	if (!it)
		return;
	*it = *src;
	it->closed = true;
	it->dead = false;
	it->id = q->moved ? q->next_id++ : q->tail - 1;
	ord_drain(o, a, t, q);
	ord_bound(o, a, t, q, src->tsc);
}

void ord_finish(struct ord *o, struct analysis *a, struct an_thread *t, bool at_end)
{
	struct ord_queue *q;

	if (t->index >= o->n_q)
		return;
	q = &o->q[t->index];
	for (uint64_t s = q->head; at_end && s < q->tail; s++)
		ord_at(q, s)->never = !ord_at(q, s)->closed;
	while (q->head < q->tail)
		ord_emit_front(o, a, t, q);
	if (o->split)
		ord_pop_ends(o, a, t, q, 0);
	ord_release(o, q);
}
