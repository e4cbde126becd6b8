// SPDX-License-Identifier: MIT
/*
 * runtime/flush/names.c - what the flush thread writes besides the buffers: the
 * start records (process, config, modules, thread) and the functions' names
 * (FDRx func records), looked up on the flush thread.
 *
 * Contract: the flush thread, or the finisher and a dump through the flush
 * thread's state (the names cache, read lock-free with acquire loads). Only
 * the flush thread looks names up (the loader's lock).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "ext_encode.h"
#include "flush.h"
#include "flush_internal.h"
#include "funcid_map.h"
#include "modules.h"
#include "native_stack.h"
#include "rtbuf.h"
#include "state.h"
#include "trigger.h"

/* ---- start records ---- */

struct fl_cfg_pairs {
	uint16_t n;
	char *keys[64];
	char *values[64];
};

static notrace void fl_cfg_pair(const char *name, const char *value, void *arg)
{
	struct fl_cfg_pairs *p = arg;

	if (p->n >= FDR_ARRAY_SIZE(p->keys))
		return;
	p->keys[p->n] = strdup(name);
	p->values[p->n] = strdup(value);
	if (p->keys[p->n] && p->values[p->n])
		p->n++;
}

notrace void fl_module_mapped(const struct fdr_module *m, void *arg)
{
	size_t n = fdr_ext_module_map(fl_scratch, sizeof(fl_scratch), m->id, m->load_base, m->size,
				      m->build_id, m->build_id_len, m->path);

	if (n)
		fdr_rtbuf_add(arg, fl_scratch, n);
	/* native stacks name this module by its id from now on */
	fdr_native_module_mapped(m->id, m->start, m->size);
}

/* A module already reported, named again in a new file (a snapshot). */
notrace void fl_module_again(const struct fdr_module *m, void *arg)
{
	size_t n = fdr_ext_module_map(fl_scratch, sizeof(fl_scratch), m->id, m->load_base, m->size,
				      m->build_id, m->build_id_len, m->path);

	if (n)
		fdr_rtbuf_add(arg, fl_scratch, n);
}

notrace void fl_module_unmapped(const struct fdr_module *m, void *arg)
{
	size_t n = fdr_ext_module_unmap(fl_scratch, sizeof(fl_scratch), m->id, m->load_base,
					m->size);

	if (n)
		fdr_rtbuf_add(arg, fl_scratch, n);
	fdr_native_module_unmapped(m->id);
}

/* The flush thread's name, in the trace and for the OS (ps, top, gdb). */

notrace int fdr_write_start_records(struct fdr_rtbuf *rb, bool forked, uint32_t parent)
{
	struct fl_cfg_pairs pairs = { 0 };
	struct fdr_ext_process_info pi = {
		.pid = (uint32_t)fdr_pid,
		.ppid = (uint32_t)getppid(),
		.start_realtime_ns = fdr_start_ns,
		.clock = (uint8_t)fdr_clock.source,
		.freq_source = (uint8_t)fdr_clock.freq_source,
		.program = fdr_program,
		.start_tsc = fdr_start_tsc,
		.argc = fdr_argc,
		.args = fdr_cmdline,
		.args_len = fdr_cmdline_len,
	};
	size_t n;

	n = fdr_ext_process(fl_scratch, sizeof(fl_scratch), &pi);
	if (n)
		fdr_rtbuf_add(rb, fl_scratch, n);
	/* the runtime's own buffers carry this thread's tid: say whose it is */
	n = fdr_ext_thread_name(fl_scratch, sizeof(fl_scratch), (uint32_t)rb->tid, FL_THREAD_NAME);
	if (n && rb->tid)
		fdr_rtbuf_add(rb, fl_scratch, n);
	if (forked) {
		n = fdr_ext_fork(fl_scratch, sizeof(fl_scratch), parent, (uint32_t)fdr_pid,
				 fdr_fork_point.tid, fdr_fork_point.tsc, fdr_fork_point.serial);
		if (n)
			fdr_rtbuf_add(rb, fl_scratch, n);
	}
	fdr_config_foreach(&fdr_cfg, fl_cfg_pair, &pairs);
	n = fdr_ext_config(fl_scratch, sizeof(fl_scratch), pairs.n,
			   (const char *const *)pairs.keys, (const char *const *)pairs.values);
	if (n)
		fdr_rtbuf_add(rb, fl_scratch, n);
	for (uint16_t i = 0; i < pairs.n; i++) {
		free(pairs.keys[i]);
		free(pairs.values[i]);
	}
	fdr_modules_scan(fl_module_mapped, fl_module_unmapped, rb);
	return fdr_rtbuf_flush(rb);
}

/* ---- function names ---- */

/*
 * A byte per id the map can hand out (3 MiB, touched as ids come): sized
 * by the format's 28-bit ids instead, these took 256 MiB of address space
 * each, and a program under `ulimit -v 300000` could not be traced.
 */
notrace size_t fl_id_bytes(void)
{
	return (size_t)fdr_funcid_capacity() + 1;
}

notrace int fl_emitted_init(void)
{
	void *m = mmap(NULL, fl_id_bytes(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED)
		return -errno;
	if (fl_emitted)
		munmap(fl_emitted, fl_id_bytes());
	fl_emitted = m;
	fl_scan_from = 1;
	return 0;
}

/*
 * Name every id handed out so far (an id whose insert is still in
 * progress on another thread has no address yet: it is named on a later
 * round, and no buffer can use it before its insert finished).
 * @names: false in the fatal-signal handler (no dladdr there): address only.
 * Caller holds the file lock.
 */
/*
 * Ring policy: names are looked up while the program runs (by the flush
 * thread, every wake, in memory only: no file I/O) so that a dump from the
 * fatal-signal handler, which cannot look names up, still has them. Ids
 * below FL_NAME_CACHE only; a name is published with a release store of
 * its pointer and never freed.
 */
#define FL_NAME_CACHE (1u << 20)


struct fl_cname *fl_cache;
_Atomic uint32_t fl_cache_upto = 1;

notrace void fl_cache_names(void)
{
	uint32_t limit = fdr_funcid_limit();
	static char name[2048];

	if (!fl_cache) {
		void *m = mmap(NULL, FL_NAME_CACHE * sizeof(*fl_cache), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (m == MAP_FAILED)
			return;
		fl_cache = m;
	}
	if (limit > FL_NAME_CACHE)
		limit = FL_NAME_CACHE;
	for (uint32_t id = atomic_load_explicit(&fl_cache_upto, memory_order_relaxed); id < limit;
	     id++) {
		uintptr_t addr = fdr_funcid_addr(id);
		uint32_t module = FDR_MODULE_UNKNOWN;
		char *copy;

		if (!addr)
			break;	/* its insert is in progress: next round */
		if (fdr_symbol_lookup(addr, name, sizeof(name), &module) < 0)
			name[0] = '\0';
		fdr_trigger_decide(id, name);	/* latency triggers: is it one of theirs? */
		copy = strdup(name);
		if (!copy)
			break;
		fl_cache[id].module = module;
		atomic_store_explicit(&fl_cache[id].name, copy, memory_order_release);
		atomic_store_explicit(&fl_cache_upto, id + 1, memory_order_release);
	}
}

/*
 * Ring policy, fatal-signal handler: let the flush thread name the ids
 * handed out so far (at most @ms milliseconds). Async-signal-safe.
 */
notrace void fdr_flush_names_wait(unsigned ms)
{
	uint32_t limit = fdr_funcid_limit();

	if (!fl_running || fdr_cfg.policy != FDR_POLICY_RING)
		return;
	if (limit > FL_NAME_CACHE)
		limit = FL_NAME_CACHE;
	for (unsigned i = 0; i < ms * 10; i++) {
		struct timespec ts = { 0, 100000 };

		if (atomic_load_explicit(&fl_cache_upto, memory_order_acquire) >= limit)
			return;
		fdr_flush_wake();
		nanosleep(&ts, NULL);
	}
}

notrace void fdr_flush_emit_funcs(struct fdr_rtbuf *rb, bool names)
{
	uint32_t limit = fdr_funcid_limit();
	static char name[2048];
	bool rescanned = false;

	if (!fl_emitted)
		return;
	for (uint32_t id = fl_scan_from; id < limit; id++) {
		uintptr_t addr;
		uint32_t module = FDR_MODULE_UNKNOWN;
		size_t n;

		if (fl_emitted[id])
			continue;
		addr = fdr_funcid_addr(id);
		if (!addr)
			continue;
		name[0] = '\0';
		if (fl_cache && id < FL_NAME_CACHE &&
		    atomic_load_explicit(&fl_cache[id].name, memory_order_acquire)) {
			const char *c = atomic_load_explicit(&fl_cache[id].name,
							     memory_order_acquire);
			size_t len = strnlen(c, sizeof(name) - 1);

			memcpy(name, c, len);
			name[len] = '\0';
			module = fl_cache[id].module;
		} else if (names) {
			if (!rescanned) {
				/* modules loaded since the last scan, before names in them */
				fdr_modules_scan(fl_module_mapped, fl_module_unmapped, rb);
				rescanned = true;
			}
			if (fdr_symbol_lookup(addr, name, sizeof(name), &module) < 0)
				name[0] = '\0';
		}
		if (module == FDR_MODULE_UNKNOWN)
			/* no lookup here (fatal signal): the module from its span, for offline names */
			module = fdr_native_module_of(addr);
		n = fdr_ext_func(fl_scratch, sizeof(fl_scratch), id, addr, module, name);
		if (n)
			fdr_rtbuf_add(rb, fl_scratch, n);
		fl_emitted[id] = 1;
	}
	while (fl_scan_from < limit && fl_emitted[fl_scan_from])
		fl_scan_from++;
}
