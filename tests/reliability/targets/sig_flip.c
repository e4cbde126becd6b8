// SPDX-License-Identifier: MIT
/*
 * tests/reliability/targets/sig_flip.c - an instrumented program that
 * changes one signal's disposition over and over, for sig_stress.c, which
 * sends it that signal at random moments: every delivery while the
 * program's disposition is the default must end it, by that signal.
 *
 *   sig_flip SIG SEED [FAULT_AT]
 *
 * Writes one byte to stdout once it runs, then loops for ever, each turn
 * one of: the default by sigaction() or signal(), a handler that counts
 * (sigaction(), signal()), a one-shot handler (SA_RESETHAND, sysv_signal()),
 * a handler that resets the default and raises the signal again (GNU
 * make's), a look at the disposition; then a few instrumented calls.
 * FAULT_AT >= 0 (SIGSEGV): at that turn, with the disposition the default
 * or a one-shot handler that returns, a real fault (a write through NULL).
 * Built twice: linked with libfdrtrace, and instrumented only (preloaded).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t caught;
static volatile unsigned sink;

static void on_sig(int sig)
{
	(void)sig;
	caught++;
}

/* GNU make's: clean up, reset the default, raise the signal again */
static void on_sig_reraise(int sig)
{
	signal(sig, SIG_DFL);
	raise(sig);
}

static void set(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static unsigned leaf(unsigned i)
{
	return i * 2654435761u;
}

static void work(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += leaf(i);
}

static void fault(int sig, unsigned how)
{
	if (how & 1)
		set(sig, on_sig, SA_RESETHAND);	/* Redis's: log, return, fault again */
	else
		set(sig, SIG_DFL, 0);
	*(volatile int *)(uintptr_t)sink = 0;	/* sink is small: never a mapped page */
}

int main(int argc, char **argv)
{
	int sig;
	unsigned seed;
	long fault_at = -1;

	if (argc < 3)
		return 2;
	sig = atoi(argv[1]);
	seed = (unsigned)strtoul(argv[2], NULL, 10);
	if (argc > 3)
		fault_at = atol(argv[3]);
	work(4);
	if (write(1, "r", 1) != 1)
		return 3;
	for (long i = 0;; i++) {
		struct sigaction old;

		sink &= 0xfff;
		if (i == fault_at)
			fault(sig, seed);
		switch (rand_r(&seed) % 8) {
		case 0:
			set(sig, SIG_DFL, 0);
			break;
		case 1:
			signal(sig, SIG_DFL);
			break;
		case 2:
			set(sig, on_sig, 0);
			break;
		case 3:
			signal(sig, on_sig);
			break;
		case 4:
			set(sig, on_sig, SA_RESETHAND);
			break;
		case 5:
			sysv_signal(sig, on_sig);
			break;
		case 6:
			set(sig, on_sig_reraise, 0);
			break;
		default:
			sigaction(sig, NULL, &old);
			break;
		}
		work(2);
	}
}
