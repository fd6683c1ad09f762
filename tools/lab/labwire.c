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
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "roce_bth.h"

#define NR_DIRS		2
#define NR_RULES	8
#define NR_CLASSES	8
#define NR_DSCP		64
#define MAX_INFLIGHT	65536
#define MAX_FRAME	65536
#define SMALL_BUF	2048
#define POOL_BYTES	(256ULL << 20)
#define PREALLOC	1024
#define SPIN_NS		50000ULL
#define MAX_SPIN_NS	1000000ULL
#define IDLE_FLUSH_NS	20000000ULL
#define CHUNK_FLUSH_NS	1000000ULL
#define LOG_RECS	(1U << 17)
#define LOG_CHUNK	128
#define IDLE_CHUNK	1024
#define RX_BATCH	64
#define MAX_CLIENTS	8
#define CTL_LINE	4096
#define CLIENT_TIMEOUT_NS 2000000000ULL
#define DEFAULT_LIMIT	(1ULL << 20)
#define MAX_LIMIT	(1ULL << 30)
#define MAX_DELAY_NS	60000000000ULL
#define MAX_RATE	1000000000000ULL
#define ROCE_PORT	4791
#define HIST_NR		496
#define SOJ_NR		32
#define NONE		UINT64_MAX

enum { KIND_OTHER, KIND_IP, KIND_UDP, KIND_ROCE };
enum { OP_NONE = LS_BTH_OTHER, OP_REQ = LS_BTH_REQ, OP_RESP = LS_BTH_RESP, OP_ACK = LS_BTH_ACK };
enum { ACT_FWD, ACT_LOSS, ACT_DROP };
enum { WHY_NONE, WHY_QFULL, WHY_INFLIGHT, WHY_NOMEM, WHY_SEND, NR_WHY };

static const char *const kind_name[] = { "other", "ip", "udp", "roce" };
static const char *const op_name[] = { "none", "req", "resp", "ack" };
static const char *const act_name[] = { "fwd", "loss", "drop" };
static const char *const why_name[] = { "-", "qfull", "inflight", "nomem", "send" };
static const char *const dir_name[] = { "ab", "ba" };

/* Log-linear histogram of nanoseconds: 8 sub-buckets per power of two. */
struct lhist {
	uint64_t count, sum, max;
	uint64_t b[HIST_NR];
};

/* Counters of one direction or of one class in it. */
struct ctrs {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t delayed, lost, dropped, ce_marked, other, roce, max_queued;
	uint64_t why[NR_WHY];
	uint64_t soj[SOJ_NR];
};

/* One rule: match fields (-1 = any), actions, and its own state. */
struct rule {
	bool used;
	int roce, op, parity;
	int64_t dqpn, dscp, dport;
	uint64_t every, delay, jitter, loss, seed;
	uint64_t rng, seen, hits, lost, delayed;
};

/* A frame: its bytes and what the pipeline learnt and decided about it. */
struct frame {
	uint8_t *buf;
	uint32_t cap, len;
	int32_t next;
	uint64_t seq, arrive, ready, due, delay, ser;
	int32_t psn, dqpn, opcode, dport;
	int8_t rule;
	uint8_t kind, opclass, dscp, ecn_in, ecn_out, cls, ipver;
	uint16_t l3off;
};

/* One log line, kept binary until the ring is written out. */
struct logrec {
	uint64_t seq, arrive, due, depart, delay, ser;
	uint32_t len;
	int32_t psn, dqpn, opcode, dport;
	int8_t rule;
	uint8_t dir, cls, kind, dscp, ecn_in, ecn_out, action, why;
};

/* One direction of the wire. */
struct dir {
	uint8_t idx;
	int in_fd, out_fd;
	struct sockaddr_in dst;
	struct rule rules[NR_RULES];
	uint64_t rate, link_free;
	uint64_t limit[NR_CLASSES], ecn[NR_CLASSES], queued[NR_CLASSES];
	uint64_t queued_total;
	uint8_t dscp_map[NR_DSCP];
	int32_t qhead[NR_CLASSES], qtail[NR_CLASSES];
	int32_t busy;
	struct frame *slots;
	int32_t *freel, *heap;
	uint32_t nfree, nheap;
	uint64_t pool_bytes, seq, inflight, max_inflight;
	struct ctrs tot, cls[NR_CLASSES];
	struct lhist wire_lat, delay_err;
};

/* A control connection waiting for its command line. */
struct client {
	int fd;
	uint32_t n;
	uint64_t since;
	char buf[CTL_LINE];
};

/* A growing text buffer for replies. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

/* Options of `labwire run`. */
struct opts {
	unsigned int a, a_peer, b, b_peer;
	uint64_t spin;
	const char *ctl, *log, *pidfile;
	bool daemon;
};

/* The whole wire. */
struct wire {
	struct dir d[NR_DIRS];
	struct opts o;
	int lfd, log_fd;
	char *log_path;
	struct client cl[MAX_CLIENTS];
	struct logrec *ring;
	uint32_t rhead, rcount;
	uint64_t log_lines, log_forced, log_errors, last_activity;
	sigset_t waitmask;
	char sched_desc[96];
	bool mlocked;
	uint8_t rx[MAX_FRAME];
};

static struct wire W;
static volatile sig_atomic_t stop_sig;

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Next value of a splitmix64 generator. */
static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Big-endian 16-bit value at p. */
static inline uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* Big-endian 24-bit value at p. */
static inline uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* Parse an unsigned number (decimal or 0x hex) no larger than max. */
static bool parse_num(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s || !((*s >= '0' && *s <= '9') || (base == 16 && isxdigit((unsigned char)*s))))
		return false;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* Append printf-formatted text to sb (sets sb->oom on failure). */
__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	int n;

	for (;;) {
		room = sb->cap - sb->len;
		va_start(ap, fmt);
		n = vsnprintf(sb->p ? sb->p + sb->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->oom = true;
			return;
		}
		if ((size_t)n < room) {
			sb->len += (size_t)n;
			return;
		}
		size_t cap = (sb->cap ? sb->cap * 2 : 4096) + (size_t)n;
		char *p = realloc(sb->p, cap);

		if (!p) {
			sb->oom = true;
			return;
		}
		sb->p = p;
		sb->cap = cap;
	}
}

/* Bucket of a nanosecond value in a log-linear histogram. */
static unsigned int lhist_bucket(uint64_t v)
{
	unsigned int e, b;

	if (v < 16)
		return (unsigned int)v;
	e = 63 - (unsigned int)__builtin_clzll(v);
	b = 16 + (e - 4) * 8 + (unsigned int)((v >> (e - 3)) & 7);
	return b < HIST_NR ? b : HIST_NR - 1;
}

/* Add one value to h. */
static void lhist_add(struct lhist *h, uint64_t v)
{
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
	h->b[lhist_bucket(v)]++;
}

/* Nearest-rank quantile q of h: the midpoint of its bucket, at most max. */
static uint64_t lhist_quantile(const struct lhist *h, double q)
{
	uint64_t rank, cum = 0, lo, width;
	unsigned int b, e;

	if (!h->count)
		return 0;
	rank = (uint64_t)(q * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < HIST_NR; b++) {
		cum += h->b[b];
		if (cum >= rank)
			break;
	}
	if (b < 16)
		return b;
	e = (b - 16) / 8 + 4;
	width = 1ULL << (e - 3);
	lo = (8ULL + (b - 16) % 8) << (e - 3);
	return lo + width / 2 < h->max ? lo + width / 2 : h->max;
}

/* Sojourn histogram bucket of a nanosecond value (log2 of microseconds). */
static unsigned int soj_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned int b;

	if (!us)
		return 0;
	b = 64 - (unsigned int)__builtin_clzll(us);
	return b < SOJ_NR ? b : SOJ_NR - 1;
}

/* Opcode class of a BTH opcode (OP_* numbers are the LS_BTH_* ones). */
static uint8_t opcode_class(uint8_t op)
{
	return (uint8_t)ls_bth_class(op);
}

/* Find the IP header of p[0..len): sets kind, DSCP, ECN; returns the L4 offset (0: none). */
static uint32_t classify_ip(struct frame *f, const uint8_t *p, uint32_t len, uint8_t *proto)
{
	uint32_t off = 14, et, ihl, l4;
	uint8_t tos;
	bool later_frag = false;

	if (len < 14)
		return 0;
	et = be16(p + 12);
	if (et == 0x8100 || et == 0x88a8) {
		if (len < 18)
			return 0;
		et = be16(p + 16);
		off = 18;
	}
	if (et == 0x0800) {
		if (len < off + 20 || (p[off] >> 4) != 4)
			return 0;
		ihl = (p[off] & 0xfu) * 4;
		if (ihl < 20 || len < off + ihl)
			return 0;
		tos = p[off + 1];
		*proto = p[off + 9];
		later_frag = (be16(p + off + 6) & 0x1fff) != 0;
		l4 = off + ihl;
		f->ipver = 4;
	} else if (et == 0x86dd) {
		if (len < off + 40 || (p[off] >> 4) != 6)
			return 0;
		tos = (uint8_t)((p[off] & 0xf) << 4 | p[off + 1] >> 4);
		*proto = p[off + 6];
		l4 = off + 40;
		f->ipver = 6;
	} else {
		return 0;
	}
	f->kind = KIND_IP;
	f->l3off = (uint16_t)off;
	f->dscp = tos >> 2;
	f->ecn_in = tos & 3;
	return later_frag ? 0 : l4;
}

/* Fill f's header fields from p[0..len); never reads past len. */
static void classify(struct frame *f, const uint8_t *p, uint32_t len)
{
	const uint8_t *bth;
	uint8_t proto = 0;
	uint32_t l4;

	f->kind = KIND_OTHER;
	f->opclass = OP_NONE;
	f->opcode = f->psn = f->dqpn = f->dport = -1;
	l4 = classify_ip(f, p, len, &proto);
	if (!l4 || proto != 17 || len < l4 + 8)
		return;
	f->kind = KIND_UDP;
	f->dport = (int32_t)be16(p + l4 + 2);
	if (f->dport != ROCE_PORT || len < l4 + 8 + 12)
		return;
	bth = p + l4 + 8;
	f->kind = KIND_ROCE;
	f->opcode = bth[0];
	f->opclass = opcode_class(bth[0]);
	f->dqpn = (int32_t)be24(bth + 5);
	f->psn = (int32_t)be24(bth + 9);
}

/* Mark an ECT frame CE in place; false when it is not ECT. */
static bool mark_ce(struct frame *f)
{
	uint8_t *ip = f->buf + f->l3off;
	uint32_t sum = 0, ihl, i;

	if (!f->ipver || (f->ecn_out != 1 && f->ecn_out != 2))
		return false;
	if (f->ipver == 6) {
		ip[1] |= 0x30;
	} else {
		ihl = (ip[0] & 0xfu) * 4;
		ip[1] |= 3;
		ip[10] = ip[11] = 0;
		for (i = 0; i < ihl; i += 2)
			sum += be16(ip + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		sum = ~sum & 0xffff;
		ip[10] = (uint8_t)(sum >> 8);
		ip[11] = (uint8_t)sum;
	}
	f->ecn_out = 3;
	return true;
}

/* Serialization time of a len-byte frame at rate bit/s (0 without a rate). */
static uint64_t ser_ns(uint64_t rate, uint32_t len)
{
	uint64_t bytes = len + 4ULL < 64 ? 64 : len + 4ULL;

	if (!rate)
		return 0;
	return (bytes + 20) * 8 * 1000000000ULL / rate;
}


/* Whether f's PSN passes r's psn= selection (even, odd or hash). */
static bool psn_selected(const struct rule *r, const struct frame *f)
{
	if (r->parity < 0)
		return true;
	if (f->psn < 0)
		return false;
	if (r->parity == 2)
		return ls_psn_hash_bit((unsigned int)f->psn);
	return (f->psn & 1) == r->parity;
}

/* Whether f matches r's fields (every= aside). */
static bool rule_fields_match(const struct rule *r, const struct frame *f)
{
	if (r->roce >= 0 && (f->kind == KIND_ROCE) != (r->roce == 1))
		return false;
	if (r->op >= 0 && f->opclass != r->op)
		return false;
	if (!psn_selected(r, f))
		return false;
	if (r->dqpn >= 0 && f->dqpn != r->dqpn)
		return false;
	if (r->dscp >= 0 && (!f->ipver || f->dscp != r->dscp))
		return false;
	if (r->dport >= 0 && f->dport != r->dport)
		return false;
	return true;
}

/* Run f through d's rules: true when f is lost; sets f->rule and f->delay. */
static bool rules_apply(struct dir *d, struct frame *f)
{
	struct rule *r;
	int64_t delay;
	unsigned int i;

	f->rule = -1;
	f->delay = 0;
	for (i = 0; i < NR_RULES; i++) {
		r = &d->rules[i];
		if (!r->used || !rule_fields_match(r, f))
			continue;
		r->seen++;
		if (r->every > 1 && r->seen % r->every)
			continue;
		f->rule = (int8_t)i;
		r->hits++;
		if (r->loss && splitmix64(&r->rng) % 1000000 < r->loss) {
			r->lost++;
			return true;
		}
		delay = (int64_t)r->delay;
		if (r->jitter)
			delay += (int64_t)(splitmix64(&r->rng) % (2 * r->jitter + 1)) -
				 (int64_t)r->jitter;
		f->delay = delay > 0 ? (uint64_t)delay : 0;
		if (f->delay)
			r->delayed++;
		return false;
	}
	return false;
}

/* Append f's line to the log ring; it is formatted and written later. */
static void log_frame(const struct dir *d, const struct frame *f, uint64_t depart,
		      uint8_t action, uint8_t why);

/* Format and write up to max ring records to the log file. */
static void log_flush(uint32_t max);

/* Take a free slot with room for len bytes: its index, or -1 with *why set. */
static int32_t slot_get(struct dir *d, uint32_t len, uint8_t *why)
{
	struct frame *f;
	uint32_t cap;
	uint8_t *nb;
	int32_t idx;

	if (!d->nfree) {
		*why = WHY_INFLIGHT;
		return -1;
	}
	idx = d->freel[d->nfree - 1];
	f = &d->slots[idx];
	if (f->cap < len) {
		cap = len <= SMALL_BUF ? SMALL_BUF : MAX_FRAME;
		nb = NULL;
		if (d->pool_bytes - f->cap + cap <= POOL_BYTES)
			nb = realloc(f->buf, cap);
		if (!nb) {
			*why = WHY_NOMEM;
			return -1;
		}
		d->pool_bytes += cap - f->cap;
		f->buf = nb;
		f->cap = cap;
	}
	d->nfree--;
	if (++d->inflight > d->max_inflight)
		d->max_inflight = d->inflight;
	return idx;
}

/* Return slot idx to the free list (its buffer stays with it). */
static void slot_put(struct dir *d, int32_t idx)
{
	d->freel[d->nfree++] = idx;
	d->inflight--;
}

/* Heap order: earlier ready first, then arrival order. */
static bool heap_less(const struct dir *d, int32_t a, int32_t b)
{
	const struct frame *fa = &d->slots[a], *fb = &d->slots[b];

	if (fa->ready != fb->ready)
		return fa->ready < fb->ready;
	return fa->seq < fb->seq;
}

/* Add slot idx to d's delay heap. */
static void heap_push(struct dir *d, int32_t idx)
{
	uint32_t i = d->nheap++, p;

	d->heap[i] = idx;
	while (i > 0) {
		p = (i - 1) / 2;
		if (!heap_less(d, d->heap[i], d->heap[p]))
			break;
		idx = d->heap[p];
		d->heap[p] = d->heap[i];
		d->heap[i] = idx;
		i = p;
	}
}

/* Remove and return the earliest slot of d's delay heap. */
static int32_t heap_pop(struct dir *d)
{
	int32_t top = d->heap[0], t;
	uint32_t i = 0, l, m;

	d->heap[0] = d->heap[--d->nheap];
	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < d->nheap && heap_less(d, d->heap[l], d->heap[m]))
			m = l;
		if (l + 1 < d->nheap && heap_less(d, d->heap[l + 1], d->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		t = d->heap[m];
		d->heap[m] = d->heap[i];
		d->heap[i] = t;
		i = m;
	}
	return top;
}

/* Finish a frame that does not leave: count, log, free its slot (idx >= 0). */
static void frame_drop(struct dir *d, struct frame *f, int32_t idx, uint8_t action,
		       uint8_t why)
{
	struct ctrs *c[2] = { &d->tot, &d->cls[f->cls] };

	for (int k = 0; k < 2; k++) {
		if (action == ACT_LOSS) {
			c[k]->lost++;
		} else {
			c[k]->dropped++;
			c[k]->why[why]++;
		}
	}
	log_frame(d, f, 0, action, why);
	if (idx >= 0)
		slot_put(d, idx);
}

/* Put the next queued frame on d's idle link, starting no earlier than t. */
static void link_pick(struct dir *d, uint64_t t)
{
	struct frame *f;
	int32_t idx;

	for (unsigned int c = 0; c < NR_CLASSES; c++) {
		idx = d->qhead[c];
		if (idx < 0)
			continue;
		f = &d->slots[idx];
		d->qhead[c] = f->next;
		if (d->qhead[c] < 0)
			d->qtail[c] = -1;
		f->ser = ser_ns(d->rate, f->len);
		f->due = (f->ready > t ? f->ready : t) + f->ser;
		d->busy = idx;
		d->link_free = f->due;
		return;
	}
}

/* Enqueue ready frame idx on its class FIFO (tail drop, CE marking). */
static void egress_enqueue(struct dir *d, int32_t idx)
{
	struct frame *f = &d->slots[idx];
	unsigned int c = f->cls;

	if (d->queued[c] + f->len > d->limit[c]) {
		frame_drop(d, f, idx, ACT_DROP, WHY_QFULL);
		return;
	}
	if (d->ecn[c] && d->queued[c] > d->ecn[c] && mark_ce(f)) {
		d->tot.ce_marked++;
		d->cls[c].ce_marked++;
	}
	d->queued[c] += f->len;
	d->queued_total += f->len;
	if (d->queued[c] > d->cls[c].max_queued)
		d->cls[c].max_queued = d->queued[c];
	if (d->queued_total > d->tot.max_queued)
		d->tot.max_queued = d->queued_total;
	f->next = -1;
	if (d->qtail[c] >= 0)
		d->slots[d->qtail[c]].next = idx;
	else
		d->qhead[c] = idx;
	d->qtail[c] = idx;
	if (d->busy < 0)
		link_pick(d, d->link_free);
}

/* Send the frame on d's link now, then count, log and free it. */
static void link_send(struct dir *d, int32_t idx)
{
	struct frame *f = &d->slots[idx];
	struct ctrs *c[2] = { &d->tot, &d->cls[f->cls] };
	uint64_t t = mono_ns();
	ssize_t n;

	n = sendto(d->out_fd, f->buf, f->len, MSG_DONTWAIT, (struct sockaddr *)&d->dst,
		   sizeof(d->dst));
	d->queued[f->cls] -= f->len;
	d->queued_total -= f->len;
	W.last_activity = t;
	if (n != (ssize_t)f->len) {
		frame_drop(d, f, idx, ACT_DROP, WHY_SEND);
		return;
	}
	for (int k = 0; k < 2; k++) {
		c[k]->tx_frames++;
		c[k]->tx_bytes += f->len;
		c[k]->soj[soj_bucket(t - f->arrive)]++;
	}
	lhist_add(f->delay ? &d->delay_err : &d->wire_lat, t > f->due ? t - f->due : 0);
	log_frame(d, f, t, ACT_FWD, WHY_NONE);
	slot_put(d, idx);
}

/* Run d's scheduled events (delay expiries, link departures) due by now, in time order. */
static void process_due(struct dir *d, uint64_t now)
{
	uint64_t th, tl;
	int32_t idx;

	for (;;) {
		th = d->nheap ? d->slots[d->heap[0]].ready : NONE;
		tl = d->busy >= 0 ? d->slots[d->busy].due : NONE;
		if (th <= tl && th <= now) {
			egress_enqueue(d, heap_pop(d));
		} else if (tl <= now) {
			idx = d->busy;
			d->busy = -1;
			link_send(d, idx);
			link_pick(d, tl);
		} else {
			break;
		}
	}
}

/* The time of d's next scheduled event, NONE if nothing is in flight. */
static uint64_t dir_next(const struct dir *d)
{
	uint64_t th = d->nheap ? d->slots[d->heap[0]].ready : NONE;
	uint64_t tl = d->busy >= 0 ? d->slots[d->busy].due : NONE;

	return th < tl ? th : tl;
}

/* Take one frame read at now into d's pipeline. */
static void frame_arrive(struct dir *d, const uint8_t *p, uint32_t len, uint64_t now)
{
	struct ctrs *c[2];
	struct frame fr, *f;
	uint8_t why = WHY_NONE;
	uint8_t *buf;
	uint32_t cap;
	int32_t idx;

	memset(&fr, 0, sizeof(fr));
	classify(&fr, p, len);
	fr.len = len;
	fr.seq = d->seq++;
	fr.arrive = now;
	fr.ecn_out = fr.ecn_in;
	fr.cls = d->dscp_map[fr.dscp];
	c[0] = &d->tot;
	c[1] = &d->cls[fr.cls];
	for (int k = 0; k < 2; k++) {
		c[k]->rx_frames++;
		c[k]->rx_bytes += len;
		c[k]->other += fr.kind == KIND_OTHER;
		c[k]->roce += fr.kind == KIND_ROCE;
	}
	W.last_activity = now;
	process_due(d, now);
	if (rules_apply(d, &fr)) {
		frame_drop(d, &fr, -1, ACT_LOSS, WHY_NONE);
		return;
	}
	idx = slot_get(d, len, &why);
	if (idx < 0) {
		frame_drop(d, &fr, -1, ACT_DROP, why);
		return;
	}
	f = &d->slots[idx];
	buf = f->buf;
	cap = f->cap;
	*f = fr;
	f->buf = buf;
	f->cap = cap;
	memcpy(f->buf, p, len);
	f->ready = now + f->delay;
	if (f->delay) {
		c[0]->delayed++;
		c[1]->delayed++;
		heap_push(d, idx);
	} else {
		egress_enqueue(d, idx);
	}
	process_due(d, mono_ns());
}

/* Read up to RX_BATCH datagrams from d's ingress socket. */
static void dir_rx(struct dir *d)
{
	ssize_t n;

	for (int i = 0; i < RX_BATCH; i++) {
		n = recv(d->in_fd, W.rx, sizeof(W.rx), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				fprintf(stderr, "labwire: recv (%s): %s\n", dir_name[d->idx],
					strerror(errno));
			return;
		}
		frame_arrive(d, W.rx, (uint32_t)n, mono_ns());
	}
}

/* Append f's line to the log ring (flushing the ring first if it is full). */
static void log_frame(const struct dir *d, const struct frame *f, uint64_t depart,
		      uint8_t action, uint8_t why)
{
	struct logrec *r;

	if (W.log_fd < 0)
		return;
	if (W.rcount == LOG_RECS) {
		W.log_forced++;
		log_flush(LOG_RECS);
	}
	r = &W.ring[(W.rhead + W.rcount) % LOG_RECS];
	W.rcount++;
	r->seq = f->seq;
	r->arrive = f->arrive;
	r->due = action == ACT_FWD || why == WHY_SEND ? f->due : 0;
	r->depart = depart;
	r->delay = f->delay;
	r->ser = depart ? f->ser : 0;
	r->len = f->len;
	r->psn = f->psn;
	r->dqpn = f->dqpn;
	r->opcode = f->opcode;
	r->dport = f->dport;
	r->rule = f->rule;
	r->dir = d->idx;
	r->cls = f->cls;
	r->kind = f->kind;
	r->dscp = f->dscp;
	r->ecn_in = f->ecn_in;
	r->ecn_out = f->ecn_out;
	r->action = action;
	r->why = why;
}

/* Write n bytes to the log file, counting (and reporting once) failures. */
static void log_write(const char *buf, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(W.log_fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!W.log_errors++)
				fprintf(stderr, "labwire: write log %s: %s\n", W.log_path,
					w < 0 ? strerror(errno) : "short write");
			return;
		}
		buf += w;
		n -= (size_t)w;
	}
}

/* Format one record as a log line into buf; its length. */
static size_t log_format(const struct logrec *r, char *buf, size_t room)
{
	char op[8];
	int n;

	if (r->opcode < 0)
		snprintf(op, sizeof(op), "-1");
	else
		snprintf(op, sizeof(op), "0x%02x", (unsigned int)r->opcode);
	n = snprintf(buf, room,
		     "%" PRIu64 " %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %u %d %s %d %d"
		     " %u %u %u %d %" PRIu64 " %" PRIu64 " %s %s %d %s\n",
		     r->seq, dir_name[r->dir], r->arrive, r->due, r->depart, r->len,
		     r->cls, r->kind == KIND_ROCE, op, r->psn, r->dqpn, r->dscp, r->ecn_in,
		     r->ecn_out, r->rule, r->delay, r->ser, act_name[r->action],
		     kind_name[r->kind], r->dport, why_name[r->why]);
	return n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
}

/* Format and write up to max ring records to the log file. */
static void log_flush(uint32_t max)
{
	char buf[65536];
	size_t n = 0;

	while (W.rcount && max--) {
		if (n > sizeof(buf) - 512) {
			log_write(buf, n);
			n = 0;
		}
		n += log_format(&W.ring[W.rhead], buf + n, sizeof(buf) - n);
		W.rhead = (W.rhead + 1) % LOG_RECS;
		W.rcount--;
		W.log_lines++;
	}
	if (n && W.log_fd >= 0)
		log_write(buf, n);
}

/* Open path as the new log (truncated) with its header; -errno on failure. */
static int log_open(const char *path)
{
	char hdr[1024];
	char *copy;
	int fd, n;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	copy = strdup(path);
	if (!copy) {
		close(fd);
		return -ENOMEM;
	}
	if (W.log_fd >= 0) {
		log_flush(LOG_RECS);
		close(W.log_fd);
	}
	free(W.log_path);
	W.log_fd = fd;
	W.log_path = copy;
	n = snprintf(hdr, sizeof(hdr),
		     "# labwire log v1 clock=CLOCK_MONOTONIC opened_ns=%" PRIu64
		     " a=%u a_peer=%u b=%u b_peer=%u ab=node0->node1 ba=node1->node0"
		     " sched=%s mlock=%s spin_ns=%" PRIu64 "\n"
		     "# seq dir arrive_ns due_ns depart_ns len class roce opcode psn dqpn"
		     " dscp ecn_in ecn_out rule delay_ns ser_ns action kind dport why\n",
		     mono_ns(), W.o.a, W.o.a_peer, W.o.b, W.o.b_peer, W.sched_desc,
		     W.mlocked ? "yes" : "no", W.o.spin);
	log_write(hdr, (size_t)n);
	return 0;
}

/* Write out and close the log. */
static void log_close(void)
{
	if (W.log_fd < 0)
		return;
	log_flush(LOG_RECS);
	close(W.log_fd);
	W.log_fd = -1;
	free(W.log_path);
	W.log_path = NULL;
}

/* Restart a rule's PRNG and every= counter and zero its counts. */
static void rule_restart(struct rule *r)
{
	r->rng = r->seed;
	r->seen = r->hits = r->lost = r->delayed = 0;
}

/* Zero d's counters, histograms and sequence numbers. */
static void dir_reset(struct dir *d)
{
	memset(&d->tot, 0, sizeof(d->tot));
	memset(d->cls, 0, sizeof(d->cls));
	memset(&d->wire_lat, 0, sizeof(d->wire_lat));
	memset(&d->delay_err, 0, sizeof(d->delay_err));
	d->seq = 0;
	d->max_inflight = d->inflight;
	d->tot.max_queued = d->queued_total;
	for (unsigned int c = 0; c < NR_CLASSES; c++)
		d->cls[c].max_queued = d->queued[c];
	for (unsigned int i = 0; i < NR_RULES; i++)
		rule_restart(&d->rules[i]);
}

/* Allocate d's pool and heap and set every knob to its default. */
static int dir_init(struct dir *d, uint8_t idx)
{
	d->idx = idx;
	d->busy = -1;
	d->slots = calloc(MAX_INFLIGHT, sizeof(*d->slots));
	d->freel = calloc(MAX_INFLIGHT, sizeof(*d->freel));
	d->heap = calloc(MAX_INFLIGHT, sizeof(*d->heap));
	if (!d->slots || !d->freel || !d->heap)
		return -ENOMEM;
	for (int32_t i = 0; i < MAX_INFLIGHT; i++)
		d->freel[i] = MAX_INFLIGHT - 1 - i;
	d->nfree = MAX_INFLIGHT;
	for (int32_t i = 0; i < PREALLOC; i++) {
		d->slots[i].buf = malloc(SMALL_BUF);
		if (!d->slots[i].buf)
			return -ENOMEM;
		memset(d->slots[i].buf, 0, SMALL_BUF);
		d->slots[i].cap = SMALL_BUF;
		d->pool_bytes += SMALL_BUF;
	}
	for (unsigned int c = 0; c < NR_CLASSES; c++) {
		d->limit[c] = DEFAULT_LIMIT;
		d->qhead[c] = d->qtail[c] = -1;
	}
	return 0;
}

/* Write a JSON string (quoted, escaped). */
static void json_str(struct sbuf *sb, const char *s)
{
	sb_printf(sb, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_printf(sb, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			sb_printf(sb, "\\u%04x", (unsigned int)(unsigned char)*s);
		else
			sb_printf(sb, "%c", *s);
	}
	sb_printf(sb, "\"");
}

/* Write counters as JSON members (no braces). */
static void json_ctrs(struct sbuf *sb, const struct ctrs *c)
{
	sb_printf(sb, "\"rx_frames\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
		  ",\"tx_frames\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"delayed\":%" PRIu64
		  ",\"lost\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"ce_marked\":%" PRIu64
		  ",\"other\":%" PRIu64 ",\"roce\":%" PRIu64 ",\"max_queued_bytes\":%" PRIu64,
		  c->rx_frames, c->rx_bytes, c->tx_frames, c->tx_bytes, c->delayed,
		  c->lost, c->dropped, c->ce_marked, c->other, c->roce, c->max_queued);
	for (unsigned int w = 1; w < NR_WHY; w++)
		sb_printf(sb, ",\"dropped_%s\":%" PRIu64, why_name[w], c->why[w]);
	sb_printf(sb, ",\"sojourn_us_log2\":[");
	for (unsigned int b = 0; b < SOJ_NR; b++)
		sb_printf(sb, "%s%" PRIu64, b ? "," : "", c->soj[b]);
	sb_printf(sb, "]");
}

/* Write a histogram summary as a JSON object. */
static void json_lhist(struct sbuf *sb, const char *name, const struct lhist *h)
{
	sb_printf(sb, ",\"%s\":{\"count\":%" PRIu64 ",\"mean\":%" PRIu64 ",\"p50\":%" PRIu64
		  ",\"p99\":%" PRIu64 ",\"max\":%" PRIu64 "}", name, h->count,
		  h->count ? h->sum / h->count : 0, lhist_quantile(h, 0.5),
		  lhist_quantile(h, 0.99), h->max);
}

/* Write a rule's match fields and actions as command words. */
static void rule_spec(struct sbuf *sb, const struct rule *r)
{
	const char *sep = "";

	if (r->roce >= 0)
		sb_printf(sb, "%sroce=%d", sep, r->roce), sep = " ";
	if (r->op >= 0)
		sb_printf(sb, "%sop=%s", sep, op_name[r->op]), sep = " ";
	if (r->parity >= 0)
		sb_printf(sb, "%spsn=%s", sep, r->parity == 2 ? "hash" : r->parity ? "odd" : "even"),
			sep = " ";
	if (r->dqpn >= 0)
		sb_printf(sb, "%sdqpn=%" PRId64, sep, r->dqpn), sep = " ";
	if (r->dscp >= 0)
		sb_printf(sb, "%sdscp=%" PRId64, sep, r->dscp), sep = " ";
	if (r->dport >= 0)
		sb_printf(sb, "%sdport=%" PRId64, sep, r->dport), sep = " ";
	if (r->every)
		sb_printf(sb, "%severy=%" PRIu64, sep, r->every), sep = " ";
	sb_printf(sb, "%sdelay=%" PRIu64 " jitter=%" PRIu64 " loss=%" PRIu64 " seed=%" PRIu64,
		  sep, r->delay, r->jitter, r->loss, r->seed);
}

/* Write d's rules in force as a JSON array member. */
static void json_rules(struct sbuf *sb, const struct dir *d)
{
	const struct rule *r;
	const char *sep = "";

	sb_printf(sb, ",\"rules\":[");
	for (unsigned int i = 0; i < NR_RULES; i++) {
		r = &d->rules[i];
		if (!r->used)
			continue;
		sb_printf(sb, "%s{\"index\":%u,\"spec\":\"", sep, i);
		rule_spec(sb, r);
		sb_printf(sb, "\",\"delay\":%" PRIu64 ",\"jitter\":%" PRIu64 ",\"loss\":%" PRIu64
			  ",\"seed\":%" PRIu64 ",\"seen\":%" PRIu64 ",\"hits\":%" PRIu64
			  ",\"lost\":%" PRIu64 ",\"delayed\":%" PRIu64 "}", r->delay, r->jitter,
			  r->loss, r->seed, r->seen, r->hits, r->lost, r->delayed);
		sep = ",";
	}
	sb_printf(sb, "]");
}

/* Write one direction's stats as a JSON object. */
static void json_dir(struct sbuf *sb, const struct dir *d)
{
	sb_printf(sb, "{");
	json_ctrs(sb, &d->tot);
	sb_printf(sb, ",\"seq\":%" PRIu64 ",\"inflight\":%" PRIu64 ",\"max_inflight\":%" PRIu64
		  ",\"queued_bytes\":%" PRIu64 ",\"rate_bps\":%" PRIu64, d->seq, d->inflight,
		  d->max_inflight, d->queued_total, d->rate);
	json_lhist(sb, "wire_latency_ns", &d->wire_lat);
	json_lhist(sb, "delay_error_ns", &d->delay_err);
	sb_printf(sb, ",\"dscp_map\":[");
	for (unsigned int i = 0; i < NR_DSCP; i++)
		sb_printf(sb, "%s%u", i ? "," : "", d->dscp_map[i]);
	sb_printf(sb, "],\"classes\":[");
	for (unsigned int c = 0; c < NR_CLASSES; c++) {
		sb_printf(sb, "%s{\"class\":%u,\"limit\":%" PRIu64 ",\"ecn\":%" PRIu64
			  ",\"queued_bytes\":%" PRIu64 ",", c ? "," : "", c, d->limit[c],
			  d->ecn[c], d->queued[c]);
		json_ctrs(sb, &d->cls[c]);
		sb_printf(sb, "}");
	}
	sb_printf(sb, "]");
	json_rules(sb, d);
	sb_printf(sb, "}");
}

/* Reply to `stats`: the whole wire as one JSON line. */
static void cmd_stats(struct sbuf *out)
{
	sb_printf(out, "{\"wire\":{\"version\":1,\"now_ns\":%" PRIu64 ",\"sched\":", mono_ns());
	json_str(out, W.sched_desc);
	sb_printf(out, ",\"mlock\":%s,\"spin_ns\":%" PRIu64 ",\"log\":",
		  W.mlocked ? "true" : "false", W.o.spin);
	if (W.log_path)
		json_str(out, W.log_path);
	else
		sb_printf(out, "null");
	sb_printf(out, ",\"log_pending\":%u,\"log_lines\":%" PRIu64
		  ",\"log_forced_flushes\":%" PRIu64 ",\"log_errors\":%" PRIu64 "}",
		  W.rcount, W.log_lines, W.log_forced, W.log_errors);
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		sb_printf(out, ",\"%s\":", dir_name[i]);
		json_dir(out, &W.d[i]);
	}
	sb_printf(out, "}\n");
}

/* Parse a direction word into a mask (1 ab, 2 ba, 3 both); 0 if bad. */
static unsigned int parse_dir(const char *s)
{
	if (!strcmp(s, "ab"))
		return 1;
	if (!strcmp(s, "ba"))
		return 2;
	if (!strcmp(s, "both"))
		return 3;
	return 0;
}

/* Split "key=value" in place: the value, or NULL when there is no '='. */
static char *split_kv(char *word)
{
	char *eq = strchr(word, '=');

	if (!eq || eq == word)
		return NULL;
	*eq = '\0';
	return eq + 1;
}

/* Parse one rule word into r; an error message in out on failure. */
static int rule_word(struct rule *r, char *word, struct sbuf *out)
{
	static const struct { const char *key; uint64_t max; } nums[] = {
		{ "roce", 1 }, { "dqpn", 0xffffff }, { "dscp", 63 }, { "dport", 65535 },
		{ "every", 1000000000 }, { "delay", MAX_DELAY_NS },
		{ "jitter", MAX_DELAY_NS }, { "loss", 1000000 }, { "seed", UINT64_MAX },
	};
	char *val = split_kv(word);
	uint64_t v;
	unsigned int i;

	if (!val) {
		sb_printf(out, "error: rule: '%s' is not FIELD=VALUE\n", word);
		return -1;
	}
	if (!strcmp(word, "op")) {
		for (i = OP_REQ; i <= OP_ACK; i++)
			if (!strcmp(val, op_name[i]))
				r->op = (int)i;
		if (r->op < 0)
			sb_printf(out, "error: rule: op=%s: must be req, resp or ack\n", val);
		return r->op < 0 ? -1 : 0;
	}
	if (!strcmp(word, "psn")) {
		r->parity = !strcmp(val, "even") ? 0 : !strcmp(val, "odd") ? 1 :
			    !strcmp(val, "hash") ? 2 : -1;
		if (r->parity < 0)
			sb_printf(out, "error: rule: psn=%s: must be even, odd or hash\n", val);
		return r->parity < 0 ? -1 : 0;
	}
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (!strcmp(word, nums[i].key))
			break;
	if (i == sizeof(nums) / sizeof(nums[0])) {
		sb_printf(out, "error: rule: unknown field '%s' (fields: roce op psn dqpn dscp"
			  " dport every delay jitter loss seed)\n", word);
		return -1;
	}
	if (!parse_num(val, nums[i].max, &v) || (i == 4 && !v)) {
		sb_printf(out, "error: rule: %s=%s: not a number in %s..%" PRIu64 "\n", word,
			  val, i == 4 ? "1" : "0", nums[i].max);
		return -1;
	}
	switch (i) {
	case 0: r->roce = (int)v; break;
	case 1: r->dqpn = (int64_t)v; break;
	case 2: r->dscp = (int64_t)v; break;
	case 3: r->dport = (int64_t)v; break;
	case 4: r->every = v; break;
	case 5: r->delay = v; break;
	case 6: r->jitter = v; break;
	case 7: r->loss = v; break;
	default: r->seed = v; break;
	}
	return 0;
}

/* rule DIR N [FIELD=V...]: load rule N (validated as a whole first). */
static int cmd_rule(int argc, char **argv, struct sbuf *out)
{
	struct rule r = { .used = true, .roce = -1, .op = -1, .parity = -1,
			  .dqpn = -1, .dscp = -1, .dport = -1, .seed = 1 };
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	uint64_t n;

	if (argc < 3 || !mask || !parse_num(argv[2], NR_RULES - 1, &n)) {
		sb_printf(out, "error: usage: rule ab|ba|both N(0-%d) [FIELD=VALUE...]\n",
			  NR_RULES - 1);
		return -1;
	}
	for (int i = 3; i < argc; i++) {
		char word[CTL_LINE];

		snprintf(word, sizeof(word), "%s", argv[i]);
		if (rule_word(&r, word, out))
			return -1;
	}
	rule_restart(&r);
	for (unsigned int i = 0; i < NR_DIRS; i++)
		if (mask & (1U << i))
			W.d[i].rules[n] = r;
	sb_printf(out, "ok\n");
	return 0;
}

/* norule DIR [N]: clear rule N or every rule. */
static int cmd_norule(int argc, char **argv, struct sbuf *out)
{
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	uint64_t n = NR_RULES;

	if (argc < 2 || argc > 3 || !mask ||
	    (argc == 3 && !parse_num(argv[2], NR_RULES - 1, &n))) {
		sb_printf(out, "error: usage: norule ab|ba|both [N(0-%d)]\n", NR_RULES - 1);
		return -1;
	}
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		if (!(mask & (1U << i)))
			continue;
		for (unsigned int k = 0; k < NR_RULES; k++)
			if (n == NR_RULES || n == k)
				memset(&W.d[i].rules[k], 0, sizeof(W.d[i].rules[k]));
	}
	sb_printf(out, "ok\n");
	return 0;
}

/* link DIR rate=BPS: set the link rate (0 = unlimited). */
static int cmd_link(int argc, char **argv, struct sbuf *out)
{
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	char *val = argc == 3 ? split_kv(argv[2]) : NULL;
	uint64_t rate;

	if (argc != 3 || !mask || !val || strcmp(argv[2], "rate")) {
		sb_printf(out, "error: usage: link ab|ba|both rate=BPS\n");
		return -1;
	}
	if (!parse_num(val, MAX_RATE, &rate)) {
		sb_printf(out, "error: link: rate=%s: not a number in 0..%llu bit/s\n", val,
			  (unsigned long long)MAX_RATE);
		return -1;
	}
	for (unsigned int i = 0; i < NR_DIRS; i++)
		if (mask & (1U << i))
			W.d[i].rate = rate;
	sb_printf(out, "ok\n");
	return 0;
}

/* class DIR N [limit=BYTES] [ecn=BYTES]: set a class's queue limit and CE threshold. */
static int cmd_class(int argc, char **argv, struct sbuf *out)
{
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	uint64_t n, v, limit = NONE, ecn = NONE;
	char *val;

	if (argc < 4 || !mask || !parse_num(argv[2], NR_CLASSES - 1, &n)) {
		sb_printf(out, "error: usage: class ab|ba|both N(0-%d) [limit=BYTES]"
			  " [ecn=BYTES]\n", NR_CLASSES - 1);
		return -1;
	}
	for (int i = 3; i < argc; i++) {
		val = split_kv(argv[i]);
		if (!val || (strcmp(argv[i], "limit") && strcmp(argv[i], "ecn"))) {
			sb_printf(out, "error: class: '%s' is not limit=BYTES or ecn=BYTES\n",
				  argv[i]);
			return -1;
		}
		if (!parse_num(val, MAX_LIMIT, &v)) {
			sb_printf(out, "error: class: %s=%s: not a number in 0..%llu\n", argv[i],
				  val, (unsigned long long)MAX_LIMIT);
			return -1;
		}
		*(argv[i][0] == 'l' ? &limit : &ecn) = v;
	}
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		if (!(mask & (1U << i)))
			continue;
		if (limit != NONE)
			W.d[i].limit[n] = limit;
		if (ecn != NONE)
			W.d[i].ecn[n] = ecn;
	}
	sb_printf(out, "ok\n");
	return 0;
}

/* Parse "D=C[,D=C...]" into map (entries set only); an error in out on failure. */
static int dscp_pairs(char *list, int map[NR_DSCP], struct sbuf *out)
{
	char *save = NULL, *tok, *val;
	uint64_t dscp, cls;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		val = split_kv(tok);
		if (!val || !parse_num(tok, NR_DSCP - 1, &dscp) ||
		    !parse_num(val, NR_CLASSES - 1, &cls)) {
			sb_printf(out, "error: dscp: '%s%s%s' is not DSCP(0-63)=CLASS(0-7)\n",
				  tok, val ? "=" : "", val ? val : "");
			return -1;
		}
		map[dscp] = (int)cls;
	}
	return 0;
}

/* dscp DIR D=C[,D=C...] | dscp DIR reset: change the DSCP->class map. */
static int cmd_dscp(int argc, char **argv, struct sbuf *out)
{
	unsigned int mask = argc > 1 ? parse_dir(argv[1]) : 0;
	bool reset = argc == 3 && !strcmp(argv[2], "reset");
	int map[NR_DSCP];

	if (argc < 3 || !mask) {
		sb_printf(out, "error: usage: dscp ab|ba|both DSCP=CLASS[,DSCP=CLASS...]"
			  " | dscp DIR reset\n");
		return -1;
	}
	for (unsigned int k = 0; k < NR_DSCP; k++)
		map[k] = reset ? 0 : -1;
	for (int i = 2; i < argc && !reset; i++)
		if (dscp_pairs(argv[i], map, out))
			return -1;
	for (unsigned int i = 0; i < NR_DIRS; i++) {
		if (!(mask & (1U << i)))
			continue;
		for (unsigned int k = 0; k < NR_DSCP; k++)
			if (map[k] >= 0)
				W.d[i].dscp_map[k] = (uint8_t)map[k];
	}
	sb_printf(out, "ok\n");
	return 0;
}

/* log FILE | log off: switch or close the log. */
static int cmd_log(int argc, char **argv, struct sbuf *out)
{
	int err;

	if (argc != 2) {
		sb_printf(out, "error: usage: log FILE | log off\n");
		return -1;
	}
	if (!strcmp(argv[1], "off")) {
		log_close();
		sb_printf(out, "ok\n");
		return 0;
	}
	if (argv[1][0] != '/') {
		sb_printf(out, "error: log: %s: give an absolute path\n", argv[1]);
		return -1;
	}
	err = log_open(argv[1]);
	if (err) {
		sb_printf(out, "error: log: open %s: %s\n", argv[1], strerror(-err));
		return -1;
	}
	sb_printf(out, "ok\n");
	return 0;
}

/* Run one command line; the reply goes to out. */
static void ctl_run(char *line, struct sbuf *out)
{
	char *argv[64], *save = NULL, *w;
	int argc = 0;

	for (w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (argc == 64) {
			sb_printf(out, "error: too many words (at most 64)\n");
			return;
		}
		argv[argc++] = w;
	}
	if (!argc) {
		sb_printf(out, "error: empty command\n");
	} else if (!strcmp(argv[0], "ping") && argc == 1) {
		sb_printf(out, "ok\n");
	} else if (!strcmp(argv[0], "rule")) {
		cmd_rule(argc, argv, out);
	} else if (!strcmp(argv[0], "norule")) {
		cmd_norule(argc, argv, out);
	} else if (!strcmp(argv[0], "link")) {
		cmd_link(argc, argv, out);
	} else if (!strcmp(argv[0], "class")) {
		cmd_class(argc, argv, out);
	} else if (!strcmp(argv[0], "dscp")) {
		cmd_dscp(argc, argv, out);
	} else if (!strcmp(argv[0], "stats") && argc == 1) {
		cmd_stats(out);
	} else if (!strcmp(argv[0], "reset") && argc == 1) {
		for (unsigned int i = 0; i < NR_DIRS; i++)
			dir_reset(&W.d[i]);
		sb_printf(out, "ok\n");
	} else if (!strcmp(argv[0], "flush") && argc == 1) {
		log_flush(LOG_RECS);
		sb_printf(out, "ok\n");
	} else if (!strcmp(argv[0], "log")) {
		cmd_log(argc, argv, out);
	} else {
		sb_printf(out, "error: unknown command '%s' (ping rule norule link class dscp"
			  " stats reset flush log; stats/reset/flush/ping take no arguments)\n",
			  argv[0]);
	}
}

/* Send the whole reply to c (waiting at most ~1 s for room) and close it. */
static void ctl_reply(struct client *c, const struct sbuf *out)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	size_t off = 0;
	ssize_t n;
	int tries = 0;

	while (off < out->len && tries < 10) {
		n = send(c->fd, out->p + off, out->len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			poll(&pfd, 1, 100);
			tries++;
		} else {
			break;
		}
	}
	close(c->fd);
	c->fd = -1;
}

/* Read from client c; once its line is complete, run it and reply. */
static void ctl_read(struct client *c)
{
	struct sbuf out = { 0 };
	char *nl;
	ssize_t n;

	n = recv(c->fd, c->buf + c->n, sizeof(c->buf) - 1 - c->n, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		c->n += (uint32_t)n;
	c->buf[c->n] = '\0';
	nl = strchr(c->buf, '\n');
	if (!nl && n > 0 && c->n < sizeof(c->buf) - 1)
		return;
	if (n < 0 && !nl) {
		close(c->fd);
		c->fd = -1;
		return;
	}
	if (nl)
		*nl = '\0';
	if (!nl && c->n >= sizeof(c->buf) - 1)
		sb_printf(&out, "error: command longer than %d bytes\n", CTL_LINE - 2);
	else
		ctl_run(c->buf, &out);
	if (out.oom) {
		out.len = 0;
		sb_printf(&out, "error: out of memory\n");
	}
	ctl_reply(c, &out);
	free(out.p);
}

/* Accept pending control connections (refusing beyond MAX_CLIENTS). */
static void ctl_accept(uint64_t now)
{
	static const char busy[] = "error: busy (too many control connections)\n";
	int fd;

	for (;;) {
		fd = accept4(W.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (W.cl[i].fd >= 0)
				continue;
			W.cl[i].fd = fd;
			W.cl[i].n = 0;
			W.cl[i].since = now;
			fd = -1;
			break;
		}
		if (fd >= 0) {
			if (send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
				fprintf(stderr, "labwire: control: refuse a client: %s\n",
					strerror(errno));
			close(fd);
		}
	}
}

/* Log and client upkeep between events; lowers *wait (ns, -1 = forever) as needed. */
static void housekeeping(uint64_t now, uint64_t next, int64_t *wait)
{
	bool far = next == NONE || next > now + IDLE_FLUSH_NS;
	uint64_t quiet = W.last_activity + IDLE_FLUSH_NS;
	bool clients = false;

	if (W.rcount && far) {
		if (now >= quiet) {
			log_flush(IDLE_CHUNK);
			if (W.rcount)
				*wait = 0;
		} else if (*wait < 0 || (uint64_t)*wait > quiet - now) {
			*wait = (int64_t)(quiet - now);
		}
	}
	if (W.rcount >= LOG_RECS / 2 && (next == NONE || next > now + CHUNK_FLUSH_NS))
		log_flush(LOG_CHUNK);
	for (int i = 0; i < MAX_CLIENTS; i++) {
		if (W.cl[i].fd < 0)
			continue;
		if (now - W.cl[i].since > CLIENT_TIMEOUT_NS) {
			close(W.cl[i].fd);
			W.cl[i].fd = -1;
			continue;
		}
		clients = true;
	}
	if (clients && (*wait < 0 || *wait > 100000000))
		*wait = 100000000;
}

/* The event loop: until SIGTERM/SIGINT; 0, or 1 when ppoll fails. */
static int wire_loop(void)
{
	struct pollfd pfd[3 + MAX_CLIENTS];
	int cidx[MAX_CLIENTS], nfd, nc;
	struct timespec ts;
	uint64_t now, next, n0, n1;
	int64_t wait;

	while (!stop_sig) {
		now = mono_ns();
		process_due(&W.d[0], now);
		process_due(&W.d[1], now);
		n0 = dir_next(&W.d[0]);
		n1 = dir_next(&W.d[1]);
		next = n0 < n1 ? n0 : n1;
		now = mono_ns();
		if (next == NONE)
			wait = -1;
		else if (next <= now + W.o.spin)
			wait = 0;
		else
			wait = (int64_t)(next - now - W.o.spin);
		housekeeping(now, next, &wait);
		pfd[0] = (struct pollfd){ .fd = W.d[0].in_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = W.d[1].in_fd, .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = W.lfd, .events = POLLIN };
		nfd = 3;
		for (int i = nc = 0; i < MAX_CLIENTS; i++) {
			if (W.cl[i].fd < 0)
				continue;
			cidx[nc++] = i;
			pfd[nfd++] = (struct pollfd){ .fd = W.cl[i].fd, .events = POLLIN };
		}
		ts.tv_sec = wait / 1000000000;
		ts.tv_nsec = wait % 1000000000;
		if (ppoll(pfd, (nfds_t)nfd, wait < 0 ? NULL : &ts, &W.waitmask) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "labwire: ppoll: %s\n", strerror(errno));
			return 1;
		}
		if (pfd[0].revents)
			dir_rx(&W.d[0]);
		if (pfd[1].revents)
			dir_rx(&W.d[1]);
		for (int i = 0; i < nc; i++)
			if (pfd[3 + i].revents)
				ctl_read(&W.cl[cidx[i]]);
		if (pfd[2].revents)
			ctl_accept(mono_ns());
	}
	return 0;
}

/* Open a UDP socket bound to 127.0.0.1:port; 0 or 1 (message printed). */
static int udp_open(unsigned int port, int *fdp)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd, sz = 4 << 20;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "labwire: socket (UDP): %s\n", strerror(errno));
		return 1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "labwire: bind 127.0.0.1:%u: %s\n", port, strerror(errno));
		close(fd);
		return 1;
	}
	*fdp = fd;
	return 0;
}

/* Create the control socket at path (mode 0600), replacing a stale one; 0 or 1. */
static int ctl_listen(const char *path, int *fdp)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, err;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "labwire: socket (control): %s\n", strerror(errno));
		return 1;
	}
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr, "labwire: control socket %s: exists and is not a"
				" socket\n", path);
			goto fail;
		}
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)) || errno == EAGAIN) {
			fprintf(stderr, "labwire: control socket %s: a running wire answers"
				" there\n", path);
			goto fail;
		}
		close(fd);
		unlink(path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			fprintf(stderr, "labwire: socket (control): %s\n", strerror(errno));
			return 1;
		}
	}
	old = umask(077);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (err || chmod(path, 0600) || listen(fd, 16)) {
		fprintf(stderr, "labwire: control socket %s: %s\n", path, strerror(errno));
		goto fail;
	}
	*fdp = fd;
	return 0;
fail:
	close(fd);
	return 1;
}

/* Print the usage text to f. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: labwire run --a PORT --a-peer PORT --b PORT --b-peer PORT --ctl SOCK\n"
		"                   [--log FILE] [--pidfile FILE] [--daemon] [--spin NS]\n"
		"       labwire ctl SOCK COMMAND [ARGS...]\n"
		"commands: ping | rule DIR N [FIELD=V...] | norule DIR [N] | link DIR rate=BPS\n"
		"  | class DIR N [limit=B] [ecn=B] | dscp DIR D=C[,D=C...] | dscp DIR reset\n"
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

/* Record the signal that asks us to stop. */
static void on_signal(int sig)
{
	stop_sig = sig;
}

/* Block SIGTERM/SIGINT except inside ppoll, where on_signal catches them. */
static void signals_setup(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &W.waitmask);
	sigdelset(&W.waitmask, SIGTERM);
	sigdelset(&W.waitmask, SIGINT);
}

/* Bind both UDP sockets and point each direction at its peer; 0 or 1. */
static int wire_sockets(void)
{
	int fa = -1, fb = -1, err;

	err = udp_open(W.o.a, &fa);
	if (err)
		return err;
	err = udp_open(W.o.b, &fb);
	if (err) {
		close(fa);
		return err;
	}
	W.d[0].in_fd = fa;
	W.d[0].out_fd = fb;
	W.d[1].in_fd = fb;
	W.d[1].out_fd = fa;
	for (int i = 0; i < NR_DIRS; i++) {
		W.d[i].dst.sin_family = AF_INET;
		W.d[i].dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	W.d[0].dst.sin_port = htons((uint16_t)W.o.b_peer);
	W.d[1].dst.sin_port = htons((uint16_t)W.o.a_peer);
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
