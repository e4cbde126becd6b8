// SPDX-License-Identifier: MIT
/*
 * fuzz_reader_fd.c - libFuzzer target: the input as a file (a memfd), read
 * through fdrtrace_reader_open(fd), skipping damaged buffers, decoding
 * extension payloads. Any crash, sanitizer report, hang or broken
 * invariant (fuzz_common.h) is a finding.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	struct fdrtrace_reader *r;
	struct fdrtrace_event ev;
	struct digest d = { 0 };
	uint64_t next = 0;

	if (fd < 0)
		return 0;
	if ((size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return 0;
	}
	r = fdrtrace_reader_open(fd);
	if (!r)
		abort();
	/* Every read consumes at least one byte or stops: bound the loop by that. */
	for (size_t i = 0; i <= size + 16; i++) {
		if (fdrtrace_reader_read(r, &ev) == 0) {
			fz_event(&d, &ev, &next);
			continue;
		}
		if (ev.state == FDRTRACE_REQUIRE_DATA)
			abort();	/* never on a file reader */
		if (!fz_stop(&d, r, ev.state))
			break;
	}
	if (d.final != FDRTRACE_EOF && d.final != FDRTRACE_ERROR)
		abort();	/* the loop bound was hit: a hang */
	fdrtrace_reader_close(r);
	close(fd);
	return 0;
}
