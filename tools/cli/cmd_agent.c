// SPDX-License-Identifier: GPL-2.0
/*
 * `latsplit agent`: the always-on per-node process. It is the responder of
 * its peers, probes one peer per schedule slot (agent_sched.h), runs a
 * kernel-recorded breakdown every K rounds, and serves what it measured on
 * an HTTP /metrics page (Prometheus text 0.0.4, libmicrohttpd).
 *
 * Processes: the probe engine keeps one device context, its QPs and an
 * acceptor per session and the breakdown's backend keeps process-wide
 * state (the kernel ring, its drain thread), so the agent does not run
 * them in its own process. It forks: one child is the probe responder
 * (`probe --forever`), one the breakdown responder (one session each,
 * restarted after it), and one child per probe or breakdown session, which
 * sends its result record back through a pipe and exits. The agent itself
 * keeps only fixed-size records per peer, so its memory stays flat however
 * long it runs, a crashed or hung session cannot take it down (a session
 * past --session-timeout is killed), and SIGTERM can end a session at any
 * point: the agent writes no file, so nothing is left half-written.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "agent_sched.h"
#include "auth.h"
#include "commands.h"
#include "io.h"
#include "oob.h"
#include "opts.h"
#include "probe.h"

#define AGENT_MAX_SESSIONS	64
#define AGENT_MAX_CHILDREN	(AGENT_MAX_SESSIONS * 2 + 2)
#define AGENT_STOP_GRACE_NS	5000000000ull	/* SIGTERM to SIGKILL on shutdown */
#define AGENT_RESTART_NS	1000000000ull	/* a failed responder's restart delay */
#define AGENT_BD_RESTART_NS	50000000ull	/* the breakdown responder, between sessions */
#define AGENT_RESTART_RESET_NS	60000000000ull	/* a responder that lived this long: backoff reset */
#define AGENT_STALE_ROUNDS	3		/* a peer without a result for this many rounds: stale */
#define AGENT_SLOT_MAX_NS	(24ull * 3600 * 1000000000)	/* --slot's upper bound */
#define AGENT_HTTP_IDLE_S	3u		/* an HTTP connection idle this long is closed */
#define AGENT_HTTP_PER_IP_DIV	4		/* one client: at most a quarter of the connections */

struct agent_cli {
	const char *peers;
	const char *metrics;
	const char *self;
	const char *key;
	bool insecure;
	const char *bind;
	const char *device;
	const char *backend;
	const char *verb;
	unsigned int port, bd_port;
	unsigned int bd_every;
	uint64_t slot_ns;
	int schedule;
	uint64_t seed;
	unsigned int max_sessions;
	unsigned int max_conns;
	uint64_t iters;
	uint64_t session_timeout_ns;
};

/* What a session child sends back: one record, written once. */
struct agent_result {
	int rc;
	bool busy;
	char why[256];
	struct ls_summary s;		/* probe */
	struct bd_prom_pair bd;		/* breakdown (ctr NULL) */
};

enum child_kind { CH_PROBE, CH_BD, CH_RESP, CH_BD_RESP };

struct agent_child {
	pid_t pid;			/* 0: free slot */
	enum child_kind kind;
	int fd;				/* result pipe (sessions), else -1 */
	char peer[LS_PEER_NAME_MAX + 1];
	uint64_t deadline_ns;		/* sessions: killed past it */
	uint64_t started_ns;		/* when it was forked */
	bool retried;			/* a retry after busy already */
	bool killed;
};

/* A session to start again later: its peer answered busy. */
struct agent_retry {
	bool used;
	enum child_kind kind;
	char peer[LS_PEER_NAME_MAX + 1];
	uint64_t at_ns;
};

struct agent {
	struct agent_cli c;
	char self[LS_PEER_NAME_MAX + 1];
	struct ls_peers list;		/* the whole list, self included or not */
	size_t self_idx;		/* self's index, or list.n when absent */
	struct ls_agent_peer *peers;	/* the list without self */
	size_t npeers;
	struct ls_agent_stats st;
	struct agent_child ch[AGENT_MAX_CHILDREN];
	struct agent_retry retry[AGENT_MAX_SESSIONS];
	uint64_t resp_at_ns[2];		/* when to (re)start each responder, 0: running */
	uint64_t resp_fail_ns[2];	/* a failed responder's current backoff */
	uint64_t last_slot;
	bool have_slot;
	int sfd;			/* signalfd */
	bool stopping;			/* SIGTERM/SIGINT: sessions are being ended */
	pid_t self_pid;			/* the agent's pid, for the children's parent check */
	struct MHD_Daemon *mhd;
	pthread_mutex_t lock;		/* guards page, page_len */
	char *page;
	size_t page_len;
	unsigned int seed_state;
};

static const struct ls_opt_name schedules[] = {
	{ "round-robin", LS_SCHED_RR }, { "random", LS_SCHED_RANDOM }, { NULL, 0 },
};

enum {
	O_PEERS = 256, O_METRICS, O_SELF, O_KEY, O_INSECURE, O_BIND, O_BACKEND, O_PORT,
	O_BDPORT, O_BDEVERY, O_SLOT, O_SCHED, O_SEED, O_MAXS, O_MAXC, O_STMO, O_VERB,
};

#define AC struct agent_cli

static const struct ls_opt agent_options[] = {
	LS_OPT_STR("peers", O_PEERS, AC, peers),
	LS_OPT_STR("metrics", O_METRICS, AC, metrics),
	LS_OPT_STR("self", O_SELF, AC, self),
	LS_OPT_STR("key", O_KEY, AC, key),
	LS_OPT_FLAG("insecure", O_INSECURE, AC, insecure),
	LS_OPT_STR("bind", O_BIND, AC, bind),
	LS_OPT_STR("ib-dev", 'd', AC, device),
	LS_OPT_CHOICE("backend", 'b', AC, backend, ls_opt_backends),
	LS_OPT_U64("port", 'p', AC, port, 1, 65535),
	LS_OPT_U64("breakdown-port", O_BDPORT, AC, bd_port, 1, 65535),
	LS_OPT_U64("breakdown-every", O_BDEVERY, AC, bd_every, 0, 1000000),
	LS_OPT_DUR("slot", O_SLOT, AC, slot_ns),
	LS_OPT_ENUM("schedule", O_SCHED, AC, schedule, schedules),
	LS_OPT_U64("seed", O_SEED, AC, seed, 0, UINT64_MAX),
	LS_OPT_U64("max-sessions", O_MAXS, AC, max_sessions, 1, AGENT_MAX_SESSIONS),
	LS_OPT_U64("max-connections", O_MAXC, AC, max_conns, 1, 1024),
	LS_OPT_U64("iters", 'n', AC, iters, 1, 1000000),
	LS_OPT_STR("verb", O_VERB, AC, verb),
	LS_OPT_DUR("session-timeout", O_STMO, AC, session_timeout_ns),
	LS_OPT_HELPOPT,
};

/* Print the usage; its option list is the truth the man page is tested against. */
static void usage(FILE *fp)
{
	fprintf(fp,
"usage: latsplit agent --peers FILE --metrics ADDR:PORT (--key FILE | --insecure) [OPTIONS]\n"
"\n"
"The always-on per-node agent: the responder of its peers, a prober of one\n"
"peer per schedule slot, and an HTTP /metrics endpoint for Prometheus.\n"
"\n"
"options:\n"
"      --peers FILE          the fleet's hosts, one per line (re-read on SIGHUP)\n"
"      --metrics ADDR:PORT   serve /metrics on this address only ([v6]:port)\n"
"      --self NAME           this node's entry in FILE (default: the host name, else\n"
"                            the entry that is one of this host's addresses)\n"
"      --key FILE            shared key of the fleet (probe and responders)\n"
"      --insecure            serve and probe without a key\n"
"      --bind ADDR           the responders' listen address (default: the device's)\n"
"  -d, --ib-dev DEV          RDMA device (default: the first one)\n"
"  -b, --backend B           breakdown's kernel backend: auto, kmod, ebpf, none\n"
"  -p, --port N              probe port, the responder's and the peers' (default 19515)\n"
"      --breakdown-port N    breakdown port (default: --port + 1)\n"
"      --breakdown-every K   a kernel-recorded breakdown every K rounds (default 0: never)\n"
"      --slot DUR            one probe per slot (default 5s, 100ms-86400s); a round is N-1 slots\n"
"      --schedule S          round-robin (default) or random (a random start each round)\n"
"      --seed N              the random schedule's seed, the same on every node (default 0)\n"
"      --max-sessions N      probe sessions of this agent in flight at once (default 1)\n"
"      --max-connections N   HTTP connections at once (default 16; a quarter per client)\n"
"  -n, --iters N             iterations per probe (default 200)\n"
"      --verb VERB           the probes' verb: write (default), send or read\n"
"      --session-timeout DUR kill a session running longer (default 60s)\n"
"  -h, --help                this help\n"
"\n"
"signals: SIGHUP re-reads --peers (a bad file keeps the old list); SIGTERM and\n"
"SIGINT stop the schedule, end the sessions in flight and exit 0.\n"
"exit status: 0 stopped by a signal, 1 the main loop failed, 2 bad input or could\n"
"not start.\n");
}

/* Log a line on stderr (the journal under systemd). */
static void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void agent_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("latsplit agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* CLOCK_REALTIME now, in ns: the slots are counted on it, the same on every node. */
static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Load the peers file into a, keeping the records of hosts that stay. */
static int load_peers(struct agent *a, struct ls_err *err)
{
	struct sockaddr_storage *local = NULL;
	struct ls_agent_peer *np;
	struct ls_peers l = { 0 };
	char **names = NULL;
	size_t self, nlocal = 0, k = 0;
	int rc;

	if (ls_peers_load(a->c.peers, &l, err))
		return -1;
	rc = ls_agent_local_addrs(&local, &nlocal, err);
	if (!rc)
		rc = ls_agent_find_self(&l, a->c.peers, a->self, a->c.self != NULL, local, nlocal,
					&self, err);
	free(local);
	if (rc)
		goto out;
	names = calloc(l.n ? l.n : 1, sizeof(*names));
	if (!names) {
		ls_peers_free(&l);
		return ls_errnof(err, ENOMEM, "agent: peers of %s", a->c.peers);
	}
	for (size_t i = 0; i < l.n; i++)
		if (i != self)
			names[k++] = l.v[i];
	if (!k) {
		rc = ls_errf(err, "%s: no peer besides this node (%s)", a->c.peers,
			     self < l.n ? l.v[self] : a->self);
		goto out;
	}
	rc = ls_agent_peers_merge(a->peers, a->npeers, names, k, &np, err);
	if (rc)
		goto out;
	free(a->peers);
	a->peers = np;
	a->npeers = k;
	for (size_t i = 0; i < k; i++)
		if (!np[i].since)
			np[i].since = (double)wall_ns() / 1e9;
	ls_peers_free(&a->list);
	a->list = l;
	l = (struct ls_peers){ 0 };
	a->self_idx = self;
out:
	free(names);
	ls_peers_free(&l);
	return rc;
}

/* The peer record of name, or NULL (it left the list). */
static struct ls_agent_peer *find_peer(struct agent *a, const char *name)
{
	for (size_t i = 0; i < a->npeers; i++)
		if (!strcmp(a->peers[i].name, name))
			return &a->peers[i];
	return NULL;
}

/* Render the page and swap it in: the HTTP thread only ever copies it under the lock. */
static void publish(struct agent *a)
{
	size_t m = a->list.n + (a->self_idx == a->list.n);	/* nodes, self included */
	struct ls_err err = { 0 };
	char *buf, *old;
	size_t len;

	a->st.now = (double)wall_ns() / 1e9;
	a->st.stale_s = ls_sched_stale_after(m, a->c.slot_ns, AGENT_STALE_ROUNDS,
					     a->c.session_timeout_ns);
	a->st.bd_stale_s = ls_sched_stale_after(m, a->c.slot_ns,
						(uint64_t)AGENT_STALE_ROUNDS * a->c.bd_every,
						a->c.session_timeout_ns);
	if (ls_agent_render_buf(a->peers, a->npeers, &a->st, &buf, &len, &err)) {
		agent_log("/metrics: %s (the previous page is kept)", err.msg);
		return;
	}
	pthread_mutex_lock(&a->lock);
	old = a->page;
	a->page = buf;
	a->page_len = len;
	pthread_mutex_unlock(&a->lock);
	free(old);
}

/* libmicrohttpd's request handler: GET/HEAD /metrics, 404 elsewhere. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **con_cls)
{
	static const char not_found[] = "not found: the agent serves /metrics\n";
	static const char bad_method[] = "method not allowed\n";
	struct agent *a = cls;
	struct MHD_Response *resp;
	const char *type = "text/plain; charset=utf-8";
	unsigned int status = MHD_HTTP_OK;
	enum MHD_Result ret;

	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		resp = MHD_create_response_from_buffer(strlen(bad_method), (void *)bad_method,
						       MHD_RESPMEM_PERSISTENT);
	} else if (strcmp(url, "/metrics")) {
		status = MHD_HTTP_NOT_FOUND;
		resp = MHD_create_response_from_buffer(strlen(not_found), (void *)not_found,
						       MHD_RESPMEM_PERSISTENT);
	} else {
		type = "text/plain; version=0.0.4; charset=utf-8";
		pthread_mutex_lock(&a->lock);
		resp = MHD_create_response_from_buffer(a->page_len, a->page,
						       MHD_RESPMEM_MUST_COPY);
		pthread_mutex_unlock(&a->lock);
	}
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Parse ADDR:PORT or [V6]:PORT (numeric) into *ss. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, struct ls_err *err)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char host[128], *colon, *end;
	const char *h;
	unsigned long port;
	int rc;

	if (strlen(s) >= sizeof(host))
		return ls_errcf(err, LS_E_USAGE, "--metrics: '%s' is too long", s);
	snprintf(host, sizeof(host), "%s", s);
	colon = strrchr(host, ':');
	if (!colon || colon == host)
		return ls_errcf(err, LS_E_USAGE, "--metrics: '%s' is not ADDR:PORT", s);
	*colon = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port < 1 || port > 65535)
		return ls_errcf(err, LS_E_USAGE, "--metrics: port '%s' is not 1-65535", colon + 1);
	h = host;
	if (host[0] == '[') {
		size_t n = strlen(host);

		if (n < 3 || host[n - 1] != ']')
			return ls_errcf(err, LS_E_USAGE, "--metrics: '%s' is not [V6]:PORT", s);
		host[n - 1] = '\0';
		h = host + 1;
	} else if (strchr(host, ':')) {
		return ls_errcf(err, LS_E_USAGE, "--metrics: write an IPv6 address as [ADDR]:PORT");
	}
	rc = getaddrinfo(h, colon + 1, &hints, &res);
	if (rc)
		return ls_errcf(err, LS_E_USAGE, "--metrics: '%s' is not a numeric address: %s",
				h, gai_strerror(rc));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/*
 * Start the HTTP server on --metrics only, its connections bounded: one
 * client address holds at most a quarter of them and an idle one is closed
 * after AGENT_HTTP_IDLE_S, so one host's idle connections cannot keep
 * Prometheus from scraping.
 */
static int start_http(struct agent *a, struct ls_err *err)
{
	unsigned int per_ip = a->c.max_conns / AGENT_HTTP_PER_IP_DIV;
	struct sockaddr_storage ss = { 0 };
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
	uint16_t port;

	if (parse_listen(a->c.metrics, &ss, err))
		return -1;
	if (ss.ss_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	} else {
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	}
	a->mhd = MHD_start_daemon(flags, port, NULL, NULL, on_request, a,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				  MHD_OPTION_CONNECTION_LIMIT, a->c.max_conns,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip ? per_ip : 1u,
				  MHD_OPTION_CONNECTION_TIMEOUT, AGENT_HTTP_IDLE_S,
				  MHD_OPTION_END);
	if (!a->mhd)
		return ls_errcf(err, LS_E_IO, "--metrics: cannot listen on %s (in use, or not an address of this host?)",
				a->c.metrics);
	return 0;
}

/* A free child slot, or NULL. */
static struct agent_child *free_child(struct agent *a)
{
	for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++)
		if (!a->ch[i].pid)
			return &a->ch[i];
	return NULL;
}

/* Sessions in flight. */
static unsigned int sessions(const struct agent *a)
{
	unsigned int n = 0;

	for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++)
		if (a->ch[i].pid && (a->ch[i].kind == CH_PROBE || a->ch[i].kind == CH_BD))
			n++;
	return n;
}

/* Append the options every child's command line shares (key, bind, device, backend). */
static int common_args(const struct agent *a, char **av, int ac, bool responder, bool bd,
		       char *port)
{
	av[ac++] = "--port";
	av[ac++] = port;
	if (a->c.key) {
		av[ac++] = "--key";
		av[ac++] = (char *)a->c.key;
	} else if (responder) {
		av[ac++] = "--insecure";
	}
	if (responder && a->c.bind) {
		av[ac++] = "--bind";
		av[ac++] = (char *)a->c.bind;
	}
	if (a->c.device) {
		av[ac++] = "-d";
		av[ac++] = (char *)a->c.device;
	}
	if (!responder && a->c.verb) {
		av[ac++] = "--verb";
		av[ac++] = (char *)a->c.verb;
	}
	if (bd && a->c.backend) {
		av[ac++] = "--backend";
		av[ac++] = (char *)a->c.backend;
	}
	return ac;
}

/* The child: run one role or session, send the result record on fd 3, exit. */
static void __attribute__((noreturn)) child_main(struct agent *a, enum child_kind kind,
						 const char *peer, int wfd)
{
	struct agent_result res;
	struct ls_err err = { 0 };
	char port[16], iters[24];
	char *av[32];
	sigset_t all;
	int ac = 0, devnull, rc;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* the agent may have died before the line above: no signal would come */
	if (getppid() != a->self_pid)
		_exit(LS_EXIT_FAIL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(devnull, STDOUT_FILENO) < 0)
		_exit(LS_EXIT_USAGE);
	if (wfd >= 0 && dup2(wfd, 3) < 0)
		_exit(LS_EXIT_USAGE);
	/* the HTTP socket, the signalfd, other children's pipes */
	close_range(wfd >= 0 ? 4 : 3, ~0u, 0);
	snprintf(port, sizeof(port), "%u", kind == CH_BD || kind == CH_BD_RESP ?
		 a->c.bd_port : a->c.port);
	snprintf(iters, sizeof(iters), "%llu", (unsigned long long)a->c.iters);
	memset(&res, 0, sizeof(res));
	switch (kind) {
	case CH_RESP:
		av[ac++] = "probe";
		av[ac++] = "--forever";
		ac = common_args(a, av, ac, true, false, port);
		av[ac] = NULL;
		_exit(cmd_probe(ac, av));
	case CH_BD_RESP:
		av[ac++] = "breakdown";
		/* no tracing while it waits: the observer's cost only during a breakdown */
		av[ac++] = "--pause-idle";
		ac = common_args(a, av, ac, true, true, port);
		av[ac] = NULL;
		_exit(cmd_breakdown(ac, av));
	default:	/* a session: CH_PROBE or CH_BD */
		av[ac++] = kind == CH_PROBE ? "probe" : "breakdown";
		ac = common_args(a, av, ac, false, kind == CH_BD, port);
		av[ac++] = "-n";
		av[ac++] = iters;
		av[ac++] = (char *)peer;
		av[ac] = NULL;
		if (kind == CH_PROBE) {
			rc = ls_probe_once(ac, av, &res.s, &err);
			res.busy = err.code == LS_E_PEER_BUSY;
			snprintf(res.why, sizeof(res.why), "%s", err.msg);
			break;
		}
		rc = bd_agent_once(ac, av, &res.bd, &err);
		res.busy = rc && err.code == LS_E_PEER_BUSY;
		if (rc)
			snprintf(res.why, sizeof(res.why), "%s", err.msg);
		break;
	}
	res.rc = rc;
	if (write(3, &res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(LS_EXIT_USAGE);
	_exit(rc);
}

/* Fork a child of kind (a session with peer, or a responder). */
static int spawn(struct agent *a, enum child_kind kind, const char *peer, bool retried)
{
	struct agent_child *c = free_child(a);
	bool session = kind == CH_PROBE || kind == CH_BD;
	int fds[2] = { -1, -1 };
	pid_t pid;

	if (!c)
		return -1;
	if (session && pipe2(fds, O_CLOEXEC)) {
		agent_log("cannot start a session with %s: pipe: %s", peer, strerror(errno));
		return -1;
	}
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		agent_log("cannot fork: %s", strerror(errno));
		if (session) {
			close(fds[0]);
			close(fds[1]);
		}
		return -1;
	}
	if (!pid)
		child_main(a, kind, peer, fds[1]);
	if (session)
		close(fds[1]);
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->kind = kind;
	c->fd = fds[0];
	c->retried = retried;
	if (peer)
		snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->started_ns = ls_now_ns();
	c->deadline_ns = session ? c->started_ns + a->c.session_timeout_ns : 0;
	return 0;
}

/* A busy peer: try again later in the slot, at a random point (once). */
static void plan_retry(struct agent *a, const struct agent_child *c)
{
	uint64_t d = a->c.slot_ns / 10 + (uint64_t)(rand_r(&a->seed_state) % 400) *
		     (a->c.slot_ns / 1000);

	for (size_t i = 0; i < AGENT_MAX_SESSIONS; i++) {
		if (a->retry[i].used)
			continue;
		a->retry[i] = (struct agent_retry){ .used = true, .kind = c->kind,
						    .at_ns = ls_now_ns() + d };
		snprintf(a->retry[i].peer, sizeof(a->retry[i].peer), "%s", c->peer);
		return;
	}
}

/* A session child ended with status: take its record into its peer's. */
static void session_done(struct agent *a, struct agent_child *c, int status)
{
	struct ls_agent_peer *p = find_peer(a, c->peer);
	struct agent_result res;
	bool was_up;
	ssize_t n;

	n = read(c->fd, &res, sizeof(res));
	if (n != (ssize_t)sizeof(res)) {
		memset(&res, 0, sizeof(res));
		res.rc = LS_EXIT_FAIL;
		if (c->killed)
			snprintf(res.why, sizeof(res.why), "session killed after --session-timeout");
		else if (WIFSIGNALED(status))
			snprintf(res.why, sizeof(res.why), "session ended by signal %d",
				 WTERMSIG(status));
		else
			snprintf(res.why, sizeof(res.why), "session ended without a result (exit status %d)",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	if (!p)
		return;		/* the peer left the list meanwhile */
	/* ended by the agent's own SIGTERM without a result: no figure of the peer's */
	if (a->stopping && n != (ssize_t)sizeof(res))
		return;
	was_up = !p->probed || p->up;
	if (res.busy) {
		ls_agent_take_busy(p);
		if (!c->retried)
			plan_retry(a, c);
		return;
	}
	if (c->kind == CH_BD)
		ls_agent_take_bd(p, res.rc, &res.bd, (double)wall_ns() / 1e9);
	else
		ls_agent_take_probe(p, res.rc, &res.s, (double)wall_ns() / 1e9);
	if (res.rc && was_up)
		agent_log("peer %s down: %s%s", p->name, c->kind == CH_BD ? "breakdown: " : "",
			  res.why);
	else if (!res.rc && !was_up)
		agent_log("peer %s up again", p->name);
}

/* A responder child ended: plan its restart (at once after a breakdown session). */
static void responder_done(struct agent *a, struct agent_child *c, int status, bool stopping)
{
	int r = c->kind == CH_BD_RESP;
	bool ok = WIFEXITED(status) && !WEXITSTATUS(status);

	if (stopping)
		return;
	if (ok && r) {
		a->resp_fail_ns[r] = 0;
		a->resp_at_ns[r] = ls_now_ns() + AGENT_BD_RESTART_NS;
		return;
	}
	a->st.responder_restarts++;
	/* one that ran long enough was healthy: its backoff starts over */
	if (ls_now_ns() - c->started_ns > AGENT_RESTART_RESET_NS)
		a->resp_fail_ns[r] = 0;
	a->resp_fail_ns[r] = a->resp_fail_ns[r] ? a->resp_fail_ns[r] * 2 : AGENT_RESTART_NS;
	if (a->resp_fail_ns[r] > 30 * AGENT_RESTART_NS)
		a->resp_fail_ns[r] = 30 * AGENT_RESTART_NS;
	agent_log("%s responder ended (%s %d): restarting in %.0f s",
		  r ? "breakdown" : "probe", WIFEXITED(status) ? "exit status" : "signal",
		  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		  (double)a->resp_fail_ns[r] / 1e9);
	a->resp_at_ns[r] = ls_now_ns() + a->resp_fail_ns[r];
}

/* Reap every ended child; returns whether a record changed. */
static bool reap(struct agent *a, bool stopping)
{
	bool changed = false;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++) {
			struct agent_child *c = &a->ch[i];

			if (c->pid != pid)
				continue;
			if (c->kind == CH_PROBE || c->kind == CH_BD) {
				session_done(a, c, status);
				close(c->fd);
				changed = true;
			} else {
				responder_done(a, c, status, stopping);
				changed = true;	/* the restart counter may have moved */
			}
			c->pid = 0;
			break;
		}
	}
	return changed;
}

/* Kill the sessions past their deadline. */
static void kill_overdue(struct agent *a)
{
	uint64_t now = ls_now_ns();

	for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++) {
		struct agent_child *c = &a->ch[i];

		if (c->pid && c->deadline_ns && now > c->deadline_ns && !c->killed) {
			kill(c->pid, SIGKILL);
			c->killed = true;
		}
	}
}

/* Whether a session with peer is in flight. */
static bool in_flight(const struct agent *a, const char *peer)
{
	for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++)
		if (a->ch[i].pid && (a->ch[i].kind == CH_PROBE || a->ch[i].kind == CH_BD) &&
		    !strcmp(a->ch[i].peer, peer))
			return true;
	return false;
}

/*
 * Start a session of kind with peer; with --max-sessions in flight the
 * slot is skipped and counted, and the peer is owed a session (the
 * oldest owed one starts as soon as one ends), so a session outliving
 * its slot never starves the same peer round after round.
 */
static void start_session(struct agent *a, enum child_kind kind, const char *peer,
			  bool retried)
{
	struct ls_agent_peer *p = find_peer(a, peer);

	if (sessions(a) >= a->c.max_sessions || (p && in_flight(a, peer))) {
		a->st.skipped++;
		if (p) {
			p->skipped++;
			if (!p->owed)
				p->owed = a->last_slot + 1;
			p->owed_bd |= kind == CH_BD;
		}
		return;
	}
	if (p) {
		p->owed = 0;
		p->owed_bd = false;
	}
	spawn(a, kind, peer, retried);
}

/* Whether peer's own session is in flight (ls_agent_owed_next's busy). */
static bool peer_in_flight(void *arg, const struct ls_agent_peer *peer)
{
	return in_flight(arg, peer->name);
}

/*
 * Start the owed sessions, oldest first, while --max-sessions allow; a
 * peer whose own session still runs waits without holding the others back.
 */
static void run_owed(struct agent *a)
{
	while (sessions(a) < a->c.max_sessions) {
		struct ls_agent_peer *p = ls_agent_owed_next(a->peers, a->npeers, peer_in_flight, a);
		enum child_kind kind;

		if (!p)
			return;
		kind = p->owed_bd ? CH_BD : CH_PROBE;
		p->owed = 0;
		p->owed_bd = false;
		if (spawn(a, kind, p->name, false))
			return;
	}
}

/* A new slot: its target, probed or broken down. */
static void run_slot(struct agent *a, uint64_t slot)
{
	size_t m = a->list.n + (a->self_idx == a->list.n);	/* nodes, self included */
	long t = ls_sched_target(a->c.schedule, a->c.seed, a->self_idx, m, slot);
	uint64_t round = m > 1 ? slot / (m - 1) : 0;
	bool bd = a->c.bd_every && round % a->c.bd_every == 0;

	if (t < 0 || (size_t)t >= a->list.n)
		return;
	start_session(a, bd ? CH_BD : CH_PROBE, a->list.v[t], false);
}

/* Start the retries and the responders that are due. */
static void run_due(struct agent *a)
{
	uint64_t now = ls_now_ns();

	for (size_t i = 0; i < AGENT_MAX_SESSIONS; i++) {
		struct agent_retry *r = &a->retry[i];

		if (!r->used || now < r->at_ns)
			continue;
		r->used = false;
		if (find_peer(a, r->peer))
			start_session(a, r->kind, r->peer, true);
	}
	for (int k = 0; k < 2; k++) {
		if (!a->resp_at_ns[k] || now < a->resp_at_ns[k])
			continue;
		if (k == 1 && !a->c.bd_every) {
			a->resp_at_ns[k] = 0;
			continue;
		}
		if (!spawn(a, k ? CH_BD_RESP : CH_RESP, NULL, false))
			a->resp_at_ns[k] = 0;
		else
			a->resp_at_ns[k] = now + AGENT_RESTART_NS;
	}
}

/* Shorten *wait to the time from now to at (0 when at is past). */
static void nearer(uint64_t *wait, uint64_t now, uint64_t at)
{
	uint64_t d = at > now ? at - now : 0;

	if (d < *wait)
		*wait = d;
}

/* How long poll may sleep: until the next slot, retry, restart or deadline (ms). */
static int next_wait_ms(const struct agent *a)
{
	uint64_t now = ls_now_ns();
	uint64_t wait = a->c.slot_ns - wall_ns() % a->c.slot_ns;

	for (size_t i = 0; i < AGENT_MAX_SESSIONS; i++)
		if (a->retry[i].used)
			nearer(&wait, now, a->retry[i].at_ns);
	for (int k = 0; k < 2; k++)
		if (a->resp_at_ns[k])
			nearer(&wait, now, a->resp_at_ns[k]);
	for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++)
		if (a->ch[i].pid && a->ch[i].deadline_ns && !a->ch[i].killed)
			nearer(&wait, now, a->ch[i].deadline_ns);
	if (wait > (uint64_t)INT_MAX * 1000000 / 2)
		wait = (uint64_t)INT_MAX * 1000000 / 2;
	return (int)(wait / 1000000) + 1;
}

/* SIGHUP: re-read the peers file; a bad one keeps the old list. */
static void reload(struct agent *a)
{
	struct ls_err err = { 0 };

	a->st.reloads++;
	if (load_peers(a, &err)) {
		a->st.reload_failures++;
		agent_log("SIGHUP: %s: keeping the %zu peers of the old list", err.msg, a->npeers);
		return;
	}
	agent_log("SIGHUP: %s: %zu peers%s", a->c.peers, a->npeers,
		  a->self_idx == a->list.n ? " (this node is not listed)" : "");
}

/* Stop: end the children (SIGTERM, then SIGKILL after a grace), reap them. */
static void stop_children(struct agent *a)
{
	uint64_t until = ls_now_ns() + AGENT_STOP_GRACE_NS;
	bool left;

	for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++)
		if (a->ch[i].pid)
			kill(a->ch[i].pid, SIGTERM);
	do {
		reap(a, true);
		left = false;
		for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++)
			left |= a->ch[i].pid != 0;
		if (left)
			usleep(20000);
	} while (left && ls_now_ns() < until);
	if (!left)
		return;
	for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++)
		if (a->ch[i].pid)
			kill(a->ch[i].pid, SIGKILL);
	for (size_t i = 0; i < AGENT_MAX_CHILDREN; i++) {
		if (!a->ch[i].pid)
			continue;
		waitpid(a->ch[i].pid, NULL, 0);
		if (a->ch[i].fd >= 0)
			close(a->ch[i].fd);
		a->ch[i].pid = 0;
	}
}

/* The main loop: signals, ended children, slots; 0 on SIGTERM/SIGINT, -1 when poll fails. */
static int loop(struct agent *a)
{
	struct signalfd_siginfo si;
	struct pollfd pfd = { .fd = a->sfd, .events = POLLIN };
	bool stop = false;

	while (!stop) {
		uint64_t slot, skipped = a->st.skipped;
		bool changed = false;

		if (poll(&pfd, 1, next_wait_ms(a)) < 0 && errno != EINTR) {
			agent_log("poll: %s: stopping", strerror(errno));
			return -1;
		}
		while (read(a->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
				stop = true;
			else if (si.ssi_signo == SIGHUP) {
				reload(a);
				changed = true;
			}
		}
		if (stop)
			break;
		changed |= reap(a, false);
		kill_overdue(a);
		slot = wall_ns() / a->c.slot_ns;
		if (!a->have_slot || slot != a->last_slot) {
			a->have_slot = true;
			a->last_slot = slot;
			run_slot(a, slot);
			changed = true;	/* staleness moves with time: a fresh page each slot */
		}
		run_due(a);
		run_owed(a);
		if (changed || a->st.skipped != skipped)
			publish(a);
	}
	return 0;
}

/* The checks before anything starts: options, key, device, peers file; an exit status. */
static int check_start(struct agent *a)
{
	struct ibv_device **list;
	struct ls_err err = { 0 };
	int n = 0;

	if (!a->c.peers || !a->c.metrics)
		return ls_opts_bad("agent", "--peers FILE and --metrics ADDR:PORT are required");
	if (!a->c.key == !a->c.insecure)
		return ls_opts_bad("agent", "give --key FILE (the fleet's shared key) or --insecure");
	if (a->c.slot_ns < 100000000ull)
		return ls_opts_bad("agent", "--slot must be at least 100ms");
	if (a->c.slot_ns > AGENT_SLOT_MAX_NS)
		return ls_opts_bad("agent", "--slot must be at most 86400s (24 hours)");
	if (a->c.session_timeout_ns < 1000000000ull)
		return ls_opts_bad("agent", "--session-timeout must be at least 1s");
	if (a->c.verb && ls_probe_parse_verb(a->c.verb, &(enum ls_probe_verb){ 0 }, &err))
		return ls_opts_exit(LS_EXIT_USAGE, "agent", &err);
	if (a->c.key && ls_auth_key_check(a->c.key, &err))
		return ls_opts_exit(LS_EXIT_USAGE, "agent", &err);
	if (a->c.bd_port == a->c.port)
		return ls_opts_bad("agent", "--breakdown-port must differ from --port (%u)", a->c.port);
	if (a->c.bd_every && a->c.backend && !strcmp(a->c.backend, "kmod"))
		return ls_opts_bad("agent", "--backend kmod with --breakdown-every: the breakdown responder owns latsplit.ko for its lifetime, so this node's own breakdowns could not open it; use --backend auto (the prober side falls back to eBPF) or ebpf");
	if (a->c.self)
		snprintf(a->self, sizeof(a->self), "%s", a->c.self);
	else if (gethostname(a->self, sizeof(a->self) - 1))
		return ls_opts_bad("agent", "cannot read the host name (give --self): %s",
				   strerror(errno));
	if (load_peers(a, &err))
		return ls_opts_exit(LS_EXIT_USAGE, "agent", &err);
	if (parse_listen(a->c.metrics, &(struct sockaddr_storage){ 0 }, &err))
		return ls_opts_exit(LS_EXIT_USAGE, "agent", &err);
	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	if (!n)
		return ls_opts_bad("agent", "no RDMA device on this host: the agent probes and answers over RDMA (for Soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev IF)");
	return 0;
}

/* `latsplit agent`: the per-node responder, prober and /metrics endpoint. */
int cmd_agent(int argc, char **argv)
{
	static const struct ls_optcmd cmd = { .name = "agent", .mode = "", .usage = usage };
	struct ls_err err = { 0 };
	struct agent *a;
	sigset_t set;
	int rc;

	a = calloc(1, sizeof(*a));
	if (!a) {
		ls_warn("agent: out of memory");
		return LS_EXIT_USAGE;
	}
	a->sfd = -1;
	a->self_pid = getpid();
	a->c.port = LS_OOB_DEFAULT_PORT;
	a->c.slot_ns = 5000000000ull;
	a->c.max_sessions = 1;
	a->c.max_conns = 16;
	a->c.iters = 200;
	a->c.session_timeout_ns = 60000000000ull;
	a->c.schedule = LS_SCHED_RR;
	a->st.version = LS_VERSION;
	rc = LS_OPTS_PARSE(argc, argv, &cmd, agent_options, a, &err);
	if (rc) {
		rc = rc == LS_OPTS_HELP ? LS_EXIT_OK : rc;
		goto out;
	}
	if (optind < argc) {
		rc = ls_opts_bad("agent", "takes no argument ('%s')", argv[optind]);
		goto out;
	}
	if (!a->c.bd_port)
		a->c.bd_port = a->c.port < 65535 ? a->c.port + 1 : a->c.port - 1;
	rc = check_start(a);
	if (rc)
		goto out;
	pthread_mutex_init(&a->lock, NULL);
	a->seed_state = (unsigned int)(wall_ns() ^ (uint64_t)getpid());
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	/* blocked before the HTTP thread starts, so only the signalfd sees them */
	sigprocmask(SIG_BLOCK, &set, NULL);
	a->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (a->sfd < 0) {
		ls_warn("agent: signalfd: %s", strerror(errno));
		rc = LS_EXIT_USAGE;
		goto out;
	}
	publish(a);
	if (start_http(a, &err)) {
		ls_warn("agent: %s", err.msg);
		rc = LS_EXIT_USAGE;
		goto out;
	}
	agent_log("serving /metrics on %s; %zu peers from %s%s; probe port %u%s", a->c.metrics,
		  a->npeers, a->c.peers,
		  a->self_idx == a->list.n ? " (this node is not listed)" : "", a->c.port,
		  a->c.bd_every ? ", breakdowns" : "");
	a->resp_at_ns[0] = ls_now_ns();
	a->resp_at_ns[1] = a->c.bd_every ? ls_now_ns() : 0;
	run_due(a);
	rc = loop(a) ? LS_EXIT_FAIL : LS_EXIT_OK;
	a->stopping = true;
	agent_log("stopping: ending the sessions in flight");
	stop_children(a);
	MHD_stop_daemon(a->mhd);
	a->mhd = NULL;
	agent_log("stopped");
out:
	if (a->mhd)
		MHD_stop_daemon(a->mhd);
	if (a->sfd >= 0)
		close(a->sfd);
	free(a->page);
	free(a->peers);
	ls_peers_free(&a->list);
	free(a);
	return rc;
}
