// SPDX-License-Identifier: GPL-2.0
/*
 * labwire: what a frame is (Ethernet, IP, UDP, the RoCEv2 BTH) and CE
 * marking in place.
 */
#include "labwire_int.h"

/* Big-endian 16-bit value at p. */
static inline uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* Big-endian 24-bit value at p. */
static inline uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* Opcode class of a BTH opcode (OP_* numbers are the LS_BTH_* ones). */
static uint8_t opcode_class(uint8_t op)
{
	return (uint8_t)ls_bth_class(op);
}

/* Find the IP header of p[0..len): sets kind, DSCP, ECN; returns the L4 offset (0: none). */
static uint32_t classify_ip(struct frame *f, const uint8_t *p, uint32_t len, uint8_t *proto)
{
	uint32_t off = 14, et, ihl, l4;
	uint8_t tos;
	bool later_frag = false;

	if (len < 14)
		return 0;
	et = be16(p + 12);
	if (et == 0x8100 || et == 0x88a8) {
		if (len < 18)
			return 0;
		et = be16(p + 16);
		off = 18;
	}
	if (et == 0x0800) {
		if (len < off + 20 || (p[off] >> 4) != 4)
			return 0;
		ihl = (p[off] & 0xfu) * 4;
		if (ihl < 20 || len < off + ihl)
			return 0;
		tos = p[off + 1];
		*proto = p[off + 9];
		later_frag = (be16(p + off + 6) & 0x1fff) != 0;
		l4 = off + ihl;
		f->ipver = 4;
	} else if (et == 0x86dd) {
		if (len < off + 40 || (p[off] >> 4) != 6)
			return 0;
		tos = (uint8_t)((p[off] & 0xf) << 4 | p[off + 1] >> 4);
		*proto = p[off + 6];
		l4 = off + 40;
		f->ipver = 6;
	} else {
		return 0;
	}
	f->kind = KIND_IP;
	f->l3off = (uint16_t)off;
	f->dscp = tos >> 2;
	f->ecn_in = tos & 3;
	return later_frag ? 0 : l4;
}

/* Fill f's header fields from p[0..len); never reads past len. */
void classify(struct frame *f, const uint8_t *p, uint32_t len)
{
	const uint8_t *bth;
	uint8_t proto = 0;
	uint32_t l4;

	f->kind = KIND_OTHER;
	f->opclass = OP_NONE;
	f->opcode = f->psn = f->dqpn = f->dport = -1;
	l4 = classify_ip(f, p, len, &proto);
	if (!l4 || proto != 17 || len < l4 + 8)
		return;
	f->kind = KIND_UDP;
	f->dport = (int32_t)be16(p + l4 + 2);
	if (f->dport != ROCE_PORT || len < l4 + 8 + 12)
		return;
	bth = p + l4 + 8;
	f->kind = KIND_ROCE;
	f->opcode = bth[0];
	f->opclass = opcode_class(bth[0]);
	f->dqpn = (int32_t)be24(bth + 5);
	f->psn = (int32_t)be24(bth + 9);
}

/* Mark an ECT frame CE in place; false when it is not ECT. */
bool mark_ce(struct frame *f)
{
	uint8_t *ip = f->buf + f->l3off;
	uint32_t sum = 0, ihl, i;

	if (!f->ipver || (f->ecn_out != 1 && f->ecn_out != 2))
		return false;
	if (f->ipver == 6) {
		ip[1] |= 0x30;
	} else {
		ihl = (ip[0] & 0xfu) * 4;
		ip[1] |= 3;
		ip[10] = ip[11] = 0;
		for (i = 0; i < ihl; i += 2)
			sum += be16(ip + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		sum = ~sum & 0xffff;
		ip[10] = (uint8_t)(sum >> 8);
		ip[11] = (uint8_t)sum;
	}
	f->ecn_out = 3;
	return true;
}
