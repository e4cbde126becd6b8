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
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
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

static const char extract_map_help[] =
	"Usage: fdrtrace extract-map [options] FILE [-o MAP]\n"
	"\n"
	"Write an XRay instrumentation map (llvm-xray's YAML form) for the function\n"
	"ids of the trace FILE ('-': standard input), so that llvm-xray can read the\n"
	"trace with it: llvm-xray account --instr_map=MAP FILE.\n"
	"\n"
	"Options:\n"
	"  -o, --output MAP      write to MAP (default: standard output)\n"
	"      --no-demangle     write C++ names as recorded (default: demangled)\n"
	"  -h, --help            show this help\n";

int cmd_extract_map(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "no-demangle", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char optstring[] = "o:h";
	static const char *const kinds[2] = { "function-enter", "function-exit" };
	const char *out = NULL;
	struct tool_output output;
	struct analysis a;
	uint32_t i;
	int c, k, status = EXIT_OK;

	memset(&a, 0, sizeof(a));
	a.demangle = true;
	a.quiet = true;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'D':
			a.demangle = false;
			break;
		case 'h':
			return tool_print_help(extract_map_help);
		default:
			return tool_bad_option("extract-map", optstring, argv);
		}
	}
	if (optind != argc - 1)
		return tool_usage_err("extract-map",
				      optind == argc ? "missing FILE" : "one FILE only");
	if (an_run(&a, argv[optind])) {
		an_fini(&a);
		return EXIT_FAIL;
	}
	if (tool_output_open(&output, out)) {
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
