/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tool.h - what the libFuzzer targets of the fdrtrace command share:
 * a private working directory, files written from the input, one command
 * run in-process with its standard output in a file and its messages
 * captured, and cheap checks of what it wrote.
 *
 * The targets link the command's sources (tools/fdrtrace, minus main.c) and
 * call the cmd_<name>() entry points as main() would. A command never
 * exits: it returns its status, which must be 0 or 1 for the arguments the
 * targets give (2, a usage error, would be the target's bug). Any other
 * status, dump's "internal error" or output that fails its check is a bug:
 * abort(), for libFuzzer.
 *
 * Contract: fuzz targets only, single-threaded. fz_setup() must run first
 * (LLVMFuzzerInitialize): it makes the target's directory under $TMPDIR
 * (or /tmp), removed at exit. Files are named relative to it, and a command
 * runs with it as the working directory (libFuzzer's own stays as it was
 * otherwise), so relative paths in a trace (module records naming "m.elf")
 * are the target's own files.
 */
#ifndef FDR_FUZZ_TOOL_H
#define FDR_FUZZ_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * fz_setup - make the target's directory
 *
 * Also ignores SIGPIPE as main() does. Aborts when the directory cannot be
 * made.
 */
void fz_setup(void);

/**
 * fz_write - write a file of the target's directory (created or truncated)
 * @name: its name
 * @p: the bytes
 * @n: how many
 *
 * Aborts on failure: the target cannot go on without its files.
 */
void fz_write(const char *name, const void *p, size_t n);

/**
 * fz_unlink - remove a file of the target's directory, if it exists
 * @name: its name
 */
void fz_unlink(const char *name);

/**
 * fz_read - read a file of the target's directory
 * @name: its name
 * @n: set to its size
 *
 * Return: its bytes (malloc'ed, NUL-terminated for convenience; the caller
 * frees them), or NULL when it does not exist.
 */
uint8_t *fz_read(const char *name, size_t *n);

/**
 * fz_run - run one command in-process, as "fdrtrace ARGS..." would
 * @cmd: the entry point (cmd_account, ...)
 * @out: the file of the target's directory its standard output goes to
 *	(truncated first)
 * @args: argv, argv[0] the command's name, NULL-terminated (copied: getopt
 *	permutes it)
 *
 * Standard error is captured while the command runs (not printed); dump's
 * "internal error" (the reader skipped bytes, an unknown event) aborts.
 *
 * Return: the command's exit status, 0 or 1 (anything else aborts).
 */
int fz_run(int (*cmd)(int, char **), const char *out, const char *const *args);

/**
 * fz_utf8 - is this valid UTF-8 (no overlong forms, surrogates, or code
 * points above U+10FFFF)?
 * @p: the bytes
 * @n: how many
 */
bool fz_utf8(const uint8_t *p, size_t n);

/**
 * fz_json - is this one JSON value (RFC 8259), whitespace around it allowed?
 * @p: the bytes (UTF-8 is checked separately, by fz_utf8())
 * @n: how many
 */
bool fz_json(const uint8_t *p, size_t n);

/**
 * fz_protobuf - is this a sequence of well-formed protobuf fields?
 * @p: the bytes
 * @n: how many
 *
 * The top level only (a Perfetto trace is a sequence of TracePacket fields
 * 1): every tag a valid field number and wire type, every varint at most
 * 10 bytes, every length within the bytes.
 */
bool fz_protobuf(const uint8_t *p, size_t n);

/**
 * fz_check_text - abort unless a file of the target's directory passes
 * @name: the file
 * @json: it must also be one JSON value
 *
 * UTF-8 is always checked: every text output of the commands is UTF-8.
 */
void fz_check_text(const char *name, bool json);

#endif /* FDR_FUZZ_TOOL_H */
