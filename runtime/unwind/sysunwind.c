// SPDX-License-Identifier: MIT
/*
 * runtime/unwind/sysunwind.c - the system's unwinder (libgcc's), for cheap
 * walks.
 *
 * Two questions need the calling thread's stack often enough that its cost
 * counts: the calls open at a fork (fork_stack.c, at every fork) and
 * whether a thread that found the pool empty runs a signal handler
 * (on_full=wait must not wait there: slowpath.c). The crash stacks stay
 * libunwind's (native_stack.c), whose signal-safety libunwind documents.
 *
 * Why libgcc's and not libunwind: libunwind 1.6 blocks and unblocks every
 * signal around each look-up in its global cache, about 8 system calls a
 * frame: 110 us for a walk 13 frames deep, 240 us at 71, 770 us at 256
 * (measured here). libgcc's finds unwind information through glibc's
 * _dl_find_object(), lock-free, async-signal-safe and without a system
 * call (4-39 us of CPU for the same walks), and needs no validation pipe:
 * no descriptor of the program's to guard. Its functions are taken from
 * libgcc_s's own handle: libunwind defines _Unwind_Backtrace() too, and
 * whichever library comes first in the search order would otherwise get
 * the call. The shared libfdrtrace needs libgcc_s.so.1, so it is loaded;
 * with libfdrtrace.a, only when the program loads it (C++, or gcc linked
 * it in): else, and in a fully static program, the walks report nothing.
 * A first walk at initialisation binds libgcc_s's own calls (glibc's
 * _dl_find_object()), so that none is bound lazily in a signal handler.
 *
 * A signal frame: the kernel delivers a signal by pushing a frame that
 * returns into the sigreturn trampoline, and libgcc's unwinder marks the
 * frame the signal interrupted (_Unwind_GetIPInfo()'s ip_before_insn: its
 * address is the interrupted instruction, not a return address). So a
 * walk that meets such a frame is inside a handler, nested however deep;
 * a handler left by siglongjmp has no frame any more. A walk ends without
 * one either at the stack's start (the program's entry point, or libc's
 * thread start) or at a frame without unwind information; only the first
 * says "not in a handler".
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <unwind.h>

#include "sysunwind.h"

/* Frames walked at most to find a signal frame */
#define SU_MAX_FRAMES 4096u

static _Unwind_Reason_Code (*su_backtrace)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*su_region_start)(struct _Unwind_Context *);
static _Unwind_Ptr (*su_ip_info)(struct _Unwind_Context *, int *);
static uintptr_t su_entry;			/* the program's entry point (_start) */
static uintptr_t su_libc_lo, su_libc_hi;	/* libc's loaded span */

/* @name of @h into the function pointer at @fp (POSIX lets dlsym's pointer become one) */
static notrace bool su_sym(void *h, const char *name, void *fp, size_t size)
{
	void *sym = dlsym(h, name);

	memcpy(fp, &sym, size);
	return sym != NULL;
}

static notrace int su_find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name, *base = strrchr(name, '/');

	(void)size;
	(void)arg;
	if (strncmp(base ? base + 1 : name, "libc.so.", 8) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (!su_libc_lo || lo < su_libc_lo)
			su_libc_lo = lo;
		if (lo + ph->p_memsz > su_libc_hi)
			su_libc_hi = lo + ph->p_memsz;
	}
	return 1;
}

notrace void fdr_sysunwind_init(void)
{
	static bool su_tried;	/* once per image: a fork child has its parent's */
	uintptr_t warm[4];
	void *h;

	if (su_tried)
		return;
	su_tried = true;
	/* kept open: a libgcc_s that a plugin loaded stays while we may call it */
	h = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);

	if (!h || !su_sym(h, "_Unwind_Backtrace", &su_backtrace, sizeof(su_backtrace)) ||
	    !su_sym(h, "_Unwind_GetRegionStart", &su_region_start, sizeof(su_region_start)) ||
	    !su_sym(h, "_Unwind_GetIPInfo", &su_ip_info, sizeof(su_ip_info))) {
		su_backtrace = NULL;
		return;
	}
	su_entry = (uintptr_t)getauxval(AT_ENTRY);
	dl_iterate_phdr(su_find_libc, NULL);
	fdr_sysunwind_starts(warm, 4);	/* binds libgcc_s's calls now */
	(void)fdr_sysunwind_in_handler();
}

struct su_starts {
	uintptr_t *starts;
	uint32_t n, max;
};

static notrace _Unwind_Reason_Code su_start_of(struct _Unwind_Context *ctx, void *arg)
{
	struct su_starts *w = arg;

	if (w->n == w->max)
		return _URC_END_OF_STACK;
	w->starts[w->n++] = (uintptr_t)su_region_start(ctx);
	return _URC_NO_REASON;
}

notrace uint32_t fdr_sysunwind_starts(uintptr_t *starts, uint32_t max)
{
	struct su_starts w = { starts, 0, max };

	if (!su_backtrace || !max)
		return 0;
	su_backtrace(su_start_of, &w);
	return w.n;
}

struct su_signal {
	uint32_t frames;
	bool found;		/* a frame a signal interrupted */
	uintptr_t last_ip;	/* the outermost frame walked */
	uintptr_t last_start;	/* and its function's start */
};

static notrace _Unwind_Reason_Code su_signal_of(struct _Unwind_Context *ctx, void *arg)
{
	struct su_signal *w = arg;
	int before = 0;
	uintptr_t ip = (uintptr_t)su_ip_info(ctx, &before);

	if (!ip)
		return _URC_END_OF_STACK;	/* past the outermost frame (its return address undefined) */
	w->last_ip = ip;
	w->last_start = (uintptr_t)su_region_start(ctx);
	if (before) {
		w->found = true;
		return _URC_END_OF_STACK;
	}
	if (++w->frames == SU_MAX_FRAMES)
		return _URC_END_OF_STACK;
	return _URC_NO_REASON;
}

notrace int fdr_sysunwind_in_handler(void)
{
	struct su_signal w = { 0 };

	if (!su_backtrace)
		return -1;
	su_backtrace(su_signal_of, &w);
	if (w.found)
		return 1;
	if (w.frames < SU_MAX_FRAMES &&
	    ((su_entry && w.last_start == su_entry) ||
	     (w.last_ip >= su_libc_lo && w.last_ip < su_libc_hi)))
		return 0;
	return -1;
}
