// SPDX-License-Identifier: MIT
/*
 * test_runs.c - fdrtrace_reader_read_functions(), the batch path: mixed
 * with fdrtrace_reader_read(), it gives the events of the per-record path
 * (runs expanded back into events, runs_compare.h) and stops where that
 * path stops, with the same errors, offsets and messages; on the reference
 * traces of every version, on long traces with every body record between
 * the runs (Entry_Args and its arguments, TSCWrap, custom and typed events,
 * a TSC that wraps past 2^64, times that start at 0 inside a run), on every
 * prefix and every damaged copy of them, and on the fuzz corpus
 * (FDR_RUNS_CORPUS) with every byte changed; through a file descriptor
 * and fed from memory in pieces, with runs as long as they come and cut
 * short by max.
 */
#include <dirent.h>
#include <errno.h>

#include <criterion/criterion.h>

#include "runs_compare.h"
#include "scenario.h"

/* xorshift64*: reproducible piece sizes of 1..40 bytes */
static size_t split_random(size_t i, void *arg)
{
	uint64_t *st = arg;

	(void)i;
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return (size_t)((*st * 2685821657736338717ull) >> 33) % 40 + 1;
}

/*
 * @data read per record through a file, and with runs in every mode: each
 * reading must be the same. Return: the records the batch path handed out
 * in the first mode (whole runs through a file).
 */
static uint64_t expect_same(const uint8_t *data, size_t len, const char *what)
{
	static const struct rc_mode ref = { .fd = true };
	uint64_t seed = 0x1234567u, batched = 0;
	const struct rc_mode modes[] = {
		{ .fd = true, .max = SIZE_MAX },
		{ .fd = true, .max = 1 },
		{ .fd = true, .max = 3 },
		{ .fd = false, .max = SIZE_MAX },
		{ .fd = false, .split = split_random, .arg = &seed, .max = SIZE_MAX },
		{ .fd = false, .split = split_random, .arg = &seed, .max = 2 },
	};
	struct rc_log a = rc_read(data, len, &ref);
	char why[1024];

	cr_assert_not(a.run.hung, "%s: the per-record path hung", what);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct rc_log r = rc_read(data, len, &modes[i]);

		cr_expect_not(rc_differ(&a, &r, why, sizeof(why)), "%s, mode %zu: %s", what, i, why);
		cr_expect_eq(r.functions, a.functions, "%s, mode %zu: function records", what, i);
		if (i == 0)
			batched = r.batched;
		rc_free(&r);
	}
	rc_free(&a);
	return batched;
}

/* Per record, and with whole runs through a file and fed in random pieces: the cheap check. */
static bool differs_quick(const uint8_t *data, size_t len, char *why, size_t size)
{
	static const struct rc_mode ref = { .fd = true };
	uint64_t seed = len * 7919u + data[len / 2];
	const struct rc_mode modes[] = {
		{ .fd = true, .max = SIZE_MAX },
		{ .fd = false, .split = split_random, .arg = &seed, .max = 5 },
	};
	struct rc_log a = rc_read(data, len, &ref);
	bool differ = false;

	for (size_t i = 0; i < 2 && !differ; i++) {
		struct rc_log r = rc_read(data, len, &modes[i]);

		differ = rc_differ(&a, &r, why, size);
		rc_free(&r);
	}
	rc_free(&a);
	return differ;
}

/* Every prefix, and every byte set to a few values that break records. */
static void expect_same_damaged(const uint8_t *data, size_t len, const char *what)
{
	static const uint8_t values[] = { 0x00, 0x01, 0x06, 0x08, 0x0f, 0x7f, 0xff };
	uint8_t *copy = malloc(len ? len : 1);
	char why[1024];

	cr_assert(copy);
	memcpy(copy, data, len);
	for (size_t cut = 0; cut <= len; cut++)
		cr_expect_not(differs_quick(copy, cut, why, sizeof(why)), "%s cut at %zu: %s", what,
			      cut, why);
	for (size_t at = 0; at < len; at++) {
		for (size_t k = 0; k < sizeof(values); k++) {
			if (values[k] == data[at])
				continue;
			copy[at] = values[k];
			if (differs_quick(copy, len, why, sizeof(why)))
				cr_assert_fail("%s, byte %zu set to 0x%02x: %s", what, at, values[k],
					       why);
		}
		copy[at] = data[at];
	}
	free(copy);
}

/* ---------------- long traces ---------------- */

static const char payload[5] = { 'a', 'b', 'c', 'd', 'e' };

static void custom(struct tb *b, unsigned v)
{
	if (v >= 5)
		tb_custom_v5(b, 5, 3, payload, 5);
	else if (v == 4)
		tb_custom_v4(b, 5, 777, 1, payload, 5);
	else
		tb_custom_v1(b, 5, 777, payload, 5);
}

/* A buffer's first records; returns where its BufferExtents is (v2+). */
static size_t open_buffer(struct tb *b, unsigned v, int32_t tid, uint64_t sec, uint64_t tsc)
{
	size_t ext = b->len;

	if (v >= 2)
		tb_extents(b, 0);
	tb_new_buffer(b, tid);
	tb_walltime(b, sec, 250);
	if (v >= 3)
		tb_pid(b, 4242);
	tb_new_cpu(b, 3, tsc);
	return ext;
}

/* Version 1 pads to the buffer size after an EndOfBuffer; v2+ sets the extents. */
static void close_buffer(struct tb *b, unsigned v, size_t start, size_t v1_size)
{
	if (v >= 2) {
		tb_close_extents(b, start);
		return;
	}
	cr_assert_leq(b->len + 16, start + v1_size, "v1 buffer too small");
	tb_eob(b);
	tb_fill_to(b, start + v1_size, 0);
}

/* @n function records, with every other body record of version @v between them. */
static void body(struct tb *b, unsigned v, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint32_t id = 1 + (uint32_t)(k % 17), delta = (uint32_t)(k * 37 % 1000);

		if (k % 50 == 49) {
			tb_func(b, FDRTRACE_FN_ENTRY_ARGS, id, delta);
			tb_arg(b, k);
			if (k % 100 == 99)
				tb_arg(b, k + 1);
			continue;
		}
		if (k % 97 == 96)
			tb_tsc_wrap(b, 5000000 + k);
		if (k % 130 == 129)
			custom(b, v);
		if (v >= 5 && k % 211 == 210)
			tb_typed(b, 3, 2, 9, "xyz", 3);
		if (k % 160 == 159)
			tb_new_cpu(b, (uint16_t)(k % 7), 9000000 + k);
		tb_func(b, k % 3 == 2 ? FDRTRACE_FN_TAIL_EXIT : k % 2 ? FDRTRACE_FN_EXIT :
					FDRTRACE_FN_ENTRY, id, delta);
	}
}

/*
 * Version @v: @buffers buffers of @n records, then a buffer whose TSC wraps
 * past 2^64 inside what would be one run, then one whose times start at 0
 * (a WallTimeMarker of 0 s and a TSC below the buffer's first reference)
 * and become positive inside what would be one run.
 */
static void build_long(struct tb *b, unsigned v, size_t buffers, size_t n, size_t v1_size)
{
	size_t at;

	tb_header(b, (uint16_t)v, FDRTRACE_LOG_FDR, FREQ, v1_size);
	for (size_t i = 0; i < buffers; i++) {
		at = open_buffer(b, v, (int32_t)(100 + i % 3), 1000 + i, 1000000 * (i + 1));
		body(b, v, n);
		close_buffer(b, v, at, v1_size);
	}

	at = open_buffer(b, v, 7, 2000, UINT64_MAX - 2500);
	for (int k = 0; k < 6; k++)
		tb_func(b, k % 2 ? FDRTRACE_FN_EXIT : FDRTRACE_FN_ENTRY, 5, 1000);
	close_buffer(b, v, at, v1_size);

	at = b->len;
	if (v >= 2)
		tb_extents(b, 0);
	tb_new_buffer(b, 8);
	tb_walltime(b, 0, 0);
	if (v >= 3)
		tb_pid(b, 4242);
	tb_new_cpu(b, 0, 1000000);
	tb_tsc_wrap(b, 0);
	/* tsc 300000, 600000, 900000 (time 0), then 1200000 (time 100 us) ... */
	for (int k = 0; k < 8; k++)
		tb_func(b, k % 2 ? FDRTRACE_FN_EXIT : FDRTRACE_FN_ENTRY, 6, 300000);
	close_buffer(b, v, at, v1_size);
}

Test(runs, reference_traces_read_the_same_with_runs)
{
	for (unsigned v = 1; v <= 5; v++) {
		struct scenario s;
		char what[32];

		scenario_build(&s, v);
		snprintf(what, sizeof(what), "scenario v%u", v);
		cr_expect_gt(expect_same(s.b.data, s.b.len, what), 0,
			     "%s: no function record came in a run", what);
		tb_free(&s.b);
	}
}

Test(runs, long_traces_of_every_version_read_the_same_with_runs)
{
	for (unsigned v = 1; v <= 5; v++) {
		struct tb b = { 0 };
		struct rc_log all, per;
		struct rc_mode whole = { .fd = true, .max = SIZE_MAX }, ref = { .fd = true };
		char what[32], why[1024];

		build_long(&b, v, 3, 700, 16384);
		snprintf(what, sizeof(what), "long v%u", v);
		expect_same(b.data, b.len, what);

		/* Clean: read to its end, most records in long runs. */
		per = rc_read(b.data, b.len, &ref);
		all = rc_read(b.data, b.len, &whole);
		cr_expect_eq(per.run.final, FDRTRACE_EOF, "%s: %s", what, per.run.msg);
		cr_expect_not(rc_differ(&per, &all, why, sizeof(why)), "%s: %s", what, why);
		cr_expect_gt(all.batched, all.functions * 9 / 10, "%s: %llu of %llu in runs", what,
			     (unsigned long long)all.batched, (unsigned long long)all.functions);
		cr_expect_lt(all.runs, all.batched / 10, "%s: %llu runs for %llu records", what,
			     (unsigned long long)all.runs, (unsigned long long)all.batched);
		rc_free(&per);
		rc_free(&all);
		tb_free(&b);
	}
}

/*
 * The wrap buffer: the record that carries the TSC past 2^64 comes per
 * record, the others in runs. The zero-time buffer: no run mixes records
 * of time 0 with later ones (rc_take_run() checks it on every run).
 */
Test(runs, a_wrapping_tsc_and_times_from_0_split_runs)
{
	struct tb b = { 0 };
	struct rc_mode whole = { .fd = true, .max = SIZE_MAX };
	struct rc_log l;
	size_t wrapped = 0, zero = 0, timed = 0;

	build_long(&b, 5, 0, 0, 0);
	l = rc_read(b.data, b.len, &whole);
	cr_assert_str_empty(l.broken, "%s", l.broken);
	cr_assert_eq(l.run.final, FDRTRACE_EOF, "%s", l.run.msg);
	cr_expect_eq(l.functions, 14);
	/* runs: wrap buffer 3 + 3 records around the per-record one; zero buffer 3 + 5 */
	cr_expect_eq(l.batched, 13, "%llu in runs", (unsigned long long)l.batched);
	cr_expect_eq(l.runs, 4, "%llu runs", (unsigned long long)l.runs);
	for (size_t i = 0; i < l.run.n; i++) {
		const struct fdrtrace_event *e = &l.run.ev[i];

		if (e->type != FDRTRACE_EV_FUNCTION)
			continue;
		if (e->tid == 7 && e->tsc < 3000)
			wrapped++;
		if (e->tid == 8 && e->wall_ns)
			timed++;
		else if (e->tid == 8)
			zero++;
	}
	cr_expect_eq(wrapped, 3, "records after the wrap: %zu", wrapped);
	cr_expect_eq(zero, 3);
	cr_expect_eq(timed, 5);
	rc_free(&l);
	tb_free(&b);
}

/* Records cut by the 64 KiB I/O buffer's end, and payloads of odd sizes before them. */
Test(runs, runs_across_the_readers_io_buffer_read_the_same)
{
	struct tb b = { 0 };

	build_long(&b, 5, 4, 9000, 0);
	cr_assert_gt(b.len, 4 * 65536);
	cr_expect_gt(expect_same(b.data, b.len, "big v5"), 30000);
	tb_free(&b);
	build_long(&b, 1, 2, 9000, 1 << 17);
	cr_expect_gt(expect_same(b.data, b.len, "big v1"), 15000);
	tb_free(&b);
}

Test(runs, every_prefix_and_damaged_byte_reads_the_same_with_runs, .timeout = 600)
{
	for (unsigned v = 1; v <= 5; v += 2) {
		struct tb b = { 0 };
		char what[32];

		build_long(&b, v, 2, 60, 1024);
		snprintf(what, sizeof(what), "damaged v%u", v);
		expect_same_damaged(b.data, b.len, what);
		tb_free(&b);
	}
}

Test(runs, max_0_hands_out_nothing)
{
	struct scenario s;
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_func_run fr;
	struct fdrtrace_event ev;
	size_t got;

	scenario_build(&s, 5);
	fdrtrace_reader_feed(rd, s.b.data, s.b.len);
	cr_expect_eq(fdrtrace_reader_read_functions(rd, &fr, SIZE_MAX), 0, "before the header");
	while (fdrtrace_reader_read(rd, &ev) == 0 && ev.type != FDRTRACE_EV_NEW_CPU_ID)
		;
	cr_expect_eq(fdrtrace_reader_read_functions(rd, &fr, 0), 0);
	got = fdrtrace_reader_read_functions(rd, &fr, SIZE_MAX);
	cr_expect_gt(got, 0, "a function record follows NewCPUId in the scenario");
	fdrtrace_reader_close(rd);
	tb_free(&s.b);
}

/* ---------------- stepping over buffers ---------------- */

/* Where a buffer starts and what its preamble says, from a full read. */
struct buf_seen {
	uint64_t offset, tsc;
	int32_t tid;
};

/* Every buffer of @data (at most @max), read event by event. Return: how many. */
static size_t buffers_of(const uint8_t *data, size_t len, struct buf_seen *out, size_t max)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;
	size_t n = 0;
	bool fresh = false;

	fdrtrace_reader_feed(rd, data, len);
	for (;;) {
		bool first;

		if (fdrtrace_reader_read(rd, &ev)) {
			if (ev.state != FDRTRACE_REQUIRE_DATA)
				break;
			fdrtrace_reader_feed(rd, NULL, 0);
			continue;
		}
		first = ev.type == FDRTRACE_EV_BUFFER_EXTENTS ||
			(ev.version == 1 && ev.type == FDRTRACE_EV_NEW_BUFFER);

		if (first && ev.type == FDRTRACE_EV_BUFFER_EXTENTS && ev.u.extents.size == 0)
			continue;	/* empty: no preamble to see */
		if (first) {
			cr_assert_lt(n, max);
			out[n].offset = ev.offset;
			fresh = true;
			n++;
		}
		if (ev.type == FDRTRACE_EV_NEW_BUFFER)
			out[n - 1].tid = ev.tid;
		if (ev.type == FDRTRACE_EV_NEW_CPU_ID && fresh) {
			out[n - 1].tsc = ev.tsc;
			fresh = false;
		}
	}
	cr_assert_eq(ev.state, FDRTRACE_EOF, "the trace reads to its end: %s", fdrtrace_reader_errmsg(rd));
	fdrtrace_reader_close(rd);
	return n;
}

/*
 * The preamble of the buffer whose first record is next on @rd, then the
 * rest of it left unread. Return: 0, -1 at the end (or on an error).
 */
static int preamble_then_leave(struct fdrtrace_reader *rd, struct buf_seen *got)
{
	struct fdrtrace_event ev;

	memset(got, 0, sizeof(*got));
	for (;;) {
		if (fdrtrace_reader_read(rd, &ev))
			return -1;
		if (ev.type == FDRTRACE_EV_BUFFER_EXTENTS ||
		    (ev.version == 1 && ev.type == FDRTRACE_EV_NEW_BUFFER))
			got->offset = ev.offset;
		if (ev.type == FDRTRACE_EV_BUFFER_EXTENTS && ev.u.extents.size == 0) {
			cr_expect_eq(fdrtrace_reader_leave_buffer(rd), 0, "an empty buffer");
			continue;
		}
		if (ev.type == FDRTRACE_EV_NEW_BUFFER)
			got->tid = ev.tid;
		if (ev.type == FDRTRACE_EV_NEW_CPU_ID) {
			got->tsc = ev.tsc;
			cr_assert_eq(fdrtrace_reader_leave_buffer(rd), 0);
			cr_expect_eq(fdrtrace_reader_leave_buffer(rd), -EINVAL, "left already");
			return 0;
		}
	}
}

Test(runs, leave_buffer_steps_to_the_next_buffer_from_a_file_and_from_memory)
{
	for (unsigned v = 1; v <= 5; v++) {
		struct buf_seen want[16], got;
		struct fdrtrace_reader *rd;
		struct fdrtrace_event ev;
		struct tb b = { 0 };
		size_t n, i, fed;
		int fd;

		build_long(&b, v, 6, 300, 8192);
		n = buffers_of(b.data, b.len, want, 16);
		cr_assert_geq(n, 8, "v%u: the trace has its buffers", v);

		/* A file reader reads and discards each body: nothing of it is returned. */
		fd = memfd_create("trace", 0);
		cr_assert_eq(write(fd, b.data, b.len), (ssize_t)b.len);
		cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
		rd = fdrtrace_reader_open(fd);
		cr_assert_eq(fdrtrace_reader_read(rd, &ev), 0, "the header");
		cr_expect_eq(fdrtrace_reader_leave_buffer(rd), -EINVAL, "between buffers");
		for (i = 0; i < n; i++) {
			cr_assert_eq(preamble_then_leave(rd, &got), 0, "v%u buffer %zu", v, i);
			cr_expect_eq(got.offset, want[i].offset, "v%u buffer %zu offset", v, i);
			cr_expect_eq(got.tid, want[i].tid, "v%u buffer %zu tid", v, i);
			cr_expect_eq(got.tsc, want[i].tsc, "v%u buffer %zu tsc", v, i);
		}
		cr_expect_neq(fdrtrace_reader_read(rd, &ev), 0);
		cr_expect_eq(ev.state, FDRTRACE_EOF, "v%u: the end, after the last buffer", v);
		fdrtrace_reader_close(rd);
		close(fd);

		/*
		 * A memory reader fed only each preamble's bytes (and some of
		 * the body): the feed after leaving starts at the buffer's end.
		 */
		rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
		fdrtrace_reader_feed(rd, b.data, 32);
		cr_assert_eq(fdrtrace_reader_read(rd, &ev), 0, "the header");
		fed = 32;
		for (i = 0; i < n; i++) {
			size_t end = i + 1 < n ? (size_t)want[i + 1].offset : b.len;
			size_t piece = end - fed < 120 ? end - fed : 120;

			cr_assert_eq(fdrtrace_reader_feed(rd, b.data + fed, piece), 0);
			cr_assert_eq(preamble_then_leave(rd, &got), 0, "v%u buffer %zu", v, i);
			cr_expect_eq(got.offset, want[i].offset, "v%u buffer %zu offset", v, i);
			cr_expect_eq(got.tid, want[i].tid, "v%u buffer %zu tid", v, i);
			cr_expect_eq(got.tsc, want[i].tsc, "v%u buffer %zu tsc", v, i);
			fed = end;
		}
		fdrtrace_reader_feed(rd, NULL, 0);
		cr_expect_neq(fdrtrace_reader_read(rd, &ev), 0);
		cr_expect_eq(ev.state, FDRTRACE_EOF, "v%u: the end, after the last buffer", v);
		fdrtrace_reader_close(rd);
		tb_free(&b);
	}
}

/* ---------------- the fuzz corpus ---------------- */

Test(runs, fuzz_corpus_reads_the_same_with_runs_also_damaged, .timeout = 600)
{
	const char *dir = getenv("FDR_RUNS_CORPUS");
	struct dirent *de;
	size_t files = 0;
	DIR *d;

	cr_assert(dir, "FDR_RUNS_CORPUS is not set (meson sets it to tests/fuzz/corpus)");
	d = opendir(dir);
	cr_assert(d, "%s: cannot open", dir);
	while ((de = readdir(d))) {
		char path[4096];
		uint8_t *data;
		FILE *f;
		long len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		cr_assert(f, "%s", path);
		cr_assert_eq(fseek(f, 0, SEEK_END), 0);
		len = ftell(f);
		rewind(f);
		data = malloc(len ? (size_t)len : 1);
		cr_assert(data && fread(data, 1, (size_t)len, f) == (size_t)len, "%s", path);
		fclose(f);
		expect_same(data, (size_t)len, de->d_name);
		expect_same_damaged(data, (size_t)len, de->d_name);
		free(data);
		files++;
	}
	closedir(d);
	cr_expect_geq(files, 5, "only %zu files in %s", files, dir);
}
