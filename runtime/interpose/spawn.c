// SPDX-License-Identifier: MIT
/*
 * runtime/interpose/spawn.c - posix_spawn, so that a run shows where a
 * child began.
 *
 * A fork leaves a spawn record in the forking thread's records (the
 * prepare handler, process/fork.c) and a fork record in the child's trace,
 * which a reader pairs by serial: convert draws an arrow from the first
 * to the child. posix_spawn and posix_spawnp make the child with a
 * clone() of their own, which runs no fork handler, and the child runs
 * only libc before its exec: no record on either side said where the
 * child came from, and its arrow began at its own start.
 *
 * So libfdrtrace defines both (exported, as the exec family): each reads
 * the clock and the thread id, calls the next definition (libc's, through
 * dlsym(RTLD_NEXT)), and when the child was made writes a spawn record
 * with its pid (fdr_spawn_note()), which a reader pairs with the child's
 * trace by pid (the child's process record names its parent). The child
 * itself is untouched: it shares nothing with us but what libc gives it.
 *
 * Contract: called by the program, on any thread, not from a signal
 * handler (posix_spawn is not async-signal-safe either). errno and the
 * return value are libc's; ENOSYS when libc has no posix_spawn (a fully
 * static program: it then has its own, and never calls this one).
 */
#include <errno.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "compiler.h"
#include "libc_next.h"
#include "lifecycle.h"

typedef int (*sp_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);

static notrace int sp_spawn(const char *name, pid_t *pid, const char *path,
			    const posix_spawn_file_actions_t *actions,
			    const posix_spawnattr_t *attr, char *const argv[],
			    char *const envp[])
{
	uint64_t tsc = fdr_clock_read(&(unsigned){ 0 });	/* before: the child may run first */
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	pid_t child = 0;
	sp_fn real;
	int rc;

	fdr_next_fn(name, &real, sizeof(real));
	if (!real)
		return ENOSYS;
	rc = real(&child, path, actions, attr, argv, envp);
	if (pid)
		*pid = child;
	if (rc == 0 && child > 0) {
		int saved = errno;

		fdr_spawn_note(tid, tsc, (uint32_t)child);
		errno = saved;
	}
	return rc;
}

fdr_export notrace int posix_spawn(pid_t *restrict pid, const char *restrict path,
				   const posix_spawn_file_actions_t *actions,
				   const posix_spawnattr_t *restrict attr, char *const argv[restrict],
				   char *const envp[restrict])
{
	return sp_spawn("posix_spawn", pid, path, actions, attr, argv, envp);
}

fdr_export notrace int posix_spawnp(pid_t *restrict pid, const char *restrict file,
				    const posix_spawn_file_actions_t *actions,
				    const posix_spawnattr_t *restrict attr, char *const argv[restrict],
				    char *const envp[restrict])
{
	return sp_spawn("posix_spawnp", pid, file, actions, attr, argv, envp);
}
