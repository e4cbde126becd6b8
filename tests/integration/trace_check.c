// SPDX-License-Identifier: MIT
/*
 * tests/integration/trace_check.c - run a traced program in a temp dir and
 * summarise its trace with the reader library.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/reader.h>

#include "trace_check.h"

extern char **environ;
bool tc_want_log;
long tc_fsize_limit;
long tc_kill_ms;

static void slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = 0;

	buf[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, buf, cap - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

void tc_run_wrapped(struct tc_run *r, const char *const *pre, const char *const *argv,
		    const char *const *env)
{
	char tmpl[] = "/tmp/fdrtrace-it-XXXXXX";
	char outp[300], errp[300];
	const char *args[64];
	char *envp[256];
	int na = 0, ne = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (!mkdtemp(tmpl))
		abort();
	snprintf(r->dir, sizeof(r->dir), "%s", tmpl);
	for (; pre && *pre; pre++)
		args[na++] = *pre;
	for (; *argv; argv++)
		args[na++] = *argv;
	args[na] = NULL;
	for (char **e = environ; *e && ne < 200; e++)
		if (strncmp(*e, "FDRTRACE_", 9) && strncmp(*e, "LD_PRELOAD=", 11))
			envp[ne++] = *e;
	for (; env && *env; env++)
		envp[ne++] = (char *)*env;
	envp[ne] = NULL;
	snprintf(outp, sizeof(outp), "%s/stdout", r->dir);
	snprintf(errp, sizeof(errp), "%s/stderr", r->dir);
	pid = fork();
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (o < 0 || e < 0 || chdir(r->dir) < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		if (tc_fsize_limit) {
			struct rlimit rl = { (rlim_t)tc_fsize_limit, (rlim_t)tc_fsize_limit };

			setrlimit(RLIMIT_FSIZE, &rl);
		}
		execve(args[0], (char *const *)args, envp);
		_exit(127);
	}
	if (tc_kill_ms > 0) {
		struct timespec ts = { tc_kill_ms / 1000, (tc_kill_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
	}
	waitpid(pid, &r->status, 0);
	slurp(outp, r->out, sizeof(r->out));
	slurp(errp, r->err, sizeof(r->err));
}

void tc_run(struct tc_run *r, const char *const *argv, const char *const *env)
{
	tc_run_wrapped(r, NULL, argv, env);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

int tc_find_traces(const struct tc_run *r, char paths[][512], int max)
{
	DIR *d = opendir(r->dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l > 4 && !strcmp(de->d_name + l - 4, ".fdr") && n < max)
			snprintf(paths[n++], 512, "%s/%s", r->dir, de->d_name);
	}
	closedir(d);
	qsort(paths, (size_t)n, 512, cmp_str);
	return n;
}

struct tc_stack {
	bool started;		/* a function record was seen */
	int32_t tid;
	uint32_t depth, cap;
	uint32_t *ids;
	uint64_t buffer_no;	/* of its last numbered stack record (ring policy) */
	bool floor_unknown;	/* a gap unwound calls we cannot name: exits below are not errors */
};

static struct tc_stack *stack_of(struct tc_stack *st, int *n, int32_t tid)
{
	for (int i = 0; i < *n; i++)
		if (st[i].tid == tid)
			return &st[i];
	if (*n >= TC_MAX_TIDS)
		return NULL;
	st[*n].tid = tid;
	st[*n].started = false;
	st[*n].depth = 0;
	st[*n].buffer_no = 0;
	st[*n].floor_unknown = false;
	st[*n].cap = 1024;
	st[*n].ids = malloc(1024 * sizeof(uint32_t));
	return &st[(*n)++];
}

static void on_ext(struct tc_trace *t, const struct fdrtrace_event *ev, struct tc_stack *s)
{
	struct fdrtrace_ext x;

	if (ev->u.event.size < 4 || memcmp(ev->u.event.data, FDRTRACE_EXT_MAGIC, 4)) {
		size_t n = ev->u.event.size < 63 ? ev->u.event.size : 63;

		t->user_events++;
		memcpy(t->user_event, ev->u.event.data, n);
		t->user_event[n] = '\0';
		return;
	}
	if (fdrtrace_ext_decode(ev->u.event.data, ev->u.event.size, &x) < 0)
		return;
	switch (x.kind) {
	case FDRTRACE_EXT_STACK:
		/* the calls open when the buffer started: the stack to go on from */
		t->stacks++;
		if (x.u.stack.depth > t->stack_depth_max)
			t->stack_depth_max = x.u.stack.depth;
		if (s && x.u.stack.numbered) {
			/* ring policy: the thread's buffers, numbered */
			t->ring_numbered++;
			if (!s->buffer_no)
				t->ring_first_before += x.u.stack.records_before;
			else if (x.u.stack.buffer_no != s->buffer_no + 1)
				t->ring_misnumbered++;
			s->buffer_no = x.u.stack.buffer_no;
		}
		if (s) {
			bool same = s->depth == x.u.stack.depth;

			if (s->cap < x.u.stack.depth) {
				s->cap = x.u.stack.depth;
				s->ids = realloc(s->ids, s->cap * sizeof(uint32_t));
			}
			for (uint32_t i = 0; i < x.u.stack.depth; i++) {
				uint32_t id;

				memcpy(&id, x.u.stack.ids + 4 * i, 4);
				same = same && s->ids[i] == id;
				s->ids[i] = id;
			}
			s->depth = x.u.stack.depth;
			s->floor_unknown = false;
			if (!same && s->started)
				t->stack_unmatched++;
		}
		break;
	case FDRTRACE_EXT_FUNC:
		t->funcs++;
		if (x.u.func.func_id < TC_MAX_IDS && !t->names[x.u.func.func_id]) {
			uint32_t m = x.u.func.module_id;
			bool mapped = m < sizeof(t->mapped) && t->mapped[m];

			t->names[x.u.func.func_id] =
				strndup(x.u.func.name.ptr, x.u.func.name.len);
			t->offline[x.u.func.func_id] = !x.u.func.name.len && mapped;
			t->cannot_name[x.u.func.func_id] = !x.u.func.name.len && !mapped;
		}
		break;
	case FDRTRACE_EXT_DROP:
		if (s && x.u.drop.gap) {
			/* the calls the gap closed and opened (format.h): go on from there */
			if (x.u.drop.exited == FDRTRACE_GAP_UNKNOWN) {
				s->depth = 0;
				s->floor_unknown = true;
			} else {
				if (x.u.drop.exited > s->depth && !s->floor_unknown)
					t->unmatched++;
				s->depth -= x.u.drop.exited < s->depth ? x.u.drop.exited : s->depth;
				if (s->cap < s->depth + x.u.drop.depth) {
					s->cap = s->depth + x.u.drop.depth;
					s->ids = realloc(s->ids, s->cap * sizeof(uint32_t));
				}
				for (uint32_t i = 0; i < x.u.drop.depth; i++)
					memcpy(&s->ids[s->depth++], x.u.drop.ids + 4 * i, 4);
			}
			t->gaps++;
		}
		t->dropped += x.u.drop.records;
		if (x.u.drop.reason < FDRTRACE_DROP_REASON_COUNT)
			t->dropped_by[x.u.drop.reason] += x.u.drop.records;
		break;
	case FDRTRACE_EXT_COUNTED: {
		uint32_t id;
		uint64_t calls;

		t->counted_records++;
		t->counted_lost += x.u.counted.lost;
		for (uint32_t i = 0; fdrtrace_ext_counted_pair(&x, i, &id, &calls) == 0; i++)
			if (id < TC_MAX_IDS)
				t->counted[id] += calls;
		break;
	}
	case FDRTRACE_EXT_EXCLUDED:
		if (x.u.excluded.undone) {
			t->undone++;
			break;
		}
		t->excluded++;
		if (x.u.excluded.func_id < TC_MAX_IDS)
			t->excluded_id[x.u.excluded.func_id] = true;
		break;
	case FDRTRACE_EXT_CLOSE:
		t->closed = true;
		t->close_how = x.u.close.how;
		t->close_records = x.u.close.records;
		t->close_dropped = x.u.close.records_dropped;
		t->close_error = x.u.close.error;
		t->close_freq = x.u.close.cycle_frequency;
		break;
	case FDRTRACE_EXT_FORK:
		t->forks++;
		t->fork_parent = x.u.fork.parent_pid;
		t->fork_child = x.u.fork.child_pid;
		break;
	case FDRTRACE_EXT_PROCESS:
		t->processes++;
		break;
	case FDRTRACE_EXT_THREAD_NAME:
		t->thread_names++;
		break;
	case FDRTRACE_EXT_MODULE_MAP:
		t->module_maps++;
		if (x.u.module_map.module_id < sizeof(t->mapped))
			t->mapped[x.u.module_map.module_id] = 1;
		break;
	case FDRTRACE_EXT_CONFIG: {
		struct fdrtrace_str k, v;
		size_t pos = 0;

		/* the pool grew (one pair, pool_buffers=N); else the start records' configuration */
		if (x.u.config.pairs == 1 && fdrtrace_ext_config_pair(&x, &pos, &k, &v) == 1 &&
		    k.len == 12 && !memcmp(k.ptr, "pool_buffers", 12)) {
			t->pool_growths++;
			t->pool_buffers = 0;
			for (size_t i = 0; i < v.len && v.ptr[i] >= '0' && v.ptr[i] <= '9'; i++)
				t->pool_buffers = t->pool_buffers * 10 + (uint64_t)(v.ptr[i] - '0');
		} else {
			t->configs++;
		}
		break;
	}
	case FDRTRACE_EXT_EXEC:
		t->execs++;
		snprintf(t->exec_path, sizeof(t->exec_path), "%.*s", (int)x.u.exec.path.len,
			 x.u.exec.path.ptr);
		break;
	default:
		break;
	}
}

void tc_read(const char *path, struct tc_trace *t)
{
	struct tc_stack *st = calloc(TC_MAX_TIDS, sizeof(*st));
	int nst = 0;
	int fd = open(path, O_RDONLY);
	struct fdrtrace_reader *r;
	struct fdrtrace_event ev;
	struct stat sb;

	memset(t, 0, sizeof(*t));
	if (fd < 0) {
		snprintf(t->error, sizeof(t->error), "%s: %s", path, strerror(errno));
		free(st);
		return;
	}
	fstat(fd, &sb);
	t->file_size = (uint64_t)sb.st_size;
	r = fdrtrace_reader_open(fd);
	while (fdrtrace_reader_read(r, &ev) == 0) {
		switch (ev.type) {
		case FDRTRACE_EV_HEADER:
			t->version = ev.u.header.version;
			t->buffer_size = ev.u.header.buffer_size;
			t->freq = ev.u.header.cycle_frequency;
			break;
		case FDRTRACE_EV_NEW_BUFFER: {
			bool seen = false;

			t->buffers++;
			for (int i = 0; i < t->ntids; i++)
				seen |= t->tids[i] == ev.tid;
			if (!seen && t->ntids < TC_MAX_TIDS)
				t->tids[t->ntids++] = ev.tid;
			break;
		}
		case FDRTRACE_EV_PID: {
			bool seen = false;

			for (int i = 0; i < t->npids; i++)
				seen |= t->pids[i] == ev.pid;
			if (!seen && t->npids < 8)
				t->pids[t->npids++] = ev.pid;
			break;
		}
		case FDRTRACE_EV_FUNCTION: {
			uint32_t id = ev.u.func.func_id;
			struct tc_stack *s = stack_of(st, &nst, ev.tid);

			if (!t->func_records)
				t->start_records_first = t->processes && t->configs && t->module_maps;
			t->func_records++;
			if (s)
				s->started = true;
			if (id >= TC_MAX_IDS || !t->names[id])
				t->unnamed++;
			else if (t->cannot_name[id])
				t->nameless++;
			if (tc_want_log) {
				if ((t->nlog & (t->nlog - 1)) == 0 && t->nlog >= 64)
					t->log = realloc(t->log, 2 * t->nlog * sizeof(*t->log));
				else if (!t->log)
					t->log = malloc(64 * sizeof(*t->log));
				t->log[t->nlog++] = (struct tc_rec){ ev.tid, (uint8_t)ev.u.func.action,
								    id, ev.tsc };
			}
			if (ev.u.func.action == FDRTRACE_FN_ENTRY_ARGS)
				t->entry_args++;
			if (ev.u.func.action == FDRTRACE_FN_ENTRY ||
			    ev.u.func.action == FDRTRACE_FN_ENTRY_ARGS) {
				t->entries++;
				if (id < TC_MAX_IDS)
					t->entry_count[id]++;
				if (s) {
					if (s->depth == s->cap) {
						s->cap *= 2;
						s->ids = realloc(s->ids, s->cap * sizeof(uint32_t));
					}
					s->ids[s->depth++] = id;
					if (s->depth > t->max_depth)
						t->max_depth = s->depth;
				}
			} else {
				t->exits++;
				if (id < TC_MAX_IDS)
					t->exit_count[id]++;
				if (s && s->depth && s->ids[s->depth - 1] == id)
					s->depth--;
				else if (!(s && !s->depth && s->floor_unknown))
					t->unmatched++;
			}
			break;
		}
		case FDRTRACE_EV_CUSTOM_EVENT:
			on_ext(t, &ev, stack_of(st, &nst, ev.tid));
			break;
		case FDRTRACE_EV_TYPED_EVENT: {
			size_t n = ev.u.event.size < 63 ? ev.u.event.size : 63;

			t->typed_events++;
			t->typed_type = ev.u.event.event_type;
			memcpy(t->typed_event, ev.u.event.data, n);
			t->typed_event[n] = '\0';
			break;
		}
		case FDRTRACE_EV_CALL_ARGUMENT:
			if (t->nargs < 64)
				t->args[t->nargs++] = ev.u.arg.arg;
			break;
		default:
			break;
		}
	}
	if (ev.state == FDRTRACE_EOF) {
		t->ok = true;
	} else {
		uint64_t off = 0;

		fdrtrace_reader_error(r, &off);
		snprintf(t->error, sizeof(t->error), "%s:%llu: %s", path,
			 (unsigned long long)off, fdrtrace_reader_errmsg(r));
	}
	for (int i = 0; i < nst; i++) {
		t->open_at_end += st[i].depth;
		free(st[i].ids);
	}
	free(st);
	fdrtrace_reader_close(r);
	close(fd);
}

void tc_free(struct tc_trace *t)
{
	for (int i = 0; i < TC_MAX_IDS; i++)
		free(t->names[i]);
	free(t->log);
	t->log = NULL;
}

static int id_of(const struct tc_trace *t, const char *name)
{
	for (int i = 1; i < TC_MAX_IDS; i++)
		if (t->names[i] && !strcmp(t->names[i], name))
			return i;
	return 0;
}

uint64_t tc_calls(const struct tc_trace *t, const char *name)
{
	int id = id_of(t, name);

	return id ? t->entry_count[id] : 0;
}

uint64_t tc_exits(const struct tc_trace *t, const char *name)
{
	int id = id_of(t, name);

	return id ? t->exit_count[id] : 0;
}

uint64_t tc_counted(const struct tc_trace *t, const char *name)
{
	int id = id_of(t, name);

	return id ? t->counted[id] : 0;
}

bool tc_excluded(const struct tc_trace *t, const char *name)
{
	int id = id_of(t, name);

	return id && t->excluded_id[id];
}

int tc_output(const char *cmd, char *out, size_t cap)
{
	FILE *p = popen(cmd, "r");
	size_t len = 0, n;

	out[0] = '\0';
	if (!p)
		return -1;
	while (len < cap - 1 && (n = fread(out + len, 1, cap - 1 - len, p)) > 0)
		len += n;
	out[len] = '\0';
	return pclose(p);
}

int tc_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

void tc_done(struct tc_run *r)
{
	char cmd[300];

	if (!r->dir[0] || strncmp(r->dir, "/tmp/fdrtrace-it-", 17))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", r->dir);
}
