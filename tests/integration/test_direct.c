// SPDX-License-Identifier: MIT
/*
 * tests/integration/test_direct.c - the trace file written direct
 * (O_DIRECT, direct_io=always: an aligned stage, the last partial block
 * settled through the page cache) holds what the page cache would have
 * held, and a process killed outright leaves it readable up to its end.
 *
 * The runs write under /tmp (trace_check.c): where /tmp takes no direct
 * writes (tmpfs), the tests say so and are skipped; nothing is faked.
 */
#include <errno.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_assert.h"

#define DIRECT_LINE "written direct (O_DIRECT) from byte "

/*
 * Does the file system of /tmp report a direct-I/O alignment for a file
 * (as the runtime asks of its trace file; directories report none)?
 */
static bool tmp_takes_direct_writes(void)
{
	char path[] = "/tmp/fdrtrace-dio-XXXXXX";
	struct statx st;
	int fd = mkstemp(path);
	bool yes;

	if (fd < 0)
		return false;
	yes = !statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &st) &&
	      (st.stx_mask & STATX_DIOALIGN) && st.stx_dio_offset_align;
	close(fd);
	unlink(path);
	return yes;
}

static void need_direct_io(void)
{
	if (!tmp_takes_direct_writes())
		cr_skip_test("/tmp's file system takes no direct writes (tmpfs?): "
			     "direct_io cannot be tested here");
}

static void run_target(struct tc_run *r, const char *const *argv, const char *options)
{
	char opt[512];
	const char *env[] = { "FDRTRACE_MODE=fdr", opt, NULL };

	snprintf(opt, sizeof(opt), "FDRTRACE_OPTIONS=%s", options);
	tc_run(r, argv, env);
}

/*
 * The same deterministic run written direct and through the page cache:
 * both read whole and closed, with the same records and counts. The
 * buffer size (12 KiB, frames of 12 KiB + 16 bytes) puts buffer edges
 * everywhere in a block; 9 MB spans many full stages.
 */
static void check_same_as_buffered(const char *version)
{
	const char *argv[] = { TARGET, "repeat", "400", NULL };
	static const char *const names[] = { "main", "work", "mid", "leaf", "rec" };
	struct tc_run d, b;
	struct tc_trace td, tb;
	char opt[256];

	need_direct_io();
	/* on_full=wait: 12 KiB buffers run the pool dry; a count is compared only whole */
	snprintf(opt, sizeof(opt), "buffer_size=12K on_full=wait verbosity=2 direct_io=always %s",
		 version);
	run_target(&d, argv, opt);
	snprintf(opt, sizeof(opt), "buffer_size=12K on_full=wait verbosity=2 direct_io=off %s",
		 version);
	run_target(&b, argv, opt);
	tc_assert_exited_ok(&d);
	tc_assert_exited_ok(&b);
	cr_expect(strstr(d.err, DIRECT_LINE), "direct_io=always did not write direct: %s", d.err);
	cr_expect(!strstr(b.err, DIRECT_LINE), "direct_io=off wrote direct: %s", b.err);
	tc_assert_one_trace(&d, &td);
	tc_assert_one_trace(&b, &tb);
	cr_expect(td.closed && tb.closed);
	cr_expect_gt(td.file_size, 4u << 20, "%llu bytes: too small to span stages",
		     (unsigned long long)td.file_size);
	cr_expect_eq(td.func_records, tb.func_records, "direct %llu, buffered %llu records",
		     (unsigned long long)td.func_records, (unsigned long long)tb.func_records);
	cr_expect_eq(td.dropped, 0);
	cr_expect_eq(tb.dropped, 0);
	cr_expect_eq(td.close_records, td.func_records);
	cr_expect_eq(td.unmatched, 0);
	cr_expect_eq(td.nameless, 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cr_expect_eq(tc_calls(&td, names[i]), tc_calls(&tb, names[i]), "%s", names[i]);
		cr_expect_eq(tc_exits(&td, names[i]), tc_exits(&tb, names[i]), "%s", names[i]);
	}
	cr_expect_eq(tc_calls(&td, "leaf"), 400 * 1300ull);
	tc_free(&td);
	tc_free(&tb);
	tc_done(&d);
	tc_done(&b);
}

Test(direct_io, always_writes_what_the_page_cache_would_v5)
{
	check_same_as_buffered("format_version=5");
}

Test(direct_io, always_writes_what_the_page_cache_would_v1)
{
	check_same_as_buffered("format_version=1");
}

/*
 * A trace under one block: its header is still in the stage when the
 * close writes the refined frequency into it, and the stage is what the
 * file gets last. The header must have the close's frequency, not the
 * start's calibration (both read from the one file). 300 ms of run: the
 * frequency is refined (from 4 ms on) and so differs from the start's.
 */
Test(direct_io, a_small_trace_keeps_the_refined_frequency_in_its_header)
{
	const char *argv[] = { TARGET, "nap", "300", NULL };
	struct tc_run r;
	struct tc_trace t;

	need_direct_io();
	run_target(&r, argv, "verbosity=2 direct_io=always");
	tc_assert_exited_ok(&r);
	cr_expect(strstr(r.err, DIRECT_LINE), "%s", r.err);
	tc_assert_one_trace(&r, &t);
	cr_assert(t.closed);
	cr_expect_lt(t.file_size, 4096, "%llu bytes: not under one block",
		     (unsigned long long)t.file_size);
	cr_expect_eq(t.freq, t.close_freq, "header %llu Hz, close %llu Hz",
		     (unsigned long long)t.freq, (unsigned long long)t.close_freq);
	tc_free(&t);
	tc_done(&r);
}

/* A fork child's file is its own: both written direct, both whole. */
Test(direct_io, a_fork_child_writes_its_own_file_direct)
{
	const char *argv[] = { TARGET, "fork", NULL };
	char paths[4][512];
	struct tc_run r;

	need_direct_io();
	run_target(&r, argv, "buffer_size=4K verbosity=2 direct_io=always");
	tc_assert_exited_ok(&r);
	cr_assert_eq(tc_find_traces(&r, paths, 4), 2, "stderr: %s", r.err);
	for (int i = 0; i < 2; i++) {
		struct tc_trace t;

		tc_expect_whole(paths[i], &t);
		cr_expect_eq(t.dropped, 0);
		tc_free(&t);
	}
	{
		const char *first = strstr(r.err, DIRECT_LINE);

		cr_expect(first && strstr(first + 1, DIRECT_LINE),
			  "parent and child did not both write direct: %s", r.err);
	}
	tc_done(&r);
}

/*
 * Killed while idle (SIGKILL 1.5 s into a run that stopped recording at
 * once): the flush thread settled the last partial block 10 ms after its
 * last write, so the file ends where the last buffer written ends and
 * reads whole. Kept only in the stage, that block would be missing and
 * the trace cut inside a buffer.
 */
Test(direct_io, a_kill_while_idle_leaves_every_byte_written)
{
	const char *argv[] = { TARGET, "idle", "300", NULL };
	struct tc_run r;
	struct tc_trace t;

	need_direct_io();
	tc_kill_ms = 1500;
	/* on_full=wait: a flush thread starved of CPU (CI beside other work) must not make it lose records */
	run_target(&r, argv, "buffer_size=8K direct_io=always on_full=wait");
	tc_kill_ms = 0;
	cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL, "status 0x%x: %s",
		  r.status, r.err);
	cr_expect(strstr(r.out, "direct 1\n"), "the trace file is not open O_DIRECT: %s", r.out);
	tc_assert_one_trace(&r, &t);
	cr_expect_not(t.closed);
	/* 300 x work(): the full 8 KiB buffers, all but the thread's last */
	cr_expect_gt(t.func_records, 300 * 1300ull, "%llu", (unsigned long long)t.func_records);
	cr_expect_eq(t.nameless, 0);
	tc_free(&t);
	tc_done(&r);
}

/*
 * Killed while writing: the trace may be cut, but only at its very end
 * (the stage's partial block is what a kill loses), never inside.
 */
Test(direct_io, a_kill_while_writing_cuts_the_trace_only_at_its_end)
{
	static const long when_ms[] = { 40, 120, 300, 700 };
	const char *argv[] = { TARGET, "spin", NULL };

	need_direct_io();
	for (size_t i = 0; i < sizeof(when_ms) / sizeof(when_ms[0]); i++) {
		struct tc_run r;
		struct tc_trace t;
		char paths[2][512], end[64];

		tc_kill_ms = when_ms[i];
		run_target(&r, argv, "buffer_size=8K direct_io=always");
		tc_kill_ms = 0;
		cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL, "0x%x", r.status);
		if (tc_find_traces(&r, paths, 2) != 1) {
			/* killed before the file was created: nothing to check */
			tc_done(&r);
			continue;
		}
		tc_read(paths[0], &t);
		snprintf(end, sizeof(end), ":%llu: truncated", (unsigned long long)t.file_size);
		cr_expect(t.ok || strstr(t.error, end), "after %ld ms: %s", when_ms[i], t.error);
		cr_expect_not(t.closed);
		cr_expect_eq(t.nameless, 0, "after %ld ms", when_ms[i]);
		tc_free(&t);
		tc_done(&r);
	}
}

/*
 * ulimit -f: the direct write that would pass the limit is not tried; the
 * message names the error, and the trace reads and ends with a close
 * marker "stopped" (EFBIG) that counts what the file holds.
 */
Test(direct_io, a_file_size_limit_stops_recording_cleanly)
{
	const char *argv[] = { TARGET, "repeat", "400", NULL };
	struct tc_run r;
	struct tc_trace t;

	need_direct_io();
	tc_fsize_limit = 3 << 20;
	/* on_full=wait: a lossy run (a starved flush thread) might never reach the limit */
	run_target(&r, argv, "buffer_size=12K direct_io=always on_full=wait");
	tc_fsize_limit = 0;
	tc_assert_exited_ok(&r);
	cr_expect(strstr(r.err, "write failed: File too large; recording stopped"), "%s", r.err);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.ok, "%s", t.error);
	cr_expect_leq(t.file_size, 3u << 20);
	cr_expect_gt(t.func_records, 0);
	cr_expect(t.closed, "no close marker");
	cr_expect_eq(t.close_how, FDRTRACE_CLOSE_STOPPED);
	cr_expect_eq(t.close_error, EFBIG);
	cr_expect_eq(t.close_records, t.func_records, "the close counts what the file holds");
	tc_free(&t);
	tc_done(&r);
}
