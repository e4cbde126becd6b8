/* SPDX-License-Identifier: MIT */
/*
 * test_rnd.h - xorshift64*, the reproducible random stream of the analysis
 * unit tests (the same values on every run and machine).
 */
#ifndef FDRTRACE_TEST_RND_H
#define FDRTRACE_TEST_RND_H

#include <stdint.h>

/* The next value of the stream whose state is *@state (never 0). */
static inline uint64_t test_rnd(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

#endif /* FDRTRACE_TEST_RND_H */
