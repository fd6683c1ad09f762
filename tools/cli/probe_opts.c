// SPDX-License-Identifier: GPL-2.0
/* The probe's command-line options, shared by the commands that run it (probe, breakdown). */
#include "probe_opts.h"

#include "auth.h"
#include "io.h"
#include "peers.h"

#include "../include/uapi/latsplit.h"

/* -D: a positive duration. */
static int parse_duration(void *dst, const char *arg, struct ls_err *err)
{
	uint64_t *ns = dst;

	if (ls_parse_duration_ns(arg, ns, err, "--duration"))
		return -1;
	if (!*ns)
		return ls_errf(err, "--duration: must be positive");
	return 0;
}

/* -m: a path MTU verbs knows. */
static int parse_mtu(void *dst, const char *arg, struct ls_err *err)
{
	unsigned int *mtu = dst;
	uint64_t v;
	int rc;

	rc = ls_parse_u64(arg, 256, 4096, &v, err, "--mtu");
	*mtu = (unsigned int)v;
	if (!rc && !ls_probe_mtu_to_ibv(*mtu))
		rc = ls_errf(err, "--mtu: %u is not 256, 512, 1024, 2048 or 4096", *mtu);
	return rc;
}

/* --verb. */
static int parse_verb(void *dst, const char *arg, struct ls_err *err)
{
	return ls_probe_parse_verb(arg, dst, err);
}

#define PO struct ls_probe_opts

const struct ls_opt ls_probe_optv[LS_PROBE_NR_OPTS] = {
	LS_OPT_STR("ib-dev", 'd', PO, device),
	LS_OPT_U64("ib-port", 'i', PO, ib_port, 1, 255),
	LS_OPT_U64("gid-index", 'x', PO, gid_index, 0, 65535),
	LS_OPT_U64("size", 's', PO, sizes[0], 1, 1u << 30),
	LS_OPT_U64("iters", 'n', PO, iters, 1, LS_PROBE_MAX_CAPACITY),
	LS_OPT_HOOK("duration", 'D', PO, duration_ns, parse_duration),
	LS_OPT_HOOK("mtu", 'm', PO, mtu, parse_mtu),
	LS_OPT_FLAG("events", 'e', PO, events),
	LS_OPT_U64("qp-timeout", 'u', PO, qp_timeout, 0, 31),
	LS_OPT_U64("tclass", LS_PO_TCLASS, PO, tclass, 0, 255),
	LS_OPT_HOOK("verb", LS_PO_VERB, PO, verb, parse_verb),
	LS_OPT_U64("cpu", LS_PO_CPU, PO, cpu, 0, LS_MAX_CPUS - 1),
	LS_OPT_U64("port", 'p', PO, port, 1, 65535),
	LS_OPT_FLAG("rdma-cm", 'R', PO, rdma_cm),
	LS_OPT_DUR("connect-timeout", LS_PO_CTMO, PO, connect_timeout_ns),
	LS_OPT_DUR("wait-timeout", LS_PO_WTMO, PO, wait_timeout_ns),
	LS_OPT_DUR("listen-timeout", LS_PO_LTMO, PO, listen_timeout_ns),
	LS_OPT_STR("bind", LS_PO_BIND, PO, bind),
	LS_OPT_STR("key", LS_PO_KEY, PO, key_file),
	LS_OPT_FLAG("insecure", LS_PO_INSECURE, PO, insecure),
};

/* Print the shared options' help (see probe_opts.h). */
void ls_probe_help(FILE *fp, const struct ls_probe_help *h)
{
	fprintf(fp,
"  -d, --ib-dev DEV          RDMA device (default: the first one)\n"
"  -i, --ib-port N           device port (default 1)\n"
"  -x, --gid-index N         GID index (default: first RoCE v2 IPv4 GID)\n"
"  -s, --size BYTES          message size (default 4)\n"
"%s%s%s"
"  -m, --mtu BYTES           path MTU 256..4096 (default: the port's active MTU)\n"
"  -e, --events              completion events instead of busy polling\n"
"  -u, --qp-timeout N        QP local ACK timeout exponent 0..31 (default 14)\n"
"      --tclass N            traffic class 0..255 of this side's packets (RoCEv2:\n"
"                            the IP TOS byte, DSCP << 2 | ECN; 106 = DSCP 26, ECT(0))\n"
"      --verb VERB           write (default), send or read\n"
"%s"
"  -p, --port PORT           TCP control port (default %u)\n"
"  -R, --rdma-cm             connect the QP with rdma_cm\n"
"      --connect-timeout DUR connect and handshake timeout (default 5s)\n"
"%s"
"      --listen-timeout DUR  responder: give up without a prober (default: never)\n"
"      --key FILE            shared key (16..4096 bytes, mode 0600): the prober and\n"
"                            the responder prove it to each other\n"
"      --insecure            responder: serve any prober, without a key\n"
"      --bind ADDR           responder: listen on ADDR (default: the RDMA device's\n"
"                            own IP address, from its GID; any: every address)\n",
		h->after_size, h->iters, h->duration, h->cpu, LS_OOB_DEFAULT_PORT, h->wait);
}

/* The responder's limits on what a prober may ask (see probe_opts.h). */
const struct ls_opt ls_probe_limit_optv[LS_PROBE_NR_LIMIT_OPTS] = {
	LS_OPT_U64("max-size", LS_PO_MAXSIZE, PO, lim.max_size, 1, 1u << 30),
	LS_OPT_U64("max-samples", LS_PO_MAXSAMPLES, PO, capacity, 1, LS_PROBE_MAX_CAPACITY),
	LS_OPT_U64("max-session-samples", LS_PO_MAXSESSION, PO, lim.max_session_samples, 1,
		   LS_PROBE_MAX_SIZES * LS_PROBE_MAX_CAPACITY),
	LS_OPT_DUR("max-run-time", LS_PO_MAXRUN, PO, lim.max_run_ns),
};

/* Print the limits' help (see probe_opts.h). */
void ls_probe_limit_help(FILE *fp)
{
	fprintf(fp,
"responder limits (a prober asking for more is refused before anything is allocated):\n"
"      --max-size BYTES      largest message a prober may use (default %u)\n"
"      --max-samples N       samples kept per run: the responder's limit (default\n"
"                            %llu); a prober's with -D (default: auto)\n"
"      --max-session-samples N\n"
"                            samples kept over a session's runs (default %llu)\n"
"      --max-run-time DUR    longest run and wait for a run's end (default %llus)\n",
		LS_PROBE_DEF_MAX_SIZE, (unsigned long long)LS_PROBE_DEF_MAX_SAMPLES,
		(unsigned long long)LS_PROBE_DEF_MAX_SESSION,
		(unsigned long long)(LS_PROBE_DEF_MAX_RUN_NS / 1000000000ull));
}

/* True when a responder limit differs from its default (a prober's mistake). */
static bool limits_set(const struct ls_probe_limits *l)
{
	return l->max_size != LS_PROBE_DEF_MAX_SIZE ||
	       l->max_session_samples != LS_PROBE_DEF_MAX_SESSION ||
	       l->max_run_ns != LS_PROBE_DEF_MAX_RUN_NS;
}

/* The last checks of a command that runs the probe (see probe_opts.h). */
int ls_probe_opts_finish(struct ls_probe_opts *o, bool prober, const char *peers,
			 struct ls_peers *plist, const char *cmd)
{
	struct ls_err err = { 0 };

	if (prober && limits_set(&o->lim)) {
		ls_errf(&err, "--max-size, --max-session-samples and --max-run-time are the "
			"responder's");
		return ls_opts_exit(LS_EXIT_USAGE, cmd, &err);
	}

	if (ls_probe_opts_check(o, prober, &err))
		return ls_opts_exit(LS_EXIT_USAGE, cmd, &err);
	/* A bad key file fails here, before any device is opened; the run reads it again. */
	if (o->key_file && ls_auth_key_check(o->key_file, &err))
		return ls_opts_exit(LS_EXIT_USAGE, cmd, &err);
	if (peers) {
		if (ls_peers_load(peers, plist, &err))
			return ls_opts_exit(LS_EXIT_USAGE, cmd, &err);
		o->peer = plist->v[0];
	}
	return 0;
}
