// SPDX-License-Identifier: MIT
/*
 * runtime/record/filter.c - filter/exclude: which functions are recorded.
 *
 * Contract: the flush thread decides (fdr_filter_decide(): it may look
 * names up; a hook may not), the slow path asks (fdr_filter_skip()) and
 * may wait for the decision, waking the flush thread through the drain
 * (drain.h). One byte per id (the id map's capacity, mapped lazily at
 * fdr_filter_init(), before recording starts).
 */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "drain.h"
#include "filter.h"
#include "funcid_map.h"
#include "modules.h"
#include "state.h"

/*
 * Per function id: 0 not decided yet, FILT_KEEP or FILT_SKIP. The flush
 * thread decides (it may look names up; a hook may not), the first time
 * a hook meets the id; the hook waits for it (at most 100 ms) and every
 * later call of the function reads the flag (or its thread's cache).
 */
#define FILT_KEEP 1
#define FILT_SKIP 2

static _Atomic uint8_t *filt_flags;
static _Atomic uint32_t filt_upto = 1;

notrace int fdr_filter_init(void)
{
	void *m = mmap(NULL, (size_t)fdr_funcid_capacity() + 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED)
		return -errno;
	filt_flags = m;
	return 0;
}

/* Does @name match one of the ';'-separated glob patterns of @list? */
static notrace bool filt_match_list(const char *list, const char *name)
{
	char pat[1024];

	while (*list) {
		size_t n = strcspn(list, ";");

		if (n && n < sizeof(pat)) {
			memcpy(pat, list, n);
			pat[n] = '\0';
			if (!fnmatch(pat, name, 0))
				return true;
		}
		list += n;
		if (*list == ';')
			list++;
	}
	return false;
}

/* Decide every id handed out so far (flush thread). */
notrace void fdr_filter_decide(void)
{
	uint32_t limit = fdr_funcid_limit();
	static char name[2048];

	if (!filt_flags)
		return;
	for (uint32_t id = atomic_load_explicit(&filt_upto, memory_order_relaxed); id < limit;
	     id++) {
		uintptr_t addr = fdr_funcid_addr(id);
		uint32_t module = FDR_MODULE_UNKNOWN;
		bool keep;

		if (!addr)
			break;	/* its insert is in progress: next round */
		if (fdr_symbol_lookup(addr, name, sizeof(name), &module) < 0)
			name[0] = '\0';
		keep = !fdr_cfg.filter[0] || filt_match_list(fdr_cfg.filter, name);
		if (keep && fdr_cfg.exclude[0] && filt_match_list(fdr_cfg.exclude, name))
			keep = false;
		/* release: pairs with the hook's acquire load of the flag */
		atomic_store_explicit(&filt_flags[id], keep ? FILT_KEEP : FILT_SKIP, memory_order_release);
		atomic_store_explicit(&filt_upto, id + 1, memory_order_release);
	}
}

/* Hook slow path: should calls of @id be left out? May wait for the flush thread. */
notrace bool fdr_filter_skip(uint32_t id)
{
	uint8_t f;

	if (!filt_flags)
		return false;
	f = atomic_load_explicit(&filt_flags[id], memory_order_acquire);
	for (unsigned i = 0; !f && fdr_drain_running() && i < 2000; i++) {
		struct timespec ts = { 0, 50000 };

		fdr_drain_wake();
		nanosleep(&ts, NULL);
		f = atomic_load_explicit(&filt_flags[id], memory_order_acquire);
	}
	/* undecided (no flush thread, or it is stuck): recorded */
	return f == FILT_SKIP;
}
