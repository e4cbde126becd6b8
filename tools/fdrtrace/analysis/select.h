/* SPDX-License-Identifier: MIT */
/*
 * select.h - which calls an analysis command shows: the selectors -F, -N,
 * -D, -t, --tid and -r, with one meaning in every command that takes them
 * (replay, stack, convert, diff).
 *
 * A call is "shown" when
 *   - it is inside a call of a function matching a -F glob, or there is
 *     no -F (a matching call is inside itself);
 *   - it is not inside a call of a function matching a -N glob (a matching
 *     call hides itself and all its callees);
 *   - fewer than -D shown calls are open around it;
 *   - it is on the --tid thread;
 *   - it begins inside the -r range, in seconds from the first call seen;
 *   - it lasts at least -t (known at its exit; a callee never outlasts its
 *     caller, so a call under the threshold has only hidden callees).
 * The first five are decided at the entry (sel_enter()), the threshold at
 * the exit (sel_exit()). Application events and gaps are selected by
 * --tid and -r only (sel_event()).
 *
 * Commands that sum times attribute the time of a hidden call to the
 * innermost shown call around it: a shown call's "self" is its duration
 * minus the durations of its shown callees (struct sel_frame.shown_children),
 * so with no selectors it is the usual self time, and totals never lose
 * time below a shown call.
 *
 * State: per thread (by struct an_thread.index) one struct sel_frame per
 * open call; nothing per record. struct an_thread.uptr is left to the
 * command.
 *
 * Contract: single-threaded tool code, called from struct an_ops callbacks.
 */
#ifndef FDRTRACE_TOOL_SELECT_H
#define FDRTRACE_TOOL_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"

#define SEL_MAX_PATTERNS 32

/**
 * struct sel_opts - the selectors as given on the command line (cli.c)
 * @only, @n_only: -F globs (fnmatch(3)), kept as pointers into argv
 * @hide, @n_hide: -N globs
 * @max_depth: -D, 0 for no limit
 * @threshold_ns: -t, 0 for none
 * @have_tid, @tid: --tid
 * @have_range, @from_s, @to_s: -r A~B; @to_s 0 leaves the end open
 */
struct sel_opts {
	const char *only[SEL_MAX_PATTERNS];
	unsigned n_only;
	const char *hide[SEL_MAX_PATTERNS];
	unsigned n_hide;
	uint32_t max_depth;
	uint64_t threshold_ns;
	bool have_tid;
	int32_t tid;
	bool have_range;
	double from_s, to_s;
};

/**
 * struct sel_frame - what the selection knows of one open call
 * @shown: passes every selector but the threshold (decided at the exit)
 * @level: number of shown calls open around it (0: outermost shown)
 * @up: 1 + the stack index of the innermost shown call around it; 0: none
 * @shown_children: ticks of its completed shown callees
 * @user: for the command (replay: opened; stack: its tree node; ...)
 */
struct sel_frame {
	bool shown;
	uint32_t level;
	uint32_t up;
	uint64_t shown_children;
	uint64_t user;
};

struct sel_thread {
	struct sel_frame *frames;
	uint32_t cap;
	uint32_t filter_depth;	/* depth of the outermost open -F match, 0: none */
	uint32_t hide_depth;	/* depth of the outermost open -N match, 0: none */
};

/**
 * struct sel - the selection state of one analysis run
 * @o: the selectors (not copied; must outlive the run)
 * @oom: set when state could not be allocated (calls are then hidden)
 * The rest is the module's.
 */
struct sel {
	const struct sel_opts *o;
	struct sel_thread *threads;
	uint32_t n_threads;
	uint64_t base_tsc;
	bool have_base;
	bool plain;	/* no selector: every call is shown */
	bool inline_ok;	/* plain, and the first call seen: sel_enter() inline */
	bool oom;
};

/**
 * sel_init - start a selection
 * @s: the state
 * @o: the selectors
 */
void sel_init(struct sel *s, const struct sel_opts *o);

/**
 * sel_fini - free the selection state
 * @s: the state
 */
void sel_fini(struct sel *s);

/**
 * sel_any - are any selectors given?
 * @o: the selectors
 *
 * Return: true when some call or event may be hidden.
 */
bool sel_any(const struct sel_opts *o);

/**
 * sel_enter - decide a call at its entry
 * @s: the state
 * @a: the analysis (names, clock)
 * @t: the thread; the call is t->stack[t->depth - 1]
 *
 * Call from struct an_ops.enter, for every call.
 *
 * Return: the call's state, or NULL when out of memory (@s->oom set).
 */
struct sel_frame *sel_enter_slow(struct sel *s, struct analysis *a, struct an_thread *t);

static inline struct sel_frame *sel_enter(struct sel *s, struct analysis *a,
					  struct an_thread *t)
{
	struct sel_thread *st;
	struct sel_frame *fr;
	uint32_t d = t->depth;

	/*
	 * No selector, and room: shown, and so is every call around it: its
	 * level is its depth - 1, its caller is the innermost shown call.
	 */
	if (__builtin_expect(!s->inline_ok || t->index >= s->n_threads, 0))
		return sel_enter_slow(s, a, t);
	st = &s->threads[t->index];
	if (__builtin_expect(d > st->cap, 0))
		return sel_enter_slow(s, a, t);
	fr = &st->frames[d - 1];
	fr->user = 0;
	fr->shown_children = 0;
	fr->shown = true;
	fr->level = d - 1;
	fr->up = d - 1;
	return fr;
}

/**
 * sel_frame - the state of an open call
 * @s: the state
 * @t: the thread
 * @depth: the call's depth (1 for t->stack[0])
 *
 * Inline: every command calls it at each exit.
 *
 * Return: the state, or NULL when sel_enter() could not record it.
 */
static inline struct sel_frame *sel_frame(struct sel *s, const struct an_thread *t,
					  uint32_t depth)
{
	struct sel_thread *st;

	if (t->index >= s->n_threads || !depth)
		return NULL;
	st = &s->threads[t->index];
	return depth <= st->cap ? &st->frames[depth - 1] : NULL;
}

/**
 * sel_exit - decide a call at its exit
 * @s: the state
 * @a: the analysis
 * @t: the thread; the call is t->stack[t->depth - 1]
 * @dur: its duration in ticks (ignored for a partial call)
 *
 * Call from struct an_ops.exit, for every call. A shown call's duration is
 * added to the shown_children of the innermost shown call around it.
 *
 * Return: true when the call is shown: sel_enter() showed it and it lasts
 * at least the threshold (a partial call, whose duration is unknown, passes
 * the threshold).
 */
/**
 * sel_lasts - does a call of @dur ticks last the threshold (-t)?
 * @s: the state
 * @a: the analysis (its clock)
 * @dur: ticks
 *
 * Return: true when it does, or no threshold is given.
 */
bool sel_lasts(const struct sel *s, const struct analysis *a, uint64_t dur);

bool sel_exit_slow(struct sel *s, struct analysis *a, struct an_thread *t, uint64_t dur);

static inline bool sel_exit(struct sel *s, struct analysis *a, struct an_thread *t,
			    uint64_t dur)
{
	struct sel_frame *fr = sel_frame(s, t, t->depth);

	if (!fr || !fr->shown)
		return false;
	if (!s->plain || t->stack[t->depth - 1].partial)
		return sel_exit_slow(s, a, t, dur);
	/* every call is shown: the innermost shown call around it is its caller */
	if (t->depth > 1)
		fr[-1].shown_children += dur;
	return true;
}

/**
 * sel_event - is an event (application event, gap) at @tsc on @t shown?
 * @s: the state
 * @a: the analysis
 * @t: the thread
 * @tsc: its time
 *
 * Return: true when --tid and -r let it through. Before the first call of
 * the trace its time counts as 0.
 */
bool sel_event(struct sel *s, struct analysis *a, const struct an_thread *t, uint64_t tsc);

#endif /* FDRTRACE_TOOL_SELECT_H */
