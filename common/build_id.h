/* SPDX-License-Identifier: MIT */
/*
 * common/build_id.h - the GNU build-id, shared by the runtime
 * (runtime/unwind/modules.c, which reads it from the program headers of mapped
 * objects and from module files) and the fdrtrace command
 * (tools/fdrtrace/symbols/symbolizer.c, which reads it from ELF files with libelf):
 * finding the NT_GNU_BUILD_ID note in a note area, and the path of the
 * separate debug file a build-id names (DIR/.build-id/xx/rest.debug).
 *
 * Header-only and notrace, so that the runtime (never instrumented) and
 * the tool compile the same code. Pure functions: no allocation, no system
 * call, async-signal-safe (though no signal handler needs them today).
 */
#ifndef FDR_COMMON_BUILD_ID_H
#define FDR_COMMON_BUILD_ID_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Build-ids longer than this are cut (GNU ld writes 20 bytes). */
#define FDR_BUILD_ID_MAX 64

static inline __attribute__((no_instrument_function)) size_t fdr_note_align(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/**
 * fdr_build_id_in_notes - find NT_GNU_BUILD_ID in a note area
 * @p: the notes (a PT_NOTE segment or an SHT_NOTE section)
 * @len: their size
 * @align: their alignment (8 for 8-aligned notes, else 4)
 * @out: FDR_BUILD_ID_MAX bytes for the id
 *
 * Every size in a note is checked against @len before use.
 *
 * Return: the id's length (at most FDR_BUILD_ID_MAX), 0 when none.
 */
static inline __attribute__((no_instrument_function)) uint8_t
fdr_build_id_in_notes(const uint8_t *p, size_t len, size_t align, uint8_t *out)
{
	size_t off = 0;

	if (align != 8)
		align = 4;
	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		size_t name_off, desc_off, next;

		memcpy(&nh, p + off, sizeof(nh));
		name_off = off + sizeof(nh);
		if (nh.n_namesz > len - name_off)
			return 0;
		desc_off = fdr_note_align(name_off + nh.n_namesz, align);
		if (desc_off > len || nh.n_descsz > len - desc_off)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p + name_off, "GNU", 4) == 0 && nh.n_descsz > 0) {
			size_t n = nh.n_descsz > FDR_BUILD_ID_MAX ? FDR_BUILD_ID_MAX : nh.n_descsz;

			memcpy(out, p + desc_off, n);
			return (uint8_t)n;
		}
		next = fdr_note_align(desc_off + nh.n_descsz, align);
		if (next <= off || next > len)
			return 0;
		off = next;
	}
	return 0;
}

/**
 * fdr_build_id_debug_path - DIR/.build-id/xx/rest.debug for a build-id
 * @dir: the debug directory, e.g. "/usr/lib/debug"
 * @id: the build-id
 * @len: its length (at least 2)
 * @out: the path
 * @cap: size of @out
 *
 * Return: 0, or -1 (and @out empty) when @len < 2 or the path does not fit.
 */
static inline __attribute__((no_instrument_function)) int
fdr_build_id_debug_path(const char *dir, const uint8_t *id, size_t len, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	static const char mid[] = "/.build-id/";
	size_t dl = strlen(dir), o, i;

	if (cap)
		out[0] = '\0';
	/* dir + mid + "xx/" + 2 * (len - 1) + ".debug" + NUL */
	if (len < 2 || len > FDR_BUILD_ID_MAX || dl + sizeof(mid) + 3 + 2 * len + 7 > cap)
		return -1;
	memcpy(out, dir, dl);
	o = dl;
	memcpy(out + o, mid, sizeof(mid) - 1);
	o += sizeof(mid) - 1;
	out[o++] = hex[id[0] >> 4];
	out[o++] = hex[id[0] & 15];
	out[o++] = '/';
	for (i = 1; i < len; i++) {
		out[o++] = hex[id[i] >> 4];
		out[o++] = hex[id[i] & 15];
	}
	memcpy(out + o, ".debug", 7);
	return 0;
}

#endif /* FDR_COMMON_BUILD_ID_H */
