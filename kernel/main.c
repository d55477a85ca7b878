// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs: an in-kernel RDMA upper-layer protocol for testing kernel verbs.
 *
 * Module entry points and parameters.  The ib_client comes up first, so
 * that /dev/kverbs never exists without the device list behind it.
 */
#include "kverbs.h"
#include "fault.h"

#include <linux/math64.h>
#include <linux/module.h>

unsigned int kverbs_max_msg_size = 4 << 20;
module_param_named(max_msg_size, kverbs_max_msg_size, uint, 0644);
MODULE_PARM_DESC(max_msg_size,
		 "largest ping message in bytes (default 4 MiB); devices may allow less");

/*
 * Within what an ioctl's timeout_ns may ask for: 0 is not "no limit"
 * here, the waits need a bound.
 */
static int kverbs_timeout_ms_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1,
				     div_u64(KVERBS_MAX_TIMEOUT_NS, NSEC_PER_MSEC));
}

static const struct kernel_param_ops kverbs_timeout_ms_ops = {
	.set = kverbs_timeout_ms_set,
	.get = param_get_uint,
};

unsigned int kverbs_timeout_ms = 10000;
module_param_cb(timeout_ms, &kverbs_timeout_ms_ops, &kverbs_timeout_ms, 0644);
MODULE_PARM_DESC(timeout_ms,
		 "default limit on each step of a test, in ms, 1 to 3600000 (default 10000)");

/*
 * Limits, so that no caller can make the module pin memory or hold
 * connections without bound: past one, a test fails with a clear errno
 * (ENFILE, EMFILE, EDQUOT, ENOBUFS) instead of pushing the machine into
 * OOM.  The per-user ones (user.c) are half the module's, so that one
 * user at its limits leaves room for another.
 */
unsigned int kverbs_max_sessions = 256;
module_param_named(max_sessions, kverbs_max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions, "tests running at once in all (default 256)");

unsigned int kverbs_max_sessions_per_file = 64;
module_param_named(max_sessions_per_file, kverbs_max_sessions_per_file, uint, 0644);
MODULE_PARM_DESC(max_sessions_per_file,
		 "tests running at once on one open /dev/kverbs (default 64)");

unsigned int kverbs_max_pinned_mb = 1024;
module_param_named(max_pinned_mb, kverbs_max_pinned_mb, uint, 0644);
MODULE_PARM_DESC(max_pinned_mb,
		 "memory all tests together may hold for RDMA, in MiB (default 1024)");

unsigned int kverbs_max_sessions_per_user = 128;
module_param_named(max_sessions_per_user, kverbs_max_sessions_per_user, uint, 0644);
MODULE_PARM_DESC(max_sessions_per_user,
		 "tests one user (effective uid) may run at once (default 128)");

unsigned int kverbs_max_pinned_mb_per_user = 512;
module_param_named(max_pinned_mb_per_user, kverbs_max_pinned_mb_per_user, uint, 0644);
MODULE_PARM_DESC(max_pinned_mb_per_user,
		 "memory one user's tests may hold for RDMA, in MiB (default 512)");

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
