// SPDX-License-Identifier: MIT
/*
 * xray_target.c - the program test_xray.c builds with clang's XRay
 * instrumentation to get a real FDR trace: two threads, three levels of
 * calls, a tail call, small buffers so that the trace has many of them.
 * The XRay control API is C++; its functions are declared here by hand.
 */
#include <pthread.h>
#include <stdio.h>

int __xray_log_init_mode(const char *mode, const char *cfg);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);
int __xray_patch(void);

int leaf(int x);
int mid(int x);
int top(int n);
int tail(int x);

__attribute__((noinline)) int leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int mid(int x)
{
	int s = 0;

	for (int i = 0; i < 3; i++)
		s += leaf(x + i);
	return s;
}

/* At -O2 this is a sibling call: XRay records a tail exit. */
__attribute__((noinline)) int tail(int x)
{
	return leaf(x + 1);
}

__attribute__((noinline)) int top(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += mid(i) + tail(i);
	return s;
}

static void *worker(void *arg)
{
	long n = (long)arg;

	return (void *)(long)top((int)n);
}

int main(void)
{
	pthread_t t;
	int s;

	__xray_log_init_mode("xray-fdr", "buffer_size=512:buffer_max=256:func_duration_threshold_us=0");
	__xray_patch();
	pthread_create(&t, NULL, worker, (void *)200L);
	s = top(300);
	pthread_join(t, NULL);
	__xray_log_finalize();
	__xray_log_flushLog();
	printf("%d\n", s);
	return 0;
}
