// SPDX-License-Identifier: GPL-2.0
/*
 * KVERBS_IOC_PING, the command: the caller's arguments checked, its log
 * pinned, then the client's or the server's side run, over RC
 * (ping_client.c, ping_server.c) or UD (ping_ud.c), and the result
 * handed back.  The top's to call (chardev.c).
 */
#include "ping.h"

#include <linux/slab.h>

/* Largest payload log, so that a caller cannot make us write gigabytes. */
#define KVERBS_MAX_LOG_BYTES	(64U << 20)

/*
 * Pin the caller's log and counter before the ping holds anything (see
 * ubuf.c).  Returns 0, or the failure recorded as KVERBS_STEP_LOG:
 * -EFAULT for memory the caller cannot write, -EOPNOTSUPP for a shared
 * mapping, -ENOBUFS past max_pinned_mb, -EDQUOT past
 * max_pinned_mb_per_user.
 */
static int kverbs_ping_pin_log(struct kverbs_ping_run *run,
			       const struct kverbs_ping_log *log)
{
	int ret;

	if (!run->log_slots)
		return 0;
	/* In u64, as kverbs_ping_parse() checked it. */
	ret = kverbs_ubuf_pin(&run->log, log->buf,
			      (u64)log->slots * log->slot_size);
	if (!ret)
		ret = kverbs_ubuf_pin(&run->log_seq, log->seq, sizeof(u64));
	if (ret)
		return kverbs_test_failed(&run->common, ret, KVERBS_STEP_LOG);
	return 0;
}

static int kverbs_ping_parse(struct kverbs_ping *cmd, struct kverbs_listener *lsn,
			     struct kverbs_ping_run *run)
{
	const struct kverbs_ping_log *log = &cmd->log;
	bool server = cmd->role == KVERBS_ROLE_SERVER;
	int ret;

	if (cmd->flags & ~(KVERBS_PING_F_VALIDATE | KVERBS_PING_F_PERSISTENT |
			   KVERBS_PING_F_LISTENER | KVERBS_PING_F_NO_INV |
			   KVERBS_PING_F_UD))
		return -EINVAL;
	if (cmd->__reserved0 || cmd->__reserved1)
		return -EINVAL;
	/*
	 * udaddy's exchange: every message of the call is in flight at once,
	 * and there is no connection for a listener or remote invalidation.
	 */
	if ((cmd->flags & KVERBS_PING_F_UD) &&
	    ((cmd->flags & (KVERBS_PING_F_PERSISTENT | KVERBS_PING_F_LISTENER |
			    KVERBS_PING_F_NO_INV)) ||
	     !cmd->count || cmd->count > KVERBS_PING_UD_MAX_COUNT))
		return -EINVAL;
	if (cmd->role != KVERBS_ROLE_CLIENT && !server)
		return -EINVAL;
	if (!server && (cmd->flags & (KVERBS_PING_F_PERSISTENT | KVERBS_PING_F_LISTENER)))
		return -EINVAL;
	/* As accept(2) on a socket that does not listen. */
	if (cmd->flags & KVERBS_PING_F_LISTENER) {
		if (!lsn || memchr_inv(&cmd->addr, 0, sizeof(cmd->addr)))
			return -EINVAL;
		run->lsn = lsn;
	}
	if (cmd->msg_size && cmd->msg_size < KVERBS_PING_MIN_SIZE)
		return -EINVAL;
	if (!cmd->msg_size && !server)
		return -EINVAL;
	if (cmd->msg_size > kverbs_test_max_msg_size())
		return -EMSGSIZE;

	ret = kverbs_test_parse(&run->common, server, cmd->timeout_ns,
				run->lsn ? NULL : &cmd->addr, &cmd->src_addr);
	if (ret)
		return ret;

	if (log->buf || log->seq || log->slots || log->slot_size) {
		if (!log->buf || !log->seq || !log->slots || !log->slot_size)
			return -EINVAL;
		if ((u64)log->slots * log->slot_size > KVERBS_MAX_LOG_BYTES)
			return -EINVAL;
		/* A __u64 the reader loads in one access. */
		if (!IS_ALIGNED(log->seq, sizeof(u64)))
			return -EINVAL;
		run->log_slots = log->slots;
		run->log_slot_size = log->slot_size;
	}

	run->flags = cmd->flags;
	run->count = cmd->count;
	/* A datagram server's default is the path MTU, known once bound. */
	run->msg_size = cmd->msg_size ?:
			(cmd->flags & KVERBS_PING_F_UD ? 0 : kverbs_test_max_msg_size());
	return 0;
}

/**
 * kverbs_ping_cmd - KVERBS_IOC_PING
 * @cmd: the caller's arguments; @cmd->result, .inv_remote, .inv_sent,
 *	.path_mtu, .remote_qpn and .remote_qkey are filled in, also on
 *	failure
 * @refused: the error the ping was refused with before it began, or 0
 * @lsn: the file's listener (KVERBS_IOC_LISTEN), or NULL if it has none
 *
 * Return: 0 when the ping completed, else a negative errno as
 * include/uapi/kverbs.h lists them.
 */
int kverbs_ping_cmd(struct kverbs_ping *cmd, int refused,
		    struct kverbs_listener *lsn)
{
	struct kverbs_ping_result *res = &cmd->result;
	struct kverbs_ping_run *run;
	int ret;

	memset(res, 0, sizeof(*res));
	cmd->inv_remote = 0;
	cmd->inv_sent = 0;
	cmd->path_mtu = 0;
	cmd->remote_qpn = 0;
	cmd->remote_qkey = 0;
	run = refused ? NULL : kzalloc(sizeof(*run), GFP_KERNEL_ACCOUNT);
	if (!run) {
		res->error = refused ?: -ENOMEM;
		res->valid = refused ? KVERBS_RESULT_REFUSED : 0;
		res->failed_step = KVERBS_STEP_SETUP;
		return res->error;
	}
	run->result = res;

	ret = kverbs_ping_parse(cmd, lsn, run);
	if (!ret)
		ret = kverbs_ping_pin_log(run, &cmd->log);
	if (!ret && (run->flags & KVERBS_PING_F_UD))
		ret = cmd->role == KVERBS_ROLE_SERVER ? kverbs_ud_server(run) :
							 kverbs_ud_client(run);
	else if (!ret && cmd->role == KVERBS_ROLE_SERVER)
		ret = kverbs_ping_server(run);
	else if (!ret)
		ret = kverbs_ping_client(run);
	kverbs_test_report(res, &run->common, ret);
	cmd->inv_remote = run->inv_remote;
	cmd->inv_sent = run->inv_sent;
	cmd->path_mtu = run->path_mtu;
	cmd->remote_qpn = run->remote_qpn;
	cmd->remote_qkey = run->remote_qkey;
	kverbs_ubuf_unpin(&run->log_seq);
	kverbs_ubuf_unpin(&run->log);
	kfree(run);
	return ret;
}
