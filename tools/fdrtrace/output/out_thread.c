// SPDX-License-Identifier: MIT
/*
 * out_thread.c - output written by a second thread (see out_thread.h).
 *
 * Two buffers: the owner always holds one. The other is @spare (free),
 * @job (handed over, waiting) or being written by the thread, and every
 * change between those is made under @lock, which also orders the bytes
 * the owner wrote before ot_hand() before the thread's fwrite() of them.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "out_thread.h"

void ot_init(struct out_thread *w, FILE *f, size_t size)
{
	w->f = f;
	w->size = size;
	w->spare = NULL;
	w->job = NULL;
	w->job_len = 0;
	w->running = false;
	w->stop = false;
	w->err = 0;
}

static void *ot_thread(void *arg)
{
	struct out_thread *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		char *buf;
		size_t len;
		int err = 0;

		while (!w->job && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->job)
			break;
		buf = w->job;
		len = w->job_len;
		pthread_mutex_unlock(&w->lock);
		errno = 0;
		if (len && fwrite(buf, 1, len, w->f) != len)
			err = errno ? errno : EIO;
		pthread_mutex_lock(&w->lock);
		if (err)
			w->err = err;
		w->job = NULL;
		w->spare = buf;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Start the thread with a second buffer; false (nothing started) when either is missing. */
static bool ot_start(struct out_thread *w)
{
	sigset_t all, old;
	int rc;

	w->spare = malloc(w->size);
	if (!w->spare)
		return false;
	if (pthread_mutex_init(&w->lock, NULL))
		goto no_lock;
	if (pthread_cond_init(&w->cond, NULL))
		goto no_cond;
	w->stop = false;
	/* signals (SIGINT, SIGPIPE) stay the command's main thread's business */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, ot_thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		goto no_thread;
	w->running = true;
	return true;

no_thread:
	pthread_cond_destroy(&w->cond);
no_cond:
	pthread_mutex_destroy(&w->lock);
no_lock:
	free(w->spare);
	w->spare = NULL;
	return false;
}

char *ot_hand(struct out_thread *w, char *buf, size_t len)
{
	char *next;

	if (!w->running && !ot_start(w)) {
		if (len)
			fwrite(buf, 1, len, w->f);
		return buf;
	}
	pthread_mutex_lock(&w->lock);
	while (!w->spare)
		pthread_cond_wait(&w->cond, &w->lock);
	next = w->spare;
	w->spare = NULL;
	w->job = buf;
	w->job_len = len;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return next;
}

void ot_drain(struct out_thread *w)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	while (!w->spare)
		pthread_cond_wait(&w->cond, &w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w->spare);
	w->spare = NULL;
	w->running = false;
	if (w->err)
		errno = w->err;	/* as if the owner had written: tool_finish_stdout() reads it */
}
