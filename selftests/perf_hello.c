// SPDX-License-Identifier: GPL-2.0
/*
 * perf_hello: send a kverbs perf server a hello it must refuse, or a
 * DONE it must not believe, with rdma-core's librdmacm, and print what
 * happened.
 *
 *	perf_hello -a ADDR -p PORT [-V VERSION] [-m MAGIC] [-r] [-l LEN]
 *		   [-n ITERS | -D | -T SEC] [-b]
 *	perf_hello -a ADDR -p PORT [-n ITERS | -D | -T SEC] [-k SEC] -d OPS,NS
 *
 * The hello is a valid write_bw request of version 3, 10 messages of 64
 * bytes, except for what the options change: -V its version, -m its
 * magic, -r a reserved byte set, -l its length, -n ITERS messages
 * instead of 10 (any 64-bit number), -D duration mode (one second)
 * instead, -T duration mode of SEC seconds, -b the reverse direction
 * (KVERBS_PERF_F_REVERSE).  Prints "rejected: reason R value V version
 * S" and exits 0 when the server rejected it with a kverbs perf reason,
 * 1 when it accepted it, 2 on any other outcome.
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

/* kernel/perf.h, as on the wire. */
struct kv_hello {
	uint16_t magic, version, test, flags;
	uint32_t msg_size, tx_depth;
	uint64_t iterations, duration_ns;
	uint8_t reserved[24];
};

struct kv_reject {
	uint16_t magic, version, reason, reserved0;
	uint32_t value, reserved1;
};

/* A control message, struct kverbs_perf_msg. */
struct kv_msg {
	uint32_t type, rkey;
	uint64_t addr, a, b, c;
	uint32_t slots, stride;
};

enum { KV_MSG_ADV = 1, KV_MSG_PROGRESS = 4, KV_MSG_DONE = 5, KV_MSG_START = 6 };

#define KV_F_REVERSE	(1 << 3)

/* Send @m and wait until the server's side has it. */
static int kv_send(struct rdma_cm_id *id, struct kv_msg *m, struct ibv_mr *mr)
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
static int kv_keep_busy(struct rdma_cm_id *id, struct kv_msg *send,
			struct ibv_mr *mr, double secs)
{
	double start = kv_now(), sent;
	struct ibv_wc wc;
	int n;

	while (kv_now() - start < secs) {
		memset(send, 0, sizeof(*send));
		send->type = htole32(KV_MSG_PROGRESS);
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

/*
 * The requester's side of a test that moves no data: START, then the
 * server's ADV, PROGRESS for @busy seconds, then DONE with the numbers
 * given.  @recv was posted before the connection was made.  Returns 0,
 * -1 on failure, 1 when the server cut it off while it kept busy.
 */
static int kv_fake_done(struct rdma_cm_id *id, struct kv_msg *msgs,
			struct ibv_mr *mr, uint64_t ops, uint64_t ns, double busy)
{
	struct kv_msg *send = &msgs[0], *recv = &msgs[1];
	struct ibv_wc wc;
	int ret;

	memset(send, 0, sizeof(*send));
	send->type = htole32(KV_MSG_START);
	if (kv_send(id, send, mr))
		return -1;
	if (rdma_get_recv_comp(id, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != sizeof(*recv) || le32toh(recv->type) != KV_MSG_ADV) {
		fprintf(stderr, "no ADV from the server\n");
		return -1;
	}
	ret = busy > 0 ? kv_keep_busy(id, send, mr, busy) : 0;
	if (ret)
		return ret;
	memset(send, 0, sizeof(*send));
	send->type = htole32(KV_MSG_DONE);
	send->a = htole64(ops);
	send->b = htole64(ns);
	return kv_send(id, send, mr);
}

int main(int argc, char **argv)
{
	struct kv_hello h = {
		.magic = htole16(0x6b76),
		.version = htole16(3),
		.test = htole16(1),	/* write_bw */
		.msg_size = htole32(64),
		.tx_depth = htole32(16),
		.iterations = htole64(10),
	};
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = { .private_data = &h, .retry_count = 7 };
	const char *addr = NULL, *port = NULL;
	const struct kv_reject *rej;
	struct kv_msg msgs[2];
	unsigned long long ops = 0, ns = 0;
	double busy = 0;
	struct ibv_mr *mr = NULL;
	struct rdma_cm_id *id;
	int opt, len = sizeof(h), done = 0, ret;

	while ((opt = getopt(argc, argv, "a:p:V:m:rl:Dd:n:T:bk:")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'V': h.version = htole16(atoi(optarg)); break;
		case 'm': h.magic = htole16(strtol(optarg, NULL, 0)); break;
		case 'r': h.reserved[23] = 1; break;
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
			h.flags = htole16(le16toh(h.flags) | KV_F_REVERSE);
			break;
		case 'k':
			busy = atof(optarg);
			break;
		case 'd':
			if (sscanf(optarg, "%llu,%llu", &ops, &ns) != 2)
				return 2;
			done = 1;
			break;
		default: return 2;
		}
	}
	if (!addr || !port || len < 0 || len > (int)sizeof(h))
		return 2;
	/* Only the requester's part is played: not the reverse direction's. */
	if (done && (le16toh(h.flags) & KV_F_REVERSE))
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
	if (done) {
		mr = rdma_reg_msgs(id, msgs, sizeof(msgs));
		if (!mr || rdma_post_recv(id, NULL, &msgs[1], sizeof(msgs[1]), mr)) {
			perror("rdma_reg_msgs");
			return 2;
		}
	}
	/* Synchronous: the failed connect leaves its event in id->event. */
	if (!rdma_connect(id, &param)) {
		if (done) {
			ret = kv_fake_done(id, msgs, mr, ops, ns, busy);
			if (ret)
				return ret > 0 ? 3 : 2;
			printf("done sent\n");
			return 0;
		}
		printf("accepted\n");
		rdma_disconnect(id);
		return 1;
	}
	if (done) {
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
	if (le16toh(rej->magic) != 0x6b76) {
		printf("rejected without a kverbs perf reason\n");
		return 2;
	}
	printf("rejected: reason %u value %u version %u\n", le16toh(rej->reason),
	       le32toh(rej->value), le16toh(rej->version));
	return 0;
}
