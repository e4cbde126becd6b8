/* SPDX-License-Identifier: MIT */
/*
 * select.c - the selectors of the analysis commands (see select.h).
 *
 * Contract: single-threaded; memory is one struct sel_frame per open call
 * per thread, grown by doubling.
 */
#include "select.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

void sel_init(struct sel *s, const struct sel_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->plain = !sel_any(o);
}

void sel_fini(struct sel *s)
{
	uint32_t i;

	for (i = 0; i < s->n_threads; i++)
		free(s->threads[i].frames);
	free(s->threads);
	s->threads = NULL;
	s->n_threads = 0;
}

bool sel_any(const struct sel_opts *o)
{
	return o->n_only || o->n_hide || o->max_depth || o->threshold_ns || o->have_tid ||
	       o->have_range;
}

static bool sel_match(const char *const *pats, unsigned n, const char *name)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (fnmatch(pats[i], name, 0) == 0)
			return true;
	return false;
}

static struct sel_thread *sel_thread(struct sel *s, const struct an_thread *t)
{
	if (t->index >= s->n_threads) {
		uint32_t n = s->n_threads ? s->n_threads : 16;
		struct sel_thread *p;

		while (n <= t->index)
			n *= 2;
		p = realloc(s->threads, n * sizeof(*p));
		if (!p) {
			s->oom = true;
			return NULL;
		}
		memset(p + s->n_threads, 0, (n - s->n_threads) * sizeof(*p));
		s->threads = p;
		s->n_threads = n;
	}
	return &s->threads[t->index];
}

static double sel_sec(const struct analysis *a, const struct sel *s, uint64_t tsc)
{
	return an_seconds(a, tsc >= s->base_tsc ? tsc - s->base_tsc : 0);
}

static bool sel_in_range(const struct sel_opts *o, double at)
{
	return at >= o->from_s && (o->to_s <= 0 || at <= o->to_s);
}

struct sel_frame *sel_enter_slow(struct sel *s, struct analysis *a, struct an_thread *t)
{
	const struct sel_opts *o = s->o;
	const struct an_frame *f = &t->stack[t->depth - 1];
	struct sel_thread *st = sel_thread(s, t);
	uint32_t d = t->depth;	/* 1 for the outermost */
	struct sel_frame *fr, *parent;

	if (!st)
		return NULL;
	if (!s->have_base) {
		s->base_tsc = f->tsc;
		s->have_base = true;
		s->inline_ok = s->plain;
	}
	if (d > st->cap) {
		uint32_t cap = st->cap ? st->cap * 2 : 4;	/* 128 bytes a thread to start */
		struct sel_frame *n;

		while (cap < d)
			cap *= 2;
		n = realloc(st->frames, cap * sizeof(*n));
		if (!n) {
			s->oom = true;
			return NULL;
		}
		st->frames = n;
		st->cap = cap;
	}
	/* A region whose opening call has ended no longer counts. */
	if (st->filter_depth >= d)
		st->filter_depth = 0;
	if (st->hide_depth >= d)
		st->hide_depth = 0;
	if (o->n_only || o->n_hide) {
		const char *name = an_func_name(a, f->fn);

		if (o->n_only && !st->filter_depth && sel_match(o->only, o->n_only, name))
			st->filter_depth = d;
		if (o->n_hide && !st->hide_depth && sel_match(o->hide, o->n_hide, name))
			st->hide_depth = d;
	}
	fr = &st->frames[d - 1];
	parent = d > 1 ? &st->frames[d - 2] : NULL;
	fr->user = 0;
	fr->shown_children = 0;
	if (parent) {
		fr->level = parent->level + (parent->shown ? 1 : 0);
		fr->up = parent->shown ? d - 1 : parent->up;
	} else {
		fr->level = 0;
		fr->up = 0;
	}
	fr->shown = !st->hide_depth && (!o->n_only || st->filter_depth) &&
		    (!o->have_tid || o->tid == t->tid);
	if (fr->shown && o->max_depth && fr->level >= o->max_depth)
		fr->shown = false;
	if (fr->shown && o->have_range && !sel_in_range(o, sel_sec(a, s, f->tsc)))
		fr->shown = false;
	return fr;
}

bool sel_lasts(const struct sel *s, const struct analysis *a, uint64_t dur)
{
	double ns;

	if (!s->o->threshold_ns)
		return true;
	ns = a->freq ? (double)dur * 1e9 / (double)a->freq : (double)dur;
	return ns >= (double)s->o->threshold_ns;
}

bool sel_exit_slow(struct sel *s, struct analysis *a, struct an_thread *t, uint64_t dur)
{
	const struct an_frame *f = &t->stack[t->depth - 1];
	struct sel_frame *fr = sel_frame(s, t, t->depth);
	struct sel_thread *st;

	if (!fr || !fr->shown)
		return false;
	if (f->partial)
		return true;
	if (!sel_lasts(s, a, dur))
		return false;
	st = &s->threads[t->index];
	if (fr->up)
		st->frames[fr->up - 1].shown_children += dur;
	return true;
}

bool sel_event(struct sel *s, struct analysis *a, const struct an_thread *t, uint64_t tsc)
{
	const struct sel_opts *o = s->o;

	if (o->have_tid && o->tid != t->tid)
		return false;
	if (o->have_range && !sel_in_range(o, s->have_base ? sel_sec(a, s, tsc) : 0))
		return false;
	return true;
}
