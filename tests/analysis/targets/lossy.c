// SPDX-License-Identifier: MIT
/*
 * lossy.c - a deterministic workload for the loss invariant (loss.sh).
 *
 * usage: an_lossy THREADS ROUNDS [flush]
 *
 * Each thread runs the same calls: ROUNDS rounds of a small recursive tree
 * (tree() to depth 6, each node calling two leaves), so every function's
 * call count is fixed by the arguments. Leaves spin a little so that
 * durations are not all alike. Built with -finstrument-functions.
 * With "flush", main calls fdrtrace_flush() once the threads are joined
 * (a snapshot in ring policy): every record made but main's exit is
 * made before it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdrtrace/fdrtrace.h>

static __thread volatile unsigned long sink;	/* per thread: the output stays deterministic */

__attribute__((noinline)) static void leaf_a(unsigned n)
{
	for (unsigned i = 0; i < 20 + n % 7; i++)
		sink += i;
}

__attribute__((noinline)) static void leaf_b(unsigned n)
{
	for (unsigned i = 0; i < 5 + n % 3; i++)
		sink ^= i;
}

__attribute__((noinline)) static void tree(unsigned depth)
{
	leaf_a(depth);
	if (depth) {
		tree(depth - 1);
		tree(depth - 1);
	}
	leaf_b(depth);
}

__attribute__((noinline)) static void round_of(unsigned r)
{
	tree(6);
	leaf_a(r);
}

static unsigned rounds;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	for (unsigned r = 0; r < rounds; r++)
		round_of(r);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	pthread_t tid[64];

	rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 1000;
	if (threads < 1 || threads > 64)
		return 2;
	for (unsigned i = 1; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, NULL))
			return 1;
	worker(NULL);
	for (unsigned i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	if (argc > 3 && !strcmp(argv[3], "flush") && fdrtrace_flush() < 0)
		return 3;
	printf("%lu\n", sink);
	return 0;
}
