// SPDX-License-Identifier: GPL-2.0
/* Transmission model: serialization of RoCEv2 wire bytes plus propagation. */
#include "wire.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Verb names in enum order. */
static const char *const verb_names[] = { "write", "write_imm", "send", "send_imm", "read" };
_Static_assert(ARRAY_SIZE(verb_names) == LS_WIRE_READ + 1, "a name per verb");

/* Name of a verb as the CLI spells it. */
const char *ls_wire_verb_name(enum ls_wire_verb v)
{
	return ls_enum_name(verb_names, ARRAY_SIZE(verb_names), v);
}

/* Name of a switch mode as the CLI spells it. */
const char *ls_wire_switch_name(enum ls_wire_switch s)
{
	return s == LS_SWITCH_CT ? "ct" : "sf";
}

/* Parse a sysfs port rate ("100 Gb/sec (4X EDR)") into Gb/s. */
int ls_wire_parse_rate(const char *text, double *gbps, struct ls_err *err)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || !isfinite(v) || v <= 0)
		return ls_errf(err, "port rate '%s': no leading rate in Gb/sec", text);
	while (*end == ' ')
		end++;
	if (strncmp(end, "Gb/sec", 6))
		return ls_errf(err, "port rate '%s': unit is not Gb/sec", text);
	*gbps = v;
	return 0;
}

/* Validate a model configuration. */
int ls_wire_check(const struct ls_wire_cfg *cfg, struct ls_err *err)
{
	if (cfg->mtu != 256 && cfg->mtu != 512 && cfg->mtu != 1024 &&
	    cfg->mtu != 2048 && cfg->mtu != 4096)
		return ls_errf(err, "MTU %u is not an RDMA MTU (256, 512, 1024, 2048, 4096)",
			       cfg->mtu);
	if (!(cfg->link_gbps > 0) || !isfinite(cfg->link_gbps))
		return ls_errf(err, "link rate %g Gb/s must be > 0", cfg->link_gbps);
	if (!(cfg->cable_m >= 0) || !isfinite(cfg->cable_m))
		return ls_errf(err, "cable length %g m must be >= 0", cfg->cable_m);
	if (cfg->hops < 1 || cfg->hops > 64)
		return ls_errf(err, "hops %u out of range [1, 64]", cfg->hops);
	if (cfg->size > (1ull << 31))
		return ls_errf(err, "message size %llu over 2 GiB",
			       (unsigned long long)cfg->size);
	return 0;
}

/* Wire bytes of one packet: headers + padded payload + CRCs, minimum frame, preamble/IFG. */
uint64_t ls_wire_packet_bytes(const struct ls_wire_cfg *cfg, uint64_t payload,
			      unsigned int ext)
{
	uint64_t frame;

	frame = LS_WIRE_ETH + (cfg->ipv6 ? LS_WIRE_IPV6 : LS_WIRE_IPV4) +
		LS_WIRE_UDP + LS_WIRE_BTH + ext + ((payload + 3) & ~3ull) +
		LS_WIRE_ICRC + LS_WIRE_FCS;
	if (frame < LS_WIRE_MIN_FRAME)
		frame = LS_WIRE_MIN_FRAME;
	return frame + LS_WIRE_PREAMBLE_IFG;
}

/*
 * One message through `hops` links: returns first bit out -> last bit in,
 * and adds its packets and wire bytes to *out. first_ext/mid_ext/last_ext
 * are the extension-header bytes of the first, middle and last packets;
 * only_ext the bytes of a single-packet message.
 */
static double simulate(const struct ls_wire_cfg *cfg, uint64_t size,
		       unsigned int only_ext, unsigned int first_ext,
		       unsigned int mid_ext, unsigned int last_ext,
		       struct ls_wire *out)
{
	uint64_t npkt = size ? (size + cfg->mtu - 1) / cfg->mtu : 1;
	double ns_per_byte = 8.0 / cfg->link_gbps;
	double prop = cfg->cable_m * LS_WIRE_NS_PER_M;
	double hdr_ns = (8 + LS_WIRE_ETH + (cfg->ipv6 ? LS_WIRE_IPV6 : LS_WIRE_IPV4)) *
			ns_per_byte;
	double in_start = 0, in_end = 0, link_free[64] = { 0 }, last_end = 0;

	for (uint64_t k = 0; k < npkt; k++) {
		uint64_t pay = k + 1 < npkt ? cfg->mtu : size - k * cfg->mtu;
		unsigned int ext = npkt == 1 ? only_ext : k == 0 ? first_ext :
				   k + 1 == npkt ? last_ext : mid_ext;
		uint64_t bytes = ls_wire_packet_bytes(cfg, pay, ext);
		double ser = bytes * ns_per_byte;

		out->packets++;
		out->wire_bytes += bytes;
		out->header_bytes += bytes - pay;
		for (unsigned int l = 0; l < cfg->hops; l++) {
			double start;

			if (l == 0)
				start = link_free[0];
			else if (cfg->sw == LS_SWITCH_SF)
				start = in_end;
			else
				start = in_start + hdr_ns;
			if (start < link_free[l])
				start = link_free[l];
			/* a cut-through port cannot finish before its input did */
			link_free[l] = start + ser;
			if (l > 0 && link_free[l] < in_end)
				link_free[l] = in_end;
			in_start = start + prop;
			in_end = link_free[l] + prop;
		}
		last_end = in_end;
	}
	return last_end;
}

/* Compute the one-way transmission time of cfg's message. */
int ls_wire_compute(const struct ls_wire_cfg *cfg, struct ls_wire *out,
		    struct ls_err *err)
{
	unsigned int imm;
	double t;

	memset(out, 0, sizeof(*out));
	if (ls_wire_check(cfg, err))
		return -1;
	switch (cfg->verb) {
	case LS_WIRE_WRITE:
	case LS_WIRE_WRITE_IMM:
		imm = cfg->verb == LS_WIRE_WRITE_IMM ? LS_WIRE_IMMDT : 0;
		t = simulate(cfg, cfg->size, LS_WIRE_RETH + imm, LS_WIRE_RETH, 0,
			     imm, out);
		break;
	case LS_WIRE_SEND:
	case LS_WIRE_SEND_IMM:
		imm = cfg->verb == LS_WIRE_SEND_IMM ? LS_WIRE_IMMDT : 0;
		t = simulate(cfg, cfg->size, imm, 0, 0, imm, out);
		break;
	case LS_WIRE_READ:
		/* request: one packet, RETH, no payload; response: AETH first/last */
		t = simulate(cfg, 0, LS_WIRE_RETH, 0, 0, 0, out);
		out->packets = 0;
		t += simulate(cfg, cfg->size, LS_WIRE_AETH, LS_WIRE_AETH, 0,
			      LS_WIRE_AETH, out);
		break;
	default:
		return ls_errf(err, "unknown verb %d", (int)cfg->verb);
	}
	out->total_ns = t;
	out->propagate_ns = cfg->cable_m * LS_WIRE_NS_PER_M * cfg->hops;
	out->serialize_ns = out->wire_bytes * 8.0 / cfg->link_gbps;
	out->switch_ns = t - out->serialize_ns - out->propagate_ns;
	if (fabs(out->switch_ns) < 1e-9)
		out->switch_ns = 0;
	out->payload_only_ns = cfg->size * 8.0 / cfg->link_gbps;
	return 0;
}
