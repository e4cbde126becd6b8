/* SPDX-License-Identifier: MIT */
/*
 * runtime/base/config.h - the runtime's configuration, from the environment.
 *
 * Every option is declared once, in config.def (an X-macro table); the
 * parser, the defaults and docs/environment.md are generated from it.
 * Called once from the runtime's initialisation, on one thread, before any
 * other thread of ours exists. May allocate; never aborts the program.
 */
#ifndef FDR_CONFIG_H
#define FDR_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

enum fdr_clock_choice {
	FDR_CLOCK_AUTO = 0,
	FDR_CLOCK_CHOICE_RDTSCP,
	FDR_CLOCK_CHOICE_RDTSC,
	FDR_CLOCK_CHOICE_MONOTONIC,
};

enum fdr_policy {
	FDR_POLICY_STREAM = 0,
	FDR_POLICY_RING = 1,
};

enum fdr_on_full {
	FDR_ON_FULL_DROP = 0,
	FDR_ON_FULL_WAIT = 1,
};

enum fdr_direct_io {
	FDR_DIO_OFF = 0,
	FDR_DIO_AUTO = 1,	/* once the page cache proves slow */
	FDR_DIO_ALWAYS = 2,
};

/**
 * struct fdr_config - every option, parsed
 * One member per FDR_OPT row of config.def, same name.
 */
struct fdr_config {
	bool enabled;			/* FDRTRACE_MODE=fdr */
	uint64_t buffer_size;		/* bytes per buffer */
	uint64_t buffer_max;		/* buffers in the pool at start */
	uint64_t pool_max;		/* stream: bytes the pool may grow to (0: auto) */
	uint64_t max_size;		/* bytes a trace file may grow to (0: no limit) */
	uint64_t func_duration_threshold_us;
	char logfile_base[4096];	/* prefix of the trace path */
	uint64_t verbosity;		/* 0 silent, 1 one line at exit, 2+ more */
	uint64_t format_version;	/* 1 or 5 */
	enum fdr_clock_choice clock;
	uint64_t flush_interval_ms;	/* flush partial buffers this often (0: never) */
	enum fdr_policy policy;		/* stream or ring */
	enum fdr_on_full on_full;	/* pool empty: drop or wait */
	enum fdr_direct_io direct_io;	/* writing the trace with O_DIRECT */
	int dump_signal;		/* 0: none; else the signal number (Linux x86-64 values) */
	char filter[1024];		/* glob patterns, ';' between them; "" records all */
	char exclude[1024];		/* glob patterns not to record */
	uint64_t max_depth;		/* 0: every depth */
	char trigger[1024];		/* ring: GLOB>DURATION triggers, ';' or ',' between */
	uint64_t trigger_max;		/* snapshots the triggers may write */
	uint64_t trigger_holdoff_ms;	/* no trigger again this soon after one */
	char auto_exclude[64];		/* DURATION[;after=N]: short hot functions counted only */
	uint64_t set_mask;		/* bit i: the i-th option of config.def was given */
};

/**
 * fdr_config_was_set - did FDRTRACE_OPTIONS give option @name (validly)?
 * Return: false for an option left at its default or an unknown name.
 */
bool fdr_config_was_set(const struct fdr_config *cfg, const char *name);

/**
 * fdr_config_load - fill @cfg from FDRTRACE_MODE and FDRTRACE_OPTIONS
 * @cfg: set to the defaults, then overridden by the environment
 *
 * Reads the environment with secure_getenv(): in a setuid/setgid program
 * nothing is honoured and recording stays off. A bad value writes one line
 * to stderr naming the option and the value ("fdrtrace: FDRTRACE_OPTIONS:
 * buffer_size='abc' is not a size; using 65536") and keeps the previous
 * value (the default unless the option was set earlier in the string).
 *
 * Context: initialisation only. Return: 0, or the number of bad settings
 * as a positive count (each already reported); never fails otherwise.
 */
int fdr_config_load(struct fdr_config *cfg);

/**
 * fdr_config_parse - the parser behind fdr_config_load(), for tests
 * @cfg: set to defaults first, then overridden
 * @mode: the value of FDRTRACE_MODE, or NULL
 * @options: the value of FDRTRACE_OPTIONS, or NULL
 * @errfd: where diagnostics go (2 in the runtime), -1 for none
 *
 * Return: the number of bad settings (0 when all were good).
 */
int fdr_config_parse(struct fdr_config *cfg, const char *mode, const char *options, int errfd);

/**
 * fdr_config_foreach - visit every option's current value as text
 * @cfg: the configuration
 * @fn: called with the option's name and its value formatted as text
 * @arg: passed to @fn
 *
 * Used to record the run's configuration in the trace (FDRTRACE_EXT_CONFIG).
 */
void fdr_config_foreach(const struct fdr_config *cfg,
			void (*fn)(const char *name, const char *value, void *arg), void *arg);

/**
 * fdr_u64_text - @v in decimal, NUL-terminated, into @out
 * @out: at least 21 bytes
 * @v: the number
 *
 * Context: any thread; async-signal-safe (no stdio, no locale).
 */
void fdr_u64_text(char out[21], uint64_t v);

#endif /* FDR_CONFIG_H */
