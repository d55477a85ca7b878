// SPDX-License-Identifier: GPL-2.0
/*
 * KVERBS_IOC_LESSON, the command: the lessons' table, the caller's
 * arguments checked, the lesson's listener, the lesson given and its
 * report handed back.  The top's to call (chardev.c); the lessons
 * (lessons.c) and their harness (lesson.c) are what this calls.
 */
#include "lesson.h"

#include <linux/random.h>
#include <linux/slab.h>

/**
 * struct kverbs_lesson_def - a lesson in the table
 * @id: its &enum kverbs_lesson_id
 * @run: gives it: each run begun with kverbs_lesson_begin() and ended
 *	with kverbs_lesson_end(); returns 0 when every run ran, whatever
 *	its outcome, else the failure that stopped the lesson
 * @refuse: whether the device's port cannot show it, or NULL
 */
struct kverbs_lesson_def {
	u32 id;
	int (*run)(struct kverbs_lesson_ctx *lc);
	bool (*refuse)(struct ib_device *ibdev, u32 port);
};

/* iWARP has no receiver-not-ready: a SEND that finds no receive ends it. */
static bool kverbs_lesson_is_iwarp(struct ib_device *ibdev, u32 port)
{
	return rdma_protocol_iwarp(ibdev, port);
}

static bool kverbs_lesson_mr_too_big(struct ib_device *ibdev, u32 port)
{
	return kverbs_lesson_mr_size_refuse(ibdev);
}

/* An atomic's alignment cannot be shown without atomics (siw). */
static bool kverbs_lesson_no_atomics(struct ib_device *ibdev, u32 port)
{
	return ibdev->attrs.atomic_cap == IB_ATOMIC_NONE;
}

static const struct kverbs_lesson_def kverbs_lessons[] = {
	{ KVERBS_LESSON_UNSIGNALED, kverbs_lesson_unsignaled, NULL },
	{ KVERBS_LESSON_RNR, kverbs_lesson_rnr, kverbs_lesson_is_iwarp },
	{ KVERBS_LESSON_FENCE, kverbs_lesson_fence, NULL },
	{ KVERBS_LESSON_ACCESS, kverbs_lesson_access, NULL },
	{ KVERBS_LESSON_STALE_KEY, kverbs_lesson_stale_key, NULL },
	{ KVERBS_LESSON_MAX_SGE, kverbs_lesson_max_sge, NULL },
	{ KVERBS_LESSON_ALIGN, kverbs_lesson_align, kverbs_lesson_no_atomics },
	{ KVERBS_LESSON_MR_SIZE, kverbs_lesson_mr_size, kverbs_lesson_mr_too_big },
};

static const struct kverbs_lesson_def *kverbs_lesson_find(u32 id)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kverbs_lessons); i++)
		if (kverbs_lessons[i].id == id)
			return &kverbs_lessons[i];
	return NULL;
}

static int kverbs_lesson_give(struct kverbs_lesson_ctx *lc,
			      const struct kverbs_lesson_def *def)
{
	struct rdma_cm_id *id;
	int ret;

	lc->lsn = kverbs_test_listen(&lc->common);
	if (IS_ERR(lc->lsn)) {
		ret = PTR_ERR(lc->lsn);
		lc->lsn = NULL;
		return ret;
	}
	id = lc->lsn->id;
	/* A wildcard names no device to give the lesson on. */
	if (!id->device)
		return kverbs_test_failed(&lc->common, -EINVAL, KVERBS_STEP_LISTEN);
	if (def->refuse && def->refuse(id->device, id->port_num))
		return kverbs_test_failed(&lc->common, -EOPNOTSUPP, KVERBS_STEP_SETUP);
	/* The client connects to the port rdma_cm bound the listener to. */
	memcpy(&lc->common.addr, &id->route.addr.src_addr, sizeof(lc->common.addr));
	get_random_bytes(lc->nonce, sizeof(lc->nonce));
	ret = def->run(lc);
	kverbs_lesson_end(lc);
	return ret;
}

/**
 * kverbs_lesson_cmd - KVERBS_IOC_LESSON
 * @cmd: the caller's arguments; the runs and the lesson's failure are
 *	filled in, also on failure
 * @refused: the error the lesson was refused with before it began, or 0
 *
 * Return: 0 when the lesson ran, else a negative errno as
 * include/uapi/kverbs.h lists them.
 */
int kverbs_lesson_cmd(struct kverbs_lesson *cmd, int refused)
{
	const struct kverbs_lesson_def *def;
	struct kverbs_lesson_ctx *lc;
	int ret;

	cmd->nruns = 0;
	cmd->error = 0;
	cmd->failed_step = KVERBS_STEP_NONE;
	memset(cmd->runs, 0, sizeof(cmd->runs));
	if (refused) {
		cmd->error = refused;
		cmd->failed_step = KVERBS_STEP_SETUP;
		return refused;
	}
	if (cmd->flags || cmd->__reserved0 || cmd->__reserved1 ||
	    cmd->timeout_ns > KVERBS_MAX_TIMEOUT_NS ||
	    kverbs_sockaddr_check(&cmd->addr, false))
		return -EINVAL;
	def = kverbs_lesson_find(cmd->lesson);
	if (!def)
		return -ENOENT;

	lc = kzalloc(sizeof(*lc), GFP_KERNEL_ACCOUNT);
	if (!lc) {
		cmd->error = -ENOMEM;
		cmd->failed_step = KVERBS_STEP_SETUP;
		return -ENOMEM;
	}
	lc->cmd = cmd;
	lc->common.timeout_ns = cmd->timeout_ns ?: kverbs_test_timeout_ns();
	memcpy(&lc->common.addr, &cmd->addr, sizeof(lc->common.addr));

	ret = kverbs_lesson_give(lc, def);
	kverbs_listener_destroy(lc->lsn);
	if (ret) {
		cmd->error = lc->common.fail.error ?: ret;
		cmd->failed_step = lc->common.fail.step ?: KVERBS_STEP_SETUP;
	}
	kfree(lc);
	return ret;
}
