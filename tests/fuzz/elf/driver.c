/* SPDX-License-Identifier: MIT */
/*
 * driver.c - runs tiny.c's work() under LLVM's XRay FDR mode: argv[1] is the
 * mode's configuration, a second argument makes a longer trace.
 */
int __xray_log_init_mode(const char *mode, const char *cfg);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);
int __xray_patch(void);
int work(int n);

int main(int argc, char **argv)
{
	if (__xray_log_init_mode("xray-fdr", argc > 1 ? argv[1] : "buffer_size=4096:buffer_max=8") != 2)
		return 2;
	__xray_patch();
	work(argc > 2 ? 40 : 12);
	__xray_log_finalize();
	__xray_log_flushLog();
	return 0;
}
