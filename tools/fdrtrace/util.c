/* SPDX-License-Identifier: MIT */
/*
 * util.c - messages, checked stdout, input opening for the fdrtrace command.
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
#include <string.h>
#include <unistd.h>

void tool_err(const char *fmt, ...)
{
	va_list ap;

	fputs("fdrtrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tool_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

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

int tool_finish_stdout(void)
{
	int failed = fflush(stdout) != 0 || ferror(stdout);

	if (failed) {
		int e = errno ? errno : EIO;

		/* a reader that went away (| head) is not worth a message; the status says it */
		if (e != EPIPE)
			tool_err("write error on standard output: %s", strerror(e));
		return -EIO;
	}
	return 0;
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
