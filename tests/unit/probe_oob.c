// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the probe's out-of-band channel (tools/oob.c): the wire
 * format round-trips, the strict parsers reject every malformed field, and
 * the socket layer frames, times out, reports a peer's ERROR, detects a
 * truncated frame, refuses a port in use and matches blob tags.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "oob.h"

/* A valid HELLO for the tests to break. */
static void hello_fill(struct ls_oob_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->verb = LS_OOB_VERB_SEND;
	h->flags = LS_OOB_F_EVENTS;
	h->mtu = 1024;
	h->qp_timeout = 20;
	h->iters = 1000;
	h->capacity = 1000;
	h->nsizes = 3;
	h->sizes[0] = 4;
	h->sizes[1] = 4096;
	h->sizes[2] = 1u << 20;
	h->qp.qpn = 0x123456;
	h->qp.psn = 0xabcdef;
	h->qp.lid = 7;
	h->qp.gid[10] = h->qp.gid[11] = 0xff;
	h->qp.gid[12] = 192;
	h->qp.rkey = 0xdeadbeef;
	h->qp.addr = 0x7f0012345000ull;
	h->qp.buf_len = 1u << 20;
}

/* Parse an encoded HELLO after mutating byte off to val. */
static int hello_mut(size_t off, uint8_t val, struct ls_err *err)
{
	uint8_t b[LS_OOB_HELLO_MAX_LEN];
	struct ls_oob_hello h, out;
	size_t n;

	hello_fill(&h);
	n = ls_oob_hello_encode(&h, b);
	b[off] = val;
	return ls_oob_hello_parse(b, n, &out, err);
}

TEST(hello_round_trip)
{
	uint8_t b[LS_OOB_HELLO_MAX_LEN];
	struct ls_oob_hello h, out;
	struct ls_err err = { 0 };
	size_t n;

	hello_fill(&h);
	n = ls_oob_hello_encode(&h, b);
	EXPECT_EQ(36 + 4 * 3 + 44, n);
	ASSERT_EQ(0, ls_oob_hello_parse(b, n, &out, &err));
	EXPECT_EQ(0, memcmp(&h, &out, sizeof(h)));
	/* big-endian on the wire: qpn 0x123456 at offset 36 + 12 */
	EXPECT_EQ(0x00, b[48]);
	EXPECT_EQ(0x12, b[49]);
	EXPECT_EQ(0x56, b[51]);
}

TEST(hello_rejects_bad_fields)
{
	struct ls_err err = { 0 };

	EXPECT_EQ(0, hello_mut(0, LS_OOB_VERB_READ, &err));
	EXPECT_EQ(-1, hello_mut(0, 3, &err));		/* verb */
	EXPECT_NE(NULL, strstr(err.msg, "unknown verb"));
	EXPECT_EQ(-1, hello_mut(1, 0x80, &err));	/* flags */
	EXPECT_NE(NULL, strstr(err.msg, "flags"));
	EXPECT_EQ(-1, hello_mut(3, 0x01, &err));	/* MTU 1024 -> 1025 */
	EXPECT_NE(NULL, strstr(err.msg, "MTU"));
	EXPECT_EQ(-1, hello_mut(4, 32, &err));		/* QP timeout */
	EXPECT_EQ(-1, hello_mut(6, 1, &err));		/* reserved */
	EXPECT_NE(NULL, strstr(err.msg, "reserved"));
	EXPECT_EQ(-1, hello_mut(23, 1, &err));		/* duration as well as iters */
	EXPECT_NE(NULL, strstr(err.msg, "exactly one"));
	EXPECT_EQ(-1, hello_mut(35, 4, &err));		/* nsizes 3 -> 4: length mismatch */
	EXPECT_NE(NULL, strstr(err.msg, "length"));
	EXPECT_EQ(-1, hello_mut(35, 0, &err));		/* no sizes */
	EXPECT_EQ(-1, hello_mut(39, 0, &err));		/* size 4 -> 0 */
	EXPECT_NE(NULL, strstr(err.msg, "size"));
	EXPECT_EQ(-1, hello_mut(48, 1, &err));		/* QPN beyond 24 bits */
	EXPECT_NE(NULL, strstr(err.msg, "QP number"));
	EXPECT_EQ(-1, hello_mut(58, 1, &err));		/* QP reserved field */
}

TEST(hello_rejects_short_and_long)
{
	uint8_t b[LS_OOB_HELLO_MAX_LEN + 8];
	struct ls_oob_hello h, out;
	struct ls_err err = { 0 };
	size_t n;

	hello_fill(&h);
	n = ls_oob_hello_encode(&h, b);
	for (size_t k = 0; k < n; k++)
		EXPECT_EQ(-1, ls_oob_hello_parse(b, k, &out, &err));
	EXPECT_EQ(-1, ls_oob_hello_parse(b, n + 4, &out, &err));
}

TEST(header_checks)
{
	uint8_t b[LS_OOB_HDR_LEN];
	struct ls_oob_hdr h;
	struct ls_err err = { 0 };

	ls_oob_hdr_encode(b, LS_OOB_RUN, 0, LS_OOB_RUN_LEN);
	ASSERT_EQ(0, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
	EXPECT_EQ(LS_OOB_RUN, h.type);
	EXPECT_EQ(LS_OOB_RUN_LEN, h.length);
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, 15, &h, 1000, &err));
	EXPECT_NE(NULL, strstr(err.msg, "truncated"));
	b[0] = 'X';
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
	EXPECT_NE(NULL, strstr(err.msg, "bad magic"));
	ls_oob_hdr_encode(b, LS_OOB_RUN, 0, LS_OOB_RUN_LEN);
	b[5] = 1;	/* a peer of the version before AUTH */
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
	EXPECT_NE(NULL, strstr(err.msg, "protocol version 1"));
	ls_oob_hdr_encode(b, 0, 0, 0);
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
	ls_oob_hdr_encode(b, LS_OOB_NR_TYPES, 0, 0);
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
	EXPECT_NE(NULL, strstr(err.msg, "unknown message type"));
	ls_oob_hdr_encode(b, LS_OOB_RUN, 5, LS_OOB_RUN_LEN);	/* tag on a non-blob */
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
	ls_oob_hdr_encode(b, LS_OOB_RUN, 0, LS_OOB_RUN_LEN + 1);	/* over the type's limit */
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
	ls_oob_hdr_encode(b, LS_OOB_BLOB, 9, 2000);		/* over the caller's limit */
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
	EXPECT_NE(NULL, strstr(err.msg, "exceeds the limit of 1000"));
	ls_oob_hdr_encode(b, LS_OOB_BYE, 0, 1);
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
	/* An ERROR is read whatever the caller expected, up to its own limit. */
	ls_oob_hdr_encode(b, LS_OOB_ERROR, 0, LS_OOB_ERROR_MAX_LEN);
	EXPECT_EQ(0, ls_oob_hdr_parse(b, sizeof(b), &h, LS_OOB_ACCEPT_LEN, &err));
	ls_oob_hdr_encode(b, LS_OOB_ERROR, 0, LS_OOB_ERROR_MAX_LEN + 1);
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, sizeof(b), &h, 1000, &err));
}

TEST(auth_frames)
{
	uint8_t b[LS_OOB_AUTH_PROOF_LEN + 1];
	struct ls_oob_auth a = { .mode = LS_OOB_AUTH_HMAC_SHA256 }, ao;
	struct ls_oob_auth_proof p, po;
	struct ls_oob_auth_ok k, ko;
	struct ls_oob_hdr h;
	struct ls_err err = { 0 };

	for (int i = 0; i < LS_OOB_NONCE_LEN; i++)
		a.nonce[i] = p.nonce[i] = (uint8_t)(i + 1);
	for (int i = 0; i < LS_OOB_MAC_LEN; i++)
		p.mac[i] = k.mac[i] = (uint8_t)(0xf0 ^ i);
	/* round trips */
	ASSERT_EQ(LS_OOB_AUTH_LEN, ls_oob_auth_encode(&a, b));
	ASSERT_EQ(0, ls_oob_auth_parse(b, LS_OOB_AUTH_LEN, &ao, &err));
	EXPECT_EQ(LS_OOB_AUTH_HMAC_SHA256, ao.mode);
	EXPECT_EQ(0, memcmp(a.nonce, ao.nonce, LS_OOB_NONCE_LEN));
	/* exact length, reserved bytes zero, known mode */
	EXPECT_EQ(-1, ls_oob_auth_parse(b, LS_OOB_AUTH_LEN - 1, &ao, &err));
	EXPECT_EQ(-1, ls_oob_auth_parse(b, LS_OOB_AUTH_LEN + 1, &ao, &err));
	for (int i = 1; i < 4; i++) {
		ls_oob_auth_encode(&a, b);
		b[i] = 1;
		EXPECT_EQ(-1, ls_oob_auth_parse(b, LS_OOB_AUTH_LEN, &ao, &err));
		EXPECT_NE(NULL, strstr(err.msg, "reserved"));
	}
	ls_oob_auth_encode(&a, b);
	b[0] = 2;
	EXPECT_EQ(-1, ls_oob_auth_parse(b, LS_OOB_AUTH_LEN, &ao, &err));
	EXPECT_NE(NULL, strstr(err.msg, "unknown mode 2"));
	/* insecure: the nonce must be zero */
	a.mode = LS_OOB_AUTH_INSECURE;
	ls_oob_auth_encode(&a, b);
	EXPECT_EQ(-1, ls_oob_auth_parse(b, LS_OOB_AUTH_LEN, &ao, &err));
	memset(a.nonce, 0, sizeof(a.nonce));
	ls_oob_auth_encode(&a, b);
	EXPECT_EQ(0, ls_oob_auth_parse(b, LS_OOB_AUTH_LEN, &ao, &err));
	EXPECT_EQ(LS_OOB_AUTH_INSECURE, ao.mode);

	ASSERT_EQ(LS_OOB_AUTH_PROOF_LEN, ls_oob_auth_proof_encode(&p, b));
	ASSERT_EQ(0, ls_oob_auth_proof_parse(b, LS_OOB_AUTH_PROOF_LEN, &po, &err));
	EXPECT_EQ(0, memcmp(&p, &po, sizeof(p)));
	EXPECT_EQ(-1, ls_oob_auth_proof_parse(b, LS_OOB_AUTH_PROOF_LEN - 1, &po, &err));
	EXPECT_EQ(-1, ls_oob_auth_proof_parse(b, LS_OOB_AUTH_PROOF_LEN + 1, &po, &err));
	EXPECT_EQ(-1, ls_oob_auth_proof_parse(b, 0, &po, &err));

	ASSERT_EQ(LS_OOB_AUTH_OK_LEN, ls_oob_auth_ok_encode(&k, b));
	ASSERT_EQ(0, ls_oob_auth_ok_parse(b, LS_OOB_AUTH_OK_LEN, &ko, &err));
	EXPECT_EQ(0, memcmp(&k, &ko, sizeof(k)));
	EXPECT_EQ(-1, ls_oob_auth_ok_parse(b, LS_OOB_AUTH_OK_LEN - 1, &ko, &err));
	EXPECT_EQ(-1, ls_oob_auth_ok_parse(b, LS_OOB_AUTH_OK_LEN + 1, &ko, &err));

	/* headers: each AUTH type at its length, not one byte more */
	ls_oob_hdr_encode(b, LS_OOB_AUTH, 0, LS_OOB_AUTH_LEN);
	EXPECT_EQ(0, ls_oob_hdr_parse(b, LS_OOB_HDR_LEN, &h, LS_OOB_MAX_PAYLOAD, &err));
	EXPECT_STREQ("AUTH", ls_oob_type_name(h.type));
	ls_oob_hdr_encode(b, LS_OOB_AUTH, 0, LS_OOB_AUTH_LEN + 1);
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, LS_OOB_HDR_LEN, &h, LS_OOB_MAX_PAYLOAD, &err));
	ls_oob_hdr_encode(b, LS_OOB_AUTH_PROOF, 0, LS_OOB_AUTH_PROOF_LEN + 1);
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, LS_OOB_HDR_LEN, &h, LS_OOB_MAX_PAYLOAD, &err));
	ls_oob_hdr_encode(b, LS_OOB_AUTH_OK, 0, LS_OOB_AUTH_OK_LEN + 1);
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, LS_OOB_HDR_LEN, &h, LS_OOB_MAX_PAYLOAD, &err));
	ls_oob_hdr_encode(b, LS_OOB_AUTH_OK, 7, LS_OOB_AUTH_OK_LEN);	/* tag */
	EXPECT_EQ(-1, ls_oob_hdr_parse(b, LS_OOB_HDR_LEN, &h, LS_OOB_MAX_PAYLOAD, &err));
	EXPECT_STREQ("AUTH_PROOF", ls_oob_type_name(LS_OOB_AUTH_PROOF));
	EXPECT_STREQ("AUTH_OK", ls_oob_type_name(LS_OOB_AUTH_OK));
}

TEST(error_and_stamps)
{
	struct ls_oob_error e = { .code = 5 }, eo;
	uint8_t b[LS_OOB_ERROR_MAX_LEN], sb[8 + 32];
	uint64_t pairs[4] = { 10, 20, 30, 45 }, out[4], n = 0;
	struct ls_err err = { 0 };
	size_t len;

	snprintf(e.text, sizeof(e.text), "no answer\n");	/* newline becomes '?' */
	len = ls_oob_error_encode(&e, b);
	ASSERT_EQ(0, ls_oob_error_parse(b, len, &eo, &err));
	EXPECT_STREQ("no answer?", eo.text);
	b[6] = 0x01;
	EXPECT_EQ(-1, ls_oob_error_parse(b, len, &eo, &err));
	EXPECT_EQ(-1, ls_oob_error_parse(b, len - 1, &eo, &err));

	ls_oob_stamps_encode(pairs, 2, sb);
	ASSERT_EQ(0, ls_oob_stamps_parse(sb, sizeof(sb), 2, out, &n, &err));
	EXPECT_EQ(2, n);
	EXPECT_EQ(0, memcmp(pairs, out, sizeof(pairs)));
	EXPECT_EQ(-1, ls_oob_stamps_parse(sb, sizeof(sb), 1, out, &n, &err));	/* over max */
	EXPECT_EQ(-1, ls_oob_stamps_parse(sb, sizeof(sb) - 1, 2, out, &n, &err));
	pairs[3] = 29;						/* end before start */
	ls_oob_stamps_encode(pairs, 2, sb);
	EXPECT_EQ(-1, ls_oob_stamps_parse(sb, sizeof(sb), 2, out, &n, &err));
	EXPECT_NE(NULL, strstr(err.msg, "ends before it starts"));
}

TEST(socket_frames_blobs_errors)
{
	struct ls_oob a = { .fd = -1, .peer = "a" }, b = { .fd = -1, .peer = "b" };
	uint8_t h[LS_OOB_HDR_LEN];
	struct ls_err err = { 0 };
	struct ls_oob_msg m;
	void *data;
	size_t len;
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	a.fd = sv[0];
	b.fd = sv[1];
	ASSERT_EQ(0, ls_oob_send_blob(&a, 0x42, "kernel records", 14, 1000000000ull, &err));
	ASSERT_EQ(0, ls_oob_recv_blob(&b, 0x42, &data, &len, 1 << 20, 1000000000ull, &err));
	EXPECT_EQ(14, len);
	EXPECT_EQ(0, memcmp(data, "kernel records", 14));
	free(data);
	EXPECT_EQ(-1, ls_oob_send_blob(&a, 0, "x", 1, 1000000000ull, &err));	/* tag 0 */
	ASSERT_EQ(0, ls_oob_send_blob(&a, 0x43, "x", 1, 1000000000ull, &err));
	EXPECT_EQ(-1, ls_oob_recv_blob(&b, 0x42, &data, &len, 1 << 20, 1000000000ull, &err));
	EXPECT_NE(NULL, strstr(err.msg, "tag 0x43, expected 0x42"));
	/* A peer's ERROR frame becomes our error. */
	ls_oob_send_error(&a, 5, "bad things");
	EXPECT_EQ(-1, ls_oob_expect(&b, LS_OOB_READY, &m, 100, 1000000000ull, &err));
	EXPECT_NE(NULL, strstr(err.msg, "reported: bad things"));
	/* ... also one longer than the frame expected (a refusal's text while ACCEPT is due). */
	ls_oob_send_error(&a, 16, "busy: another prober (192.0.2.1:40000) is being served; "
			  "try again when its session ends");
	EXPECT_EQ(-1, ls_oob_expect(&b, LS_OOB_ACCEPT, &m, LS_OOB_ACCEPT_LEN, 1000000000ull, &err));
	EXPECT_NE(NULL, strstr(err.msg, "reported: busy: another prober"));
	/* Nothing arrives: the receive times out. */
	EXPECT_EQ(-1, ls_oob_recv(&b, &m, 100, 50000000ull, &err));
	EXPECT_NE(NULL, strstr(err.msg, "timed out"));
	/* A frame cut short by EOF. */
	ls_oob_hdr_encode(h, LS_OOB_RUN, 0, LS_OOB_RUN_LEN);
	ASSERT_EQ(sizeof(h), write(a.fd, h, sizeof(h)));
	ASSERT_EQ(4, write(a.fd, "abcd", 4));
	ls_oob_close(&a);
	EXPECT_EQ(-1, ls_oob_recv(&b, &m, 100, 1000000000ull, &err));
	EXPECT_NE(NULL, strstr(err.msg, "truncated message (4 of 16 bytes)"));
	ls_oob_close(&b);
	EXPECT_EQ(-1, ls_oob_send(&b, LS_OOB_BYE, 0, NULL, 0, 1000, &err));
}

TEST(listen_port_in_use_and_connect)
{
	struct ls_oob c = { .fd = -1 }, s = { .fd = -1 };
	struct ls_err err = { 0 };
	struct ls_oob_msg m = { .payload = NULL };
	int l1 = -1, l2 = -1;
	uint16_t port = 0;

	/* find a free port */
	for (port = 40000 + (getpid() % 20000); port < 65000; port++)
		if (!ls_oob_listen("127.0.0.1", port, &l1, &err))
			break;
	ASSERT_LE(0, l1);
	EXPECT_EQ(-1, ls_oob_listen("127.0.0.1", port, &l2, &err));
	EXPECT_NE(NULL, strstr(err.msg, "port already in use"));
	ASSERT_EQ(0, ls_oob_connect("127.0.0.1", port, 1000000000ull, &c, &err));
	ASSERT_EQ(0, ls_oob_accept_conn(l1, 1000000000ull, &s, &err));
	/* Both ends notice a vanished peer: keepalive and a user timeout. */
	for (int k = 0; k < 2; k++) {
		int fd = k ? s.fd : c.fd, v = 0;
		socklen_t vl = sizeof(v);

		ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, &vl));
		EXPECT_EQ(1, v);
		ASSERT_EQ(0, getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &v, &vl));
		EXPECT_EQ(LS_OOB_KEEPIDLE, v);
		ASSERT_EQ(0, getsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &v, &vl));
		EXPECT_EQ(LS_OOB_KEEPCNT, v);
		ASSERT_EQ(0, getsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &v, &vl));
		EXPECT_EQ(LS_OOB_USER_TIMEOUT_MS, v);
	}
	EXPECT_EQ(0, ls_oob_send(&c, LS_OOB_BYE, 0, NULL, 0, 1000000000ull, &err));
	EXPECT_EQ(0, ls_oob_expect(&s, LS_OOB_BYE, &m, 0, 1000000000ull, &err));
	free(m.payload);
	ls_oob_close(&c);
	ls_oob_close(&s);
	/* nobody accepts within the timeout */
	EXPECT_EQ(-1, ls_oob_accept_conn(l1, 20000000ull, &s, &err));
	EXPECT_NE(NULL, strstr(err.msg, "timed out"));
	close(l1);
	/* the port is closed now: refused, told apart (a prober may try again) */
	err.code = LS_E_FAILED;
	EXPECT_EQ(-1, ls_oob_connect("127.0.0.1", port, 1000000000ull, &c, &err));
	EXPECT_NE(NULL, strstr(err.msg, "refused"));
	EXPECT_EQ(LS_E_PEER_REFUSED, err.code);
	/* a failure that is not a refusal keeps another code */
	EXPECT_EQ(-1, ls_oob_connect("no-such-host.invalid", port, 1000000000ull, &c, &err));
	EXPECT_NE(LS_E_PEER_REFUSED, err.code);
}

TEST_HARNESS_MAIN
