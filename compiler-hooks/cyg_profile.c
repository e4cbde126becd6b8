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
 */
#include "compiler.h"
#include "fastpath_inline.h"

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
