/* SPDX-License-Identifier: MIT */
/*
 * util.h - what the fdrtrace subcommands share: the command table entry,
 * messages, checked output, option errors, opening inputs.
 *
 * Contract: used only by the fdrtrace executable, from its single thread.
 * Only main() and the cmd_*() entry points decide the exit status; helpers
 * return 0 or a negative errno and print nothing unless their name says so.
 */
#ifndef FDRTRACE_TOOL_UTIL_H
#define FDRTRACE_TOOL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses of every command. */
#define EXIT_OK 0
#define EXIT_FAIL 1	/* the input is bad, or output failed */
#define EXIT_USAGE 2	/* unknown command or option, missing argument */

/**
 * struct tool_cmd - one row of the command table in main.c
 * @name: the word after "fdrtrace"
 * @summary: one line for "fdrtrace --help"
 * @run: the command; argv[0] is @name. Returns the exit status.
 */
struct tool_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

int cmd_dump(int argc, char **argv);
int cmd_assemble(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_info(int argc, char **argv);

/* Print "fdrtrace: " then the message and a newline on stderr. */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Report a bad option or argument of command @cmd ("fdrtrace CMD: message
 * (try 'fdrtrace CMD --help')").
 * Return: EXIT_USAGE, for "return tool_usage_err(...)".
 */
int tool_usage_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The message for getopt_long()'s '?' return, naming the bad option.
 * Return: EXIT_USAGE.
 */
int tool_bad_option(const char *cmd, const char *optstring, char **argv);

/* Write @text to stdout. Return: EXIT_OK, or EXIT_FAIL if stdout failed. */
int tool_print_help(const char *text);

/*
 * Flush stdout and check that every write to it succeeded; on failure say
 * so on stderr.
 * Return: 0, or -EIO.
 */
int tool_finish_stdout(void);

/* True once a write to stdout has failed (EPIPE, ENOSPC, ...). */
bool tool_stdout_failed(void);

/*
 * Open @path for reading; "-" is standard input.
 * Return: a descriptor, or -1 after printing "fdrtrace: PATH: error".
 */
int tool_open_input(const char *path);

/* Close what tool_open_input() returned (not stdin). */
void tool_close_input(int fd);

/* Print @len bytes as lowercase hex, no separator. */
void tool_print_hex(FILE *f, const uint8_t *p, size_t len);

/* True when all @len bytes at @p are zero. */
bool tool_all_zero(const uint8_t *p, size_t len);

#endif /* FDRTRACE_TOOL_UTIL_H */
