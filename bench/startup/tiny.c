// SPDX-License-Identifier: MIT
/*
 * bench/startup/tiny.c - a short instrumented program for bench/start_cost.py:
 * main calls one function 100 times and returns. Its run is almost all
 * start-up and exit, so traced against untraced it measures what the
 * tracer adds to every process a traced script or build runs.
 */
volatile int tiny_sink;

__attribute__((noinline)) static void tiny_leaf(int i)
{
	tiny_sink += i;
}

int main(void)
{
	for (int i = 0; i < 100; i++)
		tiny_leaf(i);
	return 0;
}
