/* SPDX-License-Identifier: MIT */
/*
 * tui_model.c - the tui command's model: one calling-context tree (graph's
 * approach: the core's nodes with child links, children by total time),
 * copied from each trace's an_run() with want_cct and cct_per_thread,
 * names interned by text (ri_names) so that a run's processes share them;
 * then the trace's analysis is freed. Memory follows distinct call paths
 * and functions, never records. A run has one root per process ("process
 * PID: command line"), each with its threads; a single trace has its
 * threads as roots.
 *
 * Contract: everything here runs on the worker thread (tu_worker()),
 * which publishes its progress in tu_prog's atomics and hands the model
 * over once, with tu_prog.done (release; the view loads it with acquire
 * before its first read of tu). See tui.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"
#include "tui.h"
#include "util.h"

struct tu tu;
struct tu_progress tu_prog;
static struct analysis tu_a;	/* the worker's; large: not on the stack */

static uint32_t tu_add(uint32_t parent, uint32_t name, uint32_t label)
{
	struct tu_node *nd;

	if (tool_grow(&tu.v, &tu.cap, tu.n, sizeof(*tu.v), 1024)) {
		tu.oom = true;
		return TU_NONE;
	}
	nd = &tu.v[tu.n];
	memset(nd, 0, sizeof(*nd));
	nd->parent = parent;
	nd->name = name;
	nd->label = label;
	if (tu.n) {
		nd->depth = tu.v[parent].depth + 1;
		nd->next = tu.v[parent].child;
		tu.v[parent].child = tu.n;
	}
	return tu.n++;
}

static uint32_t tu_label(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static uint32_t tu_label(const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (tool_grow(&tu.labels, &tu.labels_cap, tu.n_labels, sizeof(*tu.labels), 64))
		goto oom;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		goto oom;
	tu.labels[tu.n_labels] = s;
	return tu.n_labels++;
oom:
	tu.oom = true;
	return 0;
}

/* The worker's progress, published every 4096 calls. */
static void tu_enter(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	static uint64_t calls;

	(void)t;
	(void)f;
	if (++calls % 4096 == 0) {
		atomic_store_explicit(&tu_prog.pos, a->win_pos + a->win_len, memory_order_relaxed);
		atomic_store_explicit(&tu_prog.calls, calls, memory_order_relaxed);
	}
}

static const struct an_ops tu_ops = {
	.enter = tu_enter,
};

/* Copy @a's tree under node @base of ours, and its functions' numbers. */
static int tu_take(struct analysis *a, uint32_t base)
{
	uint32_t *m, i;

	for (i = 0; i < a->n_fns; i++) {
		struct an_func *f = a->fns[i];
		const char *nm = an_func_name(a, f);
		uint32_t j = ri_names_get(&tu.names, nm, strlen(nm));
		struct tu_fn *x;
		uint64_t mn, mx;

		if (j == UINT32_MAX)
			return -ENOMEM;
		if (tool_grow(&tu.fns, &tu.fns_cap, j, sizeof(*tu.fns), 256))
			return -ENOMEM;
		/* the function's name index, until an_fini() (which frees a pointer there) */
		f->uptr = (void *)(uintptr_t)(j + 1);
		if (!f->tally.calls)
			continue;
		x = &tu.fns[j];
		mn = ri_ticks(&tu.ri, a->freq, f->tally.min);
		mx = ri_ticks(&tu.ri, a->freq, f->tally.max);
		if (!x->calls || mn < x->min)
			x->min = mn;
		if (mx > x->max)
			x->max = mx;
		x->calls += f->tally.calls;
		x->total += ri_ticks(&tu.ri, a->freq, f->tally.total);
		x->self += ri_ticks(&tu.ri, a->freq, f->tally.self);
	}
	m = calloc(a->n_nodes ? a->n_nodes : 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m[0] = base;
	for (i = 1; i < a->n_nodes; i++) {
		const struct an_node *nd = &a->nodes[i];
		uint32_t k;

		if (nd->fn) {
			k = tu_add(m[nd->parent], (uint32_t)(uintptr_t)nd->fn->uptr - 1, 0);
		} else {
			char b[64];

			an_thread_label(nd->thread, b, sizeof(b));
			if (nd->thread->name && nd->thread->name[0])
				k = tu_add(m[nd->parent], TU_NONE,
					   tu_label("thread %" PRId32 " (%s)", nd->thread->tid, b));
			else
				k = tu_add(m[nd->parent], TU_NONE, tu_label("%s", b));
		}
		if (k == TU_NONE)
			break;
		tu.v[k].calls = nd->calls;
		tu.v[k].incl = ri_ticks(&tu.ri, a->freq, nd->incl);
		tu.v[k].self = ri_ticks(&tu.ri, a->freq, nd->self);
		m[i] = k;
	}
	free(m);
	for (i = 0; i < a->n_fns; i++)
		a->fns[i]->uptr = NULL;
	return tu.oom ? -ENOMEM : 0;
}

static int tu_sort_cmp(const void *x, const void *y)
{
	uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
	uint64_t a = tu.v[p].incl, b = tu.v[q].incl;

	if (a != b)
		return a > b ? -1 : 1;
	return p < q ? -1 : p > q;
}

/*
 * Labels' totals (their children's), children by total time (as graph's),
 * the preorder of the whole tree. Return: 0, or -ENOMEM.
 */
static int tu_finish(void)
{
	uint32_t *kids = NULL, cap = 0, i, n, sp;

	/* a label's children come after it: one pass backwards */
	for (i = tu.n; i-- > 1;) {
		struct tu_node *p = &tu.v[tu.v[i].parent];

		if (p->name == TU_NONE) {
			p->incl += tu.v[i].incl;
			p->calls += tu.v[i].calls;
		}
	}
	for (i = 0; i < tu.n; i++) {
		uint32_t c;

		n = 0;
		for (c = tu.v[i].child; c; c = tu.v[c].next) {
			if (tool_grow(&kids, &cap, n, sizeof(*kids), 64))
				goto oom;
			kids[n++] = c;
		}
		if (n < 2)
			continue;
		qsort(kids, n, sizeof(*kids), tu_sort_cmp);
		tu.v[i].child = kids[0];
		for (uint32_t k = 0; k < n; k++)
			tu.v[kids[k]].next = k + 1 < n ? kids[k + 1] : 0;
	}
	free(kids);
	kids = NULL;
	tu.ord = malloc(tu.n * sizeof(*tu.ord));
	tu.pos = malloc(tu.n * sizeof(*tu.pos));
	tu.vis = malloc(tu.n * sizeof(*tu.vis));
	kids = malloc(tu.n * sizeof(*kids));	/* the walk's stack */
	if (!tu.ord || !tu.pos || !tu.vis || !kids)
		goto oom;
	/* preorder without recursion: push children in reverse */
	n = 0;
	sp = 0;
	kids[sp++] = 0;
	while (sp) {
		uint32_t x = kids[--sp], k = 0, c;

		tu.pos[x] = n;
		tu.ord[n++] = x;
		for (c = tu.v[x].child; c; c = tu.v[c].next)
			k++;
		/* the first child on top */
		for (c = tu.v[x].child; c; c = tu.v[c].next)
			kids[sp + --k] = c;
		for (c = tu.v[x].child; c; c = tu.v[c].next)
			sp++;
	}
	free(kids);
	return 0;
oom:
	free(kids);
	return -ENOMEM;
}

void *tu_worker(void *arg)
{
	uint32_t k, read = 0;
	uint32_t *proc;	/* each trace's process node (a run) */

	(void)arg;
	proc = calloc(tu.ri.n ? tu.ri.n : 1, sizeof(*proc));
	if (!proc || tu_add(0, TU_NONE, 0) != 0) {	/* the root */
		tu.oom = true;
		goto done;
	}
	for (k = 0; k < tu.ri.n; k++) {
		const struct ri_trace *t = &tu.ri.t[k];
		struct stat st;
		uint32_t base;
		int rc;

		if (!t->selected)
			continue;
		atomic_store_explicit(&tu_prog.pos, 0, memory_order_relaxed);
		atomic_store_explicit(&tu_prog.size, stat(t->path, &st) ? 0 : (uint64_t)st.st_size,
				      memory_order_relaxed);
		atomic_store_explicit(&tu_prog.trace, k, memory_order_relaxed);
		if (!tu.ri.run) {
			base = 0;
		} else if (t->origin == RI_EXEC && proc[t->parent]) {
			base = proc[t->parent];	/* an exec: the same process */
		} else {
			char *nm = ri_process_name(&tu.ri, k);

			base = tu_add(0, TU_NONE, tu_label("process %d: %s", (int)t->pid,
							   nm ? nm : ri_name(t)));
			free(nm);
			if (base == TU_NONE)
				break;
		}
		proc[k] = base;
		memset(&tu_a, 0, sizeof(tu_a));
		cli_apply(tu.cl, &tu_a);
		tu_a.want_cct = true;
		tu_a.cct_per_thread = true;
		tu_a.ops = &tu_ops;
		if (an_run(&tu_a, t->path)) {
			tu.status = EXIT_FAIL;
			an_fini(&tu_a);
			continue;
		}
		read++;
		if (!tu.ri.run)
			tu.fa.freq = tu_a.freq;
		rc = tu_take(&tu_a, base);
		an_summary(&tu_a, "tui");
		an_fini(&tu_a);
		if (rc) {
			tu.oom = true;
			break;
		}
	}
	ri_say_read(&tu.ri, tu.cl->quiet, read);
done:
	free(proc);
	if (tu.oom || tu_finish()) {
		tool_err("out of memory");
		tu.oom = true;
	}
	atomic_store_explicit(&tu_prog.done, true, memory_order_release);
	return NULL;
}
