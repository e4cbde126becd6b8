/* SPDX-License-Identifier: MIT */
/*
 * record_dir.h - the run directory "fdrtrace record" writes into
 * (record_dir.c). Internal to the fdrtrace command; single-threaded.
 */
#ifndef FDRTRACE_RECORD_DIR_H
#define FDRTRACE_RECORD_DIR_H

#include <stdbool.h>
#include <stdint.h>

/**
 * rec_prepare_dir - make @dir ready for a new run
 * @dir: the run directory, without a trailing '/'
 * @explicit: given by the user (-d, -O logfile_base); the default
 *	directory is refused when it holds files but no run
 *
 * Creates @dir when missing; an earlier run in it (its index) is renamed
 * DIR.N, the first free N, unless it is being recorded now (its index
 * locked).
 * Return: 0, or 1 with the message printed.
 */
int rec_prepare_dir(const char *dir, bool explicit);

/**
 * rec_begin_index - write the index of a run that goes on: its header and
 * "running", locked (a second record into the same directory refuses
 * rather than moves a run in progress)
 * @dir: the run directory
 * @argv: the program and its arguments
 *
 * Return: the locked descriptor (close it once the final index is
 * written), or -1.
 */
int rec_begin_index(const char *dir, char *const *argv);

/**
 * rec_index_header - the header of the final index: the command, its
 * status, the times
 * @argv: the program and its arguments
 * @st: its wait status
 * @start_ns: when it started (CLOCK_REALTIME)
 * @end_ns: when it ended
 *
 * Return: the text (free() it), or NULL when out of memory.
 */
char *rec_index_header(char *const *argv, int st, uint64_t start_ns, uint64_t end_ns);

#endif /* FDRTRACE_RECORD_DIR_H */
