/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Training-impact model: what a collective's latency costs a synchronous
 * data-parallel step (the seed's section 3).
 *
 *   step         = T_compute + T_sync
 *   utilization  = T_compute / step
 *   throughput   = batch * N / step           (samples per second)
 *
 * T_sync = T_bw + T_lat for an AllReduce of D bytes over N ranks on links
 * of B bytes/s with per-message latency L:
 *
 *   ring        (the seed's formula)  2 (N-1) D / (N B) + L * log2 N
 *   ring-steps  (ring as 2 (N-1) steps, Thakur/Rabenseifner/Gropp 2005)
 *                                     2 (N-1) D / (N B) + 2 (N-1) L
 *   tree        (double binary tree, Sanders/Speck/Traeff 2009, as in NCCL;
 *                pipelined, pipeline fill ignored)
 *                                     2 D / B + 2 ceil(log2 N) L
 */
#ifndef LS_MODEL_H
#define LS_MODEL_H

#include "util.h"

enum ls_model_algo {
	LS_ALGO_RING,
	LS_ALGO_RING_STEPS,
	LS_ALGO_TREE,
	LS_NR_ALGOS,
};

struct ls_model_in {
	unsigned int gpus;	/* N, ranks in the AllReduce */
	double grad_bytes;	/* D */
	double bw_bps;		/* B, bytes per second per link */
	double latency_s;	/* L, one-way point-to-point latency */
	double compute_s;	/* T_compute per step */
	double batch;		/* samples per GPU per step */
	enum ls_model_algo algo;
};

struct ls_model_out {
	double t_bw_s;		/* bandwidth term of T_sync */
	double t_lat_s;		/* latency term of T_sync */
	double t_sync_s;
	double step_s;
	double utilization;	/* 0..1 */
	double throughput;	/* samples per second */
};

/* Evaluate the model; fails (with why) on inputs outside the model's domain. */
int ls_model_eval(const struct ls_model_in *in, struct ls_model_out *out,
		  struct ls_err *err);
/* "ring", "ring-steps", "tree". */
const char *ls_model_algo_name(enum ls_model_algo a);
/* The T_sync formula of an algorithm, as text. */
const char *ls_model_formula(enum ls_model_algo a);
/* Parse an algorithm name. */
int ls_model_algo_parse(const char *s, enum ls_model_algo *a, struct ls_err *err);
/* Parse a size: bytes, or with B, kB, MB, GB, KiB, MiB, GiB (decimal vs binary). */
int ls_parse_bytes(const char *s, double *bytes, struct ls_err *err, const char *what);
/*
 * Parse a rate into bytes/s: GB/s, MB/s (bytes) or Gbit/s, Gb/s, Mbit/s
 * (bits); a bare number is GB/s.
 */
int ls_parse_rate(const char *s, double *bps, struct ls_err *err, const char *what);
/* Parse a duration that must carry a unit (ns, us, ms, s) into seconds. */
int ls_parse_time_s(const char *s, double *sec, struct ls_err *err, const char *what);

#endif /* LS_MODEL_H */
