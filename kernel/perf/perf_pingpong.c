// SPDX-License-Identifier: GPL-2.0
/*
 * The ping-pong latency tests, WRITE_LAT and SEND_LAT, as perftest's
 * ib_write_lat and ib_send_lat: the client sends message i, the server
 * answers it with message i once it has seen it, and the client times
 * the round trip.  The client and server set up the connection and the
 * buffers, and call in here for the messages.
 *
 * WRITE_LAT: a message is seen when the last byte of the buffer it was
 * written into turns to the marker of its iteration.  The marker never
 * repeats from one iteration to the next, nor is it the buffer's initial
 * 0, so a message is never mistaken for the one before it.  It is polled
 * with the completion queue, so that a failed connection, a signal or the
 * time limit end the wait.
 * SEND_LAT, and WRITE_LAT with immediate data: a message is seen when
 * its receive completes; its immediate data is checked then.
 */
#include "perf.h"
#include "trace.h"

#include <linux/timekeeping.h>

/*
 * What a side waits for: the peer's message @iter, or where the server
 * of a WRITE_LAT takes them, in @ctrl_recv, a control message.
 */
struct kverbs_perf_pp_wait {
	struct kverbs_perf_pp *pp;
	struct kverbs_msg *ctrl_recv;
	u64 iter;
	u32 offset;			/* --validate: the first byte that differs */
};

/* The last byte of WRITE_LAT message @iter: 1 to 255, never 0. */
static u8 kverbs_perf_pp_marker(u64 iter)
{
	return 1 + do_div(iter, 255);
}

static void kverbs_perf_pp_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_perf_pp *pp = container_of(wc->wr_cqe, struct kverbs_perf_pp,
						 send_cqe.cqe);

	trace_kverbs_wc(cq, wc, pp->step);
	if (wc->status != IB_WC_SUCCESS) {
		kverbs_ep_wc_failed(kverbs_wc_ep(wc), wc, pp->step);
		return;
	}
	/* Only every KVERBS_PERF_PP_SIGNAL-th completes, and in order. */
	WRITE_ONCE(pp->sq_done, pp->sq_done + KVERBS_PERF_PP_SIGNAL);
	kverbs_ep_wake(pp->ep);
}

/**
 * kverbs_perf_pp_init - prepare a side of a ping-pong
 * @pp: the side, zeroed
 * @run: the test
 * @ep: the connection, whose QP exists
 * @buf: the side's buffer, allocated: the peer's messages at offset 0
 *	(@recv_len bytes for SEND_LAT, else @msg_size), ours after them
 * @t: the test, WRITE_LAT's or SEND_LAT's entry
 * @flags: &enum kverbs_perf_flags
 * @msg_size: bytes per message
 * @recv_len: room for what the peer sends: @msg_size or more
 */
void kverbs_perf_pp_init(struct kverbs_perf_pp *pp, struct kverbs_perf_run *run,
			 struct kverbs_ep *ep, struct kverbs_buf *buf,
			 const struct kverbs_perf_ops *t, u32 flags, u32 msg_size,
			 u32 recv_len)
{
	pp->run = run;
	pp->ep = ep;
	pp->buf = buf;
	pp->t = t;
	pp->flags = flags;
	pp->msg_size = msg_size;
	pp->recv_len = recv_len;
	pp->src_off = recv_len;
	pp->step = t->step;
	pp->inline_data = run->inline_size && msg_size <= run->inline_size;
	pp->recv_data = kverbs_perf_recv_data(t, flags);
	pp->in_memory = t->seen_in_memory && !(flags & KVERBS_PERF_F_IMM);
	pp->send_cqe.cqe.done = kverbs_perf_pp_send_done;
	kverbs_perf_recv_init(&pp->recv, ep);
}

static int kverbs_perf_pp_post_recv(struct kverbs_perf_pp *pp)
{
	/* The CPU read the last message there, or polled its last byte. */
	kverbs_buf_sync_range_for_device(pp->buf, 0, pp->recv_len);
	return kverbs_perf_recv_post(&pp->recv, pp->buf, 0, pp->recv_len);
}

/* Whether the send queue has room: see KVERBS_PERF_PP_SQ. */
static bool kverbs_perf_pp_sq_room(void *arg)
{
	struct kverbs_perf_pp *pp = arg;

	return pp->posted - READ_ONCE(pp->sq_done) < KVERBS_PERF_PP_SQ;
}

/* Build message @iter and WRITE or SEND it to the peer. */
static int kverbs_perf_pp_post(struct kverbs_perf_pp *pp, u64 iter)
{
	u8 *src = pp->answer ? pp->answer->buf : pp->buf->vaddr + pp->src_off;
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	int ret;

	ret = kverbs_perf_wait(pp->ep, kverbs_perf_pp_sq_room, pp, pp->run->common.timeout_ns);
	if (ret)
		return kverbs_ep_failed(pp->ep, ret, pp->step);
	if (pp->flags & KVERBS_PERF_F_VALIDATE)
		kverbs_perf_fill(src, pp->msg_size, iter);
	if (pp->in_memory)
		src[pp->msg_size - 1] = kverbs_perf_pp_marker(iter);
	wr.wr.opcode = kverbs_perf_wr_opcode(pp->t, pp->flags);
	if (pp->t->op == KVERBS_PERF_OP_WRITE) {
		wr.remote_addr = pp->remote_addr;
		wr.rkey = pp->rkey;
	}
	if (pp->flags & KVERBS_PERF_F_IMM)
		wr.wr.ex.imm_data = cpu_to_be32(kverbs_perf_imm(iter));
	/*
	 * The whole buffer, the peer's last message too: it is not due to
	 * change before this one is out, and the CPU's copy of it is as new.
	 */
	if (pp->answer)
		ib_dma_sync_single_for_device(pp->answer->ibdev, pp->answer->dma,
					      pp->msg_size, DMA_TO_DEVICE);
	else
		kverbs_buf_sync_for_device(pp->buf);

	sge.length = pp->msg_size;
	if (pp->inline_data) {
		/* The CPU copies it at the post: see kverbs_perf_req_list_add(). */
		sge.addr = (uintptr_t)src;
		sge.lkey = 0;
		wr.wr.send_flags = IB_SEND_INLINE;
	} else if (pp->answer) {
		sge.addr = pp->answer->dma;
		sge.lkey = pp->answer->sge.lkey;
	} else {
		sge.addr = pp->buf->mr->iova + pp->src_off;
		sge.lkey = pp->buf->mr->lkey;
	}
	wr.wr.wr_cqe = &pp->send_cqe.cqe;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	if (pp->posted % KVERBS_PERF_PP_SIGNAL == KVERBS_PERF_PP_SIGNAL - 1)
		wr.wr.send_flags |= IB_SEND_SIGNALED;
	ret = kverbs_post_send(pp->ep, &wr.wr, pp->step);
	if (!ret)
		pp->posted++;
	return ret;
}

/* WRITE_LAT: whether message @iter is in our buffer, as the device left it. */
static bool kverbs_perf_pp_written(struct kverbs_perf_pp *pp, u64 iter)
{
	const u8 *last = pp->buf->vaddr + pp->msg_size - 1;

	kverbs_buf_sync_range_for_cpu(pp->buf, pp->msg_size - 1, 1);
	return READ_ONCE(*last) == kverbs_perf_pp_marker(iter);
}

static bool kverbs_perf_pp_cond_written(void *arg)
{
	struct kverbs_perf_pp_wait *w = arg;

	return kverbs_perf_pp_written(w->pp, w->iter);
}

/* Whether the peer's message in our buffer is message @iter. */
static bool kverbs_perf_pp_matches(struct kverbs_perf_pp *pp, u64 iter,
				   u32 *offset)
{
	/* A WRITE_LAT message's last byte is the marker, already seen. */
	u32 len = pp->msg_size - pp->in_memory;

	kverbs_buf_sync_range_for_cpu(pp->buf, 0, len);
	return kverbs_perf_check(pp->buf->vaddr, len, iter, offset);
}

static bool kverbs_perf_pp_cond_matches(void *arg)
{
	struct kverbs_perf_pp_wait *w = arg;

	return kverbs_perf_pp_matches(w->pp, w->iter, &w->offset);
}

/*
 * --validate: the peer's message @iter, arrived, against the pattern.
 * A SEND is all there once its receive completes.  Not so a WRITE_LAT
 * message seen by its last byte: nothing orders the placement of an RDMA
 * WRITE's bytes, and rxe copies them with memcpy(), which may copy from
 * the end.  Until the time limit, the rest may still be landing.
 */
static int kverbs_perf_pp_check(struct kverbs_perf_pp *pp, u64 iter)
{
	struct kverbs_perf_pp_wait w = { .pp = pp, .iter = iter };
	int ret;

	if (!(pp->flags & KVERBS_PERF_F_VALIDATE))
		return 0;
	if (kverbs_perf_pp_matches(pp, iter, &w.offset))
		return 0;
	if (pp->in_memory) {
		ret = kverbs_perf_wait(pp->ep, kverbs_perf_pp_cond_matches, &w,
				       pp->run->common.timeout_ns);
		if (ret != -ETIMEDOUT)
			return ret ? kverbs_ep_failed(pp->ep, ret, KVERBS_STEP_VALIDATE) : 0;
	}
	pp->run->result->mismatch_iter = iter;
	return kverbs_ep_mismatch(pp->ep, w.offset);
}

/*
 * Client: wait for the server's answer to message @iter.  Its receive
 * was posted before the message went out, so the answer has one.
 */
static int kverbs_perf_pp_client_wait(struct kverbs_perf_pp *pp, u64 iter)
{
	struct kverbs_perf_pp_wait w = { .pp = pp, .iter = iter };
	struct kverbs_ep *ep = pp->ep;
	u64 timeout_ns = pp->run->common.timeout_ns;
	int ret;

	if (pp->in_memory) {
		ret = kverbs_perf_wait(ep, kverbs_perf_pp_cond_written, &w, timeout_ns);
		if (ret)
			return kverbs_ep_failed(ep, ret, KVERBS_STEP_RDMA_WRITE);
		return 0;
	}
	ret = kverbs_perf_wait_done(ep, &pp->recv.done, timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
	/* The server sends nothing else once the test has begun. */
	if (!kverbs_perf_recv_is_data(pp->t, &pp->recv, pp->msg_size))
		return kverbs_ep_bad_message(ep);
	return kverbs_perf_imm_check(pp->run, &pp->recv, iter);
}

/**
 * kverbs_perf_pp_client - the client's ping-pong
 * @pp: the client's side, connected; WRITE_LAT: the server's buffer known
 * @total: round trips to run, or 0 in duration mode
 * @limit: round trips the samples have room for
 * @deadline_ns: duration mode: ktime_get_ns() at which to stop
 * @smp: where each round trip's half goes, if @smp->chunk, and its
 *	phases, if @smp->phases: from the post to the handler of the
 *	answer's receive, and from there to this thread seeing it
 *
 * @pp->iters counts the round trips completed, also on failure.
 * Return: 0, or the failure, which is recorded on the endpoint.
 */
int kverbs_perf_pp_client(struct kverbs_perf_pp *pp, u64 total, u64 limit,
			  u64 deadline_ns, struct kverbs_perf_samples *smp)
{
	u64 iter, start_ns, now;
	int ret;

	/* The receive's handler reads the clock only for the phases. */
	pp->recv.stamp = !!smp->phases;
	for (iter = 0;; iter++) {
		now = ktime_get_ns();
		if (total ? iter == total : now >= deadline_ns || iter == limit)
			return 0;
		if (pp->recv_data) {
			ret = kverbs_perf_pp_post_recv(pp);
			if (ret)
				return ret;
		}
		start_ns = ktime_get_ns();
		ret = kverbs_perf_pp_post(pp, iter);
		if (!ret)
			ret = kverbs_perf_pp_client_wait(pp, iter);
		now = ktime_get_ns();
		if (!ret)
			ret = kverbs_perf_pp_check(pp, iter);
		if (ret)
			return ret;
		pp->iters = iter + 1;
		if (!smp->chunk)
			continue;
		/* perftest's latency is half the round trip. */
		smp->chunk[smp->len++] = (now - start_ns) / 2;
		if (smp->phases)
			kverbs_perf_phases_seen(smp, start_ns, pp->recv.done_ns, now);
		if (smp->len == KVERBS_PERF_CHUNK)
			kverbs_perf_samples_flush(smp, pp->run);
	}
}

/*
 * Server: whether the client sent anything.  WRITE_LAT: a control message,
 * or once we know where to answer, message @w->iter.
 */
static bool kverbs_perf_pp_server_ready(void *arg)
{
	struct kverbs_perf_pp_wait *w = arg;
	struct kverbs_perf_pp *pp = w->pp;

	if (pp->recv_data)
		return kverbs_is_done(&pp->recv.done);
	return kverbs_is_done(&w->ctrl_recv->done) ||
	       (pp->remote_known && kverbs_perf_pp_written(pp, w->iter));
}

/*
 * Server: take the control message that arrived, and post its receive
 * again.  Returns 1 for the caller to handle it, 0 when it was the
 * client's ADV, or the failure.
 */
static int kverbs_perf_pp_server_ctrl(struct kverbs_perf_pp *pp,
				      struct kverbs_msg *ctrl_recv,
				      struct kverbs_perf_msg *m)
{
	struct kverbs_ep *ep = pp->ep;
	int ret;

	if (ctrl_recv) {
		kverbs_msg_sync_for_cpu(ctrl_recv);
		memcpy(m, ctrl_recv->buf, sizeof(*m));
		ret = kverbs_msg_post_recv(ctrl_recv, ep);
	} else {
		kverbs_buf_sync_range_for_cpu(pp->buf, 0, sizeof(*m));
		memcpy(m, pp->buf->vaddr, sizeof(*m));
		ret = kverbs_perf_pp_post_recv(pp);
	}
	if (ret)
		return ret;
	if (le32_to_cpu(m->type) != KVERBS_PERF_MSG_ADV)
		return 1;
	/* Once, before its first message: where WRITE_LAT answers go. */
	if (!pp->t->req_access || pp->remote_known || !m->rkey ||
	    le32_to_cpu(m->stride) < pp->msg_size)
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	pp->remote_addr = le64_to_cpu(m->addr);
	pp->rkey = le32_to_cpu(m->rkey);
	pp->remote_known = true;
	return 0;
}

static bool kverbs_perf_pp_srq_ready(void *ep)
{
	return kverbs_srq_ready(ep);
}

/* Done with an SRQ's receive: post it again; returns @ret or the post's failure. */
static int kverbs_perf_pp_srq_repost(struct kverbs_perf_pp *pp, struct kverbs_srq_recv *r,
				     int ret)
{
	int err = kverbs_srq_post(pp->srq, r);

	if (err && !ret)
		ret = kverbs_ep_failed(pp->ep, err, KVERBS_STEP_RECV);
	return ret;
}

/*
 * SEND_LAT's server with KVERBS_PERF_F_SRQ: each of the client's
 * messages lands in whichever receive of the SRQ is at its head; it is
 * checked there, the receive is posted again, and only then is the
 * answer sent, so that the client's next message finds the SRQ as full
 * as the last one did.
 */
static int kverbs_perf_pp_server_srq(struct kverbs_perf_pp *pp, u32 ctrl_len,
				     struct kverbs_perf_msg *m)
{
	struct kverbs_ep *ep = pp->ep;
	struct kverbs_srq_recv *r;
	u32 offset;
	u64 iter;
	int ret;

	for (;;) {
		iter = pp->iters;
		ret = kverbs_perf_wait(ep, kverbs_perf_pp_srq_ready, ep,
				       pp->run->common.timeout_ns);
		if (ret)
			return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
		r = kverbs_srq_take(ep);
		if (r->status) {
			/* Its endpoint gives it back: kverbs_srq_give_back(). */
			kverbs_perf_pp_srq_repost(pp, r, 0);
			return kverbs_ep_failed(ep, -EIO, KVERBS_STEP_RECV);
		}
		ib_dma_sync_single_for_cpu(pp->srq->ibdev, r->dma, r->byte_len,
					   DMA_FROM_DEVICE);
		pp->recv.byte_len = r->byte_len;
		pp->recv.opcode = r->opcode;
		pp->recv.wc_flags = r->wc_flags;
		pp->recv.imm = r->imm;
		pp->recv.inv_rkey = r->inv_rkey;
		if (!kverbs_perf_recv_is_data(pp->t, &pp->recv, pp->msg_size)) {
			/* Data and control differ in length: kverbs_perf_ctrl_len(). */
			if (r->byte_len != ctrl_len || r->opcode != IB_WC_RECV)
				ret = kverbs_ep_bad_message(ep);
			else
				memcpy(m, r->buf, sizeof(*m));
			/* SEND_LAT's client sends no ADV. */
			if (!ret && le32_to_cpu(m->type) == KVERBS_PERF_MSG_ADV)
				ret = kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
			return kverbs_perf_pp_srq_repost(pp, r, ret);
		}
		ret = kverbs_perf_imm_check(pp->run, &pp->recv, iter);
		if (!ret && (pp->flags & KVERBS_PERF_F_VALIDATE) &&
		    !kverbs_perf_check(r->buf, pp->msg_size, iter, &offset)) {
			pp->run->result->mismatch_iter = iter;
			ret = kverbs_ep_mismatch(ep, offset);
		}
		/* The client's next message must find a receive. */
		ret = kverbs_perf_pp_srq_repost(pp, r, ret);
		/* The answer grants the client's next message. */
		if (!ret && pp->srq_credits)
			kverbs_srq_credit(ep, 1);
		if (!ret)
			ret = kverbs_perf_pp_post(pp, iter);
		if (ret)
			return ret;
		pp->iters = iter + 1;
	}
}

/**
 * kverbs_perf_pp_server - answer the client's messages until it sends a
 *	control message
 * @pp: the server's side, connected; SEND_LAT: its receive posted by
 *	kverbs_perf_pp_server_start()
 * @ctrl_recv: WRITE_LAT: the posted receive of the client's control
 *	messages; SEND_LAT and WRITE_LAT with immediate data: NULL, they
 *	arrive in @pp's receive
 * @ctrl_len: their length, which differs from @pp->msg_size for SEND_LAT
 * @m: where the control message goes
 *
 * Receives are posted again before an answer goes out.  @pp->iters
 * counts the messages answered.
 *
 * Return: 0 with the client's control
 * message in @m (other than WRITE_LAT's ADV, taken here), or the failure,
 * recorded on the endpoint.
 */
int kverbs_perf_pp_server(struct kverbs_perf_pp *pp, struct kverbs_msg *ctrl_recv,
			  u32 ctrl_len, struct kverbs_perf_msg *m)
{
	struct kverbs_perf_pp_wait w = { .pp = pp, .ctrl_recv = ctrl_recv };
	struct kverbs_ep *ep = pp->ep;
	enum kverbs_step step = ctrl_recv ? KVERBS_STEP_RDMA_WRITE : KVERBS_STEP_RECV;
	u64 iter;
	int ret;

	if (pp->srq)
		return kverbs_perf_pp_server_srq(pp, ctrl_len, m);
	for (;;) {
		iter = pp->iters;
		w.iter = iter;
		ret = kverbs_perf_wait(ep, kverbs_perf_pp_server_ready, &w,
				       pp->run->common.timeout_ns);
		if (ret)
			return kverbs_ep_failed(ep, ret, step);
		if (ctrl_recv && kverbs_is_done(&ctrl_recv->done)) {
			if (ctrl_recv->byte_len != ctrl_len)
				return kverbs_ep_bad_message(ep);
			ret = kverbs_perf_pp_server_ctrl(pp, ctrl_recv, m);
			if (ret)
				return ret < 0 ? ret : 0;
			continue;
		}
		if (!ctrl_recv && !kverbs_perf_recv_is_data(pp->t, &pp->recv, pp->msg_size)) {
			/* Data and control differ in length: kverbs_perf_ctrl_len(). */
			if (pp->recv.byte_len != ctrl_len || pp->recv.opcode != IB_WC_RECV)
				return kverbs_ep_bad_message(ep);
			ret = kverbs_perf_pp_server_ctrl(pp, NULL, m);
			if (ret)
				return ret < 0 ? ret : 0;
			continue;
		}
		/* WRITE_LAT: a message before the ADV that says where to answer. */
		if (pp->t->req_access && !pp->remote_known)
			return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
		ret = ctrl_recv ? 0 : kverbs_perf_imm_check(pp->run, &pp->recv, iter);
		if (!ret)
			ret = kverbs_perf_pp_check(pp, iter);
		/* The client's next message must find a receive. */
		if (!ret && !ctrl_recv)
			ret = kverbs_perf_pp_post_recv(pp);
		if (!ret)
			ret = kverbs_perf_pp_post(pp, iter);
		if (ret)
			return ret;
		pp->iters = iter + 1;
	}
}

/**
 * kverbs_perf_pp_server_start - post the server's first receive
 * @pp: the server's side
 *
 * SEND_LAT, and WRITE_LAT with immediate data; before the client may
 * send, so before the ADV.
 *
 * Return: 0 or the failure, recorded as KVERBS_STEP_RECV.
 */
int kverbs_perf_pp_server_start(struct kverbs_perf_pp *pp)
{
	/* An SRQ's receives are posted already, for every QP on it. */
	if (pp->srq)
		return 0;
	return kverbs_perf_pp_post_recv(pp);
}
