// SPDX-License-Identifier: MIT
/*
 * compiler-hooks/cyg_profile.c - the two functions -finstrument-functions calls.
 *
 * GCC and clang call __cyg_profile_func_enter(fn, call_site) at the entry
 * of every instrumented function and __cyg_profile_func_exit at every
 * return. Both are the fast path of fastpath_inline.h inlined: nothing else
 * runs on every call. They are notrace (the library is built without
 * -finstrument-functions anyway) and exported; a program that links
 * libfdrtrace, or preloads it, gets them.
 *
 * Built with the process layer (runtime/meson.build): a program linked
 * with libfdrtrace.a takes an archive's object only for a symbol it needs,
 * and nothing the hooks call needs the process layer's (the record layer
 * reaches it through drain.h), so the hooks name its constructor, which
 * arms recording: whoever takes the hooks takes the constructor, and with
 * it the rest of the runtime.
 */
#include "compiler.h"
#include "fastpath_inline.h"
#include "lifecycle.h"

__attribute__((used)) static void (*const cyg_keep_ctor)(int, char **, char **) = fdr_lifecycle_ctor;

fdr_export notrace void __cyg_profile_func_enter(void *fn, void *call_site);
fdr_export notrace void __cyg_profile_func_exit(void *fn, void *call_site);

fdr_export notrace void __cyg_profile_func_enter(void *fn, void *call_site)
{
	(void)call_site;
	fdr_record(fn, FDRTRACE_FN_ENTRY);
}

fdr_export notrace void __cyg_profile_func_exit(void *fn, void *call_site)
{
	(void)call_site;
	fdr_record(fn, FDRTRACE_FN_EXIT);
}
