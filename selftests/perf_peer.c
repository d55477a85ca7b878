// SPDX-License-Identifier: GPL-2.0
/*
 * perf_peer: the other end of a kverbs perf test, written on rdma-core's
 * librdmacm, that keeps the protocol (kernel/perf/perf.h) and, when told,
 * corrupts one message of what kverbs' --validate checks, to see kverbs
 * catch it (selftests/validate.sh).
 *
 *	perf_peer -a ADDR -p PORT -t TEST [-S SIZE] [-n ITERS] [-d DEPTH]
 *		  [-f FLAG[,FLAG...]] [-P LIST,MOD,INLINE] [-x CORRUPTION] [-w SEC]
 *	perf_peer -a ADDR -p PORT -s [-k CONNECTIONS] [-x CORRUPTION] [-w SEC]
 *
 * As a client (the default) it asks a kverbs server for TEST (write_bw,
 * read_bw, send_bw, atomic_bw, read_lat, atomic_lat, write_lat,
 * send_lat) with ITERS messages (10) of SIZE bytes (64), DEPTH in flight
 * (8; 1 for the latency tests), and the FLAGs given (validate, imm, inv,
 * reverse, ud, cmp_swap: &enum kverbs_perf_flags), the hello's
 * post_list, cq_mod and inline_size from -P; and plays the client's
 * part.  As a server (-s) it takes CONNECTIONS kverbs clients' hellos (1;
 * a client's -b makes two), each in a thread of its own, and plays
 * what each hello leaves to the server.  Either way it is the requester
 * where the hello says so (the client, unless KVERBS_PERF_F_REVERSE) and
 * the responder otherwise, and the ping-pong's other side.  It moves one
 * message at a time, each waited for: kverbs' side is the one on test.
 *
 * Without -x it plays fair: the control.  CORRUPTION spoils what the
 * peer produces for iteration K, wherever the test has the peer produce
 * data (a requester's WRITEs, SENDs and atomic operations, a READ
 * responder's slots, an atomic responder's words, the ping-pong's
 * answers, datagrams):
 *
 *   byte:K:X   byte X of message K flipped (every bit)
 *   stamp:K    word 0 of message K, which carries its iteration
 *              (kverbs_perf_word()), is K + 1's
 *   len:K:L    message K is only its first L bytes.  Where the message
 *              is WRITTEN over an older one, the peer knows what the
 *              bytes past L hold (zeros before the first, else the
 *              message it wrote there last) and refuses a corruption
 *              whose byte L would not differ from the pattern's
 *   imm:K      the immediate data of message K is K + 1's
 *   value:K    an atomic test: operation K, as requester, adds 2 where
 *              it should add 1 (compare-and-swap: swaps in 2 more); as
 *              responder, the word operation K fetches holds garbage
 *              before it (K must be below the words advertised, so that
 *              K is the first operation on it)
 *
 * Prints "done N" once every session ran to its end, N the messages of
 * the last, and exits 0; "cut off after N" when kverbs ended a session
 * (hung up, or its QP went away), and exits 1; exits 2 on a failure of
 * its own or a protocol kverbs broke, with the reason on stderr.  Each
 * wait is bounded by -w SEC (30).
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* The wire format, as the module has it, and the uAPI's tests and flags. */
#include "../kernel/perf/perf_proto.h"
#include <uapi/kverbs.h>

/* A UD receive starts with the 40 bytes of a GRH. */
#define KV_GRH		40
/* Receives of the connection's ring: data, where it comes in receives, and control. */
#define KV_RING_MIN	16
/* Datagram receives. */
#define KV_UD_RECVS	64
#define KV_MAX_CONNS	8

enum kv_kind { KV_FAIR, KV_BYTE, KV_STAMP, KV_LEN, KV_IMM, KV_VALUE };

static struct {
	enum kv_kind kind;
	uint64_t k;
	uint32_t v;
} kv_bad;

static double kv_wait_secs = 30;

static const char *const kv_tests[] = {
	[KVERBS_PERF_WRITE_BW] = "write_bw", [KVERBS_PERF_READ_BW] = "read_bw",
	[KVERBS_PERF_SEND_BW] = "send_bw", [KVERBS_PERF_READ_LAT] = "read_lat",
	[KVERBS_PERF_ATOMIC_LAT] = "atomic_lat", [KVERBS_PERF_ATOMIC_BW] = "atomic_bw",
	[KVERBS_PERF_WRITE_LAT] = "write_lat", [KVERBS_PERF_SEND_LAT] = "send_lat",
};

static const struct {
	const char *name;
	uint32_t flag;
} kv_flags[] = {
	{ "validate", KVERBS_PERF_F_VALIDATE }, { "cmp_swap", KVERBS_PERF_F_CMP_SWAP },
	{ "reverse", KVERBS_PERF_F_REVERSE }, { "imm", KVERBS_PERF_F_IMM },
	{ "inv", KVERBS_PERF_F_INV }, { "ud", KVERBS_PERF_F_UD }, { "rw", KVERBS_PERF_F_RW },
};

/* One connection, a session of a test, and its side of the data path. */
struct kv_conn {
	struct rdma_cm_id *id;
	bool client;
	bool iwarp;
	/* What the hello says. */
	uint32_t test, flags, size, depth;
	uint64_t iters;
	struct kverbs_perf_hello hello;
	bool requester;
	uint32_t ctrl_len;		/* our control messages' length */
	/* Verbs. */
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	/* The data buffer: a responder's slots, or a requester's source. */
	uint8_t *data;
	size_t data_len;
	struct ibv_mr *mr;
	struct ibv_mw *mw;		/* KVERBS_PERF_F_INV: what the READ responder advertises */
	uint32_t rkey;			/* ... the key advertised */
	/* The ring of receives, control and data alike. */
	uint8_t *ring;
	uint32_t nring, ring_len;
	uint64_t taken;
	struct ibv_mr *ring_mr;
	/* The control message sent. */
	uint8_t send_buf[64];
	struct ibv_mr *send_mr;
	/* The peer's buffer, from its ADV. */
	uint64_t raddr;
	uint32_t rrkey, rslots, rstride;
	bool grants;
	/* UD (KVERBS_PERF_F_UD): our QP, its CQ, the peer's address and QP. */
	struct ibv_qp *ud;
	struct ibv_cq *ucq;
	struct ibv_ah *ah;
	uint32_t remote_qpn;
	uint8_t *udbuf;
	uint32_t ud_len;
	uint64_t ud_taken;
	struct ibv_mr *ud_mr;
	/* The end. */
	bool disconnected;
	uint64_t done;			/* messages of the session done */
	int result;			/* 0 done, 1 cut off, 2 failed */
};

static double kv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int kv_fail(struct kv_conn *c, const char *what)
{
	fprintf(stderr, "perf_peer: %s %s: %s\n", kv_tests[c->test], what,
		errno ? strerror(errno) : "failed");
	return 2;
}

static bool kv_lat(uint32_t test)
{
	return test == KVERBS_PERF_READ_LAT || test == KVERBS_PERF_ATOMIC_LAT ||
	       test == KVERBS_PERF_WRITE_LAT || test == KVERBS_PERF_SEND_LAT;
}

static bool kv_atomic(uint32_t test)
{
	return test == KVERBS_PERF_ATOMIC_BW || test == KVERBS_PERF_ATOMIC_LAT;
}

static bool kv_pingpong(uint32_t test)
{
	return test == KVERBS_PERF_WRITE_LAT || test == KVERBS_PERF_SEND_LAT;
}

/* Where the requester's data lands in the responder's receives (perf.h). */
static bool kv_recv_data(const struct kv_conn *c)
{
	return c->test == KVERBS_PERF_SEND_BW || c->test == KVERBS_PERF_SEND_LAT ||
	       (c->flags & KVERBS_PERF_F_IMM);
}

/* The byte at @off of the pattern of @iter (kverbs_perf_fill()). */
static uint8_t kv_pattern_byte(uint64_t iter, uint32_t off)
{
	return kverbs_perf_word(iter, off / 8) >> (8 * (off % 8));
}

/*
 * Message @iter of @len bytes in @p, as kverbs fills it, and spoiled as
 * -x says if it is the one; returns the bytes to move.
 */
static uint32_t kv_build(uint8_t *p, uint32_t len, uint64_t iter)
{
	uint64_t w;
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = kv_pattern_byte(iter, i);
	if (iter != kv_bad.k)
		return len;
	switch (kv_bad.kind) {
	case KV_BYTE:
		p[kv_bad.v] ^= 0xff;
		break;
	case KV_STAMP:
		w = htole64(kverbs_perf_word(iter + 1, 0));
		memcpy(p, &w, len < 8 ? len : 8);
		break;
	case KV_LEN:
		return kv_bad.v;
	default:
		break;
	}
	return len;
}

/*
 * -x len:K:L over a message WRITTEN where message @stale was (-1: none,
 * zeros): byte L must differ, or kverbs could not see the cut there.
 */
static int kv_len_visible(struct kv_conn *c, uint64_t iter, int64_t stale)
{
	uint8_t was;

	if (kv_bad.kind != KV_LEN || iter != kv_bad.k)
		return 0;
	if (kv_bad.v >= c->size) {
		fprintf(stderr, "perf_peer: len:%llu:%u is not shorter than %u\n",
			(unsigned long long)iter, kv_bad.v, c->size);
		return 2;
	}
	was = stale < 0 ? 0 : kv_pattern_byte(stale, kv_bad.v);
	if (was == kv_pattern_byte(iter, kv_bad.v)) {
		fprintf(stderr, "perf_peer: byte %u of message %llu is what the slot held: pick another length\n",
			kv_bad.v, (unsigned long long)iter);
		return 2;
	}
	return 0;
}

static uint32_t kv_imm(uint64_t iter)
{
	return htobe32((uint32_t)iter + (kv_bad.kind == KV_IMM && iter == kv_bad.k));
}

/*
 * Whether kverbs hung up: a DISCONNECTED (or any ending) event on the
 * connection's own channel.  Kept once seen.
 */
static bool kv_hung_up(struct kv_conn *c)
{
	struct pollfd pfd = { .fd = c->id->channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	while (!c->disconnected && poll(&pfd, 1, 0) == 1 &&
	       !rdma_get_cm_event(c->id->channel, &ev)) {
		c->disconnected = ev->event == RDMA_CM_EVENT_DISCONNECTED ||
				  ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ||
				  ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT;
		rdma_ack_cm_event(ev);
	}
	return c->disconnected;
}

/*
 * Sleep until a completion may be in or a CM event is, at most a
 * millisecond: the completion channel of the connection's CQs and the
 * ID's event channel, together.
 */
static void kv_nap(struct kv_conn *c)
{
	struct pollfd pfd[2] = {
		{ .fd = c->ch->fd, .events = POLLIN },
		{ .fd = c->id->channel->fd, .events = POLLIN },
	};
	struct ibv_cq *cq;
	void *ctx;

	if (poll(pfd, 2, 1) > 0 && (pfd[0].revents & POLLIN) &&
	    !ibv_get_cq_event(c->ch, &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
	}
}

/*
 * One completion of @cq: 0 when it succeeded, 1 when kverbs ended the
 * session (hung up, or the completion failed: flushed, or refused by a
 * peer that is going), 2 when none came in time.  After a hang-up a
 * completion already on its way still has a second to come.
 */
static int kv_poll(struct kv_conn *c, struct ibv_cq *cq, struct ibv_wc *wc)
{
	double start = kv_now(), gone = 0;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return kv_fail(c, "ibv_poll_cq");
		if (n) {
			if (wc->status == IBV_WC_SUCCESS)
				return 0;
			fprintf(stderr, "perf_peer: %s: a completion: %s\n",
				kv_tests[c->test], ibv_wc_status_str(wc->status));
			return 1;
		}
		if (kv_hung_up(c)) {
			if (!gone)
				gone = kv_now();
			else if (kv_now() - gone > 1)
				return 1;
		}
		if (kv_now() - start > kv_wait_secs) {
			fprintf(stderr, "perf_peer: %s: no completion within %g s\n",
				kv_tests[c->test], kv_wait_secs);
			return 2;
		}
		kv_nap(c);
	}
}

/* Post @wr signaled on @qp and wait for its completion. */
static int kv_post_on(struct kv_conn *c, struct ibv_qp *qp, struct ibv_cq *cq,
		      struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad))
		return kv_hung_up(c) ? 1 : kv_fail(c, "ibv_post_send");
	return kv_poll(c, cq, &wc);
}

static int kv_post(struct kv_conn *c, struct ibv_send_wr *wr)
{
	return kv_post_on(c, c->id->qp, c->scq, wr);
}

/* Post receive @i of the ring. */
static int kv_ring_post(struct kv_conn *c, uint32_t i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->ring + (size_t)i * c->ring_len),
		.length = c->ring_len, .lkey = c->ring_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad) ? kv_fail(c, "ibv_post_recv") : 0;
}

/*
 * The next receive of the ring, in the order they were posted (and so
 * complete); the caller gives it back with kv_ring_give().
 */
static int kv_ring_take(struct kv_conn *c, struct ibv_wc *wc, uint8_t **buf)
{
	uint32_t i = c->taken % c->nring;
	int ret;

	ret = kv_poll(c, c->rcq, wc);
	if (ret)
		return ret;
	if (wc->wr_id != i) {
		fprintf(stderr, "perf_peer: receive %llu completed before %u\n",
			(unsigned long long)wc->wr_id, i);
		return 2;
	}
	*buf = c->ring + (size_t)i * c->ring_len;
	return 0;
}

static int kv_ring_give(struct kv_conn *c)
{
	return kv_ring_post(c, c->taken++ % c->nring);
}

/* Whether a receive holds control: not data, by opcode or length (perf.h). */
static bool kv_is_ctrl(const struct kv_conn *c, const struct ibv_wc *wc)
{
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		return false;
	return !kv_recv_data(c) || c->test == KVERBS_PERF_WRITE_BW ||
	       c->test == KVERBS_PERF_WRITE_LAT || wc->byte_len != c->size;
}

/* Send control message @m, of our control length, a SEND with invalidate of @inv unless 0. */
static int kv_ctrl_send(struct kv_conn *c, struct kverbs_perf_msg *m, uint32_t inv)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->send_buf, .length = c->ctrl_len, .lkey = c->send_mr->lkey,
	};
	/* siw's provider reads the key to invalidate from wr.rdma.rkey: see perf_hello.c. */
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.invalidate_rkey = inv, .wr.rdma.rkey = inv,
	};

	memset(c->send_buf, 0, sizeof(c->send_buf));
	memcpy(c->send_buf, m, sizeof(*m));
	return kv_post(c, &wr);
}

static int kv_ctrl(struct kv_conn *c, uint32_t type, uint64_t a, uint64_t b)
{
	struct kverbs_perf_msg m = {
		.type = htole32(type), .a = htole64(a), .b = htole64(b),
	};

	return kv_ctrl_send(c, &m, 0);
}

/*
 * The next receive, which must be control message @type; into @m, the
 * receive posted again.  @wc, if given, gets its completion.
 */
static int kv_ctrl_wait(struct kv_conn *c, uint32_t type, struct kverbs_perf_msg *m,
			struct ibv_wc *wcp)
{
	struct ibv_wc wc;
	uint8_t *buf;
	int ret;

	ret = kv_ring_take(c, &wc, &buf);
	if (ret)
		return ret;
	memcpy(m, buf, sizeof(*m));
	if (!kv_is_ctrl(c, &wc) || wc.byte_len < sizeof(*m) || le32toh(m->type) != type) {
		fprintf(stderr, "perf_peer: %s: %u bytes of type %u where control message %u was due\n",
			kv_tests[c->test], wc.byte_len, le32toh(m->type), type);
		return 2;
	}
	if (wcp)
		*wcp = wc;
	return kv_ring_give(c);
}

/* The peer's buffer, from its ADV. */
static int kv_take_adv(struct kv_conn *c)
{
	struct kverbs_perf_msg m;
	int ret;

	ret = kv_ctrl_wait(c, KVERBS_PERF_MSG_ADV, &m, NULL);
	if (ret)
		return ret;
	c->raddr = le64toh(m.addr);
	c->rrkey = le32toh(m.rkey);
	c->rslots = le32toh(m.slots);
	c->rstride = le32toh(m.stride);
	c->grants = le64toh(m.a) & KVERBS_PERF_ADV_GRANTS;
	if (!c->rslots || c->rstride < c->size) {
		fprintf(stderr, "perf_peer: an ADV of %u slots %u bytes apart\n",
			c->rslots, c->rstride);
		return 2;
	}
	return 0;
}

/*
 * The session is over for us.  On InfiniBand and RoCE the requester
 * hangs up first and the responder waits for it; on iWARP the other way
 * round (kverbs_perf_responder_closes_first()).
 */
static void kv_end(struct kv_conn *c)
{
	double start = kv_now();

	if (c->requester == c->iwarp)
		while (!kv_hung_up(c) && kv_now() - start < kv_wait_secs)
			kv_nap(c);
	rdma_disconnect(c->id);
}

/* ---- the requester: WRITE, SEND and atomic operations ---- */

/* WRITE message @iter into the peer's slot for it. */
static int kv_write(struct kv_conn *c, uint64_t iter)
{
	uint32_t slot = iter % c->rslots;
	struct ibv_sge sge = { .addr = (uintptr_t)c->data, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };
	int ret;

	/* What the slot held: zeros, or the message one round before. */
	ret = kv_len_visible(c, iter, iter >= c->rslots ? (int64_t)(iter - c->rslots) : -1);
	if (ret)
		return ret;
	sge.length = kv_build(c->data, c->size, iter);
	wr.opcode = c->flags & KVERBS_PERF_F_IMM ? IBV_WR_RDMA_WRITE_WITH_IMM :
						   IBV_WR_RDMA_WRITE;
	wr.imm_data = kv_imm(iter);
	wr.wr.rdma.remote_addr = c->raddr + (uint64_t)slot * c->rstride;
	wr.wr.rdma.rkey = c->rrkey;
	return kv_post(c, &wr);
}

static int kv_send(struct kv_conn *c, uint64_t iter)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->data, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };

	sge.length = kv_build(c->data, c->size, iter);
	wr.opcode = c->flags & KVERBS_PERF_F_IMM ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.imm_data = kv_imm(iter);
	return kv_post(c, &wr);
}

/*
 * Atomic operation @iter on word iter % slots, which the ones before on
 * that word counted up to iter / slots: it leaves one more, or with
 * -x value:K two more.
 */
static int kv_atomic_op(struct kv_conn *c, uint64_t iter)
{
	uint64_t count = iter / c->rslots, by = 1 + (kv_bad.kind == KV_VALUE && iter == kv_bad.k);
	/* What it fetches lands in our buffer, where nobody looks. */
	struct ibv_sge sge = { .addr = (uintptr_t)c->data, .length = 8, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };

	wr.wr.atomic.remote_addr = c->raddr + (iter % c->rslots) * c->rstride;
	wr.wr.atomic.rkey = c->rrkey;
	if (c->flags & KVERBS_PERF_F_CMP_SWAP) {
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = count;
		wr.wr.atomic.swap = count + by;
	} else {
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.compare_add = by;
	}
	return kv_post(c, &wr);
}

/* With grants (KVERBS_PERF_ADV_GRANTS): wait for the next window once @sent used this one. */
static int kv_credit(struct kv_conn *c, uint64_t sent, uint64_t *granted)
{
	struct kverbs_perf_msg m;
	int ret;

	if (!c->grants || sent < *granted)
		return 0;
	ret = kv_ctrl_wait(c, KVERBS_PERF_MSG_ROUND_OK, &m, NULL);
	if (ret)
		return ret;
	if (le64toh(m.a) != *granted) {
		fprintf(stderr, "perf_peer: a grant for %llu, expected %llu\n",
			(unsigned long long)le64toh(m.a), (unsigned long long)*granted);
		return 2;
	}
	*granted += c->rslots;
	return 0;
}

/*
 * --validate's round of WRITEs @first to @first + @n - 1 is in the
 * peer's slots: say so (KVERBS_PERF_F_INV: invalidating its key) and
 * take the key of the next.
 */
static int kv_round(struct kv_conn *c, uint64_t first, uint64_t n)
{
	struct kverbs_perf_msg m = {
		.type = htole32(KVERBS_PERF_MSG_ROUND), .a = htole64(first), .b = htole64(n),
	};
	int ret;

	ret = kv_ctrl_send(c, &m, c->flags & KVERBS_PERF_F_INV ? c->rrkey : 0);
	if (!ret)
		ret = kv_ctrl_wait(c, KVERBS_PERF_MSG_ROUND_OK, &m, NULL);
	if (ret)
		return ret;
	if (le64toh(m.a) != first + n) {
		fprintf(stderr, "perf_peer: ROUND_OK for %llu, expected %llu\n",
			(unsigned long long)le64toh(m.a), (unsigned long long)(first + n));
		return 2;
	}
	if (c->flags & KVERBS_PERF_F_INV)
		c->rrkey = le32toh(m.rkey);
	return 0;
}

static int kv_requester(struct kv_conn *c)
{
	bool rounds = (c->flags & KVERBS_PERF_F_VALIDATE) && c->test == KVERBS_PERF_WRITE_BW;
	uint64_t i, first = 0, granted;
	double start;
	int ret;

	/* The client speaks first (perf.h); a server's requester waits for the ADV. */
	if (c->client) {
		ret = kv_ctrl(c, KVERBS_PERF_MSG_START, 0, 0);
		if (ret)
			return ret;
	}
	ret = kv_take_adv(c);
	if (ret)
		return ret;
	granted = c->rslots;
	start = kv_now();
	for (i = 0; i < c->iters; i++) {
		switch (c->test) {
		case KVERBS_PERF_WRITE_BW:
			ret = kv_credit(c, i, &granted);
			if (!ret)
				ret = kv_write(c, i);
			if (!ret && rounds && (i + 1 - first == c->rslots || i + 1 == c->iters)) {
				ret = kv_round(c, first, i + 1 - first);
				first = i + 1;
			}
			break;
		case KVERBS_PERF_SEND_BW:
			ret = kv_credit(c, i, &granted);
			if (!ret)
				ret = kv_send(c, i);
			break;
		default:
			ret = kv_atomic_op(c, i);
			break;
		}
		if (ret)
			return ret;
		c->done = i + 1;
	}
	/* DONE takes a receive too. */
	ret = kv_credit(c, c->iters, &granted);
	if (!ret)
		ret = kv_ctrl(c, KVERBS_PERF_MSG_DONE, c->iters,
			      (uint64_t)((kv_now() - start) * 1e9) + 1);
	if (!ret)
		kv_end(c);
	return ret;
}

/* ---- the responder: READ slots, atomic words, WRITE and SEND taken ---- */

/* The slots of the READ round that starts at @first, filled. */
static int kv_fill_round(struct kv_conn *c, uint64_t first)
{
	uint32_t i;
	int ret;

	for (i = 0; i < c->rslots; i++) {
		ret = kv_len_visible(c, first + i, first + i >= c->rslots ?
				     (int64_t)(first + i - c->rslots) : -1);
		if (ret)
			return ret;
		/* A cut message leaves the rest of the slot as it was. */
		if (kv_bad.kind == KV_LEN && first + i == kv_bad.k) {
			uint8_t msg[c->size];
			uint32_t len = kv_build(msg, c->size, first + i);

			memcpy(c->data + (size_t)i * c->size, msg, len);
			continue;
		}
		kv_build(c->data + (size_t)i * c->size, c->size, first + i);
	}
	return 0;
}

/*
 * KVERBS_PERF_F_INV: the READ responder's key is a type 2 memory window
 * over its buffer, which a SEND with invalidate can take; each round
 * binds it again under a fresh key.
 */
static int kv_bind(struct kv_conn *c)
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = {
			.mw = c->mw,
			.bind_info = {
				.mr = c->mr, .addr = (uintptr_t)c->data,
				.length = c->data_len,
				.mw_access_flags = IBV_ACCESS_REMOTE_READ,
			},
		},
	};
	int ret;

	c->rkey = ibv_inc_rkey(c->mw->rkey);
	wr.bind_mw.rkey = c->rkey;
	ret = kv_post(c, &wr);
	/*
	 * The next bind names the window by its current key, which a bind
	 * posted as a work request leaves to us to keep (ibv_bind_mw()
	 * keeps a type 1 window's): rxe fails a bind that names an old one.
	 */
	if (!ret)
		c->mw->rkey = c->rkey;
	return ret;
}

static int kv_responder(struct kv_conn *c)
{
	struct kverbs_perf_msg m = { .type = htole32(KVERBS_PERF_MSG_ADV) };
	bool reads = c->test == KVERBS_PERF_READ_BW || c->test == KVERBS_PERF_READ_LAT;
	bool validate = c->flags & KVERBS_PERF_F_VALIDATE;
	uint64_t received = 0, first, n;
	struct ibv_wc wc;
	uint8_t *buf;
	int ret;

	if (!c->client) {
		ret = kv_ctrl_wait(c, KVERBS_PERF_MSG_START, &m, NULL);
		if (ret)
			return ret;
	}
	/*
	 * The slots: READ --validate's rounds must be as long as the
	 * requester's, its TX depth (kverbs_perf_slots() of a buffer this
	 * size: the caller keeps it under 16 MiB and 256 messages); the
	 * atomic words, 16; SEND_BW's receives, the ring less what control
	 * messages may take, granted a window at a time.
	 */
	c->rslots = kv_atomic(c->test) ? 16 : c->test == KVERBS_PERF_SEND_BW ? c->nring - 4 :
		    c->depth;
	c->rstride = kv_atomic(c->test) ? 8 : c->size;
	if (reads && validate) {
		ret = kv_fill_round(c, 0);
		if (ret)
			return ret;
	}
	if (kv_bad.kind == KV_VALUE) {
		if (kv_bad.k >= c->rslots) {
			fprintf(stderr, "perf_peer: value:%llu: only %u words\n",
				(unsigned long long)kv_bad.k, c->rslots);
			return 2;
		}
		memset(c->data + kv_bad.k * 8, 0x5a, 8);
	}
	if (c->mw) {
		ret = kv_bind(c);
		if (ret)
			return ret;
	}
	memset(&m, 0, sizeof(m));
	m.type = htole32(KVERBS_PERF_MSG_ADV);
	m.addr = htole64((uintptr_t)c->data);
	m.rkey = htole32(c->rkey);
	m.slots = htole32(c->rslots);
	m.stride = htole32(c->rstride);
	if (c->test == KVERBS_PERF_SEND_BW)
		m.a = htole64(KVERBS_PERF_ADV_GRANTS);
	ret = kv_ctrl_send(c, &m, 0);
	if (ret)
		return ret;
	for (;;) {
		ret = kv_ring_take(c, &wc, &buf);
		if (ret)
			return ret;
		if (!kv_is_ctrl(c, &wc)) {
			ret = kv_ring_give(c);
			c->done = ++received;
			/* SEND_BW: the window is taken and posted again: the next. */
			if (!ret && c->test == KVERBS_PERF_SEND_BW && received % c->rslots == 0)
				ret = kv_ctrl(c, KVERBS_PERF_MSG_ROUND_OK, received, 0);
			if (ret)
				return ret;
			continue;
		}
		memcpy(&m, buf, sizeof(m));
		ret = kv_ring_give(c);
		if (ret)
			return ret;
		switch (le32toh(m.type)) {
		case KVERBS_PERF_MSG_PROGRESS:
			continue;
		case KVERBS_PERF_MSG_ROUND:
			first = le64toh(m.a);
			n = le64toh(m.b);
			/*
			 * rxe hands userspace the kernel's IB_WC_WITH_INVALIDATE,
			 * bit 2, which is IBV_WC_IP_CSUM_OK there (no checksum
			 * on an RC QP): either says it.
			 */
			if (c->mw && (!(wc.wc_flags & (IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK)) ||
				      wc.invalidated_rkey != c->rkey)) {
				fprintf(stderr, "perf_peer: ROUND did not invalidate 0x%08x (flags 0x%x, key 0x%08x)\n",
					c->rkey, wc.wc_flags, wc.invalidated_rkey);
				return 2;
			}
			c->done = first + n;
			ret = reads ? kv_fill_round(c, first + n) : 0;
			if (!ret && c->mw)
				ret = kv_bind(c);
			memset(&m, 0, sizeof(m));
			m.type = htole32(KVERBS_PERF_MSG_ROUND_OK);
			m.a = htole64(first + n);
			m.rkey = htole32(c->rkey);
			if (!ret)
				ret = kv_ctrl_send(c, &m, 0);
			if (ret)
				return ret;
			continue;
		case KVERBS_PERF_MSG_DONE:
			c->done = le64toh(m.a);
			kv_end(c);
			return 0;
		default:
			fprintf(stderr, "perf_peer: control message %u from the requester\n",
				le32toh(m.type));
			return 2;
		}
	}
}

/* ---- the ping-pong: WRITE_LAT and SEND_LAT ---- */

/* The last byte of a WRITE_LAT message (kverbs_perf_pp_marker()). */
static uint8_t kv_marker(uint64_t iter)
{
	return 1 + iter % 255;
}

/* WRITE_LAT without immediate data: each side sees the other's message in memory. */
static bool kv_in_memory(const struct kv_conn *c)
{
	return c->test == KVERBS_PERF_WRITE_LAT && !(c->flags & KVERBS_PERF_F_IMM);
}

/*
 * Our message @iter: built after the slot the peer's land in, WRITTEN
 * into the peer's first slot or SENT.
 */
static int kv_pp_post(struct kv_conn *c, uint64_t iter)
{
	uint8_t *src = c->data + c->ring_len;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };
	int ret;

	/* What the peer's slot held: zeros, or our message before. */
	ret = kv_len_visible(c, iter, iter ? (int64_t)iter - 1 : -1);
	if (ret)
		return ret;
	sge.length = kv_build(src, c->size, iter);
	if (kv_in_memory(c))
		src[c->size - 1] = kv_marker(iter);
	wr.imm_data = kv_imm(iter);
	if (c->test == KVERBS_PERF_WRITE_LAT) {
		wr.opcode = c->flags & KVERBS_PERF_F_IMM ? IBV_WR_RDMA_WRITE_WITH_IMM :
							   IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = c->raddr;
		wr.wr.rdma.rkey = c->rrkey;
	} else {
		wr.opcode = c->flags & KVERBS_PERF_F_IMM ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	}
	return kv_post(c, &wr);
}

/*
 * The peer's message @iter, into our first slot or a receive of the
 * ring: 0 when it came, with *@ctrl set when a control message came
 * instead, into @m; else 1 (cut off) or 2.
 */
static int kv_pp_wait(struct kv_conn *c, uint64_t iter, struct kverbs_perf_msg *m,
		      bool *ctrl)
{
	volatile uint8_t *last = c->data + c->size - 1;
	double start = kv_now();
	struct ibv_wc wc;
	int n;

	*ctrl = false;
	for (;;) {
		if (kv_in_memory(c) && *last == kv_marker(iter))
			return 0;
		n = ibv_poll_cq(c->rcq, 1, &wc);
		if (n < 0)
			return kv_fail(c, "ibv_poll_cq");
		if (n) {
			if (wc.status != IBV_WC_SUCCESS)
				return 1;
			if (wc.wr_id != c->taken % c->nring) {
				fprintf(stderr, "perf_peer: receive %llu out of order\n",
					(unsigned long long)wc.wr_id);
				return 2;
			}
			*ctrl = kv_is_ctrl(c, &wc);
			if (*ctrl)
				memcpy(m, c->ring + (size_t)wc.wr_id * c->ring_len, sizeof(*m));
			return kv_ring_give(c);
		}
		if (kv_hung_up(c))
			return 1;
		if (kv_now() - start > kv_wait_secs) {
			fprintf(stderr, "perf_peer: %s: message %llu not seen within %g s\n",
				kv_tests[c->test], (unsigned long long)iter, kv_wait_secs);
			return 2;
		}
		kv_nap(c);
	}
}

/* Our buffer's first slot, where the peer's messages land: WRITE_LAT's ADV. */
static int kv_pp_adv(struct kv_conn *c)
{
	struct kverbs_perf_msg m = {
		.type = htole32(KVERBS_PERF_MSG_ADV), .addr = htole64((uintptr_t)c->data),
		.rkey = htole32(c->rkey), .slots = htole32(1), .stride = htole32(c->size),
	};

	return kv_ctrl_send(c, &m, 0);
}

/* The client's ping-pong: message i out, answer i back, then DONE. */
static int kv_pp_client(struct kv_conn *c)
{
	struct kverbs_perf_msg m;
	double start;
	uint64_t i;
	bool ctrl;
	int ret;

	ret = kv_ctrl(c, KVERBS_PERF_MSG_START, 0, 0);
	if (!ret)
		ret = kv_take_adv(c);
	/* WRITE_LAT: where the server's answers go. */
	if (!ret && c->test == KVERBS_PERF_WRITE_LAT)
		ret = kv_pp_adv(c);
	if (ret)
		return ret;
	start = kv_now();
	for (i = 0; i < c->iters; i++) {
		ret = kv_pp_post(c, i);
		if (!ret)
			ret = kv_pp_wait(c, i, &m, &ctrl);
		if (ret)
			return ret;
		if (ctrl) {
			fprintf(stderr, "perf_peer: a control message for answer %llu\n",
				(unsigned long long)i);
			return 2;
		}
		c->done = i + 1;
	}
	ret = kv_ctrl(c, KVERBS_PERF_MSG_DONE, c->iters, (uint64_t)((kv_now() - start) * 1e9) + 1);
	if (!ret)
		kv_end(c);
	return ret;
}

/* The server's ping-pong: each message answered with its own, until DONE. */
static int kv_pp_server(struct kv_conn *c)
{
	struct kverbs_perf_msg m;
	uint64_t i;
	bool ctrl;
	int ret;

	ret = kv_ctrl_wait(c, KVERBS_PERF_MSG_START, &m, NULL);
	if (!ret)
		ret = kv_pp_adv(c);
	if (!ret && c->test == KVERBS_PERF_WRITE_LAT)
		ret = kv_take_adv(c);
	for (i = 0; !ret; i++) {
		ret = kv_pp_wait(c, i, &m, &ctrl);
		if (ret)
			break;
		if (ctrl) {
			if (le32toh(m.type) != KVERBS_PERF_MSG_DONE) {
				fprintf(stderr, "perf_peer: control message %u in the ping-pong\n",
					le32toh(m.type));
				return 2;
			}
			c->done = le64toh(m.a);
			kv_end(c);
			return 0;
		}
		ret = kv_pp_post(c, i);
		c->done = i + 1;
	}
	return ret;
}

/* ---- datagrams: SEND_BW and SEND_LAT over UD (kernel/perf/perf_ud.c) ---- */

static int kv_ud_post_recv(struct kv_conn *c, uint32_t i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->udbuf + (size_t)i * c->ud_len),
		.length = c->ud_len, .lkey = c->ud_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(c->ud, &wr, &bad) ? kv_fail(c, "ibv_post_recv (UD)") : 0;
}

/*
 * Our UD QP, on the connection's PD, its receives posted, in RTS; and
 * the peer's address, from the connection's path, as perf_ud.c takes it.
 */
static int kv_ud_setup(struct kv_conn *c)
{
	struct ibv_qp_init_attr init = {
		.send_cq = c->scq, .recv_cq = c->ucq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = KV_UD_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = c->id->port_num,
		.qkey = RDMA_UDP_QKEY,
	};
	int mask, ret;
	uint32_t i;

	c->ud = ibv_create_qp(c->pd, &init);
	if (!c->ud || ibv_modify_qp(c->ud, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_QKEY))
		return kv_fail(c, "the UD QP");
	for (i = 0; i < KV_UD_RECVS; i++) {
		ret = kv_ud_post_recv(c, i);
		if (ret)
			return ret;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(c->ud, &attr, IBV_QP_STATE))
		return kv_fail(c, "the UD QP's RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(c->ud, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return kv_fail(c, "the UD QP's RTS");
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	if (rdma_init_qp_attr(c->id, &attr, &mask))
		return kv_fail(c, "rdma_init_qp_attr");
	c->ah = ibv_create_ah(c->pd, &attr.ah_attr);
	return c->ah ? 0 : kv_fail(c, "ibv_create_ah");
}

static int kv_ud_send(struct kv_conn *c, uint64_t iter)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->data, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
		.imm_data = kv_imm(iter),
		.wr.ud = { .ah = c->ah, .remote_qpn = c->remote_qpn,
			   .remote_qkey = RDMA_UDP_QKEY },
	};

	sge.length = kv_build(c->data, c->size, iter);
	return kv_post_on(c, c->ud, c->scq, &wr);
}

/*
 * The next datagram, its receive posted again (0), or a control message
 * on the connection, into @m (*@ctrl); else 1 or 2.
 */
static int kv_ud_wait(struct kv_conn *c, struct kverbs_perf_msg *m, bool *ctrl)
{
	double start = kv_now();
	struct ibv_wc wc;
	int n;

	*ctrl = false;
	for (;;) {
		n = ibv_poll_cq(c->ucq, 1, &wc);
		if (n > 0) {
			if (wc.status != IBV_WC_SUCCESS)
				return 1;
			c->ud_taken++;
			return kv_ud_post_recv(c, wc.wr_id);
		}
		n = ibv_poll_cq(c->rcq, 1, &wc);
		if (n > 0) {
			if (wc.status != IBV_WC_SUCCESS)
				return 1;
			*ctrl = true;
			memcpy(m, c->ring + (size_t)wc.wr_id * c->ring_len, sizeof(*m));
			return kv_ring_give(c);
		}
		if (n < 0)
			return kv_fail(c, "ibv_poll_cq");
		if (kv_hung_up(c))
			return 1;
		if (kv_now() - start > kv_wait_secs) {
			fprintf(stderr, "perf_peer: %s: nothing within %g s\n",
				kv_tests[c->test], kv_wait_secs);
			return 2;
		}
		kv_nap(c);
	}
}

/* The client over UD: START with our QP, the ADV with the server's, datagrams, DONE. */
static int kv_ud_client(struct kv_conn *c)
{
	struct kverbs_perf_msg m;
	double start;
	uint64_t i;
	bool ctrl;
	int ret;

	ret = kv_ctrl(c, KVERBS_PERF_MSG_START, c->ud->qp_num, 0);
	if (!ret)
		ret = kv_ctrl_wait(c, KVERBS_PERF_MSG_ADV, &m, NULL);
	if (ret)
		return ret;
	c->remote_qpn = le64toh(m.a) & 0xffffff;
	start = kv_now();
	for (i = 0; i < c->iters; i++) {
		ret = kv_ud_send(c, i);
		/* SEND_LAT: the server's answer, which it sends once it took ours. */
		if (!ret && c->test == KVERBS_PERF_SEND_LAT) {
			ret = kv_ud_wait(c, &m, &ctrl);
			if (!ret && ctrl) {
				fprintf(stderr, "perf_peer: a control message for answer %llu\n",
					(unsigned long long)i);
				return 2;
			}
		}
		if (ret)
			return ret;
		c->done = i + 1;
	}
	ret = kv_ctrl(c, KVERBS_PERF_MSG_DONE, c->iters, (uint64_t)((kv_now() - start) * 1e9) + 1);
	if (!ret)
		ret = kv_ctrl_wait(c, KVERBS_PERF_MSG_ROUND_OK, &m, NULL);
	if (!ret)
		kv_end(c);
	return ret;
}

/*
 * The server of SEND_LAT over UD: the client's QP from START, ours in the
 * ADV; each datagram answered with one of its own, in order (the client
 * sends the next once it has the answer); DONE answered with ROUND_OK.
 */
static int kv_ud_server(struct kv_conn *c)
{
	struct kverbs_perf_msg m;
	uint64_t i;
	bool ctrl;
	int ret;

	if (c->test != KVERBS_PERF_SEND_LAT) {
		fprintf(stderr, "perf_peer: as a server over UD, send_lat only\n");
		return 2;
	}
	ret = kv_ctrl_wait(c, KVERBS_PERF_MSG_START, &m, NULL);
	if (ret)
		return ret;
	c->remote_qpn = le64toh(m.a) & 0xffffff;
	ret = kv_ctrl(c, KVERBS_PERF_MSG_ADV, c->ud->qp_num, 0);
	for (i = 0; !ret; i++) {
		ret = kv_ud_wait(c, &m, &ctrl);
		if (ret)
			break;
		if (ctrl) {
			if (le32toh(m.type) != KVERBS_PERF_MSG_DONE) {
				fprintf(stderr, "perf_peer: control message %u over UD\n",
					le32toh(m.type));
				return 2;
			}
			c->done = le64toh(m.a);
			ret = kv_ctrl(c, KVERBS_PERF_MSG_ROUND_OK, c->done, 0);
			if (!ret)
				kv_end(c);
			return ret;
		}
		ret = kv_ud_send(c, i);
		c->done = i + 1;
	}
	return ret;
}

/* ---- a session ---- */

/*
 * What the hello leaves to us, and the verbs for it: the QP, the ring
 * posted, the data buffer registered; before the connection is made, so
 * that nothing kverbs sends finds us unready.
 */
static int kv_setup(struct kv_conn *c)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	uint32_t i;
	int ret;

	c->iwarp = c->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
	c->requester = c->client == !(c->flags & KVERBS_PERF_F_REVERSE);
	/* The requester's control messages are told from data by their length. */
	c->ctrl_len = sizeof(struct kverbs_perf_msg);
	if (c->requester && kv_recv_data(c) && !(c->flags & KVERBS_PERF_F_UD) &&
	    c->size == sizeof(struct kverbs_perf_msg))
		c->ctrl_len += 8;
	/* A corruption the message has no room for would be a control that passes. */
	if ((kv_bad.kind == KV_BYTE || kv_bad.kind == KV_LEN) && kv_bad.v >= c->size) {
		fprintf(stderr, "perf_peer: -x past a message of %u bytes\n", c->size);
		return 2;
	}
	if (c->depth > 255 || (uint64_t)c->depth * c->size > (16 << 20)) {
		fprintf(stderr, "perf_peer: %u slots of %u bytes: more than kverbs' slots\n",
			c->depth, c->size);
		return 2;
	}
	c->pd = ibv_alloc_pd(c->id->verbs);
	c->ch = ibv_create_comp_channel(c->id->verbs);
	if (!c->pd || !c->ch)
		return kv_fail(c, "the PD");
	c->nring = kv_recv_data(c) ? 4 * c->depth + 8 : KV_RING_MIN;
	if (c->nring < KV_RING_MIN)
		c->nring = KV_RING_MIN;
	c->ring_len = c->size > 64 ? c->size : 64;
	c->scq = ibv_create_cq(c->id->verbs, 32, c, c->ch, 0);
	c->rcq = ibv_create_cq(c->id->verbs, c->nring, c, c->ch, 0);
	c->ucq = ibv_create_cq(c->id->verbs, KV_UD_RECVS, c, c->ch, 0);
	if (!c->scq || !c->rcq || !c->ucq || ibv_req_notify_cq(c->scq, 0) ||
	    ibv_req_notify_cq(c->rcq, 0) || ibv_req_notify_cq(c->ucq, 0))
		return kv_fail(c, "the CQs");
	qpa.send_cq = c->scq;
	qpa.recv_cq = c->rcq;
	qpa.cap.max_recv_wr = c->nring;
	if (rdma_create_qp(c->id, c->pd, &qpa))
		return kv_fail(c, "rdma_create_qp");
	/* Slots, a ping-pong's source after its first, or a requester's message. */
	c->data_len = (size_t)(c->depth > 16 ? c->depth : 16) * (c->size > 8 ? c->size : 8) +
		      2 * (size_t)c->ring_len;
	c->data = calloc(1, c->data_len);
	c->ring = calloc(c->nring, c->ring_len);
	c->ud_len = KV_GRH + c->size;
	c->udbuf = calloc(KV_UD_RECVS, c->ud_len);
	if (!c->data || !c->ring || !c->udbuf)
		return kv_fail(c, "memory");
	if (kv_atomic(c->test))
		access |= IBV_ACCESS_REMOTE_ATOMIC;
	/* READ --inv: the key a SEND with invalidate takes is a memory window's. */
	if ((c->flags & KVERBS_PERF_F_INV) && !c->requester)
		access |= IBV_ACCESS_MW_BIND;
	c->mr = ibv_reg_mr(c->pd, c->data, c->data_len, access);
	c->ring_mr = ibv_reg_mr(c->pd, c->ring, (size_t)c->nring * c->ring_len,
				IBV_ACCESS_LOCAL_WRITE);
	c->send_mr = ibv_reg_mr(c->pd, c->send_buf, sizeof(c->send_buf),
				IBV_ACCESS_LOCAL_WRITE);
	c->ud_mr = ibv_reg_mr(c->pd, c->udbuf, (size_t)KV_UD_RECVS * c->ud_len,
			      IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr || !c->ring_mr || !c->send_mr || !c->ud_mr)
		return kv_fail(c, "ibv_reg_mr");
	c->rkey = c->mr->rkey;
	if ((c->flags & KVERBS_PERF_F_INV) && !c->requester) {
		c->mw = ibv_alloc_mw(c->pd, IBV_MW_TYPE_2);
		if (!c->mw)
			return kv_fail(c, "ibv_alloc_mw");
	}
	for (i = 0; i < c->nring; i++) {
		ret = kv_ring_post(c, i);
		if (ret)
			return ret;
	}
	return 0;
}

/* The conn_param both sides give: READs and atomics, as many as allowed. */
static void kv_param(struct kv_conn *c, struct rdma_conn_param *p)
{
	struct ibv_device_attr dev = {};

	ibv_query_device(c->id->verbs, &dev);
	p->responder_resources = dev.max_qp_rd_atom < 16 ? dev.max_qp_rd_atom : 16;
	p->initiator_depth = dev.max_qp_init_rd_atom < 16 ? dev.max_qp_init_rd_atom : 16;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

static int kv_play(struct kv_conn *c)
{
	int ret;

	if (c->flags & KVERBS_PERF_F_UD) {
		ret = kv_ud_setup(c);
		if (ret)
			return ret;
		return c->client ? kv_ud_client(c) : kv_ud_server(c);
	}
	if (kv_pingpong(c->test))
		return c->client ? kv_pp_client(c) : kv_pp_server(c);
	return c->requester ? kv_requester(c) : kv_responder(c);
}

/* A server's session, in a thread of its own: the hello taken, accepted, played. */
static void *kv_serve(void *arg)
{
	struct kv_conn *c = arg;
	const struct kverbs_perf_hello *h;
	struct rdma_conn_param param = {};

	h = c->id->event->param.conn.private_data;
	if (c->id->event->param.conn.private_data_len < sizeof(*h) ||
	    le16toh(h->magic) != KVERBS_PERF_MAGIC || le16toh(h->version) != KVERBS_PERF_VERSION) {
		fprintf(stderr, "perf_peer: a connection request without a hello of version %u\n",
			KVERBS_PERF_VERSION);
		c->result = 2;
		return NULL;
	}
	c->test = le16toh(h->test);
	c->flags = le16toh(h->flags);
	c->size = le32toh(h->msg_size);
	c->depth = le32toh(h->tx_depth);
	c->iters = le64toh(h->iterations);
	if (c->test >= sizeof(kv_tests) / sizeof(kv_tests[0]) || !kv_tests[c->test] ||
	    !c->iters) {
		fprintf(stderr, "perf_peer: a hello for test %u, %llu iterations\n", c->test,
			(unsigned long long)c->iters);
		c->result = 2;
		return NULL;
	}
	c->result = kv_setup(c);
	if (c->result)
		return NULL;
	kv_param(c, &param);
	if (rdma_accept(c->id, &param)) {
		c->result = kv_fail(c, "rdma_accept");
		return NULL;
	}
	c->result = kv_play(c);
	return NULL;
}

static int kv_connect(struct kv_conn *c)
{
	struct rdma_conn_param param = {
		.private_data = &c->hello, .private_data_len = sizeof(c->hello),
	};
	int ret;

	ret = kv_setup(c);
	if (ret)
		return ret;
	kv_param(c, &param);
	if (rdma_connect(c->id, &param))
		return kv_fail(c, "rdma_connect");
	return kv_play(c);
}

static int kv_parse_corruption(const char *arg)
{
	unsigned long long k;
	unsigned int v;
	char kind[8];
	int n;

	n = sscanf(arg, "%7[a-z]:%llu:%u", kind, &k, &v);
	if (n < 2)
		return -1;
	kv_bad.k = k;
	kv_bad.v = v;
	if (!strcmp(kind, "byte") && n == 3)
		kv_bad.kind = KV_BYTE;
	else if (!strcmp(kind, "len") && n == 3)
		kv_bad.kind = KV_LEN;
	else if (!strcmp(kind, "stamp") && n == 2)
		kv_bad.kind = KV_STAMP;
	else if (!strcmp(kind, "imm") && n == 2)
		kv_bad.kind = KV_IMM;
	else if (!strcmp(kind, "value") && n == 2)
		kv_bad.kind = KV_VALUE;
	else
		return -1;
	return 0;
}

static int kv_parse_flags(const char *arg, uint32_t *flags)
{
	char buf[128], *tok, *save;
	size_t i;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(kv_flags) / sizeof(kv_flags[0]); i++)
			if (!strcmp(tok, kv_flags[i].name))
				break;
		if (i == sizeof(kv_flags) / sizeof(kv_flags[0]))
			return -1;
		*flags |= kv_flags[i].flag;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	static struct kv_conn conns[KV_MAX_CONNS];
	struct kv_conn *c = &conns[0];
	pthread_t threads[KV_MAX_CONNS];
	const char *addr = NULL, *port = NULL;
	unsigned int l = 0, q = 0, in = 0;
	int opt, nconns = 1, serve = 0, worst = 0, i;
	unsigned long long done = 0;
	struct rdma_cm_id *lid;

	c->size = 64;
	c->depth = 8;
	c->iters = 10;
	while ((opt = getopt(argc, argv, "a:p:t:S:n:d:f:P:x:w:sk:")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 't':
			for (c->test = KVERBS_PERF_SEND_LAT; c->test; c->test--)
				if (!strcmp(optarg, kv_tests[c->test]))
					break;
			if (!c->test)
				return 2;
			break;
		case 'S': c->size = strtoul(optarg, NULL, 0); break;
		case 'n': c->iters = strtoull(optarg, NULL, 0); break;
		case 'd': c->depth = strtoul(optarg, NULL, 0); break;
		case 'f':
			if (kv_parse_flags(optarg, &c->flags))
				return 2;
			break;
		case 'P':
			if (sscanf(optarg, "%u,%u,%u", &l, &q, &in) != 3)
				return 2;
			break;
		case 'x':
			if (kv_parse_corruption(optarg))
				return 2;
			break;
		case 'w': kv_wait_secs = atof(optarg); break;
		case 's': serve = 1; break;
		case 'k': nconns = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!addr || !port || nconns < 1 || nconns > KV_MAX_CONNS ||
	    (!serve && (!c->test || !c->size || !c->depth || !c->iters)))
		return 2;
	if (serve)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		perror("rdma_getaddrinfo");
		return 2;
	}
	if (!serve) {
		c->client = true;
		if (kv_lat(c->test))
			c->depth = 1;
		c->hello = (struct kverbs_perf_hello){
			.magic = htole16(KVERBS_PERF_MAGIC), .version = htole16(KVERBS_PERF_VERSION),
			.test = htole16(c->test), .flags = htole16(c->flags),
			.msg_size = htole32(c->size), .tx_depth = htole32(c->depth),
			.iterations = htole64(c->iters), .post_list = htole16(l),
			.cq_mod = htole16(q), .inline_size = htole16(in),
		};
		if (rdma_create_ep(&c->id, res, NULL, NULL)) {
			perror("rdma_create_ep");
			return 2;
		}
		rdma_freeaddrinfo(res);
		c->result = kv_connect(c);
		nconns = 1;
	} else {
		if (rdma_create_ep(&lid, res, NULL, NULL) || rdma_listen(lid, KV_MAX_CONNS)) {
			perror("rdma_listen");
			return 2;
		}
		rdma_freeaddrinfo(res);
		for (i = 0; i < nconns; i++) {
			if (rdma_get_request(lid, &conns[i].id)) {
				perror("rdma_get_request");
				return 2;
			}
			if (pthread_create(&threads[i], NULL, kv_serve, &conns[i])) {
				perror("pthread_create");
				return 2;
			}
		}
		for (i = 0; i < nconns; i++)
			pthread_join(threads[i], NULL);
	}
	for (i = 0; i < nconns; i++) {
		if (conns[i].result > worst)
			worst = conns[i].result;
		done += conns[i].done;
	}
	if (worst == 0)
		printf("done %llu\n", done);
	else if (worst == 1)
		printf("cut off after %llu\n", done);
	return worst;
}
