// SPDX-License-Identifier: MIT
/*
 * The system's unwinder (runtime/unwind/sysunwind.c): a signal handler is told
 * from the rest at any depth, on an alternate stack, and no longer once
 * left by siglongjmp; a thread or a program whose signal mask blocks a
 * signal for good is not taken for a handler (GNU make blocks SIGCHLD:
 * on_full=wait dropped there); frames' function starts are the
 * functions' addresses.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

#include "sysunwind.h"

static volatile int seen[4];
static sigjmp_buf jump;

static void init(void)
{
	fdr_sysunwind_init();
	cr_assert_neq(fdr_sysunwind_in_handler(), -1, "no unwinder: libgcc_s not loaded?");
}

__attribute__((noinline)) static int nested(int depth)
{
	int r = depth ? nested(depth - 1) : fdr_sysunwind_in_handler();

	__asm__ volatile("" : "+r"(r));	/* a frame each: no tail call */
	return r;
}

static void on_usr1(int sig)
{
	(void)sig;
	seen[0] = fdr_sysunwind_in_handler();
	seen[1] = nested(20);
}

static void on_usr2_jump(int sig)
{
	(void)sig;
	siglongjmp(jump, 1);
}

static void handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa = { .sa_handler = fn, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(sig, &sa, NULL), 0);
}

Test(sysunwind, a_handler_is_told_from_the_code_it_interrupted)
{
	init();
	cr_expect_eq(fdr_sysunwind_in_handler(), 0, "main: not a handler");
	cr_expect_eq(nested(50), 0);
	handle(SIGUSR1, on_usr1, 0);
	raise(SIGUSR1);
	cr_expect_eq(seen[0], 1, "in the handler");
	cr_expect_eq(seen[1], 1, "20 calls deeper in the handler");
	cr_expect_eq(fdr_sysunwind_in_handler(), 0, "after it returned");
}

Test(sysunwind, a_handler_on_an_alternate_stack_is_a_handler)
{
	static char alt[1 << 16];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };

	init();
	cr_assert_eq(sigaltstack(&ss, NULL), 0);
	handle(SIGUSR1, on_usr1, SA_ONSTACK);
	raise(SIGUSR1);
	cr_expect_eq(seen[0], 1);
	cr_expect_eq(seen[1], 1);
}

Test(sysunwind, a_handler_left_by_siglongjmp_is_over)
{
	init();
	handle(SIGUSR2, on_usr2_jump, 0);
	if (!sigsetjmp(jump, 1))
		raise(SIGUSR2);
	cr_expect_eq(fdr_sysunwind_in_handler(), 0, "after siglongjmp out of the handler");
	cr_expect_eq(nested(5), 0);
}

Test(sysunwind, a_blocked_signal_is_no_handler)
{
	sigset_t s;

	init();
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigaddset(&s, SIGTERM);
	cr_assert_eq(sigprocmask(SIG_BLOCK, &s, NULL), 0);
	cr_expect_eq(fdr_sysunwind_in_handler(), 0, "signals blocked for good, as GNU make does");
}

static void *in_thread(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)(fdr_sysunwind_in_handler() + 10 * nested(3));
}

Test(sysunwind, a_thread_is_walked_to_its_start)
{
	pthread_t th;
	void *ret;

	init();
	cr_assert_eq(pthread_create(&th, NULL, in_thread, NULL), 0);
	cr_assert_eq(pthread_join(th, &ret), 0);
	cr_expect_eq((intptr_t)ret, 0, "not a handler (0), nor 20 calls deeper (0): %ld",
		     (long)(intptr_t)ret);
}

__attribute__((noinline)) static uint32_t starts_here(uintptr_t *starts, uint32_t max)
{
	uint32_t n = fdr_sysunwind_starts(starts, max);

	__asm__ volatile("" : "+r"(n));	/* a frame of its own: no tail call */
	return n;
}

Test(sysunwind, each_frame_gives_its_functions_start)
{
	uintptr_t starts[64];
	uint32_t n;

	init();
	n = starts_here(starts, 64);
	cr_assert_geq(n, 3);
	/* frame 0 is fdr_sysunwind_starts() itself */
	cr_expect_eq(starts[1], (uintptr_t)starts_here, "frame 1: %#lx, starts_here at %#lx",
		     (unsigned long)starts[1], (unsigned long)(uintptr_t)starts_here);
	cr_expect_eq(fdr_sysunwind_starts(starts, 0), 0);
}
