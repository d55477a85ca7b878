// SPDX-License-Identifier: GPL-2.0
/*
 * KVERBS_IOC_PING: argument checks, the rping payload, results.
 */
#include "ping.h"

#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

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
 * Returns true when every byte matches.
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
 * Returns 0, or -EFAULT when the caller's log cannot be written.
 */
int kverbs_ping_log(struct kverbs_ping_run *run, const void *data, u32 len)
{
	void __user *slot;
	u32 n;

	if (!run->log_buf)
		return 0;
	slot = run->log_buf + (run->log_seq_val % run->log_slots) *
			      (u64)run->log_slot_size;
	n = min(len, run->log_slot_size);
	if (copy_to_user(slot, data, n))
		return -EFAULT;
	if (n < run->log_slot_size && clear_user(slot + n, run->log_slot_size - n))
		return -EFAULT;
	/* The reader trusts a slot once it sees the count cover it. */
	smp_wmb();
	run->log_seq_val++;
	if (put_user(run->log_seq_val, run->log_seq))
		return -EFAULT;
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

static int kverbs_ping_parse(struct kverbs_ping *cmd, struct kverbs_ping_run *run)
{
	const struct kverbs_ping_log *log = &cmd->log;
	bool server = cmd->role == KVERBS_ROLE_SERVER;
	int ret;

	if (cmd->flags & ~(KVERBS_PING_F_VALIDATE | KVERBS_PING_F_PERSISTENT))
		return -EINVAL;
	if (cmd->__reserved0)
		return -EINVAL;
	if (cmd->role != KVERBS_ROLE_CLIENT && !server)
		return -EINVAL;
	if (!server && (cmd->flags & KVERBS_PING_F_PERSISTENT))
		return -EINVAL;
	if (cmd->msg_size && cmd->msg_size < KVERBS_PING_MIN_SIZE)
		return -EINVAL;
	if (!cmd->msg_size && !server)
		return -EINVAL;
	if (cmd->msg_size > kverbs_max_msg_size)
		return -EMSGSIZE;

	ret = kverbs_test_parse(&run->common, server, cmd->timeout_ns,
				&cmd->addr, &cmd->src_addr);
	if (ret)
		return ret;

	if (log->buf || log->seq || log->slots || log->slot_size) {
		if (!log->buf || !log->seq || !log->slots || !log->slot_size)
			return -EINVAL;
		if ((u64)log->slots * log->slot_size > KVERBS_MAX_LOG_BYTES)
			return -EINVAL;
		run->log_buf = u64_to_user_ptr(log->buf);
		run->log_seq = u64_to_user_ptr(log->seq);
		run->log_slots = log->slots;
		run->log_slot_size = log->slot_size;
	}

	run->flags = cmd->flags;
	run->count = cmd->count;
	run->msg_size = cmd->msg_size ?: kverbs_max_msg_size;
	return 0;
}

/**
 * kverbs_ping_cmd - KVERBS_IOC_PING
 * @cmd: the caller's arguments; @cmd->result is filled in, also on failure
 * @refused: the error the ping was refused with before it began, or 0
 *
 * Returns 0 when the ping completed, else a negative errno as
 * include/uapi/kverbs.h lists them.
 */
int kverbs_ping_cmd(struct kverbs_ping *cmd, int refused)
{
	struct kverbs_ping_result *res = &cmd->result;
	struct kverbs_ping_run *run;
	int ret;

	memset(res, 0, sizeof(*res));
	run = refused ? NULL : kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run) {
		res->error = refused ?: -ENOMEM;
		res->failed_step = KVERBS_STEP_SETUP;
		return res->error;
	}
	run->result = res;

	ret = kverbs_ping_parse(cmd, run);
	if (!ret && cmd->role == KVERBS_ROLE_SERVER)
		ret = kverbs_ping_server(run);
	else if (!ret)
		ret = kverbs_ping_client(run);
	kverbs_test_report(res, &run->common, ret);
	kfree(run);
	return ret;
}
