// SPDX-License-Identifier: MIT
/*
 * runtime/base/state.c - the process's recording state (state.h says who
 * writes what), the phase moves every layer may make, and the command
 * line.
 *
 * Nothing here calls another module: it is the bottom of the runtime.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

struct fdr_config fdr_cfg;
pid_t fdr_pid;
pid_t fdr_fork_parent;
char fdr_program[256];
uint64_t fdr_start_ns;
uint64_t fdr_start_tsc;
char fdr_cmdline[4096];
uint32_t fdr_cmdline_len, fdr_argc;
struct fdr_fork_point fdr_fork_point;

_Atomic int fdr_gate = FDR_GATE_BEFORE_INIT;
int fdr_gate_rec = FDR_GATE_ON;
uint64_t fdr_min_ticks;
bool fdr_all_slow;
_Atomic uint32_t fdr_depth_epoch;
bool fdr_filtering;
_Atomic int fdr_phase = FDR_PHASE_INIT;
_Atomic uint64_t fdr_before_init_drops;
_Atomic uint64_t fdr_after_fini_drops;
_Atomic uint64_t fdr_orphan_rec[FDRTRACE_DROP_REASON_COUNT];
_Atomic uint64_t fdr_orphan_buf[FDRTRACE_DROP_REASON_COUNT];

_Atomic bool fdr_recorded;

notrace bool fdr_has_records(void)
{
	return atomic_load_explicit(&fdr_recorded, memory_order_acquire) ||
	       atomic_load_explicit(&fdr_before_init_drops, memory_order_relaxed);
}

notrace void fdr_stop_on_error(void)
{
	int expect = FDR_PHASE_RECORDING;

	atomic_store_explicit(&fdr_gate, FDR_GATE_OFF, memory_order_release);
	atomic_compare_exchange_strong_explicit(&fdr_phase, &expect, FDR_PHASE_STOPPED,
						memory_order_acq_rel, memory_order_relaxed);
}

/*
 * The argument strings as the constructor saw them (fdr_note_args()): one
 * area, each ended by a NUL, the same bytes /proc/self/cmdline reads (the
 * kernel's arg_start to arg_end), or NULL when they were not laid out so.
 */
static const char *st_args;
static size_t st_args_len;

notrace void fdr_note_args(int argc, char **argv)
{
	size_t len;

	st_args = NULL;
	if (argc <= 0 || !argv || !argv[0])
		return;
	for (int i = 1; i < argc; i++)
		if (!argv[i] || argv[i] != argv[i - 1] + strlen(argv[i - 1]) + 1)
			return;	/* not one area (a C library that copies them): /proc then */
	len = (size_t)(argv[argc - 1] - argv[0]) + strlen(argv[argc - 1]) + 1;
	st_args = argv[0];
	st_args_len = len;
}

/*
 * The command line, as /proc/self/cmdline gives it (each argument ended by
 * a NUL), read once when recording starts (a fork child keeps its
 * parent's; an exec'd image reads its own), cut to the last whole argument
 * that fits fdr_cmdline (4 KiB). From the argument area the constructor
 * noted, which is what that file reads (2026-12-02: opening it cost every
 * traced process 15 us of its start); else from the file: open/read/close
 * only. Async-signal-safe, no allocation. A failure leaves an empty
 * command line (argc 0).
 */
notrace void fdr_read_cmdline(void)
{
	uint32_t n = 0, cut = 0, argc = 0;
	int fd = st_args ? -1 : open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (st_args) {
		n = st_args_len < sizeof(fdr_cmdline) ? (uint32_t)st_args_len :
							(uint32_t)sizeof(fdr_cmdline);
		memcpy(fdr_cmdline, st_args, n);
	} else if (fd >= 0) {
		while (n < sizeof(fdr_cmdline)) {
			ssize_t got = read(fd, fdr_cmdline + n, sizeof(fdr_cmdline) - n);

			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				break;
			n += (uint32_t)got;
		}
		close(fd);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (fdr_cmdline[i] == '\0') {
			cut = i + 1;
			argc++;
		}
	}
	fdr_cmdline_len = cut;
	fdr_argc = argc;
}
