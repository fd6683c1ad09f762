/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who may talk to a responder: mutual authentication of the prober and the
 * responder by a shared key, on the OOB control connection, before any
 * other frame (Documentation/security.rst has the threat model).
 *
 * The responder speaks first (all MACs are HMAC-SHA-256 under the key):
 *
 *	R -> P	AUTH       { mode, nonce_r }		mode 0: insecure, no nonce
 *	P -> R	AUTH_PROOF { nonce_p, HMAC("latsplit-prober" || nonce_r || nonce_p) }
 *	R -> P	AUTH_OK    { HMAC("latsplit-responder" || nonce_r || nonce_p) }
 *		or ERROR "authentication failed: ..."
 *
 * Nonces are 32 random bytes from the OpenSSL CSPRNG, fresh per connection;
 * MACs are compared in constant time. The role label keeps one side's proof
 * from being accepted as the other's (reflection), the two nonces keep a
 * proof of one connection from being replayed on another. Nothing after the
 * handshake is authenticated or encrypted.
 */
#ifndef LS_AUTH_H
#define LS_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oob.h"
#include "util.h"

#define LS_AUTH_KEY_MIN		16	/* bytes of a key file, at least */
#define LS_AUTH_KEY_MAX		4096	/* and at most */

/* A shared key, as read from its file (the file's bytes as they are). */
struct ls_auth_key {
	size_t len;
	uint8_t b[LS_AUTH_KEY_MAX];
};

/* Which side computes a proof: the label that starts its MAC's input. */
enum ls_auth_role { LS_AUTH_PROBER = 0, LS_AUTH_RESPONDER = 1 };

/* HMAC-SHA-256 of msg under key (any key length) into mac[32]; 0 or an error. */
int ls_auth_hmac_sha256(const uint8_t *key, size_t klen, const uint8_t *msg, size_t mlen,
			uint8_t mac[LS_OOB_MAC_LEN], struct ls_err *err);

/*
 * Read a key file: a regular file owned by root or the effective user, with
 * no permission for group or others, LS_AUTH_KEY_MIN..LS_AUTH_KEY_MAX bytes.
 * Errors name the file (and its mode or size).
 */
int ls_auth_key_load(const char *path, struct ls_auth_key *k, struct ls_err *err);
/* Wipe a key from memory. */
void ls_auth_key_wipe(struct ls_auth_key *k);
/*
 * Check that the key file given as --key loads (before any device is
 * opened; the key itself is wiped at once): 0, or -1 with "--key: why".
 */
int ls_auth_key_check(const char *path, struct ls_err *err);

/* Role's proof over the session's nonces: HMAC(key, label || nonce_r || nonce_p). */
int ls_auth_prove(const struct ls_auth_key *k, enum ls_auth_role role,
		  const uint8_t nonce_r[LS_OOB_NONCE_LEN], const uint8_t nonce_p[LS_OOB_NONCE_LEN],
		  uint8_t mac[LS_OOB_MAC_LEN], struct ls_err *err);
/* Check role's proof mac over the nonces (constant time); 0 when it matches. */
int ls_auth_verify(const struct ls_auth_key *k, enum ls_auth_role role,
		   const uint8_t nonce_r[LS_OOB_NONCE_LEN], const uint8_t nonce_p[LS_OOB_NONCE_LEN],
		   const uint8_t mac[LS_OOB_MAC_LEN], struct ls_err *err);

/*
 * Responder: open a fresh control connection with AUTH and, with a key
 * (k non-NULL), admit the prober only if it proves the key and prove it back.
 * k NULL: --insecure, anyone is admitted. Fails with "authentication failed"
 * (the caller logs it with the peer and sends the ERROR).
 */
int ls_auth_serve(struct ls_oob *c, const struct ls_auth_key *k, uint64_t timeout_ns,
		  struct ls_err *err);
/*
 * Prober: read the responder's AUTH right after connecting; with a key,
 * prove it and check the responder's proof; without one, go on only with an
 * insecure responder. Refuses an insecure responder when k is given.
 */
int ls_auth_join(struct ls_oob *c, const struct ls_auth_key *k, uint64_t timeout_ns,
		 struct ls_err *err);

#endif /* LS_AUTH_H */
