/* SPDX-License-Identifier: GPL-2.0 */
/* ICMP echo (ping) measured in process: RTTs in CLOCK_MONOTONIC ns and loss. */
#ifndef LS_ICMP_H
#define LS_ICMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct ls_ping_result {
	unsigned int sent;
	unsigned int received;
	double *rtt_ns;			/* [received], caller frees */
};

/*
 * Send count ICMP echo requests to host (IPv4 name or address), one every
 * interval_ns, waiting at most timeout_ns for each reply. Uses a raw ICMP
 * socket (root) or an unprivileged ping socket. Loss is not an error; an
 * unresolvable host or no socket is.
 */
int ls_ping(const char *host, unsigned int count, uint64_t interval_ns,
	    uint64_t timeout_ns, struct ls_ping_result *res, struct ls_err *err);
void ls_ping_result_free(struct ls_ping_result *res);

#endif /* LS_ICMP_H */
