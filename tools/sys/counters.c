// SPDX-License-Identifier: GPL-2.0
/* Congestion/error counters: sysfs RDMA counters, ETHTOOL_GSTATS, qdisc stats over rtnetlink. */
#include "counters.h"

#include <dirent.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "io.h"

/* Read one sysfs counter file as a count. */
int ls_ctr_read_file(const char *path, uint64_t *v, struct ls_err *err)
{
	char text[64], *end;

	if (ls_read_text(path, text, sizeof(text), err))
		return -1;
	errno = 0;
	*v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-')
		return ls_errf(err, "%s: '%.40s' is not a count", path, text);
	return 0;
}

/* Read every file of a sysfs counter directory as prefix:NAME. */
static int read_sysfs_dir(struct ls_ctr_snap *s, const char *dir,
			  const char *prefix)
{
	struct dirent *de;
	char name[160];
	DIR *d;

	d = opendir(dir);
	if (!d) {
		char msg[240];

		if (errno == ENOENT)
			return 0;	/* this device has no such group */
		snprintf(msg, sizeof(msg), "%s: %s", dir, strerror(errno));
		snprintf(name, sizeof(name), "%s:*", prefix);
		return ls_ctr_add(s, name, false, false, 0, msg);
	}
	while ((de = readdir(d))) {
		char path[512];
		struct ls_err e;
		uint64_t v;
		int r;

		if (de->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "%s:%s", prefix, de->d_name);
		if (!strcmp(de->d_name, "lifespan"))	/* a setting, not a counter */
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (ls_ctr_read_file(path, &v, &e))
			r = ls_ctr_add(s, name, false, false, 0, e.msg);
		else
			r = ls_ctr_add(s, name, false, true, v, NULL);
		if (r) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

/* One SIOCETHTOOL request (what: its name) on ifname with data; -1 with msg set when it failed. */
static int ethtool_req(int fd, struct ifreq *ifr, void *data, const char *what,
		       const char *ifname, char *msg, size_t len)
{
	ifr->ifr_data = data;
	if (!ioctl(fd, SIOCETHTOOL, ifr))
		return 0;
	snprintf(msg, len, "%s on %s: %s", what, ifname, strerror(errno));
	return -1;
}

/* NIC statistics through the ETHTOOL_GSTATS ioctl; failures become one unreadable entry. */
static int read_ethtool(struct ls_ctr_snap *s, const char *ifname)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t buf[1];
	} sset = { .hdr = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_STATS } };
	struct ethtool_gstrings *strs = NULL;
	struct ethtool_stats *stats = NULL;
	char msg[240] = "";
	struct ifreq ifr;
	uint32_t n = 0;
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "socket(AF_INET): %s", strerror(errno));
		goto unreadable;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ethtool_req(fd, &ifr, &sset, "ETHTOOL_GSSET_INFO", ifname, msg, sizeof(msg)))
		goto unreadable;
	n = sset.hdr.sset_mask ? sset.hdr.data[0] : 0;
	if (!n)
		goto out;	/* the driver has no statistics: nothing to read */
	if (n > 65536) {
		snprintf(msg, sizeof(msg), "%s reports %u statistics", ifname, n);
		goto unreadable;
	}
	strs = calloc(1, sizeof(*strs) + (size_t)n * ETH_GSTRING_LEN);
	stats = calloc(1, sizeof(*stats) + (size_t)n * sizeof(uint64_t));
	if (!strs || !stats) {
		ret = -1;
		goto out;
	}
	strs->cmd = ETHTOOL_GSTRINGS;
	strs->string_set = ETH_SS_STATS;
	strs->len = n;
	if (ethtool_req(fd, &ifr, strs, "ETHTOOL_GSTRINGS", ifname, msg, sizeof(msg)))
		goto unreadable;
	stats->cmd = ETHTOOL_GSTATS;
	stats->n_stats = n;
	if (ethtool_req(fd, &ifr, stats, "ETHTOOL_GSTATS", ifname, msg, sizeof(msg)))
		goto unreadable;
	if (stats->n_stats < n)
		n = stats->n_stats;
	for (uint32_t i = 0; i < n; i++) {
		char name[112], key[ETH_GSTRING_LEN + 1];

		memcpy(key, strs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		key[ETH_GSTRING_LEN] = '\0';
		snprintf(name, sizeof(name), "ethtool:%s", key);
		if (ls_ctr_add(s, name, false, true, stats->data[i], NULL)) {
			ret = -1;
			goto out;
		}
	}
	goto out;
unreadable:
	ret = ls_ctr_add(s, "ethtool:*", false, false, 0, msg);
out:
	free(strs);
	free(stats);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Add one qdisc's statistics as qdisc:KIND:HANDLE:FIELD. */
static int add_qdisc(struct ls_ctr_snap *s, const char *kind, uint32_t handle,
		     const struct gnet_stats_queue *q)
{
	static const char *const f[] = { "drops", "overlimits", "requeues", "backlog", "qlen" };
	uint64_t v[] = { q->drops, q->overlimits, q->requeues, q->backlog, q->qlen };
	char name[112];

	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		snprintf(name, sizeof(name), "qdisc:%s:%x:%s", kind, handle >> 16, f[i]);
		if (ls_ctr_add(s, name, i >= 3, true, v[i], NULL))
			return -1;
	}
	return 0;
}

/* Parse one RTM_NEWQDISC message for ifindex. */
static int parse_qdisc(struct ls_ctr_snap *s, struct nlmsghdr *nh, int ifindex)
{
	struct tcmsg *tc = NLMSG_DATA(nh);
	int len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*tc));
	struct gnet_stats_queue q;
	bool have_q = false;
	char kind[32] = "?";
	struct rtattr *a;

	if (len < 0 || tc->tcm_ifindex != ifindex)
		return 0;
	for (a = TCA_RTA(tc); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == TCA_KIND) {
			snprintf(kind, sizeof(kind), "%.*s", (int)RTA_PAYLOAD(a),
				 (char *)RTA_DATA(a));
		} else if (a->rta_type == TCA_STATS2) {
			int l2 = RTA_PAYLOAD(a);
			struct rtattr *b;

			for (b = RTA_DATA(a); RTA_OK(b, l2); b = RTA_NEXT(b, l2)) {
				if (b->rta_type != TCA_STATS_QUEUE)
					continue;
				memset(&q, 0, sizeof(q));
				memcpy(&q, RTA_DATA(b), RTA_PAYLOAD(b) < sizeof(q) ?
				       RTA_PAYLOAD(b) : sizeof(q));
				have_q = true;
			}
		}
	}
	if (!have_q)
		return 0;
	return add_qdisc(s, kind, tc->tcm_handle, &q);
}

/* qdisc statistics of ifname over rtnetlink; failures become one unreadable entry. */
static int read_qdiscs(struct ls_ctr_snap *s, const char *ifname)
{
	struct {
		struct nlmsghdr nh;
		struct tcmsg tc;
	} req;
	struct timeval tv = { .tv_sec = 2 };
	char msg[240], *buf;
	int fd, ifindex, ret = 0;
	bool done = false;

	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		snprintf(msg, sizeof(msg), "qdiscs of %s: %s", ifname, strerror(errno));
		return ls_ctr_add(s, "qdisc:*", false, false, 0, msg);
	}
	buf = malloc(65536);
	if (!buf)
		return -1;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "socket(NETLINK_ROUTE): %s", strerror(errno));
		goto unreadable;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.tc));
	req.nh.nlmsg_type = RTM_GETQDISC;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	req.tc.tcm_family = AF_UNSPEC;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		snprintf(msg, sizeof(msg), "RTM_GETQDISC: %s", strerror(errno));
		goto unreadable;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, 65536, 0);
		struct nlmsghdr *nh;

		if (n < 0) {
			snprintf(msg, sizeof(msg), "RTM_GETQDISC reply: %s", strerror(errno));
			goto unreadable;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				snprintf(msg, sizeof(msg), "RTM_GETQDISC: %s", strerror(-e->error));
				goto unreadable;
			}
			if (nh->nlmsg_type == RTM_NEWQDISC && parse_qdisc(s, nh, ifindex)) {
				ret = -1;
				goto out;
			}
		}
		if (n == 0)
			break;
	}
	goto out;
unreadable:
	ret = ls_ctr_add(s, "qdisc:*", false, false, 0, msg);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

#define IPEXT_COLS	128

/* Split the IpExt header and value lines of /proc/net/netstat text (in place) into columns; their count. */
static size_t ipext_columns(char *text, char *name[IPEXT_COLS], char *val[IPEXT_COLS])
{
	char *hdr = NULL, *vals = NULL, *line, *save = NULL, *hs = NULL, *vs = NULL;
	size_t n = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "IpExt: ", 7))
			continue;
		if (!hdr)
			hdr = line + 7;
		else
			vals = line + 7;
	}
	if (!hdr || !vals)
		return 0;
	for (name[0] = strtok_r(hdr, " ", &hs), val[0] = strtok_r(vals, " ", &vs);
	     n < IPEXT_COLS && name[n] && val[n]; n++) {
		if (n + 1 < IPEXT_COLS) {
			name[n + 1] = strtok_r(NULL, " ", &hs);
			val[n + 1] = strtok_r(NULL, " ", &vs);
		}
	}
	return n;
}

/* The IpExt ECN counters of ROOT/proc/net/netstat as ipext:NAME. */
static int read_ipext(struct ls_ctr_snap *s, const char *root)
{
	static const char *const names[] = { "InCEPkts", "InECT0Pkts", "InECT1Pkts",
					     "InNoECTPkts" };
	char *col[IPEXT_COLS], *val[IPEXT_COLS];
	char path[512], name[64], msg[240];
	struct ls_err e;
	size_t ncol;
	char *text;
	int ret = 0;

	text = malloc(65536);
	if (!text)
		return -1;
	snprintf(path, sizeof(path), "%s/proc/net/netstat", root);
	if (ls_read_text(path, text, 65536, &e)) {
		ret = ls_ctr_add(s, "ipext:*", false, false, 0, e.msg);
		goto out;
	}
	ncol = ipext_columns(text, col, val);
	for (size_t i = 0; i < ARRAY_SIZE(names) && !ret; i++) {
		const char *x = NULL;
		uint64_t v = 0;
		char *end;

		for (size_t c = 0; c < ncol && !x; c++) {
			if (!strcmp(col[c], names[i]))
				x = val[c];
		}
		snprintf(name, sizeof(name), "ipext:%s", names[i]);
		if (x && *x != '-') {
			errno = 0;
			v = strtoull(x, &end, 10);
			if (errno || end == x || *end)
				x = NULL;
		} else {
			x = NULL;
		}
		if (!x) {
			snprintf(msg, sizeof(msg), "%s: no readable IpExt %s", path, names[i]);
			ret = ls_ctr_add(s, name, false, false, 0, msg);
		} else {
			ret = ls_ctr_add(s, name, false, true, v, NULL);
		}
	}
out:
	free(text);
	return ret;
}

/* qsort comparator: counters by name. */
static int ctr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ls_ctr *)a)->name, ((const struct ls_ctr *)b)->name);
}

/* Take a snapshot of every configured source. */
int ls_ctr_snapshot(const struct ls_ctr_cfg *cfg, struct ls_ctr_snap *s,
		    struct ls_err *err)
{
	const char *root = cfg->root ? cfg->root : "";
	char dir[512];

	memset(s, 0, sizeof(s[0]));
	s->t_ns = ls_now_ns();
	if (cfg->ibdev && *cfg->ibdev) {
		snprintf(dir, sizeof(dir), "%s/sys/class/infiniband/%s/ports/%u",
			 root, cfg->ibdev, cfg->port);
		if (access(dir, F_OK)) {
			char msg[240];

			snprintf(msg, sizeof(msg), "%s: %s", dir, strerror(errno));
			if (ls_ctr_add(s, "port:*", false, false, 0, msg))
				goto nomem;
		} else {
			snprintf(dir, sizeof(dir), "%s/sys/class/infiniband/%s/ports/%u/counters",
				 root, cfg->ibdev, cfg->port);
			if (read_sysfs_dir(s, dir, "port"))
				goto nomem;
			snprintf(dir, sizeof(dir), "%s/sys/class/infiniband/%s/ports/%u/hw_counters",
				 root, cfg->ibdev, cfg->port);
			if (read_sysfs_dir(s, dir, "hw"))
				goto nomem;
		}
	}
	if (cfg->netdev && *cfg->netdev) {
		if (!cfg->no_ethtool && read_ethtool(s, cfg->netdev))
			goto nomem;
		if (!cfg->no_qdisc && read_qdiscs(s, cfg->netdev))
			goto nomem;
	}
	if (cfg->ipext && read_ipext(s, root))
		goto nomem;
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), ctr_cmp);
	return 0;
nomem:
	ls_ctr_snap_free(s);
	return ls_errnof(err, ENOMEM, "counter snapshot");
}
