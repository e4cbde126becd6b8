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
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "cli.h"
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
	"Usage: fdrtrace extract-map [options] FILE [-o MAP]\n"
	"\n"
	"Write an XRay instrumentation map (llvm-xray's YAML form) for the function\n"
	"ids of the trace FILE ('-': standard input), so that llvm-xray can read the\n"
	"trace with it: llvm-xray account --instr_map=MAP FILE. C++ names are written\n"
	"demangled unless --no-demangle.\n",
	.optstring = "",
	.groups = CLI_OUTPUT,
	.min_files = 1,
	.max_files = 1,
};

int cmd_extract_map(int argc, char **argv)
{
	static const char *const kinds[2] = { "function-enter", "function-exit" };
	struct tool_output output;
	struct analysis a;
	struct cli cl;
	uint32_t i;
	int k, status = EXIT_OK;

	if (!cli_parse(&extract_map_cli, NULL, &cl, argc, argv, &status))
		return status;
	memset(&a, 0, sizeof(a));
	cli_apply(&cl, &a);
	a.full_names = true;	/* the map names each function whole, as llvm-xray's would */
	a.quiet = true;
	if (an_run(&a, cl.files[0])) {
		an_fini(&a);
		return EXIT_FAIL;
	}
	if (tool_output_open(&output, cl.output)) {
		an_fini(&a);
		return EXIT_FAIL;
	}
	puts("---");
	for (i = 0; i < a.n_fns; i++) {
		struct an_func *f = a.fns[i];
		uint64_t addr = f->address ? f->address : f->id;

		for (k = 0; k < 2; k++) {
			printf("- { id: %" PRIu32 ", address: 0x%" PRIx64 ", function: 0x%" PRIx64
			       ", kind: %s, always-instrument: true, function-name: ", f->id,
			       addr + (uint64_t)k, addr, kinds[k]);
			xm_yaml_str(an_func_name(&a, f));
			puts(" }");
		}
	}
	puts("...");
	an_fini(&a);
	if (tool_output_close(&output, true))
		status = EXIT_FAIL;
	return status;
}
