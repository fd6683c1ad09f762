// SPDX-License-Identifier: GPL-2.0
/* Out-of-band control channel: framed binary messages over TCP, strict parsers. */
#include "oob.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- byte order helpers ---- */

/* Store a big-endian u16. */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* Store a big-endian u32. */
static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* Store a big-endian u64. */
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

/* Load a big-endian u16. */
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Load a big-endian u32. */
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* Load a big-endian u64. */
static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static const char *const type_names[LS_OOB_NR_TYPES] = {
	[LS_OOB_HELLO] = "HELLO", [LS_OOB_ACCEPT] = "ACCEPT", [LS_OOB_RUN] = "RUN",
	[LS_OOB_READY] = "READY", [LS_OOB_END] = "END", [LS_OOB_STAMPS] = "STAMPS",
	[LS_OOB_BLOB] = "BLOB", [LS_OOB_BYE] = "BYE", [LS_OOB_ERROR] = "ERROR",
	[LS_OOB_AUTH] = "AUTH", [LS_OOB_AUTH_PROOF] = "AUTH_PROOF", [LS_OOB_AUTH_OK] = "AUTH_OK",
};

/* Name of a message type for logs. */
const char *ls_oob_type_name(uint16_t type)
{
	if (type && type < LS_OOB_NR_TYPES)
		return type_names[type];
	return "?";
}

/* ---- header ---- */

/* Encode a frame header into 16 bytes. */
void ls_oob_hdr_encode(uint8_t *out, uint16_t type, uint32_t tag, uint32_t length)
{
	put32(out, LS_OOB_MAGIC);
	put16(out + 4, LS_OOB_VERSION);
	put16(out + 6, type);
	put32(out + 8, tag);
	put32(out + 12, length);
}

/* Largest payload a type may carry (before the caller's own bound). */
static uint32_t type_max_len(uint16_t type)
{
	switch (type) {
	case LS_OOB_HELLO:	return LS_OOB_HELLO_MAX_LEN;
	case LS_OOB_ACCEPT:	return LS_OOB_ACCEPT_LEN;
	case LS_OOB_RUN:
	case LS_OOB_READY:
	case LS_OOB_END:	return LS_OOB_RUN_LEN;
	case LS_OOB_ERROR:	return LS_OOB_ERROR_MAX_LEN;
	case LS_OOB_BYE:	return 0;
	case LS_OOB_AUTH:	return LS_OOB_AUTH_LEN;
	case LS_OOB_AUTH_PROOF:	return LS_OOB_AUTH_PROOF_LEN;
	case LS_OOB_AUTH_OK:	return LS_OOB_AUTH_OK_LEN;
	default:		return LS_OOB_MAX_PAYLOAD;
	}
}

/* Parse and validate a 16-byte header. */
int ls_oob_hdr_parse(const uint8_t *p, size_t len, struct ls_oob_hdr *h,
		     uint32_t max_len, struct ls_err *err)
{
	uint32_t magic, lim;

	if (len < LS_OOB_HDR_LEN)
		return ls_errf(err, "truncated header (%zu of %d bytes)", len,
			       LS_OOB_HDR_LEN);
	magic = get32(p);
	if (magic != LS_OOB_MAGIC)
		return ls_errcf(err, LS_E_PEER_PROTO, "bad magic 0x%08x (not a latsplit peer)", magic);
	h->version = get16(p + 4);
	h->type = get16(p + 6);
	h->tag = get32(p + 8);
	h->length = get32(p + 12);
	if (h->version != LS_OOB_VERSION)
		return ls_errcf(err, LS_E_PEER_PROTO, "protocol version %u, this latsplit speaks %u",
				h->version, LS_OOB_VERSION);
	if (!h->type || h->type >= LS_OOB_NR_TYPES)
		return ls_errf(err, "unknown message type %u", h->type);
	if (h->tag && h->type != LS_OOB_BLOB)
		return ls_errf(err, "%s message with non-zero tag 0x%x",
			       ls_oob_type_name(h->type), h->tag);
	lim = type_max_len(h->type);
	/* An ERROR (why the peer gives up) is read whatever the caller expected. */
	if (max_len < lim && h->type != LS_OOB_ERROR)
		lim = max_len;
	if (h->length > lim)
		return ls_errf(err, "%s message of %u bytes exceeds the limit of %u",
			       ls_oob_type_name(h->type), h->length, lim);
	return 0;
}

/* ---- payloads ---- */

#define QP_LEN 44

/* Encode a QP endpoint (44 bytes). */
static void qp_encode(const struct ls_oob_qp *q, uint8_t *out)
{
	put32(out, q->qpn);
	put32(out + 4, q->psn);
	put16(out + 8, q->lid);
	put16(out + 10, 0);
	memcpy(out + 12, q->gid, 16);
	put32(out + 28, q->rkey);
	put64(out + 32, q->addr);
	put32(out + 40, q->buf_len);
}

/* Parse a QP endpoint (44 bytes). */
static int qp_parse(const uint8_t *p, struct ls_oob_qp *q, struct ls_err *err)
{
	q->qpn = get32(p);
	q->psn = get32(p + 4);
	q->lid = get16(p + 8);
	if (get16(p + 10))
		return ls_errf(err, "QP endpoint: reserved field not zero");
	memcpy(q->gid, p + 12, 16);
	q->rkey = get32(p + 28);
	q->addr = get64(p + 32);
	q->buf_len = get32(p + 40);
	if (q->qpn > 0xffffff || !q->qpn)
		return ls_errf(err, "QP endpoint: QP number 0x%x is not a valid 24-bit QPN",
			       q->qpn);
	if (q->psn > 0xffffff)
		return ls_errf(err, "QP endpoint: PSN 0x%x exceeds 24 bits", q->psn);
	if (!q->buf_len)
		return ls_errf(err, "QP endpoint: empty remote buffer");
	return 0;
}

/* True for a path MTU value verbs knows (0 = "use the active MTU"). */
static bool mtu_valid(uint16_t mtu, bool zero_ok)
{
	return (zero_ok && !mtu) || mtu == 256 || mtu == 512 || mtu == 1024 ||
	       mtu == 2048 || mtu == 4096;
}

/* Encode HELLO; returns its length. */
size_t ls_oob_hello_encode(const struct ls_oob_hello *m, uint8_t *out)
{
	size_t off;

	out[0] = m->verb;
	out[1] = m->flags;
	put16(out + 2, m->mtu);
	out[4] = m->qp_timeout;
	out[5] = out[6] = out[7] = 0;
	put64(out + 8, m->iters);
	put64(out + 16, m->duration_ns);
	put64(out + 24, m->capacity);
	put32(out + 32, m->nsizes);
	off = 36;
	for (uint32_t i = 0; i < m->nsizes && i < LS_OOB_MAX_SIZES; i++, off += 4)
		put32(out + off, m->sizes[i]);
	qp_encode(&m->qp, out + off);
	return off + QP_LEN;
}

/* Parse HELLO strictly. */
int ls_oob_hello_parse(const uint8_t *p, size_t len, struct ls_oob_hello *m,
		       struct ls_err *err)
{
	size_t off;

	memset(m, 0, sizeof(*m));
	if (len < 36 + 4 + QP_LEN)
		return ls_errf(err, "HELLO: %zu bytes is too short", len);
	m->verb = p[0];
	m->flags = p[1];
	m->mtu = get16(p + 2);
	m->qp_timeout = p[4];
	if (p[5] || p[6] || p[7])
		return ls_errf(err, "HELLO: reserved bytes not zero");
	m->iters = get64(p + 8);
	m->duration_ns = get64(p + 16);
	m->capacity = get64(p + 24);
	m->nsizes = get32(p + 32);
	if (m->verb > LS_OOB_VERB_READ)
		return ls_errf(err, "HELLO: unknown verb %u", m->verb);
	if (m->flags & ~LS_OOB_F_MASK)
		return ls_errf(err, "HELLO: unknown flags 0x%x", m->flags);
	if (!mtu_valid(m->mtu, true))
		return ls_errf(err, "HELLO: MTU %u is not 256/512/1024/2048/4096", m->mtu);
	if (m->qp_timeout > 31)
		return ls_errf(err, "HELLO: QP timeout %u exceeds 31", m->qp_timeout);
	if (!m->iters == !m->duration_ns)
		return ls_errf(err, "HELLO: exactly one of iterations and duration must be set");
	if (!m->capacity || m->capacity > LS_OOB_MAX_COUNT || m->iters > m->capacity)
		return ls_errf(err, "HELLO: sample capacity %llu is out of range",
			       (unsigned long long)m->capacity);
	if (!m->nsizes || m->nsizes > LS_OOB_MAX_SIZES)
		return ls_errf(err, "HELLO: %u sizes (1..%d allowed)", m->nsizes,
			       LS_OOB_MAX_SIZES);
	if (len != 36 + 4 * (size_t)m->nsizes + QP_LEN)
		return ls_errf(err, "HELLO: length %zu does not match %u sizes", len,
			       m->nsizes);
	off = 36;
	for (uint32_t i = 0; i < m->nsizes; i++, off += 4) {
		m->sizes[i] = get32(p + off);
		if (!m->sizes[i] || m->sizes[i] > (1u << 30))
			return ls_errf(err, "HELLO: message size %u is out of range",
				       m->sizes[i]);
	}
	return qp_parse(p + off, &m->qp, err) ? ls_err_wrap(err, "HELLO") : 0;
}

/* Encode ACCEPT; returns its length. */
size_t ls_oob_accept_encode(const struct ls_oob_accept *m, uint8_t *out)
{
	put16(out, m->mtu);
	put16(out + 2, m->active_mtu);
	qp_encode(&m->qp, out + 4);
	return LS_OOB_ACCEPT_LEN;
}

/* Parse ACCEPT strictly. */
int ls_oob_accept_parse(const uint8_t *p, size_t len, struct ls_oob_accept *m,
			struct ls_err *err)
{
	memset(m, 0, sizeof(*m));
	if (len != LS_OOB_ACCEPT_LEN)
		return ls_errf(err, "ACCEPT: %zu bytes, expected %d", len,
			       LS_OOB_ACCEPT_LEN);
	m->mtu = get16(p);
	m->active_mtu = get16(p + 2);
	if (!mtu_valid(m->mtu, false) || !mtu_valid(m->active_mtu, false))
		return ls_errf(err, "ACCEPT: MTU %u/%u invalid", m->mtu, m->active_mtu);
	return qp_parse(p + 4, &m->qp, err) ? ls_err_wrap(err, "ACCEPT") : 0;
}

/* Encode RUN/READY/END; returns its length. */
size_t ls_oob_run_encode(const struct ls_oob_run *m, uint8_t *out)
{
	put32(out, m->index);
	put32(out + 4, m->size);
	put64(out + 8, m->count);
	return LS_OOB_RUN_LEN;
}

/* Parse RUN/READY/END strictly. */
int ls_oob_run_parse(const uint8_t *p, size_t len, struct ls_oob_run *m,
		     struct ls_err *err)
{
	memset(m, 0, sizeof(*m));
	if (len != LS_OOB_RUN_LEN)
		return ls_errf(err, "run message: %zu bytes, expected %d", len,
			       LS_OOB_RUN_LEN);
	m->index = get32(p);
	m->size = get32(p + 4);
	m->count = get64(p + 8);
	if (m->index >= LS_OOB_MAX_SIZES)
		return ls_errf(err, "run message: run index %u out of range", m->index);
	if (m->size > (1u << 30))
		return ls_errf(err, "run message: size %u out of range", m->size);
	if (m->count > LS_OOB_MAX_COUNT)
		return ls_errf(err, "run message: count %llu out of range",
			       (unsigned long long)m->count);
	return 0;
}

/* Encode ERROR; returns its length. */
size_t ls_oob_error_encode(const struct ls_oob_error *m, uint8_t *out)
{
	size_t n = strnlen(m->text, LS_OOB_TEXT_MAX);

	put32(out, m->code);
	put16(out + 4, (uint16_t)n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = m->text[i];

		out[6 + i] = (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	return 6 + n;
}

/* Parse ERROR strictly (printable ASCII text only). */
int ls_oob_error_parse(const uint8_t *p, size_t len, struct ls_oob_error *m,
		       struct ls_err *err)
{
	uint16_t n;

	memset(m, 0, sizeof(*m));
	if (len < 6)
		return ls_errf(err, "ERROR: %zu bytes is too short", len);
	m->code = get32(p);
	n = get16(p + 4);
	if (n > LS_OOB_TEXT_MAX || len != 6u + n)
		return ls_errf(err, "ERROR: text length %u does not match %zu bytes", n, len);
	for (uint16_t i = 0; i < n; i++) {
		if (p[6 + i] < 0x20 || p[6 + i] >= 0x7f)
			return ls_errf(err, "ERROR: text byte %u is not printable", i);
		m->text[i] = (char)p[6 + i];
	}
	m->text[n] = '\0';
	return 0;
}

/* Encode AUTH; returns its length. */
size_t ls_oob_auth_encode(const struct ls_oob_auth *m, uint8_t *out)
{
	out[0] = m->mode;
	out[1] = out[2] = out[3] = 0;
	memcpy(out + 4, m->nonce, LS_OOB_NONCE_LEN);
	return LS_OOB_AUTH_LEN;
}

/* Parse AUTH strictly: a known mode, reserved bytes zero, no nonce when insecure. */
int ls_oob_auth_parse(const uint8_t *p, size_t len, struct ls_oob_auth *m,
		      struct ls_err *err)
{
	static const uint8_t zero[LS_OOB_NONCE_LEN];

	memset(m, 0, sizeof(*m));
	if (len != LS_OOB_AUTH_LEN)
		return ls_errf(err, "AUTH: %zu bytes, expected %d", len,
				LS_OOB_AUTH_LEN);
	m->mode = p[0];
	if (p[1] || p[2] || p[3])
		return ls_errf(err, "AUTH: reserved bytes not zero");
	if (m->mode > LS_OOB_AUTH_HMAC_SHA256)
		return ls_errf(err, "AUTH: unknown mode %u", m->mode);
	memcpy(m->nonce, p + 4, LS_OOB_NONCE_LEN);
	if (m->mode == LS_OOB_AUTH_INSECURE && memcmp(m->nonce, zero, sizeof(zero)))
		return ls_errf(err, "AUTH: insecure mode with a nonce");
	return 0;
}

/* Encode AUTH_PROOF; returns its length. */
size_t ls_oob_auth_proof_encode(const struct ls_oob_auth_proof *m, uint8_t *out)
{
	memcpy(out, m->nonce, LS_OOB_NONCE_LEN);
	memcpy(out + LS_OOB_NONCE_LEN, m->mac, LS_OOB_MAC_LEN);
	return LS_OOB_AUTH_PROOF_LEN;
}

/* Parse AUTH_PROOF strictly (exact length). */
int ls_oob_auth_proof_parse(const uint8_t *p, size_t len, struct ls_oob_auth_proof *m,
			    struct ls_err *err)
{
	memset(m, 0, sizeof(*m));
	if (len != LS_OOB_AUTH_PROOF_LEN)
		return ls_errf(err, "AUTH_PROOF: %zu bytes, expected %d", len,
				LS_OOB_AUTH_PROOF_LEN);
	memcpy(m->nonce, p, LS_OOB_NONCE_LEN);
	memcpy(m->mac, p + LS_OOB_NONCE_LEN, LS_OOB_MAC_LEN);
	return 0;
}

/* Encode AUTH_OK; returns its length. */
size_t ls_oob_auth_ok_encode(const struct ls_oob_auth_ok *m, uint8_t *out)
{
	memcpy(out, m->mac, LS_OOB_MAC_LEN);
	return LS_OOB_AUTH_OK_LEN;
}

/* Parse AUTH_OK strictly (exact length). */
int ls_oob_auth_ok_parse(const uint8_t *p, size_t len, struct ls_oob_auth_ok *m,
			 struct ls_err *err)
{
	memset(m, 0, sizeof(*m));
	if (len != LS_OOB_AUTH_OK_LEN)
		return ls_errf(err, "AUTH_OK: %zu bytes, expected %d", len,
				LS_OOB_AUTH_OK_LEN);
	memcpy(m->mac, p, LS_OOB_MAC_LEN);
	return 0;
}

/* Payload length of a STAMPS message with count pairs. */
size_t ls_oob_stamps_len(uint64_t count)
{
	return 8 + 16 * (size_t)count;
}

/* Encode STAMPS: count, then (start, end) pairs. */
void ls_oob_stamps_encode(const uint64_t *pairs, uint64_t count, uint8_t *out)
{
	put64(out, count);
	for (uint64_t i = 0; i < 2 * count; i++)
		put64(out + 8 + 8 * i, pairs[i]);
}

/* Parse STAMPS into pairs[2 * max_count]; end must not precede start. */
int ls_oob_stamps_parse(const uint8_t *p, size_t len, uint64_t max_count,
			uint64_t *pairs, uint64_t *count, struct ls_err *err)
{
	uint64_t n;

	if (len < 8)
		return ls_errf(err, "STAMPS: %zu bytes is too short", len);
	n = get64(p);
	if (n > max_count)
		return ls_errf(err, "STAMPS: %llu stamps, at most %llu expected",
			       (unsigned long long)n, (unsigned long long)max_count);
	if ((len - 8) % 16 || (len - 8) / 16 != n)
		return ls_errf(err, "STAMPS: length %zu does not match %llu stamps", len,
			       (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t a = get64(p + 8 + 16 * i), b = get64(p + 16 + 16 * i);

		if (b < a)
			return ls_errf(err, "STAMPS: stamp %llu ends before it starts",
				       (unsigned long long)i);
		pairs[2 * i] = a;
		pairs[2 * i + 1] = b;
	}
	*count = n;
	return 0;
}

/* ---- sockets ---- */

/* Milliseconds left until deadline (CLOCK_MONOTONIC ns), -1 = none. */
static int ms_left(uint64_t deadline)
{
	uint64_t now;

	if (!deadline)
		return -1;
	now = ls_now_ns();
	if (now >= deadline)
		return 0;
	return (int)((deadline - now + 999999) / 1000000);
}

/* Deadline for a timeout (0 = none). */
static uint64_t deadline_of(uint64_t timeout_ns)
{
	return timeout_ns ? ls_now_ns() + timeout_ns : 0;
}

/* Wait until fd is ready for events, or the deadline passes. */
static int wait_fd(int fd, short events, uint64_t deadline, const char *what,
		   const char *peer, struct ls_err *err)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int r;

	for (;;) {
		r = poll(&pfd, 1, ms_left(deadline));
		if (r > 0)
			return 0;
		if (r == 0)
			return ls_errcf(err, LS_E_PEER, "%s %s: timed out", what, peer);
		if (errno != EINTR)
			return ls_errnof(err, errno, "%s %s: poll", what, peer);
	}
}

/* Format a socket address as host:port. */
static void addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
	}
	snprintf(buf, len, "%s:%u", host, port);
}

/*
 * Socket options of a control connection: no Nagle delay, and a dead or
 * vanished peer is noticed within seconds even while the connection is idle
 * during a run (keepalive probes after LS_OOB_KEEPIDLE s, every
 * LS_OOB_KEEPINTVL s, LS_OOB_KEEPCNT of them) or has unacknowledged data
 * (TCP_USER_TIMEOUT).
 */
static void tune_socket(int fd)
{
	int one = 1, idle = LS_OOB_KEEPIDLE, intvl = LS_OOB_KEEPINTVL, cnt = LS_OOB_KEEPCNT;
	unsigned int uto = LS_OOB_USER_TIMEOUT_MS;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto));
}

/* Listen on host:port; fails on a port in use. */
int ls_oob_listen(const char *host, uint16_t port, int *lfd, struct ls_err *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL, *ai;
	char pbuf[8];
	int fd = -1, e = 0, one = 1, r;

	snprintf(pbuf, sizeof(pbuf), "%u", port);
	r = getaddrinfo(host && *host ? host : NULL, pbuf, &hints, &res);
	if (r)
		return ls_errf(err, "listen on %s:%u: %s", host && *host ? host : "*",
			       port, gai_strerror(r));
	/* Prefer IPv6 any (dual stack) when no host is given. */
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 8))
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		if (e == EADDRINUSE)
			return ls_errf(err, "listen on port %u: port already in use "
				       "(another responder? pick one with -p)", port);
		return ls_errnof(err, e, "listen on %s:%u", host && *host ? host : "*", port);
	}
	*lfd = fd;
	return 0;
}

/* Accept one connection within timeout_ns (0 = forever). */
int ls_oob_accept_conn(int lfd, uint64_t timeout_ns, struct ls_oob *c,
		       struct ls_err *err)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd;

	c->fd = -1;
	if (wait_fd(lfd, POLLIN, deadline_of(timeout_ns), "wait for a prober on", "port", err))
		return -1;
	fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
	if (fd < 0)
		return ls_errnof(err, errno, "accept");
	tune_socket(fd);
	c->fd = fd;
	addr_str((struct sockaddr *)&ss, c->peer, sizeof(c->peer));
	return 0;
}

/* A failed connect's error: LS_E_PEER_REFUSED when nothing listens there. */
static int connect_failed(struct ls_err *err, int e, const char *peer)
{
	ls_errnof(err, e, "connect to %s", peer);
	if (err && e == ECONNREFUSED)
		err->code = LS_E_PEER_REFUSED;
	return -1;
}

/* Non-blocking connect to one address within the deadline. */
static int connect_one(const struct addrinfo *ai, uint64_t deadline, int *out,
		       const char *peer, struct ls_err *err)
{
	int fd, e = 0, flags;
	socklen_t el = sizeof(e);

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ls_errnof(err, errno, "socket for %s", peer);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
		e = errno;
		close(fd);
		return connect_failed(err, e, peer);
	}
	if (wait_fd(fd, POLLOUT, deadline, "connect to", peer, err)) {
		close(fd);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) || e) {
		close(fd);
		return connect_failed(err, e ? e : errno, peer);
	}
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	tune_socket(fd);
	*out = fd;
	return 0;
}

/* Connect to host:port, giving up after timeout_ns. */
int ls_oob_connect(const char *host, uint16_t port, uint64_t timeout_ns,
		   struct ls_oob *c, struct ls_err *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	uint64_t deadline = deadline_of(timeout_ns);
	struct addrinfo *res = NULL, *ai;
	char pbuf[8];
	int r, fd = -1;

	c->fd = -1;
	snprintf(c->peer, sizeof(c->peer), "%s:%u", host, port);
	snprintf(pbuf, sizeof(pbuf), "%u", port);
	r = getaddrinfo(host, pbuf, &hints, &res);
	if (r)
		return ls_errf(err, "resolve peer %s: %s", host, gai_strerror(r));
	r = -1;
	for (ai = res; ai; ai = ai->ai_next) {
		r = connect_one(ai, deadline, &fd, c->peer, err);
		if (!r)
			break;
	}
	freeaddrinfo(res);
	if (r)
		return -1;
	c->fd = fd;
	return 0;
}

/* Write all of buf before the deadline. */
static int write_all(struct ls_oob *c, const uint8_t *buf, size_t len,
		     uint64_t deadline, struct ls_err *err)
{
	while (len) {
		ssize_t n;

		if (wait_fd(c->fd, POLLOUT, deadline, "send to", c->peer, err))
			return -1;
		n = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return ls_errnof(err, errno, "send to %s", c->peer);
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read exactly len bytes before the deadline; EOF is an error. */
static int read_all(struct ls_oob *c, uint8_t *buf, size_t len, uint64_t deadline,
		    struct ls_err *err)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n;

		if (wait_fd(c->fd, POLLIN, deadline, "receive from", c->peer, err))
			return got ? ls_err_wrap(err, "truncated message (%zu of %zu bytes)",
						 got, len) : -1;
		n = recv(c->fd, buf + got, len - got, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			/* A peer that closes with our frame unread resets instead. */
			if (errno == ECONNRESET && got)
				return ls_errf(err, "truncated message (%zu of %zu bytes): %s reset the "
					       "control connection", got, len, c->peer);
			if (errno == ECONNRESET)
				return ls_errf(err, "%s reset the control connection", c->peer);
			return ls_errnof(err, errno, "receive from %s", c->peer);
		}
		if (!n && got)
			return ls_errf(err, "truncated message (%zu of %zu bytes): %s closed the "
				       "control connection", got, len, c->peer);
		if (!n)
			return ls_errf(err, "%s closed the control connection", c->peer);
		got += (size_t)n;
	}
	return 0;
}

/* Send one frame within timeout_ns. */
int ls_oob_send(struct ls_oob *c, uint16_t type, uint32_t tag, const void *payload,
		size_t len, uint64_t timeout_ns, struct ls_err *err)
{
	uint64_t deadline = deadline_of(timeout_ns);
	uint8_t hdr[LS_OOB_HDR_LEN];

	if (c->fd < 0)
		return ls_errf(err, "send %s: control connection is closed",
			       ls_oob_type_name(type));
	if (len > LS_OOB_MAX_PAYLOAD)
		return ls_errf(err, "send %s: %zu bytes exceed the frame limit",
			       ls_oob_type_name(type), len);
	ls_oob_hdr_encode(hdr, type, tag, (uint32_t)len);
	if (write_all(c, hdr, sizeof(hdr), deadline, err) ||
	    (len && write_all(c, payload, len, deadline, err)))
		return ls_err_wrap(err, "send %s", ls_oob_type_name(type));
	return 0;
}

/* Receive one frame within timeout_ns. */
int ls_oob_recv(struct ls_oob *c, struct ls_oob_msg *m, uint32_t max_len,
		uint64_t timeout_ns, struct ls_err *err)
{
	uint64_t deadline = deadline_of(timeout_ns);
	uint8_t hdr[LS_OOB_HDR_LEN];

	m->payload = NULL;
	if (c->fd < 0)
		return ls_errf(err, "receive: control connection is closed");
	if (read_all(c, hdr, sizeof(hdr), deadline, err))
		return -1;
	if (ls_oob_hdr_parse(hdr, sizeof(hdr), &m->hdr, max_len, err))
		return ls_err_wrap(err, "from %s", c->peer);
	m->payload = malloc(m->hdr.length ? m->hdr.length : 1);
	if (!m->payload)
		return ls_errnof(err, ENOMEM, "receive %u bytes", m->hdr.length);
	if (read_all(c, m->payload, m->hdr.length, deadline, err)) {
		free(m->payload);
		m->payload = NULL;
		return ls_err_wrap(err, "%s payload", ls_oob_type_name(m->hdr.type));
	}
	return 0;
}

/* Receive a frame of type want; a peer's ERROR frame becomes our error. */
int ls_oob_expect(struct ls_oob *c, uint16_t want, struct ls_oob_msg *m,
		  uint32_t max_len, uint64_t timeout_ns, struct ls_err *err)
{
	struct ls_oob_error e;

	if (ls_oob_recv(c, m, max_len, timeout_ns, err))
		return ls_err_wrap(err, "waiting for %s", ls_oob_type_name(want));
	if (m->hdr.type == want)
		return 0;
	if (m->hdr.type == LS_OOB_ERROR &&
	    !ls_oob_error_parse(m->payload, m->hdr.length, &e, err)) {
		free(m->payload);
		m->payload = NULL;
		return ls_errf(err, "peer %s reported: %s", c->peer, e.text);
	}
	ls_errf(err, "protocol error: %s sent %s while %s was expected", c->peer,
		ls_oob_type_name(m->hdr.type), ls_oob_type_name(want));
	free(m->payload);
	m->payload = NULL;
	return -1;
}

/* Tell the peer why we give up (best effort). */
void ls_oob_send_error(struct ls_oob *c, uint32_t code, const char *text)
{
	uint8_t buf[LS_OOB_ERROR_MAX_LEN];
	struct ls_oob_error e = { .code = code };
	size_t n;

	if (c->fd < 0)
		return;
	snprintf(e.text, sizeof(e.text), "%s", text);
	n = ls_oob_error_encode(&e, buf);
	ls_oob_send(c, LS_OOB_ERROR, 0, buf, n, 1000000000ull, NULL);
}

/* Send a tagged blob (tag must be non-zero). */
int ls_oob_send_blob(struct ls_oob *c, uint32_t tag, const void *data, size_t len,
		     uint64_t timeout_ns, struct ls_err *err)
{
	if (!tag)
		return ls_errf(err, "send blob: tag must be non-zero");
	return ls_oob_send(c, LS_OOB_BLOB, tag, data, len, timeout_ns, err);
}

/* Receive a tagged blob; the tag must match. */
int ls_oob_recv_blob(struct ls_oob *c, uint32_t tag, void **data, size_t *len,
		     uint32_t max_len, uint64_t timeout_ns, struct ls_err *err)
{
	struct ls_oob_msg m;

	if (ls_oob_expect(c, LS_OOB_BLOB, &m, max_len, timeout_ns, err))
		return -1;
	if (m.hdr.tag != tag) {
		free(m.payload);
		return ls_errf(err, "blob from %s has tag 0x%x, expected 0x%x", c->peer,
			       m.hdr.tag, tag);
	}
	*data = m.payload;
	*len = m.hdr.length;
	return 0;
}

/* Close the connection (idempotent). */
void ls_oob_close(struct ls_oob *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
