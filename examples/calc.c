// SPDX-License-Identifier: MIT
/*
 * examples/calc.c - a small recursive-descent calculator, traced.
 *
 * Two threads each evaluate the same expressions (recursion through
 * expr -> term -> factor -> expr, and a recursive fib()), so every
 * function's call count is fixed: run it twice and the traces agree.
 *
 *   FDRTRACE_MODE=fdr ./calc
 *   fdrtrace info fdrtrace.calc.<pid>.fdr
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <fdrtrace/fdrtrace.h>

struct parser {
	const char *p;
};

static long expr(struct parser *ps);

static void skip_space(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static long fib(long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static long number(struct parser *ps)
{
	long v = 0;

	while (isdigit((unsigned char)*ps->p))
		v = v * 10 + (*ps->p++ - '0');
	return v;
}

static long factor(struct parser *ps)
{
	long v;

	skip_space(ps);
	if (*ps->p == '(') {
		ps->p++;
		v = expr(ps);
		skip_space(ps);
		if (*ps->p == ')')
			ps->p++;
		return v;
	}
	if (*ps->p == 'f') {	/* f<n>: fib(n) */
		ps->p++;
		return fib(number(ps));
	}
	return number(ps);
}

static long term(struct parser *ps)
{
	long v = factor(ps);

	for (;;) {
		skip_space(ps);
		if (*ps->p == '*') {
			ps->p++;
			v *= factor(ps);
		} else if (*ps->p == '/') {
			long d;

			ps->p++;
			d = factor(ps);
			v = d ? v / d : 0;
		} else {
			return v;
		}
	}
}

static long expr(struct parser *ps)
{
	long v = term(ps);

	for (;;) {
		skip_space(ps);
		if (*ps->p == '+') {
			ps->p++;
			v += term(ps);
		} else if (*ps->p == '-') {
			ps->p++;
			v -= term(ps);
		} else {
			return v;
		}
	}
}

static long evaluate(const char *text)
{
	struct parser ps = { text };

	return expr(&ps);
}

static const char *const exprs[] = {
	"1 + 2 * 3",
	"(4 + 5) * (6 - 1) / 3",
	"f10 + f12",
	"((((7))))*((2+3)*(4-1))",
	"f15 - 100 * (3 + 4)",
};

static void *worker(void *arg)
{
	long *sum = arg;

	fdrtrace_thread_name("calc-worker");
	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++)
		*sum += evaluate(exprs[i]);
	return NULL;
}

int main(void)
{
	pthread_t th;
	long a = 0, b = 0;

	if (pthread_create(&th, NULL, worker, &a) != 0)
		return 1;
	worker(&b);
	pthread_join(th, NULL);
	printf("sum per thread: %ld %ld\n", a, b);
	return a == b ? 0 : 1;
}
