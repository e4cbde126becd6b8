/* SPDX-License-Identifier: MIT */
/*
 * cmd_replay.c - "fdrtrace replay FILE": the call tree as indented text.
 *
 * The command: its -f option, the header line, the traces of a run one
 * after another (each process after a header line), one analysis per
 * trace with replay_print.c's callbacks, which print the lines (see
 * there for what a line says and when it is printed).
 *
 * Contract: single-threaded.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"
#include "outbuf.h"
#include "replay.h"
#include "util.h"

/* -f FIELD[,FIELD...] */
static int rp_option(struct cli *cl, int c, const char *arg)
{
	struct rp *rp = cl->ctx;
	const char *p = arg;

	if (c != 'f')
		return 0;
	rp->n_fields = 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < RF_N; i++)
			if (strlen(rp_field_info[i].name) == len && !strncmp(p, rp_field_info[i].name, len))
				break;
		if (i == RF_N)
			return tool_usage_err("replay", "unknown field '%.*s' in '%s' (time, delta, "
					      "elapsed, duration, tid, pid, module)", (int)len, p, arg);
		if (rp->n_fields == RP_MAX_FIELDS)
			return tool_usage_err("replay", "at most %d fields", RP_MAX_FIELDS);
		rp->fields[rp->n_fields++] = (uint8_t)i;
		p += len;
		if (*p == ',' && !*++p)
			return tool_usage_err("replay", "fields end with ',' in '%s'", arg);
	}
	if (!rp->n_fields)
		return tool_usage_err("replay", "no field given");
	/* the default, as it always printed: the fast line start */
	if (rp->n_fields == 2 && rp->fields[0] == RF_DURATION && rp->fields[1] == RF_TID)
		rp->n_fields = 0;
	return 0;
}

static const struct option rp_longopts[] = {
	{ "fields", required_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_cmd replay_cli = {
	.name = "replay",
	.usage =
	"Usage: fdrtrace replay [options] FILE|DIR...\n"
	"\n"
	"Print the calls of the trace FILE ('-': standard input) as an indented call\n"
	"tree, one line per call with its duration, in the manner of uftrace replay:\n"
	"'name();' for a call whose callees are not shown, 'name() {' ... '} /* name */'\n"
	"around the others. Each line shows the thread id. The application's custom\n"
	"and typed events appear where they happened, inside the calls around them:\n"
	"'[event custom 5 bytes \"hello\"]', '[event typed type=7 2 bytes hex 0102]'\n"
	"(at most 32 bytes of the payload, as text when printable, else in hex).\n"
	"--tid and --time-range select events too; -F, -N, -D and -t do not hide them.\n"
	"\n"
	"A run (a directory of traces, one per process, or several FILEs): each\n"
	"process in start order, after a header line '# ==== process PID (forked by\n"
	"PPID): COMMAND LINE  [FILE]' ('(after exec)' for the image an exec started);\n"
	"the selectors apply to every process (--time-range from each one's first\n"
	"call); --pid selects processes.\n",
	.options =
	"  -f, --fields F[,F]    the columns before the tree, in this order (default:\n"
	"                        duration,tid): time (seconds since the first call,\n"
	"                        as --time-range takes them), delta (since the\n"
	"                        thread's previous line), elapsed (since the first\n"
	"                        call), duration, tid, pid, module; a call's line has\n"
	"                        its entry's time, a closing line its exit's\n",
	.optstring = "f:",
	.longopts = rp_longopts,
	.option = rp_option,
	.groups = CLI_QUIET | CLI_SELECT | CLI_RUN,
	.min_files = 1,
	.max_files = CLI_MAX_FILES,
};

/*
 * Replay one trace with the fields of @opts (the -f parsed into it). Return:
 * an exit status.
 */
static int rp_trace(const struct cli *cl, const struct rp *opts, const char *path)
{
	static struct analysis a;	/* large: not on the stack */
	struct an_ops fields_ops;
	struct rp rp = { .have_tid = false };	/* the rest zero too */
	uint32_t i;
	int status = EXIT_OK;

	memcpy(rp.fields, opts->fields, sizeof(rp.fields));
	rp.n_fields = opts->n_fields;
	if (ob_init(&rp.ob, stdout)) {
		tool_err("out of memory");
		return EXIT_FAIL;
	}
	memset(&a, 0, sizeof(a));
	cli_apply(cl, &a);
	sel_init(&rp.sel, &cl->sel);
	a.ops = rp.sel.plain ? &rp_plain_ops : &rp_ops;
	a.ctx = &rp;
	if (rp.n_fields) {
		fields_ops = *a.ops;
		fields_ops.enter = rp.sel.plain ? rp_enter_plain_fields : rp_enter_fields;
		a.ops = &fields_ops;
	}
	tool_stderr_hook(rp_stderr_sync, &rp.ob);
	if (an_run(&a, path)) {
		status = EXIT_FAIL;
	} else {
		for (i = 0; rp.waits_pending && i < a.n_threads; i++)
			rp_wait_put(&rp, &a, a.threads[i], a.threads[i]->depth);
		if (rp.sel.oom) {
			tool_err("out of memory: some calls are missing");
			status = EXIT_FAIL;
		}
		an_summary(&a, "replay");
	}
	tool_stderr_hook(NULL, NULL);
	ob_fini(&rp.ob);
	for (i = 0; i < a.n_threads; i++)
		a.threads[i]->uptr = NULL;	/* a frame count, not memory */
	sel_fini(&rp.sel);
	free(rp.waits);
	free(rp.last);
	for (i = 0; i < rp.n_args; i++)
		free(rp.args[i].at);
	free(rp.args);
	an_fini(&a);
	return status;
}

int cmd_replay(int argc, char **argv)
{
	struct rp opts = { .have_tid = false };	/* -f; the rest zero too */
	struct run_input ri;
	struct cli cl;
	uint32_t i, read = 0;
	int status = EXIT_OK;

	if (!cli_parse(&replay_cli, &opts, &cl, argc, argv, &status))
		return status;
	if (ri_open(&ri, &cl, 0, cl.n_files))
		return EXIT_FAIL;
	if (opts.n_fields) {
		fputs("#", stdout);
		for (i = 0; i < opts.n_fields; i++)
			printf("%s%*s", i ? " " : "", rp_field_info[opts.fields[i]].width - (i ? 0 : 1),
			       rp_field_info[opts.fields[i]].title);
		printf(" | FUNCTION\n");
	} else {
		printf("# %11s  %9s   %s\n", "DURATION", "TID", "FUNCTION");
	}
	for (i = 0; i < ri.n && !tool_stdout_failed(); i++) {
		const struct ri_trace *t = &ri.t[i];

		if (!t->selected)
			continue;
		if (ri.run) {
			/* the process's header: who it is, where it came from */
			printf("%s# ==== process %d", read ? "\n" : "", (int)t->pid);
			if (t->origin == RI_EXEC)
				printf(" (after exec)");
			else if (t->origin == RI_FORK)
				printf(" (forked by %d)", (int)ri.t[t->parent].pid);
			else if (t->ppid)
				printf(" (parent %d)", (int)t->ppid);
			printf(": %s  [%s]\n", ri_name(t), t->path);
		}
		if (rp_trace(&cl, &opts, t->path) != EXIT_OK)
			status = EXIT_FAIL;
		else
			read++;
	}
	ri_say_read(&ri, cl.quiet, read);
	ri_close(&ri);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
