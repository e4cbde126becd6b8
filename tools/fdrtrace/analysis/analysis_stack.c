/* SPDX-License-Identifier: MIT */
/*
 * analysis_stack.c - the analysis' threads and their calls: the table of
 * threads by id, the calling-context tree's nodes, and the slow part of
 * the call-stack machine (the per-id counts of open calls on a deep stack,
 * calls forgotten). The fast part, a record's push or pop, is inline in
 * analysis_stack.h.
 *
 * Contract: single-threaded tool code. Allocates per thread, stack frame
 * and calling-context node; never per record.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_stack.h"

/* ------------------------------------------------------------------ */
/* Threads                                                             */
/* ------------------------------------------------------------------ */

/* Rebuild the tid hash (open addressing, load <= 1/2) at twice the size. */
static int an_thread_hash_grow(struct analysis *a)
{
	uint32_t cap = a->thread_hash_cap ? a->thread_hash_cap * 2 : 64, i, j;
	struct an_thread **h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->n_threads; i++) {
		j = an_hash32((uint32_t)a->threads[i]->tid) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = a->threads[i];
	}
	free(a->thread_hash);
	a->thread_hash = h;
	a->thread_hash_cap = cap;
	return 0;
}

struct an_thread *an_thread_get(struct analysis *a, int32_t tid)
{
	struct an_thread *t;
	uint32_t j;

	if (a->cur && a->cur->tid == tid)
		return a->cur;
	if (a->thread_hash_cap) {
		j = an_hash32((uint32_t)tid) & (a->thread_hash_cap - 1);
		while ((t = a->thread_hash[j])) {
			if (t->tid == tid)
				return t;
			j = (j + 1) & (a->thread_hash_cap - 1);
		}
	}
	if ((a->n_threads + 1) * 2 > a->thread_hash_cap && an_thread_hash_grow(a))
		return NULL;
	if (a->n_threads == a->threads_cap) {
		uint32_t cap = a->threads_cap ? a->threads_cap * 2 : 16;
		struct an_thread **n = realloc(a->threads, cap * sizeof(*n));

		if (!n)
			return NULL;
		a->threads = n;
		a->threads_cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->index = a->n_threads;
	a->threads[a->n_threads++] = t;
	j = an_hash32((uint32_t)tid) & (a->thread_hash_cap - 1);
	while (a->thread_hash[j])
		j = (j + 1) & (a->thread_hash_cap - 1);
	a->thread_hash[j] = t;
	if (a->want_cct && a->cct_per_thread)
		t->root = an_node_child(a, 0, NULL, t);
	return t;
}

const char *an_thread_label(const struct an_thread *t, char *buf, size_t cap)
{
	if (t->name && t->name[0])
		snprintf(buf, cap, "%s", t->name);
	else
		snprintf(buf, cap, "thread %" PRId32, t->tid);
	return buf;
}

/* ------------------------------------------------------------------ */
/* Calling-context tree                                                */
/* ------------------------------------------------------------------ */

static uint64_t an_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int an_node_hash_grow(struct analysis *a)
{
	uint32_t cap = a->node_hash_cap ? a->node_hash_cap * 2 : 1024, i;
	uint64_t *k = calloc(cap, sizeof(*k));
	uint32_t *v = calloc(cap, sizeof(*v));

	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < a->node_hash_cap; i++) {
		uint32_t j;

		if (!a->node_hash[i])
			continue;
		j = (uint32_t)an_hash64(a->node_hash[i]) & (cap - 1);
		while (k[j])
			j = (j + 1) & (cap - 1);
		k[j] = a->node_hash[i];
		v[j] = a->node_hash_val[i];
	}
	free(a->node_hash);
	free(a->node_hash_val);
	a->node_hash = k;
	a->node_hash_val = v;
	a->node_hash_cap = cap;
	return 0;
}

uint32_t an_node_child(struct analysis *a, uint32_t parent, struct an_func *fn,
			      struct an_thread *thread)
{
	/* Function ids have 28 bits: thread roots use keys above them. */
	uint64_t key = ((uint64_t)parent << 32 |
			(fn ? fn->id : (1u << FDRTRACE_FUNC_ID_BITS) + thread->index)) + 1;
	uint32_t j, n;

	if (!a->n_nodes) {
		a->nodes = calloc(256, sizeof(*a->nodes));
		if (!a->nodes)
			return 0;
		a->nodes_cap = 256;
		a->n_nodes = 1;	/* the root */
	}
	if (a->node_hash_cap) {
		j = (uint32_t)an_hash64(key) & (a->node_hash_cap - 1);
		while (a->node_hash[j]) {
			if (a->node_hash[j] == key)
				return a->node_hash_val[j];
			j = (j + 1) & (a->node_hash_cap - 1);
		}
	}
	if ((a->n_nodes + 1) * 2 > a->node_hash_cap && an_node_hash_grow(a))
		return 0;
	if (a->n_nodes == a->nodes_cap) {
		struct an_node *nn = realloc(a->nodes, 2 * a->nodes_cap * sizeof(*nn));

		if (!nn)
			return 0;
		a->nodes = nn;
		a->nodes_cap *= 2;
	}
	n = a->n_nodes++;
	memset(&a->nodes[n], 0, sizeof(a->nodes[n]));
	a->nodes[n].parent = parent;
	a->nodes[n].depth = parent ? a->nodes[parent].depth + 1 : 1;
	a->nodes[n].fn = fn;
	a->nodes[n].thread = fn ? NULL : thread;
	j = (uint32_t)an_hash64(key) & (a->node_hash_cap - 1);
	while (a->node_hash[j])
		j = (j + 1) & (a->node_hash_cap - 1);
	a->node_hash[j] = key;
	a->node_hash_val[j] = n;
	return n;
}

/* ------------------------------------------------------------------ */
/* Open calls per function id, on a deep stack                         */
/* ------------------------------------------------------------------ */

/*
 * An exit whose id is not the top frame's is looked for down the stack.
 * On a deep stack, exits of ids that are not on it at all (damaged or
 * made-up traces: 100,000 nested entries then as many other exits took
 * 5 s, growing with the square of the count) would each walk all of it;
 * so past AN_WALK frames a thread counts its open frames per id, and an
 * exit whose id has none is unmatched at once. An exit that is found
 * closes every frame it walked past, so those walks add up to the frames
 * pushed. The counts are kept while the stack stays deeper than
 * AN_WALK / 2.
 */
#define AN_WALK 64u

static struct an_open *an_open_slot(struct an_thread *t, uint32_t id)
{
	uint32_t j = (id * 0x9e3779b1u) & (t->open_cap - 1);

	while (t->open[j].key && t->open[j].key != id + 1)
		j = (j + 1) & (t->open_cap - 1);
	return &t->open[j];
}

/* Count the stack's frames afresh, in a table of room for twice the depth. */
static bool an_open_build(struct an_thread *t)
{
	uint32_t cap = 64;

	while (cap < 4 * t->depth)
		cap *= 2;
	free(t->open);
	t->open = calloc(cap, sizeof(*t->open));
	if (!t->open)
		return false;
	t->open_cap = cap;
	t->open_used = 0;
	for (uint32_t i = 0; i < t->depth; i++) {
		struct an_open *o = an_open_slot(t, t->stack[i].id);

		if (!o->key) {
			o->key = t->stack[i].id + 1;
			t->open_used++;
		}
		o->count++;
	}
	return true;
}

void an_open_forget(struct an_thread *t)
{
	free(t->open);
	t->open = NULL;
	t->open_cap = t->open_used = 0;
}

/* A frame of @id pushed (+1) or popped (-1), while the counts are kept. */
void an_open_note(struct an_thread *t, uint32_t id, int delta)
{
	struct an_open *o;

	if (delta < 0 && t->depth <= AN_WALK / 2) {
		an_open_forget(t);	/* shallow again: the walk is short */
		return;
	}
	o = an_open_slot(t, id);
	if (!o->key) {
		/* ids with no frame left keep their slot: rebuild when half full */
		if ((t->open_used + 1) * 2 > t->open_cap) {
			if (!an_open_build(t))
				an_open_forget(t);
			return;	/* the rebuild counted the stack as it is */
		}
		o->key = id + 1;
		t->open_used++;
	}
	o->count += (uint32_t)delta;
}

/* Frames of @id open on @t; UINT32_MAX when not known (walk then). */
uint32_t an_open_count(struct an_thread *t, uint32_t id)
{
	if (t->depth <= AN_WALK || (!t->open && !an_open_build(t)))
		return UINT32_MAX;
	return an_open_slot(t, id)->count;
}

/*
 * Is a call of @id open on @t (before the one being pushed)? Asked only
 * when another thread has calls of its function open too.
 */
bool an_open_on(struct an_thread *t, uint32_t id)
{
	uint32_t n = an_open_count(t, id), i;

	if (n != UINT32_MAX)
		return n != 0;
	for (i = 0; i < t->depth; i++)
		if (t->stack[i].id == id)
			return true;
	return false;
}

/* Forget the calls above @depth, whose exits were lost (an_ops.dropped). */
void an_forget(struct analysis *a, struct an_thread *t, uint32_t depth)
{
	while (t->depth > depth) {
		if (a->ops && a->ops->dropped)
			a->ops->dropped(a, t, &t->stack[t->depth - 1]);
		an_open_leave(&t->stack[t->depth - 1]);
		t->depth--;
	}
	an_open_forget(t);	/* made again if needed */
	t->over = 0;	/* counted when entered; their ends are lost too */
}
