// SPDX-License-Identifier: GPL-2.0
/*
 * ls_faultinj.ko: test-only fault injector for latsplit's lab (never
 * installed). Adds a known amount of receive-softirq work (a busy wait) to
 * selected IPv4 UDP / RoCEv2 packets on the CPU that receives them, and
 * keeps its own count and per-injection log: the ground truth ("oracle")
 * for the processing part of latsplit's split.
 *
 * Hook: netfilter NF_INET_PRE_ROUTING, IPv4, priority NF_IP_PRI_FIRST, in
 * init_net; for packets from a NIC it runs in the NET_RX softirq of the
 * receiving CPU (on PREEMPT_RT: in the thread that runs that softirq). It
 * never drops: every verdict is NF_ACCEPT. Disarmed (the default), the
 * hook does one RCU pointer load per packet and returns.
 *
 * Interface, /sys/kernel/debug/ls_faultinj/ (root only, mode 0600 and
 * CAP_SYS_ADMIN on open):
 *   config  write one line of KEY=VALUE words (a full configuration; an
 *           omitted key takes its default) or the word "off":
 *             delay_ns=N   busy wait per selected packet, 0..10000000 (0)
 *             op=any|req|resp|ack   BTH opcode class (any)
 *             psn=any|even|odd|hash parity of the BTH PSN, or hash: a
 *                          pseudo-random half of all PSNs (low bit of
 *                          murmur3's finalizer, as the lab wire) (any)
 *             dqpn=N       BTH destination QP, 1..0xffffff (decimal, or
 *                          hex with 0x); 0 = any (0)
 *             dport=N      UDP destination port, 1..65535 (4791)
 *             roce=0|1     read a BTH after the UDP header (1 if dport is
 *                          4791, else 0); with roce=0, op must be any,
 *                          dqpn 0, and psn= selects by the parity of the
 *                          per-CPU count of matching packets (first is 0)
 *             armed=0|1    (1) store the settings but stay disarmed if 0
 *           Opcode classes use the low 5 bits of the BTH opcode for the
 *           RC/UC/RD/UD/XRC transports: req 0x00-0x0c, 0x13-0x17; resp
 *           0x0d-0x10, 0x12; ack 0x11; CNP (0x80-0x9f) and the rest only
 *           match op=any. A line armed with delay_ns=0 selects, counts and
 *           logs without waiting. "off" disarms and keeps the settings.
 *           The line is validated as a whole (unknown or repeated key, bad
 *           value, over 255 bytes, NUL bytes: -EINVAL, nothing changes),
 *           then published with one RCU pointer swap.
 *           Read: the settings, as a line that can be written back.
 *   stats   read: one line per possible CPU, then a total line:
 *             cpu C seen N matched N injected N ns N
 *             total seen N matched N injected N ns N
 *           seen: IPv4 UDP packets to dport while armed; matched: those
 *           that also match op and dqpn (all of seen with roce=0), i.e.
 *           the candidates before the parity test; injected: busy waits
 *           done; ns: their summed measured length (end - start).
 *           Any write (e.g. "reset") zeroes the counters and empties the
 *           logs; exact only while disarmed (a concurrent increment on
 *           another CPU may survive or be lost).
 *   log     read: the last 8192 injections of each CPU, one per line:
 *             CPU START_NS END_NS PSN DQPN OPCODE
 *           decimal, CLOCK_MONOTONIC (ktime_get_ns) ns; in ring-slot
 *           order per CPU (sort by START_NS for time order). With roce=0,
 *           PSN is the packet's per-CPU match count and DQPN and OPCODE
 *           are 0. Safe to read while armed: an entry being written
 *           while it is read is skipped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/udp.h>
#include <linux/vmalloc.h>
#include <net/ip.h>
#include <net/net_namespace.h>

#include "roce_bth.h"

#define FI_RING_LEN	8192U		/* log entries per CPU, a power of 2 */
#define FI_DELAY_MAX	10000000ULL	/* 10 ms */
#define FI_LINE_MAX	255		/* longest config write, bytes */
#define FI_ROCE_PORT	4791
#define FI_BTH_LEN	12

/* The classes are roce_bth.h's, with "any" (0) in place of "other". */
enum fi_op {
	FI_OP_ANY,
	FI_OP_REQ = LS_BTH_REQ,
	FI_OP_RESP = LS_BTH_RESP,
	FI_OP_ACK = LS_BTH_ACK,
	FI_OP_OTHER,
};
enum fi_psn { FI_PSN_ANY, FI_PSN_EVEN, FI_PSN_ODD, FI_PSN_HASH };

static const char *const fi_op_names[] = {
	[FI_OP_ANY] = "any", [FI_OP_REQ] = "req",
	[FI_OP_RESP] = "resp", [FI_OP_ACK] = "ack",
};

static const char *const fi_psn_names[] = {
	[FI_PSN_ANY] = "any", [FI_PSN_EVEN] = "even", [FI_PSN_ODD] = "odd",
	[FI_PSN_HASH] = "hash",
};

/* One configuration; the armed one is what the hook sees through fi_active. */
struct fi_cfg {
	u64 delay_ns;
	u32 dqpn;		/* 0 = any */
	u16 dport;
	u8 op;			/* enum fi_op, never FI_OP_OTHER */
	u8 psn;			/* enum fi_psn */
	bool roce;
	bool armed;
};

/* One logged injection; seq is odd while the writer fills it in. */
struct fi_entry {
	u32 seq;
	u32 psn;
	u64 idx;		/* 1-based injection number on its CPU; 0 = unused */
	u64 start_ns;
	u64 end_ns;
	u32 dqpn;
	u8 opcode;
	u16 cpu;
};

struct fi_ring {
	struct fi_entry e[FI_RING_LEN];
};

/* Per-CPU counters; head and floor index the log (entries <= floor are reset). */
struct fi_stats {
	u64 seen;
	u64 matched;
	u64 injected;
	u64 ns;
	u64 head;
	u64 floor;
};

static DEFINE_PER_CPU(struct fi_stats, fi_stats);
static DEFINE_PER_CPU(struct fi_ring *, fi_ring);

static struct fi_cfg __rcu *fi_active;	/* NULL = disarmed */
static struct fi_cfg fi_settings;	/* shown by config (fi_mutex) */
static DEFINE_MUTEX(fi_mutex);		/* config writes and reset */
static struct dentry *fi_dir;

/* The class (enum fi_op) of a BTH opcode. */
static u8 fi_op_class(u8 opcode)
{
	unsigned int c = ls_bth_class(opcode);

	return c == LS_BTH_OTHER ? FI_OP_OTHER : (u8)c;
}

/* Busy-wait delay_ns on this CPU, count it and log it. */
static void fi_inject(u64 delay_ns, u32 psn, u32 dqpn, u8 opcode)
{
	struct fi_entry *e;
	struct fi_ring *ring;
	u64 start, end, idx;
	u32 seq;

	/* ktime, not ndelay: loops_per_jiffy is unreliable under TCG. */
	start = ktime_get_ns();
	end = start;
	while (end - start < delay_ns) {
		cpu_relax();
		end = ktime_get_ns();
	}

	/* Short and unpreemptible: one writer per CPU ring at a time. */
	preempt_disable();
	__this_cpu_inc(fi_stats.injected);
	__this_cpu_add(fi_stats.ns, end - start);
	idx = __this_cpu_inc_return(fi_stats.head);
	ring = __this_cpu_read(fi_ring);
	if (ring) {
		e = &ring->e[(idx - 1) & (FI_RING_LEN - 1)];
		seq = e->seq;
		WRITE_ONCE(e->seq, seq + 1);
		smp_wmb();	/* seq odd before the fields change */
		e->idx = idx;
		e->start_ns = start;
		e->end_ns = end;
		e->psn = psn;
		e->dqpn = dqpn;
		e->opcode = opcode;
		e->cpu = smp_processor_id();
		smp_wmb();	/* the fields before seq is even again */
		WRITE_ONCE(e->seq, seq + 2);
	}
	preempt_enable();
}


/* Select one IPv4 packet against the armed configuration c; inject on a match. */
static void fi_packet(struct sk_buff *skb, const struct fi_cfg *c)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct udphdr _uh;
	const struct udphdr *uh;
	u8 _bth[FI_BTH_LEN];
	const u8 *bth;
	u32 psn, dqpn = 0;
	u8 opcode = 0;
	int off;

	if (iph->protocol != IPPROTO_UDP || (iph->frag_off & htons(IP_OFFSET)))
		return;
	off = skb_network_offset(skb) + iph->ihl * 4;
	uh = skb_header_pointer(skb, off, sizeof(_uh), &_uh);
	if (!uh || ntohs(uh->dest) != c->dport)
		return;
	this_cpu_inc(fi_stats.seen);
	if (c->roce) {
		bth = skb_header_pointer(skb, off + sizeof(_uh), sizeof(_bth), _bth);
		if (!bth)
			return;
		opcode = bth[0];
		dqpn = (u32)bth[5] << 16 | (u32)bth[6] << 8 | bth[7];
		psn = (u32)bth[9] << 16 | (u32)bth[10] << 8 | bth[11];
		if (c->op != FI_OP_ANY && fi_op_class(opcode) != c->op)
			return;
		if (c->dqpn && dqpn != c->dqpn)
			return;
		this_cpu_inc(fi_stats.matched);
	} else {
		psn = (u32)(this_cpu_inc_return(fi_stats.matched) - 1);
	}
	if ((c->psn == FI_PSN_EVEN && (psn & 1)) ||
	    (c->psn == FI_PSN_ODD && !(psn & 1)) ||
	    (c->psn == FI_PSN_HASH && !ls_psn_hash_bit(psn)))
		return;
	fi_inject(c->delay_ns, psn, dqpn, opcode);
}

/* The netfilter hook: disarmed, one pointer load; never drops. */
static unsigned int fi_hook(void *priv, struct sk_buff *skb,
			    const struct nf_hook_state *state)
{
	const struct fi_cfg *c;

	rcu_read_lock();
	c = rcu_dereference(fi_active);
	if (c)
		fi_packet(skb, c);
	rcu_read_unlock();
	return NF_ACCEPT;
}

static struct nf_hook_ops fi_nf_ops = {
	.hook = fi_hook,
	.pf = NFPROTO_IPV4,
	.hooknum = NF_INET_PRE_ROUTING,
	.priority = NF_IP_PRI_FIRST,
};

/* Index of s in names[0..n), or -EINVAL. */
static int fi_match_name(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -EINVAL;
}

/* Parse one config line (NUL-terminated, modified) into *c; *off for "off". */
static int fi_parse(char *line, struct fi_cfg *c, bool *off)
{
	enum { K_DELAY, K_OP, K_PSN, K_DQPN, K_DPORT, K_ROCE, K_ARMED, K_NR };
	static const char *const keys[K_NR] = {
		[K_DELAY] = "delay_ns", [K_OP] = "op", [K_PSN] = "psn",
		[K_DQPN] = "dqpn", [K_DPORT] = "dport", [K_ROCE] = "roce",
		[K_ARMED] = "armed",
	};
	unsigned int have = 0;
	char *p = strim(line), *tok, *val;
	bool flag;
	int k, v;

	*off = false;
	if (!*p)
		return -EINVAL;
	if (!strcmp(p, "off")) {
		*off = true;
		return 0;
	}
	memset(c, 0, sizeof(*c));
	c->dport = FI_ROCE_PORT;
	c->armed = true;
	while ((tok = strsep(&p, " \t")) != NULL) {
		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		k = fi_match_name(tok, keys, K_NR);
		if (k < 0 || (have & BIT(k)))
			return -EINVAL;
		have |= BIT(k);
		switch (k) {
		case K_DELAY:
			if (kstrtou64(val, 10, &c->delay_ns) ||
			    c->delay_ns > FI_DELAY_MAX)
				return -EINVAL;
			break;
		case K_OP:
			v = fi_match_name(val, fi_op_names, ARRAY_SIZE(fi_op_names));
			if (v < 0)
				return -EINVAL;
			c->op = v;
			break;
		case K_PSN:
			v = fi_match_name(val, fi_psn_names, ARRAY_SIZE(fi_psn_names));
			if (v < 0)
				return -EINVAL;
			c->psn = v;
			break;
		case K_DQPN:	/* decimal, or hex with 0x as perftest prints it */
			v = val[0] == '0' && (val[1] == 'x' || val[1] == 'X') ? 16 : 10;
			if (kstrtou32(val, v, &c->dqpn) || c->dqpn > 0xffffff)
				return -EINVAL;
			break;
		case K_DPORT:
			if (kstrtou16(val, 10, &c->dport) || !c->dport)
				return -EINVAL;
			break;
		case K_ROCE:
		case K_ARMED:
			if (strcmp(val, "0") && strcmp(val, "1"))
				return -EINVAL;
			flag = val[0] == '1';
			if (k == K_ROCE)
				c->roce = flag;
			else
				c->armed = flag;
			break;
		}
	}
	if (!have)
		return -EINVAL;
	if (!(have & BIT(K_ROCE)))
		c->roce = c->dport == FI_ROCE_PORT;
	if (!c->roce && (c->op != FI_OP_ANY || c->dqpn))
		return -EINVAL;
	return 0;
}

/* Make settings c current (off: the current ones, disarmed); publish if armed. */
static int fi_apply(const struct fi_cfg *c, bool off)
{
	struct fi_cfg *new = NULL, *old;

	mutex_lock(&fi_mutex);
	if (off) {
		fi_settings.armed = false;
	} else {
		if (c->armed) {
			new = kmemdup(c, sizeof(*c), GFP_KERNEL);
			if (!new) {
				mutex_unlock(&fi_mutex);
				return -ENOMEM;
			}
		}
		fi_settings = *c;
	}
	old = rcu_replace_pointer(fi_active, new, lockdep_is_held(&fi_mutex));
	synchronize_rcu();	/* no hook still reads old */
	mutex_unlock(&fi_mutex);
	kfree(old);
	return 0;
}

/* open for every file: root only. */
static int fi_check_admin(void)
{
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

/* write `config`: one line, validated whole, then applied. */
static ssize_t fi_config_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct fi_cfg c;
	bool off;
	char *buf;
	int err;

	if (!count || count > FI_LINE_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	if (strlen(buf) != count) {	/* embedded NUL */
		err = -EINVAL;
		goto out;
	}
	err = fi_parse(buf, &c, &off);
	if (err)
		goto out;
	err = fi_apply(&c, off);
out:
	kfree(buf);
	return err ? err : count;
}

/* seq_file show for `config`: the settings as a line that can be written back. */
static int fi_config_show(struct seq_file *m, void *v)
{
	struct fi_cfg c;

	mutex_lock(&fi_mutex);
	c = fi_settings;
	mutex_unlock(&fi_mutex);
	seq_printf(m, "armed=%d delay_ns=%llu op=%s psn=%s dqpn=%u dport=%u roce=%d\n",
		   c.armed, c.delay_ns, fi_op_names[c.op], fi_psn_names[c.psn],
		   c.dqpn, c.dport, c.roce);
	return 0;
}

/* open `config`. */
static int fi_config_open(struct inode *inode, struct file *file)
{
	return fi_check_admin() ?: single_open(file, fi_config_show, NULL);
}

static const struct file_operations fi_config_fops = {
	.owner = THIS_MODULE,
	.open = fi_config_open,
	.read = seq_read,
	.write = fi_config_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* seq_file show for `stats`: per-CPU lines and a total line. */
static int fi_stats_show(struct seq_file *m, void *v)
{
	u64 seen = 0, matched = 0, injected = 0, ns = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		const struct fi_stats *s = per_cpu_ptr(&fi_stats, cpu);
		u64 a = READ_ONCE(s->seen), b = READ_ONCE(s->matched);
		u64 c = READ_ONCE(s->injected), d = READ_ONCE(s->ns);

		seq_printf(m, "cpu %u seen %llu matched %llu injected %llu ns %llu\n",
			   cpu, a, b, c, d);
		seen += a;
		matched += b;
		injected += c;
		ns += d;
	}
	seq_printf(m, "total seen %llu matched %llu injected %llu ns %llu\n",
		   seen, matched, injected, ns);
	return 0;
}

/* write `stats`: any write zeroes the counters and empties the logs. */
static ssize_t fi_stats_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	unsigned int cpu;

	mutex_lock(&fi_mutex);
	for_each_possible_cpu(cpu) {
		struct fi_stats *s = per_cpu_ptr(&fi_stats, cpu);

		WRITE_ONCE(s->seen, 0);
		WRITE_ONCE(s->matched, 0);
		WRITE_ONCE(s->injected, 0);
		WRITE_ONCE(s->ns, 0);
		/* head only grows; entries up to it are hidden from `log`. */
		WRITE_ONCE(s->floor, READ_ONCE(s->head));
	}
	mutex_unlock(&fi_mutex);
	return count;
}

/* open `stats`. */
static int fi_stats_open(struct inode *inode, struct file *file)
{
	return fi_check_admin() ?: single_open(file, fi_stats_show, NULL);
}

static const struct file_operations fi_stats_fops = {
	.owner = THIS_MODULE,
	.open = fi_stats_open,
	.read = seq_read,
	.write = fi_stats_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* seq_file start for `log`: position = cpu * FI_RING_LEN + slot. */
static void *fi_log_start(struct seq_file *m, loff_t *pos)
{
	if (*pos < 0 || *pos >= (loff_t)nr_cpu_ids * FI_RING_LEN)
		return NULL;
	return pos;
}

/* seq_file next for `log`. */
static void *fi_log_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return fi_log_start(m, pos);
}

/* seq_file stop for `log`: nothing held. */
static void fi_log_stop(struct seq_file *m, void *v)
{
}

/* seq_file show for `log`: one slot; unused, reset or torn entries print nothing. */
static int fi_log_show(struct seq_file *m, void *v)
{
	const struct fi_entry *e;
	struct fi_entry copy;
	struct fi_ring *ring;
	unsigned int cpu;
	u32 slot, seq;

	cpu = div_u64_rem(*(loff_t *)v, FI_RING_LEN, &slot);
	if (!cpu_possible(cpu))
		return 0;
	ring = per_cpu(fi_ring, cpu);
	if (!ring)
		return 0;
	e = &ring->e[slot];
	seq = READ_ONCE(e->seq);
	if (!seq || (seq & 1))
		return 0;
	smp_rmb();	/* the fields after seq */
	copy = *e;
	smp_rmb();	/* the fields before seq again */
	if (READ_ONCE(e->seq) != seq)
		return 0;
	if (copy.idx <= READ_ONCE(per_cpu(fi_stats.floor, cpu)))
		return 0;
	seq_printf(m, "%u %llu %llu %u %u %u\n", copy.cpu, copy.start_ns,
		   copy.end_ns, copy.psn, copy.dqpn, copy.opcode);
	return 0;
}

static const struct seq_operations fi_log_sops = {
	.start = fi_log_start,
	.next = fi_log_next,
	.stop = fi_log_stop,
	.show = fi_log_show,
};

/* open `log`. */
static int fi_log_open(struct inode *inode, struct file *file)
{
	return fi_check_admin() ?: seq_open(file, &fi_log_sops);
}

static const struct file_operations fi_log_fops = {
	.owner = THIS_MODULE,
	.open = fi_log_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = seq_release,
};

/* Free every CPU's log ring. */
static void fi_rings_free(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		vfree(per_cpu(fi_ring, cpu));
		per_cpu(fi_ring, cpu) = NULL;
	}
}

/* Allocate a zeroed log ring for every possible CPU. */
static int fi_rings_alloc(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		per_cpu(fi_ring, cpu) = vzalloc_node(sizeof(struct fi_ring),
						     cpu_to_node(cpu));
		if (!per_cpu(fi_ring, cpu)) {
			fi_rings_free();
			return -ENOMEM;
		}
	}
	return 0;
}

/* Create the debugfs directory and its three files. */
static int fi_debugfs_init(void)
{
	struct dentry *d;

	fi_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	if (IS_ERR(fi_dir))
		return PTR_ERR(fi_dir);
	d = debugfs_create_file("config", 0600, fi_dir, NULL, &fi_config_fops);
	if (IS_ERR(d))
		goto fail;
	d = debugfs_create_file("stats", 0600, fi_dir, NULL, &fi_stats_fops);
	if (IS_ERR(d))
		goto fail;
	d = debugfs_create_file("log", 0400, fi_dir, NULL, &fi_log_fops);
	if (IS_ERR(d))
		goto fail;
	return 0;
fail:
	debugfs_remove_recursive(fi_dir);
	fi_dir = NULL;
	return PTR_ERR(d);
}

/* Module load: rings, then debugfs, then the hook (disarmed). */
static int __init fi_init(void)
{
	int err;

	fi_settings.dport = FI_ROCE_PORT;
	fi_settings.roce = true;
	err = fi_rings_alloc();
	if (err)
		return err;
	err = fi_debugfs_init();
	if (err)
		goto fail_rings;
	err = nf_register_net_hook(&init_net, &fi_nf_ops);
	if (err)
		goto fail_debugfs;
	pr_info("loaded, disarmed\n");
	return 0;

fail_debugfs:
	debugfs_remove_recursive(fi_dir);
fail_rings:
	fi_rings_free();
	return err;
}

/* Module unload: the hook first, then debugfs, then the state. */
static void __exit fi_exit(void)
{
	struct fi_cfg *old;

	nf_unregister_net_hook(&init_net, &fi_nf_ops);
	debugfs_remove_recursive(fi_dir);
	old = rcu_replace_pointer(fi_active, NULL, true);
	synchronize_rcu();
	kfree(old);
	fi_rings_free();
	pr_info("unloaded\n");
}

module_init(fi_init);
module_exit(fi_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("latsplit lab: busy-wait fault injection on selected RoCEv2 packets (tests only)");
