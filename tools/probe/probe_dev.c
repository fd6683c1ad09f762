// SPDX-License-Identifier: GPL-2.0
/* The probe engine: the RDMA device, its port and GID, and the port counters a fault report reads. */
#include "probe_int.h"

#include "counters.h"

/* sysfs path of a port attribute. */
static void port_path(char *buf, size_t len, const struct probe *p, const char *rest)
{
	snprintf(buf, len, "/sys/class/infiniband/%s/ports/%u/%s", p->r->dev.name,
		 p->o->ib_port, rest);
}

/* Open the device by name (or the first one), listing the existing ones on failure. */
int probe_open_device(struct probe *p, struct ls_err *err)
{
	struct ibv_device **list;
	char names[256] = "";
	int n = 0, found = -1;
	size_t off = 0;

	list = ibv_get_device_list(&n);
	if (!list && errno != ENOSYS)	/* ENOSYS: no RDMA subsystem at all */
		return ls_errnof(err, errno, "list RDMA devices");
	for (int i = 0; i < n; i++) {
		const char *nm = ibv_get_device_name(list[i]);

		if (off < sizeof(names))
			off += snprintf(names + off, sizeof(names) - off, "%s%s",
					i ? ", " : "", nm);
		if (found < 0 && (!p->o->device || !strcmp(nm, p->o->device)))
			found = i;
	}
	if (!list || !n) {
		if (list)
			ibv_free_device_list(list);
		return ls_errcf(err, LS_E_DEVICE, "no RDMA devices found (for Soft-RoCE: modprobe rdma_rxe; "
				"rdma link add rxe0 type rxe netdev IF)");
	}
	if (found < 0) {
		ibv_free_device_list(list);
		return ls_errf(err, "unknown RDMA device '%s' (devices: %s)", p->o->device,
			       names);
	}
	p->ctx = ibv_open_device(list[found]);
	if (!p->ctx) {
		int e = errno;

		ibv_free_device_list(list);
		return ls_errnof(err, e, "open RDMA device %s", names);
	}
	p->ctx_owned = true;
	ibv_free_device_list(list);
	return 0;
}

/* GID type of an index from sysfs ("RoCE v2", "IB/RoCE v1") or "". */
void probe_gid_type(const struct probe *p, int idx, char *buf, size_t len)
{
	char path[256], rel[64];

	snprintf(rel, sizeof(rel), "gid_attrs/types/%d", idx);
	port_path(path, sizeof(path), p, rel);
	if (ls_read_text(path, buf, len, NULL))
		buf[0] = '\0';
}

/* Query a GID; false for an error or an empty (all-zero) entry. */
static bool gid_valid(struct probe *p, int idx, union ibv_gid *g)
{
	static const uint8_t zero[16];

	if (ibv_query_gid(p->ctx, (uint8_t)p->o->ib_port, idx, g))
		return false;
	return memcmp(g->raw, zero, 16) != 0;
}

/* Read the port's GID table, choose the GID (ls_probe_gid_choose) and keep it. */
static int pick_gid(struct probe *p, const struct ibv_port_attr *pa, struct ls_err *err)
{
	struct ls_probe_dev *d = &p->r->dev;
	struct ls_probe_gid tab[64];
	int n = pa->gid_tbl_len < 64 ? pa->gid_tbl_len : 64, idx, e;
	union ibv_gid g;

	/* an explicit index past the first 64 is read alone */
	if (p->o->gid_index >= 64 && p->o->gid_index < pa->gid_tbl_len)
		n = 0;
	for (int i = 0; i < n; i++) {
		tab[i].valid = gid_valid(p, i, &g);
		memcpy(tab[i].raw, g.raw, sizeof(tab[i].raw));
		tab[i].type[0] = '\0';
		if (tab[i].valid)
			probe_gid_type(p, i, tab[i].type, sizeof(tab[i].type));
	}
	if (n) {
		e = ls_probe_gid_choose(tab, n, p->o->gid_index, p->ethernet, &idx, err);
		if (e)
			return ls_err_wrap(err, "%s port %u", d->name, p->o->ib_port);
	} else {
		idx = p->o->gid_index;
		if (!gid_valid(p, idx, &g))
			return ls_errf(err, "%s port %u: GID index %d is empty", d->name,
				       p->o->ib_port, idx);
	}
	if (idx < 0) {
		memset(&g, 0, sizeof(g));	/* IB without GIDs: LID routing */
		idx = 0;
	} else {
		gid_valid(p, idx, &g);
	}
	p->gid = g;
	d->gid_index = idx;
	inet_ntop(AF_INET6, g.raw, d->gid, sizeof(d->gid));
	probe_gid_type(p, idx, d->gid_type, sizeof(d->gid_type));
	if (!*d->gid_type)
		snprintf(d->gid_type, sizeof(d->gid_type), "%s", p->ethernet ? "RoCE" : "IB");
	return 0;
}

/* Fill device/port facts: MTUs, rate, max message, HW clock; pick the GID. */
int probe_query_port(struct probe *p, struct ls_err *err)
{
	struct ls_probe_dev *d = &p->r->dev;
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	char path[256], rel[64];
	int e;

	snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(p->ctx->device));
	d->port = p->o->ib_port;
	e = ibv_query_port(p->ctx, (uint8_t)p->o->ib_port, &pa);
	if (e)
		return ls_errnof(err, e, "query %s port %u (does the port exist?)", d->name,
				 p->o->ib_port);
	if (pa.state != IBV_PORT_ACTIVE)
		return ls_errf(err, "%s port %u is not active (state %s)", d->name,
			       p->o->ib_port, ibv_port_state_str(pa.state));
	p->ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	p->lid = pa.lid;
	d->active_mtu = ls_probe_ibv_to_mtu(pa.active_mtu);
	d->max_mtu = ls_probe_ibv_to_mtu(pa.max_mtu);
	d->max_msg_sz = pa.max_msg_sz;
	port_path(path, sizeof(path), p, "rate");
	if (!ls_read_text(path, d->rate, sizeof(d->rate), NULL))
		d->link_gbps = strtod(d->rate, NULL);
	memset(&dx, 0, sizeof(dx));
	if (!ibv_query_device_ex(p->ctx, NULL, &dx)) {
		d->hca_core_clock_khz = dx.hca_core_clock;
		if (dx.completion_timestamp_mask && dx.hca_core_clock)
			d->hwclock = LS_HWCLOCK_HCA;
	}
	if (pick_gid(p, &pa, err))
		return -1;
	snprintf(rel, sizeof(rel), "gid_attrs/ndevs/%d", d->gid_index);
	port_path(path, sizeof(path), p, rel);
	if (ls_read_text(path, d->netdev, sizeof(d->netdev), NULL))
		d->netdev[0] = '\0';
	return 0;
}

/* True for the hw_counters that explain lost packets or completions. */
static bool counter_wanted(const char *n)
{
	static const char *const keys[] = { "retry", "duplicate", "out_of_seq", "rnr",
					    "seg_drop", "ack_deferred", "retrans", "timeout",
					    "local_ack", "implied_nak" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (strstr(n, keys[i]))
			return true;
	return false;
}

/* Read one counter value; false if unreadable. */
static bool counter_read(const struct probe *p, const char *name, uint64_t *v)
{
	char path[256], rel[96];

	snprintf(rel, sizeof(rel), "hw_counters/%s", name);
	port_path(path, sizeof(path), p, rel);
	return !ls_ctr_read_file(path, v, NULL);
}

/* Snapshot the retry/duplicate counters of the port (rxe: hw_counters). */
void probe_counters_snapshot(struct probe *p)
{
	char path[256];
	struct dirent *de;
	DIR *dir;

	p->ncounters = 0;
	port_path(path, sizeof(path), p, "hw_counters");
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir)) && p->ncounters < MAX_COUNTERS) {
		uint64_t v;

		if (de->d_name[0] == '.' || !counter_wanted(de->d_name) ||
		    strlen(de->d_name) >= sizeof(p->counter_name[0]))
			continue;
		if (!counter_read(p, de->d_name, &v))
			continue;
		snprintf(p->counter_name[p->ncounters], sizeof(p->counter_name[0]), "%s",
			 de->d_name);
		p->counter_base[p->ncounters++] = v;
	}
	closedir(dir);
}

/* Name of a QP state. */
static const char *qp_state_name(enum ibv_qp_state st)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE",
					     "ERR" };

	return (unsigned int)st < ARRAY_SIZE(names) ? names[st] : "?";
}

/* Append the QP state and counter deltas to an error message. */
int probe_diagnose(struct probe *p, struct ls_err *err)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	char extra[512];
	size_t off = 0, n;

	if (!err)
		return -1;
	if (p->qp && !ibv_query_qp(p->qp, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT, &ia))
		off += snprintf(extra + off, sizeof(extra) - off,
				"QP 0x%x state %s, timeout %u (%.3g s per try), retry_cnt %u",
				p->qp->qp_num, qp_state_name(qa.qp_state), qa.timeout,
				4.096e-6 * (double)(1ull << qa.timeout), qa.retry_cnt);
	if (p->ncounters) {
		off += snprintf(extra + off, sizeof(extra) - off,
				"%s%s port %u counters since start:", off ? "; " : "",
				p->r->dev.name, p->o->ib_port);
		for (int i = 0; i < p->ncounters && off < sizeof(extra); i++) {
			uint64_t v;

			if (!counter_read(p, p->counter_name[i], &v))
				continue;
			off += snprintf(extra + off, sizeof(extra) - off, " %s +%llu",
					p->counter_name[i],
					(unsigned long long)(v - p->counter_base[i]));
		}
	} else {
		off += snprintf(extra + off, sizeof(extra) - off,
				"%sno hw_counters for %s port %u", off ? "; " : "",
				p->r->dev.name, p->o->ib_port);
	}
	n = strlen(err->msg);
	if (off && n + 4 < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - n, " [%.*s]",
			 (int)(sizeof(err->msg) - n - 4), extra);
	return -1;
}
