/* SPDX-License-Identifier: MIT */
/*
 * run_tree.c - an instrumented process tree for tests/tool/run.sh.
 *
 *   run_tree tree   forks a child that forks a grandchild (exits 2), a
 *                   child that execs "run_tree leaf" (exits 5), and one
 *                   that SIGKILLs itself; exits 0
 *   run_tree leaf   exits 5
 *
 * Each process runs instrumented code before it forks, execs or ends.
 *
 * Contract: single-threaded; built with -finstrument-functions.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int __attribute__((noinline)) work(int n)
{
	return n <= 1 ? n : work(n - 1) + work(n - 2);
}

static void reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		;
}

int main(int argc, char **argv)
{
	pid_t a, b, c, d;

	if (argc > 1 && strcmp(argv[1], "leaf") == 0)
		return work(5) == 5 ? 5 : 1;
	if (argc < 2 || strcmp(argv[1], "tree") != 0)
		return 64;
	work(6);
	a = fork();
	if (a == 0) {
		pid_t g;

		work(4);
		g = fork();
		if (g == 0) {
			work(3);
			_exit(2);
		}
		reap(g);
		exit(0);
	}
	reap(a);
	b = fork();
	if (b == 0) {
		work(4);
		execl("/proc/self/exe", argv[0], "leaf", (char *)NULL);
		_exit(127);
	}
	reap(b);
	c = fork();
	if (c == 0) {
		work(4);
		usleep(300000);	/* its trace created, its start records written */
		raise(SIGKILL);
	}
	reap(c);
	d = fork();
	if (d == 0)	/* no instrumented call between the fork and the exec */
		execl("/bin/true", "true", (char *)NULL);
	reap(d);
	puts("tree done");
	return 0;
}
