// SPDX-License-Identifier: GPL-2.0
/*
 * What the ping's files share: the rping payload, its log, each
 * iteration's count.  The command itself is ping_cmd.c's.
 */
#include "ping.h"

#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

/* rping's payload: "rdma-ping-%d: " then a run of 'A'..'z', NUL at the end. */
#define KVERBS_PING_FIRST	'A'
#define KVERBS_PING_LAST	'z'
#define KVERBS_PING_RUN		(KVERBS_PING_LAST - KVERBS_PING_FIRST + 1)

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
