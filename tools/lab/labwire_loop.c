// SPDX-License-Identifier: GPL-2.0
/*
 * labwire: the event loop (ppoll, log and client upkeep), the UDP sockets
 * and the signals that stop it.
 */
#include <poll.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "labwire_int.h"

static volatile sig_atomic_t stop_sig;

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
int wire_loop(void)
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

/* Bind both UDP sockets and point each direction at its peer; 0 or 1. */
int wire_sockets(void)
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

/* Record the signal that asks us to stop. */
static void on_signal(int sig)
{
	stop_sig = sig;
}

/* Block SIGTERM/SIGINT except inside ppoll, where on_signal catches them. */
void signals_setup(void)
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
