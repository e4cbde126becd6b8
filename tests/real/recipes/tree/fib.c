/* SPDX-License-Identifier: MIT */
/*
 * The demo project of docs/real-projects.md §9 (recording a whole build
 * or test suite): a recursive Fibonacci, run twice by `make check`.
 */
#include <stdio.h>
#include <stdlib.h>

static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	printf("fib(%d) = %ld\n", n, fib(n));
	return 0;
}
