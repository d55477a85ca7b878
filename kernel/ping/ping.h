/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rping-compatible ping, shared by its client and server halves.
 *
 * Per iteration, as rdma-core's rping does it, the client advertises its
 * source (REG_MR, remote read), the server READs it and sends a
 * go-ahead; the client advertises its sink (REG_MR, remote write), the
 * server WRITEs it and sends a go-ahead; the client checks the sink.
 * Every message is struct kverbs_ping_info, 16 bytes, big-endian.
 * Between two kverbs ends that agreed on it in their hellos
 * (KVERBS_PING_HELLO_INV), each go-ahead is a SEND with invalidate of the
 * key it answers, and the client posts no LOCAL_INV.
 * Documentation/architecture.rst, "The ping" and "Remote invalidation in
 * the ping", has the exchange in full.
 */
#ifndef _KVERBS_PING_H
#define _KVERBS_PING_H

#include "kverbs.h"
#include "ping_proto.h"

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
 * @inv_remote: &kverbs_ping.inv_remote
 * @inv_sent: &kverbs_ping.inv_sent
 * @path_mtu: &kverbs_ping.path_mtu (KVERBS_PING_F_UD)
 * @remote_qpn: &kverbs_ping.remote_qpn
 * @remote_qkey: &kverbs_ping.remote_qkey
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
	u64 inv_remote;
	u64 inv_sent;
	u32 path_mtu;
	u32 remote_qpn;
	u32 remote_qkey;
};

int kverbs_ping_client(struct kverbs_ping_run *run);
int kverbs_ping_server(struct kverbs_ping_run *run);
/* ping_ud.c: the same ping over datagrams, as udaddy (KVERBS_PING_F_UD) */
int kverbs_ud_client(struct kverbs_ping_run *run);
int kverbs_ud_server(struct kverbs_ping_run *run);

void kverbs_ping_fill(void *buf, u32 len, u64 iter);
bool kverbs_ping_check(const void *buf, u32 len, u64 iter, u32 *offset);
void kverbs_ping_log(struct kverbs_ping_run *run, const void *data, u32 len);
void kverbs_ping_account(struct kverbs_ping_run *run, u64 start_ns, u32 len);

/*
 * KVERBS_IOC_PING, for chardev.c: @refused is the error the ping was
 * refused with before it began (a limit on sessions), else 0.
 */
int kverbs_ping_cmd(struct kverbs_ping *cmd, int refused,
		    struct kverbs_listener *lsn);

#endif /* _KVERBS_PING_H */
