// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit.ko: per-CPU NIC processing-delay probes.
 *
 * Timestamps, per CPU, what the kernel does for a NIC between "the device
 * raised an interrupt" and "the work is processed" (hard IRQ, softirq wait
 * and run, NAPI polls, completion, wakeup, interference, preemption) into
 * log-linear histograms and an optional interval-record stream, with the
 * ABI of include/uapi/latsplit.h. Control and data: debugfs, see
 * Documentation/kmod.rst.
 *
 * This file: module parameters, the configuration and its swap, init/exit.
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdesc.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "latsplit.h"

static char *irqs = "";
module_param(irqs, charp, 0444);
MODULE_PARM_DESC(irqs, "IRQ numbers to watch from load, e.g. \"24,25\" (default none)");

static char *cpus = "";
module_param(cpus, charp, 0444);
MODULE_PARM_DESC(cpus, "CPUs whose hardirq+softirq time is INTERFERENCE, a cpulist such as \"0-1\" (default none)");

static unsigned int ring_kib = 64;
module_param(ring_kib, uint, 0444);
MODULE_PARM_DESC(ring_kib, "record ring per CPU in KiB, 0 = histograms only (default 64, max 65536)");

static bool enable;
module_param(enable, bool, 0444);
MODULE_PARM_DESC(enable, "start tracing at load (default off)");

static unsigned long completion_max_us = 1000000;
module_param(completion_max_us, ulong, 0444);
MODULE_PARM_DESC(completion_max_us, "longest COMPLETION interval kept; an older pending interrupt is dropped (default 1000000 = 1 s)");

/*
 * A benchmark's A/A control: while set, an "enable" turns tracing on in
 * every respect but one, the probes are not given the configuration, so
 * they return at once as when stopped. The enable and disable transitions
 * (grace period included) are the real ones: what recording costs minus
 * what switching it costs. Read at each enable.
 */
static bool ls_inert;
module_param_named(inert, ls_inert, bool, 0644);
MODULE_PARM_DESC(inert, "benchmark A/A control: an enable publishes no configuration, the probes stay idle (read at each enable; default off)");

struct ls_cfg __rcu *ls_active;		/* what the probes see; NULL = stopped */
struct ls_pcpu __percpu *ls_pcpu;
unsigned long ls_completion_max_ns;

static DEFINE_MUTEX(ls_ctl_mutex);	/* the control path */
static struct ls_cfg *ls_cur;		/* current configuration (ls_ctl_mutex) */
static bool ls_enabled;			/* ls_is_enabled() outside ls_ctl_mutex */
static bool ls_hist_off;		/* ls_cur->no_hist outside ls_ctl_mutex */
static enum cpuhp_state ls_cpuhp_state;
/*
 * The control file that took ownership (`own`), and its process. While
 * set, other writers get EBUSY; its release disables tracing and frees the
 * rings (after the `records` reader, if one is still open: ls_rings_orphan).
 * All three under ls_ctl_mutex.
 */
static struct file *ls_owner;
static struct pid *ls_owner_pid;
static bool ls_rings_orphan;

/* True while tracing is on. */
bool ls_is_enabled(void)
{
	/* Pairs with smp_store_release() in ls_commit() and ls_stop(). */
	return smp_load_acquire(&ls_enabled);
}

/* LS_HDR_F_* for the hist header. */
u32 ls_hdr_flags(void)
{
	u32 f = 0;

	if (ls_is_enabled())
		f |= LS_HDR_F_ENABLED;
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		f |= LS_HDR_F_PREEMPT_RT;
	if (ls_wakeup_hook_armed())
		f |= LS_HDR_F_WAKEUP_HOOK;
	if (READ_ONCE(ls_hist_off))
		f |= LS_HDR_F_NO_HIST;
	return f;
}

/* Copy the watched IRQ list (for the hist header); returns the count. */
u32 ls_cfg_irqs(u32 *out)
{
	u32 n;

	mutex_lock(&ls_ctl_mutex);
	n = ls_cur->nr_irqs;
	memcpy(out, ls_cur->irqs, n * sizeof(*out));
	mutex_unlock(&ls_ctl_mutex);
	return n;
}

/* Forget every interval in flight on one CPU (its probes cannot run). */
void ls_pcpu_clear_transient(struct ls_pcpu *pc)
{
	memset(&pc->transient, 0, sizeof(pc->transient));
}

/* Forget every interval in flight on every CPU (probes stopped). */
static void ls_clear_all_transient(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		ls_pcpu_clear_transient(per_cpu_ptr(ls_pcpu, cpu));
	ls_tasks_clear();
}

/*
 * CPU hotplug, prepare step (the CPU is still down, so none of its probes
 * runs): start it clean, and give it a ring if records are on and it has
 * none (rings exist for CPUs that were online when configured). The caller
 * holds the hotplug lock; ls_ctl_apply() takes it before ls_ctl_mutex.
 */
static int ls_cpu_prepare(unsigned int cpu)
{
	ls_pcpu_clear_transient(per_cpu_ptr(ls_pcpu, cpu));
	mutex_lock(&ls_ctl_mutex);
	if (ls_cur->ring_kib && !per_cpu_ptr(ls_pcpu, cpu)->ring &&
	    ls_ring_add_cpu(cpu, ls_cur->ring_kib))
		pr_warn(LS_NAME ": cpu %u: no memory for its record ring: its records are lost\n",
			cpu);
	mutex_unlock(&ls_ctl_mutex);
	return 0;
}

/* The handler thread of an IRQ (first action that has one), or 0. */
static pid_t ls_irq_thread_pid(unsigned int irq)
{
	struct irq_data *d = irq_get_irq_data(irq);
	struct irq_desc *desc;
	struct irqaction *a;
	unsigned long fl;
	pid_t pid = 0;

	if (!d)
		return 0;
	desc = irq_data_to_desc(d);
	raw_spin_lock_irqsave(&desc->lock, fl);
	for (a = desc->action; a; a = a->next) {
		if (a->thread) {
			pid = a->thread->pid;
			break;
		}
	}
	raw_spin_unlock_irqrestore(&desc->lock, fl);
	return pid;
}

/* A control request: the configuration it builds and the actions it asks for. */
struct ls_ctl_req {
	struct ls_cfg cfg;
	bool irqs_changed;
	bool ring_changed;
	bool hist_changed;
	bool reset;
	bool own;			/* `own`: the writer takes the module */
	int enable;			/* -1 unchanged, 0 disable, 1 enable */
};

/* Parse "none" or a comma list of unsigned ints into v (at most max). */
static int ls_parse_list(char *arg, u32 *v, u32 max, u32 *n)
{
	char *tok;
	u32 i;
	int err;

	*n = 0;
	if (!strcmp(arg, "none"))
		return 0;
	if (!*arg)
		return -EINVAL;
	while ((tok = strsep(&arg, ",")) != NULL) {
		if (*n >= max)
			return -EINVAL;
		err = kstrtou32(strim(tok), 10, &v[*n]);
		if (err)
			return -EINVAL;
		for (i = 0; i < *n; i++)
			if (v[i] == v[*n])
				return -EINVAL;
		(*n)++;
	}
	return 0;
}

/* `irqs LIST`: every IRQ must exist and have a handler. */
static int ls_verb_irqs(struct ls_ctl_req *req, char *arg)
{
	u32 v[LS_MAX_IRQS], n, i;
	int err;

	err = ls_parse_list(arg, v, LS_MAX_IRQS, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (v[i] >= nr_irqs || !irq_has_action(v[i])) {
			pr_debug(LS_NAME ": irq %u: no such IRQ or no handler\n", v[i]);
			return -EINVAL;
		}
	}
	req->cfg.nr_irqs = n;
	memcpy(req->cfg.irqs, v, sizeof(v));
	req->irqs_changed = true;
	return 0;
}

/* `cpus LIST`: online CPUs below LS_MAX_CPUS, or none. */
static int ls_verb_cpus(struct ls_ctl_req *req, char *arg)
{
	struct cpumask *m = &req->cfg.cpus;

	if (!strcmp(arg, "none")) {
		cpumask_clear(m);
		return 0;
	}
	if (!*arg || cpulist_parse(arg, m))
		return -EINVAL;
	if (cpumask_empty(m) || !cpumask_subset(m, cpu_online_mask) ||
	    cpumask_last(m) >= LS_MAX_CPUS)
		return -EINVAL;
	return 0;
}

/* `tasks LIST`: thread ids (writer's pid namespace) of live tasks. */
static int ls_verb_tasks(struct ls_ctl_req *req, char *arg)
{
	u32 v[LS_MAX_TASKS], n, i, j;
	struct task_struct *t;
	int err;

	err = ls_parse_list(arg, v, LS_MAX_TASKS, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (!v[i] || v[i] > PID_MAX_LIMIT)
			return -EINVAL;
		rcu_read_lock();
		t = pid_task(find_vpid(v[i]), PIDTYPE_PID);
		req->cfg.tasks[i] = t ? task_pid_nr(t) : 0;
		rcu_read_unlock();
		if (!req->cfg.tasks[i])
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (req->cfg.tasks[j] == req->cfg.tasks[i])
				return -EINVAL;
	}
	req->cfg.nr_tasks = n;
	return 0;
}

/* `ring KIB`: record ring per CPU. */
static int ls_verb_ring(struct ls_ctl_req *req, char *arg)
{
	u32 kib;

	if (kstrtou32(arg, 10, &kib) || kib > LS_RING_MAX_KIB)
		return -EINVAL;
	if (kib != req->cfg.ring_kib)
		req->ring_changed = true;
	req->cfg.ring_kib = kib;
	return 0;
}

/* `hist on|off`: keep the histograms, or records only. */
static int ls_verb_hist(struct ls_ctl_req *req, char *arg)
{
	bool off;

	if (!strcmp(arg, "on"))
		off = false;
	else if (!strcmp(arg, "off"))
		off = true;
	else
		return -EINVAL;
	if (off != req->cfg.no_hist)
		req->hist_changed = true;
	req->cfg.no_hist = off;
	return 0;
}

/* Parse one line "VERB [ARG]" into req. */
static int ls_parse_line(struct ls_ctl_req *req, char *line)
{
	char *verb, *arg;

	line = strim(line);
	if (!*line)
		return 0;
	verb = strsep(&line, " \t");
	arg = line ? strim(line) : NULL;
	if (!strcmp(verb, "enable") || !strcmp(verb, "disable") ||
	    !strcmp(verb, "reset") || !strcmp(verb, "own")) {
		if (arg && *arg)
			return -EINVAL;
		if (!strcmp(verb, "reset"))
			req->reset = true;
		else if (!strcmp(verb, "own"))
			req->own = true;
		else
			req->enable = !strcmp(verb, "enable");
		return 0;
	}
	if (!arg)
		return -EINVAL;
	if (!strcmp(verb, "irqs"))
		return ls_verb_irqs(req, arg);
	if (!strcmp(verb, "cpus"))
		return ls_verb_cpus(req, arg);
	if (!strcmp(verb, "tasks"))
		return ls_verb_tasks(req, arg);
	if (!strcmp(verb, "ring"))
		return ls_verb_ring(req, arg);
	if (!strcmp(verb, "hist"))
		return ls_verb_hist(req, arg);
	return -EINVAL;
}

/*
 * Apply a validated request: stop the probes, swap configuration and
 * rings, reset, restart. Caller holds ls_ctl_mutex. Nothing changes unless
 * every allocation succeeded.
 */
static int ls_commit(struct ls_ctl_req *req)
{
	struct ls_ring **rings = NULL;
	bool was_on = ls_enabled, on;
	struct ls_cfg *cfg, *old;
	u32 i;
	int err;

	/* records only, without a ring, would keep nothing */
	if (req->cfg.no_hist && !req->cfg.ring_kib)
		return -EINVAL;
	on = req->enable < 0 ? was_on : req->enable;
	cfg = kmemdup(&req->cfg, sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;
	/* Threads may have come and gone since the IRQ list was written. */
	for (i = 0; i < cfg->nr_irqs; i++)
		cfg->irq_thread[i] = ls_irq_thread_pid(cfg->irqs[i]);
	if (req->ring_changed) {
		if (ls_records_busy()) {
			err = -EBUSY;
			goto fail_cfg;
		}
		rings = kcalloc(nr_cpu_ids, sizeof(*rings), GFP_KERNEL);
		if (!rings) {
			err = -ENOMEM;
			goto fail_cfg;
		}
		if (cfg->ring_kib) {
			err = ls_rings_alloc(rings, cfg->ring_kib);
			if (err)
				goto fail_rings;
		}
	}

	/* Stop: after the grace period no probe holds the old cfg. */
	if (was_on) {
		RCU_INIT_POINTER(ls_active, NULL);
		synchronize_rcu();
	}
	ls_clear_all_transient();
	if (rings) {
		ls_rings_install(rings);	/* rings[] now holds the old ones */
		ls_rings_orphan = false;
	}
	old = ls_cur;
	ls_cur = cfg;
	if (req->irqs_changed || req->hist_changed || req->reset)
		ls_hist_reset();	/* IRQ slots change meaning; none kept */
	WRITE_ONCE(ls_hist_off, cfg->no_hist);
	if (req->reset)
		ls_obs_reset();
	if (req->reset || req->ring_changed)
		ls_rings_reset();
	smp_store_release(&ls_enabled, on);
	if (on && !READ_ONCE(ls_inert))
		rcu_assign_pointer(ls_active, cfg);
	else
		ls_records_wake();	/* readers see end of file */
	kfree(old);
	if (rings) {
		ls_rings_free(rings);
		kfree(rings);
	}
	return 0;

fail_rings:
	kfree(rings);
fail_cfg:
	kfree(cfg);
	return err;
}

/*
 * Apply control text written through file (NULL: the module's parameters):
 * one or more verb lines, validated as a whole and applied all or nothing.
 * nowait: -EBUSY when another writer is active. -EBUSY as well when another
 * file owns the module. The hotplug lock comes first (see ls_cpu_prepare()).
 */
int ls_ctl_apply(const char *text, bool nowait, struct file *file)
{
	struct ls_ctl_req *req;
	char *buf, *p, *line;
	int err;

	buf = kstrdup(text, GFP_KERNEL);
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!buf || !req) {
		err = -ENOMEM;
		goto out;
	}
	cpus_read_lock();
	if (nowait) {
		if (!mutex_trylock(&ls_ctl_mutex)) {
			err = -EBUSY;
			goto out_cpus;
		}
	} else {
		mutex_lock(&ls_ctl_mutex);
	}
	if (ls_owner && ls_owner != file) {
		err = -EBUSY;
		goto unlock;
	}
	req->cfg = *ls_cur;
	req->enable = -1;
	p = buf;
	while ((line = strsep(&p, "\n")) != NULL) {
		err = ls_parse_line(req, line);
		if (err)
			goto unlock;
	}
	if (req->own && !file) {
		err = -EINVAL;
		goto unlock;
	}
	err = ls_commit(req);
	if (!err && req->own && !ls_owner) {
		ls_owner = file;
		ls_owner_pid = get_pid(task_tgid(current));
	}
unlock:
	mutex_unlock(&ls_ctl_mutex);
out_cpus:
	cpus_read_unlock();
out:
	kfree(req);
	kfree(buf);
	return err;
}

/* Disable tracing without a new configuration (nothing to allocate). */
static void ls_disable_now(void)
{
	RCU_INIT_POINTER(ls_active, NULL);
	synchronize_rcu();
	smp_store_release(&ls_enabled, false);
	ls_records_wake();
}

/*
 * Stop tracing and free the rings, keeping the rest of the configuration;
 * the rings only once no reader has `records` open (else ls_rings_orphan
 * is set, and the reader's release comes back here). Caller holds the
 * hotplug lock and ls_ctl_mutex.
 */
static void ls_quiesce(void)
{
	struct ls_ctl_req *req = kzalloc(sizeof(*req), GFP_KERNEL);

	ls_rings_orphan = false;
	if (req) {
		req->cfg = *ls_cur;
		req->enable = 0;
		if (ls_records_busy()) {
			ls_rings_orphan = req->cfg.ring_kib != 0;
		} else {
			req->ring_changed = req->cfg.ring_kib != 0;
			req->hist_changed = req->cfg.no_hist;
			req->cfg.ring_kib = 0;
			req->cfg.no_hist = false;
		}
	}
	if (!req || ls_commit(req)) {
		pr_warn(LS_NAME ": no memory to free the rings: tracing disabled, rings kept\n");
		ls_disable_now();
	}
	kfree(req);
}

/* `control` released: if file owned the module, disown it and quiesce. */
void ls_ctl_release(struct file *file)
{
	cpus_read_lock();
	mutex_lock(&ls_ctl_mutex);
	if (ls_owner == file) {
		ls_owner = NULL;
		put_pid(ls_owner_pid);
		ls_owner_pid = NULL;
		ls_quiesce();
	}
	mutex_unlock(&ls_ctl_mutex);
	cpus_read_unlock();
}

/* `records` released: free the rings a departed owner left to it. */
void ls_ctl_records_closed(void)
{
	cpus_read_lock();
	mutex_lock(&ls_ctl_mutex);
	if (ls_rings_orphan && !ls_owner && !ls_records_busy())
		ls_quiesce();
	mutex_unlock(&ls_ctl_mutex);
	cpus_read_unlock();
}

/* seq_file helper: "key a,b,c" or "key none". */
static void ls_show_list(struct seq_file *m, const char *key, const u32 *v,
			 u32 n)
{
	u32 i;

	seq_printf(m, "%s ", key);
	if (!n)
		seq_puts(m, "none");
	for (i = 0; i < n; i++)
		seq_printf(m, "%s%u", i ? "," : "", v[i]);
	seq_putc(m, '\n');
}

/* The `config` file: the current configuration, one "key value" per line. */
int ls_cfg_show(struct seq_file *m)
{
	const struct ls_cfg *c;
	u32 i;

	mutex_lock(&ls_ctl_mutex);
	c = ls_cur;
	seq_printf(m, "abi %d\n", LATSPLIT_ABI_VERSION);
	seq_printf(m, "enabled %d\n", ls_enabled);
	/* enabled, but the probes were given nothing: the A/A control */
	seq_printf(m, "inert %d\n", ls_enabled && !rcu_access_pointer(ls_active));
	ls_show_list(m, "irqs", c->irqs, c->nr_irqs);
	seq_puts(m, "irq_threads ");
	if (!c->nr_irqs)
		seq_puts(m, "none");
	for (i = 0; i < c->nr_irqs; i++)
		seq_printf(m, "%s%u:%d", i ? "," : "", c->irqs[i],
			   c->irq_thread[i]);
	seq_putc(m, '\n');
	if (cpumask_empty(&c->cpus))
		seq_puts(m, "cpus none\n");
	else
		seq_printf(m, "cpus %*pbl\n", cpumask_pr_args(&c->cpus));
	ls_show_list(m, "tasks", (const u32 *)c->tasks, c->nr_tasks);
	seq_printf(m, "ring_kib %u\n", c->ring_kib);
	seq_printf(m, "rings %u\n", ls_rings_count());
	seq_printf(m, "hist %s\n", c->no_hist ? "off" : "on");
	seq_printf(m, "ring_records %zu\n", c->ring_kib ?
		   (size_t)rounddown_pow_of_two((size_t)c->ring_kib * 1024 /
						sizeof(struct ls_record)) : 0);
	seq_printf(m, "completion_max_ns %lu\n", ls_completion_max_ns);
	seq_printf(m, "wakeup_hook %s\n", ls_wakeup_hook_armed() ? "armed" : "off");
	seq_printf(m, "preempt_rt %d\n", IS_ENABLED(CONFIG_PREEMPT_RT) ? 1 : 0);
	seq_printf(m, "nr_cpu_ids %u\n", nr_cpu_ids);
	/* the owner's process id as this reader sees it (0: not visible) */
	if (ls_owner)
		seq_printf(m, "owner %d\n", pid_vnr(ls_owner_pid));
	else
		seq_puts(m, "owner none\n");
	mutex_unlock(&ls_ctl_mutex);
	return 0;
}

/* Stop tracing for good (module exit). */
static void ls_stop(void)
{
	mutex_lock(&ls_ctl_mutex);
	ls_disable_now();
	mutex_unlock(&ls_ctl_mutex);
}

/* Free every CPU's histograms and rings. */
static void ls_pcpu_free(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ls_pcpu *pc = per_cpu_ptr(ls_pcpu, cpu);

		vfree(pc->ring);
		pc->ring = NULL;
		kvfree(pc->hist);
		pc->hist = NULL;
	}
	free_percpu(ls_pcpu);
}

/* Allocate per-CPU state and histograms for every possible CPU. */
static int ls_pcpu_alloc(void)
{
	unsigned int cpu;

	ls_pcpu = alloc_percpu(struct ls_pcpu);
	if (!ls_pcpu)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct ls_pcpu *pc = per_cpu_ptr(ls_pcpu, cpu);

		pc->hist = kvzalloc_node(LS_NR_SLOTS * sizeof(struct ls_hist),
					 GFP_KERNEL, cpu_to_node(cpu));
		if (!pc->hist) {
			ls_pcpu_free();
			return -ENOMEM;
		}
	}
	return 0;
}

/* Build the control text that module parameters stand for. */
static char *ls_param_text(void)
{
	return kasprintf(GFP_KERNEL, "irqs %s\ncpus %s\nring %u\n%s\n",
			 *irqs ? irqs : "none", *cpus ? cpus : "none", ring_kib,
			 enable ? "enable" : "disable");
}

/* Module entry. */
static int __init latsplit_init(void)
{
	char *text;
	int err;

	ls_completion_max_ns = completion_max_us * NSEC_PER_USEC;
	err = ls_pcpu_alloc();
	if (err)
		return err;
	ls_cur = kzalloc(sizeof(*ls_cur), GFP_KERNEL);
	if (!ls_cur) {
		err = -ENOMEM;
		goto fail_pcpu;
	}
	err = ls_ring_init();
	if (err)
		goto fail_cfg;
	err = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "latsplit:prepare",
					ls_cpu_prepare, NULL);
	if (err < 0)
		goto fail_ring;
	ls_cpuhp_state = err;
	err = ls_probes_register();
	if (err)
		goto fail_cpuhp;
	err = ls_wakeup_hook_init();
	if (err)
		goto fail_probes;
	err = ls_debugfs_init();
	if (err)
		goto fail_hook;
	text = ls_param_text();
	if (!text) {
		err = -ENOMEM;
		goto fail_debugfs;
	}
	err = ls_ctl_apply(text, false, NULL);
	kfree(text);
	if (err) {
		pr_err(LS_NAME ": bad module parameters (irqs=\"%s\" cpus=\"%s\" ring_kib=%u): %d\n",
		       irqs, cpus, ring_kib, err);
		goto fail_debugfs;
	}
	pr_info(LS_NAME ": abi %d loaded%s\n", LATSPLIT_ABI_VERSION,
		IS_ENABLED(CONFIG_PREEMPT_RT) ? " (PREEMPT_RT)" : "");
	return 0;

fail_debugfs:
	ls_debugfs_exit();
	ls_stop();
fail_hook:
	ls_wakeup_hook_exit();
fail_probes:
	ls_probes_unregister();
fail_cpuhp:
	cpuhp_remove_state_nocalls(ls_cpuhp_state);
fail_ring:
	ls_ring_exit();
fail_cfg:
	kfree(ls_cur);
fail_pcpu:
	ls_pcpu_free();
	return err;
}

/* Module exit: stop, detach everything, wait for stragglers, free. */
static void __exit latsplit_exit(void)
{
	ls_debugfs_exit();
	ls_stop();
	ls_wakeup_hook_exit();
	ls_probes_unregister();
	cpuhp_remove_state_nocalls(ls_cpuhp_state);
	ls_ring_exit();
	kfree(ls_cur);
	ls_pcpu_free();
}

module_init(latsplit_init);
module_exit(latsplit_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("latsplit: per-CPU NIC processing-delay probes");
MODULE_AUTHOR("latsplit developers");
