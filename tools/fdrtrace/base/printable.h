/* SPDX-License-Identifier: MIT */
/*
 * printable.h - names made safe for every output format.
 *
 * Function, thread and program names come from the trace and from ELF
 * files: any bytes at all. Every analysis output (text, CSV, Chrome JSON,
 * DOT, XRay YAML) prints them, so they are cleaned once, when the core
 * stores them: the result is valid UTF-8 made only of characters that JSON
 * strings and YAML single-quoted scalars may hold as they are.
 *
 * Contract: pure functions, any thread.
 */
#ifndef FDRTRACE_TOOL_PRINTABLE_H
#define FDRTRACE_TOOL_PRINTABLE_H

#include <stddef.h>

/**
 * printable_dup - a printable, valid UTF-8 copy of some bytes
 * @s: the bytes (need not be NUL-terminated; may be NULL when @len is 0)
 * @len: how many
 *
 * Every byte that is not part of a well-formed UTF-8 sequence (RFC 3629:
 * no overlong forms, surrogates or code points above U+10FFFF) becomes
 * '?', one per byte; so do the ASCII controls, DEL, '"' and '\\', the C1
 * controls U+0080..U+009F and the noncharacters U+FFFE and U+FFFF (which
 * YAML does not allow). A NUL byte ends nothing: it becomes '?' too.
 *
 * Return: a malloc'ed NUL-terminated string of at most @len bytes, or NULL
 * when out of memory.
 */
char *printable_dup(const char *s, size_t len);

/**
 * printable_valid - is this NUL-terminated string already what
 *	printable_dup() returns?
 * @s: the string
 *
 * Return: nonzero when printable_dup(@s, strlen(@s)) would equal @s.
 */
int printable_valid(const char *s);

#endif /* FDRTRACE_TOOL_PRINTABLE_H */
