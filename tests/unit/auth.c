// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the prober/responder authentication (tools/probe/auth.c):
 * the HMAC-SHA-256 wrapper against RFC 4231, the key file's checks (owner,
 * mode, size), the proofs (right key, wrong key, the other role's proof,
 * a proof replayed for another nonce) and the whole handshake over a
 * socketpair, responder in a child process.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "auth.h"

/* A key of n bytes, all set to c. */
static void key_fill(struct ls_auth_key *k, uint8_t c, size_t n)
{
	memset(k, 0, sizeof(*k));
	memset(k->b, c, n);
	k->len = n;
}

TEST(hmac_sha256_rfc4231_case2)
{
	static const uint8_t want[32] = {
		0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24, 0x26,
		0x08, 0x95, 0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83,
		0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43,
	};
	const char *msg = "what do ya want for nothing?";
	struct ls_err err = { 0 };
	uint8_t mac[32];

	ASSERT_EQ(0, ls_auth_hmac_sha256((const uint8_t *)"Jefe", 4, (const uint8_t *)msg,
					 strlen(msg), mac, &err));
	EXPECT_EQ(0, memcmp(mac, want, sizeof(want)));
}

/* Write n bytes of c to path with mode; returns path. */
static const char *key_file(const char *path, size_t n, mode_t mode)
{
	char b[8192];
	int fd;

	memset(b, 'k', sizeof(b));
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, b, n) != (ssize_t)n)
		abort();
	close(fd);
	if (chmod(path, mode))
		abort();
	return path;
}

TEST(key_file_checks)
{
	char dir[] = "/tmp/ls-auth-XXXXXX", path[64];
	struct ls_err err = { 0 };
	struct ls_auth_key k;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/key", dir);
	EXPECT_EQ(0, ls_auth_key_load(key_file(path, 32, 0600), &k, &err));
	EXPECT_EQ(32, k.len);
	EXPECT_EQ('k', k.b[31]);
	EXPECT_EQ(0, ls_auth_key_load(key_file(path, LS_AUTH_KEY_MIN, 0400), &k, &err));
	EXPECT_EQ(0, ls_auth_key_load(key_file(path, LS_AUTH_KEY_MAX, 0600), &k, &err));

	EXPECT_EQ(-1, ls_auth_key_load(key_file(path, 32, 0644), &k, &err));
	EXPECT_NE(NULL, strstr(err.msg, "mode 0644"));
	EXPECT_NE(NULL, strstr(err.msg, path));
	EXPECT_EQ(0, k.len);
	EXPECT_EQ(-1, ls_auth_key_load(key_file(path, 32, 0620), &k, &err));
	EXPECT_NE(NULL, strstr(err.msg, "mode 0620"));
	EXPECT_EQ(-1, ls_auth_key_load(key_file(path, 32, 0604), &k, &err));
	EXPECT_EQ(-1, ls_auth_key_load(key_file(path, LS_AUTH_KEY_MIN - 1, 0600), &k, &err));
	EXPECT_NE(NULL, strstr(err.msg, "15 bytes"));
	EXPECT_EQ(-1, ls_auth_key_load(key_file(path, LS_AUTH_KEY_MAX + 1, 0600), &k, &err));
	EXPECT_EQ(-1, ls_auth_key_load(dir, &k, &err));	/* a directory */
	EXPECT_NE(NULL, strstr(err.msg, "not a regular file"));
	unlink(path);
	EXPECT_EQ(-1, ls_auth_key_load(path, &k, &err));	/* missing */
	EXPECT_NE(NULL, strstr(err.msg, path));
	rmdir(dir);
}

TEST(proofs)
{
	uint8_t nr[LS_OOB_NONCE_LEN], np[LS_OOB_NONCE_LEN], nr2[LS_OOB_NONCE_LEN];
	uint8_t mp[LS_OOB_MAC_LEN], mr[LS_OOB_MAC_LEN];
	struct ls_auth_key k, wrong;
	struct ls_err err = { 0 };

	key_fill(&k, 0x11, 32);
	key_fill(&wrong, 0x11, 31);
	wrong.b[31] = 0x12;
	wrong.len = 32;
	memset(nr, 0xa5, sizeof(nr));
	memset(np, 0x5a, sizeof(np));
	memcpy(nr2, nr, sizeof(nr));
	nr2[31] ^= 1;
	ASSERT_EQ(0, ls_auth_prove(&k, LS_AUTH_PROBER, nr, np, mp, &err));
	ASSERT_EQ(0, ls_auth_prove(&k, LS_AUTH_RESPONDER, nr, np, mr, &err));
	/* the right key */
	EXPECT_EQ(0, ls_auth_verify(&k, LS_AUTH_PROBER, nr, np, mp, &err));
	EXPECT_EQ(0, ls_auth_verify(&k, LS_AUTH_RESPONDER, nr, np, mr, &err));
	/* a wrong key, either side */
	EXPECT_EQ(-1, ls_auth_verify(&wrong, LS_AUTH_PROBER, nr, np, mp, &err));
	EXPECT_NE(NULL, strstr(err.msg, "authentication failed"));
	EXPECT_EQ(-1, ls_auth_verify(&wrong, LS_AUTH_RESPONDER, nr, np, mr, &err));
	/* reflection: one role's proof is not the other's */
	EXPECT_NE(0, memcmp(mp, mr, sizeof(mp)));
	EXPECT_EQ(-1, ls_auth_verify(&k, LS_AUTH_PROBER, nr, np, mr, &err));
	EXPECT_EQ(-1, ls_auth_verify(&k, LS_AUTH_RESPONDER, nr, np, mp, &err));
	/* replay: a proof for other nonces, or the nonces swapped */
	EXPECT_EQ(-1, ls_auth_verify(&k, LS_AUTH_PROBER, nr2, np, mp, &err));
	EXPECT_EQ(-1, ls_auth_verify(&k, LS_AUTH_PROBER, np, nr, mp, &err));
	EXPECT_EQ(-1, ls_auth_verify(&k, LS_AUTH_RESPONDER, nr2, np, mr, &err));
	/* a flipped bit of the proof */
	mp[0] ^= 0x80;
	EXPECT_EQ(-1, ls_auth_verify(&k, LS_AUTH_PROBER, nr, np, mp, &err));
	/* no key, no proof */
	key_fill(&wrong, 0, 0);
	EXPECT_EQ(-1, ls_auth_prove(&wrong, LS_AUTH_PROBER, nr, np, mp, &err));
}

/*
 * One handshake over a socketpair: the responder (key rk, NULL: insecure)
 * in a child, whose exit status is 0 when it admitted the prober; the
 * prober (key pk) here, its result and message in *prc and err.
 */
static int handshake(const struct ls_auth_key *rk, const struct ls_auth_key *pk, int *prc,
		     struct ls_err *err)
{
	struct ls_oob r = { .fd = -1, .peer = "prober" }, p = { .fd = -1, .peer = "responder" };
	int sv[2], st = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -2;
	pid = fork();
	if (pid < 0)
		return -2;
	if (!pid) {
		struct ls_err e = { 0 };

		close(sv[1]);
		r.fd = sv[0];
		if (ls_auth_serve(&r, rk, 2000000000ull, &e)) {
			ls_oob_send_error(&r, 1, e.msg);
			_exit(1);
		}
		_exit(0);
	}
	close(sv[0]);
	p.fd = sv[1];
	*prc = ls_auth_join(&p, pk, 2000000000ull, err);
	if (*prc)
		ls_oob_send_error(&p, 1, err->msg);
	ls_oob_close(&p);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -2;
	return WEXITSTATUS(st);
}

TEST(handshake_over_a_socket)
{
	struct ls_auth_key k, other;
	struct ls_err err = { 0 };
	int prc = 0;

	key_fill(&k, 0x42, 32);
	key_fill(&other, 0x43, 32);
	/* the same key on both sides: both admit */
	EXPECT_EQ(0, handshake(&k, &k, &prc, &err));
	EXPECT_EQ(0, prc);
	/* a wrong key: the responder refuses and says so */
	EXPECT_EQ(1, handshake(&k, &other, &prc, &err));
	EXPECT_EQ(-1, prc);
	EXPECT_NE(NULL, strstr(err.msg, "authentication failed")) TH_LOG("%s", err.msg);
	/* a prober without a key facing a keyed responder */
	EXPECT_EQ(1, handshake(&k, NULL, &prc, &err));
	EXPECT_EQ(-1, prc);
	EXPECT_NE(NULL, strstr(err.msg, "give --key"));
	/* a prober with a key facing an insecure responder refuses */
	handshake(NULL, &k, &prc, &err);
	EXPECT_EQ(-1, prc);
	EXPECT_NE(NULL, strstr(err.msg, "--insecure"));
	EXPECT_NE(NULL, strstr(err.msg, "refusing because --key was given"));
	/* insecure on both sides */
	EXPECT_EQ(0, handshake(NULL, NULL, &prc, &err));
	EXPECT_EQ(0, prc);
}

TEST_HARNESS_MAIN
