/* SPDX-License-Identifier: MIT */
/*
 * cli.c - one parser for the analysis commands' command lines (see cli.h).
 *
 * Contract: single-threaded tool code. The combined option tables are
 * built on the stack for each call; nothing is allocated.
 */
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "util.h"

/**
 * struct cli_opt - one common option
 * @name: its long name
 * @has_arg: no_argument or required_argument
 * @val: its short letter, or a CLI_OPT_* value for a long-only option
 * @group: the enum cli_group that brings it
 * @help: its help line(s), each ending with a newline
 */
struct cli_opt {
	const char *name;
	int has_arg;
	int val;
	unsigned group;
	const char *help;
};

/* Every common option, in the order of the help text (after the command's own). */
static const struct cli_opt cli_table[] = {
	{ "filter", required_argument, 'F', CLI_SELECT,
	  "  -F, --filter GLOB     only calls inside a function matching GLOB (repeatable)\n" },
	{ "notrace", required_argument, 'N', CLI_SELECT,
	  "  -N, --notrace GLOB    hide functions matching GLOB and their callees (repeatable)\n" },
	{ "depth", required_argument, 'D', CLI_SELECT,
	  "  -D, --depth N         at most N levels of shown calls\n" },
	{ "threshold", required_argument, 't', CLI_SELECT,
	  "  -t, --threshold TIME  hide calls shorter than TIME (e.g. 10us; units ns, us,\n"
	  "                        ms, s; ns without a unit)\n" },
	{ "tid", required_argument, CLI_OPT_TID, CLI_SELECT,
	  "      --tid TID         only the thread TID\n" },
	{ "time-range", required_argument, 'r', CLI_SELECT,
	  "  -r, --time-range A~B  only calls that begin between A and B seconds after the\n"
	  "                        first call of the trace (A~ or ~B leave an end open)\n" },
	{ "pid", required_argument, CLI_OPT_PID, CLI_RUN,
	  "      --pid PID         of a run (a directory, or several traces), only the\n"
	  "                        process PID: its traces, before and after an exec\n"
	  "                        (repeatable)\n" },
	{ "output", required_argument, 'o', CLI_OUTPUT,
	  "  -o, --output OUT      write to OUT (default: standard output)\n" },
	{ "no-demangle", no_argument, CLI_OPT_NO_DEMANGLE, CLI_BASE,
	  "      --no-demangle     print C++ names as recorded\n" },
	{ "full-names", no_argument, CLI_OPT_FULL_NAMES, CLI_BASE,
	  "      --full-names      C++ names whole (return type, template arguments,\n"
	  "                        parameters); by default short (std::map::operator[]),\n"
	  "                        with the parameters where that tells overloads apart\n" },
	{ "locations", no_argument, CLI_OPT_LOCATIONS, CLI_BASE,
	  "      --locations       add every function's source file and line (from DWARF);\n"
	  "                        same-named functions always get theirs\n" },
	{ "debug-dir", required_argument, CLI_OPT_DEBUG_DIR, CLI_BASE,
	  "      --debug-dir DIR   look for separate debug files in DIR/.build-id/ and\n"
	  "                        DIR/<program's directory>/ (repeatable; default:\n"
	  "                        /usr/lib/debug)\n" },
	{ "instr-map", required_argument, CLI_OPT_INSTR_MAP, CLI_BASE,
	  "      --instr-map BIN   name function ids as llvm-xray -m does, from the\n"
	  "                        xray_instr_map of BIN (a trace written by LLVM's XRay\n"
	  "                        runtime), or from a YAML map (llvm-xray extract,\n"
	  "                        fdrtrace extract-map)\n" },
	{ "quiet", no_argument, 'q', CLI_QUIET,
	  "  -q, --quiet           nothing on stderr about imperfect traces (unmatched\n"
	  "                        records, drops) nor counts of application events\n" },
	{ "help", no_argument, 'h', CLI_BASE,
	  "  -h, --help            show this help\n" },
};

#define CLI_N_COMMON (sizeof(cli_table) / sizeof(cli_table[0]))
#define CLI_MAX_OWN 32		/* long options of one command */
#define CLI_OPTSTRING_MAX 128

static unsigned cli_groups(const struct cli_cmd *cmd)
{
	return cmd->groups | CLI_BASE;
}

static int cli_help(const struct cli_cmd *cmd)
{
	unsigned groups = cli_groups(cmd);
	size_t i;

	fputs(cmd->usage, stdout);
	fputs("\nOptions:\n", stdout);
	if (cmd->options)
		fputs(cmd->options, stdout);
	for (i = 0; i < CLI_N_COMMON; i++) {
		const struct cli_opt *c = &cli_table[i];

		if (!(c->group & groups))
			continue;
		if (c->val < 256 && strchr(cmd->optstring, c->val)) {
			/* long-only here: "  -r, --x" becomes "      --x" */
			fputs("      ", stdout);
			fputs(c->help + 6, stdout);
		} else {
			fputs(c->help, stdout);
		}
	}
	if (cmd->epilog) {
		putchar('\n');
		fputs(cmd->epilog, stdout);
	}
	return tool_finish_stdout() ? EXIT_FAIL : EXIT_OK;
}

int cli_parse_time(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);
	double mul;

	if (end == s || !(v >= 0) || v > 1e12)
		return -EINVAL;
	if (!*end || strcmp(end, "ns") == 0)
		mul = 1;
	else if (strcmp(end, "us") == 0)
		mul = 1e3;
	else if (strcmp(end, "ms") == 0)
		mul = 1e6;
	else if (strcmp(end, "s") == 0)
		mul = 1e9;
	else
		return -EINVAL;
	*ns = (uint64_t)(v * mul);
	return 0;
}

/* -r A~B: seconds from the first call; either end may be left open. */
int cli_range(struct cli *cl, const char *arg)
{
	const char *name = cl->cmd->name, *tilde = strchr(arg, '~');
	struct sel_opts *o = &cl->sel;
	char *end;

	if (!tilde)
		return tool_usage_err(name, "time range is A~B, not '%s'", arg);
	o->from_s = 0;
	if (tilde != arg) {
		o->from_s = strtod(arg, &end);
		if (end != tilde || !(o->from_s >= 0))
			return tool_usage_err(name, "bad time range '%s'", arg);
	}
	o->to_s = 0;
	if (tilde[1]) {
		o->to_s = strtod(tilde + 1, &end);
		if (*end || !(o->to_s > 0) || o->to_s < o->from_s)
			return tool_usage_err(name, "bad time range '%s'", arg);
	}
	o->have_range = true;
	return 0;
}

/* A common option: 0, or the exit status of the usage error it reported. */
static int cli_common(struct cli *cl, int c, const char *arg)
{
	const char *name = cl->cmd->name;
	struct sel_opts *o = &cl->sel;
	char *end;
	long v;

	if (c >= CLI_OPT_SHADOW && c < CLI_OPT_SHADOW + 256)
		c -= CLI_OPT_SHADOW;	/* a common option long-only here */
	switch (c) {
	case 'F':
		if (o->n_only == SEL_MAX_PATTERNS)
			return tool_usage_err(name, "too many -F patterns (at most %d)",
					      SEL_MAX_PATTERNS);
		o->only[o->n_only++] = arg;
		return 0;
	case 'N':
		if (o->n_hide == SEL_MAX_PATTERNS)
			return tool_usage_err(name, "too many -N patterns (at most %d)",
					      SEL_MAX_PATTERNS);
		o->hide[o->n_hide++] = arg;
		return 0;
	case 'D':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (!*arg || *end || errno || v <= 0 || v > INT32_MAX)
			return tool_usage_err(name, "bad --depth '%s'", arg);
		o->max_depth = (uint32_t)v;
		return 0;
	case 't':
		if (cli_parse_time(arg, &o->threshold_ns))
			return tool_usage_err(name, "bad --threshold '%s'", arg);
		return 0;
	case CLI_OPT_TID:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (!*arg || *end || errno || v < INT32_MIN || v > INT32_MAX)
			return tool_usage_err(name, "bad --tid '%s'", arg);
		o->have_tid = true;
		o->tid = (int32_t)v;
		return 0;
	case CLI_OPT_PID:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (!*arg || *end || errno || v <= 0 || v > INT32_MAX)
			return tool_usage_err(name, "bad --pid '%s'", arg);
		if (cl->n_pids == CLI_MAX_PIDS)
			return tool_usage_err(name, "too many --pid (at most %d)", CLI_MAX_PIDS);
		cl->pids[cl->n_pids++] = (int32_t)v;
		return 0;
	case 'r':
		return cli_range(cl, arg);
	case 'o':
		cl->output = arg;
		return 0;
	case CLI_OPT_NO_DEMANGLE:
		cl->demangle = false;
		return 0;
	case CLI_OPT_FULL_NAMES:
		cl->full_names = true;
		return 0;
	case CLI_OPT_LOCATIONS:
		cl->locations = true;
		return 0;
	case CLI_OPT_DEBUG_DIR:
		if (cl->n_debug_dirs == CLI_MAX_DEBUG_DIRS)
			return tool_usage_err(name, "too many --debug-dir (at most %d)",
					      CLI_MAX_DEBUG_DIRS);
		if (!*arg)
			return tool_usage_err(name, "empty --debug-dir");
		cl->debug_dirs[cl->n_debug_dirs++] = arg;
		return 0;
	case CLI_OPT_INSTR_MAP:
		cl->instr_map = arg;
		return 0;
	case 'q':
		cl->quiet = true;
		return 0;
	}
	return tool_usage_err(name, "internal error: option %d has no handler", c);
}

/*
 * Build the combined getopt tables. The command's own options come first;
 * a common option whose short letter the command has is long-only there
 * (CLI_OPT_SHADOW); one whose long name or value collides is a programming
 * error.
 */
static int cli_tables(const struct cli_cmd *cmd, char *optstring, struct option *longopts)
{
	unsigned groups = cli_groups(cmd);
	size_t i, n = 0, len;

	len = strlen(cmd->optstring);
	if (len + 3 * CLI_N_COMMON + 1 > CLI_OPTSTRING_MAX)
		return -EINVAL;
	memcpy(optstring, cmd->optstring, len);
	for (i = 0; cmd->longopts && cmd->longopts[i].name; i++) {
		if (n == CLI_MAX_OWN)
			return -EINVAL;
		longopts[n++] = cmd->longopts[i];
	}
	for (i = 0; i < CLI_N_COMMON; i++) {
		const struct cli_opt *c = &cli_table[i];
		size_t k;

		if (!(c->group & groups))
			continue;
		int val = c->val;

		if (val < 256 && memchr(cmd->optstring, val, strlen(cmd->optstring)))
			val += CLI_OPT_SHADOW;
		for (k = 0; k < n; k++)
			if (strcmp(longopts[k].name, c->name) == 0 || longopts[k].val == val)
				return -EEXIST;
		if (val < 256) {
			optstring[len++] = (char)val;
			if (c->has_arg == required_argument)
				optstring[len++] = ':';
		}
		longopts[n++] = (struct option){ c->name, c->has_arg, NULL, val };
	}
	optstring[len] = '\0';
	memset(&longopts[n], 0, sizeof(longopts[n]));
	return 0;
}

/* Is @c one of the command's own options (not a common one)? */
static bool cli_is_own(const struct cli_cmd *cmd, int c)
{
	size_t i;

	if (c < 256 && c > 0 && strchr(cmd->optstring, c))
		return true;
	for (i = 0; cmd->longopts && cmd->longopts[i].name; i++)
		if (cmd->longopts[i].val == c)
			return true;
	return false;
}

bool cli_parse(const struct cli_cmd *cmd, void *ctx, struct cli *cl, int argc, char **argv,
	       int *status)
{
	char optstring[CLI_OPTSTRING_MAX];
	struct option longopts[CLI_MAX_OWN + CLI_N_COMMON + 1];
	int c, n, rc;

	memset(cl, 0, sizeof(*cl));
	cl->cmd = cmd;
	cl->ctx = ctx;
	cl->demangle = true;
	if (cli_tables(cmd, optstring, longopts)) {
		*status = tool_usage_err(cmd->name, "internal error: its options collide with "
					 "the common ones (cli.c)");
		return false;
	}
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		if (c == 'h') {
			*status = cli_help(cmd);
			return false;
		}
		if (c == '?' || c == ':') {
			*status = tool_bad_option(cmd->name, optstring, argv);
			return false;
		}
		if (cli_is_own(cmd, c))
			rc = cmd->option ? cmd->option(cl, c, optarg) : 0;
		else
			rc = cli_common(cl, c, optarg);
		if (rc) {
			*status = rc;
			return false;
		}
	}
	n = argc - optind;
	cl->files = argv + optind;
	if (n == 0 && cmd->min_files == 1) {
		/* no FILE: the run or the newest trace here, as uftrace reads uftrace.data */
		static char def[256];
		static char *def_files[1];

		if (!run_default_input(def, sizeof(def))) {
			*status = tool_usage_err(cmd->name, "missing FILE (and no " RUN_DEFAULT_DIR
						 " run or *.fdr trace in this directory)");
			return false;
		}
		def_files[0] = def;
		cl->files = def_files;
		n = 1;
		if (!cl->quiet)
			fprintf(stderr, "fdrtrace %s: reading %s (no FILE given: %s)\n", cmd->name, def,
				strcmp(def, RUN_DEFAULT_DIR) ? "the newest trace here" :
				"the run fdrtrace record wrote here");
	} else if (n < cmd->min_files || n > cmd->max_files) {
		if (n == 0)
			*status = tool_usage_err(cmd->name, "missing FILE");
		else if (n < cmd->min_files)
			*status = tool_usage_err(cmd->name, "needs %d FILEs", cmd->min_files);
		else if (cmd->max_files == 1)
			*status = tool_usage_err(cmd->name, "one FILE only");
		else
			*status = tool_usage_err(cmd->name, "%d FILEs only", cmd->max_files);
		return false;
	}
	cl->n_files = n;
	if (cmd->groups & CLI_OUTPUT) {
		rc = tool_output_is_input(cmd->name, cl->output, cl->files, n);
		if (rc) {
			*status = rc;
			return false;
		}
	}
	return true;
}

void cli_apply(const struct cli *cl, struct analysis *a)
{
	a->demangle = cl->demangle;
	a->full_names = cl->full_names;
	a->quiet = cl->quiet;
	a->locations = cl->locations;
	a->debug_dirs = cl->debug_dirs;
	a->n_debug_dirs = (size_t)cl->n_debug_dirs;
	a->instr_map = cl->instr_map;
}

int cli_table_format(const struct cli *cl, const char *arg, bool *csv)
{
	if (strcmp(arg, "csv") == 0)
		*csv = true;
	else if (strcmp(arg, "text") == 0)
		*csv = false;
	else
		return tool_usage_err(cl->cmd->name, "unknown format '%s' (text or csv)", arg);
	return 0;
}

int cli_top(const struct cli *cl, const char *arg, long *top)
{
	char *end;

	errno = 0;
	*top = strtol(arg, &end, 10);
	if (!*arg || *end || *top < 0 || errno)
		return tool_usage_err(cl->cmd->name, "bad --top '%s'", arg);
	return 0;
}
