/* SPDX-License-Identifier: MIT */
/*
 * analysis_summary.c - the end of an analysis: the lines on stderr that say
 * what the numbers leave out (an_summary(), an_events_note()), and
 * everything freed (an_fini()).
 *
 * Contract: single-threaded tool code.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_summary.h"
#include "util.h"

double an_seconds(const struct analysis *a, uint64_t ticks)
{
	return a->freq ? (double)ticks / (double)a->freq : (double)ticks;
}

void an_summary(const struct analysis *a, const char *cmd)
{
	const struct an_stats *s = &a->st;

	if (a->quiet)
		return;
	tool_stderr_sync();	/* the output's last line first, whole (2>&1) */
	if (s->stopped)
		fprintf(stderr,
			"fdrtrace %s: %s: recording stopped early, a write failed (%s): what the "
			"program did after that is in no trace\n",
			cmd, a->path, s->stop_error ? strerror((int)s->stop_error) : "error not known");
	if (s->gaps || s->spanning)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " records lost in %" PRIu64 " gap%s; %" PRIu64
			" call%s spanning a loss left out of every duration, sum and self time\n",
			cmd, a->path, s->gap_records, s->gaps, s->gaps == 1 ? "" : "s", s->spanning,
			s->spanning == 1 ? "" : "s");
	if (s->holed)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " call%s timed across a loss (entry and exit "
			"recorded): duration exact, self time unknown and left out of self\n",
			cmd, a->path, s->holed, s->holed == 1 ? "" : "s");
	if (s->too_deep)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " call%s deeper than %u levels counted, not "
			"timed nor shown (a stack that deep is not kept)\n",
			cmd, a->path, s->too_deep, s->too_deep == 1 ? "" : "s", AN_DEPTH_MAX);
	if (s->repeated)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " buffer%s numbered as one already read "
			"(ring policy) left out\n",
			cmd, a->path, s->repeated, s->repeated == 1 ? "" : "s");
	if (s->counted)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " call%s of %" PRIu32 " function%s counted, "
			"not recorded (auto_exclude): in account's count, not timed, not shown; "
			"their time is in their callers' self time\n",
			cmd, a->path, s->counted, s->counted == 1 ? "" : "s", s->counted_fns,
			s->counted_fns == 1 ? "" : "s");
	if (s->counted_lost)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " call%s neither recorded nor counted "
			"(auto_exclude's tables were full): counts are short by that many in all\n",
			cmd, a->path, s->counted_lost, s->counted_lost == 1 ? "" : "s");
	if (s->waits)
		fprintf(stderr,
			"fdrtrace %s: %s: threads waited %.6f s for free buffers in %" PRIu64
			" wait%s (on_full=wait; nothing lost)\n",
			cmd, a->path, an_seconds(a, s->wait_ticks), s->waits, s->waits == 1 ? "" : "s");
	if (!s->unmatched_exits && !s->unmatched_entries && !s->unwound && !s->partial &&
	    !s->clamped && !s->dropped_records && !s->dropped_buffers && !s->out_of_order &&
	    !s->bad_buffers && !s->reordered && !s->truncated)
		return;
	fprintf(stderr,
		"fdrtrace %s: %s: %" PRIu64 " calls; unmatched: %" PRIu64 " exits without entry, %"
		PRIu64 " entries without exit, %" PRIu64 " closed by an outer exit, %" PRIu64
		" partial; %" PRIu64 " clamped; dropped: %" PRIu64 " records, %" PRIu64
		" buffers; %" PRIu64 " damaged buffers skipped; %" PRIu64
		" buffers out of time order%s%s\n",
		cmd, a->path, s->calls, s->unmatched_exits, s->unmatched_entries, s->unwound,
		s->partial, s->clamped, s->dropped_records, s->dropped_buffers, s->bad_buffers,
		s->out_of_order,
		s->reordered ? "; buffers reordered by time" :
		s->out_of_order ? " (read from a file to reorder them)" : "",
		s->truncated ? "; trace truncated" : "");
}

void an_events_note(const struct analysis *a, const char *cmd)
{
	const struct an_stats *s = &a->st;
	uint64_t n = s->app_custom + s->app_typed;

	if (a->quiet || !n)
		return;
	tool_stderr_sync();
	fprintf(stderr,
		"fdrtrace %s: %s: %" PRIu64 " application event%s (custom %" PRIu64 ", typed %"
		PRIu64 "): see replay, convert or dump\n",
		cmd, a->path, n, n == 1 ? "" : "s", s->app_custom, s->app_typed);
}

void an_fini(struct analysis *a)
{
	uint32_t i;

	for (i = 0; i < a->n_fns; i++) {
		free(a->fns[i]->name);
		if (a->fns[i]->display != a->fns[i]->base)
			free(a->fns[i]->display);
		free(a->fns[i]->base);
		free(a->fns[i]->full);
		hist_free(&a->fns[i]->tally.hist);
		free(a->fns[i]->uptr);
		free(a->fns[i]);
	}
	free(a->fns);
	free(a->fn_hash);
	for (i = 0; i < a->n_threads; i++) {
		free(a->threads[i]->name);
		free(a->threads[i]->stack);
		free(a->threads[i]->open);
		free(a->threads[i]->held);
		free(a->threads[i]);
	}
	free(a->threads);
	free(a->thread_hash);
	for (i = 0; i < a->n_mods; i++)
		free(a->mods[i].path);
	free(a->mods);
	free(a->name_hash);
	ns_fini(&a->ns);
	xmap_free(&a->xmap);
	sym_ctx_free(a->sym);
	free(a->nodes);
	free(a->node_hash);
	free(a->node_hash_val);
	free(a->program);
	free(a->win);
	memset(a, 0, sizeof(*a));
}
