// SPDX-License-Identifier: GPL-2.0
/* The verbs latency probe engine: RC ping-pong / READ between prober and responder (the sessions). */
#include "probe_int.h"

#include <errno.h>

/* The smaller of two. */
static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Load o's --key (if any) into key and point p at it; key is wiped by the caller. */
static int key_load(struct probe *p, struct ls_auth_key *key, struct ls_err *err)
{
	if (!p->o->key_file)
		return 0;
	if (ls_auth_key_load(p->o->key_file, key, err))
		return ls_err_wrap(err, "--key");
	p->key = key;
	return 0;
}

/* Samples to preallocate per run. */
static uint64_t run_capacity(const struct ls_probe_opts *o)
{
	uint64_t c;

	if (o->iters)
		return o->iters;
	if (o->capacity)
		return o->capacity;
	c = o->duration_ns / 2000;	/* one sample per 2 us at most */
	if (c < 1024)
		c = 1024;
	if (c > (1ull << 22))
		c = 1ull << 22;
	return c;
}

/* Log a responder line on stderr unless quiet. */
static void note(const struct probe *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(const struct probe *p, const char *fmt, ...)
{
	va_list ap;

	if (p->o->quiet)
		return;
	fputs("latsplit probe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Touch every page so the records are resident before the run (a plain
 * memset(0) after malloc may be turned into calloc's lazy zero pages).
 */
static void prefault(void *p, size_t len)
{
	volatile uint8_t *b = p;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t off = 0; off < len; off += pg)
		b[off] = 0;
	if (len)
		b[len - 1] = 0;
}

/* Allocate and prefault a run's records (no page faults during the run). */
static int run_alloc(struct probe *p, struct ls_probe_run *run, uint32_t index, uint32_t size,
		     uint64_t cap, bool hw, struct ls_err *err)
{
	memset(run, 0, sizeof(*run));
	run->index = index;
	run->size = size;
	run->capacity = cap;
	run->req_psn0 = run->ans_psn0 = -1;
	run->samples = malloc(cap * sizeof(*run->samples));
	if (!run->samples)
		return ls_errnof(err, ENOMEM, "allocate %llu samples", (unsigned long long)cap);
	memset(run->samples, 0, cap * sizeof(*run->samples));
	prefault(run->samples, cap * sizeof(*run->samples));
	if (hw) {
		run->hw_end_ns = calloc(cap, sizeof(uint64_t));
		if (!run->hw_end_ns)
			return ls_errnof(err, ENOMEM, "allocate %llu HW stamps",
					 (unsigned long long)cap);
		prefault(run->hw_end_ns, cap * sizeof(uint64_t));
	}
	return 0;
}

/* Prober: the timed loop of one run. */
static int client_loop(struct probe *p, struct ls_probe_run *run, struct ls_err *err)
{
	const uint32_t size = run->size;
	volatile uint8_t *last = p->buf + size - 1;
	uint8_t *slast = p->buf + p->half + size - 1;
	const enum ibv_wr_opcode op = probe_request_op(p);
	const bool poll_byte = p->r->verb == LS_VERB_WRITE && !p->o->events;
	const bool recv = probe_uses_recv(p), read = p->r->verb == LS_VERB_READ;
	const uint64_t stop = p->o->duration_ns ? ls_now_ns() + p->o->duration_ns : UINT64_MAX;
	const uint64_t tmo = p->o->wait_timeout_ns;
	uint64_t i, idx, ts = 0, t0, t1;
	int r;

	for (i = 1; run->count < run->capacity; i++) {
		uint8_t tag = (uint8_t)i;

		t0 = ls_now_ns();
		if (probe_sq_room(p, t0 + tmo, i, err))
			return -1;
		*slast = tag;
		if (probe_post(p, op, size, (uint32_t)i, read, &idx, err))
			return -1;
		if (poll_byte)
			r = probe_wait_byte(p, last, tag, t0 + tmo, i, err);
		else
			r = probe_wait_wc(p, read, idx, t0 + tmo, i, &ts, err);
		if (r)
			return -1;
		t1 = ls_now_ns();
		if (run->hw_end_ns)
			run->hw_end_ns[run->count] = ts;
		ls_probe_record(run, t0, t1);
		if (recv && probe_post_recvs(p, 1, err))
			return -1;
		if (!(i & 255))
			probe_progress(p, run, t1);
		if (t1 >= stop)
			break;
	}
	return 0;
}

/* Responder: answer until the prober's END; READ has nothing to answer. */
static int server_loop(struct probe *p, struct ls_probe_run *run, struct ls_err *err)
{
	const uint32_t size = run->size;
	volatile uint8_t *last = p->buf + size - 1;
	uint8_t *slast = p->buf + p->half + size - 1;
	const enum ibv_wr_opcode op = probe_request_op(p);
	const bool poll_byte = p->r->verb == LS_VERB_WRITE && !p->o->events;
	const uint64_t tmo = p->o->wait_timeout_ns, limit = p->run_wait_ns;
	uint64_t i, idx, ts = 0, seen, ans = ls_now_ns();
	const uint64_t stop = ans + limit;
	int r;

	if (p->r->verb == LS_VERB_READ) {
		/* Passive side: END comes after the run's length plus slack, capped. */
		r = probe_oob_check(p, (int)(limit / 1000000 > INT32_MAX ? INT32_MAX :
					     limit / 1000000), err);
		if (r < 0)
			return -1;
		if (!r)
			return ls_errcf(err, LS_E_PEER, "no END from the prober within %.3g s "
					"(the run's length plus slack, at most --max-run-time "
					"plus 2 waits): dropping it", (double)limit / 1e9);
		return 0;
	}
	for (i = 1;; i++) {
		uint8_t tag = (uint8_t)i;

		if (poll_byte)
			r = probe_wait_byte(p, last, tag, min_u64(ans + tmo, stop), i, err);
		else
			r = probe_wait_wc(p, false, 0, min_u64(ans + tmo, stop), i, &ts, err);
		if (r < 0 && ls_now_ns() >= stop)
			return ls_errcf(err, LS_E_PEER, "run still going after %.3g s (the "
					"run's length plus slack, at most --max-run-time plus 2 "
					"waits): dropping the prober", (double)limit / 1e9);
		if (r)
			return r > 0 ? 0 : -1;
		seen = ls_now_ns();
		if (probe_sq_room(p, seen + tmo, i, err))
			return -1;
		*slast = tag;
		/*
		 * Stamped before the doorbell: a soft device (rxe) may put the
		 * answer on the wire and the prober may see it before probe_post()
		 * returns, so only this stamp is sure to precede its arrival
		 * (seen -> answered lies inside the prober's round trip).
		 */
		ans = ls_now_ns();
		if (probe_post(p, op, size, (uint32_t)i, false, &idx, err))
			return -1;
		if (run->count < run->capacity) {
			if (run->hw_end_ns)
				run->hw_end_ns[run->count] = ts;
			ls_probe_record(run, seen, ans);
		}
		if (!poll_byte && probe_post_recvs(p, 1, err))
			return -1;
	}
}

/* The PSNs this run starts at and its packets per message (see ls_probe_run). */
static void run_psns(struct probe *p, struct ls_probe_run *run)
{
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr a;
	unsigned int mtu = p->r->mtu ? p->r->mtu : 1024;

	run->qpn = p->qp->qp_num;
	run->peer_qpn = p->remote.qpn;
	run->pkts = run->size ? (run->size + mtu - 1) / mtu : 1;
	run->req_psn0 = run->ans_psn0 = -1;
	memset(&a, 0, sizeof(a));
	if (ibv_query_qp(p->qp, &a, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &qi))
		return;
	run->req_psn0 = a.sq_psn & 0xffffff;
	run->ans_psn0 = a.rq_psn & 0xffffff;
}

/* Reset the receive/send regions between runs. */
static void clear_buffers(struct probe *p)
{
	memset(p->buf, 0, 2 * p->half);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Whether HW stamps can end a sample for this verb/mode. */
static bool hw_stamps(const struct probe *p)
{
	return p->r->dev.hwclock != LS_HWCLOCK_NONE &&
	       !(p->r->verb == LS_VERB_WRITE && !p->o->events);
}

/* Pin the calling thread to opts->cpu. */
static int pin_cpu(const struct ls_probe_opts *o, struct ls_probe_result *r, struct ls_err *err)
{
	cpu_set_t set;

	r->cpu = o->cpu;
	if (o->cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(o->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return ls_errnof(err, errno, "pin to CPU %d", o->cpu);
	return 0;
}

/* Prober: run every size of the session. */
static int client_runs(struct probe *p, struct ls_err *err)
{
	const struct ls_probe_opts *o = p->o;
	struct ls_probe_result *r = p->r;
	uint8_t buf[LS_OOB_RUN_LEN];
	uint64_t cap = run_capacity(o);

	for (unsigned int k = 0; k < o->nsizes; k++) {
		struct ls_probe_run *run = &r->runs[k];
		struct ls_oob_run rm = { .index = k, .size = o->sizes[k], .count = cap };
		struct ls_oob_msg m;
		uint64_t n = 0;
		int rc;

		if (run_alloc(p, run, k, o->sizes[k], cap, hw_stamps(p), err))
			return -1;
		r->nruns = k + 1;
		clear_buffers(p);
		if (ls_oob_send(&p->oob, LS_OOB_RUN, 0, buf, ls_oob_run_encode(&rm, buf),
				o->wait_timeout_ns, err) ||
		    ls_oob_expect(&p->oob, LS_OOB_READY, &m, LS_OOB_RUN_LEN, o->wait_timeout_ns,
				  err))
			return -1;
		free(m.payload);
		if (k == 0)
			r->ran_on_cpu = sched_getcpu();
		run_psns(p, run);
		if (o->run_start)
			o->run_start(o->arg, run);
		run->begin_ns = ls_now_ns();
		p->next_progress = run->begin_ns + PROGRESS_NS;
		rc = client_loop(p, run, err);
		run->finish_ns = ls_now_ns();
		if (o->run_end)
			o->run_end(o->arg, run);
		if (rc)
			return -1;
		rm.count = run->count;
		if (ls_oob_send(&p->oob, LS_OOB_END, 0, buf, ls_oob_run_encode(&rm, buf),
				o->wait_timeout_ns, err) ||
		    ls_oob_expect(&p->oob, LS_OOB_STAMPS, &m, (uint32_t)ls_oob_stamps_len(cap),
				  o->wait_timeout_ns, err))
			return -1;
		run->peer = malloc(cap * sizeof(*run->peer));
		if (!run->peer) {
			free(m.payload);
			return ls_errnof(err, ENOMEM, "allocate responder stamps");
		}
		rc = ls_oob_stamps_parse(m.payload, m.hdr.length, cap, (uint64_t *)run->peer, &n,
					 err);
		free(m.payload);
		if (rc)
			return ls_err_wrap(err, "responder stamps");
		run->peer_count = n;
		run->complete = true;
	}
	return 0;
}

/* Responder: serve RUN ... END cycles until BYE. */
static int server_runs(struct probe *p, const struct ls_oob_hello *h, struct ls_err *err)
{
	const struct ls_probe_opts *o = p->o;
	struct ls_probe_result *r = p->r;
	uint8_t buf[LS_OOB_RUN_LEN];

	for (;;) {
		struct ls_oob_msg m;
		struct ls_oob_run rm;
		struct ls_probe_run *run;
		uint64_t cap;
		uint8_t *sp;
		size_t sl;
		int rc;

		if (ls_oob_recv(&p->oob, &m, LS_OOB_RUN_LEN, o->wait_timeout_ns, err))
			return ls_err_wrap(err, "waiting for RUN or BYE");
		if (m.hdr.type == LS_OOB_BYE) {
			free(m.payload);
			return 0;
		}
		if (m.hdr.type != LS_OOB_RUN) {
			free(m.payload);
			return ls_errf(err, "protocol error: %s where RUN or BYE was expected",
				       ls_oob_type_name(m.hdr.type));
		}
		rc = ls_oob_run_parse(m.payload, m.hdr.length, &rm, err);
		free(m.payload);
		if (rc)
			return -1;
		if (rm.index != r->nruns)
			return ls_errcf(err, LS_E_PEER_PROTO, "protocol error: RUN %u where RUN %u "
					"was expected", rm.index, r->nruns);
		/* Limits first: nothing is allocated for a refused RUN. */
		if (ls_probe_check_run(&rm, h, &p->lim, p->kept, &cap, err))
			return -1;
		run = &r->runs[rm.index];
		if (run_alloc(p, run, rm.index, rm.size, cap, hw_stamps(p), err))
			return -1;
		r->nruns++;
		p->kept += cap;
		p->run_wait_ns = ls_probe_run_wait_ns(h, cap, o->wait_timeout_ns, &p->lim);
		clear_buffers(p);
		if (ls_oob_send(&p->oob, LS_OOB_READY, 0, buf, ls_oob_run_encode(&rm, buf),
				o->wait_timeout_ns, err))
			return -1;
		if (rm.index == 0)
			r->ran_on_cpu = sched_getcpu();
		if (o->run_start)
			o->run_start(o->arg, run);
		p->end_seen = false;
		run->begin_ns = ls_now_ns();
		rc = server_loop(p, run, err);
		run->finish_ns = ls_now_ns();
		if (o->run_end)
			o->run_end(o->arg, run);
		if (rc)
			return -1;
		if (!p->end_seen)
			return ls_errf(err, "run %u ended without END", rm.index);
		run->complete = true;
		sl = ls_oob_stamps_len(run->count);
		sp = malloc(sl);
		if (!sp)
			return ls_errnof(err, ENOMEM, "encode %llu stamps",
					 (unsigned long long)run->count);
		ls_oob_stamps_encode((const uint64_t *)run->samples, run->count, sp);
		rc = ls_oob_send(&p->oob, LS_OOB_STAMPS, 0, sp, sl, o->wait_timeout_ns, err);
		free(sp);
		if (rc)
			return -1;
	}
}

/* Fill the result header both sides share. */
static void result_init(struct ls_probe_result *r, const struct ls_probe_opts *o, bool prober)
{
	memset(r, 0, sizeof(*r));
	r->is_prober = prober;
	r->verb = o->verb;
	r->events = o->events;
	r->rdma_cm = o->rdma_cm;
	r->cpu = o->cpu;
	r->ran_on_cpu = -1;
	r->clock = "CLOCK_MONOTONIC";
}

/* Path MTU both sides agree on: requested (or active) capped by both ports. */
static unsigned int agree_mtu(unsigned int want, unsigned int a, unsigned int b)
{
	unsigned int m = want ? want : a;

	if (m > a)
		m = a;
	if (m > b)
		m = b;
	return m;
}

/* Read the path MTU and source GID rdma_cm chose. */
static unsigned int qp_mtu(struct probe *p)
{
	struct ls_probe_dev *d = &p->r->dev;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	union ibv_gid g;

	if (ibv_query_qp(p->qp, &qa, IBV_QP_PATH_MTU | IBV_QP_AV, &ia))
		return 0;
	if (qa.ah_attr.is_global && !ibv_query_gid(p->ctx, (uint8_t)p->o->ib_port,
						   qa.ah_attr.grh.sgid_index, &g)) {
		d->gid_index = qa.ah_attr.grh.sgid_index;
		inet_ntop(AF_INET6, g.raw, d->gid, sizeof(d->gid));
		probe_gid_type(p, d->gid_index, d->gid_type, sizeof(d->gid_type));
	}
	return ls_probe_ibv_to_mtu(qa.path_mtu);
}

/*
 * Prober: a failure the responder may have explained (it refused us: busy,
 * or a limit): its ERROR frame, if one comes within a second, replaces err.
 */
static int peer_reason(struct probe *p, struct ls_err *err)
{
	struct ls_err e = { 0 };
	struct ls_oob_error oe;
	struct ls_oob_msg m;
	int rc;

	if (ls_oob_recv(&p->oob, &m, LS_OOB_ERROR_MAX_LEN, 1000000000ull, &e))
		return -1;
	rc = m.hdr.type == LS_OOB_ERROR && !ls_oob_error_parse(m.payload, m.hdr.length, &oe, &e);
	free(m.payload);
	if (rc)
		ls_errcf(err, oe.code == EBUSY ? LS_E_PEER_BUSY : LS_E_PEER,
			 "peer %s reported: %s", p->oob.peer, oe.text);
	return -1;
}

/* Prober session after the control connection is up. */
static int client_session(struct probe *p, struct ls_err *err)
{
	const struct ls_probe_opts *o = p->o;
	struct ls_probe_result *r = p->r;
	uint8_t hb[LS_OOB_HELLO_MAX_LEN];
	struct ls_oob_hello h = { 0 };
	struct ls_oob_accept a;
	struct ls_oob_msg m;
	struct rdma_cm_event *ev;
	int rc;

	if (ls_auth_join(&p->oob, p->key, o->connect_timeout_ns, err))
		return -1;
	if (o->rdma_cm && probe_cm_client_resolve(p, err))
		return -1;
	if (probe_create_resources(p, o->sizes, o->nsizes, err))
		return -1;
	if (o->mtu && o->mtu > r->dev.active_mtu)
		ls_warn("probe: MTU %u exceeds %s's active MTU %u, using %u", o->mtu,
			r->dev.name, r->dev.active_mtu, r->dev.active_mtu);
	h.verb = (uint8_t)o->verb;
	h.flags = (o->events ? LS_OOB_F_EVENTS : 0) | (o->rdma_cm ? LS_OOB_F_RDMA_CM : 0);
	h.mtu = (uint16_t)agree_mtu(o->mtu, r->dev.active_mtu, r->dev.active_mtu);
	h.qp_timeout = (uint8_t)o->qp_timeout;
	h.iters = o->iters;
	h.duration_ns = o->duration_ns;
	h.capacity = run_capacity(o);
	h.nsizes = o->nsizes;
	memcpy(h.sizes, o->sizes, sizeof(h.sizes));
	probe_local_qp(p, &h.qp);
	if (ls_oob_send(&p->oob, LS_OOB_HELLO, 0, hb, ls_oob_hello_encode(&h, hb),
			o->connect_timeout_ns, err))
		return -1;
	if (o->rdma_cm) {
		struct pollfd pfd = { .fd = p->oob.fd, .events = POLLIN };
		struct rdma_conn_param cp;

		/* A responder that refused us at once (busy) has said so by now: no CM request. */
		if (poll(&pfd, 1, 0) > 0) {
			ls_errcf(err, LS_E_PEER, "responder %s answered HELLO with no ACCEPT",
				 p->oob.peer);
			return peer_reason(p, err);
		}
		probe_cm_params(&cp);
		if (rdma_connect(p->cm_id, &cp))
			return ls_errnof(err, errno, "rdma_cm: connect to %s", o->peer);
		if (probe_cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, &ev, o->connect_timeout_ns, err)) {
			ls_err_wrap(err, "rdma_cm: connect to %s", o->peer);
			return peer_reason(p, err);
		}
		rdma_ack_cm_event(ev);
	}
	if (ls_oob_expect(&p->oob, LS_OOB_ACCEPT, &m, LS_OOB_ACCEPT_LEN,
			  o->connect_timeout_ns + o->wait_timeout_ns, err))
		return -1;
	rc = ls_oob_accept_parse(m.payload, m.hdr.length, &a, err);
	free(m.payload);
	if (rc)
		return -1;
	p->remote = a.qp;
	r->peer_active_mtu = a.active_mtu;
	if (a.qp.buf_len < p->half)
		return ls_errf(err, "responder's buffer (%u bytes) is smaller than ours",
			       a.qp.buf_len);
	if (o->rdma_cm) {
		r->mtu = qp_mtu(p);
	} else {
		r->mtu = a.mtu;
		if (probe_connect_qp(p, a.mtu, err))
			return -1;
	}
	if (probe_uses_recv(p) && probe_post_recvs(p, RQ_DEPTH, err))
		return -1;
	probe_counters_snapshot(p);
	if (client_runs(p, err))
		return -1;
	if (ls_oob_send(&p->oob, LS_OOB_BYE, 0, NULL, 0, o->wait_timeout_ns, err))
		return -1;
	if (o->finish && o->finish(o->arg, &p->oob, true, err))
		return ls_err_wrap(err, "finish hook");
	if (ls_oob_expect(&p->oob, LS_OOB_BYE, &m, 0, o->wait_timeout_ns, err))
		return -1;
	free(m.payload);
	return 0;
}

/*
 * Connect to the responder; a refused connect is tried again every 100 ms
 * for o->refused_retry_ns (a responder that restarts between sessions).
 */
static int connect_responder(const struct ls_probe_opts *o, struct ls_oob *c,
			     struct ls_err *err)
{
	uint64_t until = ls_now_ns() + o->refused_retry_ns;

	for (;;) {
		if (!ls_oob_connect(o->peer, o->port, o->connect_timeout_ns, c, err))
			return 0;
		if (err->code != LS_E_PEER_REFUSED || ls_now_ns() >= until)
			return -1;
		usleep(100000);
	}
}

/* Run a session as the prober. */
int ls_probe_run_client(const struct ls_probe_opts *o, struct ls_probe_result *r,
			struct ls_err *err)
{
	struct probe p = { .o = o, .r = r, .prober = true, .oob = { .fd = -1 } };
	struct ls_auth_key key;
	int rc;

	result_init(r, o, true);
	if (ls_probe_opts_check(o, true, err) || pin_cpu(o, r, err) || key_load(&p, &key, err))
		return -1;
	snprintf(r->peer, sizeof(r->peer), "%s:%u", o->peer, o->port);
	/* Bad device, port or GID fail here, before the network is touched. */
	if ((!o->rdma_cm || o->device) && (probe_open_device(&p, err) || probe_query_port(&p, err))) {
		rc = -1;
		goto out;
	}
	for (unsigned int i = 0; r->dev.max_msg_sz && i < o->nsizes; i++) {
		if (o->sizes[i] > r->dev.max_msg_sz) {
			ls_errf(err, "size %u exceeds %s's max message size %u", o->sizes[i],
				r->dev.name, r->dev.max_msg_sz);
			rc = -1;
			goto out;
		}
	}
	if (connect_responder(o, &p.oob, err)) {
		ls_err_wrap(err, "responder %s unreachable (timeout %.3g s)", r->peer,
			    (double)o->connect_timeout_ns / 1e9);
		rc = -1;
		goto out;
	}
	rc = client_session(&p, err);
	if (rc) {
		snprintf(r->fault, sizeof(r->fault), "%s", err->msg);
		ls_oob_send_error(&p.oob, EIO, err->msg);
	}
out:
	ls_oob_close(&p.oob);
	probe_destroy_resources(&p);
	if (p.cm_ch)
		rdma_destroy_event_channel(p.cm_ch);
	if (p.ctx && p.ctx_owned)
		ibv_close_device(p.ctx);
	if (p.key)
		ls_auth_key_wipe(&key);
	return rc;
}

/* Responder: one session on an accepted control connection. */
static int server_session(struct probe *p, struct ls_err *err)
{
	const struct ls_probe_opts *o = p->o;
	struct ls_probe_result *r = p->r;
	uint8_t ab[LS_OOB_ACCEPT_LEN];
	struct ls_oob_accept a = { 0 };
	struct ls_oob_hello h;
	struct ls_oob_msg m;
	int rc;

	if (ls_oob_expect(&p->oob, LS_OOB_HELLO, &m, LS_OOB_HELLO_MAX_LEN,
			  o->connect_timeout_ns, err))
		return ls_err_wrap(err, "handshake");
	rc = ls_oob_hello_parse(m.payload, m.hdr.length, &h, err);
	free(m.payload);
	if (rc)
		return ls_err_wrap(err, "handshake");
	/* Every size, count and duration within the limits before any allocation. */
	if (ls_probe_check_hello(&h, &p->lim, r->dev.max_msg_sz, err))
		return -1;
	if (!!(h.flags & LS_OOB_F_RDMA_CM) != o->rdma_cm)
		return ls_errf(err, "prober %s rdma_cm (-R), this responder %s",
			       (h.flags & LS_OOB_F_RDMA_CM) ? "uses" : "does not use",
			       o->rdma_cm ? "does" : "does not");
	r->verb = (enum ls_probe_verb)h.verb;
	r->events = h.flags & LS_OOB_F_EVENTS;
	p->r->rdma_cm = o->rdma_cm;
	/* The responder follows the prober's mode, verb, timeout and run length. */
	p->eff = *o;
	p->eff.events = r->events;
	p->eff.verb = r->verb;
	p->eff.qp_timeout = h.qp_timeout;
	p->eff.duration_ns = h.duration_ns;
	p->eff.iters = h.iters;
	p->o = o = &p->eff;
	p->remote = h.qp;
	if (o->rdma_cm) {
		struct rdma_conn_param cp;
		struct rdma_cm_event *ev;
		uint8_t to = h.qp_timeout;

		if (probe_cm_wait_request(p, h.qp.qpn, &ev, o->connect_timeout_ns, err))
			return -1;
		p->cm_id = ev->id;
		rdma_ack_cm_event(ev);
		if (probe_cm_adopt_device(p, p->cm_id->verbs, err) ||
		    probe_create_resources(p, h.sizes, h.nsizes, err))
			return -1;
		rdma_set_option(p->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &to,
				sizeof(to));
		if (probe_uses_recv(p) && probe_post_recvs(p, RQ_DEPTH, err))
			return -1;
		probe_cm_params(&cp);
		if (rdma_accept(p->cm_id, &cp))
			return ls_errnof(err, errno, "rdma_cm: accept");
		if (probe_cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, &ev, o->connect_timeout_ns, err))
			return -1;
		rdma_ack_cm_event(ev);
		r->mtu = qp_mtu(p);
	} else {
		if (probe_create_resources(p, h.sizes, h.nsizes, err))
			return -1;
		r->mtu = agree_mtu(h.mtu, h.mtu, r->dev.active_mtu);
		if (probe_connect_qp(p, r->mtu, err))
			return -1;
		if (probe_uses_recv(p) && probe_post_recvs(p, RQ_DEPTH, err))
			return -1;
	}
	if (h.qp.buf_len < p->half)
		return ls_errf(err, "prober's buffer (%u bytes) is too small", h.qp.buf_len);
	a.mtu = (uint16_t)(r->mtu ? r->mtu : 1024);
	a.active_mtu = (uint16_t)r->dev.active_mtu;
	probe_local_qp(p, &a.qp);
	if (ls_oob_send(&p->oob, LS_OOB_ACCEPT, 0, ab, ls_oob_accept_encode(&a, ab),
			o->connect_timeout_ns, err))
		return -1;
	probe_counters_snapshot(p);
	if (server_runs(p, &h, err))
		return -1;
	if (o->finish && o->finish(o->arg, &p->oob, false, err))
		return ls_err_wrap(err, "finish hook");
	return ls_oob_send(&p->oob, LS_OOB_BYE, 0, NULL, 0, o->wait_timeout_ns, err);
}

/* Free one run's arrays. */
static void run_free(struct ls_probe_run *run)
{
	ls_freep(&run->samples);
	ls_freep(&run->hw_end_ns);
	ls_freep(&run->peer);
}

/* Free what a run_* call allocated. */
void ls_probe_result_free(struct ls_probe_result *r)
{
	for (unsigned int i = 0; i < LS_PROBE_MAX_SIZES; i++)
		run_free(&r->runs[i]);
	r->nruns = 0;
}

/* Responder: serve one connection the acceptor handed over; 0 when the session completed. */
static int serve_one(struct probe *p, const struct ls_probe_opts *o)
{
	struct ls_probe_result *r = p->r;
	struct ls_probe_dev dev = r->dev;
	struct ls_err se = { 0 };
	bool started = false;
	int rc;

	ls_probe_result_free(r);
	result_init(r, o, false);
	r->dev = dev;
	snprintf(r->peer, sizeof(r->peer), "%s", p->oob.peer);
	p->o = o;
	p->kept = 0;
	rc = ls_auth_serve(&p->oob, p->key, o->connect_timeout_ns, &se);
	if (!rc && o->session_start) {
		started = true;
		rc = o->session_start(o->arg, &se);
	}
	if (!rc)
		rc = server_session(p, &se);
	if (started && o->session_end)
		o->session_end(o->arg, rc);
	if (rc && se.code == LS_E_LIMIT) {
		note(p, "refused prober %s: %s", p->oob.peer, se.msg);
		snprintf(r->fault, sizeof(r->fault), "%s", se.msg);
		ls_oob_send_error(&p->oob, E2BIG, se.msg);
	} else if (rc) {
		note(p, "session with %s failed: %s", p->oob.peer, se.msg);
		snprintf(r->fault, sizeof(r->fault), "%s", se.msg);
		ls_oob_send_error(&p->oob, EPROTO, se.msg);
	} else {
		note(p, "session with %s done (%u run%s)", p->oob.peer, r->nruns,
		     r->nruns == 1 ? "" : "s");
	}
	ls_oob_close(&p->oob);
	probe_destroy_resources(p);
	return rc;
}

/* Serve prober sessions, one at a time (others are refused as busy). */
int ls_probe_run_server(const struct ls_probe_opts *o, struct ls_probe_result *r,
			struct ls_err *err)
{
	struct probe p = { .o = o, .r = r, .prober = false, .oob = { .fd = -1 } };
	char addr[INET6_ADDRSTRLEN];
	struct ls_auth_key key;
	struct probe_acceptor *acc = NULL;
	int lfd = -1, rc = -1;
	unsigned int served = 0;

	result_init(r, o, false);
	if (ls_probe_opts_check(o, false, err) || pin_cpu(o, r, err) || key_load(&p, &key, err))
		return -1;
	p.lim = o->lim;
	if (o->capacity)	/* the responder's --max-samples */
		p.lim.max_samples = o->capacity;
	/* Fail early on a bad device or GID, before anyone connects. */
	if (probe_open_device(&p, err) || probe_query_port(&p, err))
		goto out;
	if (!o->bind) {
		if (ls_probe_gid_bind_addr(p.gid.raw, addr, sizeof(addr), err)) {
			ls_err_wrap(err, "%s port %u GID %d", r->dev.name, o->ib_port,
				    r->dev.gid_index);
			goto out;
		}
		p.bind = addr;
	} else if (!ls_probe_bind_any(o->bind)) {
		p.bind = o->bind;
	}
	if (o->rdma_cm && probe_cm_server_listen(&p, err))
		goto out;
	if (ls_oob_listen(p.bind, o->port, &lfd, err) ||
	    probe_acceptor_start(&acc, lfd, o->quiet, err))
		goto out;
	note(&p, "responder listening on %s port %u, %s (%s port %u, GID %d %s)",
	     p.bind ? p.bind : "every address", o->port,
	     p.key ? "probers must prove the key" : "insecure: any prober is served",
	     r->dev.name, o->ib_port, r->dev.gid_index, r->dev.gid);
	for (;;) {
		if (probe_acceptor_next(acc, o->listen_timeout_ns, &p.oob, err)) {
			if (served) {	/* --forever: a quiet spell after sessions ends cleanly */
				note(&p, "no prober within %.3g s after %u session%s, exiting",
				     (double)o->listen_timeout_ns / 1e9, served,
				     served == 1 ? "" : "s");
				break;
			}
			ls_err_wrap(err, "no prober within %.3g s",
				    (double)o->listen_timeout_ns / 1e9);
			goto out;
		}
		rc = serve_one(&p, o);
		probe_acceptor_idle(acc);
		if (!p.ctx && !o->rdma_cm && probe_open_device(&p, err))
			goto out;
		if (!rc && !o->serve_forever)
			break;
		served += !rc;
		rc = -1;
	}
	rc = 0;
out:
	probe_acceptor_stop(acc);
	if (lfd >= 0)
		close(lfd);
	if (p.cm_listen)
		rdma_destroy_id(p.cm_listen);
	if (p.cm_ch)
		rdma_destroy_event_channel(p.cm_ch);
	if (p.ctx && p.ctx_owned)
		ibv_close_device(p.ctx);
	if (p.key)
		ls_auth_key_wipe(&key);
	return rc;
}
