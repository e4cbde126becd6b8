/* SPDX-License-Identifier: MIT */
/*
 * analysis_names.h - the analysis' functions and their names
 * (analysis_names.c): the table of functions by id, with its fast path
 * inline, and the name each function is printed with. Uses only the types
 * below it (analysis_types.h).
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDR_TOOL_ANALYSIS_NAMES_H
#define FDR_TOOL_ANALYSIS_NAMES_H

#include <stdint.h>

#include <fdrtrace/reader.h>

#include "analysis_types.h"

/* an_func_get()'s slow path: ids beyond the direct table, and new ones. */
struct an_func *an_func_get_slow(struct analysis *a, uint32_t id);

/**
 * an_func_get - the function of an id, created on first use
 * @a: the analysis
 * @id: the id
 *
 * Return: the function, or NULL when out of memory.
 */
static inline struct an_func *an_func_get(struct analysis *a, uint32_t id)
{
	/* Runtimes number functions densely from 1: most ids hit this table. */
	if (__builtin_expect(id < AN_FN_DIRECT && a->fn_direct[id] != NULL, 1))
		return a->fn_direct[id];
	return an_func_get_slow(a, id);
}

/**
 * an_func_name - the printable name of a function
 * @a: the analysis (for the demangle setting)
 * @f: the function
 *
 * The base name: with @instr_map, the map's (a YAML map's function-name,
 * else the binary's symbol at the map's address); else the recorded name;
 * else the ELF symbol (symbolizer.h) of the recorded module file at the
 * recorded address, when the file's build-id matches the recorded one
 * (unless @no_elf); demangled if asked and possible. Else "#ID@0xADDRESS"
 * when the address is known, else "#ID".
 *
 * Then " (FILE:LINE)" (the basename of the declaration's file) is added
 * with @locations, or when the name collides: another function of the
 * trace has the same base name (known for all of them once an_run()
 * returned; during the run, among those named so far), or the module
 * defines two functions of that symbol name. Without DWARF for the
 * address, a collision adds " (MODULE+0xOFFSET)", or " (#ID)" when not
 * even the module is known. A name, once returned, never changes.
 *
 * Return: the name. Never empty.
 */
const char *an_func_name(struct analysis *a, struct an_func *f);

/* The file name of @f's module (its path's last part); NULL when not known. */
const char *an_func_module(struct analysis *a, const struct an_func *f);

/* A payload's string as a name: printable, valid UTF-8, malloc()ed. */
char *an_strdup_str(struct fdrtrace_str s);
/* Forget @f's name: a record named it after it was first named. */
void an_func_rename(struct analysis *a, struct an_func *f);
/* Every function's base name, before the commands that print after the run. */
void an_names_settle(struct analysis *a);

#endif /* FDR_TOOL_ANALYSIS_NAMES_H */
