// SPDX-License-Identifier: GPL-2.0
/*
 * The responder of a perf test: the side the data work requests are
 * aimed at, the server, or the client when it asked for the reverse
 * direction (KVERBS_PERF_F_REVERSE).  It offers the requester a buffer,
 * and for SEND, or a WRITE with immediate data, takes what arrives in
 * its receives and checks the immediate data; with --validate it checks, or fills,
 * every message, and checks the words the atomic operations counted up.
 * In the ping-pong tests (perf_pingpong.c), which only a server's
 * responder runs, it answers each message.  It reports what the
 * requester tells it at the end.
 */
#include "perf.h"
#include "trace.h"

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <rdma/ib_cm.h>

struct kverbs_perf_resp {
	struct kverbs_perf_run *run;
	struct kverbs_ep *ep;
	const struct kverbs_perf_ops *t;
	u32 flags;
	u32 msg_size;
	u32 tx_depth;
	struct kverbs_buf buf;		/* the requester's target, source or receives */
	u32 slots;
	u32 stride;			/* bytes from one slot to the next */
	u32 ctrl_len;			/* bytes of each requester's control message */
	bool flow;			/* SEND_BW on iWARP or an SRQ: grant by ring, or window */
	bool await_start;		/* the server: the client's START comes first */
	struct kverbs_perf_recv *recvs;	/* the ring: SEND_BW one per slot; WRITE_BW with imm */
	u32 nrecvs;			/* ... of this many */
	u32 recv_off;			/* ... WRITE_BW: in @buf past the slots, from here */
	struct kverbs_msg ctrl_send;	/* ADV, ROUND_OK */
	/* START; but for SEND: the requester's messages, in this ring */
	struct kverbs_msg ctrl_recv[KVERBS_PERF_CTRL_CREDITS];
	u32 ctrl_recvs;			/* ... of this many, posted */
	u32 ctrl_next;			/* ... of which this one completes next */
	u64 consumed;			/* SEND_BW: receives taken, data or not */
	u64 received;			/* SEND_BW: data messages received */
	u64 next_round;			/* --validate: the next round's first iteration */
	struct kverbs_perf_pp pp;	/* WRITE_LAT, SEND_LAT */
	struct kverbs_srq *srq;		/* KVERBS_PERF_F_SRQ: every receive is there */
	struct kverbs_msg answer;	/* ... SEND_LAT: the answers, with no MR */
	u32 srq_window;			/* ... the receives reserved for the peer */
	u32 srq_used;			/* ... SEND_BW: and taken of the window granted last */
	bool srq_ran;			/* ... and the peer was connected */
	bool srq_clean;			/* ... and said DONE */
};

/*
 * SEND_BW: receives kept posted per work request the requester may have
 * outstanding.  The requester refills its window when its SENDs are
 * acknowledged, which is when they land in our receives, not when we
 * have taken them and posted them again.  With only a window's worth,
 * a responder that falls behind by a few messages meets the next SEND
 * with no receive: the device answers receiver-not-ready, and the
 * requester waits out its RNR timer and resends all it had sent since.
 * perftest's server posts 512 receives against a window of 128.
 */
#define KVERBS_PERF_RECV_AHEAD	4

/*
 * Whether the responder busy-polls its CQ.  Where it is on the data path
 * it does, unless it sleeps (a client's -e, a server without
 * KVERBS_PERF_F_BUSY_POLL): it answers each of a ping-pong's messages,
 * and takes SEND_BW's receives and posts them again.  A WRITE_LAT
 * responder, always a server, polls either way: it sees each WRITE only
 * in its memory (a server that does not busy-poll refuses the test).
 * In a WRITE, READ or atomic test the data never reaches the
 * responder's CPU and it waits only for a control message now and then,
 * so it sleeps, as perftest's passive side does: a busy poll there would
 * take a CPU from the requester and, on a soft device (rxe, siw), from
 * the driver's own threads that move the data.
 */
static bool kverbs_perf_resp_polls(const struct kverbs_perf_ops *t, u32 flags,
				   bool events)
{
	if (t->seen_in_memory)
		return true;
	return kverbs_perf_answer(t, flags) != KVERBS_PERF_ANSWER_NONE && !events;
}

/*
 * Control receives the responder keeps posted for the requester's
 * messages, when they do not arrive among SEND data (see perf.h's
 * KVERBS_PERF_CTRL_CREDITS).  A ping-pong's requester answers each of
 * the responder's messages before it sends DONE, and sends no PROGRESS:
 * one is enough there.
 */
static u32 kverbs_perf_resp_credits(const struct kverbs_perf_ops *t)
{
	return kverbs_perf_is_pingpong(t) ? 1 : KVERBS_PERF_CTRL_CREDITS;
}

/*
 * KVERBS_PERF_F_SRQ, SEND_BW and SEND_LAT: the QP takes its receives,
 * the requester's control messages and its data alike, from an SRQ it
 * shares with the other servers of the file's listener (srq.c), and is
 * created on the SRQ's PD.  The session reserves a window of the SRQ's
 * receives for its peer (srq.c): SEND_BW's requester sends
 * a window at a time, each granted with ROUND_OK as the ring's are
 * without an SRQ on iWARP (kverbs_perf_req_credit()); SEND_LAT's one
 * message at a time, each granted by the answer to the last.  The
 * client's START is granted now, before the connection.
 */
static int kverbs_perf_resp_srq_setup(struct kverbs_perf_resp *s,
				      struct kverbs_ep_caps *caps)
{
	struct kverbs_perf_run *run = s->run;
	struct ib_device *ibdev = kverbs_ep_device(s->ep);
	bool pingpong = kverbs_perf_is_pingpong(s->t);
	struct kverbs_srq *srq;
	int ret;

	srq = kverbs_srq_get(run->lsn, ibdev, run->srq_wr, run->srq_limit,
			     run->srq_msg_size);
	if (IS_ERR(srq))
		return PTR_ERR(srq);
	s->srq = srq;
	run->srq_wr = srq->wr;
	run->srq_limit = srq->limit;
	run->srq_shared = atomic_read(&srq->qps);
	if (s->stride > srq->recv_len)
		return -EMSGSIZE;
	ret = kverbs_srq_reserve(srq, pingpong ? 1 : s->tx_depth, &s->srq_window);
	if (ret)
		return ret;
	s->flow = !pingpong;
	kverbs_srq_credit(s->ep, 1);
	caps->srq = srq->srq;
	caps->srq_pd = srq->pd;
	caps->srq_wr = srq->wr;
	/*
	 * No buffer, no MR, no key: the SRQ's PD is every session's, and a
	 * peer's SEND with invalidate names any key on it (srq.c).  A
	 * ping-pong's answers go with the PD's local DMA key, from a
	 * message of their own.
	 */
	s->slots = 1;
	ret = kverbs_perf_create_qp(run, s->ep, caps, pingpong);
	if (ret)
		return ret;
	kverbs_srq_attach(srq, s->ep);
	ret = kverbs_msg_alloc(&s->ctrl_send, s->ep->pd, sizeof(struct kverbs_perf_msg),
			       DMA_TO_DEVICE);
	if (ret)
		return ret;
	/* Nothing was sent yet: the message is free. */
	s->ctrl_send.done = true;
	if (!pingpong)
		return 0;
	ret = kverbs_msg_alloc(&s->answer, s->ep->pd, s->msg_size, DMA_TO_DEVICE);
	if (ret)
		return ret;
	kverbs_perf_pp_init(&s->pp, run, s->ep, &s->buf, s->t, s->flags,
			    s->msg_size, s->stride);
	s->pp.srq = srq;
	s->pp.srq_credits = true;
	s->pp.answer = &s->answer;
	return 0;
}

/*
 * The responder's buffer without an SRQ: its slots, the ring's receives,
 * and where they lie in it.  Returns the buffer's size, 0 if it is
 * larger than the device registers at once.
 */
static u64 kverbs_perf_resp_layout(struct kverbs_perf_resp *s, u32 max_reg,
				   bool ring, bool apart)
{
	struct ib_device *ibdev = kverbs_ep_device(s->ep);
	bool pingpong = kverbs_perf_is_pingpong(s->t);
	u32 depth, max_recvs;
	u64 bytes;

	/*
	 * A ping-pong has one message in flight, whatever the client said.
	 * The ring's receives stay within what the device's receive queue
	 * holds beside the control receive and the drain's marker
	 * (kverbs_ep_create_qp()).
	 */
	depth = s->tx_depth;
	max_recvs = min_t(u32, KVERBS_PERF_RECV_AHEAD * depth,
			  max(ibdev->attrs.max_qp_wr, 3) - 2);
	if (ring && !apart)
		depth = max_recvs;
	s->slots = pingpong ? 1 : kverbs_perf_slots(s->stride, depth,
						    min(KVERBS_PERF_BUF_BYTES, max_reg));
	/*
	 * The ring: SEND_BW's receives are its slots.  A WRITE with
	 * immediate data consumes a receive as a SEND does, and meets
	 * receiver-not-ready as a SEND does when it finds none, so WRITE_BW
	 * keeps as many posted, KVERBS_PERF_RECV_AHEAD per WRITE in flight,
	 * each with room for a control message only: the WRITE's data
	 * lands in the slot it names, and its receive holds nothing.
	 */
	s->nrecvs = ring ? (apart ? max_recvs : s->slots) : 0;
	/*
	 * A ping-pong's answers are built in a slot of their own, after it.
	 * In u64: two slots of a stride near max_msg_size's 4 GiB wrap a
	 * 32-bit size_t.
	 */
	bytes = (u64)(s->slots + pingpong) * s->stride;
	if (apart)
		bytes += (u64)s->nrecvs * s->ctrl_len;
	if (bytes > max_reg)
		return 0;
	s->recv_off = (s->slots + pingpong) * s->stride;
	/* No receiver-not-ready retry: see kverbs_perf_req_credit(). */
	s->flow = ring && rdma_protocol_iwarp(ibdev, kverbs_ep_port(s->ep));
	return bytes;
}

/*
 * The receives of a responder without an SRQ: the ring's, each refilled
 * as soon as its message is taken (SEND_BW, WRITE_BW with immediate
 * data), posted with the ADV (kverbs_perf_resp_advertise()); and the
 * control receives, posted now.
 */
static int kverbs_perf_resp_recvs(struct kverbs_perf_resp *s, bool ring)
{
	struct kverbs_ep *ep = s->ep;
	u32 i;
	int ret;

	if (ring) {
		s->recvs = kvcalloc(s->nrecvs, sizeof(*s->recvs), GFP_KERNEL_ACCOUNT);
		if (!s->recvs)
			return -ENOMEM;
		for (i = 0; i < s->nrecvs; i++)
			kverbs_perf_recv_init(&s->recvs[i], ep);
	}
	for (i = 0; i < s->ctrl_recvs; i++) {
		ret = kverbs_msg_alloc(&s->ctrl_recv[i], ep->pd, s->ctrl_len,
				       DMA_FROM_DEVICE);
		if (!ret)
			ret = kverbs_msg_post_recv(&s->ctrl_recv[i], ep);
		if (ret)
			return ret;
	}
	return 0;
}

static int kverbs_perf_resp_setup(struct kverbs_perf_resp *s)
{
	struct kverbs_ep *ep = s->ep;
	struct ib_device *ibdev = kverbs_ep_device(ep);
	u32 max_reg = kverbs_max_reg_size(ibdev);
	const struct kverbs_perf_ops *t = s->t;
	bool ring = kverbs_perf_answer(t, s->flags) == KVERBS_PERF_ANSWER_RECV;
	bool recv_data = kverbs_perf_recv_data(t, s->flags);
	/* WRITE_BW with immediate data: receives apart from the slots written. */
	bool apart = ring && t->op != KVERBS_PERF_OP_SEND;
	bool pingpong = kverbs_perf_is_pingpong(t);
	struct kverbs_ep_caps caps = {
		/* The registration of the buffer, one control message. */
		.max_send_wr = 2 + (pingpong ? KVERBS_PERF_PP_SQ : 0),
		.max_send_sge = 1,
	};
	u32 data_recvs;
	u64 bytes;
	int ret;

	kverbs_perf_cq_caps(s->run, &caps, kverbs_perf_resp_polls(t, s->flags, s->run->events));
	if (!max_reg) {
		ibdev_dbg(ibdev, "no fast registration, cannot register buffers\n");
		return -EOPNOTSUPP;
	}
	/*
	 * SEND_BW, SEND_LAT, and with immediate data WRITE_LAT: control
	 * messages arrive in the same receives as data, where a slot takes
	 * either.  WRITE_BW's receives are apart, control messages only.
	 */
	s->ctrl_len = kverbs_perf_ctrl_len(t, s->flags, s->msg_size);
	s->stride = recv_data && !apart ? max(s->msg_size, s->ctrl_len) : s->msg_size;
	if (s->stride > max_reg)
		return -EMSGSIZE;
	ret = kverbs_perf_device_check(t, s->flags, ep);
	if (ret)
		return ret;
	/* SEND_BW's ring and SEND_LAT's one receive: the SRQ's instead. */
	if (s->run->srq && t->op == KVERBS_PERF_OP_SEND && (ring || pingpong))
		return kverbs_perf_resp_srq_setup(s, &caps);
	bytes = kverbs_perf_resp_layout(s, max_reg, ring, apart);
	if (!bytes)
		return -EMSGSIZE;
	/*
	 * SEND_LAT, and WRITE_LAT with immediate data: the ping-pong's one
	 * receive.  Control messages arrive in the data receives where
	 * there are any, else in ctrl_recv: the requester sends one only
	 * when the previous one is answered, or now and then.  A server
	 * posts ctrl_recv first of all in every test, for the client's
	 * START.  The CQ is sized from these by kverbs_ep_create_qp():
	 * every receive posted may complete, flushed if not otherwise.
	 */
	data_recvs = ring ? s->nrecvs : recv_data;
	s->ctrl_recvs = kverbs_perf_resp_credits(t);
	if (data_recvs)
		s->ctrl_recvs = s->await_start;
	caps.max_recv_wr = data_recvs + s->ctrl_recvs;
	/* A ping-pong's answers are data work requests too. */
	ret = kverbs_perf_create_qp(s->run, ep, &caps, pingpong);
	if (ret)
		return ret;
	ret = kverbs_perf_alloc(ep, &s->buf, bytes, true,
				&s->ctrl_send, sizeof(struct kverbs_perf_msg));
	if (ret)
		return ret;
	if (pingpong)
		kverbs_perf_pp_init(&s->pp, s->run, ep, &s->buf, t, s->flags,
				    s->msg_size, s->stride);
	return kverbs_perf_resp_recvs(s, ring);
}

/* The control receive the requester's next message lands in. */
static struct kverbs_msg *kverbs_perf_resp_ctrl_recv(struct kverbs_perf_resp *s)
{
	return &s->ctrl_recv[s->ctrl_next];
}

/*
 * The requester's message in the ring's next receive is taken: post it
 * again, at the ring's end, before acting on the message.
 */
static int kverbs_perf_resp_ctrl_repost(struct kverbs_perf_resp *s)
{
	struct kverbs_msg *msg = kverbs_perf_resp_ctrl_recv(s);

	s->ctrl_next = (s->ctrl_next + 1) % s->ctrl_recvs;
	return kverbs_msg_post_recv(msg, s->ep);
}

/* Where receive @i of the ring lands, and its room. */
static u32 kverbs_perf_resp_recv_at(const struct kverbs_perf_resp *s, u32 i, u32 *len)
{
	if (s->t->op == KVERBS_PERF_OP_SEND) {
		*len = s->stride;
		return i * s->stride;
	}
	*len = s->ctrl_len;
	return s->recv_off + i * s->ctrl_len;
}

static int kverbs_perf_resp_post_recv(struct kverbs_perf_resp *s, u32 i)
{
	u32 len, off = kverbs_perf_resp_recv_at(s, i, &len);

	return kverbs_perf_recv_post(&s->recvs[i], &s->buf, off, len);
}

/* Send a control message, once the previous one is out. */
static int kverbs_perf_resp_ctrl(struct kverbs_perf_resp *s,
				 struct kverbs_perf_msg *m)
{
	struct kverbs_ep *ep = s->ep;
	struct ib_send_wr wr;
	int ret;

	ret = kverbs_perf_wait_done(ep, &s->ctrl_send.done, s->run->common.timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_SEND);
	memcpy(s->ctrl_send.buf, m, sizeof(*m));
	kverbs_msg_send_wr(&s->ctrl_send, &wr);
	return kverbs_post_send(ep, &wr, KVERBS_STEP_SEND);
}

/* READ_BW --validate: the next round's messages, for the requester to check. */
static void kverbs_perf_resp_fill(struct kverbs_perf_resp *s, u64 first)
{
	u32 i;

	for (i = 0; i < s->slots; i++)
		kverbs_perf_fill(s->buf.vaddr + (size_t)i * s->stride, s->msg_size,
				 first + i);
	kverbs_buf_sync_for_device(&s->buf);
	s->next_round = first;
}

/*
 * A server: wait for the client's START, the connection's first message
 * (see perf.h).  Then, SEND_BW and SEND_LAT take everything in their own
 * receives; the other tests take the rest in the same ctrl_recv.
 */
static int kverbs_perf_resp_srq_await_start(struct kverbs_perf_resp *s);

static int kverbs_perf_resp_await_start(struct kverbs_perf_resp *s)
{
	struct kverbs_msg *recv = kverbs_perf_resp_ctrl_recv(s);
	struct kverbs_ep *ep = s->ep;
	struct kverbs_perf_msg m;
	int ret;

	if (s->srq)
		return kverbs_perf_resp_srq_await_start(s);
	ret = kverbs_perf_wait_done(ep, &recv->done, s->run->common.timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
	kverbs_msg_sync_for_cpu(recv);
	memcpy(&m, recv->buf, sizeof(m));
	if (recv->byte_len != s->ctrl_len ||
	    le32_to_cpu(m.type) != KVERBS_PERF_MSG_START)
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	/* Nothing is registered yet, let alone advertised. */
	ret = kverbs_perf_inv_check(s->run, ep, recv->invalidated, recv->inv_rkey, false, 0);
	if (ret)
		return ret;
	if (kverbs_perf_recv_data(s->t, s->flags))
		return 0;
	return kverbs_perf_resp_ctrl_repost(s);
}

/* Register the buffer with the rights the test needs, and offer it. */
static int kverbs_perf_resp_advertise(struct kverbs_perf_resp *s)
{
	struct kverbs_perf_msg m = {
		.type = cpu_to_le32(KVERBS_PERF_MSG_ADV),
		.slots = cpu_to_le32(!s->srq ? s->slots :
				     s->flow ? s->srq_window : s->srq->wr),
		.stride = cpu_to_le32(s->stride),
	};
	int ret;
	u32 i;

	/* READ --validate: the first round, for the requester to check. */
	if (s->t->op == KVERBS_PERF_OP_READ && (s->flags & KVERBS_PERF_F_VALIDATE))
		kverbs_perf_resp_fill(s, 0);
	/* On an SRQ's PD, no key at all: see kverbs_perf_resp_srq_setup(). */
	ret = s->srq ? 0 : kverbs_perf_register(s->ep, &s->buf, s->t->resp_access,
						s->run->common.timeout_ns);
	if (ret)
		return ret;
	if (s->flow)
		m.a = cpu_to_le64(KVERBS_PERF_ADV_GRANTS);
	if (s->srq && !kverbs_perf_is_pingpong(s->t)) {
		/* The SRQ's receives are posted, for every QP on it. */
	} else if (s->recvs) {
		/* The requester sends nothing before it has the ADV. */
		for (i = 0; i < s->nrecvs; i++) {
			ret = kverbs_perf_resp_post_recv(s, i);
			if (ret)
				return ret;
		}
	} else if (kverbs_perf_recv_data(s->t, s->flags)) {
		ret = kverbs_perf_pp_server_start(&s->pp);
		if (ret)
			return ret;
	}
	/* Where the requester's WRITEs, READs and atomics go; a SEND's, nowhere. */
	if (s->t->op != KVERBS_PERF_OP_SEND) {
		m.addr = cpu_to_le64(s->buf.mr->iova);
		m.rkey = cpu_to_le32(s->buf.mr->rkey);
	}
	/*
	 * SRQ: START's receive is posted again; the first window, or
	 * SEND_LAT's first message.
	 */
	if (s->srq)
		kverbs_srq_credit(s->ep, s->flow ? s->srq_window : 1);
	return kverbs_perf_resp_ctrl(s, &m);
}

/*
 * SEND_BW on iWARP, or on an SRQ: a ring of receives, or a window of
 * the SRQ's, was taken and is posted again, so the requester may send
 * another (kverbs_perf_req_credit()).
 */
static int kverbs_perf_resp_credit(struct kverbs_perf_resp *s)
{
	struct kverbs_perf_msg m = {
		.type = cpu_to_le32(KVERBS_PERF_MSG_ROUND_OK),
		.a = cpu_to_le64(s->received),
	};

	return kverbs_perf_resp_ctrl(s, &m);
}

/*
 * --validate: the requester wrote a round, which we check, or read one,
 * and we fill the next; then say so.  With KVERBS_PERF_F_INV its ROUND
 * invalidated our key (kverbs_perf_inv_check()), and no LOCAL_INV is
 * posted: the buffer is registered again under a fresh key, which
 * ROUND_OK offers.  That comes after the slots are synced for the
 * device: no key lets the peer at bytes the CPU still holds.
 */
static int kverbs_perf_resp_round(struct kverbs_perf_resp *s, u64 first, u64 n)
{
	struct kverbs_perf_msg m = {
		.type = cpu_to_le32(KVERBS_PERF_MSG_ROUND_OK),
	};
	u32 i, offset;
	int ret;

	if (!(s->flags & KVERBS_PERF_F_VALIDATE) ||
	    !kverbs_perf_uses(s->t, KVERBS_PERF_MSG_ROUND) ||
	    first != s->next_round || !n || n > s->slots)
		return kverbs_ep_failed(s->ep, -EPROTO, KVERBS_STEP_RECV);
	if (s->t->op == KVERBS_PERF_OP_WRITE) {
		kverbs_buf_sync_range_for_cpu(&s->buf, 0, (size_t)n * s->stride);
		for (i = 0; i < n; i++) {
			if (!kverbs_perf_check(s->buf.vaddr + (size_t)i * s->stride,
					       s->msg_size, first + i, &offset)) {
				s->run->result->mismatch_iter = first + i;
				return kverbs_ep_mismatch(s->ep, offset);
			}
		}
		/* ROUND_OK hands the slots back to the requester's WRITEs. */
		kverbs_buf_sync_range_for_device(&s->buf, 0, (size_t)n * s->stride);
		s->next_round = first + n;
	} else {
		kverbs_perf_resp_fill(s, first + n);
	}
	if (s->flags & KVERBS_PERF_F_INV) {
		ret = kverbs_perf_register(s->ep, &s->buf, s->t->resp_access,
					   s->run->common.timeout_ns);
		if (ret)
			return ret;
		m.rkey = cpu_to_le32(s->buf.mr->rkey);
	}
	m.a = cpu_to_le64(first + n);
	return kverbs_perf_resp_ctrl(s, &m);
}

/*
 * Atomic --validate, at the end: word i was the target of operations i,
 * i + slots, i + 2 * slots, ..., and each added one to it.
 */
static int kverbs_perf_resp_check_atomics(struct kverbs_perf_resp *s, u64 ops)
{
	u64 per_word = ops, want, got;
	u32 extra = do_div(per_word, s->slots), i;

	if (s->t->op != KVERBS_PERF_OP_ATOMIC || !(s->flags & KVERBS_PERF_F_VALIDATE))
		return 0;
	/* The end of the test: the device gets none of it back. */
	kverbs_buf_sync_range_for_cpu(&s->buf, 0, (size_t)s->slots * s->stride);
	for (i = 0; i < s->slots; i++) {
		want = per_word + (i < extra);
		memcpy(&got, s->buf.vaddr + (size_t)i * s->stride, sizeof(got));
		if (!kverbs_perf_atomic_is(got, want)) {
			s->run->result->mismatch_iter = i;
			return kverbs_ep_mismatch(s->ep, 0);
		}
	}
	return 0;
}

/*
 * Act on a control message from the requester.  @counted: it says how many
 * messages it sent, and we know how many arrived (SEND_BW, the ping-pong).
 * Returns 1 when the requester said DONE, 0 to go on, or the failure.
 */
static int kverbs_perf_resp_msg(struct kverbs_perf_resp *s,
				const struct kverbs_perf_msg *m, bool counted,
				u64 *ops, u64 *elapsed, u64 *peak)
{
	int ret;

	switch (le32_to_cpu(m->type)) {
	case KVERBS_PERF_MSG_PROGRESS:
		return 0;
	case KVERBS_PERF_MSG_ROUND:
		return kverbs_perf_resp_round(s, le64_to_cpu(m->a), le64_to_cpu(m->b));
	case KVERBS_PERF_MSG_DONE:
		/* Nothing may follow it into the SRQ's receives. */
		if (s->srq)
			kverbs_srq_close(s->ep);
		*ops = le64_to_cpu(m->a);
		*elapsed = le64_to_cpu(m->b);
		*peak = le64_to_cpu(m->c);
		/* What the requester sent is what arrived, or something was lost. */
		if (counted && *ops != s->received)
			return kverbs_ep_failed(s->ep, -EPROTO, KVERBS_STEP_RECV);
		if (!kverbs_perf_done_valid(s->run, s->msg_size, *ops, *elapsed))
			return kverbs_ep_failed(s->ep, -EPROTO, KVERBS_STEP_RECV);
		if (s->flags & KVERBS_PERF_F_RW) {
			/* One context per message, no more registering than that. */
			s->run->rw_ctxs = *ops;
			s->run->rw_mr_ctxs = le64_to_cpu(m->addr);
			if (s->run->rw_mr_ctxs > *ops)
				return kverbs_ep_failed(s->ep, -EPROTO, KVERBS_STEP_RECV);
		}
		ret = kverbs_perf_resp_check_atomics(s, *ops);
		return ret ?: 1;
	default:
		return kverbs_ep_failed(s->ep, -EPROTO, KVERBS_STEP_RECV);
	}
}

/*
 * How long the responder waits for its requester's next message.  The requester
 * bounds each of its own waits by the timeout, and tells us it is alive
 * at least every quarter of it while it posts; so when the data path
 * stalls, the requester's limit passes first, and it is the requester, which
 * sees its completions, that says what went wrong.  Were the limits the
 * same, our disconnect could end the requester first with nothing but a
 * reset to report.  The timeout is at most an hour: no overflow.
 */
static u64 kverbs_perf_resp_silence(const struct kverbs_perf_resp *s)
{
	return 2 * s->run->common.timeout_ns;
}

/* Put a receive taken back at the head of the endpoint's list. */
static void kverbs_perf_resp_srq_untake(struct kverbs_ep *ep, struct kverbs_srq_recv *r)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	list_add(&r->node, &ep->srq_done);
	spin_unlock_irqrestore(&ep->lock, flags);
}

/*
 * Done with @r: post it again, for any QP of the SRQ.  Returns @ret, or
 * the post's failure.
 */
static int kverbs_perf_resp_srq_repost(struct kverbs_perf_resp *s,
				       struct kverbs_srq_recv *r, int ret)
{
	int err = kverbs_srq_post(s->srq, r);

	if (err) {
		kverbs_perf_resp_srq_untake(s->ep, r);
		if (!ret)
			ret = kverbs_ep_failed(s->ep, err, KVERBS_STEP_RECV);
	}
	return ret;
}

static bool kverbs_perf_resp_srq_cond(void *ep)
{
	return kverbs_srq_ready(ep);
}

/*
 * KVERBS_PERF_F_SRQ: the next receive that completed on our QP, in the
 * order the requester's messages arrived, whichever receive of the SRQ
 * each landed in.  The caller posts it again (kverbs_srq_post()) once
 * done with its bytes; a failed one is given back with the endpoint.
 */
static int kverbs_perf_resp_srq_take(struct kverbs_perf_resp *s, u64 timeout_ns,
				     struct kverbs_srq_recv **rp)
{
	struct kverbs_ep *ep = s->ep;
	struct kverbs_srq_recv *r;
	int ret;

	ret = kverbs_perf_wait(ep, kverbs_perf_resp_srq_cond, ep, timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
	r = kverbs_srq_take(ep);
	if (r->status) {
		/* Back on the list, for kverbs_srq_give_back(). */
		kverbs_perf_resp_srq_untake(ep, r);
		return kverbs_ep_failed(ep, -EIO, KVERBS_STEP_RECV);
	}
	ib_dma_sync_single_for_cpu(s->srq->ibdev, r->dma, r->byte_len, DMA_FROM_DEVICE);
	*rp = r;
	return 0;
}

/* A control message from a receive of the SRQ, or -EPROTO. */
static int kverbs_perf_resp_srq_ctrl(struct kverbs_perf_resp *s,
				     const struct kverbs_srq_recv *r,
				     struct kverbs_perf_msg *m)
{
	if (r->byte_len != s->ctrl_len || r->opcode != IB_WC_RECV)
		return kverbs_ep_bad_message(s->ep);
	memcpy(m, r->buf, sizeof(*m));
	return kverbs_perf_inv_check(s->run, s->ep, r->wc_flags & IB_WC_WITH_INVALIDATE,
				     r->inv_rkey, false, 0);
}

static int kverbs_perf_resp_srq_await_start(struct kverbs_perf_resp *s)
{
	struct kverbs_srq_recv *r;
	struct kverbs_perf_msg m;
	int ret;

	ret = kverbs_perf_resp_srq_take(s, s->run->common.timeout_ns, &r);
	if (ret)
		return ret;
	ret = kverbs_perf_resp_srq_ctrl(s, r, &m);
	if (!ret && le32_to_cpu(m.type) != KVERBS_PERF_MSG_START)
		ret = kverbs_ep_failed(s->ep, -EPROTO, KVERBS_STEP_RECV);
	return kverbs_perf_resp_srq_repost(s, r, ret);
}

/*
 * KVERBS_PERF_F_SRQ: take the requester's next message, data or control,
 * from the SRQ's receive it landed in, check it, and post the receive
 * again for whichever QP of the SRQ needs it next.
 * Returns 1 when the requester said DONE, 0 to go on, or the failure.
 */
static int kverbs_perf_resp_srq_next(struct kverbs_perf_resp *s, u64 *ops,
				     u64 *elapsed, u64 *peak)
{
	struct kverbs_perf_run *run = s->run;
	struct kverbs_ep *ep = s->ep;
	struct kverbs_perf_recv data = {};
	struct kverbs_srq_recv *r;
	struct kverbs_perf_msg m;
	u32 offset;
	int ret;

	ret = kverbs_perf_resp_srq_take(s, kverbs_perf_resp_silence(s), &r);
	if (ret)
		return ret;
	data.byte_len = r->byte_len;
	data.opcode = r->opcode;
	data.wc_flags = r->wc_flags;
	data.imm = r->imm;
	if (kverbs_perf_recv_is_data(s->t, &data, s->msg_size)) {
		ret = kverbs_perf_inv_check(run, ep, r->wc_flags & IB_WC_WITH_INVALIDATE,
					    r->inv_rkey, false, 0);
		if (!ret)
			ret = kverbs_perf_imm_check(run, &data, s->received);
		if (!ret && (s->flags & KVERBS_PERF_F_VALIDATE) &&
		    !kverbs_perf_check(r->buf, r->byte_len, s->received, &offset)) {
			run->result->mismatch_iter = s->received;
			ret = kverbs_ep_mismatch(ep, offset);
		}
		if (!ret)
			s->received++;
		ret = kverbs_perf_resp_srq_repost(s, r, ret);
		/* The window is taken, and its receives posted again. */
		if (!ret && s->flow && ++s->srq_used == s->srq_window) {
			s->srq_used = 0;
			kverbs_srq_credit(ep, s->srq_window);
			ret = kverbs_perf_resp_credit(s);
		}
		return ret;
	}
	ret = kverbs_perf_resp_srq_ctrl(s, r, &m);
	/* The requester's next message may come before our answer to this one. */
	ret = kverbs_perf_resp_srq_repost(s, r, ret);
	if (ret)
		return ret;
	return kverbs_perf_resp_msg(s, &m, true, ops, elapsed, peak);
}

/*
 * What arrived in a responder's receive without an SRQ: in the ring's
 * receive @slot, @r, at @off of the buffer, or in a control receive,
 * @ctrl; @data and @len are its bytes.
 */
struct kverbs_perf_arrival {
	struct kverbs_perf_recv *r;
	struct kverbs_msg *ctrl;
	u32 slot;
	u32 off;
	const void *data;
	u32 len;
	bool invalidated;
	u32 inv_rkey;
};

/* Wait for the requester's next message, in the ring or a control receive. */
static int kverbs_perf_resp_arrive(struct kverbs_perf_resp *s,
				   struct kverbs_perf_arrival *in)
{
	struct kverbs_ep *ep = s->ep;
	u32 room;
	u64 n;
	int ret;

	memset(in, 0, sizeof(*in));
	if (s->recvs) {
		/* Receives complete in the order they were posted. */
		n = s->consumed;
		in->slot = do_div(n, s->nrecvs);
		in->r = &s->recvs[in->slot];
		ret = kverbs_perf_wait_done(ep, &in->r->done, kverbs_perf_resp_silence(s));
		if (ret)
			return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
		s->consumed++;
		in->off = kverbs_perf_resp_recv_at(s, in->slot, &room);
		in->data = s->buf.vaddr + in->off;
		in->len = in->r->byte_len;
		in->invalidated = in->r->wc_flags & IB_WC_WITH_INVALIDATE;
		in->inv_rkey = in->r->inv_rkey;
		return 0;
	}
	in->ctrl = kverbs_perf_resp_ctrl_recv(s);
	ret = kverbs_perf_wait_done(ep, &in->ctrl->done, kverbs_perf_resp_silence(s));
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
	in->data = in->ctrl->buf;
	in->len = in->ctrl->byte_len;
	in->invalidated = in->ctrl->invalidated;
	in->inv_rkey = in->ctrl->inv_rkey;
	return 0;
}

/*
 * Data in the ring: its immediate data is checked on every one; a
 * SEND's bytes with --validate here, a WRITE's by the round
 * (kverbs_perf_resp_round()).  Then the receive goes back.
 */
static int kverbs_perf_resp_data(struct kverbs_perf_resp *s,
				 const struct kverbs_perf_arrival *in)
{
	struct kverbs_perf_run *run = s->run;
	struct kverbs_ep *ep = s->ep;
	u32 offset;
	int ret;

	ret = kverbs_perf_inv_check(run, ep, in->invalidated, in->inv_rkey, false, 0);
	if (!ret)
		ret = kverbs_perf_imm_check(run, in->r, s->received);
	if (ret)
		return ret;
	/* Not read without --validate: the device keeps the slot. */
	if ((s->flags & KVERBS_PERF_F_VALIDATE) && s->t->op == KVERBS_PERF_OP_SEND) {
		kverbs_buf_sync_range_for_cpu(&s->buf, in->off, in->len);
		if (!kverbs_perf_check(in->data, in->len, s->received, &offset)) {
			run->result->mismatch_iter = s->received;
			return kverbs_ep_mismatch(ep, offset);
		}
		kverbs_buf_sync_range_for_device(&s->buf, in->off, in->len);
	}
	s->received++;
	ret = kverbs_perf_resp_post_recv(s, in->slot);
	if (!ret && s->flow && in->slot == s->nrecvs - 1)
		ret = kverbs_perf_resp_credit(s);
	return ret;
}

/*
 * A control message, in the ring or a control receive: checked, its
 * receive given back, then acted on.
 */
static int kverbs_perf_resp_control(struct kverbs_perf_resp *s,
				    const struct kverbs_perf_arrival *in,
				    u64 *ops, u64 *elapsed, u64 *peak)
{
	struct kverbs_ep *ep = s->ep;
	struct kverbs_perf_msg m;
	bool want;
	int ret;

	if (in->len != s->ctrl_len || (in->r && in->r->opcode != IB_WC_RECV))
		return kverbs_ep_bad_message(ep);
	if (in->r)
		kverbs_buf_sync_range_for_cpu(&s->buf, in->off, in->len);
	else
		kverbs_msg_sync_for_cpu(in->ctrl);
	memcpy(&m, in->data, sizeof(m));
	/* KVERBS_PERF_F_INV: a ROUND, and only a ROUND, invalidates our key. */
	want = (s->flags & KVERBS_PERF_F_INV) && le32_to_cpu(m.type) == KVERBS_PERF_MSG_ROUND;
	ret = kverbs_perf_inv_check(s->run, ep, in->invalidated, in->inv_rkey, want,
				    s->buf.mr->rkey);
	if (ret)
		return ret;
	/* A control receive is given back by its repost (kverbs_msg_post_recv()). */
	if (in->r)
		kverbs_buf_sync_range_for_device(&s->buf, in->off, in->len);
	/* The requester's next message may come before our answer to this one. */
	ret = in->r ? kverbs_perf_resp_post_recv(s, in->slot) :
		      kverbs_perf_resp_ctrl_repost(s);
	if (ret)
		return ret;
	return kverbs_perf_resp_msg(s, &m, in->r, ops, elapsed, peak);
}

/*
 * Take the requester's next message: a control message, or for SEND_BW also
 * data; in a ping-pong, answer its messages until a control message comes.
 * Returns 1 when the requester said DONE, 0 to go on, or the failure.
 */
static int kverbs_perf_resp_next(struct kverbs_perf_resp *s, u64 *ops,
				 u64 *elapsed, u64 *peak)
{
	struct kverbs_perf_arrival in;
	struct kverbs_perf_msg m;
	int ret;

	if (s->srq && !kverbs_perf_is_pingpong(s->t))
		return kverbs_perf_resp_srq_next(s, ops, elapsed, peak);
	if (kverbs_perf_is_pingpong(s->t)) {
		ret = kverbs_perf_pp_server(&s->pp, kverbs_perf_recv_data(s->t, s->flags) ?
					    NULL : &s->ctrl_recv[0], s->ctrl_len, &m);
		s->received = s->pp.iters;
		if (ret)
			return ret;
		return kverbs_perf_resp_msg(s, &m, true, ops, elapsed, peak);
	}
	ret = kverbs_perf_resp_arrive(s, &in);
	if (ret)
		return ret;
	/*
	 * Data: a WRITE with immediate data by its opcode, a SEND by its
	 * length (kverbs_perf_ctrl_len() makes it unlike control's).
	 */
	if (in.r && kverbs_perf_recv_is_data(s->t, in.r, s->msg_size))
		return kverbs_perf_resp_data(s, &in);
	return kverbs_perf_resp_control(s, &in, ops, elapsed, peak);
}

/*
 * The requester has told us the end: on InfiniBand and RoCE let it
 * disconnect first.  Ours could overtake the acknowledgment of its DONE
 * (the CM's messages take another path) and end its test with
 * ECONNRESET after all.  Whatever ends the wait - the requester's
 * disconnect, the time limit, a signal - the test itself is over and
 * done.  On iWARP it is the other way round: the requester's DONE
 * completed once TCP had it, and the requester waits for our disconnect
 * to know we have it (kverbs_perf_req_await_close()), so we go at once.
 */
static bool kverbs_perf_resp_never(void *arg)
{
	return false;
}

static int kverbs_perf_resp_linger(struct kverbs_perf_resp *s)
{
	struct kverbs_ep *ep = s->ep;
	int ret;

	if (kverbs_perf_responder_closes_first(ep))
		return 0;
	ret = kverbs_perf_wait(s->ep, kverbs_perf_resp_never, NULL, s->run->common.timeout_ns);
	ibdev_dbg(kverbs_ep_device(s->ep), "perf: session over, the wait for the requester's disconnect ended with %d\n",
		  ret);
	/*
	 * On an SRQ, a requester that goes on sending after its DONE took
	 * receives that were not its own: it broke the protocol, and the
	 * session says so (kverbs_srq_close()).
	 */
	return ret == -EPROTO ? ret : 0;
}

static void kverbs_perf_resp_free(void *arg);

/**
 * kverbs_perf_resp_create - set up the responder's side of a perf test
 * @run: the test, as the requester asked for it
 * @ep: its endpoint, bound to a device, not yet connected
 *
 * Creates the QP and allocates the buffer the requester will be offered.
 * Return: the side, or an ERR_PTR() with the failure recorded in @ep.
 */
struct kverbs_perf_resp *kverbs_perf_resp_create(struct kverbs_perf_run *run,
						 struct kverbs_ep *ep)
{
	struct kverbs_perf_resp *s;
	int ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(kverbs_ep_failed(ep, -ENOMEM, KVERBS_STEP_SETUP));
	s->run = run;
	s->ep = ep;
	s->t = run->t;
	s->flags = run->flags;
	s->msg_size = run->msg_size;
	s->tx_depth = run->tx_depth;
	s->await_start = kverbs_perf_client_requests(run->flags);
	kverbs_ep_set_release(ep, kverbs_perf_resp_free, s);
	ret = kverbs_perf_resp_setup(s);
	/*
	 * A SEND that finds no receive is retried after this long, perftest's
	 * choice; the default, 655 ms, would stall a SEND_BW requester that
	 * got ahead of us.  Before the connection, on either side.
	 */
	if (!ret)
		ret = rdma_set_min_rnr_timer(ep->id, IB_RNR_TIMER_000_64);
	if (ret) {
		kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP);
		kverbs_perf_resp_stop(s);
		return ERR_PTR(ret);
	}
	return s;
}

/**
 * kverbs_perf_resp_run - serve the requester on a connected endpoint
 * @s: the responder's side
 *
 * Offers the buffer, a server once the client has said START, and takes
 * the requester's messages until its DONE.
 * Return: 0 when the test ran to its end, with the requester's numbers
 * in the result; else the failure that ended it, -EINTR for a signal,
 * with the numbers of what arrived until then.
 */
int kverbs_perf_resp_run(struct kverbs_perf_resp *s)
{
	struct kverbs_perf_result *res = s->run->result;
	u64 ops = 0, elapsed = 0, peak = 0;
	int ret;

	s->srq_ran = true;
	ret = s->await_start ? kverbs_perf_resp_await_start(s) : 0;
	if (!ret)
		ret = kverbs_perf_resp_advertise(s);
	while (!ret)
		ret = kverbs_perf_resp_next(s, &ops, &elapsed, &peak);
	if (ret == 1) {
		s->srq_clean = true;
		/* The requester's DONE ended its measured phase just now. */
		s->run->ended_ns = ktime_get_real_ns();
		kverbs_perf_set_rates(res, ops, elapsed, peak);
		return kverbs_perf_resp_linger(s);
	}
	/* What arrived before the end; the requester has the rest. */
	res->iterations = s->received;
	res->bytes = s->received * s->msg_size;
	return ret;
}

/**
 * kverbs_perf_resp_stop - the responder's side is over
 * @s: the side
 *
 * Says what the SRQ did, in the test's result.  The rest goes with the
 * endpoint (kverbs_ep_destroy()), once the device is done with it
 * (kverbs_perf_resp_free()).
 */
void kverbs_perf_resp_stop(struct kverbs_perf_resp *s)
{
	if (!s->srq)
		return;
	s->run->srq_shared = atomic_read(&s->srq->qps);
	s->run->srq_limit_events = atomic64_read(&s->srq->limit_events);
}

/* The endpoint's release (kverbs_ep_set_release()): the device is done. */
static void kverbs_perf_resp_free(void *arg)
{
	struct kverbs_perf_resp *s = arg;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(s->ctrl_recv); i++)
		kverbs_msg_free(&s->ctrl_recv[i]);
	kverbs_msg_free(&s->ctrl_send);
	kverbs_msg_free(&s->answer);
	kverbs_buf_free(&s->buf);
	kvfree(s->recvs);
	if (s->srq) {
		/* The QP is gone: what it took and did not post again goes back. */
		kverbs_srq_detach(s->srq, s->ep);
		kverbs_srq_give_back(s->srq, s->ep);
		/*
		 * A drained QP completed every receive it took from the SRQ
		 * (flushed if unfinished), and those went back above; only
		 * after a drain that failed may one be gone for good.
		 */
		if (s->srq_window)
			kverbs_srq_unreserve(s->srq, s->srq_window,
					     s->srq_ran && !s->srq_clean && !s->ep->drained);
		kverbs_srq_put(s->srq);
	}
	kfree(s);
}
