/* SPDX-License-Identifier: MIT */
/*
 * order.h - a thread's calls and events in start order, in bounded memory,
 * for the writers of convert (Chrome JSON, Perfetto).
 *
 * The analysis core reports a call when it ends, so calls come out in end
 * order (callees before their callers). A viewer wants each thread's events
 * in start order. This module keeps, per thread, a queue of items in start
 * order: calls (open until their exit) and instants (application events,
 * gaps). After each change it emits from the front of the queue every item
 * whose end is known: a call as a complete event, an instant as itself.
 *
 *   queue of thread T (front = earliest start):
 *     [main open] [parse closed] [lex closed] [event] [eval open] ...
 *      ^ the front waits for main's exit ...
 *
 * An open call at the front holds back everything after it. The window is
 * bounded: when more than ORD_WINDOW items are queued over all threads, the
 * queue of the thread that just grew is flushed: its open calls become begin
 * events (their end event follows at their exit; every item queued after a
 * begun call is one of its callees or an event inside it, so the order
 * stays right), its closed ones complete events. At most ORD_WINDOW items
 * plus one per open call are then queued, whatever the trace's length;
 * only long calls with many callees inside the window become begin/end
 * pairs. The rings that hold them do not shrink while items are queued,
 * and each thread's may have held the whole window once (sqlite's 40
 * sorting threads each queued a window, and convert kept 40 windows'
 * rings: 40 MB). So a ring that empties is freed while all the rings
 * together have room for more than ORD_RING_BUDGET items: memory stays
 * within about twice the window plus one small ring per thread.
 *
 * With a duration threshold (convert -t: struct ord.lasts), an open call is
 * begun early only when it already lasted the threshold at the flush (the
 * thread's current time minus its start); so is every call written, as
 * account and stack count them. Behind an undecided call (one that may
 * still end under the threshold) every closed call is under it too (a
 * callee never outlasts its caller): those dead items are dropped from
 * the queue, which keeps the rest (the undecided calls, open, and
 * instants inside them) beyond the window, up to ORD_HOLD_MAX items over
 * all threads; past that, the thread is written out as without a
 * threshold, and each call written so that then ends under the threshold
 * is counted (struct ord.short_begun; convert says how many).
 *
 * With @split, a complete event is written as a begin event and an end
 * event placed after the items it encloses (by nesting level), for writers
 * that have no complete events (Perfetto's TrackEvent).
 *
 * Contract: single-threaded tool code. Item sequence numbers (ord_open()'s
 * return) stay valid until the item is emitted.
 */
#ifndef FDRTRACE_TOOL_ORDER_H
#define FDRTRACE_TOOL_ORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis.h"

#ifndef ORD_WINDOW
#define ORD_WINDOW (1u << 14)	/* queued items over all threads */
#endif
#define ORD_RING_BUDGET (2u * ORD_WINDOW)	/* ring capacity kept over all threads */
#define ORD_RING_KEEP 64u	/* a ring this small is kept when it empties */
#define ORD_HOLD_MAX (4u * ORD_WINDOW)	/* queued items over all threads, with -t */

enum ord_kind {
	ORD_CALL,
	ORD_EVENT,	/* an application custom or typed event */
	ORD_GAP,	/* records lost here */
	ORD_WAIT,	/* on_full=wait: the thread waited @dur ticks for a buffer */
};

/*
 * At most ORD_ARGS values logged inside one call are kept (fdrtrace_log_arg():
 * a function's arguments; typed events), in order; more are counted, and
 * the writers say how many were left out. Of a typed event's payload, the
 * first ORD_ARG_BYTES bytes.
 */
#define ORD_ARGS 8
#define ORD_ARG_BYTES 32

enum ord_arg_kind {
	ORD_ARG_VALUE,	/* fdrtrace_log_arg() */
	ORD_ARG_TYPED,	/* a typed event (fdrtrace_typed_event()) */
};

/**
 * struct ord_arg - one value logged inside a call
 * @kind: enum ord_arg_kind
 * @len: of a typed event, the bytes of its payload in @bytes
 * @type: of a typed event, its type
 * @size: of a typed event, its payload's size
 * @v: fdrtrace_log_arg()'s value
 * @bytes: a typed event's payload, its first @len bytes
 */
struct ord_arg {
	uint8_t kind;
	uint8_t len;
	uint16_t type;
	uint32_t size;
	union {
		uint64_t v;
		uint8_t bytes[ORD_ARG_BYTES];
	};
};

/**
 * struct ord_args - the values logged inside a call (an_ops.arg, typed events)
 * @n: how many were logged; the first ORD_ARGS are in @a
 * @a: the values
 */
struct ord_args {
	uint32_t n;
	struct ord_arg a[ORD_ARGS];
};

/**
 * struct ord_item - one queued call or instant
 * @kind: enum ord_kind
 * @closed: the end is known (always for instants)
 * @never: the trace ends with the call open (ord_finish() at the end): it
 *	gets no end event; a call begun earlier (the window, an event written
 *	outside the queue) has it false: its end event follows, unless a gap
 *	takes its exit
 * @dead: hidden at its exit (under the threshold): not emitted
 * @unwound: ended by an outer call's exit
 * @lost: its end was lost with records of the trace (see ord_lose())
 * @level: nesting level among the emitted calls (0: outermost)
 * @fn: the function of a call
 * @tsc, @dur: start and duration (ticks; of a call or a wait)
 * @size, @type: payload size and typed-event type of an event (@type
 *	-1 for a custom event); @size is the count of lost records of a gap
 * @id: its sequence number, once its queue dropped dead items (struct
 *	ord_queue.moved)
 * @args: NULL, or the values logged inside a call while it was queued
 *	(ord_arg()); the queue's, freed when the item leaves it
 */
struct ord_item {
	uint8_t kind;
	bool closed, never, dead, unwound, lost;
	uint32_t level;
	int32_t type;
	struct an_func *fn;
	uint64_t tsc, dur;
	uint64_t size;
	uint64_t id;
	struct ord_args *args;
};

/**
 * struct ord_writer - what a format writes (called in start order per thread)
 * @complete: a call with its duration (not used with @split)
 * @begin: a call whose end is not known yet (@it->closed false; @it->never
 *	when the trace ends first), or was lost (@it->lost)
 * @end: the end of a call written by @begin, at @end_tsc; @unwound: it was
 *	ended by an outer call's exit; @args: NULL, or values logged inside
 *	the call after its begin event was written (the slice's too)
 * @instant: an event or a gap
 * @drain: NULL, or the format's ord_drain_with(..., itself): the calls
 *	above made directly, and inlined where the compiler sees fit
 */
struct ord_queue;
struct ord;

struct ord_writer {
	void (*complete)(void *w, struct analysis *a, struct an_thread *t,
			 const struct ord_item *it);
	void (*begin)(void *w, struct analysis *a, struct an_thread *t, const struct ord_item *it);
	void (*end)(void *w, struct analysis *a, struct an_thread *t, bool unwound,
		    uint64_t end_tsc, const struct ord_args *args);
	void (*instant)(void *w, struct analysis *a, struct an_thread *t,
			const struct ord_item *it);
	void (*drain)(struct ord *o, struct analysis *a, struct an_thread *t,
		      struct ord_queue *q);
};

/* An end a split writer owes: a call's end, nesting level, and how it ended. */
struct ord_end {
	uint64_t tsc;
	uint32_t level;
	bool unwound;
};

/*
 * Values logged inside a call written as a begin event before they came
 * (struct ord_queue.late): they go with its end event.
 */
struct ord_late {
	uint64_t seq;
	struct ord_args *args;
};

/*
 * One thread's queue: a ring of items, and the ends a split writer still
 * owes. An item's sequence number is its position head..tail-1 until dead
 * items are dropped from the middle (@moved): then it is the item's @id,
 * increasing along the queue, the next one @next_id; the queue goes back
 * to positions when it empties.
 */
struct ord_queue {
	struct ord_item *ring;
	uint32_t cap;		/* a power of two */
	bool moved;
	uint64_t head, tail;	/* positions: items head..tail-1 are queued */
	uint64_t next_id;
	struct ord_end *ends;	/* split: emitted calls whose end is not written */
	uint32_t n_ends, ends_cap;
	/* begun calls with values logged since (at most one per open call) */
	struct ord_late *late;
	uint32_t n_late, late_cap;
};

/**
 * struct ord - the queues of one conversion
 * @wr, @w: the writer and its state
 * @split: write complete events as begin and end
 * @queued: items queued over all threads
 * @ring_items: the capacity of all the rings, in items
 * @oom: an item could not be queued (it is then lost; reported)
 * @drain: @wr->drain, or ord_drain()
 * @lasts, @lasts_ctx: NULL, or whether a call of @dur ticks passes the
 *	threshold (convert -t; set after ord_init())
 * @limit: queued items over which the thread that grew is written out:
 *	ORD_WINDOW, more while undecided calls are held (at most ORD_HOLD_MAX)
 * @short_begun: calls begun early (the window's last resort, a native
 *	stack) that then ended under the threshold: written all the same
 * @args_unwritten: values logged inside a call whose begin event was
 *	already out and whose end never came (lost, or the trace ended):
 *	they had no event to go on (convert says how many)
 */
struct ord {
	const struct ord_writer *wr;
	void (*drain)(struct ord *o, struct analysis *a, struct an_thread *t,
		      struct ord_queue *q);
	void *w;
	bool split;
	struct ord_queue *q;
	uint32_t n_q;
	uint64_t queued;
	uint64_t ring_items;
	bool oom;
	bool (*lasts)(void *ctx, struct analysis *a, uint64_t dur);
	void *lasts_ctx;
	uint64_t limit;
	uint64_t short_begun;
	uint64_t args_unwritten;
};

/**
 * ord_init - start
 * @o: the state
 * @wr: the writer
 * @w: its state, passed to every callback
 * @split: see the file comment
 */
void ord_init(struct ord *o, const struct ord_writer *wr, void *w, bool split);

/*
 * The out-of-line parts of ord_open(), ord_close() and ord_drain_with()
 * (order.c): ord_drain() is ord_drain_with() through @o->wr; the ends stack
 * grows (false when out of memory); an empty queue's ring may be freed.
 */
uint64_t ord_open_slow(struct ord *o, struct analysis *a, struct an_thread *t,
		       struct an_func *fn, uint64_t tsc, uint32_t level);
void ord_close_slow(struct ord *o, struct analysis *a, struct an_thread *t, uint64_t seq,
		    uint64_t tsc, uint64_t dur, bool unwound, bool keep);
void ord_drain(struct ord *o, struct analysis *a, struct an_thread *t, struct ord_queue *q);
bool ord_ends_grow(struct ord *o, struct ord_queue *q);
void ord_release(struct ord *o, struct ord_queue *q);

static inline struct ord_item *ord_at(struct ord_queue *q, uint64_t seq)
{
	return &q->ring[seq & (q->cap - 1)];
}

/* Split writers: the ends owed by calls at @level or deeper come first. */
static inline __attribute__((always_inline)) void
ord_pop_ends_with(struct ord *o, struct analysis *a, struct an_thread *t, struct ord_queue *q,
		  uint32_t level, const struct ord_writer *wr)
{
	while (q->n_ends && q->ends[q->n_ends - 1].level >= level) {
		const struct ord_end *e = &q->ends[--q->n_ends];

		wr->end(o->w, a, t, e->unwound, e->tsc, NULL);
	}
}

/* Once per call a split writer writes. */
static inline __attribute__((always_inline)) void
ord_push_end(struct ord *o, struct ord_queue *q, const struct ord_item *it)
{
	if (__builtin_expect(q->n_ends == q->ends_cap, 0) && !ord_ends_grow(o, q))
		return;
	q->ends[q->n_ends++] = (struct ord_end){
		.tsc = it->tsc + it->dur, .level = it->level, .unwound = it->unwound,
	};
}

/* Write the front item and drop it from the queue. */
static inline __attribute__((always_inline)) void
ord_emit_front_with(struct ord *o, struct analysis *a, struct an_thread *t, struct ord_queue *q,
		    const struct ord_writer *wr, bool split)
{
	struct ord_item *it = ord_at(q, q->head);

	q->head++;
	o->queued--;
	if (it->dead)
		goto out;
	if (split)
		ord_pop_ends_with(o, a, t, q, it->level, wr);
	if (__builtin_expect(it->kind != ORD_CALL, 0)) {
		o->wr->instant(o->w, a, t, it);
	} else if (__builtin_expect(!it->closed || it->lost, 0)) {
		wr->begin(o->w, a, t, it);
	} else if (split) {
		wr->begin(o->w, a, t, it);
		ord_push_end(o, q, it);
	} else {
		wr->complete(o->w, a, t, it);
	}
out:
	if (__builtin_expect(it->args != NULL, 0)) {
		free(it->args);
		it->args = NULL;
	}
}

/**
 * ord_drain_with - write the closed and dead items at the front (after the
 * front closed)
 * @o: the state
 * @a: the analysis
 * @t: the thread
 * @q: its queue
 * @wr: @o->wr; a format passes its own constant struct, so that its calls
 *	are direct (struct ord_writer.drain)
 * @split: @o->split; a format passes its own constant
 */
static inline __attribute__((always_inline)) void
ord_drain_with(struct ord *o, struct analysis *a, struct an_thread *t, struct ord_queue *q,
	       const struct ord_writer *wr, bool split)
{
	while (q->head < q->tail && (ord_at(q, q->head)->closed || ord_at(q, q->head)->dead))
		ord_emit_front_with(o, a, t, q, wr, split);
	if (q->head == q->tail)
		ord_release(o, q);
}

/**
 * ord_open - a call began
 * @o: the state
 * @a: the analysis
 * @t: its thread
 * @fn: its function
 * @tsc: its start
 * @level: its nesting level among the emitted calls
 *
 * Inline: one per call. The slow path grows the ring or the thread table,
 * or flushes the thread when the window is full.
 *
 * Return: its sequence number + 1 for ord_close(), or 0 when out of memory.
 */
static inline uint64_t ord_open(struct ord *o, struct analysis *a, struct an_thread *t,
				struct an_func *fn, uint64_t tsc, uint32_t level)
{
	struct ord_queue *q;

	if (__builtin_expect(t->index >= o->n_q || o->queued >= o->limit, 0))
		return ord_open_slow(o, a, t, fn, tsc, level);
	q = &o->q[t->index];
	if (__builtin_expect(q->tail - q->head == q->cap || q->moved, 0))
		return ord_open_slow(o, a, t, fn, tsc, level);
	q->ring[q->tail & (q->cap - 1)] = (struct ord_item){
		.kind = ORD_CALL, .level = level, .fn = fn, .tsc = tsc,
	};
	o->queued++;	/* at most @o->limit now: no flush (ord_bound()) */
	return ++q->tail;	/* the new item's sequence number + 1 */
}

/**
 * ord_close - a call opened by ord_open() ended
 * @o: the state
 * @a: the analysis
 * @t: its thread
 * @seq: what ord_open() returned
 * @tsc: its start
 * @dur: its duration
 * @unwound: it was ended by an outer call's exit
 * @keep: false to drop it (under the threshold); a call already written as a
 *	begin event gets its end event all the same
 *
 * Inline: one per call. Only the front item's close can make items
 * writable (the front is open after every call, see order.c), so the
 * queue is drained only then.
 */
static inline void ord_close(struct ord *o, struct analysis *a, struct an_thread *t,
			     uint64_t seq, uint64_t tsc, uint64_t dur, bool unwound, bool keep)
{
	struct ord_queue *q;
	struct ord_item *it;

	/* a nonzero @seq came from ord_open(): the thread's queue exists */
	if (!seq--)
		return;
	q = &o->q[t->index];
	if (__builtin_expect(seq < q->head || q->moved, 0)) {
		ord_close_slow(o, a, t, seq + 1, tsc, dur, unwound, keep);
		return;
	}
	it = &q->ring[seq & (q->cap - 1)];
	it->closed = true;
	it->dead = !keep;
	it->dur = dur;
	it->unwound = unwound;
	if (seq == q->head)
		o->drain(o, a, t, q);
}

/**
 * ord_lose - a call opened by ord_open() will not end: its exit was lost
 * @o: the state
 * @a: the analysis
 * @t: its thread
 * @seq: what ord_open() returned
 *
 * It is written as a begin event with @lost set, and never an end event.
 */
void ord_lose(struct ord *o, struct analysis *a, struct an_thread *t, uint64_t seq);

/**
 * ord_arg - a value logged inside a call opened by ord_open() (an_ops.arg, a
 *	typed event)
 * @o: the state
 * @a: the analysis
 * @t: its thread
 * @seq: what ord_open() returned
 * @value: the value (copied)
 *
 * Kept with the item while it is queued (written with its slice: a
 * complete or begin event), else, when it was written as a begin event
 * already, until its end event. A call dropped under the threshold drops
 * them. Out of memory: the value is left out (struct ord.oom).
 */
void ord_arg(struct ord *o, struct analysis *a, struct an_thread *t, uint64_t seq,
	     const struct ord_arg *value);

/**
 * ord_instant - an event or a gap at @it->tsc
 * @o: the state
 * @a: the analysis
 * @t: its thread
 * @it: the item (kind, tsc, level, size, type); copied
 */
void ord_instant(struct ord *o, struct analysis *a, struct an_thread *t,
		 const struct ord_item *it);

/**
 * ord_finish - write everything still queued for @t now
 * @o: the state
 * @a: the analysis
 * @t: the thread
 *
 * At the end of the trace (@at_end: calls still open are written as never
 * ending), or before an event written outside the queue (they become
 * begin events and get their end event at their exit).
 */
void ord_finish(struct ord *o, struct analysis *a, struct an_thread *t, bool at_end);

/**
 * ord_fini - free the queues
 * @o: the state
 */
void ord_fini(struct ord *o);

#endif /* FDRTRACE_TOOL_ORDER_H */
