// SPDX-License-Identifier: GPL-2.0
/* Training-impact model: AllReduce T_sync, utilization and throughput. */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	const char *formula;
} algos[LS_NR_ALGOS] = {
	[LS_ALGO_RING] = { "ring",
		"T_sync = 2 (N-1) D / (N B) + latency * log2 N  (ring AllReduce, the seed's formula)" },
	[LS_ALGO_RING_STEPS] = { "ring-steps",
		"T_sync = 2 (N-1) D / (N B) + 2 (N-1) * latency  (ring AllReduce as 2(N-1) latency-bound steps)" },
	[LS_ALGO_TREE] = { "tree",
		"T_sync = 2 D / B + 2 ceil(log2 N) * latency  (double binary tree AllReduce, pipelined)" },
};

/* "ring", "ring-steps", "tree". */
const char *ls_model_algo_name(enum ls_model_algo a)
{
	return a < LS_NR_ALGOS ? algos[a].name : "?";
}

/* The T_sync formula of an algorithm, as text. */
const char *ls_model_formula(enum ls_model_algo a)
{
	return a < LS_NR_ALGOS ? algos[a].formula : "?";
}

/* Parse an algorithm name. */
int ls_model_algo_parse(const char *s, enum ls_model_algo *a, struct ls_err *err)
{
	for (int i = 0; i < LS_NR_ALGOS; i++) {
		if (!strcmp(s, algos[i].name)) {
			*a = i;
			return 0;
		}
	}
	return ls_errf(err, "--algo: unknown algorithm '%s' (ring, ring-steps, tree, all)", s);
}

/* Evaluate the model for one set of inputs. */
int ls_model_eval(const struct ls_model_in *in, struct ls_model_out *out,
		  struct ls_err *err)
{
	double n = in->gpus, lg;

	memset(out, 0, sizeof(*out));
	if (in->gpus < 1)
		return ls_errf(err, "model: N must be at least 1 (got %u)", in->gpus);
	if (!(in->grad_bytes >= 0) || !isfinite(in->grad_bytes))
		return ls_errf(err, "model: gradient size must be >= 0");
	if (!(in->bw_bps > 0) || !isfinite(in->bw_bps))
		return ls_errf(err, "model: bandwidth must be > 0");
	if (!(in->latency_s >= 0) || !isfinite(in->latency_s))
		return ls_errf(err, "model: latency must be >= 0");
	if (!(in->compute_s >= 0) || !isfinite(in->compute_s))
		return ls_errf(err, "model: compute time must be >= 0");
	if (!(in->batch > 0) || !isfinite(in->batch))
		return ls_errf(err, "model: batch must be > 0");
	lg = log2(n);
	switch (in->algo) {
	case LS_ALGO_RING:
		out->t_bw_s = 2 * (n - 1) * in->grad_bytes / (n * in->bw_bps);
		out->t_lat_s = in->latency_s * lg;
		break;
	case LS_ALGO_RING_STEPS:
		out->t_bw_s = 2 * (n - 1) * in->grad_bytes / (n * in->bw_bps);
		out->t_lat_s = 2 * (n - 1) * in->latency_s;
		break;
	case LS_ALGO_TREE:
		out->t_bw_s = in->gpus > 1 ? 2 * in->grad_bytes / in->bw_bps : 0;
		out->t_lat_s = 2 * ceil(lg - 1e-12) * in->latency_s;
		break;
	default:
		return ls_errf(err, "model: unknown algorithm %d", in->algo);
	}
	out->t_sync_s = out->t_bw_s + out->t_lat_s;
	out->step_s = in->compute_s + out->t_sync_s;
	if (!(out->step_s > 0))
		return ls_errf(err, "model: step time is zero (no compute and no sync)");
	out->utilization = in->compute_s / out->step_s;
	out->throughput = in->batch * n / out->step_s;
	return 0;
}

/* Split "12.5GB/s" into a finite non-negative number and its unit suffix. */
static int num_unit(const char *s, double *v, const char **unit, struct ls_err *err,
		    const char *what)
{
	char *end;

	if (!s || !*s || *s == ' ' || *s == '-' || *s == '+')
		return ls_errf(err, "%s: '%s' is not a non-negative number with a unit",
			       what, s ? s : "");
	*v = strtod(s, &end);
	if (end == s || !isfinite(*v) || *v < 0)
		return ls_errf(err, "%s: '%s' is not a non-negative number with a unit",
			       what, s);
	*unit = end;
	return 0;
}

/* A unit's name and what it multiplies by. */
struct unit {
	const char *u;
	double m;
};

/* The units a number may carry, and their names for messages. */
struct unit_set {
	const struct unit *v;
	size_t n;
	const char *names;
};

/* Parse a number with one of set's units into *out, scaled by the unit. */
static int parse_units(const char *s, const struct unit_set *set, double *out,
		       struct ls_err *err, const char *what)
{
	const char *unit = "";
	double v = 0;

	if (num_unit(s, &v, &unit, err, what))
		return -1;
	for (size_t i = 0; i < set->n; i++) {
		if (!strcmp(unit, set->v[i].u)) {
			*out = v * set->v[i].m;
			return 0;
		}
	}
	if (!*unit)
		return ls_errf(err, "%s: '%s' needs a unit (%s)", what, s, set->names);
	return ls_errf(err, "%s: '%s' has an unknown unit (%s)", what, s, set->names);
}

/* Parse a size in bytes with an optional decimal or binary unit. */
int ls_parse_bytes(const char *s, double *bytes, struct ls_err *err, const char *what)
{
	static const struct unit units[] = {
		{ "", 1 }, { "B", 1 }, { "kB", 1e3 }, { "KB", 1e3 }, { "MB", 1e6 },
		{ "GB", 1e9 }, { "TB", 1e12 }, { "KiB", 1024.0 }, { "MiB", 1048576.0 },
		{ "GiB", 1073741824.0 }, { "TiB", 1099511627776.0 },
	};
	static const struct unit_set set = {
		units, ARRAY_SIZE(units), "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB"
	};

	return parse_units(s, &set, bytes, err, what);
}

/* Parse a rate into bytes per second. */
int ls_parse_rate(const char *s, double *bps, struct ls_err *err, const char *what)
{
	static const struct unit units[] = {
		{ "", 1e9 }, { "GB/s", 1e9 }, { "MB/s", 1e6 }, { "TB/s", 1e12 },
		{ "Gbit/s", 1e9 / 8 }, { "Gb/s", 1e9 / 8 }, { "Mbit/s", 1e6 / 8 },
		{ "Mb/s", 1e6 / 8 }, { "Tbit/s", 1e12 / 8 }, { "Tb/s", 1e12 / 8 },
	};
	static const struct unit_set set = {
		units, ARRAY_SIZE(units), "GB/s, MB/s, TB/s, Gbit/s, Gb/s, Mbit/s, Tbit/s"
	};
	int ret;

	ret = parse_units(s, &set, bps, err, what);
	if (ret)
		return ret;
	if (!(*bps > 0))
		return ls_errf(err, "%s: must be > 0", what);
	return 0;
}

/* Parse a duration that must carry a unit into seconds. */
int ls_parse_time_s(const char *s, double *sec, struct ls_err *err, const char *what)
{
	static const struct unit units[] = {
		{ "ns", 1e-9 }, { "us", 1e-6 }, { "\xc2\xb5s", 1e-6 }, { "ms", 1e-3 },
		{ "s", 1 },
	};
	static const struct unit_set set = { units, ARRAY_SIZE(units), "ns, us, ms, s" };

	return parse_units(s, &set, sec, err, what);
}
