/* SPDX-License-Identifier: GPL-2.0 */
/*
 * labwire inside (labwire.c describes the program): the wire's state and
 * the functions its files share. labwire.c parses the options, sets the
 * wire up, runs it and is the `labwire ctl` client; labwire_loop.c is the
 * event loop, the UDP sockets and the signals; labwire_path.c takes a frame
 * through one direction (slots, delay heap, class FIFOs, link);
 * labwire_classify.c parses its headers (IP, UDP, RoCEv2 BTH) and marks CE;
 * labwire_rules.c holds the rules (fault injection) and their commands;
 * labwire_log.c writes the per-frame log; labwire_stats.c the `stats`
 * reply; labwire_ctl.c serves the control socket.
 */
#ifndef LS_LABWIRE_INT_H
#define LS_LABWIRE_INT_H

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>

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

/* Names of the OP_*, WHY_* numbers and of the directions (labwire.c). */
extern const char *const op_name[];
extern const char *const why_name[];
extern const char *const dir_name[];

/* Log-linear histogram of nanoseconds: 8 sub-buckets per power of two. */
struct lhist {
	uint64_t count, sum, max;
	uint64_t b[HIST_NR];
};

/* Counters of one direction or of one class in it. */
struct ctrs {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t delayed, lost, dropped, ce_marked, other, roce, max_queued;
	uint64_t flow_frames, flow_bytes, flow_marked, flow_dropped;	/* the storage flow */
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
	uint64_t start;		/* on the link from (set when the link picks it) */
	int32_t psn, dqpn, opcode, dport;
	int8_t rule;
	uint8_t kind, opclass, dscp, ecn_in, ecn_out, cls, ipver;
	uint16_t l3off;
	/* a storage flow's block (part): pn frames of plen bytes, no buffer */
	uint32_t pn, plen;
	bool blk_end;		/* the block's last part: its departure ends it */
};

/* A direction's storage flow (labwire_flow.c). */
struct flow {
	bool on, ect;
	uint8_t cls;
	uint32_t depth, frame, outstanding, spread;
	uint64_t block, seed, rng, block_min, block_max;
	uint64_t blocks, frames, bytes, marked, dropped, preempted;
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
	uint32_t real_queued;	/* guests' frames in the class FIFOs */
	uint8_t dscp_map[NR_DSCP];
	int32_t qhead[NR_CLASSES], qtail[NR_CLASSES];
	int32_t busy;
	struct frame *slots;
	int32_t *freel, *heap;
	uint32_t nfree, nheap;
	uint64_t pool_bytes, seq, inflight, max_inflight;
	struct ctrs tot, cls[NR_CLASSES];
	struct lhist wire_lat, delay_err;
	struct flow flow;
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

/* The whole wire (labwire.c). */
extern struct wire W;

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* labwire_classify.c */
/* Fill f's header fields from p[0..len); never reads past len. */
void classify(struct frame *f, const uint8_t *p, uint32_t len);
/* Mark an ECT frame CE in place; false when it is not ECT. */
bool mark_ce(struct frame *f);

/* labwire_rules.c */
/* Next value of a splitmix64 generator. */
uint64_t splitmix64(uint64_t *s);
/* Run f through d's rules: true when f is lost; sets f->rule and f->delay. */
bool rules_apply(struct dir *d, struct frame *f);
/* Restart a rule's PRNG and every= counter and zero its counts. */
void rule_restart(struct rule *r);
/* rule DIR N [FIELD=V...]: load rule N (validated as a whole first). */
int cmd_rule(int argc, char **argv, struct sbuf *out);
/* norule DIR [N]: clear rule N or every rule. */
int cmd_norule(int argc, char **argv, struct sbuf *out);

/* labwire_path.c */
/* Run d's scheduled events (delay expiries, link departures) due by now, in time order. */
void process_due(struct dir *d, uint64_t now);
/* The time of d's next scheduled event, NONE if nothing is in flight. */
uint64_t dir_next(const struct dir *d);
/* Read up to RX_BATCH datagrams from d's ingress socket. */
void dir_rx(struct dir *d);
/* Zero d's counters, histograms and sequence numbers. */
void dir_reset(struct dir *d);
/* Take a free slot with room for len bytes: its index, or -1 with *why set. */
int32_t slot_get(struct dir *d, uint32_t len, uint8_t *why);
/* Fill slot f with src's fields, keeping f's own buffer. */
void slot_fill(struct frame *f, const struct frame *src);
/* d's backlog at t, bytes not yet on the wire: class c's, or all classes' (c < 0). */
uint64_t dir_backlog(const struct dir *d, int c, uint64_t t);
/* Enqueue ready frame idx on its class FIFO (tail drop, CE marking). */
void egress_enqueue(struct dir *d, int32_t idx);

/* labwire_flow.c */
/* Issue blocks of d's flow at time t until DEPTH are outstanding. */
void flow_issue(struct dir *d, uint64_t t);
/* A flow block left the link (or was dropped): count it; a block that left issues the next. */
void flow_done(struct dir *d, const struct frame *f, bool sent, uint64_t t);
/* The most bytes fl can hold in its class: DEPTH of its largest blocks. */
uint64_t flow_room(const struct flow *fl);
/* flow DIR class=C [block=] [depth=] [frame=] [ect=] | flow DIR off. */
int cmd_flow(int argc, char **argv, struct sbuf *out);
/* Write d's flow as the JSON member "flow". */
void flow_json(struct sbuf *sb, const struct dir *d);
/* Allocate d's pool and heap and set every knob to its default. */
int dir_init(struct dir *d, uint8_t idx);

/* labwire_log.c */
/* Append f's line to the log ring (flushing the ring first if it is full). */
void log_frame(const struct dir *d, const struct frame *f, uint64_t depart,
	       uint8_t action, uint8_t why);
/* Format and write up to max ring records to the log file. */
void log_flush(uint32_t max);
/* Open path as the new log (truncated) with its header; -errno on failure. */
int log_open(const char *path);
/* Write out and close the log. */
void log_close(void);

/* labwire_stats.c */
/* Reply to `stats`: the whole wire as one JSON line. */
void cmd_stats(struct sbuf *out);

/* labwire_ctl.c */
/* Parse an unsigned number (decimal or 0x hex) no larger than max. */
bool parse_num(const char *s, uint64_t max, uint64_t *out);
/* Append printf-formatted text to sb (sets sb->oom on failure). */
__attribute__((format(printf, 2, 3)))
void sb_printf(struct sbuf *sb, const char *fmt, ...);
/* Parse a direction word into a mask (1 ab, 2 ba, 3 both); 0 if bad. */
unsigned int parse_dir(const char *s);
/* Split "key=value" in place: the value, or NULL when there is no '='. */
char *split_kv(char *word);
/* Read from client c; once its line is complete, run it and reply. */
void ctl_read(struct client *c);
/* Accept pending control connections (refusing beyond MAX_CLIENTS). */
void ctl_accept(uint64_t now);
/* Create the control socket at path (mode 0600), replacing a stale one; 0 or 1. */
int ctl_listen(const char *path, int *fdp);

/* labwire_loop.c */
/* The event loop: until SIGTERM/SIGINT; 0, or 1 when ppoll fails. */
int wire_loop(void);
/* Bind both UDP sockets and point each direction at its peer; 0 or 1. */
int wire_sockets(void);
/* Block SIGTERM/SIGINT except inside ppoll, where on_signal catches them. */
void signals_setup(void);

#endif /* LS_LABWIRE_INT_H */
