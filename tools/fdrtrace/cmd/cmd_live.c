/* SPDX-License-Identifier: MIT */
/*
 * cmd_live.c - "fdrtrace live [options] -- PROGRAM ARGS": run a program
 * with tracing on and print its call tree when it ends, in one step (as
 * uftrace's default "uftrace PROG" does).
 *
 * live is record then replay, in this process: record writes the run into
 * a directory of live's own (mkdtemp() under $TMPDIR), replay reads it, and
 * the directory and the files the run wrote there are removed, unless -d
 * DIR asked to keep the run. Options before "--" go to replay (its
 * selectors, -f fields), but -d DIR and -O KEY=VALUE, which go to record.
 *
 * Contract: single-threaded; forks once (record's).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "util.h"

#define LIVE_MAX_ARGS 256

static const char live_help[] =
	"Usage: fdrtrace live [options] -- PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM with tracing on, as fdrtrace record does (its whole process tree,\n"
	"instrumented or not: the processes that run instrumented code are traced),\n"
	"then print its call tree as fdrtrace replay does. The run is kept only when\n"
	"-d is given.\n"
	"\n"
	"  -d, --output-dir DIR  keep the run in DIR (as fdrtrace record -d)\n"
	"  -O KEY=VALUE          an FDRTRACE_OPTIONS setting for the run (repeatable)\n"
	"  -h, --help            show this help\n"
	"\n"
	"Every other option is replay's: -F, -N, -D, -t, --tid, -r, --pid, -f FIELDS,\n"
	"--full-names, ... (fdrtrace replay --help).\n"
	"\n"
	"Exit status: PROGRAM's (128+N when signal N killed it); 127 when it could\n"
	"not be run; 2 on usage errors; 1 when the call tree could not be read while\n"
	"PROGRAM succeeded.\n";

/* Remove the files the run wrote in @dir (live's own directory), then @dir. */
static void live_remove(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (unlinkat(dirfd(d), de->d_name, 0))
				tool_err("%s/%s: cannot remove it: %s", dir, de->d_name, strerror(errno));
		}
		closedir(d);
	}
	if (rmdir(dir))
		tool_err("%s: cannot remove it: %s", dir, strerror(errno));
}

/* Did the run leave a trace (*.fdr) in @dir? */
static bool live_has_trace(const char *dir)
{
	struct dirent *de;
	bool any = false;
	DIR *d = opendir(dir);

	while (d && !any && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		any = n > 4 && !strcmp(de->d_name + n - 4, ".fdr");
	}
	if (d)
		closedir(d);
	return any;
}

/*
 * A replay option: 1 when its value is the next argument, 0 when it has
 * none or carries it (-Fmain, --filter=main), -1 when replay has no such
 * option (a usage error before anything runs).
 */
static int live_replay_option(const char *a)
{
	static const char *const with[] = { "-F", "-N", "-D", "-t", "-r", "-f", "--filter",
					    "--notrace", "--depth", "--threshold", "--tid",
					    "--time-range", "--pid", "--fields", "--debug-dir",
					    "--instr-map" };
	static const char *const without[] = { "-q", "--quiet", "--no-demangle", "--full-names",
					       "--locations" };
	size_t i, n;

	for (i = 0; i < sizeof(without) / sizeof(without[0]); i++)
		if (!strcmp(a, without[i]))
			return 0;
	for (i = 0; i < sizeof(with) / sizeof(with[0]); i++) {
		n = strlen(with[i]);
		if (!strcmp(a, with[i]))
			return 1;
		if (!strncmp(a, with[i], n) && (n == 2 ? a[2] != '\0' : a[n] == '='))
			return 0;
	}
	return -1;
}

int cmd_live(int argc, char **argv)
{
	char *rec[LIVE_MAX_ARGS], *rp[LIVE_MAX_ARGS];
	char tmp[PATH_MAX], rundir[PATH_MAX];
	const char *keep = NULL, *tmpdir = getenv("TMPDIR");
	int nrec = 0, nrp = 0, i, prog, status, rstatus;

	rec[nrec++] = "record";
	rp[nrp++] = "replay";
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return tool_print_help(live_help);
		if (nrec + 4 >= LIVE_MAX_ARGS || nrp + 4 >= LIVE_MAX_ARGS)
			return tool_usage_err("live", "too many options");
		if (!strcmp(a, "-d") || !strcmp(a, "--output-dir") || !strcmp(a, "-O")) {
			if (i + 1 >= argc)
				return tool_usage_err("live", "option '%s' needs an argument", a);
			if (a[1] == 'O')
				rec[nrec++] = "-O", rec[nrec++] = argv[++i];
			else
				keep = argv[++i];
			continue;
		}
		if (a[0] != '-')
			break;	/* no "--": PROGRAM starts here */
		if (live_replay_option(a) < 0)
			return tool_usage_err("live", "unknown option '%s'", a);
		rp[nrp++] = argv[i];
		if (live_replay_option(a) == 1) {
			if (i + 1 >= argc)
				return tool_usage_err("live", "option '%s' needs an argument", a);
			rp[nrp++] = argv[++i];
		}
	}
	prog = i < argc && !strcmp(argv[i], "--") ? i + 1 : i;
	if (prog >= argc)
		return tool_usage_err("live", "missing PROGRAM (fdrtrace live [options] -- PROGRAM)");
	if (argc - prog + nrec + 4 >= LIVE_MAX_ARGS)
		return tool_usage_err("live", "too many arguments");
	if (keep) {
		snprintf(rundir, sizeof(rundir), "%s", keep);
	} else {
		if (snprintf(tmp, sizeof(tmp), "%s/fdrtrace-live.XXXXXX",
			     tmpdir && *tmpdir ? tmpdir : "/tmp") >= (int)sizeof(tmp) || !mkdtemp(tmp)) {
			tool_err("%s: cannot make a directory for the run: %s", tmp, strerror(errno));
			return EXIT_FAIL;
		}
		if (snprintf(rundir, sizeof(rundir), "%s/run", tmp) >= (int)sizeof(rundir)) {
			rmdir(tmp);
			return tool_usage_err("live", "TMPDIR too long");
		}
		rec_say_dir = false;	/* it goes away */
	}
	rec[nrec++] = "-d";
	rec[nrec++] = rundir;
	rec[nrec++] = "--";
	for (i = prog; i < argc; i++)
		rec[nrec++] = argv[i];
	rec[nrec] = NULL;
	fflush(stdout);
	status = cmd_record(nrec, rec);
	if (status == EXIT_USAGE || access(rundir, F_OK)) {
		/* nothing ran, or no run was made: nothing to show */
		if (!keep)
			live_remove(tmp);
		return status;
	}
	if (!live_has_trace(rundir)) {
		/* record said that no process was traced, and why */
		if (!keep)
			live_remove(rundir), live_remove(tmp);
		return status;
	}
	rp[nrp++] = rundir;
	rp[nrp] = NULL;
	rstatus = cmd_replay(nrp, rp);
	if (!keep) {
		live_remove(rundir);
		live_remove(tmp);
	}
	if (rstatus == EXIT_USAGE)
		return EXIT_USAGE;
	return status == EXIT_OK && rstatus != EXIT_OK ? EXIT_FAIL : status;
}
