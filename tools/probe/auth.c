// SPDX-License-Identifier: GPL-2.0
/* Mutual authentication of prober and responder by a shared key (HMAC-SHA-256, libcrypto). */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

/* The labels that start each role's MAC input (never a prefix of the other). */
static const char *const role_label[] = {
	[LS_AUTH_PROBER] = "latsplit-prober",
	[LS_AUTH_RESPONDER] = "latsplit-responder",
};

static const char *const role_name[] = {
	[LS_AUTH_PROBER] = "prober",
	[LS_AUTH_RESPONDER] = "responder",
};

/* HMAC-SHA-256 of msg under key into mac. */
int ls_auth_hmac_sha256(const uint8_t *key, size_t klen, const uint8_t *msg, size_t mlen,
			uint8_t mac[LS_OOB_MAC_LEN], struct ls_err *err)
{
	static const uint8_t none[1];
	unsigned int n = 0;

	if (klen > INT32_MAX)
		return ls_errf(err, "HMAC-SHA-256: key of %zu bytes is too long", klen);
	if (!HMAC(EVP_sha256(), klen ? key : none, (int)klen, mlen ? msg : none, mlen, mac, &n) ||
	    n != LS_OOB_MAC_LEN)
		return ls_errf(err, "HMAC-SHA-256: OpenSSL failed");
	return 0;
}

/* Read a key file that only its owner (root or us) may access. */
int ls_auth_key_load(const char *path, struct ls_auth_key *k, struct ls_err *err)
{
	struct stat st;
	size_t got = 0;
	int fd, rc = -1;

	k->len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return ls_errnof(err, errno, "key file %s", path);
	if (fstat(fd, &st)) {
		ls_errnof(err, errno, "key file %s: stat", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ls_errf(err, "key file %s is not a regular file", path);
		goto out;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		ls_errf(err, "key file %s is owned by uid %u, not by root or uid %u", path,
			(unsigned int)st.st_uid, (unsigned int)geteuid());
		goto out;
	}
	if (st.st_mode & 077) {
		ls_errf(err, "key file %s has mode %04o: group or others may access it "
			"(chmod 600 %s)", path, (unsigned int)(st.st_mode & 07777), path);
		goto out;
	}
	if (st.st_size < LS_AUTH_KEY_MIN || st.st_size > LS_AUTH_KEY_MAX) {
		ls_errf(err, "key file %s holds %lld bytes: a key has %d to %d (e.g. "
			"head -c 32 /dev/urandom > %s)", path, (long long)st.st_size,
			LS_AUTH_KEY_MIN, LS_AUTH_KEY_MAX, path);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, k->b + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ls_errnof(err, errno, "key file %s: read", path);
			goto out;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	if (got != (size_t)st.st_size) {
		ls_errf(err, "key file %s: read %zu of %lld bytes (changed while read?)", path, got,
			(long long)st.st_size);
		goto out;
	}
	k->len = got;
	rc = 0;
out:
	close(fd);
	if (rc)
		ls_auth_key_wipe(k);
	return rc;
}

/* Wipe a key from memory. */
void ls_auth_key_wipe(struct ls_auth_key *k)
{
	OPENSSL_cleanse(k, sizeof(*k));
}

/* Check that the --key file loads; the key is wiped at once. */
int ls_auth_key_check(const char *path, struct ls_err *err)
{
	struct ls_auth_key key;

	if (ls_auth_key_load(path, &key, err))
		return ls_err_wrap(err, "--key");
	ls_auth_key_wipe(&key);
	return 0;
}

/* Role's proof: HMAC(key, label || nonce_r || nonce_p). */
int ls_auth_prove(const struct ls_auth_key *k, enum ls_auth_role role,
		  const uint8_t nonce_r[LS_OOB_NONCE_LEN], const uint8_t nonce_p[LS_OOB_NONCE_LEN],
		  uint8_t mac[LS_OOB_MAC_LEN], struct ls_err *err)
{
	uint8_t msg[32 + 2 * LS_OOB_NONCE_LEN];
	size_t n = strlen(role_label[role]);
	int rc;

	if (k->len < LS_AUTH_KEY_MIN)
		return ls_errf(err, "authentication: no key");
	memcpy(msg, role_label[role], n);
	memcpy(msg + n, nonce_r, LS_OOB_NONCE_LEN);
	memcpy(msg + n + LS_OOB_NONCE_LEN, nonce_p, LS_OOB_NONCE_LEN);
	rc = ls_auth_hmac_sha256(k->b, k->len, msg, n + 2 * LS_OOB_NONCE_LEN, mac, err);
	OPENSSL_cleanse(msg, sizeof(msg));
	return rc;
}

/* Check role's proof over the nonces in constant time. */
int ls_auth_verify(const struct ls_auth_key *k, enum ls_auth_role role,
		   const uint8_t nonce_r[LS_OOB_NONCE_LEN], const uint8_t nonce_p[LS_OOB_NONCE_LEN],
		   const uint8_t mac[LS_OOB_MAC_LEN], struct ls_err *err)
{
	uint8_t want[LS_OOB_MAC_LEN];
	int rc;

	if (ls_auth_prove(k, role, nonce_r, nonce_p, want, err))
		return -1;
	rc = CRYPTO_memcmp(want, mac, LS_OOB_MAC_LEN);
	OPENSSL_cleanse(want, sizeof(want));
	if (rc)
		return ls_errf(err, "authentication failed: the %s's proof does not match this "
			       "%s's key", role_name[role], role_name[!role]);
	return 0;
}

/*
 * The payload bound of the handshake's receives: the frame header bounds
 * each AUTH type to its exact length; this lets the peer's ERROR through.
 */
#define EXPECT_MAX	LS_OOB_ERROR_MAX_LEN
_Static_assert(EXPECT_MAX >= LS_OOB_AUTH_PROOF_LEN, "AUTH frames fit");

/* Fill a nonce from the OpenSSL CSPRNG. */
static int nonce(uint8_t out[LS_OOB_NONCE_LEN], struct ls_err *err)
{
	if (RAND_bytes(out, LS_OOB_NONCE_LEN) != 1)
		return ls_errf(err, "authentication: OpenSSL RAND_bytes failed");
	return 0;
}

/* Responder: AUTH, then with a key the prober's proof and ours. */
int ls_auth_serve(struct ls_oob *c, const struct ls_auth_key *k, uint64_t timeout_ns,
		  struct ls_err *err)
{
	struct ls_oob_auth a = { .mode = k ? LS_OOB_AUTH_HMAC_SHA256 : LS_OOB_AUTH_INSECURE };
	uint8_t buf[LS_OOB_AUTH_PROOF_LEN];
	struct ls_oob_auth_proof pr;
	struct ls_oob_auth_ok ok;
	struct ls_oob_msg m;
	int rc;

	if (k && nonce(a.nonce, err))
		return -1;
	if (ls_oob_send(c, LS_OOB_AUTH, 0, buf, ls_oob_auth_encode(&a, buf), timeout_ns, err))
		return ls_err_wrap(err, "authentication");
	if (!k)
		return 0;
	if (ls_oob_expect(c, LS_OOB_AUTH_PROOF, &m, EXPECT_MAX, timeout_ns, err))
		return ls_err_wrap(err, "authentication failed");
	rc = ls_oob_auth_proof_parse(m.payload, m.hdr.length, &pr, err);
	free(m.payload);
	if (rc)
		return ls_err_wrap(err, "authentication failed");
	if (ls_auth_verify(k, LS_AUTH_PROBER, a.nonce, pr.nonce, pr.mac, err) ||
	    ls_auth_prove(k, LS_AUTH_RESPONDER, a.nonce, pr.nonce, ok.mac, err))
		return -1;
	if (ls_oob_send(c, LS_OOB_AUTH_OK, 0, buf, ls_oob_auth_ok_encode(&ok, buf), timeout_ns,
			err))
		return ls_err_wrap(err, "authentication");
	return 0;
}

/* Prober: read AUTH; with a key, prove it and check the responder's proof. */
int ls_auth_join(struct ls_oob *c, const struct ls_auth_key *k, uint64_t timeout_ns,
		 struct ls_err *err)
{
	uint8_t buf[LS_OOB_AUTH_PROOF_LEN];
	struct ls_oob_auth_proof pr;
	struct ls_oob_auth_ok ok;
	struct ls_oob_auth a;
	struct ls_oob_msg m;
	int rc;

	if (ls_oob_expect(c, LS_OOB_AUTH, &m, EXPECT_MAX, timeout_ns, err))
		return ls_err_wrap(err, "authentication");
	rc = ls_oob_auth_parse(m.payload, m.hdr.length, &a, err);
	free(m.payload);
	if (rc)
		return ls_err_wrap(err, "authentication");
	if (a.mode == LS_OOB_AUTH_INSECURE) {
		if (k)
			return ls_errcf(err, LS_E_USAGE, "responder %s runs without a key "
					"(--insecure); refusing because --key was given", c->peer);
		return 0;
	}
	if (!k)
		return ls_errcf(err, LS_E_USAGE, "responder %s requires a key: give --key FILE "
				"with the responder's key", c->peer);
	if (nonce(pr.nonce, err) ||
	    ls_auth_prove(k, LS_AUTH_PROBER, a.nonce, pr.nonce, pr.mac, err))
		return -1;
	if (ls_oob_send(c, LS_OOB_AUTH_PROOF, 0, buf, ls_oob_auth_proof_encode(&pr, buf),
			timeout_ns, err))
		return ls_err_wrap(err, "authentication");
	if (ls_oob_expect(c, LS_OOB_AUTH_OK, &m, EXPECT_MAX, timeout_ns, err))
		return ls_err_wrap(err, "authentication");
	rc = ls_oob_auth_ok_parse(m.payload, m.hdr.length, &ok, err);
	free(m.payload);
	if (rc)
		return ls_err_wrap(err, "authentication failed");
	return ls_auth_verify(k, LS_AUTH_RESPONDER, a.nonce, pr.nonce, ok.mac, err);
}
