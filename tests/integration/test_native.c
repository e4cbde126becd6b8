// SPDX-License-Identifier: MIT
/*
 * tests/integration/test_native.c - native stacks (FDRTRACE_EXT_NATIVE_STACK)
 * on real instrumented programs (targets/native.c): the crash stack at a
 * fatal signal, named offline by `fdrtrace info`, and the stack of
 * fdrtrace_start()'s caller.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "tc_assert.h"
#include "trace_check.h"

static const char *const MODE_ON[] = { "FDRTRACE_MODE=fdr", NULL };

/* Run "fdrtrace ARGS" and return its stdout (malloc'ed, NUL-terminated). */
static char *tool(const char *args)
{
	char cmd[2048];
	size_t cap = 1 << 16, len = 0, n;
	char *out = malloc(cap);
	FILE *p;

	cr_assert(out);
	snprintf(cmd, sizeof(cmd), "%s %s", FDRTRACE_TOOL, args);
	p = popen(cmd, "r");
	cr_assert(p, "popen %s", cmd);
	while ((n = fread(out + len, 1, cap - 1 - len, p)) > 0)
		len += n;
	out[len] = '\0';
	pclose(p);
	return out;
}

/* The "crash stack:" (or "start stack:") section of info's output, or NULL. */
static const char *section(const char *info, const char *label)
{
	return strstr(info, label);
}

/* The line of frame #@n in @sec ("  #N 0x..."), NUL-terminated into @line. */
static void frame_line(const char *sec, int n, char *line, size_t cap)
{
	char want[16];
	const char *p, *end;

	snprintf(want, sizeof(want), "  #%-2d ", n);
	p = strstr(sec, want);
	cr_assert(p, "no frame #%d in:\n%s", n, sec);
	end = strchr(p, '\n');
	snprintf(line, cap, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
}

/* @names appear in @sec in this order (each on a later line than the last). */
static void in_order(const char *sec, const char *const *names)
{
	const char *p = sec;

	for (; *names; names++) {
		char pat[128];
		const char *q;

		snprintf(pat, sizeof(pat), "  %s (", *names);
		q = strstr(p, pat);
		cr_assert(q, "frame '%s' missing or out of order in:\n%s", *names, sec);
		p = q + 1;
	}
}

/* Run "native @mode [@arg]" (@arg may be NULL), which must die of SIGSEGV with its trace closed so. */
static void run_crash_env(struct tc_run *r, const char *mode, const char *arg,
			  const char *const *env, char path[512])
{
	const char *argv[] = { NATIVE_TARGET, mode, arg, NULL };
	char paths[4][512];
	struct tc_trace t;
	int n;

	tc_run(r, argv, env);
	cr_assert(WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGSEGV,
		  "status 0x%x, stderr: %s", r->status, r->err);
	/* in ring policy the target's fdrtrace_flush() wrote a snapshot: the trace sorts first */
	n = tc_find_traces(r, paths, 4);
	cr_assert(n >= 1 && !strstr(paths[0], ".snap"), "%d traces", n);
	memset(&t, 0, sizeof(t));
	tc_read(paths[0], &t);
	cr_assert(t.ok, "reader: %s", t.error);
	cr_assert(t.closed && t.close_how == FDRTRACE_CLOSE_SIGNAL);
	tc_free(&t);
	snprintf(path, 512, "%s", paths[0]);
}

static void run_crash(struct tc_run *r, const char *mode, char path[512])
{
	run_crash_env(r, mode, NULL, MODE_ON, path);
}

Test(native, crash_in_strlen_names_strlen_its_instrumented_callers_and_main)
{
	static const char *const order[] = { "measure", "outer", "main", NULL };
	struct tc_run r;
	char path[512], cmd[600], line[512];
	char *info;
	const char *sec;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_crash(&r, "strlen", path);
	snprintf(cmd, sizeof(cmd), "info %s", path);
	info = tool(cmd);
	sec = section(info, "crash stack:");
	cr_assert(sec, "no crash stack in:\n%s", info);
	cr_assert(strstr(sec, "signal 11 (SEGV), fault address 0x10"), "%s", sec);
	/* innermost first: the faulting instruction is in libc's strlen */
	frame_line(sec, 0, line, sizeof(line));
	cr_assert(strstr(line, "strlen") && strstr(line, "(libc.so.6+0x"), "frame 0: %s", line);
	in_order(sec, order);
	free(info);
	tc_done(&r);
}

Test(native, crash_in_a_thread_other_than_main_is_that_threads_stack)
{
	static const char *const order[] = { "measure", "outer", "crash_thread", NULL };
	struct tc_run r;
	char path[512], cmd[600], line[512];
	char *info;
	const char *sec, *prog;
	unsigned long tid, pid;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_crash(&r, "thread", path);
	snprintf(cmd, sizeof(cmd), "info %s", path);
	info = tool(cmd);
	sec = section(info, "crash stack:");
	prog = strstr(info, "(pid ");
	cr_assert(sec && prog, "%s", info);
	cr_assert_eq(sscanf(sec, "crash stack: thread %lu", &tid), 1, "%s", sec);
	cr_assert_eq(sscanf(prog, "(pid %lu)", &pid), 1);
	cr_assert_neq(tid, pid, "the crash was in the second thread, not main");
	frame_line(sec, 0, line, sizeof(line));
	cr_assert(strstr(line, "strlen"), "frame 0: %s", line);
	in_order(sec, order);
	cr_assert_null(strstr(sec, "  main ("), "main is not on the second thread's stack:\n%s",
		       sec);
	free(info);
	tc_done(&r);
}

/* The file the target put on libunwind's descriptors holds what it wrote, and only that. */
static void expect_user_file(const struct tc_run *r)
{
	char path[600], buf[64] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/user.txt", r->dir);
	f = fopen(path, "r");
	cr_assert(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	cr_expect_str_eq(buf, "user data\n", "the program's file was read or written by the tracer");
}

/*
 * A program put its own file where libunwind keeps its validation pipe
 * (a shell's `exec 3>F 4>F`), then crashed: the crash stack is taken,
 * and the file is untouched. libunwind used to read a byte from it and
 * write a byte of memory into it.
 */
Test(native, a_crash_never_reads_or_writes_the_programs_files_at_libunwinds_descriptors)
{
	static const char *const order[] = { "measure", "outer", "crash_thread", NULL };
	struct tc_run r;
	char path[512], cmd[600];
	char *info;
	const char *sec;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_crash_env(&r, "thread_fds", "user.txt", MODE_ON, path);
	expect_user_file(&r);
	snprintf(cmd, sizeof(cmd), "info %s", path);
	info = tool(cmd);
	sec = section(info, "crash stack:");
	cr_assert(sec, "no crash stack in:\n%s", info);
	in_order(sec, order);
	free(info);
	tc_done(&r);
}

/*
 * libunwind sets itself up at the first native stack, not at the start: a
 * traced process that takes none holds no pipe of libunwind's (its
 * descriptors are those it has untraced), and its crash still has a stack
 * (the crash tests above take their first stack in the handler).
 */
Test(native, a_process_that_takes_no_stack_holds_no_pipe_of_libunwinds)
{
	const char *argv[] = { NATIVE_TARGET, "pipes", NULL };
	static const char *const off[] = { NULL };
	struct tc_run r, plain;

	tc_run(&plain, argv, off);
	tc_assert_exited_ok(&plain);
	tc_run(&r, argv, MODE_ON);
	tc_assert_exited_ok(&r);
	cr_assert(strstr(plain.out, "pipes "), "untraced output: %s", plain.out);
	cr_expect_str_eq(r.out, plain.out, "traced, the program sees other descriptors");
	tc_done(&r);
	tc_done(&plain);
}

/*
 * The flush thread starts on its starter's CPU (runtime/flush/placement.c)
 * and takes the program's whole CPU set back when its first wait (5 ms)
 * ends: 100 ms into the run every thread may run where main may.
 */
Test(native, the_flush_thread_runs_where_the_program_may_after_its_first_wait)
{
	const char *argv[] = { NATIVE_TARGET, "masks", NULL };
	struct tc_run r;
	int threads = 0, differ = -1;

	tc_run(&r, argv, MODE_ON);
	tc_assert_exited_ok(&r);
	cr_assert_eq(sscanf(r.out, "masks %d %d", &threads, &differ), 2, "output: %s", r.out);
	cr_expect_geq(threads, 2, "no flush thread: %s", r.out);
	cr_expect_eq(differ, 0, "a thread still narrowed to one CPU: %s", r.out);
	tc_done(&r);
}

/* The same before fdrtrace_start(), in a program that goes on: no start stack, file untouched. */
Test(native, fdrtrace_start_leaves_the_programs_files_at_libunwinds_descriptors_alone)
{
	const char *argv[] = { NATIVE_TARGET, "start_fds", "user.txt", NULL };
	struct tc_run r;
	struct tc_trace t;

	tc_run(&r, argv, MODE_ON);
	tc_assert_exited_ok(&r);
	expect_user_file(&r);
	memset(&t, 0, sizeof(t));
	tc_assert_one_trace(&r, &t);
	cr_expect_gt(tc_calls(&t, "fast"), 0, "recording went on after fdrtrace_start()");
	tc_free(&t);
	tc_done(&r);
}

/*
 * dump then assemble gives the identical file; and the crash stack written
 * by hand as an "ext native_stack" line (the fields of dump's comment)
 * assembles to the same bytes as the runtime wrote.
 */
Test(native, dump_then_assemble_gives_the_identical_trace)
{
	struct tc_run r;
	char path[512], cmd[4096];
	int rc;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_crash(&r, "strlen", path);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; %s dump %s > t.txt; %s assemble t.txt -o t2.bin; cmp %s t2.bin; "
		 "grep -q ' FDRx native_stack tid=[0-9]* why=signal signal=11 fault_address=0x10 "
		 "depth=[0-9]* frames=0x[0-9a-f]*@[0-9]' t.txt; "
		 "sed -E 's/^evt cus size=[0-9]+ delta=0 data=[0-9a-f]+ # .* FDRx native_stack (.*)$/"
		 "ext native_stack delta=0 \\1/' t.txt > t3.txt; "
		 "grep -q '^ext native_stack' t3.txt; %s assemble t3.txt -o t3.bin; cmp %s t3.bin",
		 r.dir, FDRTRACE_TOOL, path, FDRTRACE_TOOL, path, FDRTRACE_TOOL, path);
	rc = system(cmd);
	cr_assert_eq(rc, 0, "dump/assemble round trip of a crash trace failed: %s", cmd);
	tc_done(&r);
}

Test(native, fdrtrace_start_records_where_recording_started)
{
	static const char *const order[] = { "main", NULL };
	const char *argv[] = { NATIVE_TARGET, "start", NULL };
	struct tc_run r;
	struct tc_trace t;
	char paths[4][512], cmd[600], line[512];
	char *info;
	const char *sec;

	tc_run(&r, argv, MODE_ON);
	tc_assert_exited_ok(&r);
	memset(&t, 0, sizeof(t));
	tc_assert_one_trace(&r, &t);
	tc_free(&t);
	cr_assert_eq(tc_find_traces(&r, paths, 4), 1);
	snprintf(cmd, sizeof(cmd), "info %s", paths[0]);
	info = tool(cmd);
	sec = section(info, "start stack:");
	cr_assert(sec, "no start stack in:\n%s", info);
	cr_assert_null(strstr(info, "crash stack:"));
	/* innermost first: fdrtrace_start()'s caller, not the runtime's frames */
	frame_line(sec, 0, line, sizeof(line));
	cr_assert(strstr(line, "  resume_here ("), "frame 0: %s", line);
	in_order(sec, order);
	free(info);
	tc_done(&r);
}

/* replay: the crash stack at the end of the crashing thread, inside its open calls. */
Test(native, replay_shows_the_crash_stack_at_the_end_of_the_crashing_thread)
{
	struct tc_run r;
	char path[512], cmd[600];
	char *out;
	const char *hdr, *f0, *f1, *open_end;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_crash(&r, "strlen", path);
	snprintf(cmd, sizeof(cmd), "replay %s 2>/dev/null", path);
	out = tool(cmd);
	hdr = strstr(out, "[crash: signal 11 (SEGV), fault address 0x10; native stack");
	cr_assert(hdr, "no crash stack in replay:\n%s", out);
	f0 = strstr(hdr, "[  #0  ");
	f1 = strstr(hdr, "[  #1  measure (native+0x");
	cr_assert(f0 && f1 && f0 < f1, "%s", hdr);
	cr_assert(strstr(f0, "strlen") < f1, "frame 0 is in strlen: %s", f0);
	/* after every call of the thread, before the calls it died in are closed */
	open_end = strstr(out, "did not return */");
	cr_assert(open_end && hdr < open_end, "%s", out);
	cr_assert_null(strstr(open_end, ";\n"), "no call completes after the crash:\n%s", open_end);
	free(out);
	tc_done(&r);
}

/* convert: an instant event "crash" with the stack in its args, valid JSON. */
Test(native, convert_puts_the_crash_on_the_timeline)
{
	struct tc_run r;
	char path[512], cmd[2048];
	int rc;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_crash(&r, "strlen", path);
	snprintf(cmd, sizeof(cmd),
		 "%s convert --format chrome %s -o %s/t.json 2>/dev/null && python3 -c '"
		 "import json, sys\n"
		 "d = json.load(open(sys.argv[1]))\n"
		 "ev = d[\"traceEvents\"] if isinstance(d, dict) else d\n"
		 "c = [e for e in ev if e.get(\"cat\") == \"native_stack\"]\n"
		 "assert len(c) == 1 and c[0][\"name\"] == \"crash\" and c[0][\"ph\"] == \"i\", c\n"
		 "a = c[0][\"args\"]\n"
		 "assert a[\"signal\"] == 11 and a[\"fault_address\"] == \"0x10\", a\n"
		 "s = a[\"stack\"]\n"
		 "assert \"strlen\" in s[0] and \"libc.so.6+0x\" in s[0], s\n"
		 "assert [f.split()[0] for f in s[1:4]] == [\"measure\", \"outer\", \"main\"], s\n"
		 "' %s/t.json", FDRTRACE_TOOL, path, r.dir, r.dir);
	rc = system(cmd);
	cr_assert_eq(rc, 0, "convert: %s", cmd);
	tc_done(&r);
}

/*
 * A trace whose module record names a FIFO (a hostile or stale trace): info
 * names the frames it can and never blocks opening the FIFO.
 */
Test(native, a_module_path_that_is_a_fifo_never_blocks_info)
{
	struct tc_run r;
	char path[512], cmd[4096];
	int rc;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_crash(&r, "strlen", path);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; mkfifo fifo; %s dump %s > t.txt; "
		 "sed -E 's|^evt cus size=[0-9]+ delta=0 data=[0-9a-f]+ # .* FDRx module_map "
		 "(module_id=0 .*) path=\"[^\"]*\"$|ext module_map delta=0 \\1 path=\"%s/fifo\"|' "
		 "t.txt | sed -E 's/^buf ext size=[0-9]+/buf ext size=auto/' > t2.txt; grep -q 'path=\"%s/fifo\"' t2.txt; %s assemble t2.txt -o t2.bin; "
		 "timeout 20 %s info t2.bin > info.txt; "
		 "grep -q '  #0  0x[0-9a-f]*  [_a-z]*strlen[_a-z0-9]* (libc.so.6+0x' info.txt; "
		 "grep -q '  #1  0x[0-9a-f]*  ?? (fifo+0x' info.txt",
		 r.dir, FDRTRACE_TOOL, path, r.dir, r.dir, FDRTRACE_TOOL, FDRTRACE_TOOL);
	rc = system(cmd);
	cr_assert_eq(rc, 0, "%s", cmd);
	tc_done(&r);
}

/* The ring policy's crash dump carries the crash stack too. */
Test(native, crash_stack_in_ring_policy)
{
	static const char *const env[] = { "FDRTRACE_MODE=fdr", "FDRTRACE_OPTIONS=policy=ring", NULL };
	static const char *const order[] = { "measure", "outer", "main", NULL };
	struct tc_run r;
	char path[512], cmd[600], line[512];
	char *info;
	const char *sec;

	if (IT_SANITIZED)
		cr_skip_test("ASan owns SIGSEGV");
	run_crash_env(&r, "strlen", NULL, env, path);
	snprintf(cmd, sizeof(cmd), "info %s", path);
	info = tool(cmd);
	sec = section(info, "crash stack:");
	cr_assert(sec, "no crash stack in:\n%s", info);
	frame_line(sec, 0, line, sizeof(line));
	cr_assert(strstr(line, "strlen") && strstr(line, "(libc.so.6+0x"), "frame 0: %s", line);
	in_order(sec, order);
	free(info);
	tc_done(&r);
}
