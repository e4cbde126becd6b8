/* SPDX-License-Identifier: MIT */
/*
 * input.c - the traces an analysis command reads (see input.h).
 *
 * Contract: single-threaded tool code. Memory: per trace of the input, its
 * path, program and command line; nothing per record.
 */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "cli.h"
#include "histogram.h"
#include "run.h"
#include "util.h"

/* A run's trace is looked at up to this many buffers for its start records. */
#define RI_SCAN_BUFFERS 8

static char *ri_strndup(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static struct ri_trace *ri_add(struct run_input *ri, const char *path)
{
	struct ri_trace *t;

	if (tool_grow(&ri->t, &ri->cap, ri->n, sizeof(*ri->t), 16))
		return NULL;
	t = &ri->t[ri->n];
	memset(t, 0, sizeof(*t));
	t->parent = -1;
	t->exec_next = -1;
	t->first_child = t->next_sibling = t->prev_same = -1;
	t->selected = true;
	t->path = strdup(path);
	if (!t->path)
		return NULL;
	ri->n++;
	return t;
}

/* The traces of directory @dir (run_list(): *.fdr, not snapshots), by name. */
static int ri_add_dir(struct run_input *ri, const char *dir)
{
	const char *sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
	char **names, *path;
	size_t n, i;
	int rc = run_list(dir, "", &names, &n);

	if (rc == -ENOMEM) {
		tool_err("out of memory");
		return -1;
	}
	if (rc) {
		tool_err("%s: %s", dir, strerror(-rc));
		return -1;
	}
	for (i = 0; i < n && !rc; i++) {
		if (asprintf(&path, "%s%s%s", dir, sep, names[i]) < 0) {
			rc = -1;
			break;
		}
		if (!ri_add(ri, path))
			rc = -1;
		free(path);
	}
	run_names_free(names, n);
	if (rc)
		tool_err("out of memory");
	else if (!n) {
		tool_err("%s: no trace (*.fdr) in the directory", dir);
		rc = -1;
	}
	return rc;
}

/* The command line as one string: the arguments joined by spaces. */
static char *ri_cmdline(const struct fdrtrace_str *args)
{
	char *s = ri_strndup(args->ptr, args->len);
	size_t i, n = args->len;

	if (!s)
		return NULL;
	while (n && s[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++)
		if (s[i] == '\0')
			s[i] = ' ';
	s[n] = '\0';
	return s;
}

/*
 * Read @t's start records: the header's frequency, the process record, a
 * fork record, and the first TSC; up to RI_SCAN_BUFFERS buffers.
 */
static int ri_scan(struct ri_trace *t)
{
	struct fdrtrace_reader *r;
	struct fdrtrace_event ev;
	struct fdrtrace_ext x;
	bool have_proc = false, have_fn = false;
	uint64_t first_tsc = 0;
	int fd = open(t->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		tool_err("%s: %s", t->path, strerror(errno));
		return -1;
	}
	r = fdrtrace_reader_open(fd);
	while (r && fdrtrace_reader_read(r, &ev) == 0) {
		if (ev.type == FDRTRACE_EV_HEADER)
			t->freq = ev.u.header.cycle_frequency;
		if (ev.buffer > RI_SCAN_BUFFERS || (have_proc && have_fn))
			break;
		if (!first_tsc && ev.tsc)
			first_tsc = ev.tsc;
		if (ev.type == FDRTRACE_EV_FUNCTION)
			have_fn = true;
		if (ev.type != FDRTRACE_EV_CUSTOM_EVENT ||
		    fdrtrace_ext_decode(ev.u.event.data, ev.u.event.size, &x))
			continue;
		if (x.kind == FDRTRACE_EXT_PROCESS && !have_proc) {
			have_proc = true;
			t->pid = (int32_t)x.u.process.pid;
			t->ppid = (int32_t)x.u.process.ppid;
			t->start_ns = x.u.process.start_realtime_ns;
			if (x.u.process.program.len)
				t->program = ri_strndup(x.u.process.program.ptr,
							x.u.process.program.len);
			if (x.u.process.has_cmdline) {
				t->start_tsc = x.u.process.start_tsc;
				if (x.u.process.argc && x.u.process.args.len)
					t->cmdline = ri_cmdline(&x.u.process.args);
			}
		} else if (x.kind == FDRTRACE_EXT_FORK) {
			t->origin = RI_FORK;
			t->fork_rec = true;
			t->ppid = (int32_t)x.u.fork.parent_pid;
			if (x.u.fork.has_point)
				t->fork_serial = x.u.fork.serial;
			if (x.u.fork.has_point && x.u.fork.tsc) {	/* 0: not filled in */
				t->fork_point = true;
				t->parent_tid = (int32_t)x.u.fork.parent_tid;
				t->fork_tsc = x.u.fork.tsc;
			}
		}
	}
	if (!t->start_tsc)
		t->start_tsc = first_tsc;
	fdrtrace_reader_close(r);
	close(fd);
	return 0;
}

static int ri_start_cmp(const void *x, const void *y)
{
	const struct ri_trace *p = x, *q = y;
	uint64_t a = p->start_tsc, b = q->start_tsc;

	if (!a || !b) {	/* a trace without a TSC: by the wall clock */
		a = p->start_ns;
		b = q->start_ns;
	}
	if (a != b)
		return a < b ? -1 : 1;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return strcmp(p->path, q->path);
}

/* The slot of @pid in @h (a power of two @cap of trace index + 1, 0 empty). */
static uint32_t ri_pid_slot(const struct run_input *ri, const uint32_t *h, uint32_t cap,
			    int32_t pid)
{
	uint32_t j = ((uint32_t)pid * 0x9e3779b1u) & (cap - 1);

	while (h[j] && ri->t[h[j] - 1].pid != pid)
		j = (j + 1) & (cap - 1);
	return j;
}

/*
 * Each trace's parent in the run: the latest earlier trace of the same pid
 * (an exec replaced it), else the latest earlier trace of its parent pid
 * (one that began before the fork, when the fork's time is known: the
 * parent may have exec'd since). A hash of pid -> its latest trace so far,
 * and each trace's earlier one of its pid: linear in the traces.
 */
static int ri_link(struct run_input *ri)
{
	uint32_t i, cap = 16, *h;

	while (cap < 2 * ri->n)
		cap *= 2;
	h = calloc(cap, sizeof(*h));
	if (!h)
		return -1;
	for (i = 0; i < ri->n; i++) {
		struct ri_trace *t = &ri->t[i];
		int32_t j = -1;
		uint32_t slot;

		if (t->ppid && t->ppid != t->pid) {
			slot = ri_pid_slot(ri, h, cap, t->ppid);
			for (j = (int32_t)h[slot] - 1; j >= 0; j = ri->t[j].prev_same)
				if (!t->fork_point || ri->t[j].start_tsc <= t->fork_tsc)
					break;	/* not an image begun after the fork */
		}
		if (t->pid) {
			slot = ri_pid_slot(ri, h, cap, t->pid);
			if (h[slot]) {
				j = (int32_t)h[slot] - 1;
				t->prev_same = j;
				t->origin = RI_EXEC;
				ri->t[j].exec_next = (int32_t)i;
			}
			h[slot] = i + 1;
		}
		if (j >= 0 && t->origin != RI_EXEC)
			t->origin = RI_FORK;
		else if (j < 0)
			t->origin = RI_ROOT;
		t->parent = j;
		if (j >= 0) {
			t->next_sibling = ri->t[j].first_child;
			ri->t[j].first_child = (int32_t)i;
		}
	}
	free(h);
	return 0;
}

int ri_open(struct run_input *ri, const struct cli *cl, int from, int count)
{
	struct stat st;
	int i, k;

	memset(ri, 0, sizeof(*ri));
	ri->cmd = cl->cmd->name;
	for (i = from; i < from + count; i++) {
		const char *f = cl->files[i];

		if (strcmp(f, "-") && stat(f, &st) == 0 && S_ISDIR(st.st_mode)) {
			ri->run = true;
			if (ri_add_dir(ri, f))
				goto fail;
		} else if (!ri_add(ri, f)) {
			tool_err("out of memory");
			goto fail;
		}
	}
	if (ri->n > 1)
		ri->run = true;
	if (!ri->run && cl->n_pids && strcmp(ri->t[0].path, "-"))
		if (ri_scan(&ri->t[0]))	/* --pid on one trace: is it that process's? */
			goto fail;
	if (ri->run) {
		for (i = 0; i < (int)ri->n; i++) {
			if (strcmp(ri->t[i].path, "-") == 0) {
				tool_usage_err(ri->cmd, "'-' (standard input) is one trace: "
					       "not in a run");
				goto fail;
			}
			if (ri_scan(&ri->t[i]))
				goto fail;
		}
		qsort(ri->t, ri->n, sizeof(*ri->t), ri_start_cmp);
		if (ri_link(ri)) {
			tool_err("out of memory");
			goto fail;
		}
		ri->freq = ri->t[0].freq;
		for (i = 0; i < (int)ri->n; i++) {
			uint64_t s = ri->t[i].start_tsc;

			if (s && (!ri->base || s < ri->base))
				ri->base = s;
		}
	}
	ri->n_selected = ri->n;
	if (cl->n_pids) {
		ri->n_selected = 0;
		for (i = 0; i < (int)ri->n; i++) {
			struct ri_trace *t = &ri->t[i];

			t->selected = false;
			for (k = 0; k < cl->n_pids; k++)
				t->selected |= t->pid == cl->pids[k];
			ri->n_selected += t->selected;
		}
		for (k = 0; k < cl->n_pids; k++) {
			for (i = 0; i < (int)ri->n; i++)
				if (ri->t[i].pid == cl->pids[k])
					break;
			if (i == (int)ri->n) {
				tool_usage_err(ri->cmd, "no trace of process %d", (int)cl->pids[k]);
				goto fail;
			}
		}
	}
	return 0;
fail:
	ri_close(ri);
	return -1;
}

void ri_close(struct run_input *ri)
{
	uint32_t i;

	for (i = 0; i < ri->n; i++) {
		free(ri->t[i].path);
		free(ri->t[i].program);
		free(ri->t[i].cmdline);
	}
	free(ri->t);
	memset(ri, 0, sizeof(*ri));
}

const char *ri_name(const struct ri_trace *t)
{
	if (t->cmdline && *t->cmdline)
		return t->cmdline;
	if (t->program && *t->program)
		return t->program;
	return t->path;
}

char *ri_process_name(const struct run_input *ri, uint32_t k)
{
	static const char sep[] = "; exec ";
	size_t len = 0;
	int32_t i = (int32_t)k;
	char *s, *p;

	while (ri->t[i].origin == RI_EXEC)
		i = ri->t[i].parent;
	for (int32_t j = i; j >= 0; j = ri->t[j].exec_next)
		len += strlen(ri_name(&ri->t[j])) + sizeof(sep);
	s = p = malloc(len + 1);
	if (!s)
		return NULL;
	for (int32_t j = i; j >= 0; j = ri->t[j].exec_next)
		p += sprintf(p, "%s%s", j == i ? "" : sep, ri_name(&ri->t[j]));
	return s;
}

void ri_say_read(const struct run_input *ri, bool quiet, uint32_t read)
{
	uint32_t i, procs = 0;

	if (!ri->run || quiet)
		return;
	for (i = 0; i < ri->n; i++)
		procs += ri->t[i].selected && ri->t[i].origin != RI_EXEC;
	fprintf(stderr, "fdrtrace %s: read %u of %u traces (%u processes) as one run\n", ri->cmd,
		read, ri->n, procs);
}

uint64_t ri_ticks(const struct run_input *ri, uint64_t freq, uint64_t ticks)
{
	if (!ri->freq || !freq || freq == ri->freq)
		return ticks;
	return tool_scale(ticks, (double)ri->freq, freq);
}

/* ---- interned strings ---- */

static uint32_t ri_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	while (len--)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

uint32_t ri_names_get(struct ri_names *nm, const char *s, size_t len)
{
	uint32_t j, k;

	if (nm->hash_cap) {
		j = ri_hash(s, len) & (nm->hash_cap - 1);
		while ((k = nm->hash[j])) {
			const char *o = nm->str[k - 1];

			if (strncmp(o, s, len) == 0 && o[len] == '\0')
				return k - 1;
			j = (j + 1) & (nm->hash_cap - 1);
		}
	}
	if (nm->n == nm->cap) {
		uint32_t cap = nm->cap ? nm->cap * 2 : 64;
		char **v = realloc(nm->str, cap * sizeof(*v));
		uint32_t *h = calloc((size_t)cap * 2, sizeof(*h));

		if (v)
			nm->str = v;
		if (!v || !h) {
			free(h);
			return UINT32_MAX;
		}
		nm->cap = cap;
		free(nm->hash);
		nm->hash = h;
		nm->hash_cap = cap * 2;
		for (k = 0; k < nm->n; k++) {
			const char *o = nm->str[k];

			j = ri_hash(o, strlen(o)) & (nm->hash_cap - 1);
			while (nm->hash[j])
				j = (j + 1) & (nm->hash_cap - 1);
			nm->hash[j] = k + 1;
		}
	}
	nm->str[nm->n] = ri_strndup(s, len);
	if (!nm->str[nm->n])
		return UINT32_MAX;
	j = ri_hash(s, len) & (nm->hash_cap - 1);
	while (nm->hash[j])
		j = (j + 1) & (nm->hash_cap - 1);
	nm->hash[j] = ++nm->n;
	return nm->n - 1;
}

void ri_names_free(struct ri_names *nm)
{
	uint32_t i;

	for (i = 0; i < nm->n; i++)
		free(nm->str[i]);
	free(nm->str);
	free(nm->hash);
	memset(nm, 0, sizeof(*nm));
}

int ri_tally_merge(struct an_tally *dst, const struct an_tally *src)
{
	if (src->calls) {
		if (!dst->calls || src->min < dst->min)
			dst->min = src->min;
		if (src->max > dst->max)
			dst->max = src->max;
	}
	dst->calls += src->calls;
	dst->sum += src->sum;
	dst->self += src->self;
	dst->total += src->total;
	dst->spanning += src->spanning;
	dst->unwound += src->unwound;
	return hist_merge(&dst->hist, &src->hist);
}
