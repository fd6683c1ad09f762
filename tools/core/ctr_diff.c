// SPDX-License-Identifier: GPL-2.0
/*
 * Counter snapshots as data (counters.h): classes of statistics, adding to
 * a snapshot, pairing two snapshots into deltas. Reading them from the
 * system is counters.c.
 */
#include "counters.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[LS_NR_CTR_CLASSES] = {
	[LS_CTR_OTHER]	 = "other",
	[LS_CTR_PFC]	 = "pfc_pause",
	[LS_CTR_ECN]	 = "ecn",
	[LS_CTR_CNP]	 = "cnp",
	[LS_CTR_OOS]	 = "out_of_sequence",
	[LS_CTR_RETRANS] = "retransmit",
	[LS_CTR_DROP]	 = "drops",
	[LS_CTR_QUEUE]	 = "queue",
};

/* Name of a counter class. */
const char *ls_ctr_class_name(enum ls_ctr_class c)
{
	return c < LS_NR_CTR_CLASSES ? class_names[c] : "other";
}

/* True when name contains any of the NULL-terminated needles (case-insensitive). */
static bool has_any(const char *name, const char *const *needles)
{
	for (; *needles; needles++) {
		if (strcasestr(name, *needles))
			return true;
	}
	return false;
}

/* Classify a counter by its name. */
enum ls_ctr_class ls_ctr_classify(const char *name)
{
	static const char *const cnp[] = { "cnp", NULL };
	static const char *const ecn[] = { "ecn", "ce_mark", "marked", "ipext:InCEPkts",
					   NULL };
	static const char *const pfc[] = { "pause", "pfc", NULL };
	static const char *const oos[] = { "out_of_seq", "seq_err", "sequence_err",
					   "duplicate", "_oos", "oos_", NULL };
	static const char *const rtx[] = { "retrans", "retry", "timeout", "rnr",
					   "resend", NULL };
	static const char *const drop[] = { "drop", "discard", "overrun", "missed",
					    "fifo_err", "no_buf", "out_of_buffer", NULL };
	static const char *const queue[] = { ":backlog", ":qlen", NULL };
	/* The first class whose needles the name contains. */
	static const struct {
		const char *const *needles;
		enum ls_ctr_class cls;
	} classes[] = {
		{ cnp, LS_CTR_CNP }, { ecn, LS_CTR_ECN }, { pfc, LS_CTR_PFC },
		{ oos, LS_CTR_OOS }, { rtx, LS_CTR_RETRANS }, { drop, LS_CTR_DROP },
		{ queue, LS_CTR_QUEUE },
	};

	for (size_t i = 0; i < ARRAY_SIZE(classes); i++) {
		if (has_any(name, classes[i].needles))
			return classes[i].cls;
	}
	return LS_CTR_OTHER;
}

/* Add a value to a snapshot. */
int ls_ctr_add(struct ls_ctr_snap *s, const char *name, bool gauge, bool ok,
	       uint64_t value, const char *error)
{
	struct ls_ctr *c;

	if (ls_grow(&s->v, &s->cap, s->n, sizeof(*s->v), 64))
		return -1;
	c = &s->v[s->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->cls = ls_ctr_classify(name);
	c->gauge = gauge;
	c->ok = ok;
	c->value = value;
	if (error)
		snprintf(c->error, sizeof(c->error), "%s", error);
	return 0;
}

/* Free a snapshot. */
void ls_ctr_snap_free(struct ls_ctr_snap *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Pair two snapshots by name. */
int ls_ctr_diff(const struct ls_ctr_snap *before, const struct ls_ctr_snap *after,
		struct ls_ctr_diff *d, struct ls_err *err)
{
	size_t i = 0, j = 0, cap = before->n + after->n;

	memset(d, 0, sizeof(*d));
	d->v = calloc(cap ? cap : 1, sizeof(*d->v));
	if (!d->v)
		return ls_errnof(err, ENOMEM, "counter deltas");
	while (i < before->n || j < after->n) {
		const struct ls_ctr *b = i < before->n ? &before->v[i] : NULL;
		const struct ls_ctr *a = j < after->n ? &after->v[j] : NULL;
		struct ls_ctr_delta *o = &d->v[d->n++];
		int c = !b ? 1 : !a ? -1 : strcmp(b->name, a->name);
		const struct ls_ctr *x = c <= 0 ? b : a;

		snprintf(o->name, sizeof(o->name), "%s", x->name);
		o->cls = x->cls;
		o->gauge = x->gauge;
		if (c == 0) {
			o->ok = b->ok && a->ok;
			o->before = b->value;
			o->after = a->value;
			o->delta = (int64_t)(a->value - b->value);
			snprintf(o->error, sizeof(o->error), "%s",
				 !b->ok ? b->error : !a->ok ? a->error : "");
			i++;
			j++;
		} else {
			o->ok = false;
			snprintf(o->error, sizeof(o->error), "%s",
				 x->ok ? (c < 0 ? "gone after the run" : "appeared during the run")
				       : x->error);
			if (c < 0)
				i++;
			else
				j++;
		}
		if (!o->ok)
			d->unreadable++;
	}
	return 0;
}

/* Free a diff. */
void ls_ctr_diff_free(struct ls_ctr_diff *d)
{
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* True when the counter moved. */
bool ls_ctr_moved(const struct ls_ctr_delta *c)
{
	if (!c->ok)
		return false;
	return c->gauge ? c->after != 0 : c->delta != 0;
}
