/* SPDX-License-Identifier: MIT */
/*
 * cmd_record.c - "fdrtrace record [options] -- PROGRAM ARGS": run a program
 * with tracing on and say where its trace is.
 *
 * Sets FDRTRACE_MODE=fdr and appends the options to FDRTRACE_OPTIONS (later
 * settings win, so the command line overrides the environment). When the
 * program does not link libfdrtrace itself (no DT_NEEDED entry for it and
 * no __cyg_profile_func_enter of its own: a program built with
 * -finstrument-functions alone, or a script), the
 * library is preloaded with LD_PRELOAD. After the program ends, the traces
 * of its process, "BASE<name>.<pid>.fdr" (one per image when it execs), are
 * looked up by its pid and their paths printed on stderr, then those of the
 * processes it started (any BASE*.fdr the directory did not hold before the
 * run); when it left none, it says whether the program was built with
 * -finstrument-functions.
 *
 * Contract: single-threaded; forks once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "analysis.h"
#include "symbolizer.h"
#include "util.h"

#ifndef FDRTRACE_LIBDIR
#define FDRTRACE_LIBDIR "/usr/local/lib"
#endif
#ifndef FDRTRACE_LIBDIR_REL
#define FDRTRACE_LIBDIR_REL "lib"	/* the library directory, relative to the prefix */
#endif
#define REC_LIB_NAME "libfdrtrace.so.0"

struct rec_opts {
	char *buf;
	size_t len, cap;
};

/* Append "key=value" to the options, quoting the value when needed. */
static int rec_add(struct rec_opts *o, const char *key, const char *value)
{
	size_t need = strlen(key) + 2 * strlen(value) + 8;
	const char *v;
	bool quote = strpbrk(value, " \t\n:,\"\\") != NULL;

	if (o->len + need > o->cap) {
		size_t cap = (o->cap + need) * 2;
		char *n = realloc(o->buf, cap);

		if (!n)
			return -ENOMEM;
		o->buf = n;
		o->cap = cap;
	}
	if (o->len)
		o->buf[o->len++] = ':';
	o->len += (size_t)sprintf(o->buf + o->len, "%s=", key);
	if (quote)
		o->buf[o->len++] = '"';
	for (v = value; *v; v++) {
		if (quote && (*v == '"' || *v == '\\'))
			o->buf[o->len++] = '\\';
		o->buf[o->len++] = *v;
	}
	if (quote)
		o->buf[o->len++] = '"';
	o->buf[o->len] = '\0';
	return 0;
}

/* The program's file: @prog itself when it has a slash, else from $PATH. */
static char *rec_which(const char *prog)
{
	const char *path = getenv("PATH"), *p, *end;
	char buf[PATH_MAX];

	if (strchr(prog, '/'))
		return strdup(prog);
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		size_t n;

		end = strchrnul(p, ':');
		n = (size_t)(end - p);
		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", prog) >=
		    sizeof(buf))
			continue;
		if (access(buf, X_OK) == 0)
			return strdup(buf);
	}
	return NULL;
}

/* Does the program define the hooks itself (libfdrtrace linked statically)? */
static bool rec_defines_hooks(const char *path)
{
	return sym_defines(path, "__cyg_profile_func_enter") == 1;
}

struct rec_tried {
	char text[2048];	/* the places looked at, ", " between them */
	size_t len;
};

/* Is @path (a complete path, not cut) readable? If not, note it in @t. */
static bool rec_try(const char *path, int len, size_t cap, struct rec_tried *t)
{
	size_t n;

	if (len < 0 || (size_t)len >= cap)
		return false;
	if (access(path, R_OK) == 0)
		return true;
	n = strlen(path);
	if (t->len + n + 3 < sizeof(t->text)) {
		if (t->len) {
			memcpy(t->text + t->len, ", ", 2);
			t->len += 2;
		}
		memcpy(t->text + t->len, path, n + 1);
		t->len += n;
	}
	return false;
}

/*
 * libfdrtrace to preload, the first readable of: $FDRTRACE_LIB; next to
 * this build of fdrtrace (tools/fdrtrace/fdrtrace and runtime/); installed
 * beside it (BIN/../LIBDIR, BIN/../lib: an install moved or staged with
 * DESTDIR); each directory of LD_LIBRARY_PATH; where it was installed
 * (FDRTRACE_LIBDIR). @t gets the places looked at, for the message when
 * none has it. Return: @buf or the variable's value, or NULL.
 */
static const char *rec_find_lib(char *buf, size_t cap, struct rec_tried *t)
{
	char exe[PATH_MAX], *slash;
	const char *env = getenv("FDRTRACE_LIB"), *llp = getenv("LD_LIBRARY_PATH");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (env && *env)
		return env;
	t->text[0] = '\0';
	t->len = 0;
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (rec_try(buf, snprintf(buf, cap, "%s/../../runtime/%s", exe, REC_LIB_NAME),
				    cap, t) ||
			    rec_try(buf, snprintf(buf, cap, "%s/../%s/%s", exe, FDRTRACE_LIBDIR_REL,
						  REC_LIB_NAME), cap, t) ||
			    rec_try(buf, snprintf(buf, cap, "%s/../lib/%s", exe, REC_LIB_NAME), cap,
				    t))
				return buf;
		}
	}
	for (const char *d = llp; d && *d;) {
		int len = (int)strcspn(d, ":");

		if (len && rec_try(buf, snprintf(buf, cap, "%.*s/%s", len, d, REC_LIB_NAME), cap, t))
			return buf;
		d += len + (d[len] == ':');
	}
	if (rec_try(buf, snprintf(buf, cap, "%s/%s", FDRTRACE_LIBDIR, REC_LIB_NAME), cap, t))
		return buf;
	return NULL;
}

/* Traces of the processes the program started printed one by one; then a count. */
#define REC_SHOW_OTHERS 20

/* The names of traces in a directory: BASE*.fdr, not snapshots; sorted. */
struct rec_names {
	char **v;
	size_t n, cap;
};

/* The directory and the file-name prefix of @base ("DIR/PREFIX"). */
static void rec_split(const char *base, char dir[PATH_MAX], const char **prefix)
{
	const char *slash = strrchr(base, '/');

	*prefix = slash ? slash + 1 : base;
	if (slash)
		snprintf(dir, PATH_MAX, "%.*s", (int)(slash - base) + (slash == base), base);
	else
		snprintf(dir, PATH_MAX, ".");
}

static int rec_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void rec_names_free(struct rec_names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * List the traces under @base into @l. Return: 0, or -errno (the
 * directory unreadable, out of memory), @l then empty.
 */
static int rec_list(const char *base, struct rec_names *l)
{
	char dir[PATH_MAX];
	const char *prefix;
	size_t plen;
	struct dirent *de;
	DIR *d;

	memset(l, 0, sizeof(*l));
	rec_split(base, dir, &prefix);
	plen = strlen(prefix);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n <= plen + 4 || strncmp(de->d_name, prefix, plen) != 0 ||
		    strcmp(de->d_name + n - 4, ".fdr") != 0 || strstr(de->d_name + plen, ".snap"))
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 64;
			char **v = realloc(l->v, cap * sizeof(*v));

			if (!v)
				goto nomem;
			l->v = v;
			l->cap = cap;
		}
		if (!(l->v[l->n] = strdup(de->d_name)))
			goto nomem;
		l->n++;
	}
	closedir(d);
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), rec_cmp);
	return 0;
nomem:
	closedir(d);
	rec_names_free(l);
	return -ENOMEM;
}

/*
 * The number ending @name before @end (the digits just before, preceded by
 * a '.'), or -1; *@start gets where its digits begin.
 */
static long rec_field(const char *name, size_t end, size_t *start)
{
	size_t i = end;

	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i == end || i == 0 || name[i - 1] != '.' || end - i > 9)
		return -1;
	*start = i;
	return strtol(name + i, NULL, 10);
}

static bool rec_had(const struct rec_names *l, const char *name)
{
	return l->n && bsearch(&name, l->v, l->n, sizeof(*l->v), rec_cmp);
}

/*
 * The pid in a trace's name: NAME.PID.fdr, or NAME.PID.N.fdr (N from 2: a
 * later image of the same program after an exec, or a name an earlier
 * run of the same pid had taken; runtime/file_writer.c). Numbered only
 * when NAME.PID.fdr is (or was) there too, which tells it from a NAME
 * that ends in digits ("python3.11.PID.fdr"). 0 when there is none.
 */
static pid_t rec_trace_pid(const char *name, const struct rec_names *before,
			   const struct rec_names *after)
{
	size_t n = strlen(name), at, at2;
	long last, prev;
	char unnumbered[PATH_MAX];

	if (n < 4 || strcmp(name + n - 4, ".fdr") != 0)
		return 0;
	last = rec_field(name, n - 4, &at);
	if (last < 0)
		return 0;
	prev = rec_field(name, at - 1, &at2);
	if (prev > 0 && last >= 2 &&
	    snprintf(unnumbered, sizeof(unnumbered), "%.*s.fdr", (int)(at - 1), name) <
		    (int)sizeof(unnumbered) &&
	    (rec_had(before, unnumbered) || rec_had(after, unnumbered)))
		return (pid_t)prev;
	return (pid_t)last;
}

/*
 * The close marker is the runtime's last write, in the file's last buffer
 * (docs/format.md): read from the tail, never the whole trace (gigabytes).
 * The tail's buffers are found from the end: in version 1 at the fixed
 * buffer size, in version 2 and later each starts with a BufferExtents
 * whose size reaches the next; candidates are tried from the last one.
 */
#define REC_TAIL_MAX (1u << 20)

/* The close record in the @len bytes of @buf, a whole buffer at file offset @off. */
static bool rec_close_in(const struct fdrtrace_file_header *hdr, const uint8_t *buf, size_t len,
			 uint64_t off, struct fdrtrace_ext *close)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;
	bool found = false, fed = false;

	if (!rd)
		return false;
	fdrtrace_reader_feed(rd, hdr, sizeof(*hdr));
	if (fdrtrace_reader_read(rd, &ev) != 0 || fdrtrace_reader_set_offset(rd, off)) {
		fdrtrace_reader_close(rd);
		return false;
	}
	fdrtrace_reader_feed(rd, buf, len);
	for (;;) {
		struct fdrtrace_ext x;

		if (fdrtrace_reader_read(rd, &ev) == 0) {
			if (ev.type == FDRTRACE_EV_CUSTOM_EVENT &&
			    fdrtrace_ext_decode(ev.u.event.data, ev.u.event.size, &x) == 0 &&
			    x.kind == FDRTRACE_EXT_CLOSE) {
				*close = x;
				found = true;
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
 * Read the close record of the trace at @path into @out. Opened without
 * following a link or blocking (a FIFO named like a trace), regular files
 * only. Return: true when it has one.
 */
static bool rec_read_close(const char *path, struct fdrtrace_ext *out)
{
	struct fdrtrace_file_header hdr;
	uint8_t *tail = NULL;
	bool found = false;
	struct stat st;
	size_t len;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size <= sizeof(hdr) ||
	    pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		goto out;
	len = (uint64_t)st.st_size - sizeof(hdr) < REC_TAIL_MAX ?
		      (size_t)((uint64_t)st.st_size - sizeof(hdr)) : REC_TAIL_MAX;
	tail = malloc(len);
	if (!tail || pread(fd, tail, len, st.st_size - (off_t)len) != (ssize_t)len)
		goto out;
	if (hdr.version == 1) {
		uint64_t body = (uint64_t)st.st_size - sizeof(hdr), bs = hdr.buffer_size;

		if (bs && bs <= len && body % bs == 0)
			found = rec_close_in(&hdr, tail + len - bs, (size_t)bs,
					     (uint64_t)st.st_size - bs, out);
		goto out;
	}
	for (size_t o = len < FDRTRACE_METADATA_RECORD_SIZE ? 0 :
			len - FDRTRACE_METADATA_RECORD_SIZE + 1;
	     o-- > 0 && !found;) {
		uint64_t size;

		if (tail[o] != FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_BUFFER_EXTENTS))
			continue;
		memcpy(&size, tail + o + 1, sizeof(size));
		if (size == len - o - FDRTRACE_METADATA_RECORD_SIZE)
			found = rec_close_in(&hdr, tail + o, len - o,
					     (uint64_t)st.st_size - (len - o), out);
	}
out:
	free(tail);
	close(fd);
	return found;
}

/*
 * What the trace's close record says, after its path: how many records,
 * how many lost (those left out on purpose named apart), or that it has
 * no close. Said here because the runtime's own exit line goes to the
 * program's standard error, which the program may have closed (xz does)
 * or sent to /dev/null (a daemon).
 */
static void rec_print_summary(const char *path)
{
	struct fdrtrace_ext c;
	uint64_t lost;

	if (!rec_read_close(path, &c)) {
		fputs(": no close marker: the trace may be incomplete (fdrtrace info says more)",
		      stderr);
		return;
	}
	if (!c.u.close.has_left_out) {
		fprintf(stderr, ": %" PRIu64 " records, %" PRIu64 " dropped", c.u.close.records,
			c.u.close.records_dropped);
	} else {
		lost = c.u.close.records_dropped - (c.u.close.records_left_out <
							    c.u.close.records_dropped ?
						    c.u.close.records_left_out :
						    c.u.close.records_dropped);
		fprintf(stderr, ": %" PRIu64 " records, %" PRIu64 " lost", c.u.close.records, lost);
		if (c.u.close.records_left_out)
			fprintf(stderr, ", %" PRIu64 " left out on purpose",
				c.u.close.records_left_out);
	}
	if (c.u.close.how == FDRTRACE_CLOSE_SIGNAL)
		fputs(", closed at a fatal signal", stderr);
	else if (c.u.close.how == FDRTRACE_CLOSE_STOPPED)
		fprintf(stderr, ", recording stopped early: a write failed (%s)",
			c.u.close.error ? strerror((int)c.u.close.error) : "error not known");
	if (c.u.close.records_dropped > (c.u.close.has_left_out ? c.u.close.records_left_out : 0))
		fputs(" (fdrtrace info says why; the lost ones' places are marked in the trace)",
		      stderr);
}

/* The program, for the signals record passes on (0 before the fork). */
static volatile pid_t rec_child;

/*
 * SIGTERM, SIGHUP sent to record (`kill`, `timeout`, a closed terminal)
 * are passed on to the program, and record goes on waiting, so that it
 * still reports the traces and returns the program's status. They used to
 * end record at once, silent, the program left running.
 */
static void rec_forward(int sig)
{
	int saved = errno;

	if (rec_child > 0)
		kill(rec_child, sig);
	errno = saved;
}

/*
 * The processes the program started that still run once it has ended
 * (a daemon, children left behind): record is their subreaper, so they
 * are its children now. Up to @max pids into @pids. Return: how many.
 */
static size_t rec_descendants(pid_t *pids, size_t max)
{
	pid_t self = getpid();
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		char path[300], buf[512], *paren;
		long ppid;
		ssize_t len;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* "pid (comm) state ppid": comm may hold anything, up to the last ')' */
		paren = strrchr(buf, ')');
		if (paren && sscanf(paren + 1, " %*c %ld", &ppid) == 1 && ppid == self)
			pids[n++] = (pid_t)atol(de->d_name);
	}
	closedir(d);
	return n;
}

/*
 * A process the program started creates its trace after the fork (the
 * runtime does it in the child), and may do so after the program ended:
 * a daemon's parent _exits as soon as it has forked. record listed the
 * directory at once and missed the daemon's trace (memcached -d, 5 runs
 * of 5). So, while the program's still-running descendants have no trace
 * of their pid in @base, wait for them, 1 s at most. Return: how many
 * still have none.
 */
#define REC_GRACE_MS 1000

static size_t rec_wait_descendants(const char *base, const struct rec_names *before,
				   const pid_t *pids, size_t n)
{
	size_t missing = n;

	for (int ms = 0; missing && ms <= REC_GRACE_MS; ms += 20) {
		struct rec_names now;

		if (ms) {
			struct timespec ts = { 0, 20 * 1000000L };

			nanosleep(&ts, NULL);
		}
		if (rec_list(base, &now))
			break;
		missing = 0;
		for (size_t i = 0; i < n; i++) {
			bool found = false;

			for (size_t k = 0; k < now.n && !found; k++)
				found = !rec_had(before, now.v[k]) &&
					rec_trace_pid(now.v[k], before, &now) == pids[i];
			/* one that ended meanwhile wrote what it would */
			missing += !found && kill(pids[i], 0) == 0;
		}
		rec_names_free(&now);
	}
	return missing;
}

/* Does process @pid still exist (its trace then not closed yet)? */
static bool rec_running(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/*
 * Print the traces the run left under @base that were not there before
 * it (@before): first those of the program's process @pid (one per
 * image: an exec starts another), then those of the processes it started
 * (fork children, the programs they ran), marked so, their number in
 * @others. Return: how many of the program's own.
 */
static int rec_print_traces(const char *base, pid_t pid, const struct rec_names *before,
			    size_t *others_out)
{
	char dir[PATH_MAX];
	const char *prefix;
	struct rec_names after;
	size_t others = 0;
	int own = 0;

	rec_split(base, dir, &prefix);
	if (rec_list(base, &after))
		return 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < after.n; i++) {
			const char *name = after.v[i];
			pid_t of = rec_trace_pid(name, before, &after);
			bool mine = of == pid;

			if (mine != (pass == 0) || rec_had(before, name))
				continue;
			if (mine || others < REC_SHOW_OTHERS) {
				bool running = !mine && rec_running(of);
				char path[2 * PATH_MAX];

				snprintf(path, sizeof(path), "%s/%s", dir, name);
				fprintf(stderr, "fdrtrace record: %s%s", path,
					mine ? "" : running ? " (a process it started, still "
							      "running: its trace is not closed yet)" :
							      " (a process it started)");
				if (!running)
					rec_print_summary(path);
				fputc('\n', stderr);
			}
			if (mine)
				own++;
			else
				others++;
		}
	if (others > REC_SHOW_OTHERS)
		fprintf(stderr, "fdrtrace record: and %zu more traces of processes it started, in %s\n",
			others - REC_SHOW_OTHERS, dir);
	rec_names_free(&after);
	*others_out = others;
	return own;
}

static const char record_help[] =
	"Usage: fdrtrace record [options] -- PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM with fdrtrace recording on (FDRTRACE_MODE=fdr), then print the\n"
	"path of its trace on stderr, and those of the processes it started (the\n"
	"first 20, then how many more). PROGRAM must be built with\n"
	"-finstrument-functions; when it does not link libfdrtrace, the library is\n"
	"preloaded (LD_PRELOAD). The options become FDRTRACE_OPTIONS settings, after\n"
	"any already in the environment (so they win).\n"
	"\n"
	"Options:\n"
	"  -d, --output-dir DIR      write the trace in DIR (logfile_base=DIR/fdrtrace.)\n"
	"  -b, --buffer-size SIZE    buffer_size (bytes; K, M, G suffixes)\n"
	"  -m, --buffer-max N        buffer_max (buffers in the pool)\n"
	"  -t, --threshold-us N      func_duration_threshold_us\n"
	"  -V, --format-version V    format_version (5 or 1)\n"
	"  -O, --option KEY=VALUE    any FDRTRACE_OPTIONS setting (repeatable)\n"
	"      --lib PATH            the libfdrtrace to preload (default: $FDRTRACE_LIB,\n"
	"                            the build tree's, one beside this fdrtrace\n"
	"                            (../lib), one in LD_LIBRARY_PATH, the installed one)\n"
	"      --preload             preload even when PROGRAM links libfdrtrace\n"
	"      --no-preload          never preload\n"
	"  -h, --help                show this help\n"
	"\n"
	"A process that runs no instrumented function leaves no trace: when PROGRAM\n"
	"left none, record says whether PROGRAM was built with -finstrument-functions\n"
	"at all. A program that execs gets one trace per image, all printed.\n"
	"\n"
	"Exit status: PROGRAM's (128+N when signal N killed it); 127 when it could\n"
	"not be run; 1 when it exited 0 and neither it nor a process it started left\n"
	"a trace; 2 on usage errors.\n";

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output-dir", required_argument, NULL, 'd' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "buffer-max", required_argument, NULL, 'm' },
		{ "threshold-us", required_argument, NULL, 't' },
		{ "format-version", required_argument, NULL, 'V' },
		{ "option", required_argument, NULL, 'O' },
		{ "lib", required_argument, NULL, 'L' },
		{ "preload", no_argument, NULL, 'P' },
		{ "no-preload", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char optstring[] = "+d:b:m:t:V:O:h";
	struct rec_opts o = { 0 };
	const char *dir = NULL, *lib = NULL, *old, *user_base = NULL;
	char base[PATH_MAX], libbuf[PATH_MAX], absdir[PATH_MAX], *prog_path, *eq;
	int c, preload = -1, rc = 0, st, status;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit, old_term, old_hup;
	struct sigaction fwd = { .sa_handler = rec_forward, .sa_flags = SA_RESTART };
	pid_t left[64];
	size_t n_left, missing;
	struct rec_names before;
	size_t others = 0;
	pid_t pid;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'b':
			rc = rec_add(&o, "buffer_size", optarg);
			break;
		case 'm':
			rc = rec_add(&o, "buffer_max", optarg);
			break;
		case 't':
			rc = rec_add(&o, "func_duration_threshold_us", optarg);
			break;
		case 'V':
			rc = rec_add(&o, "format_version", optarg);
			break;
		case 'O':
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg) {
				free(o.buf);
				return tool_usage_err("record", "-O takes KEY=VALUE, not '%s'",
						      optarg);
			}
			*eq = '\0';
			if (strcmp(optarg, "logfile_base") == 0)
				user_base = eq + 1;	/* added last, below */
			else
				rc = rec_add(&o, optarg, eq + 1);
			*eq = '=';
			break;
		case 'L':
			lib = optarg;
			break;
		case 'P':
			preload = 1;
			break;
		case 'N':
			preload = 0;
			break;
		case 'h':
			free(o.buf);
			return tool_print_help(record_help);
		default:
			free(o.buf);
			return tool_bad_option("record", optstring + 1, argv);
		}
		if (rc) {
			tool_err("out of memory");
			free(o.buf);
			return EXIT_FAIL;
		}
	}
	if (optind == argc) {
		free(o.buf);
		return tool_usage_err("record", "missing PROGRAM");
	}
	/* An absolute directory, so that the path printed at the end is one. */
	if (!dir && getcwd(absdir, sizeof(absdir)))
		dir = absdir;
	else if (dir && realpath(dir, absdir))
		dir = absdir;
	if (user_base)	/* -O logfile_base=...: as given, relative to the directory */
		rc = snprintf(base, sizeof(base), "%s%s%s", user_base[0] == '/' || !dir ? "" : dir,
			      user_base[0] == '/' || !dir ? "" : "/", user_base) >= (int)sizeof(base);
	else
		rc = snprintf(base, sizeof(base), "%s%sfdrtrace.", dir ? dir : "",
			      dir && *dir && dir[strlen(dir) - 1] != '/' ? "/" : "") >=
		     (int)sizeof(base);
	if (rc || rec_add(&o, "logfile_base", base)) {
		tool_err("output directory too long, or out of memory");
		free(o.buf);
		return EXIT_FAIL;
	}
	if (dir) {
		struct stat sb;

		int bad = stat(dir, &sb) ? errno : S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;

		if (bad) {
			/* "No such file or directory", "Permission denied"...: what stat said */
			tool_err("%s: %s", dir, strerror(bad));
			free(o.buf);
			return EXIT_FAIL;
		}
	}

	prog_path = rec_which(argv[optind]);
	if (!prog_path) {
		tool_err("%s: command not found", argv[optind]);
		free(o.buf);
		return 127;
	}
	if (preload < 0)
		preload = sym_needs(prog_path, "libfdrtrace.so") == 1 || rec_defines_hooks(prog_path) ?
			  0 : 1;
	if (preload && !lib) {
		struct rec_tried tried;

		lib = rec_find_lib(libbuf, sizeof(libbuf), &tried);
		if (!lib) {
			tool_err("%s does not link libfdrtrace, and %s was not found to preload "
				 "(looked for %s; use --lib PATH or FDRTRACE_LIB)", argv[optind],
				 REC_LIB_NAME, tried.text);
			free(o.buf);
			free(prog_path);
			return 127;	/* it could not be run */
		}
	}

	/* what is there already is not this run's (a trace of its child is told apart so) */
	if (rec_list(base, &before) == -ENOMEM) {
		tool_err("out of memory");
		free(o.buf);
		free(prog_path);
		return EXIT_FAIL;
	}
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);
	/* the program's orphans become ours: record can tell whether they still run */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		tool_err("fork: %s", strerror(errno));
		free(o.buf);
		free(prog_path);
		rec_names_free(&before);
		return EXIT_FAIL;
	}
	if (pid == 0) {
		char *env;

		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		/* the program gets SIGPIPE as we got it (untraced: `prog | head` dies of it) */
		sigaction(SIGPIPE, &tool_sigpipe_at_start, NULL);
		old = getenv("FDRTRACE_OPTIONS");
		if (old && *old && asprintf(&env, "%s:%s", old, o.buf) >= 0)
			setenv("FDRTRACE_OPTIONS", env, 1);
		else
			setenv("FDRTRACE_OPTIONS", o.buf, 1);
		setenv("FDRTRACE_MODE", "fdr", 1);
		if (preload) {
			old = getenv("LD_PRELOAD");
			if (old && *old && asprintf(&env, "%s %s", lib, old) >= 0)
				setenv("LD_PRELOAD", env, 1);
			else
				setenv("LD_PRELOAD", lib, 1);
		}
		execvp(argv[optind], argv + optind);
		tool_err("%s: %s", argv[optind], strerror(errno));
		_exit(127);
	}
	free(o.buf);
	rec_child = pid;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			tool_err("waitpid: %s", strerror(errno));
			free(prog_path);
			rec_names_free(&before);
			return EXIT_FAIL;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	rec_child = 0;
	status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	n_left = rec_descendants(left, sizeof(left) / sizeof(left[0]));
	missing = n_left ? rec_wait_descendants(base, &before, left, n_left) : 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		free(prog_path);
		rec_names_free(&before);
		return 127;
	}
	if (!rec_print_traces(base, pid, &before, &others)) {
		/* the runtime writes no file for a process that ran no instrumented function */
		bool none = sym_references(prog_path, "__cyg_profile_func_enter") == 0;

		if (others)
			fprintf(stderr, "fdrtrace record: %s itself left no trace (%s)\n",
				argv[optind],
				none ? "no function of it is instrumented" :
				       "it ran no instrumented function, or see the messages above");
		else if (none)
			fprintf(stderr, "fdrtrace record: no trace: no function of %s is "
				"instrumented (it has no __cyg_profile_func_enter reference); build "
				"it with -finstrument-functions\n", argv[optind]);
		else
			fprintf(stderr, "fdrtrace record: no trace %s*.%d.fdr: %s ran no "
				"instrumented function (was it built with -finstrument-functions?), "
				"or the trace could not be written (see the messages above)\n", base,
				(int)pid, argv[optind]);
		/* a run that left traces of the processes it started is not a failure */
		if (status == 0 && !others)
			status = EXIT_FAIL;
	}
	if (missing)
		fprintf(stderr, "fdrtrace record: %zu process%s it started still run%s with no trace "
			"yet (a trace appears when one runs instrumented code)\n", missing,
			missing == 1 ? "" : "es", missing == 1 ? "s" : "");
	rec_names_free(&before);
	free(prog_path);
	return status;
}
