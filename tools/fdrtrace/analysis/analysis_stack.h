/* SPDX-License-Identifier: MIT */
/*
 * analysis_stack.h - the call-stack machine's fast path, inline: what one
 * function record does to its thread's stack (an_function()), and the
 * push and pop under it. Included by the analysis files that apply
 * records (the events and runs, the gaps); the slow parts are in
 * analysis_stack.c.
 *
 * Contract: single-threaded tool code; nothing here allocates but a
 * thread's stack when it grows.
 */
#ifndef FDR_TOOL_ANALYSIS_STACK_H
#define FDR_TOOL_ANALYSIS_STACK_H

#include "analysis_internal.h"

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

/*
 * One function record of @t (@action, function @id, at @tsc): an entry
 * pushes a call; an exit closes the innermost call of @id, and those
 * above it as unwound; an exit with no open call of @id is counted as
 * unmatched. @plain as at an_push().
 */
static inline __attribute__((always_inline)) void an_function(struct analysis *a, struct an_thread *t, unsigned action, uint32_t id,
			uint64_t tsc, bool plain)
{
	struct an_func *fn;
	uint32_t i;

	/* a record stamped before a held gap began is applied before it */
	if (__builtin_expect(t->held != NULL, 0) && tsc >= t->held->first_tsc)
		an_gap_apply(a, t);
	switch (action) {
	case FDRTRACE_FN_ENTRY:
	case FDRTRACE_FN_ENTRY_ARGS:
		fn = an_func_get(a, id);
		if (!fn || !an_push(a, t, fn, tsc, false, plain))
			return;	/* out of memory: the call is lost, the stack stays right */
		if (!plain && a->ops && a->ops->enter)
			a->ops->enter(a, t, &t->stack[t->depth - 1]);
		return;
	case FDRTRACE_FN_EXIT:
	case FDRTRACE_FN_TAIL_EXIT:
		if (__builtin_expect(t->over != 0, 0)) {
			t->over--;	/* the innermost of the calls too deep to keep */
			return;
		}
		/* Mostly the innermost call's exit. */
		if (__builtin_expect(t->depth && t->stack[t->depth - 1].id == id, 1)) {
			an_close_top(a, t, tsc, AN_END_EXIT, plain);
			return;
		}
		if (an_open_count(t, id) == 0) {
			a->st.unmatched_exits++;
			return;
		}
		for (i = t->depth; i > 0; i--)
			if (t->stack[i - 1].id == id)
				break;
		if (i == 0) {
			a->st.unmatched_exits++;
			return;
		}
		while (t->depth > i)
			an_close_top(a, t, tsc, AN_END_UNWOUND, plain);
		an_close_top(a, t, tsc, AN_END_EXIT, plain);
		return;
	default:
		return;	/* actions 4..7 have no meaning */
	}
}

#endif /* FDR_TOOL_ANALYSIS_STACK_H */
