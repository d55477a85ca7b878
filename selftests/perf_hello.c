// SPDX-License-Identifier: GPL-2.0
/*
 * perf_hello: send a kverbs perf server a hello it must refuse, or a
 * DONE it must not believe, with rdma-core's librdmacm, and print what
 * happened.
 *
 *	perf_hello -a ADDR -p PORT [-V VERSION] [-m MAGIC] [-r] [-l LEN]
 *		   [-n ITERS | -D | -T SEC] [-b] [-t TEST] [-f FLAGS] [-w SEC]
 *		   [-P LIST,MOD,INLINE]
 *	perf_hello -a ADDR -p PORT [-n ITERS | -D | -T SEC] [-k SEC] -d OPS,NS
 *	perf_hello -a ADDR -p PORT -B
 *	perf_hello -a ADDR -p PORT [-t TEST] [-n ITERS] -I ok|K|K,none
 *	perf_hello -a ADDR -p PORT [-n ITERS] -N ok|none|wrong|unasked|old
 *	perf_hello -a ADDR -p PORT [-n ITERS] -S ok|over|linger
 *	perf_hello -a ADDR -p PORT -X KEY[,KEY...]
 *
 * The hello is a valid write_bw request of version 4, 10 messages of 64
 * bytes, except for what the options change: -V its version, -m its
 * magic, -r a reserved byte set, -l its length, -n ITERS messages
 * instead of 10 (any 64-bit number), -D duration mode (one second)
 * instead, -T duration mode of SEC seconds, -b the reverse direction
 * (KVERBS_PERF_F_REVERSE), -t the test (&enum kverbs_perf_test's
 * number), -f FLAGS more bits of &enum kverbs_perf_flags, -P the hello's
 * post_list, cq_mod and inline_size (&kverbs_perf's -l, -Q, -I).  Prints "rejected: reason R value V version S" and exits 0
 * when the server rejected it with a kverbs perf reason, 1 when it
 * accepted it, 2 on any other outcome.  With -w an accepted connection
 * is held SEC seconds before perf_hello hangs up, saying nothing, as a
 * peer that asked for a test and never runs it.
 *
 * With -d the connection must be accepted: perf_hello then plays the
 * requester as far as the protocol goes without data (START, the
 * server's ADV), sends DONE saying OPS messages took NS nanoseconds,
 * prints "done sent" and exits 0 once the server has it (2 otherwise).
 * What the server makes of it is in the server's report.  With -k it
 * first keeps the server busy for SEC seconds, a PROGRESS every 100 ms,
 * as a peer that does not stop when it said it would; if the server
 * ends the connection meanwhile, it prints "cut off after N s" (whole
 * seconds) and exits 3.
 *
 * With -B it asks for read_bw --validate and sends its control messages
 * back to back, as a requester may: after the server's ADV, a PROGRESS
 * and at once a ROUND of one message, both posted before either
 * completes; then, once the server's ROUND_OK is in, a PROGRESS and a
 * DONE of one message the same way.  It prints "done sent" and exits 0
 * once the server has them (2 otherwise).  A server that keeps only one
 * control receive posted loses the connection here on iWARP, which has
 * no receiver-not-ready retry (nor does this peer ask for one).
 *
 * With -I it asks for write_bw (or -t 3, send_bw) with immediate data
 * (KVERBS_PERF_F_IMM) and plays the requester: START, the server's ADV,
 * ITERS messages of 64 bytes (default 10), each an RDMA WRITE with
 * immediate data into the server's slots, or a SEND with immediate
 * data, then DONE.  Message i carries i, as a kverbs requester's does,
 * except with -I K: message K carries K + 1; with -I K,none it carries
 * none (a plain WRITE or SEND).  -I ok sends them all right, the
 * control.  It prints "done sent" and exits 0 once the server has DONE,
 * 2 otherwise (a server that caught a wrong immediate ends the
 * connection, so what perf_hello sees then depends on timing; the
 * server's report is what tells).
 *
 * With -N it asks for write_bw --validate with remote invalidation
 * (KVERBS_PERF_F_INV) and plays the requester: START, the server's ADV,
 * then rounds of as many 64-byte messages as the server has slots, ITERS
 * in all (default 10), each message RDMA WRITTEN with the pattern a
 * kverbs requester writes; each round ends with ROUND as a SEND with
 * invalidate of the key the round used, and the server's ROUND_OK must
 * offer another; then DONE.  That is -N ok, the control.  -N none sends
 * the first ROUND as a plain SEND; -N wrong invalidates the key with its
 * low byte flipped (same MR, another key); -N unasked sends a PROGRESS
 * with invalidate of the server's key before the first round, and then
 * only waits (30 s at most) for the server to hang up: each prints "done
 * sent" and exits 0 if the server took it all, 2 otherwise (the server's
 * report tells what it caught).  -N old plays the first
 * round fair, then WRITEs one message with the key it invalidated,
 * which the server registered again under another: it prints
 * "old key: STATUS" and exits 0 when that WRITE was refused with a
 * remote access error, 1 when it succeeded, 2 otherwise (iWARP refuses
 * it by terminating the connection, after the WRITE completed here).
 *
 * With -S it asks for send_bw and plays its requester against a server
 * with --srq, which grants its SRQ's receives as credits (kernel/core/srq.c)
 * on every transport: START, the server's ADV, which must say it grants
 * (KVERBS_PERF_ADV_GRANTS) and whose slots are the window W; then ITERS
 * SENDs of 64 bytes (default 10), W at a time, the next W once the
 * server's ROUND_OK says it took the last (its count checked); then
 * DONE, which needs a credit too.  That is -S ok, the control: it prints
 * "done sent" and exits 0 once the server has DONE (and on iWARP, where
 * the server goes first, has hung up), 2 otherwise.  -S linger does the
 * same, then goes on SENDing 64-byte messages, one at a time, up to 200:
 * a peer that takes the SRQ's receives while its server waits for it to
 * hang up.  It prints "cut off after K" when the server ended the
 * connection after K of them were in, "sent 200" if it never did, and
 * exits 0 (2 when the run before DONE failed).  -S over sends, after
 * START and the ADV,
 * W + 1 PROGRESS messages, each once the last completed: a message takes
 * a receive and a credit whatever it says, and the server grants the
 * next window for data it took, never for control messages, so the last
 * one is beyond the credits however fast the server is.  It prints
 * "sent" once they all completed here, then waits (30 s at most) for
 * the server to hang up and prints "cut off" when it did, "still
 * connected" if not, and exits 0 (2 when a send failed); the server's
 * report says what it caught.
 *
 * With -X it asks for send_bw and plays its requester as far as the
 * server's ADV, then SENDs one 64-byte message with invalidate for each
 * KEY (hexadecimal, an rkey of the server's device it was never given),
 * each once the last completed, and prints "inv KEY: STATUS" for each,
 * STATUS the completion's (ibv_wc_status_str()); it stops at the first
 * that failed, and exits 0 (2 when the run up to the ADV failed).  The
 * server's report, and its other clients', tell what the invalidation
 * did there.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

/* The wire format, as the module has it, and the uAPI's tests and flags. */
#include "../kernel/perf/perf_proto.h"
#include <uapi/kverbs.h>

#define KV_IMM_SIZE	64
#define KV_SRQ_SIZE	64

enum { KV_SRQ_OK, KV_SRQ_OVER, KV_SRQ_LINGER };

/* -B's messages: two sends in flight at once, and the receive. */
enum { KV_SEND0, KV_SEND1, KV_RECV, KV_MSGS };

/* Send @m and wait until the server's side has it. */
static int kv_send(struct rdma_cm_id *id, struct kverbs_perf_msg *m, struct ibv_mr *mr)
{
	struct ibv_wc wc;

	if (rdma_post_send(id, NULL, m, sizeof(*m), mr, IBV_SEND_SIGNALED) ||
	    rdma_get_send_comp(id, &wc) != 1 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "send of message type %u failed\n", le32toh(m->type));
		return -1;
	}
	return 0;
}

static double kv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Whether the server ended the connection: a DISCONNECTED event on the
 * ID's own channel (a synchronous ID has one), waiting at most @ms.  A
 * SEND to a server that is gone may never complete (its retries can
 * outlast the test), so that is not what tells.
 */
static int kv_disconnected(struct rdma_cm_id *id, int ms)
{
	struct pollfd pfd = { .fd = id->channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int disc;

	if (poll(&pfd, 1, ms) != 1 || rdma_get_cm_event(id->channel, &ev))
		return 0;
	disc = ev->event == RDMA_CM_EVENT_DISCONNECTED;
	rdma_ack_cm_event(ev);
	return disc;
}

/*
 * A PROGRESS every 100 ms for @secs seconds, each waited for by polling
 * the CQ.  Returns 0, or 1 after printing when the server ended the
 * connection first (or a SEND failed, which says as much).
 */
static int kv_keep_busy(struct rdma_cm_id *id, struct kverbs_perf_msg *send,
			struct ibv_mr *mr, double secs)
{
	double start = kv_now(), sent;
	struct ibv_wc wc;
	int n;

	while (kv_now() - start < secs) {
		memset(send, 0, sizeof(*send));
		send->type = htole32(KVERBS_PERF_MSG_PROGRESS);
		if (rdma_post_send(id, NULL, send, sizeof(*send), mr, IBV_SEND_SIGNALED))
			goto cut;
		while (!(n = ibv_poll_cq(id->send_cq, 1, &wc)))
			if (kv_disconnected(id, 1))
				goto cut;
		if (n < 0 || wc.status != IBV_WC_SUCCESS)
			goto cut;
		sent = kv_now();
		while (kv_now() - sent < 0.1)
			if (kv_disconnected(id, 100))
				goto cut;
	}
	return 0;
cut:
	printf("cut off after %d s\n", (int)(kv_now() - start));
	return 1;
}

/* The server's next message, which must be of type @type. */
static int kv_recv(struct rdma_cm_id *id, struct kverbs_perf_msg *recv, uint32_t type)
{
	struct ibv_wc wc;

	if (rdma_get_recv_comp(id, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != sizeof(*recv) || le32toh(recv->type) != type) {
		fprintf(stderr, "no message of type %u from the server\n", type);
		return -1;
	}
	return 0;
}

/*
 * PROGRESS and then @m, the second posted before the first completes;
 * wait until both have.
 */
static int kv_send_pair(struct rdma_cm_id *id, struct kverbs_perf_msg *msgs,
			struct ibv_mr *mr, const struct kverbs_perf_msg *m)
{
	struct kverbs_perf_msg *progress = &msgs[KV_SEND0], *next = &msgs[KV_SEND1];
	struct ibv_wc wc;
	int i;

	memset(progress, 0, sizeof(*progress));
	progress->type = htole32(KVERBS_PERF_MSG_PROGRESS);
	*next = *m;
	if (rdma_post_send(id, NULL, progress, sizeof(*progress), mr, IBV_SEND_SIGNALED) ||
	    rdma_post_send(id, NULL, next, sizeof(*next), mr, IBV_SEND_SIGNALED)) {
		fprintf(stderr, "cannot post PROGRESS and type %u\n", le32toh(m->type));
		return -1;
	}
	for (i = 0; i < 2; i++) {
		if (rdma_get_send_comp(id, &wc) != 1 || wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "PROGRESS and type %u: a send failed\n",
				le32toh(m->type));
			return -1;
		}
	}
	return 0;
}

/*
 * -B: START, the server's ADV; PROGRESS and ROUND back to back, the
 * server's ROUND_OK; PROGRESS and DONE back to back.
 */
static int kv_back_to_back(struct rdma_cm_id *id, struct kverbs_perf_msg *msgs,
			   struct ibv_mr *mr)
{
	struct kverbs_perf_msg *recv = &msgs[KV_RECV], m = {};

	memset(&msgs[KV_SEND0], 0, sizeof(m));
	msgs[KV_SEND0].type = htole32(KVERBS_PERF_MSG_START);
	if (kv_send(id, &msgs[KV_SEND0], mr) || kv_recv(id, recv, KVERBS_PERF_MSG_ADV) ||
	    rdma_post_recv(id, NULL, recv, sizeof(*recv), mr))
		return -1;
	m.type = htole32(KVERBS_PERF_MSG_ROUND);
	m.a = 0;
	m.b = htole64(1);
	if (kv_send_pair(id, msgs, mr, &m) || kv_recv(id, recv, KVERBS_PERF_MSG_ROUND_OK))
		return -1;
	if (le64toh(recv->a) != 1) {
		fprintf(stderr, "ROUND_OK for %llu, expected 1\n",
			(unsigned long long)le64toh(recv->a));
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.type = htole32(KVERBS_PERF_MSG_DONE);
	m.a = htole64(1);
	m.b = htole64(1000000);
	return kv_send_pair(id, msgs, mr, &m);
}

/*
 * The requester's side of a test that moves no data: START, then the
 * server's ADV, PROGRESS for @busy seconds, then DONE with the numbers
 * given.  @recv was posted before the connection was made.  Returns 0,
 * -1 on failure, 1 when the server cut it off while it kept busy.
 */
static int kv_fake_done(struct rdma_cm_id *id, struct kverbs_perf_msg *msgs,
			struct ibv_mr *mr, uint64_t ops, uint64_t ns, double busy)
{
	struct kverbs_perf_msg *send = &msgs[KV_SEND0], *recv = &msgs[KV_RECV];
	struct ibv_wc wc;
	int ret;

	memset(send, 0, sizeof(*send));
	send->type = htole32(KVERBS_PERF_MSG_START);
	if (kv_send(id, send, mr))
		return -1;
	if (rdma_get_recv_comp(id, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != sizeof(*recv) || le32toh(recv->type) != KVERBS_PERF_MSG_ADV) {
		fprintf(stderr, "no ADV from the server\n");
		return -1;
	}
	ret = busy > 0 ? kv_keep_busy(id, send, mr, busy) : 0;
	if (ret)
		return ret;
	memset(send, 0, sizeof(*send));
	send->type = htole32(KVERBS_PERF_MSG_DONE);
	send->a = htole64(ops);
	send->b = htole64(ns);
	return kv_send(id, send, mr);
}

/*
 * Post @wr signaled and wait for its completion: one at a time, so that
 * the send queue of two never overflows.
 */
static int kv_post_wait(struct rdma_cm_id *id, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(id->qp, wr, &bad) || rdma_get_send_comp(id, &wc) != 1 ||
	    wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "data message %llu failed\n", (unsigned long long)wr->wr_id);
		return -1;
	}
	return 0;
}

/*
 * -I: START, the server's ADV, @n messages with immediate data (message
 * @bad wrong, or without any if @none), DONE.
 */
static int kv_imm(struct rdma_cm_id *id, struct kverbs_perf_msg *msgs, struct ibv_mr *mr,
		  int test, uint64_t n, int64_t bad, int none)
{
	static char data[KV_IMM_SIZE];
	struct kverbs_perf_msg *send = &msgs[KV_SEND0], *recv = &msgs[KV_RECV];
	struct ibv_sge sge = { .addr = (uintptr_t)data, .length = sizeof(data) };
	struct ibv_send_wr wr;
	struct ibv_mr *dmr;
	uint64_t addr, i;
	uint32_t rkey, slots, stride;

	dmr = rdma_reg_msgs(id, data, sizeof(data));
	if (!dmr)
		return -1;
	sge.lkey = dmr->lkey;
	memset(send, 0, sizeof(*send));
	send->type = htole32(KVERBS_PERF_MSG_START);
	if (kv_send(id, send, mr) || kv_recv(id, recv, KVERBS_PERF_MSG_ADV))
		return -1;
	addr = le64toh(recv->addr);
	rkey = le32toh(recv->rkey);
	slots = le32toh(recv->slots);
	stride = le32toh(recv->stride);
	if (!slots || stride < sizeof(data) || (test == KVERBS_PERF_WRITE_BW && !rkey)) {
		fprintf(stderr, "the server's ADV is not one for this test\n");
		return -1;
	}
	for (i = 0; i < n; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (test == KVERBS_PERF_WRITE_BW) {
			wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.wr.rdma.remote_addr = addr + (i % slots) * stride;
			wr.wr.rdma.rkey = rkey;
		} else {
			wr.opcode = IBV_WR_SEND_WITH_IMM;
		}
		wr.imm_data = htobe32((uint32_t)i + ((int64_t)i == bad));
		if ((int64_t)i == bad && none)
			wr.opcode = test == KVERBS_PERF_WRITE_BW ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
		if (kv_post_wait(id, &wr))
			return -1;
	}
	memset(send, 0, sizeof(*send));
	send->type = htole32(KVERBS_PERF_MSG_DONE);
	send->a = htole64(n);
	send->b = htole64(1000000);
	return kv_send(id, send, mr);
}

/* The pattern of kernel/perf/perf.c's kverbs_perf_fill(), word by word. */
static void kv_fill(uint8_t *p, uint32_t len, uint64_t iter)
{
	uint64_t w, v;

	for (w = 0; (w + 1) * 8 <= len; w++) {
		v = htole64(kverbs_perf_word(iter, w));
		memcpy(p + w * 8, &v, sizeof(v));
	}
}

enum kv_inv_mode { KV_INV_OK, KV_INV_NONE, KV_INV_WRONG, KV_INV_UNASKED, KV_INV_OLD };

/* A control message, as a SEND with invalidate of @inv unless it is 0. */
static int kv_send_inv(struct rdma_cm_id *id, struct kverbs_perf_msg *m, struct ibv_mr *mr,
		       uint32_t inv)
{
	struct ibv_sge sge = { .addr = (uintptr_t)m, .length = sizeof(*m), .lkey = mr->lkey };
	/*
	 * rdma-core's siw provider puts wr.rdma.rkey on the wire as the key
	 * to invalidate (push_send_wqe() reads no invalidate_rkey): set
	 * both.  rxe reads invalidate_rkey and ignores the other for a SEND.
	 */
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.invalidate_rkey = inv,
		.wr.rdma.rkey = inv,
	};

	if (kv_post_wait(id, &wr)) {
		fprintf(stderr, "send of message type %u failed\n", le32toh(m->type));
		return -1;
	}
	return 0;
}

/*
 * -N: START, the server's ADV, rounds of WRITEs each ended by a ROUND
 * with invalidate, DONE; @mode spoils one step.  Returns 0 when all was
 * sent, -1 on failure, and for KV_INV_OLD 0 or 1 as main() says.
 */
static int kv_inv(struct rdma_cm_id *id, struct kverbs_perf_msg *msgs, struct ibv_mr *mr,
		  uint64_t n, enum kv_inv_mode mode)
{
	static uint8_t data[KV_IMM_SIZE];
	struct kverbs_perf_msg *send = &msgs[KV_SEND0], *recv = &msgs[KV_RECV];
	struct ibv_sge sge = { .addr = (uintptr_t)data, .length = sizeof(data) };
	struct ibv_send_wr wr, *bad;
	struct ibv_mr *dmr;
	uint64_t addr, i, first = 0, k;
	uint32_t rkey, inv, slots, stride;
	struct ibv_wc wc;

	dmr = rdma_reg_msgs(id, data, sizeof(data));
	if (!dmr)
		return -1;
	sge.lkey = dmr->lkey;
	memset(send, 0, sizeof(*send));
	send->type = htole32(KVERBS_PERF_MSG_START);
	if (kv_send(id, send, mr) || kv_recv(id, recv, KVERBS_PERF_MSG_ADV))
		return -1;
	addr = le64toh(recv->addr);
	rkey = le32toh(recv->rkey);
	slots = le32toh(recv->slots);
	stride = le32toh(recv->stride);
	if (!slots || stride < sizeof(data) || !rkey ||
	    rdma_post_recv(id, NULL, recv, sizeof(*recv), mr)) {
		fprintf(stderr, "the server's ADV is not one for this test\n");
		return -1;
	}
	if (mode == KV_INV_UNASKED) {
		memset(send, 0, sizeof(*send));
		send->type = htole32(KVERBS_PERF_MSG_PROGRESS);
		if (kv_send_inv(id, send, mr, rkey))
			return -1;
		/*
		 * Nothing more: a WRITE now would meet the invalidated key,
		 * and our hanging up could reach the server before it took
		 * the PROGRESS.  The server ends the connection.
		 */
		for (i = 0; i < 300 && !kv_disconnected(id, 100); i++)
			;
		return -1;
	}
	while (first < n) {
		k = n - first < slots ? n - first : slots;
		for (i = 0; i < k; i++) {
			kv_fill(data, sizeof(data), first + i);
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = first + i;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.wr.rdma.remote_addr = addr + i * stride;
			wr.wr.rdma.rkey = rkey;
			if (kv_post_wait(id, &wr))
				return -1;
		}
		inv = mode == KV_INV_NONE ? 0 : mode == KV_INV_WRONG ? rkey ^ 0x1 : rkey;
		memset(send, 0, sizeof(*send));
		send->type = htole32(KVERBS_PERF_MSG_ROUND);
		send->a = htole64(first);
		send->b = htole64(k);
		if (kv_send_inv(id, send, mr, inv) || kv_recv(id, recv, KVERBS_PERF_MSG_ROUND_OK))
			return -1;
		if (le64toh(recv->a) != first + k || le32toh(recv->rkey) == rkey) {
			fprintf(stderr, "ROUND_OK for %llu with key 0x%08x after 0x%08x\n",
				(unsigned long long)le64toh(recv->a), le32toh(recv->rkey), rkey);
			return -1;
		}
		if (mode == KV_INV_OLD) {
			/* The key the server registered again under another. */
			memset(&wr, 0, sizeof(wr));
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr.rdma.remote_addr = addr;
			wr.wr.rdma.rkey = rkey;
			if (ibv_post_send(id->qp, &wr, &bad) || rdma_get_send_comp(id, &wc) != 1)
				return -1;
			printf("old key: %s\n", ibv_wc_status_str(wc.status));
			return wc.status == IBV_WC_REM_ACCESS_ERR ? 0 : wc.status ? -1 : 1;
		}
		rkey = le32toh(recv->rkey);
		first += k;
		if (rdma_post_recv(id, NULL, recv, sizeof(*recv), mr))
			return -1;
	}
	memset(send, 0, sizeof(*send));
	send->type = htole32(KVERBS_PERF_MSG_DONE);
	send->a = htole64(n);
	send->b = htole64(1000000);
	return kv_send(id, send, mr);
}

/*
 * Whether the server hangs up within @secs seconds; CM events other
 * than DISCONNECTED may come first.
 */
static int kv_hung_up(struct rdma_cm_id *id, int secs)
{
	int i;

	for (i = 0; i < secs * 10; i++)
		if (kv_disconnected(id, 100))
			return 1;
	return 0;
}

/* -S's data message. */
static uint8_t kv_srq_data[KV_SRQ_SIZE];

/*
 * A SEND of -S's data message @i, waited for by polling the CQ.  Returns
 * 0, or 1 when it failed or the server ended the connection meanwhile.
 */
static int kv_srq_send(struct rdma_cm_id *id, struct ibv_sge *sge, uint64_t i)
{
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	int n;

	kv_fill(kv_srq_data, KV_SRQ_SIZE, i);
	if (ibv_post_send(id->qp, &wr, &bad))
		return 1;
	while (!(n = ibv_poll_cq(id->send_cq, 1, &wc)))
		if (kv_disconnected(id, 1))
			return 1;
	return n < 0 || wc.status != IBV_WC_SUCCESS;
}

/*
 * -S ok: START, the server's ADV (window W), @n SENDs W at a time, each
 * window granted by ROUND_OK, DONE within the credits too.  -S linger:
 * then up to 200 more SENDs.  -S over: START, the ADV, W + 1 PROGRESS
 * messages, one at a time.
 */
static int kv_srq(struct rdma_cm_id *id, struct kverbs_perf_msg *msgs, struct ibv_mr *mr,
		  uint64_t n, int mode)
{
	struct kverbs_perf_msg *send = &msgs[KV_SEND0], *recv = &msgs[KV_RECV];
	struct ibv_sge sge = { .length = KV_SRQ_SIZE };
	uint64_t i, granted;
	struct ibv_send_wr wr;
	struct ibv_mr *dmr;
	uint32_t window;

	dmr = rdma_reg_msgs(id, kv_srq_data, sizeof(kv_srq_data));
	if (!dmr)
		return -1;
	sge.addr = (uintptr_t)kv_srq_data;
	sge.lkey = dmr->lkey;
	memset(send, 0, sizeof(*send));
	send->type = htole32(KVERBS_PERF_MSG_START);
	if (kv_send(id, send, mr) || kv_recv(id, recv, KVERBS_PERF_MSG_ADV))
		return -1;
	window = le32toh(recv->slots);
	if (!(le64toh(recv->a) & KVERBS_PERF_ADV_GRANTS)) {
		fprintf(stderr, "the server's ADV grants no window\n");
		return -1;
	}
	if (!window || rdma_post_recv(id, NULL, recv, sizeof(*recv), mr))
		return -1;
	if (mode == KV_SRQ_OVER) {
		for (i = 0; i <= window; i++) {
			memset(send, 0, sizeof(*send));
			send->type = htole32(KVERBS_PERF_MSG_PROGRESS);
			if (kv_send(id, send, mr))
				return -1;
		}
		printf("sent\n");
		puts(kv_hung_up(id, 30) ? "cut off" : "still connected");
		return 0;
	}
	granted = window;
	for (i = 0; i <= n; i++) {
		if (i == granted) {
			/* The window is used up: the next one, or DONE's credit. */
			if (kv_recv(id, recv, KVERBS_PERF_MSG_ROUND_OK))
				return -1;
			if (le64toh(recv->a) != granted) {
				fprintf(stderr, "ROUND_OK for %llu, expected %llu\n",
					(unsigned long long)le64toh(recv->a),
					(unsigned long long)granted);
				return -1;
			}
			if (rdma_post_recv(id, NULL, recv, sizeof(*recv), mr))
				return -1;
			granted += window;
		}
		if (i == n)
			break;
		kv_fill(kv_srq_data, KV_SRQ_SIZE, i);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		if (kv_post_wait(id, &wr))
			return -1;
	}
	memset(send, 0, sizeof(*send));
	send->type = htole32(KVERBS_PERF_MSG_DONE);
	send->a = htole64(n);
	send->b = htole64(1000000);
	if (kv_send(id, send, mr))
		return -1;
	if (mode == KV_SRQ_LINGER) {
		printf("done sent\n");
		for (i = 0; i < 200; i++) {
			if (kv_srq_send(id, &sge, n + i)) {
				printf("cut off after %llu\n", (unsigned long long)i);
				return 0;
			}
		}
		printf("sent 200\n");
		return 0;
	}
	/* iWARP: the server hangs up first, once it has DONE. */
	if (id->verbs->device->transport_type == IBV_TRANSPORT_IWARP &&
	    !kv_hung_up(id, 30)) {
		fprintf(stderr, "the server did not hang up after DONE\n");
		return -1;
	}
	return 0;
}

/* -X: START, the server's ADV, then a SEND with invalidate of each key. */
static int kv_inv_keys(struct rdma_cm_id *id, struct kverbs_perf_msg *msgs, struct ibv_mr *mr,
		       const char *keys)
{
	struct kverbs_perf_msg *send = &msgs[KV_SEND0], *recv = &msgs[KV_RECV];
	struct ibv_send_wr wr = {
		.num_sge = 1, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_sge sge = { .length = KV_SRQ_SIZE };
	const char *p = keys;
	struct ibv_mr *dmr;
	struct ibv_wc wc;
	unsigned long key;
	char *end;

	dmr = rdma_reg_msgs(id, kv_srq_data, sizeof(kv_srq_data));
	if (!dmr)
		return -1;
	sge.addr = (uintptr_t)kv_srq_data;
	sge.lkey = dmr->lkey;
	wr.sg_list = &sge;
	memset(send, 0, sizeof(*send));
	send->type = htole32(KVERBS_PERF_MSG_START);
	if (kv_send(id, send, mr) || kv_recv(id, recv, KVERBS_PERF_MSG_ADV))
		return -1;
	for (;;) {
		key = strtoul(p, &end, 16);
		if (end == p)
			return -1;
		wr.invalidate_rkey = key;
		if (ibv_post_send(id->qp, &wr, &bad) || rdma_get_send_comp(id, &wc) != 1)
			return -1;
		printf("inv 0x%08lx: %s\n", key, ibv_wc_status_str(wc.status));
		fflush(stdout);
		if (wc.status != IBV_WC_SUCCESS || !*end)
			return 0;
		p = end + 1;
	}
}

int main(int argc, char **argv)
{
	struct kverbs_perf_hello h = {
		.magic = htole16(KVERBS_PERF_MAGIC),
		.version = htole16(KVERBS_PERF_VERSION),
		.test = htole16(1),	/* write_bw */
		.msg_size = htole32(64),
		.tx_depth = htole32(16),
		.iterations = htole64(10),
	};
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 2, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = { .private_data = &h, .retry_count = 7 };
	const char *addr = NULL, *port = NULL;
	const struct kverbs_perf_reject_msg *rej;
	struct kverbs_perf_msg msgs[KV_MSGS];
	unsigned long long ops = 0, ns = 0;
	double busy = 0, hold = 0;
	struct ibv_mr *mr = NULL;
	struct rdma_cm_id *id;
	static const char *const inv_modes[] = {
		[KV_INV_OK] = "ok", [KV_INV_NONE] = "none", [KV_INV_WRONG] = "wrong",
		[KV_INV_UNASKED] = "unasked", [KV_INV_OLD] = "old",
	};
	int opt, len = sizeof(h), done = 0, pair = 0, imm = 0, none = 0, inv = -1, ret;
	int srq = -1;
	const char *keys = NULL;
	long long bad = -1;
	char word[8];

	while ((opt = getopt(argc, argv, "a:p:V:m:rl:Dd:n:T:bk:Bt:f:w:I:N:P:S:X:")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'V': h.version = htole16(atoi(optarg)); break;
		case 'm': h.magic = htole16(strtol(optarg, NULL, 0)); break;
		case 'r': h.reserved[sizeof(h.reserved) - 1] = 1; break;
		case 'l': len = atoi(optarg); break;
		case 'D':
			h.iterations = 0;
			h.duration_ns = htole64(1000000000);
			break;
		case 'n':
			h.iterations = htole64(strtoull(optarg, NULL, 0));
			h.duration_ns = 0;
			break;
		case 'T':
			h.iterations = 0;
			h.duration_ns = htole64(strtoull(optarg, NULL, 0) * 1000000000ULL);
			break;
		case 'b':
			h.flags = htole16(le16toh(h.flags) | KVERBS_PERF_F_REVERSE);
			break;
		case 'k':
			busy = atof(optarg);
			break;
		case 't':
			h.test = htole16(atoi(optarg));
			break;
		case 'f':
			h.flags = htole16(le16toh(h.flags) | strtoul(optarg, NULL, 0));
			break;
		case 'w':
			hold = atof(optarg);
			break;
		case 'P': {
			unsigned int l, q, i;

			if (sscanf(optarg, "%u,%u,%u", &l, &q, &i) != 3)
				return 2;
			h.post_list = htole16(l);
			h.cq_mod = htole16(q);
			h.inline_size = htole16(i);
			break;
		}
		case 'B':
			h.test = htole16(KVERBS_PERF_READ_BW);
			h.flags = htole16(le16toh(h.flags) | KVERBS_PERF_F_VALIDATE);
			pair = 1;
			break;
		case 'd':
			if (sscanf(optarg, "%llu,%llu", &ops, &ns) != 2)
				return 2;
			done = 1;
			break;
		case 'I':
			imm = 1;
			h.flags = htole16(le16toh(h.flags) | KVERBS_PERF_F_IMM);
			if (!strcmp(optarg, "ok"))
				break;
			ret = sscanf(optarg, "%lld,%7s", &bad, word);
			if (ret < 1 || bad < 0 || (ret == 2 && strcmp(word, "none")))
				return 2;
			none = ret == 2;
			break;
		case 'N':
			for (inv = KV_INV_OLD; inv >= 0; inv--)
				if (!strcmp(optarg, inv_modes[inv]))
					break;
			if (inv < 0)
				return 2;
			h.flags = htole16(le16toh(h.flags) | KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_INV);
			break;
		case 'S':
			if (!strcmp(optarg, "ok"))
				srq = KV_SRQ_OK;
			else if (!strcmp(optarg, "over"))
				srq = KV_SRQ_OVER;
			else if (!strcmp(optarg, "linger"))
				srq = KV_SRQ_LINGER;
			else
				return 2;
			h.test = htole16(KVERBS_PERF_SEND_BW);
			h.msg_size = htole32(KV_SRQ_SIZE);
			break;
		case 'X':
			keys = optarg;
			h.test = htole16(KVERBS_PERF_SEND_BW);
			h.msg_size = htole32(KV_SRQ_SIZE);
			break;
		default: return 2;
		}
	}
	if (!addr || !port || len < 0 || len > (int)sizeof(h))
		return 2;
	/* Only the requester's part is played: not the reverse direction's. */
	if ((done || pair) && (le16toh(h.flags) & KVERBS_PERF_F_REVERSE))
		return 2;
	if (done + pair + imm + (inv >= 0) + (srq >= 0) + !!keys > 1)
		return 2;
	if ((imm || inv >= 0 || srq >= 0 || keys) && (le16toh(h.flags) & KVERBS_PERF_F_REVERSE))
		return 2;
	/* -N plays write_bw's requester. */
	if (inv >= 0 && le16toh(h.test) != KVERBS_PERF_WRITE_BW)
		return 2;
	param.private_data_len = len;
	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		perror("rdma_getaddrinfo");
		return 2;
	}
	if (rdma_create_ep(&id, res, NULL, &qpa)) {
		perror("rdma_create_ep");
		return 2;
	}
	rdma_freeaddrinfo(res);
	if (done || pair || imm || inv >= 0 || srq >= 0 || keys) {
		mr = rdma_reg_msgs(id, msgs, sizeof(msgs));
		if (!mr || rdma_post_recv(id, NULL, &msgs[KV_RECV], sizeof(msgs[KV_RECV]), mr)) {
			perror("rdma_reg_msgs");
			return 2;
		}
	}
	/* Synchronous: the failed connect leaves its event in id->event. */
	if (!rdma_connect(id, &param)) {
		if (pair) {
			if (kv_back_to_back(id, msgs, mr))
				return 2;
			printf("done sent\n");
			return 0;
		}
		if (imm) {
			if (kv_imm(id, msgs, mr, le16toh(h.test), le64toh(h.iterations),
				   bad, none))
				return 2;
			printf("done sent\n");
			return 0;
		}
		if (inv >= 0) {
			ret = kv_inv(id, msgs, mr, le64toh(h.iterations), inv);
			if (ret < 0)
				return 2;
			if (inv != KV_INV_OLD)
				printf("done sent\n");
			return ret;
		}
		if (srq >= 0) {
			if (kv_srq(id, msgs, mr, le64toh(h.iterations), srq))
				return 2;
			if (srq == KV_SRQ_OK)
				printf("done sent\n");
			return 0;
		}
		if (keys)
			return kv_inv_keys(id, msgs, mr, keys) ? 2 : 0;
		if (done) {
			ret = kv_fake_done(id, msgs, mr, ops, ns, busy);
			if (ret)
				return ret > 0 ? 3 : 2;
			printf("done sent\n");
			return 0;
		}
		printf("accepted\n");
		fflush(stdout);
		if (hold > 0)
			usleep(hold * 1e6);
		rdma_disconnect(id);
		return 1;
	}
	if (done || pair || imm || inv >= 0 || srq >= 0 || keys) {
		perror("rdma_connect");
		return 2;
	}
	if (errno != ECONNREFUSED || !id->event ||
	    id->event->event != RDMA_CM_EVENT_REJECTED ||
	    id->event->param.conn.private_data_len < sizeof(*rej)) {
		perror("rdma_connect: not a reject with private data");
		return 2;
	}
	rej = id->event->param.conn.private_data;
	if (le16toh(rej->magic) != KVERBS_PERF_MAGIC) {
		printf("rejected without a kverbs perf reason\n");
		return 2;
	}
	printf("rejected: reason %u value %u version %u\n", le16toh(rej->reason),
	       le32toh(rej->value), le16toh(rej->version));
	return 0;
}
