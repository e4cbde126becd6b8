/* SPDX-License-Identifier: MIT */
/*
 * convert.c - the conversion's output buffer, shared by the formats
 * (convert.h): a buffer filled by the format and handed, when full, to the
 * thread that writes it to stdout (out_thread.h).
 *
 * Contract: single-threaded tool code (the writing thread is out_thread.c's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

int cv_open(struct cv *cv, bool run, uint64_t run_freq, uint64_t run_base)
{
	ot_init(&cv->w, stdout, CV_OUT_SIZE);
	tk_ns_init(&cv->clk, 0);
	cv->near.ok = false;
	cv->run = run;
	cv->run_freq = run_freq;
	cv->run_base = run_base;
	cv->out = malloc(CV_OUT_SIZE);
	return cv->out ? 0 : -ENOMEM;
}

void cv_flush(struct cv *cv)
{
	if (cv->len)
		cv->out = ot_hand(&cv->w, cv->out, cv->len);
	cv->len = 0;
}

void cv_put(struct cv *cv, const void *p, size_t n)
{
	if (n > CV_OUT_SIZE / 2) {
		cv_flush(cv);
		ot_drain(&cv->w);	/* behind what was handed over */
		fwrite(p, 1, n, stdout);
		return;
	}
	memcpy(cv_room(cv, n), p, n);
	cv->len += n;
}

void cv_drain(struct cv *cv)
{
	if (cv->out)
		cv_flush(cv);
	ot_drain(&cv->w);
}

void cv_close(struct cv *cv)
{
	free(cv->out);
	cv->out = NULL;
	cv->len = 0;
}
