// SPDX-License-Identifier: GPL-2.0
/*
 * The listener: a listening rdma_cm ID and the connection requests that
 * wait for a server to take them.
 *
 * Owner and release: a server test owns the listener it made, and a file
 * the one KVERBS_IOC_LISTEN made; kverbs_listener_destroy() is the one
 * release, called by that owner.  Two things act on a listener besides:
 *
 *  - device removal (kverbs_listener_abort(), under kverbs_dev_lock): a
 *    file's listener may have no server waiting on it whose wake-up
 *    would let go of the device, so the abort queues @release, which
 *    destroys the ID and detaches;
 *  - @expire, which rejects requests that waited longer than the step
 *    limit for a server.
 *
 * Neither may be armed once the owner has begun to destroy the listener:
 * kverbs_listener_destroy() marks it DEAD under @lock, and only then
 * flushes both; the abort and the expiry check the state under the same
 * lock before they queue anything.  So after the flush nothing is
 * queued, nothing runs, and the memory can go.
 *
 * A file's listener also keeps the SRQs its servers share, one per
 * device (@srqs; srq.c has their rules): its destruction drops the
 * list's references, after every server of the file has ended.
 */
#include "cm.h"
#include "trace.h"

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>

/* Connection requests a listener queues while its server is busy. */
#define KVERBS_LISTEN_BACKLOG	8

/* INADDR_ANY or in6addr_any: listen on every address. */
static bool kverbs_sockaddr_is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/**
 * kverbs_listener_abort - the device of a listener bound to it is going away
 * @user: the listener's attachment
 * @error: -ENODEV
 *
 * Called under kverbs_dev_lock, or from the listener's event handler:
 * must not sleep.  A server's own listener is destroyed by the server,
 * which the wake-up ends.  A file's may have no server waiting on it,
 * and the device's removal waits for it: @release lets go of the device
 * from a work item.  Not while kverbs_listener_create() is still at work
 * on the ID (it sees @error once it is done and lets go itself), and
 * never once the owner is destroying the listener (DEAD).
 */
void kverbs_listener_abort(struct kverbs_dev_user *user, int error)
{
	struct kverbs_listener *lsn = container_of(user, struct kverbs_listener, user);
	unsigned long flags;

	spin_lock_irqsave(&lsn->lock, flags);
	if (!lsn->error)
		lsn->error = error;
	if (lsn->shared && lsn->state == KVERBS_LISTENER_LIVE)
		queue_work(kverbs_wq, &lsn->release);
	spin_unlock_irqrestore(&lsn->lock, flags);
	wake_up(&lsn->wait);
}

/**
 * kverbs_listener_request - queue a connection request for a server
 * @lsn: the listener
 * @id: the request's new rdma_cm ID
 * @event: RDMA_CM_EVENT_CONNECT_REQUEST
 *
 * In the listener's event handler.
 *
 * Return: 0 once queued, or non-zero
 * after rejecting it (the queue is full, the listener failed, no
 * memory): rdma_cm then destroys @id.
 */
int kverbs_listener_request(struct kverbs_listener *lsn, struct rdma_cm_id *id,
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
		ep->queued_at = jiffies;
		kverbs_ep_keep_private_data(ep, event);

		spin_lock_irqsave(&lsn->lock, flags);
		if (!lsn->error && lsn->state != KVERBS_LISTENER_DEAD &&
		    lsn->npending < KVERBS_LISTEN_BACKLOG) {
			ep->listener = lsn;
			id->context = &ep->kind;
			list_add_tail(&ep->pending, &lsn->pending);
			lsn->npending++;
			queued = true;
			/* The oldest request's deadline, if none is armed. */
			queue_delayed_work(kverbs_wq, &lsn->expire, lsn->timeout);
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

/*
 * A request taken off the queue is the taker's: from here on its events
 * no longer drop it.  It may come back with ->id NULL: it died while
 * queued, rdma_cm destroyed its ID and only the memory is left to free.
 */
static struct kverbs_ep *kverbs_listener_take(struct kverbs_ep *ep)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	ep->listener = NULL;
	spin_unlock_irqrestore(&ep->lock, flags);
	return ep;
}

/* Take the first queued request off the listener, or NULL if none is. */
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
	return ep ? kverbs_listener_take(ep) : NULL;
}

/* Turn down a request nobody will serve, and free it. */
static void kverbs_listener_drop(struct kverbs_ep *ep)
{
	if (ep->id)
		kverbs_ep_reject(ep);
	kverbs_ep_destroy(ep);
}

/*
 * Requests wait for a server at most one step limit: their clients give
 * up connecting after that long, and a server that takes one later would
 * accept a connection nobody waits for.  The queue is in arrival order,
 * so the work takes the expired ones off its head, and comes back when
 * the next one expires; never once the listener is DEAD.
 */
static void kverbs_listener_expire_work(struct work_struct *work)
{
	struct kverbs_listener *lsn = container_of(to_delayed_work(work),
						   struct kverbs_listener, expire);
	struct kverbs_ep *ep, *tmp;
	unsigned long now = jiffies, flags;
	LIST_HEAD(expired);

	spin_lock_irqsave(&lsn->lock, flags);
	list_for_each_entry_safe(ep, tmp, &lsn->pending, pending) {
		if (time_before(now, ep->queued_at + lsn->timeout)) {
			if (lsn->state != KVERBS_LISTENER_DEAD)
				queue_delayed_work(kverbs_wq, &lsn->expire,
						   ep->queued_at + lsn->timeout - now);
			break;
		}
		list_move_tail(&ep->pending, &expired);
		lsn->npending--;
	}
	spin_unlock_irqrestore(&lsn->lock, flags);

	list_for_each_entry_safe(ep, tmp, &expired, pending) {
		list_del_init(&ep->pending);
		kverbs_listener_take(ep);
		pr_debug("listener %u: no server took a request within its time\n",
			 lsn->trace_id);
		kverbs_listener_drop(ep);
	}
}

/*
 * Stop listening: destroy the ID, reject what is still queued, and let go
 * of the device.  Run by @release after a device removal, or by the
 * owner (@owner) once @release cannot run any more; the second call finds
 * no ID.
 */
static void kverbs_listener_release(struct kverbs_listener *lsn, bool owner)
{
	struct kverbs_ep *ep;

	if (!lsn->id)
		return;
	trace_kverbs_listener_release(lsn->trace_id, owner);
	/* After this no request can be queued any more. */
	rdma_destroy_id(lsn->id);
	lsn->id = NULL;
	while ((ep = kverbs_listener_pop(lsn)))
		kverbs_listener_drop(ep);
	kverbs_dev_detach(&lsn->user);
}

static void kverbs_listener_release_work(struct work_struct *work)
{
	kverbs_listener_release(container_of(work, struct kverbs_listener, release),
				false);
}

/*
 * The one way a listener ends, for its owner: mark it DEAD, so that
 * neither the abort nor the expiry arms a work item again; then flush
 * both; only then release and free.
 */
static void kverbs_listener_shutdown(struct kverbs_listener *lsn)
{
	unsigned long flags;

	spin_lock_irqsave(&lsn->lock, flags);
	lsn->state = KVERBS_LISTENER_DEAD;
	spin_unlock_irqrestore(&lsn->lock, flags);
	/*
	 * Both works only destroy IDs and endpoints that never connected:
	 * their waits are those of kverbs_listener_release() and
	 * kverbs_ep_destroy(), each bounded by ib_cm's own timers.
	 */
	cancel_work_sync(&lsn->release);
	cancel_delayed_work_sync(&lsn->expire);
	kverbs_listener_release(lsn, true);
	kverbs_srq_release_all(lsn);
	kfree(lsn);
}

/* The listener in port space @ps, for QPs of type @qpt; see below. */
static struct kverbs_listener *
kverbs_listener_create_ps(struct sockaddr *addr, bool shared, u64 timeout_ns,
			  enum rdma_ucm_port_space ps, enum ib_qp_type qpt)
{
	struct kverbs_listener *lsn;
	unsigned long flags;
	int ret;

	lsn = kzalloc(sizeof(*lsn), GFP_KERNEL_ACCOUNT);
	if (!lsn)
		return ERR_PTR(-ENOMEM);
	lsn->kind = KVERBS_CM_LISTENER;
	lsn->trace_id = kverbs_trace_id_next();
	lsn->user.abort = kverbs_listener_abort;
	lsn->shared = shared;
	lsn->state = KVERBS_LISTENER_SETUP;
	lsn->timeout = kverbs_ep_wait_timeout(timeout_ns);
	INIT_WORK(&lsn->release, kverbs_listener_release_work);
	INIT_DELAYED_WORK(&lsn->expire, kverbs_listener_expire_work);
	init_waitqueue_head(&lsn->wait);
	spin_lock_init(&lsn->lock);
	INIT_LIST_HEAD(&lsn->pending);
	INIT_LIST_HEAD(&lsn->srqs);

	lsn->id = rdma_create_id(current->nsproxy->net_ns, kverbs_cm_handler,
				 &lsn->kind, ps, qpt);
	if (IS_ERR(lsn->id)) {
		ret = PTR_ERR(lsn->id);
		lsn->id = NULL;
		goto out_shutdown;
	}
	/*
	 * An IPv6 wildcard takes IPv4 clients too, whatever
	 * net.ipv6.bindv6only says: '::' is how the tools listen on
	 * every address of either family.
	 */
	if (addr->sa_family == AF_INET6 && kverbs_sockaddr_is_any(addr)) {
		ret = rdma_set_afonly(lsn->id, 0);
		if (ret)
			goto out_shutdown;
	}
	ret = rdma_bind_addr(lsn->id, addr);
	/*
	 * rdma_cm says -EADDRNOTAVAIL when a wildcard's port is taken; but
	 * a wildcard is always available, only its port can be in use.
	 */
	if (ret == -EADDRNOTAVAIL && kverbs_sockaddr_is_any(addr))
		ret = -EADDRINUSE;
	if (ret)
		goto out_shutdown;
	/*
	 * Datagrams need the IB CM's service ID resolution, which iWARP
	 * lacks: refuse before listening, where rdma_cm would listen for
	 * TCP connections on the iWARP device instead.  On a wildcard,
	 * refuse only when no device could take a UD client at all.
	 */
	if (qpt == IB_QPT_UD &&
	    (lsn->id->device ? !rdma_cap_ib_cm(lsn->id->device, lsn->id->port_num) :
			       !kverbs_dev_any_ud())) {
		ret = -EOPNOTSUPP;
		goto out_shutdown;
	}
	/* Bound to one device's address: removal of that device ends it. */
	if (lsn->id->device) {
		ret = kverbs_dev_attach(&lsn->user, lsn->id->device, 0);
		if (ret)
			goto out_shutdown;
	}
	ret = rdma_listen(lsn->id, KVERBS_LISTEN_BACKLOG);
	if (ret)
		goto out_shutdown;
	/* A removal that came meanwhile left the listener to us. */
	spin_lock_irqsave(&lsn->lock, flags);
	ret = lsn->error;
	if (!ret)
		lsn->state = KVERBS_LISTENER_LIVE;
	spin_unlock_irqrestore(&lsn->lock, flags);
	if (ret)
		goto out_shutdown;
	return lsn;

out_shutdown:
	/* The ID before the device: detaching lets the device go. */
	kverbs_listener_shutdown(lsn);
	return ERR_PTR(ret);
}

/**
 * kverbs_listener_create - bind to @addr and listen
 * @addr: local address and port; the address may be a wildcard
 * @shared: for a file (KVERBS_IOC_LISTEN), any number of servers taking
 *	their clients from it; else for one server
 * @timeout_ns: how long a connection request may wait for a server
 *
 * The ID is created in the caller's network namespace: a process can
 * only listen on the addresses it can see.  Process context.
 *
 * Return: the listener or an ERR_PTR: -EADDRINUSE when the port is taken,
 * -EADDRNOTAVAIL when @addr is not a local address of the caller's
 * network namespace.
 */
struct kverbs_listener *kverbs_listener_create(struct sockaddr *addr,
					       bool shared, u64 timeout_ns)
{
	return kverbs_listener_create_ps(addr, shared, timeout_ns, RDMA_PS_TCP,
					 IB_QPT_RC);
}

/**
 * kverbs_listener_create_ud - listen for datagram clients on @addr
 * @addr: local address and port; the address may be a wildcard
 * @timeout_ns: how long a request may wait for a server
 *
 * As kverbs_listener_create() for one server, in rdma_cm's UDP port
 * space: each request is a SIDR REQ, answered by the server's
 * kverbs_ep_accept() with its UD QP's number.
 *
 * Return: the listener or an ERR_PTR, as kverbs_listener_create(), and
 * -EOPNOTSUPP when @addr is an iWARP device's, or a wildcard while no
 * device has a port with an IB CM.
 */
struct kverbs_listener *kverbs_listener_create_ud(struct sockaddr *addr,
						  u64 timeout_ns)
{
	return kverbs_listener_create_ps(addr, false, timeout_ns, RDMA_PS_UDP,
					 IB_QPT_UD);
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
 * kverbs_listener_accept_timeout - wait for the next connection request
 * @lsn: the listener
 * @timeout: the longest wait, in jiffies, MAX_SCHEDULE_TIMEOUT for none
 *
 * Waits until a client connects, a signal arrives, the device of a
 * listener bound to one goes away, or @timeout passed.  A server passes
 * MAX_SCHEDULE_TIMEOUT: waiting for a client is what a server is for,
 * and nothing is held meanwhile.
 *
 * Return: the new connection's endpoint, attached to its device
 * but not yet accepted, or an ERR_PTR: -EINTR on a signal, -ENODEV when
 * the listener's device went away, -ETIMEDOUT.  If the endpoint cannot be attached it
 * comes back rejected and failed, for the caller to count and destroy.
 */
struct kverbs_ep *kverbs_listener_accept_timeout(struct kverbs_listener *lsn,
						 long timeout)
{
	struct kverbs_ep *ep;
	int ret, error;
	long left;

	for (;;) {
		left = wait_event_interruptible_timeout(lsn->wait,
							kverbs_listener_ready(lsn, &error),
							timeout);
		if (left < 0)
			return ERR_PTR(-EINTR);
		if (!left)
			return ERR_PTR(-ETIMEDOUT);
		if (timeout != MAX_SCHEDULE_TIMEOUT)
			timeout = left;
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
 * kverbs_listener_accept - wait for the next connection request
 * @lsn: the listener
 *
 * Waits without a time limit, until a client connects or a signal
 * arrives.
 *
 * Return: as kverbs_listener_accept_timeout(), never -ETIMEDOUT.
 */
struct kverbs_ep *kverbs_listener_accept(struct kverbs_listener *lsn)
{
	return kverbs_listener_accept_timeout(lsn, MAX_SCHEDULE_TIMEOUT);
}

/**
 * kverbs_listener_destroy - stop listening and reject what is still queued
 * @lsn: the listener, or NULL
 *
 * For its owner only, once no server uses it any more.
 */
void kverbs_listener_destroy(struct kverbs_listener *lsn)
{
	if (lsn)
		kverbs_listener_shutdown(lsn);
}
