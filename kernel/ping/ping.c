// SPDX-License-Identifier: GPL-2.0
/*
 * KVERBS_IOC_PING: argument checks, the rping payload, results.
 */
#include "ping.h"

#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

/* rping's payload: "rdma-ping-%d: " then a run of 'A'..'z', NUL at the end. */
#define KVERBS_PING_FIRST	'A'
#define KVERBS_PING_LAST	'z'
#define KVERBS_PING_RUN		(KVERBS_PING_LAST - KVERBS_PING_FIRST + 1)

/* Largest payload log, so that a caller cannot make us write gigabytes. */
#define KVERBS_MAX_LOG_BYTES	(64U << 20)

static u32 kverbs_ping_prefix(char *buf, u32 len, u64 iter)
{
	/* rping prints an int; up to INT_MAX this is the same. */
	return scnprintf(buf, len, "rdma-ping-%u: ", (u32)iter);
}

/**
 * kverbs_ping_fill - write the rping payload of iteration @iter
 * @buf: where
 * @len: its size, at least KVERBS_PING_MIN_SIZE
 * @iter: iteration number, from 0
 */
void kverbs_ping_fill(void *buf, u32 len, u64 iter)
{
	char *p = buf;
	u32 i = kverbs_ping_prefix(p, len, iter);
	char c = KVERBS_PING_FIRST + do_div(iter, KVERBS_PING_RUN);

	for (; i < len - 1; i++) {
		p[i] = c;
		c = c == KVERBS_PING_LAST ? KVERBS_PING_FIRST : c + 1;
	}
	p[len - 1] = '\0';
}

/**
 * kverbs_ping_check - compare @buf with the payload of iteration @iter
 * @buf: the data
 * @len: its size, at least KVERBS_PING_MIN_SIZE
 * @iter: iteration number
 * @offset: set to the first differing byte when they differ
 *
 * Return: true when every byte matches.
 */
bool kverbs_ping_check(const void *buf, u32 len, u64 iter, u32 *offset)
{
	const char *p = buf;
	char prefix[32];
	u32 i, n = kverbs_ping_prefix(prefix, sizeof(prefix), iter);
	char c = KVERBS_PING_FIRST + do_div(iter, KVERBS_PING_RUN);

	for (i = 0; i < n; i++)
		if (p[i] != prefix[i])
			goto mismatch;
	for (; i < len - 1; i++) {
		if (p[i] != c)
			goto mismatch;
		c = c == KVERBS_PING_LAST ? KVERBS_PING_FIRST : c + 1;
	}
	if (p[i] == '\0')
		return true;
mismatch:
	*offset = i;
	return false;
}

/**
 * kverbs_ping_log - store one iteration's payload for the caller
 * @run: the ping
 * @data: the payload
 * @len: its size
 *
 * The log is pinned (kverbs_ping_pin_log()): this never faults, and so
 * never waits on the caller's memory while the ping holds a device.
 */
void kverbs_ping_log(struct kverbs_ping_run *run, const void *data, u32 len)
{
	u32 n, slot;
	void *p;

	if (!run->log_slots)
		return;
	div_u64_rem(run->log_seq_val, run->log_slots, &slot);
	p = run->log.kaddr + (size_t)slot * run->log_slot_size;
	n = min(len, run->log_slot_size);
	memcpy(p, data, n);
	memset(p + n, 0, run->log_slot_size - n);
	kverbs_ubuf_written(&run->log, p, run->log_slot_size);
	/* The reader trusts a slot once it sees the count cover it. */
	smp_wmb();
	run->log_seq_val++;
	WRITE_ONCE(*(u64 *)run->log_seq.kaddr, run->log_seq_val);
	kverbs_ubuf_written(&run->log_seq, run->log_seq.kaddr, sizeof(u64));
}

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

/**
 * kverbs_ping_account - count a completed iteration
 * @run: the ping
 * @start_ns: when the iteration started, ktime_get_ns()
 * @len: bytes read, and written, in it
 */
void kverbs_ping_account(struct kverbs_ping_run *run, u64 start_ns, u32 len)
{
	struct kverbs_ping_result *res = run->result;
	u64 now = ktime_get_ns(), ns = now - start_ns;

	if (!res->iterations) {
		run->first_ns = start_ns;
		res->iter_ns_min = ns;
	}
	res->iterations++;
	res->bytes_read += len;
	res->bytes_written += len;
	res->iter_ns_min = min(res->iter_ns_min, ns);
	res->iter_ns_max = max(res->iter_ns_max, ns);
	run->total_ns += ns;
	res->iter_ns_avg = div64_u64(run->total_ns, res->iterations);
	res->elapsed_ns = now - run->first_ns;
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
	if (cmd->msg_size > kverbs_max_msg_size)
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
			(cmd->flags & KVERBS_PING_F_UD ? 0 : kverbs_max_msg_size);
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
