// SPDX-License-Identifier: MIT
/*
 * test_xray.c - the reader on a real XRay FDR trace (integration).
 *
 * Usage: test-reader-xray CLANG LLVM_XRAY xray_target.c
 * Builds xray_target.c with clang -fxray-instrument, runs it with small
 * buffers so the trace has many, then reads the trace with our reader and
 * with `llvm-xray fdr-dump`, and compares: the same number of buffers, and
 * the same entries and exits for every function id. Exits 77 (skip) when
 * clang or llvm-xray is missing or cannot build an XRay program.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fdrtrace/reader.h>

#define SKIP 77
#define MAX_ID 64

struct counts {
	unsigned long buffers;
	unsigned long enter[MAX_ID], exit[MAX_ID];
	unsigned long enter_all, exit_all;
};

static int fail(const char *msg, const char *detail)
{
	fprintf(stderr, "test-reader-xray: %s%s%s\n", msg, detail ? ": " : "", detail ? detail : "");
	return 1;
}

static void count(struct counts *c, int enter, unsigned long id)
{
	if (enter)
		c->enter_all++;
	else
		c->exit_all++;
	if (id < MAX_ID)
		(enter ? c->enter : c->exit)[id]++;
}

static int read_ours(const char *path, struct counts *c, int32_t *tids, int *ntids, int32_t *pid)
{
	int fd = open(path, O_RDONLY);
	struct fdrtrace_reader *r;
	struct fdrtrace_event ev;

	if (fd < 0)
		return fail("cannot open the trace", path);
	r = fdrtrace_reader_open(fd);
	while (fdrtrace_reader_read(r, &ev) == 0) {
		switch (ev.type) {
		case FDRTRACE_EV_HEADER:
			if (ev.u.header.version != 5)
				fprintf(stderr, "note: XRay wrote version %u\n", ev.u.header.version);
			break;
		case FDRTRACE_EV_BUFFER_EXTENTS:
			c->buffers++;
			break;
		case FDRTRACE_EV_FUNCTION:
			count(c, ev.u.func.action == FDRTRACE_FN_ENTRY ||
					 ev.u.func.action == FDRTRACE_FN_ENTRY_ARGS,
			      ev.u.func.func_id);
			if (ev.tid == 0 || ev.pid == 0 || ev.wall_ns == 0)
				return fail("function event without thread, process or time", NULL);
			*pid = ev.pid;
			if (*ntids == 0 || (tids[0] != ev.tid && (*ntids == 1 || tids[1] != ev.tid))) {
				if (*ntids < 2)
					tids[*ntids] = ev.tid;
				(*ntids)++;
			}
			break;
		default:
			break;
		}
	}
	if (ev.state != FDRTRACE_EOF) {
		uint64_t off;

		fdrtrace_reader_error(r, &off);
		fprintf(stderr, "%s:%llu: %s\n", path, (unsigned long long)off,
			fdrtrace_reader_errmsg(r));
		return fail("our reader rejected the trace", NULL);
	}
	fdrtrace_reader_close(r);
	close(fd);
	return 0;
}

static int read_llvm(const char *xray, const char *path, struct counts *c)
{
	char cmd[8400], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' fdr-dump '%s' 2>/dev/null", xray, path);
	p = popen(cmd, "r");
	if (!p)
		return fail("cannot run llvm-xray", NULL);
	while (fgets(line, sizeof(line), p)) {
		const char *hash = strchr(line, '#');
		unsigned long id = hash ? strtoul(hash + 1, NULL, 10) : MAX_ID;

		if (!strncmp(line, "<Buffer:", 8))
			c->buffers++;
		else if (!strncmp(line, "<Function Enter", 15))
			count(c, 1, id);
		else if (!strncmp(line, "<Function Exit", 14) ||
			 !strncmp(line, "<Function Tail Exit", 19))
			count(c, 0, id);
	}
	if (pclose(p) != 0)
		return fail("llvm-xray fdr-dump failed", path);
	return 0;
}

static int find_trace(const char *dir, char *out, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "xr-", 3)) {
			snprintf(out, size, "%s/%s", dir, e->d_name);
			found++;
		}
	closedir(d);
	return found == 1;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/fdrtrace-xray-XXXXXX", cmd[8192], trace[4200];
	struct counts ours = { 0 }, llvm = { 0 };
	int32_t tids[2] = { 0 }, pid = 0;
	int ntids = 0, ret;

	if (argc != 4 || !argv[1][0] || !argv[2][0]) {
		fprintf(stderr, "test-reader-xray: clang or llvm-xray not found: skipped\n");
		return SKIP;
	}
	if (!mkdtemp(dir))
		return fail("mkdtemp failed", NULL);
	snprintf(cmd, sizeof(cmd),
		 "'%s' -O2 -fxray-instrument -fxray-instruction-threshold=1 -fxray-modes=xray-fdr "
		 "'%s' -o '%s/target' -pthread",
		 argv[1], argv[3], dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "test-reader-xray: clang cannot build an XRay program: skipped\n");
		return SKIP;
	}
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && XRAY_OPTIONS='patch_premain=false xray_mode=xray-fdr "
		 "xray_logfile_base=%s/xr- verbosity=0' ./target >/dev/null 2>&1",
		 dir, dir);
	if (system(cmd) != 0)
		return fail("the XRay program failed", cmd);
	if (!find_trace(dir, trace, sizeof(trace)))
		return fail("no (single) XRay trace in", dir);

	ret = read_ours(trace, &ours, tids, &ntids, &pid);
	if (!ret)
		ret = read_llvm(argv[2], trace, &llvm);
	if (!ret) {
		printf("ours: %lu buffers, %lu entries, %lu exits, %d threads, pid %d\n",
		       ours.buffers, ours.enter_all, ours.exit_all, ntids, pid);
		printf("llvm: %lu buffers, %lu entries, %lu exits\n", llvm.buffers, llvm.enter_all,
		       llvm.exit_all);
		if (ours.buffers < 10)
			ret = fail("expected many buffers", NULL);
		else if (ntids != 2)
			ret = fail("expected two threads", NULL);
		else if (ours.enter_all == 0 || ours.exit_all == 0)
			ret = fail("no function records", NULL);
		else if (memcmp(&ours, &llvm, sizeof(ours)) != 0)
			ret = fail("our counts differ from llvm-xray's", NULL);
	}
	if (ret == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "note: could not remove %s\n", dir);
	} else {
		fprintf(stderr, "test-reader-xray: kept %s\n", dir);
	}
	return ret;
}
