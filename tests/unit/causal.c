// SPDX-License-Identifier: GPL-2.0
/*
 * Causal attribution on synthetic records whose paths are known by
 * construction: a long NAPI poll on another CPU that overlaps a
 * wire-delayed sample is not that sample's processing; the receive path of
 * the sample's own packet is, from the hard IRQ that started its chain to
 * the moment its host saw the message; packets are matched by QP, PSN
 * (with wrap-around and multi-packet messages) and opcode class; a record
 * on one sample's path counts in that sample's window only.
 */
#include <stdlib.h>

#include "causal.h"
#include "split.h"
#undef ARRAY_SIZE	/* kselftest.h defines its own */
#include "kselftest_harness.h"

#define QPN	0x11	/* the QP the probe's packets address */
#define OP_WRITE	0x0a
#define OP_ACK		0x11

/* A record of stage st on cpu from s to e. */
static struct ls_record rec(uint64_t s, uint64_t e, unsigned int cpu, unsigned int st)
{
	struct ls_record r = { .start_ns = s, .end_ns = e, .cpu = cpu, .stage = st };

	return r;
}

/* An RX_PKT instant: packet (qpn, psn, op) entered on cpu at t. */
static struct ls_record pkt(uint64_t t, unsigned int cpu, uint32_t qpn, uint32_t psn,
			    unsigned int op)
{
	struct ls_record r = { .start_ns = t, .end_ns = t, .cpu = cpu,
			       .stage = LS_STAGE_RX_PKT, .id = qpn,
			       .aux = LS_RX_AUX(psn, op) };

	return r;
}

/* The input of the n samples seen at seen[] over the records r[nrec] (the probe's QP). */
static struct ls_causal_in input(const struct ls_record *r, size_t nrec, const uint64_t *seen,
				 size_t n, int64_t psn0, uint32_t pkts, bool requests)
{
	struct ls_causal_in in = { .rec = r, .nrec = nrec, .n = n, .seen = seen, .qpn = QPN,
				   .psn0 = psn0, .pkts = pkts, .requests = requests };

	return in;
}

/* Link in's records into o; the test stops (with the message) if that failed. */
static void link_ok(struct __test_metadata *_metadata, const struct ls_causal_in *in,
		    struct ls_causal_out *o)
{
	struct ls_err e = { 0 };

	ASSERT_EQ(0, ls_causal_link(in, o, &e)) TH_LOG("%s", e.msg);
}

/* True when record index ri is linked to sample s. */
static bool linked_to(const struct ls_causal_out *o, size_t ri, size_t s)
{
	for (size_t k = 0; k < o->nlink; k++)
		if (o->link[k].rec == ri && o->link[k].sample == s)
			return true;
	return false;
}

/* Links of record ri, to any sample. */
static size_t links_of(const struct ls_causal_out *o, size_t ri)
{
	size_t n = 0;

	for (size_t k = 0; k < o->nlink; k++)
		n += o->link[k].rec == ri;
	return n;
}

/*
 * The prober on two CPUs: the probe on CPU 1, the NIC on CPU 0. Sample 0's
 * answer is held on the wire from 1000 to 3000 ns; meanwhile CPU 0 polls
 * for other traffic (1200-2800). The answer arrives at 3100 in a poll of
 * its own (hardirq 3000-3020, completion 3000-3200, NET_RX run 3040-3250).
 */
TEST(long_poll_elsewhere_is_not_processing)
{
	struct ls_record r[] = {
		rec(1200, 2800, 0, LS_STAGE_NAPI_POLL),		/* 0: unrelated */
		rec(1190, 2810, 0, LS_STAGE_SOFTIRQ_RUN),	/* 1: unrelated */
		rec(3000, 3020, 0, LS_STAGE_HARDIRQ),		/* 2 */
		rec(3000, 3200, 0, LS_STAGE_COMPLETION),	/* 3 */
		rec(3025, 3040, 0, LS_STAGE_SOFTIRQ_WAIT),	/* 4 */
		rec(3040, 3250, 0, LS_STAGE_SOFTIRQ_RUN),	/* 5 */
		rec(3045, 3200, 0, LS_STAGE_NAPI_POLL),		/* 6 */
		pkt(3100, 0, QPN, 500, OP_WRITE),		/* 7 */
		rec(2000, 2100, 1, LS_STAGE_INTERFERENCE),	/* 8: task stage */
	};
	uint64_t seen[] = { 3400 };
	struct ls_causal_in in = input(r, ARRAY_SIZE(r), seen, ARRAY_SIZE(seen), 500, 1, false);
	struct ls_causal_out o;

	link_ok(_metadata, &in, &o);
	EXPECT_EQ(1, o.packets);
	EXPECT_EQ(1, o.matched);
	EXPECT_EQ(1, o.samples);
	EXPECT_FALSE(o.linked[0]);
	EXPECT_FALSE(o.linked[1]);
	for (size_t i = 2; i <= 6; i++)
		EXPECT_TRUE(linked_to(&o, i, 0));
	EXPECT_FALSE(o.linked[7]);	/* the instant itself is not a span */
	EXPECT_FALSE(o.linked[8]);	/* task stages are not the receive path's */
	EXPECT_EQ(5, o.nlink);
	ls_causal_free(&o);
}

/*
 * When each sample's message reached the host: sample 0 at its chain's
 * interrupt (1000, not its poll or its packet), sample 1 (no packet
 * recorded) when the other host sent it, sample 2 unknown without "sent".
 */
TEST(arrivals_from_chain_else_sent)
{
	struct ls_record r[] = {
		rec(1000, 1010, 0, LS_STAGE_HARDIRQ),
		rec(1000, 1300, 0, LS_STAGE_COMPLETION),
		rec(1050, 1300, 0, LS_STAGE_NAPI_POLL),
		pkt(1200, 0, QPN, 7, OP_WRITE),
	};
	uint64_t seen[] = { 1600, 5000, 9000 }, sent[] = { 900, 4000, 0 }, arrive[3];
	struct ls_causal_in in = { .rec = r, .nrec = 4, .n = 3, .seen = seen, .sent = sent,
				   .qpn = QPN, .psn0 = 7, .pkts = 1, .requests = true };
	struct ls_causal_out o;

	link_ok(_metadata, &in, &o);
	ls_causal_arrivals(&in, &o, arrive);
	EXPECT_EQ(1000, arrive[0]);
	EXPECT_EQ(4000, arrive[1]);
	EXPECT_EQ(0, arrive[2]);
	in.sent = NULL;
	ls_causal_arrivals(&in, &o, arrive);
	EXPECT_EQ(1000, arrive[0]);
	EXPECT_EQ(0, arrive[1]);
	ls_causal_free(&o);
}

/*
 * After its packet's poll, the packet's own processing (Soft-RoCE: a
 * tasklet) follows on that CPU until the host saw the message; work there
 * after that instant, or on the CPU before the chain began, is not the
 * sample's.
 */
TEST(chain_runs_from_its_irq_to_seen)
{
	struct ls_record r[] = {
		rec(100, 400, 0, LS_STAGE_SOFTIRQ_RUN),		/* 0: before the chain */
		rec(1000, 1010, 0, LS_STAGE_HARDIRQ),		/* 1 */
		rec(1000, 1300, 0, LS_STAGE_COMPLETION),	/* 2 */
		rec(1050, 1300, 0, LS_STAGE_NAPI_POLL),		/* 3 */
		pkt(1200, 0, QPN, 7, OP_WRITE),			/* 4 */
		rec(1310, 1500, 0, LS_STAGE_SOFTIRQ_RUN),	/* 5: tasklet after the poll */
		rec(1700, 1800, 0, LS_STAGE_SOFTIRQ_RUN),	/* 6: after seen */
	};
	uint64_t seen[] = { 1600 };
	struct ls_causal_in in = input(r, ARRAY_SIZE(r), seen, ARRAY_SIZE(seen), 7, 1, true);
	struct ls_causal_out o;

	link_ok(_metadata, &in, &o);
	EXPECT_FALSE(o.linked[0]);
	EXPECT_TRUE(linked_to(&o, 1, 0));
	EXPECT_TRUE(linked_to(&o, 2, 0));
	EXPECT_TRUE(linked_to(&o, 3, 0));
	EXPECT_TRUE(linked_to(&o, 5, 0));
	EXPECT_FALSE(o.linked[6]);
	/* every link's span: from the chain's interrupt to "seen" */
	for (size_t k = 0; k < o.nlink; k++) {
		EXPECT_EQ(1000, o.link[k].from);
		EXPECT_EQ(1600, o.link[k].to);
	}
	ls_causal_free(&o);
}

/*
 * A poll that was already running when the packet's interrupt came (the
 * emulator stretched it, or it polled earlier traffic) is on the path only
 * from that interrupt; a record containing the packet without any
 * COMPLETION starts the chain at the poll; no poll: at the packet.
 */
TEST(chain_starts_at_the_interrupt)
{
	struct ls_record r[] = {
		rec(100, 2000, 0, LS_STAGE_SOFTIRQ_RUN),	/* 0: long run */
		rec(110, 2000, 0, LS_STAGE_NAPI_POLL),		/* 1: long poll */
		rec(1500, 1900, 0, LS_STAGE_COMPLETION),	/* 2: the packet's IRQ at 1500 */
		pkt(1800, 0, QPN, 3, OP_WRITE),			/* 3: s0 */
		rec(5000, 6000, 1, LS_STAGE_NAPI_POLL),		/* 4 */
		pkt(5500, 1, QPN, 4, OP_WRITE),			/* 5: s1, no COMPLETION */
		pkt(8000, 0, QPN, 5, OP_WRITE),			/* 6: s2, no record */
	};
	uint64_t seen[] = { 2500, 5700, 8100 };
	struct ls_causal_in in = input(r, ARRAY_SIZE(r), seen, ARRAY_SIZE(seen), 3, 1, false);
	struct ls_causal_out o;

	link_ok(_metadata, &in, &o);
	EXPECT_EQ(3, o.samples);
	ASSERT_EQ(4, o.nlink);		/* 0, 1, 2 for s0; 4 for s1 */
	for (size_t k = 0; k < 3; k++) {
		EXPECT_EQ(0, o.link[k].sample);
		EXPECT_EQ(1500, o.link[k].from);
		EXPECT_EQ(2500, o.link[k].to);
	}
	EXPECT_EQ(4, o.link[3].rec);
	EXPECT_EQ(5000, o.link[3].from);
	EXPECT_EQ(5700, o.link[3].to);
	ls_causal_free(&o);
}

/*
 * The poll deferred: NET_RX raised at 1000 (the NIC interrupt), its run
 * delayed to 3000 (ksoftirqd behind a real-time task), where another
 * NAPI's poll (transmit) ends the pending COMPLETION before the receive
 * poll delivers the packet at 3200. The wait is the packet's delay: the
 * chain starts at the raise. A wait that ended at another run does not.
 */
TEST(chain_starts_at_the_raise_of_a_deferred_poll)
{
	struct ls_record r[] = {
		rec(500, 900, 0, LS_STAGE_SOFTIRQ_WAIT),	/* 0: an earlier run's wait */
		rec(900, 950, 0, LS_STAGE_SOFTIRQ_RUN),		/* 1: that run */
		rec(1000, 1010, 0, LS_STAGE_HARDIRQ),		/* 2 */
		rec(1000, 3100, 0, LS_STAGE_COMPLETION),	/* 3: ended by the tx poll */
		rec(1005, 3000, 0, LS_STAGE_SOFTIRQ_WAIT),	/* 4: NET_RX raise -> entry */
		rec(3000, 3400, 0, LS_STAGE_SOFTIRQ_RUN),	/* 5 */
		rec(3000, 3100, 0, LS_STAGE_NAPI_POLL),		/* 6: tx */
		rec(3100, 3300, 0, LS_STAGE_NAPI_POLL),		/* 7: rx */
		pkt(3200, 0, QPN, 9, OP_WRITE),			/* 8 */
	};
	uint64_t seen[] = { 3500 };
	struct ls_causal_in in = input(r, ARRAY_SIZE(r), seen, ARRAY_SIZE(seen), 9, 1, true);
	struct ls_causal_out o;

	for (size_t i = 0; i < 9; i++)
		if (r[i].stage == LS_STAGE_SOFTIRQ_WAIT || r[i].stage == LS_STAGE_SOFTIRQ_RUN)
			r[i].id = LS_SOFTIRQ_NET_RX;
	link_ok(_metadata, &in, &o);
	EXPECT_FALSE(o.linked[0]);
	EXPECT_FALSE(o.linked[1]);
	for (size_t i = 2; i <= 7; i++)
		EXPECT_TRUE(linked_to(&o, i, 0));
	for (size_t k = 0; k < o.nlink; k++)
		EXPECT_EQ(1005, o.link[k].from);
	ls_causal_free(&o);

	/*
	 * The same run delivered another RoCE packet first (an ACK, at
	 * 3150): the raise was for it, ours may still have been on the wire;
	 * the chain starts at the poll that delivered ours.
	 */
	r[6] = pkt(3150, 0, QPN, 100, OP_ACK);
	link_ok(_metadata, &in, &o);
	EXPECT_FALSE(o.linked[4]);
	for (size_t k = 0; k < o.nlink; k++)
		EXPECT_EQ(3100, o.link[k].from);
	ls_causal_free(&o);

	/*
	 * Unless the run was deferred to a thread (ksoftirqd): every packet
	 * that came during the wait waited for that thread. And never before
	 * the other host sent the packet.
	 */
	r[5].flags = LS_REC_F_RT_THREAD;
	link_ok(_metadata, &in, &o);
	EXPECT_TRUE(linked_to(&o, 4, 0));
	for (size_t k = 0; k < o.nlink; k++)
		EXPECT_EQ(1005, o.link[k].from);
	ls_causal_free(&o);
	uint64_t sent[] = { 2000 };

	in.sent = sent;
	link_ok(_metadata, &in, &o);
	for (size_t k = 0; k < o.nlink; k++)
		EXPECT_EQ(2000, o.link[k].from);
	ls_causal_free(&o);
}

/*
 * Matching: the prober takes anything but ACKs (its own request's ACK
 * shares the QP), the responder requests only; another QP is another flow;
 * PSNs wrap at 2^24; a message of 4 packets is one sample; a packet after
 * its host saw the message, or of a PSN beyond the run, names no sample.
 */
TEST(packets_name_their_samples)
{
	uint32_t base = 0xfffffe;	/* wraps after two packets */
	struct ls_record r[] = {
		pkt(100, 0, QPN, base, OP_WRITE),			/* 0: s0 */
		pkt(110, 0, QPN, (base + 3) & 0xffffff, OP_WRITE),	/* 1: s0 last */
		pkt(120, 0, QPN, (base + 4) & 0xffffff, OP_ACK),	/* 2: an ACK */
		pkt(130, 0, QPN + 1, (base + 4) & 0xffffff, OP_WRITE),	/* 3: other QP */
		pkt(140, 0, QPN, (base + 5) & 0xffffff, OP_WRITE),	/* 4: s1 */
		pkt(900, 0, QPN, (base + 8) & 0xffffff, OP_WRITE),	/* 5: s2 after seen */
		pkt(150, 0, QPN, (base + 12) & 0xffffff, OP_WRITE),	/* 6: beyond n */
		pkt(160, 0, QPN, (base - 1) & 0xffffff, OP_WRITE),	/* 7: before psn0 */
	};
	uint64_t seen[] = { 500, 500, 500 };
	struct ls_causal_in in = input(r, ARRAY_SIZE(r), seen, ARRAY_SIZE(seen), base, 4, false);
	struct ls_causal_out o;

	link_ok(_metadata, &in, &o);
	EXPECT_EQ(8, o.packets);
	EXPECT_EQ(3, o.matched);	/* 0, 1 (sample 0) and 4 (sample 1) */
	EXPECT_EQ(2, o.samples);
	ls_causal_free(&o);

	/* The responder side: the ACK is not a request; the writes are. */
	in.requests = true;
	link_ok(_metadata, &in, &o);
	EXPECT_EQ(3, o.matched);
	ls_causal_free(&o);

	/* Unknown PSNs (a probe that did not say): nothing matches. */
	in.psn0 = -1;
	link_ok(_metadata, &in, &o);
	EXPECT_EQ(0, o.matched);
	EXPECT_EQ(0, o.nlink);
	ls_causal_free(&o);
}

/*
 * One poll carrying the packets of two samples is on both paths, once
 * each; and pushed with its sample, a record counts in that sample's
 * window only, although it overlaps the other one.
 */
TEST(shared_poll_and_windows)
{
	struct ls_record r[] = {
		rec(100, 400, 0, LS_STAGE_NAPI_POLL),		/* 0: carries both */
		pkt(150, 0, QPN, 10, OP_WRITE),			/* 1: s0 */
		pkt(160, 0, QPN, 10, OP_WRITE),			/* 2: s0 again (retransmit) */
		pkt(300, 0, QPN, 11, OP_WRITE),			/* 3: s1 */
	};
	uint64_t seen[] = { 450, 450 };
	struct ls_causal_in in = input(r, ARRAY_SIZE(r), seen, ARRAY_SIZE(seen), 10, 1, false);
	struct ls_window w[] = { { 50, 250 }, { 200, 500 } };
	struct ls_attr_cfg cfg = { .win = w, .n = 2, .stage_mask = LS_ATTR_ALL_STAGES };
	struct ls_record only0 = rec(100, 400, 0, LS_STAGE_NAPI_POLL);
	struct ls_causal_out o;
	struct ls_attr a;
	struct ls_err e;

	link_ok(_metadata, &in, &o);
	EXPECT_EQ(2, links_of(&o, 0));
	EXPECT_TRUE(linked_to(&o, 0, 0));
	EXPECT_TRUE(linked_to(&o, 0, 1));
	ls_causal_free(&o);

	cfg.cpumask[0] = 1;
	ASSERT_EQ(0, ls_attr_init(&a, &cfg, &e));
	ASSERT_EQ(0, ls_attr_push_for(&a, &only0, 1, &e));
	ls_attr_finish(&a);
	EXPECT_EQ(0, a.kernel_ns[0]);	/* overlaps [100, 250] but is sample 1's */
	EXPECT_EQ(200, a.kernel_ns[1]);	/* [200, 400] */
	ls_attr_free(&a);

	ASSERT_EQ(0, ls_attr_init(&a, &cfg, &e));
	ASSERT_EQ(0, ls_attr_push(&a, &only0, &e));	/* any window */
	ls_attr_finish(&a);
	EXPECT_EQ(150, a.kernel_ns[0]);
	EXPECT_EQ(200, a.kernel_ns[1]);
	ls_attr_free(&a);
}

/* Many samples and records in random order: links always point at a poll that contains a packet's time or follows it on its CPU. */
TEST(random_links_are_on_the_packets_cpu)
{
	enum { N = 400, R = 4 * N };
	struct ls_record *r = calloc(R, sizeof(*r));
	uint64_t *seen = calloc(N, sizeof(*seen));
	struct ls_causal_in in = { .rec = r, .nrec = R, .n = N, .seen = seen, .qpn = QPN,
				   .psn0 = 0, .pkts = 1, .requests = false };
	struct ls_causal_out o;

	ASSERT_NE(NULL, r);
	ASSERT_NE(NULL, seen);
	srand(7);
	for (size_t i = 0; i < N; i++) {
		uint64_t t0 = 10000 * i;
		unsigned int cpu = rand() % 2;

		r[4 * i] = rec(t0 + 100, t0 + 600, cpu, LS_STAGE_NAPI_POLL);
		r[4 * i + 1] = pkt(t0 + 100 + rand() % 500, cpu, QPN, i, OP_WRITE);
		r[4 * i + 2] = rec(t0 + rand() % 9000, t0 + 9500, !cpu, LS_STAGE_NAPI_POLL);
		r[4 * i + 3] = rec(t0 + 650, t0 + 700, cpu, LS_STAGE_SOFTIRQ_RUN);
		seen[i] = t0 + 800;
	}
	link_ok(_metadata, &in, &o);
	EXPECT_EQ(N, o.samples);
	EXPECT_EQ(2 * N, o.nlink);
	for (size_t i = 0; i < N; i++) {
		EXPECT_TRUE(linked_to(&o, 4 * i, i));
		EXPECT_FALSE(o.linked[4 * i + 2]);	/* the other CPU's */
		EXPECT_TRUE(linked_to(&o, 4 * i + 3, i));
	}
	ls_causal_free(&o);
	free(r);
	free(seen);
}

/*
 * Where each message's DELIVER span starts: its last packet's entry into
 * the stack. Three packets per message (PSNs 100-102, 103-105, 106-108):
 * sample 0's last packet came twice (a retransmit, the later copy before
 * "seen" counts), sample 1's last packet entered after its host saw the
 * message (not its path: a copy after the fact) and its second packet is
 * not a last one, sample 2's last packet was never recorded (a full ring):
 * no span rather than one from an earlier packet.
 */
TEST(deliver_starts_at_the_last_packet)
{
	struct ls_record r[] = {
		pkt(1000, 0, QPN, 100, OP_WRITE),
		pkt(1100, 0, QPN, 101, OP_WRITE),
		pkt(1200, 1, QPN, 102, OP_WRITE),
		pkt(1500, 0, QPN, 102, OP_WRITE),	/* retransmitted copy */
		pkt(5000, 0, QPN, 103, OP_WRITE),
		pkt(5100, 0, QPN, 104, OP_WRITE),
		pkt(5900, 0, QPN, 105, OP_WRITE),	/* after seen (5800) */
		pkt(9000, 1, QPN, 106, OP_WRITE),
		pkt(9100, 1, QPN, 107, OP_WRITE),
		pkt(9150, 1, QPN, 108, OP_ACK),		/* an ACK is not the probe's */
	};
	uint64_t seen[] = { 2000, 5800, 9800 };
	struct ls_causal_in in = input(r, ARRAY_SIZE(r), seen, ARRAY_SIZE(seen), 100, 3, false);
	struct ls_causal_out o;

	link_ok(_metadata, &in, &o);
	EXPECT_EQ(3, o.samples);
	EXPECT_EQ(1500, o.last_rx[0]);
	EXPECT_EQ(0, o.last_cpu[0]);
	EXPECT_EQ(0, o.last_rx[1]);
	EXPECT_EQ(0, o.last_rx[2]);
	ls_causal_free(&o);
	ls_causal_free(&o);	/* freeing twice is allowed */
}

/* A TX_PKT instant: packet (qpn, psn, op) left on cpu at t. */
static struct ls_record txpkt(uint64_t t, unsigned int cpu, uint32_t qpn, uint32_t psn,
			      unsigned int op)
{
	struct ls_record r = pkt(t, cpu, qpn, psn, op);

	r.stage = LS_STAGE_TX_PKT;
	return r;
}

/*
 * When the host's own messages left it (SEND's end): two packets per
 * message (PSNs 200-201, 202-203, 204-205, 206-207). Message 0's last
 * packet left at 1500 and again at 9000 (a retransmit: the network's loss,
 * the first copy counts); message 1's last packet is stamped before its
 * post (not its own send) and then at 4200; message 2's last packet never
 * left (a dropped record): no span; message 3's only candidates are an
 * ACK with its PSN, a packet to another QP and an RX_PKT: none counts.
 */
TEST(send_ends_at_the_last_packet_out)
{
	struct ls_record r[] = {
		txpkt(1200, 0, QPN, 200, OP_WRITE),
		txpkt(1500, 1, QPN, 201, OP_WRITE),
		txpkt(9000, 0, QPN, 201, OP_WRITE),	/* retransmit */
		txpkt(3500, 0, QPN, 203, OP_WRITE),	/* before message 1's post */
		txpkt(4200, 1, QPN, 203, OP_WRITE),
		txpkt(6100, 0, QPN, 204, OP_WRITE),
		txpkt(8100, 0, QPN, 207, OP_ACK),
		txpkt(8200, 0, QPN + 1, 207, OP_WRITE),
		pkt(8300, 0, QPN, 207, OP_WRITE),
	};
	uint64_t posted[] = { 1000, 4000, 6000, 8000 }, left[4];
	uint32_t cpu[4];
	struct ls_causal_tx tx = { .rec = r, .nrec = ARRAY_SIZE(r), .n = 4, .posted = posted,
				   .qpn = QPN, .psn0 = 200, .pkts = 2, .requests = true };

	ls_causal_sent(&tx, left, cpu);
	EXPECT_EQ(1500, left[0]);
	EXPECT_EQ(1, cpu[0]);
	EXPECT_EQ(4200, left[1]);
	EXPECT_EQ(1, cpu[1]);
	EXPECT_EQ(0, left[2]);
	EXPECT_EQ(0, left[3]);
	/* without a PSN sequence or packet count nothing is the probe's */
	tx.pkts = 0;
	ls_causal_sent(&tx, left, cpu);
	EXPECT_EQ(0, left[0]);
	tx.pkts = 2;
	tx.psn0 = -1;
	ls_causal_sent(&tx, left, cpu);
	EXPECT_EQ(0, left[1]);
}

/*
 * The bound a receiver's chains get: the first packet of each message out
 * (any of its packets, not only the last: message 0's first left at 1200),
 * never a copy from before its post (message 1: 3500 is ignored, 4200
 * counts), moved into the receiver's clock; a message with no packet
 * recorded falls back to the application's stamp (message 2), or to 0
 * without one. A bound that would be negative is unknown.
 */
TEST(sent_bound_is_the_first_packet_out)
{
	struct ls_record r[] = {
		txpkt(1500, 1, QPN, 201, OP_WRITE),
		txpkt(1200, 0, QPN, 200, OP_WRITE),
		txpkt(3500, 0, QPN, 203, OP_WRITE),	/* before message 1's post */
		txpkt(4200, 1, QPN, 203, OP_WRITE),
		txpkt(6100, 0, QPN + 1, 204, OP_WRITE),	/* another QP */
	};
	uint64_t posted[] = { 1000, 4000, 6000 }, sent[3];
	struct ls_causal_tx tx = { .rec = r, .nrec = ARRAY_SIZE(r), .n = 3, .posted = posted,
				   .qpn = QPN, .psn0 = 200, .pkts = 2, .requests = true };

	ls_causal_sent_bound(&tx, posted, 500, sent);
	EXPECT_EQ(1700, sent[0]);
	EXPECT_EQ(4700, sent[1]);
	EXPECT_EQ(6500, sent[2]);
	ls_causal_sent_bound(&tx, NULL, -300, sent);
	EXPECT_EQ(900, sent[0]);
	EXPECT_EQ(3900, sent[1]);
	EXPECT_EQ(0, sent[2]);
	ls_causal_sent_bound(&tx, posted, -5000, sent);
	EXPECT_EQ(0, sent[0]);
	EXPECT_EQ(1000, sent[2]);
}

/*
 * A packet that came in the middle of a long poll: the poll started before
 * the packet left the other host, so its chain starts where the packet
 * could first have been here (the sender's TX_PKT in this clock), not at
 * the poll, and not at the sender's application stamp either (the message
 * spent time in the sender and on the wire after that).
 */
TEST(mid_poll_packet_starts_at_its_send)
{
	struct ls_record rx[] = {
		rec(1000, 9000, 0, LS_STAGE_NAPI_POLL),
		pkt(6000, 0, QPN, 100, OP_WRITE),
	};
	struct ls_record tx_rec[] = {
		txpkt(5200, 3, QPN, 100, OP_WRITE),
	};
	uint64_t seen[] = { 7000 }, posted[] = { 2000 }, sent[1];
	struct ls_causal_tx tx = { .rec = tx_rec, .nrec = 1, .n = 1, .posted = posted,
				   .qpn = QPN, .psn0 = 100, .pkts = 1, .requests = true };
	struct ls_causal_in in = { .rec = rx, .nrec = 2, .n = 1, .seen = seen, .sent = sent,
				   .qpn = QPN, .psn0 = 100, .pkts = 1, .requests = true };
	struct ls_causal_out o;

	ls_causal_sent_bound(&tx, posted, 100, sent);
	link_ok(_metadata, &in, &o);
	ASSERT_EQ(1, o.nlink);
	EXPECT_EQ(5300, o.link[0].from);
	EXPECT_EQ(7000, o.link[0].to);
	ls_causal_free(&o);
}

/*
 * The flight: ten packets that came to an idle host had their interrupt
 * 300..390 us after they were sent (the low decile: 310); an eleventh
 * came during a long poll started by another flow before it was even
 * sent: its chain starts a flight after its send, not at the poll and not
 * at the send. A packet whose chain began before its send does not count
 * toward the flight.
 */
TEST(mid_poll_chain_starts_a_flight_after_its_send)
{
	struct ls_record r[24];
	uint64_t seen[11], sent[11];
	size_t nr = 0;
	struct ls_causal_in in = { .rec = r, .n = 11, .seen = seen, .sent = sent,
				   .qpn = QPN, .psn0 = 100, .pkts = 1, .requests = true };
	struct ls_causal_out o;

	for (unsigned int i = 0; i < 10; i++) {
		uint64_t t0 = 100000 * (i + 1);

		sent[i] = t0;
		r[nr++] = rec(t0 + 300000 + 10000 * i, t0 + 320000 + 10000 * i, 0,
			      LS_STAGE_COMPLETION);
		r[nr++] = pkt(t0 + 305000 + 10000 * i, 0, QPN, 100 + i, OP_WRITE);
		seen[i] = t0 + 330000 + 10000 * i;
	}
	sent[10] = 2000000;
	r[nr++] = rec(1900000, 3500000, 0, LS_STAGE_NAPI_POLL);
	r[nr++] = pkt(3400000, 0, QPN, 110, OP_WRITE);
	seen[10] = 3600000;
	in.nrec = nr;
	link_ok(_metadata, &in, &o);
	EXPECT_EQ(310000, o.flight_ns);
	ASSERT_TRUE(linked_to(&o, nr - 2, 10));
	for (size_t k = 0; k < o.nlink; k++)
		if (o.link[k].sample == 10)
			EXPECT_EQ(2310000, o.link[k].from);
	ls_causal_free(&o);

	/* too few idle arrivals to tell a flight: the send bounds the chain */
	in.n = 1;
	in.nrec = 2;
	in.seen = &seen[10];
	in.sent = &sent[10];
	r[0] = r[nr - 2];
	r[1] = pkt(3400000, 0, QPN, 100, OP_WRITE);
	link_ok(_metadata, &in, &o);
	EXPECT_EQ(0, o.flight_ns);
	ASSERT_EQ(1, o.nlink);
	EXPECT_EQ(2000000, o.link[0].from);
	ls_causal_free(&o);
}

TEST_HARNESS_MAIN
