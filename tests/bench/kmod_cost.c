// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel-event micro-workloads for tests/bench/kmod-cost.sh: time per
 * iteration of a loop whose kernel work is a known set of tracepoint hits,
 * as the minimum over many short batches (robust against the emulator's
 * vCPU being descheduled by the host).
 *
 *   kmod_cost udp   BATCHES ITERS [GO DONE TIDS]
 *       loopback UDP send+recv: one NET_RX softirq each (raise, entry,
 *       napi_poll, exit)
 *   kmod_cost pipe  BATCHES ITERS [GO DONE TIDS]
 *       two threads on one CPU passing a byte back and forth through two
 *       pipes: each iteration is two wakeups and two context switches,
 *       each wakeup hitting sched_waking and sched_wakeup and each switch
 *       sched_switch (with the threads named: a PREEMPT started at each
 *       wakeup, ended at each switch)
 *
 * With GO DONE TIDS (two FIFOs and a file): write the workload's thread ids
 * ("a,b") to TIDS, wait until GO is written, open DONE for writing, run,
 * then close DONE: a tracer started in between names the threads, and a
 * `cat DONE` it runs ends with the workload.
 *
 * Prints "ns_per_iter events_per_iter", events counted from /proc/softirqs
 * (NET_RX) or /proc/stat (ctxt: context switches) over the whole run.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sum of the NET_RX row of /proc/softirqs, or the ctxt line of /proc/stat. */
static uint64_t kernel_events(int udp)
{
	char line[4096];
	uint64_t sum = 0;
	FILE *f = fopen(udp ? "/proc/softirqs" : "/proc/stat", "r");

	if (!f) {
		perror("open /proc counters");
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		if (udp && strstr(line, "NET_RX:")) {
			char *p = strchr(line, ':') + 1, *end;

			for (;;) {
				uint64_t v = strtoull(p, &end, 10);

				if (end == p)
					break;
				sum += v;
				p = end;
			}
		} else if (!udp && !strncmp(line, "ctxt ", 5)) {
			sum = strtoull(line + 5, NULL, 10);
		}
	}
	fclose(f);
	return sum;
}

static volatile pid_t partner_tid;
static int ping[2], pong[2];

/* The pipe partner thread: echo each byte back until ping is closed. */
static void *echoer(void *arg)
{
	char c;

	(void)arg;
	partner_tid = (pid_t)syscall(SYS_gettid);
	while (read(ping[0], &c, 1) == 1)
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

/* Publish the thread ids, wait for GO, open DONE: returns DONE's fd. */
static int handshake(const char *go, const char *done, const char *tids, int udp)
{
	char buf[64];
	FILE *f;
	int fd;

	while (!udp && !partner_tid)
		sched_yield();
	f = fopen(tids, "w");
	if (!f) {
		perror(tids);
		exit(2);
	}
	if (udp)
		fprintf(f, "%ld\n", (long)syscall(SYS_gettid));
	else
		fprintf(f, "%ld,%ld\n", (long)syscall(SYS_gettid), (long)partner_tid);
	if (fclose(f)) {
		perror(tids);
		exit(2);
	}
	fd = open(go, O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0) {
		perror(go);
		exit(2);
	}
	close(fd);
	fd = open(done, O_WRONLY);
	if (fd < 0) {
		perror(done);
		exit(2);
	}
	return fd;
}

/* Pin the calling thread to CPU 0. */
static void pin0(void)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(0, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		perror("sched_setaffinity");
}

int main(int argc, char **argv)
{
	int udp, batches, iters, a = -1, b = -1, done = -1;
	uint64_t best = UINT64_MAX, e0, e1;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	pthread_t th;
	char c = 0;

	if ((argc != 4 && argc != 7) || (strcmp(argv[1], "udp") && strcmp(argv[1], "pipe"))) {
		fprintf(stderr, "usage: kmod_cost udp|pipe BATCHES ITERS [GO DONE TIDS]\n");
		return 2;
	}
	udp = !strcmp(argv[1], "udp");
	batches = atoi(argv[2]);
	iters = atoi(argv[3]);
	if (batches <= 0 || iters <= 0) {
		fprintf(stderr, "kmod_cost: BATCHES and ITERS must be positive\n");
		return 2;
	}
	pin0();
	if (udp) {
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a = socket(AF_INET, SOCK_DGRAM, 0);
		b = socket(AF_INET, SOCK_DGRAM, 0);
		if (a < 0 || b < 0 || bind(b, (struct sockaddr *)&sa, sizeof(sa)) ||
		    getsockname(b, (struct sockaddr *)&sa, &sl) ||
		    connect(a, (struct sockaddr *)&sa, sizeof(sa))) {
			perror("loopback UDP sockets");
			return 2;
		}
	} else if (pipe(ping) || pipe(pong) || pthread_create(&th, NULL, echoer, NULL)) {
		perror("pipes and echo thread");
		return 2;
	}
	if (argc == 7)
		done = handshake(argv[4], argv[5], argv[6], udp);
	e0 = kernel_events(udp);
	for (int k = 0; k < batches; k++) {
		uint64_t t0 = now_ns(), d;

		for (int i = 0; i < iters; i++) {
			if (udp) {
				if (send(a, &c, 1, 0) != 1 || recv(b, &c, 1, 0) != 1) {
					perror("loopback UDP");
					return 2;
				}
			} else if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
				perror("pipe ping-pong");
				return 2;
			}
		}
		d = now_ns() - t0;
		if (d < best)
			best = d;
	}
	e1 = kernel_events(udp);
	if (!udp) {
		close(ping[1]);
		pthread_join(th, NULL);
	}
	if (done >= 0)
		close(done);
	printf("%.1f %.3f\n", (double)best / iters,
	       (double)(e1 - e0) / ((double)batches * iters));
	return 0;
}
