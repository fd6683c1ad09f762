// SPDX-License-Identifier: GPL-2.0
/*
 * breakdown's analysis on synthetic runs whose truth is known by
 * construction: the responder's clock offset is recovered exactly from the
 * samples that queued least (the others queue on one direction only, which
 * would bias a plain mean), and from the packets' records exactly where the
 * application stamps carry a host's own time; the attribution counts a probe-task record for
 * the window it overlaps, nothing outside every window, a preemption only
 * when it ends just before the task saw its message, an unlinked receive
 * path as concurrent context, and an instant where both hosts were busy once.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

#define N_THETA		1000
#define FWD_NS		2000	/* one-way wire time, both directions */
#define TURN_NS		500	/* the responder's own time per sample */

/* A record of stage st on cpu from s to e. */
static struct ls_record rec(uint64_t s, uint64_t e, unsigned int cpu, unsigned int st)
{
	struct ls_record r = { .start_ns = s, .end_ns = e, .cpu = cpu, .stage = st };

	return r;
}

/*
 * A run of n samples every 100 us whose responder clock is theta ahead;
 * every sample but those with i % 100 == 0 queues q ns on the way out only.
 */
static void theta_run(struct ls_probe_run *run, size_t n, int64_t theta)
{
	memset(run, 0, sizeof(*run));
	run->samples = calloc(n, sizeof(*run->samples));
	run->peer = calloc(n, sizeof(*run->peer));
	run->count = run->peer_count = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = 1000000 + i * 100000;
		uint64_t q = i % 100 ? 1000 + (i * 7919) % 40000 : 0;
		uint64_t seen = start + FWD_NS + q;

		run->samples[i].start_ns = start;
		run->peer[i].start_ns = (uint64_t)((int64_t)seen + theta);
		run->peer[i].end_ns = run->peer[i].start_ns + TURN_NS;
		run->samples[i].end_ns = seen + TURN_NS + FWD_NS;
	}
}

/* Free what theta_run allocated. */
static void run_free(struct ls_probe_run *run)
{
	free(run->samples);
	free(run->peer);
}

TEST(theta_recovers_a_known_offset)
{
	static const int64_t thetas[] = { 5000000, -123456789, 0 };

	for (size_t t = 0; t < ARRAY_SIZE(thetas); t++) {
		struct ls_probe_run run;
		struct ls_bd_an a = { .peer_n = N_THETA };
		struct ls_err err;

		theta_run(&run, N_THETA, thetas[t]);
		ASSERT_EQ(0, ls_bd_estimate_theta(&a, &run, &err));
		EXPECT_TRUE(a.have_theta);
		EXPECT_EQ(thetas[t], a.theta_ns);
		run_free(&run);
	}
}

TEST(theta_needs_responder_stamps)
{
	struct ls_probe_run run;
	struct ls_bd_an a = { .peer_n = 0 };
	struct ls_err err;

	theta_run(&run, 10, 777);
	ASSERT_EQ(0, ls_bd_estimate_theta(&a, &run, &err));
	EXPECT_FALSE(a.have_theta);
	run_free(&run);
}

#define PKT_N		400
#define QPN_ANS		0x11	/* the prober's QP: answers go to it */
#define QPN_REQ		0x22	/* the responder's QP: requests go to it */
#define OP_WRITE_ONLY	0x0a
#define WIRE_NS		30000	/* one-way, driver to stack, both directions */

/* A packet instant of stage st (TX_PKT, RX_PKT) at t to qpn with psn. */
static struct ls_record pkt(uint64_t t, unsigned int st, uint32_t qpn, uint32_t psn)
{
	struct ls_record r = rec(t, t, 0, st);

	r.id = qpn;
	r.aux = psn | OP_WRITE_ONLY << 24;
	return r;
}

/*
 * A run of PKT_N one-packet samples whose responder clock is theta ahead,
 * with the packets recorded on both hosts: the wire takes WIRE_NS each way
 * (plus queuing on the way out on all but every 50th sample), but the
 * prober's request waits send_ns in the prober before it leaves and the
 * answer 20 us in the responder: the application stamps' one-ways differ
 * by send_ns - 20 us that the packets' do not. Records of the first `with`
 * samples only.
 */
static void pkt_run(struct ls_probe_run *run, struct ls_bd_host h[2], int64_t theta,
		    uint64_t send_ns, size_t with)
{
	struct ls_record *r0 = calloc(2 * PKT_N, sizeof(*r0));
	struct ls_record *r1 = calloc(2 * PKT_N, sizeof(*r1));

	memset(run, 0, sizeof(*run));
	run->samples = calloc(PKT_N, sizeof(*run->samples));
	run->peer = calloc(PKT_N, sizeof(*run->peer));
	run->count = run->peer_count = PKT_N;
	run->qpn = QPN_ANS;
	run->peer_qpn = QPN_REQ;
	run->req_psn0 = 100;
	run->ans_psn0 = 5000;
	run->pkts = 1;
	for (size_t i = 0; i < PKT_N; i++) {
		uint64_t start = 1000000 + i * 200000, q = i % 50 ? 3000 + (i * 7919) % 20000 : 0;
		uint64_t out = start + send_ns, in = out + WIRE_NS + q;	/* prober clock */
		uint64_t seen = in + 15000, answered = seen + TURN_NS;
		uint64_t aout = answered + 20000, ain = aout + WIRE_NS, end = ain + 15000;

		run->samples[i] = (struct ls_probe_sample){ start, end };
		run->peer[i] = (struct ls_probe_sample){ seen + theta, answered + theta };
		if (i >= with)
			continue;
		r0[2 * i] = pkt(out, LS_STAGE_TX_PKT, QPN_REQ, 100 + i);
		r0[2 * i + 1] = pkt(ain, LS_STAGE_RX_PKT, QPN_ANS, 5000 + i);
		r1[2 * i] = pkt(in + theta, LS_STAGE_RX_PKT, QPN_REQ, 100 + i);
		r1[2 * i + 1] = pkt(aout + theta, LS_STAGE_TX_PKT, QPN_ANS, 5000 + i);
	}
	h[0] = (struct ls_bd_host){ .measured = true, .rec = r0, .nrec = 2 * with };
	h[1] = (struct ls_bd_host){ .measured = true, .rec = r1, .nrec = 2 * with };
}

/* Free what pkt_run allocated. */
static void pkt_free(struct ls_probe_run *run, struct ls_bd_host h[2])
{
	run_free(run);
	free(h[0].rec);
	free(h[1].rec);
}

TEST(theta_from_packets_is_free_of_the_hosts_own_time)
{
	static const int64_t thetas[] = { 7000000, -98765432, 0 };

	for (size_t t = 0; t < ARRAY_SIZE(thetas); t++) {
		struct ls_probe_run run;
		struct ls_bd_host h[2];
		struct ls_bd_an a = { .peer_n = PKT_N };
		struct ls_err err;

		pkt_run(&run, h, thetas[t], 3000000, PKT_N);
		ASSERT_EQ(0, ls_bd_estimate_theta(&a, &run, &err));
		EXPECT_EQ(LS_BD_THETA_STAMPS, a.theta_src);
		/* the stamps: off by half the prober's 3 ms send wait (less the responder's 20 us) */
		EXPECT_EQ(thetas[t] + (3000000 - 20000) / 2, a.theta_ns);
		ASSERT_EQ(0, ls_bd_packet_theta(&a, &run, &h[0], &h[1], &err));
		EXPECT_TRUE(a.have_theta);
		EXPECT_EQ(LS_BD_THETA_PACKETS, a.theta_src);
		EXPECT_EQ(PKT_N, a.theta_samples);
		EXPECT_EQ(thetas[t], a.theta_ns);
		pkt_free(&run, h);
	}
}

TEST(theta_from_packets_needs_eight_complete_samples)
{
	static const struct { size_t with; bool packets; } cases[] = {
		{ 7, false }, { 8, true }, { 0, false },
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct ls_probe_run run;
		struct ls_bd_host h[2];
		struct ls_bd_an a = { .peer_n = PKT_N };
		struct ls_err err;

		pkt_run(&run, h, 4000000, 1000000, cases[c].with);
		ASSERT_EQ(0, ls_bd_estimate_theta(&a, &run, &err));
		ASSERT_EQ(0, ls_bd_packet_theta(&a, &run, &h[0], &h[1], &err));
		EXPECT_EQ(cases[c].packets ? LS_BD_THETA_PACKETS : LS_BD_THETA_STAMPS, a.theta_src);
		EXPECT_EQ(cases[c].packets ? 4000000 : 4000000 + (1000000 - 20000) / 2, a.theta_ns);
		/* a host that did not record leaves the stamps' estimate */
		h[1].measured = false;
		ASSERT_EQ(0, ls_bd_estimate_theta(&a, &run, &err));
		ASSERT_EQ(0, ls_bd_packet_theta(&a, &run, &h[0], &h[1], &err));
		EXPECT_EQ(LS_BD_THETA_STAMPS, a.theta_src);
		pkt_free(&run, h);
	}
}

/* Three sample windows [1000, 2000], [3000, 4000], [5000, 6000], prober clock. */
static void attr_setup(struct ls_bd_an *a, struct ls_probe_run *run)
{
	static const uint64_t st[3] = { 1000, 3000, 5000 };

	memset(a, 0, sizeof(*a));
	memset(run, 0, sizeof(*run));
	a->n = 3;
	a->div = 2;
	a->win = calloc(a->n, sizeof(*a->win));
	a->tail = calloc(a->n, 1);
	a->kern_rtt = calloc(a->n, sizeof(*a->kern_rtt));
	run->samples = calloc(a->n, sizeof(*run->samples));
	run->peer = calloc(a->n, sizeof(*run->peer));
	run->count = a->n;
	run->req_psn0 = run->ans_psn0 = -1;
	run->pkts = 1;
	for (size_t i = 0; i < a->n; i++) {
		a->win[i].start_ns = run->samples[i].start_ns = st[i];
		a->win[i].end_ns = run->samples[i].end_ns = st[i] + 1000;
	}
}

/* A host with records rec[0..n) (sorted by start) on relevant CPU cpu. */
static struct ls_bd_host host_of(struct ls_record *r, size_t n, unsigned int cpu)
{
	struct ls_bd_host h = { .measured = true, .rec = r, .nrec = n };

	h.cpumask[cpu / 64] |= 1ull << (cpu % 64);
	return h;
}

/* Attribute records r[0..n) of the prober (relevant CPU 0) to attr_setup's windows. */
static int attribute_local(struct ls_bd_an *a, struct ls_probe_run *run,
			   struct ls_record *r, size_t n, uint64_t preempt_ns)
{
	struct ls_bd_host local = host_of(r, n, 0);
	struct ls_err err;

	attr_setup(a, run);
	return ls_bd_attribute(a, run, &local, NULL, preempt_ns, &err);
}

TEST(attribution_counts_only_what_overlaps_a_window)
{
	struct ls_record r[] = {
		rec(2100, 2900, 0, LS_STAGE_INTERFERENCE),	/* between windows */
		rec(3200, 3500, 0, LS_STAGE_WAKEUP),		/* inside window 1 */
		rec(3600, 3700, 0, LS_STAGE_HARDIRQ),		/* no packet of ours */
		rec(5900, 6400, 0, LS_STAGE_INTERFERENCE),	/* straddles window 2's end */
	};
	struct ls_probe_run run;
	struct ls_bd_an a;

	ASSERT_EQ(0, attribute_local(&a, &run, r, ARRAY_SIZE(r), 200000));
	ASSERT_TRUE(a.attr_ok);
	EXPECT_TRUE(a.host_measured[0]);
	EXPECT_FALSE(a.host_measured[1]);
	EXPECT_EQ(0, a.attr.kernel_ns[0]);
	EXPECT_EQ(300, a.attr.kernel_ns[1]);
	EXPECT_EQ(100, a.attr.kernel_ns[2]);
	EXPECT_EQ(300, (uint64_t)a.kern_rtt[1]);
	EXPECT_EQ(300, ls_bd_cell(&a.attr, 0, 0, LS_STAGE_WAKEUP)->total_ns);
	EXPECT_EQ(100, ls_bd_cell(&a.attr, 0, 0, LS_STAGE_INTERFERENCE)->total_ns);
	/* the hard IRQ carried none of the samples' packets: concurrent, not processing */
	EXPECT_EQ(0, ls_bd_cell(&a.attr, 0, 0, LS_STAGE_HARDIRQ)->total_ns);
	EXPECT_EQ(100, ls_bd_cell(&a.conc, 0, 0, LS_STAGE_HARDIRQ)->total_ns);
	ls_bd_an_free(&a);
	run_free(&run);
}

TEST(attribution_keeps_a_preemption_only_before_seen)
{
	struct ls_record r[] = {
		rec(1100, 1300, 0, LS_STAGE_PREEMPT),	/* ends 700 ns before "seen" */
		rec(3500, 3990, 0, LS_STAGE_PREEMPT),	/* ends 10 ns before "seen" */
	};
	struct ls_probe_run run;
	struct ls_bd_an a;

	ASSERT_EQ(0, attribute_local(&a, &run, r, ARRAY_SIZE(r), 100));
	EXPECT_EQ(1, a.preempt_dropped);
	EXPECT_EQ(0, a.attr.kernel_ns[0]);
	EXPECT_EQ(490, a.attr.kernel_ns[1]);
	ls_bd_an_free(&a);
	run_free(&run);
}

TEST(attribution_moves_the_responder_by_theta_and_counts_an_instant_once)
{
	const int64_t theta = 1000000;
	struct ls_record rl[] = { rec(3500, 3800, 0, LS_STAGE_WAKEUP) };
	struct ls_record rp[] = { rec(theta + 3300, theta + 3600, 2, LS_STAGE_WAKEUP) };
	struct ls_bd_host local = host_of(rl, ARRAY_SIZE(rl), 0);
	struct ls_bd_host peer = host_of(rp, ARRAY_SIZE(rp), 2);
	struct ls_probe_run run;
	struct ls_bd_an a;
	struct ls_err err;

	attr_setup(&a, &run);
	a.have_theta = true;
	a.theta_ns = theta;
	a.peer_n = a.n;
	run.peer_count = a.n;
	for (size_t i = 0; i < a.n; i++) {
		/* the responder saw the request 400 ns in, answered 50 ns later */
		run.peer[i].start_ns = run.samples[i].start_ns + 400 + theta;
		run.peer[i].end_ns = run.peer[i].start_ns + 50;
	}
	ASSERT_EQ(0, ls_bd_attribute(&a, &run, &local, &peer, 200000, &err));
	EXPECT_TRUE(a.host_measured[1]);
	/* prober 3500..3800 and responder 3300..3600 (its clock - theta): the union, 500 ns */
	EXPECT_EQ(500, a.attr.kernel_ns[1]);
	EXPECT_EQ(0, a.attr.kernel_ns[0]);
	EXPECT_EQ(0, a.attr.kernel_ns[2]);
	EXPECT_EQ(0, ls_bd_cell(&a.attr, 1, 0, LS_STAGE_WAKEUP)->total_ns);
	EXPECT_LT(0, ls_bd_cell(&a.attr, 1, 2, LS_STAGE_WAKEUP)->total_ns);
	EXPECT_LT(0, ls_bd_cell(&a.attr, 0, 0, LS_STAGE_WAKEUP)->total_ns);
	EXPECT_EQ(500, ls_bd_cell(&a.attr, 0, 0, LS_STAGE_WAKEUP)->total_ns +
		       ls_bd_cell(&a.attr, 1, 2, LS_STAGE_WAKEUP)->total_ns);
	ls_bd_an_free(&a);
	run_free(&run);
}

TEST(losses_make_a_split_incomplete)
{
	struct ls_bd_host pr = { .measured = true }, rs = { .measured = true };
	const struct ls_bd_host *const hosts[2] = { &pr, &rs }, *const one[2] = { &pr, NULL };
	char buf[512];

	EXPECT_FALSE(ls_bd_losses(hosts, buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	EXPECT_FALSE(ls_bd_losses(one, buf, sizeof(buf)));
	rs.drops = 1234;
	pr.irqs_unwatched = 16;
	EXPECT_TRUE(ls_bd_losses(hosts, buf, sizeof(buf)));
	EXPECT_STREQ("prober: 16 NIC IRQs not watched (over 32); "
		     "responder: 1234 kernel records dropped (ring full: raise --ring-kib)", buf);
	rs.drops = 0;
	rs.truncated = true;
	pr.irqs_unwatched = 0;
	EXPECT_TRUE(ls_bd_losses(hosts, buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "responder: records cut"));
	EXPECT_TRUE(ls_bd_host_lossy(&rs));
	EXPECT_FALSE(ls_bd_host_lossy(&pr));
	/* untimed stages are losses too: that kernel time is in no part */
	rs.truncated = false;
	rs.napi_untimed = 40;
	EXPECT_TRUE(ls_bd_losses(hosts, buf, sizeof(buf)));
	EXPECT_STREQ("responder: 40 NAPI polls outside NET_RX softirq (busy polling or threaded NAPI), not timed",
		     buf);
	rs.napi_untimed = 0;
	EXPECT_FALSE(ls_bd_losses(hosts, buf, sizeof(buf)));
	pr.unordered = 5;
	EXPECT_TRUE(ls_bd_losses(hosts, buf, sizeof(buf)));
	EXPECT_STREQ("prober: 5 intervals dropped, ending before their start (clock skew between CPUs)",
		     buf);
	pr.unordered = 0;
	/* a stale completion may be an interrupt that needed no poll: shown, not a loss */
	pr.comp_stale = 2;
	EXPECT_FALSE(ls_bd_host_lossy(&pr));
	EXPECT_FALSE(ls_bd_losses(hosts, buf, sizeof(buf)));
	pr.comp_stale = 0;
	rs.truncated = true;
	/* an unmeasured host lost nothing: it recorded nothing */
	rs.measured = false;
	EXPECT_FALSE(ls_bd_losses(hosts, buf, sizeof(buf)));
	/* a short buffer is cut, never overrun */
	rs.measured = true;
	rs.drops = 7;
	EXPECT_TRUE(ls_bd_losses(hosts, buf, 12));
	EXPECT_EQ(11, strlen(buf));
}

TEST_HARNESS_MAIN
