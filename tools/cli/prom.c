// SPDX-License-Identifier: GPL-2.0
/* Prometheus / OpenMetrics text writer: HELP/TYPE once, escaping, atomic file. */
#include "prom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABELS	16

/* Metric name: [a-zA-Z_:][a-zA-Z0-9_:]* */
static bool valid_metric(const char *s)
{
	if (!*s || !(((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') || *s == '_' || *s == ':'))
		return false;
	for (s++; *s; s++) {
		if (!(((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == ':'))
			return false;
	}
	return true;
}

/* Label name: [a-zA-Z_][a-zA-Z0-9_]*, not reserved (__*). */
static bool valid_label(const char *s)
{
	if (!strncmp(s, "__", 2) || !valid_metric(s) || strchr(s, ':'))
		return false;
	return true;
}

/* Does s end with suffix? */
static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Write s with \\, \n (and \" when quoted) escaped. */
static void put_escaped(FILE *fp, const char *s, bool quoted)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", fp);
		else if (*s == '\n')
			fputs("\\n", fp);
		else if (*s == '"' && quoted)
			fputs("\\\"", fp);
		else
			fputc(*s, fp);
	}
}

/* Write a sample value: NaN, +Inf, -Inf or the shortest round-tripping number. */
static void put_value(FILE *fp, double v)
{
	char buf[32];

	if (isnan(v)) {
		fputs("NaN", fp);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? "+Inf" : "-Inf", fp);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, fp);
}

/* Start a document at path ("-" = stdout). */
int ls_prom_open(struct ls_prom *p, const char *path, bool openmetrics,
		 struct ls_err *err)
{
	memset(p, 0, sizeof(*p));
	p->openmetrics = openmetrics;
	if (!strcmp(path, "-")) {
		p->fp = stdout;
		p->to_stdout = true;
		return 0;
	}
	if (ls_afile_open(&p->af, path, err))
		return -1;
	p->fp = p->af.fp;
	return 0;
}

/* Start a document on an open stream (a memory buffer): not atomic, not closed. */
int ls_prom_open_fp(struct ls_prom *p, FILE *fp, bool openmetrics)
{
	memset(p, 0, sizeof(*p));
	p->openmetrics = openmetrics;
	p->fp = fp;
	p->to_stdout = true;
	return 0;
}

/* Remember that the open family is finished. */
static int close_family(struct ls_prom *p, struct ls_err *err)
{
	char *copy;

	if (!p->family[0])
		return 0;
	if (p->nr_done == LS_PROM_MAX_FAMILIES)
		return ls_errf(err, "prom: more than %d metric families", LS_PROM_MAX_FAMILIES);
	copy = strdup(p->family);
	if (!copy)
		return ls_errf(err, "prom: out of memory");
	p->done[p->nr_done++] = copy;
	p->family[0] = '\0';
	return 0;
}

/* Start a metric family. */
int ls_prom_family(struct ls_prom *p, const char *name, enum ls_prom_type type,
		   const char *help, struct ls_err *err)
{
	static const char *const types[] = { "gauge", "counter", "summary", "untyped" };
	char decl[128];

	if (!valid_metric(name) || strlen(name) >= sizeof(p->family))
		return ls_errf(err, "prom: invalid metric name '%s'", name);
	if (type == LS_PROM_COUNTER && !ends_with(name, "_total"))
		return ls_errf(err, "prom: counter '%s' must end in _total", name);
	if (!help || !*help)
		return ls_errf(err, "prom: metric '%s' needs a help text", name);
	if (!strcmp(p->family, name))
		return ls_errf(err, "prom: family '%s' is already open", name);
	for (unsigned int i = 0; i < p->nr_done; i++) {
		if (!strcmp(p->done[i], name))
			return ls_errf(err, "prom: family '%s' was already written; "
				       "its samples must be contiguous", name);
	}
	if (close_family(p, err))
		return -1;
	snprintf(decl, sizeof(decl), "%s", name);
	if (p->openmetrics && type == LS_PROM_COUNTER)
		decl[strlen(decl) - strlen("_total")] = '\0';
	fprintf(p->fp, "# HELP %s ", decl);
	put_escaped(p->fp, help, false);
	fprintf(p->fp, "\n# TYPE %s %s\n", decl,
		p->openmetrics && type == LS_PROM_UNTYPED ? "unknown" : types[type]);
	snprintf(p->family, sizeof(p->family), "%s", name);
	p->type = type;
	return 0;
}

/* One sample of the open family. */
int ls_prom_sample(struct ls_prom *p, const char *suffix,
		   const struct ls_prom_label *labels, unsigned int nr_labels,
		   double value, struct ls_err *err)
{
	if (!p->family[0])
		return ls_errf(err, "prom: sample outside a metric family");
	if (nr_labels > MAX_LABELS)
		return ls_errf(err, "prom: more than %d labels", MAX_LABELS);
	if (suffix && *suffix && !valid_metric(suffix + (suffix[0] == '_')))
		return ls_errf(err, "prom: invalid suffix '%s'", suffix);
	for (unsigned int i = 0; i < nr_labels; i++) {
		if (!labels[i].name || !valid_label(labels[i].name))
			return ls_errf(err, "prom: invalid label name '%s' on %s",
				       labels[i].name ? labels[i].name : "(null)", p->family);
		if (!labels[i].value)
			return ls_errf(err, "prom: label '%s' on %s has no value",
				       labels[i].name, p->family);
		for (unsigned int k = 0; k < i; k++) {
			if (!strcmp(labels[k].name, labels[i].name))
				return ls_errf(err, "prom: label '%s' repeated on %s",
					       labels[i].name, p->family);
		}
	}
	if (p->type == LS_PROM_COUNTER && (isnan(value) || value < 0))
		return ls_errf(err, "prom: counter %s cannot be %g", p->family, value);
	fprintf(p->fp, "%s%s", p->family, suffix ? suffix : "");
	if (nr_labels) {
		fputc('{', p->fp);
		for (unsigned int i = 0; i < nr_labels; i++) {
			fprintf(p->fp, "%s%s=\"", i ? "," : "", labels[i].name);
			put_escaped(p->fp, labels[i].value, true);
			fputc('"', p->fp);
		}
		fputc('}', p->fp);
	}
	fputc(' ', p->fp);
	put_value(p->fp, value);
	fputc('\n', p->fp);
	return 0;
}

/* An "up" gauge family: a sample per pair, 1 when its run went to the end. */
int ls_prom_up(struct ls_prom *p, const char *name, const char *help,
	       const void *pairs, size_t n, size_t size, struct ls_err *err)
{
	struct ls_prom_label l;

	if (ls_prom_family(p, name, LS_PROM_GAUGE, help, err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct ls_prom_pair *pp = (const void *)((const char *)pairs + i * size);

		l = (struct ls_prom_label){ "peer", pp->peer };
		if (ls_prom_sample(p, NULL, &l, 1, pp->ok, err))
			return -1;
	}
	return 0;
}

/* A latency distribution (ns) as a summary in seconds. */
int ls_prom_summary(struct ls_prom *p, const struct ls_prom_label *labels,
		    unsigned int nr_labels, const struct ls_summary *s_ns,
		    struct ls_err *err)
{
	static const char *const qs[] = { "0.5", "0.9", "0.99", "0.999" };
	struct ls_prom_label l[MAX_LABELS + 1];
	double v[4] = { s_ns->p50, s_ns->p90, s_ns->p99, s_ns->p999 };

	if (p->type != LS_PROM_SUMMARY || !p->family[0])
		return ls_errf(err, "prom: %s is not a summary family",
			       p->family[0] ? p->family : "(none)");
	if (nr_labels > MAX_LABELS)
		return ls_errf(err, "prom: more than %d labels", MAX_LABELS);
	memcpy(l, labels, nr_labels * sizeof(*l));
	for (int i = 0; i < 4; i++) {
		l[nr_labels] = (struct ls_prom_label){ "quantile", qs[i] };
		if (ls_prom_sample(p, NULL, l, nr_labels + 1,
				   s_ns->count ? v[i] / 1e9 : NAN, err))
			return -1;
	}
	if (ls_prom_sample(p, "_sum", labels, nr_labels,
			   s_ns->mean * (double)s_ns->count / 1e9, err) ||
	    ls_prom_sample(p, "_count", labels, nr_labels, (double)s_ns->count, err))
		return -1;
	return 0;
}

/* Free the family list. */
static void free_done(struct ls_prom *p)
{
	for (unsigned int i = 0; i < p->nr_done; i++)
		free(p->done[i]);
	p->nr_done = 0;
}

/* Finish and rename into place. */
int ls_prom_commit(struct ls_prom *p, struct ls_err *err)
{
	free_done(p);
	if (p->openmetrics)
		fputs("# EOF\n", p->fp);
	if (p->to_stdout) {
		if (fflush(p->fp) || ferror(p->fp))
			return ls_errf(err, "prom: write to %s failed",
				       p->fp == stdout ? "stdout" : "the stream");
		return 0;
	}
	return ls_afile_commit(&p->af, err);
}

/* Drop an unfinished document. */
void ls_prom_abort(struct ls_prom *p)
{
	free_done(p);
	if (!p->to_stdout)
		ls_afile_abort(&p->af);
}
