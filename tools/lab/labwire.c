// SPDX-License-Identifier: GPL-2.0
/*
 * labwire: the lab's wire between the two QEMU guests, and its ground truth.
 *
 * Each guest's virtio-net NIC uses QEMU's UDP socket netdev: every datagram
 * on 127.0.0.1 is one raw Ethernet frame (no FCS, no vnet header). labwire
 * binds port A (node0 sends there) and port B (node1 sends there). A frame
 * read on A leaves from B to node1's own port (--b-peer): direction "ab". A
 * frame read on B leaves from A to node0's own port (--a-peer): "ba".
 *
 *   labwire run --a PORT --a-peer PORT --b PORT --b-peer PORT --ctl SOCK
 *               [--log FILE] [--pidfile FILE] [--daemon] [--spin NS]
 *   labwire ctl SOCK COMMAND [ARGS...]
 *
 * The four ports must be distinct (1-65535); only 127.0.0.1 is used.
 *
 * Pipeline, per direction, in this order:
 *  1. Classify: Ethernet (one 802.1Q/802.1ad tag skipped), IPv4 or IPv6 (no
 *     extension headers; IPv4 fragments after the first carry no UDP), UDP;
 *     UDP destination port 4791 is RoCEv2 and its BTH gives the opcode
 *     (byte 0), destination QP (bytes 5-7) and PSN (bytes 9-11). Opcode
 *     class by the low 5 bits (RC, UC, RD, UD, XRC; CNP and vendor opcodes
 *     have none): req = 0x00-0x0c, 0x13-0x17; resp = 0x0d-0x10, 0x12;
 *     ack = 0x11. Short or unparsable frames are kind "other" and are
 *     forwarded untouched. The priority class comes from the DSCP map at
 *     arrival (frames that are not IP count as DSCP 0).
 *  2. Rules 0-7, first match wins. Match fields, ANDed, all optional:
 *     roce=0|1 op=req|resp|ack psn=even|odd|hash dqpn=N dscp=N dport=N every=N.
 *     psn=hash selects a pseudo-random half of all PSNs (murmur3 finalizer,
 *     low bit), independent of a sample's parity.
 *     every=N takes every Nth frame that matches the rule's other fields
 *     (a per-rule counter); the frames it skips go on to the next rules.
 *     Actions: loss=PPM (drop with probability PPM/1e6), delay=NS,
 *     jitter=NS (uniform in [-NS, +NS], the sum clamped at 0), seed=N for
 *     the rule's PRNG (splitmix64, default seed 1; one draw for loss, then
 *     one for jitter). Loading a rule or `reset` restarts its PRNG and its
 *     every= counter, so a run is reproducible.
 *  3. Delay: a delayed frame waits in a min-heap until arrive + delay
 *     ("ready"). Frames with different delays can leave out of order, as
 *     with netem.
 *  4. Egress link: a byte FIFO per priority class (8 classes, DSCP->class
 *     map, default every DSCP in class 0), strict priority (class 0 first)
 *     whenever the link picks its next frame. A frame counts in its class's
 *     queued bytes from enqueue until it is sent. At enqueue: tail drop when
 *     queued + len > limit (default 1 MiB); when ecn > 0 and queued > ecn,
 *     an ECT(0)/ECT(1) frame becomes CE (IPv4: header checksum recomputed;
 *     IPv6 too), a non-ECT frame is left alone. With rate=BPS the link sends
 *     one frame at a time: ser = (max(len + 4, 64) + 20) * 8 / rate (ns,
 *     rounded down), due = max(ready, link free) + ser, and the frame is
 *     sent at due. Without a rate ser = 0: a frame leaves when it is ready.
 * The schedule (ready, due) is computed from the arrival timestamps alone,
 * so it is exact; depart is the time the host actually sent the frame.
 *
 * Timing: one thread; ppoll() with a nanosecond timeout to the next due
 * frame, timer slack 1 ns, and busy polling (ppoll with a zero timeout) in
 * the last --spin NS (default 50 us, at most 1 ms, 0 = never) before a due
 * time: a larger margin buys precision where timer wake-ups are slow, with
 * CPU time taken from the guests. SCHED_FIFO 1 and mlockall when
 * permitted (the log header says which took). At most 65536 frames in
 * flight and 256 MiB of frame buffers per direction; beyond that a frame is
 * dropped (why=inflight, why=nomem).
 *
 * Counters (stats), per direction and per class: rx/tx frames and bytes,
 * delayed, lost (rule loss), dropped (by why), ce_marked, other (not
 * classified), roce, max queued bytes, sojourn (arrive to depart) histogram
 * "sojourn_us_log2" (bucket 0: < 1 us, bucket i: [2^(i-1), 2^i) us, the last
 * bucket holds the rest); per direction "wire_latency_ns" (depart - due of
 * frames without a delay: what the wire itself adds) and "delay_error_ns"
 * (depart - due of delayed frames), as count/mean/p50/p99/max (quantiles
 * from a log-linear histogram, within 7 %).
 *
 * Log (the oracle): text, one line per frame once it is sent or dropped,
 * kept in a memory ring and written off the forwarding path: when the wire
 * is idle (nothing due within 20 ms and no traffic for 20 ms), in small
 * chunks when the ring is half full, at once when it is full, and on
 * `flush`, `log` and exit. Line 1 is "# labwire ..." (ports, scheduling,
 * mlock); line 2 "# seq dir ..." names the columns:
 *   seq        per-direction arrival number (from 0; restarts at `reset`)
 *   dir        ab | ba
 *   arrive_ns  CLOCK_MONOTONIC when the datagram was read
 *   due_ns     computed departure (0 when dropped before the link)
 *   depart_ns  CLOCK_MONOTONIC just before sendto (0 when not sent)
 *   len        datagram (frame) length in bytes
 *   class      priority class
 *   roce       1 for RoCEv2, else 0
 *   opcode     BTH opcode as 0xNN, -1 if not RoCEv2
 *   psn dqpn   BTH PSN and destination QP, -1 if not RoCEv2
 *   dscp ecn_in ecn_out   DSCP, ECN as received and as sent (0 if not IP)
 *   rule       index of the rule that took the frame, -1 none
 *   delay_ns   requested delay including jitter
 *   ser_ns     serialization time (0 without a rate or when not sent)
 *   action     fwd | loss (rule loss) | drop (see why)
 *   kind       other | ip | udp | roce
 *   dport      UDP destination port, -1 if not UDP
 *   why        - | qfull | inflight | nomem | send
 * Frames still in flight at exit are discarded without a line.
 *
 * Control: a UNIX stream socket, mode 0600. One command line per
 * connection; the server writes the whole reply and closes. Replies: "ok",
 * data (stats), or "error: ..." and then nothing changed. DIR is ab, ba, or
 * both. Numbers are decimal (or 0x hex).
 *   ping                                     ok
 *   rule DIR N [FIELD=V...] [delay=NS] [jitter=NS] [loss=PPM] [seed=N]
 *   norule DIR [N]                           clear rule N, or all rules
 *   link DIR rate=BPS                        0 = unlimited (the default)
 *   class DIR N [limit=BYTES] [ecn=BYTES]    ecn=0: no marking
 *   dscp DIR D=C[,D=C...] ...  |  dscp DIR reset
 *   flow DIR class=C [block=BYTES] [depth=N] [frame=BYTES] [ect=0|1]
 *                a storage flow sharing class C (labwire_flow.c): DEPTH
 *                blocks (default 4 x 65536 B, 1500-B frames, ECT) always
 *                outstanding, sunk at the link's far end; needs a rate
 *   flow DIR off                             stop issuing (queued blocks drain)
 *   stats        one JSON line {"wire":{...},"ab":{...},"ba":{...}}
 *   reset        counters, histograms, seq, rule counters and PRNGs
 *   flush        the log is written to its file before the reply
 *   log FILE     switch to FILE (truncated); FILE is absolute (labwire ctl
 *                makes a relative one absolute); log off: close the log
 * labwire ctl prints the reply and exits 0, or 1 on "error: ..." (printed
 * to stderr) or when the wire cannot be reached; 2 on usage errors.
 *
 * run exits 2 on bad options, 1 when setup fails (bind, control socket,
 * log), 0 after SIGTERM/SIGINT (log flushed, control socket and pidfile
 * removed). --pidfile is written once the sockets are bound and the control
 * socket listens. --daemon: the parent exits 0 once the child is ready and
 * has written the pidfile (1 if the child failed); the child's stdin and
 * stdout go to /dev/null, its stderr to LOG.err with --log, else to
 * PIDFILE.err with --pidfile, else /dev/null.
 *
 * Sources: this file (options, setup, `run` and `ctl`) and the labwire_*.c
 * files that labwire_int.h lists, one job each.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "labwire_int.h"

/* Names of the OP_*, WHY_* numbers and of the directions. */
const char *const op_name[] = { "none", "req", "resp", "ack" };
const char *const why_name[] = { "-", "qfull", "inflight", "nomem", "send" };
const char *const dir_name[] = { "ab", "ba" };

/* The whole wire. */
struct wire W;

/* Print the usage text to f. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: labwire run --a PORT --a-peer PORT --b PORT --b-peer PORT --ctl SOCK\n"
		"                   [--log FILE] [--pidfile FILE] [--daemon] [--spin NS]\n"
		"       labwire ctl SOCK COMMAND [ARGS...]\n"
		"commands: ping | rule DIR N [FIELD=V...] | norule DIR [N] | link DIR rate=BPS\n"
		"  | class DIR N [limit=B] [ecn=B] | dscp DIR D=C[,D=C...] | dscp DIR reset\n"
		"  | flow DIR class=C [block=B] [depth=N] [frame=B] [ect=0|1] [spread=PCT]\n"
		"    [seed=N] | flow DIR off\n"
		"  | stats | reset | flush | log FILE | log off     (DIR: ab, ba, both)\n"
		"rule fields: roce=0|1 op=req|resp|ack psn=even|odd|hash dqpn=N dscp=N dport=N\n"
		"  every=N delay=NS jitter=NS loss=PPM seed=N\n");
}

/* Parse a port option value (1-65535); false with a message when bad. */
static bool port_opt(const char *name, const char *val, unsigned int *port)
{
	uint64_t v;

	if (!parse_num(val, 65535, &v) || !v) {
		fprintf(stderr, "labwire: --%s %s: a port must be a number in 1..65535\n", name,
			val);
		return false;
	}
	*port = (unsigned int)v;
	return true;
}

/* Parse `run` options into o; 0, or 2 (message printed). */
static int parse_run_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "a", required_argument, NULL, 'a' }, { "a-peer", required_argument, NULL, 'A' },
		{ "b", required_argument, NULL, 'b' }, { "b-peer", required_argument, NULL, 'B' },
		{ "ctl", required_argument, NULL, 'c' }, { "log", required_argument, NULL, 'l' },
		{ "pidfile", required_argument, NULL, 'p' }, { "daemon", no_argument, NULL, 'd' },
		{ "spin", required_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int *ports[4] = { &o->a, &o->a_peer, &o->b, &o->b_peer };
	int c;

	o->spin = SPIN_NS;
	opterr = 0;
	while ((c = getopt_long_only(argc, argv, ":", lo, NULL)) != -1) {
		switch (c) {
		case 'a': if (!port_opt("a", optarg, &o->a)) return 2; break;
		case 'A': if (!port_opt("a-peer", optarg, &o->a_peer)) return 2; break;
		case 'b': if (!port_opt("b", optarg, &o->b)) return 2; break;
		case 'B': if (!port_opt("b-peer", optarg, &o->b_peer)) return 2; break;
		case 'c': o->ctl = optarg; break;
		case 'l': o->log = optarg; break;
		case 'p': o->pidfile = optarg; break;
		case 'd': o->daemon = true; break;
		case 's':
			if (!parse_num(optarg, MAX_SPIN_NS, &o->spin)) {
				fprintf(stderr, "labwire: --spin %s: nanoseconds in 0..%llu\n",
					optarg, (unsigned long long)MAX_SPIN_NS);
				return 2;
			}
			break;
		case 'h': usage(stdout); exit(0);
		case ':':
			fprintf(stderr, "labwire: %s needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "labwire: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "labwire: run: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!o->a || !o->a_peer || !o->b || !o->b_peer || !o->ctl) {
		fprintf(stderr, "labwire: run needs --a, --a-peer, --b, --b-peer and --ctl\n");
		return 2;
	}
	for (int i = 0; i < 4; i++)
		for (int k = i + 1; k < 4; k++)
			if (*ports[i] == *ports[k]) {
				fprintf(stderr, "labwire: ports must be distinct (%u given twice)\n",
					*ports[i]);
				return 2;
			}
	if (!o->ctl[0] || strlen(o->ctl) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, "labwire: --ctl %s: the path must have 1..%zu bytes\n", o->ctl,
			sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return 2;
	}
	return 0;
}

/* Raise our scheduling (timer slack 1 ns, SCHED_FIFO 1, mlockall) as far as allowed. */
static void rt_setup(void)
{
	struct sched_param sp = { .sched_priority = 1 };

	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	if (!sched_setscheduler(0, SCHED_FIFO, &sp))
		snprintf(W.sched_desc, sizeof(W.sched_desc), "fifo:1");
	else
		snprintf(W.sched_desc, sizeof(W.sched_desc), "other(SCHED_FIFO:%s)",
			 strerror(errno));
	for (char *p = W.sched_desc; *p; p++)
		if (*p == ' ')
			*p = '_';
	if (geteuid() == 0 && !mlockall(MCL_CURRENT | MCL_FUTURE))
		W.mlocked = true;
}

/* Write our pid to path; 0 or 1 (message printed). */
static int write_pidfile(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
		fprintf(stderr, "labwire: pidfile %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* Fork into the background; in the child, return the fd to report readiness on. */
static int daemonize(const struct opts *o, int *ready_fd)
{
	char errpath[PATH_MAX], c = 0;
	int p[2], fd;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		fprintf(stderr, "labwire: pipe: %s\n", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "labwire: fork: %s\n", strerror(errno));
		return 1;
	}
	if (o->log || o->pidfile)
		snprintf(errpath, sizeof(errpath), "%s.err", o->log ? o->log : o->pidfile);
	else
		snprintf(errpath, sizeof(errpath), "/dev/null");
	if (pid > 0) {
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		if (c != 'k')
			fprintf(stderr, "labwire: the daemon failed to start (its errors: %s)\n",
				errpath);
		_exit(c == 'k' ? 0 : 1);
	}
	close(p[0]);
	setsid();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		close(fd);
	}
	fd = open(errpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		dup2(fd, 2);
		close(fd);
	}
	*ready_fd = p[1];
	return 0;
}

/* Set up the wire before the loop: memory, sockets, log, daemon, pidfile; 0 or 1. */
static int wire_setup(int *ready_fd)
{
	int err;

	W.log_fd = W.lfd = -1;
	for (int i = 0; i < MAX_CLIENTS; i++)
		W.cl[i].fd = -1;
	W.ring = calloc(LOG_RECS, sizeof(*W.ring));
	if (!W.ring || dir_init(&W.d[0], 0) || dir_init(&W.d[1], 1)) {
		fprintf(stderr, "labwire: allocate frame pools and log ring: %s\n",
			strerror(ENOMEM));
		return 1;
	}
	signals_setup();
	err = wire_sockets();
	if (err)
		return err;
	err = ctl_listen(W.o.ctl, &W.lfd);
	if (err)
		return err;
	if (W.o.daemon) {
		err = daemonize(&W.o, ready_fd);
		if (err)
			goto fail;
	}
	rt_setup();
	if (W.o.log) {
		err = log_open(W.o.log);
		if (err) {
			fprintf(stderr, "labwire: log %s: %s\n", W.o.log, strerror(-err));
			err = 1;
			goto fail;
		}
	}
	if (W.o.pidfile) {
		err = write_pidfile(W.o.pidfile);
		if (err)
			goto fail;
	}
	return 0;
fail:
	unlink(W.o.ctl);
	return 1;
}

/* labwire run ...: forward until SIGTERM/SIGINT. */
static int run_main(int argc, char **argv)
{
	int err, ready_fd = -1;

	err = parse_run_opts(argc, argv, &W.o);
	if (err)
		return err;
	err = wire_setup(&ready_fd);
	if (err)
		return err;
	if (ready_fd >= 0) {
		if (write(ready_fd, "k", 1) != 1)
			fprintf(stderr, "labwire: tell the parent we are ready: %s\n",
				strerror(errno));
		close(ready_fd);
	}
	W.last_activity = mono_ns();
	err = wire_loop();
	log_close();
	unlink(W.o.ctl);
	if (W.o.pidfile)
		unlink(W.o.pidfile);
	return err;
}

/* Join the command words into one line (a relative `log FILE` made absolute). */
static int ctl_line(int argc, char **argv, struct sbuf *line)
{
	char cwd[PATH_MAX];

	for (int i = 0; i < argc; i++) {
		if (i == 1 && argc == 2 && !strcmp(argv[0], "log") && strcmp(argv[1], "off") &&
		    argv[1][0] != '/') {
			if (!getcwd(cwd, sizeof(cwd))) {
				fprintf(stderr, "labwire: getcwd: %s\n", strerror(errno));
				return 1;
			}
			sb_printf(line, " %s/%s", cwd, argv[1]);
			continue;
		}
		if (strchr(argv[i], '\n')) {
			fprintf(stderr, "labwire: ctl: a word holds a newline\n");
			return 2;
		}
		sb_printf(line, "%s%s", i ? " " : "", argv[i]);
	}
	sb_printf(line, "\n");
	return line->oom ? 1 : 0;
}

/* labwire ctl SOCK COMMAND...: send one command and print the reply. */
static int ctl_main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 10 };
	struct sbuf line = { 0 }, reply = { 0 };
	char buf[65536];
	ssize_t n;
	int fd, err;

	if (argc < 4) {
		usage(stderr);
		return 2;
	}
	if (strlen(argv[2]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "labwire: ctl %s: path too long\n", argv[2]);
		return 2;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[2]);
	err = ctl_line(argc - 3, argv + 3, &line);
	if (err)
		goto out;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "labwire: socket (control): %s\n", strerror(errno));
		err = 1;
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "labwire: connect %s: %s\n", argv[2], strerror(errno));
		err = 1;
		goto out_close;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, line.p, line.len, MSG_NOSIGNAL) != (ssize_t)line.len) {
		fprintf(stderr, "labwire: send to %s: %s\n", argv[2], strerror(errno));
		err = 1;
		goto out_close;
	}
	shutdown(fd, SHUT_WR);
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		sb_printf(&reply, "%.*s", (int)n, buf);
	if (n < 0 || !reply.len) {
		fprintf(stderr, "labwire: %s: no reply (%s)\n", argv[2],
			n < 0 ? strerror(errno) : "connection closed");
		err = 1;
		goto out_close;
	}
	err = !strncmp(reply.p, "error:", 6);
	fputs(reply.p, err ? stderr : stdout);
out_close:
	close(fd);
out:
	free(line.p);
	free(reply.p);
	return err;
}

/* labwire run|ctl ... */
int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return run_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "ctl"))
		return ctl_main(argc, argv);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "labwire: %s: expected 'run' or 'ctl'\n",
		argc >= 2 ? argv[1] : "no command");
	usage(stderr);
	return 2;
}
