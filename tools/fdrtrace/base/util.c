/* SPDX-License-Identifier: MIT */
/*
 * util.c - messages, checked stdout, input opening for the fdrtrace command.
 *
 * Outputs named by -o (tool_output_open()) are written to a temporary file
 * renamed into place on success, or directly when they are not regular
 * files: no command ever removes or truncates a file it did not create.
 *
 * Contract: single-threaded tool code. stdout is checked once at the end
 * (tool_finish_stdout()) and cheaply in loops (tool_stdout_failed()), so a
 * closed pipe or a full disk ends a command with a message and status 1.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sigaction tool_sigpipe_at_start = { .sa_handler = SIG_DFL };

static void (*tool_sync_fn)(void *);
static void *tool_sync_ctx;

void tool_stderr_hook(void (*fn)(void *ctx), void *ctx)
{
	tool_sync_fn = fn;
	tool_sync_ctx = ctx;
}

void tool_stderr_sync(void)
{
	if (tool_sync_fn)
		tool_sync_fn(tool_sync_ctx);
	fflush(stdout);	/* an error stays in the stream for tool_finish_stdout() */
}

void tool_err(const char *fmt, ...)
{
	va_list ap;

	tool_stderr_sync();
	fputs("fdrtrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tool_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	tool_stderr_sync();
	fprintf(stderr, "fdrtrace %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'fdrtrace %s --help')\n", cmd);
	return EXIT_USAGE;
}

int tool_bad_option(const char *cmd, const char *optstring, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "?";

	if (optopt && strchr(optstring, optopt))
		return tool_usage_err(cmd, "option '%s' needs an argument", arg);
	if (optopt)
		return tool_usage_err(cmd, "unknown option '-%c'", optopt);
	return tool_usage_err(cmd, "unknown option '%s'", arg);
}

int tool_print_help(const char *text)
{
	fputs(text, stdout);
	return tool_finish_stdout() ? EXIT_FAIL : EXIT_OK;
}

bool tool_stdout_failed(void)
{
	return ferror(stdout) != 0;
}

/* Flush stdout and check every write to it; say so naming @where. */
static int tool_finish_output(const char *where)
{
	int failed = fflush(stdout) != 0 || ferror(stdout);

	if (failed) {
		int e = errno ? errno : EIO;

		/* a reader that went away (| head) is not worth a message; the status says it */
		if (e != EPIPE)
			tool_err("write error on %s: %s", where, strerror(e));
		return -EIO;
	}
	return 0;
}

int tool_finish_stdout(void)
{
	return tool_finish_output("standard output");
}

int tool_open_input(const char *path)
{
	int fd;

	if (strcmp(path, "-") == 0)
		return STDIN_FILENO;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		tool_err("%s: %s", path, strerror(errno));
	return fd;
}

void tool_close_input(int fd)
{
	if (fd > STDIN_FILENO)
		close(fd);
}

void tool_print_hex(FILE *f, const uint8_t *p, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		putc(digits[p[i] >> 4], f);
		putc(digits[p[i] & 15], f);
	}
}

bool tool_all_zero(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* A temporary name in the directory of @final: "DIR/.BASE.XXXXXX". */
static char *tool_tmp_name(const char *final)
{
	const char *slash = strrchr(final, '/');
	size_t dir_len = slash ? (size_t)(slash - final) + 1 : 0;
	const char *base = final + dir_len;
	char *t = malloc(dir_len + strlen(base) + 9);

	if (!t)
		return NULL;
	memcpy(t, final, dir_len);
	sprintf(t + dir_len, ".%s.XXXXXX", base);
	return t;
}

int tool_output_is_input(const char *cmd, const char *path, char *const *inputs, int n)
{
	bool to_stdout = !path || strcmp(path, "-") == 0;
	struct stat out, in;
	int i;

	if (to_stdout ? fstat(STDOUT_FILENO, &out) : stat(path, &out))
		return 0;	/* nothing there yet: not an input */
	if (!S_ISREG(out.st_mode))
		return 0;	/* a device (/dev/null), a FIFO: never replaced */
	for (i = 0; i < n; i++) {
		bool from_stdin = strcmp(inputs[i], "-") == 0;

		if (from_stdin ? fstat(STDIN_FILENO, &in) : stat(inputs[i], &in))
			continue;	/* reported when it is opened */
		if (in.st_dev != out.st_dev || in.st_ino != out.st_ino)
			continue;
		return tool_usage_err(cmd, "the output %s%s%s is the input %s%s%s (the same file): "
				      "writing it would replace the input",
				      to_stdout ? "(standard output)" : "'", to_stdout ? "" : path,
				      to_stdout ? "" : "'", from_stdin ? "(standard input)" : "'",
				      from_stdin ? "" : inputs[i], from_stdin ? "" : "'");
	}
	return 0;
}

int tool_output_open(struct tool_output *o, const char *path)
{
	struct stat sb;
	mode_t mode, mask;
	int fd, e;

	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0)
		return 0;
	o->path = path;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		if (S_ISDIR(sb.st_mode)) {
			tool_err("%s: %s", path, strerror(EISDIR));
			return -EISDIR;
		}
		/* A device, FIFO or terminal: written in place, never created or cut. */
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			goto fail;
	} else {
		if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
			o->final = realpath(path, NULL);	/* replace the target, keep the link */
			if (!o->final && errno == ENOENT) {
				/* not followed to make a file it names: say what it is */
				tool_err("%s: a symbolic link to a file that does not exist; not "
					 "followed", path);
				memset(o, 0, sizeof(*o));
				return -ENOENT;
			}
		} else {
			o->final = strdup(path);
		}
		if (!o->final)
			goto fail;
		o->tmp = tool_tmp_name(o->final);
		if (!o->tmp)
			goto fail;
		fd = mkstemp(o->tmp);
		if (fd < 0) {
			free(o->tmp);
			o->tmp = NULL;
			goto fail;
		}
		if (stat(o->final, &sb) == 0) {
			mode = sb.st_mode & 07777;
		} else {
			mask = umask(0);
			umask(mask);
			mode = 0666 & ~mask;
		}
		if (fchmod(fd, mode) != 0) {
			e = errno;
			close(fd);
			errno = e;
			goto fail;
		}
	}
	fflush(stdout);
	if (dup2(fd, STDOUT_FILENO) < 0) {
		e = errno;
		close(fd);
		errno = e;
		goto fail;
	}
	close(fd);
	return 0;
fail:
	e = errno ? errno : ENOMEM;
	tool_err("%s: %s", path, strerror(e));
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->final);
	memset(o, 0, sizeof(*o));
	return -e;
}

int tool_output_close(struct tool_output *o, bool ok)
{
	/* the -o path in the message: stdout is that file (or device) here */
	int rc = tool_finish_output(o->path && strcmp(o->path, "-") ? o->path : "standard output");

	if (ok && !rc && o->tmp && rename(o->tmp, o->final) != 0) {
		tool_err("%s: cannot rename %s to it: %s", o->path, o->tmp, strerror(errno));
		rc = -EIO;
	}
	if (o->tmp && (!ok || rc))
		unlink(o->tmp);	/* ours; the file at the path is untouched */
	free(o->tmp);
	free(o->final);
	memset(o, 0, sizeof(*o));
	return ok ? rc : -EIO;
}

int tool_grow(void *pp, uint32_t *cap, uint32_t need, size_t size, uint32_t first)
{
	void **p = pp;
	uint32_t n = *cap ? *cap : first;
	char *v;

	if (need < *cap)
		return 0;
	while (n <= need) {
		if (n > UINT32_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	v = realloc(*p, (size_t)n * size);
	if (!v)
		return -ENOMEM;
	memset(v + (size_t)*cap * size, 0, (size_t)(n - *cap) * size);
	*p = v;
	*cap = n;
	return 0;
}

char *tool_time10(char *buf, double seconds)
{
	static const char *const units[] = { "ns", "us", "ms", " s" };
	double v = seconds * 1e9;
	unsigned u = 0;

	while (u < 3 && v >= 999.9995) {
		v /= 1e3;
		u++;
	}
	snprintf(buf, 32, "%7.3f %s", v, units[u]);
	return buf;
}
