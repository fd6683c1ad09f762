/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Causal attribution: which receive-path records of one host carried which
 * probe sample's packets.
 *
 * The kernel backends record every RoCEv2 packet that enters a host's
 * stack as an RX_PKT instant (CPU, time, destination QP, PSN, opcode). The
 * probe knows its QPs and each sample's PSNs, so each of the host's probe
 * packets names its sample. A packet that entered on CPU c at t was
 * carried by the receive-path records on c that contain t; its chain
 * starts at the NIC interrupt that led to its poll (the COMPLETION
 * containing t), else at the NET_RX raise whose softirq wait ended when
 * the run containing t began (a poll deferred to ksoftirqd, or the first
 * RoCE packet of its run), else at the NAPI poll containing t, else at t;
 * never before the packet can have been here: sent (the other host's
 * first TX_PKT of the message) plus the shortest flight seen in the run
 * (ls_causal_out.flight_ns). From
 * there until the host's application saw the message, the receive-path
 * work on c is on that sample's path, clipped to that span: before the
 * interrupt the packet was not there yet, after "seen" the host had moved
 * on (with Soft-RoCE the packet's own processing follows on c after
 * netif_receive_skb, inside the poll or in a tasklet). Receive-path work
 * anywhere else is concurrent: it overlapped the sample but did not carry
 * it. From the message's last packet entering the stack until the
 * application saw it, the message was in the host whatever ran (DELIVER:
 * Soft-RoCE's work items on any CPU, the completion's write, the
 * application's next look), wherever no record says what.
 */
#ifndef LS_CAUSAL_H
#define LS_CAUSAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/uapi/latsplit.h"
#include "util.h"

/* One host, as it saw the probe's packets. */
struct ls_causal_in {
	const struct ls_record *rec;	/* the host's records, its own clock */
	size_t nrec;
	size_t n;			/* samples */
	const uint64_t *seen;		/* [n]: its application saw sample i's message */
	const uint64_t *sent;		/* [n] or NULL: the other host sent it (this
					 * host's clock); its chain starts no earlier */
	uint32_t qpn;			/* QP the probe's packets to this host address */
	int64_t psn0;			/* PSN of sample 0's first packet; < 0: unknown */
	uint32_t pkts;			/* packets per message */
	bool seen_app;			/* seen is the application's own stamp (not a
					 * bound): the message's DELIVER spans count */
	bool requests;			/* true: only request opcodes are the probe's
					 * (the responder: ACKs of its answers share the
					 * QP); false: anything but an ACK (the prober:
					 * answers, or READ responses) */
};

/* Record rec is on sample's path from `from` to `to` (its own clock). */
struct ls_causal_link {
	size_t rec;
	size_t sample;
	uint64_t from, to;
};

struct ls_causal_out {
	struct ls_causal_link *link;	/* sorted by rec, then sample; one per pair,
					 * its span the union of its packets' */
	size_t nlink;
	uint8_t *linked;		/* [nrec]: 1 when rec is in some link */
	size_t packets;			/* RX_PKT records */
	size_t matched;			/* of them, one of a sample's packets */
	size_t samples;			/* samples with a matched packet */
	uint64_t *last_rx;		/* [n]: the message's last packet entered
					 * the stack (latest copy before "seen");
					 * 0: not recorded */
	uint32_t *last_cpu;		/* [n]: on that CPU */
	uint64_t flight_ns;		/* the packets' shortest flight from the
					 * other host's "sent" to their chain here
					 * (low decile); 0: unknown */
};

/* Packets that must have started their own chain before a flight is estimated. */
#define LS_CAUSAL_FLIGHT_MIN	8

/* One host, as it sent its own probe messages. */
struct ls_causal_tx {
	const struct ls_record *rec;	/* the host's records, its own clock */
	size_t nrec;
	size_t n;			/* samples */
	const uint64_t *posted;		/* [n]: its application posted message i */
	uint32_t qpn;			/* QP its probe packets address (the peer's) */
	int64_t psn0;			/* PSN of message 0's first packet; < 0: unknown */
	uint32_t pkts;			/* packets per message */
	bool requests;			/* as ls_causal_in's, for the packets sent */
};

/* True for the stages of the receive path (what a packet's arrival runs). */
bool ls_stage_rx_path(unsigned int stage);
/* True for the stages tied to the probe task (its CPU, its wakeups). */
bool ls_stage_task(unsigned int stage);
/* Link the host's receive-path records to the samples whose packets they carried. */
int ls_causal_link(const struct ls_causal_in *in, struct ls_causal_out *out,
		   struct ls_err *err);
/*
 * When each sample's message reached the host (its clock; 0: unknown), into
 * arrive[in->n]: the start of its packets' chain, else the moment the
 * other host sent it (in->sent), else unknown. The probe task's stages
 * count for a sample only from then on: before, it had nothing to see.
 */
void ls_causal_arrivals(const struct ls_causal_in *in, const struct ls_causal_out *out,
			uint64_t *arrive);
void ls_causal_free(struct ls_causal_out *out);
/*
 * When each sample's message entered the host, into t[in->n] and cpu[in->n]
 * (0: no record): the RX_PKT of its last packet, the latest copy before
 * "seen" (ls_causal_out.last_rx). Needs no other host's clock.
 */
void ls_causal_last_in(const struct ls_causal_in *in, uint64_t *t, uint32_t *cpu);
/*
 * When each of the host's own messages left it, into left[tx->n] and
 * cpu[tx->n] (0: no record): the TX_PKT of the message's last packet, the
 * first copy at or after its post (a retransmit is the network's loss, not
 * the host's time). From the post to then the message was in the host
 * (SEND).
 */
void ls_causal_sent(const struct ls_causal_tx *tx, uint64_t *left, uint32_t *cpu);
/*
 * The earliest each of the sending host's messages can have reached the
 * other host, in the receiver's clock (sender's + offset), into
 * sent[tx->n]: the first TX_PKT of any of its packets at or after its post
 * (a packet cannot arrive before it left; the application's stamp is
 * earlier by the time the message spent in the sender, SEND), else
 * fallback[i] (the application's stamp; NULL: 0, unknown). This is what
 * ls_causal_in's sent bounds a chain with: a packet that came in the
 * middle of a poll was not in the host before it.
 */
void ls_causal_sent_bound(const struct ls_causal_tx *tx, const uint64_t *fallback,
			  int64_t offset, uint64_t *sent);

#endif /* LS_CAUSAL_H */
