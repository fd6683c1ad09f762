/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Transmission model: how long one RDMA message spends on the wire.
 *
 * Wire bytes per packet = Ethernet 14 + IPv4 20 / IPv6 40 + UDP 8 + BTH 12
 * + the verb's extension headers (RETH 16 on the first packet of a WRITE
 * and on a READ request, AETH 4 on the first and last READ response
 * packets, IMMDT 4 on the last packet of a *_WITH_IMM) + payload (padded to
 * 4 bytes, BTH PadCnt) + ICRC 4 + FCS 4, at least the 64-byte Ethernet
 * minimum, plus preamble/SFD 8 + inter-frame gap 12. A message is split
 * into packets of at most the active (RoCE) MTU of payload.
 *
 * Serialization = wire bits / link rate. Propagation = cable metres x
 * ns_per_m per link, over `hops` links (hops - 1 switches). A
 * store-and-forward switch receives a whole packet before sending it on; a
 * cut-through switch starts once the headers are in. The packets of a
 * message are simulated one by one through every link, so pipelining is
 * exact for equal link rates.
 */
#ifndef LS_WIRE_H
#define LS_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Header sizes in bytes (IBTA RoCEv2 annex, IEEE 802.3). */
#define LS_WIRE_ETH		14
#define LS_WIRE_IPV4		20
#define LS_WIRE_IPV6		40
#define LS_WIRE_UDP		8
#define LS_WIRE_BTH		12
#define LS_WIRE_RETH		16
#define LS_WIRE_AETH		4
#define LS_WIRE_IMMDT		4
#define LS_WIRE_ICRC		4
#define LS_WIRE_FCS		4
#define LS_WIRE_PREAMBLE_IFG	20	/* preamble 7 + SFD 1 + IFG 12 */
#define LS_WIRE_MIN_FRAME	64	/* Ethernet minimum, FCS included */
#define LS_WIRE_NS_PER_M	5.0	/* copper and fibre alike (the seed's 5 ns/m) */

enum ls_wire_verb {
	LS_WIRE_WRITE,		/* RDMA WRITE: the probe's default ping-pong */
	LS_WIRE_WRITE_IMM,	/* RDMA WRITE with immediate (event mode) */
	LS_WIRE_SEND,
	LS_WIRE_SEND_IMM,
	LS_WIRE_READ,		/* request + response: a READ's latency is its round trip */
};

enum ls_wire_switch {
	LS_SWITCH_SF,		/* store and forward */
	LS_SWITCH_CT,		/* cut-through */
};

struct ls_wire_cfg {
	uint64_t size;		/* message payload bytes */
	enum ls_wire_verb verb;
	unsigned int mtu;	/* active MTU: payload bytes per packet (256..4096) */
	bool ipv6;
	double link_gbps;	/* link rate, Gb/s (> 0) */
	const char *rate_src;	/* where link_gbps came from (printed) */
	double cable_m;		/* metres of cable per link */
	unsigned int hops;	/* links between the two NICs (1 = back to back) */
	enum ls_wire_switch sw;
};

/* The result for one message (or request + response for READ). */
struct ls_wire {
	uint64_t packets;	/* packets of the message (READ: response packets) */
	uint64_t wire_bytes;	/* bytes on the wire incl. preamble/IFG, all packets */
	uint64_t header_bytes;	/* wire_bytes - payload (incl. padding) */
	double serialize_ns;	/* all packets at the link rate, one link */
	double propagate_ns;	/* cable_m * ns_per_m * hops */
	double switch_ns;	/* extra time spent in switches (hops - 1) */
	double total_ns;	/* first bit out -> last bit in (READ: request + response) */
	double payload_only_ns;	/* size * 8 / rate: the seed's naive figure */
};

/* Parse a sysfs port rate ("100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)"). */
int ls_wire_parse_rate(const char *text, double *gbps, struct ls_err *err);
/* Validate cfg: sizes, MTU, rate, cable length, hops. */
int ls_wire_check(const struct ls_wire_cfg *cfg, struct ls_err *err);
/* Wire bytes of one packet carrying payload bytes with ext extension-header bytes. */
uint64_t ls_wire_packet_bytes(const struct ls_wire_cfg *cfg, uint64_t payload,
			      unsigned int ext);
/* Compute the one-way transmission time of cfg's message. */
int ls_wire_compute(const struct ls_wire_cfg *cfg, struct ls_wire *out,
		    struct ls_err *err);
/* Names for printing. */
const char *ls_wire_verb_name(enum ls_wire_verb v);
const char *ls_wire_switch_name(enum ls_wire_switch s);

#endif /* LS_WIRE_H */
