// SPDX-License-Identifier: GPL-2.0
/* The probe engine: verbs resources (PD, MR, CQs, QP) and connecting the QP, directly or with rdma_cm. */
#include "probe_int.h"

/* Create the CQ: extended with HW timestamps when offered, else plain. */
static int create_cq(struct probe *p, struct ls_err *err)
{
	struct ls_probe_dev *d = &p->r->dev;
	static const uint64_t ts_flags[] = {
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, 0,
	};

	if (p->o->events) {
		p->chan = ibv_create_comp_channel(p->ctx);
		if (!p->chan)
			return ls_errnof(err, errno, "create completion channel on %s", d->name);
		if (fcntl(p->chan->fd, F_SETFL, fcntl(p->chan->fd, F_GETFL) | O_NONBLOCK))
			return ls_errnof(err, errno, "completion channel: set non-blocking");
	}
	for (size_t i = d->hwclock == LS_HWCLOCK_NONE ? 2 : 0; i < ARRAY_SIZE(ts_flags); i++) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = SQ_DEPTH + RQ_DEPTH,
			.channel = p->chan,
			.wc_flags = IBV_WC_STANDARD_FLAGS | ts_flags[i],
		};

		p->cqx = ibv_create_cq_ex(p->ctx, &ca);
		if (p->cqx) {
			p->cq = ibv_cq_ex_to_cq(p->cqx);
			d->hwclock = i == 0 ? LS_HWCLOCK_WALLCLOCK :
				     i == 1 ? LS_HWCLOCK_HCA : LS_HWCLOCK_NONE;
			return 0;
		}
	}
	d->hwclock = LS_HWCLOCK_NONE;
	p->cq = ibv_create_cq(p->ctx, SQ_DEPTH + RQ_DEPTH, NULL, p->chan, 0);
	if (!p->cq)
		return ls_errnof(err, errno, "create CQ on %s", d->name);
	return 0;
}

/* QP init attributes shared by the verbs and rdma_cm paths. */
static void qp_init_attr(struct probe *p, struct ibv_qp_init_attr *qa, uint32_t inl)
{
	memset(qa, 0, sizeof(*qa));
	qa->send_cq = p->cq;
	qa->recv_cq = p->cq;
	qa->qp_type = IBV_QPT_RC;
	qa->sq_sig_all = 0;
	qa->cap.max_send_wr = SQ_DEPTH;
	qa->cap.max_recv_wr = RQ_DEPTH;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
	qa->cap.max_inline_data = inl;
}

/* Create the QP (verbs path, or on the rdma_cm id); inline data if possible. */
static int create_qp(struct probe *p, struct ls_err *err)
{
	struct ibv_qp_init_attr qa;
	int e = 0;

	for (uint32_t inl = MAX_INLINE;; inl = 0) {
		qp_init_attr(p, &qa, inl);
		if (p->cm_id) {
			if (!rdma_create_qp(p->cm_id, p->pd, &qa)) {
				p->qp = p->cm_id->qp;
				break;
			}
			e = errno;
		} else {
			p->qp = ibv_create_qp(p->pd, &qa);
			if (p->qp)
				break;
			e = errno;
		}
		if (!inl)
			return ls_errnof(err, e, "create RC QP on %s", p->r->dev.name);
	}
	p->max_inline = qa.cap.max_inline_data;
	return 0;
}

/* PD, buffer, MR, CQ, QP for the largest size of the session. */
int probe_create_resources(struct probe *p, const uint32_t *sizes, unsigned int n,
			   struct ls_err *err)
{
	struct ls_probe_dev *d = &p->r->dev;
	uint32_t max = 1;
	long pg = sysconf(_SC_PAGESIZE);

	for (unsigned int i = 0; i < n; i++) {
		if (sizes[i] > d->max_msg_sz)
			return ls_errf(err, "size %u exceeds %s's max message size %u", sizes[i],
				       d->name, d->max_msg_sz);
		if (sizes[i] > max)
			max = sizes[i];
	}
	p->half = ((size_t)max + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	if (posix_memalign((void **)&p->buf, (size_t)pg, 2 * p->half))
		return ls_errnof(err, ENOMEM, "allocate %zu byte buffer", 2 * p->half);
	memset(p->buf, 0, 2 * p->half);
	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd)
		return ls_errnof(err, errno, "allocate PD on %s", d->name);
	p->mr = ibv_reg_mr(p->pd, p->buf, 2 * p->half, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!p->mr)
		return ls_errnof(err, errno, "register %zu bytes on %s", 2 * p->half, d->name);
	if (create_cq(p, err) || create_qp(p, err))
		return -1;
	if (getrandom(&p->psn, sizeof(p->psn), 0) != sizeof(p->psn))
		p->psn = (uint32_t)ls_now_ns();
	p->psn &= 0xffffff;
	return 0;
}

/* Our endpoint for the peer. */
void probe_local_qp(const struct probe *p, struct ls_oob_qp *q)
{
	memset(q, 0, sizeof(*q));
	q->qpn = p->qp->qp_num;
	q->psn = p->psn;
	q->lid = p->lid;
	memcpy(q->gid, p->gid.raw, 16);
	q->rkey = p->mr->rkey;
	q->addr = (uintptr_t)p->buf;
	q->buf_len = (uint32_t)p->half;
}

/* INIT -> RTR -> RTS against the remote endpoint (verbs path). */
int probe_connect_qp(struct probe *p, unsigned int mtu, struct ls_err *err)
{
	static const uint8_t zero_gid[16];
	struct ibv_qp_attr a;
	int e;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = (uint8_t)p->o->ib_port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	e = ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS);
	if (e)
		return ls_errnof(err, e, "QP to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = ls_probe_mtu_to_ibv(mtu);
	a.dest_qp_num = p->remote.qpn;
	a.rq_psn = p->remote.psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = (uint8_t)p->o->ib_port;
	a.ah_attr.dlid = p->remote.lid;
	if (p->ethernet || memcmp(p->remote.gid, zero_gid, 16)) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, p->remote.gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)p->r->dev.gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.grh.traffic_class = (uint8_t)p->o->tclass;
	}
	e = ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER);
	if (e)
		return ls_errnof(err, e, "QP to RTR (remote QPN 0x%x, MTU %u)", p->remote.qpn,
				 mtu);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)p->o->qp_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = p->psn;
	a.max_rd_atomic = 1;
	e = ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (e)
		return ls_errnof(err, e, "QP to RTS");
	return 0;
}

/*
 * Have the NIC driver reclaim the QP's sent packets before the QP goes. A
 * soft RoCE device (rxe) lets each sent packet hold its QP until the driver
 * frees the buffer, and virtio-net, among others, frees sent buffers
 * lazily, on a later transmit. Linux 6.1's rxe destroys a QP whose packets
 * are still out after 200 ms anyway (with a kernel warning), and the late
 * free then touches the freed QP (an oops in rxe_skb_tx_dtor, seen in the
 * lab). One empty datagram to the peer's discard port leaves through the
 * same netdev, and its transmit frees what the device has sent.
 */
static void nudge_netdev(const struct probe *p)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t none[16];
	const uint8_t *g = p->remote.gid;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(9) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(9) };
	const struct sockaddr *sa = (const struct sockaddr *)&a6;
	socklen_t sl = sizeof(a6);
	int fd;

	if (!p->ethernet || !memcmp(g, none, 16))
		return;
	if (!memcmp(g, v4mapped, sizeof(v4mapped))) {
		memcpy(&a4.sin_addr, g + 12, 4);
		sa = (const struct sockaddr *)&a4;
		sl = sizeof(a4);
	} else {
		memcpy(&a6.sin6_addr, g, 16);
		if (g[0] == 0xfe && (g[1] & 0xc0) == 0x80 && p->r)
			a6.sin6_scope_id = if_nametoindex(p->r->dev.netdev);
	}
	fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	/* Best effort: a failure leaves the old behaviour. */
	(void)!sendto(fd, "", 0, MSG_DONTWAIT, sa, sl);
	close(fd);
}

/*
 * Move the QP to ERR and let the device flush its queues before the QP is
 * destroyed: a soft device (rxe) waits at destroy for in-flight work still
 * holding the QP, and warns in the kernel log when that takes long.
 */
static void drain_qp(struct probe *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	const uint64_t end = ls_now_ns() + 100000000ull;
	struct ibv_wc wc[16];
	unsigned int idle = 0;

	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE) || !p->cq)
		return;
	while (idle < 3 && ls_now_ns() < end) {
		int n = ibv_poll_cq(p->cq, ARRAY_SIZE(wc), wc);
		struct timespec ts = { 0, 1000000 };

		if (n < 0)
			return;
		idle = n ? 0 : idle + 1;
		if (!n)
			nanosleep(&ts, NULL);
	}
	nudge_netdev(p);
}

/* Tear down a session's verbs and rdma_cm resources (not the listen id). */
void probe_destroy_resources(struct probe *p)
{
	if (p->qp) {
		drain_qp(p);
		if (p->cm_id)
			rdma_destroy_qp(p->cm_id);
		else
			ibv_destroy_qp(p->qp);
		p->qp = NULL;
	}
	if (p->cq) {
		if (p->unacked_events)
			ibv_ack_cq_events(p->cq, p->unacked_events);
		p->unacked_events = 0;
		ibv_destroy_cq(p->cq);
		p->cq = NULL;
		p->cqx = NULL;
	}
	if (p->chan) {
		ibv_destroy_comp_channel(p->chan);
		p->chan = NULL;
	}
	if (p->mr) {
		ibv_dereg_mr(p->mr);
		p->mr = NULL;
	}
	if (p->pd) {
		ibv_dealloc_pd(p->pd);
		p->pd = NULL;
	}
	free(p->buf);
	p->buf = NULL;
	if (p->cm_id) {
		rdma_disconnect(p->cm_id);
		rdma_destroy_id(p->cm_id);
		p->cm_id = NULL;
		if (!p->ctx_owned)
			p->ctx = NULL;
	}
	p->sq_posted = p->sq_done = p->rq_consumed = 0;
	p->armed = false;
}

/* Wait for one rdma_cm event of type want within timeout_ns. */
int probe_cm_wait(struct probe *p, enum rdma_cm_event_type want,
		  struct rdma_cm_event **ev, uint64_t timeout_ns, struct ls_err *err)
{
	struct pollfd pfd = { .fd = p->cm_ch->fd, .events = POLLIN };
	int r;

	r = poll(&pfd, 1, (int)(timeout_ns / 1000000));
	if (r < 0)
		return ls_errnof(err, errno, "rdma_cm: poll");
	if (!r)
		return ls_errf(err, "rdma_cm: no %s event within %.1f s", rdma_event_str(want),
			       (double)timeout_ns / 1e9);
	if (rdma_get_cm_event(p->cm_ch, ev))
		return ls_errnof(err, errno, "rdma_cm: get event");
	if ((*ev)->event != want) {
		ls_errf(err, "rdma_cm: %s (status %d) while waiting for %s",
			rdma_event_str((*ev)->event), (*ev)->status, rdma_event_str(want));
		rdma_ack_cm_event(*ev);
		return -1;
	}
	return 0;
}

/*
 * Responder: wait for the CONNECT_REQUEST of the prober whose HELLO offered
 * QP qpn. Requests of other QPs (a prober refused as busy or over a limit
 * that connected anyway) are rejected, not taken for this session's.
 */
int probe_cm_wait_request(struct probe *p, uint32_t qpn, struct rdma_cm_event **ev,
			  uint64_t timeout_ns, struct ls_err *err)
{
	uint64_t deadline = ls_now_ns() + timeout_ns;

	for (;;) {
		uint64_t now = ls_now_ns();
		struct rdma_cm_id *id;

		if (probe_cm_wait(p, RDMA_CM_EVENT_CONNECT_REQUEST, ev,
				  deadline > now ? deadline - now : 0, err))
			return -1;
		if ((*ev)->param.conn.qp_num == qpn)
			return 0;
		id = (*ev)->id;
		rdma_reject(id, NULL, 0);
		rdma_ack_cm_event(*ev);
		rdma_destroy_id(id);
	}
}

/* Create the rdma_cm event channel, non-blocking. */
static int cm_channel(struct probe *p, struct ls_err *err)
{
	p->cm_ch = rdma_create_event_channel();
	if (!p->cm_ch)
		return ls_errnof(err, errno, "rdma_cm: create event channel");
	fcntl(p->cm_ch->fd, F_SETFL, fcntl(p->cm_ch->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* Resolve an address for rdma_cm (host, port). */
static int cm_addr(const char *host, uint16_t port, bool passive, struct sockaddr_storage *ss,
		   struct ls_err *err)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 };
	struct addrinfo *res;
	char pbuf[8];
	int r;

	snprintf(pbuf, sizeof(pbuf), "%u", port);
	r = getaddrinfo(host && *host ? host : NULL, pbuf, &hints, &res);
	if (r)
		return ls_errf(err, "rdma_cm: resolve %s: %s", host ? host : "*", gai_strerror(r));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* Adopt the device rdma_cm chose; -d must agree. */
int probe_cm_adopt_device(struct probe *p, struct ibv_context *ctx, struct ls_err *err)
{
	const char *nm = ibv_get_device_name(ctx->device);

	if (p->o->device && strcmp(nm, p->o->device))
		return ls_errf(err, "rdma_cm routes to %s, not to -d %s", nm, p->o->device);
	if (p->ctx_owned && p->ctx != ctx) {
		ibv_close_device(p->ctx);
		p->ctx_owned = false;
	}
	p->ctx = ctx;
	return probe_query_port(p, err);
}

/* Connection parameters for rdma_connect / rdma_accept. */
void probe_cm_params(struct rdma_conn_param *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

/* Prober: resolve address and route, adopt the device. */
int probe_cm_client_resolve(struct probe *p, struct ls_err *err)
{
	struct sockaddr_storage ss;
	struct rdma_cm_event *ev;
	uint8_t to = (uint8_t)p->o->qp_timeout, tos = (uint8_t)p->o->tclass;
	int ms = (int)(p->o->connect_timeout_ns / 1000000);

	if (cm_channel(p, err) || cm_addr(p->o->peer, p->o->port, false, &ss, err))
		return -1;
	if (rdma_create_id(p->cm_ch, &p->cm_id, p, RDMA_PS_TCP))
		return ls_errnof(err, errno, "rdma_cm: create id");
	if (rdma_resolve_addr(p->cm_id, NULL, (struct sockaddr *)&ss, ms))
		return ls_errnof(err, errno, "rdma_cm: resolve address %s", p->o->peer);
	if (probe_cm_wait(p, RDMA_CM_EVENT_ADDR_RESOLVED, &ev, p->o->connect_timeout_ns, err))
		return ls_err_wrap(err, "rdma_cm: resolve %s", p->o->peer);
	rdma_ack_cm_event(ev);
	rdma_set_option(p->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &to, sizeof(to));
	if (p->o->tclass && rdma_set_option(p->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos,
					    sizeof(tos)))
		return ls_errnof(err, errno, "rdma_cm: set TOS %u", p->o->tclass);
	if (rdma_resolve_route(p->cm_id, ms))
		return ls_errnof(err, errno, "rdma_cm: resolve route to %s", p->o->peer);
	if (probe_cm_wait(p, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev, p->o->connect_timeout_ns, err))
		return -1;
	rdma_ack_cm_event(ev);
	return probe_cm_adopt_device(p, p->cm_id->verbs, err);
}

/* Responder: listen for rdma_cm connections on the control port. */
int probe_cm_server_listen(struct probe *p, struct ls_err *err)
{
	struct sockaddr_storage ss;

	if (cm_channel(p, err) || cm_addr(p->bind, p->o->port, true, &ss, err))
		return -1;
	if (rdma_create_id(p->cm_ch, &p->cm_listen, p, RDMA_PS_TCP))
		return ls_errnof(err, errno, "rdma_cm: create id");
	if (rdma_bind_addr(p->cm_listen, (struct sockaddr *)&ss))
		return ls_errnof(err, errno, "rdma_cm: bind port %u", p->o->port);
	if (rdma_listen(p->cm_listen, 4))
		return ls_errnof(err, errno, "rdma_cm: listen");
	return 0;
}
