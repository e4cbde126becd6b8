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

#include <signal.h>
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

/* SIGPIPE's disposition when fdrtrace started (main() ignores it), for `record`'s program */
extern struct sigaction tool_sigpipe_at_start;

/**
 * tool_err - print "fdrtrace: MESSAGE" and a newline on stderr
 * @fmt: printf format of the message
 */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * tool_stderr_sync - write out standard output before a line on stderr
 *
 * With both on one pipe (2>&1), stdout's buffer would otherwise be written
 * later, or cut anywhere, and a message would land inside a line of the
 * output. Runs the command's hook (tool_stderr_hook()), which writes out
 * its own buffers, then flushes stdout. Every message to stderr goes after
 * it (tool_err() and tool_usage_err() call it). Called between whole lines
 * of output: it changes when the output is written, never what.
 */
void tool_stderr_sync(void);

/**
 * tool_stderr_hook - set what tool_stderr_sync() writes out before stdout
 * @fn: the command's flush of its output buffers (NULL: none)
 * @ctx: passed to @fn
 */
void tool_stderr_hook(void (*fn)(void *ctx), void *ctx);

/**
 * tool_usage_err - report a bad argument of a command
 * @cmd: the command's name
 * @fmt: printf format of the message
 *
 * Prints "fdrtrace CMD: message (try 'fdrtrace CMD --help')" on stderr.
 *
 * Return: EXIT_USAGE, for "return tool_usage_err(...)".
 */
int tool_usage_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * tool_bad_option - report getopt_long()'s '?' return
 * @cmd: the command's name
 * @optstring: the short options given to getopt_long()
 * @argv: the argument vector given to getopt_long()
 *
 * Names the unknown option, or the option whose argument is missing.
 *
 * Return: EXIT_USAGE.
 */
int tool_bad_option(const char *cmd, const char *optstring, char **argv);

/**
 * tool_print_help - print a command's help text on stdout
 * @text: the text
 *
 * Return: EXIT_OK, or EXIT_FAIL if writing stdout failed.
 */
int tool_print_help(const char *text);

/**
 * tool_finish_stdout - flush stdout and check every write to it
 *
 * On failure (EPIPE, ENOSPC, ...) says so on stderr.
 *
 * Return: 0, or -EIO.
 */
int tool_finish_stdout(void);

/**
 * tool_stdout_failed - has a write to stdout failed?
 *
 * Cheap enough to call after every line of output.
 *
 * Return: true once a write to stdout has failed.
 */
bool tool_stdout_failed(void);

/**
 * tool_open_input - open a trace for reading
 * @path: the file, or "-" for standard input
 *
 * Return: a descriptor, or -1 after printing "fdrtrace: PATH: error".
 */
int tool_open_input(const char *path);

/**
 * tool_close_input - close what tool_open_input() returned (not stdin)
 * @fd: the descriptor
 */
void tool_close_input(int fd);

/**
 * struct tool_output - where a command's -o output goes (see tool_output_open())
 * @path: the path as given, NULL for standard output
 * @final: the path the temporary file is renamed to (a symlink resolved)
 * @tmp: the temporary file in @final's directory, NULL when writing directly
 */
struct tool_output {
	const char *path;
	char *final;
	char *tmp;
};

/**
 * tool_output_open - send standard output to a command's -o path, safely
 * @o: filled in, for tool_output_close()
 * @path: the -o argument; NULL or "-" is standard output itself
 *
 * A regular file (or a path that does not exist yet) is written as a new
 * temporary file in the same directory (".NAME.XXXXXX", with the mode the
 * existing file has, else 0666 less the umask), renamed over @path only by
 * tool_output_close(@o, true): an existing file stays untouched until the
 * output is complete, and is never removed. A device, FIFO, socket or
 * terminal is opened without O_CREAT or O_TRUNC and written directly. A
 * symbolic link is followed: its target is replaced, the link stays; a
 * link to nothing is refused (-ENOENT), not followed to create a file.
 * Nothing that the command did not create is ever unlinked or truncated.
 *
 * Return: 0 (standard output now writes there), or -errno after printing
 * "fdrtrace: PATH: error".
 */
int tool_output_open(struct tool_output *o, const char *path);

/**
 * tool_output_is_input - refuse an output that is one of the inputs
 * @cmd: the command, for the message
 * @path: the -o argument; NULL or "-" for standard output
 * @inputs: the input paths ("-": standard input)
 * @n: their number
 *
 * An output file that is an input (the same device and inode: the same
 * path, a symbolic or a hard link to it; standard output redirected to it)
 * would replace the input, since the output is renamed over it when done.
 * Call before anything is opened for writing.
 *
 * Return: 0, or EXIT_USAGE after a usage message naming both.
 */
int tool_output_is_input(const char *cmd, const char *path, char *const *inputs, int n);

/**
 * tool_output_close - finish what tool_output_open() started
 * @o: the output
 * @ok: the command succeeded: flush, check, and (for a temporary file)
 *	rename it over the path; else remove the temporary file, if any
 *
 * Return: 0, or -EIO when flushing, writing or renaming failed (reported,
 * and the temporary file removed), or when @ok was false.
 */
int tool_output_close(struct tool_output *o, bool ok);

/**
 * tool_grow - make room for element @need of an array that doubles
 * @pp: the array (void ** in disguise: the address of the element pointer)
 * @cap: its capacity in elements, updated
 * @need: an index that must fit
 * @size: one element's bytes
 * @first: the capacity of a first allocation
 *
 * The new elements are zeroed; the array is unchanged on failure.
 * Return: 0, or -ENOMEM.
 */
int tool_grow(void *pp, uint32_t *cap, uint32_t need, size_t size, uint32_t first);

/**
 * tool_time10 - a duration in ns, us, ms or s, 10 columns: "123.456 us"
 * (the unit the first whose value, rounded to thousandths, is below 1000)
 * @buf: room for 32 bytes
 * @seconds: the duration in seconds
 *
 * Return: @buf.
 */
char *tool_time10(char *buf, double seconds);

/**
 * tool_scale - @v * @mul / @div, rounded to the nearest integer
 * @v: a count (ticks)
 * @mul: the multiplier (1e9 for nanoseconds from ticks)
 * @div: the divisor (the cycle frequency), not 0
 *
 * For durations and times that a corrupt trace may make absurd (a cycle
 * frequency of 1 Hz and a span of 2^63 ticks): a result that does not fit
 * in 64 bits is UINT64_MAX, never an undefined conversion.
 *
 * Inline: convert scales two times per call it writes.
 *
 * Return: the scaled value, at most UINT64_MAX.
 */
static inline uint64_t tool_scale(uint64_t v, double mul, uint64_t div)
{
	double r = (double)v * mul / (double)div + 0.5;

	return r >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)r;
}

/**
 * tool_print_hex - print bytes as lowercase hex, two digits each, no separator
 * @f: the stream
 * @p: the bytes
 * @len: how many
 */
void tool_print_hex(FILE *f, const uint8_t *p, size_t len);

/**
 * tool_all_zero - are all bytes zero?
 * @p: the bytes
 * @len: how many
 *
 * Return: true when all @len bytes at @p are zero (or @len is 0).
 */
bool tool_all_zero(const uint8_t *p, size_t len);

#endif /* FDRTRACE_TOOL_UTIL_H */
