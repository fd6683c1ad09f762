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

/*
 * Half-close after our last frame and read what the peer still sends (its
 * HELLO) for a moment: closing with unread data would reset the connection
 * and the peer could lose our ERROR frame.
 */
static void drain_close(struct ls_oob *c)
{
	uint64_t deadline = ls_now_ns() + 300000000ull;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	uint8_t scratch[512];

	shutdown(c->fd, SHUT_WR);
	while (ls_now_ns() < deadline &&
	       poll(&pfd, 1, (int)((deadline - ls_now_ns()) / 1000000) + 1) > 0) {
		if (recv(c->fd, scratch, sizeof(scratch), MSG_DONTWAIT) <= 0)
			break;
	}
	ls_oob_close(c);
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
	drain_close(c);
}

/* The thread: accept, hand over when idle, else refuse with busy. */
static void *acceptor_main(void *arg)
{
	struct probe_acceptor *a = arg;
	struct pollfd pfd[2] = { { .fd = a->lfd, .events = POLLIN },
				 { .fd = a->wake[0], .events = POLLIN } };

	for (;;) {
		struct ls_err e = { 0 };
		struct ls_oob c;
		char serving[80];

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		/* The listening socket is non-blocking: a vanished peer is EAGAIN. */
		if (ls_oob_accept_conn(a->lfd, 1000000, &c, &e))
			continue;
		pthread_mutex_lock(&a->lock);
		if (!a->busy) {
			a->busy = a->have = true;
			a->conn = c;
			snprintf(a->serving, sizeof(a->serving), "%s", c.peer);
			pthread_cond_signal(&a->cond);
			pthread_mutex_unlock(&a->lock);
			continue;
		}
		snprintf(serving, sizeof(serving), "%s", a->serving);
		pthread_mutex_unlock(&a->lock);
		refuse_busy(a, &c, serving);
	}
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
