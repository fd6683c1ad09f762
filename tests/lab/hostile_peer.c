// SPDX-License-Identifier: GPL-2.0
/*
 * hostile_peer: a test helper that plays a misbehaving prober against a
 * latsplit responder, built from the project's own OOB code. It connects to
 * HOST:PORT and performs one named attack, then prints what the responder
 * did ("refused: TEXT", "closed after N s", ...) on stdout:
 *
 *   huge-size      HELLO with a 1 GiB message size
 *   huge-capacity  HELLO of a duration run asking 2^23 kept samples
 *   run-storm      HELLO of 32 sizes, then 32 RUN/END pairs with no traffic
 *   read-silence   HELLO READ of --count iterations (default 2^23), RUN, then silence
 *   slow-frame     a HELLO dribbled one byte per second
 *   many-conns     --conns idle connections (default 50) held --hold seconds
 *   random         4 KiB of random bytes
 *
 * The QP it offers is well formed (its GID is the connection's own IPv4
 * address, the QP number random), so a responder accepts the HELLO and
 * connects a QP; no RDMA traffic ever flows.
 *
 *   hostile_peer [-p PORT] [--count N] [--conns N] [--hold SECS] HOST ATTACK
 *
 * Exit status: 0 the attack ran (the output says how the responder took
 * it), 1 it could not (no connection), 2 bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "oob.h"
#include "util.h"

#define WAIT_NS		60000000000ull	/* the longest we wait for the responder */

struct hp {
	const char *host;
	uint16_t port;
	uint64_t count;
	unsigned int conns;
	unsigned int hold_s;
};

/* Seconds since t0 (CLOCK_MONOTONIC ns). */
static double since(uint64_t t0)
{
	return (double)(ls_now_ns() - t0) / 1e9;
}

/* Connect to an insecure responder and read its AUTH, or exit 1. */
static void hp_connect(const struct hp *h, struct ls_oob *c)
{
	struct ls_err err = { 0 };

	if (ls_oob_connect(h->host, h->port, 5000000000ull, c, &err)) {
		printf("connect failed: %s\n", err.msg);
		exit(1);
	}
	if (ls_auth_join(c, NULL, WAIT_NS, &err)) {
		printf("refused before HELLO: %s\n", err.msg);
		exit(1);
	}
}

/* A well-formed QP endpoint: GID ::ffff:<our IPv4 on this connection>. */
static void fake_qp(const struct ls_oob *c, struct ls_oob_qp *q)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	uint32_t rnd = 0x123456;

	memset(q, 0, sizeof(*q));
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = 0x123456;
	q->qpn = (rnd & 0xfffff0) | 0x11;
	q->psn = rnd >> 8 & 0xffffff;
	q->rkey = 0x1234;
	q->buf_len = 1u << 31;
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl))
		return;
	if (ss.ss_family == AF_INET) {
		q->gid[10] = q->gid[11] = 0xff;
		memcpy(q->gid + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else if (ss.ss_family == AF_INET6) {
		memcpy(q->gid, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
}

/* A HELLO of one 4-byte WRITE run of 1000 iterations (attacks change it). */
static void base_hello(const struct ls_oob *c, struct ls_oob_hello *m)
{
	memset(m, 0, sizeof(*m));
	m->verb = LS_OOB_VERB_WRITE;
	m->mtu = 1024;
	m->qp_timeout = 14;
	m->iters = 1000;
	m->capacity = 1000;
	m->nsizes = 1;
	m->sizes[0] = 4;
	fake_qp(c, &m->qp);
}

/* Send a HELLO; exit 1 when it cannot be sent. */
static void send_hello(struct ls_oob *c, const struct ls_oob_hello *m)
{
	uint8_t b[LS_OOB_HELLO_MAX_LEN];
	struct ls_err err = { 0 };

	if (ls_oob_send(c, LS_OOB_HELLO, 0, b, ls_oob_hello_encode(m, b), WAIT_NS, &err)) {
		printf("send HELLO failed: %s\n", err.msg);
		exit(1);
	}
}

/* Wait for the responder's answer to what we sent and print it; 0 on want. */
static int report(struct ls_oob *c, uint16_t want, uint64_t t0, uint64_t timeout_ns)
{
	struct ls_err err = { 0 };
	struct ls_oob_error e;
	struct ls_oob_msg m;

	if (ls_oob_recv(c, &m, LS_OOB_MAX_PAYLOAD, timeout_ns, &err)) {
		printf("closed after %.1f s: %s\n", since(t0), err.msg);
		return -1;
	}
	if (m.hdr.type == want) {
		free(m.payload);
		return 0;
	}
	if (m.hdr.type == LS_OOB_ERROR && !ls_oob_error_parse(m.payload, m.hdr.length, &e, &err))
		printf("refused after %.1f s (code %u): %s\n", since(t0), e.code, e.text);
	else
		printf("got %s after %.1f s\n", ls_oob_type_name(m.hdr.type), since(t0));
	free(m.payload);
	return -1;
}

/* Send one RUN or END frame. */
static int send_run(struct ls_oob *c, uint16_t type, uint32_t index, uint64_t count)
{
	struct ls_oob_run r = { .index = index, .size = 4, .count = count };
	uint8_t b[LS_OOB_RUN_LEN];
	struct ls_err err = { 0 };

	if (ls_oob_send(c, type, 0, b, ls_oob_run_encode(&r, b), WAIT_NS, &err)) {
		printf("send %s failed: %s\n", ls_oob_type_name(type), err.msg);
		return -1;
	}
	return 0;
}

/* HELLO of 32 sizes, then 32 RUN/END pairs without any RDMA traffic. */
static void run_storm(const struct hp *h, struct ls_oob *c, uint64_t t0)
{
	struct ls_oob_hello m;
	unsigned int k;

	base_hello(c, &m);
	m.iters = m.capacity = h->count ? h->count : 1000;
	m.nsizes = LS_OOB_MAX_SIZES;
	for (k = 0; k < m.nsizes; k++)
		m.sizes[k] = 4;
	send_hello(c, &m);
	if (report(c, LS_OOB_ACCEPT, t0, WAIT_NS))
		return;
	for (k = 0; k < m.nsizes; k++) {
		if (send_run(c, LS_OOB_RUN, k, m.iters) || report(c, LS_OOB_READY, t0, WAIT_NS) ||
		    send_run(c, LS_OOB_END, k, 0) || report(c, LS_OOB_STAMPS, t0, WAIT_NS)) {
			printf("storm stopped at run %u\n", k);
			return;
		}
	}
	if (!ls_oob_send(c, LS_OOB_BYE, 0, NULL, 0, WAIT_NS, NULL) &&
	    !report(c, LS_OOB_BYE, t0, WAIT_NS))
		printf("storm of %u RUN/END pairs served in %.1f s\n", k, since(t0));
}

/* HELLO READ of many iterations, one RUN, then silence until dropped. */
static void read_silence(const struct hp *h, struct ls_oob *c, uint64_t t0)
{
	struct ls_oob_hello m;

	base_hello(c, &m);
	m.verb = LS_OOB_VERB_READ;
	m.iters = m.capacity = h->count ? h->count : LS_OOB_MAX_COUNT;
	send_hello(c, &m);
	if (report(c, LS_OOB_ACCEPT, t0, WAIT_NS) || send_run(c, LS_OOB_RUN, 0, m.iters) ||
	    report(c, LS_OOB_READY, t0, WAIT_NS))
		return;
	printf("run started, silent\n");
	report(c, LS_OOB_STAMPS, t0, 10 * WAIT_NS);
}

/* A valid HELLO, one byte per second. */
static void slow_frame(struct ls_oob *c, uint64_t t0)
{
	uint8_t b[LS_OOB_HDR_LEN + LS_OOB_HELLO_MAX_LEN];
	struct ls_oob_hello m;
	size_t n, i;

	base_hello(c, &m);
	n = ls_oob_hello_encode(&m, b + LS_OOB_HDR_LEN);
	ls_oob_hdr_encode(b, LS_OOB_HELLO, 0, (uint32_t)n);
	n += LS_OOB_HDR_LEN;
	for (i = 0; i < n; i++) {
		if (send(c->fd, b + i, 1, MSG_NOSIGNAL) != 1) {
			printf("closed after %.1f s (%zu of %zu bytes sent): %s\n", since(t0), i,
			       n, strerror(errno));
			return;
		}
		sleep(1);
	}
	report(c, LS_OOB_ACCEPT, t0, WAIT_NS);
	printf("whole frame sent in %.1f s\n", since(t0));
}

/* Many idle connections at once; count the busy refusals. */
static void many_conns(const struct hp *h, uint64_t t0)
{
	struct ls_oob *c = calloc(h->conns, sizeof(*c));
	unsigned int k, ok = 0, busy = 0, closed = 0;

	if (!c)
		exit(1);
	for (k = 0; k < h->conns; k++) {
		struct ls_err err = { 0 };

		if (!ls_oob_connect(h->host, h->port, 5000000000ull, &c[k], &err))
			ok++;
	}
	sleep(h->hold_s);
	for (k = 0; k < h->conns; k++) {
		struct ls_err err = { 0 };
		struct ls_oob_error e;
		struct ls_oob_msg m;

		if (c[k].fd < 0)
			continue;
		if (!ls_oob_recv(&c[k], &m, LS_OOB_ERROR_MAX_LEN, 1000000, &err)) {
			if (m.hdr.type == LS_OOB_ERROR &&
			    !ls_oob_error_parse(m.payload, m.hdr.length, &e, &err) &&
			    strstr(e.text, "busy"))
				busy++;
			free(m.payload);
		} else if (strstr(err.msg, "closed")) {
			closed++;
		}
		ls_oob_close(&c[k]);
	}
	printf("%u of %u connected, %u refused busy, %u closed, in %.1f s\n", ok, h->conns,
	       busy, closed, since(t0));
	free(c);
}

/* Run one attack by name; 2 for an unknown one. */
static int attack(const struct hp *h, const char *name)
{
	uint64_t t0 = ls_now_ns();
	struct ls_oob c = { .fd = -1 };
	struct ls_oob_hello m;
	uint8_t junk[4096];

	if (!strcmp(name, "many-conns")) {
		many_conns(h, t0);
		return 0;
	}
	if (strcmp(name, "huge-size") && strcmp(name, "huge-capacity") &&
	    strcmp(name, "run-storm") && strcmp(name, "read-silence") &&
	    strcmp(name, "slow-frame") && strcmp(name, "random"))
		return 2;
	hp_connect(h, &c);
	if (!strcmp(name, "huge-size") || !strcmp(name, "huge-capacity")) {
		base_hello(&c, &m);
		if (name[5] == 's') {
			m.sizes[0] = 1u << 30;
		} else {
			m.iters = 0;
			m.duration_ns = 1000000000ull;
			m.capacity = LS_OOB_MAX_COUNT;
		}
		send_hello(&c, &m);
		if (!report(&c, LS_OOB_ACCEPT, t0, WAIT_NS))
			printf("accepted\n");
	} else if (!strcmp(name, "run-storm")) {
		run_storm(h, &c, t0);
	} else if (!strcmp(name, "read-silence")) {
		read_silence(h, &c, t0);
	} else if (!strcmp(name, "slow-frame")) {
		slow_frame(&c, t0);
	} else {
		if (getrandom(junk, sizeof(junk), 0) != sizeof(junk))
			memset(junk, 0xa5, sizeof(junk));
		if (send(c.fd, junk, sizeof(junk), MSG_NOSIGNAL) < 0)
			printf("send failed: %s\n", strerror(errno));
		report(&c, LS_OOB_ACCEPT, t0, WAIT_NS);
	}
	ls_oob_close(&c);
	return 0;
}

/* Parse the command line and run the attack. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' }, { "count", required_argument, NULL, 'c' },
		{ "conns", required_argument, NULL, 'n' }, { "hold", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct hp h = { .port = LS_OOB_DEFAULT_PORT, .conns = 50, .hold_s = 8 };
	int o;

	while ((o = getopt_long(argc, argv, "p:", lo, NULL)) != -1) {
		if (o == 'p')
			h.port = (uint16_t)strtoul(optarg, NULL, 0);
		else if (o == 'c')
			h.count = strtoull(optarg, NULL, 0);
		else if (o == 'n')
			h.conns = (unsigned int)strtoul(optarg, NULL, 0);
		else if (o == 'H')
			h.hold_s = (unsigned int)strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (argc - optind != 2 || !h.port || !h.conns || h.conns > 1000) {
		fprintf(stderr, "usage: hostile_peer [-p PORT] [--count N] [--conns N] "
			"[--hold SECS] HOST ATTACK\n");
		return 2;
	}
	h.host = argv[optind];
	o = attack(&h, argv[optind + 1]);
	if (o == 2)
		fprintf(stderr, "hostile_peer: unknown attack '%s'\n", argv[optind + 1]);
	return o;
}
