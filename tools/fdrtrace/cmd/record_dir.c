/* SPDX-License-Identifier: MIT */
/*
 * record_dir.c - the run directory "fdrtrace record" writes into: made
 * ready for a new run (created with its parents when missing, an earlier
 * run moved aside as DIR.N, never overwritten), its index begun and
 * locked while the run goes on, and the final index's header. The index's
 * format is docs/format.md "Run directory"; run.c reads and writes the
 * rest of it.
 *
 * Contract: single-threaded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record_dir.h"
#include "run.h"
#include "util.h"

/*
 * Create @dir and its missing parents (mkdir -p). Return: 0 or -errno.
 */
static int rec_mkdirs(const char *dir)
{
	char buf[PATH_MAX];
	size_t n = strlen(dir);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, n + 1);
	for (char *s = buf + 1; ; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -errno;
		if (!c)
			break;
		*s = c;
	}
	return run_is_dir(dir) == 1 ? 0 : -ENOTDIR;
}

/* Does directory @dir hold anything? */
static bool rec_dir_empty(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	bool empty = true;

	if (!d)
		return true;
	while (empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/*
 * Make @dir ready for a new run: created when missing; an earlier run in
 * it (its index) renamed DIR.N, the first free N, unless it is being
 * recorded now (its index locked); a default directory (@explicit false)
 * that holds other files refused. Return: 0, or 1 with the message
 * printed.
 */
int rec_prepare_dir(const char *dir, bool explicit)
{
	char index[PATH_MAX + 16], aside[PATH_MAX + 16];
	struct stat st;
	int is = run_is_dir(dir), fd;

	if (is == -ENOENT) {
		int rc = rec_mkdirs(dir);

		if (rc)
			tool_err("%s: cannot create it: %s", dir, strerror(-rc));
		return rc ? 1 : 0;
	}
	if (is <= 0) {
		/* "Not a directory", "Permission denied"...: what stat said */
		tool_err("%s: %s", dir, strerror(is ? -is : ENOTDIR));
		return 1;
	}
	snprintf(index, sizeof(index), "%s/%s", dir, RUN_INDEX);
	if (lstat(index, &st) != 0) {
		if (explicit || rec_dir_empty(dir))
			return 0;
		tool_err("%s holds files but no %s: not a run of fdrtrace record (or one cut "
			 "short before it began); remove it, or give -d DIR", dir, RUN_INDEX);
		return 1;
	}
	if (!run_is_index(index)) {
		/* a file of the user's that happens to be named so: never ours to replace */
		tool_err("%s holds a file named %s that is not a run's index (fdrtrace record "
			 "writes \"%s\" first): not overwritten; give another -d DIR", dir,
			 RUN_INDEX, RUN_INDEX_MAGIC);
		return 1;
	}
	fd = open(index, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK) {
		close(fd);
		tool_err("%s: a run is being recorded there now (its %s is locked); give "
			 "another -d DIR", dir, RUN_INDEX);
		return 1;
	}
	if (fd >= 0)
		close(fd);
	for (unsigned n = 1; n < 100000; n++) {
		snprintf(aside, sizeof(aside), "%s.%u", dir, n);
		if (lstat(aside, &st) == 0 || errno != ENOENT)
			continue;
		if (rename(dir, aside) == 0) {
			fprintf(stderr, "fdrtrace record: the earlier run in %s moved to %s\n", dir,
				aside);
			if (mkdir(dir, 0777) == 0)
				return 0;
			tool_err("%s: cannot create it: %s", dir, strerror(errno));
			return 1;
		}
		if (errno != EEXIST && errno != ENOTEMPTY) {
			tool_err("%s holds an earlier run, and it could not be moved to %s: %s", dir,
				 aside, strerror(errno));
			return 1;
		}
	}
	tool_err("%s holds an earlier run, and no free name to move it to", dir);
	return 1;
}

/*
 * The index while the run goes on: its header and "running", locked (a
 * second record into the same directory refuses rather than moves a
 * run in progress). Return: the locked descriptor, or -1.
 */
int rec_begin_index(const char *dir, char *const *argv)
{
	char path[PATH_MAX + 16];
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, RUN_INDEX);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	flock(fd, LOCK_EX | LOCK_NB);
	f = fdopen(dup(fd), "w");
	if (f) {
		fputs(RUN_INDEX_MAGIC " 1\n# status: running (fdrtrace record", f);
		fprintf(f, " pid %d)\n# command:", (int)getpid());
		for (; *argv; argv++)
			fprintf(f, " %s", *argv);
		fputc('\n', f);
		fclose(f);
	}
	return fd;
}

/* The header of the final index: the command, its status, the times. */
char *rec_index_header(char *const *argv, int st, uint64_t start_ns, uint64_t end_ns)
{
	char *text = NULL, cmd[4096];
	size_t len = 0;
	struct run_proc p = { 0 };
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	/* the command line, quoted as run_command() quotes a trace's */
	for (char *const *a = argv; *a; a++) {
		p.args_len += (uint32_t)strlen(*a) + 1;
		p.argc++;
	}
	p.args = malloc(p.args_len + 1);
	if (p.args) {
		char *o = p.args;

		for (char *const *a = argv; *a; a++)
			o = stpcpy(o, *a) + 1;
		run_command(&p, cmd, sizeof(cmd), true);
		fprintf(f, "# command: %s\n", cmd);
		free(p.args);
	}
	if (WIFEXITED(st))
		fprintf(f, "# status: exited %d\n", WEXITSTATUS(st));
	else
		fprintf(f, "# status: killed by SIG%s\n",
			sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	fprintf(f, "# start_ns: %" PRIu64 "\n# end_ns: %" PRIu64 "\n", start_ns, end_ns);
	fclose(f);
	return text;
}
