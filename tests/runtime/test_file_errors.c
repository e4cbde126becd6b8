// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_file_errors.c - the trace file's error paths
 * (runtime/file/trace_file.c): a file that cannot be created, a write the
 * device refuses (/dev/full: ENOSPC), a write cut short by the file size
 * limit (RLIMIT_FSIZE with SIGXFSZ ignored: EFBIG after a partial write),
 * the limit known in advance, and max_size. For each: what the call
 * returns, the one message, recording stopped once, the records counted
 * as lost to an I/O error, and a trace that still reads to a close marker
 * "stopped" naming the errno.
 *
 * trace_file.c is compiled with the format code it uses (ext_encode.c,
 * config.c's fdr_u64_text()); the rest of the runtime is stood in for
 * below: messages are kept, fdr_stop_on_error() is counted, the clock is
 * CLOCK_MONOTONIC in nanoseconds. The traces are read back with the
 * reader library (tests/integration/trace_check.c).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../integration/trace_check.h"
#include "clock.h"
#include "config.h"
#include "records.h"
#include "say.h"
#include "slowpath.h"
#include "state.h"
#include "trace_file.h"

/* ---- the rest of the runtime, as trace_file.c sees it ---- */

struct fdr_config fdr_cfg;
struct fdr_clock_info fdr_clock;
pid_t fdr_pid;
static char said[8192];
static size_t said_len;
static unsigned says, stops;

void fdr_say_raw(const char *msg, size_t len)
{
	if (len > sizeof(said) - 1 - said_len)
		len = sizeof(said) - 1 - said_len;
	memcpy(said + said_len, msg, len);
	said_len += len;
	said[said_len] = '\0';
	says++;
}

void fdr_say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fdr_say_raw(buf, n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void fdr_stop_on_error(void)
{
	stops++;
}

uint64_t fdr_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t fdr_clock_read_monotonic(void)
{
	return fdr_clock_ns(CLOCK_MONOTONIC);
}

unsigned fdr_clock_cpu_slow(void)
{
	return 0;
}

uint32_t fdr_threads_seen(void)
{
	return 1;
}

/* ---- helpers ---- */

#define SIZE 4096u
#define RECORDS 400u	/* function records in each buffer written */

static char dir[] = "/tmp/fdrtrace-file-errors-XXXXXX";

static void setup(void)
{
	memset(&fdr_cfg, 0, sizeof(fdr_cfg));
	fdr_cfg.buffer_size = SIZE;
	fdr_cfg.format_version = 5;
	fdr_cfg.verbosity = 1;
	fdr_cfg.direct_io = FDR_DIO_OFF;
	fdr_clock.source = FDRTRACE_CLOCK_MONOTONIC;
	fdr_clock.freq = 1000000000u;
	fdr_pid = getpid();
	cr_assert_not_null(mkdtemp(dir));
	snprintf(fdr_path, sizeof(fdr_path), "%s/t.fdr", dir);
	/* a write past the size limit fails with EFBIG instead of killing */
	signal(SIGXFSZ, SIG_IGN);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

TestSuite(file_errors, .init = setup, .fini = teardown);

/* A thread's buffer as the writer makes it: a preamble, then @n calls' records. */
static uint64_t make_buffer(uint8_t *data, unsigned n)
{
	uint8_t *p = data + fdr_preamble(data, (int32_t)getpid(), 0, fdr_clock_read_monotonic());

	for (unsigned i = 0; i < n; i++) {
		struct fdrtrace_func_record r = {
			.word = fdrtrace_func_word(i & 1 ? FDRTRACE_FN_EXIT : FDRTRACE_FN_ENTRY, 1),
			.tsc_delta = 1,
		};

		memcpy(p, &r, sizeof(r));
		p += sizeof(r);
	}
	cr_assert_leq((size_t)(p - data), SIZE);
	return (uint64_t)(p - data);
}

/* The header and @k buffers into the created trace; each write succeeds. */
static uint64_t start_trace(unsigned k)
{
	static uint8_t data[SIZE];
	uint64_t len = make_buffer(data, RECORDS);

	cr_assert_eq(fdr_file_prepare(), 0);
	cr_assert_eq(fdr_file_write_header(), 0);
	cr_assert_eq(fdr_file_create(), 0, "%s", said);
	for (unsigned i = 0; i < k; i++)
		cr_assert_eq(fdr_file_write_buffer(data, len), 0, "%s", said);
	cr_assert_eq(says, 0, "%s", said);
	cr_assert_eq(fdr_totals.records, (uint64_t)k * RECORDS);
	return len;
}

static off_t file_size(void)
{
	struct stat st;

	cr_assert_eq(stat(fdr_path, &st), 0);
	return st.st_size;
}

/* The trace reads whole, to a close marker "stopped" with @err; @records kept. */
static void assert_stopped_trace(int err, uint64_t records, uint64_t lost)
{
	struct tc_trace *t = calloc(1, sizeof(*t));

	cr_assert_not_null(t);
	tc_read(fdr_path, t);
	cr_assert(t->ok, "the trace does not read: %s", t->error);
	cr_assert(t->closed, "no close marker");
	cr_assert_eq(t->close_how, FDRTRACE_CLOSE_STOPPED);
	cr_assert_eq(t->close_error, (uint32_t)err);
	cr_assert_eq(t->func_records, records);
	cr_assert_eq(t->dropped_by[FDRTRACE_DROP_IO_ERROR], lost);
	tc_free(t);
	free(t);
}

/* ---- a trace that cannot be created ---- */

Test(file_errors, a_missing_directory_is_reported_once_and_stops_recording)
{
	snprintf(fdr_path, sizeof(fdr_path), "%s/no/such/dir/t.fdr", dir);
	cr_assert_eq(fdr_file_prepare(), 0, "preparing chooses the path only");
	cr_assert_eq(fdr_file_write_header(), 0, "kept in memory until the file is created");
	cr_assert_not(fdr_file_failed());

	cr_assert_eq(fdr_file_create(), -ENOENT);
	cr_assert_eq(says, 1);
	cr_assert(strstr(said, "fdrtrace: cannot create trace file "), "%s", said);
	cr_assert(strstr(said, "/no/such/dir/t.fdr: No such file or directory; recording off"),
		  "%s", said);
	cr_assert_eq(stops, 1, "recording stopped");
	cr_assert(fdr_file_failed());

	/* after that: refused at once (no file: -EBADF), nothing said again */
	cr_assert_eq(fdr_file_create(), -EBADF);
	cr_assert_eq(fdr_file_write_header(), -EIO);
	cr_assert_eq(says, 1);
	cr_assert_eq(stops, 1);
}

Test(file_errors, a_directory_that_is_a_file_is_reported)
{
	int fd;

	snprintf(fdr_path, sizeof(fdr_path), "%s/plain", dir);
	fd = open(fdr_path, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(fdr_path, sizeof(fdr_path), "%s/plain/t.fdr", dir);
	cr_assert_eq(fdr_file_prepare(), 0);
	cr_assert_eq(fdr_file_create(), -ENOTDIR);
	cr_assert(strstr(said, "plain/t.fdr: Not a directory; recording off"), "%s", said);
	cr_assert_eq(stops, 1);
}

/* ---- a device that takes nothing ---- */

Test(file_errors, a_full_device_fails_the_write_with_enospc_reported_once)
{
	static uint8_t data[SIZE];
	uint64_t len = make_buffer(data, RECORDS);
	int full = open("/dev/full", O_WRONLY);

	if (full < 0)
		cr_skip_test("no /dev/full");
	cr_assert_eq(fdr_file_prepare(), 0);
	fdr_file_use(full, false);	/* written as a snapshot's file is */

	cr_assert_eq(fdr_file_write_buffer(data, len), -ENOSPC);
	cr_assert_eq(says, 1);
	cr_assert(strstr(said, "t.fdr: write failed: No space left on device; recording stopped"),
		  "%s", said);
	cr_assert_eq(stops, 1);
	cr_assert(fdr_file_failed());
	/* the buffer's records are counted lost, not written */
	cr_assert_eq(fdr_totals.records, 0);
	cr_assert_eq(fdr_totals.records_dropped, RECORDS);
	cr_assert_eq(fdr_totals.dropped_by[FDRTRACE_DROP_IO_ERROR], RECORDS);
	cr_assert_eq(fdr_totals.buffers_dropped, 1);

	/* the next write is refused without trying, and without a word */
	cr_assert_eq(fdr_file_write_buffer(data, len), -EIO);
	cr_assert_eq(says, 1);
	cr_assert_eq(stops, 1);
}

/* ---- the file size limit ---- */

static void limit_fsize(rlim_t bytes)
{
	struct rlimit rl;

	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = bytes;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

Test(file_errors, a_write_cut_short_by_the_size_limit_is_cut_back_and_the_trace_closed_stopped)
{
	static uint8_t data[SIZE];
	uint64_t len = start_trace(3);
	off_t before = file_size();

	make_buffer(data, RECORDS);
	/*
	 * Set after the file was created, so the runtime does not know it
	 * (it learns the limit at creation): the kernel takes half the
	 * buffer, then refuses the rest with EFBIG.
	 */
	limit_fsize((rlim_t)before + len / 2);
	cr_assert_eq(fdr_file_write_buffer(data, len), -EFBIG);
	cr_assert_eq(says, 1);
	cr_assert(strstr(said, "write failed: File too large; recording stopped"), "%s", said);
	cr_assert_eq(stops, 1);
	cr_assert_eq(fdr_totals.dropped_by[FDRTRACE_DROP_IO_ERROR], RECORDS);

	/* no half buffer: cut back to the three whole ones, then the last unit */
	cr_assert_gt(file_size(), before);
	cr_assert_leq(file_size(), before + (off_t)len / 2);
	limit_fsize(RLIM_INFINITY);
	assert_stopped_trace(EFBIG, 3 * RECORDS, RECORDS);
}

Test(file_errors, with_no_room_even_for_the_last_unit_the_last_buffer_makes_room)
{
	static uint8_t data[SIZE];
	uint64_t len = start_trace(3);
	off_t before = file_size();

	make_buffer(data, RECORDS);
	limit_fsize((rlim_t)before + 8);	/* not even the close marker fits after it */
	cr_assert_eq(fdr_file_write_buffer(data, len), -EFBIG);
	cr_assert_eq(says, 1);
	cr_assert_eq(stops, 1);
	/* the third buffer given up to make room: its records lost too */
	cr_assert_eq(fdr_totals.dropped_by[FDRTRACE_DROP_IO_ERROR], 2 * RECORDS);
	cr_assert_lt(file_size(), before);
	limit_fsize(RLIM_INFINITY);
	assert_stopped_trace(EFBIG, 2 * RECORDS, 2 * RECORDS);
}

Test(file_errors, a_size_limit_known_at_creation_stops_before_the_buffer_that_leaves_no_room_for_the_last_unit)
{
	static uint8_t data[SIZE];
	uint64_t len = make_buffer(data, RECORDS);
	/*
	 * Room for five buffers and a little: the sixth would fit, but would
	 * leave no room for the last unit, so it is not tried (tried, it
	 * goes in, the seventh is cut short, and the sixth must be given up
	 * for the last unit: two buffers lost instead of one).
	 */
	const rlim_t limit = sizeof(struct fdrtrace_file_header) + 6 * len + 50;
	int ret = 0;
	unsigned written = 0;

	limit_fsize(limit);
	cr_assert_eq(fdr_file_prepare(), 0);
	cr_assert_eq(fdr_file_write_header(), 0);
	cr_assert_eq(fdr_file_create(), 0, "%s", said);
	while (written < 100 && !(ret = fdr_file_write_buffer(data, len)))
		written++;
	cr_assert_eq(ret, -EFBIG);
	cr_assert_eq(written, 5);
	cr_assert_eq(says, 1);
	cr_assert(strstr(said, "write failed: File too large"), "%s", said);
	cr_assert_leq(file_size(), (off_t)limit, "the limit was crossed");
	limit_fsize(RLIM_INFINITY);
	assert_stopped_trace(EFBIG, (uint64_t)written * RECORDS, RECORDS);
}

Test(file_errors, max_size_stops_recording_and_says_so)
{
	static uint8_t data[SIZE];
	uint64_t len = make_buffer(data, RECORDS);
	int ret = 0;
	unsigned written = 0;

	fdr_cfg.max_size = 4 * SIZE;
	cr_assert_eq(fdr_file_prepare(), 0);
	cr_assert_eq(fdr_file_write_header(), 0);
	cr_assert_eq(fdr_file_create(), 0, "%s", said);
	while (written < 100 && !(ret = fdr_file_write_buffer(data, len)))
		written++;
	cr_assert_eq(ret, -EFBIG);
	cr_assert(fdr_file_max_size_hit());
	cr_assert_eq(says, 1);
	cr_assert(strstr(said, "max_size reached: File too large; recording stopped"), "%s", said);
	cr_assert_leq(file_size(), (off_t)fdr_cfg.max_size);
	assert_stopped_trace(EFBIG, (uint64_t)written * RECORDS, RECORDS);
}
