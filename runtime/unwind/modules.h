/* SPDX-License-Identifier: MIT */
/*
 * runtime/unwind/modules.h - loaded modules and function names.
 *
 * Off the hot path: called from the flush thread (and at init/exit) to say
 * which objects are mapped (dl_iterate_phdr: path, load base, size, GNU
 * build-id) and what a function address is called (dladdr, then the
 * module's .symtab where dladdr finds nothing). May allocate and take
 * locks; never called from a hook or a signal handler.
 */
#ifndef FDR_MODULES_H
#define FDR_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "build_id.h"
#include "compiler.h"

#define FDR_MODULE_UNKNOWN 0xffffffffu

/**
 * struct fdr_module - one mapped object
 * @id: stable index for the life of the process, from 0
 * @load_base: dlpi_addr (0 for a non-PIE executable)
 * @start, @size: the span of its PT_LOAD segments in memory
 * @build_id: the NT_GNU_BUILD_ID note, @build_id_len bytes (0 if none)
 * @path: the file's path (the executable's real path for "")
 */
struct fdr_module {
	uint32_t id;
	uint64_t load_base;
	uint64_t start;
	uint64_t size;
	uint8_t build_id[FDR_BUILD_ID_MAX];
	uint8_t build_id_len;
	char path[4096];
};

/**
 * fdr_modules_scan - refresh the module list, report what changed
 * @mapped: called for each module not reported before
 * @unmapped: called for each module reported before and now gone (may be NULL)
 * @arg: passed to both
 *
 * Walks the loaded objects (dl_iterate_phdr); a module gone is reported
 * once and its id never reused.
 * Context: the flush thread, or initialisation; may allocate. The
 * callbacks run with the module list's lock held and must not call back
 * into this file.
 * Return: 0 or a negative errno.
 */
int fdr_modules_scan(void (*mapped)(const struct fdr_module *m, void *arg),
		     void (*unmapped)(const struct fdr_module *m, void *arg), void *arg);

/**
 * fdr_symbol_lookup - name and module of a function address
 * @addr: the address the hook was given
 * @name: set to the (mangled) symbol name, "" when unknown
 * @name_len: size of @name
 * @module_id: set to the module's id, or FDR_MODULE_UNKNOWN
 *
 * dladdr() first, then the module's .symtab, read (mapped) once per module.
 * Context: the flush thread, or initialisation; takes the module list's
 * lock, may allocate and open the module's file. Never a hook or a handler.
 * Return: 0 when a name was found, -ENOENT otherwise (@module_id may still
 * be set).
 */
int fdr_symbol_lookup(uintptr_t addr, char *name, size_t name_len, uint32_t *module_id);

/**
 * fdr_modules_foreach_reported - visit every module reported and still mapped
 * @fn: called with each, in id order, under the module list's lock
 * @arg: passed to @fn
 *
 * For a new file of the same run (a snapshot), which must name every
 * module again.
 * Context: the flush thread; @fn must not call back into this file.
 */
void fdr_modules_foreach_reported(void (*fn)(const struct fdr_module *m, void *arg), void *arg);

/**
 * fdr_modules_exe - the main program's path (/proc/self/exe, read once)
 * @path:	set to the path, cut to @cap - 1 bytes and NUL-ended; "" when
 *		it cannot be read
 * @cap:	room at @path
 *
 * The same path the main program's module record gives, read once per
 * image (a process that chroots later keeps it). Takes mod_lock.
 * Return: the length written.
 */
size_t fdr_modules_exe(char *path, size_t cap) fdr_hidden;

/**
 * fdr_modules_reset - forget every module and free what the list holds
 *
 * The next fdr_modules_scan() reports every module again, with ids from 0.
 * The list's lock is made anew: a fork child may have inherited it held.
 * Context: a fork child, while it runs alone (or the end of the run): no
 * other call of this file may run meanwhile; the lock is not taken.
 */
void fdr_modules_reset(void);

#endif /* FDR_MODULES_H */
