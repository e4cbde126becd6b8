/* SPDX-License-Identifier: MIT */
/*
 * bench/reader_count.c - stream a trace through the reader and count.
 *
 * The smallest useful consumer of the reader: every event is parsed and
 * expanded (absolute TSC, wall time, thread), function entries and exits are
 * counted, and the time spent is reported as MB/s and records/s. Used by
 * bench/reader_bench.py to measure the reader itself, without any analysis
 * on top.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/reader.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct fdrtrace_event ev;
	struct fdrtrace_reader *r;
	uint64_t events = 0, entries = 0, exits = 0, bytes = 0, tsc_sum = 0;
	double t0, t1;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s TRACE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	r = fdrtrace_reader_open(fd);
	if (!r) {
		fprintf(stderr, "out of memory\n");
		return 2;
	}
	t0 = now_s();
	while (fdrtrace_reader_read(r, &ev) == 0) {
		events++;
		bytes = ev.offset + ev.size;
		if (ev.type == FDRTRACE_EV_FUNCTION) {
			tsc_sum += ev.tsc;
			if (ev.u.func.action == FDRTRACE_FN_EXIT ||
			    ev.u.func.action == FDRTRACE_FN_TAIL_EXIT)
				exits++;
			else
				entries++;
		}
	}
	t1 = now_s();
	if (ev.state != FDRTRACE_EOF) {
		uint64_t off = 0;

		fdrtrace_reader_error(r, &off);
		fprintf(stderr, "%s:%" PRIu64 ": %s\n", argv[1], off, fdrtrace_reader_errmsg(r));
	}
	printf("events=%" PRIu64 " entries=%" PRIu64 " exits=%" PRIu64 " bytes=%" PRIu64
	       " seconds=%.6f MBps=%.1f Mrecords_per_s=%.1f checksum=%" PRIx64 "\n",
	       events, entries, exits, bytes, t1 - t0, (double)bytes / 1e6 / (t1 - t0),
	       (double)events / 1e6 / (t1 - t0), tsc_sum);
	fdrtrace_reader_close(r);
	close(fd);
	return ev.state == FDRTRACE_EOF ? 0 : 1;
}
