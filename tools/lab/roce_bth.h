/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 BTH selection shared by the lab's two oracles, the host wire
 * (tools/lab/labwire*.c, user space) and the fault injector
 * (tests/lab/faultinj/ls_faultinj.c, a kernel module), and by the causal
 * attribution (tools/causal.c), which classes packets the same way. Plain C with
 * unsigned int only, so both builds include it as it is;
 * tests/lab/paired.py mirrors ls_psn_hash_bit().
 */
#ifndef LS_ROCE_BTH_H
#define LS_ROCE_BTH_H

/* Opcode classes (RC, UC, UD and XRC share the low five bits). */
enum ls_bth_class {
	LS_BTH_OTHER,		/* CNP, reserved and vendor opcodes */
	LS_BTH_REQ,		/* SEND, WRITE, READ request, atomics */
	LS_BTH_RESP,		/* READ responses, atomic ACK */
	LS_BTH_ACK,		/* ACK */
};

/* The class of a BTH opcode. */
static inline unsigned int ls_bth_class(unsigned int opcode)
{
	unsigned int tc = (opcode >> 5) & 7, low = opcode & 0x1f;

	if (tc == 4 || tc >= 6)
		return LS_BTH_OTHER;
	if (low <= 0x0c || (low >= 0x13 && low <= 0x17))
		return LS_BTH_REQ;
	if ((low >= 0x0d && low <= 0x10) || low == 0x12)
		return LS_BTH_RESP;
	if (low == 0x11)
		return LS_BTH_ACK;
	return LS_BTH_OTHER;
}

/*
 * psn=hash: a pseudo-random half of all PSNs (the low bit of murmur3's
 * finalizer), so a fault on "half the samples" is not tied to a sample's
 * parity (a ping-pong on Soft-RoCE can alternate by itself).
 */
static inline unsigned int ls_psn_hash_bit(unsigned int psn)
{
	psn ^= psn >> 16;
	psn *= 0x85ebca6bu;
	psn ^= psn >> 13;
	psn *= 0xc2b2ae35u;
	psn ^= psn >> 16;
	return psn & 1;
}

#endif /* LS_ROCE_BTH_H */
