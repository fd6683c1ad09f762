/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NIC facts from sysfs and procfs: which IRQs serve a NIC, their affinity,
 * per-CPU interrupt and softirq counts, and the devices that exist.
 */
#ifndef LS_NIC_H
#define LS_NIC_H

#include <net/if.h>
#include <stdint.h>

#include "../include/uapi/latsplit.h"
#include "util.h"

/* IRQs past LS_MAX_IRQS remembered (so each counts once); more are counted. */
#define LS_NIC_MAX_UNWATCHED	1024

struct ls_nic {
	char ibdev[64];			/* "" when resolved from a netdev only */
	char netdev[IF_NAMESIZE];	/* "" when the RDMA device has none */
	char pci[64];			/* PCI address of the function, if any */
	uint32_t irqs[LS_MAX_IRQS];
	char irq_names[LS_MAX_IRQS][64];
	unsigned int nr_irqs;
	unsigned int nr_unwatched;	/* IRQs past LS_MAX_IRQS, not in irqs[] */
	uint32_t unwatched[LS_NIC_MAX_UNWATCHED];	/* the first of them */
};

/*
 * Resolve the NIC behind an RDMA device (ibdev) or a netdev (ifname; one of
 * the two may be NULL): its netdev, PCI function and IRQs (msi_irqs, the
 * legacy irq file, or /proc/interrupts names). Soft-RoCE rides on its
 * netdev's IRQs. Unknown devices: the error lists the ones that exist.
 */
int ls_nic_resolve(const char *ibdev, const char *ifname, struct ls_nic *nic,
		   struct ls_err *err);

/* Add an IRQ once; past LS_MAX_IRQS keep the lowest, count the rest unwatched. */
void ls_nic_add_irq(struct ls_nic *nic, uint32_t irq, const char *name);

/* Comma-separated names of the RDMA devices / netdevs present. */
void ls_list_ibdevs(char *buf, size_t len);
void ls_list_netdevs(char *buf, size_t len);

/* One /proc/interrupts row. */
struct ls_irq_row {
	char key[32];			/* "24" or "NMI", "LOC", ... */
	uint32_t irq;			/* numeric rows only */
	int numeric;
	uint64_t *per_cpu;		/* nr_cpus counts */
	char desc[128];			/* chip + name, as printed */
};

struct ls_interrupts {
	unsigned int nr_cpus;		/* columns: CPU ids in cpu_ids[] */
	unsigned int cpu_ids[LS_MAX_CPUS];
	struct ls_irq_row *rows;
	unsigned int nr_rows;
};

/* Parse /proc/interrupts (or path, for tests). */
int ls_interrupts_read(const char *path, struct ls_interrupts *out,
		       struct ls_err *err);
void ls_interrupts_free(struct ls_interrupts *in);
/* The row of IRQ number irq, or NULL. */
const struct ls_irq_row *ls_interrupts_find(const struct ls_interrupts *in,
					    uint32_t irq);

/* Per-CPU softirq counts of one vector from /proc/softirqs (or path). */
int ls_softirqs_read(const char *path, const char *vector, uint64_t *per_cpu,
		     unsigned int *nr_cpus, struct ls_err *err);

/* smp_affinity_list and effective_affinity_list of an IRQ as bitmaps. */
int ls_irq_affinity(uint32_t irq, uint64_t *mask, uint64_t *effective,
		    struct ls_err *err);

/*
 * Read /sys/class/infiniband/DEV/ports/PORT/rate under root (NULL = "/")
 * and parse it (ls_wire_parse_rate).
 */
int ls_wire_read_rate(const char *root, const char *dev, unsigned int port,
		      double *gbps, char *text, size_t len, struct ls_err *err);

#endif /* LS_NIC_H */
