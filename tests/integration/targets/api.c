// SPDX-License-Identifier: MIT
/*
 * tests/integration/targets/api.c - the control API and the finish under load.
 *
 *   api api        fdrtrace_thread_name + fdrtrace_flush mid-run; prints the
 *                  return values and the trace file's size after the flush
 *   api running    4 threads call functions non-stop while main returns
 *   api forks      2 threads work while main forks 5 children (each: work,
 *                  exit); prints the children's pids
 *   api interval   work, sleep, one call, sleep: with flush_interval_ms the
 *                  partial buffer is in the file before exit; prints its size
 *   api for MS     work and 1 ms naps for MS milliseconds
 *   api stop_deep  fdrtrace_stop() three calls deep (outer, mid, inner),
 *                  return to main, fdrtrace_start(), leaf x10
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* "stop_deep": recording stops inside three nested calls, whose exits it never sees */
__attribute__((noinline)) static void inner(void)
{
	fdrtrace_stop();
}

__attribute__((noinline)) static void mid(void)
{
	inner();
	sink++;
}

__attribute__((noinline)) static void outer(void)
{
	mid();
	sink++;
}

__attribute__((no_instrument_function)) static long trace_size(void)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "fdrtrace.api.%d.fdr", (int)getpid());
	return stat(path, &st) ? -1 : (long)st.st_size;
}

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		leaf(1);
	return NULL;
}

static void *work20(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++)
		work();
	return NULL;
}

__attribute__((no_instrument_function)) static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "api";

	if (!strcmp(mode, "api")) {
		int n = fdrtrace_thread_name("main-thread");
		int f;

		work();
		f = fdrtrace_flush();
		printf("name %d flush %d size %ld\n", n, f, trace_size());
		work();
	} else if (!strcmp(mode, "stop_deep")) {
		outer();
		printf("start %d\n", fdrtrace_start());
		for (int i = 0; i < 10; i++)
			leaf(i);
	} else if (!strcmp(mode, "running")) {
		pthread_t th;

		for (int i = 0; i < 4; i++) {
			if (pthread_create(&th, NULL, spin, NULL))
				return 2;
			pthread_detach(th);
		}
		nap(50);
		work();
	} else if (!strcmp(mode, "forks")) {
		pthread_t th[2];

		for (int i = 0; i < 2; i++)
			if (pthread_create(&th[i], NULL, work20, NULL))
				return 2;
		for (int i = 0; i < 5; i++) {
			pid_t pid;
			int st;

			fflush(stdout);
			pid = fork();
			if (pid < 0)
				return 2;
			if (pid == 0) {
				work();
				exit(0);
			}
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
				return 3;
			printf("child %d\n", (int)pid);
		}
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
	} else if (!strcmp(mode, "interval")) {
		long before;

		work();
		nap(150);
		before = trace_size();
		leaf(0);	/* the next call hands the partial buffer over */
		nap(150);
		printf("before %ld after %ld\n", before, trace_size());
	} else if (!strcmp(mode, "for") && argc > 2) {
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		do {
			work();
			nap(1);
			clock_gettime(CLOCK_MONOTONIC, &b);
		} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 <
			 atol(argv[2]));
	}
	printf("ok %s\n", mode);
	return 0;
}
