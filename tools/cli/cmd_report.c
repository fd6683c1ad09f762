// SPDX-License-Identifier: GPL-2.0
/* `latsplit report [-o FILE.html] RESULT.json...`: one self-contained HTML report of JSON results. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "io.h"
#include "opts.h"
#include "report.h"

static const char *const report_kinds[] = { "breakdown", "probe", "irq", "compare" };

struct report_opts {
	const char *out;
};

/* Print the usage; its option list is what Documentation/latsplit-report.rst documents. */
static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: latsplit report [-o FILE.html] RESULT.json [RESULT2.json ...]\n"
		"\n"
		"Render JSON results of breakdown, probe, irq (JSON lines: the intervals are\n"
		"pooled) and compare into one self-contained HTML file with inline SVG plots:\n"
		"latency CDFs, the parts at p50..p99.9, the CPU x stage heatmap, the samples over\n"
		"time, and the facts (inputs, transmission model, counters, verdict) beside them.\n"
		"Two to eight results of the same kind are overlaid (A/B) with compare's\n"
		"significance tests; a fleet run's file (--peers) is shown pair by pair, its\n"
		"failed pairs as failures. The file needs no network when opened.\n"
		"\n"
		"options:\n"
		"  -o, --output FILE        write the report to FILE (default: stdout); written\n"
		"                           to a temporary file and renamed, never half-written\n"
		"                           (a symlink's target is replaced, a file keeps its\n"
		"                           mode; a device or FIFO is written to, not replaced;\n"
		"                           an input file is refused)\n"
		"  -h, --help               this help\n");
}

#define RPT struct report_opts

static const struct ls_opt report_options[] = {
	LS_OPT_STR("output", 'o', RPT, out),
	LS_OPT_HELPOPT,
};

/* Is kind one the report draws? */
static bool known_kind(const char *kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(report_kinds); i++) {
		if (!strcmp(kind, report_kinds[i]))
			return true;
	}
	return false;
}

/* Make room for one more result. */
static int add_rdoc(struct ls_report *r, size_t *cap, struct ls_rdoc **d, struct ls_err *err)
{
	if (ls_grow(&r->docs, cap, r->ndocs, sizeof(*r->docs), 4))
		return ls_errf(err, "out of memory");
	*d = &r->docs[r->ndocs];
	memset(*d, 0, sizeof(**d));
	return 0;
}

/* The peer a document measured (probe: "peer", breakdown: inputs.peer), or "". */
static void doc_peer(const struct ls_jv *root, char *buf, size_t len)
{
	if (!ls_jv_str(root, "peer", buf, len) &&
	    !ls_jv_str(ls_jv_get(root, "inputs"), "peer", buf, len))
		buf[0] = '\0';
}

/*
 * Turn the file just added (the last of r->files) into results: irq's
 * intervals pooled, others one each. Several documents of another kind are
 * a fleet run's (--peers), each shown alone; a pair it could not measure
 * ("ok": false, no samples) is a failed result, shown as such.
 */
static int add_docs(struct ls_report *r, const char *name, struct ls_err *err)
{
	const struct ls_rfile *f = &r->files[r->nfiles - 1];
	size_t cap = r->ndocs;
	char kind[32] = "";

	for (size_t k = 0; k < f->n; k++) {
		const struct ls_jv *root = &f->docs[k].root, *sc;

		if (root->type != LS_JOBJ || !ls_jv_str(root, "kind", kind, sizeof(kind)))
			return ls_errf(err, "%s: not a latsplit JSON result (no \"kind\" string%s)", name,
				       f->n > 1 ? " in one of its documents" : "");
		if (!known_kind(kind))
			return ls_errf(err, "%s: a '%s' document cannot be reported (breakdown, probe, "
				       "irq or compare)", name, kind);
		sc = ls_jv_get(root, "schema");
		if (sc && sc->type == LS_JNUM && sc->num != LS_JSON_SCHEMA)
			return ls_errf(err, "%s: schema %g: this latsplit reads schema %d documents",
				       name, sc->num, LS_JSON_SCHEMA);
	}
	for (size_t k = 0; k < f->n; k++) {
		bool pool = !strcmp(kind, "irq"), ok = true;
		struct ls_rdoc *d = NULL;

		if (add_rdoc(r, &cap, &d, err))
			return -1;
		if (f->n > 1 && !pool)
			snprintf(d->name, sizeof(d->name), "%s#%zu", name, k + 1);
		else
			snprintf(d->name, sizeof(d->name), "%s", name);
		ls_jv_str(&f->docs[k].root, "kind", d->kind, sizeof(d->kind));
		doc_peer(&f->docs[k].root, d->peer, sizeof(d->peer));
		d->docs = &f->docs[k];
		d->ndocs = pool ? f->n : 1;
		d->fleet = f->n > 1 && !pool;
		d->failed = !pool && ls_jv_bool(&d->docs[0].root, "ok", &ok) && !ok;
		if (!d->failed && ls_series_collect_docs(d->docs, d->ndocs, &d->set, err)) {
			/* its messages mostly name the file already: not twice */
			if (strncmp(err->msg, name, strlen(name)))
				return ls_err_wrap(err, "%s", name);
			return -1;
		}
		r->ndocs++;
		if (pool)
			break;
	}
	return 0;
}

/* Read a file ("-" is stdin) of one or more documents into r. */
int ls_report_add_file(struct ls_report *r, const char *path, struct ls_err *err)
{
	size_t cap = r->nfiles;
	struct ls_rfile *f;

	if (ls_grow(&r->files, &cap, r->nfiles, sizeof(*r->files), 4))
		return ls_errf(err, "out of memory");
	f = &r->files[r->nfiles];
	if (ls_jr_parse_file_stream(&f->docs, &f->n, path, NULL, err))
		return -1;
	r->nfiles++;
	return add_docs(r, path, err);
}

/* Add the documents in text (malloc'd; r owns it from now). */
int ls_report_add_text(struct ls_report *r, const char *name, char *text, size_t len,
		       struct ls_err *err)
{
	size_t cap = r->nfiles;
	struct ls_rfile *f;

	if (ls_grow(&r->files, &cap, r->nfiles, sizeof(*r->files), 4)) {
		free(text);
		return ls_errf(err, "out of memory");
	}
	f = &r->files[r->nfiles];
	if (ls_jr_parse_stream(&f->docs, &f->n, name, text, len, NULL, err)) {
		free(text);
		return -1;
	}
	f->docs[0].owned = text;
	r->nfiles++;
	return add_docs(r, name, err);
}

/* Free everything read. */
void ls_report_free(struct ls_report *r)
{
	for (size_t k = 0; k < r->ndocs; k++)
		ls_series_free(&r->docs[k].set);
	for (size_t i = 0; i < r->nfiles; i++)
		ls_jr_free_stream(r->files[i].docs, r->files[i].n);
	free(r->docs);
	free(r->files);
	memset(r, 0, sizeof(*r));
}

/* Render and write to fp; name is the file's name for messages. */
int ls_report_write_fp(const struct ls_report *r, FILE *fp, const char *name, struct ls_err *err)
{
	struct ls_sb page = { 0 };
	int ret = -1;

	if (ls_report_render(r, &page, err))
		goto out;
	if (fwrite(page.s, 1, page.len, fp) != page.len || fflush(fp)) {
		ls_errnof(err, errno, "write %s", name);
		goto out;
	}
	ret = 0;
out:
	ls_sb_free(&page);
	return ret;
}

/* Render and write atomically (stdout when path is NULL or "-"). */
int ls_report_write(const struct ls_report *r, const char *path, struct ls_err *err)
{
	struct ls_afile af;

	if (!path || !strcmp(path, "-"))
		return ls_report_write_fp(r, stdout, "the report to stdout", err);
	if (ls_afile_open(&af, path, err))
		return -1;
	if (ls_report_write_fp(r, af.fp, path, err)) {
		ls_afile_abort(&af);
		return -1;
	}
	return ls_afile_commit(&af, err);
}

/* Refuse an output file that is one of the inputs (the same file, by any name). */
static int check_out_not_input(const char *out, char **in, int n, struct ls_err *err)
{
	struct stat so, si;

	if (!out || !strcmp(out, "-") || stat(out, &so) || !S_ISREG(so.st_mode))
		return 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(in[i], "-") && !stat(in[i], &si) &&
		    si.st_dev == so.st_dev && si.st_ino == so.st_ino)
			return ls_errf(err, "-o %s is the input %s: refusing to overwrite a result "
				       "with its report", out, in[i]);
	}
	return 0;
}

/* `latsplit report`. */
int cmd_report(int argc, char **argv)
{
	static const struct ls_optcmd cmd = {
		.name = "report", .mode = ":", .usage = usage, .quiet = true,
	};
	struct report_opts o = { 0 };
	struct ls_report r = { 0 };
	struct ls_err err = { 0 };
	int rc;

	rc = LS_OPTS_PARSE(argc, argv, &cmd, report_options, &o, &err);
	if (rc)
		return ls_opts_exit(rc, "report", &err);
	if (optind >= argc) {
		ls_errf(&err, "need at least one RESULT.json");
		return ls_opts_exit(LS_EXIT_USAGE, "report", &err);
	}
	rc = LS_EXIT_USAGE;
	if (check_out_not_input(o.out, argv + optind, argc - optind, &err))
		goto out;
	for (int i = optind; i < argc; i++) {
		if (ls_report_add_file(&r, argv[i], &err))
			goto out;
	}
	if (ls_report_write(&r, o.out, &err))
		goto out;
	for (size_t k = 0; k < r.ndocs && ls_report_tell_alone(&r); k++) {
		char why[160];

		ls_report_alone_why(&r, k, why, sizeof(why));
		if (why[0])
			ls_warn("report: %s: shown alone, not in an A/B overlay: %s", r.docs[k].name, why);
	}
	for (size_t k = 0; k < r.ndocs; k++) {
		if (r.docs[k].failed)
			ls_warn("report: %s: a pair that was not measured (peer %s): shown as a failure",
				r.docs[k].name, r.docs[k].peer[0] ? r.docs[k].peer : "unnamed");
	}
	if (o.out)
		fprintf(stderr, "latsplit: report: wrote %s\n", o.out);
	rc = LS_EXIT_OK;
out:
	if (rc)
		ls_warn("report: %s", err.msg);
	ls_report_free(&r);
	return rc;
}
