/* SPDX-License-Identifier: MIT */
/*
 * runtime/base/compiler.h - attributes every runtime file uses.
 *
 * Every function of the runtime is notrace: the library is built without
 * -finstrument-functions, and inline functions that may be inlined into an
 * instrumented caller carry the attribute too (clang instruments after
 * inlining). tests/runtime checks the built library for __cyg_profile_ calls.
 */
#ifndef FDR_COMPILER_H
#define FDR_COMPILER_H

#define notrace __attribute__((no_instrument_function))
#define fdr_hidden __attribute__((visibility("hidden")))
#define fdr_export __attribute__((visibility("default")))
#define fdr_tls __attribute__((tls_model("initial-exec"))) _Thread_local
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define fdr_always_inline inline __attribute__((always_inline))
#define fdr_noinline __attribute__((noinline))
#define fdr_cold __attribute__((cold))
#define FDR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FDR_CACHELINE 64

#endif /* FDR_COMPILER_H */
