// SPDX-License-Identifier: MIT
/*
 * tests/integration/targets/lazy.c - where the runtime's lazy start happens.
 *
 *   lazy race N   main (not instrumented) starts N threads that wait on a
 *                 barrier, then all make their first instrumented calls at
 *                 once (work: leaf x1000): one starts the runtime, the
 *                 others wait for it; prints "ok race"
 *   lazy ctor     an instrumented constructor (early) runs before main:
 *                 the runtime starts there; main (not instrumented) then
 *                 calls work once
 *   lazy none     nothing instrumented runs at all
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;
static pthread_barrier_t go;

__attribute__((noinline)) static void leaf(int i)
{
	sink += i;
}

__attribute__((noinline)) static void work(void)
{
	for (int i = 0; i < 1000; i++)
		leaf(i);
}

__attribute__((noinline)) static void early(void)
{
	sink++;
}

__attribute__((constructor, no_instrument_function)) static void lazy_ctor(void)
{
	const char *m = getenv("LAZY_CTOR");

	if (m && *m == '1')
		early();
}

__attribute__((no_instrument_function)) static void *racer(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&go);
	work();
	return NULL;
}

__attribute__((no_instrument_function)) int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";

	if (!strcmp(mode, "race")) {
		int n = argc > 2 ? atoi(argv[2]) : 8;
		pthread_t th[64];

		if (n < 1 || n > 64)
			return 2;
		pthread_barrier_init(&go, NULL, (unsigned)n);
		for (int i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, racer, NULL))
				return 3;
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	} else if (!strcmp(mode, "ctor")) {
		work();
	}
	printf("ok %s\n", mode);
	return 0;
}
