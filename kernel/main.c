// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs: an in-kernel RDMA upper-layer protocol for testing kernel verbs.
 *
 * Module entry points and parameters.  The ib_client comes up first, so
 * that /dev/kverbs never exists without the device list behind it.
 */
#include "kverbs.h"

#include <linux/module.h>

unsigned int kverbs_max_msg_size = 4 << 20;
module_param_named(max_msg_size, kverbs_max_msg_size, uint, 0644);
MODULE_PARM_DESC(max_msg_size,
		 "largest ping message in bytes (default 4 MiB); devices may allow less");

unsigned int kverbs_timeout_ms = 10000;
module_param_named(timeout_ms, kverbs_timeout_ms, uint, 0644);
MODULE_PARM_DESC(timeout_ms,
		 "default limit on each step of a test, in ms (default 10000)");

static int __init kverbs_init(void)
{
	int ret;

	ret = kverbs_devices_register();
	if (ret)
		return ret;
	ret = kverbs_chardev_register();
	if (ret)
		goto out_unregister_client;
	pr_info("version " KVERBS_VERSION " loaded, ABI %u\n", KVERBS_ABI_VERSION);
	return 0;

out_unregister_client:
	kverbs_devices_unregister();
	return ret;
}

static void __exit kverbs_exit(void)
{
	kverbs_chardev_unregister();
	kverbs_devices_unregister();
}

module_init(kverbs_init);
module_exit(kverbs_exit);

MODULE_AUTHOR("The kverbs authors");
MODULE_DESCRIPTION("In-kernel RDMA verbs tests: rping-compatible ping over /dev/kverbs");
MODULE_LICENSE("GPL");
MODULE_VERSION(KVERBS_VERSION);
