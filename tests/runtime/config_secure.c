// SPDX-License-Identifier: MIT
/*
 * tests/runtime/config_secure.c - a setuid program never records.
 *
 * As root: copies itself to a temporary directory, makes the copy setuid
 * nobody, and runs it with FDRTRACE_MODE=fdr and a bad option. Run that way
 * (AT_SECURE), fdr_config_load() must leave recording off and print
 * nothing. A control run of the same copy without the setuid bit must turn
 * recording on and report the bad option. Exit 77 (skip) when not root or
 * when the kernel does not set AT_SECURE (nosuid mount, no_new_privs).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"

/*
 * LeakSanitizer cannot stop the world in a setuid (non-dumpable) process,
 * and a secure process ignores ASAN_OPTIONS; in a sanitizer build the
 * runtime reads this instead. Unused otherwise.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static int child(void)
{
	struct fdr_config cfg;
	int bad = fdr_config_load(&cfg);

	printf("secure=%lu enabled=%d bad=%d\n", getauxval(AT_SECURE), cfg.enabled, bad);
	return 0;
}

/* Run @path --child with the test environment; its stdout+stderr into @out. */
static int run(const char *path, char *out, size_t cap)
{
	int fds[2], status;
	size_t len = 0;
	ssize_t r;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		setenv("FDRTRACE_MODE", "fdr", 1);
		setenv("FDRTRACE_OPTIONS", "buffer_size=zz", 1);
		execl(path, path, "--child", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (len < cap - 1 && (r = read(fds[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int copy_self(const char *dst)
{
	char buf[65536];
	ssize_t r;
	int in = open("/proc/self/exe", O_RDONLY), out;

	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0)
		return -1;
	while ((r = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)r) != r)
			return -1;
	close(in);
	return close(out);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/fdrtrace-secure-XXXXXX", path[64], out[4096];
	int ret = 1;

	if (argc == 2 && strcmp(argv[1], "--child") == 0)
		return child();
	if (geteuid() != 0) {
		printf("skip: needs root to make a setuid copy\n");
		return 77;
	}
	if (!mkdtemp(dir) || chmod(dir, 0755))
		return 1;
	snprintf(path, sizeof(path), "%s/prog", dir);
	if (copy_self(path))
		goto out;

	/* Control: not setuid; records, and reports the bad option. */
	if (run(path, out, sizeof(out)) != 0) {
		printf("control run failed:\n%s", out);
		goto out;
	}
	if (!strstr(out, "secure=0 enabled=1 bad=1") ||
	    !strstr(out, "fdrtrace: FDRTRACE_OPTIONS: buffer_size='zz' is not a size")) {
		printf("control run: unexpected output:\n%s", out);
		goto out;
	}

	/* Setuid nobody, run by root: AT_SECURE. */
	if (chown(path, 65534, 65534) || chmod(path, 04755))
		goto out;
	if (run(path, out, sizeof(out)) != 0) {
		printf("setuid run failed:\n%s", out);
		goto out;
	}
	if (strncmp(out, "secure=0", 8) == 0) {
		printf("skip: the kernel did not set AT_SECURE (nosuid or no_new_privs)\n");
		ret = 77;
		goto out;
	}
	if (strcmp(out, "secure=1 enabled=0 bad=0\n") != 0) {
		printf("setuid run: expected recording off and silence, got:\n%s", out);
		goto out;
	}
	printf("setuid run: recording off, nothing printed\n");
	ret = 0;
out:
	unlink(path);
	rmdir(dir);
	return ret;
}
