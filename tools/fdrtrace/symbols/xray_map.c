/* SPDX-License-Identifier: MIT */
/*
 * xray_map.c - instrumentation maps of LLVM XRay binaries (see xray_map.h).
 *
 * Contract: single-threaded tool code. Every sled read is inside the
 * section; a YAML map is read line by line into a fixed buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xray_map.h"

#define XMAP_SLED_SIZE 32
#define XMAP_KIND_MAX 4		/* enter, exit, tail, log-args enter, custom event */
#define XMAP_LINE_MAX (64 * 1024)

static int xmap_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int xmap_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static int xmap_push(struct xmap *m, size_t *cap, uint32_t id, uint64_t addr, char *name)
{
	if (m->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct xmap_fn *v = realloc(m->v, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		*cap = nc;
	}
	m->v[m->n++] = (struct xmap_fn){ id, addr, name };
	return 0;
}

static uint64_t xmap_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The sleds of xray_instr_map, numbered as llvm-xray does. */
static int xmap_from_binary(struct sym_file *f, const char *path, struct xmap *m, char *err,
			    size_t errlen)
{
	const uint8_t *d;
	uint64_t size, base, i, cur = 0;
	uint32_t id = 1;
	size_t cap = 0;

	if (sym_section(f, "xray_instr_map", &d, &size, &base))
		return xmap_err(err, errlen, -ENOENT,
				"%s: no xray_instr_map section (not built with -fxray-instrument?)",
				path);
	if (size % XMAP_SLED_SIZE)
		return xmap_err(err, errlen, -ENOEXEC,
				"%s: xray_instr_map is %" PRIu64 " bytes, not a multiple of %d",
				path, size, XMAP_SLED_SIZE);
	for (i = 0; i < size / XMAP_SLED_SIZE; i++) {
		const uint8_t *s = d + i * XMAP_SLED_SIZE;
		uint64_t fn = xmap_le64(s + 8);
		unsigned kind = s[16], version = s[18];

		if (kind > XMAP_KIND_MAX)
			return xmap_err(err, errlen, -ENOEXEC,
					"%s: xray_instr_map sled %" PRIu64 " has unknown kind %u",
					path, i, kind);
		/* Version 2: relative to the function field's own address. */
		if (version >= 2)
			fn += base + i * XMAP_SLED_SIZE + 8;
		if (cur == 0 || fn != cur) {
			if (cur)
				id++;
			cur = fn;
			if (xmap_push(m, &cap, id, fn, NULL))
				return xmap_err(err, errlen, -ENOMEM, "out of memory");
		}
	}
	if (!m->n)
		return xmap_err(err, errlen, -ENOENT, "%s: xray_instr_map has no sleds", path);
	m->bin = f;
	return 0;
}

/*
 * Parse one scalar at *@pp (plain, 'single' or "double" quoted) into @out
 * (at most @cap - 1 bytes). Return: 0, -1 when malformed.
 */
static int xmap_scalar(const char **pp, char *out, size_t cap)
{
	const char *p = *pp;
	size_t n = 0;

	while (*p == ' ')
		p++;
	if (*p == '\'' || *p == '"') {
		char q = *p++;

		for (;; p++) {
			char ch = *p;

			if (!ch || ch == '\n')
				return -1;
			if (ch == q) {
				if (q == '\'' && p[1] == '\'') {
					p++;	/* '' is a quote */
				} else {
					p++;
					break;
				}
			} else if (q == '"' && ch == '\\') {
				if (!p[1])
					return -1;
				ch = *++p;
				ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch;
			}
			if (n + 1 < cap)
				out[n++] = ch;
		}
	} else {
		while (*p && *p != ',' && *p != '}' && *p != '\n') {
			if (n + 1 < cap)
				out[n++] = *p;
			p++;
		}
		while (n && out[n - 1] == ' ')
			n--;
	}
	out[n] = '\0';
	*pp = p;
	return 0;
}

static int xmap_id_cmp(const void *x, const void *y)
{
	const struct xmap_fn *p = x, *q = y;

	return p->id < q->id ? -1 : p->id > q->id;
}

/* A YAML map: one "- { key: value, ... }" per line. */
static int xmap_from_yaml(const char *path, struct xmap *m, char *err, size_t errlen)
{
	static char line[XMAP_LINE_MAX];
	struct stat st;
	size_t cap = 0, i, k;
	unsigned long lineno = 0;
	FILE *in;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return xmap_err(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return xmap_err(err, errlen, -EINVAL, "%s: not a regular file", path);
	}
	in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		return xmap_err(err, errlen, -ENOMEM, "out of memory");
	}
	while (fgets(line, sizeof(line), in)) {
		const char *p = line;
		char key[64], val[4096];
		uint64_t id = 0, fn = 0;
		bool have_id = false, have_fn = false;
		char *name = NULL;

		lineno++;
		if (!strchr(line, '\n') && !feof(in)) {
			rc = xmap_err(err, errlen, -ENOEXEC, "%s:%lu: line longer than %d bytes", path,
				      lineno, XMAP_LINE_MAX);
			break;
		}
		while (*p == ' ')
			p++;
		if (strncmp(p, "- {", 3))
			continue;	/* "---", "...", comments */
		p += 3;
		for (;;) {
			size_t kl = 0;
			char *end;

			while (*p == ' ' || *p == ',')
				p++;
			if (*p == '}' || !*p || *p == '\n')
				break;
			while (*p && *p != ':' && *p != '}' && kl + 1 < sizeof(key))
				key[kl++] = *p++;
			key[kl] = '\0';
			if (*p != ':')
				goto bad;
			p++;
			if (xmap_scalar(&p, val, sizeof(val)))
				goto bad;
			if (!strcmp(key, "id")) {
				id = strtoull(val, &end, 0);
				if (!val[0] || *end || id == 0 || id > UINT32_MAX)
					goto bad;
				have_id = true;
			} else if (!strcmp(key, "function")) {
				fn = strtoull(val, &end, 0);
				if (!val[0] || *end)
					goto bad;
				have_fn = true;
			} else if (!strcmp(key, "function-name") && val[0]) {
				free(name);
				name = strdup(val);
				if (!name) {
					rc = xmap_err(err, errlen, -ENOMEM, "out of memory");
					goto out;
				}
			}
		}
		if (!have_id)
			goto bad;
		if (xmap_push(m, &cap, (uint32_t)id, have_fn ? fn : 0, name)) {
			free(name);
			rc = xmap_err(err, errlen, -ENOMEM, "out of memory");
			goto out;
		}
		continue;
bad:
		/* the name copied from an earlier key of the entry (it leaked) */
		free(name);
		rc = xmap_err(err, errlen, -ENOEXEC, "%s:%lu: not an instrumentation map entry",
			      path, lineno);
		goto out;
	}
	if (!rc && ferror(in))
		rc = xmap_err(err, errlen, -EIO, "%s: %s", path, strerror(errno));
	if (!rc && !m->n)
		rc = xmap_err(err, errlen, -ENOENT,
			      "%s: neither an ELF binary nor an instrumentation map", path);
out:
	fclose(in);
	if (rc)
		return rc;
	/* Sorted by id, one entry per id (the entries of an id name one function). */
	qsort(m->v, m->n, sizeof(*m->v), xmap_id_cmp);
	for (i = 0, k = 0; i < m->n; i++) {
		if (k && m->v[k - 1].id == m->v[i].id) {
			if (!m->v[k - 1].name) {
				m->v[k - 1].name = m->v[i].name;
				m->v[i].name = NULL;
			}
			free(m->v[i].name);
			continue;
		}
		m->v[k++] = m->v[i];
	}
	m->n = k;
	return 0;
}

int xmap_load(struct sym_ctx *c, const char *path, struct xmap *m, char *err, size_t errlen)
{
	struct sym_file *f;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = sym_file_get(c, path, &f);
	if (rc == 0)
		rc = xmap_from_binary(f, path, m, err, errlen);
	else if (rc == -ENOEXEC)
		rc = xmap_from_yaml(path, m, err, errlen);
	else if (rc == -EINVAL)
		rc = xmap_err(err, errlen, rc, "%s: not a regular file", path);
	else
		rc = xmap_err(err, errlen, rc, "%s: %s", path, strerror(-rc));
	if (rc)
		xmap_free(m);
	return rc;
}

const struct xmap_fn *xmap_find(const struct xmap *m, uint32_t id)
{
	size_t lo = 0, hi = m->n;

	/* A binary's ids are 1..n in order: the direct index first. */
	if (id && id <= m->n && m->v[id - 1].id == id)
		return &m->v[id - 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->v[lo].id == id ? &m->v[lo] : NULL;
}

void xmap_free(struct xmap *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
