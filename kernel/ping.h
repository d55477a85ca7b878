/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rping-compatible ping, shared by its client and server halves.
 *
 * Per iteration, as rdma-core's rping does it:
 *
 *   client                                 server
 *   fill source buffer with the pattern
 *   REG_MR(source, remote read)
 *   SEND {source iova, rkey, size}  ---->  RDMA READ source into its buffer
 *                                   <----  SEND go-ahead
 *   LOCAL_INV(source)
 *   REG_MR(sink, remote write)
 *   SEND {sink iova, rkey, size}    ---->  RDMA WRITE its buffer to sink
 *                                   <----  SEND go-ahead
 *   check sink against source
 *
 * and the client invalidates the sink before the next iteration.  Every
 * message is struct kverbs_ping_info, 16 bytes, big-endian.
 */
#ifndef _KVERBS_PING_H
#define _KVERBS_PING_H

#include "kverbs.h"

/* The message both sides exchange, as rping lays it out. */
struct kverbs_ping_info {
	__be64 addr;
	__be32 rkey;
	__be32 size;
};

/**
 * struct kverbs_ping_run - one KVERBS_IOC_PING call
 * @common: addresses, time limit and failure, as for every test
 * @flags: KVERBS_PING_F_*
 * @count: iterations, 0 for no limit
 * @msg_size: client: bytes per ping; server: the largest it accepts
 * @log: the caller's buffer for each iteration's payload, pinned; or
 *	unused (@log_slots 0)
 * @log_seq: the caller's counter of stored iterations, pinned
 * @log_slots: slots in @log, 0 for no log
 * @log_slot_size: bytes per slot
 * @log_seq_val: what @log_seq holds
 * @lsn: a server's listener, the file's (KVERBS_PING_F_LISTENER), or NULL
 *	for one of its own
 * @result: the results that go back to userspace
 * @first_ns: when the first iteration started
 * @total_ns: sum of all iteration times
 */
struct kverbs_ping_run {
	struct kverbs_test common;
	u32 flags;
	u32 count;
	u32 msg_size;
	struct kverbs_ubuf log;
	struct kverbs_ubuf log_seq;
	u32 log_slots;
	u32 log_slot_size;
	u64 log_seq_val;
	struct kverbs_listener *lsn;
	struct kverbs_ping_result *result;
	u64 first_ns;
	u64 total_ns;
};

int kverbs_ping_client(struct kverbs_ping_run *run);
int kverbs_ping_server(struct kverbs_ping_run *run);

void kverbs_ping_fill(void *buf, u32 len, u64 iter);
bool kverbs_ping_check(const void *buf, u32 len, u64 iter, u32 *offset);
void kverbs_ping_log(struct kverbs_ping_run *run, const void *data, u32 len);
void kverbs_ping_account(struct kverbs_ping_run *run, u64 start_ns, u32 len);

#endif /* _KVERBS_PING_H */
