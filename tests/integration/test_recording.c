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

#include "trace_check.h"

static void run_recorder(struct tc_run *r, const char *mode, const char *options)
{
	const char *argv[] = { RECORDER_TARGET, mode, NULL };
	char opt[512];
	const char *env[] = { "FDRTRACE_MODE=fdr", opt, NULL };

	snprintf(opt, sizeof(opt), "FDRTRACE_OPTIONS=%s", options);
	tc_run(r, argv, env);
}

static void expect_exit_ok(const struct tc_run *r)
{
	cr_assert(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0,
		  "status 0x%x, stderr: %s", r->status, r->err);
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
	expect_exit_ok(&r);
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
