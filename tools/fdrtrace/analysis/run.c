/* SPDX-License-Identifier: MIT */
/*
 * run.c - a run directory's traces and their process tree (run.h).
 *
 * A trace is read at its two ends only: the runtime writes the process,
 * fork and config records first of all, and the exec and close records in
 * its last buffer (docs/format.md §5.2), so a run of many large traces is
 * listed in the time it takes to open them.
 *
 * Contract: single-threaded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "run.h"

int run_is_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	return S_ISDIR(st.st_mode);
}

static int run_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A snapshot of a ring trace: NAME.snapN.fdr (the runtime's name for one). */
static bool run_is_snapshot(const char *name, size_t len)
{
	const char *p = name + len - 4;	/* ".fdr" */

	while (p > name && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p - name >= 5 && p < name + len - 4 && memcmp(p - 5, ".snap", 5) == 0;
}

void run_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int run_list(const char *dir, const char *prefix, char ***names, size_t *n)
{
	size_t plen = strlen(prefix), cap = 0, k = 0;
	char **v = NULL;
	struct dirent *de;
	DIR *d = opendir(dir);

	*names = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= plen + 4 || strncmp(de->d_name, prefix, plen) != 0 ||
		    strcmp(de->d_name + len - 4, ".fdr") != 0 || run_is_snapshot(de->d_name, len))
			continue;
		if (k == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			char **nv = realloc(v, ncap * sizeof(*nv));

			if (!nv)
				goto nomem;
			v = nv;
			cap = ncap;
		}
		if (!(v[k] = strdup(de->d_name)))
			goto nomem;
		k++;
	}
	closedir(d);
	if (k)
		qsort(v, k, sizeof(*v), run_cmp_names);
	*names = v;
	*n = k;
	return 0;
nomem:
	closedir(d);
	run_names_free(v, k);
	return -ENOMEM;
}

/* The number ending @name before @end (digits preceded by a '.'), or -1. */
static long run_field(const char *name, size_t end, size_t *start)
{
	size_t i = end;

	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i == end || i == 0 || name[i - 1] != '.' || end - i > 9)
		return -1;
	*start = i;
	return strtol(name + i, NULL, 10);
}

/*
 * NAME.PID.fdr, or NAME.PID.N.fdr (N from 2: a later image after an exec,
 * runtime/file/trace_file.c), numbered only when NAME.PID.fdr is in @names too,
 * which tells it from a NAME ending in digits ("python3.11.PID.fdr").
 */
pid_t run_name_pid(const char *name, char *const *names, size_t n)
{
	size_t len = strlen(name), at, at2;
	long last, prev;
	char unnumbered[4096];
	const char *key = unnumbered;

	if (len < 4 || strcmp(name + len - 4, ".fdr") != 0)
		return 0;
	last = run_field(name, len - 4, &at);
	if (last < 0)
		return 0;
	prev = run_field(name, at - 1, &at2);
	if (prev > 0 && last >= 2 &&
	    snprintf(unnumbered, sizeof(unnumbered), "%.*s.fdr", (int)(at - 1), name) <
		    (int)sizeof(unnumbered) &&
	    n && bsearch(&key, names, n, sizeof(*names), run_cmp_names))
		return (pid_t)prev;
	return (pid_t)last;
}

static char *run_strndup(struct fdrtrace_str s)
{
	char *p = malloc((size_t)s.len + 1);

	if (p) {
		memcpy(p, s.ptr, s.len);
		p[s.len] = '\0';
	}
	return p;
}

/* Take what an FDRx record says of the process. Return: 0 or -ENOMEM. */
static int run_take(struct run_proc *p, const struct fdrtrace_ext *x)
{
	switch (x->kind) {
	case FDRTRACE_EXT_PROCESS:
		if (p->has_process)
			return 0;
		p->has_process = true;
		p->pid = x->u.process.pid;
		p->ppid = x->u.process.ppid;
		p->start_ns = x->u.process.start_realtime_ns;
		free(p->program);
		if (!(p->program = run_strndup(x->u.process.program)))
			return -ENOMEM;
		if (x->u.process.has_cmdline) {
			struct fdrtrace_str a = x->u.process.args;
			uint32_t nuls = 0;

			for (uint16_t i = 0; i < a.len; i++)
				nuls += a.ptr[i] == '\0';
			if (!(p->args = malloc((size_t)a.len + 1)))
				return -ENOMEM;
			memcpy(p->args, a.ptr, a.len);
			p->args[a.len] = '\0';
			p->args_len = a.len;
			p->argc = x->u.process.argc;
			p->args_cut = nuls < p->argc;
		}
		return 0;
	case FDRTRACE_EXT_FORK:
		p->forked = true;
		if (!p->ppid)
			p->ppid = x->u.fork.parent_pid;
		return 0;
	case FDRTRACE_EXT_EXEC:
		free(p->exec_path);
		return (p->exec_path = run_strndup(x->u.exec.path)) ? 0 : -ENOMEM;
	case FDRTRACE_EXT_CLOSE: {
		uint64_t out = x->u.close.has_left_out ? x->u.close.records_left_out : 0;

		if (out > x->u.close.records_dropped)
			out = x->u.close.records_dropped;
		p->has_close = true;
		p->how = x->u.close.how;
		p->records = x->u.close.records;
		p->left_out = out;
		p->lost = x->u.close.records_dropped - out;
		p->error = x->u.close.error;
		p->end_ns = x->u.close.end_realtime_ns;
		p->has_end = x->u.close.has_end;
		p->end = x->u.close.end;
		p->end_value = x->u.close.end_value;
		return 0;
	}
	default:
		return 0;
	}
}

/* Decode @ev when it is one of our records; 1 when it is, with @x set. */
static int run_ext(const struct fdrtrace_event *ev, struct fdrtrace_ext *x)
{
	return ev->type == FDRTRACE_EV_CUSTOM_EVENT &&
	       fdrtrace_ext_decode(ev->u.event.data, ev->u.event.size, x) == 0;
}

/*
 * The head: the records up to the config record (written after process
 * and fork), or the first function record, at most 4096 events.
 */
static int run_read_head(int fd, struct run_proc *p)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(fd);
	struct fdrtrace_event ev;
	int rc = 0;

	if (!rd)
		return -ENOMEM;
	for (int i = 0; i < 4096 && fdrtrace_reader_read(rd, &ev) == 0; i++) {
		struct fdrtrace_ext x;

		if (ev.type == FDRTRACE_EV_FUNCTION)
			break;
		if (!run_ext(&ev, &x))
			continue;
		if ((rc = run_take(p, &x)))
			break;
		if (x.kind == FDRTRACE_EXT_CONFIG)
			break;
	}
	fdrtrace_reader_close(rd);
	return rc;
}

/* The tail's records in the @len bytes of @buf, whole buffers from file offset @off. */
static bool run_tail_in(const struct fdrtrace_file_header *hdr, const uint8_t *buf, size_t len,
			uint64_t off, struct run_proc *p, int *rc)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;
	bool found = false, fed = false;

	if (!rd) {
		*rc = -ENOMEM;
		return false;
	}
	fdrtrace_reader_feed(rd, hdr, sizeof(*hdr));
	if (fdrtrace_reader_read(rd, &ev) != 0 || fdrtrace_reader_set_offset(rd, off)) {
		fdrtrace_reader_close(rd);
		return false;
	}
	fdrtrace_reader_feed(rd, buf, len);
	for (;;) {
		struct fdrtrace_ext x;

		if (fdrtrace_reader_read(rd, &ev) == 0) {
			if (run_ext(&ev, &x) &&
			    (x.kind == FDRTRACE_EXT_CLOSE || x.kind == FDRTRACE_EXT_EXEC)) {
				found |= x.kind == FDRTRACE_EXT_CLOSE;
				if ((*rc = run_take(p, &x)))
					break;
			}
			continue;
		}
		if (ev.state != FDRTRACE_REQUIRE_DATA || fed)
			break;
		fdrtrace_reader_feed(rd, NULL, 0);	/* the end */
		fed = true;
	}
	fdrtrace_reader_close(rd);
	return found;
}

/*
 * The close is the runtime's last write, in the file's last buffer, the
 * exec record just before it. The tail's buffers are found from the end:
 * in version 1 at the fixed buffer size, in version 2 and later each
 * starts with a BufferExtents whose size reaches the next; candidates are
 * tried from the last one.
 */
#define RUN_TAIL_MAX (1u << 20)

static int run_read_tail(int fd, uint64_t size, struct run_proc *p)
{
	struct fdrtrace_file_header hdr;
	uint8_t *tail;
	size_t len;
	int rc = 0;

	if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		return 0;
	len = size - sizeof(hdr) < RUN_TAIL_MAX ? (size_t)(size - sizeof(hdr)) : RUN_TAIL_MAX;
	tail = malloc(len);
	if (!tail)
		return -ENOMEM;
	if (pread(fd, tail, len, (off_t)(size - len)) != (ssize_t)len)
		goto out;
	if (hdr.version == 1) {
		uint64_t body = size - sizeof(hdr), bs = hdr.buffer_size;

		if (bs && bs <= len && body % bs == 0)
			run_tail_in(&hdr, tail + len - bs, (size_t)bs, size - bs, p, &rc);
		goto out;
	}
	for (size_t o = len < FDRTRACE_METADATA_RECORD_SIZE ? 0 :
			len - FDRTRACE_METADATA_RECORD_SIZE + 1;
	     o-- > 0 && !rc;) {
		uint64_t bsize;

		if (tail[o] != FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_BUFFER_EXTENTS))
			continue;
		memcpy(&bsize, tail + o + 1, sizeof(bsize));
		if (bsize == len - o - FDRTRACE_METADATA_RECORD_SIZE &&
		    run_tail_in(&hdr, tail + o, len - o, size - (len - o), p, &rc))
			break;
	}
out:
	free(tail);
	return rc;
}

int run_read_trace(const char *path, struct run_proc *p)
{
	struct fdrtrace_file_header hdr;
	struct stat st;
	int rc = 0;
	/* no link followed, no blocking on a FIFO named like a trace */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	p->parent = p->prev_image = p->first_child = p->next_sibling = -1;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	p->size = (uint64_t)st.st_size;
	if (p->size < sizeof(hdr) || pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    hdr.version < 1 || hdr.version > 5)
		goto out;
	p->readable = true;
	if ((rc = run_read_head(fd, p)))
		goto out;
	if (p->size > sizeof(hdr))
		rc = run_read_tail(fd, p->size, p);
out:
	close(fd);
	return rc;
}

static void run_proc_free(struct run_proc *p)
{
	free(p->file);
	free(p->program);
	free(p->args);
	free(p->exec_path);
}

void run_close(struct run_dir *r)
{
	for (size_t i = 0; i < r->n; i++)
		run_proc_free(&r->procs[i]);
	free(r->procs);
	free(r->path);
	memset(r, 0, sizeof(*r));
	r->roots = -1;
}

static int run_cmp_procs(const void *a, const void *b)
{
	const struct run_proc *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->file, y->file);
}

/* Traces by pid, then start: for run_find()'s binary search. */
static const struct run_dir *run_sorting;

static int run_cmp_by_pid(const void *a, const void *b)
{
	const struct run_proc *x = &run_sorting->procs[*(const long *)a];
	const struct run_proc *y = &run_sorting->procs[*(const long *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return *(const long *)a < *(const long *)b ? -1 : *(const long *)a > *(const long *)b;
}

/*
 * The trace of process @pid current at @t: the latest of its images that
 * began at or before @t (a pid reused later in the run is another
 * process), not @self, among the traces before @self (sorted by start).
 * @by_pid: the traces' indices sorted by pid, then index. -1 when none.
 */
static long run_find(const struct run_dir *r, const long *by_pid, uint32_t pid, uint64_t t,
		     size_t self)
{
	size_t lo = 0, hi = r->n;
	long best = -1;

	while (lo < hi) {	/* the first of @pid */
		size_t mid = lo + (hi - lo) / 2;

		if (r->procs[by_pid[mid]].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < r->n && r->procs[by_pid[lo]].pid == pid; lo++) {
		long j = by_pid[lo];

		if ((size_t)j != self && r->procs[j].start_ns <= t &&
		    ((size_t)j < self || r->procs[j].start_ns < t))
			best = j;	/* by index, so by start: the last wins */
	}
	return best;
}

static void run_set_depth(struct run_dir *r, long i, unsigned depth)
{
	for (; i >= 0; i = r->procs[i].next_sibling) {
		r->procs[i].depth = depth;
		if (depth < 1000)
			run_set_depth(r, r->procs[i].first_child, depth + 1);
	}
}

/* Parents, images and the children lists; procs already sorted by start. */
static void run_tree(struct run_dir *r)
{
	long *last = calloc(r->n + 1, sizeof(*last));
	long *by_pid = malloc((r->n + 1) * sizeof(*by_pid));
	long last_root = -1;

	if (!by_pid) {
		free(last);
		last = NULL;	/* out of memory: flat */
	} else {
		for (size_t i = 0; i < r->n; i++)
			by_pid[i] = (long)i;
		run_sorting = r;
		qsort(by_pid, r->n, sizeof(*by_pid), run_cmp_by_pid);
	}
	for (size_t i = 0; i < r->n; i++) {
		struct run_proc *p = &r->procs[i];

		if (!by_pid) {
			p->parent = -1;
			continue;
		}
		p->prev_image = p->pid ? run_find(r, by_pid, p->pid, p->start_ns, i) : -1;
		/* an earlier process that ended otherwise had the pid before: reused */
		if (p->prev_image >= 0 && r->procs[p->prev_image].has_close &&
		    !r->procs[p->prev_image].exec_path &&
		    !(r->procs[p->prev_image].has_end &&
		      r->procs[p->prev_image].end == FDRTRACE_END_EXECED))
			p->prev_image = -1;
		if (p->prev_image >= 0)
			p->parent = r->procs[p->prev_image].parent;
		else
			p->parent = p->ppid ? run_find(r, by_pid, p->ppid, p->start_ns, i) : -1;
		/* a parent that began after its child: a reused pid, not the parent */
		if ((p->parent >= 0 && (size_t)p->parent >= i) || !last)
			p->parent = -1;	/* out of memory: flat */
	}
	for (size_t i = 0; i < r->n; i++) {
		struct run_proc *p = &r->procs[i];

		if (p->parent < 0) {
			if (last_root < 0)
				r->roots = (long)i;
			else
				r->procs[last_root].next_sibling = (long)i;
			last_root = (long)i;
		} else {
			long q = p->parent;

			if (last[q] == 0)
				r->procs[q].first_child = (long)i;
			else
				r->procs[last[q] - 1].next_sibling = (long)i;
			last[q] = (long)i + 1;
		}
	}
	free(last);
	free(by_pid);
	run_set_depth(r, r->roots, 0);
}

char *run_default_input(char *buf, size_t cap)
{
	struct timespec best = { 0, 0 };
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (!stat(RUN_DEFAULT_DIR, &st) && S_ISDIR(st.st_mode) &&
	    run_is_index(RUN_DEFAULT_DIR "/" RUN_INDEX)) {
		snprintf(buf, cap, "%s", RUN_DEFAULT_DIR);
		return buf;
	}
	d = opendir(".");
	if (!d)
		return NULL;
	buf[0] = '\0';
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 5 || strcmp(de->d_name + n - 4, ".fdr") || n >= cap)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (buf[0] && (st.st_mtim.tv_sec < best.tv_sec ||
			       (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec <= best.tv_nsec)))
			continue;
		best = st.st_mtim;
		memcpy(buf, de->d_name, n + 1);
	}
	closedir(d);
	return buf[0] ? buf : NULL;
}

bool run_is_index(const char *path)
{
	char head[sizeof(RUN_INDEX_MAGIC) - 1];
	struct stat st;
	bool is = false;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	is = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	     pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
	     memcmp(head, RUN_INDEX_MAGIC, sizeof(head)) == 0;
	close(fd);
	return is;
}

int run_open(struct run_dir *r, const char *dir, char *const *only, size_t n_only)
{
	char **names = NULL, path[8192];
	size_t n = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	r->roots = -1;
	if (!(r->path = strdup(dir)))
		return -ENOMEM;
	if (only) {
		n = n_only;
		if (n && !(names = calloc(n, sizeof(*names))))
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			if (!(names[i] = strdup(only[i]))) {
				run_names_free(names, n);
				return -ENOMEM;
			}
		if (n)
			qsort(names, n, sizeof(*names), run_cmp_names);
	} else if ((rc = run_list(dir, "", &names, &n))) {
		return rc;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, RUN_INDEX);
	r->has_index = run_is_index(path);
	if (n && !(r->procs = calloc(n, sizeof(*r->procs)))) {
		run_names_free(names, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct run_proc *p = &r->procs[r->n];

		p->file = names[i];
		names[i] = NULL;
		r->n++;
		snprintf(path, sizeof(path), "%s/%s", dir, p->file);
		if ((rc = run_read_trace(path, p))) {
			run_names_free(names, n);
			return rc;
		}
		if (!p->has_process)
			p->pid = (uint32_t)run_name_pid(p->file, names, 0);
	}
	/* numbered names (NAME.PID.N.fdr) need the whole list: now */
	run_names_free(names, n);
	names = NULL;
	for (size_t i = 0; i < r->n; i++) {
		if (r->procs[i].has_process)
			continue;
		if (!names) {
			if (!(names = malloc(r->n * sizeof(*names))))
				break;
			for (size_t k = 0; k < r->n; k++)
				names[k] = r->procs[k].file;
			qsort(names, r->n, sizeof(*names), run_cmp_names);
		}
		r->procs[i].pid = (uint32_t)run_name_pid(r->procs[i].file, names, r->n);
	}
	free(names);	/* the names are the traces' */
	if (r->n)
		qsort(r->procs, r->n, sizeof(*r->procs), run_cmp_procs);
	run_tree(r);
	return 0;
}

/* Append @s to @buf (length *@len, capacity @cap), cut with "..." when full. */
static void run_put(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
	if (*len + n + 4 > cap) {
		size_t room = *len + 4 < cap ? cap - *len - 4 : 0;

		if (room > n)
			room = n;
		memcpy(buf + *len, s, room);
		*len += room;
		if (*len + 4 <= cap) {
			memcpy(buf + *len, "...", 4);
			*len += 3;
		}
		*len = cap;	/* full */
		return;
	}
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

/* One argument, quoted for a shell when it needs it, control bytes escaped. */
static void run_put_arg(char *buf, size_t cap, size_t *len, const char *a, size_t n, bool tabs)
{
	bool plain = n > 0;

	for (size_t i = 0; i < n && plain; i++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			       "_-+=/.,:%@", a[i]) != NULL;
	if (plain) {
		run_put(buf, cap, len, a, n);
		return;
	}
	run_put(buf, cap, len, "'", 1);
	for (size_t i = 0; i < n && *len < cap; i++) {
		unsigned char c = (unsigned char)a[i];
		char esc[8];

		if (c == '\'')
			run_put(buf, cap, len, "'\\''", 4);
		else if (c == '\n' && !tabs)
			run_put(buf, cap, len, "\n", 1);
		else if (c == '\n' || c == '\t' || c < 0x20 || c == 0x7f)
			run_put(buf, cap, len, esc,
				(size_t)snprintf(esc, sizeof(esc), c == '\n' ? "\\n" :
							 c == '\t' ? "\\t" : "\\x%02x", c));
		else
			run_put(buf, cap, len, (const char *)&a[i], 1);
	}
	run_put(buf, cap, len, "'", 1);
}

void run_command(const struct run_proc *p, char *buf, size_t cap, bool tabs)
{
	size_t len = 0;

	if (!cap)
		return;
	buf[0] = '\0';
	if (!p->args || !p->argc) {
		const char *prog = p->program && *p->program ? p->program : "?";

		run_put_arg(buf, cap, &len, prog, strlen(prog), tabs);
		return;
	}
	for (uint32_t off = 0, i = 0; off < p->args_len && len < cap; i++) {
		size_t n = strnlen(p->args + off, p->args_len - off);

		if (i)
			run_put(buf, cap, &len, " ", 1);
		run_put_arg(buf, cap, &len, p->args + off, n, tabs);
		off += (uint32_t)n + 1;
	}
	if (p->args_cut && len < cap)
		run_put(buf, cap, &len, " ...", 4);
}

void run_ended(const struct run_proc *p, char *buf, size_t cap)
{
	const char *abbrev;

	if (!p->readable) {
		snprintf(buf, cap, p->size ? "not a trace" :
			 "empty file: no records (killed as it began?)");
		return;
	}
	if (!p->has_close) {
		snprintf(buf, cap, p->running ? "still running: not closed yet" :
			 "no close: killed or cut short");
		return;
	}
	if (p->how == FDRTRACE_CLOSE_SNAPSHOT) {
		snprintf(buf, cap, "snapshot (went on)");
		return;
	}
	if (p->has_end) {
		switch (p->end) {
		case FDRTRACE_END_EXITED:
			snprintf(buf, cap, "exited %" PRIu32, p->end_value);
			return;
		case FDRTRACE_END_SIGNALED:
			abbrev = p->end_value < 256 ? sigabbrev_np((int)p->end_value) : NULL;
			if (abbrev)
				snprintf(buf, cap, "killed by SIG%s", abbrev);
			else
				snprintf(buf, cap, "killed by signal %" PRIu32, p->end_value);
			return;
		case FDRTRACE_END_EXECED:
			snprintf(buf, cap, "exec'd %s", p->exec_path ? p->exec_path : "?");
			return;
		default:
			break;
		}
	}
	if (p->exec_path) {
		snprintf(buf, cap, "exec'd %s", p->exec_path);
		return;
	}
	switch (p->how) {
	case FDRTRACE_CLOSE_EXIT:
		snprintf(buf, cap, "exited (status not recorded)");
		return;
	case FDRTRACE_CLOSE_SIGNAL:
		snprintf(buf, cap, "fatal signal");
		return;
	case FDRTRACE_CLOSE_STOPPED:
		snprintf(buf, cap, "recording stopped: %s",
			 p->error ? strerror((int)p->error) : "a write failed");
		return;
	default:
		snprintf(buf, cap, "closed (how %u)", p->how);
		return;
	}
}

int run_write_index(const struct run_dir *r, const char *header)
{
	char tmp[8192], path[8192], cmd[4096], ended[512];
	FILE *f;
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", r->path, RUN_INDEX) >= (int)sizeof(tmp) ||
	    snprintf(path, sizeof(path), "%s/%s", r->path, RUN_INDEX) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	fputs(RUN_INDEX_MAGIC " 1\n", f);
	if (header)
		fputs(header, f);
	fputs("pid\tppid\ttrace\tstart_ns\tend_ns\tended\trecords\tlost\tleft_out\tcommand\n", f);
	for (size_t i = 0; i < r->n; i++) {
		const struct run_proc *p = &r->procs[i];

		run_command(p, cmd, sizeof(cmd), true);
		run_ended(p, ended, sizeof(ended));
		for (char *c = ended; *c; c++)
			if (*c == '\t' || *c == '\n')
				*c = ' ';
		fprintf(f, "%" PRIu32 "\t%" PRIu32 "\t%s\t%" PRIu64 "\t%" PRIu64 "\t%s\t%" PRIu64
			"\t%" PRIu64 "\t%" PRIu64 "\t%s\n", p->pid, p->ppid, p->file, p->start_ns,
			p->end_ns, ended, p->records, p->lost, p->left_out, cmd);
	}
	if (fflush(f) || ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
