// SPDX-License-Identifier: GPL-2.0
/*
 * The responder's acceptor: one thread owns the listening socket. It hands a
 * connection to the session loop when no session is active and refuses any
 * other prober at once with an ERROR "busy" frame (instead of letting it queue
 * in the backlog behind a run). It sleeps in poll() between connections, so
 * it costs nothing during a run.
 */
#include <pthread.h>
#include <time.h>

#include "probe_int.h"

struct probe_acceptor {
	int lfd;
	int wake[2];			/* a byte on wake[1] stops the thread */
	bool quiet;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool busy;			/* a connection is handed over or in session */
	bool have;			/* conn waits for the session loop */
	struct ls_oob conn;
	char serving[80];		/* peer of the active session */
};

/* A refused connection is read for this long (or until its EOF) before close. */
#define DRAIN_NS	500000000ull
#define MAX_DRAIN	16

/* A refused connection being drained: its fd and when it is closed anyway. */
struct drain {
	int fd;
	uint64_t deadline;
};

/*
 * Refused connections are half-closed after our ERROR and read until the
 * peer closes or DRAIN_NS passes: closing with unread data (its HELLO) would
 * reset the connection and the peer could lose our ERROR frame. They sit in
 * the acceptor's poll set, so a peer that never closes delays nobody.
 */
static void drain_add(struct drain *d, unsigned int *n, struct ls_oob *c)
{
	shutdown(c->fd, SHUT_WR);
	if (*n == MAX_DRAIN) {		/* full: the oldest goes first */
		close(d[0].fd);
		memmove(d, d + 1, (MAX_DRAIN - 1) * sizeof(*d));
		(*n)--;
	}
	d[(*n)++] = (struct drain){ c->fd, ls_now_ns() + DRAIN_NS };
	c->fd = -1;
}

/* Read what draining connections sent; close those at EOF or past their time. */
static void drain_step(struct drain *d, unsigned int *n, const struct pollfd *pfd)
{
	uint8_t scratch[512];
	uint64_t now = ls_now_ns();
	unsigned int i, k = 0;

	for (i = 0; i < *n; i++) {
		bool done = now >= d[i].deadline;
		ssize_t r;

		if (!done && pfd[i].revents) {
			r = recv(d[i].fd, scratch, sizeof(scratch), MSG_DONTWAIT);
			done = !r || (r < 0 && errno != EAGAIN && errno != EINTR);
		}
		if (done)
			close(d[i].fd);
		else
			d[k++] = d[i];
	}
	*n = k;
}

/* Milliseconds until the first drain deadline (-1: none). */
static int drain_timeout(const struct drain *d, unsigned int n)
{
	uint64_t now = ls_now_ns(), first = UINT64_MAX;

	for (unsigned int i = 0; i < n; i++)
		if (d[i].deadline < first)
			first = d[i].deadline;
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 : (int)((first - now) / 1000000) + 1;
}

/* Refuse a connection while another prober is served; log it. */
static void refuse_busy(struct probe_acceptor *a, struct ls_oob *c, const char *serving)
{
	char text[LS_OOB_TEXT_MAX + 1];

	snprintf(text, sizeof(text), "busy: another prober (%s) is being served; "
		 "try again when its session ends", serving);
	ls_oob_send_error(c, EBUSY, text);
	if (!a->quiet)
		fprintf(stderr, "latsplit probe: refused prober %s: busy serving %s\n",
			c->peer, serving);
}

/* Take one connection: hand it over when idle, else refuse it with busy. */
static void take(struct probe_acceptor *a, struct drain *d, unsigned int *n)
{
	struct ls_err e = { 0 };
	struct ls_oob c;
	char serving[80];

	/* The listening socket is non-blocking: a vanished peer is EAGAIN. */
	if (ls_oob_accept_conn(a->lfd, 1000000, &c, &e))
		return;
	pthread_mutex_lock(&a->lock);
	if (!a->busy) {
		a->busy = a->have = true;
		a->conn = c;
		snprintf(a->serving, sizeof(a->serving), "%s", c.peer);
		pthread_cond_signal(&a->cond);
		pthread_mutex_unlock(&a->lock);
		return;
	}
	snprintf(serving, sizeof(serving), "%s", a->serving);
	pthread_mutex_unlock(&a->lock);
	refuse_busy(a, &c, serving);
	drain_add(d, n, &c);
}

/* The thread: sleep in poll until a connection, a draining peer or stop. */
static void *acceptor_main(void *arg)
{
	struct probe_acceptor *a = arg;
	struct pollfd pfd[2 + MAX_DRAIN];
	struct drain d[MAX_DRAIN];
	unsigned int n = 0;

	for (;;) {
		pfd[0] = (struct pollfd){ .fd = a->lfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = a->wake[0], .events = POLLIN };
		for (unsigned int i = 0; i < n; i++)
			pfd[2 + i] = (struct pollfd){ .fd = d[i].fd, .events = POLLIN };
		if (poll(pfd, 2 + n, drain_timeout(d, n)) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		drain_step(d, &n, pfd + 2);
		if (pfd[0].revents & POLLIN)
			take(a, d, &n);
	}
	for (unsigned int i = 0; i < n; i++)
		close(d[i].fd);
	return NULL;
}

/* Mutex, condition on CLOCK_MONOTONIC and the wake pipe of a new acceptor. */
static int acceptor_init(struct probe_acceptor *a, int lfd, bool quiet, struct ls_err *err)
{
	pthread_condattr_t ca;
	int fl;

	a->lfd = lfd;
	a->quiet = quiet;
	a->conn.fd = -1;
	a->wake[0] = a->wake[1] = -1;
	pthread_mutex_init(&a->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pipe2(a->wake, O_CLOEXEC))
		return ls_errnof(err, errno, "acceptor: pipe");
	fl = fcntl(lfd, F_GETFL);
	if (fl < 0 || fcntl(lfd, F_SETFL, fl | O_NONBLOCK))
		return ls_errnof(err, errno, "acceptor: make the listening socket non-blocking");
	return 0;
}

/* Start the acceptor thread on a listening socket. */
int probe_acceptor_start(struct probe_acceptor **ap, int lfd, bool quiet, struct ls_err *err)
{
	struct probe_acceptor *a = calloc(1, sizeof(*a));
	int r;

	*ap = NULL;
	if (!a)
		return ls_errnof(err, ENOMEM, "acceptor");
	if (acceptor_init(a, lfd, quiet, err)) {
		probe_acceptor_stop(a);
		return -1;
	}
	r = pthread_create(&a->thread, NULL, acceptor_main, a);
	if (r) {
		probe_acceptor_stop(a);
		return ls_errnof(err, r, "acceptor: start its thread");
	}
	a->started = true;
	*ap = a;
	return 0;
}

/* Wait for the next connection handed over (timeout_ns 0: forever). */
int probe_acceptor_next(struct probe_acceptor *a, uint64_t timeout_ns, struct ls_oob *c,
			struct ls_err *err)
{
	uint64_t deadline = timeout_ns ? ls_now_ns() + timeout_ns : 0;
	struct timespec ts = { .tv_sec = (time_t)(deadline / 1000000000ull),
			       .tv_nsec = (long)(deadline % 1000000000ull) };
	int r = 0;

	c->fd = -1;
	pthread_mutex_lock(&a->lock);
	while (!a->have && r != ETIMEDOUT)
		r = deadline ? pthread_cond_timedwait(&a->cond, &a->lock, &ts) :
			       pthread_cond_wait(&a->cond, &a->lock);
	if (a->have) {
		*c = a->conn;
		a->have = false;
		r = 0;
	}
	pthread_mutex_unlock(&a->lock);
	if (r)
		return ls_errcf(err, LS_E_PEER, "wait for a prober: timed out");
	return 0;
}

/* The session ended: the next prober is handed over, not refused. */
void probe_acceptor_idle(struct probe_acceptor *a)
{
	pthread_mutex_lock(&a->lock);
	a->busy = a->have;
	a->serving[0] = '\0';
	pthread_mutex_unlock(&a->lock);
}

/* Stop the thread, close a connection never taken, free the acceptor. */
void probe_acceptor_stop(struct probe_acceptor *a)
{
	if (!a)
		return;
	if (a->started) {
		if (write(a->wake[1], "x", 1) != 1)
			pthread_cancel(a->thread);
		pthread_join(a->thread, NULL);
	}
	if (a->have)
		ls_oob_close(&a->conn);
	if (a->wake[0] >= 0)
		close(a->wake[0]);
	if (a->wake[1] >= 0)
		close(a->wake[1]);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
