// SPDX-License-Identifier: MIT
/*
 * tests/integration/test_trigger.c - latency triggers (ring policy) on a
 * real instrumented program (targets/native.c): a slow call writes one
 * snapshot holding it and the calls before it; trigger_max and the
 * hold-off bound the snapshots; stream policy refuses a trigger.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tc_assert.h"
#include "trace_check.h"

/* The snapshots of a run (<trace>.snapN.fdr), sorted; returns how many. */
static int snaps(const struct tc_run *r, char out[][512], int max)
{
	static char all[16][512];
	int n = tc_find_traces(r, all, 16), k = 0;

	for (int i = 0; i < n; i++)
		if (strstr(all[i], ".snap") && k < max)
			memcpy(out[k++], all[i], 512);
	return k;
}

static void run(struct tc_run *r, const char *options, const char *mode, const char *arg)
{
	char opt[512];
	const char *argv[] = { NATIVE_TARGET, mode, arg, NULL };
	const char *env[] = { "FDRTRACE_MODE=fdr", opt, NULL };

	snprintf(opt, sizeof(opt), "FDRTRACE_OPTIONS=%s", options);
	tc_run(r, argv, env);
	tc_assert_exited_ok(r);
}

Test(trigger, one_slow_call_among_2000_fast_ones_writes_one_snapshot_holding_it)
{
	struct tc_run r;
	struct tc_trace t;
	char s[4][512];

	run(&r, "policy=ring trigger=slow>10ms", "fast_slow", NULL);
	cr_assert_eq(snaps(&r, s, 4), 1, "stderr: %s", r.err);
	cr_assert(strstr(r.err, "(trigger slow>10ms: a call of slow took "), "stderr: %s", r.err);
	memset(&t, 0, sizeof(t));
	tc_read(s[0], &t);
	cr_assert(t.ok, "reader: %s", t.error);
	cr_assert(t.closed && t.close_how == FDRTRACE_CLOSE_SNAPSHOT);
	/* the slow call, whole */
	cr_assert_eq(tc_calls(&t, "slow"), 1);
	cr_assert_eq(tc_exits(&t, "slow"), 1);
	/* and the calls before it (a few after it may be there: the thread went on) */
	cr_assert_geq(tc_calls(&t, "fast"), 2000, "%llu", (unsigned long long)tc_calls(&t, "fast"));
	cr_assert_leq(tc_calls(&t, "fast"), 2010, "%llu", (unsigned long long)tc_calls(&t, "fast"));
	cr_assert_geq(tc_exits(&t, "work"), 1, "the first work() returned before slow()");
	cr_assert_eq(t.unnamed, 0);
	cr_assert_gt(t.module_maps, 0, "a snapshot names the modules again");
	tc_free(&t);
	tc_done(&r);
}

/*
 * A fork child's snapshots are its own: numbered from 1 in its own trace's
 * name (its counter continued the parent's: its first was snap2).
 */
static void expect_fork_snaps(const char *mode)
{
	struct tc_run r;
	char s[8][512];
	int n, ones = 0;

	run(&r, "policy=ring trigger=slow>10ms trigger_holdoff_ms=0 trigger_max=10", mode, NULL);
	n = snaps(&r, s, 8);
	cr_assert_eq(n, 2, "%s: a snapshot each for the parent and the child: %d; stderr: %s",
		     mode, n, r.err);
	for (int i = 0; i < n; i++) {
		struct tc_trace t;

		ones += strstr(s[i], ".snap1.fdr") != NULL;
		memset(&t, 0, sizeof(t));
		tc_read(s[i], &t);
		cr_assert(t.ok, "%s: %s", s[i], t.error);
		cr_expect_eq(tc_calls(&t, "slow"), 1, "%s", s[i]);
		cr_expect_eq(t.unnamed, 0, "%s: functions without names", s[i]);
		tc_free(&t);
	}
	cr_expect_eq(ones, 2, "%s: both first snapshots are snap1: %s, %s", mode, s[0], s[1]);
	tc_done(&r);
}

Test(trigger, a_fork_childs_first_snapshot_is_its_snap1)
{
	expect_fork_snaps("fork_slow");
}

/* ... also when it ends with _exit() */
Test(trigger, a_fork_child_that_ends_with_exit_writes_its_snapshot)
{
	expect_fork_snaps("fork_slow_exit");
}

Test(trigger, fast_calls_alone_write_nothing)
{
	struct tc_run r;
	char s[4][512];

	run(&r, "policy=ring trigger=fast>1s", "fast_slow", NULL);
	cr_assert_eq(snaps(&r, s, 4), 0, "stderr: %s", r.err);
	tc_done(&r);
	run(&r, "policy=ring trigger=nothing_is_called_this>1ns", "fast_slow", NULL);
	cr_assert_eq(snaps(&r, s, 4), 0, "stderr: %s", r.err);
	tc_done(&r);
}

Test(trigger, several_triggers_each_with_its_duration)
{
	struct tc_run r;
	char s[4][512];

	run(&r, "policy=ring trigger=\"fast>1s,sl*>20ms\"", "fast_slow", NULL);
	cr_assert_eq(snaps(&r, s, 4), 1, "stderr: %s", r.err);
	cr_assert(strstr(r.err, "(trigger sl*>20ms: a call of slow took "), "stderr: %s", r.err);
	tc_done(&r);
	run(&r, "policy=ring trigger=fast>1s;slow>1s", "fast_slow", NULL);
	cr_assert_eq(snaps(&r, s, 4), 0, "30 ms is not more than 1 s; stderr: %s", r.err);
	tc_done(&r);
}

Test(trigger, trigger_max_bounds_the_snapshots)
{
	struct tc_run r;
	char s[8][512];

	/* default: one */
	run(&r, "policy=ring trigger=slow>10ms trigger_holdoff_ms=0", "slow", "4");
	cr_assert_eq(snaps(&r, s, 8), 1, "stderr: %s", r.err);
	tc_done(&r);
	run(&r, "policy=ring trigger=slow>10ms trigger_holdoff_ms=0 trigger_max=3", "slow", "5");
	cr_assert_eq(snaps(&r, s, 8), 3, "stderr: %s", r.err);
	for (int i = 0; i < 3; i++) {
		struct tc_trace t;

		memset(&t, 0, sizeof(t));
		tc_read(s[i], &t);
		cr_assert(t.ok, "%s: %s", s[i], t.error);
		cr_assert_geq(tc_exits(&t, "slow"), (uint64_t)i + 1, "%s", s[i]);
		tc_free(&t);
	}
	tc_done(&r);
	run(&r, "policy=ring trigger=slow>10ms trigger_max=0", "slow", "2");
	cr_assert_eq(snaps(&r, s, 8), 0, "stderr: %s", r.err);
	tc_done(&r);
}

Test(trigger, the_hold_off_keeps_a_burst_to_one_snapshot)
{
	struct tc_run r;
	char s[8][512];

	run(&r, "policy=ring trigger=slow>10ms trigger_max=5 trigger_holdoff_ms=600000", "slow",
	    "3");
	cr_assert_eq(snaps(&r, s, 8), 1, "stderr: %s", r.err);
	tc_done(&r);
}

Test(trigger, refused_in_stream_policy_with_one_diagnostic)
{
	struct tc_run r;
	struct tc_trace t;
	char s[4][512];

	run(&r, "trigger=slow>10ms", "fast_slow", NULL);
	cr_assert_eq(snaps(&r, s, 4), 0);
	cr_assert(strstr(r.err, "fdrtrace: FDRTRACE_OPTIONS: trigger='slow>10ms': needs "
			 "policy=ring"), "stderr: %s", r.err);
	cr_assert_eq(tc_lines(r.err), 2, "the diagnostic and the exit line: %s", r.err);
	/* recording went on */
	memset(&t, 0, sizeof(t));
	tc_assert_one_trace(&r, &t);
	cr_assert_eq(tc_calls(&t, "fast"), 2010);
	tc_free(&t);
	tc_done(&r);
}

Test(trigger, a_bad_trigger_is_named_and_recording_goes_on)
{
	struct tc_run r;
	char s[4][512];

	run(&r, "policy=ring trigger=slow>10minutes", "fast_slow", NULL);
	cr_assert_eq(snaps(&r, s, 4), 0);
	cr_assert(strstr(r.err, "trigger='slow>10minutes': not a duration"), "stderr: %s", r.err);
	tc_done(&r);
	run(&r, "policy=ring trigger=slow", "fast_slow", NULL);
	cr_assert(strstr(r.err, "expected GLOB>DURATION in slow;"), "stderr: %s", r.err);
	tc_done(&r);
}
