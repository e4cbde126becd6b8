/* SPDX-License-Identifier: MIT */
/*
 * symbolizer.h - names, source files and lines of function addresses, from
 * the ELF files a trace names, on elfutils (libelf and libdw).
 *
 * One struct sym_ctx per command run holds every ELF file it opened: each
 * distinct file (by path, then by device and inode) is opened once, mapped
 * read-only and shared by every module record that names it, however many
 * there are. A path that cannot be used is remembered too and never tried
 * again. Files are opened with O_NONBLOCK and used only when fstat() says
 * they are regular files of at most SYM_FILE_MAX bytes: a FIFO, a device or
 * a directory named in a trace never blocks and is never read.
 *
 * Names: the function symbols (STT_FUNC, STT_GNU_IFUNC) of .symtab, else of
 * the separate debug file's .symtab, else of .dynsym. The separate debug
 * file is looked for by build-id (DIR/.build-id/xx/rest.debug under each
 * debug directory, /usr/lib/debug by default), then by .gnu_debuglink
 * (next to the file, in its .debug/ directory, and DIR/<its directory>/ for
 * each debug directory); it must have the file's build-id (or, when the
 * file has none, the CRC the link records).
 *
 * Locations: the declaration file and line (DW_AT_decl_file, decl_line) of
 * the DW_TAG_subprogram whose code holds the address, from the file's own
 * DWARF or the debug file's; compressed sections (SHF_COMPRESSED, .zdebug)
 * are inflated by libdw. DWARF is opened only when a location is asked for,
 * and only the compile units holding asked-for addresses are indexed.
 *
 * Memory: per file, the mapping (pages are read on use), 24 bytes per
 * function symbol once its names are needed, 8 more per symbol once a
 * name's count is asked for, and per indexed compile unit 24 bytes per
 * function. Names returned point into the mapping and live until
 * sym_ctx_free().
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDRTRACE_TOOL_SYMBOLIZER_H
#define FDRTRACE_TOOL_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Larger files are not read (no ELF the tool can use is this big). */
#define SYM_FILE_MAX (4ull << 30)

struct sym_ctx;
struct sym_file;

/**
 * sym_ctx_new - a symbolizer with no file open yet
 * @debug_dirs: directories searched for separate debug files, in order;
 *	NULL or empty: /usr/lib/debug
 * @n_dirs: how many
 *
 * Return: the context, or NULL when out of memory.
 */
struct sym_ctx *sym_ctx_new(const char *const *debug_dirs, size_t n_dirs);

/**
 * sym_ctx_free - close every file and free everything
 * @c: the context (NULL is fine)
 */
void sym_ctx_free(struct sym_ctx *c);

/**
 * sym_file_get - the ELF file at @path, opened on first use, shared after
 * @c: the context
 * @path: the file
 * @out: set to the file on success
 *
 * Return: 0; -EINVAL when @path is not a regular file (a FIFO, a device, a
 * directory); -EFBIG beyond SYM_FILE_MAX; -ENOEXEC when not ELF; another
 * negative errno from open(). The same error again, without a new open,
 * for a path that failed before.
 */
int sym_file_get(struct sym_ctx *c, const char *path, struct sym_file **out);

/**
 * sym_file_build_id_is - does the file carry this GNU build-id?
 * @f: the file
 * @id: the id
 * @len: its length (0: nothing to check, true)
 *
 * Return: true when equal (or @len is 0); false when different or absent.
 */
bool sym_file_build_id_is(const struct sym_file *f, const uint8_t *id, size_t len);

/**
 * sym_file_build_id - the file's GNU build-id
 * @f: the file
 * @id: set to its bytes (the file's memory)
 *
 * Return: its length, 0 when the file has none.
 */
size_t sym_file_build_id(const struct sym_file *f, const uint8_t **id);

/**
 * sym_file_first_mismatch - the first time a trace's build-id is found
 * not to be this file's?
 * @f: the file
 *
 * Return: true once per file (so a warning is given once, however many
 * module records name it), false afterwards.
 */
bool sym_file_first_mismatch(struct sym_file *f);

/**
 * sym_file_is_dyn - ET_DYN (a PIE or a shared library)?
 * @f: the file
 *
 * Return: true when run-time addresses are load base + link-time address.
 */
bool sym_file_is_dyn(const struct sym_file *f);

/**
 * sym_file_path - the path the file was first opened by
 * @f: the file
 *
 * Return: the path.
 */
const char *sym_file_path(const struct sym_file *f);

/**
 * sym_name - the function symbol holding a link-time address
 * @f: the file
 * @addr: the address
 *
 * Return: the symbol's name (as in the file: mangled), or NULL.
 */
const char *sym_name(struct sym_file *f, uint64_t addr);

/**
 * sym_name_count - how many functions of the file bear this name
 * @f: the file
 * @name: a symbol name
 *
 * Counts the distinct addresses of function symbols named @name (two
 * static functions of one name in two source files count 2).
 *
 * Return: the count, 0 when the name is not the file's.
 */
unsigned sym_name_count(struct sym_file *f, const char *name);

/**
 * sym_location - the source file and line of the function holding @addr
 * @f: the file
 * @addr: a link-time address
 * @file: set to the declaration's file (a path as the compiler wrote it)
 * @line: set to its line
 *
 * Return: 0, or -ENOENT when no DWARF describes the address.
 */
int sym_location(struct sym_file *f, uint64_t addr, const char **file, unsigned *line);

/**
 * sym_section - the contents of a named section of the file
 * @f: the file
 * @name: the section's name
 * @data: set to its bytes (inside the mapping)
 * @size: set to its size
 * @addr: set to its link-time address (sh_addr)
 *
 * Return: 0, -ENOENT when there is no such section with contents.
 */
int sym_section(struct sym_file *f, const char *name, const uint8_t **data, uint64_t *size,
		uint64_t *addr);

/**
 * sym_needs - does the program at @path need a library named @prefix...?
 * @path: an ELF file
 * @prefix: the start of a DT_NEEDED name, e.g. "libfdrtrace.so"
 *
 * Return: 1 yes, 0 no (also for a static executable), a negative errno
 * when it cannot be read (as sym_file_get()).
 */
int sym_needs(const char *path, const char *prefix);

/**
 * sym_references - does @path's symbol table (.symtab or .dynsym) hold @name?
 *
 * Defined or undefined: a program built with -finstrument-functions
 * references __cyg_profile_func_enter either way.
 * Return: 1 yes, 0 no, a negative errno when @path is not a readable ELF file.
 */
int sym_references(const char *path, const char *name);

/**
 * sym_defines - does the file define a function symbol of this name?
 * @path: an ELF file
 * @name: the symbol
 *
 * Return: 1 yes, 0 no, a negative errno as sym_file_get().
 */
int sym_defines(const char *path, const char *name);

#endif /* FDRTRACE_TOOL_SYMBOLIZER_H */
