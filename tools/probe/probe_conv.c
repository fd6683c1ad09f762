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
#include <stdio.h>
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

/* Default limits (struct ls_probe_limits). */
static void limits_init(struct ls_probe_limits *l)
{
	l->max_size = LS_PROBE_DEF_MAX_SIZE;
	l->max_samples = LS_PROBE_DEF_MAX_SAMPLES;
	l->max_session_samples = LS_PROBE_DEF_MAX_SESSION;
	l->max_run_ns = LS_PROBE_DEF_MAX_RUN_NS;
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
	limits_init(&o->lim);
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
	if (is_prober && o->capacity && !o->duration_ns)
		return ls_errf(err, "--max-samples of a prober needs -D");
	if (!o->lim.max_size || !o->lim.max_samples || !o->lim.max_session_samples)
		return ls_errf(err, "--max-size, --max-samples and --max-session-samples must be "
			       "positive");
	if (!o->lim.max_run_ns)
		return ls_errf(err, "--max-run-time must be positive");
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

/* The GID table as "0=fe80::1 (RoCE v1), 1=..." for a message; "none" when empty. */
static void gid_list(const struct ls_probe_gid *tab, int n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && off < len; i++) {
		char s[INET6_ADDRSTRLEN] = "?";

		if (!tab[i].valid)
			continue;
		inet_ntop(AF_INET6, tab[i].raw, s, sizeof(s));
		off += (size_t)snprintf(buf + off, len - off, "%s%d=%s%s%s%s", off ? ", " : "", i, s,
					*tab[i].type ? " (" : "", tab[i].type,
					*tab[i].type ? ")" : "");
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* The first valid entry [of type RoCE v2] [that is IPv4-mapped], or -1. */
static int gid_first(const struct ls_probe_gid *tab, int n, bool v2, bool v4)
{
	for (int i = 0; i < n; i++) {
		if (!tab[i].valid)
			continue;
		if (v2 && strcmp(tab[i].type, "RoCE v2"))
			continue;
		if (v4 && !IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)tab[i].raw))
			continue;
		return i;
	}
	return -1;
}

/* The source GID index: explicit, or RoCE v2 IPv4 first (see probe.h). */
int ls_probe_gid_choose(const struct ls_probe_gid *tab, int n, int want, bool ethernet,
			int *idx, struct ls_err *err)
{
	bool typed = false;
	char list[512];
	int i;

	if (n < 0)
		n = 0;
	if (want >= 0) {
		if (want < n && tab[want].valid) {
			*idx = want;
			return 0;
		}
		gid_list(tab, n, list, sizeof(list));
		return ls_errf(err, "GID index %d is %s (valid: %s)", want,
			       want >= n ? "beyond the GID table" : "empty", list);
	}
	for (i = 0; i < n; i++)
		typed |= tab[i].valid && tab[i].type[0];
	if (typed) {
		i = gid_first(tab, n, true, true);
		if (i < 0)
			i = gid_first(tab, n, true, false);
		if (i < 0 && !ethernet)
			i = gid_first(tab, n, false, false);
	} else {
		i = gid_first(tab, n, false, true);
		if (i < 0)
			i = gid_first(tab, n, false, false);
	}
	if (i >= 0 || !ethernet) {
		*idx = i;		/* -1 on IB: no GID, LID routing */
		return 0;
	}
	gid_list(tab, n, list, sizeof(list));
	if (typed)
		return ls_errf(err, "no RoCE v2 GID (valid: %s): is the netdev's IP address "
			       "configured? (a RoCE v1 GID needs -x N)", list);
	return ls_errf(err, "no GID on the port (valid: none): is the netdev up, with an address?");
}

/* ---- a responder's limits on what a prober may ask ---- */

/* Samples one run of HELLO h needs kept: its iterations, else its capacity. */
static uint64_t hello_need(const struct ls_oob_hello *h)
{
	return h->iters ? h->iters : h->capacity;
}

/* Check a HELLO against the responder's limits before any allocation. */
int ls_probe_check_hello(const struct ls_oob_hello *h, const struct ls_probe_limits *lim,
			 uint32_t dev_max_msg, struct ls_err *err)
{
	uint64_t need = hello_need(h);

	for (uint32_t i = 0; i < h->nsizes; i++) {
		if (h->sizes[i] > lim->max_size)
			return ls_errcf(err, LS_E_LIMIT, "size %u exceeds the responder's limit "
					"of %u bytes (raise it with --max-size)", h->sizes[i],
					lim->max_size);
		if (dev_max_msg && h->sizes[i] > dev_max_msg)
			return ls_errcf(err, LS_E_LIMIT, "size %u exceeds the responder "
					"device's max message size %u", h->sizes[i], dev_max_msg);
	}
	if (h->iters > lim->max_samples)
		return ls_errcf(err, LS_E_LIMIT, "%llu iterations exceed the responder's limit "
				"of %llu samples per run (raise it with --max-samples)",
				(unsigned long long)h->iters,
				(unsigned long long)lim->max_samples);
	if (h->capacity > lim->max_samples && !h->iters)
		return ls_errcf(err, LS_E_LIMIT, "a capacity of %llu samples exceeds the "
				"responder's limit of %llu samples per run (raise it with "
				"--max-samples)",
				(unsigned long long)h->capacity,
				(unsigned long long)lim->max_samples);
	if (h->duration_ns > lim->max_run_ns)
		return ls_errcf(err, LS_E_LIMIT, "a run of %.3f s exceeds the responder's limit "
				"of %.3f s (raise it with --max-run-time)",
				(double)h->duration_ns / 1e9, (double)lim->max_run_ns / 1e9);
	if (need * h->nsizes > lim->max_session_samples)
		return ls_errcf(err, LS_E_LIMIT, "%u runs of %llu samples exceed the responder's "
				"limit of %llu samples per session (raise it with "
				"--max-session-samples)", h->nsizes, (unsigned long long)need,
				(unsigned long long)lim->max_session_samples);
	return 0;
}

/* Check a RUN after HELLO h and size its samples: planned count, bounded. */
int ls_probe_check_run(const struct ls_oob_run *rm, const struct ls_oob_hello *h,
		       const struct ls_probe_limits *lim, uint64_t kept, uint64_t *cap,
		       struct ls_err *err)
{
	uint64_t need = hello_need(h);

	if (rm->index >= h->nsizes || rm->size != h->sizes[rm->index])
		return ls_errcf(err, LS_E_PEER_PROTO, "protocol error: RUN %u of size %u "
				"does not follow HELLO", rm->index, rm->size);
	if (rm->count > need)
		return ls_errcf(err, LS_E_PEER_PROTO, "protocol error: RUN %u plans %llu "
				"samples, HELLO allowed %llu", rm->index,
				(unsigned long long)rm->count, (unsigned long long)need);
	*cap = rm->count ? rm->count : need;
	if (*cap > lim->max_samples)
		return ls_errcf(err, LS_E_LIMIT, "RUN %u: %llu samples exceed the responder's "
				"limit of %llu per run (raise it with --max-samples)", rm->index,
				(unsigned long long)*cap, (unsigned long long)lim->max_samples);
	if (kept + *cap > lim->max_session_samples)
		return ls_errcf(err, LS_E_LIMIT, "RUN %u: %llu more samples after %llu kept "
				"exceed the responder's limit of %llu per session (raise it "
				"with --max-session-samples)", rm->index,
				(unsigned long long)*cap, (unsigned long long)kept,
				(unsigned long long)lim->max_session_samples);
	return 0;
}

/* The longest wait for a run's END: its length plus slack, capped by the limit. */
uint64_t ls_probe_run_wait_ns(const struct ls_oob_hello *h, uint64_t cap, uint64_t wait_ns,
			      const struct ls_probe_limits *lim)
{
	uint64_t own, cap_ns = lim->max_run_ns + 2 * wait_ns;

	if (h->duration_ns)
		own = h->duration_ns + 2 * wait_ns;
	else	/* every iteration may take up to one wait */
		own = cap > (UINT64_MAX - wait_ns) / (wait_ns ? wait_ns : 1) ? UINT64_MAX :
		      cap * wait_ns + wait_ns;
	return own < cap_ns ? own : cap_ns;
}
