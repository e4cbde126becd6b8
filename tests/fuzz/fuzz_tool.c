/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tool.c - the shared pieces of the fdrtrace command's fuzz targets
 * (see fuzz_tool.h).
 */
#include "fuzz_tool.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fz_dir[64];
static int fz_dir_fd = -1;	/* the target's directory */
static int fz_home_fd = -1;	/* the working directory libFuzzer runs in */

/* At exit: empty and remove the target's directory (it holds only our files). */
static void fz_cleanup(void)
{
	DIR *d = fdopendir(dup(fz_dir_fd));
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(fz_dir_fd, e->d_name, 0);
		closedir(d);
	}
	rmdir(fz_dir);
}

void fz_setup(void)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !tmp[0] || strlen(tmp) > sizeof(fz_dir) - 20)
		tmp = "/tmp";
	snprintf(fz_dir, sizeof(fz_dir), "%s/fdrfuzz-XXXXXX", tmp);
	if (!mkdtemp(fz_dir) ||
	    (fz_dir_fd = open(fz_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (fz_home_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		perror(fz_dir);
		abort();
	}
	atexit(fz_cleanup);
	signal(SIGPIPE, SIG_IGN);
}

void fz_write(const char *name, const void *p, size_t n)
{
	int fd = openat(fz_dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n) || close(fd) != 0) {
		perror(name);
		abort();
	}
}

void fz_unlink(const char *name)
{
	unlinkat(fz_dir_fd, name, 0);
}

uint8_t *fz_read(const char *name, size_t *n)
{
	int fd = openat(fz_dir_fd, name, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	uint8_t *p;
	size_t got = 0;
	ssize_t r;

	*n = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) != 0 || !(p = malloc((size_t)sb.st_size + 1)))
		abort();
	while (got < (size_t)sb.st_size && (r = read(fd, p + got, (size_t)sb.st_size - got)) > 0)
		got += (size_t)r;
	close(fd);
	p[got] = 0;
	*n = got;
	return p;
}

int fz_run(int (*cmd)(int, char **), const char *out, const char *const *args)
{
	char *argv[32], *msg = NULL;
	size_t msg_len = 0;
	FILE *saved_err = stderr, *msgs;
	int argc, status, saved, fd;

	for (argc = 0; args[argc]; argc++) {
		if (argc == 31)
			abort();
		argv[argc] = strdup(args[argc]);
	}
	argv[argc] = NULL;

	if (fchdir(fz_dir_fd) != 0)
		abort();
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (saved < 0 || fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		abort();
	close(fd);
	clearerr(stdout);
	msgs = open_memstream(&msg, &msg_len);
	if (!msgs)
		abort();
	stderr = msgs;

	status = cmd(argc, argv);

	stderr = saved_err;
	fclose(msgs);
	fflush(stdout);
	if (dup2(saved, STDOUT_FILENO) < 0)
		abort();
	close(saved);
	clearerr(stdout);
	if (fchdir(fz_home_fd) != 0)
		abort();
	for (int i = 0; i < argc; i++)
		free(argv[i]);

	/* dump's own "FILE:OFFSET: internal error: ..." (other commands may echo
	 * the words from a text they refuse) */
	if ((status != 0 && status != 1) ||
	    (!strcmp(args[0], "dump") && msg && strstr(msg, ": internal error: "))) {
		fprintf(stderr, "fdrtrace %s: status %d\n%s", args[0], status, msg ? msg : "");
		abort();
	}
	free(msg);
	return status;
}

bool fz_utf8(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t c = p[i];
		uint32_t cp;
		size_t k;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			k = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i <= k)
			return false;
		for (size_t j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

/* A recursive-descent JSON checker; *i is the position, depth is bounded. */
struct fz_json {
	const uint8_t *p;
	size_t n, i;
};

static void fz_json_ws(struct fz_json *j)
{
	while (j->i < j->n && (j->p[j->i] == ' ' || j->p[j->i] == '\t' || j->p[j->i] == '\n' ||
			       j->p[j->i] == '\r'))
		j->i++;
}

static bool fz_json_lit(struct fz_json *j, const char *lit)
{
	size_t l = strlen(lit);

	if (j->n - j->i < l || memcmp(j->p + j->i, lit, l))
		return false;
	j->i += l;
	return true;
}

static bool fz_json_digits(struct fz_json *j)
{
	size_t start = j->i;

	while (j->i < j->n && j->p[j->i] >= '0' && j->p[j->i] <= '9')
		j->i++;
	return j->i > start;
}

static bool fz_json_number(struct fz_json *j)
{
	if (j->i < j->n && j->p[j->i] == '-')
		j->i++;
	if (j->i < j->n && j->p[j->i] == '0')
		j->i++;
	else if (!fz_json_digits(j))
		return false;
	if (j->i < j->n && j->p[j->i] == '.') {
		j->i++;
		if (!fz_json_digits(j))
			return false;
	}
	if (j->i < j->n && (j->p[j->i] == 'e' || j->p[j->i] == 'E')) {
		j->i++;
		if (j->i < j->n && (j->p[j->i] == '+' || j->p[j->i] == '-'))
			j->i++;
		if (!fz_json_digits(j))
			return false;
	}
	return true;
}

static bool fz_json_string(struct fz_json *j)
{
	if (j->i >= j->n || j->p[j->i] != '"')
		return false;
	j->i++;
	while (j->i < j->n) {
		uint8_t c = j->p[j->i++];

		if (c == '"')
			return true;
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (j->i >= j->n)
			return false;
		c = j->p[j->i++];
		if (c == 'u') {
			for (int k = 0; k < 4; k++, j->i++)
				if (j->i >= j->n || !strchr("0123456789abcdefABCDEF", j->p[j->i]) ||
				    !j->p[j->i])
					return false;
		} else if (!strchr("\"\\/bfnrt", c) || !c) {
			return false;
		}
	}
	return false;
}

static bool fz_json_value(struct fz_json *j, int depth)
{
	uint8_t open, close;

	if (depth > 256)
		return false;
	fz_json_ws(j);
	if (j->i >= j->n)
		return false;
	open = j->p[j->i];
	if (open == '"')
		return fz_json_string(j);
	if (open == 't')
		return fz_json_lit(j, "true");
	if (open == 'f')
		return fz_json_lit(j, "false");
	if (open == 'n')
		return fz_json_lit(j, "null");
	if (open != '[' && open != '{')
		return fz_json_number(j);
	close = open == '[' ? ']' : '}';
	j->i++;
	fz_json_ws(j);
	if (j->i < j->n && j->p[j->i] == close) {
		j->i++;
		return true;
	}
	for (;;) {
		if (open == '{') {
			fz_json_ws(j);
			if (!fz_json_string(j))
				return false;
			fz_json_ws(j);
			if (j->i >= j->n || j->p[j->i++] != ':')
				return false;
		}
		if (!fz_json_value(j, depth + 1))
			return false;
		fz_json_ws(j);
		if (j->i >= j->n)
			return false;
		if (j->p[j->i] == close) {
			j->i++;
			return true;
		}
		if (j->p[j->i++] != ',')
			return false;
	}
}

bool fz_json(const uint8_t *p, size_t n)
{
	struct fz_json j = { p, n, 0 };

	if (!fz_json_value(&j, 0))
		return false;
	fz_json_ws(&j);
	return j.i == n;
}

static bool fz_varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int k = 0; k < 10; k++) {
		if (*i >= n)
			return false;
		*v |= (uint64_t)(p[*i] & 0x7f) << (7 * k);
		if (!(p[(*i)++] & 0x80))
			return true;
	}
	return false;
}

bool fz_protobuf(const uint8_t *p, size_t n)
{
	size_t i = 0;
	uint64_t tag, v;

	while (i < n) {
		if (!fz_varint(p, n, &i, &tag) || (tag >> 3) == 0 || (tag >> 3) > 536870911)
			return false;
		switch (tag & 7) {
		case 0:
			if (!fz_varint(p, n, &i, &v))
				return false;
			break;
		case 1:
			if (n - i < 8)
				return false;
			i += 8;
			break;
		case 2:
			if (!fz_varint(p, n, &i, &v) || v > n - i)
				return false;
			i += v;
			break;
		case 5:
			if (n - i < 4)
				return false;
			i += 4;
			break;
		default:
			return false;
		}
	}
	return true;
}

void fz_check_text(const char *name, bool json)
{
	size_t n;
	uint8_t *p = fz_read(name, &n);

	if (!p)
		return;
	if (!fz_utf8(p, n)) {
		fprintf(stderr, "%s: not UTF-8\n", name);
		abort();
	}
	if (json && !fz_json(p, n)) {
		fprintf(stderr, "%s: not one JSON value\n", name);
		abort();
	}
	free(p);
}
