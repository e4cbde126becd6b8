/* SPDX-License-Identifier: MIT */
/*
 * elfsym.h - the little of ELF the analysis commands need: a program's
 * DT_NEEDED libraries (does it link libfdrtrace?), its GNU build-id, and
 * its function symbols (.symtab, else .dynsym) for naming function ids
 * the trace left unnamed.
 *
 * Files are read with pread into memory that is freed at once, except the
 * symbol table of a module, which lives until elf_syms_free(). Malformed
 * files are refused (-ENOEXEC), never trusted: every offset and size is
 * checked against the file's size.
 *
 * Contract: single-threaded tool code; ELF64 little-endian only.
 */
#ifndef FDRTRACE_TOOL_ELFSYM_H
#define FDRTRACE_TOOL_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * elf_needs - does the program at @path need a library named @prefix...?
 * @path: an ELF file
 * @prefix: the start of a DT_NEEDED name, e.g. "libfdrtrace.so"
 *
 * Return: 1 yes, 0 no (also for a static executable), -ENOEXEC when not
 * an ELF64 file, another negative errno when it cannot be read.
 */
int elf_needs(const char *path, const char *prefix);

/* One function symbol. */
struct elf_sym {
	uint64_t addr;	/* st_value: link-time address */
	uint64_t size;
	char *name;
};

/**
 * struct elf_syms - the function symbols of one module, sorted by address
 * @is_dyn: ET_DYN (PIE or shared library): run-time addresses are
 *	load_base + addr
 */
struct elf_syms {
	struct elf_sym *v;
	size_t n;
	bool is_dyn;
	char *strings;
};

/**
 * elf_syms_load - read the function symbols of a module
 * @path: the module's file
 * @build_id: the build-id the trace recorded, or NULL to skip the check
 * @build_id_len: its length
 * @out: filled in on success
 *
 * Return: 0; -ESTALE when the file's build-id differs from @build_id (the
 * file was rebuilt since the trace); -ENOEXEC for a file that is not
 * ELF64; -ENOENT when it has no symbols; another negative errno.
 */
int elf_syms_load(const char *path, const uint8_t *build_id, size_t build_id_len,
		  struct elf_syms *out);

/**
 * elf_syms_find - the symbol that contains a link-time address
 * @s: the symbols
 * @addr: the address
 *
 * Return: the name, or NULL.
 */
const char *elf_syms_find(const struct elf_syms *s, uint64_t addr);

/**
 * elf_syms_free - free what elf_syms_load() allocated
 * @s: the symbols
 */
void elf_syms_free(struct elf_syms *s);

#endif /* FDRTRACE_TOOL_ELFSYM_H */
