// SPDX-License-Identifier: GPL-2.0
/*
 * labwire: the per-frame log (the oracle): a memory ring written to its
 * file off the forwarding path.
 */
#include <fcntl.h>
#include <unistd.h>

#include "labwire_int.h"

static const char *const kind_name[] = { "other", "ip", "udp", "roce" };
static const char *const act_name[] = { "fwd", "loss", "drop" };

/* Append f's line to the log ring (flushing the ring first if it is full). */
void log_frame(const struct dir *d, const struct frame *f, uint64_t depart,
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
void log_flush(uint32_t max)
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
int log_open(const char *path)
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
void log_close(void)
{
	if (W.log_fd < 0)
		return;
	log_flush(LOG_RECS);
	close(W.log_fd);
	W.log_fd = -1;
	free(W.log_path);
	W.log_path = NULL;
}
