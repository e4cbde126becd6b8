/* SPDX-License-Identifier: MIT */
/*
 * analysis_stack.h - the call-stack machine: threads by id, and a call's
 * push and pop, inline (the fast path of what a function record does;
 * the record's step, an_function(), is analysis_events.c's). The slow
 * parts are in analysis_stack.c. Calls only analysis_names.c, below it
 * (analysis_names.h, which includes the types).
 *
 * Contract: single-threaded tool code; nothing here allocates but a
 * thread's stack when it grows.
 */
#ifndef FDR_TOOL_ANALYSIS_STACK_H
#define FDR_TOOL_ANALYSIS_STACK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis_names.h"

/**
 * an_thread_label - "name" or "thread TID"
 * @t: the thread
 * @buf: space for the label
 * @cap: its size
 *
 * Return: @buf.
 */
const char *an_thread_label(const struct an_thread *t, char *buf, size_t cap);

/**
 * an_node_child - the calling-context node of @fn called under @parent
 * @a: the analysis
 * @parent: the caller's node; 0 (the root) for an outermost call
 * @fn: the function, or NULL for a thread's root node
 * @thread: the thread, for a thread's root node
 *
 * Made on first use. The core builds its tree with it when @want_cct; a
 * command may build its own (stack, of the selected calls) in a->nodes.
 *
 * Return: the node's index, or 0 (the root) when out of memory.
 */
uint32_t an_node_child(struct analysis *a, uint32_t parent, struct an_func *fn,
		       struct an_thread *thread);

/* The thread of @tid, made on first sight; NULL when out of memory. */
struct an_thread *an_thread_get(struct analysis *a, int32_t tid);
/* Forget @t's calls above @depth, whose exits were lost (an_ops.dropped). */
void an_forget(struct analysis *a, struct an_thread *t, uint32_t depth);
/* Drop @t's counts of open calls per id (made again when needed). */
void an_open_forget(struct an_thread *t);
/* A frame of @id pushed (+1) or popped (-1), while @t's counts are kept. */
void an_open_note(struct an_thread *t, uint32_t id, int delta);
/* Frames of @id open on @t; UINT32_MAX when not known (walk the stack then). */
uint32_t an_open_count(struct an_thread *t, uint32_t id);
/* Is a call of @id open on @t (another thread has calls of it open too)? */
bool an_open_on(struct an_thread *t, uint32_t id);

/*
 * A call of @fn is pushed on @t: is it nested in another of @fn's there?
 * One thread at a time counts its open calls in @fn (the common case: a
 * function recursing on one thread); a call on another thread meanwhile
 * walks its stack and is counted apart.
 */
static inline __attribute__((always_inline)) void an_open_enter(struct an_thread *t, struct an_func *fn, struct an_frame *f)
{
	uint32_t me = t->index + 1;

	if (__builtin_expect(fn->open_n == 0 && fn->open_far == 0, 1)) {
		fn->open_thread = me;
		fn->open_n = 1;
		f->counted = true;
		f->nested = false;
	} else if (fn->open_thread == me && fn->open_n) {
		fn->open_n++;
		f->counted = true;
		f->nested = true;
	} else {
		f->nested = an_open_on(t, fn->id);
		f->counted = false;
		fn->open_far++;
	}
}

/* The call @f of its function is no longer open. */
static inline __attribute__((always_inline)) void an_open_leave(const struct an_frame *f)
{
	if (f->counted)
		f->fn->open_n--;
	else
		f->fn->open_far--;
}

/*
 * @plain (a constant where it is inlined): the command has no enter or
 * exit callback and no calling-context tree is built, so neither is
 * looked for (account's loop).
 */
static inline __attribute__((always_inline)) struct an_frame *an_push(struct analysis *a, struct an_thread *t, struct an_func *fn,
				uint64_t tsc, bool partial, bool plain)
{
	struct an_frame *f;

	if (t->depth == t->cap) {
		/* Small at first: a trace may have many threads (<= 1 KiB each). */
		uint32_t cap = t->cap ? t->cap * 2 : 4;
		struct an_frame *n;

		if (t->depth >= AN_DEPTH_MAX) {
			/* counted, not kept: its exit is the next one (an_function()) */
			t->over++;
			a->st.too_deep++;
			return NULL;
		}
		n = realloc(t->stack, cap * sizeof(*n));
		if (!n)
			return NULL;
		t->stack = n;
		t->cap = cap;
	}
	f = &t->stack[t->depth];
	an_open_enter(t, fn, f);	/* before the push: the walk sees the calls below */
	t->depth++;
	f->fn = fn;
	f->id = fn->id;
	/* after the id: a rebuild of the counts reads the whole stack, this frame too */
	if (__builtin_expect(t->open != NULL, 0))
		an_open_note(t, fn->id, +1);
	f->tsc = tsc;
	f->children = 0;
	f->partial = partial;
	f->lost = false;
	f->holed = false;
	f->node = 0;
	if (!plain && a->want_cct)
		f->node = an_node_child(a, t->depth > 1 ? t->stack[t->depth - 2].node : t->root,
					fn, t);
	return f;
}

static inline __attribute__((always_inline)) void an_close_top(struct analysis *a, struct an_thread *t, uint64_t end, enum an_end how, bool plain)
{
	struct an_frame *f = &t->stack[t->depth - 1];
	struct an_func *fn = f->fn;
	uint64_t dur = 0, self;

	if (f->lost) {
		a->st.spanning++;
		fn->tally.spanning++;
	} else if (f->partial) {
		a->st.partial++;
	} else if (end >= f->tsc) {
		dur = end - f->tsc;
	} else {
		a->st.clamped++;
	}
	if (how == AN_END_UNWOUND) {
		a->st.unwound++;
		if (!f->partial)
			fn->tally.unwound++;
	}
	if (!plain && a->ops && a->ops->exit)
		a->ops->exit(a, t, f, end, dur, how);
	if (t == a->cur && t->depth - 1 < a->buf_low)
		a->buf_low = t->depth - 1;
	if (!f->partial) {
		self = dur > f->children ? dur - f->children : 0;
		if (__builtin_expect(f->holed, 0)) {
			self = 0;	/* its callees' time is not known */
			fn->tally.self_unknown++;
			a->st.holed++;
		}
		a->st.calls++;
		an_tally_add(&fn->tally, dur, self, a->want_hist);	/* out of memory: not in hist */
		if (!f->nested)
			fn->tally.total += dur;
		if (!plain && f->node) {
			a->nodes[f->node].calls++;
			a->nodes[f->node].incl += dur;
			a->nodes[f->node].self += self;
		}
		if (t->depth > 1)
			t->stack[t->depth - 2].children += dur;
	}
	t->depth--;
	an_open_leave(f);
	if (__builtin_expect(t->open != NULL, 0))
		an_open_note(t, f->id, -1);
}

#endif /* FDR_TOOL_ANALYSIS_STACK_H */
