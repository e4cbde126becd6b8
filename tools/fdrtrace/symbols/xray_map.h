/* SPDX-License-Identifier: MIT */
/*
 * xray_map.h - the function ids of a trace written by LLVM's XRay runtime,
 * from the instrumentation map (--instr-map): the xray_instr_map section of
 * the instrumented binary, or a YAML map as llvm-xray extract (and
 * fdrtrace extract-map) writes it.
 *
 * From a binary, ids are numbered as llvm-xray numbers them (and as the
 * XRay runtime does): the sleds are read in section order, and the id goes
 * up by one, from 1, each time a sled's function differs from the previous
 * sled's. Sled layout: 32 bytes (address, function, kind, always-instrument,
 * version, padding); from version 2 on (clang 12 and later, so clang 14
 * here) address and function are relative to the field holding them.
 * Older versions are read as absolute addresses, as written in the file.
 *
 * From YAML: one flow mapping per line ("- { id: 1, address: 0x..,
 * function: 0x.., kind: function-enter, ..., function-name: 'main' }"),
 * plain, single- or double-quoted scalars; the first entry of an id wins.
 *
 * Memory: 24 bytes per function id, plus the names of a YAML map.
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDRTRACE_TOOL_XRAY_MAP_H
#define FDRTRACE_TOOL_XRAY_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer.h"

/* One function of the map. */
struct xmap_fn {
	uint32_t id;
	uint64_t addr;		/* link-time address of the function */
	char *name;		/* YAML: function-name, else NULL */
};

/**
 * struct xmap - an instrumentation map
 * @bin: the binary, for names and lines (NULL for a YAML map)
 * @v: the functions, sorted by id
 * @n: how many
 */
struct xmap {
	struct sym_file *bin;
	struct xmap_fn *v;
	size_t n;
};

/**
 * xmap_load - read an instrumentation map
 * @c: the symbolizer that opens the binary (and keeps it open)
 * @path: an ELF binary with an xray_instr_map section, or a YAML map
 * @m: filled in on success
 * @err: on failure, the reason ("PATH: ...", "PATH:LINE: ...")
 * @errlen: size of @err
 *
 * Files are opened as sym_file_get() opens them: never blocking, regular
 * files only; a YAML line longer than 64 KiB is refused.
 *
 * Return: 0, or a negative errno.
 */
int xmap_load(struct sym_ctx *c, const char *path, struct xmap *m, char *err, size_t errlen);

/**
 * xmap_find - the function of an id
 * @m: the map
 * @id: the function id
 *
 * Return: the function, or NULL when the map does not have the id.
 */
const struct xmap_fn *xmap_find(const struct xmap *m, uint32_t id);

/**
 * xmap_free - free what xmap_load() allocated (not the binary: its context's)
 * @m: the map
 */
void xmap_free(struct xmap *m);

#endif /* FDRTRACE_TOOL_XRAY_MAP_H */
