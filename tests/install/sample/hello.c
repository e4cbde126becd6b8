/* SPDX-License-Identifier: MIT */
/* The sample project the recipes of docs/real-projects.md §1 build. */
#include <stdio.h>

static int square(int x)
{
	return x * x;
}

__attribute__((noinline)) int sum_squares(int n);

int sum_squares(int n)
{
	int s = 0;

	for (int i = 1; i <= n; i++)
		s += square(i);
	return s;
}

int main(void)
{
	printf("%d\n", sum_squares(10));
	return 0;
}
