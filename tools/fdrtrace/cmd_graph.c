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
	"Usage: fdrtrace graph [options] FILE\n"
	"\n"
	"Print the call graph of the trace FILE ('-': standard input) in Graphviz DOT:\n"
	"a vertex per function (calls, self time), an edge per caller and callee\n"
	"labelled with the number of calls and their inclusive time. Render with\n"
	"'dot -Tsvg'. The application's custom and typed events are not in the graph:\n"
	"a line on stderr counts them (see replay, convert).\n",
	.optstring = "",
	.groups = CLI_QUIET,
	.min_files = 1,
	.max_files = 1,
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

int cmd_graph(int argc, char **argv)
{
	struct gr_edge *e = NULL;
	struct analysis a;
	struct cli cl;
	uint32_t i, n = 0, m = 0;
	int status = EXIT_OK;

	if (!cli_parse(&graph_cli, NULL, &cl, argc, argv, &status))
		return status;
	memset(&a, 0, sizeof(a));
	cli_apply(&cl, &a);
	a.want_cct = true;
	if (an_run(&a, cl.files[0])) {
		an_fini(&a);
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
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
