// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint: one connection, the rdma_cm ID under it and the PD, CQ
 * and QP it carries, from creation to the last flushed work request.
 * A datagram end (kverbs_ep_create_ud(), for ping_ud.c) is one too, with
 * a UD QP: its "connection" is a service ID resolution, and it never
 * disconnects.
 *
 * A client endpoint goes IDLE -> ADDR_RESOLVED -> ROUTE_RESOLVED ->
 * CONNECTED -> DISCONNECTED; a server endpoint starts in CONNECT_REQUEST,
 * queued on its listener (listener.c) until the server takes it.  The
 * test's thread drives every transition and sleeps on ep->wait in
 * between; the rdma_cm event handler (cm_event.c), the completion
 * handlers and device removal only record what happened and wake it.
 * The first failure is kept in ep->fail; later ones are its consequences.
 *
 * The test that created the endpoint, or took it from a listener, owns
 * it in its ioctl's thread.  Its teardown is one ladder:
 * kverbs_ep_quiesce() (drain, QP, CQ), then the test's buffers, then
 * kverbs_ep_destroy() (PD, ID, device).  Two steps may go to kverbs_wq
 * instead: an endpoint whose drain is late on a pool's CQ is parked, and
 * the ID of one whose port went down is destroyed once the port is back.
 * Documentation/architecture.rst, "Objects and owners" and "Draining".
 */
#include "cm.h"
#include "fault.h"
#include "trace.h"

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/nsproxy.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

/*
 * How long a drain may take.  A device flushes its queues within
 * microseconds; this bound is for one that does not, so that no teardown
 * can hang a process that SIGKILL cannot end.  The wait is not cut short
 * by a signal: the drain is what makes the teardown safe.
 */
#define KVERBS_DRAIN_TIMEOUT	(5 * HZ)

static atomic_t kverbs_trace_id = ATOMIC_INIT(0);

/*
 * kverbs' own work queue: endpoints released late (kverbs_ep_destroy()),
 * SRQs let go of when their device goes (srq.c).  Unload waits for it.
 */
struct workqueue_struct *kverbs_wq;

static void kverbs_drain_marker_init(struct kverbs_ep *ep,
				     struct kverbs_drain_marker *m);
static void kverbs_ep_park_work(struct work_struct *work);

u32 kverbs_trace_id_next(void)
{
	return atomic_inc_return(&kverbs_trace_id);
}

/**
 * kverbs_ep_wait_timeout - a step's time limit in jiffies for kverbs_ep_wait()
 * @timeout_ns: the limit in nanoseconds, 0 for none
 *
 * Return: MAX_SCHEDULE_TIMEOUT for none, else at least one jiffy.
 */
long kverbs_ep_wait_timeout(u64 timeout_ns)
{
	unsigned long j;

	if (!timeout_ns)
		return MAX_SCHEDULE_TIMEOUT;
	j = nsecs_to_jiffies(timeout_ns);
	return clamp_t(unsigned long, j, 1, MAX_SCHEDULE_TIMEOUT - 1);
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
 * Return: the error that is kept, which the caller should pass on.
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
		  READ_ONCE(ep->qp_num), ib_wc_status_msg(wc->status), wc->vendor_err);

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

/*
 * Record that a message that arrived is wrong: @error at @step, with
 * @valid saying which report fields hold data, unless something other
 * than a hang-up failed before.  Returns the error that is kept.
 *
 * A message is checked only once it has arrived whole, so it came before
 * the connection ended.  A peer that sends its last messages and hangs
 * up can have its DISCONNECTED, or the flushes after it, recorded as
 * -ECONNRESET before the test's thread takes those messages
 * (kverbs_perf_wait() drains them after a failure): what is wrong with
 * the message then replaces the hang-up, which says less.
 */
static int kverbs_ep_arrived_wrong(struct kverbs_ep *ep, int error,
				   enum kverbs_step step, u32 valid, u32 offset)
{
	unsigned long flags;
	int kept;

	spin_lock_irqsave(&ep->lock, flags);
	if (!ep->fail.error || ep->fail.error == -ECONNRESET) {
		/* The hang-up's event says nothing of the message. */
		ep->fail.valid &= ~(KVERBS_RESULT_CM | KVERBS_RESULT_WC);
		WRITE_ONCE(ep->fail.error, error);
		ep->fail.step = step;
		ep->fail.valid |= valid;
		ep->fail.mismatch_offset = offset;
	}
	kept = ep->fail.error;
	spin_unlock_irqrestore(&ep->lock, flags);
	wake_up(&ep->wait);
	return kept;
}

/**
 * kverbs_ep_bad_message - record that a message that arrived breaks the
 *	protocol (a length that is neither data nor control, a type out of
 *	place)
 * @ep: the endpoint
 *
 * Return: the error that is kept, -EPROTO at the receive step unless
 * something other than a hang-up failed before
 * (kverbs_ep_arrived_wrong()).
 */
int kverbs_ep_bad_message(struct kverbs_ep *ep)
{
	return kverbs_ep_arrived_wrong(ep, -EPROTO, KVERBS_STEP_RECV, 0, 0);
}

/**
 * kverbs_ep_mismatch - record that received data failed validation
 * @ep: the endpoint
 * @offset: the first byte that differed
 *
 * Return: the error that is kept, -EBADMSG unless something other than a
 * hang-up failed before.
 */
int kverbs_ep_mismatch(struct kverbs_ep *ep, u32 offset)
{
	return kverbs_ep_arrived_wrong(ep, -EBADMSG, KVERBS_STEP_VALIDATE,
				       KVERBS_RESULT_MISMATCH, offset);
}

/**
 * kverbs_ep_imm_mismatch - record that a completion's immediate data was wrong
 * @ep: the endpoint
 * @present: the completion carried immediate data, only not the right one
 *
 * Return: the error that is kept, -EBADMSG unless something other than a
 * hang-up failed before.
 */
int kverbs_ep_imm_mismatch(struct kverbs_ep *ep, bool present)
{
	return kverbs_ep_arrived_wrong(ep, -EBADMSG, KVERBS_STEP_VALIDATE,
				       KVERBS_RESULT_IMM | (present ? 0 : KVERBS_RESULT_NO_IMM), 0);
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
	ndev = dev_get_by_index(ep->id->route.addr.dev_addr.net,
				ep->id->route.addr.dev_addr.bound_dev_if);
	if (ndev) {
		down = !netif_running(ndev) || !netif_carrier_ok(ndev);
		dev_put(ndev);
	}
	return down;
}

/*
 * Is the link of @ep down now?  If so, remember it: its teardown must
 * not send from that port (kverbs_ep_destroy()).  False for an endpoint
 * not bound to a device yet.  Process context: ib_query_port() may sleep.
 */
static bool kverbs_ep_link_went_down(struct kverbs_ep *ep)
{
	if (!ep->id || !ep->id->device || !kverbs_ep_link_down(ep))
		return false;
	set_bit(KVERBS_EP_PORT_DOWN, &ep->flags);
	return true;
}

/*
 * Could the link going down have caused @fail?  Resets (a flush, a
 * disconnect); a QP error that came as an asynchronous event, not in a
 * completion (siw may fail a QP so before the port event arrives), or a
 * shared receive that failed; and failures to transmit, in the device's
 * words for "cannot send" and "no answer".  While connecting: a request
 * nobody answered in time (rdma_cm's UNREACHABLE: an IB CM REQ, or an
 * iWARP MPA request, which siw gives up on after ten seconds), and on
 * iWARP a TCP connection reset before any MPA reply, which rdma_cm
 * reports as a reject with status -ECONNRESET (an IB CM reject reason is
 * positive).  An access error, a mismatch, a protocol error or a reject
 * the peer sent is the peer's or kverbs' doing, whatever the link.
 */
static bool kverbs_ep_fail_may_be_link(const struct kverbs_fail *fail)
{
	if (fail->error == -ECONNRESET || fail->error == -ETIMEDOUT)
		return true;
	if (fail->error == -ECONNREFUSED)
		return (fail->valid & KVERBS_RESULT_CM) &&
		       fail->cm_event == RDMA_CM_EVENT_REJECTED &&
		       fail->cm_status == -ECONNRESET;
	if (fail->error != -EIO)
		return false;
	if (!(fail->valid & KVERBS_RESULT_WC))
		return true;
	return fail->wc_status == IB_WC_LOC_QP_OP_ERR ||
	       fail->wc_status == IB_WC_RETRY_EXC_ERR;
}

/**
 * kverbs_ep_reset_cause - the endpoint's failure, with a reset explained
 * @ep: a failed endpoint
 *
 * A connection that was reset, whose QP failed, or whose request went
 * unanswered, may have failed because its link went down: a device such
 * as rxe fails a QP as soon as it cannot transmit, and rdma_cm may give
 * up on a request, before the port event is delivered (ib_core delivers
 * it from a workqueue, seconds late on a loaded host).  Ask, and report
 * -ENETDOWN if so; the completion's or CM event's details stay in the
 * report.
 * Process context: ib_query_port() may sleep.
 *
 * Return: the endpoint's error.
 */
int kverbs_ep_reset_cause(struct kverbs_ep *ep)
{
	struct kverbs_fail fail;
	unsigned long flags;

	kverbs_ep_fail_info(ep, &fail);
	if (!kverbs_ep_fail_may_be_link(&fail))
		return fail.error;
	if (!kverbs_ep_link_went_down(ep))
		return fail.error;
	spin_lock_irqsave(&ep->lock, flags);
	if (ep->fail.error == fail.error)
		WRITE_ONCE(ep->fail.error, -ENETDOWN);
	fail.error = ep->fail.error;
	spin_unlock_irqrestore(&ep->lock, flags);
	return fail.error;
}

/**
 * kverbs_ep_cm_failed - record a failure that an rdma_cm event reported
 * @ep: the endpoint
 * @event: the event, whose type and status go into the report
 * @error: negative errno
 * @step: what the test was doing, KVERBS_STEP_NONE if unknown here
 */
void kverbs_ep_cm_failed(struct kverbs_ep *ep, const struct rdma_cm_event *event,
			 int error, enum kverbs_step step)
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

/**
 * kverbs_ep_set_state - note where the connection stands, and wake the test
 * @ep: the endpoint
 * @state: its new state
 */
void kverbs_ep_set_state(struct kverbs_ep *ep, enum kverbs_ep_state state)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	/*
	 * Pairs with kverbs_ep_state_is()'s acquire: a test that sees the
	 * state sees what the handler recorded before it (a UD client's
	 * server address, QP number and Q_Key), without the lock.
	 */
	smp_store_release(&ep->state, state);
	spin_unlock_irqrestore(&ep->lock, flags);
	wake_up(&ep->wait);
}

static bool kverbs_ep_state_is(struct kverbs_ep *ep, enum kverbs_ep_state state)
{
	/* Pairs with kverbs_ep_set_state()'s release. */
	return smp_load_acquire(&ep->state) == state;
}

/*
 * The device is going away, or the port went down: make the test let go.
 * A port that went down is kept apart from the failure: the endpoint may
 * have failed before (a signal, a time limit), and its teardown still
 * must not send from that port.
 */
static void kverbs_ep_abort(struct kverbs_dev_user *user, int error)
{
	struct kverbs_ep *ep = container_of(user, struct kverbs_ep, user);

	if (error == -ENETDOWN)
		set_bit(KVERBS_EP_PORT_DOWN, &ep->flags);
	kverbs_ep_failed(ep, error, KVERBS_STEP_NONE);
}

/*
 * Has the port of @ep gone down, now or at any time before?  When no port
 * event said so yet, ask the device and the netdev: rxe fails its QPs,
 * and a test may end, before that event is delivered.  Process context.
 */
static bool kverbs_ep_port_down(struct kverbs_ep *ep)
{
	return test_bit(KVERBS_EP_PORT_DOWN, &ep->flags) ||
	       kverbs_ep_link_went_down(ep);
}

/**
 * kverbs_ep_timed_out - the failure of a step whose time limit ran out
 * @ep: the endpoint
 *
 * A step may have waited in vain because its port went down, before
 * kverbs heard of it: siw keeps a connection's TCP socket through a link
 * that is down, so its work requests neither complete nor fail, and
 * ib_core delivers the port event from a workqueue, after it updated the
 * port's caches, which a loaded host may run after the limit.  Ask, as
 * kverbs_ep_reset_cause() does for a reset, and report the cause.
 * Process context: ib_query_port() may sleep.
 *
 * Return: -ENETDOWN if the port is down, else -ETIMEDOUT.
 */
int kverbs_ep_timed_out(struct kverbs_ep *ep)
{
	return kverbs_ep_port_down(ep) ? -ENETDOWN : -ETIMEDOUT;
}

/**
 * kverbs_ep_alloc - a new endpoint with no rdma_cm ID yet
 *
 * Charged to the caller's memory cgroup when a test's thread allocates
 * it.  A server's endpoints are allocated by the listener's rdma_cm
 * handler, on ib_cm's worker, as requests arrive: those are charged to
 * no cgroup; the listener's backlog bounds them.
 *
 * Return: the endpoint or NULL.
 */
struct kverbs_ep *kverbs_ep_alloc(void)
{
	struct kverbs_ep *ep;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep)
		return NULL;
	ep->kind = KVERBS_CM_EP;
	ep->trace_id = kverbs_trace_id_next();
	ep->user.abort = kverbs_ep_abort;
	ep->rnr_retry = 7;
	init_waitqueue_head(&ep->wait);
	spin_lock_init(&ep->lock);
	INIT_LIST_HEAD(&ep->pending);
	INIT_LIST_HEAD(&ep->srq_done);
	ep->srq_allowed = U64_MAX;
	kverbs_drain_marker_init(ep, &ep->drain_sq);
	kverbs_drain_marker_init(ep, &ep->drain_rq);
	init_completion(&ep->last_wqe);
	INIT_DELAYED_WORK(&ep->park, kverbs_ep_park_work);
	return ep;
}

/* A client endpoint whose ID is in port space @ps, for QPs of type @qpt. */
static struct kverbs_ep *kverbs_ep_create_ps(enum rdma_ucm_port_space ps,
					     enum ib_qp_type qpt)
{
	struct kverbs_ep *ep;
	struct rdma_cm_id *id;

	ep = kverbs_ep_alloc();
	if (!ep)
		return ERR_PTR(-ENOMEM);
	id = rdma_create_id(current->nsproxy->net_ns, kverbs_cm_handler,
			    &ep->kind, ps, qpt);
	if (IS_ERR(id)) {
		kfree(ep);
		return ERR_CAST(id);
	}
	ep->id = id;
	return ep;
}

/**
 * kverbs_ep_create - create a client endpoint with its rdma_cm ID
 *
 * The ID lives in the caller's network namespace, as ucma creates the
 * IDs of a process: its addresses and routes are the only ones the
 * connection can use.  Process context.
 *
 * Return: the endpoint or an ERR_PTR.
 */
struct kverbs_ep *kverbs_ep_create(void)
{
	return kverbs_ep_create_ps(RDMA_PS_TCP, IB_QPT_RC);
}

/**
 * kverbs_ep_create_ud - create a client endpoint for datagrams
 *
 * As kverbs_ep_create(), in rdma_cm's UDP port space: its QP is an
 * IB_QPT_UD one, and connecting it is a service ID resolution (SIDR)
 * whose answer gives the server's QP number and Q_Key
 * (&kverbs_ep.ud_qpn).  Process context.
 *
 * Return: the endpoint or an ERR_PTR.
 */
struct kverbs_ep *kverbs_ep_create_ud(void)
{
	return kverbs_ep_create_ps(RDMA_PS_UDP, IB_QPT_UD);
}

/**
 * kverbs_ep_ud_mtu - the largest datagram the port of @ep carries
 * @ep: an endpoint bound to a device
 *
 * UD needs the IB CM for its service ID resolution, which iWARP has
 * not; a datagram is one packet, at most the port's active MTU.
 * Process context (ib_query_port()).
 *
 * Return: the MTU in bytes, -EOPNOTSUPP on iWARP, or ib_query_port()'s
 * error.
 */
int kverbs_ep_ud_mtu(struct kverbs_ep *ep)
{
	struct ib_device *ibdev = kverbs_ep_device(ep);
	u32 port = kverbs_ep_port(ep);
	struct ib_port_attr attr;
	int mtu, ret;

	if (!rdma_cap_ib_cm(ibdev, port)) {
		ibdev_dbg(ibdev, "port %u has no UD (iWARP)\n", port);
		return -EOPNOTSUPP;
	}
	ret = ib_query_port(ibdev, port, &attr);
	if (ret)
		return ret;
	mtu = ib_mtu_enum_to_int(attr.active_mtu);
	return mtu > 0 ? mtu : -EIO;
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
 * attached to it.
 *
 * Return: 0 or a negative errno; the failure is recorded
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
	case IB_EVENT_QP_LAST_WQE_REACHED:
		/*
		 * A QP on an SRQ, in the error state, takes no receive of
		 * the SRQ any more, and those it took have completed
		 * (kverbs_ep_drain_markers()).  rxe raises it each time its
		 * responder runs in the error state: the drain takes one.
		 */
		kverbs_dev_last_wqe_raised(&ep->user);
		complete(&ep->last_wqe);
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

/* The next completion vector a CQ of ours takes: see kverbs_comp_vector(). */
static atomic_t kverbs_ep_next_vector = ATOMIC_INIT(0);

/**
 * kverbs_comp_vector - the completion vector of a new CQ
 * @ibdev: the CQ's device
 *
 * The endpoints (and a UD test's own CQs) take the device's
 * vectors in turn, so that the sessions of a test (the tool's -q) have
 * their interrupts, and their completions' softirqs and bound work, on
 * different CPUs where the device has a vector per CPU.  As ib_core's
 * own spreading (ib_alloc_cq_any(), ib_cq_pool_get()), no more vectors
 * than CPUs online.
 *
 * Return: the vector, from 0 to one less than the device's or CPUs' count.
 */
int kverbs_comp_vector(struct ib_device *ibdev)
{
	unsigned int n = min_t(unsigned int, ibdev->num_comp_vectors,
			       num_online_cpus());

	return (unsigned int)atomic_inc_return(&kverbs_ep_next_vector) % max(n, 1U);
}

/*
 * The endpoint's CQ, of @cqe entries at least: its own, or a share of a
 * CQ of ib_core's pool.  A pool's CQ has no context of ours: handlers
 * find their endpoint in their work request's context (kverbs_wc_ep()).
 * ib_core gives a CQ adaptive moderation (cq->dim) when the device can
 * moderate (ops.modify_cq) and has it on, and the CQ is not polled
 * directly; it cannot be asked for one CQ, so @caps->cq_dim only checks.
 */
static int kverbs_ep_create_cq(struct kverbs_ep *ep,
			       const struct kverbs_ep_caps *caps, u32 cqe)
{
	struct ib_device *ibdev = kverbs_ep_device(ep);
	int vector = kverbs_comp_vector(ibdev);
	struct ib_cq *cq;

	if (caps->cq_dim && !ibdev->ops.modify_cq) {
		ibdev_dbg(ibdev, "no adaptive interrupt moderation: the device has no modify_cq\n");
		return -EOPNOTSUPP;
	}
	if (caps->cq_pool)
		cq = ib_cq_pool_get(ibdev, cqe, vector, caps->poll_ctx);
	else
		cq = ib_alloc_cq(ibdev, ep, cqe, vector, caps->poll_ctx);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	ep->cq = cq;
	ep->cq_pool_cqe = caps->cq_pool ? cqe : 0;
	WRITE_ONCE(ep->polled, cq->poll_ctx == IB_POLL_DIRECT);
	if (caps->cq_dim && !cq->dim) {
		ibdev_dbg(ibdev, "no adaptive interrupt moderation: it is off (rdma dev set %s adaptive-moderation on)\n",
			  dev_name(&ibdev->dev));
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * A bound on the send queue a device makes for @wr work requests: rxe
 * makes the smallest power of two above @wr, less one; siw and mlx5 the
 * smallest power of two from @wr.  kverbs_ep_check_sq_depth() checks it
 * once the QP exists.
 */
static u32 kverbs_sq_depth_bound(u32 wr)
{
	return roundup_pow_of_two(wr + 1);
}

/*
 * For a test that fills the send queue to the device's depth
 * (&kverbs_ep_caps.fill_sq): does the CQ hold that depth and @other
 * more, the receives?  The depth is what the device says of the QP it
 * made; the CQ's room is what the device made of it, or our share of a
 * pool's CQ.
 */
static int kverbs_ep_check_sq_depth(struct kverbs_ep *ep, u32 other)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	u32 room = ep->cq_pool_cqe ? ep->cq_pool_cqe : ep->cq->cqe;
	int ret;

	ret = ib_query_qp(ep->id->qp, &attr, IB_QP_CAP, &init);
	if (ret)
		return ret;
	if (attr.cap.max_send_wr + other <= room)
		return 0;
	ibdev_dbg(kverbs_ep_device(ep),
		  "qp %u: a send queue of %u and %u receives overflow a CQ of %u\n",
		  ep->qp_num, attr.cap.max_send_wr, other, room);
	return -EINVAL;
}

/**
 * kverbs_ep_create_qp - create the PD, CQ and RC QP of an endpoint
 * @ep: an endpoint bound to a device
 * @caps: what the test needs
 *
 * Return: 0, -EINVAL when the device cannot provide @caps, -EOPNOTSUPP
 * when it has no adaptive moderation that @caps->cq_dim needs or cannot
 * hold @caps->max_inline_data, or another negative errno.  Whatever was created is released by
 * kverbs_ep_destroy().
 */
int kverbs_ep_create_qp(struct kverbs_ep *ep, const struct kverbs_ep_caps *caps)
{
	struct ib_device *ibdev = kverbs_ep_device(ep);
	u32 port = kverbs_ep_port(ep);
	struct ib_qp_init_attr attr = {};
	struct ib_qp_cap asked;
	u32 send_wr, recv_wr, rw_wr, cqe;
	int ret;

	/* +1 on each queue for the marker kverbs_ep_drain() posts. */
	send_wr = caps->max_send_wr + 1;
	/* On an SRQ there is no receive queue, and nothing to drain there. */
	recv_wr = caps->srq ? 0 : caps->max_recv_wr + 1;
	rw_wr = rdma_rw_max_send_wr(ibdev, port, caps->max_rdma_ctxs, 0);
	if (send_wr + rw_wr > ibdev->attrs.max_qp_wr || recv_wr > ibdev->attrs.max_qp_wr ||
	    caps->max_send_sge > ibdev->attrs.max_send_sge) {
		ibdev_dbg(ibdev, "QP of %u+%u send and %u receive WRs is too large\n",
			  send_wr, caps->max_rdma_ctxs, recv_wr);
		return -EINVAL;
	}

	if (caps->srq) {
		/* A QP and its SRQ are on one PD. */
		ep->pd = caps->srq_pd;
		ep->pd_borrowed = true;
	} else {
		ep->pd = ib_alloc_pd(ibdev, 0);
		if (IS_ERR(ep->pd)) {
			ret = PTR_ERR(ep->pd);
			ep->pd = NULL;
			return ret;
		}
	}

	/*
	 * Once the QP is in the error state every outstanding work request
	 * completes, signaled or not, so the CQ must hold them all,
	 * including those rdma_rw adds for its contexts.  A CQ that
	 * overflows drops what comes after: rxe stops flushing there, and a
	 * drain marker behind it never completes.
	 */
	cqe = send_wr + rw_wr;
	if (caps->fill_sq)
		cqe = kverbs_sq_depth_bound(cqe);
	cqe += recv_wr + caps->srq_wr;
	ret = kverbs_ep_create_cq(ep, caps, min_t(u32, cqe, ibdev->attrs.max_cqe));
	if (ret)
		return ret;
	/* For the CM events of the connection too, which run elsewhere. */
	WRITE_ONCE(ep->cq_id, ep->cq->res.id);
	trace_kverbs_cq_alloc(ep->trace_id, ep->cq);

	attr.event_handler = kverbs_qp_event;
	attr.qp_context = ep;
	attr.send_cq = ep->cq;
	attr.recv_cq = ep->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	/* rdma_cm moves a UD QP to RTS itself, with its port space's Q_Key. */
	attr.qp_type = ep->id->qp_type;
	attr.port_num = port;
	attr.cap.max_send_wr = send_wr;
	attr.cap.max_recv_wr = recv_wr;
	attr.cap.max_send_sge = caps->max_send_sge;
	attr.cap.max_recv_sge = caps->srq ? 0 : 1;
	attr.srq = caps->srq;
	attr.cap.max_inline_data = caps->max_inline_data;
	attr.cap.max_rdma_ctxs = caps->max_rdma_ctxs;
	/* rdma_rw and the device add to it and round it up: keep ours. */
	asked = attr.cap;
	ret = rdma_create_qp(ep->id, ep->pd, &attr);
	/*
	 * A device says how much inline data its QPs hold only by making
	 * one: there is no attribute for it to check beforehand, as the
	 * others were.  A refusal with inline data asked for is that; and
	 * a device that gives less than asked (it writes back what it
	 * gave, as rxe and mlx5 do) cannot run the test either.
	 */
	if (ret == -EINVAL && caps->max_inline_data) {
		ibdev_dbg(ibdev, "no QP with %u bytes of inline data\n",
			  caps->max_inline_data);
		return -EOPNOTSUPP;
	}
	if (ret)
		return ret;
	WRITE_ONCE(ep->qp_num, ep->id->qp->qp_num);
	trace_kverbs_qp_create(ep->trace_id, ep->cq_id, ep->id->qp, &asked);
	if (caps->fill_sq) {
		ret = kverbs_ep_check_sq_depth(ep, recv_wr + caps->srq_wr);
		if (ret)
			return ret;
	}
	if (!caps->max_inline_data)
		return 0;
	ep->max_inline = attr.cap.max_inline_data;
	return ep->max_inline < caps->max_inline_data ? -EOPNOTSUPP : 0;
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
	/*
	 * What the peer's QP does when a SEND finds no receive here: 7
	 * retries forever, and a peer that never posts hits the step
	 * timeout.  Only a lesson asks for less (ep->rnr_retry).
	 */
	param->rnr_retry_count = ep->rnr_retry;
}

/**
 * kverbs_ep_connect_start - send the connection request, without waiting
 * @ep: a resolved client endpoint with a QP
 * @rd_atom: RDMA READs each side may have outstanding towards the other
 * @data: private data for the server, or NULL
 * @len: its length, at most KVERBS_EP_PRIVATE_DATA_MAX
 *
 * For a caller that serves the other end itself (a lesson): it accepts
 * the request, then kverbs_ep_wait_connected().
 *
 * Return: 0 or the recorded failure.
 */
int kverbs_ep_connect_start(struct kverbs_ep *ep, u8 rd_atom,
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
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_CONNECT);
	return 0;
}

/**
 * kverbs_ep_wait_connected - wait until a connection request is answered
 * @ep: a client endpoint whose request went out
 * @timeout_ns: limit on the wait
 *
 * Return: 0 once connected, or the recorded failure, as
 * kverbs_ep_connect_data().
 */
int kverbs_ep_wait_connected(struct kverbs_ep *ep, u64 timeout_ns)
{
	int ret;

	ret = kverbs_ep_wait_state(ep, KVERBS_EP_CONNECTED, timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_CONNECT);
	return 0;
}

/**
 * kverbs_ep_connect_data - connect, with private data in the request
 * @ep: the endpoint
 * @rd_atom: RDMA READs each side may have outstanding towards the other
 * @timeout_ns: limit on the connection set-up
 * @data: private data for the server, or NULL
 * @len: its length, at most KVERBS_EP_PRIVATE_DATA_MAX
 *
 * Return: 0 once connected, or the recorded failure: -ECONNREFUSED when
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
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_CONNECT);
	return kverbs_ep_wait_connected(ep, timeout_ns);
}

/**
 * kverbs_ep_accept_data - accept a connection request, with private data
 * @ep: the endpoint, with a QP and its receives posted
 * @timeout_ns: limit on the connection set-up
 * @data: private data for the client, or NULL
 * @len: its length, at most KVERBS_EP_PRIVATE_DATA_MAX
 *
 * The client finds @data in @ep->private_data once connected (an IB CM
 * REP pads it with zeros to its own size).
 *
 * Return: 0 once established, or the recorded failure: -ENETDOWN at once
 * when the port went down, however long ago.
 */
int kverbs_ep_accept_data(struct kverbs_ep *ep, u64 timeout_ns,
			  const void *data, u8 len)
{
	struct rdma_conn_param param;
	int ret;

	/*
	 * A request may have waited in its listener's queue, where no port
	 * event reaches it, while the port went down: nothing is sent from
	 * such a port (kverbs_ep_destroy()), the REP no more than a DREQ.
	 */
	if (kverbs_ep_port_down(ep))
		return kverbs_ep_failed(ep, -ENETDOWN, KVERBS_STEP_ACCEPT);
	/* Answer as many READs as the client will issue, and vice versa. */
	kverbs_ep_conn_param(ep, &param, ep->initiator_depth,
			     ep->responder_resources);
	param.private_data = data;
	param.private_data_len = len;
	/*
	 * rdma_accept() is made to be called from the ID's event handler,
	 * under its handler mutex; this request was handed over to the
	 * ioctl's thread, which takes the mutex to the same effect.  The
	 * mutex is held only while our handler runs, which records and
	 * returns: no peer or device can hold it.
	 */
	rdma_lock_handler(ep->id);
	ret = rdma_accept(ep->id, &param);
	rdma_unlock_handler(ep->id);
	/*
	 * A UD request is answered with a SIDR REP, and that is all: no
	 * ESTABLISHED follows on this side.
	 */
	if (!ret && ep->id->qp_type == IB_QPT_UD)
		kverbs_ep_set_state(ep, KVERBS_EP_CONNECTED);
	else if (!ret)
		ret = kverbs_ep_wait_state(ep, KVERBS_EP_CONNECTED, timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_ACCEPT);
	return 0;
}

/**
 * kverbs_ep_accept - accept a connection request taken from a listener
 * @ep: the endpoint, with a QP and its receives posted
 * @timeout_ns: limit on the connection set-up
 *
 * As kverbs_ep_accept_data(), without private data.
 *
 * Return: as kverbs_ep_accept_data().
 */
int kverbs_ep_accept(struct kverbs_ep *ep, u64 timeout_ns)
{
	return kverbs_ep_accept_data(ep, timeout_ns, NULL, 0);
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

/**
 * kverbs_ep_private_data - copy what the peer said in its private data
 * @ep: the endpoint
 * @buf: where to
 * @size: its size; what the peer sent beyond it is not copied
 *
 * One copy, to check and use: a later event (a reject the peer may still
 * send) rewrites the endpoint's.
 *
 * Return: the bytes the peer sent, at most KVERBS_EP_PRIVATE_DATA_MAX;
 * @buf holds the first @size of them.
 */
u8 kverbs_ep_private_data(struct kverbs_ep *ep, void *buf, size_t size)
{
	unsigned long flags;
	u8 len;

	spin_lock_irqsave(&ep->lock, flags);
	len = ep->private_data_len;
	memcpy(buf, ep->private_data, min_t(size_t, len, size));
	spin_unlock_irqrestore(&ep->lock, flags);
	return len;
}

/**
 * kverbs_ep_keep_private_data - keep the peer's request, accept or reject data
 * @ep: the endpoint
 * @event: the event, whose copy of the private data goes when it returns
 */
void kverbs_ep_keep_private_data(struct kverbs_ep *ep,
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

/*
 * The next completion id of @ep, kept in @cqe's context for the trace of
 * its completion if the work request @completes (see &struct
 * kverbs_cqe), with the endpoint, which every completion of it needs: a
 * flushed unsignaled one too.  Posts come from the test's thread, one at
 * a time.
 */
static u32 kverbs_ep_give_cid(struct kverbs_ep *ep, struct ib_cqe *cqe,
			      bool completes)
{
	struct kverbs_cqe *kc = cqe ? container_of(cqe, struct kverbs_cqe, cqe) : NULL;
	u32 cid = ++ep->next_cid;

	if (kc) {
		kc->ep = ep;
		kc->qp_num = 0;		/* the endpoint's own QP */
	}
	if (kc && completes)
		kc->cid = cid;
	return cid;
}

/**
 * kverbs_ep_next_cid - the completion id the next work request posted gets
 * @ep: the endpoint
 *
 * For the trace of a chain about to be posted (an rdma_rw context).
 * Return: the id.
 */
u32 kverbs_ep_next_cid(const struct kverbs_ep *ep)
{
	return ep->next_cid + 1;
}

/**
 * kverbs_post_send - post a chain of send work requests
 * @ep: the connected endpoint
 * @wr: the first work request
 * @step: what the chain does, for the failure report
 *
 * Every send work request of kverbs is posted here: SENDs, RDMA READs
 * and WRITEs, atomics, registrations and invalidations, each traced
 * with the completion id it is given, unsignaled ones too.  The wr_cqe
 * of each must be the &kverbs_cqe.cqe of its context (or NULL, for an
 * unsignaled one that has no context; then its id is only traced).
 * Return: 0 or the recorded failure.
 */
int kverbs_post_send(struct kverbs_ep *ep, struct ib_send_wr *wr,
		     enum kverbs_step step)
{
	int ret;

	ret = kverbs_post_send_try(ep, wr);
	if (ret)
		return kverbs_ep_failed(ep, ret, step);
	return 0;
}

/**
 * kverbs_post_send_try - post a chain of send work requests, and only say
 *	whether it worked
 * @ep: the connected endpoint
 * @wr: the first work request
 *
 * As kverbs_post_send(), but a failure of the post is only returned, not
 * recorded as the endpoint's: for a caller that expects it (a lesson
 * filling the send queue) and goes on using the endpoint.
 *
 * Return: what ib_post_send() returned.
 */
int kverbs_post_send_try(struct kverbs_ep *ep, struct ib_send_wr *wr)
{
	struct ib_qp *qp = ep->id->qp;
	const struct ib_send_wr *w;
	u32 cid;

	/*
	 * Not inside the tracepoint's arguments: those are evaluated only
	 * while it is enabled, and the ids must be given either way.
	 */
	for (w = wr; w; w = w->next) {
		cid = kverbs_ep_give_cid(ep, w->wr_cqe,
					 w->send_flags & IB_SEND_SIGNALED);
		trace_kverbs_post_send(qp, w, ep->cq_id, cid);
	}
	ep->drained = false;
	return ib_post_send(qp, wr, NULL);
}

/**
 * kverbs_post_recv - post one receive work request
 * @ep: the endpoint, connected or about to be
 * @wr: the work request, with one scatter/gather entry
 *
 * Every receive of kverbs is posted here, and traced with its completion
 * id.  Its wr_cqe must be the &kverbs_cqe.cqe of its context.
 *
 * Return: 0 or the
 * failure, recorded as KVERBS_STEP_RECV.
 */
int kverbs_post_recv(struct kverbs_ep *ep, struct ib_recv_wr *wr)
{
	struct ib_qp *qp = ep->id->qp;
	u32 cid = kverbs_ep_give_cid(ep, wr->wr_cqe, true);
	int ret;

	trace_kverbs_post_recv(qp, wr->num_sge ? wr->sg_list[0].length : 0,
			       ep->cq_id, cid);
	ep->drained = false;
	ret = ib_post_recv(qp, wr, NULL);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
	return 0;
}

/**
 * kverbs_ep_disconnect - start tearing down the connection, if there is one
 * @ep: the endpoint
 *
 * Does not wait for the peer: the QP moves to the error state and
 * kverbs_ep_quiesce() drains it.
 */
void kverbs_ep_disconnect(struct kverbs_ep *ep)
{
	/* Datagrams have no connection to end: nothing goes to the peer. */
	if (ep->id && ep->id->qp && ep->id->qp_type != IB_QPT_UD)
		rdma_disconnect(ep->id);
}

/*
 * The last thing a marker's handler does is complete() its marker: the
 * waiter that takes the completion may free the endpoint at once, and
 * complete() touches nothing after it lets the waiter run (as ib_core's
 * own drain relies on for its markers on the stack).  Nothing of the
 * endpoint is read after it, not even its wait queue.
 */
static void kverbs_drain_marker_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_drain_marker *m = container_of(wc->wr_cqe,
						     struct kverbs_drain_marker,
						     cqe.cqe);

	trace_kverbs_drain_wc(cq, wc);
	complete(&m->done);
	kverbs_fault_stall(KVERBS_FAULT_MARKER_DONE);
}

static void kverbs_drain_marker_init(struct kverbs_ep *ep,
				     struct kverbs_drain_marker *m)
{
	m->cqe.cqe.done = kverbs_drain_marker_done;
	m->cqe.ep = ep;
	init_completion(&m->done);
}

/* Post @wr, a marker of @m's queue, and count it. */
static int kverbs_drain_marker_post(struct kverbs_ep *ep,
				    struct kverbs_drain_marker *m,
				    struct ib_send_wr *swr, struct ib_recv_wr *rwr)
{
	struct ib_qp *qp = ep->id->qp;
	u32 cid = ++ep->next_cid;
	int ret;

	m->cqe.cid = cid;
	trace_kverbs_drain_post(qp, ep->cq_id, cid, swr);
	if (swr)
		ret = ib_post_send(qp, swr, NULL);
	else
		ret = ib_post_recv(qp, rwr, NULL);
	if (!ret)
		m->posted++;
	return ret;
}

/*
 * Take the completions of @m's markers that came, without waiting.
 * Returns true once every marker posted on its queue has completed.
 */
static bool kverbs_drain_marker_seen(struct kverbs_drain_marker *m)
{
	while (m->seen < m->posted && try_wait_for_completion(&m->done))
		m->seen++;
	return m->seen == m->posted;
}

/*
 * Wait until every marker posted on @m's queue has completed, or
 * @deadline.  A CQ that we poll ourselves (IB_POLL_DIRECT) is polled at
 * once, where ib_drain_qp() would sleep 100 ms before each poll.
 */
static bool kverbs_drain_marker_wait(struct kverbs_ep *ep,
				     struct kverbs_drain_marker *m,
				     unsigned long deadline)
{
	long left;

	while (!kverbs_drain_marker_seen(m)) {
		if (time_after_eq(jiffies, deadline))
			return false;
		if (ep->polled) {
			/* The flush runs in the device's own context (rxe, siw). */
			if (!ib_process_cq_direct(ep->cq, -1))
				usleep_range(20, 100);
			continue;
		}
		left = deadline - jiffies;
		if (left > 0 && wait_for_completion_timeout(&m->done, left))
			m->seen++;
	}
	return true;
}

/*
 * A QP on an SRQ, in the error state: wait, until @deadline, for Last
 * WQE Reached, after which the SRQ's receives it took have completed and
 * a marker completes after them (Documentation/architecture.rst,
 * "Draining").  iWARP has no such event: siw flushes the receive in
 * progress in the modify itself (siw_rq_flush()), before it returns.
 * Nor has a device that never raises it (kverbs_dev_last_wqe_missing()).
 */
static bool kverbs_ep_last_wqe(struct kverbs_ep *ep, unsigned long deadline)
{
	long left = deadline - jiffies;

	if (ep->last_wqe_seen ||
	    rdma_protocol_iwarp(kverbs_ep_device(ep), kverbs_ep_port(ep)) ||
	    kverbs_dev_last_wqe_missing(&ep->user, false))
		return true;
	if (left > 0 && wait_for_completion_timeout(&ep->last_wqe, left)) {
		ep->last_wqe_seen = true;
		return true;
	}
	return kverbs_dev_last_wqe_missing(&ep->user, true);
}

/*
 * Post the drain's markers: one on the send queue, one on the receive
 * queue unless the QP is on an SRQ, whose receives stay posted for the
 * QPs that share it, as ib_drain_qp() leaves them (nvmet-rdma's
 * use_srq).  @ep->markers_posted says whether they all went.
 */
static void kverbs_ep_post_markers(struct kverbs_ep *ep)
{
	struct ib_qp *qp = ep->id->qp;
	struct ib_rdma_wr swr = {
		.wr = {
			.wr_cqe = &ep->drain_sq.cqe.cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	struct ib_ud_wr uwr = {
		.wr = swr.wr,
		.ah = ep->ud_ah,
	};
	struct ib_recv_wr rwr = { .wr_cqe = &ep->drain_rq.cqe.cqe };
	struct ib_send_wr *marker = &swr.wr;

	/*
	 * A UD send queue takes SENDs only, each with an address handle
	 * (rxe reads it even from a work request it flushes).  A UD QP that
	 * never had an address handle never sent: its queue is empty.
	 */
	if (qp->qp_type == IB_QPT_UD) {
		uwr.wr.opcode = IB_WR_SEND;
		marker = ep->ud_ah ? &uwr.wr : NULL;
	}
	/*
	 * The markers of an earlier drain that did not end, with nothing
	 * posted behind them, are this drain's too: a queue has room for
	 * one marker (kverbs_ep_create_qp()), which they may still hold.
	 */
	if (ep->markers_cid && ep->markers_cid == ep->next_cid) {
		ep->markers_posted = true;
		return;
	}
	if (marker && kverbs_drain_marker_post(ep, &ep->drain_sq, marker, NULL))
		return;
	if (!qp->srq && kverbs_drain_marker_post(ep, &ep->drain_rq, NULL, &rwr))
		return;
	ep->markers_posted = true;
	ep->markers_cid = ep->next_cid;
}

/*
 * Has @qp, on an SRQ, taken receives from it?  Not before it reached
 * RTR; such a QP raises no Last WQE Reached on every device, and needs
 * none.  If the state cannot be read, assume it did.
 */
static bool kverbs_ep_took_srq_receives(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return true;
	return attr.qp_state != IB_QPS_RESET && attr.qp_state != IB_QPS_INIT;
}

/*
 * ib_drain_qp()'s method, with a bound (Documentation/architecture.rst,
 * "Draining"): in the error state the QP flushes what is queued, then a
 * marker posted to each queue, so once both markers completed every work
 * request has.  A QP on an SRQ first waits for its Last WQE Reached.  The
 * markers live in the endpoint and count their posts: a late completion
 * still finds them, up to the CQ's end or the end of the endpoint's
 * parking (kverbs_ep_drain_late()), and does not end a later drain.  Not
 * ib_drain_qp() itself, even on a device with drain methods: those wait
 * without a bound.
 *
 * Returns true once every marker completed, false if the QP could not
 * be moved or a marker posted, or the device did not flush in time.
 */
static bool kverbs_ep_drain_markers(struct kverbs_ep *ep)
{
	struct ib_qp *qp = ep->id->qp;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned long deadline = jiffies + KVERBS_DRAIN_TIMEOUT;

	ep->markers_posted = false;
	if (qp->srq && !ep->last_wqe_seen && !kverbs_ep_took_srq_receives(qp))
		ep->last_wqe_seen = true;
	ep->modified = !ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (!ep->modified)
		return false;
	if (qp->srq && !kverbs_ep_last_wqe(ep, deadline))
		return false;
	kverbs_ep_post_markers(ep);
	return ep->markers_posted &&
	       kverbs_drain_marker_wait(ep, &ep->drain_sq, deadline) &&
	       kverbs_drain_marker_wait(ep, &ep->drain_rq, deadline);
}

/*
 * A drain that did not end in time, taken up without a wait: true once
 * it is over.  Last WQE Reached that came late gets the markers posted
 * now, and so does a queue that had no room for one before; markers
 * that come late are taken.  A QP that could not be moved to the error
 * state never drains: only the device's removal ends its parking.
 */
static bool kverbs_ep_drain_late(struct kverbs_ep *ep)
{
	if (!ep->modified || ep->stopped)
		return false;
	if (!ep->markers_posted) {
		if (ep->id->qp->srq && !ep->last_wqe_seen) {
			if (!try_wait_for_completion(&ep->last_wqe))
				return false;
			ep->last_wqe_seen = true;
		}
		/* A queue full until its earlier marker completed: once more. */
		kverbs_ep_post_markers(ep);
		if (!ep->markers_posted)
			return false;
	}
	return kverbs_drain_marker_seen(&ep->drain_sq) &&
	       kverbs_drain_marker_seen(&ep->drain_rq);
}

/**
 * kverbs_ep_drain - flush every outstanding work request
 * @ep: the endpoint
 *
 * Disconnects (unless the port went down, now or before, whatever the
 * endpoint failed with first: nothing can be sent from it), then
 * waits until the device has flushed both queues, for
 * at most KVERBS_DRAIN_TIMEOUT, signal or not.  After a drain that
 * completed, no completion handler runs until the next post.  A test
 * may drain in the middle of a wait, to take in what completed before a
 * failure; its teardown uses kverbs_ep_quiesce().  Idempotent.
 */
void kverbs_ep_drain(struct kverbs_ep *ep)
{
	const char *why;
	struct ib_qp *qp;

	/* A reset QP (kverbs_ep_stop()) would drop the markers. */
	if (!ep->id || !ep->id->qp || ep->drained || ep->stopped)
		return;
	qp = ep->id->qp;
	trace_kverbs_drain_start(ep->trace_id, ep->cq_id, qp);
	/* No DREQ from a port that is down: see kverbs_ep_destroy(). */
	if (!kverbs_ep_port_down(ep))
		kverbs_ep_disconnect(ep);
	ep->drained = kverbs_ep_drain_markers(ep);
	trace_kverbs_drain_end(ep->trace_id, ep->cq_id, qp, ep->drained);
	if (ep->drained)
		return;
	if (!ep->modified)
		why = "it could not be moved to the error state";
	else if (!ep->markers_posted && qp->srq && !ep->last_wqe_seen)
		why = "no Last WQE Reached within the drain's bound";
	else if (!ep->markers_posted)
		why = "a marker could not be posted";
	else
		why = "its markers did not come back within the drain's bound";
	ibdev_warn_ratelimited(qp->device, "qp %u not drained: %s\n",
			       qp->qp_num, why);
}

/**
 * kverbs_ep_stop - stop the device's work on a QP whose drain did not end
 * @ep: the endpoint, after kverbs_ep_drain()
 *
 * A drain that did not end leaves work requests in flight, whose memory
 * the device may still read or write: an rdma_rw context must not unmap
 * it while the QP lives (rdma_rw_ctx_destroy() needs the QP).  In the
 * reset state a QP does nothing more, and completes nothing more: its
 * drain never ends, and a parked endpoint stays parked until its
 * device's removal (kverbs_ep_park()).  Nothing to do after a drain that
 * ended.
 */
void kverbs_ep_stop(struct kverbs_ep *ep)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	if (ep->drained || !ep->id || !ep->id->qp || ep->stopped)
		return;
	ep->stopped = !ib_modify_qp(ep->id->qp, &attr, IB_QP_STATE);
	if (!ep->stopped)
		ibdev_warn_ratelimited(kverbs_ep_device(ep),
				       "qp %u: not drained, and cannot be reset\n",
				       ep->id->qp->qp_num);
}

/*
 * ib_free_cq() (kverbs_cq_free()), or the endpoint's share of a pool's
 * CQ given back: a pool's CQ outlives the endpoint, and is given back
 * only once the QP's drain completed or its device is going
 * (kverbs_ep_park()), when nothing of ours is left on it.
 */
static void kverbs_free_cq(struct kverbs_ep *ep, struct ib_cq *cq)
{
	trace_kverbs_cq_free(ep->trace_id, ep->cq_id);
	if (ep->cq_pool_cqe) {
		ib_cq_pool_put(cq, ep->cq_pool_cqe);
		return;
	}
	kverbs_cq_free(cq);
}

/**
 * kverbs_cq_free - free a CQ of ib_alloc_cq()'s whose QPs are destroyed
 * @cq: the CQ
 *
 * ib_free_cq(), after an RCU grace period for an IB_POLL_SOFTIRQ CQ:
 * ib_core's poll re-arms the CQ after ib_free_cq() stops waiting for it,
 * and a softirq handler is an RCU read-side critical section
 * (Documentation/architecture.rst, "Draining").
 */
void kverbs_cq_free(struct ib_cq *cq)
{
	if (cq->poll_ctx == IB_POLL_SOFTIRQ)
		synchronize_rcu();
	ib_free_cq(cq);
}

/* The QP and the CQ go: no completion handler runs after this. */
static void kverbs_ep_destroy_qp_cq(struct kverbs_ep *ep)
{
	if (ep->id && ep->id->qp) {
		trace_kverbs_qp_destroy(ep->trace_id, ep->cq_id, ep->id->qp);
		rdma_destroy_qp(ep->id);
	}
	if (ep->cq) {
		kverbs_free_cq(ep, ep->cq);
		ep->cq = NULL;
	}
}

/**
 * kverbs_ep_quiesce - end all activity of the device on the endpoint
 * @ep: the endpoint, possibly half built
 *
 * Drains the QP (kverbs_ep_drain()), then destroys it and frees the CQ.
 * Once this returns true, no completion handler runs and the device
 * touches none of the memory the test's work requests named: destroying
 * the QP is the device's last word on it, and freeing the CQ stops its
 * handlers, even if the drain did not finish.  Only then may the test
 * free its buffers.  An rdma_rw context must be destroyed before, while
 * the QP exists.  Idempotent.
 *
 * A CQ of ib_core's pool is not freed: it carries other QPs.  After a
 * drain that did not complete, a late completion of the QP there would
 * run the test's handlers on its memory: then the QP and the CQ are
 * kept, and false returned (Documentation/architecture.rst, "Draining").
 *
 * Return: true when the test may free its memory; false when the
 * endpoint, and the memory its work requests name, must be handed to
 * kverbs_ep_park() instead, which releases both once the drain is over.
 */
bool kverbs_ep_quiesce(struct kverbs_ep *ep)
{
	if (ep->id && ep->id->qp) {
		kverbs_ep_drain(ep);
		if (!ep->drained && ep->cq_pool_cqe)
			return false;
	}
	kverbs_ep_destroy_qp_cq(ep);
	return true;
}

/*
 * The rdma_cm ID, the device, and the memory: the end of an endpoint.
 * rdma_destroy_id() waits, uninterruptibly, for the ID's handler to
 * return (ours only records) and for ib_cm to be done with the ID's
 * MADs: with the port up, each ends within ib_cm's own retries and
 * timeouts; an endpoint whose port went down comes here only from
 * kverbs_reap, once the port is back or the device is being removed.
 */
static void kverbs_ep_release(struct kverbs_ep *ep)
{
	if (ep->id)
		rdma_destroy_id(ep->id);
	/*
	 * The server's address a UD client kept, and its GID entry
	 * reference: only now, as a SIDR REP that came late may have set it
	 * until rdma_destroy_id() returned.
	 */
	rdma_destroy_ah_attr(&ep->ud_ah_attr);
	/* Only now may the device go: nothing of ours is left on it. */
	kverbs_dev_detach(&ep->user);
	kfree(ep);
}

static bool kverbs_ep_user_link_down(struct kverbs_dev_user *user)
{
	return kverbs_ep_link_down(container_of(user, struct kverbs_ep, user));
}

static void kverbs_ep_reap_work(struct work_struct *work)
{
	struct kverbs_ep *ep = container_of(work, struct kverbs_ep, reap);

	struct kverbs_user *held_by = ep->held_by;

	kverbs_dev_wait_port_up(&ep->user, kverbs_ep_user_link_down);
	kverbs_ep_release(ep);
	kverbs_sessions_release(held_by);
}

/*
 * The device is going and a parked endpoint's drain is not over.
 * Destroying the QP is the device's last word on it: what it still held
 * of the QP's work it has written to the CQ by then (as rxe does), or
 * never will (a device that purges the QP's entries from its CQs, as
 * mlx5 does).  What it wrote, the pool's CQ runs through the handlers
 * in order, the markers last: wait for them, bounded, before the memory
 * they name goes.  A device whose markers do not come has neither
 * flushed the QP nor purged it, and what it may still deliver finds
 * freed memory: say so.
 */
static void kverbs_ep_park_removed(struct kverbs_ep *ep)
{
	unsigned long deadline = jiffies + KVERBS_DRAIN_TIMEOUT;
	u32 qp_num = ep->id->qp->qp_num;
	bool posted = ep->markers_posted;

	trace_kverbs_qp_destroy(ep->trace_id, ep->cq_id, ep->id->qp);
	rdma_destroy_qp(ep->id);
	if (posted && kverbs_drain_marker_wait(ep, &ep->drain_sq, deadline) &&
	    kverbs_drain_marker_wait(ep, &ep->drain_rq, deadline)) {
		ep->drained = true;
		return;
	}
	ibdev_warn(kverbs_ep_device(ep),
		   "qp %u: destroyed at the device's removal without a flush; its completions, if the device still delivers any, would find freed memory\n",
		   qp_num);
}

/*
 * A parked endpoint, once a second: when its late drain is over, or its
 * device is going (kverbs_ep_park_removed()), the QP and the CQ go, then
 * everything kverbs_ep_destroy() releases, and the module reference the
 * parking took.
 */
static void kverbs_ep_park_work(struct work_struct *work)
{
	struct kverbs_ep *ep = container_of(to_delayed_work(work),
					    struct kverbs_ep, park);
	struct kverbs_user *held_by;

	if (kverbs_ep_drain_late(ep)) {
		ep->drained = true;
		trace_kverbs_drain_end(ep->trace_id, ep->cq_id, ep->id->qp, true);
	} else if (!kverbs_dev_removing(&ep->user)) {
		queue_delayed_work(kverbs_wq, &ep->park, HZ);
		return;
	} else {
		kverbs_ep_park_removed(ep);
	}
	held_by = ep->held_by;
	kverbs_ep_destroy_qp_cq(ep);
	/* A release deferred again holds its own count, for the same user. */
	kverbs_ep_destroy(ep);
	kverbs_sessions_release(held_by);
	/*
	 * Unload waits for this work (kverbs_ep_reap_flush()) before it
	 * frees the module: the return is safe.
	 */
	module_put(THIS_MODULE);
}

/*
 * Keep an endpoint whose drain is late on a CQ of ib_core's pool, and
 * the test's memory with it (kverbs_ep_quiesce() returned false), until
 * the drain ends or the device goes: the work owns it from now on, and
 * it still counts against max_sessions (Documentation/architecture.rst,
 * "Draining").  It holds the module too: the pool's CQ outlives kverbs'
 * client, and its late completions call kverbs' handlers, so rmmod is
 * refused ("in use") until the parking ends.
 */
static void kverbs_ep_park(struct kverbs_ep *ep)
{
	ibdev_warn_ratelimited(kverbs_ep_device(ep),
			       "qp %u: its CQ is shared; the QP and the test's memory are kept until its drain ends\n",
			       ep->id->qp->qp_num);
	__module_get(THIS_MODULE);
	set_bit(KVERBS_EP_PARKED, &ep->flags);
	ep->held_by = kverbs_sessions_hold(NULL);
	queue_delayed_work(kverbs_wq, &ep->park, HZ);
}

/**
 * kverbs_ep_set_release - what to free once the device is done with it
 * @ep: the endpoint
 * @release: frees what the test holds that the endpoint's work requests
 *	name (buffers, messages, their contexts), and what else its
 *	completion handlers reach, but not the endpoint
 * @arg: its argument
 *
 * kverbs_ep_destroy() calls @release once the QP and the CQ are gone.
 * An endpoint whose drain did not end in time on a CQ of ib_core's pool
 * is kept, and @release called, only once the drain ends late, or the
 * device is going (see kverbs_ep_quiesce()): a test whose CQ may be a
 * pool's hands its memory over this way.  @release runs in the test's
 * thread or in a work item, never with the test's own state (its
 * command, its result) still there.
 */
void kverbs_ep_set_release(struct kverbs_ep *ep, void (*release)(void *arg),
			   void *arg)
{
	ep->release = release;
	ep->release_arg = arg;
}

/**
 * kverbs_ep_reap_init - the work queue endpoints are released from
 *	when their release may wait long (see kverbs_ep_destroy())
 *
 * Return: 0 or -ENOMEM.
 */
int kverbs_ep_reap_init(void)
{
	kverbs_wq = alloc_workqueue("kverbs_reap", WQ_UNBOUND, 0);
	return kverbs_wq ? 0 : -ENOMEM;
}

/**
 * kverbs_ep_reap_flush - wait for every endpoint being released, at unload
 *
 * After kverbs_devices_unregister(): an endpoint waiting for its port
 * goes once its device's removal begins.
 */
void kverbs_ep_reap_flush(void)
{
	destroy_workqueue(kverbs_wq);
}

/**
 * kverbs_ep_destroy - release an endpoint and everything under it
 * @ep: the endpoint, possibly half built, or NULL
 *
 * Quiesces it (kverbs_ep_quiesce()), then frees what the test handed over
 * with kverbs_ep_set_release(), then the PD, the rdma_cm ID and the
 * device attachment.  A test that did not hand its memory over must
 * have freed its MRs and DMA mappings before, after kverbs_ep_quiesce().
 * An endpoint whose drain is late on a pool's CQ is parked instead, and
 * released later from a work item: the caller must not touch it again
 * either way.
 */
void kverbs_ep_destroy(struct kverbs_ep *ep)
{
	if (!ep)
		return;
	if (!kverbs_ep_quiesce(ep)) {
		kverbs_ep_park(ep);
		return;
	}
	if (ep->release)
		ep->release(xchg(&ep->release_arg, NULL));
	ep->release = NULL;
	if (ep->pd && !ep->pd_borrowed)
		ib_dealloc_pd(ep->pd);
	ep->pd = NULL;
	/*
	 * Destroying the ID of an established connection sends a DREQ, and
	 * ib_cm waits uninterruptibly until the MAD layer is done with it,
	 * which a port that is down never lets happen (6.1's rxe wedges its
	 * QP1 trying, and the device's removal with it).  So the ID of an
	 * endpoint whose port went down (KVERBS_EP_PORT_DOWN), which did not
	 * disconnect, is destroyed by a work item once the port is up again or
	 * the device is going; the endpoint counts against max_sessions until
	 * then (Documentation/architecture.rst, "Objects and owners").
	 */

	if (ep->id && kverbs_ep_port_down(ep)) {
		ep->held_by = kverbs_sessions_hold(ep->held_by);
		INIT_WORK(&ep->reap, kverbs_ep_reap_work);
		queue_work(kverbs_wq, &ep->reap);
		return;
	}
	kverbs_ep_release(ep);
}

/**
 * kverbs_ep_drop_pending - let rdma_cm destroy a request that died queued
 * @ep: a server endpoint
 * @error: why it died
 *
 * A request still queued on its listener is nobody's yet.  When it dies
 * there (the client gave up, the device went away) hand it back to
 * rdma_cm to destroy, so that nothing waits for the server to notice;
 * the server, or the listener, frees the memory.
 *
 * Return: true if the handler must return non-zero for that.
 */
bool kverbs_ep_drop_pending(struct kverbs_ep *ep, int error)
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
