// SPDX-License-Identifier: MIT
/*
 * tests/integration/test_recording.c - flight-recorder features on a real
 * instrumented program (targets/recorder.c): the control API, the ring
 * policy and its stack records, snapshots, short-call elision and filters.
 * Every trace is read back with the reader library (trace_check.c).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tc_assert.h"

static void run_recorder(struct tc_run *r, const char *mode, const char *options)
{
	const char *argv[] = { RECORDER_TARGET, mode, NULL };
	char opt[512];
	const char *env[] = { "FDRTRACE_MODE=fdr", opt, NULL };

	snprintf(opt, sizeof(opt), "FDRTRACE_OPTIONS=%s", options);
	tc_run(r, argv, env);
}

/* The trace whose name has no ".snap" in it. */
static void final_trace(const struct tc_run *r, struct tc_trace *t)
{
	char paths[8][512];
	int n = tc_find_traces(r, paths, 8);

	for (int i = 0; i < n; i++) {
		if (strstr(paths[i], ".snap"))
			continue;
		tc_read(paths[i], t);
		cr_assert(t->ok, "reader: %s", t->error);
		return;
	}
	cr_assert_fail("no final trace in %s (%d files; stderr: %s)", r->dir, n, r->err);
}

static void expect_out(const struct tc_run *r, const char *line)
{
	cr_expect(strstr(r->out, line), "missing '%s' in output:\n%s", line, r->out);
}

static void check_api(const char *options, unsigned version)
{
	struct tc_run r;
	struct tc_trace t;

	run_recorder(&r, "api", options);
	tc_assert_exited_ok(&r);
	expect_out(&r, "custom 0\n");
	if (version == 5)
		expect_out(&r, "typed 0\n");
	else
		expect_out(&r, "typed -95\n");	/* -EOPNOTSUPP */
	expect_out(&r, "too big -90\n");	/* -EMSGSIZE */
	expect_out(&r, "magic -22\n");
	expect_out(&r, "null -22\n");
	expect_out(&r, "log_arg 0 0\n");
	expect_out(&r, "with_args 41\n");
	expect_out(&r, "late arg -2\n");	/* -ENOENT: other calls came in between */
	expect_out(&r, "stop 0\n");
	expect_out(&r, "start 0\n");
	expect_out(&r, "ignore 0\n");
	expect_out(&r, "ignored custom -1\n");	/* -EPERM */
	final_trace(&r, &t);
	cr_expect_eq(t.version, version);
	/* leaf: 1 in with_args + 10 after start; the 1000 while stopped and the ignored thread's are not */
	cr_expect_eq(tc_calls(&t, "leaf"), 11);
	cr_expect_eq(tc_exits(&t, "leaf"), 11);
	cr_expect_eq(tc_calls(&t, "work"), 0, "work ran while stopped or ignored");
	cr_expect_eq(tc_calls(&t, "with_args"), 1);
	cr_expect_eq(t.entry_args, 1);
	cr_expect_eq(t.nargs, 2);
	cr_expect_eq(t.args[0], 42);
	cr_expect_eq(t.args[1], (uint64_t)-1);
	cr_expect_eq(t.user_events, 2, "custom events: %d", t.user_events);
	cr_expect_str_eq(t.user_event, "in-evented");
	if (version == 5) {
		cr_expect_eq(t.typed_events, 1);
		cr_expect_eq(t.typed_type, 7);
		cr_expect_str_eq(t.typed_event, "typed!");
	}
	/* the ignored thread's entry of ignored_thread() came before it asked */
	cr_expect_eq(t.ntids, 3, "main, the ignoring thread, the flush thread: %d", t.ntids);
	cr_expect_eq(tc_calls(&t, "ignored_thread"), 1);
	cr_expect_eq(tc_exits(&t, "ignored_thread"), 0);
	cr_expect_eq(t.unmatched, 0);
	cr_expect_eq(t.open_at_end, 1);
	cr_expect(t.closed);
	tc_free(&t);
	tc_done(&r);
}

Test(api, custom_typed_args_stop_start_and_ignore_in_a_v5_trace)
{
	check_api("format_version=5", 5);
}

Test(api, custom_args_stop_start_and_ignore_in_a_v1_trace)
{
	check_api("format_version=1", 1);
}

/* ---- ring policy ---- */

static int id_named(const struct tc_trace *t, const char *name)
{
	for (int i = 1; i < TC_MAX_IDS; i++)
		if (t->names[i] && !strcmp(t->names[i], name))
			return i;
	return 0;
}

static void check_ring(const char *version)
{
	struct tc_run r;
	struct tc_trace t;
	char opt[256];
	/* f0/f1/f2 300000, deep 6, newest 100, main 1: entries and exits */
	const uint64_t emitted = 2 * (300000 + 6 + 100 + 1);
	int f[3], cyc = -1;
	uint64_t fcalls = 0, breaks = 0;

	snprintf(opt, sizeof(opt), "policy=ring buffer_size=4096 buffer_max=4 format_version=%s",
		 version);
	run_recorder(&r, "ring", opt);
	tc_assert_exited_ok(&r);
	expect_out(&r, "ok ring\n");
	{
		char paths[4][512];

		cr_assert_eq(tc_find_traces(&r, paths, 4), 1, "ring policy writes one file at exit");
	}
	tc_want_log = true;
	final_trace(&r, &t);
	tc_want_log = false;
	cr_expect(t.closed);
	cr_expect_eq(t.close_how, FDRTRACE_CLOSE_EXIT);
	/* every record is in the trace or counted as overwritten, nothing else */
	cr_expect_eq(t.func_records + t.dropped_by[FDRTRACE_DROP_OVERWRITTEN], emitted,
		     "%llu kept + %llu overwritten",
		     (unsigned long long)t.func_records,
		     (unsigned long long)t.dropped_by[FDRTRACE_DROP_OVERWRITTEN]);
	cr_expect_eq(t.dropped, t.dropped_by[FDRTRACE_DROP_OVERWRITTEN], "only overwrites");
	cr_expect_eq(t.close_records, t.func_records);
	/* the newest buffers: the end of the run is all there */
	cr_expect_eq(tc_calls(&t, "newest"), 100);
	cr_expect_eq(tc_exits(&t, "newest"), 100);
	cr_expect_eq(tc_calls(&t, "deep"), 6);
	cr_expect_eq(tc_exits(&t, "main"), 1);
	cr_expect_eq(tc_calls(&t, "main"), 0, "main's entry was overwritten long ago");
	/* at most buffer_max buffers of ~250 calls each: the older calls are gone */
	fcalls = tc_calls(&t, "f0") + tc_calls(&t, "f1") + tc_calls(&t, "f2");
	cr_expect_gt(fcalls, 300);
	cr_expect_lt(fcalls, 4 * 4096 / 16);
	/* and the kept calls are one unbroken run: f0 f1 f2 f0 ... */
	f[0] = id_named(&t, "f0");
	f[1] = id_named(&t, "f1");
	f[2] = id_named(&t, "f2");
	for (uint64_t i = 0; i < t.nlog; i++) {
		int k = -1;

		if (t.log[i].action != FDRTRACE_FN_ENTRY)
			continue;
		for (int j = 0; j < 3; j++)
			k = (int)t.log[i].id == f[j] ? j : k;
		if (k < 0)
			continue;
		if (cyc >= 0 && k != (cyc + 1) % 3)
			breaks++;
		cyc = k;
	}
	cr_expect_eq(breaks, 0, "the kept calls have %llu gaps", (unsigned long long)breaks);
	cr_expect_eq(cyc, 2, "the last of the 300000 calls is f2");
	/* stacks: each buffer says what was open; the rebuilt stack agrees */
	cr_expect_geq(t.stacks, 3, "stack records: %d", t.stacks);
	cr_expect_eq(t.stack_unmatched, 0);
	/*
	 * every buffer is numbered, the kept ones one after the other (oldest
	 * overwritten first), and the first says how many records the
	 * thread made before it: exactly those overwritten (one thread)
	 */
	cr_expect_eq(t.ring_numbered, t.stacks);
	cr_expect_eq(t.ring_misnumbered, 0);
	cr_expect_eq(t.ring_first_before, t.dropped_by[FDRTRACE_DROP_OVERWRITTEN],
		     "%llu before the first kept buffer, %llu overwritten",
		     (unsigned long long)t.ring_first_before,
		     (unsigned long long)t.dropped_by[FDRTRACE_DROP_OVERWRITTEN]);
	cr_expect_eq(t.unmatched, 0, "every exit closes an entry (from a stack record or seen)");
	cr_expect_eq(t.open_at_end, 0);
	cr_expect_eq(t.unnamed, 0);
	tc_free(&t);
	tc_done(&r);
}

Test(ring, keeps_exactly_the_newest_buffers_and_rebuilds_stacks_v5)
{
	check_ring("5");
}

Test(ring, keeps_exactly_the_newest_buffers_and_rebuilds_stacks_v1)
{
	check_ring("1");
}

Test(ring, crash_leaves_a_readable_trace_of_the_last_moments)
{
	struct tc_run r;
	struct tc_trace t;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_recorder(&r, "crash", "policy=ring buffer_size=4096 buffer_max=4");
	cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV, "status 0x%x, stderr: %s",
		  r.status, r.err);
	final_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(t.close_how, FDRTRACE_CLOSE_SIGNAL);
	cr_expect_eq(tc_calls(&t, "last_moment"), 1, "the crashing call is in the trace");
	cr_expect_eq(tc_exits(&t, "last_moment"), 0);
	cr_expect_gt(tc_exits(&t, "leaf"), 100);
	cr_expect_gt(t.dropped_by[FDRTRACE_DROP_OVERWRITTEN], 0);
	cr_expect_eq(t.unnamed, 0, "names were looked up while it ran");
	cr_expect_eq(t.unmatched, 0);
	cr_expect_eq(t.stack_unmatched, 0);
	tc_free(&t);
	tc_done(&r);
}

/* recorder newfuncs: how many times the flush thread was woken over 200 first calls */
static long flush_wakes(const char *options)
{
	struct tc_run r;
	struct tc_trace t;
	const char *w;
	long n;

	run_recorder(&r, "newfuncs", options);
	tc_assert_exited_ok(&r);
	w = strstr(r.out, "flush_wakes ");
	cr_assert_not_null(w, "stdout: %s", r.out);
	n = atol(w + strlen("flush_wakes "));
	cr_assert_geq(n, 0, "no thread named fdrtrace-flush: %s", r.out);
	final_trace(&r, &t);
	cr_expect_eq(tc_calls(&t, "nf100"), 1);
	cr_expect_eq(tc_calls(&t, "nf299"), 1);
	cr_expect_eq(t.unnamed, 0, "every new function is named (%s)", options);
	tc_free(&t);
	tc_done(&r);
	return n;
}

/*
 * A function's first call in ring policy does not wake the flush thread
 * (it looks names up on its own every 50 ms): the wake let the flush
 * thread preempt the caller on a busy machine, adding a scheduler tick
 * (milliseconds) to that first call (luaF_freeproto 4.6 ms against 1 us
 * in the real suite's Lua). Latency triggers keep the wake: a trigger
 * function's first call must be decided before it returns, and that run
 * shows the count does see the wakes.
 */
Test(ring, a_first_call_does_not_wake_the_flush_thread_unless_a_trigger_needs_it)
{
	long ring = flush_wakes("policy=ring buffer_size=4096 buffer_max=4");
	long trig = flush_wakes("policy=ring buffer_size=4096 buffer_max=4 trigger=nf1*>1s");

	/* 200 first calls 1 ms apart: a wake each would be about 200 */
	cr_expect_lt(ring, 100, "the flush thread woke %ld times over 200 first calls", ring);
	cr_expect_geq(trig, 150, "with a trigger it woke only %ld times: the count is blind", trig);
}

static void check_snapshot_and_final(struct tc_run *r)
{
	char paths[8][512];
	int n = tc_find_traces(r, paths, 8);
	int snaps = 0;

	cr_assert_eq(n, 2, "a snapshot and the final trace: %d files", n);
	for (int i = 0; i < n; i++) {
		struct tc_trace t;
		bool snap = strstr(paths[i], ".snap1.fdr") != NULL;

		tc_read(paths[i], &t);
		cr_assert(t.ok, "reader: %s", t.error);
		snaps += snap;
		cr_expect(t.closed, "%s", paths[i]);
		cr_expect_eq(t.close_how, snap ? FDRTRACE_CLOSE_SNAPSHOT : FDRTRACE_CLOSE_EXIT);
		cr_expect_eq(t.close_records, t.func_records);
		cr_expect_gt(tc_exits(&t, "leaf"), 1000, "%s", paths[i]);
		cr_expect_eq(t.unnamed, 0);
		cr_expect_eq(t.unmatched, 0, "%s", paths[i]);
		cr_expect_eq(t.stack_unmatched, 0);
		/*
		 * The program does not record while the snapshot is written (it
		 * waits for it), so both hold the ring as it was: the thread's
		 * buffers numbered one after the other, none missing.
		 */
		cr_expect_eq(t.ring_misnumbered, 0, "%s", paths[i]);
		cr_expect_eq(t.processes, 1);
		if (LLVM_XRAY[0] && t.version == 5) {
			char cmd[4800];

			snprintf(cmd, sizeof(cmd), "'%s' fdr-dump --verify '%s' >/dev/null 2>&1",
				 LLVM_XRAY, paths[i]);
			cr_expect_eq(system(cmd), 0, "llvm-xray fdr-dump --verify %s", paths[i]);
		}
		tc_free(&t);
	}
	cr_expect_eq(snaps, 1);
}

Test(ring, sigusr2_snapshot_mid_run_and_the_final_trace_both_verify)
{
	struct tc_run r;

	run_recorder(&r, "snap", "policy=ring buffer_size=4096 buffer_max=8 dump_signal=USR2");
	tc_assert_exited_ok(&r);
	expect_out(&r, "snapshots 1\n");
	expect_out(&r, "ok snap\n");
	check_snapshot_and_final(&r);
	tc_done(&r);
}

Test(ring, flush_writes_a_snapshot_and_recording_goes_on)
{
	struct tc_run r;

	run_recorder(&r, "flush", "policy=ring buffer_size=4096 buffer_max=8");
	tc_assert_exited_ok(&r);
	expect_out(&r, "flush 0\n");
	expect_out(&r, "snapshots 1\n");
	check_snapshot_and_final(&r);
	tc_done(&r);
}

/* ---- short-call elision ---- */

static void check_elision(const char *version, unsigned threshold_us)
{
	struct tc_run r;
	struct tc_trace t;
	char opt[256];
	uint64_t erased;
	int nargs = 0;
	uint64_t long_entry = 0, long_exit = 0, short_entry = 0, short_kept = 0, short_long = 0;
	int long_id, short_id;

	snprintf(opt, sizeof(opt), "clock=rdtsc func_duration_threshold_us=%u format_version=%s",
		 threshold_us, version);
	run_recorder(&r, "elide", opt);
	tc_assert_exited_ok(&r);
	tc_want_log = true;
	final_trace(&r, &t);
	tc_want_log = false;
	/*
	 * A short call (5 ms) stays only if it lasted the threshold: on a
	 * loaded machine, preempted for 45 ms or more. Each one kept is
	 * checked to have lasted it; the rest must vanish.
	 */
	short_id = id_named(&t, "short_call");
	for (uint64_t i = 0; short_id && i < t.nlog; i++) {
		const struct tc_rec *e = &t.log[i];

		if ((int)e->id != short_id)
			continue;
		if (e->action == FDRTRACE_FN_ENTRY) {
			short_entry = e->tsc;
		} else {
			short_kept++;
			short_long += e->tsc - short_entry >= t.freq / 1000000 * threshold_us / 100 * 99;
		}
	}
	cr_expect_eq(short_long, short_kept, "a short call was kept that lasted less than the threshold");
	cr_expect_eq(tc_calls(&t, "short_call"), threshold_us ? short_kept : 4);
	/* erased: the short calls that did not last the threshold, nest_outer and nest_inner */
	erased = threshold_us ? 4 - short_kept + 2 : 0;
	cr_expect_eq(tc_calls(&t, "nest_outer"), threshold_us ? 0 : 1);
	cr_expect_eq(tc_calls(&t, "nest_inner"), threshold_us ? 0 : 1);
	/* kept: long calls, calls with arguments or custom events (however short) */
	cr_expect_eq(tc_calls(&t, "long_call"), 2);
	cr_expect_eq(tc_exits(&t, "long_call"), 2);
	cr_expect_eq(tc_calls(&t, "outer"), 1);
	cr_expect_eq(tc_calls(&t, "quick_with_arg"), 1);
	cr_expect_eq(tc_exits(&t, "quick_with_arg"), 1);
	cr_expect_eq(tc_calls(&t, "evented"), 1);
	cr_expect_eq(t.user_events, 1);
	cr_expect_eq(t.dropped_by[FDRTRACE_DROP_FILTERED], 2 * erased);
	cr_expect_eq(t.unmatched, 0);
	cr_expect_eq(t.open_at_end, 0);
	cr_assert_eq(t.nargs, 4);
	cr_assert_gt(t.freq, 0);
	/*
	 * Exact times: each Entry_Args record's time is within 2 ms after the
	 * TSC the program read just before the call, although 5 ms calls were
	 * erased before three of them (their time must be absorbed, not lost).
	 */
	long_id = id_named(&t, "long_call");
	for (uint64_t i = 0; i < t.nlog; i++) {
		const struct tc_rec *e = &t.log[i];

		if (e->action == FDRTRACE_FN_ENTRY_ARGS) {
			uint64_t before = t.args[nargs++];

			cr_expect(e->tsc >= before && e->tsc - before < t.freq / 500,
				  "entry %d at %llu, program read %llu (%.3f ms apart)", nargs,
				  (unsigned long long)e->tsc, (unsigned long long)before,
				  ((double)e->tsc - (double)before) * 1e3 / (double)t.freq);
			if ((int)e->id == long_id && !long_entry)
				long_entry = e->tsc;
		}
		if ((int)e->id == long_id && e->action == FDRTRACE_FN_EXIT && !long_exit)
			long_exit = e->tsc;
	}
	cr_expect_eq(nargs, 4);
	/*
	 * The first long call spins 80 ms: its exit's time is at least 80 ms
	 * later (less 1% for the frequency's error), and before the TSC the
	 * program read after it returned (the next call's argument). An
	 * order, not a time limit: a preempted spin may take any longer.
	 */
	cr_expect(long_exit - long_entry >= t.freq / 1000 * 80 / 100 * 99,
		  "long_call took %.3f ms", (double)(long_exit - long_entry) * 1e3 / (double)t.freq);
	cr_expect(nargs < 2 || long_exit <= t.args[1],
		  "long_call's exit at %llu, after the program read %llu once it had returned",
		  (unsigned long long)long_exit, (unsigned long long)(nargs < 2 ? 0 : t.args[1]));
	tc_free(&t);
	tc_done(&r);
}

Test(elision, short_calls_vanish_and_the_rest_keeps_exact_times_v5)
{
	check_elision("5", 50000);
}

Test(elision, short_calls_vanish_and_the_rest_keeps_exact_times_v1)
{
	check_elision("1", 50000);
}

Test(elision, threshold_zero_keeps_every_call)
{
	check_elision("5", 0);
}

/* ---- filters ---- */

static void run_filter(struct tc_run *r, struct tc_trace *t, const char *options)
{
	run_recorder(r, "filter", options);
	tc_assert_exited_ok(r);
	expect_out(r, "ok filter\n");
	final_trace(r, t);
	cr_expect_eq(t->unmatched, 0);
	cr_expect_eq(t->open_at_end, 0);
	cr_expect_eq(t->close_records, t->func_records);
}

Test(filters, filter_records_only_the_matching_functions)
{
	struct tc_run r;
	struct tc_trace t;

	run_filter(&r, &t, "filter=\"keep_*;main;deep\"");
	cr_expect_eq(tc_calls(&t, "keep_me"), 10);
	cr_expect_eq(tc_calls(&t, "main"), 1);
	cr_expect_eq(tc_calls(&t, "deep"), 9);
	cr_expect_eq(tc_calls(&t, "skip_me"), 0);
	cr_expect_eq(tc_calls(&t, "newest"), 0);
	/* 10 skip_me and 100 newest calls, entry and exit, cost no trace space */
	cr_expect_eq(t.func_records, 2 * (10 + 1 + 9));
	cr_expect_eq(t.dropped_by[FDRTRACE_DROP_FILTERED], 2 * (10 + 100));
	tc_free(&t);
	tc_done(&r);
}

Test(filters, exclude_leaves_out_the_matching_functions)
{
	struct tc_run r;
	struct tc_trace t;

	run_filter(&r, &t, "exclude=skip*;newest");
	cr_expect_eq(tc_calls(&t, "keep_me"), 10);
	cr_expect_eq(tc_calls(&t, "skip_me"), 0);
	cr_expect_eq(tc_calls(&t, "newest"), 0);
	cr_expect_eq(tc_calls(&t, "deep"), 9);
	cr_expect_eq(t.dropped_by[FDRTRACE_DROP_FILTERED], 2 * (10 + 100));
	tc_free(&t);
	tc_done(&r);
}

Test(filters, max_depth_records_only_the_outer_calls)
{
	struct tc_run r;
	struct tc_trace t;

	run_filter(&r, &t, "max_depth=3");
	/* main (1), keep_me/skip_me and deep(8) (2), deep(7) (3); deeper calls are not recorded */
	cr_expect_eq(tc_calls(&t, "main"), 1);
	cr_expect_eq(tc_calls(&t, "keep_me"), 10);
	cr_expect_eq(tc_calls(&t, "skip_me"), 10);
	cr_expect_eq(tc_calls(&t, "deep"), 2);
	cr_expect_eq(tc_exits(&t, "deep"), 2);
	cr_expect_eq(tc_calls(&t, "newest"), 0);
	cr_expect_eq(t.max_depth, 3);
	cr_expect_eq(t.dropped_by[FDRTRACE_DROP_FILTERED], 2 * (7 + 100));
	tc_free(&t);
	tc_done(&r);
}

/*
 * Issue 33: with max_depth, fdrtrace_stop() inside nested calls (whose
 * exits the hooks then never see) and fdrtrace_start() later left the
 * counted depth at the stop's, so every later call was dropped for the
 * rest of the run. The depth counts again from where recording restarted.
 */
Test(filters, max_depth_resynchronises_after_a_stop_inside_nested_calls)
{
	const char *argv[] = { API_TARGET, "stop_deep", NULL };
	const char *env[] = { "FDRTRACE_MODE=fdr", "FDRTRACE_OPTIONS=max_depth=3", NULL };
	struct tc_run r;
	struct tc_trace t;

	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	cr_expect(strstr(r.out, "start 0\n"), "%s", r.out);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(tc_calls(&t, "outer"), 1);
	cr_expect_eq(tc_calls(&t, "mid"), 1);
	cr_expect_eq(tc_calls(&t, "inner"), 0, "deeper than max_depth");
	cr_expect_eq(tc_calls(&t, "leaf"), 10, "the calls after fdrtrace_start()");
	cr_expect_eq(tc_exits(&t, "leaf"), 10);
	tc_free(&t);
	tc_done(&r);
}

/*
 * Issue 33: a longjmp, or a C++ exception through frames built by clang
 * (which calls no exit hook while unwinding), skips exits; max_depth's
 * count stayed that much too high and every later call was dropped. The
 * target (depth.cc) leaves 11 calls (depth 3 to 13) without an exit, the
 * outermost of them at max_depth=3, then makes 1000 calls at depth 2:
 * all recorded, once the function that caught the jump returns.
 * @exits_seen: the compiler calls the exit hooks while unwinding (g++).
 */
static void check_depth_resync(const char *target, const char *mode, bool exits_seen)
{
	const char *argv[] = { target, mode, NULL };
	const char *env[] = { "FDRTRACE_MODE=fdr", "FDRTRACE_OPTIONS=max_depth=3", NULL };
	const char *fn = !strcmp(mode, "longjmp") ? "nest" : "thrower";
	const char *guard = !strcmp(mode, "longjmp") ? "guarded" : "catcher";
	char line[32];
	struct tc_run r;
	struct tc_trace t;

	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	snprintf(line, sizeof(line), "ok %s\n", mode);
	expect_out(&r, line);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(tc_calls(&t, "leaf"), 1000, "%s %s: leaf x%llu", target, mode,
		     (unsigned long long)tc_calls(&t, "leaf"));
	cr_expect_eq(tc_exits(&t, "leaf"), 1000);
	cr_expect_eq(tc_calls(&t, "main"), 1);
	cr_expect_eq(tc_exits(&t, "main"), 1);
	cr_expect_eq(tc_calls(&t, guard), 1);
	cr_expect_eq(tc_exits(&t, guard), 1);
	/* depth 3 only; its exit is there when the compiler calls it while unwinding */
	cr_expect_eq(tc_calls(&t, fn), 1, "%s: %llu", fn, (unsigned long long)tc_calls(&t, fn));
	cr_expect_eq(tc_exits(&t, fn), exits_seen ? 1 : 0);
	/* every record the program made, and the deeper calls' left out (10 entries, exits seen) */
	cr_expect_eq(t.func_records, 2 * (1 + 1 + 1000) + 1 + exits_seen, "%llu records",
		     (unsigned long long)t.func_records);
	cr_expect_eq(t.dropped_by[FDRTRACE_DROP_FILTERED], 10u * (1 + exits_seen), "%llu filtered",
		     (unsigned long long)t.dropped_by[FDRTRACE_DROP_FILTERED]);
	cr_expect_eq(t.dropped, t.dropped_by[FDRTRACE_DROP_FILTERED]);
	cr_expect_eq(t.close_records, t.func_records);
	if (exits_seen) {
		cr_expect_eq(t.max_depth, 3);
		cr_expect_eq(t.unmatched, 0);
		cr_expect_eq(t.open_at_end, 0);
	} else {
		/* the exits of @guard and main, with the depth-3 call still open in the trace */
		cr_expect_eq(t.unmatched, 2, "%llu unmatched", (unsigned long long)t.unmatched);
	}
	tc_free(&t);
	tc_done(&r);
}

Test(filters, max_depth_resynchronises_after_a_longjmp)
{
	if (!*DEPTH_GCC)
		cr_skip_test("no C++ compiler");
	check_depth_resync(DEPTH_GCC, "longjmp", false);
}

Test(filters, max_depth_follows_an_exception_through_gcc_frames)
{
	if (!*DEPTH_GCC)
		cr_skip_test("no C++ compiler");
	check_depth_resync(DEPTH_GCC, "throw", true);
}

Test(filters, max_depth_resynchronises_after_an_exception_through_clang_frames)
{
	if (!*DEPTH_CLANG)
		cr_skip_test("no clang++ (or a sanitized build)");
	check_depth_resync(DEPTH_CLANG, "throw", false);
}

Test(ring, eight_threads_keep_the_newest_buffers_and_lose_nothing_uncounted)
{
	const char *argv[] = { TARGET, "threads", "8", NULL };
	const char *env[] = { "FDRTRACE_MODE=fdr",
			      "FDRTRACE_OPTIONS=policy=ring buffer_size=4096 buffer_max=6", NULL };
	/* each thread: leaf x1300, mid x100, rec x51, work, thread_main; main's thread_main */
	const uint64_t emitted = 2 * (8 * (1300 + 100 + 51 + 2) + 1);
	struct tc_run r;
	struct tc_trace t;

	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	final_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(t.func_records + t.dropped_by[FDRTRACE_DROP_OVERWRITTEN], emitted,
		     "%llu kept + %llu overwritten", (unsigned long long)t.func_records,
		     (unsigned long long)t.dropped_by[FDRTRACE_DROP_OVERWRITTEN]);
	cr_expect_gt(t.dropped_by[FDRTRACE_DROP_OVERWRITTEN], 0);
	cr_expect_eq(t.dropped, t.dropped_by[FDRTRACE_DROP_OVERWRITTEN]);
	cr_expect_eq(t.unmatched, 0, "stack records close every kept exit");
	cr_expect_eq(t.stack_unmatched, 0);
	cr_expect_eq(t.unnamed, 0);
	tc_free(&t);
	tc_done(&r);
}

Test(stream, dump_signal_flushes_and_the_program_goes_on)
{
	struct tc_run r;
	struct tc_trace t;
	char paths[4][512];

	/* the target waits 2 s for a snapshot file that stream policy never writes */
	run_recorder(&r, "snap", "dump_signal=USR2");
	tc_assert_exited_ok(&r);
	expect_out(&r, "snapshots 0\n");
	expect_out(&r, "ok snap\n");
	cr_expect_eq(tc_find_traces(&r, paths, 4), 1);
	final_trace(&r, &t);
	cr_expect_eq(t.close_how, FDRTRACE_CLOSE_EXIT);
	cr_expect_eq(tc_calls(&t, "work"), 40);
	cr_expect_eq(tc_exits(&t, "leaf"), 40000);
	cr_expect_eq(t.dropped, 0);
	tc_free(&t);
	tc_done(&r);
}

Test(api, every_call_reports_recording_off_and_the_program_runs_unchanged)
{
	const char *argv[] = { RECORDER_TARGET, "api", NULL };
	const char *env[] = { "FDRTRACE_OPTIONS=policy=ring", NULL };
	char paths[2][512];
	struct tc_run r;

	tc_run(&r, argv, env);	/* FDRTRACE_MODE unset */
	tc_assert_exited_ok(&r);
	expect_out(&r, "custom -19\n");	/* -ENODEV */
	expect_out(&r, "typed -19\n");
	expect_out(&r, "too big -19\n");
	expect_out(&r, "magic -22\n");	/* bad arguments are refused first */
	expect_out(&r, "log_arg -19 -19\n");
	expect_out(&r, "with_args 41\n");
	expect_out(&r, "stop -19\n");
	expect_out(&r, "start -19\n");
	expect_out(&r, "ignore -19\n");
	expect_out(&r, "ok api\n");
	cr_expect_eq(tc_find_traces(&r, paths, 2), 0);
	cr_expect_str_eq(r.err, "");
	tc_done(&r);
}
