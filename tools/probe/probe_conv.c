// SPDX-License-Identifier: GPL-2.0
/*
 * The probe's pure parts (probe.h): verb names and the one-way divisor, HW
 * clock and MTU conversions, option defaults and the checks that need no
 * device.
 */
#include "probe.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <string.h>

/* ---- small helpers ---- */

/* Verb names in enum order. */
static const char *const verb_names[] = { "write", "send", "read" };
_Static_assert(ARRAY_SIZE(verb_names) == LS_VERB_READ + 1, "a name per verb");

/* Name of a verb. */
const char *ls_probe_verb_name(enum ls_probe_verb v)
{
	return ls_enum_name(verb_names, ARRAY_SIZE(verb_names), v);
}

/* Parse "write", "send" or "read". */
int ls_probe_parse_verb(const char *s, enum ls_probe_verb *v, struct ls_err *err)
{
	if (!strcmp(s, "write"))
		*v = LS_VERB_WRITE;
	else if (!strcmp(s, "send"))
		*v = LS_VERB_SEND;
	else if (!strcmp(s, "read"))
		*v = LS_VERB_READ;
	else
		return ls_errf(err, "--verb: '%s' is not write, send or read", s);
	return 0;
}

/* One-way = RTT / 2 for ping-pong; READ reports its full time, as ib_read_lat. */
unsigned int ls_probe_rtt_divisor(enum ls_probe_verb v)
{
	return v == LS_VERB_READ ? 1 : 2;
}

/* HCA clock ticks to ns; hca_core_clock is in kHz (ticks per ms). */
uint64_t ls_probe_hca_ticks_to_ns(uint64_t ticks, uint64_t khz)
{
	if (!khz)
		return 0;
	return (uint64_t)((unsigned __int128)ticks * 1000000u / khz);
}

/* Path MTU bytes to enum ibv_mtu (0 if invalid). */
int ls_probe_mtu_to_ibv(unsigned int bytes)
{
	switch (bytes) {
	case 256:	return IBV_MTU_256;
	case 512:	return IBV_MTU_512;
	case 1024:	return IBV_MTU_1024;
	case 2048:	return IBV_MTU_2048;
	case 4096:	return IBV_MTU_4096;
	}
	return 0;
}

/* enum ibv_mtu to bytes (0 if invalid). */
unsigned int ls_probe_ibv_to_mtu(int m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

/* Defaults. */
void ls_probe_opts_init(struct ls_probe_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->ib_port = 1;
	o->gid_index = -1;
	o->sizes[0] = 4;
	o->nsizes = 1;
	o->iters = 1000;
	o->verb = LS_VERB_WRITE;
	o->qp_timeout = 14;
	o->cpu = -1;
	o->port = LS_OOB_DEFAULT_PORT;
	o->connect_timeout_ns = 5000000000ull;
	o->wait_timeout_ns = 10000000000ull;
}

/* Validate options that need no device. */
int ls_probe_opts_check(const struct ls_probe_opts *o, bool is_prober, struct ls_err *err)
{
	if (is_prober && (!o->peer || !*o->peer))
		return ls_errf(err, "prober needs a peer host");
	if (is_prober && o->bind)
		return ls_errf(err, "--bind is the responder's");
	if (is_prober && o->insecure)
		return ls_errf(err, "--insecure is the responder's (a prober without --key is "
			       "served by an insecure responder)");
	if (!is_prober && o->key_file && o->insecure)
		return ls_errf(err, "--key and --insecure exclude each other");
	if (!is_prober && !o->key_file && !o->insecure)
		return ls_errf(err, "a responder needs --key FILE (only probers with the same key may "
			       "connect) or --insecure (anyone who reaches TCP port %u may connect, "
			       "drive RDMA traffic and receive this host's kernel records)", o->port);
	if (o->bind && !*o->bind)
		return ls_errf(err, "--bind: empty address");
	if (!o->nsizes || o->nsizes > LS_PROBE_MAX_SIZES)
		return ls_errf(err, "need 1..%d message sizes", LS_PROBE_MAX_SIZES);
	for (unsigned int i = 0; i < o->nsizes; i++)
		if (!o->sizes[i] || o->sizes[i] > (1u << 30))
			return ls_errf(err, "size %u is out of range [1, %u]", o->sizes[i],
				       1u << 30);
	if (!o->iters == !o->duration_ns)
		return ls_errf(err, "give either an iteration count or a duration");
	if (o->iters > LS_PROBE_MAX_CAPACITY)
		return ls_errf(err, "%llu iterations exceed the limit of %llu",
			       (unsigned long long)o->iters,
			       (unsigned long long)LS_PROBE_MAX_CAPACITY);
	if (o->capacity > LS_PROBE_MAX_CAPACITY)
		return ls_errf(err, "capacity %llu exceeds %llu",
			       (unsigned long long)o->capacity,
			       (unsigned long long)LS_PROBE_MAX_CAPACITY);
	if (o->mtu && !ls_probe_mtu_to_ibv(o->mtu))
		return ls_errf(err, "MTU %u is not 256, 512, 1024, 2048 or 4096", o->mtu);
	if (o->qp_timeout > 31)
		return ls_errf(err, "QP timeout %u exceeds 31", o->qp_timeout);
	if (!o->ib_port || o->ib_port > 255)
		return ls_errf(err, "IB port %u is out of range [1, 255]", o->ib_port);
	if (!o->wait_timeout_ns || !o->connect_timeout_ns)
		return ls_errf(err, "timeouts must be positive");
	if (o->rdma_cm && o->mtu)
		return ls_errf(err, "-m cannot be combined with -R: rdma_cm takes the path MTU from the route");
	return 0;
}

/* Whether a --bind value means every address. */
bool ls_probe_bind_any(const char *bind)
{
	return bind && (!strcmp(bind, "any") || !strcmp(bind, "0.0.0.0") || !strcmp(bind, "::"));
}

/* The responder's default address from its GID's raw bytes. */
int ls_probe_gid_bind_addr(const uint8_t gid[16], char *buf, size_t len, struct ls_err *err)
{
	const struct in6_addr *a = (const struct in6_addr *)gid;
	char s[INET6_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET6, gid, s, sizeof(s));
	if (IN6_IS_ADDR_V4MAPPED(a)) {
		uint32_t v4 = (uint32_t)gid[12] << 24 | gid[13] << 16 | gid[14] << 8 | gid[15];

		/* 0.0.0.0/8, 127/8, multicast and above: not an address to listen on */
		if (!(v4 >> 24) || v4 >> 24 == 127 || v4 >= 0xe0000000u)
			return ls_errf(err, "the GID %s holds no unicast IPv4 address to listen on: "
				       "give --bind ADDR (or --bind any)", s);
		if (!inet_ntop(AF_INET, gid + 12, buf, (socklen_t)len))
			return ls_errf(err, "GID %s: address does not fit", s);
		return 0;
	}
	if (IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_MULTICAST(a) ||
	    IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_SITELOCAL(a) || IN6_IS_ADDR_V4COMPAT(a))
		return ls_errf(err, "the GID %s is not a routable unicast IP address to listen on "
			       "(a link-local or IB GID): give --bind ADDR (or --bind any)", s);
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		return ls_errf(err, "GID %s: address does not fit", s);
	return 0;
}
