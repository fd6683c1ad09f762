// SPDX-License-Identifier: GPL-2.0
/* NIC facts from sysfs and procfs: IRQs of a NIC, affinity, interrupt counts, link rate. */
#include "nic.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "wire.h"

/* Append the entries of a sysfs class directory to buf as "a, b". */
static void list_class(const char *dir, char *buf, size_t len)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	buf[0] = '\0';
	d = opendir(dir);
	if (!d) {
		snprintf(buf, len, "none");
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? ", " : "",
			      de->d_name);
		if (n >= len)
			break;
	}
	closedir(d);
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* Comma-separated names of the RDMA devices present. */
void ls_list_ibdevs(char *buf, size_t len)
{
	list_class("/sys/class/infiniband", buf, len);
}

/* Comma-separated names of the netdevs present. */
void ls_list_netdevs(char *buf, size_t len)
{
	list_class("/sys/class/net", buf, len);
}

/*
 * Add an IRQ to nic once. Past LS_MAX_IRQS the lowest-numbered are kept (a
 * NIC's queue IRQs are allocated in order, so these are its first queues)
 * and every other one is counted as unwatched, never dropped unsaid.
 */
void ls_nic_add_irq(struct ls_nic *nic, uint32_t irq, const char *name)
{
	unsigned int i, hi = 0, kept = nic->nr_unwatched < LS_NIC_MAX_UNWATCHED ?
					nic->nr_unwatched : LS_NIC_MAX_UNWATCHED;
	uint32_t out = irq;

	for (i = 0; i < nic->nr_irqs; i++)
		if (nic->irqs[i] == irq)
			return;
	for (i = 0; i < kept; i++)
		if (nic->unwatched[i] == irq)
			return;
	if (nic->nr_irqs < LS_MAX_IRQS) {
		i = nic->nr_irqs++;
	} else {
		for (i = 1; i < nic->nr_irqs; i++)
			if (nic->irqs[i] > nic->irqs[hi])
				hi = i;
		if (irq < nic->irqs[hi])
			out = nic->irqs[hi];	/* it makes room for a lower one */
		if (kept < LS_NIC_MAX_UNWATCHED)
			nic->unwatched[kept] = out;
		nic->nr_unwatched++;
		if (out == irq)
			return;
		i = hi;
	}
	nic->irqs[i] = irq;
	snprintf(nic->irq_names[i], sizeof(nic->irq_names[0]), "%s", name ? name : "");
}

/* Sort the IRQ list ascending (names follow). */
static void sort_irqs(struct ls_nic *nic)
{
	for (unsigned int i = 1; i < nic->nr_irqs; i++) {
		for (unsigned int j = i; j > 0 && nic->irqs[j - 1] > nic->irqs[j]; j--) {
			uint32_t t = nic->irqs[j];
			char name[64];

			nic->irqs[j] = nic->irqs[j - 1];
			nic->irqs[j - 1] = t;
			memcpy(name, nic->irq_names[j], sizeof(name));
			memcpy(nic->irq_names[j], nic->irq_names[j - 1], sizeof(name));
			memcpy(nic->irq_names[j - 1], name, sizeof(name));
		}
	}
}

/* Name column of /proc/interrupts for irq (last word), "" if not found. */
static void irq_name(const struct ls_interrupts *in, uint32_t irq, char *buf, size_t len)
{
	const struct ls_irq_row *r = ls_interrupts_find(in, irq);
	const char *sp;

	buf[0] = '\0';
	if (!r)
		return;
	sp = strrchr(r->desc, ' ');
	snprintf(buf, len, "%s", sp ? sp + 1 : r->desc);
}

/*
 * From a device directory, walk up to the nearest ancestor with msi_irqs/
 * or an irq file and collect its IRQs.
 */
static int irqs_from_device(const char *devdir, struct ls_nic *nic,
			    const struct ls_interrupts *in)
{
	char path[PATH_MAX], real[PATH_MAX], name[64];
	struct dirent *de;
	char *slash;
	DIR *d;

	if (!realpath(devdir, real))
		return -1;
	while (strlen(real) > strlen("/sys/devices")) {
		snprintf(path, sizeof(path), "%s/msi_irqs", real);
		d = opendir(path);
		if (d) {
			while ((de = readdir(d))) {
				char *end;
				unsigned long irq;

				if (!isdigit((unsigned char)de->d_name[0]))
					continue;
				irq = strtoul(de->d_name, &end, 10);
				if (*end)
					continue;
				irq_name(in, (uint32_t)irq, name, sizeof(name));
				ls_nic_add_irq(nic, (uint32_t)irq, name);
			}
			closedir(d);
			if (!nic->pci[0])
				snprintf(nic->pci, sizeof(nic->pci), "%s", strrchr(real, '/') + 1);
			if (nic->nr_irqs)
				return 0;
		}
		snprintf(path, sizeof(path), "%s/irq", real);
		if (access(path, R_OK) == 0 && !strstr(real, "/virtio")) {
			char buf[32];
			uint64_t irq;

			if (!ls_read_text(path, buf, sizeof(buf), NULL) &&
			    !ls_parse_u64(buf, 1, UINT32_MAX, &irq, NULL, "irq")) {
				irq_name(in, (uint32_t)irq, name, sizeof(name));
				ls_nic_add_irq(nic, (uint32_t)irq, name);
				return 0;
			}
		}
		slash = strrchr(real, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return nic->nr_irqs ? 0 : -1;
}

/* Fall back to /proc/interrupts rows whose name mentions key (e.g. "eth0"). */
static void irqs_by_name(const struct ls_interrupts *in, const char *key,
			 struct ls_nic *nic)
{
	size_t kl = strlen(key);

	if (!kl)
		return;
	for (unsigned int i = 0; i < in->nr_rows; i++) {
		const struct ls_irq_row *r = &in->rows[i];
		const char *p = r->desc;

		if (!r->numeric)
			continue;
		while ((p = strstr(p, key))) {
			char after = p[kl];

			if (!isalnum((unsigned char)after)) {
				char name[64];

				irq_name(in, r->irq, name, sizeof(name));
				ls_nic_add_irq(nic, r->irq, name);
				break;
			}
			p += kl;
		}
	}
}

/* "KIND 'NAME' does not exist (present: ...)", list naming the ones that do. */
static int no_such_device(struct ls_err *err, const char *kind, const char *name,
			  void (*list)(char *buf, size_t len))
{
	char present[512];

	list(present, sizeof(present));
	return ls_errcf(err, LS_E_DEVICE, "%s '%s' does not exist (present: %s)", kind, name,
			present);
}

/* Resolve the NIC behind ibdev or ifname. */
int ls_nic_resolve(const char *ibdev, const char *ifname, struct ls_nic *nic,
		   struct ls_err *err)
{
	char path[PATH_MAX], buf[128];
	struct ls_interrupts in = { 0 };
	int ret = -1;

	memset(nic, 0, sizeof(*nic));
	if (ibdev && *ibdev) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s", ibdev);
		if (strchr(ibdev, '/') || strlen(ibdev) >= sizeof(nic->ibdev) || access(path, F_OK))
			return no_such_device(err, "RDMA device", ibdev, ls_list_ibdevs);
		snprintf(nic->ibdev, sizeof(nic->ibdev), "%s", ibdev);
		/* Soft-RoCE and siw name their netdev in "parent". */
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/parent", ibdev);
		if (!ls_read_text(path, buf, sizeof(buf), NULL) && buf[0])
			snprintf(nic->netdev, sizeof(nic->netdev), "%s", buf);
		if (!nic->netdev[0]) {
			/* A hardware HCA: its port's netdev, if it has one. */
			snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net", ibdev);
			DIR *d = opendir(path);

			if (d) {
				struct dirent *de;

				while ((de = readdir(d)))
					if (de->d_name[0] != '.') {
						snprintf(nic->netdev, sizeof(nic->netdev), "%s",
							 de->d_name);
						break;
					}
				closedir(d);
			}
		}
	}
	if (ifname && *ifname) {
		snprintf(path, sizeof(path), "/sys/class/net/%s", ifname);
		if (strchr(ifname, '/') || strlen(ifname) >= IF_NAMESIZE || access(path, F_OK))
			return no_such_device(err, "network interface", ifname, ls_list_netdevs);
		snprintf(nic->netdev, sizeof(nic->netdev), "%s", ifname);
	}
	if (!nic->ibdev[0] && !nic->netdev[0])
		return ls_errcf(err, LS_E_USAGE, "no device given");

	if (ls_interrupts_read(NULL, &in, err))
		return -1;
	if (nic->ibdev[0]) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", nic->ibdev);
		if (!access(path, F_OK))
			irqs_from_device(path, nic, &in);
		irqs_by_name(&in, nic->ibdev, nic);
	}
	if (nic->netdev[0]) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/device", nic->netdev);
		if (!access(path, F_OK))
			irqs_from_device(path, nic, &in);
		irqs_by_name(&in, nic->netdev, nic);
	}
	sort_irqs(nic);
	ret = 0;
	ls_interrupts_free(&in);
	return ret;
}

/* Open a /proc table and read its header line into *line; NULL with err set. */
static FILE *proc_table_open(const char *path, char **line, size_t *cap,
			     struct ls_err *err)
{
	FILE *fp;

	fp = fopen(path, "re");
	if (!fp) {
		ls_errnof(err, errno, "open %s", path);
		return NULL;
	}
	if (getline(line, cap, fp) < 0) {
		ls_errf(err, "%s: empty", path);
		free(*line);
		*line = NULL;
		fclose(fp);
		return NULL;
	}
	return fp;
}

/* Parse /proc/interrupts. */
int ls_interrupts_read(const char *path, struct ls_interrupts *out,
		       struct ls_err *err)
{
	char *line = NULL, *p, *end;
	size_t cap = 0, rows_cap = 0;
	int ret = -1;
	FILE *fp;

	memset(out, 0, sizeof(*out));
	if (!path)
		path = "/proc/interrupts";
	fp = proc_table_open(path, &line, &cap, err);
	if (!fp)
		return -1;
	for (p = line; (p = strstr(p, "CPU")); p += 3) {
		unsigned long id = strtoul(p + 3, &end, 10);

		if (end == p + 3 || out->nr_cpus >= LS_MAX_CPUS)
			continue;
		out->cpu_ids[out->nr_cpus++] = (unsigned int)id;
	}
	if (!out->nr_cpus) {
		ls_errf(err, "%s: no CPU columns in the header", path);
		goto out;
	}
	while (getline(&line, &cap, fp) >= 0) {
		struct ls_irq_row *r;
		char *colon = strchr(line, ':');
		char *key = line;
		unsigned int c;

		if (!colon)
			continue;
		*colon = '\0';
		while (*key == ' ')
			key++;
		if (ls_grow(&out->rows, &rows_cap, out->nr_rows, sizeof(*out->rows), 64)) {
			ls_errf(err, "out of memory reading %s", path);
			goto out;
		}
		r = &out->rows[out->nr_rows];
		memset(r, 0, sizeof(*r));
		r->per_cpu = calloc(out->nr_cpus, sizeof(uint64_t));
		if (!r->per_cpu) {
			ls_errf(err, "out of memory reading %s", path);
			goto out;
		}
		out->nr_rows++;
		snprintf(r->key, sizeof(r->key), "%s", key);
		r->irq = (uint32_t)strtoul(key, &end, 10);
		r->numeric = end != key && !*end;
		p = colon + 1;
		for (c = 0; c < out->nr_cpus; c++) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			r->per_cpu[c] = v;
			p = end;
		}
		while (*p == ' ')
			p++;
		end = p + strlen(p);
		while (end > p && (end[-1] == '\n' || end[-1] == ' '))
			*--end = '\0';
		snprintf(r->desc, sizeof(r->desc), "%s", p);
	}
	ret = 0;
out:
	free(line);
	fclose(fp);
	if (ret)
		ls_interrupts_free(out);
	return ret;
}

/* Free a parsed /proc/interrupts. */
void ls_interrupts_free(struct ls_interrupts *in)
{
	for (unsigned int i = 0; i < in->nr_rows; i++)
		free(in->rows[i].per_cpu);
	free(in->rows);
	in->rows = NULL;
	in->nr_rows = 0;
}

/* The row of IRQ number irq, or NULL. */
const struct ls_irq_row *ls_interrupts_find(const struct ls_interrupts *in,
					    uint32_t irq)
{
	for (unsigned int i = 0; i < in->nr_rows; i++)
		if (in->rows[i].numeric && in->rows[i].irq == irq)
			return &in->rows[i];
	return NULL;
}

/* Per-CPU counts of one vector from /proc/softirqs. */
int ls_softirqs_read(const char *path, const char *vector, uint64_t *per_cpu,
		     unsigned int *nr_cpus, struct ls_err *err)
{
	char *line = NULL, *p, *end;
	unsigned int ncpu = 0;
	size_t cap = 0;
	int ret = -1;
	FILE *fp;

	if (!path)
		path = "/proc/softirqs";
	fp = proc_table_open(path, &line, &cap, err);
	if (!fp)
		return -1;
	for (p = line; (p = strstr(p, "CPU")); p += 3)
		ncpu++;
	if (ncpu > LS_MAX_CPUS)
		ncpu = LS_MAX_CPUS;
	while (getline(&line, &cap, fp) >= 0) {
		char *colon = strchr(line, ':');

		p = line;
		while (*p == ' ')
			p++;
		if (!colon || strncmp(p, vector, (size_t)(colon - p)) ||
		    (size_t)(colon - p) != strlen(vector))
			continue;
		p = colon + 1;
		for (unsigned int c = 0; c < ncpu; c++) {
			per_cpu[c] = strtoull(p, &end, 10);
			if (end == p) {
				ls_errf(err, "%s: short %s row", path, vector);
				goto out;
			}
			p = end;
		}
		*nr_cpus = ncpu;
		ret = 0;
		goto out;
	}
	ls_errf(err, "%s: no %s row", path, vector);
out:
	free(line);
	fclose(fp);
	return ret;
}

/* smp_affinity_list and effective_affinity_list of an IRQ. */
int ls_irq_affinity(uint32_t irq, uint64_t *mask, uint64_t *effective,
		    struct ls_err *err)
{
	char path[128], buf[4096];

	snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", irq);
	if (ls_read_text(path, buf, sizeof(buf), err) ||
	    ls_parse_cpulist(buf, mask, LS_MAX_CPUS, err))
		return ls_err_wrap(err, "IRQ %u affinity", irq);
	snprintf(path, sizeof(path), "/proc/irq/%u/effective_affinity_list", irq);
	if (ls_read_text(path, buf, sizeof(buf), NULL) || !buf[0] ||
	    ls_parse_cpulist(buf, effective, LS_MAX_CPUS, NULL))
		memcpy(effective, mask, LS_CPUMASK_WORDS * sizeof(uint64_t));
	return 0;
}

/* Read and parse /sys/class/infiniband/DEV/ports/PORT/rate. */
int ls_wire_read_rate(const char *root, const char *dev, unsigned int port,
		      double *gbps, char *text, size_t len, struct ls_err *err)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/ports/%u/rate",
		 root ? root : "", dev, port);
	if (ls_read_text(path, text, len, err))
		return -1;
	if (ls_wire_parse_rate(text, gbps, err))
		return ls_err_wrap(err, "%s", path);
	return 0;
}
