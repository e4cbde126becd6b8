/* SPDX-License-Identifier: MIT */
/*
 * demangle.h - C++ symbol names demangled, for the analysis' function
 * names and the frames of native stacks.
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDR_TOOL_DEMANGLE_H
#define FDR_TOOL_DEMANGLE_H

/**
 * demangle_cxx - a C++ symbol name demangled
 * @raw: a symbol name, or NULL
 *
 * Uses libstdc++'s __cxa_demangle, looked up once at run time.
 *
 * Return: the demangled name, malloc()ed (the caller frees it); NULL when
 * @raw is not a mangled name ("_Z..."), does not demangle, or no
 * demangler is at hand.
 */
char *demangle_cxx(const char *raw);

#endif /* FDR_TOOL_DEMANGLE_H */
