/* SPDX-License-Identifier: MIT */
/*
 * main.c - the fdrtrace command: "fdrtrace <command> [options]".
 *
 * Contract: dispatches to one cmd_<name>() per subcommand through the table
 * below; a new command adds one row here and one cmd_<name>.c file. Exit
 * statuses: 0 success, 1 bad input or failed output, 2 usage errors.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <fdrtrace/format.h>

#include "analysis.h"
#include "util.h"

#ifndef FDRTRACE_VERSION
#define FDRTRACE_VERSION "unknown"
#endif

static const struct tool_cmd commands[] = {
	{ "dump", "print every record of a trace as text, losslessly", cmd_dump },
	{ "assemble", "write a binary trace from dump's text form", cmd_assemble },
	{ "verify", "check that traces are well formed", cmd_verify },
	{ "info", "summarize a trace, or a run directory's process tree", cmd_info },
	{ "account", "per-function calls and times (min, percentiles, max, sum, self)",
	  cmd_account },
	{ "stack", "folded call stacks for flame graphs (by time or count)", cmd_stack },
	{ "convert", "convert to Chrome Trace Event JSON or a Perfetto trace, for viewers",
	  cmd_convert },
	{ "replay", "the call tree as indented text, with durations and filters", cmd_replay },
	{ "diff", "compare two traces per function: calls, total, self, median", cmd_diff },
	{ "graph", "the call graph in Graphviz DOT, edges with calls and times", cmd_graph },
	{ "extract-map", "an XRay YAML instrumentation map for llvm-xray", cmd_extract_map },
	{ "record", "record a program's whole process tree into a run directory", cmd_record },
	{ "live", "run a program traced and print its call tree when it ends", cmd_live },
	{ "tui", "an interactive terminal view: call tree, account, callers, search", cmd_tui },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static int main_help(FILE *f)
{
	size_t i;

	fputs("Usage: fdrtrace <command> [options] [args]\n"
	      "       fdrtrace --help | --version\n"
	      "\n"
	      "Read, check and write XRay FDR traces (versions 1 to 5).\n"
	      "\n"
	      "Commands:\n", f);
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "Run 'fdrtrace <command> --help' for a command's options,\n"
	      "and see fdrtrace(1) and fdrtrace-<command>(1).\n", f);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name;
	size_t i;

	/*
	 * A closed pipe must become a checked write error, not a silent
	 * death. What it was is kept for the programs `record` starts (an
	 * ignored signal stays ignored across exec).
	 */
	sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN }, &tool_sigpipe_at_start);

	if (argc < 2) {
		main_help(stderr);
		return EXIT_USAGE;
	}
	name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		main_help(stdout);
		return tool_finish_stdout() ? EXIT_FAIL : EXIT_OK;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		printf("fdrtrace %s (reads FDR versions %d to %d)\n", FDRTRACE_VERSION,
		       FDRTRACE_FDR_VERSION_MIN, FDRTRACE_FDR_VERSION_MAX);
		return tool_finish_stdout() ? EXIT_FAIL : EXIT_OK;
	}
	for (i = 0; i < N_COMMANDS; i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);

	if (name[0] == '-')
		tool_err("unknown option '%s' (try 'fdrtrace --help')", name);
	else
		tool_err("unknown command '%s' (try 'fdrtrace --help')", name);
	return EXIT_USAGE;
}
