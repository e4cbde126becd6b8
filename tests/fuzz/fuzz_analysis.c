/* SPDX-License-Identifier: MIT */
/*
 * fuzz_analysis.c - libFuzzer target: the analysis commands (account,
 * replay, stack, graph, convert to Chrome JSON and Perfetto, extract-map,
 * and in turn diff, info and verify) on the input as a trace file, with
 * symbol lookup against an ELF file the target writes.
 *
 * Input: TRACE, or TRACE FZ_ELF_SEP ELF. The trace goes to "t.fdr" and the
 * ELF (the part after the separator, else the built-in tests/fuzz/elf/m.elf,
 * a small shared object with symbols, DWARF and an XRay instrumentation
 * map) to "m.elf" in the target's working directory: module records of
 * the trace that name "m.elf" are looked up in it (--locations reads its
 * DWARF), and some runs also name function ids through --instr-map m.elf.
 * account and replay run on every input; the input's length picks the
 * variant (one event per record or runs, options, --instr-map) and
 * which of the others run (stack; graph and extract-map; Chrome JSON;
 * Perfetto; diff, info and verify), so a given input always runs the same
 * way and an input costs three or four commands, not eleven.
 *
 * Checks: no sanitizer report, no leak, no status but 0 or 1, no "internal
 * error"; every text output valid UTF-8, the Chrome JSON one JSON value,
 * the Perfetto trace well-formed protobuf at its top level.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "fuzz_tool.h"
#include "util.h"

#define FZ_ELF_SEP "\n#FZELF#\n"

/* The built-in ELF file, tests/fuzz/elf/m.elf (FZ_ELF is its path). */
extern const uint8_t fz_elf[], fz_elf_end[];
__asm__(".section .rodata\n"
	".global fz_elf\n"
	"fz_elf:\n"
	".incbin \"" FZ_ELF "\"\n"
	".global fz_elf_end\n"
	"fz_elf_end:\n"
	".previous\n");

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup();
	return 0;
}

/* Run @cmd on t.fdr with the common naming options and @extra, output to out. */
static int fz_analysis(int (*cmd)(int, char **), const char *name, const char *const *extra,
		       bool instr_map, const char *out)
{
	const char *args[24];
	int n = 0;

	args[n++] = name;
	args[n++] = "--debug-dir";
	args[n++] = ".";
	args[n++] = "--locations";
	if (instr_map) {
		args[n++] = "--instr-map";
		args[n++] = "m.elf";
	}
	while (extra && *extra && n < 20)
		args[n++] = *extra++;
	args[n++] = "t.fdr";
	args[n] = NULL;
	return fz_run(cmd, out, args);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memmem(data, size, FZ_ELF_SEP, sizeof(FZ_ELF_SEP) - 1);
	size_t trace_len = sep ? (size_t)(sep - data) : size;
	unsigned variant = (unsigned)(size % 8);
	bool imap = variant & 1;

	fz_write("t.fdr", data, trace_len);
	if (sep) {
		size_t off = trace_len + sizeof(FZ_ELF_SEP) - 1;

		fz_write("m.elf", data + off, size - off);
	} else {
		fz_write("m.elf", fz_elf, (size_t)(fz_elf_end - fz_elf));
	}
	if (variant & 2)
		setenv("FDRTRACE_ANALYSIS_READER", "1", 1);
	else
		unsetenv("FDRTRACE_ANALYSIS_READER");

	{
		static const char *const csv[] = { "-f", "csv", "-s", "med", NULL };
		static const char *const sorted[] = { "-s", "func", "-p", "5", NULL };

		fz_analysis(cmd_account, "account", variant & 4 ? csv : sorted, imap, "out");
		fz_check_text("out", false);
	}
	{
		static const char *const plain[] = { NULL };
		static const char *const sel[] = { "-t", "100ns", "-D", "3", "-N", "*elp*", NULL };

		fz_analysis(cmd_replay, "replay", variant & 4 ? sel : plain, imap, "out");
		fz_check_text("out", false);
	}
	switch ((size / 8) % 5) {
	case 0: {
		static const char *const plain[] = { NULL };
		static const char *const per[] = { "-P", "-c", "-F", "main", NULL };

		fz_analysis(cmd_stack, "stack", variant & 4 ? per : plain, imap, "out");
		fz_check_text("out", false);
		break;
	}
	case 1: {
		static const char *const yaml[] = { "-o", "m.yaml", NULL };
		static const char *const dot[] = { "--format", "dot", NULL };

		/* the text tree, or DOT */
		fz_analysis(cmd_graph, "graph", variant & 4 ? dot : NULL, imap, "out");
		fz_check_text("out", false);
		fz_unlink("m.yaml");
		if (fz_analysis(cmd_extract_map, "extract-map", yaml, false, "out") == 0)
			fz_check_text("m.yaml", false);
		break;
	}
	case 2: {
		static const char *const chrome[] = { "-o", "c.json", NULL };

		fz_unlink("c.json");
		if (fz_analysis(cmd_convert, "convert", chrome, imap, "out") == 0)
			fz_check_text("c.json", true);
		break;
	}
	case 3: {
		static const char *const perfetto[] = { "-f", "perfetto", "-o", "c.pftrace", NULL };
		size_t n;
		uint8_t *p;

		fz_unlink("c.pftrace");
		if (fz_analysis(cmd_convert, "convert", perfetto, imap, "out") == 0) {
			p = fz_read("c.pftrace", &n);
			if (!p || !fz_protobuf(p, n))
				abort();
			free(p);
		}
		break;
	}
	default: {
		static const char *const d[] = { "diff", "-q", "t.fdr", "t.fdr", NULL };
		static const char *const info[] = { "info", "t.fdr", NULL };
		static const char *const verify[] = { "verify", "-v", "t.fdr", NULL };

		fz_run(cmd_diff, "out", d);
		fz_check_text("out", false);
		fz_run(cmd_info, "out", info);
		fz_check_text("out", false);
		fz_run(cmd_verify, "out", verify);
		break;
	}
	}
	return 0;
}
