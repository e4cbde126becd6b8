// SPDX-License-Identifier: MIT
/*
 * tests/reliability/targets/rel_target.c - an instrumented program that
 * provokes one fault of the reliability matrix per mode, driven by
 * tests/reliability/test_reliability.c.
 *
 * Every instrumented function counts its own call in rel_calls, so a mode
 * that ends normally prints "calls N": the trace must hold 2 N function
 * records, or fewer with the difference counted as drops.
 *
 *   basic                 work() once
 *   sig T MS              main and T threads work for MS ms, each under its
 *                         own 10 kHz timer whose SIGPROF handler calls
 *                         instrumented code
 *   churn N               N short threads, one after another
 *   forks N               2 threads record while main forks N children
 *                         (each: leaf x100, exit)
 *   spawn                 posix_spawn, vfork+exec and fork+exec of "fdcheck"
 *   fdcheck               print the number of open descriptors on *.fdr files
 *   end HOW               work, then end by return, exit, _exit, abort, segv
 *                         or spin (loop forever, for SIGKILL)
 *   deep N                rec(N) in a thread with a 1 GB stack
 *   affinity N            2 threads hop between CPUs N times each
 *   dl A B N              dlopen A, call its rel_dl_fn N times, dlclose,
 *                         dlopen B, call it 2N times; print both addresses
 *   sleep A B             leaf, sleep A ms, leaf, sleep B ms, leaf (deltas
 *                         around 2^32 TSC ticks)
 *   errno N               N calls with errno set before each: print how
 *                         many came back with errno changed
 *   tls                   thread-key destructors and pthread_exit from a
 *                         nested call, both calling instrumented code
 *   held N                main and a thread record, then block (in join and
 *                         in a condition variable) until a third thread has
 *                         made N calls and signals: with buffer_max=2, the
 *                         third thread finds every buffer held by a thread
 *                         that waits for it
 */
#include <dlfcn.h>
#include <errno.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static _Atomic long rel_calls;
static volatile long sink;
static atomic_int stop;
static const char *self;

#define COUNT() atomic_fetch_add_explicit(&rel_calls, 1, memory_order_relaxed)

__attribute__((noinline)) static void leaf(int i)
{
	COUNT();
	sink += i;
}

__attribute__((noinline)) static void mid(int i)
{
	COUNT();
	leaf(i);
	leaf(i + 1);
}

__attribute__((noinline)) static long rec(long n)
{
	COUNT();
	sink++;
	return n ? rec(n - 1) + 1 : 0;
}

__attribute__((noinline)) static void work(void)
{
	COUNT();
	for (int i = 0; i < 200; i++)
		leaf(i);
	for (int i = 0; i < 50; i++)
		mid(i);
	rec(20);
}

__attribute__((noinline)) static void sig_fn(void)
{
	COUNT();
	sink++;
}

/* Handler runs so far: "sig" runs until enough have fired (see there). */
static atomic_long prof_calls;

static void on_prof(int sig)
{
	COUNT();
	atomic_fetch_add_explicit(&prof_calls, 1, memory_order_relaxed);
	(void)sig;
	sig_fn();
}

__attribute__((no_instrument_function)) static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A 10 kHz timer that signals the calling thread itself (SIGEV_THREAD_ID). */
__attribute__((no_instrument_function)) static void arm_timer(timer_t *tm, bool on)
{
	struct sigevent sev;
	struct itimerspec its = { { 0, 100000 }, { 0, 100000 } };

	if (!on) {
		timer_delete(*tm);
		return;
	}
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, tm) == 0)
		timer_settime(*tm, 0, &its, NULL);
}

static void *sig_thread(void *arg)
{
	timer_t tm;

	COUNT();
	(void)arg;
	arm_timer(&tm, true);
	while (!atomic_load(&stop))
		work();
	arm_timer(&tm, false);
	return NULL;
}

static void *churn_thread(void *arg)
{
	COUNT();
	(void)arg;
	for (int i = 0; i < 20; i++)
		leaf(i);
	return NULL;
}

static void *spin_thread(void *arg)
{
	COUNT();
	(void)arg;
	while (!atomic_load(&stop))
		leaf(1);
	return NULL;
}

static void *deep_thread(void *arg)
{
	COUNT();
	rec((long)(intptr_t)arg);
	return NULL;
}

static void *hop_thread(void *arg)
{
	long n = (long)(intptr_t)arg;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);

	COUNT();
	for (long i = 0; i < n; i++) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)(i % (ncpu > 0 ? ncpu : 1)), &set);
		sched_setaffinity(0, sizeof(set), &set);
		mid((int)i);
	}
	return NULL;
}

static pthread_key_t key;

static void key_dtor(void *p)
{
	COUNT();
	(void)p;
	for (int i = 0; i < 10; i++)
		leaf(i);
}

/* GCC 12 calls this infinite: it does not count pthread_exit as an end. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winfinite-recursion"
__attribute__((noinline)) static void exit_from_here(int depth)
{
	COUNT();
	if (!depth)
		pthread_exit(NULL);
	exit_from_here(depth - 1);
	sink++;
}
#pragma GCC diagnostic pop

static void *tls_thread(void *arg)
{
	COUNT();
	(void)arg;
	pthread_setspecific(key, (void *)1);
	leaf(0);
	exit_from_here(3);
	return NULL;
}

static int fdcheck(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char p[300], l[600];
		ssize_t k;

		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		k = readlink(p, l, sizeof(l) - 1);
		if (k <= 0)
			continue;
		l[k] = '\0';
		if (strstr(l, ".fdr"))
			n++;
	}
	closedir(d);
	return n;
}

static int run_child(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* held: the holder records (so holds a buffer), then waits for the worker */
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv = PTHREAD_COND_INITIALIZER;
static int held_ready, held_done;
static long held_n;

static void *held_holder(void *arg)
{
	COUNT();
	mid(1);
	pthread_mutex_lock(&held_mu);
	held_ready = 1;
	pthread_cond_broadcast(&held_cv);
	while (!held_done)
		pthread_cond_wait(&held_cv, &held_mu);
	pthread_mutex_unlock(&held_mu);
	return arg;
}

static void *held_worker(void *arg)
{
	COUNT();
	for (long i = 0; i < held_n; i++)
		leaf((int)i);
	pthread_mutex_lock(&held_mu);
	held_done = 1;
	pthread_cond_broadcast(&held_cv);
	pthread_mutex_unlock(&held_mu);
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";
	long n = argc > 2 ? atol(argv[2]) : 0;

	COUNT();
	self = argv[0];
	if (!strcmp(mode, "basic")) {
		work();
	} else if (!strcmp(mode, "sig")) {
		long ms = argc > 3 ? atol(argv[3]) : 500;
		pthread_t th[16];
		double t0 = now_ms();
		timer_t tm;

		signal(SIGPROF, on_prof);
		arm_timer(&tm, true);
		for (long i = 0; i < n && i < 16; i++)
			pthread_create(&th[i], NULL, sig_thread, NULL);
		/*
		 * At least @ms, and until 2000 handler runs (the test wants
		 * the timers to have fired in traced code): on a loaded machine
		 * the threads run less and timer overruns coalesce. 30 s cap.
		 */
		while (now_ms() - t0 < (double)ms ||
		       (atomic_load(&prof_calls) < 2000 && now_ms() - t0 < 30000.0))
			work();
		atomic_store(&stop, 1);
		for (long i = 0; i < n && i < 16; i++)
			pthread_join(th[i], NULL);
		arm_timer(&tm, false);
		signal(SIGPROF, SIG_IGN);
	} else if (!strcmp(mode, "churn")) {
		for (long i = 0; i < n; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, churn_thread, NULL))
				return 2;
			pthread_join(t, NULL);
		}
	} else if (!strcmp(mode, "forks")) {
		pthread_t th[2];
		int bad = 0;

		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, spin_thread, NULL);
		for (long i = 0; i < n; i++) {
			pid_t pid;

			work();
			fflush(stdout);
			pid = fork();
			if (pid == 0) {
				for (int k = 0; k < 100; k++)
					leaf(k);
				exit(0);
			}
			bad += run_child(pid) != 0;
		}
		atomic_store(&stop, 1);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		printf("bad children %d\n", bad);
	} else if (!strcmp(mode, "spawn")) {
		char *cargv[] = { (char *)self, "fdcheck", NULL };
		char *cenv[] = { NULL };
		pid_t pid;
		volatile int leaked = 0;
		int r;

		work();
		r = posix_spawn(&pid, self, NULL, NULL, cargv, cenv);
		leaked += r ? 1000 : run_child(pid);
		pid = vfork();
		if (pid == 0) {
			execve(self, cargv, cenv);
			_exit(127);
		}
		leaked += run_child(pid);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execve(self, cargv, cenv);
			_exit(127);
		}
		leaked += run_child(pid);
		work();
		printf("leaked %d\n", (int)leaked);
	} else if (!strcmp(mode, "fdcheck")) {
		return fdcheck();
	} else if (!strcmp(mode, "end")) {
		const char *how = argc > 2 ? argv[2] : "return";

		work();
		if (!strcmp(how, "spin")) {
			pthread_t th[2];

			for (int i = 0; i < 2; i++)
				pthread_create(&th[i], NULL, spin_thread, NULL);
			for (;;)
				work();
		}
		printf("calls %ld\n", (long)atomic_load(&rel_calls));
		fflush(stdout);
		if (!strcmp(how, "exit"))
			exit(0);
		if (!strcmp(how, "_exit"))
			_exit(0);
		if (!strcmp(how, "abort"))
			abort();
		if (!strcmp(how, "segv"))
			*(volatile int *)(uintptr_t)(sink & 0) = 1;
		return 0;
	} else if (!strcmp(mode, "deep")) {
		pthread_attr_t a;
		pthread_t t;

		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 1ul << 30);
		if (pthread_create(&t, &a, deep_thread, (void *)(intptr_t)n))
			return 2;
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "affinity")) {
		pthread_t th[2];

		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, hop_thread, (void *)(intptr_t)n);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
	} else if (!strcmp(mode, "dl")) {
		long k = argc > 4 ? atol(argv[4]) : 10;
		void *h = dlopen(argv[2], RTLD_NOW);
		void (*fn)(void);
		void *a1, *a2;

		if (!h)
			return 3;
		a1 = dlsym(h, "rel_dl_fn");
		if (!a1)
			return 5;
		memcpy(&fn, &a1, sizeof(fn));
		for (long i = 0; i < k; i++)
			fn();
		dlclose(h);
		h = dlopen(argv[3], RTLD_NOW);
		if (!h)
			return 4;
		a2 = dlsym(h, "rel_dl_fn");
		if (!a2)
			return 5;
		memcpy(&fn, &a2, sizeof(fn));
		for (long i = 0; i < 2 * k; i++)
			fn();
		dlclose(h);
		printf("same %d\n", a1 == a2);
	} else if (!strcmp(mode, "sleep")) {
		long b = argc > 3 ? atol(argv[3]) : 0;
		struct timespec ts = { n / 1000, (n % 1000) * 1000000 };

		leaf(1);
		nanosleep(&ts, NULL);
		leaf(2);
		ts = (struct timespec){ b / 1000, (b % 1000) * 1000000 };
		nanosleep(&ts, NULL);
		leaf(3);
	} else if (!strcmp(mode, "errno")) {
		long changed = 0;

		for (long i = 0; i < n; i++) {
			errno = 4242;
			leaf((int)i);
			changed += errno != 4242;
		}
		printf("errno changed %ld\n", changed);
	} else if (!strcmp(mode, "tls")) {
		pthread_t t;

		pthread_key_create(&key, key_dtor);
		for (int i = 0; i < 4; i++) {
			pthread_create(&t, NULL, tls_thread, NULL);
			pthread_join(t, NULL);
		}
	} else if (!strcmp(mode, "held")) {
		pthread_t h, w;

		mid(0);	/* main holds a buffer from here on */
		held_n = n;
		pthread_create(&h, NULL, held_holder, NULL);
		pthread_mutex_lock(&held_mu);
		while (!held_ready)
			pthread_cond_wait(&held_cv, &held_mu);
		pthread_mutex_unlock(&held_mu);
		/* both buffers held, by threads that wait for the worker */
		pthread_create(&w, NULL, held_worker, NULL);
		pthread_join(w, NULL);
		pthread_join(h, NULL);
	} else {
		fprintf(stderr, "rel_target: unknown mode %s\n", mode);
		return 2;
	}
	printf("calls %ld\n", (long)atomic_load(&rel_calls));
	return 0;
}
