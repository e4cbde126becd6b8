// SPDX-License-Identifier: MIT
/*
 * tests/integration/targets/target.c - an instrumented program with
 * deterministic call counts, driven by tests/integration/test_runtime.c.
 *
 *   target basic            leaf x1300, mid x100, rec x51 (+ main, work)
 *   target threads N        N threads, each does basic's work
 *   target deep N           rec(N)
 *   target churn N          N threads one after another, each leaf x100
 *   target fork             work; fork; child: leaf x10, exit(0)
 *   target fork_exit        the same, the child ending with _exit(0)
 *   target fork_nested      work; fork in fork_in(), whose child calls leaf
 *                           x10 there, then returns from it and exit(0)s
 *   target tree             a process tree: work; fork, the child execs this
 *                           program as "status 4"; fork again, that child
 *                           ends with _exit(5); fork a third, which ends by
 *                           SIGSEGV; work; exit(3)
 *   target status N         work, then exit(N)
 *   target fork_exec        work; fork, the child execs /bin/true at once
 *                           (no instrumented call in the child)
 *   target fork_in_subdir   work; mkdir "sub", chdir into it, fork; child:
 *                           leaf x10, exit(0) (its trace goes where the
 *                           program started)
 *   target signal           work with a 20 kHz profiling timer whose
 *                           handler calls sig_fn(); prints the handler count
 *   target segv [N]         work (N times), then a write through NULL
 *   target repeat N         work N times, then return from main
 *   target alloc_max        work, then print "alloc_max N": the largest
 *                           anonymous mapping it can make, in MiB
 *   target blocked N        block SIGCHLD and SIGTERM for good (GNU make
 *                           blocks SIGCHLD), then work N times
 *   target abort            work, then abort()
 *   target longjmp          longjmp out of 5 nested calls, 10 times
 *   target children         work; system("true"); a popen'd shell; work
 *   target exec PROG [HOW]  work, then exec PROG with argument "basic", by HOW:
 *                           execv (the default), execl, execlp or execle
 *   target spin             work in a loop, forever (for SIGKILL)
 *   target nap MS           leaf, sleep MS ms, leaf: a long run of few records
 *   target idle N           work N times, wait 300 ms, print "direct 1" when
 *                           a descriptor (the tracer's) has O_DIRECT (else
 *                           "direct 0"), then wait forever (for SIGKILL)
 *   target quick_exit N     work N times, then _exit(0)
 *   target exit_race MS     a thread works then calls _exit(3) while main
 *                           works, sleeps MS ms and calls exit(0): both close
 *                           the trace, at about the same moment
 *   target crash_race MS    as exit_race, the thread crashing (SIGSEGV)
 *                           instead of calling _exit
 *   target stderr_reused F  work; close standard error, open F (which takes
 *                           descriptor 2), write "data\n" to it, exit
 *   target close_fds MS F   work, sleep MS ms, close descriptors 3 to 1023
 *                           (a daemon's close-all), open F 32 times (taking
 *                           their numbers back), write "d" through each,
 *                           work three times 30 ms apart, exit
 *   target first_fd         work, then print the number its next open gets
 *   target fds_taken F      work; put the file F on every descriptor above 2
 *                           that is open (a shell's `exec 3>F ... 7>F`: the
 *                           tracer's among them), write "data\n" to F, lower
 *                           the descriptor limit so no descriptor is free
 *                           (a subshell's `ulimit -n`), work, exit
 *   target close_stdio MS   work, close descriptors 1 and 2, work, sleep
 *                           MS ms, create the file "slept", work, exit
 *   target stdio_holes F    started with descriptors 1 and 2 closed: work,
 *                           open F (must be 1) and dup it (must be 2),
 *                           write "out\n" to 1 and "err\n" to 2, work, exit
 *   target chroot           work; mkdir "jail", chroot into it (root only:
 *                           status 9 otherwise); after_chroot(); work; exit
 *   target resethand        a one-shot (SA_RESETHAND) SIGUSR1 handler that
 *                           writes "handled N" and returns; work; SIGUSR1
 *                           twice: the second ends the process (default)
 *   target busy N           2 threads, each works N times; then prints
 *                           "flush_migrations M": how often the scheduler
 *                           moved the flush thread between CPUs
 *   target flush_tid        work, then print "flush_tid T": the id of the
 *                           thread named fdrtrace-flush (waiting for it to
 *                           be named, 2 s at most; -1: none)
 *   target stdout_freed F   stdout set to a FILE of F's, printed to; an exit
 *                           handler prints "bye" and fcloses it (freed), so
 *                           at the runtime's exit handler stdout is a freed FILE
 *   target quiet            access("/fdrtrace-quiet-begin"), work three
 *                           times 50 ms apart, access("/fdrtrace-quiet-end"):
 *                           markers for strace, the runtime's opens between
 *                           them being the ones made while the program runs
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;
static volatile long sig_count;
static jmp_buf jb;

/*
 * Is a descriptor open with O_DIRECT (from /proc/self/fdinfo)? This
 * program opens none itself: one would be the tracer's trace file.
 */
static int trace_is_direct(void)
{
	for (int fd = 3; fd < 1024; fd++) {
		char path[64], info[512];
		unsigned long flags = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(info, sizeof(info), f))
			if (sscanf(info, "flags: %lo", &flags) == 1)
				break;
		fclose(f);
		if (flags & O_DIRECT)
			return 1;
	}
	return 0;
}

__attribute__((noinline)) static void leaf(int i)
{
	sink += i;
}

__attribute__((noinline)) static void mid(int i)
{
	leaf(i);
	leaf(i + 1);
	leaf(i + 2);
}

__attribute__((noinline)) static long rec(long n)
{
	sink++;
	return n ? rec(n - 1) + 1 : 0;
}

__attribute__((noinline)) static void work(void)
{
	for (int i = 0; i < 1000; i++)
		leaf(i);
	for (int i = 0; i < 100; i++)
		mid(i);
	rec(50);
}

/*
 * "drop_privs": a root daemon's worker becomes nobody before it records
 * anything (as nginx's do, soon after they start). A constructor not
 * instrumented, so that no call is recorded before; libfdrtrace's
 * constructor has run (a library's run before the program's).
 */
__attribute__((constructor, no_instrument_function)) static void drop_privs_early(void)
{
	const char *m = getenv("TARGET_DROP_PRIVS");

	if (m && *m == '1' && (setgid(65534) || setgroups(0, NULL) || setuid(65534)))
		_exit(9);
}

/* The clean-up handler of "reraise": a file, the default back, the signal again. */
static void on_term_reraise(int sig)
{
	close(open("cleaned", O_WRONLY | O_CREAT | O_EXCL, 0600));
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Called in a vfork child only: nothing of it may reach the parent's trace. */
/* "fork_nested": the fork in a call of its own, once work() filled buffers */
__attribute__((noinline)) static pid_t fork_in(void)
{
	pid_t pid = fork();

	if (pid == 0)
		for (int i = 0; i < 10; i++)
			leaf(i);
	return pid;
}

__attribute__((noinline)) static void in_vfork_child(void)
{
	for (int i = 0; i < 10; i++)
		leaf(i);
}

static void *exit_race_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++)
		work();
	_exit(3);
}

static int *volatile crash_at;	/* NULL */

static void *crash_race_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++)
		work();
	*crash_at = 1;	/* SIGSEGV */
	return NULL;
}

static void *thread_main(void *arg)
{
	(void)arg;
	work();
	return NULL;
}

/* Called first after the chroot of "chroot": named from the program's file all the same. */
__attribute__((noinline)) static void after_chroot(void)
{
	sink++;
}

static volatile sig_atomic_t once_count;

/* "resethand": logs and returns, as a one-shot handler does; what the program sees inside it */
static void on_usr1_once(int sig)
{
	struct sigaction now;
	char msg[] = "handled 0 view 0\n";

	once_count++;
	msg[8] = (char)('0' + once_count);
	/* the kernel has reset it: the program must see the default */
	msg[15] = (char)('0' + (sigaction(sig, NULL, &now) == 0 && now.sa_handler == SIG_DFL));
	(void)!write(1, msg, sizeof(msg) - 1);
}

static long busy_rounds;

static void *busy_main(void *arg)
{
	(void)arg;
	for (long i = 0; i < busy_rounds; i++)
		work();
	return NULL;
}

/*
 * The flush thread's se.nr_migrations (/proc/self/task/TID/sched, a
 * kernel with CONFIG_SCHED_DEBUG); -1 when it cannot be read.
 */
__attribute__((no_instrument_function)) static long flush_migrations(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	long got = -1;

	while (d && (de = readdir(d))) {
		char path[300], line[256];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f) || strcmp(line, "fdrtrace-flush\n")) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%s/sched", de->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "se.nr_migrations : %ld", &got) == 1)
				break;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return got;
}

/* The id of the thread named fdrtrace-flush (named as it starts: 2 s at most), or -1. */
__attribute__((no_instrument_function)) static long flush_tid(void)
{
	for (int tries = 0; tries < 200; tries++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *de;
		long got = -1;

		while (d && got < 0 && (de = readdir(d))) {
			char path[300], line[64];
			FILE *f;

			snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fgets(line, sizeof(line), f) && !strcmp(line, "fdrtrace-flush\n"))
				got = atol(de->d_name);
			fclose(f);
		}
		if (d)
			closedir(d);
		if (got >= 0)
			return got;
		usleep(10000);
	}
	return -1;
}

static pthread_barrier_t hold_barrier;

/* "hold": one call (the thread now holds a buffer), wait for every other thread, then work */
static void *hold_main(void *arg)
{
	(void)arg;
	leaf(0);
	pthread_barrier_wait(&hold_barrier);
	work();
	return NULL;
}

static void *churn_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		leaf(i);
	return NULL;
}

__attribute__((noinline)) static void sig_fn(void)
{
	sink++;
}

static void on_prof(int sig)
{
	(void)sig;
	sig_count++;
	sig_fn();
}

__attribute__((noinline)) static void jump_down(int depth)
{
	if (depth < 0)
		return;
	if (depth > 0)
		jump_down(depth - 1);
	else
		longjmp(jb, 1);
	sink++;
}

/* stdout_freed's exit handler: the FILE stdout was set to, closed (and freed) */
static void close_own_stdout(void)
{
	printf("bye\n");
	fclose(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (!strcmp(mode, "basic")) {
		work();
	} else if (!strcmp(mode, "threads") || !strcmp(mode, "churn")) {
		bool churn = !strcmp(mode, "churn");
		pthread_t *th = calloc((size_t)n, sizeof(*th));

		for (long i = 0; i < n; i++) {
			if (pthread_create(&th[i], NULL, churn ? churn_main : thread_main, NULL))
				return 2;
			if (churn)
				pthread_join(th[i], NULL);
		}
		if (!churn)
			for (long i = 0; i < n; i++)
				pthread_join(th[i], NULL);
		free(th);
	} else if (!strcmp(mode, "chroot")) {
		work();
		if ((mkdir("jail", 0700) && errno != EEXIST) || chroot("jail") || chdir("/"))
			return 9;
		after_chroot();
		work();
	} else if (!strcmp(mode, "resethand")) {
		struct sigaction sa, seen;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1_once;
		sa.sa_flags = SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGUSR1, NULL, &seen) ||
		    seen.sa_handler != on_usr1_once || !(seen.sa_flags & SA_RESETHAND))
			return 4;	/* the program must see what it set */
		work();
		raise(SIGUSR1);
		work();
		raise(SIGUSR1);	/* the default now: the end */
		return 5;
	} else if (!strcmp(mode, "flush_tid")) {
		work();
		printf("flush_tid %ld\n", flush_tid());
	} else if (!strcmp(mode, "busy")) {
		pthread_t th[2];

		busy_rounds = n;
		for (int i = 0; i < 2; i++)
			if (pthread_create(&th[i], NULL, busy_main, NULL))
				return 2;
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		printf("flush_migrations %ld\n", flush_migrations());
	} else if (!strcmp(mode, "hold")) {
		pthread_t *th = calloc((size_t)n, sizeof(*th));

		if (n < 1 || pthread_barrier_init(&hold_barrier, NULL, (unsigned)n))
			return 2;
		for (long i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, hold_main, NULL))
				return 2;
		for (long i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		free(th);
	} else if (!strcmp(mode, "deep")) {
		rec(n);
	} else if (!strcmp(mode, "fork") || !strcmp(mode, "fork_exit") ||
		   !strcmp(mode, "fork_nested") || !strcmp(mode, "fork_in_subdir")) {
		bool nested = !strcmp(mode, "fork_nested");
		pid_t pid;
		int st;

		work();
		if (!strcmp(mode, "fork_in_subdir") &&
		    ((mkdir("sub", 0700) && errno != EEXIST) || chdir("sub")))
			return 9;
		fflush(stdout);
		pid = nested ? fork_in() : fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			for (int i = 0; i < 10 && !nested; i++)
				leaf(i);
			if (!strcmp(mode, "fork_exit"))
				_exit(0);	/* as a server's child (Redis's BGSAVE) ends */
			exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 3;
		printf("child %d\n", (int)pid);
	} else if (!strcmp(mode, "tree")) {
		char *args[] = { argv[0], "status", "4", NULL };
		pid_t pid;
		int st;

		work();
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			leaf(1);
			execv("/proc/self/exe", args);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 4)
			return 10;
		pid = fork();
		if (pid == 0) {
			leaf(2);
			_exit(5);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 5)
			return 11;
		pid = fork();
		if (pid == 0) {
			leaf(3);
			*(volatile int *)(uintptr_t)(sink & 0) = 1;
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st))
			return 12;
		work();
		return 3;
	} else if (!strcmp(mode, "fork_exec")) {
		char *args[] = { "/bin/true", NULL };
		pid_t pid;
		int st;

		work();
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execv(args[0], args);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 13;
	} else if (!strcmp(mode, "status")) {
		work();
		exit((int)n);
	} else if (!strcmp(mode, "signal")) {
		struct itimerval it = { { 0, 50 }, { 0, 50 } };

		signal(SIGPROF, on_prof);
		setitimer(ITIMER_PROF, &it, NULL);
		for (int r = 0; r < 200; r++)
			work();
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_PROF, &it, NULL);
		printf("signals %ld\n", (long)sig_count);
	} else if (!strcmp(mode, "segv")) {
		for (long i = 0; i < (n > 0 ? n : 1); i++)
			work();
		*(volatile int *)(uintptr_t)(sink & 0) = 1;
	} else if (!strcmp(mode, "repeat")) {
		for (long i = 0; i < n; i++)
			work();
	} else if (!strcmp(mode, "alloc_max")) {
		size_t lo = 0, hi = 4096;	/* MiB: lo can be mapped, hi cannot */

		work();
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			void *m = mmap(NULL, mid << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

			if (m == MAP_FAILED) {
				hi = mid;
			} else {
				munmap(m, mid << 20);
				lo = mid;
			}
		}
		printf("alloc_max %zu\n", lo);
	} else if (!strcmp(mode, "blocked")) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGCHLD);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		for (long i = 0; i < n; i++)
			work();
	} else if (!strcmp(mode, "abort")) {
		work();
		abort();
	} else if (!strcmp(mode, "children")) {
		FILE *p;
		char line[64] = "";

		work();
		if (system("true") != 0)
			return 4;
		p = popen("echo from-a-shell", "r");
		if (!p || !fgets(line, sizeof(line), p) || pclose(p) != 0)
			return 5;
		work();
		printf("%s", line);
	} else if (!strcmp(mode, "exec")) {
		const char *how = argc > 3 ? argv[3] : "execv";
		char *args[] = { argv[2], "basic", NULL };

		work();
		fflush(stdout);
		if (!strcmp(how, "execl"))
			execl(argv[2], argv[2], "basic", (char *)NULL);
		else if (!strcmp(how, "execlp"))
			execlp(argv[2], argv[2], "basic", (char *)NULL);
		else if (!strcmp(how, "execle"))
			execle(argv[2], argv[2], "basic", (char *)NULL, environ);
		else
			execv(argv[2], args);
		return 6;
	} else if (!strcmp(mode, "nap")) {
		struct timespec ts = { n / 1000, (n % 1000) * 1000000 };

		leaf(1);
		nanosleep(&ts, NULL);
		leaf(2);
	} else if (!strcmp(mode, "idle")) {
		struct timespec ts = { 0, 300000000 };

		for (long i = 0; i < n; i++)
			work();
		nanosleep(&ts, NULL);
		printf("direct %d\n", trace_is_direct());
		fflush(stdout);
		for (;;)
			pause();
	} else if (!strcmp(mode, "spin")) {
		for (;;)
			work();
	} else if (!strcmp(mode, "exit_race") || !strcmp(mode, "crash_race")) {
		pthread_t th;

		pthread_create(&th, NULL, mode[0] == 'e' ? exit_race_thread : crash_race_thread,
			       NULL);
		work();
		usleep((useconds_t)n * 1000);
		exit(0);
	} else if (!strcmp(mode, "quick_exit")) {
		for (long i = 0; i < n; i++)
			work();
		_exit(0);
	} else if (!strcmp(mode, "stderr_reused") && argc > 2) {
		int fd;

		work();
		fclose(stderr);	/* as xz and gnulib's close_stdout do */
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd != 2 || write(fd, "data\n", 5) != 5)
			return 3;
		work();
	} else if (!strcmp(mode, "close_fds") && argc > 3) {
		work();
		usleep((useconds_t)n * 1000);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		for (int i = 0; i < 32; i++) {
			int fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0600);

			if (fd < 0 || write(fd, "d", 1) != 1)
				return 3;
		}
		for (int i = 0; i < 3; i++) {
			work();
			usleep(30000);
		}
	} else if (!strcmp(mode, "first_fd")) {
		work();
		printf("fd %d\n", open("/dev/null", O_RDONLY));
	} else if (!strcmp(mode, "fds_taken") && argc > 2) {
		int f, free_fd = 3;
		struct rlimit rl;

		work();
		f = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (f < 0)
			return 3;
		for (int fd = 3; fd < 1024; fd++)
			if (fd != f && fcntl(fd, F_GETFD) >= 0 && dup2(f, fd) != fd)
				return 3;
		if (write(f, "data\n", 5) != 5 || getrlimit(RLIMIT_NOFILE, &rl))
			return 3;
		while (fcntl(free_fd, F_GETFD) >= 0)
			free_fd++;
		rl.rlim_cur = (rlim_t)free_fd;	/* every descriptor below the limit in use */
		if (setrlimit(RLIMIT_NOFILE, &rl))
			return 3;
		work();
	} else if (!strcmp(mode, "stdout_freed") && argc > 2) {
		FILE *f = fopen(argv[2], "w");

		if (!f)
			return 3;
		stdout = f;
		if (atexit(close_own_stdout))
			return 3;
		work();
		printf("ok stdout_freed\n");
		return 0;
	} else if (!strcmp(mode, "close_stdio")) {
		work();
		close(1);
		close(2);
		work();
		usleep((useconds_t)n * 1000);
		close(open("slept", O_WRONLY | O_CREAT | O_EXCL, 0600));
		work();
		return 0;	/* nothing to print "ok" on */
	} else if (!strcmp(mode, "stdio_holes") && argc > 2) {
		int fd;

		work();
		fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd != 1 || dup(fd) != 2 || write(1, "out\n", 4) != 4 || write(2, "err\n", 4) != 4)
			return 3;
		work();
		return 0;
	} else if (!strcmp(mode, "wait_kill")) {
		/* recorded, then waits for the signal that ends it ("ready": the test may send it) */
		work();
		close(open("ready", O_WRONLY | O_CREAT | O_EXCL, 0600));
		for (;;)
			pause();
	} else if (!strcmp(mode, "reraise")) {
		/* as GNU make: a handler that cleans up, resets the default and raises again */
		signal(SIGTERM, on_term_reraise);
		work();
		close(open("ready", O_WRONLY | O_CREAT | O_EXCL, 0600));
		for (;;)
			pause();
	} else if (!strcmp(mode, "dispositions")) {
		/* what the program is told is what it set, whatever the runtime handles */
		struct sigaction sa;
		int bad = 0;

		if (sigaction(SIGTERM, NULL, &sa) || sa.sa_handler != SIG_DFL)
			bad |= 1;
		if (sigaction(SIGSEGV, NULL, &sa) || sa.sa_handler != SIG_DFL)
			bad |= 2;
		if (signal(SIGINT, SIG_IGN) != SIG_DFL)
			bad |= 4;
		if (signal(SIGINT, SIG_DFL) != SIG_IGN)
			bad |= 8;
		if (sigaction(SIGINT, NULL, &sa) || sa.sa_handler != SIG_DFL)
			bad |= 16;
		if (signal(SIGHUP, on_term_reraise) != SIG_DFL || signal(SIGHUP, SIG_DFL) != on_term_reraise)
			bad |= 32;
		/* libc's signal() flags, siginterrupt()'s included: no SA_RESTART here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
		siginterrupt(SIGUSR1, 1);
#pragma GCC diagnostic pop
		if (signal(SIGUSR1, on_term_reraise) != SIG_DFL || sigaction(SIGUSR1, NULL, &sa) ||
		    (sa.sa_flags & SA_RESTART) || sa.sa_handler != on_term_reraise)
			bad |= 64;
		work();
		printf("dispositions %d\n", bad);
	} else if (!strcmp(mode, "write_pipe")) {
		/* its standard output a pipe with no reader: the write raises SIGPIPE */
		work();
		(void)!write(1, "x\n", 2);
		work();
		return 0;
	} else if (!strcmp(mode, "vfork")) {
		/* the child runs instrumented code on this thread's memory, then execs or exits */
		bool do_exec = argc > 2 && !strcmp(argv[2], "exec");
		pid_t pid;
		int st;

		work();
		pid = vfork();
		if (pid == 0) {
			in_vfork_child();
			if (do_exec)
				execl("/bin/true", "true", (char *)NULL);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 3;
		work();
	} else if (!strcmp(mode, "drop_privs")) {
		/* drop_privs_early() made it nobody before its first traced call */
		if (getuid() != 65534)
			return 9;
		work();
	} else if (!strcmp(mode, "silent")) {
		/* writes nothing itself; only the runtime's exit line goes to stderr */
		work();
		return 0;
	} else if (!strcmp(mode, "quiet")) {
		(void)!access("/fdrtrace-quiet-begin", F_OK);
		for (int i = 0; i < 3; i++) {
			work();
			usleep(50000);
		}
		(void)!access("/fdrtrace-quiet-end", F_OK);
	} else if (!strcmp(mode, "longjmp")) {
		static volatile int i;

		for (i = 0; i < 10; i++)
			if (!setjmp(jb))
				jump_down(5);
		work();
	} else {
		fprintf(stderr, "target: unknown mode %s\n", mode);
		return 2;
	}
	printf("ok %s\n", mode);
	return 0;
}
