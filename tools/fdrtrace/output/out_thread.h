/* SPDX-License-Identifier: MIT */
/*
 * out_thread.h - a second thread that writes a command's output while the
 * command formats the next part of it (replay's and convert's buffers).
 *
 * The commands that write a line or an event per call spend as much time
 * in write() (the kernel taking hundreds of MB into the page cache) as in
 * formatting. With two buffers, one written by this thread while the
 * command fills the other, the two overlap: on two cores the command takes
 * the longer of the two instead of their sum.
 *
 * Use: the command fills a buffer of @size bytes and hands it over with
 * ot_hand(), which returns the buffer to fill next (waiting while both are
 * in use). ot_drain() waits until everything handed over is written, and
 * stops the thread; the command writes to the stream itself only after
 * it (a direct write, its last part). Bytes reach the stream in the order
 * they were handed over, with fwrite(): stdio keeps the error state that
 * tool_finish_stdout() checks, and what the command printed with stdio
 * before its first ot_hand() stays in front.
 *
 * The thread starts at the first ot_hand(), so a command whose output
 * fits one buffer (and every fuzz run) never starts one. Without memory
 * for the second buffer or a thread, ot_hand() writes in place and
 * returns the same buffer: slower, never different.
 *
 * Contract: one owner thread calls ot_*(); the stream is not written by
 * anyone else from the first ot_hand() to ot_drain().
 */
#ifndef FDRTRACE_TOOL_OUT_THREAD_H
#define FDRTRACE_TOOL_OUT_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/**
 * struct out_thread - the writing thread and the buffer it is not writing
 * @f: the stream
 * @size: bytes in each buffer
 * @lock: protects everything below
 * @cond: signalled when @job is set, when it is written, and at @stop
 * @spare: the buffer nobody uses; NULL while the thread writes (with two
 *	buffers and one of them the owner's, a non-NULL @spare means the
 *	thread is idle and @job is NULL)
 * @job, @job_len: handed over and not yet written; NULL when none
 * @thread: the writer, valid while @running
 * @running: the thread was started and not yet joined
 * @stop: ot_drain() asks the thread to end
 * @err: the errno of the thread's last failed write, 0 when none
 */
struct out_thread {
	FILE *f;
	size_t size;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *spare;
	char *job;
	size_t job_len;
	pthread_t thread;
	bool running;
	bool stop;
	int err;
};

/**
 * ot_init - set up, writing to @f buffers of @size bytes (no thread yet)
 * @w: the writer
 * @f: the stream
 * @size: the size of the owner's buffer
 */
void ot_init(struct out_thread *w, FILE *f, size_t size);

/**
 * ot_hand - have @len bytes of @buf written, and get the buffer to fill next
 * @w: the writer
 * @buf: a malloc()ed buffer of the size given to ot_init(); it is the
 *	writer's until returned by a later ot_hand() or freed by ot_drain()
 * @len: bytes to write (may be 0)
 *
 * Return: a malloc()ed buffer of that size, which the caller owns (and
 * frees when done): @buf itself when no thread could be started.
 */
char *ot_hand(struct out_thread *w, char *buf, size_t len);

/**
 * ot_drain - wait until everything handed over is written; stop the thread
 * @w: the writer (may be used again: the next ot_hand() starts a thread)
 *
 * Frees the buffer the writer holds; the caller's own buffer stays its.
 * When a write failed, sets errno to its error, as a failed fwrite() of
 * the caller's would have (the stream's error flag is set either way).
 */
void ot_drain(struct out_thread *w);

#endif /* FDRTRACE_TOOL_OUT_THREAD_H */
