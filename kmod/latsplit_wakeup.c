// SPDX-License-Identifier: GPL-2.0
/*
 * latsplit.ko: the WAKEUP stage's hook. A kretprobe on
 * ib_uverbs_comp_handler marks "inside the handler" on this CPU, armed and
 * disarmed by a module notifier as ib_uverbs comes and goes.
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "latsplit.h"
#include "latsplit_obs.h"

/*
 * WAKEUP's start: ib_uverbs_comp_handler (ib_uverbs.ko) queues a completion
 * event and wakes its waiters. A kretprobe marks "inside the handler" on
 * this CPU; sched_waking inside it attributes the wakeup. ib_uverbs may load
 * and unload at any time: a module notifier arms and disarms the hook.
 */
#define LS_WAKEUP_MOD	"ib_uverbs"
#define LS_WAKEUP_SYM	"ib_uverbs_comp_handler"

static DEFINE_MUTEX(ls_hook_mutex);
static bool ls_hook_armed;

#ifdef CONFIG_KRETPROBES
/* kretprobe entry: remember when the outermost handler call began. */
static __always_inline int __ls_comp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	const struct ls_cfg *cfg;
	struct ls_pcpu *pc;
	unsigned long fl;
	int skip = 1;

	local_irq_save(fl);
	rcu_read_lock_sched_notrace();
	cfg = rcu_dereference_sched(ls_active);
	if (cfg && cfg->nr_tasks) {
		pc = this_cpu_ptr(ls_pcpu);
		if (!pc->comp_depth++)
			pc->comp_ts = ktime_get_ns();
		skip = 0;
	}
	rcu_read_unlock_sched_notrace();
	local_irq_restore(fl);
	return skip;
}

/* kretprobe return: leaving the outermost handler call. */
static __always_inline int __ls_comp_ret(struct kretprobe_instance *ri,
					 struct pt_regs *regs)
{
	struct ls_pcpu *pc;
	unsigned long fl;

	local_irq_save(fl);
	pc = this_cpu_ptr(ls_pcpu);
	if (pc->comp_depth && !--pc->comp_depth)
		pc->comp_ts = 0;
	local_irq_restore(fl);
	return 0;
}

/* Run a kretprobe body timed for handler h while tracing (see ls_obs_end). */
static __always_inline int ls_comp_timed(unsigned int h,
					 int (*body)(struct kretprobe_instance *,
						     struct pt_regs *),
					 struct kretprobe_instance *ri,
					 struct pt_regs *regs)
{
	unsigned long fl;
	int ret;
	u64 t0;

	if (!rcu_access_pointer(ls_active))
		return body(ri, regs);
	if (!ls_obs_pick(h)) {
		ret = body(ri, regs);
		ls_obs_guess(h);
		return ret;
	}
	local_irq_save(fl);
	t0 = ktime_get_ns();
	ret = body(ri, regs);
	ls_obs_end(h, t0);
	local_irq_restore(fl);
	return ret;
}

/* kretprobe entry handler, timed. */
static int ls_comp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return ls_comp_timed(LS_H_COMP_ENTRY, __ls_comp_entry, ri, regs);
}

/* kretprobe return handler, timed. */
static int ls_comp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return ls_comp_timed(LS_H_COMP_RET, __ls_comp_ret, ri, regs);
}

static struct kretprobe ls_comp_krp = {
	.kp.symbol_name = LS_WAKEUP_SYM,
	.entry_handler = ls_comp_entry,
	.handler = ls_comp_ret,
};

/* Arm the hook if ib_uverbs is loaded (caller holds ls_hook_mutex). */
static void ls_hook_arm(void)
{
	int err;

	if (ls_hook_armed)
		return;
	memset(&ls_comp_krp.kp, 0, sizeof(ls_comp_krp.kp));
	ls_comp_krp.kp.symbol_name = LS_WAKEUP_SYM;
	ls_comp_krp.nmissed = 0;
	err = register_kretprobe(&ls_comp_krp);
	if (err) {
		pr_debug(LS_NAME ": %s not hooked (%d): WAKEUP off\n",
			 LS_WAKEUP_SYM, err);
		return;
	}
	ls_hook_armed = true;
	pr_info(LS_NAME ": WAKEUP hook on %s armed\n", LS_WAKEUP_SYM);
}

/* Disarm the hook (caller holds ls_hook_mutex). */
static void ls_hook_disarm(void)
{
	if (!ls_hook_armed)
		return;
	unregister_kretprobe(&ls_comp_krp);
	ls_hook_armed = false;
}

/* Module notifier: follow ib_uverbs coming and going. */
static int ls_module_notify(struct notifier_block *nb, unsigned long action,
			    void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, LS_WAKEUP_MOD))
		return NOTIFY_DONE;
	mutex_lock(&ls_hook_mutex);
	if (action == MODULE_STATE_LIVE)
		ls_hook_arm();
	else if (action == MODULE_STATE_GOING)
		ls_hook_disarm();
	mutex_unlock(&ls_hook_mutex);
	return NOTIFY_OK;
}

static struct notifier_block ls_module_nb = {
	.notifier_call = ls_module_notify,
};

/* Start following ib_uverbs and arm the hook if it is already loaded. */
int ls_wakeup_hook_init(void)
{
	int err;

	err = register_module_notifier(&ls_module_nb);
	if (err)
		return err;
	mutex_lock(&ls_hook_mutex);
	ls_hook_arm();
	mutex_unlock(&ls_hook_mutex);
	return 0;
}

/* Stop following ib_uverbs and disarm the hook. */
void ls_wakeup_hook_exit(void)
{
	unregister_module_notifier(&ls_module_nb);
	mutex_lock(&ls_hook_mutex);
	ls_hook_disarm();
	mutex_unlock(&ls_hook_mutex);
}
#else
/* No kretprobes in this kernel: WAKEUP is not measured. */
int ls_wakeup_hook_init(void)
{
	pr_info(LS_NAME ": kernel without kretprobes: WAKEUP off\n");
	return 0;
}

/* Nothing to disarm without kretprobes. */
void ls_wakeup_hook_exit(void)
{
}
#endif

/* True while the ib_uverbs_comp_handler hook is armed. */
bool ls_wakeup_hook_armed(void)
{
	return READ_ONCE(ls_hook_armed);
}
