/* SPDX-License-Identifier: MIT */
/*
 * bench/overhead/hooks_ref.c - the minimal reference: per event, read the
 * clock (rdtsc, or rdtscp with -DREF_RDTSCP) and store one 8-byte record
 * into a pre-faulted per-thread buffer that wraps. No id mapping, no file:
 * the hardware's limit for "one timestamped record per event".
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define notrace __attribute__((no_instrument_function))
#define REF_BUF_RECORDS (1u << 20) /* 8 MiB per thread, reused */

static __attribute__((tls_model("initial-exec"))) _Thread_local uint64_t *ref_buf;
static __attribute__((tls_model("initial-exec"))) _Thread_local uint32_t ref_pos;

notrace void __cyg_profile_func_enter(void *fn, void *site);
notrace void __cyg_profile_func_exit(void *fn, void *site);

static inline notrace uint64_t ref_clock(void)
{
	uint32_t lo, hi;
#ifdef REF_RDTSCP
	uint32_t aux;

	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
#else
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
#endif
	return ((uint64_t)hi << 32) | lo;
}

static notrace void ref_alloc(void)
{
	void *p = mmap(NULL, REF_BUF_RECORDS * 8ul, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	ref_buf = p == MAP_FAILED ? NULL : p;
}

static inline notrace void ref_event(void *fn, uint32_t action)
{
	uint64_t tsc = ref_clock();

	if (__builtin_expect(!ref_buf, 0)) {
		ref_alloc();
		if (!ref_buf)
			return;
	}
	ref_buf[ref_pos] = ((uint64_t)(uint32_t)tsc << 32) | ((uint32_t)(uintptr_t)fn << 4) |
			   (action << 1);
	ref_pos = (ref_pos + 1) & (REF_BUF_RECORDS - 1);
}

notrace void __cyg_profile_func_enter(void *fn, void *site)
{
	ref_event(fn, 0);
}

notrace void __cyg_profile_func_exit(void *fn, void *site)
{
	ref_event(fn, 1);
}
