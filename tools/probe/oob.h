/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Out-of-band (OOB) control channel between two latsplit peers: a TCP
 * connection carrying framed binary messages.
 *
 * Frame (all integers big-endian):
 *
 *	offset size field
 *	0      4    magic    "LSPB" (0x4c535042)
 *	4      2    version  LS_OOB_VERSION; anything else is rejected
 *	6      2    type     enum ls_oob_type
 *	8      4    tag      0, except for LS_OOB_BLOB (the caller's tag)
 *	12     4    length   payload bytes that follow (bounded per type)
 *	16     ...  payload
 *
 * Payloads have a fixed layout per type (see the ls_oob_*_parse
 * functions); the parsers are strict: exact lengths, known enum values,
 * reserved fields zero, counts consistent with lengths. Every blocking
 * operation takes a timeout.
 */
#ifndef LS_OOB_H
#define LS_OOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define LS_OOB_MAGIC		0x4c535042u	/* "LSPB" */
#define LS_OOB_VERSION		2	/* 2: AUTH frames open every session */
#define LS_OOB_HDR_LEN		16
#define LS_OOB_DEFAULT_PORT	19515		/* perftest uses 18515 */
/* Largest payload any frame may carry (responder stamps of a long run). */
#define LS_OOB_MAX_PAYLOAD	(256u << 20)
#define LS_OOB_MAX_SIZES	32		/* sizes in one sweep */
#define LS_OOB_TEXT_MAX		200		/* error text */
#define LS_OOB_MAX_COUNT	(1u << 23)	/* samples per run */
/* Control sockets: keepalive after 5 s idle, 3 probes 2 s apart; 15 s unacked data. */
#define LS_OOB_KEEPIDLE		5
#define LS_OOB_KEEPINTVL	2
#define LS_OOB_KEEPCNT		3
#define LS_OOB_USER_TIMEOUT_MS	15000

enum ls_oob_type {
	LS_OOB_HELLO	= 1,	/* prober -> responder: parameters + QP */
	LS_OOB_ACCEPT	= 2,	/* responder -> prober: QP + device facts */
	LS_OOB_RUN	= 3,	/* prober -> responder: start run (size) */
	LS_OOB_READY	= 4,	/* responder -> prober: buffers reset */
	LS_OOB_END	= 5,	/* prober -> responder: run ended */
	LS_OOB_STAMPS	= 6,	/* responder -> prober: per-iteration stamps */
	LS_OOB_BLOB	= 7,	/* either way: caller's tagged payload */
	LS_OOB_BYE	= 8,	/* either way: session over */
	LS_OOB_ERROR	= 9,	/* either way: code + text, then close */
	LS_OOB_AUTH	= 10,	/* responder -> prober, first: mode + responder nonce */
	LS_OOB_AUTH_PROOF = 11,	/* prober -> responder: prober nonce + its proof */
	LS_OOB_AUTH_OK	= 12,	/* responder -> prober: the responder's proof */
	LS_OOB_NR_TYPES
};

/* Verbs and flags carried in HELLO. */
enum ls_oob_verb { LS_OOB_VERB_WRITE = 0, LS_OOB_VERB_SEND = 1, LS_OOB_VERB_READ = 2 };
#define LS_OOB_F_EVENTS		0x1	/* completion events instead of busy poll */
#define LS_OOB_F_RDMA_CM	0x2	/* QP is connected by rdma_cm */
#define LS_OOB_F_MASK		0x3

/* A decoded frame header. */
struct ls_oob_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t tag;
	uint32_t length;
};

/* The QP endpoint one side tells the other. */
struct ls_oob_qp {
	uint32_t qpn;		/* 24 bits */
	uint32_t psn;		/* 24 bits */
	uint16_t lid;
	uint8_t gid[16];
	uint32_t rkey;
	uint64_t addr;		/* remote buffer the peer may WRITE / READ */
	uint32_t buf_len;	/* bytes at addr */
};

/* HELLO: the prober's parameters. Payload: 36 + 4 * nsizes + 44 bytes. */
struct ls_oob_hello {
	uint8_t verb;		/* enum ls_oob_verb */
	uint8_t flags;		/* LS_OOB_F_* */
	uint16_t mtu;		/* requested path MTU in bytes, 0 = active */
	uint8_t qp_timeout;	/* 0..31 */
	uint64_t iters;		/* per run; 0 with duration */
	uint64_t duration_ns;	/* per run; 0 with iters */
	uint64_t capacity;	/* samples the responder must keep per run */
	uint32_t nsizes;
	uint32_t sizes[LS_OOB_MAX_SIZES];
	struct ls_oob_qp qp;
};

/* ACCEPT: the responder's answer. */
struct ls_oob_accept {
	uint16_t mtu;		/* path MTU both sides use, bytes */
	uint16_t active_mtu;	/* responder's active port MTU, bytes */
	struct ls_oob_qp qp;
};

/* RUN / END / READY: one run of the session. */
struct ls_oob_run {
	uint32_t index;		/* run number in the session */
	uint32_t size;		/* message size (RUN) */
	uint64_t count;		/* iterations done (END), planned (RUN) */
};

/* ERROR: why a peer gives up. */
struct ls_oob_error {
	uint32_t code;		/* errno-like, informational */
	char text[LS_OOB_TEXT_MAX + 1];
};

/* AUTH modes: how the responder admits probers (see auth.h). */
enum ls_oob_auth_mode { LS_OOB_AUTH_INSECURE = 0, LS_OOB_AUTH_HMAC_SHA256 = 1 };
#define LS_OOB_NONCE_LEN	32
#define LS_OOB_MAC_LEN		32	/* HMAC-SHA-256 */

/* AUTH: the responder's first frame. Payload: mode, 3 reserved zero bytes, nonce. */
struct ls_oob_auth {
	uint8_t mode;		/* enum ls_oob_auth_mode */
	uint8_t nonce[LS_OOB_NONCE_LEN];	/* responder's; all zero when insecure */
};

/* AUTH_PROOF: the prober's nonce and its proof of the key. */
struct ls_oob_auth_proof {
	uint8_t nonce[LS_OOB_NONCE_LEN];
	uint8_t mac[LS_OOB_MAC_LEN];
};

/* AUTH_OK: the responder's proof of the key. */
struct ls_oob_auth_ok {
	uint8_t mac[LS_OOB_MAC_LEN];
};

/* One control connection. */
struct ls_oob {
	int fd;
	char peer[80];		/* "host:port" for messages */
};

/* A received frame; payload is malloc'd (free with free()). */
struct ls_oob_msg {
	struct ls_oob_hdr hdr;
	uint8_t *payload;
};

/* ---- wire format (pure functions, fuzzed) ---- */

/* Encode a frame header into 16 bytes. */
void ls_oob_hdr_encode(uint8_t *out, uint16_t type, uint32_t tag, uint32_t length);
/*
 * Parse and validate a 16-byte header; max_len bounds the payload, except an
 * ERROR's (bounded by LS_OOB_ERROR_MAX_LEN: a peer's reason is always read).
 */
int ls_oob_hdr_parse(const uint8_t *p, size_t len, struct ls_oob_hdr *h,
		     uint32_t max_len, struct ls_err *err);
/* Encoders return the payload length written to out (out sized by the caller). */
size_t ls_oob_hello_encode(const struct ls_oob_hello *m, uint8_t *out);
size_t ls_oob_accept_encode(const struct ls_oob_accept *m, uint8_t *out);
size_t ls_oob_run_encode(const struct ls_oob_run *m, uint8_t *out);
size_t ls_oob_error_encode(const struct ls_oob_error *m, uint8_t *out);
size_t ls_oob_auth_encode(const struct ls_oob_auth *m, uint8_t *out);
size_t ls_oob_auth_proof_encode(const struct ls_oob_auth_proof *m, uint8_t *out);
size_t ls_oob_auth_ok_encode(const struct ls_oob_auth_ok *m, uint8_t *out);
#define LS_OOB_HELLO_MAX_LEN	(36 + 4 * LS_OOB_MAX_SIZES + 44)
#define LS_OOB_ACCEPT_LEN	(4 + 44)
#define LS_OOB_RUN_LEN		16
#define LS_OOB_ERROR_MAX_LEN	(6 + LS_OOB_TEXT_MAX)
#define LS_OOB_AUTH_LEN		(4 + LS_OOB_NONCE_LEN)
#define LS_OOB_AUTH_PROOF_LEN	(LS_OOB_NONCE_LEN + LS_OOB_MAC_LEN)
#define LS_OOB_AUTH_OK_LEN	LS_OOB_MAC_LEN
/* Strict payload parsers. */
int ls_oob_hello_parse(const uint8_t *p, size_t len, struct ls_oob_hello *m,
		       struct ls_err *err);
int ls_oob_accept_parse(const uint8_t *p, size_t len, struct ls_oob_accept *m,
			struct ls_err *err);
int ls_oob_run_parse(const uint8_t *p, size_t len, struct ls_oob_run *m,
		     struct ls_err *err);
int ls_oob_error_parse(const uint8_t *p, size_t len, struct ls_oob_error *m,
		       struct ls_err *err);
int ls_oob_auth_parse(const uint8_t *p, size_t len, struct ls_oob_auth *m,
		      struct ls_err *err);
int ls_oob_auth_proof_parse(const uint8_t *p, size_t len, struct ls_oob_auth_proof *m,
			    struct ls_err *err);
int ls_oob_auth_ok_parse(const uint8_t *p, size_t len, struct ls_oob_auth_ok *m,
			 struct ls_err *err);
/* STAMPS payload: u64 count, then count pairs of u64 (start, end). */
size_t ls_oob_stamps_len(uint64_t count);
void ls_oob_stamps_encode(const uint64_t *pairs, uint64_t count, uint8_t *out);
int ls_oob_stamps_parse(const uint8_t *p, size_t len, uint64_t max_count,
			uint64_t *pairs, uint64_t *count, struct ls_err *err);
/* Name of a message type for logs ("HELLO", ..., "?"). */
const char *ls_oob_type_name(uint16_t type);

/* ---- connections ---- */

/* Listen on host:port (host NULL or "" = any); fails on a port in use. */
int ls_oob_listen(const char *host, uint16_t port, int *lfd, struct ls_err *err);
/* Accept one connection within timeout_ns (0 = wait forever). */
int ls_oob_accept_conn(int lfd, uint64_t timeout_ns, struct ls_oob *c,
		       struct ls_err *err);
/*
 * Connect to host:port, giving up after timeout_ns; err's code is
 * LS_E_PEER_REFUSED when the last address refused (nothing listens).
 */
int ls_oob_connect(const char *host, uint16_t port, uint64_t timeout_ns,
		   struct ls_oob *c, struct ls_err *err);
/* Send one frame (header + payload) within timeout_ns. */
int ls_oob_send(struct ls_oob *c, uint16_t type, uint32_t tag, const void *payload,
		size_t len, uint64_t timeout_ns, struct ls_err *err);
/* Receive one frame within timeout_ns; payload at most max_len bytes. */
int ls_oob_recv(struct ls_oob *c, struct ls_oob_msg *m, uint32_t max_len,
		uint64_t timeout_ns, struct ls_err *err);
/* Receive one frame that must be of type want (ERROR frames become errors). */
int ls_oob_expect(struct ls_oob *c, uint16_t want, struct ls_oob_msg *m,
		  uint32_t max_len, uint64_t timeout_ns, struct ls_err *err);
/* Tell the peer why we give up (best effort, short timeout). */
void ls_oob_send_error(struct ls_oob *c, uint32_t code, const char *text);
/*
 * Tagged blobs: the hook for callers (e.g. breakdown) to ship their own
 * data at the end of a session. recv_blob checks the tag and mallocs *data.
 */
int ls_oob_send_blob(struct ls_oob *c, uint32_t tag, const void *data, size_t len,
		     uint64_t timeout_ns, struct ls_err *err);
int ls_oob_recv_blob(struct ls_oob *c, uint32_t tag, void **data, size_t *len,
		     uint32_t max_len, uint64_t timeout_ns, struct ls_err *err);
/* Close the connection (idempotent). */
void ls_oob_close(struct ls_oob *c);

#endif /* LS_OOB_H */
