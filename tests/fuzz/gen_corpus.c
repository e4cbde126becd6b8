// SPDX-License-Identifier: MIT
/*
 * gen_corpus.c - writes the fuzzers' seed traces into a directory:
 * the reference trace of every FDR version (tests/reader/scenario.c), a
 * version 5 trace carrying fdrtrace extension payloads, and a few headers
 * the reader must refuse. tests/fuzz/corpus/ holds its output, checked in;
 * regenerate with: build/tests/fuzz/gen-fuzz-corpus tests/fuzz/corpus
 */
#include <stdio.h>

#include "scenario.h"

static int save(const char *dir, const char *name, const struct tb *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}

/* An "FDRx" extension payload (header + body) as a v5 custom event. */
static void ext_event(struct tb *b, uint8_t kind, const void *body, uint16_t len)
{
	struct tb p = { 0 };
	uint8_t hdr[8] = { 'F', 'D', 'R', 'x', FDRTRACE_EXT_VERSION, kind };

	memcpy(hdr + 6, &len, 2);
	tb_bytes(&p, hdr, 8);
	tb_bytes(&p, body, len);
	tb_custom_v5(b, (int32_t)p.len, 1, p.data, p.len);
	tb_free(&p);
}

int main(int argc, char **argv)
{
	static const uint8_t config[] = { 2, 0, 4, 0, 'm', 'o', 'd', 'e', 3, 0, 'f', 'd', 'r',
					  1, 0, 'k', 0, 0 };
	static const uint8_t func[] = { 7, 0, 0, 0, 0x10, 0x20, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					0xff, 0xff, 4, 0, 'm', 'a', 'i', 'n' };
	static const uint8_t stack[] = { 9, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0 };
	struct scenario *s = calloc(1, sizeof(*s));
	struct tb b = { 0 };
	size_t ext;
	int ret = 0;

	if (argc != 2 || !s) {
		fprintf(stderr, "usage: gen-fuzz-corpus DIR\n");
		return 2;
	}
	for (unsigned v = 1; v <= 5; v++) {
		char name[32];

		scenario_build(s, v);
		snprintf(name, sizeof(name), "scenario-v%u.fdr", v);
		ret |= save(argv[1], name, &s->b);
		tb_free(&s->b);
	}

	tb_header(&b, 5, FDRTRACE_LOG_FDR, 1000000000, 4096);
	ext = tb_extents(&b, 0);
	tb_new_buffer(&b, 5);
	tb_walltime(&b, 10, 20);
	tb_pid(&b, 5);
	tb_new_cpu(&b, 1, 1000);
	ext_event(&b, FDRTRACE_EXT_CONFIG, config, sizeof(config));
	ext_event(&b, FDRTRACE_EXT_FUNC, func, sizeof(func));
	ext_event(&b, FDRTRACE_EXT_STACK, stack, sizeof(stack));
	tb_func(&b, FDRTRACE_FN_ENTRY_ARGS, 7, 3);
	tb_arg(&b, 42);
	tb_func(&b, FDRTRACE_FN_EXIT, 7, 3);
	tb_close_extents(&b, ext);
	ret |= save(argv[1], "extensions-v5.fdr", &b);
	tb_free(&b);

	tb_header(&b, 3, FDRTRACE_LOG_BASIC, 1000000000, 0);
	ret |= save(argv[1], "basic-mode.fdr", &b);
	tb_free(&b);

	tb_header(&b, 1, FDRTRACE_LOG_FDR, 1000000000, 64);
	tb_new_buffer(&b, 1);
	tb_walltime(&b, 1, 0);
	tb_new_cpu(&b, 0, 5);
	tb_eob(&b);
	ret |= save(argv[1], "v1-minimal.fdr", &b);
	tb_free(&b);
	free(s);
	return ret;
}
