// SPDX-License-Identifier: GPL-2.0
/* Peer lists for fleet runs: parse, validate, free. */
#include "peers.h"
#include "io.h"
#include "json.h"
#include "prom.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PEERS_FILE_MAX	(1u << 20)	/* bytes: 4096 names of 255 with room to spare */

/* A host name or address: letters, digits and . - _ : (IPv6), % (scope). */
static bool host_char_ok(unsigned char ch)
{
	return isalnum(ch) || strchr(".-_:%", ch);
}

/* Free a list filled by ls_peers_parse() or ls_peers_load(). */
void ls_peers_free(struct ls_peers *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

/* Append host (len bytes) to p unless it is bad or there already. */
static int add_host(const char *name, unsigned int line, const char *host, size_t len,
		    struct ls_peers *p, size_t *cap, struct ls_err *err)
{
	char *s;

	/* [V6]: the address inside, as getaddrinfo() takes it */
	if (len && host[0] == '[') {
		if (len < 3 || host[len - 1] != ']' || !memchr(host, ':', len))
			return ls_errcf(err, LS_E_USAGE, "%s:%u: '%.*s' is not [IPv6 address]", name, line,
					(int)(len > 64 ? 64 : len), host);
		host++;
		len -= 2;
	}
	if (len > LS_PEER_NAME_MAX)
		return ls_errcf(err, LS_E_USAGE, "%s:%u: host name longer than %u characters", name, line,
				LS_PEER_NAME_MAX);
	for (size_t i = 0; i < len; i++) {
		if (!host_char_ok((unsigned char)host[i]))
			return ls_errcf(err, LS_E_USAGE, "%s:%u: '%.*s' is not a host name or address (one host per line)",
					name, line, (int)(len > 64 ? 64 : len), host);
	}
	for (size_t i = 0; i < p->n; i++) {
		/* host names are case-insensitive */
		if (strlen(p->v[i]) == len && !strncasecmp(p->v[i], host, len))
			return ls_errcf(err, LS_E_USAGE, "%s:%u: %.*s is listed twice", name, line, (int)len, host);
	}
	if (p->n == LS_PEERS_MAX)
		return ls_errcf(err, LS_E_LIMIT, "%s:%u: more than %u peers", name, line, LS_PEERS_MAX);
	if (ls_grow(&p->v, cap, p->n, sizeof(*p->v), 16))
		return ls_errnof(err, ENOMEM, "%s: peer list", name);
	s = strndup(host, len);
	if (!s)
		return ls_errnof(err, ENOMEM, "%s: peer list", name);
	p->v[p->n++] = s;
	return 0;
}

/* Parse a peer list held in text (len bytes); name is for messages. */
int ls_peers_parse(const char *name, const char *text, size_t len, struct ls_peers *p,
		   struct ls_err *err)
{
	size_t cap = 0, i = 0;
	unsigned int line = 0;

	p->v = NULL;
	p->n = 0;
	while (i < len) {
		size_t b, e, eol = i;

		while (eol < len && text[eol] != '\n')
			eol++;
		line++;
		b = i;
		e = eol;
		for (size_t k = b; k < e; k++) {
			if (text[k] == '#') {
				e = k;
				break;
			}
			if (text[k] == '\0') {
				ls_peers_free(p);
				return ls_errcf(err, LS_E_USAGE, "%s:%u: NUL byte: not a text file", name, line);
			}
		}
		while (b < e && isspace((unsigned char)text[b]))
			b++;
		while (e > b && isspace((unsigned char)text[e - 1]))
			e--;
		if (e > b && add_host(name, line, text + b, e - b, p, &cap, err)) {
			ls_peers_free(p);
			return -1;
		}
		i = eol + 1;
	}
	if (!p->n)
		return ls_errcf(err, LS_E_USAGE, "%s: no peers (one host per line; '#' starts a comment)", name);
	return 0;
}

/* Read and parse the peer list file at path. */
int ls_peers_load(const char *path, struct ls_peers *p, struct ls_err *err)
{
	size_t len = 0;
	char *buf;
	FILE *fp;
	int rc;

	p->v = NULL;
	p->n = 0;
	fp = fopen(path, "r");
	if (!fp)
		return ls_errnof(err, errno, "--peers: open %s", path);
	buf = malloc(PEERS_FILE_MAX + 1);
	if (!buf) {
		fclose(fp);
		return ls_errnof(err, ENOMEM, "--peers: %s", path);
	}
	errno = 0;
	len = fread(buf, 1, PEERS_FILE_MAX + 1, fp);
	rc = ferror(fp) ? (errno ? errno : EIO) : 0;
	fclose(fp);
	if (rc) {
		free(buf);
		return ls_errnof(err, rc, "--peers: read %s", path);
	}
	if (len > PEERS_FILE_MAX) {
		free(buf);
		return ls_errcf(err, LS_E_LIMIT, "--peers: %s is larger than %u bytes", path, PEERS_FILE_MAX);
	}
	rc = ls_peers_parse(path, buf, len, p, err);
	free(buf);
	return rc;
}

/* A fleet run's pair that could not be measured, as a JSON or text line. */
void ls_peers_print_failed(bool json, const char *kind, const char *peer, int rc)
{
	struct ls_json j;

	if (!json) {
		printf("== %s: failed (exit %d, see the messages above)\n\n", peer, rc);
		return;
	}
	ls_json_doc_open(&j, stdout, false, kind);
	ls_json_str(&j, "peer", peer);
	ls_json_bool(&j, "ok", false);
	ls_json_i64(&j, "exit_status", rc);
	ls_json_obj_close(&j);
	ls_json_end(&j);
}

/* Start a fleet over peers (NULL: the one PEER of the command line). */
void ls_fleet_init(struct ls_fleet *f, const struct ls_peers *peers, const char *kind,
		   bool json)
{
	memset(f, 0, sizeof(*f));
	f->peers = peers;
	f->kind = kind;
	f->json = json;
	f->n = peers ? peers->n : 1;
}

/* Pair i: its host into *peer and, in a text fleet run, the "== pair" line. */
void ls_fleet_next(const struct ls_fleet *f, size_t i, const char **peer)
{
	if (!f->peers)
		return;
	*peer = f->peers->v[i];
	if (!f->json)
		printf("== pair %zu/%zu: %s\n", i + 1, f->n, *peer);
	fflush(stdout);
}

/* Count pair i's exit status; in a fleet run a failed pair gets its failed line when print. */
void ls_fleet_done(struct ls_fleet *f, const char *peer, int rc, bool print)
{
	if (!rc)
		return;
	f->failed++;
	f->unstarted += rc == LS_EXIT_USAGE;
	if (print && f->peers)
		ls_peers_print_failed(f->json, f->kind, peer, rc);
}

/* The fleet's exit status: 2 no pair could start, 1 some failed, else 0. */
int ls_fleet_status(const struct ls_fleet *f)
{
	if (f->failed)
		ls_warn("%s: %zu of %zu pairs failed", f->kind, f->failed, f->n);
	if (f->unstarted == f->n)
		return LS_EXIT_USAGE;
	return f->failed ? LS_EXIT_FAIL : LS_EXIT_OK;
}

/* Write or drop a fleet's --prom file (n records in pairs) once its pairs ran with status rc. */
static int fleet_prom(const struct ls_fleet_cmd *fc, const void *pairs, size_t n, int rc)
{
	struct ls_prom *pf = fc->prom;
	struct ls_err err = { 0 };
	bool write = fc->peers || rc == LS_EXIT_OK ||
		     (fc->failed_run_reports && rc != LS_EXIT_USAGE);

	if (!write) {
		ls_prom_abort(pf);
		return rc;
	}
	if (fc->write_prom(pf, pairs, n, &err) || ls_prom_commit(pf, &err)) {
		ls_prom_abort(pf);
		ls_warn("%s: --prom: %s", fc->kind, err.msg);
		rc = LS_EXIT_USAGE;
	}
	return rc;
}

/* Run each pair in turn, each with its record of pairs (or none); the status of the pairs. */
static int fleet_pairs(const struct ls_fleet_cmd *fc, void *pairs)
{
	struct ls_fleet fl;
	int rc = LS_EXIT_OK;

	ls_fleet_init(&fl, fc->peers, fc->kind, fc->json);
	for (size_t i = 0; i < fl.n; i++) {
		void *pair = pairs ? (char *)pairs + i * fc->pair_size : NULL;
		char label[80];

		ls_fleet_next(&fl, i, fc->peer);
		snprintf(label, sizeof(label), "%s:%u", *fc->peer, fc->port);
		rc = fc->run(fc->arg, label, pair);
		ls_fleet_done(&fl, pair ? label : *fc->peer, rc,
			      !fc->failed_run_reports || rc == LS_EXIT_USAGE);
	}
	return fc->peers ? ls_fleet_status(&fl) : rc;
}

/* Make fc's --prom records, run the pairs in turn, then write or drop the --prom file. */
int ls_fleet_run(const struct ls_fleet_cmd *fc)
{
	size_t n = fc->peers ? fc->peers->n : 1;
	void *pairs = NULL;
	int rc;

	if (fc->prom) {
		pairs = calloc(n, fc->pair_size);
		if (!pairs) {
			ls_warn("%s: --prom: out of memory for %zu pairs", fc->kind, n);
			ls_prom_abort(fc->prom);
			return LS_EXIT_USAGE;
		}
	}
	rc = fleet_pairs(fc, pairs);
	if (!pairs)
		return rc;
	rc = fleet_prom(fc, pairs, n, rc);
	for (size_t i = 0; i < n; i++)
		fc->free_pair((char *)pairs + i * fc->pair_size);
	free(pairs);
	return rc;
}
