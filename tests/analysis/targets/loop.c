// SPDX-License-Identifier: MIT
/*
 * loop.c - N iterations of outer() -> inner() twice, traced through
 * libfdrtrace: with small buffers, one thread fills hundreds of them.
 * Counts: main 1, outer N, inner 2N.
 */
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) static void inner(long i)
{
	sink += i;
}

__attribute__((noinline)) static void outer(long i)
{
	inner(i);
	inner(i + 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i;

	for (i = 0; i < n; i++)
		outer(i);
	return 0;
}
