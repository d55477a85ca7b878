// SPDX-License-Identifier: GPL-2.0
/*
 * SEND_BW and SEND_LAT over Unreliable Datagrams (KVERBS_PERF_F_UD), as
 * perftest's -c UD runs them.
 *
 * The session is a perf session like any other (perf_session.c): the
 * client's hello goes in an RC connection request, and the control
 * messages (START, ADV, DONE) go over that connection, reliably.  Only
 * the data moves over a UD QP that each side creates on the
 * connection's PD, with a CQ of its own, busy-polled or not as the
 * side's completion policy says (kverbs_perf_cq_caps()), as its RC CQ.  Its peer's address needs no
 * second rdma_cm ID: the connection's path is the one the datagrams
 * take, and rdma_init_qp_attr() for RTR hands it over as the
 * &rdma_ah_attr an RC QP would be given (the IB CM's address vector,
 * with the GRH and, on RoCE, the MAC).  Each side's QP number and the
 * Q_Key travel in START and ADV.
 *
 * Normal operation:
 *
 *   client                                 server
 *   UD QP, receives posted                 UD QP, receives posted
 *   connect(hello, KVERBS_PERF_F_UD) ---->  accept
 *   SEND START {a: our UD QPN}      ---->  AH from the connection's path
 *   AH from the connection's path   <----  SEND ADV {a: our UD QPN}
 *   SEND_BW: datagrams, each a SEND with immediate data, the message's
 *   iteration, tx_depth in flight   ---->  each receive checked and
 *                                          posted again
 *   SEND_LAT: message i             ---->  answered with message i
 *                                   <----
 *   SEND DONE {a: sent, b: ns}      ---->  SEND_BW: takes what is still
 *                                          arriving, then
 *                                   <----  SEND ROUND_OK {a: received}
 *
 * Nothing is retransmitted.  A datagram that finds no receive, or that
 * the fabric drops, is gone: SEND_BW's receiver counts what arrived,
 * checks each message by the iteration its immediate data names
 * (--validate), and both sides report the difference as
 * &kverbs_perf.lost, which is not a failure.  In SEND_LAT a lost
 * message or answer leaves the client waiting: the step's time limit
 * ends the test with -ETIMEDOUT.
 *
 * A UD QP takes a datagram from anyone who knows its number and the
 * Q_Key.  Each receive's completion names the QP that sent it
 * (&ib_wc.src_qp): one from another QP than the peer's is no part of
 * the test, and is dropped, its receive posted again, and counted in
 * &kverbs_perf.foreign.
 *
 * Every receive starts with the 40 bytes of a GRH (struct ib_grh), and
 * a message is at most the port's active MTU: -EMSGSIZE before
 * anything is connected.  iWARP has no UD: -EOPNOTSUPP, also before.
 *
 * Teardown: the UD QP goes to the error state, and its flushed
 * completions are ignored (@closing); the QP, its CQ and the address
 * handle go before the buffers, and the RC side is quiesced as every
 * perf end's is.
 */
#include "perf.h"
#include "trace.h"

#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#define KVERBS_PERF_UD_GRH	sizeof(struct ib_grh)
/*
 * The Q_Key of every kverbs UD data QP: rdma_cm's own for RDMA_PS_UDP
 * (RDMA_UDP_QKEY in cma.c), which is not exported.
 */
#define KVERBS_PERF_UD_QKEY	0x01234567
/*
 * SEND_BW's receives: more than the sender keeps in flight, so that a
 * receiver a little behind still finds one.
 */
#define KVERBS_PERF_UD_RECVS	512U
/*
 * After DONE, how long a quiet spell ends SEND_BW's receiver's wait for
 * datagrams still on their way, the rest being counted as lost.  DONE
 * comes over the RC connection, which can overtake datagrams still in
 * the device's receive path; a soft device on a host whose CPUs other
 * guests share can take a good part of a second to deliver them.
 */
#define KVERBS_PERF_UD_LINGER_NS	NSEC_PER_SEC
/* Completions a busy-polling side reaps from the UD CQ at a time. */
#define KVERBS_PERF_UD_POLL_BUDGET	16

/**
 * struct kverbs_perf_ud_msg - one datagram buffer
 * @msg: the buffer, its DMA mapping and completion
 * @u: the end it belongs to
 * @imm: receive: the immediate data, the sender's iteration
 * @src_qp: receive: the QP that sent it
 * @ns: receive: when it completed; send: when it was posted
 */
struct kverbs_perf_ud_msg {
	struct kverbs_msg msg;
	struct kverbs_perf_ud *u;
	u32 imm;
	u32 src_qp;
	u64 ns;
};

/**
 * struct kverbs_perf_ud - one end of a perf test over UD
 * @run: the test
 * @ep: the RC connection, for the control messages
 * @client: the client's end
 * @size: bytes per message
 * @cq: the UD QP's CQ, of the connection's poll context
 * @qp: the UD QP
 * @ah: the peer's address handle, from the connection's path
 * @remote_qpn: the peer's UD QP
 * @recv: @nrecv receive buffers, each a GRH ahead of @size bytes
 * @nrecv: ...
 * @next_recv: the receive whose completion comes next
 * @send: @nsend send buffers, used in turn
 * @nsend: ...
 * @ctrl_send: control messages out
 * @ctrl_recv: control messages in, one posted at a time
 * @next_cid: the completion id the last datagram posted got: the UD CQ's
 *	own sequence, traced as the endpoint's are (&struct kverbs_cqe)
 * @want: the buffer a wait is for
 * @done_seen: SEND_BW's receiver has had DONE: a wait is for data only
 * @closing: the QP is being torn down: flushed completions are not errors
 * @smp: the client's latency samples
 * @user: whom the buffers are charged to, against max_pinned_mb
 * @accounted: pages charged
 */
struct kverbs_perf_ud {
	struct kverbs_perf_run *run;
	struct kverbs_ep *ep;
	bool client;
	u32 size;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_ah *ah;
	u32 remote_qpn;
	struct kverbs_perf_ud_msg *recv;
	u32 nrecv;
	u32 next_recv;
	struct kverbs_perf_ud_msg *send;
	u32 nsend;
	struct kverbs_msg ctrl_send;
	struct kverbs_msg ctrl_recv;
	u32 next_cid;
	struct kverbs_perf_ud_msg *want;
	bool done_seen;
	bool closing;
	struct kverbs_perf_samples smp;
	struct kverbs_user *user;
	unsigned long accounted;
};

static void kverbs_perf_ud_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_perf_ud_msg *m = container_of(wc->wr_cqe, struct kverbs_perf_ud_msg,
						    msg.cqe.cqe);
	struct kverbs_perf_ud *u = m->u;
	enum kverbs_step step = m->msg.dir == DMA_TO_DEVICE ? KVERBS_STEP_SEND :
							      KVERBS_STEP_RECV;

	trace_kverbs_wc(cq, wc, step);
	if (wc->status != IB_WC_SUCCESS) {
		if (!READ_ONCE(u->closing))
			kverbs_ep_wc_failed(u->ep, wc, step);
		return;
	}
	m->msg.byte_len = wc->byte_len;
	m->imm = wc->wc_flags & IB_WC_WITH_IMM ? be32_to_cpu(wc->ex.imm_data) : 0;
	m->src_qp = wc->src_qp;
	/*
	 * A send keeps the time it was posted: its completion may run
	 * before or after its answer's, and a latency sample is from the
	 * post to the answer (kverbs_perf_ud_lat_client()).
	 */
	if (m->msg.dir == DMA_FROM_DEVICE)
		m->ns = ktime_get_ns();
	kverbs_set_done(&m->msg.done);
	wake_up(&u->ep->wait);
}

/*
 * The device and port must do UD, and a message must fit the port's
 * active MTU: kverbs_ep_ud_mtu().
 */
static int kverbs_perf_ud_check(struct kverbs_perf_run *run, struct kverbs_ep *ep)
{
	int mtu = kverbs_ep_ud_mtu(ep);

	if (mtu < 0)
		return mtu;
	run->path_mtu = mtu;
	if (run->msg_size > mtu) {
		ibdev_dbg(kverbs_ep_device(ep),
			  "perf: %u bytes do not fit the port's MTU of %d\n", run->msg_size, mtu);
		return -EMSGSIZE;
	}
	return 0;
}

/*
 * The UD QP, in INIT: its receives are posted before it can receive
 * (kverbs_perf_ud_ready()).
 */
static int kverbs_perf_ud_create_qp(struct kverbs_perf_ud *u, enum ib_poll_context poll_ctx)
{
	struct kverbs_ep *ep = u->ep;
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_UD,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = u->nsend,
			.max_recv_wr = u->nrecv,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct ib_qp_attr attr = {};
	int ret;

	u->cq = ib_alloc_cq(kverbs_ep_device(ep), u, u->nsend + u->nrecv,
			    kverbs_comp_vector(kverbs_ep_device(ep)), poll_ctx);
	if (IS_ERR(u->cq)) {
		ret = PTR_ERR(u->cq);
		u->cq = NULL;
		return ret;
	}
	init.send_cq = u->cq;
	init.recv_cq = u->cq;
	u->qp = ib_create_qp(ep->pd, &init);
	if (IS_ERR(u->qp)) {
		ret = PTR_ERR(u->qp);
		u->qp = NULL;
		return ret;
	}
	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = kverbs_ep_port(ep);
	attr.qkey = KVERBS_PERF_UD_QKEY;
	return ib_modify_qp(u->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_QKEY);
}

/*
 * RTR and RTS, which a UD QP reaches with no peer, once its receives are
 * posted: a datagram that finds none is dropped, and nothing resends it.
 * Anyone who knows the QP's number may send from the moment it is in
 * RTR (rdma res shows it), before the peer has heard of it.
 */
static int kverbs_perf_ud_ready(struct kverbs_perf_ud *u)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTR };
	int ret;

	ret = ib_modify_qp(u->qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	return ib_modify_qp(u->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

static int kverbs_perf_ud_msgs_alloc(struct kverbs_perf_ud *u)
{
	struct ib_pd *pd = u->ep->pd;
	u32 i;
	int ret;

	u->recv = kvcalloc(u->nrecv, sizeof(*u->recv), GFP_KERNEL_ACCOUNT);
	u->send = kvcalloc(u->nsend, sizeof(*u->send), GFP_KERNEL_ACCOUNT);
	if (!u->recv || !u->send)
		return -ENOMEM;
	for (i = 0; i < u->nrecv; i++) {
		ret = kverbs_msg_alloc(&u->recv[i].msg, pd,
				       KVERBS_PERF_UD_GRH + u->run->path_mtu, DMA_FROM_DEVICE);
		if (ret)
			return ret;
		u->recv[i].msg.cqe.cqe.done = kverbs_perf_ud_done;
		u->recv[i].msg.cqe.ep = u->ep;
		u->recv[i].u = u;
	}
	for (i = 0; i < u->nsend; i++) {
		ret = kverbs_msg_alloc(&u->send[i].msg, pd, u->size, DMA_TO_DEVICE);
		if (ret)
			return ret;
		u->send[i].msg.cqe.cqe.done = kverbs_perf_ud_done;
		u->send[i].msg.cqe.ep = u->ep;
		u->send[i].u = u;
		/* Never sent: free to fill. */
		u->send[i].msg.done = true;
	}
	return 0;
}

/*
 * The completion id of a datagram being posted, and its QP: the trace of
 * its post and of its completion then show the same UD CQ id, id and QP,
 * as an endpoint's work requests do (kverbs_post_send()).  Not inside
 * the tracepoint's arguments, which are evaluated only while it is
 * enabled.
 */
static u32 kverbs_perf_ud_give_cid(struct kverbs_perf_ud *u, struct kverbs_perf_ud_msg *m)
{
	m->msg.cqe.cid = ++u->next_cid;
	m->msg.cqe.qp_num = u->qp->qp_num;
	return m->msg.cqe.cid;
}

static int kverbs_perf_ud_post_recv(struct kverbs_perf_ud *u, struct kverbs_perf_ud_msg *m)
{
	struct ib_recv_wr wr = {
		.wr_cqe = &m->msg.cqe.cqe,
		.sg_list = &m->msg.sge,
		.num_sge = 1,
	};
	u32 cid;
	int ret;

	m->msg.done = false;
	/* The CPU may have read it (--validate): the device's again. */
	ib_dma_sync_single_for_device(m->msg.ibdev, m->msg.dma, m->msg.len, DMA_FROM_DEVICE);
	cid = kverbs_perf_ud_give_cid(u, m);
	trace_kverbs_post_recv(u->qp, m->msg.len, u->cq->res.id, cid);
	ret = ib_post_recv(u->qp, &wr, NULL);
	if (ret)
		return kverbs_ep_failed(u->ep, ret, KVERBS_STEP_RECV);
	return 0;
}

/*
 * The receive the ring is at (&kverbs_perf_ud.next_recv), taken or
 * dropped: posted again, and the ring moves on to the next.
 */
static int kverbs_perf_ud_recv_next(struct kverbs_perf_ud *u)
{
	int ret = kverbs_perf_ud_post_recv(u, &u->recv[u->next_recv]);

	if (!ret)
		u->next_recv = (u->next_recv + 1) % u->nrecv;
	return ret;
}

/* Send message @iter from @m: the pattern of @iter with --validate. */
static int kverbs_perf_ud_post_send(struct kverbs_perf_ud *u, struct kverbs_perf_ud_msg *m,
				    u64 iter)
{
	struct ib_ud_wr wr = {};
	u32 cid;
	int ret;

	if (u->run->flags & KVERBS_PERF_F_VALIDATE) {
		kverbs_perf_fill(m->msg.buf, u->size, iter);
		ib_dma_sync_single_for_device(m->msg.ibdev, m->msg.dma, u->size,
					      DMA_TO_DEVICE);
	}
	wr.wr.wr_cqe = &m->msg.cqe.cqe;
	wr.wr.sg_list = &m->msg.sge;
	wr.wr.num_sge = 1;
	wr.wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.ex.imm_data = cpu_to_be32(kverbs_perf_imm(iter));
	wr.ah = u->ah;
	wr.remote_qpn = u->remote_qpn;
	wr.remote_qkey = KVERBS_PERF_UD_QKEY;
	m->msg.done = false;
	m->ns = ktime_get_ns();
	cid = kverbs_perf_ud_give_cid(u, m);
	trace_kverbs_post_send(u->qp, &wr.wr, u->cq->res.id, cid);
	ret = ib_post_send(u->qp, &wr.wr, NULL);
	if (ret)
		return kverbs_ep_failed(u->ep, ret, KVERBS_STEP_SEND);
	return 0;
}

/*
 * Wait until @cond(@arg) holds, as kverbs_perf_wait() does: a side that
 * busy-polls (its CQs IB_POLL_DIRECT) polls the UD QP's CQ and the
 * connection's in turn; otherwise it sleeps until a handler wakes it.
 * A peer that sends its last control message and disconnects may have
 * its disconnect recorded before that message's completion ran here:
 * a wait the connection's failure ends drains the connection's QP,
 * which runs every completion ahead of the flushes, and holds after all
 * if what it waited for was among them (kverbs_perf_wait()).
 * Return: 0, or the failure recorded as @step.
 */
static int kverbs_perf_ud_wait(struct kverbs_perf_ud *u, bool (*cond)(struct kverbs_perf_ud *u),
			       u64 timeout_ns, enum kverbs_step step)
{
	struct kverbs_ep *ep = u->ep;
	unsigned int round = 0;
	u64 deadline = 0;
	int ret = 0;

	if (u->cq->poll_ctx != IB_POLL_DIRECT) {
		ret = kverbs_ep_wait_interruptible(ep, cond(u), kverbs_ep_wait_timeout(timeout_ns));
	} else {
		while (!ret && !cond(u)) {
			ib_process_cq_direct(u->cq, KVERBS_PERF_UD_POLL_BUDGET);
			if (cond(u))
				break;
			ret = kverbs_perf_poll(ep, timeout_ns, &deadline, round++);
		}
	}
	if (!ret || cond(u))
		return 0;
	if (kverbs_ep_error(ep)) {
		kverbs_ep_drain(ep);
		if (cond(u))
			return 0;
	}
	return kverbs_ep_failed(ep, ret, step);
}

/* What a wait is for: the send or receive @u->want, ... */
static bool kverbs_perf_ud_want_done(struct kverbs_perf_ud *u)
{
	return kverbs_is_done(&u->want->msg.done);
}

/* ... a control message, ... */
static bool kverbs_perf_ud_ctrl_done(struct kverbs_perf_ud *u)
{
	return kverbs_is_done(&u->ctrl_recv.done);
}

/* ... or the receive @u->want and, until DONE came, a control message. */
static bool kverbs_perf_ud_recv_or_ctrl(struct kverbs_perf_ud *u)
{
	return kverbs_is_done(&u->want->msg.done) ||
	       (!u->done_seen && kverbs_is_done(&u->ctrl_recv.done));
}

/* ... the last control message sent, ... */
static bool kverbs_perf_ud_ctrl_sent(struct kverbs_perf_ud *u)
{
	return kverbs_is_done(&u->ctrl_send.done);
}

/*
 * SEND_BW's receiver after DONE: the next datagram within @timeout_ns,
 * or -ETIMEDOUT, which is no failure: the rest are lost.
 */
static int kverbs_perf_ud_linger(struct kverbs_perf_ud *u, u64 timeout_ns)
{
	struct kverbs_ep *ep = u->ep;
	unsigned int round = 0;
	u64 deadline = 0;
	int ret = 0;

	if (u->cq->poll_ctx != IB_POLL_DIRECT)
		ret = kverbs_ep_wait_interruptible(ep, kverbs_perf_ud_want_done(u),
						   kverbs_ep_wait_timeout(timeout_ns));
	else
		while (!ret && !kverbs_perf_ud_want_done(u)) {
			ib_process_cq_direct(u->cq, KVERBS_PERF_UD_POLL_BUDGET);
			if (!kverbs_perf_ud_want_done(u))
				ret = kverbs_perf_poll(ep, timeout_ns, &deadline, round++);
		}
	if (kverbs_perf_ud_want_done(u))
		return 0;
	if (ret == -ETIMEDOUT)
		return ret;
	return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
}

/* A free send buffer for message @iter: its last SEND completed. */
static struct kverbs_perf_ud_msg *kverbs_perf_ud_slot(struct kverbs_perf_ud *u, u64 iter)
{
	struct kverbs_perf_ud_msg *m = &u->send[do_div(iter, u->nsend)];
	int ret;

	u->want = m;
	ret = kverbs_perf_ud_wait(u, kverbs_perf_ud_want_done, u->run->common.timeout_ns,
				  KVERBS_STEP_SEND);
	return ret ? ERR_PTR(ret) : m;
}

static int kverbs_perf_ud_wait_sends(struct kverbs_perf_ud *u)
{
	u32 i;

	for (i = 0; i < u->nsend; i++)
		if (IS_ERR(kverbs_perf_ud_slot(u, i)))
			return kverbs_ep_error(u->ep);
	return 0;
}

/* The peer's address handle: the path of the connection, which is up. */
static int kverbs_perf_ud_create_ah(struct kverbs_perf_ud *u)
{
	struct kverbs_ep *ep = u->ep;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTR };
	int mask, ret;

	ret = rdma_init_qp_attr(ep->id, &attr, &mask);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_CONNECT);
	/* A copy of the IB CM's address vector: it holds no reference. */
	u->ah = rdma_create_ah(ep->pd, &attr.ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(u->ah)) {
		ret = PTR_ERR(u->ah);
		u->ah = NULL;
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_CONNECT);
	}
	return 0;
}

/* Send control message @type with @a and @b over the connection. */
static int kverbs_perf_ud_ctrl_send(struct kverbs_perf_ud *u,
				    enum kverbs_perf_msg_type type, u64 a, u64 b)
{
	struct kverbs_perf_msg *m = u->ctrl_send.buf;
	struct ib_send_wr wr;
	int ret;

	ret = kverbs_perf_ud_wait(u, kverbs_perf_ud_ctrl_sent, u->run->common.timeout_ns,
				  KVERBS_STEP_SEND);
	if (ret)
		return ret;
	memset(m, 0, sizeof(*m));
	m->a = cpu_to_le64(a);
	m->b = cpu_to_le64(b);
	kverbs_perf_ctrl_wr(&u->ctrl_send, &wr, type);
	ib_dma_sync_single_for_device(u->ctrl_send.ibdev, u->ctrl_send.dma,
				      u->ctrl_send.len, DMA_TO_DEVICE);
	u->ctrl_send.done = false;
	return kverbs_post_send(u->ep, &wr, KVERBS_STEP_SEND);
}

/*
 * The control message that arrived, of type @type: its @a and @b, and
 * the receive posted again for the next one while the connection is up.
 */
static int kverbs_perf_ud_ctrl_take(struct kverbs_perf_ud *u,
				    enum kverbs_perf_msg_type type, u64 *a, u64 *b)
{
	struct kverbs_perf_msg *m = u->ctrl_recv.buf;
	struct kverbs_ep *ep = u->ep;

	kverbs_msg_sync_for_cpu(&u->ctrl_recv);
	if (u->ctrl_recv.byte_len != sizeof(*m) || le32_to_cpu(m->type) != type) {
		ibdev_dbg(kverbs_ep_device(ep), "perf: expected control message %d\n", type);
		return kverbs_ep_bad_message(ep);
	}
	*a = le64_to_cpu(m->a);
	if (b)
		*b = le64_to_cpu(m->b);
	/* After the peer's last message and its disconnect, none follows. */
	if (kverbs_ep_error(ep))
		return 0;
	return kverbs_msg_post_recv(&u->ctrl_recv, ep);
}

static int kverbs_perf_ud_ctrl_wait(struct kverbs_perf_ud *u,
				    enum kverbs_perf_msg_type type, u64 *a, u64 *b)
{
	int ret;

	ret = kverbs_perf_ud_wait(u, kverbs_perf_ud_ctrl_done, u->run->common.timeout_ns,
				  KVERBS_STEP_RECV);
	if (ret)
		return ret;
	return kverbs_perf_ud_ctrl_take(u, type, a, b);
}

static void kverbs_perf_ud_free(void *arg);

/**
 * kverbs_perf_ud_create - set up one end of a perf test over UD
 * @run: the test, with KVERBS_PERF_F_UD
 * @ep: its connection, bound to a device, before it connects
 * @client: the client's end
 *
 * Return: the end, or an ERR_PTR: -EOPNOTSUPP over iWARP, -EMSGSIZE for
 * messages above the port's active MTU.
 */
struct kverbs_perf_ud *kverbs_perf_ud_create(struct kverbs_perf_run *run,
					     struct kverbs_ep *ep, bool client)
{
	struct ib_device *ibdev = kverbs_ep_device(ep);
	struct kverbs_ep_caps caps = {
		/* START or DONE, and the drain. */
		.max_send_wr = 1,
		.max_recv_wr = 1,
		.max_send_sge = 1,
	};
	struct kverbs_perf_ud *u;
	u64 bytes;
	u32 i;
	int ret;

	ret = kverbs_perf_ud_check(run, ep);
	if (ret)
		return ERR_PTR(kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP));
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return ERR_PTR(kverbs_ep_failed(ep, -ENOMEM, KVERBS_STEP_SETUP));
	u->run = run;
	u->ep = ep;
	u->client = client;
	kverbs_ep_set_release(ep, kverbs_perf_ud_free, u);
	u->size = run->msg_size;
	if (run->t->lat) {
		/* One message each way in flight; one receive spare. */
		u->nsend = 1;
		u->nrecv = 2;
	} else {
		u->nsend = client ? run->tx_depth : 1;
		u->nrecv = client ? 1 : KVERBS_PERF_UD_RECVS;
	}
	u->nsend = min_t(u32, u->nsend, ibdev->attrs.max_qp_wr);
	u->nrecv = min_t(u32, u->nrecv, ibdev->attrs.max_qp_wr);
	/*
	 * What kmalloc() takes for each buffer (kverbs_msg_alloc()), not its
	 * length.  A receive has room for any datagram the port carries: a
	 * stranger's larger than ours is counted and dropped as any other
	 * stranger's (kverbs_perf_ud_take()), where it would otherwise
	 * complete the receive in error and end the test.
	 */
	bytes = (u64)u->nrecv * kmalloc_size_roundup(KVERBS_PERF_UD_GRH + run->path_mtu) +
		(u64)u->nsend * kmalloc_size_roundup(u->size);
	ret = kverbs_pin_account(&u->user, DIV_ROUND_UP_ULL(bytes, PAGE_SIZE));
	if (ret)
		goto out_fail;
	u->accounted = DIV_ROUND_UP_ULL(bytes, PAGE_SIZE);

	/* Both CQs as the side's completion policy says, busy-polled or not. */
	kverbs_perf_cq_caps(run, &caps, !run->events);
	ret = kverbs_perf_create_qp(run, ep, &caps, false);
	if (!ret)
		ret = kverbs_perf_ud_create_qp(u, caps.poll_ctx);
	if (!ret)
		ret = kverbs_perf_ud_msgs_alloc(u);
	if (!ret)
		ret = kverbs_msg_alloc(&u->ctrl_send, ep->pd, sizeof(struct kverbs_perf_msg),
				       DMA_TO_DEVICE);
	if (!ret)
		ret = kverbs_msg_alloc(&u->ctrl_recv, ep->pd, sizeof(struct kverbs_perf_msg),
				       DMA_FROM_DEVICE);
	if (!ret && client)
		ret = kverbs_perf_samples_alloc(&u->smp, run);
	if (ret)
		goto out_fail;
	u->ctrl_send.done = true;
	ret = kverbs_msg_post_recv(&u->ctrl_recv, ep);
	for (i = 0; !ret && i < u->nrecv; i++)
		ret = kverbs_perf_ud_post_recv(u, &u->recv[i]);
	if (ret)
		goto out_stop;
	ret = kverbs_perf_ud_ready(u);
	if (ret)
		goto out_fail;
	return u;

out_fail:
	kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP);
out_stop:
	kverbs_perf_ud_stop(u);
	return ERR_PTR(ret);
}

/*
 * Receive @m of message @iter, which completed: its length, and with
 * --validate the pattern of the iteration its immediate data names.
 * Returns that iteration in *@got, in 64 bits, from @iter, which it
 * cannot precede, or -EAGAIN for a datagram that another QP than the
 * peer's sent: anyone who knows our QP number and the Q_Key can send
 * to it, and what they send is no part of the test.  (UD has no more
 * than that to tell a peer by: a sender that forges the peer's QP
 * number and address is taken for it.)
 */
static int kverbs_perf_ud_take(struct kverbs_perf_ud *u, struct kverbs_perf_ud_msg *m,
			       u64 iter, u64 *got)
{
	struct kverbs_perf_run *run = u->run;
	struct kverbs_ep *ep = u->ep;
	u32 offset;

	if (m->src_qp != u->remote_qpn) {
		ibdev_dbg(kverbs_ep_device(ep), "perf: a datagram from qp %u, not the peer's %u\n",
			  m->src_qp, u->remote_qpn);
		if (run->foreign < U32_MAX)
			run->foreign++;
		return -EAGAIN;
	}
	if (m->msg.byte_len != KVERBS_PERF_UD_GRH + u->size) {
		ibdev_dbg(kverbs_ep_device(ep), "perf: a datagram of %u bytes, expected %zu\n",
			  m->msg.byte_len, KVERBS_PERF_UD_GRH + u->size);
		return kverbs_ep_bad_message(ep);
	}
	/* Datagrams of one QP to another arrive in order, or not at all. */
	*got = iter + (u32)(m->imm - kverbs_perf_imm(iter));
	if (!(run->flags & KVERBS_PERF_F_VALIDATE))
		return 0;
	kverbs_msg_sync_for_cpu(&m->msg);
	if (!kverbs_perf_check(m->msg.buf + KVERBS_PERF_UD_GRH, u->size, *got, &offset)) {
		run->result->mismatch_iter = *got;
		return kverbs_ep_mismatch(ep, offset);
	}
	return 0;
}

/*
 * A client's end: its last SEND completed, the measured phase is over;
 * DONE tells the server how many it sent and in how long, and its
 * ROUND_OK how many arrived (@received).
 */
static int kverbs_perf_ud_finish(struct kverbs_perf_ud *u, u64 iter, u64 start,
				 u64 *received)
{
	struct kverbs_perf_run *run = u->run;
	u64 elapsed;
	int ret;

	ret = kverbs_perf_ud_wait_sends(u);
	if (ret)
		return ret;
	elapsed = ktime_get_ns() - start;
	run->ended_ns = ktime_get_real_ns();
	kverbs_perf_set_rates(run->result, iter, elapsed, 0);
	ret = kverbs_perf_ud_ctrl_send(u, KVERBS_PERF_MSG_DONE, iter, elapsed);
	if (!ret)
		ret = kverbs_perf_ud_ctrl_wait(u, KVERBS_PERF_MSG_ROUND_OK, received,
					       NULL);
	return ret;
}

/* SEND_BW's sender: every datagram out, then DONE, then what arrived. */
static int kverbs_perf_ud_bw_client(struct kverbs_perf_ud *u)
{
	struct kverbs_perf_run *run = u->run;
	u64 start, deadline, iter, received;
	struct kverbs_perf_ud_msg *m;
	int ret;

	start = ktime_get_ns();
	deadline = start + run->duration_ns;
	for (iter = 0; run->iterations ? iter < run->iterations :
					 ktime_get_ns() < deadline; iter++) {
		if (signal_pending(current))
			return kverbs_ep_failed(u->ep, -EINTR, KVERBS_STEP_NONE);
		m = kverbs_perf_ud_slot(u, iter);
		if (IS_ERR(m))
			return PTR_ERR(m);
		ret = kverbs_perf_ud_post_send(u, m, iter);
		if (ret)
			return ret;
	}
	ret = kverbs_perf_ud_finish(u, iter, start, &received);
	if (ret)
		return ret;
	if (received > iter)
		return kverbs_ep_failed(u->ep, -EPROTO, KVERBS_STEP_RECV);
	run->lost = iter - received;
	return 0;
}

/*
 * A server's last word: ROUND_OK with what it counted.  The client
 * hangs up as soon as it has it, which can be before our side has
 * processed the acknowledgment: the SEND is then flushed, and the
 * connection's reset recorded.  Once it was posted, the test is over
 * for us, and a reset then is no failure of it (as the ping server's
 * last go-ahead).
 */
static int kverbs_perf_ud_round_ok(struct kverbs_perf_ud *u, u64 count)
{
	int ret;

	ret = kverbs_perf_ud_ctrl_send(u, KVERBS_PERF_MSG_ROUND_OK, count, 0);
	if (ret)
		return ret;
	ret = kverbs_perf_ud_wait(u, kverbs_perf_ud_ctrl_sent, u->run->common.timeout_ns,
				  KVERBS_STEP_SEND);
	return ret == -ECONNRESET ? 0 : ret;
}

/*
 * SEND_BW's receiver: each datagram checked and its receive posted
 * again, until DONE and what follows it has arrived or is lost.
 */
static int kverbs_perf_ud_bw_server(struct kverbs_perf_ud *u)
{
	struct kverbs_perf_run *run = u->run;
	struct kverbs_ep *ep = u->ep;
	u64 iter = 0, received = 0, sent = 0, elapsed = 0, got;
	u64 timeout = run->common.timeout_ns;
	struct kverbs_perf_ud_msg *m;
	bool done = false, foreign;
	int ret;

	for (;;) {
		m = &u->recv[u->next_recv];
		u->want = m;
		u->done_seen = done;
		/* After DONE, a quiet spell ends the wait for stragglers. */
		if (done && !kverbs_perf_ud_want_done(u)) {
			ret = kverbs_perf_ud_linger(u, timeout);
			if (ret == -ETIMEDOUT)
				break;
		} else {
			ret = kverbs_perf_ud_wait(u, kverbs_perf_ud_recv_or_ctrl, timeout,
						  KVERBS_STEP_RECV);
		}
		if (ret)
			return ret;
		if (kverbs_is_done(&m->msg.done)) {
			ret = kverbs_perf_ud_take(u, m, iter, &got);
			foreign = ret == -EAGAIN;
			if (ret && !foreign)
				return ret;
			if (!foreign && run->iterations && got >= run->iterations)
				return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
			if (!foreign) {
				iter = got + 1;
				received++;
			}
			ret = kverbs_perf_ud_recv_next(u);
			if (ret)
				return ret;
		} else if (!done) {
			ret = kverbs_perf_ud_ctrl_take(u, KVERBS_PERF_MSG_DONE, &sent, &elapsed);
			if (ret)
				return ret;
			if (!kverbs_perf_done_valid(run, u->size, sent, elapsed))
				return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
			done = true;
			timeout = min_t(u64, KVERBS_PERF_UD_LINGER_NS,
					run->common.timeout_ns ?: KVERBS_PERF_UD_LINGER_NS);
		}
		if (done && iter >= sent)
			break;
	}
	if (received > sent)
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	run->ended_ns = ktime_get_real_ns();
	kverbs_perf_set_rates(run->result, received, elapsed, 0);
	run->lost = sent - received;
	return kverbs_perf_ud_round_ok(u, received);
}

/*
 * SEND_LAT's client: the answer to message @iter, its receive completed
 * and taken; what another QP sent meanwhile is dropped, its receive
 * posted again.
 */
static struct kverbs_perf_ud_msg *kverbs_perf_ud_answer(struct kverbs_perf_ud *u, u64 iter)
{
	struct kverbs_perf_ud_msg *r;
	u64 got;
	int ret;

	for (;;) {
		r = &u->recv[u->next_recv];
		u->want = r;
		/* A lost message or answer ends the test here: -ETIMEDOUT. */
		ret = kverbs_perf_ud_wait(u, kverbs_perf_ud_want_done, u->run->common.timeout_ns,
					  KVERBS_STEP_RECV);
		if (ret)
			return ERR_PTR(ret);
		ret = kverbs_perf_ud_take(u, r, iter, &got);
		if (ret != -EAGAIN)
			break;
		ret = kverbs_perf_ud_recv_next(u);
		if (ret)
			return ERR_PTR(ret);
	}
	if (!ret && got != iter)
		ret = kverbs_ep_failed(u->ep, -EPROTO, KVERBS_STEP_RECV);
	return ret ? ERR_PTR(ret) : r;
}

/* SEND_LAT's client: message i out, answer i back, for every i. */
static int kverbs_perf_ud_lat_client(struct kverbs_perf_ud *u)
{
	struct kverbs_perf_run *run = u->run;
	struct kverbs_perf_samples *smp = &u->smp;
	struct kverbs_ep *ep = u->ep;
	u64 start, deadline, iter, received;
	struct kverbs_perf_ud_msg *m, *r;
	int ret;

	start = ktime_get_ns();
	deadline = start + run->duration_ns;
	for (iter = 0; run->iterations ? iter < run->iterations :
					 ktime_get_ns() < deadline; iter++) {
		if (signal_pending(current))
			return kverbs_ep_failed(ep, -EINTR, KVERBS_STEP_NONE);
		m = kverbs_perf_ud_slot(u, iter);
		if (IS_ERR(m))
			return PTR_ERR(m);
		ret = kverbs_perf_ud_post_send(u, m, iter);
		if (ret)
			return ret;
		r = kverbs_perf_ud_answer(u, iter);
		if (IS_ERR(r))
			return PTR_ERR(r);
		if (smp->chunk && smp->stored + smp->len < run->samples_max) {
			/* perftest's latency is half the round trip. */
			smp->chunk[smp->len++] = (r->ns - m->ns) / 2;
			if (smp->len == KVERBS_PERF_CHUNK)
				kverbs_perf_samples_flush(smp, run);
		}
		ret = kverbs_perf_ud_recv_next(u);
		if (ret)
			return ret;
	}
	return kverbs_perf_ud_finish(u, iter, start, &received);
}

/* SEND_LAT's server: each message answered with its own iteration, to DONE. */
static int kverbs_perf_ud_lat_server(struct kverbs_perf_ud *u)
{
	struct kverbs_perf_run *run = u->run;
	struct kverbs_ep *ep = u->ep;
	u64 iter = 0, sent, elapsed, got;
	struct kverbs_perf_ud_msg *m, *r;
	bool foreign;
	int ret;

	for (;;) {
		r = &u->recv[u->next_recv];
		u->want = r;
		u->done_seen = false;
		ret = kverbs_perf_ud_wait(u, kverbs_perf_ud_recv_or_ctrl, run->common.timeout_ns,
					  KVERBS_STEP_RECV);
		if (ret)
			return ret;
		if (!kverbs_is_done(&r->msg.done))
			break;
		ret = kverbs_perf_ud_take(u, r, iter, &got);
		foreign = ret == -EAGAIN;
		if (ret && !foreign)
			return ret;
		if (!foreign && run->iterations && got >= run->iterations)
			return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
		ret = kverbs_perf_ud_recv_next(u);
		if (ret)
			return ret;
		if (foreign)
			continue;
		m = kverbs_perf_ud_slot(u, got);
		if (IS_ERR(m))
			return PTR_ERR(m);
		ret = kverbs_perf_ud_post_send(u, m, got);
		if (ret)
			return ret;
		iter = got + 1;
	}
	ret = kverbs_perf_ud_ctrl_take(u, KVERBS_PERF_MSG_DONE, &sent, &elapsed);
	if (ret)
		return ret;
	if (!kverbs_perf_done_valid(run, u->size, sent, elapsed))
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	ret = kverbs_perf_ud_wait_sends(u);
	if (ret)
		return ret;
	run->ended_ns = ktime_get_real_ns();
	kverbs_perf_set_rates(run->result, sent, elapsed, 0);
	return kverbs_perf_ud_round_ok(u, sent);
}

/**
 * kverbs_perf_ud_run - run one end of a perf test over UD, connected
 * @u: the end
 *
 * Return: 0 when the test ran to its end, with &kverbs_perf_run.lost
 * the messages that did not arrive (SEND_BW); else the first failure,
 * which is also in the endpoint: -ETIMEDOUT when a SEND_LAT message or
 * its answer was lost.
 */
int kverbs_perf_ud_run(struct kverbs_perf_ud *u)
{
	struct kverbs_perf_run *run = u->run;
	u64 qpn;
	int ret;

	ret = kverbs_perf_ud_create_ah(u);
	if (ret)
		return ret;
	if (u->client) {
		ret = kverbs_perf_ud_ctrl_send(u, KVERBS_PERF_MSG_START, u->qp->qp_num, 0);
		if (!ret)
			ret = kverbs_perf_ud_ctrl_wait(u, KVERBS_PERF_MSG_ADV, &qpn, NULL);
	} else {
		ret = kverbs_perf_ud_ctrl_wait(u, KVERBS_PERF_MSG_START, &qpn, NULL);
		if (!ret)
			ret = kverbs_perf_ud_ctrl_send(u, KVERBS_PERF_MSG_ADV, u->qp->qp_num, 0);
	}
	if (ret)
		return ret;
	u->remote_qpn = lower_32_bits(qpn) & 0xffffff;
	if (run->t->lat)
		ret = u->client ? kverbs_perf_ud_lat_client(u) : kverbs_perf_ud_lat_server(u);
	else
		ret = u->client ? kverbs_perf_ud_bw_client(u) : kverbs_perf_ud_bw_server(u);
	if (u->client) {
		kverbs_perf_samples_flush(&u->smp, run);
		run->result->samples_stored = u->smp.stored;
	}
	return ret;
}

/**
 * kverbs_perf_ud_stop - one end of a perf test over UD is over
 * @u: the end, possibly half built
 *
 * Its datagram QP, CQ and address handle go now; the rest goes with the
 * endpoint (kverbs_ep_destroy()), once the device is done with the
 * connection's QP too (kverbs_perf_ud_free()).
 */
void kverbs_perf_ud_stop(struct kverbs_perf_ud *u)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	WRITE_ONCE(u->closing, true);
	if (u->qp) {
		ib_modify_qp(u->qp, &attr, IB_QP_STATE);
		ib_destroy_qp(u->qp);
	}
	/* Discards what is left in it: no handler runs after this. */
	if (u->cq)
		kverbs_cq_free(u->cq);
	if (u->ah)
		rdma_destroy_ah(u->ah, RDMA_DESTROY_AH_SLEEPABLE);
	u->qp = NULL;
	u->cq = NULL;
	u->ah = NULL;
}

/* The endpoint's release (kverbs_ep_set_release()): the device is done. */
static void kverbs_perf_ud_free(void *arg)
{
	struct kverbs_perf_ud *u = arg;
	u32 i;

	kverbs_msg_free(&u->ctrl_recv);
	kverbs_msg_free(&u->ctrl_send);
	if (u->send) {
		for (i = 0; i < u->nsend; i++)
			kverbs_msg_free(&u->send[i].msg);
		kvfree(u->send);
	}
	if (u->recv) {
		for (i = 0; i < u->nrecv; i++)
			kverbs_msg_free(&u->recv[i].msg);
		kvfree(u->recv);
	}
	kverbs_perf_samples_free(&u->smp);
	kverbs_pin_unaccount(u->user, u->accounted);
	kfree(u);
}
