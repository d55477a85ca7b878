// SPDX-License-Identifier: GPL-2.0
/*
 * KVERBS_IOC_PERF, the command: the caller's arguments checked, its
 * samples pinned, then the client's or the server's side run
 * (perf_session.c) and the result handed back.  The top's to call
 * (chardev.c); the rest of kernel/perf/ is what this calls.
 */
#include "perf.h"

#include <linux/math64.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

/*
 * Bytes in an array of @n samples, in u64: the size_t of a 32-bit kernel
 * wraps at 2^29 samples.
 */
static u64 kverbs_perf_samples_bytes(u32 n)
{
	return (u64)n * sizeof(u64);
}

/* ... and in the array of their phases, two u64 each: wraps at 2^28. */
static u64 kverbs_perf_phases_bytes(u32 n)
{
	return (u64)n * 2 * sizeof(u64);
}

/*
 * Whether a user array of @bytes is outside user space.  One longer than
 * an unsigned long can say, which only a 32-bit kernel sees, is left to
 * the pin: access_ok() would take its length truncated, and
 * kverbs_ubuf_pin() refuses it by the pin limits, as a 64-bit kernel does.
 */
static bool kverbs_perf_array_bad(u64 uaddr, u64 bytes)
{
	return bytes <= ULONG_MAX && !access_ok(u64_to_user_ptr(uaddr), bytes);
}

/*
 * KVERBS_PERF_F_PHASES: the flag and the array go together, with
 * samples, on a latency test whose round trip ends in a completion.
 */
static int kverbs_perf_phases_check(const struct kverbs_perf *cmd,
				    const struct kverbs_perf_ops *t)
{
	bool phases = cmd->flags & KVERBS_PERF_F_PHASES;

	if (phases != !!cmd->phases)
		return -EINVAL;
	if (phases && (!cmd->samples || !t->lat || t->seen_in_memory))
		return -EINVAL;
	return 0;
}

/*
 * KVERBS_PERF_F_SRQ: the bytes of each of the SRQ's receives, room for a
 * control message at least (kverbs_perf_ctrl_len()).
 */
static u32 kverbs_perf_srq_msg_size(const struct kverbs_perf *cmd)
{
	return max_t(u32, cmd->msg_size ?: KVERBS_PERF_SRQ_MSG_SIZE,
		     sizeof(struct kverbs_perf_msg) + 8);
}

/* A server's SRQ fields: 0 when they are fine, else -EINVAL. */
static int kverbs_perf_srq_check(const struct kverbs_perf *cmd)
{
	u32 wr = cmd->srq_wr ?: KVERBS_PERF_SRQ_DEFAULT_WR;

	if (cmd->__reserved_srq)
		return -EINVAL;
	/* The SRQ's size and limit go with the flag. */
	if (!(cmd->flags & KVERBS_PERF_F_SRQ))
		return cmd->srq_wr || cmd->srq_limit ? -EINVAL : 0;
	if (cmd->srq_wr > KVERBS_PERF_SRQ_MAX_WR || cmd->srq_limit > wr ||
	    (u64)wr * kverbs_perf_srq_msg_size(cmd) > KVERBS_PERF_SRQ_MAX_BYTES)
		return -EINVAL;
	return 0;
}

/*
 * How the side polls its CQ, for client and server alike: the effective
 * KVERBS_PERF_POLL_*, or -EINVAL.  -e is --poll softirq; so is the
 * default where the CQ must have interrupts: a pool's, or one with
 * moderation.  A server's KVERBS_PERF_F_BUSY_POLL goes with busy polling
 * only.
 */
static int kverbs_perf_poll_parse(const struct kverbs_perf *cmd)
{
	u32 poll = cmd->poll;

	if (poll > KVERBS_PERF_POLL_UNBOUND_WORKQUEUE ||
	    cmd->cq_flags & ~KVERBS_PERF_CQ_FLAGS)
		return -EINVAL;
	if (!poll && (cmd->flags & KVERBS_PERF_F_EVENTS || cmd->cq_flags))
		poll = KVERBS_PERF_POLL_SOFTIRQ;
	if ((poll == KVERBS_PERF_POLL_DIRECT && cmd->cq_flags) ||
	    (cmd->flags & KVERBS_PERF_F_EVENTS && poll != KVERBS_PERF_POLL_SOFTIRQ) ||
	    (cmd->flags & KVERBS_PERF_F_BUSY_POLL && poll &&
	     poll != KVERBS_PERF_POLL_DIRECT))
		return -EINVAL;
	return poll;
}

/* A server's fields: the client says what to run, the server only limits. */
static int kverbs_perf_server_check(const struct kverbs_perf *cmd,
				    const struct kverbs_listener *lsn)
{
	if (cmd->flags & ~(KVERBS_PERF_F_LISTENER | KVERBS_PERF_F_EVENTS |
			   KVERBS_PERF_F_NO_REVERSE | KVERBS_PERF_F_BUSY_POLL |
			   KVERBS_PERF_F_SRQ) ||
	    cmd->tx_depth ||
	    cmd->iterations || cmd->duration_ns || cmd->samples ||
	    cmd->samples_max || cmd->post_list || cmd->cq_mod ||
	    cmd->inline_size || cmd->phases)
		return -EINVAL;
	/*
	 * The module's ceilings are the admin's: a server may lower them,
	 * not raise them.  Refused rather than clamped, so that a server is
	 * never told it allows more than it does.
	 */
	if (cmd->max_duration_ns > kverbs_perf_max_duration_ns() ||
	    cmd->max_iterations > kverbs_perf_max_iterations())
		return -EINVAL;
	if (kverbs_perf_srq_check(cmd))
		return -EINVAL;
	/* As accept(2) on a socket that does not listen. */
	if (cmd->flags & KVERBS_PERF_F_LISTENER &&
	    (!lsn || memchr_inv(&cmd->addr, 0, sizeof(cmd->addr))))
		return -EINVAL;
	return 0;
}

/* A client's fields, for test @t polled as @poll says. */
static int kverbs_perf_client_check(const struct kverbs_perf *cmd,
				    const struct kverbs_perf_ops *t, u32 poll)
{
	int ret;

	if (cmd->flags & ~(KVERBS_PERF_FLAGS | KVERBS_PERF_F_EVENTS |
			   KVERBS_PERF_F_PHASES))
		return -EINVAL;
	/* The ceilings are the server's, and so is how it receives. */
	if (cmd->max_duration_ns || cmd->max_iterations ||
	    cmd->srq_wr || cmd->srq_limit || cmd->__reserved_srq)
		return -EINVAL;
	/* The client sees each answer by polling its memory. */
	if (poll && poll != KVERBS_PERF_POLL_DIRECT && t->seen_in_memory)
		return -EINVAL;
	if (!cmd->msg_size || cmd->tx_depth > KVERBS_PERF_MAX_DEPTH)
		return -EINVAL;
	if (!cmd->iterations == !cmd->duration_ns ||
	    cmd->duration_ns > KVERBS_PERF_MAX_DURATION_NS)
		return -EINVAL;
	/*
	 * The test's own flags only: CMP_SWAP is an atomic test's, and the
	 * latency tests, which time the client's own operations, have no
	 * REVERSE.
	 */
	if (cmd->flags & KVERBS_PERF_FLAGS & ~t->flags ||
	    !kverbs_perf_flags_agree(cmd->flags))
		return -EINVAL;
	if (t->msg_size && cmd->msg_size != t->msg_size)
		return -EINVAL;
	ret = kverbs_perf_post_check(t, cmd->flags,
				     cmd->tx_depth ?: KVERBS_PERF_DEFAULT_DEPTH,
				     cmd->post_list, cmd->cq_mod, cmd->inline_size);
	if (ret)
		return ret;
	/* Samples are the latency tests' output, and need both fields. */
	if (!cmd->samples != !cmd->samples_max || (cmd->samples && !t->lat))
		return -EINVAL;
	ret = kverbs_perf_phases_check(cmd, t);
	if (ret)
		return ret;
	/*
	 * Datagrams move on a QP and a plain CQ of their own (not a pool's,
	 * no moderation), one signaled message per post.
	 */
	if ((cmd->flags & KVERBS_PERF_F_UD) &&
	    (cmd->post_list > 1 || cmd->cq_mod || cmd->inline_size ||
	     cmd->phases || cmd->cq_flags))
		return -EINVAL;
	/* An array outside user space fails here, with the result zero. */
	if (kverbs_perf_array_bad(cmd->samples,
				  kverbs_perf_samples_bytes(cmd->samples_max)) ||
	    (cmd->phases &&
	     kverbs_perf_array_bad(cmd->phases,
				   kverbs_perf_phases_bytes(cmd->samples_max))))
		return -EFAULT;
	return 0;
}

/* The checked arguments, as the run keeps them. */
static void kverbs_perf_run_fill(struct kverbs_perf_run *run,
				 const struct kverbs_perf *cmd,
				 const struct kverbs_perf_ops *t, u32 poll)
{
	bool server = cmd->role == KVERBS_ROLE_SERVER;

	run->test = cmd->test;
	run->t = t;
	/*
	 * A side's own choice: not in the hello.  A server busy-polls only
	 * when it says so, never because a client asked for a test.
	 */
	run->poll = poll;
	run->cq_flags = cmd->cq_flags;
	if (poll)
		run->events = poll != KVERBS_PERF_POLL_DIRECT;
	else
		run->events = server && !(cmd->flags & KVERBS_PERF_F_BUSY_POLL);
	run->flags = cmd->flags & ~(KVERBS_PERF_F_EVENTS | KVERBS_PERF_F_BUSY_POLL |
				    KVERBS_PERF_F_PHASES | KVERBS_PERF_F_NO_REVERSE |
				    KVERBS_PERF_F_SRQ);
	run->msg_size = cmd->msg_size ?: kverbs_test_max_msg_size();
	run->tx_depth = cmd->tx_depth ?: KVERBS_PERF_DEFAULT_DEPTH;
	/* perftest's latency tests, too, have one operation in flight. */
	if (t && t->lat)
		run->tx_depth = 1;
	run->iterations = cmd->iterations;
	run->duration_ns = cmd->duration_ns;
	run->samples_max = cmd->samples_max;
	run->max_duration_ns = cmd->max_duration_ns;
	run->max_iterations = cmd->max_iterations;
	run->post_list = max_t(u32, cmd->post_list, 1);
	run->cq_mod = cmd->cq_mod;
	run->inline_size = cmd->inline_size;
	run->no_reverse = cmd->flags & KVERBS_PERF_F_NO_REVERSE;
	run->srq = cmd->flags & KVERBS_PERF_F_SRQ;
	if (run->srq) {
		run->srq_wr = cmd->srq_wr ?: KVERBS_PERF_SRQ_DEFAULT_WR;
		run->srq_limit = cmd->srq_limit ?: run->srq_wr / 4;
		run->srq_msg_size = kverbs_perf_srq_msg_size(cmd);
	}
}

/*
 * The caller's arguments, checked for the role it takes, into @run: the
 * checks both roles share here, each role's own in its function.
 */
static int kverbs_perf_parse(struct kverbs_perf *cmd, struct kverbs_listener *lsn,
			     struct kverbs_perf_run *run)
{
	bool server = cmd->role == KVERBS_ROLE_SERVER;
	const struct kverbs_perf_ops *t = kverbs_perf_ops_get(cmd->test);
	int poll, ret;

	if (cmd->role != KVERBS_ROLE_CLIENT && !server)
		return -EINVAL;
	if (cmd->__reserved)
		return -EINVAL;
	poll = kverbs_perf_poll_parse(cmd);
	if (poll < 0)
		return poll;
	/* A server may leave the test to its client: KVERBS_PERF_ANY. */
	if (!t && (cmd->test || !server))
		return -EINVAL;
	ret = server ? kverbs_perf_server_check(cmd, lsn) :
		       kverbs_perf_client_check(cmd, t, poll);
	if (ret)
		return ret;
	if (cmd->msg_size > kverbs_test_max_msg_size())
		return -EMSGSIZE;

	if (cmd->flags & KVERBS_PERF_F_LISTENER)
		run->lsn = lsn;
	ret = kverbs_test_parse(&run->common, server, cmd->timeout_ns,
				run->lsn ? NULL : &cmd->addr, &cmd->src_addr);
	if (ret)
		return ret;
	kverbs_perf_run_fill(run, cmd, t, poll);
	return 0;
}

/**
 * kverbs_perf_cmd - KVERBS_IOC_PERF
 * @cmd: the caller's arguments; @cmd->result is filled in, also on failure
 * @refused: the error the test was refused with before it began, or 0
 * @lsn: the file's listener (KVERBS_IOC_LISTEN), or NULL if it has none
 *
 * Return: 0 when the test completed, else a negative errno as
 * include/uapi/kverbs.h lists them.
 */
int kverbs_perf_cmd(struct kverbs_perf *cmd, int refused,
		    struct kverbs_listener *lsn)
{
	struct kverbs_perf_result *res = &cmd->result;
	struct kverbs_perf_run *run;
	int ret;

	memset(res, 0, sizeof(*res));
	cmd->imm_expected = 0;
	cmd->imm_got = 0;
	cmd->inv_remote = 0;
	cmd->inv_sent = 0;
	cmd->read_inv = 0;
	cmd->inv_expected = 0;
	cmd->inv_got = 0;
	cmd->ended_ns = 0;
	cmd->lost = 0;
	cmd->path_mtu = 0;
	cmd->foreign = 0;
	memset(&cmd->cq, 0, sizeof(cmd->cq));
	cmd->max_inline = 0;
	cmd->rw_ctxs = 0;
	cmd->rw_mr_ctxs = 0;
	cmd->srq_limit_events = 0;
	cmd->srq_shared = 0;
	run = refused ? NULL : kzalloc(sizeof(*run), GFP_KERNEL_ACCOUNT);
	if (!run) {
		res->error = refused ?: -ENOMEM;
		res->valid = refused ? KVERBS_RESULT_REFUSED : 0;
		res->failed_step = KVERBS_STEP_SETUP;
		return res->error;
	}
	run->result = res;
	run->cq = &cmd->cq;

	ret = kverbs_perf_parse(cmd, lsn, run);
	/* Before the test holds a device: see ubuf.c. */
	if (!ret && run->samples_max) {
		ret = kverbs_ubuf_pin(&run->samples, cmd->samples,
				      kverbs_perf_samples_bytes(run->samples_max));
		if (!ret && cmd->phases)
			ret = kverbs_ubuf_pin(&run->phases, cmd->phases,
					      kverbs_perf_phases_bytes(run->samples_max));
		if (ret)
			kverbs_test_failed(&run->common, ret, KVERBS_STEP_SAMPLES);
	}
	if (!ret && cmd->role == KVERBS_ROLE_SERVER) {
		ret = kverbs_perf_server(run);
	} else if (!ret) {
		res->test = run->test;
		res->flags = run->flags;
		res->msg_size = run->msg_size;
		res->tx_depth = run->tx_depth;
		res->count = run->iterations;
		res->duration_ns = run->duration_ns;
		ret = kverbs_perf_client(run);
	}
	kverbs_test_report(res, &run->common, ret);
	cmd->imm_expected = run->imm_expected;
	cmd->imm_got = run->imm_got;
	cmd->max_inline = run->max_inline;
	cmd->rw_ctxs = run->rw_ctxs;
	cmd->rw_mr_ctxs = run->rw_mr_ctxs;
	cmd->inv_remote = run->inv_remote;
	cmd->inv_sent = run->inv_sent;
	cmd->read_inv = run->read_inv;
	cmd->inv_expected = run->inv_expected;
	cmd->inv_got = run->inv_got;
	cmd->ended_ns = run->ended_ns;
	cmd->lost = run->lost;
	cmd->path_mtu = run->path_mtu;
	cmd->foreign = run->foreign;
	if (run->srq) {
		cmd->srq_wr = run->srq_shared ? run->srq_wr : 0;
		cmd->srq_limit = run->srq_shared ? run->srq_limit : 0;
		cmd->srq_limit_events = run->srq_limit_events;
		cmd->srq_shared = run->srq_shared;
	}
	kverbs_ubuf_unpin(&run->phases);
	kverbs_ubuf_unpin(&run->samples);
	kfree(run);
	return ret;
}
