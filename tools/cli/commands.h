/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One entry point per command file (tools/cli/cmd_*.c, tools/breakdown/cli.c);
 * the table is in latsplit.c.
 */
#ifndef LS_COMMANDS_H
#define LS_COMMANDS_H

#ifndef LS_VERSION
#define LS_VERSION "0.1"
#endif

struct ls_command {
	const char *name;
	int (*run)(int argc, char **argv);	/* argv[0] is the command name */
	const char *summary;
};

int cmd_version(int argc, char **argv);
int cmd_breakdown(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_irq(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_agent(int argc, char **argv);

#endif /* LS_COMMANDS_H */
