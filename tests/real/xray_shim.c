// SPDX-License-Identifier: MIT
/*
 * xray_shim.c - linked into a real program built with clang
 * -fxray-instrument, so that LLVM's own XRay runtime records it in FDR mode
 * from before main() to exit, as fdrtrace records the same program built
 * with -finstrument-functions-after-inlining. The 'real' suite compares the
 * per-function counts of the two traces.
 *
 * XRay's FDR mode is neither initialised nor flushed on its own: this
 * file's constructor initialises it and patches the sleds, and an atexit
 * handler finalises and flushes the log. The FDR configuration comes from
 * REAL_XRAY_FDR_OPTIONS (XRay's "key=value:key=value" form); the default
 * keeps every call (func_duration_threshold_us=0). Run with
 * XRAY_OPTIONS="patch_premain=false xray_mode=xray-fdr
 * xray_logfile_base=..." (the trace lands there): without xray_mode, FDR
 * mode is registered by a static initialiser that runs after this
 * constructor (clang 14), and the initialisation here fails with a
 * message. This file is built without XRay instrumentation. The XRay
 * control API is C++; its functions are declared here by hand (as
 * tests/reader/xray_target.c does).
 */
#include <stdio.h>
#include <stdlib.h>

int __xray_log_init_mode(const char *mode, const char *cfg);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);
int __xray_patch(void);

/* XRayLogInitStatus and XRayLogFlushStatus values meaning success. */
#define XRAY_LOG_INITIALIZED 2
#define XRAY_LOG_FLUSHED 2

static void shim_flush(void)
{
	__xray_log_finalize();
	if (__xray_log_flushLog() != XRAY_LOG_FLUSHED)
		fprintf(stderr, "xray_shim: __xray_log_flushLog failed\n");
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *cfg = getenv("REAL_XRAY_FDR_OPTIONS");

	if (!cfg)
		cfg = "buffer_size=1048576:buffer_max=256:func_duration_threshold_us=0";
	if (__xray_log_init_mode("xray-fdr", cfg) != XRAY_LOG_INITIALIZED) {
		fprintf(stderr, "xray_shim: cannot initialise XRay FDR mode with %s\n", cfg);
		return;
	}
	atexit(shim_flush);
	__xray_patch();
}
