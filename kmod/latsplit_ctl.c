// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit.ko: the debugfs interface, /sys/kernel/debug/latsplit/:
 *   control  (w)  verbs: irqs, cpus, tasks, ring, hist, enable, disable, reset,
 *                 own (this open file owns the module until it is closed)
 *   config   (r)  the current configuration, "key value" lines
 *   hist     (r)  struct ls_hist_header + nr_cpus * LS_NR_SLOTS struct ls_hist
 *   stats    (r)  per CPU and slot: count, sum, max, mean (text)
 *   records  (r)  stream of struct ls_record; blocking, pollable, one reader
 *   observer (r)  the probes' own cost: per CPU and handler, hits and ns
 * Every file is root-only (mode 0400/0200) and checks CAP_SYS_ADMIN on open
 * and, for control, on every write.
 */
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "latsplit.h"

static struct dentry *ls_dir;

/* open for every root-only file. */
static int ls_open_admin(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	return 0;
}

/* write `control`: one or more verb lines, applied all or nothing. */
static ssize_t ls_control_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char *buf;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (count > LS_CTL_MAX)
		return -E2BIG;
	if (!count)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	/* Embedded NULs are garbage, not an early end. */
	if (strlen(buf) != count) {
		err = -EINVAL;
		goto out;
	}
	err = ls_ctl_apply(buf, true, file);
out:
	kfree(buf);
	return err ? err : count;
}

/* release `control`: an owner's release disables tracing (ls_ctl_release()). */
static int ls_control_release(struct inode *inode, struct file *file)
{
	ls_ctl_release(file);
	return 0;
}

static const struct file_operations ls_control_fops = {
	.owner = THIS_MODULE,
	.open = ls_open_admin,
	.write = ls_control_write,
	.release = ls_control_release,
	.llseek = noop_llseek,
};

/* seq_file show for `config`. */
static int ls_config_show(struct seq_file *m, void *v)
{
	return ls_cfg_show(m);
}

/* A text file shown by one seq_file show function (config, stats, observer). */
struct ls_seq_file {
	int (*show)(struct seq_file *m, void *v);
};

/* open a text file: root only; its show function is the inode's data. */
static int ls_seq_open(struct inode *inode, struct file *file)
{
	const struct ls_seq_file *f = inode->i_private;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	return single_open(file, f->show, NULL);
}

static const struct file_operations ls_seq_fops = {
	.owner = THIS_MODULE,
	.open = ls_seq_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* Size of the hist file: header, then every CPU's slots. */
static loff_t ls_hist_size(void)
{
	return sizeof(struct ls_hist_header) +
	       (loff_t)nr_cpu_ids * LS_NR_SLOTS * sizeof(struct ls_hist);
}

/* Fill the hist header: counters summed over CPUs. */
static void ls_hist_fill_header(struct ls_hist_header *h)
{
	unsigned int cpu;

	memset(h, 0, sizeof(*h));
	h->magic = LS_HIST_MAGIC;
	h->abi_version = LATSPLIT_ABI_VERSION;
	h->hdr_size = sizeof(*h);
	h->hist_size = sizeof(struct ls_hist);
	h->nr_cpus = nr_cpu_ids;
	h->nr_slots = LS_NR_SLOTS;
	h->flags = ls_hdr_flags();
	h->nr_irqs = ls_cfg_irqs(h->irqs);
	for_each_possible_cpu(cpu) {
		struct ls_pcpu *pc = per_cpu_ptr(ls_pcpu, cpu);

		h->records += READ_ONCE(pc->written);
		h->drops += READ_ONCE(pc->drops);
		h->comp_stale += READ_ONCE(pc->comp_stale);
		h->napi_untimed += READ_ONCE(pc->napi_untimed);
	}
	h->snapshot_ns = ktime_get_ns();
}

/*
 * read `hist`: the header is made at offset 0; histograms are copied
 * straight from the live per-CPU memory (each u64 is read whole; a
 * histogram being updated may be one event ahead in one field).
 */
static ssize_t ls_hist_read(struct file *file, char __user *buf, size_t count,
			    loff_t *ppos)
{
	const size_t cpu_bytes = LS_NR_SLOTS * sizeof(struct ls_hist);
	loff_t pos = *ppos, end = ls_hist_size();
	size_t done = 0;

	if (pos < 0)
		return -EINVAL;
	if (pos >= end || !count)
		return 0;
	if (count > end - pos)
		count = end - pos;
	while (done < count) {
		size_t n;

		if (pos < sizeof(struct ls_hist_header)) {
			struct ls_hist_header h;

			ls_hist_fill_header(&h);
			n = min_t(size_t, count - done, sizeof(h) - pos);
			if (copy_to_user(buf + done, (char *)&h + pos, n))
				return done ? done : -EFAULT;
		} else {
			loff_t off = pos - sizeof(struct ls_hist_header);
			unsigned int cpu = div_u64(off, cpu_bytes);
			size_t in = off - (loff_t)cpu * cpu_bytes;

			n = min_t(size_t, count - done, cpu_bytes - in);
			if (cpu_possible(cpu)) {
				char *src = (char *)per_cpu_ptr(ls_pcpu, cpu)->hist;

				if (copy_to_user(buf + done, src + in, n))
					return done ? done : -EFAULT;
			} else if (clear_user(buf + done, n)) {
				return done ? done : -EFAULT;
			}
		}
		done += n;
		pos += n;
	}
	*ppos = pos;
	return done;
}

/* llseek `hist`: a fixed-size file. */
static loff_t ls_hist_llseek(struct file *file, loff_t off, int whence)
{
	return fixed_size_llseek(file, off, whence, ls_hist_size());
}

static const struct file_operations ls_hist_fops = {
	.owner = THIS_MODULE,
	.open = ls_open_admin,
	.read = ls_hist_read,
	.llseek = ls_hist_llseek,
};

static const char *const ls_stage_names[LS_NR_STAGES] = LS_STAGE_NAMES;

/* Stage and id of a slot (IRQ slots name the IRQ from the watched list). */
static void ls_slot_stage(u32 slot, const u32 *irqs, u32 nr_irqs, u32 *stage,
			  long *id)
{
	*id = -1;
	if (slot < LS_SLOT_COMPLETION) {
		*stage = LS_STAGE_HARDIRQ;
		*id = slot < nr_irqs ? irqs[slot] : -1;
	} else if (slot < LS_SLOT_IRQ_THREAD) {
		*stage = LS_STAGE_COMPLETION;
		slot -= LS_SLOT_COMPLETION;
		*id = slot < nr_irqs ? irqs[slot] : -1;
	} else if (slot < LS_SLOT_SOFTIRQ_WAIT) {
		*stage = LS_STAGE_IRQ_THREAD;
		slot -= LS_SLOT_IRQ_THREAD;
		*id = slot < nr_irqs ? irqs[slot] : -1;
	} else if (slot < LS_SLOT_SOFTIRQ_RUN) {
		*stage = LS_STAGE_SOFTIRQ_WAIT;
		*id = slot - LS_SLOT_SOFTIRQ_WAIT;
	} else if (slot < LS_SLOT_NAPI_POLL) {
		*stage = LS_STAGE_SOFTIRQ_RUN;
		*id = slot - LS_SLOT_SOFTIRQ_RUN;
	} else if (slot == LS_SLOT_NAPI_POLL) {
		*stage = LS_STAGE_NAPI_POLL;
	} else if (slot == LS_SLOT_WAKEUP) {
		*stage = LS_STAGE_WAKEUP;
	} else if (slot == LS_SLOT_INTERFERENCE) {
		*stage = LS_STAGE_INTERFERENCE;
	} else {
		*stage = LS_STAGE_PREEMPT;
	}
}

/* seq_file show for `stats`: one line per non-empty (cpu, slot). */
static int ls_stats_show(struct seq_file *m, void *v)
{
	struct ls_hist_header h;
	unsigned int cpu;
	u32 slot, stage;
	long id;

	ls_hist_fill_header(&h);
	seq_printf(m, "# enabled %d records %llu drops %llu comp_stale %llu napi_untimed %llu\n",
		   !!(h.flags & LS_HDR_F_ENABLED), h.records, h.drops, h.comp_stale,
		   h.napi_untimed);
	seq_puts(m, "# cpu stage slot id count sum_ns max_ns mean_ns\n");
	for_each_possible_cpu(cpu) {
		const struct ls_hist *hist = per_cpu_ptr(ls_pcpu, cpu)->hist;

		for (slot = 0; slot < LS_NR_SLOTS; slot++) {
			u64 cnt = READ_ONCE(hist[slot].count);
			u64 sum = READ_ONCE(hist[slot].sum_ns);

			if (!cnt)
				continue;
			ls_slot_stage(slot, h.irqs, h.nr_irqs, &stage, &id);
			seq_printf(m, "%u %s %u %ld %llu %llu %llu %llu\n", cpu,
				   ls_stage_names[stage], slot, id, cnt, sum,
				   READ_ONCE(hist[slot].max_ns), div64_u64(sum, cnt));
		}
	}
	return 0;
}

static const char *const ls_handler_names[LS_NR_HANDLERS] = LS_HANDLER_NAMES;

/*
 * seq_file show for `observer`: every (possible CPU, handler) cell, zero
 * or not, so a reader sees the whole table. A cell being updated on its
 * CPU may be one hit ahead of its ns here.
 */
static int ls_observer_show(struct seq_file *m, void *v)
{
	unsigned int cpu, h;

	seq_printf(m, "# nr_cpus %u handlers %u\n", nr_cpu_ids, LS_NR_HANDLERS);
	seq_puts(m, "# cpu handler name hits ns\n");
	for_each_possible_cpu(cpu) {
		const struct ls_obs_cell *c = per_cpu_ptr(ls_pcpu, cpu)->obs;

		for (h = 0; h < LS_NR_HANDLERS; h++)
			seq_printf(m, "%u %u %s %llu %llu\n", cpu, h,
				   ls_handler_names[h], READ_ONCE(c[h].hits),
				   READ_ONCE(c[h].ns));
	}
	return 0;
}

static struct ls_seq_file ls_seq_config = { .show = ls_config_show };
static struct ls_seq_file ls_seq_stats = { .show = ls_stats_show };
static struct ls_seq_file ls_seq_observer = { .show = ls_observer_show };

/* Create /sys/kernel/debug/latsplit and its files. */
int ls_debugfs_init(void)
{
	ls_dir = debugfs_create_dir(LS_NAME, NULL);
	if (IS_ERR(ls_dir)) {
		pr_err(LS_NAME ": cannot create debugfs directory: %ld\n",
		       PTR_ERR(ls_dir));
		return PTR_ERR(ls_dir);
	}
	debugfs_create_file("control", 0200, ls_dir, NULL, &ls_control_fops);
	debugfs_create_file("config", 0400, ls_dir, &ls_seq_config, &ls_seq_fops);
	debugfs_create_file("hist", 0400, ls_dir, NULL, &ls_hist_fops);
	debugfs_create_file("stats", 0400, ls_dir, &ls_seq_stats, &ls_seq_fops);
	debugfs_create_file("records", 0400, ls_dir, NULL, &ls_records_fops);
	debugfs_create_file("observer", 0400, ls_dir, &ls_seq_observer, &ls_seq_fops);
	return 0;
}

/* Remove the debugfs files (waits for in-flight file operations). */
void ls_debugfs_exit(void)
{
	debugfs_remove_recursive(ls_dir);
	ls_dir = NULL;
}
