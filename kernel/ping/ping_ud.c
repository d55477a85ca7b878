// SPDX-License-Identifier: GPL-2.0
/*
 * The ping over Unreliable Datagrams (KVERBS_PING_F_UD), as rdma-core's
 * udaddy (librdmacm/examples/udaddy.c) does it.
 *
 * Normal operation, count C and size S:
 *
 *   client                                 server
 *   rdma_resolve_addr, _route              rdma_listen (RDMA_PS_UDP)
 *   UD QP, C receives posted
 *   rdma_connect: SIDR REQ          ---->  RDMA_CM_EVENT_CONNECT_REQUEST
 *                                          UD QP, C receives posted
 *                                   <----  rdma_accept: SIDR REP {QPN, Q_Key}
 *   RDMA_CM_EVENT_ESTABLISHED:
 *   rdma_create_ah(event->param.ud)
 *   C SENDs with immediate (our QPN) ---->  C receives, each behind a GRH
 *                                          per receive: AH from its completion
 *                                   <----  C SENDs of its size, each to the
 *   C receives, each of S bytes            sender of the message it answers
 *
 * Every receive buffer starts with the 40 bytes of a GRH (struct ib_grh),
 * which a UD QP writes ahead of the payload, and counts them in its
 * completion's byte_len.  Messages are at most the port's active MTU.
 * Between two kverbs ends the payload of message i is the rping pattern
 * of iteration i, both ways, which KVERBS_PING_F_VALIDATE checks; udaddy
 * sends what its buffer happens to hold, and only counts and sizes tell.
 *
 * Nothing is retransmitted: a message that is lost leaves its receive
 * waiting, and the step's time limit ends the call with -ETIMEDOUT; a
 * signal ends it at once, with -EINTR.  There is no connection to tear
 * down: the peer going away looks the same as a lost message.
 *
 * Lifetimes: the test owns its endpoint (ep.c) and everything here.  The
 * client's address handle and the server's reply handles outlive the
 * QP: the drain's send marker names one (&kverbs_ep.ud_ah), and a send
 * may name one until it completes.  So the teardown is
 * kverbs_ep_quiesce() (drain, QP, CQ), then the address handles and
 * the buffers, then kverbs_ep_destroy() (PD, cm_id, device).
 */
#include "ping.h"
#include "trace.h"

#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#define KVERBS_UD_GRH		sizeof(struct ib_grh)
/* Sends in flight at once; each slot is reused once its send completed. */
#define KVERBS_UD_SEND_SLOTS	32U

/**
 * struct kverbs_ud_msg - one receive or send buffer
 * @msg: the buffer, its DMA mapping and completion
 * @wc: receive: its completion, which the reply's address comes from
 * @ah: send (server): the address handle of the reply it carries, kept
 *	until the slot is reused or the QP is gone
 * @ns: receive: when it completed; send: when it was posted
 * @sent_ns: client's receive: when the message it answers was posted
 */
struct kverbs_ud_msg {
	struct kverbs_msg msg;
	struct ib_wc wc;
	struct ib_ah *ah;
	u64 ns;
	u64 sent_ns;
};

/**
 * struct kverbs_ud - one end of a datagram ping
 * @run: the ping
 * @ep: its endpoint, an IB_QPT_UD QP
 * @size: client: the payload of every message; server: the largest
 *	it takes, then the size of the client's messages
 * @recv: @run->count receive buffers, all posted before the peer sends
 * @send: @nsend send buffers, used in turn
 * @nsend: send buffers
 * @ah: client: the server's address handle
 * @qkey: the Q_Key the messages are sent with
 * @user: whom the buffers are charged to, against max_pinned_mb
 * @accounted: pages charged
 */
struct kverbs_ud {
	struct kverbs_ping_run *run;
	struct kverbs_ep *ep;
	u32 size;
	struct kverbs_ud_msg *recv;
	struct kverbs_ud_msg *send;
	u32 nsend;
	struct ib_ah *ah;
	u32 qkey;
	struct kverbs_user *user;
	unsigned long accounted;
};

static void kverbs_ud_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_ud_msg *m = container_of(wc->wr_cqe, struct kverbs_ud_msg,
					       msg.cqe.cqe);
	struct kverbs_ep *ep = kverbs_wc_ep(wc);

	trace_kverbs_wc(cq, wc, KVERBS_STEP_RECV);
	if (wc->status != IB_WC_SUCCESS) {
		kverbs_ep_wc_failed(ep, wc, KVERBS_STEP_RECV);
		return;
	}
	m->wc = *wc;
	m->msg.byte_len = wc->byte_len;
	m->ns = ktime_get_ns();
	kverbs_set_done(&m->msg.done);
	wake_up(&ep->wait);
}

/*
 * The port the endpoint is bound to must do UD, and its active MTU
 * bounds every message (kverbs_ep_ud_mtu()).  Sets @u->size for a
 * server that named none.
 */
static int kverbs_ud_check_port(struct kverbs_ud *u)
{
	int mtu = kverbs_ep_ud_mtu(u->ep);

	if (mtu < 0)
		return mtu;
	u->run->path_mtu = mtu;
	if (!u->size)
		u->size = mtu;
	if (u->size > mtu) {
		ibdev_dbg(kverbs_ep_device(u->ep),
			  "ud ping: %u bytes do not fit the port's MTU of %d\n", u->size, mtu);
		return -EMSGSIZE;
	}
	return 0;
}

/*
 * The QP and the buffers: every receive of the call, GRH included, and
 * a few sends.  They count against max_pinned_mb as a ping's buffers do.
 * A receive has room for any datagram the port carries, the path MTU,
 * not only for the peer's: a stranger's larger datagram would complete
 * it in error (a local length error) and end the ping as an I/O error,
 * where it is to be refused as a stranger's (kverbs_ud_from_peer()).
 */
static int kverbs_ud_setup(struct kverbs_ud *u)
{
	struct kverbs_ep *ep = u->ep;
	u32 count = u->run->count;
	struct kverbs_ep_caps caps = {
		.max_recv_wr = count,
		.max_send_sge = 1,
	};
	u64 bytes;
	u32 i;
	int ret;

	u->nsend = min(count, KVERBS_UD_SEND_SLOTS);
	caps.max_send_wr = u->nsend;
	/* What kmalloc() takes for each buffer (kverbs_msg_alloc()), not its length. */
	bytes = (u64)count * kmalloc_size_roundup(KVERBS_UD_GRH + u->run->path_mtu) +
		(u64)u->nsend * kmalloc_size_roundup(u->size);
	ret = kverbs_pin_account(&u->user, DIV_ROUND_UP_ULL(bytes, PAGE_SIZE));
	if (ret)
		return ret;
	u->accounted = DIV_ROUND_UP_ULL(bytes, PAGE_SIZE);

	ret = kverbs_ep_create_qp(ep, &caps);
	if (ret)
		return ret;
	u->recv = kvcalloc(count, sizeof(*u->recv), GFP_KERNEL_ACCOUNT);
	u->send = kvcalloc(u->nsend, sizeof(*u->send), GFP_KERNEL_ACCOUNT);
	if (!u->recv || !u->send)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		ret = kverbs_msg_alloc(&u->recv[i].msg, ep->pd,
				       KVERBS_UD_GRH + u->run->path_mtu, DMA_FROM_DEVICE);
		if (ret)
			return ret;
		u->recv[i].msg.cqe.cqe.done = kverbs_ud_recv_done;
	}
	for (i = 0; i < u->nsend; i++) {
		ret = kverbs_msg_alloc(&u->send[i].msg, ep->pd, u->size,
				       DMA_TO_DEVICE);
		if (ret)
			return ret;
		/* Never sent: free to fill. */
		u->send[i].msg.done = true;
	}
	return 0;
}

/* All receives of the call, before the peer can send the first message. */
static int kverbs_ud_post_recvs(struct kverbs_ud *u)
{
	u32 i;
	int ret;

	for (i = 0; i < u->run->count; i++) {
		ret = kverbs_msg_post_recv(&u->recv[i].msg, u->ep);
		if (ret)
			return ret;
	}
	return 0;
}

/* After kverbs_ep_quiesce(): no send names the handles any more. */
static void kverbs_ud_free(struct kverbs_ud *u)
{
	u32 i;

	u->ep->ud_ah = NULL;
	if (u->send) {
		for (i = 0; i < u->nsend; i++) {
			if (u->send[i].ah)
				rdma_destroy_ah(u->send[i].ah, RDMA_DESTROY_AH_SLEEPABLE);
			kverbs_msg_free(&u->send[i].msg);
		}
		kvfree(u->send);
	}
	if (u->recv) {
		for (i = 0; i < u->run->count; i++)
			kverbs_msg_free(&u->recv[i].msg);
		kvfree(u->recv);
	}
	if (u->ah)
		rdma_destroy_ah(u->ah, RDMA_DESTROY_AH_SLEEPABLE);
	kverbs_pin_unaccount(u->user, u->accounted);
	kfree(u);
}

/* Wait for message @i's receive, or fail the ping: -ETIMEDOUT, -EINTR. */
static int kverbs_ud_wait_recv(struct kverbs_ud *u, u32 i)
{
	struct kverbs_ud_msg *m = &u->recv[i];
	struct kverbs_ep *ep = u->ep;
	int ret;

	/* A signal ends a datagram ping at once: nobody waits for its end. */
	ret = kverbs_ep_wait_interruptible(ep, kverbs_is_done(&m->msg.done),
					   kverbs_ep_wait_timeout(u->run->common.timeout_ns));
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
	/* A UD receive always counts the 40 bytes of GRH space. */
	if (m->msg.byte_len < KVERBS_UD_GRH + 1)
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	kverbs_msg_sync_for_cpu(&m->msg);
	return 0;
}

/*
 * Message @i came from QP @qpn, the peer's.  Anyone who knows our QP
 * number and the Q_Key can send to it; a datagram of another QP fails
 * the ping rather than be taken for the peer's.  (A sender that forges
 * the peer's QP number and address is taken for it: UD has no more to
 * tell a peer by.)
 */
static int kverbs_ud_from_peer(struct kverbs_ud *u, u32 i, u32 qpn)
{
	u32 src_qp = u->recv[i].wc.src_qp;

	if (src_qp == qpn)
		return 0;
	ibdev_dbg(kverbs_ep_device(u->ep), "ud ping: message %u from qp %u, not the peer's %u\n",
		  i, src_qp, qpn);
	return kverbs_ep_failed(u->ep, -EPROTO, KVERBS_STEP_RECV);
}

/* Message @i's payload, checked against the pattern with -V, and logged. */
static int kverbs_ud_take(struct kverbs_ud *u, u32 i, u32 len)
{
	const void *data = u->recv[i].msg.buf + KVERBS_UD_GRH;
	u32 offset;

	if (u->run->flags & KVERBS_PING_F_VALIDATE) {
		if (len < KVERBS_PING_MIN_SIZE)
			return kverbs_ep_mismatch(u->ep, len);
		if (!kverbs_ping_check(data, len, i, &offset))
			return kverbs_ep_mismatch(u->ep, offset);
	}
	kverbs_ping_log(u->run, data, len);
	return 0;
}

/*
 * A free send slot for message @i: the one its predecessor by @nsend
 * used, once that SEND completed.
 */
static struct kverbs_ud_msg *kverbs_ud_send_slot(struct kverbs_ud *u, u32 i)
{
	struct kverbs_ud_msg *m = &u->send[i % u->nsend];
	int ret;

	ret = kverbs_ep_wait_interruptible(u->ep, kverbs_is_done(&m->msg.done),
					   kverbs_ep_wait_timeout(u->run->common.timeout_ns));
	if (ret) {
		kverbs_ep_failed(u->ep, ret, KVERBS_STEP_SEND);
		return ERR_PTR(ret);
	}
	return m;
}

/*
 * Send message @i of @len bytes, the rping pattern of iteration @i, to
 * @ah, @qpn.  The immediate data is our QP number, which a udaddy server
 * answers to, as udaddy's own client sends it.
 */
static int kverbs_ud_post(struct kverbs_ud *u, struct kverbs_ud_msg *m,
			  u32 i, u32 len, struct ib_ah *ah, u32 qpn)
{
	struct kverbs_ep *ep = u->ep;
	struct ib_ud_wr wr = {};

	kverbs_ping_fill(m->msg.buf, len, i);
	m->msg.sge.length = len;
	kverbs_msg_send_wr(&m->msg, &wr.wr);
	wr.wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.wr.ex.imm_data = cpu_to_be32(ep->qp_num);
	wr.ah = ah;
	wr.remote_qpn = qpn;
	wr.remote_qkey = u->qkey;
	m->ns = ktime_get_ns();
	return kverbs_post_send(ep, &wr.wr, KVERBS_STEP_SEND);
}

/* Every SEND posted completed: the device is done with the buffers. */
static int kverbs_ud_wait_sends(struct kverbs_ud *u)
{
	long timeout = kverbs_ep_wait_timeout(u->run->common.timeout_ns);
	u32 i;
	int ret;

	for (i = 0; i < u->nsend; i++) {
		ret = kverbs_ep_wait_interruptible(u->ep, kverbs_is_done(&u->send[i].msg.done),
						   timeout);
		if (ret)
			return kverbs_ep_failed(u->ep, ret, KVERBS_STEP_SEND);
	}
	return 0;
}

static struct kverbs_ud *kverbs_ud_alloc(struct kverbs_ping_run *run,
					 struct kverbs_ep *ep)
{
	struct kverbs_ud *u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);

	if (!u)
		return NULL;
	u->run = run;
	u->ep = ep;
	u->size = run->msg_size;
	return u;
}

/*
 * The client, from the SIDR REP on: the server's address handle, then
 * all messages out and all replies in.
 */
static int kverbs_ud_client_run(struct kverbs_ud *u)
{
	struct kverbs_ping_run *run = u->run;
	struct kverbs_ep *ep = u->ep;
	struct kverbs_ud_msg *m;
	u32 i, len;
	int ret;

	u->ah = rdma_create_ah(ep->pd, &ep->ud_ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(u->ah)) {
		ret = PTR_ERR(u->ah);
		u->ah = NULL;
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_CONNECT);
	}
	ep->ud_ah = u->ah;
	u->qkey = ep->ud_qkey;
	run->remote_qpn = ep->ud_qpn;
	run->remote_qkey = ep->ud_qkey;

	for (i = 0; i < run->count; i++) {
		if (signal_pending(current))
			return kverbs_ep_failed(ep, -EINTR, KVERBS_STEP_NONE);
		m = kverbs_ud_send_slot(u, i);
		if (IS_ERR(m))
			return PTR_ERR(m);
		ret = kverbs_ud_post(u, m, i, u->size, u->ah, ep->ud_qpn);
		if (ret)
			return ret;
		u->recv[i].sent_ns = m->ns;
	}
	for (i = 0; i < run->count; i++) {
		u64 sent = u->recv[i].sent_ns;

		ret = kverbs_ud_wait_recv(u, i) ?: kverbs_ud_from_peer(u, i, ep->ud_qpn);
		if (ret)
			return ret;
		len = u->recv[i].msg.byte_len - KVERBS_UD_GRH;
		/* udaddy's server answers with messages of its own size. */
		if (len != u->size) {
			ibdev_dbg(kverbs_ep_device(ep), "ud ping: reply %u has %u bytes, sent %u\n",
				  i, len, u->size);
			return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
		}
		ret = kverbs_ud_take(u, i, len);
		if (ret)
			return ret;
		kverbs_ping_account(run, sent, len);
		trace_kverbs_ping_iter(ep->cq_id, ep->id->qp, false, i, len,
				       u->recv[i].ns - sent);
	}
	return kverbs_ud_wait_sends(u);
}

/**
 * kverbs_ud_client - run the client side of a datagram ping
 * @run: the ping, with KVERBS_PING_F_UD
 *
 * Return: 0 when every message came back, else the first failure, which
 * is also in @run->common.fail: -EOPNOTSUPP on an iWARP device and
 * -EMSGSIZE for messages above the path MTU, both before anything is
 * sent to the server.
 */
int kverbs_ud_client(struct kverbs_ping_run *run)
{
	struct kverbs_ud *u;
	struct kverbs_ep *ep;
	int ret;

	ep = kverbs_test_ep_create_ud(&run->common);
	if (IS_ERR(ep))
		return PTR_ERR(ep);
	u = kverbs_ud_alloc(run, ep);
	if (!u) {
		kverbs_ep_destroy(ep);
		return kverbs_test_failed(&run->common, -ENOMEM, KVERBS_STEP_SETUP);
	}

	ret = kverbs_test_resolve(&run->common, ep);
	if (ret)
		goto out_destroy;
	ret = kverbs_ud_check_port(u);
	if (!ret)
		ret = kverbs_ud_setup(u);
	if (ret) {
		kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP);
		goto out_destroy;
	}
	ret = kverbs_ud_post_recvs(u);
	if (ret)
		goto out_destroy;
	/* SIDR: no private data, no RDMA READ resources. */
	ret = kverbs_ep_connect_data(ep, 0, run->common.timeout_ns, NULL, 0);
	if (!ret)
		ret = kverbs_ud_client_run(u);

out_destroy:
	if (ret)
		kverbs_test_fail(&run->common, ep, ret);
	kverbs_ep_quiesce(ep);
	kverbs_ud_free(u);
	kverbs_ep_destroy(ep);
	return ret;
}

/*
 * On RoCE, whether @attr, built from a message's completion and GRH,
 * leads back to the address the client's SIDR request came from: a
 * datagram's source address is the sender's to write, and a server
 * that answered any would send its replies wherever a stranger asked.
 * (An IB port's LIDs are not checked.)
 */
static bool kverbs_ud_to_requester(struct kverbs_ud *u, const struct rdma_ah_attr *attr)
{
	struct kverbs_ep *ep = u->ep;
	union ib_gid gid;

	if (!rdma_protocol_roce(kverbs_ep_device(ep), kverbs_ep_port(ep)))
		return true;
	rdma_ip2gid((struct sockaddr *)&ep->id->route.addr.dst_addr, &gid);
	return (rdma_ah_get_ah_flags(attr) & IB_AH_GRH) &&
	       !memcmp(&rdma_ah_read_grh(attr)->dgid, &gid, sizeof(gid));
}

/*
 * The reply to message @i goes where it came from: an address handle
 * from its completion and GRH, as udaddy's create_reply_ah() builds one,
 * to the QP that sent it, which must be the SIDR requester's address.
 */
static int kverbs_ud_reply(struct kverbs_ud *u, u32 i, u32 len)
{
	struct kverbs_ud_msg *r = &u->recv[i];
	struct kverbs_ep *ep = u->ep;
	struct rdma_ah_attr attr;
	struct kverbs_ud_msg *m;
	struct ib_ah *ah;
	int ret;

	m = kverbs_ud_send_slot(u, i);
	if (IS_ERR(m))
		return PTR_ERR(m);
	ret = ib_init_ah_attr_from_wc(kverbs_ep_device(ep), kverbs_ep_port(ep),
				      &r->wc, r->msg.buf, &attr);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_SEND);
	if (!kverbs_ud_to_requester(u, &attr)) {
		ibdev_dbg(kverbs_ep_device(ep), "ud ping: message %u is not from the requester's address\n",
			  i);
		rdma_destroy_ah_attr(&attr);
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	}
	ah = rdma_create_ah(ep->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	rdma_destroy_ah_attr(&attr);
	if (IS_ERR(ah))
		return kverbs_ep_failed(ep, PTR_ERR(ah), KVERBS_STEP_SEND);
	/* The slot's last SEND completed: its handle is free to go. */
	ep->ud_ah = ah;
	if (m->ah)
		rdma_destroy_ah(m->ah, RDMA_DESTROY_AH_SLEEPABLE);
	m->ah = ah;
	return kverbs_ud_post(u, m, i, len, ah, r->wc.src_qp);
}

/* Serve the client of @ep: all its messages in, as many replies out. */
static int kverbs_ud_serve(struct kverbs_ud *u)
{
	struct kverbs_ping_run *run = u->run;
	struct kverbs_ep *ep = u->ep;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	u32 i, len, size = 0;
	int ret;

	/* Our QP's Q_Key, which rdma_cm set for its port space: udaddy's way. */
	ret = ib_query_qp(ep->id->qp, &attr, IB_QP_QKEY, &init);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP);
	u->qkey = attr.qkey;
	run->remote_qkey = attr.qkey;

	for (i = 0; i < run->count; i++) {
		if (signal_pending(current))
			return kverbs_ep_failed(ep, -EINTR, KVERBS_STEP_NONE);
		ret = kverbs_ud_wait_recv(u, i);
		if (ret)
			return ret;
		len = u->recv[i].msg.byte_len - KVERBS_UD_GRH;
		if (!i) {
			size = len;
			run->remote_qpn = u->recv[i].wc.src_qp;
		}
		ret = kverbs_ud_from_peer(u, i, run->remote_qpn);
		if (ret)
			return ret;
		/* udaddy's client sends all its messages at one size. */
		if (len != size) {
			ibdev_dbg(kverbs_ep_device(ep), "ud ping: message %u has %u bytes, the first %u\n",
				  i, len, size);
			return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
		}
		ret = kverbs_ud_take(u, i, len);
		if (ret)
			return ret;
	}
	for (i = 0; i < run->count; i++) {
		if (signal_pending(current))
			return kverbs_ep_failed(ep, -EINTR, KVERBS_STEP_NONE);
		ret = kverbs_ud_reply(u, i, size);
		if (ret)
			return ret;
	}
	ret = kverbs_ud_wait_sends(u);
	if (ret)
		return ret;
	for (i = 0; i < run->count; i++) {
		kverbs_ping_account(run, u->recv[i].ns, size);
		trace_kverbs_ping_iter(ep->cq_id, ep->id->qp, true, i, size,
				       ktime_get_ns() - u->recv[i].ns);
	}
	return 0;
}

static int kverbs_ud_server_session(struct kverbs_ping_run *run,
				    struct kverbs_ep *ep)
{
	struct kverbs_ud *u;
	int ret;

	run->result->clients++;
	u = kverbs_ud_alloc(run, ep);
	if (!u) {
		ret = kverbs_ep_failed(ep, -ENOMEM, KVERBS_STEP_SETUP);
		kverbs_ep_reject(ep);
		goto out_report;
	}
	/* Set if the request could not be attached to its device. */
	ret = kverbs_ep_error(ep);
	if (ret)
		goto out_free;
	ret = kverbs_ud_check_port(u);
	if (!ret)
		ret = kverbs_ud_setup(u);
	if (!ret)
		ret = kverbs_ud_post_recvs(u);
	if (ret) {
		kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP);
		kverbs_ep_reject(ep);
		goto out_free;
	}
	/* The SIDR REP carries the QP's number; receives are posted. */
	ret = kverbs_ep_accept(ep, run->common.timeout_ns);
	if (!ret)
		ret = kverbs_ud_serve(u);

out_free:
	kverbs_ep_quiesce(ep);
	kverbs_ud_free(u);
out_report:
	if (ret && ret != -EINTR) {
		kverbs_test_fail(&run->common, ep, ret);
		run->result->clients_failed++;
	}
	kverbs_ep_destroy(ep);
	return ret;
}

/**
 * kverbs_ud_server - run the server side of a datagram ping
 * @run: the ping, with KVERBS_PING_F_UD
 *
 * Listens on its own listener and serves one client.
 *
 * Return: 0 when every message was answered, -EINTR when a signal ended
 * the call, else the failure: -EOPNOTSUPP where no device can take
 * datagrams (iWARP), before anything is listened for.
 */
int kverbs_ud_server(struct kverbs_ping_run *run)
{
	struct kverbs_listener *lsn;
	struct kverbs_ep *ep;
	int ret;

	lsn = kverbs_test_listen_ud(&run->common);
	if (IS_ERR(lsn))
		return PTR_ERR(lsn);
	ep = kverbs_listener_accept(lsn);
	if (IS_ERR(ep)) {
		ret = PTR_ERR(ep);
		kverbs_test_accept_failed(&run->common, ret);
	} else {
		ret = kverbs_ud_server_session(run, ep);
	}
	kverbs_listener_destroy(lsn);
	return ret;
}
