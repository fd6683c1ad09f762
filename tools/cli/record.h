/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `latsplit record` inside: the options, the in-run A/B phases and the
 * observer readings the command (cmd_record.c) hands its reports
 * (record_report.c).
 */
#ifndef LS_RECORD_H
#define LS_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "backend.h"

#define RECORD_DEFAULT_RING_KIB	4096
#define RECORD_POLL_MS		100

/* The text of the options record checks after reading them all. */
struct record_args {
	const char *irqs, *cpus, *pids, *dur, *ring, *ab;
};

struct record_opts {
	const char *backend;
	const char *ifname;
	bool have_irqs;
	bool have_cpus;
	uint64_t duration_ns;
	const char *records_path;
	unsigned int ring_kib;
	bool json;
	bool buckets;
	char **cmd;
	bool pid_command;		/* name COMMAND's process as a task */
	uint64_t ab_ns;			/* --ab: phase length; 0 = always on */
	struct ls_backend_cfg cfg;
	struct record_args arg;
};

/* --ab: recording alternates on and off; each phase as the clock saw it. */
struct record_phase {
	bool on;
	uint64_t begin_ns;		/* after the switch into it returned */
	uint64_t end_ns;		/* before the switch out of it began */
};

#define RECORD_MAX_PHASES	100000

struct record_ab {
	struct record_phase *v;
	size_t n;
	bool paused;
	uint64_t next_ns;		/* when the current phase ends */
	uint64_t drain_ns;		/* draining at the switches, in no phase */
	uint64_t drained;		/* records drained at the switches */
};

/*
 * The observer's reading for the output: obs when have is set, else why
 * there is none (the backend has no observer, or reading it failed).
 */
struct record_obs {
	bool have;
	struct ls_obs obs;
	char why[sizeof(struct ls_err) + 64];
};

/* rtla-style text: per slot, count/p50/p99/max rows, one column per CPU. */
void record_print_text(const struct record_opts *o, const struct ls_snapshot *snap,
		       const struct record_obs *ro, const struct record_ab *ab,
		       const char *backend, uint64_t window_ns);
/* JSON document, kind "record": per CPU and slot count/sum_ns/max_ns. */
void record_print_json(const struct record_opts *o, const struct ls_snapshot *snap,
		       const struct record_obs *ro, const struct record_ab *ab,
		       const char *backend, uint64_t t0, uint64_t t1, int cmd_status);
/* drain() callback: one text line per record. */
int record_write_record(const struct ls_record *r, void *ctx);

#endif /* LS_RECORD_H */
