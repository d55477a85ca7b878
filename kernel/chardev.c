// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kverbs and its ioctl table.
 *
 * Every command takes one struct that starts with its own size.  The
 * table below says how large the kernel's struct is and how small a
 * caller's may be; kverbs_fops_ioctl() copies the argument in with
 * copy_struct_from_user(), which accepts larger structs from newer
 * callers as long as the bytes this module does not know are zero.
 */
#include "kverbs.h"
#include "chardev.h"
#include "lesson.h"
#include "perf.h"
#include "ping.h"

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/uaccess.h>

/**
 * struct kverbs_file - what an open /dev/kverbs holds
 * @sessions: tests running on it now, against max_sessions_per_file
 * @lock: serializes KVERBS_IOC_LISTEN
 * @lsn: the listener KVERBS_IOC_LISTEN made, or NULL.  Set once, under
 *	@lock, and destroyed only when the file is released: no ioctl can
 *	be running then, so a server may use it without a reference.
 */
struct kverbs_file {
	atomic_t sessions;
	struct mutex lock;		/* serializes KVERBS_IOC_LISTEN */
	struct kverbs_listener *lsn;
};

static unsigned int kverbs_max_sessions_per_file = 64;
module_param_named(max_sessions_per_file, kverbs_max_sessions_per_file, uint, 0644);
MODULE_PARM_DESC(max_sessions_per_file,
		 "tests running at once on one open /dev/kverbs (default 64)");

struct kverbs_ucmd {
	struct kverbs_file *file;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

/*
 * Count a test in, or refuse it: -ENFILE past the module's limit, -EMFILE
 * past the file's, -EDQUOT past the caller's user's (or -ENOMEM).  On
 * success *@user is the user charged; kverbs_session_end() counts it out.
 */
static int kverbs_session_begin(struct kverbs_file *kfile,
				struct kverbs_user **user)
{
	struct kverbs_user *charged;
	int ret;

	ret = kverbs_sessions_get();
	if (ret)
		return ret;
	if (atomic_inc_return(&kfile->sessions) >
	    READ_ONCE(kverbs_max_sessions_per_file)) {
		atomic_dec(&kfile->sessions);
		kverbs_sessions_put();
		return -EMFILE;
	}
	charged = kverbs_user_session_begin();
	if (IS_ERR(charged)) {
		atomic_dec(&kfile->sessions);
		kverbs_sessions_put();
		return PTR_ERR(charged);
	}
	*user = charged;
	return 0;
}

static void kverbs_session_end(struct kverbs_file *kfile,
			       struct kverbs_user *user)
{
	kverbs_user_session_end(user);
	atomic_dec(&kfile->sessions);
	kverbs_sessions_put();
}

/* Copy a command's output back, as much of it as the caller's struct holds. */
static int kverbs_ucmd_respond(struct kverbs_ucmd *ucmd, size_t cmd_len)
{
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd,
			 min_t(size_t, ucmd->user_size, cmd_len)))
		return -EFAULT;
	return 0;
}

static int kverbs_info_exec(struct kverbs_ucmd *ucmd)
{
	struct kverbs_info *cmd = ucmd->cmd;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	cmd->abi_version = KVERBS_ABI_VERSION;
	cmd->features = KVERBS_FEATURE_DEVICES | KVERBS_FEATURE_PING |
			KVERBS_FEATURE_PING_LOG | KVERBS_FEATURE_PERF |
			KVERBS_FEATURE_PERF_LAT | KVERBS_FEATURE_PERF_PINGPONG |
			KVERBS_FEATURE_LISTEN | KVERBS_FEATURE_PERF_REVERSE |
			KVERBS_FEATURE_PERF_EVENTS | KVERBS_FEATURE_PING_LISTENER |
			KVERBS_FEATURE_PERF_CEILINGS | KVERBS_FEATURE_LESSON |
			KVERBS_FEATURE_PERF_BUSY_POLL | KVERBS_FEATURE_DEVICE_CAPS |
			KVERBS_FEATURE_PERF_IMM | KVERBS_FEATURE_PERF_POLL |
			KVERBS_FEATURE_PERF_POST | KVERBS_FEATURE_PERF_RW |
			KVERBS_FEATURE_PERF_INV | KVERBS_FEATURE_PERF_SRQ |
			KVERBS_FEATURE_PING_INV | KVERBS_FEATURE_PERF_PHASES |
			KVERBS_FEATURE_PING_UD | KVERBS_FEATURE_PERF_UD |
			KVERBS_FEATURE_PERF_UD_FOREIGN;
	memset(cmd->version, 0, sizeof(cmd->version));
	strscpy(cmd->version, KVERBS_VERSION, sizeof(cmd->version));
	return kverbs_ucmd_respond(ucmd, sizeof(*cmd));
}

static int kverbs_devices_exec(struct kverbs_ucmd *ucmd)
{
	struct kverbs_devices *cmd = ucmd->cmd;
	int ret, ret2;

	ret = kverbs_devices_cmd(cmd);
	if (ret && ret != -ENOSPC)
		return ret;
	/* On -ENOSPC the counts still go back: they say what is needed. */
	ret2 = kverbs_ucmd_respond(ucmd, sizeof(*cmd));
	return ret2 ? ret2 : ret;
}

/**
 * kverbs_test_exec - run a test command, within the limits on sessions
 * @ucmd: the command
 * @run: the test's command function
 * @result_off: where the result is in the command's struct
 * @result_len: its size
 *
 * The result is written back whatever happened, so the caller learns what
 * failed; only the result part, the rest is the caller's input.
 *
 * Return: what the test returned, or -EFAULT when its result could not
 * be written back.
 */
static int kverbs_test_exec(struct kverbs_ucmd *ucmd,
			    int (*run)(void *cmd, int refused,
				       struct kverbs_listener *lsn),
			    size_t result_off, size_t result_len)
{
	struct kverbs_user *user = NULL;
	int refused, ret;

	refused = kverbs_session_begin(ucmd->file, &user);
	/* Pairs with the release in kverbs_listen_exec(). */
	ret = run(ucmd->cmd, refused, smp_load_acquire(&ucmd->file->lsn));
	if (!refused)
		kverbs_session_end(ucmd->file, user);
	if (copy_to_user(ucmd->ubuffer + result_off, ucmd->cmd + result_off,
			 result_len))
		return -EFAULT;
	return ret;
}

static int kverbs_ping_run(void *cmd, int refused,
			   struct kverbs_listener *lsn)
{
	return kverbs_ping_cmd(cmd, refused, lsn);
}

/*
 * The invalidation counts and the datagram ping's path are blocks of
 * output after the result: a caller whose struct predates one does not
 * get it.
 */
#define KVERBS_PING_OUT(first, last)					\
	{ offsetof(struct kverbs_ping, first), offsetofend(struct kverbs_ping, last) }

static const struct {
	size_t start;
	size_t end;
} kverbs_ping_out[] = {
	KVERBS_PING_OUT(inv_remote, inv_sent),
	KVERBS_PING_OUT(path_mtu, remote_qkey),
};

static int kverbs_ping_exec(struct kverbs_ucmd *ucmd)
{
	size_t i, start, end;
	int ret;

	ret = kverbs_test_exec(ucmd, kverbs_ping_run,
			       offsetof(struct kverbs_ping, result),
			       sizeof_field(struct kverbs_ping, result));
	if (ret == -EFAULT)
		return ret;
	for (i = 0; i < ARRAY_SIZE(kverbs_ping_out); i++) {
		start = kverbs_ping_out[i].start;
		end = kverbs_ping_out[i].end;
		if (ucmd->user_size >= end &&
		    copy_to_user(ucmd->ubuffer + start, ucmd->cmd + start, end - start))
			return -EFAULT;
	}
	return ret;
}

static int kverbs_perf_run(void *cmd, int refused,
			   struct kverbs_listener *lsn)
{
	return kverbs_perf_cmd(cmd, refused, lsn);
}

/*
 * The immediate data, the CQ's description, the QP's inline data,
 * rdma_rw's counts, the invalidation counts, the SRQ's and the measured
 * phase's end are further blocks of output, after the result: a caller
 * whose struct predates one does not get it.
 */
/* The output blocks after the result, each [start, end) of struct kverbs_perf. */
#define KVERBS_PERF_OUT(first, last)					\
	{ offsetof(struct kverbs_perf, first), offsetofend(struct kverbs_perf, last) }

static const struct {
	size_t start;
	size_t end;
} kverbs_perf_out[] = {
	KVERBS_PERF_OUT(imm_expected, imm_got),
	KVERBS_PERF_OUT(cq, cq),
	KVERBS_PERF_OUT(max_inline, max_inline),
	KVERBS_PERF_OUT(rw_ctxs, rw_mr_ctxs),
	KVERBS_PERF_OUT(inv_remote, inv_got),
	KVERBS_PERF_OUT(srq_wr, srq_shared),
	KVERBS_PERF_OUT(ended_ns, ended_ns),
	KVERBS_PERF_OUT(lost, foreign),
};

static int kverbs_perf_exec(struct kverbs_ucmd *ucmd)
{
	size_t i, start, end;
	int ret;

	ret = kverbs_test_exec(ucmd, kverbs_perf_run,
			       offsetof(struct kverbs_perf, result),
			       sizeof_field(struct kverbs_perf, result));
	if (ret == -EFAULT)
		return ret;
	for (i = 0; i < ARRAY_SIZE(kverbs_perf_out); i++) {
		start = kverbs_perf_out[i].start;
		end = kverbs_perf_out[i].end;
		if (ucmd->user_size >= end &&
		    copy_to_user(ucmd->ubuffer + start, ucmd->cmd + start, end - start))
			return -EFAULT;
	}
	return ret;
}

static int kverbs_lesson_run(void *cmd, int refused,
			     struct kverbs_listener *lsn)
{
	return kverbs_lesson_cmd(cmd, refused);
}

/* A lesson is a session like any test: it holds two ends of its own. */
static int kverbs_lesson_exec(struct kverbs_ucmd *ucmd)
{
	return kverbs_test_exec(ucmd, kverbs_lesson_run,
				offsetof(struct kverbs_lesson, nruns),
				sizeof(struct kverbs_lesson) -
				offsetof(struct kverbs_lesson, nruns));
}

/*
 * One listener per file, for the servers the file's owner runs, in as
 * many threads as it likes; it is not a test, and counts as none.
 */
static int kverbs_listen_exec(struct kverbs_ucmd *ucmd)
{
	struct kverbs_listen *cmd = ucmd->cmd;
	struct kverbs_file *kfile = ucmd->file;
	struct kverbs_listener *lsn;
	int ret;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	ret = kverbs_sockaddr_check(&cmd->addr, true);
	if (ret)
		return ret;

	mutex_lock(&kfile->lock);
	if (kfile->lsn) {
		ret = -EBUSY;
		goto out_unlock;
	}
	lsn = kverbs_listener_create((struct sockaddr *)&cmd->addr, true,
				     kverbs_test_timeout_ns());
	if (IS_ERR(lsn)) {
		ret = PTR_ERR(lsn);
		goto out_unlock;
	}
	/* Servers on other threads may find it from now on. */
	smp_store_release(&kfile->lsn, lsn);
out_unlock:
	mutex_unlock(&kfile->lock);
	return ret;
}

union kverbs_ucmd_buffer {
	struct kverbs_info info;
	struct kverbs_devices devices;
	struct kverbs_ping ping;
	struct kverbs_perf perf;
	struct kverbs_listen listen;
	struct kverbs_lesson lesson;
};

struct kverbs_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	int (*execute)(struct kverbs_ucmd *ucmd);
};

#define KVERBS_IOCTL_OP(_cmd, _fn, _struct, _last)			\
	[(_cmd) - KVERBS_CMD_BASE] = {					\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union kverbs_ucmd_buffer) < \
					  sizeof(_struct)),		\
		.min_size = offsetofend(_struct, _last),		\
		.execute = _fn,						\
	}

static const struct kverbs_ioctl_op kverbs_ioctl_ops[] = {
	KVERBS_IOCTL_OP(KVERBS_CMD_INFO, kverbs_info_exec, struct kverbs_info,
			version),
	KVERBS_IOCTL_OP(KVERBS_CMD_DEVICES, kverbs_devices_exec,
			struct kverbs_devices, ports),
	KVERBS_IOCTL_OP(KVERBS_CMD_PING, kverbs_ping_exec, struct kverbs_ping,
			result),
	KVERBS_IOCTL_OP(KVERBS_CMD_PERF, kverbs_perf_exec, struct kverbs_perf,
			result),
	KVERBS_IOCTL_OP(KVERBS_CMD_LISTEN, kverbs_listen_exec,
			struct kverbs_listen, __reserved),
	KVERBS_IOCTL_OP(KVERBS_CMD_LESSON, kverbs_lesson_exec,
			struct kverbs_lesson, runs),
};

static long kverbs_fops_ioctl(struct file *filp, unsigned int cmd,
			      unsigned long arg)
{
	const struct kverbs_ioctl_op *op;
	union kverbs_ucmd_buffer buf;
	struct kverbs_ucmd ucmd = {};
	unsigned int nr = _IOC_NR(cmd);
	int ret;

	/* The number carries no size or direction; anything else is not ours. */
	if (nr < KVERBS_CMD_BASE ||
	    nr - KVERBS_CMD_BASE >= ARRAY_SIZE(kverbs_ioctl_ops) ||
	    cmd != _IO(KVERBS_TYPE, nr))
		return -ENOTTY;
	op = &kverbs_ioctl_ops[nr - KVERBS_CMD_BASE];

	ucmd.file = filp->private_data;
	ucmd.ubuffer = (void __user *)arg;
	ret = get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer);
	if (ret)
		return ret;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, ucmd.ubuffer,
				    ucmd.user_size);
	if (ret)
		return ret;
	ucmd.cmd = &buf;
	return op->execute(&ucmd);
}

static int kverbs_fops_open(struct inode *inode, struct file *filp)
{
	struct kverbs_file *kfile;

	kfile = kzalloc(sizeof(*kfile), GFP_KERNEL_ACCOUNT);
	if (!kfile)
		return -ENOMEM;
	mutex_init(&kfile->lock);
	filp->private_data = kfile;
	return nonseekable_open(inode, filp);
}

/* No test can be running: each holds the file for its ioctl's duration. */
static int kverbs_fops_release(struct inode *inode, struct file *filp)
{
	struct kverbs_file *kfile = filp->private_data;

	kverbs_listener_destroy(kfile->lsn);
	mutex_destroy(&kfile->lock);
	kfree(kfile);
	return 0;
}

static const struct file_operations kverbs_fops = {
	.owner = THIS_MODULE,
	.open = kverbs_fops_open,
	.release = kverbs_fops_release,
	.unlocked_ioctl = kverbs_fops_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice kverbs_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kverbs",
	.fops = &kverbs_fops,
	.mode = 0600,
};

int kverbs_chardev_register(void)
{
	return misc_register(&kverbs_miscdev);
}

void kverbs_chardev_unregister(void)
{
	misc_deregister(&kverbs_miscdev);
}
