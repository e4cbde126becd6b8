/* SPDX-License-Identifier: MIT */
/*
 * cmd_record.c - "fdrtrace record [options] -- PROGRAM ARGS": run a
 * program, instrumented or not, with tracing on, and record the whole
 * process tree it starts into one run directory.
 *
 * Sets FDRTRACE_MODE=fdr and appends the options to FDRTRACE_OPTIONS
 * (later settings win, so the command line overrides the environment),
 * verbosity=0 first unless -O verbosity=... is given: the processes print
 * nothing on the program's stderr, record prints one summary for the
 * whole run. When the program does not link libfdrtrace itself (no
 * DT_NEEDED entry for it and no __cyg_profile_func_enter of its own: a
 * program built with -finstrument-functions alone, a shell, make), the
 * library is preloaded with LD_PRELOAD, so every process of the tree that
 * runs instrumented code leaves a trace, "DIR/fdrtrace.<name>.<pid>.fdr"
 * (one per image when it execs).
 *
 * The run directory (default ./fdrtrace.run) is created when missing; one
 * that holds an earlier run (its index file) is first renamed DIR.N (the
 * first free N), never overwritten. After the program ended (and the
 * processes it left running had a moment to create their traces), the
 * run's traces are read at their two ends (run.c), the index written
 * (docs/format.md "Run directory") and the summary printed on stderr.
 * Making the directory ready and the index's header are record_dir.c.
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
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "analysis.h"
#include "record_dir.h"
#include "run.h"
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
		return access(prog, X_OK) == 0 ? strdup(prog) : NULL;
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

/* The default run directory, in the current directory. */
#define REC_DEFAULT_DIR RUN_DEFAULT_DIR

/* The summary names the run directory (live records into one it removes). */
bool rec_say_dir = true;

static uint64_t rec_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int rec_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Do the sorted names @v hold @name? */
static bool rec_had(char *const *v, size_t n, const char *name)
{
	return n && bsearch(&name, v, n, sizeof(*v), rec_cmp);
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

static size_t rec_wait_descendants(const char *dir, const char *prefix, char *const *before,
				   size_t n_before, const pid_t *pids, size_t n)
{
	size_t missing = n;

	for (int ms = 0; missing && ms <= REC_GRACE_MS; ms += 20) {
		char **now;
		size_t n_now;

		if (ms) {
			struct timespec ts = { 0, 20 * 1000000L };

			nanosleep(&ts, NULL);
		}
		if (run_list(dir, prefix, &now, &n_now))
			break;
		missing = 0;
		for (size_t i = 0; i < n; i++) {
			bool found = false;

			for (size_t k = 0; k < n_now && !found; k++)
				found = !rec_had(before, n_before, now[k]) &&
					run_name_pid(now[k], now, n_now) == pids[i];
			/* one that ended meanwhile wrote what it would */
			missing += !found && kill(pids[i], 0) == 0;
		}
		run_names_free(now, n_now);
	}
	return missing;
}

/* Does process @pid still exist (its trace then not closed yet)? */
static bool rec_running(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/*
 * A trace's losses, after its path, when it has any to say: lost records
 * (those left out on purpose named apart), no close, recording stopped.
 * Said here because the runtime's own lines are off (verbosity=0), and
 * the program's stderr is no place for them. Return: whether it printed.
 */
static bool rec_print_losses(const char *dir, const struct run_proc *p)
{
	if (p->has_close && !p->lost && !p->left_out && p->how != FDRTRACE_CLOSE_STOPPED &&
	    p->how != FDRTRACE_CLOSE_SIGNAL)
		return false;
	fprintf(stderr, "fdrtrace record: %s/%s", dir, p->file);
	if (!p->readable) {
		fputs(p->size ? ": not a trace\n" : ": empty file: the process was killed as its "
		      "recording began\n", stderr);
		return true;
	}
	if (!p->has_close) {
		fputs(p->running ? " (still running: its trace is not closed yet)\n" :
		      ": no close marker: the trace may be incomplete (the process was killed, "
		      "or the file cut short; fdrtrace info says more)\n", stderr);
		return true;
	}
	fprintf(stderr, ": %" PRIu64 " records, %" PRIu64 " lost", p->records, p->lost);
	if (p->left_out)
		fprintf(stderr, ", %" PRIu64 " left out on purpose", p->left_out);
	if (p->how == FDRTRACE_CLOSE_SIGNAL)
		fputs(", closed at a fatal signal", stderr);
	else if (p->how == FDRTRACE_CLOSE_STOPPED)
		fprintf(stderr, ", recording stopped early: a write failed (%s)",
			p->error ? strerror((int)p->error) : "error not known");
	if (p->lost)
		fputs(" (fdrtrace info says why; the lost ones' places are marked in the trace)",
		      stderr);
	fputc('\n', stderr);
	return true;
}

/* Losses by process printed one by one; then a count. */
#define REC_SHOW_LOSSES 20

/*
 * The summary of the run @r on stderr: "N processes traced, M records, K
 * lost", the directory, then the traces with losses. Return: the number
 * of processes traced (a process that exec'd is one, with a trace per
 * image).
 */
static size_t rec_summary(const struct run_dir *r)
{
	uint64_t records = 0, lost = 0, left_out = 0;
	size_t procs = 0, shown = 0, more = 0, idle = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct run_proc *p = &r->procs[i];

		procs += p->prev_image < 0;
		records += p->records;
		lost += p->lost;
		left_out += p->left_out;
		idle += p->has_close && !p->records && !p->lost && !p->left_out;
	}
	if (!r->n)
		return 0;
	fprintf(stderr, "fdrtrace record: %zu process%s traced, %" PRIu64 " records, %" PRIu64
		" lost", procs, procs == 1 ? "" : "es", records, lost);
	if (left_out)
		fprintf(stderr, ", %" PRIu64 " left out on purpose", left_out);
	if (r->n != procs)
		fprintf(stderr, " (%zu traces: a process that exec'd has one per image)", r->n);
	fputc('\n', stderr);
	if (idle)
		fprintf(stderr, "fdrtrace record: %zu trace%s without a function record (a process "
			"that exec'd, or ran no instrumented function, before its first)\n", idle,
			idle == 1 ? "" : "s");
	if (rec_say_dir)
		fprintf(stderr, "fdrtrace record: run in %s (fdrtrace info %s)\n", r->path, r->path);
	for (size_t i = 0; i < r->n; i++) {
		if (shown == REC_SHOW_LOSSES) {
			more += !r->procs[i].has_close || r->procs[i].lost || r->procs[i].left_out;
			continue;
		}
		shown += rec_print_losses(r->path, &r->procs[i]);
	}
	if (more)
		fprintf(stderr, "fdrtrace record: and %zu more traces with losses (fdrtrace info "
			"%s)\n", more, r->path);
	return procs;
}

static const char record_help[] =
	"Usage: fdrtrace record [options] -- PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM, instrumented or not, with fdrtrace recording on\n"
	"(FDRTRACE_MODE=fdr), and record its whole process tree into one run\n"
	"directory: a trace for each process that runs instrumented code (built\n"
	"with -finstrument-functions), one per image when it execs, and an index.\n"
	"PROGRAM's output and exit status are those of an untraced run: the\n"
	"processes print nothing (verbosity=0), and record prints one summary on its\n"
	"stderr at the end. When PROGRAM does not link libfdrtrace, the library is\n"
	"preloaded (LD_PRELOAD), so the processes it starts are traced too. The\n"
	"options become FDRTRACE_OPTIONS settings, after any already in the\n"
	"environment (so they win).\n"
	"\n"
	"Options:\n"
	"  -d, --output-dir DIR      the run directory (default ./" REC_DEFAULT_DIR "), created\n"
	"                            when missing; one that holds an earlier run is\n"
	"                            first renamed DIR.N (the first free N)\n"
	"  -b, --buffer-size SIZE    buffer_size (bytes; K, M, G suffixes)\n"
	"  -m, --buffer-max N        buffer_max (buffers in the pool)\n"
	"  -t, --threshold-us N      func_duration_threshold_us\n"
	"  -V, --format-version V    format_version (5 or 1)\n"
	"  -O, --option KEY=VALUE    any FDRTRACE_OPTIONS setting (repeatable);\n"
	"                            -O verbosity=1 lets the processes print again\n"
	"      --lib PATH            the libfdrtrace to preload (default: $FDRTRACE_LIB,\n"
	"                            the build tree's, one beside this fdrtrace\n"
	"                            (../lib), one in LD_LIBRARY_PATH, the installed one)\n"
	"      --preload             preload even when PROGRAM links libfdrtrace\n"
	"      --no-preload          never preload\n"
	"  -h, --help                show this help\n"
	"\n"
	"The summary: \"N processes traced, M records, K lost\", the directory, and\n"
	"the traces that lost records. fdrtrace info DIR shows the process tree.\n"
	"A process that runs no instrumented function may leave no trace; when no\n"
	"process was traced, record says so and whether PROGRAM is instrumented.\n"
	"\n"
	"Exit status: PROGRAM's (128+N when signal N killed it); 127 when it could\n"
	"not be run; 1 when the run directory could not be made ready; 2 on usage\n"
	"errors.\n";

/*
 * One record command, from its command line to its summary: what the
 * steps below fill in and pass on. The strings point into argv or the
 * buffers here; cmd_record() frees what the struct owns.
 */
struct rec {
	struct rec_opts o;	/* the FDRTRACE_OPTIONS settings for the program */
	char **argv;		/* the program and its arguments (NULL-terminated) */
	char *prog_path;	/* argv[0]'s file (rec_which) */
	const char *dir;	/* -d DIR, or NULL */
	const char *lib;	/* the libfdrtrace to preload, or NULL */
	const char *user_base;	/* -O logfile_base=..., or NULL */
	const char *prefix;	/* the traces' name prefix in the run directory */
	int preload;		/* --preload 1, --no-preload 0, -1 to decide */
	bool quiet;		/* verbosity=0 for the processes (no -O verbosity) */
	bool instrumented;	/* the program defines or calls the enter hook */
	char libbuf[PATH_MAX];	/* lib, when found rather than given */
	char absdir[PATH_MAX];	/* the run directory, absolute */
	char **before;		/* the traces the directory held before the run */
	size_t n_before;
	int index_fd;		/* the index, locked while the run goes on, or -1 */
	uint64_t start_ns;	/* when the program was started */
	int st;			/* its wait status */
};

/* rec_parse_options() returns this when the command goes on. */
#define REC_GO_ON (-1)

/*
 * Parse record's options into @r (up to the program: "+" in the option
 * string stops at the first operand). Return: REC_GO_ON, or the exit
 * status (usage error, --help, out of memory) with @r->o freed.
 */
static int rec_parse_options(struct rec *r, int argc, char **argv)
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
	char *eq;
	int c, rc = 0;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			r->dir = optarg;
			break;
		case 'b':
			rc = rec_add(&r->o, "buffer_size", optarg);
			break;
		case 'm':
			rc = rec_add(&r->o, "buffer_max", optarg);
			break;
		case 't':
			rc = rec_add(&r->o, "func_duration_threshold_us", optarg);
			break;
		case 'V':
			rc = rec_add(&r->o, "format_version", optarg);
			break;
		case 'O':
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg) {
				free(r->o.buf);
				return tool_usage_err("record", "-O takes KEY=VALUE, not '%s'",
						      optarg);
			}
			*eq = '\0';
			if (strcmp(optarg, "logfile_base") == 0)
				r->user_base = eq + 1;	/* added last, by rec_setup_dir() */
			else
				rc = rec_add(&r->o, optarg, eq + 1);
			if (strcmp(optarg, "verbosity") == 0)
				r->quiet = false;
			*eq = '=';
			break;
		case 'L':
			r->lib = optarg;
			break;
		case 'P':
			r->preload = 1;
			break;
		case 'N':
			r->preload = 0;
			break;
		case 'h':
			free(r->o.buf);
			return tool_print_help(record_help);
		default:
			free(r->o.buf);
			return tool_bad_option("record", optstring + 1, argv);
		}
		if (rc) {
			tool_err("out of memory");
			free(r->o.buf);
			return EXIT_FAIL;
		}
	}
	if (optind == argc) {
		free(r->o.buf);
		return tool_usage_err("record", "missing PROGRAM");
	}
	r->argv = argv + optind;
	return REC_GO_ON;
}

/*
 * Find the program (rec_which), tell whether it is instrumented, decide
 * whether to preload libfdrtrace and find the library to. Return:
 * REC_GO_ON, or 127 (it could not be run) with the message printed.
 */
static int rec_find_program(struct rec *r)
{
	r->prog_path = rec_which(r->argv[0]);
	if (!r->prog_path) {
		if (strchr(r->argv[0], '/'))
			tool_err("%s: %s", r->argv[0], strerror(errno));
		else
			tool_err("%s: command not found", r->argv[0]);
		return 127;
	}
	r->instrumented = rec_defines_hooks(r->prog_path) ||
			  sym_references(r->prog_path, "__cyg_profile_func_enter") != 0;
	if (r->preload < 0)
		r->preload = sym_needs(r->prog_path, "libfdrtrace.so") == 1 ||
			     rec_defines_hooks(r->prog_path) ? 0 : 1;
	if (r->preload && !r->lib) {
		struct rec_tried tried;

		r->lib = rec_find_lib(r->libbuf, sizeof(r->libbuf), &tried);
		if (!r->lib) {
			tool_err("%s does not link libfdrtrace, and %s was not found to preload "
				 "(looked for %s; use --lib PATH or FDRTRACE_LIB)", r->argv[0],
				 REC_LIB_NAME, tried.text);
			return 127;	/* it could not be run */
		}
	}
	return REC_GO_ON;
}

/*
 * Make the run directory ready and name the traces: -d DIR or the
 * default; with -O logfile_base, the directory of that base (relative to
 * -d DIR or the current directory). Sets @r->absdir and @r->prefix, and
 * adds logfile_base (absolute, so that the processes that chdir find it)
 * and verbosity=0 to the options. Return: 0, or -1 with the message
 * printed.
 */
static int rec_setup_dir(struct rec *r)
{
	char base[PATH_MAX], rundir[PATH_MAX];
	const char *dir = r->dir;
	bool explicit = dir != NULL;
	int rc;

	if (r->user_base) {
		/* as before run directories: relative to -d DIR, or to the current one */
		const char *user_base = r->user_base, *slash = strrchr(user_base, '/');

		if (!dir)
			dir = ".";
		rc = user_base[0] == '/' ?
			     snprintf(rundir, sizeof(rundir), "%.*s", slash == user_base ? 1 :
					      (int)(slash - user_base), user_base) :
		     slash ? snprintf(rundir, sizeof(rundir), "%s/%.*s", dir,
				      (int)(slash - user_base), user_base) :
			     snprintf(rundir, sizeof(rundir), "%s", dir);
		explicit = true;
		r->prefix = slash ? slash + 1 : user_base;
	} else {
		if (!dir)
			dir = REC_DEFAULT_DIR;
		rc = snprintf(rundir, sizeof(rundir), "%s", dir);
		r->prefix = "fdrtrace.";
	}
	if (rc < 0 || rc >= (int)sizeof(rundir)) {
		tool_err("output directory too long");
		return -1;
	}
	for (size_t n = strlen(rundir); n > 1 && rundir[n - 1] == '/';)
		rundir[--n] = '\0';	/* "out/" is moved aside as out.1, not out/.1 */
	if (rec_prepare_dir(rundir, explicit))
		return -1;
	/* an absolute directory, so that the processes that chdir find it */
	if (!realpath(rundir, r->absdir) ||
	    snprintf(base, sizeof(base), "%s/%s", strcmp(r->absdir, "/") ? r->absdir : "",
		     r->prefix) >= (int)sizeof(base)) {
		tool_err("%s: %s", rundir, strerror(errno ? errno : ENAMETOOLONG));
		return -1;
	}
	if (rec_add(&r->o, "logfile_base", base) ||
	    (r->quiet && rec_add(&r->o, "verbosity", "0"))) {
		tool_err("out of memory");
		return -1;
	}
	return 0;
}

/* The signal dispositions record changes while the program runs. */
struct rec_signals {
	struct sigaction old_int, old_quit, old_term, old_hup;
};

/* Put back the dispositions saved in @s. */
static void rec_restore_signals(const struct rec_signals *s)
{
	sigaction(SIGINT, &s->old_int, NULL);
	sigaction(SIGQUIT, &s->old_quit, NULL);
	sigaction(SIGTERM, &s->old_term, NULL);
	sigaction(SIGHUP, &s->old_hup, NULL);
}

/*
 * In the child: the program's signals and environment (FDRTRACE_OPTIONS
 * after those already set, FDRTRACE_MODE, LD_PRELOAD before those
 * already set), then exec it. Does not return.
 */
static _Noreturn void rec_exec_child(const struct rec *r, const struct rec_signals *s)
{
	const char *old;
	char *env;

	rec_restore_signals(s);
	/* the program gets SIGPIPE as we got it (untraced: `prog | head` dies of it) */
	sigaction(SIGPIPE, &tool_sigpipe_at_start, NULL);
	old = getenv("FDRTRACE_OPTIONS");
	if (old && *old && asprintf(&env, "%s:%s", old, r->o.buf) >= 0)
		setenv("FDRTRACE_OPTIONS", env, 1);
	else
		setenv("FDRTRACE_OPTIONS", r->o.buf, 1);
	setenv("FDRTRACE_MODE", "fdr", 1);
	if (r->preload) {
		old = getenv("LD_PRELOAD");
		if (old && *old && asprintf(&env, "%s %s", r->lib, old) >= 0)
			setenv("LD_PRELOAD", env, 1);
		else
			setenv("LD_PRELOAD", r->lib, 1);
	}
	execvp(r->argv[0], r->argv);
	tool_err("%s: %s", r->argv[0], strerror(errno));
	_exit(127);
}

/*
 * Run the program and wait for it: SIGINT and SIGQUIT ignored (the
 * terminal sends them to the program too), SIGTERM and SIGHUP passed on,
 * record the subreaper of the program's orphans. Frees @r->o once the
 * child has it. Sets @r->st. Return: 0, or -1 with the message printed.
 */
static int rec_spawn_wait(struct rec *r)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct sigaction fwd = { .sa_handler = rec_forward, .sa_flags = SA_RESTART };
	struct rec_signals s;
	pid_t pid;

	sigaction(SIGINT, &ign, &s.old_int);
	sigaction(SIGQUIT, &ign, &s.old_quit);
	sigaction(SIGTERM, &fwd, &s.old_term);
	sigaction(SIGHUP, &fwd, &s.old_hup);
	/* the program's orphans become ours: record can tell whether they still run */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		tool_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		rec_exec_child(r, &s);
	free(r->o.buf);
	r->o.buf = NULL;
	rec_child = pid;
	while (waitpid(pid, &r->st, 0) < 0) {
		if (errno != EINTR) {
			tool_err("waitpid: %s", strerror(errno));
			return -1;
		}
	}
	rec_restore_signals(&s);
	rec_child = 0;
	return 0;
}

/*
 * After the program ended: wait a moment for the traces of the processes
 * it left running, read this run's traces (those the directory did not
 * hold before), write the final index, close the locked one, print the
 * summary and what went missing. Return: the program's exit status, or
 * EXIT_FAIL when the run could not be read.
 */
static int rec_finish(struct rec *r)
{
	int st = r->st, status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	char **after = NULL, **mine = NULL, *header;
	size_t n_left, missing, n_after = 0, n_mine = 0, procs;
	struct run_dir run;
	pid_t left[64];
	int rc;

	n_left = rec_descendants(left, sizeof(left) / sizeof(left[0]));
	missing = n_left ? rec_wait_descendants(r->absdir, r->prefix, r->before, r->n_before,
						left, n_left) : 0;

	/* this run's traces: those the directory did not hold before it */
	if (run_list(r->absdir, r->prefix, &after, &n_after) == 0 && n_after &&
	    (mine = calloc(n_after, sizeof(*mine))))
		for (size_t i = 0; i < n_after; i++)
			if (!rec_had(r->before, r->n_before, after[i]))
				mine[n_mine++] = after[i];
	if (run_open(&run, r->absdir, mine, n_mine)) {
		tool_err("%s: cannot read the run: out of memory", r->absdir);
		run_close(&run);
		free(mine);
		run_names_free(after, n_after);
		if (r->index_fd >= 0)
			close(r->index_fd);
		r->index_fd = -1;
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < run.n; i++)
		run.procs[i].running = !run.procs[i].has_close && rec_running(run.procs[i].pid);
	header = rec_index_header(r->argv, st, r->start_ns, rec_now_ns());
	rc = run_write_index(&run, header);
	free(header);
	if (rc)
		tool_err("%s/%s: %s", r->absdir, RUN_INDEX, strerror(-rc));
	if (r->index_fd >= 0)
		close(r->index_fd);
	r->index_fd = -1;
	procs = rec_summary(&run);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && !procs) {
		/* it could not be run (execvp failed: said above) */
	} else if (!procs) {
		/* the runtime writes no file for a process that ran no instrumented function */
		if (!r->instrumented)
			fprintf(stderr, "fdrtrace record: no process was traced: no function of %s is "
				"instrumented (it has no __cyg_profile_func_enter reference), nor "
				"of a program it started; build them with -finstrument-functions\n",
				r->argv[0]);
		else
			fprintf(stderr, "fdrtrace record: no process was traced: %s ran no "
				"instrumented function (was it built with -finstrument-functions?), "
				"or the trace could not be written (see the messages above)\n",
				r->argv[0]);
		if (rec_say_dir)
			fprintf(stderr, "fdrtrace record: run in %s (an index, no trace)\n", r->absdir);
	}
	if (missing)
		fprintf(stderr, "fdrtrace record: %zu process%s it started still run%s with no trace "
			"yet (a trace appears when one runs instrumented code)\n", missing,
			missing == 1 ? "" : "es", missing == 1 ? "s" : "");
	run_close(&run);
	free(mine);
	run_names_free(after, n_after);
	return status;
}

/*
 * fdrtrace record: parse the options, find the program, make the run
 * directory ready, note what it holds already and begin the index, run
 * the program, then read the run and summarise it.
 */
int cmd_record(int argc, char **argv)
{
	struct rec r = { .preload = -1, .quiet = true, .index_fd = -1 };
	int rc;

	rc = rec_parse_options(&r, argc, argv);
	if (rc != REC_GO_ON)
		return rc;
	rc = rec_find_program(&r);
	if (rc != REC_GO_ON) {
		free(r.o.buf);
		free(r.prog_path);
		return rc;
	}
	if (rec_setup_dir(&r))
		goto fail;
	if (!r.instrumented)
		fprintf(stderr, "fdrtrace record: %s is not instrumented (no "
			"__cyg_profile_func_enter): only the processes it starts that run "
			"instrumented code are traced\n", r.argv[0]);

	/* what is there already is not this run's (-d DIR with older traces) */
	if (run_list(r.absdir, r.prefix, &r.before, &r.n_before) == -ENOMEM) {
		tool_err("out of memory");
		goto fail;
	}
	r.index_fd = rec_begin_index(r.absdir, r.argv);
	r.start_ns = rec_now_ns();
	if (rec_spawn_wait(&r))
		goto fail;
	rc = rec_finish(&r);
	run_names_free(r.before, r.n_before);
	free(r.prog_path);
	return rc;
fail:
	if (r.index_fd >= 0)
		close(r.index_fd);
	free(r.o.buf);
	free(r.prog_path);
	run_names_free(r.before, r.n_before);
	return EXIT_FAIL;
}
