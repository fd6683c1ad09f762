// SPDX-License-Identifier: GPL-2.0
/* The commands' option layer: one table-driven getopt_long loop (see opts.h). */
#include "opts.h"

#include <stdarg.h>
#include <string.h>

#include "io.h"
#include "verdict.h"

const struct ls_opt_name ls_opt_backends[] = {
	{ "auto", 0 }, { "kmod", 0 }, { "ebpf", 0 }, { "none", 0 }, { NULL, 0 },
};

/* arg's index in names, or -1 with "WHAT: 'ARG' is not A, B or C" in err. */
int ls_opt_choice(const struct ls_opt_name *names, const char *arg, const char *what,
		  struct ls_err *err)
{
	char list[256] = "";
	size_t n = 0, i;

	for (i = 0; names[i].name; i++)
		if (!strcmp(arg, names[i].name))
			return (int)i;
	for (i = 0; names[i].name && n < sizeof(list); i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%s",
			      !i ? "" : names[i + 1].name ? ", " : " or ", names[i].name);
	return ls_errcf(err, LS_E_USAGE, "%s: '%s' is not %s", what, arg, list);
}

/* An LS_ARG_HOOK for --normal-us LO-HI into a struct ls_thresholds. */
int ls_opt_normal_us(void *thresholds, const char *arg, struct ls_err *err)
{
	struct ls_thresholds *th = thresholds;

	return ls_parse_range_us(arg, &th->normal_lo_ns, &th->normal_hi_ns, err);
}

/* Store v in the size-byte unsigned integer at dst. */
static void store_uint(void *dst, unsigned int size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)dst = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)dst = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)dst = (uint32_t)v;
		break;
	default:
		*(uint64_t *)dst = v;
	}
}

/* Parse a number argument of opt into dst; 0, or -1 with err set. */
static int apply_number(const struct ls_opt *opt, void *dst, const char *arg,
			const char *what, struct ls_err *err)
{
	uint64_t u;
	double d;
	int rc;

	switch (opt->kind) {
	case LS_ARG_U64:
		rc = ls_parse_u64(arg, opt->min, opt->max, &u, err, what);
		if (!rc)
			store_uint(dst, opt->size, u);
		return rc;
	case LS_ARG_DOUBLE:
		return ls_parse_double(arg, opt->dmin, opt->dmax, dst, err, what);
	case LS_ARG_US:
	case LS_ARG_PCT:
		rc = ls_parse_double(arg, opt->dmin, opt->dmax, &d, err, what);
		if (!rc)
			*(double *)dst = opt->kind == LS_ARG_US ? d * 1e3 : d / 100;
		return rc;
	case LS_ARG_DUR:
		return ls_parse_duration_ns(arg, dst, err, what);
	default:
		return opt->parse_d(arg, dst, err, what);
	}
}

/* Apply opt with its argument to base; 0, or -1 with err set. */
static int apply(const struct ls_opt *opt, void *base, const char *arg, struct ls_err *err)
{
	void *dst = (char *)base + opt->off;
	char what[64];
	int i;

	snprintf(what, sizeof(what), "--%s", opt->name);
	switch (opt->kind) {
	case LS_ARG_NONE:
		*(bool *)dst = true;
		return 0;
	case LS_ARG_STR:
		*(const char **)dst = arg;
		return 0;
	case LS_ARG_ENUM:
		i = ls_opt_choice(opt->names, arg, what, err);
		if (i >= 0)
			*(int *)dst = opt->names[i].val;
		return i < 0 ? -1 : 0;
	case LS_ARG_CHOICE:
		*(const char **)dst = arg;
		return ls_opt_choice(opt->names, arg, what, err) < 0 ? -1 : 0;
	case LS_ARG_HOOK:
		return opt->hook(dst, arg, err);
	default:
		return apply_number(opt, dst, arg, what, err);
	}
}

/*
 * The long options and the short-option string of the groups, into lo (one
 * more than the options) and so (cmd's mode, two for each option and the NUL).
 */
static void build_getopt(const struct ls_optcmd *cmd, const struct ls_optgroup *g, size_t ng,
			 struct option *lo, char *so)
{
	size_t k = 0, n = strlen(cmd->mode);

	memcpy(so, cmd->mode, n);
	for (size_t j = 0; j < ng; j++) {
		for (size_t i = 0; i < g[j].n; i++) {
			const struct ls_opt *o = &g[j].v[i];
			int has_arg = o->kind == LS_ARG_NONE || o->kind == LS_ARG_HELP ?
				      no_argument : required_argument;

			lo[k++] = (struct option){ o->name, has_arg, NULL, o->key };
			if (o->key >= 256)
				continue;
			so[n++] = (char)o->key;
			if (has_arg == required_argument)
				so[n++] = ':';
		}
	}
	so[n] = '\0';
	lo[k] = (struct option){ NULL, 0, NULL, 0 };
}

/* Find the option with this key: its group in *gi, its index in *oi; false when none. */
static bool find_opt(const struct ls_optgroup *g, size_t ng, int key, size_t *gi, size_t *oi)
{
	for (*gi = 0; *gi < ng; (*gi)++)
		for (*oi = 0; *oi < g[*gi].n; (*oi)++)
			if (g[*gi].v[*oi].key == key)
				return true;
	return false;
}

/* An option getopt did not accept: reported as cmd says; LS_EXIT_USAGE. */
static int unknown_opt(const struct ls_optcmd *cmd, int c, char **argv, struct ls_err *err)
{
	if (!cmd->quiet) {
		cmd->usage(stderr);
		return LS_EXIT_USAGE;
	}
	if (cmd->unknown) {
		cmd->unknown(c, argv, err);
		return LS_EXIT_USAGE;
	}
	return ls_getopt_err(c, argv[optind - 1], cmd->name, err);
}

/* How many options the groups hold; clears what they were given. */
static size_t count_opts(struct ls_optgroup *g, size_t ng)
{
	size_t total = 0;

	for (size_t j = 0; j < ng; j++) {
		total += g[j].n;
		g[j].given = 0;
	}
	return total;
}

/* Read argv's options into the groups' bases (see opts.h). */
int ls_opts_parse(int argc, char **argv, const struct ls_optcmd *cmd,
		  struct ls_optgroup *g, size_t ng, struct ls_err *err)
{
	size_t total = count_opts(g, ng), gi, oi;
	struct option lo[total + 1];
	char so[strlen(cmd->mode) + 2 * total + 1];
	int c;

	build_getopt(cmd, g, ng, lo, so);
	optind = 0;	/* 0, not 1: glibc also forgets a half-read "-abc" */
	opterr = !cmd->quiet;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (!find_opt(g, ng, c, &gi, &oi))
			return unknown_opt(cmd, c, argv, err);
		if (g[gi].v[oi].kind == LS_ARG_HELP) {
			cmd->usage(stdout);
			return LS_OPTS_HELP;
		}
		if (oi < 64)
			g[gi].given |= 1ull << oi;
		if (apply(&g[gi].v[oi], g[gi].base, optarg, err)) {
			if (!cmd->quiet)
				ls_warn("%s: %s", cmd->name, err->msg);
			return LS_EXIT_USAGE;
		}
	}
	return 0;
}

/* The exit status of a command whose option parse returned rc (see opts.h). */
int ls_opts_exit(int rc, const char *cmd, const struct ls_err *err)
{
	if (rc == LS_OPTS_HELP)
		return LS_EXIT_OK;
	ls_warn("%s: %s", cmd, err->msg);
	return LS_EXIT_USAGE;
}

/* "latsplit: CMD: why" on stderr, why from fmt; returns LS_EXIT_USAGE. */
int ls_opts_bad(const char *cmd, const char *fmt, ...)
{
	struct ls_err err = { 0 };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err.msg, sizeof(err.msg), fmt, ap);
	va_end(ap);
	return ls_opts_exit(LS_EXIT_USAGE, cmd, &err);
}

/* Whether the option with this key of group g was given. */
bool ls_opt_given(const struct ls_optgroup *g, int key)
{
	for (size_t i = 0; i < g->n && i < 64; i++)
		if (g->v[i].key == key)
			return g->given & (1ull << i);
	return false;
}
