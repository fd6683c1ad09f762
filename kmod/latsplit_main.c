// SPDX-License-Identifier: GPL-2.0
/* latsplit.ko: placeholder entry until the module proper lands (issue 3). */
#include <linux/module.h>
#include <linux/init.h>

#include <uapi/latsplit.h>

/* Module entry. */
static int __init latsplit_init(void)
{
	pr_info("latsplit: abi %d loaded\n", LATSPLIT_ABI_VERSION);
	return 0;
}

/* Module exit. */
static void __exit latsplit_exit(void)
{
}

module_init(latsplit_init);
module_exit(latsplit_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("latsplit: per-CPU NIC processing-delay probes");
