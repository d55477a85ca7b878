/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kverbs internal interfaces.
 *
 * Objects and who owns them (Documentation/architecture.rst has the
 * long version):
 *
 *  kverbs_dev       one per RDMA device, created and destroyed by the
 *                   ib_client callbacks in device.c.  Keeps a list of the
 *                   users (endpoints, listeners) that hold verbs objects
 *                   on the device, so that removal can abort them and
 *                   wait until they have let go.
 *  kverbs_ep        one RC connection, or one UD end: rdma_cm ID,
 *                   PD, CQ and QP (ep.c).
 *                   Owned by the test that created it, in the ioctl's
 *                   thread; released by kverbs_ep_quiesce() and then
 *                   kverbs_ep_destroy().
 *  kverbs_listener  a listening rdma_cm ID and the connection requests
 *                   that wait for the server to take them (listener.c).
 *                   Owned by its server or its file; released by
 *                   kverbs_listener_destroy().
 *  kverbs_buf       a data buffer: pages, a kernel mapping for the CPU,
 *                   and optionally a DMA mapping plus a fast-registration
 *                   MR.  Owned by the test.
 *  kverbs_msg       a small DMA-mapped control message (send or receive).
 *  kverbs_ubuf      user memory a test writes while it runs, pinned
 *                   before the test holds a device (ubuf.c).
 *  kverbs_srq       a shared receive queue of perf servers and its PD,
 *                   refcounted by its sessions and its file (srq.c).
 *  kverbs_user      what one user's tests hold, against the per-user
 *                   limits (user.c).  Referenced by each running session
 *                   and each buffer or pinned range charged to it; freed
 *                   with the last reference.
 */
#ifndef _KVERBS_H
#define _KVERBS_H

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <uapi/kverbs.h>

#include "compat.h"

#define KVERBS_VERSION "1.0"

/* Longest time limit a caller may ask for, one hour. */
#define KVERBS_MAX_TIMEOUT_NS	(3600ULL * NSEC_PER_SEC)

/*
 * struct kverbs_fail - the first thing that went wrong in a test, as it
 * is reported to userspace (&struct kverbs_ping_result).
 */
struct kverbs_fail {
	int error;		/* negative errno, 0 while nothing failed */
	u32 valid;		/* KVERBS_RESULT_* */
	u32 step;		/* enum kverbs_step */
	u32 wc_status;
	u32 vendor_err;
	u32 cm_event;
	s32 cm_status;
	u32 mismatch_offset;
};

/* device.c: RDMA devices and the objects that use them. */

struct kverbs_dev_user;

/**
 * struct kverbs_dev_user - something that holds verbs objects on a device
 * @node: entry in the device's user list
 * @dev: the device, valid from kverbs_dev_attach() until kverbs_dev_detach()
 * @port: the port it uses, 0 if it is not bound to one
 * @abort: called with -ENODEV when the device is being removed, or with
 *	-ENETDOWN when @port went down; under the device list lock: must
 *	not sleep, must make the owner let go of the device soon
 */
struct kverbs_dev_user {
	struct list_head node;
	struct kverbs_dev *dev;
	u32 port;
	void (*abort)(struct kverbs_dev_user *user, int error);
};

int kverbs_dev_attach(struct kverbs_dev_user *user, struct ib_device *ibdev,
		      u32 port);
void kverbs_dev_detach(struct kverbs_dev_user *user);
bool kverbs_dev_removing(const struct kverbs_dev_user *user);
void kverbs_dev_last_wqe_raised(struct kverbs_dev_user *user);
bool kverbs_dev_last_wqe_missing(struct kverbs_dev_user *user, bool waited);
void kverbs_dev_wait_port_up(struct kverbs_dev_user *user,
			     bool (*down)(struct kverbs_dev_user *user));
bool kverbs_dev_any_ud(void);
int kverbs_devices_register(void);
void kverbs_devices_unregister(void);
int kverbs_devices_cmd(struct kverbs_devices *cmd);

/* ep.c, listener.c, cm_event.c: connections. */

/*
 * rdma_cm delivers events for a listener, and for the connections it
 * spawns, to one handler; the context of each ID starts with its kind.
 */
enum kverbs_cm_kind {
	KVERBS_CM_EP,
	KVERBS_CM_LISTENER,
};

enum kverbs_ep_state {
	KVERBS_EP_IDLE,
	KVERBS_EP_ADDR_RESOLVED,
	KVERBS_EP_ROUTE_RESOLVED,
	KVERBS_EP_CONNECT_REQUEST,	/* server side, not yet accepted */
	KVERBS_EP_CONNECTED,
	KVERBS_EP_DISCONNECTED,
};

struct kverbs_listener;

/**
 * struct kverbs_cqe - the completion context of a work request, with its
 *	completion id
 * @cqe: what the work request's wr_cqe points to; its handler finds the
 *	work request's context with container_of() on it
 * @cid: the work request's number on its endpoint's CQ, given when it is
 *	posted
 * @ep: the endpoint it was posted on, set when it is posted: a handler's
 *	way to its endpoint, where the CQ may be a pool's, shared by many
 *	QPs and with no context of ours (kverbs_wc_ep())
 * @qp_num: 0, or the QP it was posted on where that is not its
 *	endpoint's: a perf UD end's datagram QP (perf_ud.c), which has a
 *	CQ and completion ids of its own
 *
 * As xprtrdma's &struct rpc_rdma_cid: the trace of a post and the trace
 * of its completion show the same CQ id and @cid, so a reader pairs them
 * (the completion's CQ id is the CQ's own, which its handler is given).
 * kverbs_post_send() and kverbs_post_recv() fill @cid in, for signaled
 * work requests and receives: a context that unsignaled ones share with
 * a signaled one (an rdma_rw chain, a perf window) keeps the signaled
 * one's, which is what completes.  An unsignaled work request's id is in
 * the trace of its post only; should it fail, its completion shows the
 * id of the last signaled one posted with its context (0 if none was).
 */
struct kverbs_cqe {
	struct ib_cqe cqe;
	u32 cid;
	struct kverbs_ep *ep;
	u32 qp_num;
};

/**
 * struct kverbs_drain_marker - the work request that marks the end of a
 *	queue being drained, on one queue of one endpoint
 * @cqe: its completion context
 * @done: completed once by each marker that completes, as the last thing
 *	its handler does (kverbs_drain_marker_done()): the waiter that
 *	takes it may free the endpoint at once
 * @posted: markers posted on the queue, over the endpoint's life
 * @seen: ... whose completion a waiter took; the drain is over when it
 *	reaches @posted, so that a marker of an earlier drain that timed
 *	out and completes late cannot end a later drain early
 *
 * @posted and @seen belong to whoever drains: the test's thread, then the
 * work that parks the endpoint (kverbs_ep_park()), never both at once.
 */
struct kverbs_drain_marker {
	struct kverbs_cqe cqe;
	struct completion done;
	u32 posted;
	u32 seen;
};

/*
 * Private data an endpoint keeps from its peer: a connection request
 * carries at most 56 bytes on InfiniBand and RoCE (92 less rdma_cm's own
 * header), the smallest limit of the transports; what a test needs from
 * a reject fits as well.
 */
#define KVERBS_EP_PRIVATE_DATA_MAX	56

/**
 * enum kverbs_ep_flags - what an endpoint keeps apart from its failure
 * @KVERBS_EP_PORT_DOWN: its port went down, whatever failed first: no
 *	DREQ may be sent from it, and its rdma_cm ID is destroyed once the
 *	port is up again (kverbs_ep_destroy()).  Set by the port event, or
 *	by the test's thread when it finds the link down; never cleared.
 * @KVERBS_EP_PARKED: its drain did not end in time on a CQ of ib_core's
 *	pool, and its QP, CQ share and the test's memory are kept until it
 *	does, or the device goes (kverbs_ep_park()); set by the test's
 *	thread, before the endpoint is handed over.
 */
enum kverbs_ep_flags {
	KVERBS_EP_PORT_DOWN,
	KVERBS_EP_PARKED,
};

/**
 * struct kverbs_ep - one reliable connection, or one datagram end, and the
 *	verbs objects under it
 * @kind: KVERBS_CM_EP, see &enum kverbs_cm_kind
 * @id: the rdma_cm ID; its ->qp is the QP once created
 * @pd: protection domain
 * @cq: completion queue shared by send and receive queues
 * @cq_pool_cqe: the entries taken for the QP from @cq when it is a CQ of
 *	ib_core's pool (ib_cq_pool_get()), given back with it; 0 when @cq
 *	is the endpoint's own
 * @cq_id: @cq's restrack id, kept for the trace (0 before @cq exists)
 * @qp_num: the QP's number, kept for the trace (0 before the QP exists)
 * @max_inline: the inline data the QP holds, as the device made it; 0
 *	when none was asked for
 * @user: attachment to the device, for removal
 * @wait: woken on every CM event, completion and failure
 * @lock: protects @state, @fail and @listener
 * @state: where the connection stands
 * @fail: the first failure; later ones are consequences and not recorded
 * @listener: server side: the listener this request is queued on, or NULL
 *	once the server took it (or it never was a request)
 * @pending: entry in the listener's queue while @listener is set
 * @responder_resources: server side: what the client offered in its request
 * @initiator_depth: server side: what the client offered in its request
 * @private_data: server side: the private data of the client's request;
 *	client side: that of the server's accept once connected, or of its
 *	reject if it rejected us
 * @private_data_len: bytes in @private_data
 * @rnr_retry: rnr_retry_count this side offers in its connection request
 *	or reply: how often the *peer* resends a SEND that found no receive
 *	here (7, the default, for ever; a lesson sets 0)
 * @drained: the QP was drained and nothing was posted since: no
 *	completion handler runs any more.  Every post clears it (a wait
 *	that failed drains, and its caller may still post before it learns
 *	the test is over), so that the teardown drains once more.
 * @trace_id: the endpoint's number in the trace
 * @next_cid: the completion id of the last work request posted (see
 *	&struct kverbs_cqe); posts come from the test's thread only
 * @queued_at: server side: when the request was queued, in jiffies
 * @drain_sq: the marker kverbs_ep_drain() posts on the send queue
 * @drain_rq: ... and on the receive queue
 * @last_wqe: a QP on an SRQ: completed by each Last WQE Reached event
 * @last_wqe_seen: ... the drain took one: the QP takes no receive of the
 *	SRQ any more, and every one it took has completed
 * @modified: the drain moved the QP to the error state
 * @markers_posted: ... and posted its markers, every one the QP needs
 * @stopped: ... and then moved the QP to the reset state
 *	(kverbs_ep_stop()): it completes nothing more
 * @markers_cid: @next_cid when the last drain's markers were all posted,
 *	0 before: while nothing is posted after them, a later drain waits
 *	for them instead of posting more
 * @polled: the test's thread polls @cq itself (IB_POLL_DIRECT); set with
 *	@cq, kept after it is freed, for the handlers' wake-up
 *	(kverbs_ep_wake())
 * @flags: &enum kverbs_ep_flags, with set_bit() and test_bit()
 * @reap: releases the endpoint when that may wait long
 * @park: ... or, for a parked endpoint, once its drain is over
 * @held_by: the user a deferred release is charged to, meanwhile
 *	(kverbs_sessions_hold())
 * @release: frees what the test holds that its work requests name, once
 *	the device is done with it (kverbs_ep_set_release()); or NULL
 * @release_arg: ... what it frees
 * @pd_borrowed: @pd is an SRQ's, which the endpoint does not free
 * @srq_done: receives of an SRQ that completed on the QP, in order,
 *	until the test takes them (srq.c); under @lock
 * @ud_ah_attr: UD client: the server's address, from rdma_cm's
 *	RDMA_CM_EVENT_ESTABLISHED (its reference on the GID entry is
 *	dropped when the endpoint is released); valid once CONNECTED
 * @ud_qpn: UD client: the server's QP number, from the same event
 * @ud_qkey: UD client: the Q_Key to send with, from the same event
 * @ud_ah: UD: an address handle of the test's that outlives the QP; the
 *	drain's send marker needs one.  NULL while no send was posted.
 * @srq_allowed: a QP on an SRQ: the messages its peer may have sent so
 *	far (kverbs_srq_credit()); U64_MAX, no limit, before the first
 *	grant and elsewhere; under @lock
 * @srq_arrived: ... and those that completed on it; under @lock
 * @srq_node: ... in its SRQ's table of QPs, from the QP's creation until
 *	after its destruction (kverbs_srq_attach())
 * @srq_qp: ... the QP it is found by there, as a completion names it:
 *	compared, never followed
 */
struct kverbs_ep {
	enum kverbs_cm_kind kind;
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	u32 cq_pool_cqe;
	u32 cq_id;
	u32 qp_num;
	u32 max_inline;
	struct kverbs_dev_user user;
	wait_queue_head_t wait;
	spinlock_t lock;		/* protects state, fail, listener */
	enum kverbs_ep_state state;
	struct kverbs_fail fail;
	struct kverbs_listener *listener;
	struct list_head pending;
	u8 responder_resources;
	u8 initiator_depth;
	u8 private_data[KVERBS_EP_PRIVATE_DATA_MAX];
	u8 private_data_len;
	u8 rnr_retry;
	bool drained;
	bool polled;
	bool last_wqe_seen;
	bool modified;
	bool markers_posted;
	bool stopped;
	u32 markers_cid;
	u32 trace_id;
	u32 next_cid;
	unsigned long queued_at;
	struct kverbs_drain_marker drain_sq;
	struct kverbs_drain_marker drain_rq;
	struct completion last_wqe;
	unsigned long flags;
	struct work_struct reap;
	struct delayed_work park;
	struct kverbs_user *held_by;
	void (*release)(void *arg);
	void *release_arg;
	bool pd_borrowed;
	struct list_head srq_done;
	struct rdma_ah_attr ud_ah_attr;
	u32 ud_qpn;
	u32 ud_qkey;
	struct ib_ah *ud_ah;
	u64 srq_allowed;
	u64 srq_arrived;
	struct hlist_node srq_node;
	const struct ib_qp *srq_qp;
};

/**
 * struct kverbs_ep_caps - what a test needs from its QP
 * @max_send_wr: send work requests outstanding at once, not counting the
 *	ones rdma_rw contexts need and the drain
 * @max_recv_wr: receive work requests outstanding at once, not counting
 *	the drain
 * @max_send_sge: scatter/gather entries per send work request
 * @max_inline_data: bytes of data a send work request may carry inline
 *	(IB_SEND_INLINE), 0 if none
 * @max_rdma_ctxs: rdma_rw contexts in use at once, 0 if none
 * @poll_ctx: how completions are handled.  IB_POLL_DIRECT: the test
 *	polls the CQ itself with ib_process_cq_direct(), no interrupts, and
 *	no completion is seen unless it polls.  IB_POLL_SOFTIRQ (0, the
 *	default): handlers run in softirq context.  IB_POLL_WORKQUEUE,
 *	IB_POLL_UNBOUND_WORKQUEUE: in process context, on ib_core's
 *	workqueues.  Handlers wake the endpoint's waiters either way.
 * @cq_pool: take the CQ from ib_core's pool, shared with other QPs; not
 *	with IB_POLL_DIRECT
 * @cq_dim: the CQ must have adaptive interrupt moderation (cq->dim), else
 *	-EOPNOTSUPP; not with IB_POLL_DIRECT
 * @srq: the QP takes its receives from this SRQ, and has no receive
 *	queue of its own (@max_recv_wr must be 0); or NULL
 * @srq_pd: ... the SRQ's PD, which the QP and the test's memory use
 *	instead of a PD of the endpoint's own
 * @srq_wr: ... the SRQ's receives, every one of which may complete on
 *	this QP's CQ
 * @fill_sq: the test posts sends until the device refuses one, past
 *	@max_send_wr up to the depth the device gave the send queue (the
 *	unsignaled lesson): the CQ is sized for that depth, or the QP
 *	refused with -EINVAL
 */
struct kverbs_ep_caps {
	u32 max_send_wr;
	u32 max_recv_wr;
	u32 max_send_sge;
	u32 max_inline_data;
	u32 max_rdma_ctxs;
	enum ib_poll_context poll_ctx;
	bool cq_pool;
	bool cq_dim;
	struct ib_srq *srq;
	struct ib_pd *srq_pd;
	u32 srq_wr;
	bool fill_sq;
};

struct kverbs_ep *kverbs_ep_create(void);
struct kverbs_ep *kverbs_ep_create_ud(void);
int kverbs_ep_ud_mtu(struct kverbs_ep *ep);
void kverbs_ep_destroy(struct kverbs_ep *ep);
int kverbs_ep_resolve(struct kverbs_ep *ep, struct sockaddr *src,
		      struct sockaddr *dst, u64 timeout_ns);
int kverbs_ep_create_qp(struct kverbs_ep *ep, const struct kverbs_ep_caps *caps);
int kverbs_ep_connect_data(struct kverbs_ep *ep, u8 rd_atom, u64 timeout_ns,
			   const void *data, u8 len);
int kverbs_ep_connect_start(struct kverbs_ep *ep, u8 rd_atom,
			    const void *data, u8 len);
int kverbs_ep_wait_connected(struct kverbs_ep *ep, u64 timeout_ns);
int kverbs_ep_accept(struct kverbs_ep *ep, u64 timeout_ns);
int kverbs_ep_accept_data(struct kverbs_ep *ep, u64 timeout_ns,
			  const void *data, u8 len);
u8 kverbs_ep_private_data(struct kverbs_ep *ep, void *buf, size_t size);
void kverbs_ep_reject(struct kverbs_ep *ep);
void kverbs_ep_reject_data(struct kverbs_ep *ep, const void *data, u8 len);
void kverbs_ep_disconnect(struct kverbs_ep *ep);
void kverbs_ep_drain(struct kverbs_ep *ep);
void kverbs_ep_stop(struct kverbs_ep *ep);
bool kverbs_ep_quiesce(struct kverbs_ep *ep);
void kverbs_ep_set_release(struct kverbs_ep *ep, void (*release)(void *arg),
			   void *arg);
int kverbs_comp_vector(struct ib_device *ibdev);
void kverbs_cq_free(struct ib_cq *cq);
extern struct workqueue_struct *kverbs_wq;
int kverbs_ep_reap_init(void);
void kverbs_ep_reap_flush(void);
int kverbs_post_send(struct kverbs_ep *ep, struct ib_send_wr *wr,
		     enum kverbs_step step);
int kverbs_post_send_try(struct kverbs_ep *ep, struct ib_send_wr *wr);
int kverbs_post_recv(struct kverbs_ep *ep, struct ib_recv_wr *wr);
u32 kverbs_ep_next_cid(const struct kverbs_ep *ep);
int kverbs_ep_failed(struct kverbs_ep *ep, int error, enum kverbs_step step);
void kverbs_ep_wc_failed(struct kverbs_ep *ep, const struct ib_wc *wc,
			 enum kverbs_step step);
int kverbs_ep_bad_message(struct kverbs_ep *ep);
int kverbs_ep_mismatch(struct kverbs_ep *ep, u32 offset);
int kverbs_ep_imm_mismatch(struct kverbs_ep *ep, bool present);
int kverbs_ep_reset_cause(struct kverbs_ep *ep);
int kverbs_ep_timed_out(struct kverbs_ep *ep);
void kverbs_ep_fail_info(struct kverbs_ep *ep, struct kverbs_fail *fail);
long kverbs_ep_wait_timeout(u64 timeout_ns);
int kverbs_sockaddr_check(const struct __kernel_sockaddr_storage *ss,
			  bool need_port);

static inline struct ib_device *kverbs_ep_device(const struct kverbs_ep *ep)
{
	return ep->id->device;
}

static inline u32 kverbs_ep_port(const struct kverbs_ep *ep)
{
	return ep->id->port_num;
}

static inline int kverbs_ep_error(struct kverbs_ep *ep)
{
	return READ_ONCE(ep->fail.error);
}

/*
 * A completion handler changed what a waiting thread's condition reads:
 * wake it, unless it is that thread, polling its CQ (IB_POLL_DIRECT).
 * Only the endpoint is read, never its CQ, which the teardown may have
 * given back to ib_core's pool while a handler of a parked endpoint runs.
 * From softirq context or a workqueue's process context alike.
 */
static inline void kverbs_ep_wake(struct kverbs_ep *ep)
{
	if (!READ_ONCE(ep->polled))
		wake_up(&ep->wait);
}

/*
 * The endpoint a completion belongs to, from its work request's context:
 * a CQ of ib_core's pool carries many endpoints' QPs and no context of
 * ours, so every handler finds its endpoint this way.
 */
static inline struct kverbs_ep *kverbs_wc_ep(const struct ib_wc *wc)
{
	return container_of(wc->wr_cqe, struct kverbs_cqe, cqe)->ep;
}

/*
 * The number of the QP a completion belongs to, from its context or its
 * endpoint: not wc->qp, which a completion polled after a drain that
 * timed out (kverbs_ep_quiesce()) may still name once that QP is
 * destroyed.
 */
static inline u32 kverbs_wc_qp_num(const struct ib_wc *wc)
{
	const struct kverbs_cqe *kc = container_of(wc->wr_cqe, struct kverbs_cqe, cqe);

	return kc->qp_num ?: READ_ONCE(kc->ep->qp_num);
}

/*
 * A completion handler records what it learned (a received length, say)
 * and then sets a done flag; the test's thread reads the flag, then what
 * was recorded.  Release and acquire order the two sides.
 */
static inline void kverbs_set_done(bool *done)
{
	/* Pairs with the acquire in kverbs_is_done(). */
	smp_store_release(done, true);
}

static inline bool kverbs_is_done(const bool *done)
{
	/* Pairs with the release in kverbs_set_done(). */
	return smp_load_acquire(done);
}

#define __kverbs_ep_wait(ep, cond, timeout, wait_fn)			\
({									\
	long __ret = wait_fn((ep)->wait, (cond) || kverbs_ep_error(ep),	\
			     (timeout));				\
	int __err;							\
									\
	if (cond)							\
		__err = 0;						\
	else if (kverbs_ep_error(ep))					\
		__err = kverbs_ep_reset_cause(ep);			\
	else if (__ret == 0)						\
		__err = kverbs_ep_timed_out(ep);			\
	else								\
		__err = -EINTR;						\
	__err;								\
})

/**
 * kverbs_ep_wait - wait for a condition on an endpoint, within a step
 * @ep: the endpoint whose wait queue is woken when @cond may change
 * @cond: the condition
 * @timeout: in jiffies, from kverbs_ep_wait_timeout()
 *
 * Only a fatal signal interrupts this wait: a test checks for other
 * signals between iterations, so that SIGINT ends a ping where the peer
 * sees a clean end.  The time limit keeps the wait short either way.
 *
 * Returns 0 once @cond is true; otherwise the endpoint's error if it
 * failed, -ETIMEDOUT when @timeout passed (-ENETDOWN if the port went
 * down meanwhile: kverbs_ep_timed_out()) and -EINTR on a fatal signal.
 */
#define kverbs_ep_wait(ep, cond, timeout)				\
	__kverbs_ep_wait(ep, cond, timeout, wait_event_killable_timeout)

/**
 * kverbs_ep_wait_interruptible - wait at a boundary: set-up, a new iteration
 * @ep: the endpoint
 * @cond: the condition
 * @timeout: in jiffies
 *
 * As kverbs_ep_wait(), but any signal ends the wait with -EINTR.
 */
#define kverbs_ep_wait_interruptible(ep, cond, timeout)			\
	__kverbs_ep_wait(ep, cond, timeout, wait_event_interruptible_timeout)

/**
 * enum kverbs_listener_state - where a listener is in its life
 * @KVERBS_LISTENER_SETUP: kverbs_listener_create() is still at work on
 *	the ID; a failure meanwhile is left to it
 * @KVERBS_LISTENER_LIVE: listening
 * @KVERBS_LISTENER_DEAD: its owner is destroying it: no work item may be
 *	queued for it any more
 */
enum kverbs_listener_state {
	KVERBS_LISTENER_SETUP,
	KVERBS_LISTENER_LIVE,
	KVERBS_LISTENER_DEAD,
};

/**
 * struct kverbs_listener - a listening rdma_cm ID and its pending requests
 * @kind: KVERBS_CM_LISTENER, see &enum kverbs_cm_kind
 * @trace_id: the listener's number in the trace, from the endpoints' series
 * @id: the listening ID
 * @user: attachment to the device when bound to one address of one device
 * @wait: woken when a request arrives or the listener fails
 * @lock: protects @pending, @npending, @error and @state
 * @pending: &kverbs_ep.pending of requests not yet taken, oldest first
 * @npending: length of @pending
 * @error: the listener's failure, 0 while it works
 * @shared: a file's listener (KVERBS_IOC_LISTEN), which lives until the
 *	file is closed; if its device goes away, @release lets go of the
 *	device at once instead of when no server happens to wait on it
 * @state: &enum kverbs_listener_state
 * @timeout: how long a request may wait for a server, in jiffies
 * @release: destroys @id and detaches, for @shared
 * @expire: rejects the requests that waited longer than @timeout
 * @srqs: the SRQs its servers share, one per device (srq.c), under
 *	kverbs_srq_lock
 */
struct kverbs_listener {
	enum kverbs_cm_kind kind;
	u32 trace_id;
	struct rdma_cm_id *id;
	struct kverbs_dev_user user;
	wait_queue_head_t wait;
	spinlock_t lock;		/* protects pending, npending, error, state */
	struct list_head pending;
	unsigned int npending;
	int error;
	bool shared;
	enum kverbs_listener_state state;
	unsigned long timeout;
	struct work_struct release;
	struct delayed_work expire;
	struct list_head srqs;
};

struct kverbs_listener *kverbs_listener_create(struct sockaddr *addr,
					       bool shared, u64 timeout_ns);
struct kverbs_listener *kverbs_listener_create_ud(struct sockaddr *addr,
						  u64 timeout_ns);
void kverbs_listener_destroy(struct kverbs_listener *lsn);
/* srq.c: the SRQs a file's listener keeps for its servers. */
void kverbs_srq_release_all(struct kverbs_listener *lsn);
struct kverbs_ep *kverbs_listener_accept(struct kverbs_listener *lsn);
struct kverbs_ep *kverbs_listener_accept_timeout(struct kverbs_listener *lsn,
						 long timeout);

/* srq.c: shared receive queues, which servers' sessions share. */

/**
 * struct kverbs_srq_recv - one receive of a shared receive queue
 * @cqe: its completion; @cqe.ep is set when it completes, to the
 *	endpoint of the QP that took it
 * @srq: the SRQ it belongs to
 * @node: on &kverbs_ep.srq_done once completed
 * @buf: the bytes, DMA-mapped at @dma for the device to write
 * @dma: ... their DMA address
 * @status: the completion's status, @vendor_err its vendor error
 * @vendor_err: ...
 * @byte_len: what arrived, with @opcode, @wc_flags, @imm (host order)
 *	and @inv_rkey as &kverbs_perf_recv has them
 * @opcode: ...
 * @wc_flags: ...
 * @imm: ...
 * @inv_rkey: ...
 */
struct kverbs_srq_recv {
	struct kverbs_cqe cqe;
	struct kverbs_srq *srq;
	struct list_head node;
	void *buf;
	u64 dma;
	u32 status;
	u32 vendor_err;
	u32 byte_len;
	u32 opcode;
	u32 wc_flags;
	u32 imm;
	u32 inv_rkey;
};

/*
 * A session's window is at most this fraction of the SRQ's receives
 * (kverbs_srq_reserve()).
 */
#define KVERBS_SRQ_SHARES	4

/**
 * struct kverbs_srq - a shared receive queue, its PD and its receives
 *	(srq.c says who owns it)
 * @ref: the list's, each session's, a pending @remove's
 * @node: in &kverbs_listener.srqs while @listed
 * @listed: on a file's listener's list; under kverbs_srq_lock
 * @shared: made for a file's listener, not for one session
 * @flags: KVERBS_SRQ_REMOVING
 * @ibdev: its device
 * @user: its attachment to the device
 * @remove: takes it off the list after its device's removal began
 * @pd: the PD it, and every QP on it, belongs to
 * @srq: the queue
 * @wr: receives it holds
 * @limit: the limit armed, 0 for none
 * @recv_len: bytes of each receive
 * @recvs: the @wr receives
 * @pin_user: the user their memory is charged to (kverbs_pin_account())
 * @pin_pages: ... and how many pages
 * @posted: receives in the SRQ now
 * @armed: the limit is armed
 * @arm_lock: serializes arming it
 * @limit_events: IB_EVENT_SRQ_LIMIT_REACHED events
 * @qps: QPs that have used it
 * @next_cid: the number of the next receive posted, for the trace
 * @reserved: iWARP: the receives the sessions' windows hold
 *	(kverbs_srq_reserve()); under kverbs_srq_lock
 * @lost: ... and those no window may count on any more; under
 *	kverbs_srq_lock
 * @lock: protects @sessions and @orphans; taken in the receive completions'
 *	handler
 * @sessions: the endpoints of the QPs on it, by QP (kverbs_srq_attach())
 * @orphans: receives that completed on a QP no longer in @sessions, to be
 *	posted again from process context (kverbs_srq_give_back())
 */
struct kverbs_srq {
	struct kref ref;
	struct list_head node;
	bool listed;
	bool shared;
	unsigned long flags;
	struct ib_device *ibdev;
	struct kverbs_dev_user user;
	struct work_struct remove;
	struct ib_pd *pd;
	struct ib_srq *srq;
	u32 wr;
	u32 limit;
	u32 recv_len;
	struct kverbs_srq_recv *recvs;
	struct kverbs_user *pin_user;
	u64 pin_pages;
	atomic_t posted;
	atomic_t armed;
	struct mutex arm_lock;		/* serializes ib_modify_srq() */
	atomic64_t limit_events;
	atomic_t qps;
	atomic_t next_cid;
	u32 reserved;
	u32 lost;
	spinlock_t lock;		/* protects sessions, orphans */
	DECLARE_HASHTABLE(sessions, 4);
	struct list_head orphans;
};

struct kverbs_srq *kverbs_srq_get(struct kverbs_listener *lsn, struct ib_device *ibdev,
				  u32 wr, u32 limit, u32 recv_len);
void kverbs_srq_put(struct kverbs_srq *srq);
int kverbs_srq_post(struct kverbs_srq *srq, struct kverbs_srq_recv *r);
struct kverbs_srq_recv *kverbs_srq_take(struct kverbs_ep *ep);
bool kverbs_srq_ready(struct kverbs_ep *ep);
void kverbs_srq_give_back(struct kverbs_srq *srq, struct kverbs_ep *ep);
void kverbs_srq_attach(struct kverbs_srq *srq, struct kverbs_ep *ep);
void kverbs_srq_detach(struct kverbs_srq *srq, struct kverbs_ep *ep);
void kverbs_srq_close(struct kverbs_ep *ep);
int kverbs_srq_reserve(struct kverbs_srq *srq, u32 want, u32 *window);
void kverbs_srq_unreserve(struct kverbs_srq *srq, u32 window, bool lost);
void kverbs_srq_credit(struct kverbs_ep *ep, u64 n);

/* mr.c: memory. */

/**
 * struct kverbs_buf - a data buffer for RDMA
 * @len: bytes in use; the sg table describes exactly these
 * @npages: pages allocated, enough for @len
 * @accounted: pages counted against max_pinned_mb
 * @user: whom @accounted is charged to, NULL while nothing is
 * @pages: the pages
 * @vaddr: contiguous kernel mapping of @pages for the CPU
 * @sgt: scatter/gather table of the first @len bytes
 * @ibdev: device @sgt is DMA-mapped for by kverbs_buf_map(), or NULL
 * @dir: direction of that mapping
 * @mr: fast-registration MR mapping @sgt, or NULL
 * @trace_cq_id: the CQ id of the endpoint @mr was allocated for, which
 *	its trace events carry so that one QP's can be picked out
 * @reg_cqe: completion of its registration
 * @inv_cqe: completion of its invalidation
 * @reg_done: the last registration completed
 * @inv_done: a signaled invalidation completed
 * @cpu_lo: the first byte the CPU synced for itself and did not give
 *	back to the device (mr.c's DMA ownership), or equal to @cpu_hi
 * @cpu_hi: one past the last such byte
 */
struct kverbs_buf {
	size_t len;
	unsigned int npages;
	unsigned long accounted;
	struct kverbs_user *user;
	struct page **pages;
	void *vaddr;
	struct sg_table sgt;
	struct ib_device *ibdev;
	enum dma_data_direction dir;
	struct ib_mr *mr;
	u32 trace_cq_id;
	struct kverbs_cqe reg_cqe;
	struct kverbs_cqe inv_cqe;
	bool reg_done;
	bool inv_done;
	size_t cpu_lo;
	size_t cpu_hi;
};

int kverbs_buf_alloc(struct kverbs_buf *buf, size_t len);
int kverbs_buf_resize(struct kverbs_buf *buf, size_t len);
void kverbs_buf_free(struct kverbs_buf *buf);
unsigned int kverbs_buf_sg_pages(const struct kverbs_buf *buf, size_t off, u32 len,
				 struct scatterlist *sgl);
int kverbs_buf_map(struct kverbs_buf *buf, struct kverbs_ep *ep,
		   enum dma_data_direction dir);
void kverbs_buf_sync_for_cpu(struct kverbs_buf *buf);
void kverbs_buf_sync_range_for_cpu(struct kverbs_buf *buf, size_t offset,
				   size_t len);
void kverbs_buf_sync_range_for_device(struct kverbs_buf *buf, size_t offset,
				      size_t len);
void kverbs_buf_sync_for_device(struct kverbs_buf *buf);
void kverbs_buf_check_device(struct kverbs_buf *buf, size_t offset, size_t len);
void kverbs_buf_reg_wr(struct kverbs_buf *buf, struct ib_reg_wr *wr, int access);
void kverbs_buf_inv_wr(struct kverbs_buf *buf, struct ib_send_wr *wr,
		       bool signaled);
unsigned int kverbs_max_reg_size(struct ib_device *ibdev);

/**
 * struct kverbs_msg - a small control message buffer
 * @buf: the message, kmalloc'ed
 * @len: its size
 * @dma: its DMA address
 * @ibdev: the device it is mapped for
 * @dir: DMA_TO_DEVICE for sends, DMA_FROM_DEVICE for receives
 * @sge: describes @buf with the PD's local DMA lkey
 * @cqe: completion of the work request that uses it
 * @done: that work request completed successfully
 * @byte_len: receives: bytes received
 * @invalidated: receives: the sender's SEND with invalidate invalidated
 *	one of our keys (IB_WC_WITH_INVALIDATE) ...
 * @inv_rkey: ... this one
 */
struct kverbs_msg {
	void *buf;
	size_t len;
	u64 dma;
	struct ib_device *ibdev;
	enum dma_data_direction dir;
	struct ib_sge sge;
	struct kverbs_cqe cqe;
	bool done;
	u32 byte_len;
	bool invalidated;
	u32 inv_rkey;
};

int kverbs_msg_alloc(struct kverbs_msg *msg, struct ib_pd *pd, size_t len,
		     enum dma_data_direction dir);
void kverbs_msg_free(struct kverbs_msg *msg);
int kverbs_msg_post_recv(struct kverbs_msg *msg, struct kverbs_ep *ep);
void kverbs_msg_send_wr(struct kverbs_msg *msg, struct ib_send_wr *wr);
void kverbs_msg_sync_for_cpu(struct kverbs_msg *msg);

/* test.c: what every test (ping, perf) does alike */

/**
 * struct kverbs_test - the part of a test run that is the same for all
 * @timeout_ns: limit on each step
 * @addr: client: where to connect; server: where to listen
 * @src: client: local address, valid if @have_src
 * @have_src: @src was given
 * @fail: the first failure, which goes back to userspace in the result
 */
struct kverbs_test {
	u64 timeout_ns;
	struct sockaddr_storage addr;
	struct sockaddr_storage src;
	bool have_src;
	struct kverbs_fail fail;
};

u64 kverbs_test_timeout_ns(void);
u32 kverbs_test_max_msg_size(void);
int kverbs_test_parse(struct kverbs_test *t, bool server, u64 timeout_ns,
		      const struct __kernel_sockaddr_storage *addr,
		      const struct __kernel_sockaddr_storage *src);
int kverbs_test_failed(struct kverbs_test *t, int error, enum kverbs_step step);
void kverbs_test_fail(struct kverbs_test *t, struct kverbs_ep *ep, int error);
struct kverbs_ep *kverbs_test_ep_create(struct kverbs_test *t);
int kverbs_test_resolve(struct kverbs_test *t, struct kverbs_ep *ep);
struct kverbs_listener *kverbs_test_listen(struct kverbs_test *t);
struct kverbs_ep *kverbs_test_ep_create_ud(struct kverbs_test *t);
struct kverbs_listener *kverbs_test_listen_ud(struct kverbs_test *t);
void kverbs_test_accept_failed(struct kverbs_test *t, int error);

/**
 * kverbs_test_report - put a test's outcome into its uAPI result
 * @res: &struct kverbs_ping_result or &struct kverbs_perf_result, which
 *	name their failure fields alike
 * @t: the test
 * @ret: what the test returned
 *
 * An allocation that failed where no step was being recorded is still a
 * failure to set up, and the result says so.
 */
#define kverbs_test_report(res, t, ret)					\
do {									\
	const struct kverbs_fail *__f = &(t)->fail;			\
	typeof(res) __r = (res);					\
									\
	if (__f->error) {						\
		__r->error = __f->error;				\
		__r->failed_step = __f->step;				\
		__r->valid = __f->valid;				\
		__r->wc_status = __f->wc_status;			\
		__r->vendor_err = __f->vendor_err;			\
		__r->cm_event = __f->cm_event;				\
		__r->cm_status = __f->cm_status;			\
		__r->mismatch_offset = __f->mismatch_offset;		\
	} else if ((ret) == -ENOMEM) {					\
		__r->error = -ENOMEM;					\
		__r->failed_step = KVERBS_STEP_SETUP;			\
	}								\
} while (0)


/**
 * struct kverbs_ubuf - user memory a test writes while it runs (ubuf.c)
 * @pages: the pinned pages
 * @npages: how many are pinned
 * @accounted: pages counted against max_pinned_mb
 * @user: whom @accounted is charged to, NULL while nothing is
 * @vaddr: a kernel mapping of @pages
 * @kaddr: the first byte of the range in that mapping
 * @mm: the caller's mm, whose pinned_vm holds @charged pages
 *	(RLIMIT_MEMLOCK), or NULL
 * @charged: ...
 */
struct kverbs_ubuf {
	struct page **pages;
	unsigned int npages;
	unsigned long accounted;
	struct kverbs_user *user;
	struct mm_struct *mm;
	u64 charged;
	void *vaddr;
	void *kaddr;
};

int kverbs_ubuf_pin(struct kverbs_ubuf *ub, u64 uaddr, u64 len);
void kverbs_ubuf_written(struct kverbs_ubuf *ub, void *p, size_t len);
void kverbs_ubuf_unpin(struct kverbs_ubuf *ub);

/*
 * mr.c: memory all tests hold for RDMA, against max_pinned_mb, and
 * each user's against max_pinned_mb_per_user
 */
struct kverbs_user;
int kverbs_pin_account(struct kverbs_user **user, u64 npages);
void kverbs_pin_unaccount(struct kverbs_user *user, unsigned long npages);

/* user.c: what each user's tests hold, against the per-user limits */
struct kverbs_user *kverbs_user_session_begin(void);
void kverbs_user_session_end(struct kverbs_user *user);
struct kverbs_user *kverbs_user_pin(unsigned long npages);
void kverbs_user_unpin(struct kverbs_user *user, unsigned long npages);
int kverbs_sessions_get(void);
struct kverbs_user *kverbs_sessions_hold(struct kverbs_user *as);
void kverbs_sessions_put(void);
void kverbs_sessions_release(struct kverbs_user *user);
void kverbs_users_exit(void);

/* fault.c: the debug lane's fault points (fault.h), for main.c. */
#ifdef KVERBS_FAULTS
int kverbs_faults_init(void);
void kverbs_faults_exit(void);
#else
static inline int kverbs_faults_init(void)
{
	return 0;
}

static inline void kverbs_faults_exit(void)
{
}
#endif

#endif /* _KVERBS_H */
