// SPDX-License-Identifier: GPL-2.0
/*
 * Fault points (fault.h), for the debug lane only: debugfs files under
 * kverbs/ say how long each point stalls, in microseconds, 0 for not
 * at all.  A stall is a busy wait: the points are in completion
 * handlers, which may run in softirq context.
 */
#include "kverbs.h"
#include "fault.h"

#include <linux/debugfs.h>
#include <linux/delay.h>

static struct dentry *kverbs_fault_dir;
static u32 kverbs_fault_us[KVERBS_FAULT_MAX];

static const char * const kverbs_fault_names[KVERBS_FAULT_MAX] = {
	[KVERBS_FAULT_MARKER_DONE] = "marker_done_stall_us",
};

/* At most a tenth of a second: a typo must not stall a CPU for long. */
#define KVERBS_FAULT_MAX_US	100000

void kverbs_fault_stall(enum kverbs_fault where)
{
	u32 us = min_t(u32, READ_ONCE(kverbs_fault_us[where]), KVERBS_FAULT_MAX_US);

	for (; us > 1000; us -= 1000)
		mdelay(1);
	if (us)
		udelay(us);
}

int kverbs_faults_init(void)
{
	int i;

	kverbs_fault_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	for (i = 0; i < KVERBS_FAULT_MAX; i++)
		debugfs_create_u32(kverbs_fault_names[i], 0600, kverbs_fault_dir,
				   &kverbs_fault_us[i]);
	pr_info("fault points compiled in (debugfs %s/)\n", KBUILD_MODNAME);
	return 0;
}

void kverbs_faults_exit(void)
{
	debugfs_remove_recursive(kverbs_fault_dir);
}
