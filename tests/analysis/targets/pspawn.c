// SPDX-License-Identifier: MIT
/*
 * pspawn.c - a child started with posix_spawn, traced through libfdrtrace:
 *   pspawn         main -> launch(), which posix_spawn()s "pspawn child"
 *                  and returns; main then waits for it in wait_child().
 *   pspawn child   main -> work(): the child's own calls.
 * Two traces. Exits 1 when posix_spawn or the child fails.
 */
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

static volatile long sink;

__attribute__((noinline)) static void work(void)
{
	for (long i = 0; i < 100; i++)
		sink += i;
}

__attribute__((noinline)) static pid_t launch(const char *self)
{
	char *argv[] = { (char *)self, "child", NULL };
	pid_t pid;
	int rc = posix_spawn(&pid, self, NULL, NULL, argv, environ);

	if (rc) {
		fprintf(stderr, "pspawn: posix_spawn: %s\n", strerror(rc));
		return -1;
	}
	return pid;
}

__attribute__((noinline)) static int wait_child(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	pid_t pid;

	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		work();
		return 0;
	}
	pid = launch(argv[0]);
	if (pid < 0)
		return 1;
	printf("%d\n", (int)pid);
	return wait_child(pid);
}
