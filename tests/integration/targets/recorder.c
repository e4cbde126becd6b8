// SPDX-License-Identifier: MIT
/*
 * tests/integration/targets/recorder.c - the control API, ring policy,
 * short-call elision and filters, on a real instrumented program.
 *
 *   recorder api     custom, typed, log_arg, stop/start, thread_ignore;
 *                    prints every return value
 *   recorder ring    300000 calls of f0,f1,f2 in turn, then newest() 100
 *                    times inside deep(5): a ring keeps only the end
 *   recorder crash   work, then a SIGSEGV inside last_moment()
 *   recorder snap    work; raise(SIGUSR2); wait for the snapshot file;
 *                    more work; exit
 *   recorder flush   work; fdrtrace_flush() (a snapshot in ring policy);
 *                    more work
 *   recorder snaprun work; raise(SIGUSR2); 4000 times as much work (the
 *                    snapshot is written meanwhile: this thread records
 *                    and hands buffers over); wait for the snapshot file
 *   recorder snapcrash  work; raise(SIGUSR2); a SIGSEGV in last_moment()
 *                    at once (while the snapshot is written)
 *   recorder elide   short and long calls; long ones log the TSC read before them
 *   recorder filter  calls keep_me, skip_me, deep(8)
 *   recorder newfuncs  200 distinct functions, each first called 1 ms
 *                    after the previous one; prints how many times the
 *                    runtime's flush thread was woken meanwhile
 *                    ("flush_wakes N": its voluntary context switches)
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/fdrtrace.h>

static volatile long sink;

__attribute__((noinline)) static void leaf(int i)
{
	sink += i;
}

__attribute__((noinline)) static void work(void)
{
	for (int i = 0; i < 1000; i++)
		leaf(i);
}

__attribute__((noinline)) static void f0(void) { sink++; }
__attribute__((noinline)) static void f1(void) { sink++; }
__attribute__((noinline)) static void f2(void) { sink++; }
__attribute__((noinline)) static void newest(void) { sink++; }
__attribute__((noinline)) static void keep_me(void) { sink++; }
__attribute__((noinline)) static void skip_me(void) { sink++; }

__attribute__((noinline)) static void deep(int n)
{
	if (n > 0)
		deep(n - 1);
	else
		for (int i = 0; i < 100; i++)
			newest();
}

__attribute__((noinline)) static long with_args(long a, long b)
{
	int ra = fdrtrace_log_arg((uint64_t)a);
	int rb = fdrtrace_log_arg((uint64_t)b);

	printf("log_arg %d %d\n", ra, rb);
	leaf(1);
	return a + b;
}

__attribute__((noinline)) static void last_moment(int *p)
{
	leaf(7);
	*p = 1;		/* p is NULL */
}

__attribute__((no_instrument_function)) static void spin_ns(long ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

/*
 * elide: with func_duration_threshold_us=50000, short_call() (5 ms) and the
 * nested nest_outer()/nest_inner() vanish; long_call() (80 ms) stays, and
 * its entry carries the TSC the program read just before the call.
 */
__attribute__((no_instrument_function)) static uint64_t rd(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

__attribute__((noinline)) static void short_call(void) { spin_ns(5000000); }
__attribute__((noinline)) static void nest_inner(void) { sink++; }
__attribute__((noinline)) static void nest_outer(void) { nest_inner(); }
__attribute__((noinline)) static void long_call(uint64_t t)
{
	fdrtrace_log_arg(t);
	spin_ns(80000000);
}
__attribute__((noinline)) static void quick_with_arg(uint64_t t)
{
	fdrtrace_log_arg(t);
}
__attribute__((noinline)) static void outer(uint64_t t)
{
	fdrtrace_log_arg(t);
	short_call();
	spin_ns(80000000);
}

__attribute__((noinline)) static void evented(void)
{
	fdrtrace_custom_event("in-evented", 10);
}

static void *ignored_thread(void *arg)
{
	(void)arg;
	printf("ignore %d\n", fdrtrace_thread_ignore());
	work();
	printf("ignored custom %d\n", fdrtrace_custom_event("x", 1));
	return NULL;
}

__attribute__((no_instrument_function)) static int snapshot_files(void)
{
	DIR *d = opendir(".");
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += strstr(de->d_name, ".snap") != NULL;
	closedir(d);
	return n;
}

#define NF(n) __attribute__((noinline)) static void nf##n(void) { sink += n##u; }
#define NF10(p) NF(p##0) NF(p##1) NF(p##2) NF(p##3) NF(p##4) NF(p##5) NF(p##6) NF(p##7) \
	NF(p##8) NF(p##9)
#define NF100(p) NF10(p##0) NF10(p##1) NF10(p##2) NF10(p##3) NF10(p##4) NF10(p##5) \
	NF10(p##6) NF10(p##7) NF10(p##8) NF10(p##9)
NF100(1) NF100(2)
#undef NF
#define NF(n) nf##n,
static void (*const new_fns[])(void) = { NF100(1) NF100(2) };

/* The voluntary context switches of the thread named fdrtrace-flush, or -1. */
__attribute__((no_instrument_function)) static long flush_switches(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	long n = -1;

	while (d && n < 0 && (de = readdir(d))) {
		char path[300], line[256];
		FILE *f;
		bool flush = false;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		flush = fgets(line, sizeof(line), f) && !strcmp(line, "fdrtrace-flush\n");
		fclose(f);
		if (!flush)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", de->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "voluntary_ctxt_switches:", 24))
				n = atol(line + 24);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "api";

	if (!strcmp(mode, "api")) {
		static char big[1 << 20];
		pthread_t th;

		printf("custom %d\n", fdrtrace_custom_event("hello event", 11));
		printf("typed %d\n", fdrtrace_typed_event(7, "typed!", 6));
		printf("too big %d\n", fdrtrace_custom_event(big, sizeof(big)));
		printf("magic %d\n", fdrtrace_custom_event("FDRx....", 8));
		printf("null %d\n", fdrtrace_custom_event(NULL, 3));
		printf("with_args %ld\n", with_args(42, -1));
		printf("late arg %d\n", fdrtrace_log_arg(5));
		printf("stop %d\n", fdrtrace_stop());
		work();		/* not recorded */
		printf("start %d\n", fdrtrace_start());
		for (int i = 0; i < 10; i++)
			leaf(i);
		evented();
		if (pthread_create(&th, NULL, ignored_thread, NULL))
			return 2;
		pthread_join(th, NULL);
	} else if (!strcmp(mode, "ring")) {
		for (int i = 0; i < 300000; i++) {
			switch (i % 3) {
			case 0: f0(); break;
			case 1: f1(); break;
			default: f2(); break;
			}
		}
		deep(5);
	} else if (!strcmp(mode, "crash")) {
		for (int i = 0; i < 50; i++)
			work();
		last_moment(argc > 2 ? &argc : NULL);
	} else if (!strcmp(mode, "snap") || !strcmp(mode, "flush")) {
		for (int i = 0; i < 20; i++)
			work();
		if (!strcmp(mode, "snap")) {
			raise(SIGUSR2);
			for (int i = 0; i < 2000 && !snapshot_files(); i++)
				spin_ns(1000000);
		} else {
			printf("flush %d\n", fdrtrace_flush());
		}
		printf("snapshots %d\n", snapshot_files());
		for (int i = 0; i < 20; i++)
			work();
	} else if (!strcmp(mode, "snaprun")) {
		for (int i = 0; i < 20; i++)
			work();
		raise(SIGUSR2);
		for (int i = 0; i < 4000; i++)
			work();
		for (int i = 0; i < 2000 && !snapshot_files(); i++)
			spin_ns(1000000);
		printf("snapshots %d\n", snapshot_files());
	} else if (!strcmp(mode, "snapcrash")) {
		for (int i = 0; i < 20; i++)
			work();
		raise(SIGUSR2);
		last_moment(NULL);
	} else if (!strcmp(mode, "elide")) {
		cpu_set_t one;

		/* a call that moved to another CPU is never erased: stay on one */
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		sched_setaffinity(0, sizeof(one), &one);
		long_call(rd());
		short_call();
		nest_outer();
		outer(rd());
		short_call();
		quick_with_arg(rd());
		evented();
		long_call(rd());
		short_call();
	} else if (!strcmp(mode, "filter")) {
		for (int i = 0; i < 10; i++) {
			keep_me();
			skip_me();
		}
		deep(8);
	} else if (!strcmp(mode, "newfuncs")) {
		struct timespec ms = { 0, 1000000 };
		long before;

		leaf(0);
		/* the start does not wait for the flush thread: wait here until it has its name */
		before = -1;
		for (int i = 0; i < 2000 && before < 0; i++) {
			nanosleep(&ms, NULL);
			before = flush_switches();
		}
		for (size_t i = 0; i < sizeof(new_fns) / sizeof(new_fns[0]); i++) {
			nanosleep(&ms, NULL);
			new_fns[i]();
		}
		printf("flush_wakes %ld\n", before < 0 ? -1 : flush_switches() - before);
	}
	printf("ok %s\n", mode);
	return 0;
}
