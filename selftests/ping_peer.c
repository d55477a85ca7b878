// SPDX-License-Identifier: GPL-2.0
/*
 * ping_peer: a ping server, written on rdma-core's librdmacm, that keeps
 * or breaks the remote invalidation a kverbs ping client asks for
 * (kernel/ping/ping.h), to see the client refuse what it must.
 *
 *	ping_peer -a ADDR -p PORT -m ok|none|unasked|other [-x K:X]
 *
 * It serves one client as a kverbs server does: per iteration it RDMA
 * READs the advertised source, answers, RDMA WRITEs what it read to the
 * advertised sink and answers, until the client leaves.  The mode says
 * how it answers:
 *
 *   ok       agrees to remote invalidation in its accept's private data,
 *            and each answer is a SEND with invalidate of the key it
 *            answers: the control, which the client takes;
 *   none     agrees, then answers the first source with a plain SEND;
 *   unasked  agrees to nothing (no private data, as rping), then answers
 *            the first source with a SEND with invalidate of its key;
 *   other    agrees, plays the first iteration fair, then answers the
 *            second source with a SEND with invalidate of the first
 *            iteration's sink key: a key of the client's, not the one
 *            the answer is for (rxe takes it: that MR's key is
 *            unchanged until the client registers it again).
 *
 * With -x, what it WRITEs back in iteration K (from 0) has byte X flipped,
 * to see a validating client catch it (selftests/validate.sh).
 *
 * Prints "iterations N" for the iterations it completed and exits 0 when
 * the client left (hung up, or its QP went away); 2 on any failure of
 * its own.
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

/* The wire format, as the module has it. */
#include "../kernel/ping/ping_proto.h"

#define KV_MAX_SIZE		(1 << 20)
/* Each step waits this long at most. */
#define KV_STEP_SECONDS		20

enum kv_mode { KV_OK, KV_NONE, KV_UNASKED, KV_OTHER };
static const char *const kv_modes[] = { "ok", "none", "unasked", "other" };

/* -x K:X: the iteration whose sink gets byte X flipped; -1 for none. */
static long long kv_bad_iter = -1;
static unsigned int kv_bad_byte;

static double kv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Whether the client ended the connection: a DISCONNECTED event.  The
 * event is taken off the channel once, and may be taken while a
 * completion is still awaited (kv_wait()'s grace): what it said is kept
 * for every wait after.
 */
static int kv_disconnected(struct rdma_cm_id *id)
{
	static int disc;
	struct pollfd pfd = { .fd = id->channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (disc || poll(&pfd, 1, 0) != 1 || rdma_get_cm_event(id->channel, &ev))
		return disc;
	disc = ev->event == RDMA_CM_EVENT_DISCONNECTED;
	rdma_ack_cm_event(ev);
	return disc;
}

/*
 * One completion of @cq: 0 when it succeeded, 1 when the client left
 * (hung up, or the completion was flushed), -1 on anything else.
 * A client that received our last answer may hang up before its ACK's
 * completion reached @cq: with @grace, a hang-up still leaves a second
 * for a completion that is on its way (our QP stays ready to send until
 * we disconnect, so it still arrives).
 */
static int kv_wait(struct rdma_cm_id *id, struct ibv_cq *cq, struct ibv_wc *wc, int grace)
{
	double start = kv_now(), left = 0;
	int n;

	while (kv_now() - start < KV_STEP_SECONDS) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return -1;
		if (n) {
			if (wc->status == IBV_WC_WR_FLUSH_ERR)
				return 1;
			if (wc->status != IBV_WC_SUCCESS) {
				fprintf(stderr, "completion: %s\n", ibv_wc_status_str(wc->status));
				return 1;
			}
			return 0;
		}
		if (left && kv_now() - left > 1)
			return 1;
		if (!left && kv_disconnected(id)) {
			if (!grace)
				return 1;
			left = kv_now();
		}
		usleep(100);
	}
	fprintf(stderr, "no completion within %d s\n", KV_STEP_SECONDS);
	return -1;
}

/* Receive an advertisement into @info; as kv_wait(). */
static int kv_recv_adv(struct rdma_cm_id *id, struct kverbs_ping_info *info, struct ibv_mr *mr,
		       uint64_t *addr, uint32_t *rkey, uint32_t *size)
{
	struct ibv_wc wc;
	int ret;

	ret = kv_wait(id, id->recv_cq, &wc, 0);
	if (ret)
		return ret;
	if (wc.byte_len != sizeof(*info)) {
		fprintf(stderr, "an advertisement of %u bytes\n", wc.byte_len);
		return -1;
	}
	*addr = be64toh(info->addr);
	*rkey = be32toh(info->rkey);
	*size = be32toh(info->size);
	if (!*size || *size > KV_MAX_SIZE) {
		fprintf(stderr, "an advertised size of %u\n", *size);
		return -1;
	}
	return rdma_post_recv(id, NULL, info, sizeof(*info), mr) ? -1 : 0;
}

/* One work request, signaled, and its completion; as kv_wait(). */
static int kv_post(struct rdma_cm_id *id, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(id->qp, wr, &bad))
		return -1;
	return kv_wait(id, id->send_cq, &wc, 1);
}

/* RDMA READ or WRITE of @size bytes of @buf; as kv_wait(). */
static int kv_rdma(struct rdma_cm_id *id, enum ibv_wr_opcode op, void *buf,
		   struct ibv_mr *mr, uint32_t size, uint64_t addr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = size, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.wr.rdma.remote_addr = addr, .wr.rdma.rkey = rkey,
	};

	return kv_post(id, &wr);
}

/* The answer, a SEND with invalidate of @inv unless it is 0; as kv_wait(). */
static int kv_goahead(struct rdma_cm_id *id, struct kverbs_ping_info *msg, struct ibv_mr *mr,
		      uint32_t inv)
{
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = sizeof(*msg), .lkey = mr->lkey };
	/* siw's provider takes the key from wr.rdma.rkey: see perf_hello.c. */
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.invalidate_rkey = inv,
		.wr.rdma.rkey = inv,
	};

	return kv_post(id, &wr);
}

/* Serve until the client leaves; returns 0 then, -1 on our failure. */
static int kv_serve(struct rdma_cm_id *id, enum kv_mode mode, int *iters)
{
	static struct kverbs_ping_info msgs[2];	/* the advertisement, the answer */
	static uint8_t data[KV_MAX_SIZE];
	struct kverbs_ping_hello hello = {
		.magic = htole16(KVERBS_PING_MAGIC),
		.version = htole16(KVERBS_PING_VERSION),
		.flags = htole32(KVERBS_PING_HELLO_INV),
	};
	struct rdma_conn_param param = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct ibv_mr *mr, *dmr;
	uint32_t rkey, size, sink_size, inv, last_sink = 0;
	uint64_t addr;
	int ret;

	mr = rdma_reg_msgs(id, msgs, sizeof(msgs));
	dmr = ibv_reg_mr(id->pd, data, sizeof(data), IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !dmr || rdma_post_recv(id, NULL, &msgs[0], sizeof(msgs[0]), mr)) {
		perror("registration");
		return -1;
	}
	if (mode != KV_UNASKED) {
		param.private_data = &hello;
		param.private_data_len = sizeof(hello);
	}
	if (rdma_accept(id, &param)) {
		perror("rdma_accept");
		return -1;
	}
	for (*iters = 0;; ++*iters) {
		ret = kv_recv_adv(id, &msgs[0], mr, &addr, &rkey, &size);
		if (!ret)
			ret = kv_rdma(id, IBV_WR_RDMA_READ, data, dmr, size, addr, rkey);
		if (ret)
			break;
		inv = rkey;
		if (mode == KV_NONE)
			inv = 0;
		if (mode == KV_OTHER && *iters == 1)
			inv = last_sink;
		ret = kv_goahead(id, &msgs[1], mr, inv);
		if (!ret)
			ret = kv_recv_adv(id, &msgs[0], mr, &addr, &rkey, &sink_size);
		if (!ret && sink_size < size) {
			fprintf(stderr, "a sink smaller than the source\n");
			ret = -1;
		}
		if (!ret && *iters == kv_bad_iter) {
			if (kv_bad_byte >= size) {
				fprintf(stderr, "-x: byte %u of a %u-byte ping\n", kv_bad_byte, size);
				ret = -1;
			} else {
				data[kv_bad_byte] ^= 0xff;
			}
		}
		if (!ret)
			ret = kv_rdma(id, IBV_WR_RDMA_WRITE, data, dmr, size, addr, rkey);
		if (!ret)
			ret = kv_goahead(id, &msgs[1], mr, mode == KV_UNASKED ? 0 : rkey);
		if (ret)
			break;
		last_sink = rkey;
	}
	rdma_disconnect(id);
	return ret < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct rdma_cm_id *lid, *id;
	struct rdma_addrinfo *res;
	const char *addr = NULL, *port = NULL;
	int opt, mode = -1, iters = 0;

	while ((opt = getopt(argc, argv, "a:p:m:x:")) != -1) {
		switch (opt) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'm':
			for (mode = KV_OTHER; mode >= 0; mode--)
				if (!strcmp(optarg, kv_modes[mode]))
					break;
			if (mode < 0)
				return 2;
			break;
		case 'x':
			if (sscanf(optarg, "%lld:%u", &kv_bad_iter, &kv_bad_byte) != 2 ||
			    kv_bad_iter < 0)
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (!addr || !port || mode < 0)
		return 2;
	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		perror("rdma_getaddrinfo");
		return 2;
	}
	if (rdma_create_ep(&lid, res, NULL, &qpa)) {
		perror("rdma_create_ep");
		return 2;
	}
	rdma_freeaddrinfo(res);
	if (rdma_listen(lid, 1) || rdma_get_request(lid, &id)) {
		perror("rdma_listen");
		return 2;
	}
	if (kv_serve(id, mode, &iters))
		return 2;
	printf("iterations %d\n", iters);
	return 0;
}
