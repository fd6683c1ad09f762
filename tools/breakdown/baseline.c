// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit breakdown --baseline: an earlier breakdown --json of the same
 * pair, size and verb, read as the figures a healthy run had.
 */
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "jsonr.h"

/* A baseline's figures from its parsed breakdown JSON doc, read from path (same size and verb). */
int ls_bd_parse_baseline(const struct ls_jdoc *doc, const char *path, uint32_t size,
			 enum ls_probe_verb verb, struct ls_bd_base *b, struct ls_err *err)
{
	const struct ls_jv *root, *in, *fl, *parts, *st, *p;
	static const char *const pn[LS_NR_PARTS] = { "transmission", "queuing", "processing" };
	char kind[32], vb[16];
	double d = -1;

	memset(b, 0, sizeof(*b));
	root = &doc->root;
	if (root->type != LS_JOBJ || !ls_jv_str(root, "kind", kind, sizeof(kind)) ||
	    strcmp(kind, "breakdown")) {
		ls_errf(err, "--baseline %s: not a breakdown JSON document", path);
		return -1;
	}
	if (!ls_jv_num(root, "schema", &d) || d != LS_JSON_SCHEMA) {
		ls_errf(err, "--baseline %s: JSON schema %g, this latsplit reads schema %d",
			path, d, LS_JSON_SCHEMA);
		return -1;
	}
	in = ls_jv_get(root, "inputs");
	fl = ls_jv_get(root, "floor");
	parts = ls_jv_get(root, "parts");
	if (!in || !fl || !parts || !ls_jv_num(in, "size", &d) || !ls_jv_str(in, "verb", vb, sizeof(vb)) ||
	    !ls_jv_num(fl, "residual_p50_ns", &b->floor_ns) ||
	    !ls_jv_num(ls_jv_get(root, "total") ? ls_jv_get(root, "total") : root, "p50_ns", &b->total_p50)) {
		ls_errf(err, "--baseline %s: inputs.size, inputs.verb, floor.residual_p50_ns or total.p50_ns missing",
			path);
		return -1;
	}
	if ((uint32_t)d != size || strcmp(vb, ls_probe_verb_name(verb))) {
		ls_errf(err, "--baseline %s was measured with %s %g B, this run is %s %u B: compare like with like",
			path, vb, d, ls_probe_verb_name(verb), size);
		return -1;
	}
	for (int i = 0; i < LS_NR_PARTS; i++) {
		p = ls_jv_get(parts, pn[i]);
		if (!p || !ls_jv_num(p, "p50_ns", &b->part_p50[i])) {
			ls_errf(err, "--baseline %s: parts.%s.p50_ns missing", path, pn[i]);
			return -1;
		}
	}
	p = ls_jv_get(parts, "kernel");
	if (!p || !ls_jv_num(p, "p50_ns", &b->kernel_p50)) {
		ls_errf(err, "--baseline %s: parts.kernel.p50_ns missing", path);
		return -1;
	}
	st = ls_jv_get(root, "stages");
	if (st && st->type == LS_JARR) {
		for (size_t i = 0; i < st->arr.n; i++) {
			const struct ls_jv *o = &st->arr.v[i];
			char host[16];
			double cpu, mean;
			unsigned int k;
			int h;

			if (!ls_jv_str(o, "host", host, sizeof(host)) || !ls_jv_num(o, "cpu", &cpu) ||
			    !ls_jv_num(o, "mean_ns", &mean) || cpu < 0 || cpu >= LS_MAX_CPUS)
				continue;
			h = !strcmp(host, "responder");
			for (k = 0; k < b->ncpu; k++)
				if (b->cpu[k].host == h && b->cpu[k].cpu == (unsigned int)cpu)
					break;
			if (k == b->ncpu) {
				if (k == ARRAY_SIZE(b->cpu))
					continue;
				b->cpu[k].host = h;
				b->cpu[k].cpu = (unsigned int)cpu;
				b->cpu[k].mean_ns = 0;
				b->ncpu++;
			}
			b->cpu[k].mean_ns += mean;
		}
	}
	b->have = true;
	return 0;
}
