/* SPDX-License-Identifier: MIT */
/*
 * reader_internal.h - private helpers shared by the reader's files.
 *
 * Contract: included only by the .c files of tools/reader. Nothing here is part of the
 * installed API; the library is built with -fvisibility=hidden and only the
 * functions marked rd_export are visible in the shared object.
 */
#ifndef FDR_READER_INTERNAL_H
#define FDR_READER_INTERNAL_H

#include <stdint.h>
#include <string.h>

#define rd_export __attribute__((visibility("default")))

#define RD_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Little-endian loads from an unaligned byte stream (the host is x86-64). */
static inline uint16_t rd_le16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t rd_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t rd_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#endif /* FDR_READER_INTERNAL_H */
