// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues: the receives of a perf server's SENDs, taken
 * from one queue by the QPs of several sessions, as nvmet-rdma does with
 * use_srq.  Documentation/perf-internals.rst, "Shared receive queues", has
 * the design and its reasons; the rules a reader of this file needs:
 *
 *  - A receive is in exactly one place: posted in the SRQ, consumed by a
 *    QP whose completion is on its way, on one endpoint's srq_done, or
 *    on the SRQ's orphans.  Its completion finds its session in the
 *    SRQ's table, by the QP it names (kverbs_srq_attach()), never by
 *    following wc->qp; a QP leaves the table only once destroyed.
 *  - Each session reserves a window of the SRQ's receives
 *    (kverbs_srq_reserve()) and grants its peer credits out of it
 *    (kverbs_srq_credit()), on every transport; a message beyond them
 *    goes back to the SRQ at once and fails its session.
 *  - The limit event only counts; kverbs_srq_post() arms it again, in
 *    process context.
 *  - An SRQ is refcounted (@ref): its file listener's list, each
 *    session, a pending @remove.  Each session drops its reference only
 *    after its QP is destroyed; the last reference destroys the SRQ, its
 *    receives and its PD, and detaches from the device.  @remove, queued
 *    when the device goes (the abort must not sleep), takes the SRQ off
 *    its list, touching nothing of the listener.
 */
#include "kverbs.h"
#include "trace.h"

#include <linux/slab.h>

/* Protects every listener's list of SRQs, and &kverbs_srq.listed. */
static DEFINE_MUTEX(kverbs_srq_lock);

enum {
	KVERBS_SRQ_REMOVING,	/* the device is going: no new sharers */
};

static void kverbs_srq_free(struct kref *ref)
{
	struct kverbs_srq *srq = container_of(ref, struct kverbs_srq, ref);
	struct kverbs_srq_recv *r;
	u32 i;

	if (srq->srq)
		ib_destroy_srq(srq->srq);
	for (i = 0; srq->recvs && i < srq->wr; i++) {
		r = &srq->recvs[i];
		if (r->dma)
			ib_dma_unmap_single(srq->ibdev, r->dma, srq->recv_len,
					    DMA_FROM_DEVICE);
		kfree(r->buf);
	}
	kvfree(srq->recvs);
	kverbs_pin_unaccount(srq->pin_user, srq->pin_pages);
	if (srq->pd)
		ib_dealloc_pd(srq->pd);
	kverbs_dev_detach(&srq->user);
	kfree(srq);
}

/**
 * kverbs_srq_put - drop a reference to an SRQ
 * @srq: the SRQ, or NULL
 *
 * Process context: the last reference destroys it.
 */
void kverbs_srq_put(struct kverbs_srq *srq)
{
	if (srq)
		kref_put(&srq->ref, kverbs_srq_free);
}

/* Take @srq off its listener's list: true once, for the list's reference. */
static bool kverbs_srq_unlist(struct kverbs_srq *srq)
{
	lockdep_assert_held(&kverbs_srq_lock);
	if (!srq->listed)
		return false;
	srq->listed = false;
	list_del_init(&srq->node);
	return true;
}

static void kverbs_srq_remove_work(struct work_struct *work)
{
	struct kverbs_srq *srq = container_of(work, struct kverbs_srq, remove);
	bool unlisted;

	mutex_lock(&kverbs_srq_lock);
	unlisted = kverbs_srq_unlist(srq);
	mutex_unlock(&kverbs_srq_lock);
	if (unlisted)
		kverbs_srq_put(srq);
	/* The work's own reference. */
	kverbs_srq_put(srq);
}

/*
 * The device is being removed: under kverbs_dev_lock, must not sleep.
 * Sessions on the SRQ end with their endpoints, which are aborted too;
 * the file's list lets go from @remove.  The final put detaches, which
 * takes kverbs_dev_lock: never here.
 */
static void kverbs_srq_abort(struct kverbs_dev_user *user, int error)
{
	struct kverbs_srq *srq = container_of(user, struct kverbs_srq, user);

	if (test_and_set_bit(KVERBS_SRQ_REMOVING, &srq->flags) || !srq->shared)
		return;
	if (kref_get_unless_zero(&srq->ref))
		queue_work(kverbs_wq, &srq->remove);
}

static void kverbs_srq_event(struct ib_event *ev, void *ctx)
{
	struct kverbs_srq *srq = ctx;

	switch (ev->event) {
	case IB_EVENT_SRQ_LIMIT_REACHED:
		atomic64_inc(&srq->limit_events);
		/* The device disarmed it; kverbs_srq_post() arms it again. */
		atomic_set(&srq->armed, 0);
		break;
	default:
		ibdev_dbg(srq->ibdev, "srq: event %s\n", ib_event_msg(ev->event));
		break;
	}
}

/* Arm the limit, if it is not armed and the posted receives reach it. */
static void kverbs_srq_arm(struct kverbs_srq *srq)
{
	struct ib_srq_attr attr = { .srq_limit = srq->limit };
	int ret;

	if (!srq->limit || atomic_read(&srq->armed) ||
	    atomic_read(&srq->posted) < srq->limit)
		return;
	mutex_lock(&srq->arm_lock);
	/* Armed before the call: an event that comes at once disarms it. */
	if (!atomic_xchg(&srq->armed, 1)) {
		ret = ib_modify_srq(srq->srq, &attr, IB_SRQ_LIMIT);
		if (ret) {
			atomic_set(&srq->armed, 0);
			ibdev_dbg(srq->ibdev, "srq: arming the limit failed: %d\n", ret);
		}
	}
	mutex_unlock(&srq->arm_lock);
}

/* Post @r to its SRQ, from any context; the limit is left as it is. */
static int kverbs_srq_post_now(struct kverbs_srq *srq, struct kverbs_srq_recv *r)
{
	struct ib_sge sge = {
		.addr = r->dma,
		.length = srq->recv_len,
		.lkey = srq->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &r->cqe.cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};
	int ret;

	ib_dma_sync_single_for_device(srq->ibdev, r->dma, srq->recv_len,
				      DMA_FROM_DEVICE);
	r->cqe.cid = atomic_inc_return(&srq->next_cid);
	trace_kverbs_srq_post_recv(srq->srq, srq->recv_len, r->cqe.cid);
	/* Counted first: the completion may come before the post returns. */
	atomic_inc(&srq->posted);
	ret = ib_post_srq_recv(srq->srq, &wr, NULL);
	if (ret)
		atomic_dec(&srq->posted);
	return ret;
}

/**
 * kverbs_srq_post - post a receive to its SRQ, and arm the limit again
 * @srq: the SRQ
 * @r: one of its receives, taken and done with
 *
 * Process context.
 *
 * Return: 0 or ib_post_srq_recv()'s error.
 */
int kverbs_srq_post(struct kverbs_srq *srq, struct kverbs_srq_recv *r)
{
	int ret = kverbs_srq_post_now(srq, r);

	if (!ret)
		kverbs_srq_arm(srq);
	return ret;
}

/* The endpoint of the QP @qp, as a completion names it; under srq->lock. */
static struct kverbs_ep *kverbs_srq_find(struct kverbs_srq *srq, const struct ib_qp *qp)
{
	struct kverbs_ep *ep;

	lockdep_assert_held(&srq->lock);
	hash_for_each_possible(srq->sessions, ep, srq_node, (unsigned long)qp)
		if (ep->srq_qp == qp)
			return ep;
	return NULL;
}

/*
 * A message landed in @r, in the error state a flush, on the QP
 * @wc names.  That QP is found in the SRQ's own table, never through
 * @wc->qp, which a completion polled late from a CQ of ib_core's pool
 * may name after the QP was destroyed; such a receive is nobody's, and
 * goes back to the SRQ.  The endpoint takes it in the order its QP's
 * messages arrived (kverbs_srq_take()) - unless its peer sent more than
 * it was granted (kverbs_srq_credit()): then it goes back at once, for
 * the QPs that keep to their grants, and the session fails.
 */
static void kverbs_srq_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_srq_recv *r = container_of(wc->wr_cqe, struct kverbs_srq_recv,
						 cqe.cqe);
	struct kverbs_srq *srq = r->srq;
	struct kverbs_ep *ep;
	unsigned long flags;
	bool beyond;

	atomic_dec(&srq->posted);
	r->status = wc->status;
	r->vendor_err = wc->vendor_err;
	r->byte_len = wc->status ? 0 : wc->byte_len;
	r->opcode = wc->status ? 0 : wc->opcode;
	r->wc_flags = wc->status ? 0 : wc->wc_flags;
	r->imm = r->wc_flags & IB_WC_WITH_IMM ? be32_to_cpu(wc->ex.imm_data) : 0;
	r->inv_rkey = r->wc_flags & IB_WC_WITH_INVALIDATE ? wc->ex.invalidate_rkey : 0;

	spin_lock_irqsave(&srq->lock, flags);
	ep = kverbs_srq_find(srq, wc->qp);
	if (!ep) {
		list_add_tail(&r->node, &srq->orphans);
		spin_unlock_irqrestore(&srq->lock, flags);
		ibdev_dbg_ratelimited(srq->ibdev, "srq: a receive completed on a QP that is gone\n");
		return;
	}
	/* The trace names the QP by its endpoint: whichever took the receive. */
	r->cqe.ep = ep;
	trace_kverbs_wc(cq, wc, KVERBS_STEP_RECV);
	spin_lock(&ep->lock);
	/* A flushed receive took no message: only those count against credits. */
	beyond = !wc->status && ++ep->srq_arrived > ep->srq_allowed;
	if (!beyond)
		list_add_tail(&r->node, &ep->srq_done);
	spin_unlock(&ep->lock);
	if (beyond) {
		ibdev_dbg_ratelimited(srq->ibdev, "srq: qp %u: a message beyond its peer's credits\n",
				      READ_ONCE(ep->qp_num));
		if (kverbs_srq_post_now(srq, r))
			list_add_tail(&r->node, &srq->orphans);
		kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	} else if (wc->status) {
		kverbs_ep_wc_failed(ep, wc, KVERBS_STEP_RECV);
	}
	kverbs_ep_wake(ep);
	spin_unlock_irqrestore(&srq->lock, flags);
}

/**
 * kverbs_srq_attach - let the SRQ's completions find @ep
 * @srq: the SRQ
 * @ep: an endpoint whose QP was just created on @srq
 *
 * Until kverbs_srq_detach(), after the QP's destruction, a receive that
 * completes on the QP is the endpoint's.
 */
void kverbs_srq_attach(struct kverbs_srq *srq, struct kverbs_ep *ep)
{
	unsigned long flags;

	ep->srq_qp = ep->id->qp;
	spin_lock_irqsave(&srq->lock, flags);
	hash_add(srq->sessions, &ep->srq_node, (unsigned long)ep->srq_qp);
	spin_unlock_irqrestore(&srq->lock, flags);
}

/**
 * kverbs_srq_detach - @ep's QP is destroyed: what completes for it now is
 *	nobody's
 * @srq: the SRQ
 * @ep: an endpoint kverbs_srq_attach() attached, or one it never did
 *
 * Once this returns no handler touches @ep.
 */
void kverbs_srq_detach(struct kverbs_srq *srq, struct kverbs_ep *ep)
{
	unsigned long flags;

	if (!ep->srq_qp)
		return;
	spin_lock_irqsave(&srq->lock, flags);
	hash_del(&ep->srq_node);
	spin_unlock_irqrestore(&srq->lock, flags);
	ep->srq_qp = NULL;
}

/**
 * kverbs_srq_take - the next receive that completed on @ep's QP
 * @ep: an endpoint whose QP is on an SRQ
 *
 * Return: the receive, now the caller's until it posts it again or
 * gives it back, or NULL if none has completed.
 */
struct kverbs_srq_recv *kverbs_srq_take(struct kverbs_ep *ep)
{
	struct kverbs_srq_recv *r;
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	r = list_first_entry_or_null(&ep->srq_done, struct kverbs_srq_recv, node);
	if (r)
		list_del_init(&r->node);
	spin_unlock_irqrestore(&ep->lock, flags);
	return r;
}

/**
 * kverbs_srq_ready - whether a receive completed on @ep's QP
 * @ep: the endpoint
 *
 * Return: true if kverbs_srq_take() would find one.
 */
bool kverbs_srq_ready(struct kverbs_ep *ep)
{
	unsigned long flags;
	bool ready;

	spin_lock_irqsave(&ep->lock, flags);
	ready = !list_empty(&ep->srq_done);
	spin_unlock_irqrestore(&ep->lock, flags);
	return ready;
}

/**
 * kverbs_srq_give_back - post again the receives left on an endpoint
 * @srq: the SRQ
 * @ep: an endpoint detached from it (kverbs_srq_detach())
 *
 * For the sessions that share the SRQ after this one; and those that
 * completed for no QP on it (kverbs_srq_recv_done()).
 */
void kverbs_srq_give_back(struct kverbs_srq *srq, struct kverbs_ep *ep)
{
	struct kverbs_srq_recv *r;
	unsigned long flags;
	LIST_HEAD(orphans);

	spin_lock_irqsave(&srq->lock, flags);
	list_splice_init(&srq->orphans, &orphans);
	spin_unlock_irqrestore(&srq->lock, flags);
	spin_lock_irqsave(&ep->lock, flags);
	list_splice_tail_init(&ep->srq_done, &orphans);
	spin_unlock_irqrestore(&ep->lock, flags);
	while ((r = list_first_entry_or_null(&orphans, struct kverbs_srq_recv, node))) {
		list_del_init(&r->node);
		if (kverbs_srq_post(srq, r))
			ibdev_dbg(srq->ibdev, "srq: a receive could not be posted again\n");
	}
}

/**
 * kverbs_srq_reserve - a window of the SRQ's receives for one QP's peer
 * @srq: the SRQ
 * @want: the window asked for, at least 1
 * @window: the window reserved: at most @want and a quarter of the SRQ,
 *	less when the windows of the other sessions leave less
 *
 * On every transport: Documentation/perf-internals.rst, "SRQ credits".
 * kverbs_srq_unreserve() gives it back.
 *
 * Return: 0, or -ENOSPC when the other sessions' windows hold every
 * receive of the SRQ.
 */
int kverbs_srq_reserve(struct kverbs_srq *srq, u32 want, u32 *window)
{
	u32 cap = max(srq->wr / KVERBS_SRQ_SHARES, 1U), avail;
	int ret = 0;

	mutex_lock(&kverbs_srq_lock);
	avail = srq->wr - srq->reserved - srq->lost;
	*window = min3(want, cap, avail);
	if (*window) {
		srq->reserved += *window;
	} else {
		ibdev_dbg(srq->ibdev, "srq: no window left (%u reserved, %u lost of %u)\n",
			  srq->reserved, srq->lost, srq->wr);
		ret = -ENOSPC;
	}
	mutex_unlock(&kverbs_srq_lock);
	return ret;
}

/**
 * kverbs_srq_unreserve - give a window back once its QP is destroyed
 * @srq: the SRQ
 * @window: what kverbs_srq_reserve() reserved
 * @lost: the QP could not be drained and may have consumed a receive
 *	it never completed: keep one out of every later window
 */
void kverbs_srq_unreserve(struct kverbs_srq *srq, u32 window, bool lost)
{
	mutex_lock(&kverbs_srq_lock);
	srq->reserved -= window;
	if (lost)
		srq->lost++;
	mutex_unlock(&kverbs_srq_lock);
}

/**
 * kverbs_srq_credit - grant the peer of @ep's QP more messages
 * @ep: an endpoint whose QP is on an SRQ
 * @n: messages; the receives for them are posted
 *
 * Before the message that tells the peer: a message it sends in
 * answer then never completes beyond the grant.  The first call, before
 * the connection, starts the count (the endpoint counts nothing
 * before).
 */
void kverbs_srq_credit(struct kverbs_ep *ep, u64 n)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	ep->srq_allowed = ep->srq_allowed == U64_MAX ? n : ep->srq_allowed + n;
	spin_unlock_irqrestore(&ep->lock, flags);
}

/**
 * kverbs_srq_close - the peer of @ep's QP may send nothing more
 * @ep: an endpoint whose QP is on an SRQ
 *
 * Its last message (DONE) arrived: whatever arrives after it is beyond
 * its grant, goes back to the SRQ at once and fails the session
 * (kverbs_srq_recv_done()), so that a peer that lingers cannot take
 * receives the other sessions were granted.
 */
void kverbs_srq_close(struct kverbs_ep *ep)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	ep->srq_allowed = ep->srq_arrived;
	spin_unlock_irqrestore(&ep->lock, flags);
}

static struct kverbs_srq *kverbs_srq_create(struct ib_device *ibdev, bool shared,
					    u32 wr, u32 limit, u32 recv_len)
{
	struct ib_srq_init_attr attr = {};
	struct kverbs_srq_recv *r;
	struct kverbs_srq *srq;
	u64 pages;
	int ret;
	u32 i;

	srq = kzalloc(sizeof(*srq), GFP_KERNEL_ACCOUNT);
	if (!srq)
		return ERR_PTR(-ENOMEM);
	kref_init(&srq->ref);
	INIT_LIST_HEAD(&srq->node);
	spin_lock_init(&srq->lock);
	hash_init(srq->sessions);
	INIT_LIST_HEAD(&srq->orphans);
	INIT_WORK(&srq->remove, kverbs_srq_remove_work);
	mutex_init(&srq->arm_lock);
	srq->ibdev = ibdev;
	srq->shared = shared;
	srq->wr = wr;
	srq->limit = limit;
	srq->recv_len = recv_len;
	srq->user.abort = kverbs_srq_abort;
	ret = kverbs_dev_attach(&srq->user, ibdev, 0);
	if (ret)
		goto out_free;

	srq->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(srq->pd)) {
		ret = PTR_ERR(srq->pd);
		srq->pd = NULL;
		goto out_free;
	}
	attr.event_handler = kverbs_srq_event;
	attr.srq_context = srq;
	attr.srq_type = IB_SRQT_BASIC;
	attr.attr.max_wr = wr;
	attr.attr.max_sge = 1;
	srq->srq = ib_create_srq(srq->pd, &attr);
	if (IS_ERR(srq->srq)) {
		ret = PTR_ERR(srq->srq);
		srq->srq = NULL;
		goto out_free;
	}

	/*
	 * The receives are the DMA memory of whoever made the SRQ, as a
	 * test's buffers are (kverbs_buf_alloc()), and stay so while an idle
	 * listener file keeps the SRQ: charged to max_pinned_mb and the
	 * user's share of it, as kmalloc() takes it for each receive.
	 */
	pages = DIV_ROUND_UP_ULL((u64)wr * kmalloc_size_roundup(recv_len), PAGE_SIZE);
	ret = kverbs_pin_account(&srq->pin_user, pages);
	if (ret)
		goto out_free;
	srq->pin_pages = pages;

	srq->recvs = kvcalloc(wr, sizeof(*srq->recvs), GFP_KERNEL_ACCOUNT);
	if (!srq->recvs) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < wr; i++) {
		r = &srq->recvs[i];
		r->srq = srq;
		r->cqe.cqe.done = kverbs_srq_recv_done;
		INIT_LIST_HEAD(&r->node);
		r->buf = kmalloc(recv_len, GFP_KERNEL_ACCOUNT);
		if (!r->buf) {
			ret = -ENOMEM;
			goto out_free;
		}
		r->dma = ib_dma_map_single(ibdev, r->buf, recv_len, DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ibdev, r->dma)) {
			r->dma = 0;
			ret = -ENOMEM;
			goto out_free;
		}
		ret = kverbs_srq_post(srq, r);
		if (ret)
			goto out_free;
	}
	ibdev_dbg(ibdev, "srq: %u receives of %u bytes, limit %u\n", wr, recv_len, limit);
	return srq;

out_free:
	kverbs_srq_put(srq);
	return ERR_PTR(ret);
}

/*
 * The SRQ @lsn's servers share on @ibdev, with a reference and counted
 * as used by one more QP; or NULL when there is none, or it is going.
 */
static struct kverbs_srq *kverbs_srq_listed_locked(struct kverbs_listener *lsn,
						   struct ib_device *ibdev)
{
	struct kverbs_srq *srq;

	lockdep_assert_held(&kverbs_srq_lock);
	list_for_each_entry(srq, &lsn->srqs, node) {
		if (srq->ibdev == ibdev &&
		    !test_bit(KVERBS_SRQ_REMOVING, &srq->flags)) {
			kref_get(&srq->ref);
			atomic_inc(&srq->qps);
			return srq;
		}
	}
	return NULL;
}

static struct kverbs_srq *kverbs_srq_listed(struct kverbs_listener *lsn,
					    struct ib_device *ibdev)
{
	struct kverbs_srq *srq;

	mutex_lock(&kverbs_srq_lock);
	srq = kverbs_srq_listed_locked(lsn, ibdev);
	mutex_unlock(&kverbs_srq_lock);
	return srq;
}

/**
 * kverbs_srq_get - the SRQ a perf server's session receives in
 * @lsn: the file's listener the session took its client from, whose
 *	SRQ on @ibdev it shares; or NULL for an SRQ of the session's own
 * @ibdev: the device of the session's QP
 * @wr: receives, if the SRQ is created now
 * @limit: its limit, 0 for none
 * @recv_len: the bytes of each receive
 *
 * Return: a reference for the session, kverbs_srq_put() when its QP
 * is gone; or an ERR_PTR: -EOPNOTSUPP for a device without SRQs or
 * with smaller ones than @wr, -ENODEV while it is being removed,
 * -ENOMEM, or the device's error.
 */
struct kverbs_srq *kverbs_srq_get(struct kverbs_listener *lsn, struct ib_device *ibdev,
				  u32 wr, u32 limit, u32 recv_len)
{
	struct kverbs_srq *srq, *new;

	if (!ibdev->attrs.max_srq || wr > ibdev->attrs.max_srq_wr) {
		ibdev_dbg(ibdev, "srq: none of %u receives (max_srq %d, max_srq_wr %d)\n",
			  wr, ibdev->attrs.max_srq, ibdev->attrs.max_srq_wr);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!lsn) {
		srq = kverbs_srq_create(ibdev, false, wr, limit, recv_len);
		if (!IS_ERR(srq))
			atomic_inc(&srq->qps);
		return srq;
	}

	srq = kverbs_srq_listed(lsn, ibdev);
	if (srq)
		return srq;
	/*
	 * Made without the lock, which a server's every session takes:
	 * ib_create_srq() and the posts of up to KVERBS_PERF_SRQ_MAX_WR
	 * receives take long on some devices.  Two servers that both found
	 * none make one each; the first listed is shared, the other goes.
	 */
	new = kverbs_srq_create(ibdev, true, wr, limit, recv_len);
	if (IS_ERR(new))
		return new;
	mutex_lock(&kverbs_srq_lock);
	srq = kverbs_srq_listed_locked(lsn, ibdev);
	if (!srq && test_bit(KVERBS_SRQ_REMOVING, &new->flags)) {
		/*
		 * The device's removal began while the SRQ was made, and
		 * its @remove found nothing listed: listed now, the list's
		 * reference would hold the removal until the file closes.
		 * kverbs_srq_abort() sets the bit before it queues @remove,
		 * which takes this lock, so one of the two sees the other.
		 */
		srq = ERR_PTR(-ENODEV);
	} else if (!srq) {
		/* The list's reference, and the session's. */
		srq = new;
		new = NULL;
		kref_get(&srq->ref);
		srq->listed = true;
		list_add_tail(&srq->node, &lsn->srqs);
		atomic_inc(&srq->qps);
	}
	mutex_unlock(&kverbs_srq_lock);
	kverbs_srq_put(new);
	return srq;
}

/**
 * kverbs_srq_release_all - a file's listener is going: let go of its SRQs
 * @lsn: the listener; no session uses it any more
 *
 * Each SRQ goes with its last session, which has ended too by now.
 */
void kverbs_srq_release_all(struct kverbs_listener *lsn)
{
	struct kverbs_srq *srq;

	for (;;) {
		mutex_lock(&kverbs_srq_lock);
		srq = list_first_entry_or_null(&lsn->srqs, struct kverbs_srq, node);
		if (srq)
			kverbs_srq_unlist(srq);
		mutex_unlock(&kverbs_srq_lock);
		if (!srq)
			return;
		kverbs_srq_put(srq);
	}
}
