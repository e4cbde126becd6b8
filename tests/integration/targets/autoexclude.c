// SPDX-License-Identifier: MIT
/*
 * tests/integration/targets/autoexclude.c - auto_exclude on a real
 * instrumented program: tiny hot functions that call functions that would
 * otherwise be recorded, threads, fork, a crash, longjmp.
 *
 *   autoexclude nest N     N calls of hot(i), each calling leaf() and, one
 *                          in 100, deep() (slow: stays timed); then main
 *                          calls deep() 10 times itself
 *   autoexclude threads T N  T threads each make N calls of hot(i); then a
 *                          fork child makes N calls of hot(i) and exits
 *   autoexclude crash N    N calls of hot(i), then a SIGSEGV in boom()
 *   autoexclude jump N     N calls of jumper(i), which calls leaf() and, one
 *                          in 10, thrower(), which longjmps back to main;
 *                          main then calls after() (N / 10 times)
 *   autoexclude grow N     N calls of grower(i): leaf() for the first 3000,
 *                          deep() after (short at first, slow later)
 *   autoexclude flush N    N calls of hot(i), fdrtrace_flush(), then SIGKILL
 *                          to itself: the trace has what the flush wrote
 *   autoexclude patched T [S]  the call sites patched (autoexclude_patch.c) under
 *                          load: T threads and main call hot(i) until the
 *                          code of hot() or leaf() changes (at most S s, 10;
 *                          "patched yes" or "patched no"), then main calls
 *                          hot() 200000 times with a 2 kHz timer whose
 *                          handler calls tick(), jumper() 100000 times
 *                          (longjmps out of counted calls), and a fork
 *                          child calls hot() 100000 times
 *   autoexclude forks N    N rounds of 5000 hot(i) calls and a fork child
 *                          that calls hot() 100 times and exits, while
 *                          the flush thread patches call sites (a child
 *                          must not inherit the loader's lock it holds)
 *   autoexclude clash N    N calls of pair(i), which calls clash_a() and
 *                          clash_b(), then N of each from main: the two
 *                          share an entry of the thread's id cache (4096
 *                          bytes apart), each call evicts the other's id
 *   autoexclude outer N    one call of dispatch(-1), open through the run:
 *                          100 calls of deep() (about 2 ms), then N short
 *                          calls of dispatch(i), each calling leaf()
 *   autoexclude yields N   N calls of catcher(i), each calling yielder(i),
 *                          which calls leaf() and longjmps back to catcher:
 *                          no call of yielder ever returns
 *
 * Each mode prints the calls it made of each function ("hot 100000").
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fdrtrace/fdrtrace.h>

static volatile long sink;
static jmp_buf jump_env;

static __attribute__((noinline)) void leaf(long i)
{
	sink += i;
}

/* about 20 us: never short enough to be counted only */
static __attribute__((noinline)) void deep(long i)
{
	for (volatile long k = 0; k < 20000; k++)
		sink += k ^ i;
}

static __attribute__((noinline)) void hot(long i)
{
	leaf(i);
	if (i % 100 == 0)
		deep(i);
}

static __attribute__((noinline)) void boom(void)
{
	*(volatile int *)(uintptr_t)sink = 1;	/* sink is 0 here: a fault */
}

static __attribute__((noinline)) void thrower(long i)
{
	longjmp(jump_env, (int)(i % 7) + 1);
}

static __attribute__((noinline)) void jumper(long i)
{
	leaf(i);
	if (i % 10 == 0)
		thrower(i);
}

static __attribute__((noinline)) void after(long i)
{
	sink -= i;
}

static __attribute__((noinline)) void grower(long i)
{
	if (i < 3000)
		leaf(i);
	else
		deep(i);
}

/* its first call runs the others: long itself, its other calls short */
static __attribute__((noinline)) void dispatch(long i)
{
	if (i >= 0) {
		leaf(i);
		return;
	}
	for (long k = 0; k < 100; k++)
		deep(k);
	for (long k = 0; k < -i - 1; k++)
		dispatch(k);
}

static jmp_buf yield_env;

static __attribute__((noinline)) void yielder(long i)
{
	leaf(i);
	longjmp(yield_env, 1);
}

static __attribute__((noinline)) void catcher(long i)
{
	if (setjmp(yield_env))
		return;
	yielder(i);
}

/* 4096-byte aligned: the same entry of the id cache ((addr >> 4) % 256) */
static __attribute__((noinline, aligned(4096))) void clash_a(long i)
{
	sink += i;
}

static __attribute__((noinline, aligned(4096))) void clash_b(long i)
{
	sink ^= i;
}

static __attribute__((noinline)) void pair(long i)
{
	clash_a(i);
	clash_b(i);
}

static volatile long ticks;
static volatile int stop_workers;

static __attribute__((noinline)) void tick(void)
{
	ticks++;
}

static void on_alarm(int sig)
{
	(void)sig;
	tick();
}

/* The first bytes of hot() and leaf() as built: a patched call site changes them. */
static unsigned char code_hot[96], code_leaf[48];

static int code_changed(void)
{
	return memcmp(code_hot, (const void *)(uintptr_t)hot, sizeof(code_hot)) ||
	       memcmp(code_leaf, (const void *)(uintptr_t)leaf, sizeof(code_leaf));
}

/* Mappings both writable and executable now (/proc/self/maps "rwx"). */
static int rwx_mappings(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%*s %7s", perms) == 1 && !strncmp(perms, "rwx", 3))
			n++;
	}
	fclose(f);
	return n;
}

/*
 * Patching makes pages writable for a round only: once the rounds stop
 * (no new sites), no mapping stays writable and executable. Looked at
 * again for up to 2 s, as a round may be under way at any one look.
 */
static int rwx_left(void)
{
	int n = rwx_mappings();

	for (int i = 0; i < 200 && n > 0; i++) {
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
		n = rwx_mappings();
	}
	return n;
}

static void *spinner(void *arg)
{
	long *calls = arg;

	while (!stop_workers)
		hot((*calls)++);
	return NULL;
}

static int patched(long nt, long secs)
{
	pthread_t th[16];
	long calls[16] = { 0 }, total = 0, mine = 0, deep_calls = 0, jumps = 0;
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	struct timespec t0, now;
	int changed = 0, status;
	pid_t pid;

	memcpy(code_hot, (const void *)(uintptr_t)hot, sizeof(code_hot));
	memcpy(code_leaf, (const void *)(uintptr_t)leaf, sizeof(code_leaf));
	if (nt > 16)
		nt = 16;
	for (long k = 0; k < nt; k++)
		pthread_create(&th[k], NULL, spinner, &calls[k]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int j = 0; j < 4096; j++)
			hot(mine++);
		changed = code_changed();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!changed && now.tv_sec - t0.tv_sec < secs);
	/* a little longer: more sites patched while the threads run */
	for (int j = 0; j < 100000; j++)
		hot(mine++);
	stop_workers = 1;
	for (long k = 0; k < nt; k++) {
		pthread_join(th[k], NULL);
		total += calls[k];
	}
	total += mine;
	for (long k = 0; k < nt; k++)
		deep_calls += (calls[k] + 99) / 100;
	deep_calls += (mine + 99) / 100;
	/* signals: the handler's calls come between any two instructions of a patched site's stub */
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (long i = 0; i < 200000; i++)
		hot(i);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	total += 200000;
	deep_calls += 2000;
	/* longjmp out of counted calls whose sites may be patched */
	for (volatile long i = 0; i < 100000; i++) {
		if (setjmp(jump_env)) {
			jumps++;
			after(i);
			continue;
		}
		jumper(i);
	}
	printf("hot %ld\nleaf %ld\ndeep %ld\ntick %ld\njumper 100000\nthrower %ld\nafter %ld\n"
	       "patched %s\nrwx %d\n", total, total + 100000, deep_calls, (long)ticks, jumps,
	       jumps, changed ? "yes" : "no", rwx_left());
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (long i = 0; i < 100000; i++)
			hot(i);
		printf("child hot 100000\n");
		fflush(stdout);
		exit(0);
	}
	waitpid(pid, &status, 0);
	return status == 0 ? 0 : 1;
}

static void *worker(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++)
		hot(i);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "nest";
	long n = argc > 2 ? atol(argv[argc - 1]) : 100000;

	if (!strcmp(mode, "nest")) {
		for (long i = 0; i < n; i++)
			hot(i);
		for (long i = 0; i < 10; i++)
			deep(i);
		printf("hot %ld\nleaf %ld\ndeep %ld\n", n, n, (n + 99) / 100 + 10);
	} else if (!strcmp(mode, "threads")) {
		long nt = argc > 3 ? atol(argv[2]) : 4;
		pthread_t th[16];
		pid_t pid;
		int status;

		if (nt > 16)
			nt = 16;
		for (long k = 0; k < nt; k++)
			pthread_create(&th[k], NULL, worker, (void *)n);
		for (long k = 0; k < nt; k++)
			pthread_join(th[k], NULL);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			worker((void *)n);
			printf("child hot %ld\n", n);
			fflush(stdout);
			exit(0);
		}
		waitpid(pid, &status, 0);
		printf("parent hot %ld\nchild %d status %d\n", nt * n, (int)pid, status);
	} else if (!strcmp(mode, "crash")) {
		for (long i = 0; i < n; i++)
			hot(i);
		printf("hot %ld\n", n);
		fflush(stdout);
		sink = 0;
		boom();
	} else if (!strcmp(mode, "jump")) {
		volatile long jumps = 0;

		for (volatile long i = 0; i < n; i++) {
			if (setjmp(jump_env)) {
				jumps++;
				after(i);
				continue;
			}
			jumper(i);
		}
		printf("jumper %ld\nleaf %ld\nthrower %ld\nafter %ld\n", n, n, jumps, jumps);
	} else if (!strcmp(mode, "flush")) {
		for (long i = 0; i < n; i++)
			hot(i);
		printf("hot %ld\nflush %d\n", n, fdrtrace_flush());
		fflush(stdout);
		raise(SIGKILL);
	} else if (!strcmp(mode, "grow")) {
		for (long i = 0; i < n; i++)
			grower(i);
		printf("grower %ld\nleaf %ld\ndeep %ld\n", n, n < 3000 ? n : 3000,
		       n > 3000 ? n - 3000 : 0);
	} else if (!strcmp(mode, "forks")) {
		long calls = 0, children = 0;

		for (long r = 0; r < n; r++) {
			pid_t pid;
			int status;

			for (int j = 0; j < 5000; j++)
				hot(calls++);
			fflush(stdout);
			pid = fork();
			if (pid == 0) {
				for (long i = 0; i < 100; i++)
					hot(i);
				exit(0);	/* (_exit() writes no names: the reader here wants them) */
			}
			if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0)
				children++;
		}
		printf("hot %ld\nchildren %ld\n", calls, children);
	} else if (!strcmp(mode, "patched")) {
		return patched(argc > 2 ? atol(argv[2]) : 1, argc > 3 ? atol(argv[3]) : 10);
	} else if (!strcmp(mode, "outer")) {
		dispatch(-n - 1);
		printf("dispatch %ld\nleaf %ld\ndeep 100\n", n + 1, n);
	} else if (!strcmp(mode, "yields")) {
		for (long i = 0; i < n; i++)
			catcher(i);
		printf("catcher %ld\nyielder %ld\nleaf %ld\n", n, n, n);
	} else if (!strcmp(mode, "clash")) {
		for (long i = 0; i < n; i++)
			pair(i);
		for (long i = 0; i < n; i++) {
			clash_a(i);
			clash_b(i);
		}
		printf("pair %ld\nclash_a %ld\nclash_b %ld\n", n, 2 * n, 2 * n);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
