// SPDX-License-Identifier: MIT
/*
 * tests/reliability/sig_stress.c - a traced program dies as it would
 * untraced, whenever the signal comes (issue 30).
 *
 *   sig_stress LINKED_TARGET PRELOAD_TARGET LIBFDRTRACE
 *
 * Runs targets/sig_flip.c, which changes one signal's disposition over and
 * over (the default, handlers, one-shot handlers, make's reset-and-raise),
 * recording, and sends it that signal at random moments until it dies:
 * every delivery while the program's disposition is the default must end
 * it. Per signal (TERM, HUP, INT, QUIT, SEGV: the last also with a real
 * fault at a random turn) and per way (libfdrtrace preloaded into a
 * program built with -finstrument-functions only, and linked); one try in
 * four starts with the signal ignored, as a background job's SIGINT is.
 * It reports how many of the tries died by that signal, ended otherwise,
 * or were still alive after the timeout (killed with SIGKILL and counted
 * as failures), and how many left no trace closed by the signal (read
 * to its end with the reader). Any try not killed by its signal fails the
 * test; so do deaths without their trace closed in more than 2% of the
 * tries of a row (the dump gives up on the file lock after about 100 ms,
 * lc_dump(), which a loaded machine's flush thread may hold that long).
 *
 * Environment: REL_SIG_TRIES tries per signal and way (default 150, 50
 * in sanitized builds, whose programs start slowly),
 * REL_SIG_TIMEOUT_MS (default 3000) from the first signal sent to the
 * SIGKILL, REL_SIG_WAYS "preload", "linked" or both (default), REL_SIG_KEEP
 * set keeps going after a failure (for figures). In sanitized builds,
 * linked only and without SIGSEGV: the sanitizer's runtime cannot be
 * preloaded after the program, and its SIGSEGV handler (found at start,
 * so put back after the dump) reports and exits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/format.h>

#include "trace_check.h"

#ifndef REL_SANITIZED
#define REL_SANITIZED 0
#endif

struct tally {
	unsigned tries, died, other, alive, unclosed;
};

static char dir[64];
static unsigned long rng = 88172645463325252ull;

static unsigned long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * Remove the traces of the last try. Return: whether there was one that
 * reads to its end and is closed with how = signal.
 */
static bool clear_traces(void)
{
	static struct tc_trace t;
	DIR *d = opendir(dir);
	struct dirent *e;
	bool closed = false;

	if (!d)
		return false;
	while ((e = readdir(d))) {
		char path[sizeof(dir) + 256];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (strstr(e->d_name, ".fdr")) {
			tc_read(path, &t);
			closed |= t.ok && t.closed && t.close_how == FDRTRACE_CLOSE_SIGNAL;
			if (!t.ok || !t.closed)
				fprintf(stderr, "sig_stress: %s: %s\n", e->d_name,
					t.ok ? "no close marker" : t.error);
			tc_free(&t);
		}
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	return closed;
}

static pid_t start(const char *target, const char *preload, int sig, long fault_at, int *rfd)
{
	char sigs[16], seed[24], fault[24], opts[160], pre[4096];
	char *argv[] = { (char *)target, sigs, seed, fault, NULL };
	char *envp[] = { "FDRTRACE_MODE=fdr", opts, "PATH=/usr/bin:/bin", pre, NULL };
	int p[2];
	bool ignored = next_rand() % 4 == 0;
	pid_t pid;

	snprintf(sigs, sizeof(sigs), "%d", sig);
	snprintf(seed, sizeof(seed), "%lu", next_rand() & 0xffffffff);
	snprintf(fault, sizeof(fault), "%ld", fault_at);
	snprintf(opts, sizeof(opts),
		 "FDRTRACE_OPTIONS=logfile_base=%s/:verbosity=0:buffer_size=4096:buffer_max=16",
		 dir);
	if (preload)
		snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", preload);
	else
		envp[3] = NULL;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };
		sigset_t none;
		int null = open("/dev/null", O_RDWR);

		/*
		 * As a shell would start it: the signal unblocked, at its default
		 * or, one try in four, ignored (a background job's SIGINT), until
		 * the program sets it; no core files.
		 */
		signal(sig, ignored ? SIG_IGN : SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setrlimit(RLIMIT_CORE, &no_core);
		dup2(p[1], 1);
		if (null >= 0)
			dup2(null, 2);
		execve(target, argv, envp);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	*rfd = p[0];
	return pid;
}

/*
 * One try: wait until the target runs, then send @sig at random moments
 * (every 50 to 800 us) until it dies or the timeout passes.
 */
static void one_try(struct tally *t, const char *target, const char *preload, int sig,
		    long timeout_ms)
{
	long fault_at = sig == SIGSEGV && next_rand() % 2 ? (long)(next_rand() % 3000) : -1;
	struct pollfd pfd;
	long deadline;
	int rfd, st = 0;
	char c;
	pid_t pid = start(target, preload, sig, fault_at, &rfd), w = 0;

	t->tries++;
	if (pid < 0) {
		t->other++;
		return;
	}
	pfd.fd = rfd;
	pfd.events = POLLIN;
	/* started (one byte), or already dead of its fault (end of file) */
	if (poll(&pfd, 1, 10000) != 1 || read(rfd, &c, 1) < 0)
		fprintf(stderr, "sig_stress: pid %d did not start in 10 s\n", (int)pid);
	close(rfd);
	sleep_us((long)(next_rand() % 2000));
	deadline = now_ms() + timeout_ms;
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && now_ms() < deadline) {
		kill(pid, sig);
		sleep_us(50 + (long)(next_rand() % 750));
	}
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		t->alive++;
		fprintf(stderr, "sig_stress: %s%s signal %d: pid %d still alive after %ld ms\n",
			preload ? "preloaded " : "linked ", target, sig, (int)pid, timeout_ms);
		clear_traces();
		return;
	}
	if (WIFSIGNALED(st) && WTERMSIG(st) == sig) {
		t->died++;
	} else {
		t->other++;
		fprintf(stderr, "sig_stress: %s signal %d: pid %d ended with status 0x%x\n",
			preload ? "preloaded" : "linked", sig, (int)pid, st);
	}
	if (!clear_traces())
		t->unclosed++;
}

int main(int argc, char **argv)
{
	static const int sigs[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGSEGV };
	const char *e;
	unsigned tries = REL_SANITIZED ? 50 : 150, failed = 0;
	long timeout_ms = 3000, t0 = now_ms();
	bool keep = getenv("REL_SIG_KEEP") != NULL;

	if (argc != 4) {
		fprintf(stderr, "usage: sig_stress LINKED_TARGET PRELOAD_TARGET LIBFDRTRACE\n");
		return 2;
	}
	if (REL_SANITIZED)
		printf("sanitized build: linked only, no SIGSEGV (the sanitizer's runtime "
		       "cannot be preloaded after the program, and its SIGSEGV handler "
		       "reports and exits)\n");
	if ((e = getenv("REL_SIG_TRIES")) && atoi(e) > 0)
		tries = (unsigned)atoi(e);
	if ((e = getenv("REL_SIG_TIMEOUT_MS")) && atol(e) > 0)
		timeout_ms = atol(e);
	rng ^= (unsigned long)getpid() << 20 ^ (unsigned long)t0;
	snprintf(dir, sizeof(dir), "/tmp/fdrtrace-sigstress-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	/* the driver's own signals stay away from the targets' */
	signal(SIGPIPE, SIG_IGN);
	for (int way = 0; way < 2; way++) {
		const char *wname = way ? "linked" : "preload";
		const char *target = way ? argv[1] : argv[2];
		const char *preload = way ? NULL : argv[3];

		if ((e = getenv("REL_SIG_WAYS")) && *e && !strstr(e, wname))
			continue;
		if (REL_SANITIZED && !way)
			continue;
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			struct tally t = { 0 };
			bool bad;

			if (REL_SANITIZED && sigs[i] == SIGSEGV)
				continue;

			for (unsigned n = 0; n < tries; n++) {
				one_try(&t, target, preload, sigs[i], timeout_ms);
				if (!keep && (t.alive || t.other))
					break;
			}
			/* a dump may give up on a file lock held too long: a few in a hundred */
			bad = t.alive || t.other || t.unclosed > t.tries / 50;
			printf("%-8s SIG%-5s tries %4u  died by it %4u  other ending %3u  "
			       "left alive %3u  trace not closed %3u%s\n",
			       wname, sigabbrev_np(sigs[i]), t.tries, t.died, t.other, t.alive,
			       t.unclosed, bad ? "  FAIL" : "");
			fflush(stdout);
			failed += bad;
		}
	}
	rmdir(dir);
	printf("%s (%.1f s)\n", failed ? "FAIL" : "ok", (now_ms() - t0) / 1000.0);
	return failed ? 1 : 0;
}
