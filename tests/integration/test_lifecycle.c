// SPDX-License-Identifier: MIT
/*
 * tests/integration/test_lifecycle.c - when a trace begins and ends.
 *
 * Real instrumented programs: a trace cut at any moment (an early
 * SIGSEGV, SIGKILL, _exit) has its process, configuration and module-map
 * records before its first function record and names every function it
 * holds, online (a name in its FDRx func record) or offline (its module,
 * mapped by a module_map record, so the fdrtrace command reads the name
 * from the module's symbols); a process that runs no instrumented function
 * (a shell of system() or popen() under LD_PRELOAD, a program built
 * without -finstrument-functions) leaves no file; exec closes the trace of
 * the image it replaces.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tc_assert.h"

static const char *const MODE_ON = "FDRTRACE_MODE=fdr";
static const char *const PRELOAD = "LD_PRELOAD=" LIBFDRTRACE;

/* A trace cut short: start records first, every function nameable. */
static void assert_cut_trace_names_everything(const struct tc_trace *t, const char *what)
{
	cr_expect_eq(t->processes, 1, "%s", what);
	cr_expect_eq(t->configs, 1, "%s", what);
	cr_expect_geq(t->module_maps, 1, "%s", what);
	if (t->func_records)
		cr_expect(t->start_records_first,
			  "%s: a function record before the process, config and module_map records",
			  what);
	cr_expect_eq(t->unnamed, 0, "%s: records before their func record", what);
	cr_expect_eq(t->nameless, 0, "%s: records of functions with no name and no mapped module",
		     what);
}

/* `fdrtrace @sub @path`'s standard output into @out (NUL-terminated); it must exit 0. */
static void run_tool(const char *sub, const char *path, char *out, size_t cap)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "%s %s '%s' 2>/dev/null", FDRTRACE_TOOL, sub, path);
	cr_assert_eq(tc_output(cmd, out, cap), 0, "%s", cmd);
}

/* `fdrtrace account` names every function of @path (no "#id@address"). */
static void assert_account_names(const char *path, const char *const *names)
{
	static char out[65536];

	run_tool("account", path, out, sizeof(out));
	cr_expect_null(strstr(out, "#"), "an unnamed function in:\n%s", out);
	for (; *names; names++)
		cr_expect(strstr(out, *names), "no %s in:\n%s", *names, out);
}

/*
 * The start writes the start records itself, in the name of the flush
 * thread it has just created and which has not run yet: the id it learns
 * for it (pthread_getcpuclockid()) is that thread's, the one the OS
 * names fdrtrace-flush, and `fdrtrace info` lists the runtime's buffers
 * under it, apart from the program's thread.
 */
Test(start, the_runtime_records_carry_the_flush_threads_own_id)
{
	const char *argv[] = { TARGET, "flush_tid", NULL };
	const char *env[] = { MODE_ON, NULL };
	char paths[2][512], want[64];
	static char out[16384];
	struct tc_run r;
	const char *f;
	long tid;

	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	f = strstr(r.out, "flush_tid ");
	cr_assert_not_null(f, "%s", r.out);
	tid = atol(f + strlen("flush_tid "));
	cr_assert_gt(tid, 0, "no thread named fdrtrace-flush: %s", r.out);
	cr_assert_eq(tc_find_traces(&r, paths, 2), 1);
	run_tool("info", paths[0], out, sizeof(out));
	snprintf(want, sizeof(want), "runtime threads: 1: %ld (fdrtrace-flush)\n", tid);
	cr_expect(strstr(out, want), "want \"%s\" in:\n%s", want, out);
	tc_done(&r);
}

Test(early_crash, sigsegv_right_after_start_keeps_start_records_and_names)
{
	/* `target segv` dies about 0.1 ms after main starts */
	const char *argv[] = { TARGET, "segv", NULL };
	const char *env[] = { MODE_ON, NULL };
	/* main never returns, so account has no time for it */
	static const char *const names[] = { "work", "leaf", "mid", "rec", NULL };

	if (IT_SANITIZED)
		cr_skip_test("the sanitizer runtime handles SIGSEGV");
	for (int i = 0; i < 3; i++) {
		char paths[2][512];
		struct tc_run r;
		struct tc_trace t;

		tc_run(&r, argv, env);
		cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV, "status 0x%x",
			  r.status);
		tc_assert_one_trace(&r, &t);
		cr_expect(t.closed);
		cr_expect_eq(t.close_how, FDRTRACE_CLOSE_SIGNAL);
		cr_expect_gt(t.func_records, 1000);
		assert_cut_trace_names_everything(&t, "segv");
		tc_find_traces(&r, paths, 2);
		assert_account_names(paths[0], names);
		tc_free(&t);
		tc_done(&r);
	}
}

Test(early_crash, sigkill_at_any_moment_leaves_start_records_and_names)
{
	/* the clock calibration takes ~20 ms of start-up: kills before, during and after it */
	static const long when_ms[] = { 5, 30, 60, 120, 250, 600 };
	const char *argv[] = { TARGET, "spin", NULL };
	const char *env[] = { MODE_ON, "FDRTRACE_OPTIONS=buffer_size=8192", NULL };
	int with_records = 0;

	for (size_t i = 0; i < sizeof(when_ms) / sizeof(when_ms[0]); i++) {
		char paths[2][512], what[64];
		struct tc_run r;
		struct tc_trace t;
		int n;

		snprintf(what, sizeof(what), "SIGKILL after %ld ms", when_ms[i]);
		tc_kill_ms = when_ms[i];
		tc_run(&r, argv, env);
		tc_kill_ms = 0;
		cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL, "%s: 0x%x", what,
			  r.status);
		n = tc_find_traces(&r, paths, 2);
		cr_expect_leq(n, 1, "%s", what);
		if (n == 1) {
			/* killed mid-write, the last buffer may be cut: read as far as it goes */
			tc_read(paths[0], &t);
			assert_cut_trace_names_everything(&t, what);
			cr_expect_not(t.closed, "%s", what);
			with_records += t.func_records > 0;
			tc_free(&t);
		}
		tc_done(&r);
	}
	cr_expect_gt(with_records, 0, "no kill left function records to check");
}

Test(early_crash, quick_exit_closes_the_trace_with_every_record)
{
	/*
	 * _exit skips the atexit finish. libfdrtrace's _exit() (lifecycle.c)
	 * writes what is in memory and closes the trace first: before it, the
	 * last buffers were lost and the flush thread died inside a writev
	 * (a cut buffer at the end, no close marker; dash's forked children,
	 * which end with _exit, left 18 of 25 traces so).
	 */
	const char *argv[] = { TARGET, "quick_exit", "300", NULL };
	const char *env[] = { MODE_ON, "FDRTRACE_OPTIONS=buffer_size=8192:flush_interval_ms=1",
			      NULL };
	char paths[2][512];
	struct tc_run r;
	struct tc_trace t;

	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	cr_assert_eq(tc_find_traces(&r, paths, 2), 1, "%s", r.err);
	tc_read(paths[0], &t);
	cr_expect(t.ok, "%s", t.error);
	cr_expect(t.closed, "no close marker");
	cr_expect_eq(t.close_how, FDRTRACE_CLOSE_EXIT);
	cr_expect_gt(t.func_records, 0);
	cr_expect_eq(t.close_records, t.func_records);
	cr_expect_eq(t.unmatched, 0);
	assert_cut_trace_names_everything(&t, "_exit");
	{
		/* and says so, as exit() does: "fdrtrace: PATH: N records, M lost..." */
		char line[700];

		snprintf(line, sizeof(line), "fdrtrace: %s: %llu records, %llu lost", paths[0],
			 (unsigned long long)t.func_records, (unsigned long long)t.close_dropped);
		cr_expect(strstr(r.err, line), "no exit line '%s' in: %s", line, r.err);
	}
	tc_free(&t);
	tc_done(&r);
}

/*
 * Runs "TARGET @mode MS" for MS 0 to 6, @rounds times: main exits MS ms
 * after starting a thread that ends the process its own way at about that
 * moment. Whichever closes the trace, the other waits for it, so every
 * trace is whole and closed. @signal: the thread's way may kill the
 * process with it (else it exits with status 3).
 */
static void expect_races_close(const char *mode, int rounds, int signal)
{
	int closed = 0, runs = 0;

	for (int round = 0; round < rounds; round++)
		for (int ms = 0; ms <= 6; ms++) {
			char arg[16], paths[2][512];
			const char *argv[] = { TARGET, mode, arg, NULL };
			const char *env[] = { MODE_ON, NULL };
			struct tc_run r;
			struct tc_trace t;

			snprintf(arg, sizeof(arg), "%d", ms);
			tc_run(&r, argv, env);
			cr_expect((WIFEXITED(r.status) && (WEXITSTATUS(r.status) == 0 ||
							   (!signal && WEXITSTATUS(r.status) == 3))) ||
				  (signal && WIFSIGNALED(r.status) && WTERMSIG(r.status) == signal),
				  "%s %d ms: status 0x%x", mode, ms, r.status);
			if (tc_find_traces(&r, paths, 2) == 1) {
				tc_read(paths[0], &t);
				cr_expect(t.ok, "%d ms: %s", ms, t.error);
				cr_expect(t.closed, "%s %d ms: no close marker (status 0x%x)", mode,
					  ms, r.status);
				if (!signal)
					cr_expect_eq(t.close_how, FDRTRACE_CLOSE_EXIT, "%d ms", ms);
				cr_expect_eq(t.close_records, t.func_records, "%d ms", ms);
				closed += t.ok && t.closed;
				runs++;
				tc_free(&t);
			}
			tc_done(&r);
		}
	cr_expect_eq(closed, runs, "%s: %d of %d traces closed", mode, closed, runs);
	cr_expect_gt(runs, 0);
}

/*
 * A thread calls _exit while main calls exit() (lc_wait_closing()). Before,
 * the second one to end the process cut the first one's writes.
 */
Test(early_crash, exit_and__exit_at_once_leave_a_closed_trace)
{
	expect_races_close("exit_race", 1, 0);
}

/*
 * A thread crashes (SIGSEGV) while main calls exit(): a crash while exit()
 * closes the trace waits for it (2 s at most) before taking its course, and
 * exit() waits for a crash's dump. Before, a crash during exit()'s close
 * killed the process in the middle of it (1 trace in 20 was cut).
 */
Test(early_crash, exit_and_a_crash_at_once_leave_a_closed_trace, .timeout = 120)
{
	expect_races_close("crash_race", 3, SIGSEGV);
}

/*
 * The program closes its standard error, as xz does, and opens a file that
 * takes descriptor 2: the runtime's exit line must not land in that file
 * (it was not the standard error the runtime started with). The trace is
 * still closed and says what the line would have said.
 */
/* The file @path the target wrote, into @data (NUL-terminated), then removed. Return: its length. */
static size_t take_program_file(const char *path, char *data, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert(f, "%s: not written", path);
	n = fread(data, 1, cap - 1, f);
	data[n] = '\0';
	fclose(f);
	unlink(path);
	return n;
}

Test(messages, never_go_to_a_file_that_took_descriptor_2)
{
	char path[512], data[64];
	const char *argv[] = { TARGET, "stderr_reused", path, NULL };
	const char *env[] = { MODE_ON, NULL };
	struct tc_run r;
	struct tc_trace t;

	snprintf(path, sizeof(path), "/tmp/fdrtrace-stderr-reused-%d", (int)getpid());
	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	take_program_file(path, data, sizeof(data));
	cr_expect_str_eq(data, "data\n", "the program's file holds more than its data");
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_gt(t.func_records, 0);
	tc_free(&t);
	tc_done(&r);
}

/*
 * A program that closes every descriptor above 2 (a daemon's close-all,
 * closefrom(3) before an exec) and opens its own files gets our numbers
 * back. The runtime must not write a byte into them, truncate or close
 * them: it opens its trace again by its path and goes on. @ms: how long
 * the target works before (0: the trace is still unnamed then, 300: it is
 * written).
 */
static void close_fds_run(const char *ms)
{
	char path[512], data[64];
	const char *argv[] = { TARGET, "close_fds", ms, path, NULL };
	const char *env[] = { MODE_ON, "FDRTRACE_OPTIONS=flush_interval_ms=10", NULL };
	struct tc_run r;
	struct tc_trace t;
	size_t n;

	snprintf(path, sizeof(path), "/tmp/fdrtrace-close-fds-%d", (int)getpid());
	unlink(path);
	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	n = take_program_file(path, data, sizeof(data));
	cr_expect_str_eq(data, "dddddddddddddddddddddddddddddddd",
			 "the program's file holds more than its 32 bytes (%zu)", n);
	cr_expect_eq(tc_lines(r.err), 1, "one line, the exit line: %s", r.err);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed, "the trace goes on after the close-all, to its end");
	cr_expect_eq(t.unmatched, 0);
	cr_expect_eq(tc_calls(&t, "work"), 4, "every call, before and after");
	tc_free(&t);
	tc_done(&r);
}

Test(messages, a_close_all_before_the_trace_is_named_leaves_the_programs_files_alone)
{
	close_fds_run("0");
}

Test(messages, a_close_all_while_the_trace_is_written_leaves_the_programs_files_alone)
{
	close_fds_run("300");
}

/*
 * The program's opens get the numbers they get untraced: the runtime's
 * descriptors (the trace, libunwind's pipe) sit high (fdr_fd_high()).
 * They took 3, 4 and 5, and bash's tests, which print descriptor
 * numbers or lower `ulimit -n` and open files, failed traced.
 */
Test(messages, the_programs_opens_get_the_numbers_they_get_untraced)
{
	const char *argv[] = { TARGET, "first_fd", NULL };
	const char *off[] = { NULL };
	const char *on[] = { MODE_ON, NULL };
	struct tc_run r;
	struct tc_trace t;
	char untraced[64];

	tc_run(&r, argv, off);
	tc_assert_exited_ok(&r);
	snprintf(untraced, sizeof(untraced), "%.60s", r.out);
	cr_assert(!strncmp(untraced, "fd ", 3), "%s", untraced);
	tc_done(&r);
	tc_run(&r, argv, on);
	tc_assert_exited_ok(&r);
	cr_expect_str_eq(r.out, untraced);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(tc_calls(&t, "work"), 1);
	tc_free(&t);
	tc_done(&r);
}

/*
 * The program puts its own file on every descriptor it finds open, the
 * trace's among them, and leaves no descriptor free (bash: `( ulimit -n
 * 8; exec 3>f ... 7>f )`). Every record was written by the flush thread
 * (its own descriptor table): the trace is whole, and nothing may say
 * otherwise. The exit path used to reopen the trace just to trim it,
 * fail with EMFILE and print "reopening it failed: Too many open files;
 * recording stopped", even with verbosity=0.
 */
Test(messages, a_program_that_takes_the_traces_descriptor_at_the_end_gets_no_false_alarm)
{
	char path[512], data[64];
	const char *argv[] = { TARGET, "fds_taken", path, NULL };
	const char *env[] = { MODE_ON, "FDRTRACE_OPTIONS=verbosity=0", NULL };
	struct tc_run r;
	struct tc_trace t;
	size_t n;

	snprintf(path, sizeof(path), "/tmp/fdrtrace-fds-taken-%d", (int)getpid());
	unlink(path);
	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	n = take_program_file(path, data, sizeof(data));
	cr_expect_str_eq(data, "data\n", "the program's file holds more than its 5 bytes (%zu)", n);
	cr_expect_str_eq(r.err, "", "verbosity=0, nothing lost: nothing on stderr");
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed && t.close_how == FDRTRACE_CLOSE_EXIT);
	cr_expect_eq(tc_calls(&t, "work"), 2, "every call, before and after");
	cr_expect_eq(t.dropped, 0);
	tc_free(&t);
	tc_done(&r);
}

/* A new directory r->dir for a run, the rest of @r cleared. */
static void new_run_dir(struct tc_run *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/fdrtrace-it-XXXXXX");
	cr_assert(mkdtemp(r->dir));
}

/* Signals whose default action ends a process (runtime/process/lifecycle.c's lc_term_sigs). */
static const int term_sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM,
				 SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ };

/*
 * Start the target with @argv in r->dir (new_run_dir()), traced
 * (verbosity=2), its descriptors 1 and 2 on @out, or closed when @out is
 * negative, every signal unblocked and at its default action as a shell
 * starts a command, but @ignore (when not 0) ignored. tc_run() cannot: it
 * puts both on files of its own, and waits. Return: its pid.
 */
static pid_t spawn_target(const struct tc_run *r, const char *const *argv, int out, int ignore)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (size_t i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
			signal(term_sigs[i], term_sigs[i] == ignore ? SIG_IGN : SIG_DFL);
		if (chdir(r->dir) < 0)
			_exit(126);
		if (out < 0) {
			close(1);
			close(2);
		} else if (dup2(out, 1) < 0 || dup2(out, 2) < 0) {
			_exit(126);
		}
		setenv("FDRTRACE_MODE", "fdr", 1);
		setenv("FDRTRACE_OPTIONS", "verbosity=2", 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* Wait for spawn_target()'s @pid; its status into r->status. */
static void wait_target(struct tc_run *r, pid_t pid)
{
	int st;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	r->status = st;
}

/*
 * A program started with descriptors 1 and 2 closed (a daemon started so)
 * fills them with its own files. What the runtime opens at initialisation
 * must not take them (libunwind's pipe did: the program's standard output
 * was that pipe's read end), nor may its messages go there.
 */
Test(messages, a_program_started_with_stdout_and_stderr_closed_gets_them_back)
{
	char path[300], data[64];
	const char *argv[] = { TARGET, "stdio_holes", path, NULL };
	struct tc_run r;
	struct tc_trace t;
	pid_t pid;

	new_run_dir(&r);
	snprintf(path, sizeof(path), "%s/out", r.dir);
	pid = spawn_target(&r, argv, -1, 0);
	wait_target(&r, pid);
	tc_assert_exited_ok(&r);
	take_program_file(path, data, sizeof(data));
	cr_expect_str_eq(data, "out\nerr\n", "the program's own output, and nothing of ours");
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(tc_calls(&t, "work"), 2);
	tc_free(&t);
	tc_done(&r);
}

/*
 * At exit() the runtime flushes the program's standard output before its
 * exit line, but only the C library's own stream: a program that set
 * stdout to a FILE of its own and fclosed it in an exit handler leaves
 * stdout pointing at freed memory, and flushing that was a use after free
 * (memcheck: an invalid read in ftrylockfile; without valgrind the freed
 * block is usually intact, so it is checked under memcheck). The
 * program's file and exit status stay its own.
 */
Test(messages, a_freed_stdout_is_not_flushed_at_exit, .timeout = 120)
{
	const char *pre[] = { VALGRIND, "--error-exitcode=9", "--quiet",
			      "--suppressions=" VALGRIND_SUPP, NULL };
	char file[300], *text = NULL;
	const char *argv[] = { TARGET, "stdout_freed", file, NULL };
	const char *env[] = { MODE_ON, "FDRTRACE_OPTIONS=clock=rdtsc", NULL };
	struct tc_run r;
	struct tc_trace t;
	size_t len = 0;
	FILE *f;

	if (!*VALGRIND)
		cr_skip_test("valgrind not found");
	if (IT_SANITIZED)
		cr_skip_test("sanitized build");
	snprintf(file, sizeof(file), "/tmp/fdrtrace-it-stdout-freed.%d", (int)getpid());
	tc_run_wrapped(&r, pre, argv, env);
	cr_expect(!strstr(r.err, "Invalid read"), "memcheck: %s", r.err);
	tc_assert_exited_ok(&r);
	f = fopen(file, "r");
	cr_assert(f, "%s: %s", file, strerror(errno));
	cr_assert_eq(getdelim(&text, &len, '\0', f) > 0, true);
	fclose(f);
	unlink(file);
	cr_expect_str_eq(text, "ok stdout_freed\nbye\n");
	free(text);
	cr_expect(strstr(r.err, " records, 0 lost"), "the exit line: %s", r.err);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	tc_free(&t);
	tc_done(&r);
}

/*
 * A program whose output is a pipe closes its ends (as a daemon does to
 * let the shell that started it go on): the reader must see EOF then,
 * not when the program ends. The flush thread's own descriptor table
 * (runtime/flush/flush_thread.c) must hold no copy of the pipe. The target
 * sleeps 3 s after closing, then creates "slept": EOF must come before.
 */
Test(messages, closing_its_output_pipe_ends_the_reader_while_it_runs)
{
	char out[4096], slept[300];
	const char *argv[] = { TARGET, "close_stdio", "3000", NULL };
	struct tc_run r;
	struct tc_trace t;
	size_t got = 0;
	int p[2];
	ssize_t n;
	pid_t pid;

	new_run_dir(&r);
	snprintf(slept, sizeof(slept), "%s/slept", r.dir);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = spawn_target(&r, argv, p[1], 0);
	close(p[1]);
	while ((n = read(p[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	cr_expect(access(slept, F_OK) != 0,
		  "the reader saw EOF only after the program's sleep: its pipe was held open");
	wait_target(&r, pid);
	tc_assert_exited_ok(&r);
	cr_expect_str_eq(out, "", "nothing written to the pipe: %s", out);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(tc_calls(&t, "work"), 3);
	tc_free(&t);
	tc_done(&r);
}

/*
 * Run the target (new_run_dir(), spawn_target()) with descriptors 1 and 2
 * on a pipe that has no reader from the start, and wait for it.
 */
static void run_into_broken_pipe(struct tc_run *r, const char *const *argv)
{
	int p[2];
	pid_t pid;

	new_run_dir(r);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	close(p[0]);
	pid = spawn_target(r, argv, p[1], 0);
	close(p[1]);
	wait_target(r, pid);
}

/*
 * The exit line goes to standard error. A pipe there whose reader has
 * gone must not end the program: the write fails with EPIPE and the
 * SIGPIPE it raises is taken back (runtime/base/say.c). A program that writes
 * nothing itself and exits 0 died of SIGPIPE (status 141) at its exit line.
 */
Test(messages, the_exit_line_to_a_pipe_with_no_reader_does_not_end_the_program)
{
	const char *argv[] = { TARGET, "silent", NULL };
	struct tc_run r;
	struct tc_trace t;

	run_into_broken_pipe(&r, argv);
	tc_assert_exited_ok(&r);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(t.close_how, FDRTRACE_CLOSE_EXIT);
	cr_expect_eq(tc_calls(&t, "work"), 1);
	tc_free(&t);
	tc_done(&r);
}

/* Wait until the target has made @name in r->dir (10 s at most). */
static void wait_ready(const struct tc_run *r, pid_t pid, const char *name)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%s", r->dir, name);
	for (int i = 0; i < 1000 && access(path, F_OK) != 0; i++) {
		cr_assert_eq(waitpid(pid, NULL, WNOHANG), 0, "the target ended before %s", name);
		usleep(10000);
	}
	cr_assert_eq(access(path, F_OK), 0, "no %s after 10 s", name);
}

/*
 * The target ended by @sig as it would have untraced, its trace closed
 * whole: every call of its work() (named offline, from its module, as
 * after a crash), nothing dropped.
 */
static void assert_killed_and_closed(struct tc_run *r, int sig)
{
	static const char *const names[] = { "work", "mid", "leaf", NULL };
	char paths[4][512];
	struct tc_trace t;

	cr_expect(WIFSIGNALED(r->status) && WTERMSIG(r->status) == sig,
		  "signal %d (%s): status 0x%x", sig, sigabbrev_np(sig), r->status);
	tc_assert_one_trace(r, &t);
	cr_expect(t.closed, "signal %s: the trace was not closed", sigabbrev_np(sig));
	cr_expect_eq(t.close_how, FDRTRACE_CLOSE_SIGNAL, "signal %s", sigabbrev_np(sig));
	cr_expect_eq(t.dropped, 0);
	/* main(), killed inside it, is the one call never closed */
	cr_expect_eq(t.open_at_end, 1, "signal %s: calls open at the end", sigabbrev_np(sig));
	cr_expect_gt(t.func_records, 2000, "work() makes 2,904 records");
	cr_expect_eq(t.entries, t.exits + 1);
	tc_free(&t);
	cr_assert_eq(tc_find_traces(r, paths, 4), 1);
	assert_account_names(paths[0], names);
	{
		/* `fdrtrace info` says by which signal, and does not call it a crash */
		char out[16384], want[64];

		run_tool("info", paths[0], out, sizeof(out));
		snprintf(want, sizeof(want), "signal %d (%s)", sig, sigabbrev_np(sig));
		cr_expect(strstr(out, "killed at:") && strstr(out, want), "%s in:\n%s", want, out);
		cr_expect_null(strstr(out, "crash stack:"), "%s", out);
	}
}

/*
 * A program that leaves SIGTERM, SIGINT, SIGHUP... at their default dies
 * of them without exit handlers: its trace lost its last buffers and its
 * close marker without a word (make interrupted, pigz terminated). The
 * runtime handles them while they are at the default: it writes and closes
 * the trace, then the default runs, so the process ends by the same
 * signal (status and core dump as without the tracer).
 */
/* Run the target until it waits, send it @sig, and check it died of it, its trace closed. */
static void kill_waiting_target(struct tc_run *r, int sig)
{
	const char *argv[] = { TARGET, "wait_kill", NULL };
	pid_t pid;

	new_run_dir(r);
	pid = spawn_target(r, argv, -1, 0);
	wait_ready(r, pid, "ready");
	cr_assert_eq(kill(pid, sig), 0);
	wait_target(r, pid);
	assert_killed_and_closed(r, sig);
}

Test(endings, a_program_killed_by_a_signal_left_at_its_default_closes_its_trace, .timeout = 120)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGALRM };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct tc_run r;

		kill_waiting_target(&r, sigs[i]);
		tc_done(&r);
	}
}

/*
 * A fault's signal sent by another process (kill -SEGV, kill -ABRT) is no
 * crash of the program: info said "crash stack" for it, with the stack of
 * a thread asleep in a wait (a helper's find on xz). The stack is written
 * as sent (native_stack why=sent) and read as "killed at".
 */
Test(endings, a_faults_signal_sent_by_kill_is_killed_at_not_a_crash, .timeout = 60)
{
	static const int sigs[] = { SIGSEGV, SIGABRT };

	if (IT_SANITIZED)
		cr_skip_test("the sanitizer runtime owns SIGSEGV");
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		char paths[2][512], out[16384];
		struct tc_run r;

		kill_waiting_target(&r, sigs[i]);
		cr_assert_eq(tc_find_traces(&r, paths, 2), 1);
		run_tool("info", paths[0], out, sizeof(out));
		cr_expect(strstr(out, ", sent by another process"), "%s", out);
		{
			char cmd[1200];

			snprintf(cmd, sizeof(cmd), "%s dump '%s' | grep -c 'FDRx native_stack .*why=sent '",
				 FDRTRACE_TOOL, paths[0]);
			tc_output(cmd, out, sizeof(out));
			cr_expect_str_eq(out, "1\n", "native stacks written as sent");
		}
		tc_done(&r);
	}
}

/*
 * A handler that cleans up, resets the default and raises the signal
 * again (GNU make's on Ctrl-C) ended the process by the default action,
 * past the runtime: its trace cut. Setting the default puts the runtime's
 * handler back (runtime/signals/sigview.c): the program's clean-up runs, then the
 * trace is closed, then the process ends by the signal.
 */
Test(endings, a_handler_that_resets_the_default_and_raises_again_closes_the_trace)
{
	const char *argv[] = { TARGET, "reraise", NULL };
	char cleaned[300];
	struct tc_run r;
	pid_t pid;

	new_run_dir(&r);
	snprintf(cleaned, sizeof(cleaned), "%s/cleaned", r.dir);
	pid = spawn_target(&r, argv, -1, 0);
	wait_ready(&r, pid, "ready");
	cr_assert_eq(kill(pid, SIGTERM), 0);
	wait_target(&r, pid);
	cr_expect_eq(access(cleaned, F_OK), 0, "the program's handler did not run");
	assert_killed_and_closed(&r, SIGTERM);
	tc_done(&r);
}

/*
 * The runtime handles SIGTERM, SIGSEGV... where the program left the
 * default; the program is told what it set (SIG_DFL), by sigaction and
 * by signal, before and after it sets a handler or SIG_IGN of its own.
 * Started with every signal at its default (spawn_target()): a test run
 * under nohup or in the background starts with SIGHUP or SIGINT ignored.
 */
Test(endings, the_program_sees_the_dispositions_it_set)
{
	const char *argv[] = { TARGET, "dispositions", NULL };
	char path[300], out[256];
	struct tc_run r;
	struct tc_trace t;
	pid_t pid;
	int fd;

	new_run_dir(&r);
	snprintf(path, sizeof(path), "%s/out", r.dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	pid = spawn_target(&r, argv, fd, 0);
	close(fd);
	wait_target(&r, pid);
	tc_assert_exited_ok(&r);
	take_program_file(path, out, sizeof(out));
	cr_expect(strstr(out, "dispositions 0\nok dispositions\n"), "%s", out);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(tc_calls(&t, "work"), 1);
	tc_free(&t);
	tc_done(&r);
}

/* `prog | head`: a write to a pipe whose reader has gone ends it by SIGPIPE, as before. */
Test(endings, a_write_to_a_pipe_with_no_reader_ends_it_by_sigpipe_with_its_trace_closed)
{
	const char *argv[] = { TARGET, "write_pipe", NULL };
	struct tc_run r;

	run_into_broken_pipe(&r, argv);
	assert_killed_and_closed(&r, SIGPIPE);
	tc_done(&r);
}

/* A signal the program started with ignored (a background job's SIGINT) stays ignored. */
Test(endings, a_signal_the_program_ignores_stays_ignored)
{
	const char *argv[] = { TARGET, "wait_kill", NULL };
	struct tc_run r;
	pid_t pid;

	new_run_dir(&r);
	pid = spawn_target(&r, argv, -1, SIGINT);
	wait_ready(&r, pid, "ready");
	cr_assert_eq(kill(pid, SIGINT), 0);
	usleep(300000);
	cr_expect_eq(waitpid(pid, NULL, WNOHANG), 0, "SIGINT, ignored, ended it");
	cr_assert_eq(kill(pid, SIGTERM), 0);
	wait_target(&r, pid);
	assert_killed_and_closed(&r, SIGTERM);
	tc_done(&r);
}

/*
 * The runtime opens its files when it starts, at main()'s first hook (the
 * trace, unnamed; the program's own file for names): a descriptor it
 * opened while the program runs would take the lowest free number, the one
 * a program that has just closed standard error gets from its next open
 * (never_go_to_a_file_that_took_descriptor_2 lost that race on a CI
 * machine). strace shows every open between the target's two markers;
 * there must be none but the flush thread's, made in a descriptor table of
 * its own (after its unshare(CLONE_FILES): no number of the program's),
 * which since the start no longer waits for that thread may come after
 * the first marker.
 */
Test(messages, the_runtime_opens_no_file_while_the_program_runs)
{
	static const char strace[] = "/usr/bin/strace";
	char log[512], line[1024], seen[4096] = "";
	const char *argv[] = { strace, "-f", "-qq", "-e",
			       "trace=access,open,openat,openat2,creat,unshare",
			       "-o", log, TARGET, "quiet", NULL };
	const char *env[] = { MODE_ON, NULL };
	int begin = 0, end = 0, opens = 0;
	long own[8] = { 0 };	/* threads with a descriptor table of their own (the flush thread) */
	int nown = 0;
	struct tc_run r;
	struct tc_trace t;
	FILE *f;

	if (access(strace, X_OK))
		cr_skip_test("%s is not installed (.ci/install-deps installs it)", strace);
	snprintf(log, sizeof(log), "/tmp/fdrtrace-quiet-%d.strace", (int)getpid());
	tc_run(&r, argv, env);
	f = fopen(log, "r");
	if (!f && r.status)
		cr_skip_test("strace cannot trace here: %s", r.err);
	tc_assert_exited_ok(&r);
	cr_assert(f, "%s: not written", log);
	while (fgets(line, sizeof(line), f)) {
		long tid = strtol(line, NULL, 10);
		bool private = false;

		for (int i = 0; i < nown; i++)
			private |= own[i] == tid;
		if (strstr(line, "unshare(CLONE_FILES)") && strstr(line, "= 0") && nown < 8)
			own[nown++] = tid;
		else if (strstr(line, "/fdrtrace-quiet-begin"))
			begin++;
		else if (strstr(line, "/fdrtrace-quiet-end"))
			end++;
		else if (begin && !end && !private && strstr(line, "open") && ++opens)
			strncat(seen, line, sizeof(seen) - strlen(seen) - 1);
	}
	fclose(f);
	unlink(log);
	cr_expect_eq(begin, 1, "the target's first marker");
	cr_expect_eq(end, 1, "the target's second marker");
	cr_expect_eq(opens, 0, "opened while the program runs:\n%s", seen);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_gt(tc_calls(&t, "work"), 2, "named: work");
	tc_free(&t);
	tc_done(&r);
}

Test(children, shells_of_system_and_popen_leave_no_file_under_ld_preload)
{
	/* a program not linked with us, preloaded: its shells are preloaded too */
	const char *argv[] = { PRELOAD_TARGET, "children", NULL };
	const char *env[] = { MODE_ON, PRELOAD, NULL };
	struct tc_run r;
	struct tc_trace t;

	if (IT_SANITIZED)
		cr_skip_test("a sanitized libfdrtrace cannot be preloaded");
	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	cr_expect_str_eq(r.out, "from-a-shell\nok children\n");
	/* the program's own trace, and nothing from sh, true or echo */
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(t.close_how, FDRTRACE_CLOSE_EXIT);
	cr_expect_eq(tc_calls(&t, "work"), 2);
	cr_expect_eq(tc_calls(&t, "leaf"), 2 * 1300);
	cr_expect_eq(t.unmatched, 0);
	cr_expect_eq(t.open_at_end, 0);
	cr_expect_eq(tc_lines(r.err), 1, "one line, the program's: %s", r.err);
	tc_free(&t);
	tc_done(&r);
}

/*
 * Nothing instrumented runs: no file, and (issue 33) one line from the
 * process the user asked about, naming -finstrument-functions: the
 * preloaded shell's last image (`exec true`), not its children, which
 * inherited the preload from a traced parent; the program that links us.
 * verbosity=0 (fdrtrace record's): nothing at all.
 */
Test(children, a_process_that_runs_nothing_instrumented_leaves_no_file)
{
	const char *sh[] = { "/bin/sh", "-c", "true; echo hi | cat >/dev/null; exec true", NULL };
	const char *empty[] = { EMPTY_TARGET, NULL };
	const char *preload_env[] = { MODE_ON, PRELOAD, NULL };
	const char *quiet_env[] = { MODE_ON, PRELOAD, "FDRTRACE_OPTIONS=verbosity=0", NULL };
	const char *env[] = { MODE_ON, NULL };
	char paths[2][512];
	struct tc_run r;

	if (!IT_SANITIZED) {	/* a sanitized libfdrtrace cannot be preloaded */
		tc_run(&r, sh, preload_env);
		tc_assert_exited_ok(&r);
		cr_expect_eq(tc_find_traces(&r, paths, 2), 0, "a shell left a trace");
		cr_expect_eq(tc_lines(r.err), 1, "one line: %s", r.err);
		cr_expect(strstr(r.err, "-finstrument-functions"), "%s", r.err);
		tc_done(&r);
		tc_run(&r, sh, quiet_env);
		tc_assert_exited_ok(&r);
		cr_expect_str_empty(r.err);
		tc_done(&r);
	}
	/* linked with us, calls fdrtrace_flush() and nothing instrumented */
	tc_run(&r, empty, env);
	tc_assert_exited_ok(&r);
	cr_expect_str_eq(r.out, "flush 0\n");
	cr_expect_eq(tc_find_traces(&r, paths, 2), 0, "an uninstrumented program left a trace");
	cr_expect_eq(tc_lines(r.err), 1, "one line: %s", r.err);
	cr_expect(strstr(r.err, "it_empty: no instrumented function ran"), "%s", r.err);
	tc_done(&r);
}

/*
 * The lazy start (issue 2's "first hook starts the runtime"): eight threads
 * whose first instrumented calls come at once (main is not instrumented):
 * one starts the runtime, the others wait, and every call is recorded;
 * an instrumented constructor before main starts it there, its call
 * recorded after the start records.
 */
Test(children, the_first_hooks_of_racing_threads_all_wait_for_one_start)
{
	const char *race[] = { LAZY_TARGET, "race", "8", NULL };
	const char *ctor[] = { LAZY_TARGET, "ctor", NULL };
	const char *env[] = { MODE_ON, NULL };
	const char *ctor_env[] = { MODE_ON, "LAZY_CTOR=1", NULL };
	struct tc_run r;
	struct tc_trace t;

	for (int round = 0; round < 3; round++) {
		tc_run(&r, race, env);
		tc_assert_exited_ok(&r);
		tc_assert_one_trace(&r, &t);
		cr_expect_eq(tc_calls(&t, "leaf"), 8 * 1000);
		cr_expect_eq(tc_calls(&t, "work"), 8);
		cr_expect_eq(t.dropped, 0, "round %d: %llu dropped", round,
			     (unsigned long long)t.dropped);
		cr_expect_geq(t.ntids, 8 + 1, "8 threads and the flush thread: %d", t.ntids);
		cr_expect(t.start_records_first);
		cr_expect(t.closed);
		tc_free(&t);
		tc_done(&r);
	}
	tc_run(&r, ctor, ctor_env);
	tc_assert_exited_ok(&r);
	tc_assert_one_trace(&r, &t);
	cr_expect_eq(tc_calls(&t, "early"), 1);
	cr_expect_eq(tc_calls(&t, "leaf"), 1000);
	cr_expect_eq(t.dropped, 0);
	cr_expect(t.start_records_first);
	tc_free(&t);
	tc_done(&r);
}

/*
 * A process that records nothing starts nothing: no flush thread (its
 * threads counted in /proc at exit: one), nothing mapped for the pool; a
 * fork child of a recording parent that execs at once leaves no trace
 * and says nothing.
 */
Test(children, recording_starts_at_the_first_hook_and_a_fork_then_exec_child_is_silent)
{
	const char *sh[] = { "/bin/sh", "-c", "ls /proc/self/task | wc -l", NULL };
	const char *preload_env[] = { MODE_ON, PRELOAD, NULL };
	const char *argv[] = { TARGET, "children", NULL };
	const char *fork_exec[] = { TARGET, "fork_exec", NULL };
	const char *env[] = { MODE_ON, NULL };
	char paths[4][512];
	struct tc_run r;

	if (!IT_SANITIZED) {
		tc_run(&r, sh, preload_env);
		tc_assert_exited_ok(&r);
		cr_expect_str_eq(r.out, "1\n", "threads of an uninstrumented process: %s", r.out);
		tc_done(&r);
	}
	/* system() and popen() (posix_spawn) children, and the traced parent's own trace */
	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	cr_expect_eq(tc_find_traces(&r, paths, 4), 1, "only the parent's trace");
	cr_expect_eq(tc_lines(r.err), 1, "only the parent's exit line: %s", r.err);
	tc_done(&r);
	/* fork(), then exec in the child with no instrumented call between */
	tc_run(&r, fork_exec, env);
	tc_assert_exited_ok(&r);
	cr_expect_eq(tc_find_traces(&r, paths, 4), 1, "only the parent's trace");
	cr_expect_eq(tc_lines(r.err), 1, "only the parent's exit line: %s", r.err);
	tc_done(&r);
}

/*
 * it_target runs work(), then execs it_preload (preloaded), which runs
 * basic; by each of the exec functions the runtime wraps with an
 * argument list or vector of its own making.
 */
static void exec_by(const char *how)
{
	const char *argv[] = { TARGET, "exec", PRELOAD_TARGET, how, NULL };
	const char *env[] = { MODE_ON, PRELOAD, NULL };
	char paths[3][512];
	struct tc_run r;
	struct tc_trace t;

	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	cr_expect_str_eq(r.out, "ok basic\n", "%s", how);
	cr_assert_eq(tc_find_traces(&r, paths, 3), 2, "%s", r.err);
	/* sorted: fdrtrace.it_preload.PID.fdr, then fdrtrace.it_target.PID.fdr (one pid) */
	cr_assert(strstr(paths[0], "it_preload.") && strstr(paths[1], "it_target."), "%s %s",
		  paths[0], paths[1]);
	/* one process, two images: the same "PID.fdr" after the program names */
	cr_expect_str_eq(strstr(paths[0], "it_preload.") + strlen("it_preload."),
			 strstr(paths[1], "it_target.") + strlen("it_target."));
	for (int i = 0; i < 2; i++) {
		tc_read(paths[i], &t);
		cr_expect(t.ok, "%s: %s", paths[i], t.error);
		cr_expect(t.closed, "%s: %s", how, paths[i]);
		cr_expect_eq(t.close_how, FDRTRACE_CLOSE_EXIT);
		cr_expect_eq(tc_calls(&t, "work"), 1, "%s", paths[i]);
		cr_expect_eq(tc_calls(&t, "leaf"), 1300, "%s", paths[i]);
		cr_expect_eq(t.dropped, 0);
		cr_expect_eq(t.close_records, t.func_records);
		/* the image exec replaced is still inside main: its entry has no exit */
		cr_expect_eq(t.open_at_end, i == 1 ? 1 : 0, "%s", paths[i]);
		/* and it says what replaced it, just before its close marker */
		cr_expect_eq(t.execs, i == 1 ? 1 : 0, "%s: %s", how, paths[i]);
		if (i == 1) {
			char out[16384];

			cr_expect_str_eq(t.exec_path, PRELOAD_TARGET);
			/* and `fdrtrace info` says so: closed by the exec, not "closed: yes, exit" */
			run_tool("info", paths[i], out, sizeof(out));
			cr_expect(strstr(out, "replaced by:     exec of " PRELOAD_TARGET), "%s", out);
			cr_expect(strstr(out, "closed:          yes, exec: "), "%s", out);
		}
		tc_free(&t);
	}
	tc_done(&r);
}

/*
 * A program that changes directory and then forks (rsync's receiver, forked
 * in the destination): the child's trace goes where the program started,
 * next to its parent's, and nothing is left in the program's directory.
 * It went to the child's directory, a file in rsync's output tree.
 */
Test(children, a_child_forked_after_a_chdir_writes_where_the_program_started)
{
	const char *argv[] = { TARGET, "fork_in_subdir", NULL };
	const char *env[] = { MODE_ON, NULL };
	char paths[4][512], sub[300], cmd[400], out[256];
	struct tc_run r;

	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	cr_assert_eq(tc_find_traces(&r, paths, 4), 2, "stderr: %s", r.err);
	for (int i = 0; i < 2; i++) {
		struct tc_trace t;

		tc_expect_whole(paths[i], &t);
		tc_free(&t);
	}
	snprintf(sub, sizeof(sub), "%s/sub", r.dir);
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", sub);
	tc_output(cmd, out, sizeof(out));
	cr_expect_str_eq(out, "0\n", "files in the program's directory: %s", out);
	tc_done(&r);
}

Test(children, exec_closes_the_trace_and_the_new_image_gets_its_own)
{
	if (IT_SANITIZED)
		cr_skip_test("a sanitized libfdrtrace cannot be preloaded");
	exec_by("execv");
}

Test(children, execl_execlp_and_execle_close_the_trace_too)
{
	if (IT_SANITIZED)
		cr_skip_test("a sanitized libfdrtrace cannot be preloaded");
	exec_by("execl");
	exec_by("execlp");
	exec_by("execle");
}

/*
 * A vfork child runs on its parent's memory and thread until it execs or
 * exits: its instrumented calls went into the parent thread's buffer, a
 * call lasting the whole wait and never returning (make built without
 * posix_spawn: 38 exec_command calls so). libfdrtrace's vfork
 * (runtime/interpose/vfork.c) records nothing in the child, and the parent goes on
 * recording. Both endings of the child: exec and _exit.
 */
Test(children, a_vfork_childs_calls_are_not_recorded_as_the_parents)
{
	static const char *const hows[] = { "exec", "exit" };

	for (size_t i = 0; i < 2; i++) {
		const char *argv[] = { TARGET, "vfork", hows[i], NULL };
		const char *env[] = { MODE_ON, NULL };
		struct tc_run r;
		struct tc_trace t;

		tc_run(&r, argv, env);
		tc_assert_exited_ok(&r);
		cr_expect_str_eq(r.out, "ok vfork\n");
		tc_assert_one_trace(&r, &t);
		cr_expect(t.closed);
		cr_expect_eq(t.close_how, FDRTRACE_CLOSE_EXIT);
		cr_expect_eq(tc_calls(&t, "work"), 2, "%s", hows[i]);
		cr_expect_eq(tc_calls(&t, "leaf"), 2 * 1300, "%s: the child's 10 are not the parent's",
			     hows[i]);
		cr_expect_eq(tc_calls(&t, "in_vfork_child"), 0, "%s", hows[i]);
		cr_expect_eq(t.unmatched, 0);
		cr_expect_eq(t.open_at_end, 0, "%s", hows[i]);
		cr_expect_eq(t.dropped, 0, "%s: the child's calls are not lost", hows[i]);
		tc_free(&t);
		tc_done(&r);
	}
}

/*
 * A root daemon's worker becomes nobody as soon as it starts (nginx:
 * setgid, initgroups, setuid), before its trace is named (unnamed until
 * its first records): the trace could then not be linked into the
 * root-owned directory, nor created there, and was lost (5 of 10 nginx
 * runs lost a worker's). libfdrtrace's set*id (runtime/interpose/creds.c) name it
 * first. The target drops root in a constructor, before any call is
 * recorded. Needs root.
 */
Test(children, a_process_that_becomes_nobody_keeps_its_trace)
{
	const char *argv[] = { TARGET, "drop_privs", NULL };
	const char *env[] = { MODE_ON, "TARGET_DROP_PRIVS=1", NULL };
	struct tc_run r;
	struct tc_trace t;

	if (geteuid() != 0)
		cr_skip_test("needs root to become another user");
	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(tc_calls(&t, "work"), 1);
	cr_expect_eq(t.dropped, 0);
	tc_free(&t);
	tc_done(&r);
}

/*
 * fdrtrace record names a program's own traces by the pid in their names,
 * the numbered one of an image that execs its own program included, even
 * when the program's name itself ends in a number ("t.5": its traces are
 * fdrtrace.t.5.PID.fdr and fdrtrace.t.5.PID.2.fdr).
 */
Test(children, record_lists_both_images_of_a_self_exec_as_its_own)
{
	char dir[] = "/tmp/fdrtrace-it-XXXXXX", prog[64], cmd[1600], out[8192];
	int own = 0, started = 0;

	if (IT_SANITIZED)
		cr_skip_test("a sanitized libfdrtrace cannot be preloaded");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/t.5", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", TARGET, prog);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s record -d %s -- %s exec %s 2>&1", FDRTRACE_TOOL, dir, prog,
		 prog);
	cr_expect_eq(tc_output(cmd, out, sizeof(out)), 0, "%s", out);
	/* one process, one trace per image, in its run directory */
	cr_expect(strstr(out, "fdrtrace record: 1 process traced, ") &&
		  strstr(out, "(2 traces: a process that exec'd has one per image)"),
		  "both images' traces as the program's own:\n%s", out);
	snprintf(cmd, sizeof(cmd), "ls %s/fdrtrace.t.5.*.fdr | wc -l", dir);
	cr_expect_eq(tc_output(cmd, out, sizeof(out)), 0);
	own = atoi(out);
	cr_expect_eq(own, 2, "traces of t.5: %s", out);
	cr_expect_eq(started, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

/*
 * A one-shot handler (SA_RESETHAND): the kernel reset the disposition to
 * the real default at delivery, past the runtime, so the next such signal
 * (a fault coming again after a handler that logs and returns: Redis's
 * SIGSEGV handler) ended the process with the trace cut. The handler still
 * runs once, sees the default inside, and the second signal ends the
 * process as untraced, the trace closed first.
 */
Test(endings, a_one_shot_handler_runs_once_and_the_next_signal_closes_the_trace)
{
	const char *argv[] = { TARGET, "resethand", NULL };
	const char *env[] = { MODE_ON, NULL };
	struct tc_run r;

	tc_run(&r, argv, env);
	cr_expect_str_eq(r.out, "handled 1 view 1\n");
	assert_killed_and_closed(&r, SIGUSR1);
	tc_done(&r);
}

/*
 * A process the program started may outlive it (rsync's children after an
 * interrupt, a daemon): record, which does not wait for it, marks its
 * trace as still open instead of listing it like a finished one.
 */
Test(children, record_marks_the_trace_of_a_process_still_running)
{
	char dir[] = "/tmp/fdrtrace-it-XXXXXX", cmd[1400], out[8192], path[600];
	bool closed = false;

	if (IT_SANITIZED)
		cr_skip_test("a sanitized libfdrtrace cannot be preloaded");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "%s record -d %s -- /bin/sh -c '%s nap 1500 & sleep 0.5' 2>&1",
		 FDRTRACE_TOOL, dir, TARGET);
	cr_expect_eq(tc_output(cmd, out, sizeof(out)), 0, "%s", out);
	cr_expect(strstr(out, ".fdr (still running: its trace is not closed yet)\n"), "%s", out);
	/* the process goes on to close its trace: wait for it (at most 20 s) */
	snprintf(path, sizeof(path), "%s/fdrtrace.it_target.", dir);
	for (int i = 0; i < 200 && !closed; i++) {
		snprintf(cmd, sizeof(cmd), "%s info %s*.fdr 2>&1 | grep -q '^closed: *yes'",
			 FDRTRACE_TOOL, path);
		closed = system(cmd) == 0;
		if (!closed)
			usleep(100000);
	}
	cr_expect(closed, "the trace in %s was never closed", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

/*
 * A daemon's worker that chroots (rsync's with "use chroot") can no longer
 * read /proc/self/exe: the program was read as another module with no
 * path, and every function not yet named (here all of them: names are
 * looked up by the flush thread, after the chroot) lost its name.
 */
Test(children, a_process_that_chroots_keeps_its_function_names)
{
	const char *argv[] = { TARGET, "chroot", NULL };
	const char *env[] = { MODE_ON, NULL };
	char paths[1][512], cmd[700], out[8192];
	struct tc_run r;
	struct tc_trace t;

	if (geteuid() != 0)
		cr_skip_test("needs root to chroot");
	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	tc_assert_one_trace(&r, &t);
	cr_expect(t.closed);
	cr_expect_eq(tc_calls(&t, "work"), 2);
	cr_expect_eq(tc_calls(&t, "after_chroot"), 1);
	cr_expect_eq(tc_calls(&t, "main"), 1);
	tc_free(&t);
	/* one module for the program, never unmapped */
	cr_assert_eq(tc_find_traces(&r, paths, 1), 1);
	snprintf(cmd, sizeof(cmd), "%s dump '%s' 2>&1 | grep -c 'module_unmap'", FDRTRACE_TOOL,
		 paths[0]);
	tc_output(cmd, out, sizeof(out));
	cr_expect_str_eq(out, "0\n", "module_unmap records in the trace: %s", out);
	tc_done(&r);
}

/*
 * A program that execs itself (a shell running `exec bash -c ...`): both
 * images have the same program name and pid, so the second found the
 * first's trace at its path and was not recorded ("File exists"). It now
 * takes the path numbered: fdrtrace.NAME.PID.2.fdr. The first is left
 * whole.
 */
Test(children, an_image_that_execs_its_own_program_gets_a_numbered_trace)
{
	const char *argv[] = { TARGET, "exec", TARGET, NULL };
	const char *env[] = { MODE_ON, NULL };
	char paths[3][512], out[16384];
	struct tc_run r;
	struct tc_trace t;

	tc_run(&r, argv, env);
	tc_assert_exited_ok(&r);
	cr_expect_str_eq(r.out, "ok basic\n");
	cr_assert_eq(tc_find_traces(&r, paths, 3), 2, "%s", r.err);
	/* sorted: fdrtrace.it_target.PID.2.fdr, then fdrtrace.it_target.PID.fdr */
	cr_assert(strstr(paths[0], ".2.fdr") && !strstr(paths[1], ".2.fdr"), "%s %s", paths[0],
		  paths[1]);
	for (int i = 0; i < 2; i++) {
		tc_expect_whole(paths[i], &t);
		cr_expect_eq(tc_calls(&t, "work"), 1, "%s", paths[i]);
		cr_expect_eq(t.execs, i == 1 ? 1 : 0, "%s", paths[i]);
		tc_free(&t);
	}
	/* the exit line names the path the second image got */
	cr_expect(strstr(r.err, strrchr(paths[0], '/') + 1), "%s", r.err);
	run_tool("info", paths[1], out, sizeof(out));
	cr_expect(strstr(out, "replaced by:     exec of " TARGET), "%s", out);
	tc_done(&r);
}
