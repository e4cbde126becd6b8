/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the command line of the analysis commands (account, stack,
 * convert, replay, graph, extract-map, diff), parsed in one place.
 *
 * A command describes itself in a struct cli_cmd: its usage text, its own
 * options (getopt_long() tables and a callback), the groups of common
 * options it takes, and how many FILE arguments. cli_parse() parses argv
 * with the command's options and the common ones together, handles --help
 * (the help text is the command's usage, its own option lines, then the
 * common option lines of its groups, generated from the table in cli.c),
 * reports every usage error ("fdrtrace CMD: ... (try 'fdrtrace CMD
 * --help')", exit 2), and fills a struct cli. cli_apply() then sets up a
 * struct analysis from it.
 *
 * Adding an option common to analysis commands (the only place to do it):
 *   1. a row in cli_table[] in cli.c: long name, short letter (or a CLI_OPT_*
 *      value above 255 for a long-only option), argument name, group, help;
 *   2. a field in struct cli, set in cli_common() in cli.c;
 *   3. if it changes how the trace is read or named, a line in cli_apply().
 * A new group is a bit in enum cli_group. cli_parse() refuses a command
 * whose own options collide with its common ones (a programming error,
 * reported as such), so a new common option cannot silently shadow one.
 *
 * Contract: single-threaded tool code; the struct cli points into argv.
 */
#ifndef FDRTRACE_TOOL_CLI_H
#define FDRTRACE_TOOL_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "analysis.h"
#include "select.h"

/* Groups of common options; every command has CLI_BASE. */
enum cli_group {
	CLI_BASE = 1u << 0,	/* --no-demangle, the naming options, -h/--help */
	CLI_QUIET = 1u << 1,	/* -q/--quiet */
	CLI_SELECT = 1u << 2,	/* -F, -N, -D, -t, --tid, -r (select.h) */
	CLI_OUTPUT = 1u << 3,	/* -o/--output FILE */
	CLI_RUN = 1u << 4,	/* --pid: the processes of a run to read (input.h) */
};

/* Values of long-only common options (above every short letter). */
enum {
	CLI_OPT_NO_DEMANGLE = 256,
	CLI_OPT_TID,
	CLI_OPT_LOCATIONS,
	CLI_OPT_DEBUG_DIR,
	CLI_OPT_INSTR_MAP,
	CLI_OPT_PID,
	CLI_OPT_FULL_NAMES,
	CLI_OPT_CMD = 512,	/* a command's own long-only options start here */
	/*
	 * A common option whose short letter the command uses for one of its
	 * own (account's -r) is long-only there: CLI_OPT_SHADOW + the letter.
	 */
	CLI_OPT_SHADOW = 768,
};

/* --debug-dir may be given this many times. */
#define CLI_MAX_DEBUG_DIRS 16
/* FILE arguments of a command that reads a run (input.h) */
#define CLI_MAX_FILES 100000
/* --pid, as many */
#define CLI_MAX_PIDS 64

struct cli;

/**
 * struct cli_cmd - how one analysis command is called
 * @name: the word after "fdrtrace"
 * @usage: the help text before the option list (usage line, description)
 * @options: the help lines of the command's own options, or NULL
 * @epilog: help text after the option list, or NULL
 * @optstring: the command's own short options in getopt syntax ("" for none)
 * @longopts: its own long options, NULL-terminated (NULL for none); a
 *	long-only option uses a value from CLI_OPT_CMD up
 * @groups: the common option groups it takes (CLI_BASE is implied)
 * @min_files, @max_files: how many FILE arguments
 * @option: called for each of the command's own options with its value
 *	and argument (NULL when it takes none); returns 0, or the exit status
 *	of a usage error it reported (tool_usage_err()). NULL when none.
 */
struct cli_cmd {
	const char *name;
	const char *usage;
	const char *options;
	const char *epilog;
	const char *optstring;
	const struct option *longopts;
	unsigned groups;
	int min_files, max_files;
	int (*option)(struct cli *cl, int c, const char *arg);
};

/**
 * struct cli - a parsed command line
 * @cmd: the command
 * @ctx: the command's, for its @option callback
 * @demangle: false with --no-demangle
 * @full_names: --full-names
 * @locations: --locations
 * @debug_dirs, @n_debug_dirs: each --debug-dir, in order
 * @instr_map: --instr-map, NULL when not given
 * @quiet: -q
 * @output: -o, NULL when not given ("-" is standard output)
 * @sel: the selectors (CLI_SELECT)
 * @pids, @n_pids: each --pid (CLI_RUN: of a run, the processes to read, input.h)
 * @files, @n_files: the FILE arguments (a FILE may be a run directory:
 *	commands read them with ri_open(), input.h)
 */
struct cli {
	const struct cli_cmd *cmd;
	void *ctx;
	bool demangle;
	bool full_names;
	bool locations;
	const char *debug_dirs[CLI_MAX_DEBUG_DIRS];
	int n_debug_dirs;
	const char *instr_map;
	bool quiet;
	const char *output;
	struct sel_opts sel;
	int32_t pids[CLI_MAX_PIDS];
	int n_pids;
	char **files;
	int n_files;
};

/**
 * cli_parse - parse a command's arguments
 * @cmd: the command
 * @ctx: stored in @cl->ctx for @cmd->option
 * @cl: filled in
 * @argc, @argv: the command's arguments; argv[0] is its name
 * @status: where the exit status goes when the command must not run
 *
 * Prints the help for -h/--help, and the message of a usage error.
 *
 * Return: true when the command should run; false when it should return
 * *@status (EXIT_OK after the help, EXIT_FAIL when writing the help failed,
 * EXIT_USAGE after a usage error).
 */
bool cli_parse(const struct cli_cmd *cmd, void *ctx, struct cli *cl, int argc, char **argv,
	       int *status);

/**
 * cli_apply - set up an analysis from the common options
 * @cl: the parsed command line
 * @a: the analysis, zeroed; demangling, quietness, the naming options
 *	(and what later common options need) are set from @cl; @a points
 *	into @cl, which must outlive it
 */
void cli_apply(const struct cli *cl, struct analysis *a);

/**
 * cli_parse_time - parse a duration: a number with ns, us, ms or s (ns alone)
 * @s: the text
 * @ns: the duration in nanoseconds
 *
 * Return: 0, or -EINVAL.
 */
int cli_parse_time(const char *s, uint64_t *ns);

/**
 * cli_table_format - the argument of a table command's -f/--format
 * @cl: the command line being parsed (its command names the error)
 * @arg: "text" or "csv"
 * @csv: set to whether it is "csv"
 *
 * Return: 0, or the exit status of the usage error it reported.
 */
int cli_table_format(const struct cli *cl, const char *arg, bool *csv);

/**
 * cli_range - the argument of -r/--time-range, A~B (seconds after the first
 * call of the trace), into @cl's selectors; for a command whose own option
 * takes -r and hands it on (account)
 * @cl: the command line being parsed
 * @arg: the argument
 *
 * Return: 0, or the exit status of the usage error it reported.
 */
int cli_range(struct cli *cl, const char *arg);

/**
 * cli_top - the argument of -p/--top: how many rows, 0 or more
 * @cl: the command line being parsed (its command names the error)
 * @arg: the text
 * @top: set to the number
 *
 * Return: 0, or the exit status of the usage error it reported.
 */
int cli_top(const struct cli *cl, const char *arg, long *top);

#endif /* FDRTRACE_TOOL_CLI_H */
