/* SPDX-License-Identifier: MIT */
/*
 * cmd_graph.c - "fdrtrace graph FILE [FUNC]": the call graph, as text (a
 * tree, in the manner of uftrace graph) or in Graphviz DOT.
 *
 * Built, as stack's, from a calling-context tree of the calls the
 * selectors show (one node per distinct path of shown calls, in the
 * analysis core's node table): memory grows with distinct call paths, not
 * with records.
 *
 * Text, without FUNC: the tree from the roots, the calls of all threads
 * merged, each node with its total and self time and its calls, children
 * by total time. With FUNC: its backtraces (each distinct chain of callers
 * that led to an outermost call of it, with its calls and time), then its
 * callee tree: the subtrees of its outermost calls merged by path (a call
 * of FUNC inside another is in that one's subtree, counted once).
 *
 * DOT (--format dot): a vertex per function (calls, self time), an edge
 * per caller and callee (calls, inclusive time): the nodes summed by
 * (parent function, function).
 *
 * A tree deeper than GR_INDENT_MAX levels stops indenting and says its
 * level, so that the output stays in proportion to the tree.
 *
 * Contract: single-threaded.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"
#include "run.h"
#include "util.h"

#define GR_INDENT_MAX 100u

struct gr {
	struct sel sel;
	bool dot;
};

struct gr_edge {
	uint32_t from, to;	/* function ids; from 0: the thread roots */
	uint64_t calls, ticks;
};

/* A node of a printed tree: the core's nodes, or the merged tree of FUNC. */
struct gr_node {
	struct an_func *fn;
	uint64_t calls, incl, self;
	uint32_t child, next;	/* first child, next sibling; 0: none */
};

struct gr_tree {
	struct gr_node *v;	/* v[0]: the root */
	uint32_t n, cap;
};

static int gr_option(struct cli *cl, int c, const char *arg)
{
	struct gr *g = cl->ctx;

	if (c != 'f')
		return 0;
	if (!strcmp(arg, "dot"))
		g->dot = true;
	else if (!strcmp(arg, "text"))
		g->dot = false;
	else
		return tool_usage_err("graph", "format is text or dot, not '%s'", arg);
	return 0;
}

static const struct option gr_longopts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_cmd graph_cli = {
	.name = "graph",
	.usage =
	"Usage: fdrtrace graph [options] [FILE|DIR...] [FUNC]\n"
	"\n"
	"Print the call graph of the trace FILE ('-': standard input). As text (the\n"
	"default): without FUNC, the call tree from the roots, every thread's calls\n"
	"merged, each node with its total and self time and its number of calls;\n"
	"with FUNC (a name as printed, or a glob(7) pattern), the backtraces of\n"
	"FUNC (each chain of callers that led to it, with calls and time) and its\n"
	"callee tree. --format dot: a vertex per function (calls, self time), an\n"
	"edge per caller and callee (calls, inclusive time); render with\n"
	"'dot -Tsvg'. replay's selectors keep the calls replay would show. The\n"
	"application's custom and typed events are not in the graph: a line on\n"
	"stderr counts them (see replay, convert).\n"
	"\n"
	"A run (a directory of traces, one per process, or several FILEs): as text,\n"
	"each process's tree after a header naming it; in DOT, one graph of every\n"
	"process, functions merged by name. --pid selects processes. With several\n"
	"arguments, the last is FUNC when no file or directory has its name; a\n"
	"single FUNC reads the run or the newest trace here, as no FILE does.\n",
	.options =
	"  -f, --format FMT      text (default) or dot\n",
	.optstring = "f:",
	.longopts = gr_longopts,
	.groups = CLI_QUIET | CLI_SELECT | CLI_RUN,
	.min_files = 1,
	.max_files = CLI_MAX_FILES,
	.option = gr_option,
};

/* A shown call gets its tree node at its entry (as stack's). */
static void gr_enter(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct gr *g = a->ctx;
	struct sel_frame *fr = sel_enter(&g->sel, a, t), *up;
	uint32_t parent = 0;

	if (!fr || !fr->shown)
		return;
	if (fr->up) {
		up = sel_frame(&g->sel, t, fr->up);
		parent = up ? (uint32_t)up->user : 0;
	}
	fr->user = an_node_child(a, parent, f->fn, t);
}

static void gr_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		    uint64_t end, uint64_t dur, enum an_end how)
{
	struct gr *g = a->ctx;
	struct sel_frame *fr = sel_frame(&g->sel, t, t->depth);
	struct an_node *n;

	(void)end;
	(void)how;
	if (!sel_exit(&g->sel, a, t, dur) || f->partial || !fr || !fr->user)
		return;
	n = &a->nodes[fr->user];
	n->calls++;
	n->incl += dur;
	if (!f->holed)	/* records lost inside it: its self time is not known */
		n->self += dur > fr->shown_children ? dur - fr->shown_children : 0;
}

static const struct an_ops gr_ops = {
	.enter = gr_enter,
	.exit = gr_exit,
};

/* ------------------------------------------------------------------ */
/* DOT                                                                  */
/* ------------------------------------------------------------------ */

static int gr_cmp(const void *x, const void *y)
{
	const struct gr_edge *p = x, *q = y;

	if (p->from != q->from)
		return p->from < q->from ? -1 : 1;
	return p->to < q->to ? -1 : p->to > q->to;
}

/* A name inside a DOT double-quoted string. */
static void gr_dot_name(const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
}

static void gr_dot_time(const struct analysis *a, uint64_t ticks)
{
	double s = an_seconds(a, ticks);

	if (!a->freq)
		printf("%" PRIu64 " ticks", ticks);
	else if (s < 1e-3)
		printf("%.3f us", s * 1e6);
	else if (s < 1)
		printf("%.3f ms", s * 1e3);
	else
		printf("%.3f s", s);
}

/* The slot of @fn in an open-addressing table of @cap (a power of two) function pointers. */
static uint32_t gr_slot(struct an_func **keys, uint32_t cap, const struct an_func *fn)
{
	uint32_t j = (uint32_t)(((uintptr_t)fn >> 4) * 0x9e3779b1u) & (cap - 1);

	while (keys[j] && keys[j] != fn)
		j = (j + 1) & (cap - 1);
	return j;
}

static int gr_dot(struct analysis *a)
{
	struct gr_edge *e = NULL;
	struct an_func **keys = NULL;
	uint64_t *calls = NULL, *self = NULL;
	uint32_t i, n = 0, m = 0, cap = 16;

	while (cap < 2 * (a->n_fns + 1))
		cap *= 2;
	if (a->n_nodes > 1) {
		e = calloc(a->n_nodes, sizeof(*e));
		keys = calloc(cap, sizeof(*keys));
		calls = calloc(cap, sizeof(*calls));
		self = calloc(cap, sizeof(*self));
		if (!e || !keys || !calls || !self) {
			free(e);
			free(keys);
			free(calls);
			free(self);
			return -ENOMEM;
		}
	}
	for (i = 1; i < a->n_nodes; i++) {
		const struct an_node *nd = &a->nodes[i];

		if (!nd->fn || !nd->calls)
			continue;
		e[n].from = nd->parent && a->nodes[nd->parent].fn ? a->nodes[nd->parent].fn->id : 0;
		e[n].to = nd->fn->id;
		e[n].calls = nd->calls;
		e[n].ticks = nd->incl;
		n++;
	}
	/* a function's calls and self time: the sums of its nodes (of the shown calls) */
	for (i = 1; i < a->n_nodes && keys; i++) {
		const struct an_node *nd = &a->nodes[i];
		uint32_t j;

		if (!nd->fn)
			continue;
		j = gr_slot(keys, cap, nd->fn);
		keys[j] = nd->fn;
		calls[j] += nd->calls;
		self[j] += nd->self;
	}
	if (n > 1)	/* e is NULL when no call completed */
		qsort(e, n, sizeof(*e), gr_cmp);
	for (i = 0; i < n; i++) {	/* merge equal edges in place */
		if (m && e[m - 1].from == e[i].from && e[m - 1].to == e[i].to) {
			e[m - 1].calls += e[i].calls;
			e[m - 1].ticks += e[i].ticks;
		} else {
			e[m++] = e[i];
		}
	}
	puts("digraph calls {");
	puts("\tnode [shape=box];");
	for (i = 0; keys && i < a->n_fns; i++) {
		struct an_func *f = a->fns[i];
		uint32_t j = gr_slot(keys, cap, f);

		if (!keys[j] || !calls[j])
			continue;
		printf("\tf%" PRIu32 " [label=\"", f->id);
		gr_dot_name(an_func_name(a, f));
		printf("\\n%" PRIu64 " call%s, self ", calls[j], calls[j] == 1 ? "" : "s");
		gr_dot_time(a, self[j]);
		puts("\"];");
	}
	for (i = 0; i < m; i++) {
		if (!e[i].from)
			continue;
		printf("\tf%" PRIu32 " -> f%" PRIu32 " [label=\"%" PRIu64 " call%s\\n", e[i].from,
		       e[i].to, e[i].calls, e[i].calls == 1 ? "" : "s");
		gr_dot_time(a, e[i].ticks);
		puts("\"];");
	}
	puts("}");
	free(e);
	free(keys);
	free(calls);
	free(self);
	return 0;
}

/* Sort @e and merge its equal edges; return how many are left. */
static uint32_t gr_edges_merge(struct gr_edge *e, uint32_t n)
{
	uint32_t i, m = 0;

	if (n > 1)
		qsort(e, n, sizeof(*e), gr_cmp);
	for (i = 0; i < n; i++) {
		if (m && e[m - 1].from == e[i].from && e[m - 1].to == e[i].to) {
			e[m - 1].calls += e[i].calls;
			e[m - 1].ticks += e[i].ticks;
		} else {
			e[m++] = e[i];
		}
	}
	return m;
}

/* The vertex numbers kept in the functions' uptr are not memory. */
static void gr_forget(struct analysis *a)
{
	uint32_t i;

	for (i = 0; i < a->n_fns; i++)
		a->fns[i]->uptr = NULL;
}

/* A function of a run's graph: its calls and self time in every process. */
struct gr_vertex {
	uint64_t calls, self;
};

/*
 * graph of a run: vertices are function names (index + 1 in @names),
 * edges merged after each trace, so that memory follows the distinct
 * edges, not the processes.
 */
static int gr_run_dot(const struct cli *cl, struct run_input *ri)
{
	static struct analysis a;	/* large: not on the stack */
	struct ri_names names = { 0 };
	struct gr_vertex *v = NULL;
	struct gr_edge *e = NULL;
	uint32_t v_cap = 0, e_cap = 0, n = 0, i, x, read = 0;
	int status = EXIT_OK;
	struct analysis fa = { .freq = ri->freq };

	for (x = 0; x < ri->n; x++) {
		const struct ri_trace *t = &ri->t[x];

		if (!t->selected)
			continue;
		memset(&a, 0, sizeof(a));
		cli_apply(cl, &a);
		a.want_cct = true;
		if (an_run(&a, t->path)) {
			status = EXIT_FAIL;
			an_fini(&a);
			continue;
		}
		read++;
		for (i = 0; i < a.n_fns; i++) {
			struct an_func *f = a.fns[i];
			const char *nm = an_func_name(&a, f);
			uint32_t j = ri_names_get(&names, nm, strlen(nm));

			if (j == UINT32_MAX)
				goto oom;
			if (tool_grow(&v, &v_cap, j, sizeof(*v), 256))
				goto oom;
			v[j].calls += f->tally.calls;
			v[j].self += ri_ticks(ri, a.freq, f->tally.self);
			/* its vertex, until an_fini() (which frees a pointer there) */
			f->uptr = (void *)(uintptr_t)(j + 1);
		}
		for (i = 1; i < a.n_nodes; i++) {
			const struct an_node *nd = &a.nodes[i];
			const struct an_func *pf;

			if (!nd->fn || !nd->calls)
				continue;
			if (tool_grow(&e, &e_cap, n, sizeof(*e), 1024))
				goto oom;
			pf = nd->parent ? a.nodes[nd->parent].fn : NULL;
			e[n].to = (uint32_t)(uintptr_t)nd->fn->uptr;
			e[n].from = pf ? (uint32_t)(uintptr_t)pf->uptr : 0;
			e[n].calls = nd->calls;
			e[n].ticks = ri_ticks(ri, a.freq, nd->incl);
			n++;
		}
		n = gr_edges_merge(e, n);
		an_summary(&a, "graph");
		an_events_note(&a, "graph");
		gr_forget(&a);
		an_fini(&a);
	}
	puts("digraph calls {");
	puts("\tnode [shape=box];");
	for (i = 0; i < names.n; i++) {
		if (!v[i].calls)
			continue;
		printf("\tf%" PRIu32 " [label=\"", i + 1);
		gr_dot_name(ri_names_str(&names, i));
		printf("\\n%" PRIu64 " call%s, self ", v[i].calls, v[i].calls == 1 ? "" : "s");
		gr_dot_time(&fa, v[i].self);
		puts("\"];");
	}
	for (i = 0; i < n; i++) {
		if (!e[i].from)
			continue;
		printf("\tf%" PRIu32 " -> f%" PRIu32 " [label=\"%" PRIu64 " call%s\\n", e[i].from,
		       e[i].to, e[i].calls, e[i].calls == 1 ? "" : "s");
		gr_dot_time(&fa, e[i].ticks);
		puts("\"];");
	}
	puts("}");
	goto end;
oom:
	tool_err("out of memory");
	gr_forget(&a);
	an_fini(&a);
	status = EXIT_FAIL;
end:
	ri_say_read(ri, cl->quiet, read);
	ri_names_free(&names);
	free(v);
	free(e);
	return status;
}

/* ------------------------------------------------------------------ */
/* Text                                                                 */
/* ------------------------------------------------------------------ */

/* A time in 10 columns: "123.456 us". */
static const char *gr_time(const struct analysis *a, uint64_t ticks, char *buf)
{
	return tool_time10(buf, an_seconds(a, ticks));
}

/* A new node of @tr. Return: its index, UINT32_MAX when out of memory. */
static uint32_t gr_tree_add(struct gr_tree *tr, struct an_func *fn)
{
	if (tool_grow(&tr->v, &tr->cap, tr->n, sizeof(*tr->v), 256))
		return UINT32_MAX;
	memset(&tr->v[tr->n], 0, sizeof(tr->v[0]));
	tr->v[tr->n].fn = fn;
	return tr->n++;
}

/* The core's tree with child links: node i of @a is node i of @tr. */
static int gr_tree_of_nodes(struct analysis *a, struct gr_tree *tr)
{
	for (uint32_t i = 0; i < a->n_nodes; i++) {
		const struct an_node *nd = &a->nodes[i];

		if (gr_tree_add(tr, nd->fn) != i)
			return -ENOMEM;
		tr->v[i].calls = nd->calls;
		tr->v[i].incl = nd->incl;
		tr->v[i].self = nd->self;
	}
	/* backwards, so that children keep the order they were made in */
	for (uint32_t i = a->n_nodes; i-- > 1;) {
		uint32_t p = a->nodes[i].parent;

		tr->v[i].next = tr->v[p].child;
		tr->v[p].child = i;
	}
	return 0;
}

static const struct gr_tree *gr_sort_tree;

/* Children by total time, largest first; ties in the order they were made. */
static int gr_child_cmp(const void *x, const void *y)
{
	uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
	uint64_t a = gr_sort_tree->v[p].incl, b = gr_sort_tree->v[q].incl;

	if (a != b)
		return a > b ? -1 : 1;
	return p < q ? -1 : p > q;
}

/*
 * Sort every node's children by total time, largest first: each list
 * gathered, sorted and linked again (a root with 300,000 children took a
 * list insertion minutes). Return: 0, or -ENOMEM.
 */
static int gr_tree_sort(struct gr_tree *tr)
{
	uint32_t *kids = NULL, cap = 0;

	gr_sort_tree = tr;
	for (uint32_t i = 0; i < tr->n; i++) {
		uint32_t n = 0, c;

		for (c = tr->v[i].child; c; c = tr->v[c].next) {
			if (tool_grow(&kids, &cap, n, sizeof(*kids), 64)) {
				free(kids);
				return -ENOMEM;
			}
			kids[n++] = c;
		}
		if (n < 2)
			continue;
		qsort(kids, n, sizeof(*kids), gr_child_cmp);
		tr->v[i].child = kids[0];
		for (uint32_t k = 0; k < n; k++)
			tr->v[kids[k]].next = k + 1 < n ? kids[k + 1] : 0;
	}
	free(kids);
	return 0;
}

/*
 * Print the tree under @root (not @root itself unless @with_root), one
 * line a node: "TOTAL  SELF  CALLS  +-name", depth-first without recursion.
 */
static int gr_tree_print(struct analysis *a, const struct gr_tree *tr, uint32_t root,
			 bool with_root)
{
	uint32_t *stack = NULL, *level = NULL, n = 0, cap = 0;
	char b1[32], b2[32];

	printf("# %10s  %10s  %10s  FUNCTION\n", "TOTAL TIME", "SELF TIME", "CALLS");
	if (root >= tr->n)
		return 0;	/* no call completed: no tree */
	if (with_root) {
		n = 1;
	} else {
		for (uint32_t c = tr->v[root].child; c; c = tr->v[c].next)
			n++;
	}
	cap = n > 64 ? n : 64;
	stack = malloc(cap * sizeof(*stack));
	level = malloc(cap * sizeof(*level));
	if (!stack || !level)
		goto oom;
	/* push in reverse, so that the first child is printed first */
	if (with_root) {
		stack[0] = root;
		level[0] = 0;
	} else {
		uint32_t k = n;

		for (uint32_t c = tr->v[root].child; c; c = tr->v[c].next) {
			stack[--k] = c;
			level[k] = 0;
		}
	}
	while (n && !tool_stdout_failed()) {
		uint32_t i = stack[--n], lv = level[n], kids = 0, k;
		const struct gr_node *nd = &tr->v[i];

		printf("  %10s  %10s  %10" PRIu64 "  ", gr_time(a, nd->incl, b1),
		       gr_time(a, nd->self, b2), nd->calls);
		for (k = 0; k < lv && k < GR_INDENT_MAX; k++)
			fputs(k + 1 == lv ? "+-" : "| ", stdout);
		if (lv > GR_INDENT_MAX)
			printf("[level %" PRIu32 "] ", lv);
		fputs(nd->fn ? an_func_name(a, nd->fn) : "?", stdout);
		putchar('\n');
		for (uint32_t c = nd->child; c; c = tr->v[c].next)
			kids++;
		if (n + kids > cap) {
			uint32_t nc = cap;
			uint32_t *s2, *l2;

			while (n + kids > nc)
				nc *= 2;
			s2 = realloc(stack, nc * sizeof(*s2));
			if (!s2)
				goto oom;
			stack = s2;
			l2 = realloc(level, nc * sizeof(*l2));
			if (!l2)
				goto oom;
			level = l2;
			cap = nc;
		}
		k = n + kids;
		for (uint32_t c = nd->child; c; c = tr->v[c].next) {
			stack[--k] = c;
			level[k] = lv + 1;
		}
		n += kids;
	}
	free(stack);
	free(level);
	return 0;
oom:
	free(stack);
	free(level);
	return -ENOMEM;
}

/* Is @f the FUNC asked for: its printed name, or a glob(7) pattern matching it? */
static bool gr_is(struct analysis *a, struct an_func *f, const char *func)
{
	const char *name;

	if (!f)
		return false;
	name = an_func_name(a, f);
	return !strcmp(name, func) || !fnmatch(func, name, 0);
}

/* Merge the subtree under core node @from into merged node @to (by function, path by path). */
static int gr_merge(const struct gr_tree *core, uint32_t from, struct gr_tree *m, uint32_t to)
{
	/* an explicit stack of (core node, merged node) pairs */
	uint32_t *st = NULL, n = 0, cap = 0;
	int rc = 0;

	cap = 64;
	st = malloc(2 * cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	st[0] = from;
	st[1] = to;
	n = 1;
	while (n) {
		uint32_t cf, ct;

		n--;
		cf = st[2 * n];
		ct = st[2 * n + 1];
		for (uint32_t c = core->v[cf].child; c; c = core->v[c].next) {
			uint32_t k;

			for (k = m->v[ct].child; k && m->v[k].fn != core->v[c].fn; k = m->v[k].next)
				;
			if (!k) {
				k = gr_tree_add(m, core->v[c].fn);
				if (k == UINT32_MAX) {
					rc = -ENOMEM;
					goto out;
				}
				m->v[k].next = m->v[ct].child;
				m->v[ct].child = k;
			}
			m->v[k].calls += core->v[c].calls;
			m->v[k].incl += core->v[c].incl;
			m->v[k].self += core->v[c].self;
			if (n == cap) {
				uint32_t *s2 = realloc(st, 4 * cap * sizeof(*st));

				if (!s2) {
					rc = -ENOMEM;
					goto out;
				}
				st = s2;
				cap *= 2;
			}
			st[2 * n] = c;
			st[2 * n + 1] = k;
			n++;
		}
	}
out:
	free(st);
	return rc;
}

/* Reading a run: a process without FUNC is no error of its own. */
static bool gr_in_run;

/* A backtrace: an outermost call path of FUNC (core node), for sorting. */
static const struct gr_tree *gr_bt_tree;

static int gr_bt_cmp(const void *x, const void *y)
{
	const struct gr_node *p = &gr_bt_tree->v[*(const uint32_t *)x];
	const struct gr_node *q = &gr_bt_tree->v[*(const uint32_t *)y];

	if (p->incl != q->incl)
		return p->incl > q->incl ? -1 : 1;
	return p->calls > q->calls ? -1 : p->calls < q->calls;
}

/* graph FILE FUNC: FUNC's backtraces, then its callee tree. */
static int gr_func(struct analysis *a, struct gr_tree *core, const char *func)
{
	struct gr_tree m = { 0 };
	uint32_t *bt = NULL, n_bt = 0, i;
	uint32_t *parent = NULL;
	uint8_t *mark = NULL;
	int rc = 0;
	char b1[32];

	/* each node's parent (the core's), and the outermost FUNC nodes */
	parent = calloc(a->n_nodes ? a->n_nodes : 1, sizeof(*parent));
	bt = calloc(a->n_nodes ? a->n_nodes : 1, sizeof(*bt));
	mark = calloc(a->n_nodes ? a->n_nodes : 1, sizeof(*mark));
	if (!parent || !bt || !mark) {
		rc = -ENOMEM;
		goto out;
	}
	/*
	 * parent[i], and whether node i is FUNC (bit 0) or below one (bit 1):
	 * a node's parent is made before it, so one pass in index order
	 */
	for (i = 1; i < a->n_nodes; i++) {
		uint32_t p = a->nodes[i].parent;

		parent[i] = p;
		mark[i] = (uint8_t)((gr_is(a, core->v[i].fn, func) ? 1 : 0) |
				    (p && (mark[p] & 3) ? 2 : 0));
		if (mark[i] == 1 && core->v[i].calls)
			bt[n_bt++] = i;	/* no FUNC above it: an outermost call path */
	}
	if (!n_bt) {
		/* one process of a run: said once for the run */
		if (!gr_in_run)
			fprintf(stderr, "fdrtrace graph: %s: no completed call of '%s' (names as account "
			"prints them, or a glob pattern)\n", a->path, func);
		rc = 1;
		goto out;
	}
	gr_bt_tree = core;
	qsort(bt, n_bt, sizeof(*bt), gr_bt_cmp);
	printf("========== BACKTRACES OF %s ==========\n", func);
	for (i = 0; i < n_bt && !tool_stdout_failed(); i++) {
		uint32_t k = 0;

		printf(" backtrace #%" PRIu32 ": %" PRIu64 " call%s, total %s\n", i,
		       core->v[bt[i]].calls, core->v[bt[i]].calls == 1 ? "" : "s",
		       gr_time(a, core->v[bt[i]].incl, b1));
		for (uint32_t p = bt[i]; p; p = parent[p], k++)
			printf("   [%" PRIu32 "] %s\n", k, an_func_name(a, core->v[p].fn));
	}
	/* the merged callee tree: one root, the subtrees of the outermost calls */
	if (gr_tree_add(&m, NULL) != 0 || gr_tree_add(&m, core->v[bt[0]].fn) != 1) {
		rc = -ENOMEM;
		goto out;
	}
	m.v[0].child = 1;
	for (i = 0; i < n_bt && !rc; i++) {
		m.v[1].calls += core->v[bt[i]].calls;
		m.v[1].incl += core->v[bt[i]].incl;
		m.v[1].self += core->v[bt[i]].self;
		rc = gr_merge(core, bt[i], &m, 1);
	}
	if (rc || (rc = gr_tree_sort(&m)))
		goto out;
	printf("\n========== CALL GRAPH OF %s ==========\n", func);
	rc = gr_tree_print(a, &m, 0, false);
out:
	free(m.v);
	free(parent);
	free(mark);
	free(bt);
	return rc;
}

/* One trace's text graph (with FUNC: its backtraces and callees). Return: 0, 1 or -errno. */
static int gr_text(const struct cli *cl, struct gr *g, const char *path, const char *func)
{
	static struct analysis a;	/* large: not on the stack */
	struct gr_tree core = { 0 };
	int rc;

	memset(&a, 0, sizeof(a));
	cli_apply(cl, &a);
	sel_init(&g->sel, &cl->sel);
	a.ops = &gr_ops;
	a.ctx = g;
	if (an_run(&a, path)) {
		sel_fini(&g->sel);
		an_fini(&a);
		return 1;
	}
	if (g->dot) {
		rc = gr_dot(&a);
	} else {
		rc = gr_tree_of_nodes(&a, &core);
		if (!rc && func) {
			rc = gr_func(&a, &core, func);
		} else if (!rc && !(rc = gr_tree_sort(&core))) {
			printf("========== CALL GRAPH ==========\n");
			rc = gr_tree_print(&a, &core, 0, false);
		}
	}
	if (!rc && g->sel.oom) {
		tool_err("out of memory: some calls are missing");
		rc = 1;
	}
	free(core.v);
	an_summary(&a, "graph");
	an_events_note(&a, "graph");
	sel_fini(&g->sel);
	an_fini(&a);
	return rc;
}

int cmd_graph(int argc, char **argv)
{
	struct gr g = { .dot = false };
	struct run_input ri;
	static char def[256];
	static char *def_files[1];
	const char *func = NULL;
	struct stat st;
	struct cli cl;
	int status = EXIT_OK, rc, n_in;
	uint32_t k, read = 0, found = 0;

	if (!cli_parse(&graph_cli, &g, &cl, argc, argv, &status))
		return status;
	n_in = cl.n_files;
	/* graph FILE FUNC: the last argument names no file */
	if (n_in > 1 && stat(cl.files[n_in - 1], &st) != 0) {
		func = cl.files[n_in - 1];
		n_in--;
	} else if (n_in == 1 && stat(cl.files[0], &st) != 0 &&
		   run_default_input(def, sizeof(def))) {
		/* graph FUNC: the run or the newest trace here, as with no FILE */
		func = cl.files[0];
		def_files[0] = def;
		cl.files = def_files;
		if (!cl.quiet)
			fprintf(stderr, "fdrtrace graph: reading %s (no FILE given)\n", def);
	}
	if (g.dot && func)
		return tool_usage_err("graph", "FUNC is for the text form, not --format dot");
	if (ri_open(&ri, &cl, 0, n_in))
		return EXIT_FAIL;
	gr_in_run = ri.run;
	if (ri.run && g.dot) {
		status = gr_run_dot(&cl, &ri);
		ri_close(&ri);
		if (tool_finish_stdout())
			status = EXIT_FAIL;
		return status;
	}
	for (k = 0; k < ri.n && !tool_stdout_failed(); k++) {
		const struct ri_trace *t = &ri.t[k];

		if (!t->selected)
			continue;
		if (ri.run) {
			printf("%s# ==== process %d: %s  [%s]\n", read ? "\n" : "", (int)t->pid,
			       ri_name(t), t->path);
			fflush(stdout);
		}
		rc = gr_text(&cl, &g, t->path, func);
		if (rc < 0) {
			tool_err("out of memory");
			status = EXIT_FAIL;
		} else if (rc == 1 && (!func || !ri.run)) {
			status = EXIT_FAIL;
		}
		read++;
		found += rc == 0;
	}
	if (func && ri.run && !found) {
		tool_err("no process of the run has a completed call of '%s'", func);
		status = EXIT_FAIL;
	}
	ri_say_read(&ri, cl.quiet, read);
	ri_close(&ri);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
