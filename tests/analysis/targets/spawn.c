// SPDX-License-Identifier: MIT
/*
 * spawn.c - a run of several processes, traced through libfdrtrace:
 *   spawn N        main -> work(N) on a second thread too, then forks
 *                  a child that calls work(N) and execs "spawn leaf N",
 *                  and a second child that calls work(N) and exits.
 *   spawn leaf N   main -> leaf(N) -> work(N).
 * work(n) calls step() n times. Four traces (the parent, the first child
 * before and after its exec, the second child): work 5 times, step 5N.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) static void step(long i)
{
	sink += i;
}

__attribute__((noinline)) static void work(long n)
{
	for (long i = 0; i < n; i++)
		step(i);
}

__attribute__((noinline)) static void leaf(long n)
{
	work(n);
}

static long spawn_n;

static void *thread_main(void *arg)
{
	(void)arg;
	work(spawn_n);
	return NULL;
}

__attribute__((noinline)) static pid_t spawn_child(const char *self, bool exec)
{
	pid_t pid = fork();
	char num[32];

	if (pid)
		return pid;
	work(spawn_n);
	if (exec) {
		snprintf(num, sizeof(num), "%ld", spawn_n);
		execl(self, self, "leaf", num, (char *)NULL);
		_exit(127);
	}
	exit(0);
}

int main(int argc, char **argv)
{
	pthread_t th;
	pid_t a, b;

	if (argc > 2 && strcmp(argv[1], "leaf") == 0) {
		leaf(atol(argv[2]));
		return 0;
	}
	spawn_n = argc > 1 ? atol(argv[1]) : 100;
	work(spawn_n);
	if (pthread_create(&th, NULL, thread_main, NULL))
		return 1;
	pthread_join(th, NULL);
	a = spawn_child("/proc/self/exe", true);
	waitpid(a, NULL, 0);
	b = spawn_child("/proc/self/exe", false);
	waitpid(b, NULL, 0);
	return 0;
}
