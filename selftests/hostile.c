// SPDX-License-Identifier: GPL-2.0
/*
 * hostile: an rping-style server, built on rdma-core's librdmacm and
 * libibverbs, that abuses what a kverbs ping client advertises to it.
 *
 *	hostile [-c] -a ADDR [-p PORT] [-t SECONDS] ATTACK
 *
 * As a server (the default) it waits for one client, takes the client's first advertisement (the
 * source buffer, granted remote read only), and, depending on ATTACK:
 *
 *   read_past_end     RDMA READ one byte more than advertised
 *   read_before_start RDMA READ starting 8 bytes before the buffer
 *   write_source      RDMA WRITE to the source buffer, advertised read-only
 *   reuse_rkey        play one step fair (READ the source, send the
 *                     go-ahead), then, once the client has advertised its
 *                     sink, READ the source again with its old rkey
 *   write_past_end    play fair up to the sink, then RDMA WRITE one byte
 *                     more than advertised
 *   read_sink         play fair up to the sink, then RDMA READ it: it was
 *                     granted remote write only
 *   fair              one fair iteration, as rping -s -C 1 would do
 *
 * Prints "ATTACK: STATUS" with the work completion status the attack got
 * and exits 0 if the client's side refused it with a remote access error
 * (for "fair": if everything succeeded), 1 if it was not refused, 2 on
 * any other failure.  On iWARP the refusal is the peer's TERMINATE
 * message: an RDMA WRITE completes locally before the peer has checked
 * it, and our QP then leaves RTS; siw flushes a refused RDMA READ, which
 * counts as refused only if no data came back.  On iWARP the victim's
 * own report is the stronger evidence, and security.sh checks it.
 *
 * As a client (-c) it connects to a kverbs ping server and sends it what
 * a server must not accept from the network:
 *
 *   short_message     an advertisement of 8 bytes instead of 16
 *   zero_size         a buffer of 0 bytes
 *   huge_size         a buffer of 4 GiB - 1, past any server's limit
 *   bad_rkey          an rkey we never had: the server's READ must fail
 *   small_sink        a fair source, then a sink smaller than it
 *
 * and exits 0 if the server hung up on it, 1 if it answered as if the
 * input were fine, 2 on any other failure.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define KV_BUF_SIZE	(1 << 20)

/* The rping message, as on the wire. */
struct kv_msg {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
} __attribute__((packed));

static struct {
	const char *attack;
	int timeout_s;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *scq;	/* sends, READs, WRITEs */
	struct ibv_cq *rcq;	/* receives: apart, so neither is taken for the other */
	struct ibv_mr *msg_mr;
	struct ibv_mr *buf_mr;
	struct kv_msg recv_msg;
	struct kv_msg send_msg;
	unsigned char *buf;
} kv;

static void kv_die(const char *what)
{
	fprintf(stderr, "hostile: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint64_t kv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* The next rdma_cm event, which must be @want, within the time limit. */
static struct rdma_cm_event *kv_cm_event(enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = kv.ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, kv.timeout_s * 1000) != 1) {
		fprintf(stderr, "hostile: no %s within %d s\n", rdma_event_str(want),
			kv.timeout_s);
		exit(2);
	}
	if (rdma_get_cm_event(kv.ch, &ev))
		kv_die("rdma_get_cm_event");
	if (ev->event != want) {
		fprintf(stderr, "hostile: got %s (status %d), expected %s\n",
			rdma_event_str(ev->event), ev->status, rdma_event_str(want));
		exit(2);
	}
	return ev;
}

/* Wait for one completion on @cq; returns its status, or -1 on timeout. */
static int kv_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	uint64_t end = kv_now_ms() + kv.timeout_s * 1000ULL;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0) {
		if (kv_now_ms() > end)
			return -1;
		usleep(1000);
	}
	if (n < 0)
		kv_die("ibv_poll_cq");
	return wc->status;
}

static void kv_post_recv(void)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&kv.recv_msg,
		.length = sizeof(kv.recv_msg),
		.lkey = kv.msg_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(kv.id->qp, &wr, &bad))
		kv_die("ibv_post_recv");
}

/* Post one signaled work request; @len bytes of our buffer, at @raddr/@rkey. */
static void kv_post(enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)kv.buf,
		.length = len,
		.lkey = kv.buf_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = op + 100,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_SEND) {
		sge.addr = (uintptr_t)&kv.send_msg;
		sge.length = sizeof(kv.send_msg);
		sge.lkey = kv.msg_mr->lkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(kv.id->qp, &wr, &bad))
		kv_die("ibv_post_send");
}

/* The client's next advertisement. */
static void kv_recv_advert(uint64_t *addr, uint32_t *rkey, uint32_t *size)
{
	struct ibv_wc wc;
	int st = kv_wait_wc(kv.rcq, &wc);

	if (st != IBV_WC_SUCCESS) {
		fprintf(stderr, "hostile: waiting for the client's message: %s\n",
			st < 0 ? "timeout" : ibv_wc_status_str(st));
		exit(2);
	}
	*addr = be64toh(kv.recv_msg.addr);
	*rkey = be32toh(kv.recv_msg.rkey);
	*size = be32toh(kv.recv_msg.size);
	/* What a peer is told must not disclose where the kernel keeps things. */
	if (*addr >= 0xffff800000000000ULL) {
		printf("%s: the client advertised a kernel virtual address, 0x%llx\n",
		       kv.attack, (unsigned long long)*addr);
		exit(1);
	}
	if (*size > KV_BUF_SIZE) {
		fprintf(stderr, "hostile: client advertised %u bytes\n", *size);
		exit(2);
	}
}

/* A fair step: post @op over the whole buffer; it must succeed. */
static void kv_fair(enum ibv_wr_opcode op, uint64_t addr, uint32_t rkey, uint32_t size)
{
	struct ibv_wc wc;
	int st;

	kv_post(op, addr, rkey, size);
	st = kv_wait_wc(kv.scq, &wc);
	if (st != IBV_WC_SUCCESS) {
		fprintf(stderr, "hostile: fair step failed: %s\n",
			st < 0 ? "timeout" : ibv_wc_status_str(st));
		exit(2);
	}
}

/* The go-ahead, after the client's next message is expected. */
static void kv_go_ahead(void)
{
	kv_post_recv();
	kv_fair(IBV_WR_SEND, 0, 0, 0);
}

static bool kv_iwarp(void)
{
	return kv.id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
}

/* Did nothing land in the first @len bytes of our buffer since kv_mark()? */
#define KV_MARK 0xa5
static void kv_mark(uint32_t len)
{
	memset(kv.buf, KV_MARK, len < KV_BUF_SIZE ? len : KV_BUF_SIZE);
}

static bool kv_marked(uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len && i < KV_BUF_SIZE; i++)
		if (kv.buf[i] != KV_MARK)
			return false;
	return true;
}

/*
 * iWARP has no remote access error a requester's WRITE could complete
 * with: it completes once sent, and the peer answers a violation with a
 * TERMINATE message, which moves our QP out of RTS.  Wait for that.
 */
static int kv_await_terminate(void)
{
	uint64_t end = kv_now_ms() + kv.timeout_s * 1000ULL;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	while (kv_now_ms() < end) {
		if (ibv_query_qp(kv.id->qp, &attr, IBV_QP_STATE, &init))
			kv_die("ibv_query_qp");
		if (attr.qp_state != IBV_QPS_RTS) {
			printf("%s: RDMA WRITE terminated by the peer (QP state %d)\n",
			       kv.attack, attr.qp_state);
			return 0;
		}
		usleep(10000);
	}
	printf("%s: RDMA WRITE succeeded: not refused within %d s\n",
	       kv.attack, kv.timeout_s);
	return 1;
}

/*
 * Post the attack and report what came of it: 0 if the peer refused it
 * with a remote access error, 1 if it went through, 2 if we cannot tell.
 */
static int kv_attack(enum ibv_wr_opcode op, uint64_t addr, uint32_t rkey, uint32_t len)
{
	struct ibv_wc wc;
	int st;

	/* A READ that fails must not have placed a byte in our buffer. */
	if (op == IBV_WR_RDMA_READ)
		kv_mark(len);
	kv_post(op, addr, rkey, len);
	st = kv_wait_wc(kv.scq, &wc);
	if (st < 0) {
		printf("%s: no completion within %d s\n", kv.attack, kv.timeout_s);
		return 2;
	}
	if (st == IBV_WC_SUCCESS) {
		if (op == IBV_WR_RDMA_WRITE && kv_iwarp())
			return kv_await_terminate();
		printf("%s: %s succeeded: not refused\n", kv.attack,
		       op == IBV_WR_RDMA_READ ? "RDMA READ" : "RDMA WRITE");
		return 1;
	}
	printf("%s: %s\n", kv.attack, ibv_wc_status_str(st));
	if (st == IBV_WC_REM_ACCESS_ERR || st == IBV_WC_REM_OP_ERR)
		return 0;
	/*
	 * siw answers a READ it refuses with a TERMINATE, which flushes the
	 * READ here instead of completing it with an error.  A hang-up looks
	 * the same from this side, so the victim's report decides that
	 * (selftests/security.sh); what this side can check is that no data
	 * came back.
	 */
	if (st == IBV_WC_WR_FLUSH_ERR && op == IBV_WR_RDMA_READ && kv_iwarp()) {
		if (!kv_marked(len)) {
			printf("%s: the flushed READ placed data: not refused\n", kv.attack);
			return 1;
		}
		printf("%s: terminated by the peer, no data placed\n", kv.attack);
		return 0;
	}
	return 2;
}

static struct rdma_conn_param kv_param = {
	.responder_resources = 1,
	.initiator_depth = 1,
	.retry_count = 7,
};

/* PD, CQ, QP and buffers for kv.id, and a receive posted. */
static void kv_make_qp(void)
{
	struct ibv_qp_init_attr qpa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	kv.pd = ibv_alloc_pd(kv.id->verbs);
	kv.scq = ibv_create_cq(kv.id->verbs, 64, NULL, NULL, 0);
	kv.rcq = ibv_create_cq(kv.id->verbs, 8, NULL, NULL, 0);
	if (!kv.pd || !kv.scq || !kv.rcq)
		kv_die("ibv_alloc_pd/ibv_create_cq");
	qpa.send_cq = kv.scq;
	qpa.recv_cq = kv.rcq;
	if (rdma_create_qp(kv.id, kv.pd, &qpa))
		kv_die("rdma_create_qp");
	kv.buf = calloc(1, KV_BUF_SIZE);
	if (!kv.buf)
		kv_die("calloc");
	kv.msg_mr = ibv_reg_mr(kv.pd, &kv.recv_msg, 2 * sizeof(struct kv_msg),
			       IBV_ACCESS_LOCAL_WRITE);
	/* iWARP: the sink of an RDMA READ needs remote write. */
	kv.buf_mr = ibv_reg_mr(kv.pd, kv.buf, KV_BUF_SIZE,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ);
	if (!kv.msg_mr || !kv.buf_mr)
		kv_die("ibv_reg_mr");
	kv_post_recv();
}

static struct rdma_addrinfo *kv_addrinfo(const char *addr, const char *port, int passive)
{
	struct rdma_addrinfo hints = { .ai_flags = passive ? RAI_PASSIVE : 0,
				       .ai_port_space = RDMA_PS_TCP }, *res;

	if (rdma_getaddrinfo(addr, port, &hints, &res))
		kv_die("rdma_getaddrinfo");
	return res;
}

/* As a server: wait for one client and accept it. */
static void kv_accept(const char *addr, const char *port)
{
	struct rdma_addrinfo *res = kv_addrinfo(addr, port, 1);
	struct rdma_cm_event *ev;

	if (rdma_create_id(kv.ch, &kv.listen_id, NULL, RDMA_PS_TCP))
		kv_die("rdma_create_id");
	if (rdma_bind_addr(kv.listen_id, res->ai_src_addr))
		kv_die("rdma_bind_addr");
	rdma_freeaddrinfo(res);
	if (rdma_listen(kv.listen_id, 1))
		kv_die("rdma_listen");
	printf("listening\n");
	fflush(stdout);

	ev = kv_cm_event(RDMA_CM_EVENT_CONNECT_REQUEST);
	kv.id = ev->id;
	rdma_ack_cm_event(ev);
	kv_make_qp();
	if (rdma_accept(kv.id, &kv_param))
		kv_die("rdma_accept");
	rdma_ack_cm_event(kv_cm_event(RDMA_CM_EVENT_ESTABLISHED));
}

/* As a client: connect to the server. */
static void kv_connect(const char *addr, const char *port)
{
	struct rdma_addrinfo *res = kv_addrinfo(addr, port, 0);

	if (rdma_create_id(kv.ch, &kv.id, NULL, RDMA_PS_TCP))
		kv_die("rdma_create_id");
	if (rdma_resolve_addr(kv.id, NULL, res->ai_dst_addr, 2000))
		kv_die("rdma_resolve_addr");
	rdma_freeaddrinfo(res);
	rdma_ack_cm_event(kv_cm_event(RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(kv.id, 2000))
		kv_die("rdma_resolve_route");
	rdma_ack_cm_event(kv_cm_event(RDMA_CM_EVENT_ROUTE_RESOLVED));
	kv_make_qp();
	if (rdma_connect(kv.id, &kv_param))
		kv_die("rdma_connect");
	rdma_ack_cm_event(kv_cm_event(RDMA_CM_EVENT_ESTABLISHED));
}

/*
 * Send {@addr, @rkey, @size}, or only its first @len bytes.  @may_flush:
 * the server's answer is an RDMA access to us that must fail on our side
 * (bad_rkey).  Its request can reach us before its acknowledgment of the
 * SEND; our QP then fails the access, goes to the error state and
 * flushes the SEND, and the hang-up still follows.
 */
static void kv_send_advert(uint64_t addr, uint32_t rkey, uint32_t size, uint32_t len,
			   bool may_flush)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&kv.send_msg,
		.length = len,
		.lkey = kv.msg_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	int st;

	kv.send_msg.addr = htobe64(addr);
	kv.send_msg.rkey = htobe32(rkey);
	kv.send_msg.size = htobe32(size);
	if (ibv_post_send(kv.id->qp, &wr, &bad))
		kv_die("ibv_post_send");
	st = kv_wait_wc(kv.scq, &wc);
	if (st != IBV_WC_SUCCESS && !(may_flush && st == IBV_WC_WR_FLUSH_ERR)) {
		fprintf(stderr, "hostile: sending an advertisement: %s\n",
			st < 0 ? "timeout" : ibv_wc_status_str(st));
		exit(2);
	}
}

/* rping's payload of ping @iter: "rdma-ping-N: ", then 'A'..'z' over and over, NUL. */
static void kv_fill_rping(unsigned char *p, uint32_t size, unsigned int iter)
{
	unsigned char c = 'A' + iter % ('z' - 'A' + 1);
	uint32_t i = snprintf((char *)p, size, "rdma-ping-%u: ", iter);

	for (; i < size; i++) {
		p[i] = c;
		c = c == 'z' ? 'A' : c + 1;
	}
	p[size - 1] = 0;
}

/*
 * The client's attacks on a kverbs server: input it must refuse.  The
 * server must hang up on us (exit 0); an answer means it went on with
 * what it should have refused (exit 1).
 */
static int kv_run_client(void)
{
	uint64_t addr = (uintptr_t)kv.buf;
	uint32_t rkey = kv.buf_mr->rkey;
	struct pollfd pfd = { .fd = kv.ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	struct ibv_wc wc;
	uint64_t end;
	int n;

	if (!strcmp(kv.attack, "short_message"))
		kv_send_advert(addr, rkey, 64, 8, false);
	else if (!strcmp(kv.attack, "zero_size"))
		kv_send_advert(addr, rkey, 0, sizeof(struct kv_msg), false);
	else if (!strcmp(kv.attack, "huge_size"))
		kv_send_advert(addr, rkey, 0xffffffff, sizeof(struct kv_msg), false);
	else if (!strcmp(kv.attack, "bad_rkey"))
		kv_send_advert(addr, rkey ^ 0x5a5a5a00, 64, sizeof(struct kv_msg), true);
	else if (!strcmp(kv.attack, "small_sink")) {
		kv_fill_rping(kv.buf, 4096, 0);
		kv_send_advert(addr, rkey, 4096, sizeof(struct kv_msg), false);
		if (kv_wait_wc(kv.rcq, &wc) != IBV_WC_SUCCESS) {
			fprintf(stderr, "hostile: no go-ahead for a fair source\n");
			return 2;
		}
		kv_post_recv();
		kv_send_advert(addr, rkey, 2048, sizeof(struct kv_msg), false);
	} else {
		fprintf(stderr, "hostile: unknown attack '%s'\n", kv.attack);
		return 2;
	}

	/* Now the server must hang up, and never answer. */
	end = kv_now_ms() + kv.timeout_s * 1000ULL;
	while (kv_now_ms() < end) {
		n = ibv_poll_cq(kv.rcq, 1, &wc);
		if (n > 0 && wc.status == IBV_WC_SUCCESS) {
			printf("%s: the server answered: not refused\n", kv.attack);
			return 1;
		}
		if (poll(&pfd, 1, 10) == 1) {
			if (rdma_get_cm_event(kv.ch, &ev))
				kv_die("rdma_get_cm_event");
			n = ev->event;
			rdma_ack_cm_event(ev);
			if (n == RDMA_CM_EVENT_DISCONNECTED) {
				printf("%s: the server hung up\n", kv.attack);
				return 0;
			}
		}
	}
	printf("%s: the server neither answered nor hung up within %d s\n",
	       kv.attack, kv.timeout_s);
	return 2;
}

static int kv_run_server(void)
{
	uint64_t src, sink;
	uint32_t src_rkey, sink_rkey, src_len, sink_len;
	int ret;

	kv_recv_advert(&src, &src_rkey, &src_len);
	if (!strcmp(kv.attack, "read_past_end"))
		return kv_attack(IBV_WR_RDMA_READ, src, src_rkey, src_len + 1);
	if (!strcmp(kv.attack, "read_before_start"))
		return kv_attack(IBV_WR_RDMA_READ, src - 8, src_rkey, 16);
	if (!strcmp(kv.attack, "write_source"))
		return kv_attack(IBV_WR_RDMA_WRITE, src, src_rkey, 16);

	/* The rest play fair up to the sink. */
	kv_fair(IBV_WR_RDMA_READ, src, src_rkey, src_len);
	kv_go_ahead();
	kv_recv_advert(&sink, &sink_rkey, &sink_len);
	if (!strcmp(kv.attack, "reuse_rkey"))
		return kv_attack(IBV_WR_RDMA_READ, src, src_rkey, src_len);
	if (!strcmp(kv.attack, "write_past_end"))
		return kv_attack(IBV_WR_RDMA_WRITE, sink, sink_rkey, sink_len + 1);
	if (!strcmp(kv.attack, "read_sink"))
		return kv_attack(IBV_WR_RDMA_READ, sink, sink_rkey, sink_len);
	if (!strcmp(kv.attack, "fair")) {
		/* Echo what was read, as rping does, and let the client check it. */
		kv_fair(IBV_WR_RDMA_WRITE, sink, sink_rkey, sink_len);
		kv_go_ahead();
		ret = src_len == sink_len ? 0 : 2;
		printf("fair: %s\n", ret ? "sizes differ" : "success");
		return ret;
	}
	fprintf(stderr, "hostile: unknown attack '%s'\n", kv.attack);
	return 2;
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7174";
	int c, ret, client = 0;

	kv.timeout_s = 10;
	while ((c = getopt(argc, argv, "a:cp:t:")) != -1) {
		switch (c) {
		case 'a':
			addr = optarg;
			break;
		case 'c':
			client = 1;
			break;
		case 'p':
			port = optarg;
			break;
		case 't':
			kv.timeout_s = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (!addr || optind != argc - 1)
		goto usage;
	kv.attack = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);

	kv.ch = rdma_create_event_channel();
	if (!kv.ch)
		kv_die("rdma_create_event_channel");
	if (client) {
		kv_connect(addr, port);
		ret = kv_run_client();
	} else {
		kv_accept(addr, port);
		ret = kv_run_server();
	}
	rdma_disconnect(kv.id);
	/* Leave the rest to process exit: the kernel releases it all. */
	return ret;
usage:
	fprintf(stderr, "usage: hostile [-c] -a ADDR [-p PORT] [-t SECONDS] ATTACK\n");
	return 2;
}
