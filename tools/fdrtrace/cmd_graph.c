/* SPDX-License-Identifier: MIT */
/*
 * cmd_graph.c - "fdrtrace graph FILE": the call graph in Graphviz DOT.
 *
 * Built from the analysis core's calling-context tree: every tree node is
 * one (caller, callee) call path, so summing nodes by (parent function,
 * function) gives the graph's edges with their call counts and inclusive
 * times. Vertices are functions, with their calls and self time. Memory
 * grows with distinct call paths and edges, not with records.
 *
 * Contract: single-threaded.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"
#include "util.h"

struct gr_edge {
	uint32_t from, to;	/* function ids; from 0: the thread roots */
	uint64_t calls, ticks;
};

static int gr_cmp(const void *x, const void *y)
{
	const struct gr_edge *p = x, *q = y;

	if (p->from != q->from)
		return p->from < q->from ? -1 : 1;
	return p->to < q->to ? -1 : p->to > q->to;
}

static const struct cli_cmd graph_cli = {
	.name = "graph",
	.usage =
	"Usage: fdrtrace graph [options] FILE|DIR...\n"
	"\n"
	"Print the call graph of the trace FILE ('-': standard input) in Graphviz DOT:\n"
	"a vertex per function (calls, self time), an edge per caller and callee\n"
	"labelled with the number of calls and their inclusive time. Render with\n"
	"'dot -Tsvg'. The application's custom and typed events are not in the graph:\n"
	"a line on stderr counts them (see replay, convert).\n"
	"\n"
	"A run (a directory of traces, one per process, or several FILEs): one graph\n"
	"of every process, functions merged by name (vertex fN: the Nth name met);\n"
	"--pid selects processes.\n",
	.optstring = "",
	.groups = CLI_QUIET | CLI_RUN,
	.min_files = 1,
	.max_files = CLI_MAX_FILES,
};

/* A name inside a DOT double-quoted string. */
static void gr_name(const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
}

static void gr_time(const struct analysis *a, uint64_t ticks)
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

/* Sort @e and merge its equal edges; return how many are left. */
static uint32_t gr_merge(struct gr_edge *e, uint32_t n)
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
static int gr_run(const struct cli *cl, struct run_input *ri)
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
			if (j >= v_cap) {
				uint32_t cap = v_cap ? v_cap * 2 : 256;
				struct gr_vertex *nv;

				while (cap <= j)
					cap *= 2;
				nv = realloc(v, cap * sizeof(*nv));
				if (!nv)
					goto oom;
				memset(nv + v_cap, 0, (cap - v_cap) * sizeof(*nv));
				v = nv;
				v_cap = cap;
			}
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
			if (n == e_cap) {
				uint32_t cap = e_cap ? e_cap * 2 : 1024;
				struct gr_edge *ne = realloc(e, cap * sizeof(*ne));

				if (!ne)
					goto oom;
				e = ne;
				e_cap = cap;
			}
			pf = nd->parent ? a.nodes[nd->parent].fn : NULL;
			e[n].to = (uint32_t)(uintptr_t)nd->fn->uptr;
			e[n].from = pf ? (uint32_t)(uintptr_t)pf->uptr : 0;
			e[n].calls = nd->calls;
			e[n].ticks = ri_ticks(ri, a.freq, nd->incl);
			n++;
		}
		n = gr_merge(e, n);
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
		gr_name(ri_names_str(&names, i));
		printf("\\n%" PRIu64 " call%s, self ", v[i].calls, v[i].calls == 1 ? "" : "s");
		gr_time(&fa, v[i].self);
		puts("\"];");
	}
	for (i = 0; i < n; i++) {
		if (!e[i].from)
			continue;
		printf("\tf%" PRIu32 " -> f%" PRIu32 " [label=\"%" PRIu64 " call%s\\n", e[i].from,
		       e[i].to, e[i].calls, e[i].calls == 1 ? "" : "s");
		gr_time(&fa, e[i].ticks);
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

int cmd_graph(int argc, char **argv)
{
	struct gr_edge *e = NULL;
	static struct analysis a;	/* large: not on the stack */
	struct run_input ri;
	struct cli cl;
	uint32_t i, n = 0, m = 0;
	int status = EXIT_OK;

	if (!cli_parse(&graph_cli, NULL, &cl, argc, argv, &status))
		return status;
	if (ri_open(&ri, &cl, 0, cl.n_files))
		return EXIT_FAIL;
	if (ri.run) {
		status = gr_run(&cl, &ri);
		ri_close(&ri);
		if (tool_finish_stdout())
			status = EXIT_FAIL;
		return status;
	}
	memset(&a, 0, sizeof(a));
	cli_apply(&cl, &a);
	a.want_cct = true;
	if (an_run(&a, ri.t[0].path)) {
		an_fini(&a);
		ri_close(&ri);
		return EXIT_FAIL;
	}
	if (a.n_nodes > 1) {
		e = calloc(a.n_nodes, sizeof(*e));
		if (!e) {
			tool_err("out of memory");
			an_fini(&a);
			return EXIT_FAIL;
		}
	}
	for (i = 1; i < a.n_nodes; i++) {
		const struct an_node *nd = &a.nodes[i];

		if (!nd->fn || !nd->calls)
			continue;
		e[n].from = nd->parent && a.nodes[nd->parent].fn ? a.nodes[nd->parent].fn->id : 0;
		e[n].to = nd->fn->id;
		e[n].calls = nd->calls;
		e[n].ticks = nd->incl;
		n++;
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
	for (i = 0; i < a.n_fns; i++) {
		struct an_func *f = a.fns[i];

		if (!f->tally.calls)
			continue;
		printf("\tf%" PRIu32 " [label=\"", f->id);
		gr_name(an_func_name(&a, f));
		printf("\\n%" PRIu64 " call%s, self ", f->tally.calls,
		       f->tally.calls == 1 ? "" : "s");
		gr_time(&a, f->tally.self);
		puts("\"];");
	}
	for (i = 0; i < m; i++) {
		if (!e[i].from)
			continue;
		printf("\tf%" PRIu32 " -> f%" PRIu32 " [label=\"%" PRIu64 " call%s\\n", e[i].from,
		       e[i].to, e[i].calls, e[i].calls == 1 ? "" : "s");
		gr_time(&a, e[i].ticks);
		puts("\"];");
	}
	puts("}");
	free(e);
	an_summary(&a, "graph");
	an_events_note(&a, "graph");
	an_fini(&a);
	ri_close(&ri);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
