// SPDX-License-Identifier: GPL-2.0
/*
 * Attribution benchmark: N samples (windows) x M kernel records streamed
 * through ls_attr in time order, then the three-part split, timed on one
 * core. References measured in the same run: generating the same records
 * with a checksum (the memory/generation pass the attribution also pays)
 * and qsort of the samples' totals.
 *
 *   split_bench [SAMPLES [RECORDS]]     (default 1000000 10000000)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "split.h"

/* CLOCK_MONOTONIC seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64: a fast deterministic generator. */
static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Next record in time order: mean gap span/m, 50-450 ns long, 4 CPUs, every stage. */
static void gen(uint64_t *s, uint64_t *t, uint64_t gap, struct ls_record *r)
{
	uint64_t x = rng(s);

	*t += x % (2 * gap);
	r->start_ns = *t;
	r->end_ns = *t + 50 + (x >> 20) % 400;
	r->cpu = (x >> 40) & 3;
	r->stage = (x >> 44) % LS_NR_STAGES;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	size_t m = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
	struct ls_window *w = malloc(n * sizeof(*w));
	double *total = malloc(n * sizeof(double)), *copy = malloc(n * sizeof(double));
	double *kern = malloc(n * sizeof(double));
	uint64_t period = 5000, span = n * period, gap = span / m, s, t, sum = 0;
	struct ls_attr_cfg cfg = { .win = w, .n = n, .stage_mask = LS_ATTR_ALL_STAGES };
	struct ls_split_in in = { .n = n, .total_ns = total, .kernel_ns = kern,
				  .transmission_ns = 100, .floor_q = 0.05, .tail_frac = 0.01 };
	struct ls_split_out out;
	struct ls_record r;
	struct ls_attr a;
	struct ls_err e;
	double t0, t_gen, t_attr, t_split, t_sort;

	if (!w || !total || !copy || !kern || !n || !m || !gap) {
		fprintf(stderr, "split_bench: bad sizes or no memory\n");
		return 2;
	}
	s = 88172645463325252ull;
	for (size_t i = 0; i < n; i++) {
		w[i].start_ns = i * period;
		w[i].end_ns = w[i].start_ns + 2000 + rng(&s) % 1000;
		total[i] = (w[i].end_ns - w[i].start_ns) / 2.0;
	}
	cfg.cpumask[0] = 0xf;

	/* reference 1: the same record stream, generated and checksummed */
	s = 1;
	t = 0;
	t0 = now_s();
	for (size_t k = 0; k < m; k++) {
		gen(&s, &t, gap, &r);
		sum += r.end_ns - r.start_ns + r.cpu;
	}
	t_gen = now_s() - t0;

	/* reference 2: sort the samples' totals */
	for (size_t i = 0; i < n; i++)
		copy[i] = total[i];
	t0 = now_s();
	ls_sort_doubles(copy, n);
	t_sort = now_s() - t0;

	/* the attribution: same stream pushed through ls_attr */
	if (ls_attr_init(&a, &cfg, &e)) {
		fprintf(stderr, "split_bench: %s\n", e.msg);
		return 2;
	}
	s = 1;
	t = 0;
	t0 = now_s();
	for (size_t k = 0; k < m; k++) {
		gen(&s, &t, gap, &r);
		if (ls_attr_push(&a, &r, &e)) {
			fprintf(stderr, "split_bench: %s\n", e.msg);
			return 2;
		}
	}
	ls_attr_finish(&a);
	t_attr = now_s() - t0;
	for (size_t i = 0; i < n; i++)
		kern[i] = a.kernel_ns[i] / 2.0;
	t0 = now_s();
	if (ls_split_compute(&in, &out, &e)) {
		fprintf(stderr, "split_bench: %s\n", e.msg);
		return 2;
	}
	t_split = now_s() - t0;

	printf("samples %zu records %zu (kept %llu, active peak %zu, checksum %llu)\n",
	       n, m, (unsigned long long)a.counted, a.cap, (unsigned long long)sum);
	printf("attribution %.3f s (%.1f ns/record), split+summaries %.3f s, total %.3f s\n",
	       t_attr, t_attr * 1e9 / m, t_split, t_attr + t_split);
	printf("reference: record generation pass %.3f s, qsort of %zu totals %.3f s\n",
	       t_gen, n, t_sort);
	printf("ratio attribution+split / generation pass: %.2f\n", (t_attr + t_split) / t_gen);
	printf("ratio attribution+split / qsort of totals: %.2f\n", (t_attr + t_split) / t_sort);
	printf("kernel p50 %.0f ns, queuing p50 %.0f ns\n", out.sum_kernel.p50,
	       out.sum_part[LS_PART_QUEUING].p50);
	ls_split_free(&out);
	ls_attr_free(&a);
	return t_attr + t_split < 5.0 ? 0 : 1;
}
