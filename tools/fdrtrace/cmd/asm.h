/* SPDX-License-Identifier: MIT */
/*
 * asm.h - what the parts of "fdrtrace assemble" share: the state of one
 * run (cmd_assemble.c: the output and the records), a parsed line and its
 * fields (asm_text.c), and the extension records (asm_ext.c). Calls go
 * one way: cmd_assemble.c -> asm_ext.c -> asm_text.c.
 *
 * Contract: included only by cmd_assemble.c, asm_text.c and asm_ext.c;
 * single-threaded. Functions that return int give 0 or a negative errno,
 * with the error already reported (asm_err()).
 */
#ifndef FDR_TOOL_ASM_H
#define FDR_TOOL_ASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ASM_MAX_FIELDS 16

struct asm_field {
	const char *key;
	const char *val;
	size_t len;	/* of val: a quoted value may hold NUL bytes */
	bool used;
};

struct asm_line {
	const char *type;
	const char *subtype;
	struct asm_field f[ASM_MAX_FIELDS];
	int n;
};

struct asm_state {
	const char *text_name;
	unsigned long lineno;
	FILE *out;
	const char *out_name;
	/* Bytes not yet written; out_base is the file offset of buf[0]. */
	uint8_t *buf;
	size_t len, cap;
	uint64_t out_base;
	/* A "buf ext size=auto" waiting for its buffer's end. */
	bool ext_pending;
	uint64_t ext_pos;
	/* The output can be patched with pwrite at out_start + a position. */
	bool seekable;
	int out_fd;
	uint64_t out_start;
	/* From the last "hdr" line. */
	bool have_hdr;
	uint16_t version;
	uint64_t buffer_size;
	uint64_t data_start;
};

/* "TEXT:LINE: message" on standard error. Return: -EINVAL. */
int asm_err(struct asm_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Split @text into @l (decoded in place). Return: 1, 0 for a blank or comment line, or -EINVAL. */
int asm_parse_line(struct asm_state *s, char *text, struct asm_line *l);

/* The field @key of @l, marked used; NULL when the line does not give it. */
struct asm_field *asm_find(struct asm_line *l, const char *key);

/*
 * asm_int - field @key as an integer of @bits bits (any value in
 * -2^(bits-1) .. 2^bits-1, two's complement); @def when absent; "auto"
 * only when @is_auto is not NULL
 */
int asm_int(struct asm_state *s, struct asm_line *l, const char *key, unsigned bits,
	    uint64_t def, uint64_t *out, bool *is_auto);

/* Field @key as hex bytes ('_' allowed) in a fresh allocation, at most @max (0: any). */
int asm_hex(struct asm_state *s, struct asm_line *l, const char *key, size_t max, uint8_t **out,
	    size_t *n);

/* The reserved bytes "rsv=" into @dst (@n bytes, zero-filled). */
int asm_rsv(struct asm_state *s, struct asm_line *l, uint8_t *dst, size_t n);

/* An error for the first field of @l that no record took. */
int asm_check_used(struct asm_state *s, struct asm_line *l);

/* An error when no "hdr" line came yet (@what needs the version). */
int asm_need_hdr(struct asm_state *s, const char *what);

/*
 * asm_ext_encode - "ext KIND field=value ...": an fdrtrace extension record
 * (asm_ext.c), encoded from @l's fields into *@payload (malloc()ed, *@n
 * bytes), which cmd_assemble.c writes as a custom event's payload
 */
int asm_ext_encode(struct asm_state *s, struct asm_line *l, uint8_t **payload, size_t *n);

#endif /* FDR_TOOL_ASM_H */
