// SPDX-License-Identifier: GPL-2.0
/* The probe engine: posting work requests, waiting for completions and the peer, progress. */
#include "probe_int.h"

/* Poll one completion: 1 found, 0 none, -1 poll failure. */
static int poll1(struct probe *p, struct wc *w, struct ls_err *err)
{
	if (p->cqx) {
		struct ibv_poll_cq_attr pa = { 0 };
		int e = ibv_start_poll(p->cqx, &pa);

		if (e == ENOENT)
			return 0;
		if (e)
			return ls_errnof(err, e, "poll CQ");
		w->wr_id = p->cqx->wr_id;
		w->status = p->cqx->status;
		w->ts_ns = 0;
		if (w->status == IBV_WC_SUCCESS) {
			w->opcode = ibv_wc_read_opcode(p->cqx);
			if (p->r->dev.hwclock == LS_HWCLOCK_WALLCLOCK)
				w->ts_ns = ibv_wc_read_completion_wallclock_ns(p->cqx);
			else if (p->r->dev.hwclock == LS_HWCLOCK_HCA)
				w->ts_ns = ls_probe_hca_ticks_to_ns(
					ibv_wc_read_completion_ts(p->cqx),
					p->r->dev.hca_core_clock_khz);
		} else {
			w->vendor_err = ibv_wc_read_vendor_err(p->cqx);
		}
		ibv_end_poll(p->cqx);
		return 1;
	} else {
		struct ibv_wc wc;
		int n = ibv_poll_cq(p->cq, 1, &wc);

		if (n < 0)
			return ls_errf(err, "poll CQ failed (%d)", n);
		if (!n)
			return 0;
		w->wr_id = wc.wr_id;
		w->status = wc.status;
		w->opcode = wc.opcode;
		w->vendor_err = wc.vendor_err;
		w->ts_ns = 0;
		return 1;
	}
}

/* Account a completion; an error status fails with the QP diagnosis. */
static int handle_wc(struct probe *p, const struct wc *w, struct ls_err *err)
{
	if (w->status != IBV_WC_SUCCESS) {
		ls_errf(err, "%s completion failed: %s (status %d, vendor error 0x%x)",
			WRID_KIND(w->wr_id) == WRID_RECV ? "receive" : "send",
			ibv_wc_status_str(w->status), w->status, w->vendor_err);
		return probe_diagnose(p, err);
	}
	if (WRID_KIND(w->wr_id) == WRID_SEND)
		p->sq_done = WRID_IDX(w->wr_id) + 1;
	else
		p->rq_consumed++;
	return 0;
}

/*
 * Check the control connection during a run. Prober: anything readable is a
 * fault (peer's ERROR or EOF). Responder: END ends the run (returns 1).
 */
int probe_oob_check(struct probe *p, int timeout_ms, struct ls_err *err)
{
	struct pollfd pfd = { .fd = p->oob.fd, .events = POLLIN };
	struct ls_oob_msg m;
	int r;

	r = poll(&pfd, 1, timeout_ms);
	if (r <= 0)
		return 0;
	if (p->prober) {
		if (ls_oob_expect(&p->oob, LS_OOB_BYE, &m, LS_OOB_ERROR_MAX_LEN, 1000000000ull,
				  err))
			return ls_err_wrap(err, "responder gone mid-run");
		free(m.payload);
		return ls_errf(err, "responder ended the session mid-run");
	}
	if (ls_oob_expect(&p->oob, LS_OOB_END, &m, LS_OOB_RUN_LEN, 1000000000ull, err))
		return ls_err_wrap(err, "prober gone mid-run");
	r = ls_oob_run_parse(m.payload, m.hdr.length, &p->end_msg, err);
	free(m.payload);
	if (r)
		return -1;
	p->end_seen = true;
	return 1;
}

/* Fail for a wait that ran out of time. */
static int timed_out(struct probe *p, const char *what, uint64_t iter, struct ls_err *err)
{
	ls_errf(err, "no %s for iteration %llu within %.3g s (lost completion or peer gone)",
		what, (unsigned long long)iter, (double)p->o->wait_timeout_ns / 1e9);
	return probe_diagnose(p, err);
}

/*
 * Wait for a wanted completion: a receive (want_send false) or the send
 * with index want_idx. Busy-polls, or sleeps on the completion channel
 * with the control connection watched too. Returns 1 when the responder
 * saw END instead.
 */
int probe_wait_wc(struct probe *p, bool want_send, uint64_t want_idx, uint64_t deadline,
		  uint64_t iter, uint64_t *ts, struct ls_err *err)
{
	unsigned int spins = 0;
	struct wc w;
	int r;

	for (;;) {
		r = poll1(p, &w, err);
		if (r < 0)
			return -1;
		if (r) {
			if (handle_wc(p, &w, err))
				return -1;
			if (want_send ? (WRID_KIND(w.wr_id) == WRID_SEND &&
					 WRID_IDX(w.wr_id) == want_idx)
				      : WRID_KIND(w.wr_id) == WRID_RECV) {
				*ts = w.ts_ns;
				return 0;
			}
			continue;
		}
		if (!p->o->events) {
			if (++spins % SPIN_CHECK)
				continue;
			if (ls_now_ns() > deadline)
				return timed_out(p, "completion", iter, err);
			r = probe_oob_check(p, 0, err);
			if (r)
				return r;
			continue;
		}
		if (!p->armed) {
			if (ibv_req_notify_cq(p->cq, 0))
				return ls_errnof(err, errno, "arm CQ");
			p->armed = true;
			continue;	/* poll once more: a completion may have raced the arming */
		}
		{
			struct pollfd pfd[2] = {
				{ .fd = p->chan->fd, .events = POLLIN },
				{ .fd = p->oob.fd, .events = POLLIN },
			};
			uint64_t now = ls_now_ns();
			struct ibv_cq *ecq;
			void *ectx;

			if (now > deadline)
				return timed_out(p, "completion event", iter, err);
			r = poll(pfd, 2, (deadline - now) / 1000000 >= 1000 ? 1000 :
				 (int)((deadline - now) / 1000000 + 1));
			if (r < 0 && errno != EINTR)
				return ls_errnof(err, errno, "wait for completion event");
			if (r > 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
				r = probe_oob_check(p, 0, err);
				if (r)
					return r;
			}
			if (r > 0 && (pfd[0].revents & POLLIN) &&
			    !ibv_get_cq_event(p->chan, &ecq, &ectx)) {
				p->armed = false;
				if (++p->unacked_events >= 64) {
					ibv_ack_cq_events(p->cq, p->unacked_events);
					p->unacked_events = 0;
				}
			}
		}
	}
}

/* Busy-wait for the last byte of the receive region to become tag. */
int probe_wait_byte(struct probe *p, volatile uint8_t *b, uint8_t tag, uint64_t deadline,
		    uint64_t iter, struct ls_err *err)
{
	unsigned int spins = 0;
	struct wc w;
	int r;

	while (*b != tag) {
		if (++spins % SPIN_CHECK)
			continue;
		r = poll1(p, &w, err);	/* reap sends, catch error completions */
		if (r < 0 || (r > 0 && handle_wc(p, &w, err)))
			return -1;
		if (ls_now_ns() > deadline)
			return timed_out(p, "answer", iter, err);
		r = probe_oob_check(p, 0, err);
		if (r)
			return r;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return 0;
}

/* Make room in the send queue (reap signaled completions). */
int probe_sq_room(struct probe *p, uint64_t deadline, uint64_t iter, struct ls_err *err)
{
	uint64_t ts;

	while (p->sq_posted - p->sq_done >= SQ_DEPTH - 1) {
		/* the last signaled WR before the queue filled up */
		uint64_t want = (p->sq_done / SIG_EVERY + 1) * SIG_EVERY - 1;
		int r = probe_wait_wc(p, true, want, deadline, iter, &ts, err);

		if (r)
			return r < 0 ? -1 : ls_errf(err, "END while the send queue was full");
	}
	return 0;
}

/* Post one request / answer; returns its send index. */
int probe_post(struct probe *p, enum ibv_wr_opcode op, uint32_t size, uint32_t imm,
	       bool force_signal, uint64_t *idx, struct ls_err *err)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->buf + (op == IBV_WR_RDMA_READ ? 0 : p->half)),
		.length = size,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
	}, *bad;
	uint64_t i = p->sq_posted;
	int e;

	wr.wr_id = WRID_SEND | i;
	if (force_signal || i % SIG_EVERY == SIG_EVERY - 1)
		wr.send_flags = IBV_SEND_SIGNALED;
	if (op != IBV_WR_RDMA_READ && size <= p->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(imm);
	if (op != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = p->remote.addr;
		wr.wr.rdma.rkey = p->remote.rkey;
	}
	e = ibv_post_send(p->qp, &wr, &bad);
	if (e)
		return ls_errnof(err, e, "post %s of %u bytes", ls_probe_verb_name(p->r->verb),
				 size);
	p->sq_posted++;
	*idx = i;
	return 0;
}

/* Post n receives (full receive region each). */
int probe_post_recvs(struct probe *p, unsigned int n, struct ls_err *err)
{
	for (unsigned int k = 0; k < n; k++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)p->buf, .length = (uint32_t)p->half,
			.lkey = p->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = WRID_RECV, .sg_list = &sge, .num_sge = 1 },
				   *bad;
		int e = ibv_post_recv(p->qp, &wr, &bad);

		if (e)
			return ls_errnof(err, e, "post receive");
	}
	return 0;
}

/* True when this verb/mode answers through receive completions. */
bool probe_uses_recv(const struct probe *p)
{
	return p->r->verb == LS_VERB_SEND || (p->r->verb == LS_VERB_WRITE && p->o->events);
}

/* The opcode of a request / answer. */
enum ibv_wr_opcode probe_request_op(const struct probe *p)
{
	switch (p->r->verb) {
	case LS_VERB_SEND:	return IBV_WR_SEND;
	case LS_VERB_READ:	return IBV_WR_RDMA_READ;
	default:		return p->o->events ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	}
}

/* Call the progress hook at most every PROGRESS_NS. */
void probe_progress(struct probe *p, struct ls_probe_run *run, uint64_t now)
{
	if (!p->o->progress || now < p->next_progress)
		return;
	p->next_progress = now + PROGRESS_NS;
	p->o->progress(p->o->arg, run, run->count);
}
