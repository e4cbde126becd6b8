// SPDX-License-Identifier: MIT
/*
 * fuzz_reader_feed.c - libFuzzer target, differential: the input (after a
 * first byte that seeds the splitting) is fed to a memory reader in
 * pseudo-random pieces, and again in one piece; and in pieces again, with
 * plain function records taken in runs (fdrtrace_reader_read_functions(),
 * at most 1 to 64 records or unbounded). All three must produce the same
 * events and stop the same way. Crashes, sanitizer reports, hangs and
 * differences are findings.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct digest run(const uint8_t *data, size_t size, uint64_t seed, size_t max)
{
	struct fdrtrace_reader *r = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;
	struct digest d = { 0 };
	uint64_t next = 0, st = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t pos = 0;

	if (!r)
		abort();
	for (size_t i = 0; i <= 3 * size + 32; i++) {
		struct fdrtrace_func_run fr;

		if (max && fdrtrace_reader_read_functions(r, &fr, max)) {
			if (fr.count > max)
				abort();
			fz_run(&d, r, &fr, &next);
			continue;
		}
		if (fdrtrace_reader_read(r, &ev) == 0) {
			fz_event(&d, &ev, &next);
			continue;
		}
		if (ev.state != FDRTRACE_REQUIRE_DATA) {
			if (!fz_stop(&d, r, ev.state))
				break;
			continue;
		}
		if (pos == size) {
			if (fdrtrace_reader_feed(r, NULL, 0) != 0)
				abort();
			continue;
		}
		size_t n = size - pos;

		if (seed) {
			st ^= st << 13;
			st ^= st >> 7;
			st ^= st << 17;
			/* mostly small pieces, sometimes large ones */
			n = (size_t)(st % ((st >> 60) ? 24 : 4096)) + 1;
			if (n > size - pos)
				n = size - pos;
		}
		if (fdrtrace_reader_feed(r, data + pos, n) != 0)
			abort();
		pos += n;
	}
	if (d.final != FDRTRACE_EOF && d.final != FDRTRACE_ERROR)
		abort();
	fdrtrace_reader_close(r);
	return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct digest whole, split, batch;
	size_t max = data && size ? (data[0] & 0x40 ? SIZE_MAX : (size_t)(data[0] & 0x3f) + 1) : 0;

	if (size < 1)
		return 0;
	whole = run(data + 1, size - 1, 0, 0);
	split = run(data + 1, size - 1, (uint64_t)data[0] + 1, 0);
	batch = run(data + 1, size - 1, (uint64_t)data[0] + 1, max);
	for (int i = 0; i < 2; i++) {
		const struct digest *o = i ? &batch : &split;

		if (whole.events != o->events || whole.hash != o->hash ||
		    whole.final != o->final || whole.err != o->err ||
		    whole.err_offset != o->err_offset || whole.skips != o->skips)
			abort();
	}
	return 0;
}
