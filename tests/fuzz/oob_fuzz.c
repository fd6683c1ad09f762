// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the probe's out-of-band message format (tools/oob.c).
 * Byte 0 picks what the rest of the input is fed to: a frame header, one
 * of the payload parsers (the AUTH handshake's frames among them), or a
 * byte stream read frame by frame through a socketpair with ls_oob_recv
 * (the responder's real receive path). Every payload that parses must
 * encode back to exactly the same bytes (the parsers accept only canonical
 * encodings), and a rejected input must come with a message. A HELLO that
 * parses is also checked against a responder's limits: one it accepts asks
 * for nothing beyond them, and the wait for a run's END stays within the
 * cap.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "oob.h"
#include "probe.h"

/* Abort with a message: libFuzzer records the input as a crash. */
static void fail(const char *what)
{
	fprintf(stderr, "oob_fuzz: %s\n", what);
	abort();
}

/* A rejection must say why. */
static void rejected(const struct ls_err *err)
{
	if (!err->msg[0])
		fail("parser rejected input without a message");
}

/* Parsed payloads re-encode to the same bytes. */
static void same(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, const char *what)
{
	if (an != bn || memcmp(a, b, an))
		fail(what);
}

/* Feed the bytes through a socketpair, frame by frame, as a responder reads them. */
static void stream(const uint8_t *p, size_t n)
{
	struct ls_oob c = { .fd = -1, .peer = "fuzz" };
	int sv[2];

	if (n > 60000 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return;
	if (write(sv[1], p, n) != (ssize_t)n) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	shutdown(sv[1], SHUT_WR);
	c.fd = sv[0];
	for (int i = 0; i < 64; i++) {
		struct ls_err err = { 0 };
		struct ls_oob_msg m;

		if (ls_oob_recv(&c, &m, 1u << 16, 1000000000ull, &err)) {
			rejected(&err);
			break;
		}
		if (m.hdr.length && !m.payload)
			fail("frame without payload");
		free(m.payload);
	}
	ls_oob_close(&c);
	close(sv[1]);
}

/* The frame header: rejected with a reason or re-encoded; then the bytes as a stream. */
static void fuzz_hdr(const uint8_t *p, size_t n)
{
	uint8_t out[LS_OOB_HDR_LEN];
	struct ls_err err = { 0 };
	struct ls_oob_hdr h;

	if (ls_oob_hdr_parse(p, n, &h, LS_OOB_MAX_PAYLOAD, &err)) {
		rejected(&err);
	} else {
		ls_oob_hdr_encode(out, h.type, h.tag, h.length);
		same(p, LS_OOB_HDR_LEN, out, LS_OOB_HDR_LEN, "header round trip");
	}
	stream(p, n);
}

/*
 * fuzz_MSG(): payload MSG (ls_oob_MSG_parse and _encode) is rejected with a
 * reason or re-encodes to exactly its bytes.
 */
#define DEFINE_ROUND_TRIP(msg, what)						\
static void fuzz_##msg(const uint8_t *p, size_t n)				\
{										\
	uint8_t out[LS_OOB_HELLO_MAX_LEN + LS_OOB_ERROR_MAX_LEN];		\
	struct ls_err err = { 0 };						\
	struct ls_oob_##msg m;							\
										\
	if (ls_oob_##msg##_parse(p, n, &m, &err))				\
		rejected(&err);							\
	else									\
		same(p, n, out, ls_oob_##msg##_encode(&m, out), what);		\
}

DEFINE_ROUND_TRIP(hello, "HELLO round trip")

/* Small limits, so the fuzzer reaches both sides of each. */
static const struct ls_probe_limits fuzz_lim = {
	.max_size = 4096, .max_samples = 1000, .max_session_samples = 4000,
	.max_run_ns = 1000000000ull,
};

/* A HELLO the limits accept asks for nothing beyond them; its RUNs neither. */
static void fuzz_hello_limits(const uint8_t *p, size_t n)
{
	struct ls_err err = { 0 };
	struct ls_oob_hello h;
	uint64_t need, cap, kept = 0;

	fuzz_hello(p, n);
	if (ls_oob_hello_parse(p, n, &h, &err))
		return;
	if (ls_probe_check_hello(&h, &fuzz_lim, 2048, &err)) {
		rejected(&err);
		return;
	}
	need = h.iters ? h.iters : h.capacity;
	for (uint32_t i = 0; i < h.nsizes; i++)
		if (h.sizes[i] > 2048)
			fail("HELLO over the size limits accepted");
	if (need > fuzz_lim.max_samples || need * h.nsizes > fuzz_lim.max_session_samples ||
	    h.duration_ns > fuzz_lim.max_run_ns)
		fail("HELLO over a sample or time limit accepted");
	for (uint32_t i = 0; i < h.nsizes; i++) {
		struct ls_oob_run rm = { .index = i, .size = h.sizes[i], .count = need };

		if (ls_probe_check_run(&rm, &h, &fuzz_lim, kept, &cap, &err))
			fail("RUN of an accepted HELLO refused");
		kept += cap;
		if (ls_probe_run_wait_ns(&h, cap, 10000000000ull, &fuzz_lim) >
		    fuzz_lim.max_run_ns + 20000000000ull)
			fail("END wait beyond its cap");
	}
	if (kept > fuzz_lim.max_session_samples)
		fail("session keeps more than its limit");
}
DEFINE_ROUND_TRIP(accept, "ACCEPT round trip")
DEFINE_ROUND_TRIP(run, "RUN round trip")
DEFINE_ROUND_TRIP(error, "ERROR round trip")
DEFINE_ROUND_TRIP(auth, "AUTH round trip")
DEFINE_ROUND_TRIP(auth_proof, "AUTH_PROOF round trip")
DEFINE_ROUND_TRIP(auth_ok, "AUTH_OK round trip")

/* STAMPS: rejected with a reason or re-encoded to exactly its bytes. */
static void fuzz_stamps(const uint8_t *p, size_t n)
{
	uint64_t cnt = 0, max = 256, *pairs = calloc(2 * max, sizeof(uint64_t));
	struct ls_err err = { 0 };
	uint8_t *enc;

	if (!pairs)
		return;
	if (ls_oob_stamps_parse(p, n, max, pairs, &cnt, &err)) {
		rejected(&err);
	} else {
		enc = malloc(ls_oob_stamps_len(cnt));
		if (enc) {
			ls_oob_stamps_encode(pairs, cnt, enc);
			same(p, n, enc, ls_oob_stamps_len(cnt), "STAMPS round trip");
			free(enc);
		}
	}
	free(pairs);
}

/* What byte 0 (modulo the count) feeds the rest of the input to. */
static void (*const targets[])(const uint8_t *p, size_t n) = {
	fuzz_hdr, fuzz_hello_limits, fuzz_accept, fuzz_run, fuzz_error, fuzz_stamps,
	fuzz_auth, fuzz_auth_proof, fuzz_auth_ok,
};

/* libFuzzer's entry: byte 0 picks the target, the rest is its input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size)
		targets[data[0] % (sizeof(targets) / sizeof(targets[0]))](data + 1, size - 1);
	return 0;
}
