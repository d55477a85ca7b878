// SPDX-License-Identifier: GPL-2.0
/*
 * Connection management: rdma_cm IDs and the PD, CQ and QP under them.
 *
 * A client endpoint goes IDLE -> ADDR_RESOLVED -> ROUTE_RESOLVED ->
 * CONNECTED -> DISCONNECTED; a server endpoint starts in CONNECT_REQUEST,
 * queued on its listener until the server takes it.  The test's thread
 * drives every transition and sleeps on ep->wait in between; the rdma_cm
 * event handler, the completion handlers and device removal only record
 * what happened and wake it.  The first failure is kept in ep->fail and
 * reported to userspace; later failures are usually its consequences
 * (flushed work requests after a disconnect, say) and are not recorded.
 */
#include "kverbs.h"
#include "trace.h"

#include <linux/delay.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

/* Connection requests a listener queues while its server is busy. */
#define KVERBS_LISTEN_BACKLOG	8

static int kverbs_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event);

/**
 * kverbs_ep_wait_timeout - a step's time limit in jiffies for kverbs_ep_wait()
 * @timeout_ns: the limit in nanoseconds, 0 for none
 */
long kverbs_ep_wait_timeout(u64 timeout_ns)
{
	unsigned long j;

	if (!timeout_ns)
		return MAX_SCHEDULE_TIMEOUT;
	j = nsecs_to_jiffies(timeout_ns);
	return clamp_t(unsigned long, j, 1, MAX_SCHEDULE_TIMEOUT - 1);
}

/**
 * kverbs_sockaddr_check - check an address from userspace
 * @ss: a sockaddr_in or sockaddr_in6 in its storage
 * @need_port: whether the port must be set (else it must be 0)
 *
 * Returns 0, or -EINVAL for another family, a port that is or is not
 * there against @need_port, or non-zero bytes past the address.
 */
int kverbs_sockaddr_check(const struct __kernel_sockaddr_storage *ss,
			  bool need_port)
{
	const struct sockaddr_in *sin = (const void *)ss;
	const struct sockaddr_in6 *sin6 = (const void *)ss;
	size_t len;

	switch (ss->ss_family) {
	case AF_INET:
		len = sizeof(*sin);
		if (need_port != !!sin->sin_port)
			return -EINVAL;
		break;
	case AF_INET6:
		len = sizeof(*sin6);
		if (need_port != !!sin6->sin6_port)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	/* What lies past the address must be zero, for a later use. */
	if (memchr_inv((const u8 *)ss + len, 0, sizeof(*ss) - len))
		return -EINVAL;
	return 0;
}

/* INADDR_ANY or in6addr_any: listen on every address. */
static bool kverbs_sockaddr_is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static unsigned long kverbs_ns_to_ms(u64 timeout_ns)
{
	return max_t(u64, div_u64(timeout_ns, NSEC_PER_MSEC), 1);
}

/**
 * kverbs_ep_failed - record a failure of @ep and wake its test
 * @ep: the endpoint
 * @error: negative errno
 * @step: what the test was doing, KVERBS_STEP_NONE if unknown here
 *
 * Only the first failure is kept; a later call may still fill in the step
 * of an earlier one that did not know it.  Safe in any context.
 *
 * Returns the error that is kept, which the caller should pass on.
 */
int kverbs_ep_failed(struct kverbs_ep *ep, int error, enum kverbs_step step)
{
	unsigned long flags;
	int kept;

	spin_lock_irqsave(&ep->lock, flags);
	if (!ep->fail.error)
		WRITE_ONCE(ep->fail.error, error);
	if (!ep->fail.step)
		ep->fail.step = step;
	kept = ep->fail.error;
	spin_unlock_irqrestore(&ep->lock, flags);
	wake_up(&ep->wait);
	return kept;
}

/**
 * kverbs_ep_wc_failed - record a failed work completion
 * @ep: the endpoint
 * @wc: the completion, status not IB_WC_SUCCESS
 * @step: what the work request was doing
 *
 * A flushed work request only says the QP left the connected state; if
 * nothing else was recorded, the connection was reset under us.  Before
 * the connection is established a flush says nothing at all.
 */
void kverbs_ep_wc_failed(struct kverbs_ep *ep, const struct ib_wc *wc,
			 enum kverbs_step step)
{
	enum kverbs_ep_state state;
	unsigned long flags;

	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		/*
		 * While a connection is being set up, rdma_cm moves the QP to
		 * the error state before it reports why (a reject, say), and
		 * the flush of the receive posted ahead of the connect can
		 * overtake that report: let the CM event tell what happened.
		 * The wait for it is bounded like any other.
		 */
		state = READ_ONCE(ep->state);
		if (state == KVERBS_EP_CONNECTED || state == KVERBS_EP_DISCONNECTED)
			kverbs_ep_failed(ep, -ECONNRESET, KVERBS_STEP_NONE);
		return;
	}
	ibdev_dbg(kverbs_ep_device(ep), "qp %u: work request failed: %s (vendor error 0x%x)\n",
		  wc->qp->qp_num, ib_wc_status_msg(wc->status), wc->vendor_err);

	spin_lock_irqsave(&ep->lock, flags);
	if (!ep->fail.error) {
		WRITE_ONCE(ep->fail.error, -EIO);
		ep->fail.step = step;
		ep->fail.valid |= KVERBS_RESULT_WC;
		ep->fail.wc_status = wc->status;
		ep->fail.vendor_err = wc->vendor_err;
	}
	spin_unlock_irqrestore(&ep->lock, flags);
	wake_up(&ep->wait);
}

/**
 * kverbs_ep_mismatch - record that received data failed validation
 * @ep: the endpoint
 * @offset: the first byte that differed
 *
 * Returns the error that is kept, -EBADMSG unless something failed before.
 */
int kverbs_ep_mismatch(struct kverbs_ep *ep, u32 offset)
{
	unsigned long flags;
	int kept;

	spin_lock_irqsave(&ep->lock, flags);
	if (!ep->fail.error) {
		WRITE_ONCE(ep->fail.error, -EBADMSG);
		ep->fail.step = KVERBS_STEP_VALIDATE;
		ep->fail.valid |= KVERBS_RESULT_MISMATCH;
		ep->fail.mismatch_offset = offset;
	}
	kept = ep->fail.error;
	spin_unlock_irqrestore(&ep->lock, flags);
	return kept;
}

static bool kverbs_ep_link_down(struct kverbs_ep *ep)
{
	struct ib_device *ibdev = kverbs_ep_device(ep);
	u32 port = kverbs_ep_port(ep);
	struct ib_port_attr attr;
	struct net_device *ndev;
	bool down = false;

	if (!ib_query_port(ibdev, port, &attr) && attr.state != IB_PORT_ACTIVE)
		return true;
	if (rdma_protocol_ib(ibdev, port))
		return false;
	/*
	 * RoCE and iWARP: the netdev rdma_cm bound to says it first.  Its
	 * routes go, and rxe's transmits fail, before the driver marks the
	 * port down.
	 */
	ndev = dev_get_by_index(&init_net, ep->id->route.addr.dev_addr.bound_dev_if);
	if (ndev) {
		down = !netif_running(ndev) || !netif_carrier_ok(ndev);
		dev_put(ndev);
	}
	return down;
}

/**
 * kverbs_ep_reset_cause - the endpoint's failure, with a reset explained
 * @ep: a failed endpoint
 *
 * A connection that was reset (a flush, a disconnect), or whose work
 * request could not be transmitted, may have failed because its link
 * went down: a device such as rxe fails a QP as soon as it cannot
 * transmit, before the port event is delivered.  Ask, and report
 * -ENETDOWN if so.  Process context:
 * ib_query_port() may sleep.
 *
 * Returns the endpoint's error.
 */
int kverbs_ep_reset_cause(struct kverbs_ep *ep)
{
	struct kverbs_fail fail;
	unsigned long flags;

	kverbs_ep_fail_info(ep, &fail);
	/*
	 * Resets, and failures to transmit (the device's words for "cannot
	 * send" and "no answer"); the completion's details stay in the report.
	 */
	if (fail.error != -ECONNRESET &&
	    !(fail.error == -EIO && (fail.valid & KVERBS_RESULT_WC) &&
	      (fail.wc_status == IB_WC_LOC_QP_OP_ERR ||
	       fail.wc_status == IB_WC_RETRY_EXC_ERR)))
		return fail.error;
	if (!ep->id->device || !kverbs_ep_link_down(ep))
		return fail.error;
	spin_lock_irqsave(&ep->lock, flags);
	if (ep->fail.error == fail.error)
		WRITE_ONCE(ep->fail.error, -ENETDOWN);
	fail.error = ep->fail.error;
	spin_unlock_irqrestore(&ep->lock, flags);
	return fail.error;
}

/* Record a failure that an rdma_cm event reported. */
static void kverbs_ep_cm_failed(struct kverbs_ep *ep,
				const struct rdma_cm_event *event, int error,
				enum kverbs_step step)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	if (!ep->fail.error) {
		WRITE_ONCE(ep->fail.error, error);
		ep->fail.step = step;
		ep->fail.valid |= KVERBS_RESULT_CM;
		ep->fail.cm_event = event->event;
		ep->fail.cm_status = event->status;
	}
	spin_unlock_irqrestore(&ep->lock, flags);
	wake_up(&ep->wait);
}

/**
 * kverbs_ep_fail_info - copy out the failure of @ep
 * @ep: the endpoint
 * @fail: where to copy it
 */
void kverbs_ep_fail_info(struct kverbs_ep *ep, struct kverbs_fail *fail)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	*fail = ep->fail;
	spin_unlock_irqrestore(&ep->lock, flags);
}

static void kverbs_ep_set_state(struct kverbs_ep *ep, enum kverbs_ep_state state)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	ep->state = state;
	spin_unlock_irqrestore(&ep->lock, flags);
	wake_up(&ep->wait);
}

static bool kverbs_ep_state_is(struct kverbs_ep *ep, enum kverbs_ep_state state)
{
	return READ_ONCE(ep->state) == state;
}

/* The device is going away, or the port went down: make the test let go. */
static void kverbs_ep_abort(struct kverbs_dev_user *user, int error)
{
	struct kverbs_ep *ep = container_of(user, struct kverbs_ep, user);

	kverbs_ep_failed(ep, error, KVERBS_STEP_NONE);
}

static struct kverbs_ep *kverbs_ep_alloc(void)
{
	struct kverbs_ep *ep;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return NULL;
	ep->kind = KVERBS_CM_EP;
	ep->user.abort = kverbs_ep_abort;
	init_waitqueue_head(&ep->wait);
	spin_lock_init(&ep->lock);
	INIT_LIST_HEAD(&ep->pending);
	return ep;
}

/**
 * kverbs_ep_create - create a client endpoint with its rdma_cm ID
 *
 * Returns the endpoint or an ERR_PTR.
 */
struct kverbs_ep *kverbs_ep_create(void)
{
	struct kverbs_ep *ep;
	struct rdma_cm_id *id;

	ep = kverbs_ep_alloc();
	if (!ep)
		return ERR_PTR(-ENOMEM);
	id = rdma_create_id(&init_net, kverbs_cm_handler, &ep->kind,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		kfree(ep);
		return ERR_CAST(id);
	}
	ep->id = id;
	return ep;
}

/*
 * Wait for an rdma_cm step.  rdma_cm enforces the step's own timeout and
 * reports it as an event; the extra second keeps this wait a backstop.
 */
static int kverbs_ep_wait_state(struct kverbs_ep *ep,
				enum kverbs_ep_state state, u64 timeout_ns)
{
	return kverbs_ep_wait_interruptible(ep, kverbs_ep_state_is(ep, state),
					    kverbs_ep_wait_timeout(timeout_ns) + HZ);
}

/**
 * kverbs_ep_resolve - resolve the address and route to @dst
 * @ep: a new client endpoint
 * @src: local address to use, or NULL to let routing choose
 * @dst: the server's address and port
 * @timeout_ns: limit for each of the two steps
 *
 * On success the endpoint is bound to an RDMA device and port and
 * attached to it.  Returns 0 or a negative errno; the failure is recorded
 * in the endpoint.
 */
int kverbs_ep_resolve(struct kverbs_ep *ep, struct sockaddr *src,
		      struct sockaddr *dst, u64 timeout_ns)
{
	int ret;

	ret = rdma_resolve_addr(ep->id, src, dst, kverbs_ns_to_ms(timeout_ns));
	if (!ret)
		ret = kverbs_ep_wait_state(ep, KVERBS_EP_ADDR_RESOLVED, timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RESOLVE_ADDR);

	ret = rdma_resolve_route(ep->id, kverbs_ns_to_ms(timeout_ns));
	if (!ret)
		ret = kverbs_ep_wait_state(ep, KVERBS_EP_ROUTE_RESOLVED, timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RESOLVE_ROUTE);

	ret = kverbs_dev_attach(&ep->user, kverbs_ep_device(ep), kverbs_ep_port(ep));
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RESOLVE_ROUTE);
	return 0;
}

static void kverbs_qp_event(struct ib_event *event, void *context)
{
	struct kverbs_ep *ep = context;

	switch (event->event) {
	case IB_EVENT_COMM_EST:
		/*
		 * A receive completed before the CM saw the connection
		 * established (the peer's first message overtook its RTU):
		 * let rdma_cm finish the connection now.
		 */
		rdma_notify(ep->id, event->event);
		break;
	case IB_EVENT_QP_ACCESS_ERR:
		/*
		 * As responder, the QP refused an access of the peer: a key
		 * it does not hold, rights it was not given, or bytes outside
		 * what was advertised.
		 */
		ibdev_dbg(event->device, "qp %u: the peer made an access it was not granted\n",
			  event->element.qp->qp_num);
		kverbs_ep_failed(ep, -EACCES, KVERBS_STEP_NONE);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_PATH_MIG_ERR:
		ibdev_dbg(event->device, "qp %u: async event %s\n",
			  event->element.qp->qp_num, ib_event_msg(event->event));
		kverbs_ep_failed(ep, -EIO, KVERBS_STEP_NONE);
		break;
	default:
		break;
	}
}

/**
 * kverbs_ep_create_qp - create the PD, CQ and RC QP of an endpoint
 * @ep: an endpoint bound to a device
 * @caps: what the test needs
 *
 * Returns 0, -EINVAL when the device cannot provide @caps, or another
 * negative errno.  Whatever was created is released by kverbs_ep_destroy().
 */
int kverbs_ep_create_qp(struct kverbs_ep *ep, const struct kverbs_ep_caps *caps)
{
	struct ib_device *ibdev = kverbs_ep_device(ep);
	u32 port = kverbs_ep_port(ep);
	struct ib_qp_init_attr attr = {};
	u32 send_wr, recv_wr;
	int ret;

	/* +1 on each queue for the marker kverbs_ep_drain() posts. */
	send_wr = caps->max_send_wr + 1;
	recv_wr = caps->max_recv_wr + 1;
	if (send_wr + rdma_rw_max_send_wr(ibdev, port, caps->max_rdma_ctxs, 0) >
	    ibdev->attrs.max_qp_wr || recv_wr > ibdev->attrs.max_qp_wr ||
	    caps->max_send_sge > ibdev->attrs.max_send_sge) {
		ibdev_dbg(ibdev, "QP of %u+%u send and %u receive WRs is too large\n",
			  send_wr, caps->max_rdma_ctxs, recv_wr);
		return -EINVAL;
	}

	ep->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(ep->pd)) {
		ret = PTR_ERR(ep->pd);
		ep->pd = NULL;
		return ret;
	}

	/*
	 * Once the QP is in the error state every outstanding work request
	 * completes, signaled or not, so the CQ must hold them all,
	 * including those rdma_rw adds for its contexts.
	 */
	ep->cq = ib_alloc_cq(ibdev, ep,
			     send_wr + recv_wr +
			     rdma_rw_max_send_wr(ibdev, port, caps->max_rdma_ctxs, 0),
			     0, caps->direct_poll ? IB_POLL_DIRECT : IB_POLL_SOFTIRQ);
	if (IS_ERR(ep->cq)) {
		ret = PTR_ERR(ep->cq);
		ep->cq = NULL;
		return ret;
	}

	attr.event_handler = kverbs_qp_event;
	attr.qp_context = ep;
	attr.send_cq = ep->cq;
	attr.recv_cq = ep->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = port;
	attr.cap.max_send_wr = send_wr;
	attr.cap.max_recv_wr = recv_wr;
	attr.cap.max_send_sge = caps->max_send_sge;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_rdma_ctxs = caps->max_rdma_ctxs;
	return rdma_create_qp(ep->id, ep->pd, &attr);
}

/*
 * Connection parameters: RDMA READs (and atomics) this side answers at
 * once and issues at once, within what the device allows.
 */
static void kverbs_ep_conn_param(struct kverbs_ep *ep,
				 struct rdma_conn_param *param,
				 u8 responder_resources, u8 initiator_depth)
{
	const struct ib_device_attr *attrs = &kverbs_ep_device(ep)->attrs;

	memset(param, 0, sizeof(*param));
	param->responder_resources = min_t(int, responder_resources,
					   attrs->max_qp_rd_atom);
	param->initiator_depth = min_t(int, initiator_depth,
				       attrs->max_qp_init_rd_atom);
	/* The IB maximum, as rping: ride out a slow peer or fabric. */
	param->retry_count = 7;
	/* 7 retries forever; a peer that never posts hits the step timeout. */
	param->rnr_retry_count = 7;
}

/**
 * kverbs_ep_connect_data - connect, with private data in the request
 * @ep: the endpoint
 * @rd_atom: RDMA READs each side may have outstanding towards the other
 * @timeout_ns: limit on the connection set-up
 * @data: private data for the server, or NULL
 * @len: its length, at most KVERBS_EP_PRIVATE_DATA_MAX
 *
 * Returns 0 once connected, or the recorded failure: -ECONNREFUSED when
 * the server rejected it (nothing listens there, or it is busy; what the
 * server said in its reject is then in @ep->private_data), -ETIMEDOUT,
 * -EHOSTUNREACH, -EINTR on a signal.
 */
int kverbs_ep_connect_data(struct kverbs_ep *ep, u8 rd_atom, u64 timeout_ns,
			   const void *data, u8 len)
{
	struct rdma_conn_param param;
	int ret;

	if (WARN_ON_ONCE(len > KVERBS_EP_PRIVATE_DATA_MAX))
		return kverbs_ep_failed(ep, -EINVAL, KVERBS_STEP_CONNECT);
	kverbs_ep_conn_param(ep, &param, rd_atom, rd_atom);
	param.private_data = data;
	param.private_data_len = len;
	ret = rdma_connect(ep->id, &param);
	if (!ret)
		ret = kverbs_ep_wait_state(ep, KVERBS_EP_CONNECTED, timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_CONNECT);
	return 0;
}

/**
 * kverbs_ep_connect - connect a resolved client endpoint with a QP
 * @ep: the endpoint
 * @rd_atom: RDMA READs each side may have outstanding towards the other
 * @timeout_ns: limit on the connection set-up
 *
 * As kverbs_ep_connect_data(), without private data.
 */
int kverbs_ep_connect(struct kverbs_ep *ep, u8 rd_atom, u64 timeout_ns)
{
	return kverbs_ep_connect_data(ep, rd_atom, timeout_ns, NULL, 0);
}

/**
 * kverbs_ep_accept - accept a connection request taken from a listener
 * @ep: the endpoint, with a QP and its receives posted
 * @timeout_ns: limit on the connection set-up
 *
 * Returns 0 once established, or the recorded failure.
 */
int kverbs_ep_accept(struct kverbs_ep *ep, u64 timeout_ns)
{
	struct rdma_conn_param param;
	int ret;

	/* Answer as many READs as the client will issue, and vice versa. */
	kverbs_ep_conn_param(ep, &param, ep->initiator_depth,
			     ep->responder_resources);
	/*
	 * rdma_accept() is made to be called from the ID's event handler,
	 * under its handler mutex; this request was handed over to the
	 * ioctl's thread, which takes the mutex to the same effect.
	 */
	rdma_lock_handler(ep->id);
	ret = rdma_accept(ep->id, &param);
	rdma_unlock_handler(ep->id);
	if (!ret)
		ret = kverbs_ep_wait_state(ep, KVERBS_EP_CONNECTED, timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_ACCEPT);
	return 0;
}

/**
 * kverbs_ep_reject_data - turn down a connection request, saying why
 * @ep: the endpoint of the request, taken from a listener
 * @data: private data the client receives with the reject, or NULL
 * @len: its length
 *
 * Outside the ID's event handler, as kverbs_ep_accept() does.
 */
void kverbs_ep_reject_data(struct kverbs_ep *ep, const void *data, u8 len)
{
	rdma_lock_handler(ep->id);
	rdma_reject(ep->id, data, len, IB_CM_REJ_CONSUMER_DEFINED);
	rdma_unlock_handler(ep->id);
}

/**
 * kverbs_ep_reject - turn down a connection request taken from a listener
 * @ep: the endpoint of the request
 */
void kverbs_ep_reject(struct kverbs_ep *ep)
{
	kverbs_ep_reject_data(ep, NULL, 0);
}

/* Keep what the peer said in a request or a reject; the event's copy goes. */
static void kverbs_ep_keep_private_data(struct kverbs_ep *ep,
					const struct rdma_cm_event *event)
{
	u8 len = min_t(u8, event->param.conn.private_data_len,
		       KVERBS_EP_PRIVATE_DATA_MAX);
	unsigned long flags;

	if (!event->param.conn.private_data)
		len = 0;
	spin_lock_irqsave(&ep->lock, flags);
	if (len)
		memcpy(ep->private_data, event->param.conn.private_data, len);
	ep->private_data_len = len;
	spin_unlock_irqrestore(&ep->lock, flags);
}

/**
 * kverbs_ep_disconnect - start tearing down the connection, if there is one
 * @ep: the endpoint
 *
 * Does not wait for the peer: the QP moves to the error state and
 * kverbs_ep_destroy() drains it.
 */
void kverbs_ep_disconnect(struct kverbs_ep *ep)
{
	if (ep->id && ep->id->qp)
		rdma_disconnect(ep->id);
}

/* A work request that marks the end of a queue being drained. */
struct kverbs_drain_marker {
	struct ib_cqe cqe;
	bool done;
};

static void kverbs_drain_marker_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_drain_marker *m = container_of(wc->wr_cqe,
						     struct kverbs_drain_marker, cqe);

	m->done = true;
}

/*
 * ib_drain_qp() for a CQ that we poll ourselves (IB_POLL_DIRECT): it
 * waits HZ / 10 before each poll of such a CQ, which made every perf
 * test's teardown 200 ms longer.  The same method, polling at once: in
 * the error state the QP flushes what is queued and then a marker posted
 * to each queue, in order.  Only for devices that flush work requests
 * posted in the error state, as ib_drain_qp() itself assumes of devices
 * without their own drain methods.
 *
 * Returns false if the caller should use ib_drain_qp() instead.
 */
static bool kverbs_ep_drain_direct(struct kverbs_ep *ep)
{
	struct ib_qp *qp = ep->id->qp;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kverbs_drain_marker sm = { .cqe.done = kverbs_drain_marker_done };
	struct kverbs_drain_marker rm = { .cqe.done = kverbs_drain_marker_done };
	struct ib_rdma_wr swr = {
		.wr = {
			.wr_cqe = &sm.cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	struct ib_recv_wr rwr = { .wr_cqe = &rm.cqe };

	if (ep->cq->poll_ctx != IB_POLL_DIRECT || qp->srq ||
	    qp->device->ops.drain_sq || qp->device->ops.drain_rq)
		return false;
	if (ib_modify_qp(qp, &attr, IB_QP_STATE))
		return false;
	if (ib_post_send(qp, &swr.wr, NULL))
		return false;
	/* There is room for it (kverbs_ep_create_qp()): a failure is a bug. */
	if (WARN_ON_ONCE(ib_post_recv(qp, &rwr, NULL)))
		rm.done = true;
	/* As ib_drain_qp(), unbounded: the device must flush its queues. */
	while (!sm.done || !rm.done) {
		/* The flush runs in the device's own context (rxe, siw). */
		if (!ib_process_cq_direct(ep->cq, -1))
			usleep_range(20, 100);
	}
	return true;
}

/**
 * kverbs_ep_drain - flush every outstanding work request
 * @ep: the endpoint
 *
 * After this no completion handler runs for the endpoint, so the buffers
 * its work requests used can be freed.  Idempotent.
 */
void kverbs_ep_drain(struct kverbs_ep *ep)
{
	if (!ep->id || !ep->id->qp || ep->drained)
		return;
	kverbs_ep_disconnect(ep);
	if (!kverbs_ep_drain_direct(ep))
		ib_drain_qp(ep->id->qp);
	ep->drained = true;
}

/**
 * kverbs_ep_destroy - release an endpoint and everything under it
 * @ep: the endpoint, possibly half built, or NULL
 *
 * The test must have drained it and freed its MRs first if it had any.
 */
void kverbs_ep_destroy(struct kverbs_ep *ep)
{
	if (!ep)
		return;
	if (ep->id && ep->id->qp) {
		kverbs_ep_drain(ep);
		rdma_destroy_qp(ep->id);
	}
	if (ep->cq)
		ib_free_cq(ep->cq);
	if (ep->pd)
		ib_dealloc_pd(ep->pd);
	if (ep->id)
		rdma_destroy_id(ep->id);
	/* Only now may the device go: nothing of ours is left on it. */
	kverbs_dev_detach(&ep->user);
	kfree(ep);
}

/*
 * A request still queued on its listener is nobody's yet.  When it dies
 * there (the client gave up, the device went away) hand it back to
 * rdma_cm to destroy, so that nothing waits for the server to notice.
 * Returns true if the handler must return non-zero for that.
 */
static bool kverbs_ep_drop_pending(struct kverbs_ep *ep, int error)
{
	unsigned long flags;
	bool drop = false;

	spin_lock_irqsave(&ep->lock, flags);
	if (ep->listener) {
		ep->id = NULL;
		if (!ep->fail.error)
			WRITE_ONCE(ep->fail.error, error);
		drop = true;
	}
	spin_unlock_irqrestore(&ep->lock, flags);
	return drop;
}

static int kverbs_ep_cm_event(struct kverbs_ep *ep, struct rdma_cm_event *event)
{
	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		kverbs_ep_set_state(ep, KVERBS_EP_ADDR_RESOLVED);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		kverbs_ep_set_state(ep, KVERBS_EP_ROUTE_RESOLVED);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		kverbs_ep_set_state(ep, KVERBS_EP_CONNECTED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		kverbs_ep_cm_failed(ep, event, event->status ?: -EHOSTUNREACH,
				    KVERBS_STEP_RESOLVE_ADDR);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		kverbs_ep_cm_failed(ep, event, event->status ?: -EHOSTUNREACH,
				    KVERBS_STEP_RESOLVE_ROUTE);
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (kverbs_ep_drop_pending(ep, -ECONNABORTED))
			return 1;
		/* event->status is an IB CM reject reason or an iWARP errno. */
		kverbs_ep_keep_private_data(ep, event);
		kverbs_ep_cm_failed(ep, event, -ECONNREFUSED, KVERBS_STEP_NONE);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (kverbs_ep_drop_pending(ep, -ECONNABORTED))
			return 1;
		kverbs_ep_cm_failed(ep, event,
				    event->status < 0 ? event->status : -EHOSTUNREACH,
				    KVERBS_STEP_NONE);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (kverbs_ep_drop_pending(ep, -ECONNRESET))
			return 1;
		kverbs_ep_set_state(ep, KVERBS_EP_DISCONNECTED);
		kverbs_ep_cm_failed(ep, event, -ECONNRESET, KVERBS_STEP_NONE);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (kverbs_ep_drop_pending(ep, -ENODEV))
			return 1;
		/* The test destroys the ID itself; rdma_cm waits for that. */
		kverbs_ep_cm_failed(ep, event, -ENODEV, KVERBS_STEP_NONE);
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		kverbs_ep_cm_failed(ep, event, -ENETRESET, KVERBS_STEP_NONE);
		break;
	default:
		break;
	}
	return 0;
}

/* The device of a listener bound to one address is going away. */
static void kverbs_listener_abort(struct kverbs_dev_user *user, int error)
{
	struct kverbs_listener *lsn = container_of(user, struct kverbs_listener, user);
	unsigned long flags;
	bool release;

	/*
	 * A server's own listener is destroyed by the server, which the
	 * wake-up ends.  A file's may have no server waiting on it, and
	 * the device's removal waits for it: let go of the device now (not
	 * here: we may be in the ID's handler, or under kverbs_dev_lock).
	 * But not while kverbs_listener_create() is still at work on the
	 * ID: it sees @error once it is done, and lets go itself.
	 */
	spin_lock_irqsave(&lsn->lock, flags);
	if (!lsn->error)
		lsn->error = error;
	release = lsn->shared && lsn->live;
	spin_unlock_irqrestore(&lsn->lock, flags);
	wake_up(&lsn->wait);
	if (release)
		schedule_work(&lsn->release);
}

static int kverbs_listener_request(struct kverbs_listener *lsn,
				   struct rdma_cm_id *id,
				   struct rdma_cm_event *event)
{
	struct kverbs_ep *ep;
	unsigned long flags;
	bool queued = false;

	ep = kverbs_ep_alloc();
	if (ep) {
		ep->id = id;
		ep->state = KVERBS_EP_CONNECT_REQUEST;
		ep->responder_resources = event->param.conn.responder_resources;
		ep->initiator_depth = event->param.conn.initiator_depth;
		kverbs_ep_keep_private_data(ep, event);

		spin_lock_irqsave(&lsn->lock, flags);
		if (!lsn->error && lsn->npending < KVERBS_LISTEN_BACKLOG) {
			ep->listener = lsn;
			id->context = &ep->kind;
			list_add_tail(&ep->pending, &lsn->pending);
			lsn->npending++;
			queued = true;
		}
		spin_unlock_irqrestore(&lsn->lock, flags);
	}
	if (!queued) {
		kfree(ep);
		/* Non-zero tells rdma_cm to destroy the new ID. */
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return -ECONNREFUSED;
	}
	wake_up(&lsn->wait);
	return 0;
}

static int kverbs_listener_event(struct kverbs_listener *lsn,
				 struct rdma_cm_id *id,
				 struct rdma_cm_event *event)
{
	switch (event->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return kverbs_listener_request(lsn, id, event);
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		kverbs_listener_abort(&lsn->user, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

static int kverbs_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event)
{
	enum kverbs_cm_kind *kind = id->context;

	trace_kverbs_cm_event(id, event);
	/* A new connection's ID starts with its listener's context. */
	if (*kind == KVERBS_CM_LISTENER)
		return kverbs_listener_event(container_of(kind, struct kverbs_listener,
							  kind), id, event);
	return kverbs_ep_cm_event(container_of(kind, struct kverbs_ep, kind), event);
}

/*
 * Take the first queued request off the listener, or return NULL if none
 * is queued.  A request that died while queued comes back with ->id NULL:
 * rdma_cm destroyed its ID and only the memory is left to free.
 */
static struct kverbs_ep *kverbs_listener_pop(struct kverbs_listener *lsn)
{
	struct kverbs_ep *ep = NULL;
	unsigned long flags;

	spin_lock_irqsave(&lsn->lock, flags);
	if (!list_empty(&lsn->pending)) {
		ep = list_first_entry(&lsn->pending, struct kverbs_ep, pending);
		list_del_init(&ep->pending);
		lsn->npending--;
	}
	spin_unlock_irqrestore(&lsn->lock, flags);
	if (!ep)
		return NULL;

	/* From here on the request's events no longer drop it. */
	spin_lock_irqsave(&ep->lock, flags);
	ep->listener = NULL;
	spin_unlock_irqrestore(&ep->lock, flags);
	return ep;
}

/*
 * Stop listening: destroy the ID, reject what is still queued, and let go
 * of the device.  Called once the listener failed, or to destroy it; the
 * second call does nothing (the work and kverbs_listener_destroy() do not
 * run at once: the latter cancels the former first).
 */
static void kverbs_listener_release(struct kverbs_listener *lsn)
{
	struct kverbs_ep *ep;

	if (!lsn->id)
		return;
	/* After this no request can be queued any more. */
	rdma_destroy_id(lsn->id);
	lsn->id = NULL;
	while ((ep = kverbs_listener_pop(lsn))) {
		if (ep->id)
			kverbs_ep_reject(ep);
		kverbs_ep_destroy(ep);
	}
	kverbs_dev_detach(&lsn->user);
}

static void kverbs_listener_release_work(struct work_struct *work)
{
	kverbs_listener_release(container_of(work, struct kverbs_listener, release));
}

/**
 * kverbs_listener_create - bind to @addr and listen
 * @addr: local address and port; the address may be a wildcard
 * @shared: for a file (KVERBS_IOC_LISTEN), any number of servers taking
 *	their clients from it; else for one server
 *
 * Returns the listener or an ERR_PTR: -EADDRINUSE when the port is taken,
 * -EADDRNOTAVAIL when @addr is not a local address.
 */
struct kverbs_listener *kverbs_listener_create(struct sockaddr *addr,
					       bool shared)
{
	struct kverbs_listener *lsn;
	unsigned long flags;
	int ret;

	lsn = kzalloc(sizeof(*lsn), GFP_KERNEL);
	if (!lsn)
		return ERR_PTR(-ENOMEM);
	lsn->kind = KVERBS_CM_LISTENER;
	lsn->user.abort = kverbs_listener_abort;
	lsn->shared = shared;
	INIT_WORK(&lsn->release, kverbs_listener_release_work);
	init_waitqueue_head(&lsn->wait);
	spin_lock_init(&lsn->lock);
	INIT_LIST_HEAD(&lsn->pending);

	lsn->id = rdma_create_id(&init_net, kverbs_cm_handler, &lsn->kind,
				 RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(lsn->id)) {
		ret = PTR_ERR(lsn->id);
		lsn->id = NULL;
		goto out_free;
	}
	/*
	 * An IPv6 wildcard takes IPv4 clients too, whatever
	 * net.ipv6.bindv6only says: '::' is how the tools listen on
	 * every address of either family.
	 */
	if (addr->sa_family == AF_INET6 && kverbs_sockaddr_is_any(addr)) {
		ret = rdma_set_afonly(lsn->id, 0);
		if (ret)
			goto out_release;
	}
	ret = rdma_bind_addr(lsn->id, addr);
	/*
	 * rdma_cm says -EADDRNOTAVAIL when a wildcard's port is taken; but
	 * a wildcard is always available, only its port can be in use.
	 */
	if (ret == -EADDRNOTAVAIL && kverbs_sockaddr_is_any(addr))
		ret = -EADDRINUSE;
	if (ret)
		goto out_release;
	/* Bound to one device's address: removal of that device ends it. */
	if (lsn->id->device) {
		ret = kverbs_dev_attach(&lsn->user, lsn->id->device, 0);
		if (ret)
			goto out_release;
	}
	ret = rdma_listen(lsn->id, KVERBS_LISTEN_BACKLOG);
	if (ret)
		goto out_release;
	/* A removal that came meanwhile left the listener to us. */
	spin_lock_irqsave(&lsn->lock, flags);
	ret = lsn->error;
	lsn->live = !ret;
	spin_unlock_irqrestore(&lsn->lock, flags);
	if (ret)
		goto out_release;
	return lsn;

out_release:
	/* The ID before the device: detaching lets the device go. */
	kverbs_listener_release(lsn);
out_free:
	kfree(lsn);
	return ERR_PTR(ret);
}

static bool kverbs_listener_ready(struct kverbs_listener *lsn, int *error)
{
	unsigned long flags;
	bool ready;

	spin_lock_irqsave(&lsn->lock, flags);
	*error = lsn->error;
	ready = lsn->error || !list_empty(&lsn->pending);
	spin_unlock_irqrestore(&lsn->lock, flags);
	return ready;
}

/**
 * kverbs_listener_accept - wait for the next connection request
 * @lsn: the listener
 *
 * Waits without a time limit, until a client connects or a signal
 * arrives.  Returns the new connection's endpoint, attached to its device
 * but not yet accepted, or an ERR_PTR: -EINTR on a signal, -ENODEV when
 * the listener's device went away.  If the endpoint cannot be attached it
 * comes back rejected and failed, for the caller to count and destroy.
 */
struct kverbs_ep *kverbs_listener_accept(struct kverbs_listener *lsn)
{
	struct kverbs_ep *ep;
	int ret, error;

	for (;;) {
		if (wait_event_interruptible(lsn->wait,
					     kverbs_listener_ready(lsn, &error)))
			return ERR_PTR(-EINTR);
		if (error)
			return ERR_PTR(error);
		ep = kverbs_listener_pop(lsn);
		if (!ep)
			continue;
		if (!ep->id) {
			kfree(ep);
			continue;
		}
		ret = kverbs_dev_attach(&ep->user, kverbs_ep_device(ep),
					kverbs_ep_port(ep));
		if (ret) {
			kverbs_ep_failed(ep, ret, KVERBS_STEP_ACCEPT);
			kverbs_ep_reject(ep);
		}
		return ep;
	}
}

/**
 * kverbs_listener_destroy - stop listening and reject what is still queued
 * @lsn: the listener, or NULL
 */
void kverbs_listener_destroy(struct kverbs_listener *lsn)
{
	if (!lsn)
		return;
	cancel_work_sync(&lsn->release);
	kverbs_listener_release(lsn);
	kfree(lsn);
}
