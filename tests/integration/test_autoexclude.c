// SPDX-License-Identifier: MIT
/*
 * tests/integration/test_autoexclude.c - auto_exclude on a real
 * instrumented program (targets/autoexclude.c): short hot functions are
 * counted, not recorded, with exact counts (recorded entries plus counted
 * calls equal the calls the program made, function by function), and no
 * recorded call ever appears under the wrong caller. Every trace is read
 * back with the reader library (trace_check.c).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tc_assert.h"

/* hot and leaf take well under 2 us; deep about 20 us: only those two are counted */
#define AX_OPTS "auto_exclude=2us;after=64"

static void run_ax(struct tc_run *r, const char *const *args, const char *options)
{
	const char *argv[8] = { AX_TARGET };
	char opt[512];
	const char *env[] = { "FDRTRACE_MODE=fdr", opt, NULL };
	int i;

	for (i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	snprintf(opt, sizeof(opt), "FDRTRACE_OPTIONS=%s", options);
	tc_run(r, argv, env);
}

/* The calls of @name the program made: recorded entries plus counted calls. */
static uint64_t all_calls(const struct tc_trace *t, const char *name)
{
	return tc_calls(t, name) + tc_counted(t, name);
}

/* The id of the function named @name in @t, 0 when none. */
static uint32_t id_named(const struct tc_trace *t, const char *name)
{
	for (uint32_t i = 1; i < TC_MAX_IDS; i++)
		if (t->names[i] && !strcmp(t->names[i], name))
			return i;
	return 0;
}

/*
 * Rebuild the thread's stack from the recorded calls: every recorded call
 * of @callee must have @caller or "main" as its caller; return how many
 * had "main".
 */
static uint64_t callers_of(const struct tc_trace *t, const char *callee, const char *caller)
{
	uint32_t stack[256], depth = 0;
	uint32_t want = id_named(t, callee), ok = id_named(t, caller), top = id_named(t, "main");
	uint64_t from_main = 0;

	cr_assert(want && ok && top, "functions named in the trace");
	for (uint64_t i = 0; i < t->nlog; i++) {
		const struct tc_rec *rec = &t->log[i];

		if (rec->action == FDRTRACE_FN_ENTRY || rec->action == FDRTRACE_FN_ENTRY_ARGS) {
			if (rec->id == want) {
				cr_assert(depth > 0, "%s recorded with no caller", callee);
				cr_assert(stack[depth - 1] == ok || stack[depth - 1] == top,
					  "a recorded %s under %s (record %llu)", callee,
					  t->names[stack[depth - 1]] ? t->names[stack[depth - 1]] : "?",
					  (unsigned long long)i);
				from_main += stack[depth - 1] == top;
			}
			cr_assert(depth < 256);
			stack[depth++] = rec->id;
		} else {
			cr_assert(depth > 0 && stack[depth - 1] == rec->id,
				  "exit of id %u does not close the innermost recorded call "
				  "(record %llu)", rec->id, (unsigned long long)i);
			depth--;
		}
	}
	return from_main;
}

static void check_nest(const char *options, unsigned version)
{
	const char *args[] = { "nest", "100000", NULL };
	struct tc_run r;
	struct tc_trace t;
	char cmd[1024], out[256];

	run_ax(&r, args, options);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, "hot 100000\nleaf 100000\ndeep 1010\n"), "%s", r.out);
	tc_want_log = true;
	tc_assert_one_trace(&r, &t);
	tc_want_log = false;
	cr_expect_eq(t.version, version);
	cr_expect(t.closed);
	/* exact counts, function by function */
	cr_expect_eq(all_calls(&t, "hot"), 100000);
	cr_expect_eq(all_calls(&t, "leaf"), 100000);
	cr_expect_eq(all_calls(&t, "deep"), 1010);
	cr_expect_eq(all_calls(&t, "main"), 1);
	cr_expect_eq(t.counted_lost, 0);
	/* the short ones were decided, the slow one not; most calls were counted */
	cr_expect(tc_excluded(&t, "hot"));
	cr_expect(tc_excluded(&t, "leaf"));
	cr_expect(!tc_excluded(&t, "deep"));
	cr_expect(!tc_excluded(&t, "main"));
	cr_expect_gt(tc_counted(&t, "hot"), 99000, "hot: %llu counted",
		     (unsigned long long)tc_counted(&t, "hot"));
	cr_expect_eq(tc_calls(&t, "hot"), tc_exits(&t, "hot"), "every recorded hot call closed");
	/* deep inside a counted hot call is counted; only main's own calls are recorded under main */
	cr_expect_eq(callers_of(&t, "deep", "hot"), 10);
	cr_expect_eq(tc_counted(&t, "deep"), 1010 - tc_calls(&t, "deep"));
	cr_expect_lt(tc_calls(&t, "deep"), 20, "deep recorded %llu times",
		     (unsigned long long)tc_calls(&t, "deep"));
	/* the trace's calls are about 1/50 of what a full trace has */
	cr_expect_lt(t.func_records, 2 * 100000 / 20, "%llu records",
		     (unsigned long long)t.func_records);
	/* verify accepts it */
	{
		char paths[1][512];

		tc_find_traces(&r, paths, 1);
		snprintf(cmd, sizeof(cmd), "'%s' verify '%s' >/dev/null 2>&1; echo $?", FDRTRACE_TOOL,
			 paths[0]);
		cr_expect_eq(tc_output(cmd, out, sizeof(out)), 0);
		cr_expect_str_eq(out, "0\n", "fdrtrace verify");
	}
	tc_free(&t);
	tc_done(&r);
}

/*
 * Two counted functions that share an entry of the thread's id cache, called
 * alternately inside a counted call and outermost: each call finds the
 * other's id there (the entry is filled again on the counting path); the
 * counts stay exact.
 */
Test(autoexclude, functions_sharing_an_id_cache_entry_are_counted_exactly)
{
	const char *args[] = { "clash", "50000", NULL };
	struct tc_run r;
	struct tc_trace t;

	run_ax(&r, args, AX_OPTS);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, "pair 50000\nclash_a 100000\nclash_b 100000\n"), "%s", r.out);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(all_calls(&t, "pair"), 50000);
	cr_expect_eq(all_calls(&t, "clash_a"), 100000);
	cr_expect_eq(all_calls(&t, "clash_b"), 100000);
	cr_expect_eq(t.counted_lost, 0);
	cr_expect(tc_excluded(&t, "clash_a"));
	cr_expect(tc_excluded(&t, "clash_b"));
	cr_expect_gt(tc_counted(&t, "clash_a"), 99000, "clash_a: %llu counted",
		     (unsigned long long)tc_counted(&t, "clash_a"));
	tc_free(&t);
	tc_done(&r);
}

Test(autoexclude, short_hot_calls_are_counted_exactly_and_nested_calls_stay_under_theirs_v5)
{
	check_nest(AX_OPTS, 5);
}

Test(autoexclude, short_hot_calls_are_counted_exactly_and_nested_calls_stay_under_theirs_v1)
{
	check_nest(AX_OPTS " format_version=1", 1);
}

Test(autoexclude, ring_policy_keeps_the_counts)
{
	check_nest(AX_OPTS " policy=ring buffer_max=256", 5);
}

Test(autoexclude, off_records_every_call_and_writes_no_counts)
{
	const char *args[] = { "nest", "20000", NULL };
	struct tc_run r;
	struct tc_trace t;

	run_ax(&r, args, "");
	tc_assert_exited_ok(&r);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(tc_calls(&t, "hot"), 20000);
	cr_expect_eq(tc_calls(&t, "leaf"), 20000);
	cr_expect_eq(tc_calls(&t, "deep"), 210);
	cr_expect_eq(t.counted_records, 0);
	cr_expect_eq(t.excluded, 0);
	tc_free(&t);
	tc_done(&r);
}

Test(autoexclude, a_bad_value_is_refused_with_one_line_and_every_call_is_recorded)
{
	const char *args[] = { "nest", "20000", NULL };
	struct tc_run r;
	struct tc_trace t;

	run_ax(&r, args, "auto_exclude=fast");
	tc_assert_exited_ok(&r);
	cr_expect(strstr(r.err, "auto_exclude='fast'"), "stderr: %s", r.err);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(tc_calls(&t, "hot"), 20000);
	cr_expect_eq(t.counted_records, 0);
	tc_free(&t);
	tc_done(&r);
}

/* The run's two traces, read: the parent's and its fork child's (@t[*parent], @t[*child]). */
static void read_parent_child(struct tc_run *r, struct tc_trace t[2], int *parent, int *child)
{
	char paths[4][512];
	int n = tc_find_traces(r, paths, 4);

	cr_assert_eq(n, 2, "a trace for the parent and one for the child (stderr: %s)", r->err);
	*parent = *child = -1;
	for (int i = 0; i < 2; i++) {
		tc_read(paths[i], &t[i]);
		cr_assert(t[i].ok, "reader: %s", t[i].error);
		cr_expect(t[i].closed);
		if (t[i].forks)
			*child = i;
		else
			*parent = i;
	}
	cr_assert(*parent >= 0 && *child >= 0, "the child's trace has its fork record");
}

Test(autoexclude, threads_and_a_fork_child_each_count_their_own_calls)
{
	const char *args[] = { "threads", "4", "50000", NULL };
	struct tc_run r;
	int parent, child;
	struct tc_trace t[2];

	run_ax(&r, args, AX_OPTS);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, "child hot 50000\n") && strstr(r.out, "parent hot 200000\n"),
		  "%s", r.out);
	read_parent_child(&r, t, &parent, &child);
	cr_expect_eq(all_calls(&t[parent], "hot"), 200000);
	cr_expect_eq(all_calls(&t[parent], "leaf"), 200000);
	cr_expect_eq(all_calls(&t[parent], "deep"), 4 * 500);
	cr_expect_eq(all_calls(&t[child], "hot"), 50000);
	cr_expect_eq(all_calls(&t[child], "leaf"), 50000);
	cr_expect_eq(all_calls(&t[child], "deep"), 500);
	cr_expect_gt(tc_counted(&t[parent], "hot"), 190000);
	cr_expect_gt(tc_counted(&t[child], "hot"), 49000, "the child inherits the decisions");
	cr_expect(tc_excluded(&t[child], "hot"), "the child's trace says what it inherited");
	cr_expect_eq(t[parent].counted_lost + t[child].counted_lost, 0);
	for (int i = 0; i < 2; i++)
		tc_free(&t[i]);
	tc_done(&r);
}

Test(autoexclude, a_crash_dump_keeps_the_counts)
{
	const char *args[] = { "crash", "100000", NULL };
	struct tc_run r;
	struct tc_trace t;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_ax(&r, args, AX_OPTS);
	cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV, "status 0x%x, stderr: %s",
		  r.status, r.err);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(t.close_how, FDRTRACE_CLOSE_SIGNAL);
	/*
	 * The names may not be in the trace (the flush thread had no buffer
	 * to write before the crash, and the dump looks no name up): by id.
	 * Every call: hot, leaf (100000 each), deep (1000), main, boom.
	 */
	{
		uint64_t all = 0, n100k = 0, n1k = 0;

		for (uint32_t id = 1; id < TC_MAX_IDS; id++) {
			uint64_t c = t.entry_count[id] + t.counted[id];

			all += c;
			n100k += c == 100000;
			n1k += c == 1000;
		}
		cr_expect_eq(all, 201002);
		cr_expect_eq(n100k, 2, "hot and leaf");
		cr_expect_eq(n1k, 1, "deep");
		cr_expect_eq(t.excluded, 2, "hot and leaf decided");
	}
	tc_free(&t);
	tc_done(&r);
}

Test(autoexclude, longjmp_out_of_counted_calls_keeps_every_count_exact)
{
	const char *args[] = { "jump", "100000", NULL };
	struct tc_run r;
	struct tc_trace t;

	run_ax(&r, args, AX_OPTS);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, "jumper 100000\nleaf 100000\nthrower 10000\nafter 10000\n"), "%s",
		  r.out);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(all_calls(&t, "jumper"), 100000);
	cr_expect_eq(all_calls(&t, "leaf"), 100000);
	cr_expect_eq(all_calls(&t, "thrower"), 10000);
	cr_expect_eq(all_calls(&t, "after"), 10000);
	cr_expect(tc_excluded(&t, "jumper"));
	cr_expect_gt(tc_counted(&t, "jumper"), 99000);
	tc_free(&t);
	tc_done(&r);
}

Test(autoexclude, a_counted_function_that_grows_slow_is_timed_again)
{
	const char *args[] = { "grow", "10000", NULL };
	struct tc_run r;
	struct tc_trace t;

	run_ax(&r, args, AX_OPTS);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, "grower 10000\nleaf 3000\ndeep 7000\n"), "%s", r.out);
	tc_want_log = true;
	tc_assert_one_trace(&r, &t);
	tc_want_log = false;
	cr_expect_eq(all_calls(&t, "grower"), 10000);
	cr_expect_eq(all_calls(&t, "leaf"), 3000);
	cr_expect_eq(all_calls(&t, "deep"), 7000);
	cr_expect(tc_excluded(&t, "grower"), "decided counted while short");
	cr_expect_eq(t.undone, 1, "and timed again once slow");
	/* deep's calls after that are recorded, under grower */
	cr_expect_gt(tc_calls(&t, "deep"), 5000, "deep recorded %llu times",
		     (unsigned long long)tc_calls(&t, "deep"));
	cr_expect_eq(callers_of(&t, "deep", "grower"), 0);
	tc_free(&t);
	tc_done(&r);
}

/*
 * A function whose first call is long and still open while its other calls,
 * all short, reach the decision points: the open call's time so far is
 * evidence, and the function is never counted (it would have been at the
 * first point, its long call and all under it hidden with it).
 */
Test(autoexclude, a_call_still_open_counts_in_the_decision)
{
	const char *args[] = { "outer", "2000", NULL };
	struct tc_run r;
	struct tc_trace t;

	run_ax(&r, args, AX_OPTS);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, "dispatch 2001\nleaf 2000\ndeep 100\n"), "%s", r.out);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(all_calls(&t, "leaf"), 2000);
	cr_expect(tc_excluded(&t, "leaf"), "leaf is short: counted");
	cr_expect(!tc_excluded(&t, "dispatch"), "dispatch was decided counted");
	cr_expect_eq(tc_calls(&t, "dispatch"), 2001, "every call of dispatch recorded");
	cr_expect_eq(tc_calls(&t, "deep"), 100);
	tc_free(&t);
	tc_done(&r);
}

/*
 * A function no call of which returns (a longjmp ends each, as a
 * coroutine's yield): each call lasted at most until the exit below it
 * that the longjmp reached, evidence enough to count it when short.
 */
Test(autoexclude, calls_a_longjmp_ends_are_evidence_too)
{
	const char *args[] = { "yields", "20000", NULL };
	struct tc_run r;
	struct tc_trace t;

	run_ax(&r, args, AX_OPTS);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, "catcher 20000\nyielder 20000\nleaf 20000\n"), "%s", r.out);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(all_calls(&t, "catcher"), 20000);
	cr_expect_eq(all_calls(&t, "yielder"), 20000);
	cr_expect_eq(all_calls(&t, "leaf"), 20000);
	cr_expect(tc_excluded(&t, "yielder"), "yielder stayed undecided");
	cr_expect_gt(tc_counted(&t, "yielder"), 15000, "yielder counted %llu times",
		     (unsigned long long)tc_counted(&t, "yielder"));
	tc_free(&t);
	tc_done(&r);
}

Test(autoexclude, fdrtrace_flush_writes_the_counts_so_far)
{
	const char *args[] = { "flush", "100000", NULL };
	struct tc_run r;
	struct tc_trace t;

	run_ax(&r, args, AX_OPTS);
	cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL, "status 0x%x, stderr: %s",
		  r.status, r.err);
	cr_assert(strstr(r.out, "hot 100000\nflush 0\n"), "%s", r.out);
	tc_assert_one_trace(&r, &t);
	cr_expect(!t.closed, "killed: no close");
	/* by id: the names may not be there (only what the flush wrote is) */
	{
		uint64_t n100k = 0, counted = 0;

		for (uint32_t id = 1; id < TC_MAX_IDS; id++) {
			n100k += t.entry_count[id] + t.counted[id] == 100000;
			counted += t.counted[id];
		}
		cr_expect_eq(n100k, 2, "hot and leaf, every call");
		cr_expect_gt(counted, 190000);
	}
	tc_free(&t);
	tc_done(&r);
}

Test(autoexclude, exclude_and_max_depth_keep_their_meaning)
{
	const char *args[] = { "nest", "100000", NULL };
	struct tc_run r;
	struct tc_trace t;

	/* exclude=deep: deep is neither recorded nor counted, inside counted calls or not */
	run_ax(&r, args, AX_OPTS " exclude=deep");
	tc_assert_exited_ok(&r);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(all_calls(&t, "hot"), 100000);
	cr_expect_eq(all_calls(&t, "leaf"), 100000);
	cr_expect_eq(all_calls(&t, "deep"), 0);
	cr_expect_eq(t.dropped_by[FDRTRACE_DROP_FILTERED], 2 * 1010, "deep's calls, left out");
	cr_expect(tc_excluded(&t, "hot"));
	tc_free(&t);
	tc_done(&r);

	/* max_depth=2: main and hot; leaf and hot's deep (depth 3) neither recorded nor counted */
	run_ax(&r, args, AX_OPTS " max_depth=2");
	tc_assert_exited_ok(&r);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(all_calls(&t, "main"), 1);
	cr_expect_eq(all_calls(&t, "hot"), 100000);
	cr_expect_eq(all_calls(&t, "leaf"), 0);
	cr_expect_eq(all_calls(&t, "deep"), 10, "main's own ten (depth 2)");
	cr_expect(tc_excluded(&t, "hot"));
	cr_expect_gt(tc_counted(&t, "hot"), 99000);
	tc_free(&t);
	tc_done(&r);
}

/* "name N\n" in @out: N, or -1 when the line is not there */
static long printed(const char *out, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "%s ", name);
	for (p = out; (p = strstr(p, key)); p++)
		if (p == out || p[-1] == '\n')
			return atol(p + strlen(key));
	return -1;
}

/*
 * The hot call sites patched to count without the hooks
 * (autoexclude_patch.c), under threads, a 2 kHz timer whose handler calls
 * an instrumented function, longjmps out of counted calls, and a fork
 * child running the patched code: every count exact, and the program
 * sees its own code changed (with patch=off, unchanged).
 */
static void check_patched(const char *options, bool patch)
{
	/* patched: until the code changes; not: a second in which it would have */
	const char *args[] = { "patched", "2", patch ? "10" : "1", NULL };
	struct tc_run r;
	struct tc_trace t[2];
	int parent, child;

	run_ax(&r, args, options);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, patch ? "patched yes\n" : "patched no\n"), "%s", r.out);
	cr_assert(strstr(r.out, "child hot 100000\n"), "%s", r.out);
	/* the pages patched (and the stubs') are not left writable and executable */
	cr_expect(strstr(r.out, "rwx 0\n"), "%s", r.out);
	read_parent_child(&r, t, &parent, &child);
	{
		const char *names[] = { "hot", "leaf", "deep", "tick", "jumper", "thrower", "after" };

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			long want = printed(r.out, names[i]);

			cr_assert_geq(want, 0, "%s printed: %s", names[i], r.out);
			cr_expect_eq(all_calls(&t[parent], names[i]), (uint64_t)want,
				     "%s: %llu recorded + %llu counted, the program made %ld", names[i],
				     (unsigned long long)tc_calls(&t[parent], names[i]),
				     (unsigned long long)tc_counted(&t[parent], names[i]), want);
		}
	}
	cr_expect_gt(printed(r.out, "tick"), 0, "the timer fired");
	cr_expect_eq(all_calls(&t[child], "hot"), 100000);
	cr_expect_eq(all_calls(&t[child], "leaf"), 100000);
	cr_expect_eq(all_calls(&t[child], "deep"), 1000);
	cr_expect_eq(t[parent].counted_lost + t[child].counted_lost, 0);
	cr_expect(tc_excluded(&t[parent], "hot"));
	cr_expect(!tc_excluded(&t[parent], "deep"));
	for (int i = 0; i < 2; i++)
		tc_free(&t[i]);
	tc_done(&r);
}

Test(autoexclude, patched_call_sites_count_exactly_under_threads_signals_longjmp_and_fork,
     .timeout = 120)
{
	check_patched(AX_OPTS, true);
}

Test(autoexclude, patch_off_leaves_the_program_s_code_alone, .timeout = 120)
{
	check_patched(AX_OPTS ";patch=off", false);
}

/* The nesting stays honest through the stubs: deep, called inside hot, is never recorded under main. */
Test(autoexclude, patched_sites_keep_nested_calls_under_their_caller, .timeout = 120)
{
	const char *args[] = { "patched", "0", NULL };
	struct tc_run r;
	struct tc_trace t;
	char paths[4][512];

	run_ax(&r, args, AX_OPTS);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, "patched yes\n"), "%s", r.out);
	cr_assert_eq(tc_find_traces(&r, paths, 4), 2);
	tc_want_log = true;
	for (int i = 0; i < 2; i++) {
		tc_read(paths[i], &t);
		cr_assert(t.ok, "reader: %s", t.error);
		if (!t.forks) {
			/* every recorded deep is under a recorded hot (main calls deep only through hot) */
			cr_expect_eq(callers_of(&t, "deep", "hot"), 0);
		}
		tc_free(&t);
	}
	tc_want_log = false;
	tc_done(&r);
}

/*
 * Forks while the flush thread patches call sites: every child starts its
 * own trace (which walks the loader's objects) and exits; none inherits
 * the loader's lock held by the parent's patcher (a hang), and the
 * parent's counts stay exact.
 */
Test(autoexclude, forks_while_call_sites_are_patched_never_hang, .timeout = 120)
{
	const char *args[] = { "forks", "300", NULL };
	struct tc_run r;
	char paths[512][512];
	int n, parents = 0;

	run_ax(&r, args, AX_OPTS);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(r.out, "hot 1500000\nchildren 300\n"), "%s", r.out);
	n = tc_find_traces(&r, paths, 512);
	cr_expect_eq(n, 301, "a trace for the parent and each child (stderr: %s)", r.err);
	for (int i = 0; i < n; i++) {
		struct tc_trace t;

		tc_read(paths[i], &t);
		cr_assert(t.ok, "reader: %s", t.error);
		cr_expect(t.closed);
		if (!t.forks) {
			parents++;
			cr_expect_eq(all_calls(&t, "hot"), 1500000);
		} else {
			cr_expect_eq(all_calls(&t, "hot"), 100, "%s: %llu recorded + %llu counted", paths[i], (unsigned long long)tc_calls(&t, "hot"), (unsigned long long)tc_counted(&t, "hot"));
		}
		tc_free(&t);
	}
	cr_expect_eq(parents, 1);
	tc_done(&r);
}
