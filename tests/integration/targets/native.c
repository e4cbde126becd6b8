// SPDX-License-Identifier: MIT
/*
 * tests/integration/targets/native.c - native stacks and latency triggers.
 *
 * Built with -finstrument-functions (except where said) and linked with
 * libfdrtrace. The mode is argv[1]:
 *   strlen        SIGSEGV inside libc's strlen, called by instrumented
 *                 measure() <- outer() <- main()
 *   thread        the same in a second thread (crash_thread <- outer)
 *   start         fdrtrace_stop(), work, fdrtrace_start() from resume_here(),
 *                 work, normal exit
 *   fast_slow     2,000 calls of fast() then one slow() (30 ms), exit
 *   slow N        N calls of slow(), exit
 *   fork_slow     slow(), then fork: the child calls slow() and exits, the
 *                 parent waits for it (each writes its own snapshots)
 *   fork_slow_exit the same, the child ending with _exit()
 *   thread_fds F  first put the file F (created, "user data\n" in it, read
 *                 from its start) on every pipe descriptor above 2, as a
 *                 shell's `exec 3>F` does: libunwind's validation pipe is
 *                 one; then as thread
 *   start_fds F   the same, then as start
 *   masks         some calls, 100 ms asleep, then print "masks T D": its
 *                 threads T and how many of them may run on other CPUs
 *                 than main may (Cpus_allowed_list); the flush thread
 *                 starts on one CPU and must have main's set back by then
 *   pipes         some calls, then print "pipes N": the pipes among its
 *                 descriptors above 2 (libunwind's validation pipe is one,
 *                 once libunwind has set itself up)
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/fdrtrace.h>

size_t measure(const char *s);
size_t outer(const char *s);
void fast(int i);
void slow(void);
void work(int n);
void resume_here(void);

static const char *volatile bad_string = (const char *)16;
static volatile unsigned long sink;

__attribute__((noinline)) size_t measure(const char *s)
{
	size_t n = strlen(s);	/* libc: not instrumented */

	sink += n;
	return n;
}

__attribute__((noinline)) size_t outer(const char *s)
{
	return measure(s) + 1;
}

static void *crash_thread(void *arg)
{
	(void)arg;
	outer(bad_string);
	return NULL;
}

__attribute__((noinline)) void fast(int i)
{
	sink += (unsigned long)i;
}

__attribute__((noinline)) void slow(void)
{
	struct timespec ts = { 0, 30 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void work(int n)
{
	for (int i = 0; i < n; i++)
		fast(i);
}

__attribute__((noinline)) void resume_here(void)
{
	fdrtrace_start();
}

static void take_pipe_fds(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	struct stat st;

	if (fd < 0)
		exit(3);
	for (int i = 3; i < 64; i++)
		if (i != fd && !fstat(i, &st) && S_ISFIFO(st.st_mode))
			dup2(fd, i);
	if (write(fd, "user data\n", 10) != 10 || lseek(fd, 0, SEEK_SET))
		exit(3);
}

/* The pipes among descriptors 3 and up (to 4096): what a program that lists its files sees. */
static int count_pipes(void)
{
	struct stat st;
	int n = 0;

	for (int i = 3; i < 4096; i++)
		if (!fstat(i, &st) && S_ISFIFO(st.st_mode))
			n++;
	return n;
}

/* Cpus_allowed_list of /proc/self/task/@tid/status into @out ("" when unreadable). */
static void task_cpus(const char *tid, char *out, size_t cap)
{
	char path[128], line[512];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18))
			snprintf(out, cap, "%s", line + 18);
	fclose(f);
}

/* The threads, and those whose CPU set differs from main's. */
static void print_masks(void)
{
	char mine[512], other[512], me[32];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	int threads = 0, differ = 0;

	snprintf(me, sizeof(me), "%d", (int)getpid());
	task_cpus(me, mine, sizeof(mine));
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		threads++;
		task_cpus(d->d_name, other, sizeof(other));
		if (strcmp(mine, other))
			differ++;
	}
	if (dir)
		closedir(dir);
	printf("masks %d %d\n", threads, differ);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if ((!strcmp(mode, "thread_fds") || !strcmp(mode, "start_fds")) && argc > 2) {
		fdrtrace_flush();
		take_pipe_fds(argv[2]);
		mode = mode[0] == 't' ? "thread" : "start";
	}

	/*
	 * Crashes: let the runtime write its start records (modules, names)
	 * before anything else: a native stack names modules by their records.
	 */
	if (!strcmp(mode, "strlen") || !strcmp(mode, "thread"))
		fdrtrace_flush();
	if (!strcmp(mode, "strlen")) {
		outer("fine");
		outer(bad_string);
	} else if (!strcmp(mode, "thread")) {
		pthread_t t;

		outer("fine");
		if (pthread_create(&t, NULL, crash_thread, NULL))
			return 2;
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "start")) {
		fdrtrace_stop();
		work(10);
		resume_here();
		work(10);
	} else if (!strcmp(mode, "masks")) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		work(100);
		nanosleep(&ts, NULL);
		print_masks();
	} else if (!strcmp(mode, "pipes")) {
		work(100);
		printf("pipes %d\n", count_pipes());
	} else if (!strcmp(mode, "fast_slow")) {
		work(2000);
		slow();
		work(10);
	} else if (!strcmp(mode, "fork_slow") || !strcmp(mode, "fork_slow_exit")) {
		pid_t pid;
		int st;

		slow();
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			slow();
			work(10);
			if (mode[9])
				_exit(0);
			exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	} else if (!strcmp(mode, "slow") && argc > 2) {
		for (int i = atoi(argv[2]); i > 0; i--)
			slow();
	} else {
		fprintf(stderr, "usage: native strlen|thread|start|fast_slow|slow N\n");
		return 2;
	}
	printf("%lu\n", sink);
	return 0;
}
