// SPDX-License-Identifier: MIT
/*
 * tests/tsan/stress.c - the runtime's threads under ThreadSanitizer.
 *
 * Built with -finstrument-functions against a -Db_sanitize=thread
 * libfdrtrace. Worker threads record calls into a small pool (so buffers
 * are handed to the flush thread, written and returned all the time, and
 * the pool runs dry), short-lived threads come and go (buffers handed over
 * from thread-exit destructors), and one thread calls fdrtrace_flush() and
 * fdrtrace_thread_name() while the others record. Every exchange between a
 * hook, the flush thread and the exit path is exercised; TSan reports any
 * access it cannot order.
 *
 * Usage: tsan-stress WORKERS ROUNDS
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <fdrtrace/fdrtrace.h>

static _Atomic unsigned long sink;	/* keeps the calls from being optimized away */
static unsigned long rounds;

__attribute__((noinline)) static unsigned long leaf(unsigned long x)
{
	return x * 2654435761u;
}

__attribute__((noinline)) static unsigned long rec(unsigned n)
{
	return n ? rec(n - 1) + leaf(n) : leaf(0);
}

static void *worker(void *arg)
{
	unsigned long sum = 0;

	(void)arg;
	for (unsigned long i = 0; i < rounds; i++)
		sum += rec(8);
	atomic_fetch_add_explicit(&sink, sum, memory_order_relaxed);
	return NULL;
}

static void *short_lived(void *arg)
{
	(void)arg;
	atomic_fetch_add_explicit(&sink, rec(4), memory_order_relaxed);
	return NULL;
}

static void *controller(void *arg)
{
	(void)arg;
	fdrtrace_thread_name("controller");
	for (int i = 0; i < 20; i++) {
		pthread_t t;

		fdrtrace_flush();
		if (pthread_create(&t, NULL, short_lived, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned workers = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 4;
	pthread_t t[16], c;

	rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000;
	if (workers > 16)
		workers = 16;
	for (unsigned i = 0; i < workers; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pthread_create(&c, NULL, controller, NULL);
	for (unsigned i = 0; i < workers; i++)
		pthread_join(t[i], NULL);
	pthread_join(c, NULL);
	printf("done %d\n", atomic_load(&sink) != 0);
	return 0;
}
