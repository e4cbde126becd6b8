// SPDX-License-Identifier: MIT
/*
 * tests/reliability/targets/early.c - an instrumented library whose
 * constructor runs before libfdrtrace's (it is loaded after it) and whose
 * atexit handler, registered first, runs after libfdrtrace's finish.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int early_calls, late_calls;

void early_fn(void);
__attribute__((noinline)) void early_fn(void)
{
	early_calls++;
}

static void late(void)
{
	int before = early_calls;

	for (int i = 0; i < 7; i++)
		early_fn();
	late_calls = early_calls - before;
	dprintf(1, "late %d\n", late_calls);
}

__attribute__((constructor)) static void early_ctor(void)
{
	for (int i = 0; i < 5; i++)
		early_fn();
	atexit(late);
}

int early_count(void);
int early_count(void)
{
	return early_calls;
}
