/* SPDX-License-Identifier: MIT */
/*
 * cmd_verify.c - "fdrtrace verify FILE...": are these traces well formed?
 *
 * Every file is read to its end with the reader (plain function records in
 * runs, fdrtrace_reader_read_functions()); each problem prints
 * "FILE:OFFSET: message" on standard output, and the check resumes at the
 * next buffer where the reader can skip the damaged one, so one run lists
 * several problems. Silent on success unless -v.
 *
 * Contract: single-threaded; memory is the reader's. Exit 0 when every file
 * is valid, 1 otherwise (or on an output error), 2 on usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include <fdrtrace/reader.h>

#include "util.h"

/* Stop listing problems of one file after this many. */
#define VERIFY_MAX_PROBLEMS 100

/* Return: the number of problems found in @path (at least 1 if unreadable). */
static unsigned verify_file(const char *path, bool verbose)
{
	struct fdrtrace_reader *rd;
	struct fdrtrace_event ev;
	uint64_t events = 0, buffers = 0;
	unsigned problems = 0;
	int fd = tool_open_input(path);

	if (fd < 0)
		return 1;
	rd = fdrtrace_reader_open(fd);
	if (!rd) {
		tool_err("%s: %s", path, strerror(errno));
		tool_close_input(fd);
		return 1;
	}
	for (;;) {
		struct fdrtrace_func_run run;
		uint64_t off = 0;

		/* Plain function records in runs: the reader checks them all the same. */
		if (fdrtrace_reader_read_functions(rd, &run, SIZE_MAX)) {
			events += run.count;
			continue;
		}
		if (fdrtrace_reader_read(rd, &ev) == 0) {
			events++;
			if (ev.type == FDRTRACE_EV_NEW_BUFFER)
				buffers++;
			continue;
		}
		if (ev.state != FDRTRACE_ERROR)
			break;
		problems++;
		fdrtrace_reader_error(rd, &off);
		printf("%s:%" PRIu64 ": %s\n", path, off, fdrtrace_reader_errmsg(rd));
		if (problems >= VERIFY_MAX_PROBLEMS) {
			printf("%s: too many problems, giving up on this file\n", path);
			break;
		}
		if (fdrtrace_reader_skip_buffer(rd) != 0)
			break;
	}
	if (verbose && !problems)
		printf("%s: ok: %" PRIu64 " events, %" PRIu64 " buffers\n", path, events, buffers);
	else if (verbose)
		printf("%s: %u problem%s\n", path, problems, problems == 1 ? "" : "s");
	fdrtrace_reader_close(rd);
	tool_close_input(fd);
	return problems;
}

static const char verify_help[] =
	"Usage: fdrtrace verify [-v] FILE...\n"
	"\n"
	"Check that each trace FILE ('-': standard input) follows the FDR grammar.\n"
	"Each problem is printed as FILE:OFFSET: message; after a damaged buffer the\n"
	"check goes on with the next one when its start is known. Nothing is printed\n"
	"for valid files unless -v is given.\n"
	"\n"
	"Options:\n"
	"  -v, --verbose  also report each valid file, with its event count\n"
	"  -h, --help     show this help\n"
	"\n"
	"Exit status: 0 when every file is valid, 1 otherwise, 2 on a usage error.\n";

int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool verbose = false;
	unsigned bad = 0;
	int c, i;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
			break;
		case 'h':
			return tool_print_help(verify_help);
		default:
			return tool_bad_option("verify", "vh", argv);
		}
	}
	if (optind == argc)
		return tool_usage_err("verify", "missing FILE");
	for (i = optind; i < argc; i++) {
		if (verify_file(argv[i], verbose))
			bad++;
		if (tool_stdout_failed())
			break;
	}
	if (tool_finish_stdout())
		return EXIT_FAIL;
	return bad ? EXIT_FAIL : EXIT_OK;
}
