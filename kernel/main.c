// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs: an in-kernel RDMA upper-layer protocol for testing kernel verbs.
 *
 * Module entry points.  The ib_client comes up first, so that
 * /dev/kverbs never exists without the device list behind it.  Each
 * module parameter lives in the file that reads it.
 */
#include "kverbs.h"
#include "chardev.h"

#include <linux/module.h>

static int __init kverbs_init(void)
{
	int ret;

	ret = kverbs_faults_init();
	if (ret)
		return ret;
	ret = kverbs_ep_reap_init();
	if (ret)
		goto out_faults_exit;
	ret = kverbs_devices_register();
	if (ret)
		goto out_reap_flush;
	ret = kverbs_chardev_register();
	if (ret)
		goto out_unregister_client;
	pr_info("version " KVERBS_VERSION " loaded, ABI %u\n", KVERBS_ABI_VERSION);
	return 0;

out_unregister_client:
	kverbs_devices_unregister();
out_reap_flush:
	kverbs_ep_reap_flush();
out_faults_exit:
	kverbs_faults_exit();
	return ret;
}

static void __exit kverbs_exit(void)
{
	kverbs_chardev_unregister();
	/* Removal releases the endpoints that wait for a port; then wait. */
	kverbs_devices_unregister();
	kverbs_ep_reap_flush();
	kverbs_users_exit();
	kverbs_faults_exit();
}

module_init(kverbs_init);
module_exit(kverbs_exit);

MODULE_AUTHOR("The kverbs authors");
MODULE_DESCRIPTION("In-kernel RDMA verbs tests: rping-compatible ping over /dev/kverbs");
MODULE_LICENSE("GPL");
MODULE_VERSION(KVERBS_VERSION);
