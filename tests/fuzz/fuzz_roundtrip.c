/* SPDX-License-Identifier: MIT */
/*
 * fuzz_roundtrip.c - libFuzzer target: dump then assemble gives back the
 * identical file (fdrtrace-assemble(1): "for every valid trace, dump then
 * assemble gives a byte-identical file").
 *
 * The input is a trace. When "fdrtrace dump" reads all of it (exit 0), its
 * text, assembled, must be the input byte for byte; the same for the text
 * without comments (dump -n). On the way, verify and info run on the input
 * (their outputs must be UTF-8), and verify must accept what dump read
 * whole.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_tool.h"
#include "util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup();
	return 0;
}

/* Assemble @text to r.fdr; abort unless it is the input. */
static void fz_back(const char *text, const uint8_t *data, size_t size)
{
	const char *const args[] = { "assemble", "-o", "r.fdr", text, NULL };
	uint8_t *r;
	size_t n;

	if (fz_run(cmd_assemble, "out", args) != 0) {
		fprintf(stderr, "assemble refused %s, dump's text of a valid trace\n", text);
		abort();
	}
	r = fz_read("r.fdr", &n);
	if (!r || n != size || memcmp(r, data, n)) {
		fprintf(stderr, "%s: dump -> assemble gave %zu bytes, not the input's %zu\n", text,
			n, size);
		abort();
	}
	free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const dump[] = { "dump", "t.fdr", NULL };
	static const char *const dump_n[] = { "dump", "-n", "t.fdr", NULL };
	static const char *const info[] = { "info", "t.fdr", NULL };
	static const char *const verify[] = { "verify", "t.fdr", NULL };
	int ok;

	fz_write("t.fdr", data, size);
	fz_run(cmd_info, "out", info);
	fz_check_text("out", false);
	ok = fz_run(cmd_verify, "out", verify) == 0;
	fz_check_text("out", false);
	if (fz_run(cmd_dump, "d.txt", dump) != 0)
		return 0;
	fz_check_text("d.txt", false);
	if (!ok) {
		fprintf(stderr, "dump read the whole trace, verify refused it\n");
		abort();
	}
	fz_back("d.txt", data, size);
	if (fz_run(cmd_dump, "n.txt", dump_n) != 0)
		abort();	/* the same reader, the same file */
	fz_back("n.txt", data, size);
	return 0;
}
