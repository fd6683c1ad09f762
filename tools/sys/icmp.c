// SPDX-License-Identifier: GPL-2.0
/* ICMP echo (ping) measured in process: RTTs in CLOCK_MONOTONIC ns and loss. */
#include "icmp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The Internet checksum of len bytes. */
static uint16_t inet_csum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t sum = 0;

	for (; len > 1; len -= 2, p += 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		sum += (uint32_t)(p[0] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* Resolve an IPv4 host name or address. */
static int resolve4(const char *host, struct sockaddr_in *sa, struct ls_err *err)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *ai = NULL;
	int rc;

	rc = getaddrinfo(host, NULL, &hints, &ai);
	if (rc)
		return ls_errf(err, "ping: cannot resolve '%s': %s", host, gai_strerror(rc));
	memcpy(sa, ai->ai_addr, sizeof(*sa));
	freeaddrinfo(ai);
	return 0;
}

/* Wait for the echo reply matching (id, seq) until deadline; 1 found, 0 timeout. */
static int wait_reply(int fd, bool raw, uint16_t id, uint16_t seq, uint64_t deadline)
{
	uint8_t buf[1500];

	for (;;) {
		uint64_t now = ls_now_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		const struct icmphdr *ic;
		ssize_t n;
		size_t off = 0;

		if (now >= deadline)
			return 0;
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000 + 1)) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			continue;
		if (raw) {
			const struct iphdr *ip = (const void *)buf;

			if ((size_t)n < sizeof(*ip))
				continue;
			off = (size_t)ip->ihl * 4;
		}
		if ((size_t)n < off + sizeof(*ic))
			continue;
		ic = (const void *)(buf + off);
		/* Ping sockets rewrite the id; match on the sequence there. */
		if (ic->type == ICMP_ECHOREPLY && ntohs(ic->un.echo.sequence) == seq &&
		    (!raw || ntohs(ic->un.echo.id) == id))
			return 1;
	}
}

/* Send count echo requests and collect RTTs. */
int ls_ping(const char *host, unsigned int count, uint64_t interval_ns,
	    uint64_t timeout_ns, struct ls_ping_result *res, struct ls_err *err)
{
	struct sockaddr_in sa;
	uint16_t id = (uint16_t)getpid();
	bool raw = true;
	int fd, ret = -1;

	memset(res, 0, sizeof(*res));
	if (resolve4(host, &sa, err))
		return -1;
	fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (fd < 0) {
		raw = false;
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
		if (fd < 0)
			return ls_errnof(err, errno,
					 "ping: no raw ICMP socket (needs root) and no ping socket (net.ipv4.ping_group_range)");
	}
	res->rtt_ns = calloc(count ? count : 1, sizeof(double));
	if (!res->rtt_ns) {
		ls_errf(err, "ping: out of memory");
		goto out;
	}
	for (unsigned int i = 0; i < count; i++) {
		struct { struct icmphdr h; uint8_t pad[56]; } pkt;
		uint64_t t0;

		memset(&pkt, 0, sizeof(pkt));
		pkt.h.type = ICMP_ECHO;
		pkt.h.un.echo.id = htons(id);
		pkt.h.un.echo.sequence = htons((uint16_t)(i + 1));
		pkt.h.checksum = inet_csum(&pkt, sizeof(pkt));
		t0 = ls_now_ns();
		if (sendto(fd, &pkt, sizeof(pkt), 0, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
			ls_errnof(err, errno, "ping: send to %s", host);
			goto out;
		}
		res->sent++;
		if (wait_reply(fd, raw, id, (uint16_t)(i + 1), t0 + timeout_ns))
			res->rtt_ns[res->received++] = (double)(ls_now_ns() - t0);
		if (i + 1 < count) {
			uint64_t next = t0 + interval_ns, now = ls_now_ns();

			if (next > now) {
				struct timespec ts = { (time_t)((next - now) / 1000000000ull),
						       (long)((next - now) % 1000000000ull) };
				nanosleep(&ts, NULL);
			}
		}
	}
	ret = 0;
out:
	close(fd);
	if (ret)
		ls_ping_result_free(res);
	return ret;
}

/* Free a ping result. */
void ls_ping_result_free(struct ls_ping_result *res)
{
	free(res->rtt_ns);
	res->rtt_ns = NULL;
}
