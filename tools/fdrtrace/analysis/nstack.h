/* SPDX-License-Identifier: MIT */
/*
 * nstack.h - naming the frames of native stacks (FDRTRACE_EXT_NATIVE_STACK).
 *
 * A native stack holds addresses and module ids. The modules come from the
 * trace's module_map records (ns_add_module()); a frame is named from the
 * ELF symbols of its module's file, through the shared symbolizer
 * (symbolizer.h: .symtab, else the separate debug file's found by build-id
 * under /usr/lib/debug, else .dynsym), used only when the file's build-id
 * is the recorded one. A return address is looked
 * up one byte back, so that a call at the very end of a function names that
 * function. Nothing is named from a guess: an address without a module, or
 * without a symbol, prints as such.
 *
 * Memory: one entry per module record, and the symbol tables of the
 * files that frames fall in (each file once, loaded on first use).
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDRTRACE_TOOL_NSTACK_H
#define FDRTRACE_TOOL_NSTACK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <fdrtrace/reader.h>

struct ns_module;
struct sym_ctx;

/**
 * struct nstack - the modules of one trace
 * @no_elf: never read files (names stay unknown)
 * @demangle: C++ names demangled, as the analyses' are
 */
struct nstack {
	struct ns_module *mods;
	uint32_t n, cap;
	bool no_elf;
	bool demangle;
	struct sym_ctx *sym;	/* the caller's (then not freed), else opened on first use */
	bool own_sym;
	char *name_buf;		/* the last name ns_resolve() had to make printable */
};

/**
 * struct ns_frame - one frame, named
 * @name: the function symbol (demangled when struct nstack.demangle), NULL
 *	when unknown; printable
 *	(printable.h), valid until the next ns_resolve()
 * @module: the module's file name (without its directory), NULL when
 *	unknown; printable, valid until ns_fini()
 * @offset: the address minus the module's load base (when @module)
 */
struct ns_frame {
	const char *name;
	const char *module;
	uint64_t offset;
};

/* Remember a module_map record (@x decoded, kind FDRTRACE_EXT_MODULE_MAP). */
void ns_add_module(struct nstack *ns, const struct fdrtrace_ext *x);

/**
 * ns_resolve - name frame @i of a native stack
 * @ns: the modules
 * @x: a decoded FDRTRACE_EXT_NATIVE_STACK
 * @i: the frame (0 innermost)
 * @addr: set to its address
 * @out: filled in
 *
 * Return: 0, or -EINVAL when @i is not a frame of @x.
 */
int ns_resolve(struct nstack *ns, const struct fdrtrace_ext *x, uint32_t i, uint64_t *addr,
	       struct ns_frame *out);

/**
 * ns_print - print a native stack, one frame a line, innermost first
 * @ns: the modules
 * @x: a decoded FDRTRACE_EXT_NATIVE_STACK
 * @out: where
 * @indent: printed before each line
 *
 * Lines read "#N 0xADDRESS NAME (MODULE+0xOFFSET)", with "??" for an
 * unknown name and "unknown module" for an address outside every module.
 */
void ns_print(struct nstack *ns, const struct fdrtrace_ext *x, FILE *out, const char *indent);

/* Free what the modules hold. */
void ns_fini(struct nstack *ns);

/* What a native stack says happened (every reader labels it so). */
enum ns_kind {
	NS_START,	/* fdrtrace_start() (or a reason a newer writer added) */
	NS_CRASH,	/* a fault, an abort, a trap in the program */
	NS_KILLED,	/* a signal that ends the process, sent to it */
};

/* The kind of the native stack @x (decoded, FDRTRACE_EXT_NATIVE_STACK). */
enum ns_kind ns_kind(const struct fdrtrace_ext *x);

/**
 * ns_signal_crashed - was the signal of a FDRTRACE_NATIVE_SIGNAL stack a crash?
 * @sig: its signal number
 *
 * A crash: a fault, an abort, a trap (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT, SIGSYS, SIGTRAP). Anything else is a signal sent to end the
 * process (SIGTERM, SIGINT, SIGPIPE...) that it left at its default
 * action: the stack is where the thread that took it was.
 */
bool ns_signal_crashed(unsigned sig);

#endif /* FDRTRACE_TOOL_NSTACK_H */
