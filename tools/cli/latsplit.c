// SPDX-License-Identifier: GPL-2.0
/* latsplit: split RDMA latency into transmission, queuing and processing. */
#include <stdio.h>
#include <string.h>

#include "../include/uapi/latsplit.h"
#include "commands.h"
#include "io.h"
#include "json.h"
#include "util.h"

/* The subcommands, in the order `latsplit --help` lists them. */
static const struct ls_command commands[] = {
	{ "breakdown",	cmd_breakdown,	"probe + kernel + counters -> transmission/queuing/processing split" },
	{ "probe",	cmd_probe,	"verbs latency probe (perftest-like ping-pong), responder or prober" },
	{ "check",	cmd_check,	"layer-by-layer health check of an RDMA port (PASS/WARN/FAIL)" },
	{ "irq",	cmd_irq,	"per-CPU NIC IRQ/softirq latency, affinity map, warnings" },
	{ "record",	cmd_record,	"per-CPU IRQ/softirq/NAPI/wakeup stage histograms for a window" },
	{ "compare",	cmd_compare,	"A/B comparison of two JSON results with significance; exit 1 on regression" },
	{ "report",	cmd_report,	"one self-contained HTML report (inline SVG plots) of JSON results" },
	{ "model",	cmd_model,	"training impact (AllReduce T_sync, utilization) of a latency" },
	{ "agent",	cmd_agent,	"always-on per-node responder + prober with a Prometheus /metrics endpoint" },
	{ "version",	cmd_version,	"print version and ABI/schema versions" },
};

/* Print the top-level usage. */
static void usage(FILE *fp)
{
	fprintf(fp, "usage: latsplit COMMAND [OPTIONS]\n\n"
		"Split RDMA latency into transmission + queuing + processing.\n\n"
		"commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(fp, "\n'latsplit COMMAND --help' describes each command.\n");
}

/* `latsplit version`: tool, ABI and JSON schema versions. */
int cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		ls_warn("version: takes no arguments");
		return LS_EXIT_USAGE;
	}
	printf("latsplit %s (abi %d, json schema %d)\n", LS_VERSION,
	       LATSPLIT_ABI_VERSION, LS_JSON_SCHEMA);
	return LS_EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return LS_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return LS_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	}
	ls_warn("unknown command '%s'", argv[1]);
	usage(stderr);
	return LS_EXIT_USAGE;
}
