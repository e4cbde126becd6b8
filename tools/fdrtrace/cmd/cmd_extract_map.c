/* SPDX-License-Identifier: MIT */
/*
 * cmd_extract_map.c - "fdrtrace extract-map FILE -o map.yaml": an XRay
 * instrumentation map in llvm-xray's YAML form for the trace's function
 * ids, so that "llvm-xray account|graph|stack --instr_map=map.yaml FILE"
 * work on fdrtrace's traces.
 *
 * One entry and one exit sled per function id: the ids named by the
 * trace's FDRTRACE_EXT_FUNC records and every id its function records use,
 * in order of first appearance. The address is the recorded one (the
 * function's run-time address), or the id itself when none was recorded.
 *
 * Contract: single-threaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"
#include "util.h"

static void xm_yaml_str(const char *s)
{
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\'')
			putchar('\'');
		putchar(*s);
	}
	putchar('\'');
}

static const struct cli_cmd extract_map_cli = {
	.name = "extract-map",
	.usage =
	"Usage: fdrtrace extract-map [options] FILE|DIR... [-o MAP]\n"
	"\n"
	"Write an XRay instrumentation map (llvm-xray's YAML form) for the function\n"
	"ids of the trace FILE ('-': standard input), so that llvm-xray can read the\n"
	"trace with it: llvm-xray account --instr_map=MAP FILE. C++ names are written\n"
	"demangled unless --no-demangle.\n"
	"\n"
	"A run (a directory of traces, one per process, or several FILEs): one map\n"
	"when its processes (those --pid selects) run one program and agree on every\n"
	"id's name: the union of their ids, each with the address of the first\n"
	"process that has it. Refused, naming the programs and their pids, when they\n"
	"run several programs (pick one's with --pid), or naming the two processes\n"
	"when they give an id two names.\n",
	.optstring = "",
	.groups = CLI_OUTPUT | CLI_RUN,
	.min_files = 1,
	.max_files = CLI_MAX_FILES,
};

/* A function id of a run's map: its name and address in the first process that had it. */
struct xm_fn {
	uint32_t id;
	uint64_t address;
	char *name;
	uint32_t trace;	/* that process's trace (messages) */
};

/* The printed map: two sleds per function. */
static void xm_write(const struct xm_fn *v, uint32_t n)
{
	static const char *const kinds[2] = { "function-enter", "function-exit" };
	uint32_t i;
	int k;

	puts("---");
	for (i = 0; i < n; i++) {
		uint64_t addr = v[i].address ? v[i].address : v[i].id;

		for (k = 0; k < 2; k++) {
			printf("- { id: %" PRIu32 ", address: 0x%" PRIx64 ", function: 0x%" PRIx64
			       ", kind: %s, always-instrument: true, function-name: ", v[i].id,
			       addr + (uint64_t)k, addr, kinds[k]);
			xm_yaml_str(v[i].name);
			puts(" }");
		}
	}
	puts("...");
}

/* At most this many pids are named per program when refusing. */
#define XM_PIDS_SAID 8

/*
 * The processes of @ri (those selected) run one program: else say which
 * programs they run, with (some of) their pids, and return -1.
 */
static int xm_one_program(const struct run_input *ri)
{
	struct ri_names progs = { 0 };
	uint32_t k, p, *said;

	for (k = 0; k < ri->n; k++) {
		const char *prog = ri->t[k].program ? ri->t[k].program : "(unknown program)";

		if (ri->t[k].selected && ri_names_get(&progs, prog, strlen(prog)) == UINT32_MAX) {
			tool_err("out of memory");
			ri_names_free(&progs);
			return -1;
		}
	}
	if (progs.n <= 1) {
		ri_names_free(&progs);
		return 0;
	}
	tool_err("extract-map: the run's processes run %u programs; a map is of one: "
		 "pick its processes with --pid", progs.n);
	said = calloc(progs.n, sizeof(*said));
	for (p = 0; said && p < progs.n; p++) {
		fprintf(stderr, "  %s: pids", ri_names_str(&progs, p));
		for (k = 0; k < ri->n; k++) {
			const char *prog = ri->t[k].program ? ri->t[k].program : "(unknown program)";

			if (!ri->t[k].selected || strcmp(prog, ri_names_str(&progs, p)))
				continue;
			if (said[p]++ < XM_PIDS_SAID)
				fprintf(stderr, " %d", (int)ri->t[k].pid);
		}
		if (said[p] > XM_PIDS_SAID)
			fprintf(stderr, " (and %u more)", said[p] - XM_PIDS_SAID);
		fputc('\n', stderr);
	}
	free(said);
	ri_names_free(&progs);
	return -1;
}

/*
 * extract-map of a run: one map of the program all its (selected)
 * processes run, the union of their ids; refused when they run several
 * programs, or when two processes give an id two names.
 */
static int xm_run(const struct cli *cl, const struct run_input *ri)
{
	static struct analysis a;	/* large: not on the stack */
	struct ri_names ids = { 0 };
	struct tool_output output;
	struct xm_fn *v = NULL;
	uint32_t cap = 0, i, k, read = 0;
	int status = EXIT_OK;
	char key[16];

	if (xm_one_program(ri))
		return EXIT_FAIL;
	for (k = 0; k < ri->n && status == EXIT_OK; k++) {
		if (!ri->t[k].selected)
			continue;
		memset(&a, 0, sizeof(a));
		cli_apply(cl, &a);
		a.full_names = true;	/* the map names each function whole, as llvm-xray's would */
		a.quiet = true;
		if (an_run(&a, ri->t[k].path)) {
			status = EXIT_FAIL;
			an_fini(&a);
			break;
		}
		read++;
		for (i = 0; i < a.n_fns && status == EXIT_OK; i++) {
			struct an_func *f = a.fns[i];
			const char *name = an_func_name(&a, f);
			uint32_t j;

			snprintf(key, sizeof(key), "%" PRIu32, f->id);
			j = ri_names_get(&ids, key, strlen(key));
			if (j == UINT32_MAX)
				goto oom;
			if (j < ids.n - 1 || (j < cap && v[j].name)) {
				if (strcmp(v[j].name, name)) {
					tool_err("extract-map: function id %" PRIu32 " is %s in process "
						 "%d and %s in process %d: pick one with --pid", f->id,
						 v[j].name, (int)ri->t[v[j].trace].pid, name,
						 (int)ri->t[k].pid);
					status = EXIT_FAIL;
				}
				continue;
			}
			if (j >= cap) {
				uint32_t c = cap ? cap * 2 : 256;
				struct xm_fn *nv = realloc(v, c * sizeof(*nv));

				if (!nv)
					goto oom;
				memset(nv + cap, 0, (c - cap) * sizeof(*nv));
				v = nv;
				cap = c;
			}
			v[j].id = f->id;
			v[j].address = f->address;
			v[j].trace = k;
			v[j].name = strdup(name);
			if (!v[j].name)
				goto oom;
		}
		an_fini(&a);
	}
	if (status == EXIT_OK) {
		if (tool_output_open(&output, cl->output)) {
			status = EXIT_FAIL;
		} else {
			xm_write(v, ids.n);
			if (tool_output_close(&output, true))
				status = EXIT_FAIL;
		}
	}
	goto end;
oom:
	tool_err("out of memory");
	an_fini(&a);
	status = EXIT_FAIL;
end:
	ri_say_read(ri, cl->quiet, read);
	for (i = 0; i < cap; i++)
		free(v[i].name);
	free(v);
	ri_names_free(&ids);
	return status;
}

int cmd_extract_map(int argc, char **argv)
{
	static struct analysis a;	/* large: not on the stack */
	struct tool_output output;
	struct run_input ri;
	struct xm_fn *v;
	struct cli cl;
	uint32_t i;
	int status = EXIT_OK;

	if (!cli_parse(&extract_map_cli, NULL, &cl, argc, argv, &status))
		return status;
	if (ri_open(&ri, &cl, 0, cl.n_files))
		return EXIT_FAIL;
	if (ri.run) {
		status = xm_run(&cl, &ri);
		ri_close(&ri);
		return status;
	}
	memset(&a, 0, sizeof(a));
	cli_apply(&cl, &a);
	a.full_names = true;	/* the map names each function whole, as llvm-xray's would */
	a.quiet = true;
	if (an_run(&a, ri.t[0].path)) {
		an_fini(&a);
		ri_close(&ri);
		return EXIT_FAIL;
	}
	ri_close(&ri);
	v = calloc(a.n_fns ? a.n_fns : 1, sizeof(*v));
	if (!v) {
		tool_err("out of memory");
		an_fini(&a);
		return EXIT_FAIL;
	}
	for (i = 0; i < a.n_fns; i++) {
		v[i].id = a.fns[i]->id;
		v[i].address = a.fns[i]->address;
		v[i].name = (char *)an_func_name(&a, a.fns[i]);
	}
	if (tool_output_open(&output, cl.output)) {
		free(v);
		an_fini(&a);
		return EXIT_FAIL;
	}
	xm_write(v, a.n_fns);
	free(v);
	an_fini(&a);
	if (tool_output_close(&output, true))
		status = EXIT_FAIL;
	return status;
}
