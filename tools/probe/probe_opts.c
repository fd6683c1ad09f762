// SPDX-License-Identifier: GPL-2.0
/* The probe's command-line options, shared by the commands that run it (probe, breakdown). */
#include "probe_opts.h"

#include <string.h>

#include "io.h"
#include "peers.h"

#include "../include/uapi/latsplit.h"

static const struct option probe_longopts[] = {
	{ "ib-dev", required_argument, NULL, 'd' },
	{ "ib-port", required_argument, NULL, 'i' },
	{ "gid-index", required_argument, NULL, 'x' },
	{ "size", required_argument, NULL, 's' },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'D' },
	{ "mtu", required_argument, NULL, 'm' },
	{ "events", no_argument, NULL, 'e' },
	{ "qp-timeout", required_argument, NULL, 'u' },
	{ "verb", required_argument, NULL, LS_PO_VERB },
	{ "cpu", required_argument, NULL, LS_PO_CPU },
	{ "port", required_argument, NULL, 'p' },
	{ "rdma-cm", no_argument, NULL, 'R' },
	{ "connect-timeout", required_argument, NULL, LS_PO_CTMO },
	{ "wait-timeout", required_argument, NULL, LS_PO_WTMO },
	{ "listen-timeout", required_argument, NULL, LS_PO_LTMO },
};

_Static_assert(ARRAY_SIZE(probe_longopts) == LS_PROBE_NR_LONGOPTS,
	       "LS_PROBE_NR_LONGOPTS must count probe_longopts");

/* The shared long options, then own's nown (the last one the NULL entry), into out. */
void ls_probe_longopts(struct option *out, const struct option *own, size_t nown)
{
	memcpy(out, probe_longopts, sizeof(probe_longopts));
	memcpy(out + LS_PROBE_NR_LONGOPTS, own, nown * sizeof(*own));
}

/* Apply one shared option to o: 0 applied, 1 not a probe option, -1 bad value (err set). */
int ls_probe_opt_apply(struct ls_probe_opts *o, int opt, const char *arg,
		       struct ls_err *err)
{
	uint64_t v;
	int rc = 0;

	switch (opt) {
	case 'd':
		o->device = arg;
		break;
	case 'i':
		rc = ls_parse_u64(arg, 1, 255, &v, err, "--ib-port");
		o->ib_port = (unsigned int)v;
		break;
	case 'x':
		rc = ls_parse_u64(arg, 0, 65535, &v, err, "--gid-index");
		o->gid_index = (int)v;
		break;
	case 's':
		rc = ls_parse_u64(arg, 1, 1u << 30, &v, err, "--size");
		o->sizes[0] = (uint32_t)v;
		break;
	case 'n':
		rc = ls_parse_u64(arg, 1, LS_PROBE_MAX_CAPACITY, &v, err, "--iters");
		o->iters = v;
		break;
	case 'D':
		rc = ls_parse_duration_ns(arg, &o->duration_ns, err, "--duration");
		if (!rc && !o->duration_ns)
			rc = ls_errf(err, "--duration: must be positive");
		break;
	case 'm':
		rc = ls_parse_u64(arg, 256, 4096, &v, err, "--mtu");
		o->mtu = (unsigned int)v;
		if (!rc && !ls_probe_mtu_to_ibv(o->mtu))
			rc = ls_errf(err, "--mtu: %u is not 256, 512, 1024, 2048 or 4096",
				     o->mtu);
		break;
	case 'e':
		o->events = true;
		break;
	case 'u':
		rc = ls_parse_u64(arg, 0, 31, &v, err, "--qp-timeout");
		o->qp_timeout = (unsigned int)v;
		break;
	case LS_PO_VERB:
		rc = ls_probe_parse_verb(arg, &o->verb, err);
		break;
	case LS_PO_CPU:
		rc = ls_parse_u64(arg, 0, LS_MAX_CPUS - 1, &v, err, "--cpu");
		o->cpu = (int)v;
		break;
	case 'p':
		rc = ls_parse_u64(arg, 1, 65535, &v, err, "--port");
		o->port = (uint16_t)v;
		break;
	case 'R':
		o->rdma_cm = true;
		break;
	case LS_PO_CTMO:
		rc = ls_parse_duration_ns(arg, &o->connect_timeout_ns, err,
					  "--connect-timeout");
		break;
	case LS_PO_WTMO:
		rc = ls_parse_duration_ns(arg, &o->wait_timeout_ns, err, "--wait-timeout");
		break;
	case LS_PO_LTMO:
		rc = ls_parse_duration_ns(arg, &o->listen_timeout_ns, err,
					  "--listen-timeout");
		break;
	default:
		return 1;
	}
	return rc ? -1 : 0;
}

/* Read a probe-running command's options (see probe_opts.h). */
int ls_probe_getopt(int argc, char **argv, const struct option *own, size_t nown,
		    const char *own_short, const char *cmd,
		    int (*apply)(void *ctx, int opt, const char *arg, struct ls_err *err),
		    void *ctx, void (*usage)(FILE *fp), bool *help)
{
	struct option lo[LS_PROBE_NR_LONGOPTS + nown];
	struct ls_err err = { 0 };
	char shortopts[64];
	int opt, rc;

	snprintf(shortopts, sizeof(shortopts), "%s%s", LS_PROBE_SHORTOPTS, own_short);
	ls_probe_longopts(lo, own, nown);
	optind = 1;
	while ((opt = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (opt == 'h') {
			*help = true;
			return 0;
		}
		rc = apply(ctx, opt, optarg, &err);
		if (rc > 0) {
			usage(stderr);
			return LS_EXIT_USAGE;
		}
		if (rc) {
			ls_warn("%s: %s", cmd, err.msg);
			return LS_EXIT_USAGE;
		}
	}
	return 0;
}

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
"      --verb VERB           write (default), send or read\n"
"%s"
"  -p, --port PORT           TCP control port (default %u)\n"
"  -R, --rdma-cm             connect the QP with rdma_cm\n"
"      --connect-timeout DUR connect and handshake timeout (default 5s)\n"
"%s"
"      --listen-timeout DUR  responder: give up without a prober (default: never)\n",
		h->after_size, h->iters, h->duration, h->cpu, LS_OOB_DEFAULT_PORT, h->wait);
}

/* The last checks of a command that runs the probe (see probe_opts.h). */
int ls_probe_opts_finish(struct ls_probe_opts *o, bool prober, const char *peers,
			 struct ls_peers *plist, const char *cmd)
{
	struct ls_err err = { 0 };

	if (ls_probe_opts_check(o, prober, &err)) {
		ls_warn("%s: %s", cmd, err.msg);
		return LS_EXIT_USAGE;
	}
	if (peers) {
		if (ls_peers_load(peers, plist, &err)) {
			ls_warn("%s: %s", cmd, err.msg);
			return LS_EXIT_USAGE;
		}
		o->peer = plist->v[0];
	}
	return 0;
}
