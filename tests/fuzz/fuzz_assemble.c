/* SPDX-License-Identifier: MIT */
/*
 * fuzz_assemble.c - libFuzzer target: assemble's text parser, then the
 * round trip of what it wrote.
 *
 * The input is the text; "fdrtrace assemble a.txt -o a.fdr" runs on it.
 * The process's file size limit is 64 MiB (RLIMIT_FSIZE, SIGXFSZ ignored):
 * assemble must stop at the first failed write and report it (class 7 of
 * issue 11: bounded time and memory whatever lengths the text claims;
 * -rss_limit_mb and -timeout catch the rest). When assemble succeeded and
 * the reader accepts the file (dump exits 0), the dump (with its comments,
 * which assemble ignores) assembled again must give a.fdr byte for byte.
 */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fuzz_tool.h"
#include "util.h"

#define FZ_FSIZE_MAX (64ull << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct rlimit rl = { FZ_FSIZE_MAX, FZ_FSIZE_MAX };

	(void)argc;
	(void)argv;
	fz_setup();
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const asm1[] = { "assemble", "a.txt", "-o", "a.fdr", NULL };
	static const char *const dump[] = { "dump", "a.fdr", NULL };
	static const char *const asm2[] = { "assemble", "-o", "b.fdr", "d.txt", NULL };
	uint8_t *a, *b;
	size_t na, nb;

	fz_write("a.txt", data, size);
	fz_unlink("a.fdr");
	fz_unlink("b.fdr");
	if (fz_run(cmd_assemble, "out", asm1) != 0)
		return 0;
	if (fz_run(cmd_dump, "d.txt", dump) != 0)
		return 0;
	fz_check_text("d.txt", false);
	if (fz_run(cmd_assemble, "out", asm2) != 0) {
		fprintf(stderr, "assemble refused dump's text of a valid trace\n");
		abort();
	}
	a = fz_read("a.fdr", &na);
	b = fz_read("b.fdr", &nb);
	if (!a || !b || na != nb || memcmp(a, b, na)) {
		fprintf(stderr, "dump -> assemble changed a valid trace (%zu -> %zu bytes)\n", na, nb);
		abort();
	}
	free(a);
	free(b);
	return 0;
}
