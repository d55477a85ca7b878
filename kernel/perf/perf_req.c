// SPDX-License-Identifier: GPL-2.0
/*
 * The requester of a perf test: the side that posts the data work
 * requests, the client, or the server when the client asked for the
 * reverse direction (KVERBS_PERF_F_REVERSE).  It keeps a window of RDMA
 * WRITEs, RDMA READs, SENDs or atomic operations in flight until its
 * iterations are done or its time is up, and tells the responder how it
 * went.  The latency tests are the same with a window of one, each
 * operation timed from its post to its completion; but the ping-pong
 * ones, WRITE_LAT and SEND_LAT, run in perf_pingpong.c once the
 * connection is set up.  perf_session.c sets up the connection.
 *
 * With KVERBS_PERF_F_RW the READs and WRITEs go through ib_core's
 * rdma_rw API (drivers/infiniband/core/rw.c), as nvmet-rdma, isert and
 * svcrdma move their data, one context per message.  The life of a
 * context, in the entry of the window it occupies:
 *
 *   kverbs_perf_req_post_rw()   rdma_rw_ctx_init(): DMA-maps the slot's
 *                               pages (DMA_TO_DEVICE for a WRITE's source,
 *                               DMA_FROM_DEVICE for a READ's sink) and
 *                               picks the local DMA key or an MR from the
 *                               QP's pool; then posts rdma_rw_ctx_wrs(),
 *                               its last work request signaled
 *   kverbs_perf_req_reap()      once the send queue has completed it,
 *                               before its entry is used again:
 *                               rdma_rw_ctx_destroy(), which gives the MR
 *                               back and unmaps, the DMA sync that lets
 *                               the CPU check what a READ brought
 *   kverbs_perf_req_stop()      after a failure or a signal: the QP is
 *                               drained first, so every work request of
 *                               every context has completed or was
 *                               flushed; then each context still held is
 *                               destroyed, while the QP and its MR pool
 *                               exist; only then the QP.
 *
 * The buffer itself is never mapped or registered by kverbs then: each
 * context maps what it moves, and a READ over iWARP, which must land in
 * memory registered for remote write, gets its MR from rdma_rw.
 */
#include "perf.h"
#include "trace.h"

#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <rdma/rw.h>

/* The bandwidth loop reads the clock once per this many posts. */
#define KVERBS_PERF_CLOCK_POSTS	16
/* Peak rates are measured over intervals of at least this long. */
#define KVERBS_PERF_SAMPLE_NS	NSEC_PER_MSEC

struct kverbs_perf_req;

/* --rw: scatter/gather entries per work request at most; as the ping server. */
#define KVERBS_PERF_RW_MAX_SGE	32

/*
 * One data work request in flight; WR n uses entry n % window.  With
 * --rw, one rdma_rw context: its work requests all complete here, the
 * last one signaled.
 */
struct kverbs_perf_wr {
	struct kverbs_cqe cqe;
	struct kverbs_perf_req *c;
	u64 seq;
	struct rdma_rw_ctx rw;
	struct scatterlist *sgl;	/* --rw: the pages of the message, c->rw_pages */
	u32 sg_cnt;			/* ... of them in use */
	bool rw_active;			/* @rw holds a mapping of @sgl */
};

/*
 * A data work request being built, one of a post list: the work
 * requests of a list are chained through their ->next and handed to
 * the device in one ib_post_send() call.
 */
struct kverbs_perf_post {
	union {
		struct ib_rdma_wr rdma;
		struct ib_atomic_wr atomic;
	} u;
	struct ib_sge sge;
};

/* A list is chained through ->wr, the first member of either kind. */
static_assert(offsetof(struct ib_rdma_wr, wr) == 0 &&
	      offsetof(struct ib_atomic_wr, wr) == 0);

struct kverbs_perf_req {
	struct kverbs_perf_run *run;
	struct kverbs_ep *ep;
	struct kverbs_buf buf;		/* WRITE and SEND sources, READ sinks */
	int access;			/* the rights @buf is registered with */
	bool read_inv;			/* each round's last READ invalidates @buf's key */
	bool sink_invalid;		/* ... and did: register @buf again first */
	u32 slots;			/* messages @buf holds */
	u32 window;			/* data work requests in flight at most */
	u32 signal_every;		/* one data work request in this many is signaled */
	enum kverbs_step step;		/* what the data work requests do */
	bool inline_data;		/* the data messages are posted inline */
	struct kverbs_perf_wr *wrs;
	struct kverbs_perf_post *list;	/* the post list being built */
	u32 listed;			/* ... work requests in it */
	bool rw;			/* KVERBS_PERF_F_RW: through rdma_rw contexts */
	enum dma_data_direction rw_dir;	/* ... mapped for a WRITE or a READ */
	u32 rw_pages;			/* ... pages a message may span */
	struct scatterlist *rw_sgls;	/* ... every entry's, in one array */
	u64 rw_reaped;			/* ... contexts destroyed once complete */
	struct kverbs_msg ctrl_send;
	struct kverbs_msg ctrl_recv;
	u64 remote_addr;
	u32 rkey;
	u32 remote_slots;
	u32 remote_stride;
	bool flow;			/* SEND_BW on iWARP: within the responder's receives */
	u64 granted;			/* ... SENDs the responder has receives for */
	u64 posted;			/* data work requests posted */
	atomic64_t completed;		/* ... and known to be complete */
	u64 deadline_ns;		/* duration mode: when to stop */
	u64 start_ns;
	u64 sample_ns;			/* start of the current peak interval */
	u64 sample_done;		/* @completed at that time */
	u64 peak_bps;
	u64 ctrl_ns;			/* when we last told the responder anything */
	u64 limit;			/* operations the samples have room for */
	u64 post_ns;			/* latency tests: when the one in flight was posted */
	u64 done_ns;			/* ... and when its completion's handler ran */
	struct kverbs_perf_samples smp;	/* latency tests */
	struct kverbs_perf_pp pp;	/* WRITE_LAT, SEND_LAT */
	u64 checked;			/* atomic --validate: fetched values checked */
};

static void kverbs_perf_req_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_perf_wr *w = container_of(wc->wr_cqe, struct kverbs_perf_wr, cqe.cqe);
	struct kverbs_perf_req *c = w->c;
	/* A latency test's clock stops here; the bandwidth tests need none. */
	u64 now = c->smp.chunk ? ktime_get_ns() : 0;

	trace_kverbs_wc(cq, wc, c->step);
	if (wc->status != IB_WC_SUCCESS) {
		kverbs_ep_wc_failed(kverbs_wc_ep(wc), wc, c->step);
		return;
	}
	/* One in flight: this is it.  The burst makes room before each post. */
	if (c->smp.chunk && !WARN_ON_ONCE(c->smp.len == KVERBS_PERF_CHUNK)) {
		c->smp.chunk[c->smp.len++] = now - c->post_ns;
		c->done_ns = now;
	}
	/*
	 * The send queue completes in order: everything before it is done.
	 * Published last: unless the CQ is polled directly this runs in
	 * softirq context or on a workqueue beside the test's thread, which
	 * reads the sample, and what atomics fetched, once it sees the
	 * count.  An atomic64_t: a u64 is not one access on 32-bit CPUs.
	 * The read and the set need no lock: ib_core runs one CQ's handlers
	 * one at a time (one irq_poll, or one work item, which a workqueue
	 * never runs twice at once).
	 */
	atomic64_set_release(&c->completed,
			     max_t(u64, atomic64_read(&c->completed), w->seq + 1));
	kverbs_ep_wake(c->ep);
}

/* Data work requests known to be complete; see kverbs_perf_req_wr_done(). */
static u64 kverbs_perf_req_completed(const struct kverbs_perf_req *c)
{
	/* Pairs with the release in kverbs_perf_req_wr_done(). */
	return atomic64_read_acquire(&c->completed);
}

/*
 * --rw: the send queue holds a window of contexts, each as many work
 * requests as rdma_rw may build for one message: in plain SGEs, one per
 * max_send_sge pages (a READ's sink: max_sge_rd); with MRs, per MR an
 * invalidation, a registration and the READ or WRITE.  Which of the two
 * a device gets is rdma_rw's choice, and its force_mr parameter is not
 * visible from here, so there is room for the larger.  rdma_rw_init_qp()
 * adds its own count for max_rdma_ctxs on top, and the CQ is sized for
 * that too (kverbs_ep_create_qp()): counted twice, a few entries spent
 * so that neither the send queue nor a flush into the CQ can overflow,
 * whichever way rdma_rw goes.
 */
static int kverbs_perf_req_rw_caps(struct kverbs_perf_req *c,
				   struct kverbs_ep_caps *caps)
{
	struct ib_device *ibdev = kverbs_ep_device(c->ep);
	u32 sge = min_t(u32, ibdev->attrs.max_send_sge, KVERBS_PERF_RW_MAX_SGE);
	u32 data_sge = sge, mrs, wrs, send_wr;

	c->rw_dir = c->run->t->op == KVERBS_PERF_OP_READ ? DMA_FROM_DEVICE :
							    DMA_TO_DEVICE;
	if (c->rw_dir == DMA_FROM_DEVICE)
		data_sge = min_t(u32, sge, ibdev->attrs.max_sge_rd);
	/* A message that starts inside a page spans one page more than its size. */
	c->rw_pages = DIV_ROUND_UP(c->run->msg_size, PAGE_SIZE) + 1;
	mrs = rdma_rw_mr_factor(ibdev, kverbs_ep_port(c->ep), c->rw_pages);
	wrs = max(DIV_ROUND_UP(c->rw_pages, max(data_sge, 1U)), 3 * mrs);
	/* The window, and the two that kverbs_perf_req_setup() adds to it. */
	if (check_mul_overflow(c->window, wrs, &send_wr) ||
	    check_add_overflow(send_wr, 2U, &send_wr) ||
	    check_mul_overflow(c->window, mrs, &caps->max_rdma_ctxs))
		return -EINVAL;
	caps->max_send_wr = send_wr;
	caps->max_send_sge = max(sge, 1U);
	/* rdma_rw signals every context that ends a chain: see the uAPI. */
	c->signal_every = 1;
	return 0;
}

static int kverbs_perf_req_setup(struct kverbs_perf_req *c)
{
	struct kverbs_perf_run *run = c->run;
	struct kverbs_ep *ep = c->ep;
	struct ib_device *ibdev = kverbs_ep_device(ep);
	u32 max_reg = kverbs_max_reg_size(ibdev);
	struct kverbs_ep_caps caps = {
		/* The responder answers one message at a time: perf.h. */
		.max_recv_wr = 1,
		.max_send_sge = 1,
	};
	bool pingpong = kverbs_perf_is_pingpong(run->t);
	u32 i;
	int ret;

	kverbs_perf_cq_caps(run, &caps, !run->events);
	if (!max_reg) {
		ibdev_dbg(ibdev, "no fast registration, cannot register buffers\n");
		return -EOPNOTSUPP;
	}
	if ((u64)run->msg_size * (1 + pingpong) > max_reg)
		return -EMSGSIZE;
	ret = kverbs_perf_device_check(run->t, run->flags, ep);
	if (ret)
		return ret;
	ret = kverbs_perf_samples_alloc(&c->smp, run);
	if (ret)
		return ret;
	c->slots = kverbs_perf_slots(run->msg_size, run->tx_depth,
				     min(KVERBS_PERF_BUF_BYTES, max_reg));
	/* A slot is refilled only once the work request that used it is done. */
	c->window = run->flags & KVERBS_PERF_F_VALIDATE ?
		    min(c->slots, run->tx_depth) : run->tx_depth;
	/*
	 * Signal a quarter of the window, or one in -Q's: the unsignaled
	 * work requests before a signaled one leave the send queue with
	 * its completion, so at least one of any window's worth must be
	 * signaled for the queue never to overflow, and with a quarter the
	 * window is refilled well before it runs dry.  The last one of a
	 * burst is always signaled.
	 */
	c->signal_every = run->cq_mod ? min(run->cq_mod, c->window) :
			  DIV_ROUND_UP(c->window, 4);
	c->inline_data = run->inline_size && run->msg_size <= run->inline_size;
	/* The window, the registration of our buffer, one control message. */
	caps.max_send_wr = (pingpong ? KVERBS_PERF_PP_SQ : c->window) + 2;
	if (c->rw) {
		ret = kverbs_perf_req_rw_caps(c, &caps);
		if (ret)
			return ret;
	}
	ret = kverbs_perf_create_qp(run, ep, &caps, true);
	if (ret)
		return ret;

	c->wrs = kvcalloc(c->window, sizeof(*c->wrs), GFP_KERNEL_ACCOUNT);
	c->list = kvcalloc(run->post_list, sizeof(*c->list), GFP_KERNEL_ACCOUNT);
	if (!c->wrs || !c->list)
		return -ENOMEM;
	if (c->rw) {
		c->rw_sgls = kvcalloc(array_size(c->window, c->rw_pages),
				      sizeof(*c->rw_sgls), GFP_KERNEL_ACCOUNT);
		if (!c->rw_sgls)
			return -ENOMEM;
	}
	for (i = 0; i < c->window; i++) {
		c->wrs[i].cqe.cqe.done = kverbs_perf_req_wr_done;
		c->wrs[i].c = c;
		if (c->rw)
			c->wrs[i].sgl = c->rw_sgls + (size_t)i * c->rw_pages;
	}
	/* A ping-pong's answers land in a slot of their own, before ours. */
	ret = kverbs_perf_alloc(ep, &c->buf, (size_t)(c->slots + pingpong) * run->msg_size,
				!c->rw, &c->ctrl_send,
				kverbs_perf_ctrl_len(run->t, run->flags, run->msg_size));
	if (ret)
		return ret;
	if (pingpong)
		kverbs_perf_pp_init(&c->pp, run, ep, &c->buf, run->t, run->flags,
				    run->msg_size, run->msg_size);
	return kverbs_msg_alloc(&c->ctrl_recv, ep->pd, sizeof(struct kverbs_perf_msg),
				DMA_FROM_DEVICE);
}

/* Wait for the responder's next message, which must be of type @type. */
static int kverbs_perf_req_wait_ctrl(struct kverbs_perf_req *c,
				     enum kverbs_perf_msg_type type,
				     struct kverbs_perf_msg *m)
{
	struct kverbs_ep *ep = c->ep;
	int ret;

	ret = kverbs_perf_wait_done(ep, &c->ctrl_recv.done, c->run->common.timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
	kverbs_msg_sync_for_cpu(&c->ctrl_recv);
	memcpy(m, c->ctrl_recv.buf, sizeof(*m));
	if (c->ctrl_recv.byte_len != sizeof(*m) || le32_to_cpu(m->type) != type)
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	/* The responder has no key of ours to invalidate. */
	ret = kverbs_perf_inv_check(c->run, ep, c->ctrl_recv.invalidated,
				    c->ctrl_recv.inv_rkey, false, 0);
	if (ret)
		return ret;
	/*
	 * In a ping-pong the server sends nothing but data after its ADV,
	 * into the receives the ping-pong posts (SEND_LAT).
	 */
	if (kverbs_perf_is_pingpong(c->run->t))
		return 0;
	return kverbs_msg_post_recv(&c->ctrl_recv, ep);
}

/* Send a control message, once the previous one is out. */
static int kverbs_perf_req_ctrl(struct kverbs_perf_req *c,
				enum kverbs_perf_msg_type type,
				u64 a, u64 b, u64 peak)
{
	struct kverbs_perf_msg *m = c->ctrl_send.buf;
	struct kverbs_ep *ep = c->ep;
	struct ib_send_wr wr;
	int ret;

	ret = kverbs_perf_wait_done(ep, &c->ctrl_send.done, c->run->common.timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_SEND);
	memset(m, 0, c->ctrl_send.len);
	m->a = cpu_to_le64(a);
	m->b = cpu_to_le64(b);
	m->c = cpu_to_le64(peak);
	/* DONE: how rdma_rw went, for the responder's report (perf.h). */
	if (type == KVERBS_PERF_MSG_DONE)
		m->addr = cpu_to_le64(c->run->rw_mr_ctxs);
	kverbs_perf_ctrl_wr(&c->ctrl_send, &wr, type);
	/*
	 * KVERBS_PERF_F_INV: the round is done with the responder's key, and
	 * ROUND hands it back invalidated.  Every data work request that
	 * used it completed before (kverbs_perf_req_burst()), and the
	 * responder executes this after them: nothing of ours still uses it.
	 */
	if (type == KVERBS_PERF_MSG_ROUND && (c->run->flags & KVERBS_PERF_F_INV)) {
		wr.opcode = IB_WR_SEND_WITH_INV;
		wr.ex.invalidate_rkey = c->rkey;
	}
	c->ctrl_ns = ktime_get_ns();
	return kverbs_post_send(ep, &wr, KVERBS_STEP_SEND);
}

/*
 * The client speaks first (see perf.h), then learn where the responder's
 * buffer is, and make ours usable.
 */
static int kverbs_perf_req_start(struct kverbs_perf_req *c)
{
	struct kverbs_perf_run *run = c->run;
	const struct kverbs_perf_ops *t = run->t;
	struct kverbs_perf_msg m, *adv = c->ctrl_send.buf;
	struct ib_send_wr wr;
	int access, ret;

	if (kverbs_perf_client_requests(run->flags)) {
		ret = kverbs_perf_req_ctrl(c, KVERBS_PERF_MSG_START, 0, 0, 0);
		if (ret)
			return ret;
	}
	ret = kverbs_perf_req_wait_ctrl(c, KVERBS_PERF_MSG_ADV, &m);
	if (ret)
		return ret;
	c->remote_addr = le64_to_cpu(m.addr);
	c->rkey = le32_to_cpu(m.rkey);
	c->remote_slots = le32_to_cpu(m.slots);
	c->remote_stride = le32_to_cpu(m.stride);
	if (!c->remote_slots || c->remote_stride < run->msg_size)
		return kverbs_ep_failed(c->ep, -EPROTO, KVERBS_STEP_RECV);
	/* The responder's choice: iWARP's ring, any fabric's SRQ. */
	c->flow = kverbs_perf_answer(t, run->flags) == KVERBS_PERF_ANSWER_RECV &&
		  (le64_to_cpu(m.a) & KVERBS_PERF_ADV_GRANTS);
	c->granted = c->remote_slots;
	/* With --validate both sides count rounds of the same length. */
	if ((run->flags & KVERBS_PERF_F_VALIDATE) &&
	    kverbs_perf_uses(t, KVERBS_PERF_MSG_ROUND) && c->remote_slots != c->slots)
		return kverbs_ep_failed(c->ep, -EPROTO, KVERBS_STEP_RECV);

	/* Each rdma_rw context maps, and where it must registers, its message. */
	if (c->rw)
		return 0;
	/*
	 * An iWARP READ response is placed like a WRITE, with the sink's
	 * rkey from the request, so the sink needs remote write; nothing
	 * else of ours does but what the test gives the responder.  The
	 * registration completes before any data work request is posted.
	 */
	access = IB_ACCESS_LOCAL_WRITE | t->req_access;
	if (t->op == KVERBS_PERF_OP_READ &&
	    rdma_protocol_iwarp(kverbs_ep_device(c->ep), kverbs_ep_port(c->ep)))
		access |= IB_ACCESS_REMOTE_WRITE;
	c->access = access;
	c->read_inv = kverbs_perf_read_inv(t, run->flags, c->ep);
	ret = kverbs_perf_register(c->ep, &c->buf, access, run->common.timeout_ns);
	if (ret || !t->req_access)
		return ret;

	/* WRITE_LAT: the server answers into our buffer's first slot; say where. */
	c->pp.remote_addr = c->remote_addr;
	c->pp.rkey = c->rkey;
	c->pp.remote_known = true;
	/* Its buffer is START's, whose completion may not be in yet. */
	ret = kverbs_perf_wait_done(c->ep, &c->ctrl_send.done, run->common.timeout_ns);
	if (ret)
		return kverbs_ep_failed(c->ep, ret, KVERBS_STEP_SEND);
	memset(adv, 0, c->ctrl_send.len);
	adv->addr = cpu_to_le64(c->buf.mr->iova);
	adv->rkey = cpu_to_le32(c->buf.mr->rkey);
	adv->slots = cpu_to_le32(1);
	adv->stride = cpu_to_le32(run->msg_size);
	kverbs_perf_ctrl_wr(&c->ctrl_send, &wr, KVERBS_PERF_MSG_ADV);
	return kverbs_post_send(c->ep, &wr, KVERBS_STEP_SEND);
}

/*
 * Build data work request c->posted at the end of the post list; it
 * reaches the device with the list, in kverbs_perf_req_flush().  @last:
 * the burst's last, which ends a --validate round.
 */
static void kverbs_perf_req_list_add(struct kverbs_perf_req *c, bool signaled, bool last)
{
	struct kverbs_perf_run *run = c->run;
	struct kverbs_perf_post *p = &c->list[c->listed];
	u64 seq = c->posted, n = seq, rseq;
	u32 slot = do_div(n, c->slots), rslot, wi;
	size_t off = (size_t)slot * run->msg_size;
	struct kverbs_perf_wr *w;
	struct ib_send_wr *wr;

	rseq = seq;
	rslot = do_div(rseq, c->remote_slots);
	n = seq;
	wi = do_div(n, c->window);
	w = &c->wrs[wi];
	w->seq = seq;

	memset(p, 0, sizeof(*p));
	switch (run->t->op) {
	case KVERBS_PERF_OP_ATOMIC:
		/*
		 * The operations on one remote word run in order, this one
		 * after the rseq before it: it finds rseq there, and leaves
		 * rseq + 1.  Fetch-and-add adds 1 to get there; compare-and-
		 * swap expects rseq and swaps in rseq + 1, so every one of
		 * them succeeds and --validate can check what each fetched.
		 */
		wr = &p->u.atomic.wr;
		if (run->flags & KVERBS_PERF_F_CMP_SWAP) {
			wr->opcode = IB_WR_ATOMIC_CMP_AND_SWP;
			p->u.atomic.compare_add = rseq;
			p->u.atomic.swap = rseq + 1;
		} else {
			wr->opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
			p->u.atomic.compare_add = 1;
		}
		p->u.atomic.remote_addr = c->remote_addr + (u64)rslot * c->remote_stride;
		p->u.atomic.rkey = c->rkey;
		break;
	case KVERBS_PERF_OP_SEND:
		wr = &p->u.rdma.wr;
		wr->opcode = kverbs_perf_wr_opcode(run->t, run->flags);
		break;
	default:
		wr = &p->u.rdma.wr;
		wr->opcode = kverbs_perf_wr_opcode(run->t, run->flags);
		p->u.rdma.remote_addr = c->remote_addr + (u64)rslot * c->remote_stride;
		p->u.rdma.rkey = c->rkey;
		/*
		 * The round's last READ invalidates our sink once its data is
		 * placed, as rdma_rw's READs do on iWARP: the READs before it
		 * on this queue have placed theirs by then.
		 */
		if (last && c->read_inv) {
			wr->opcode = IB_WR_RDMA_READ_WITH_INV;
			wr->ex.invalidate_rkey = c->buf.mr->lkey;
		}
		break;
	}
	/* The responder checks it on the completion (kverbs_perf_imm_check()). */
	if (run->flags & KVERBS_PERF_F_IMM)
		wr->ex.imm_data = cpu_to_be32(kverbs_perf_imm(seq));
	p->sge.length = run->msg_size;
	if (c->inline_data) {
		/*
		 * The CPU copies inline data into the work request during
		 * ib_post_send(), from the address in the scatter/gather
		 * entry: a kernel virtual address, then, not the MR's I/O
		 * address, and no key (as SMC-R's net/smc/smc_tx.c does).
		 * The device never reads the buffer for it.
		 */
		p->sge.addr = (uintptr_t)(c->buf.vaddr + off);
		wr->send_flags = IB_SEND_INLINE;
	} else {
		kverbs_buf_check_device(&c->buf, off, run->msg_size);
		p->sge.addr = c->buf.mr->iova + off;
		p->sge.lkey = c->buf.mr->lkey;
	}
	wr->wr_cqe = &w->cqe.cqe;
	wr->sg_list = &p->sge;
	wr->num_sge = 1;
	if (signaled)
		wr->send_flags |= IB_SEND_SIGNALED;
	if (c->listed)
		c->list[c->listed - 1].u.rdma.wr.next = wr;
	c->listed++;
}

/*
 * --rw: post message c->posted through the rdma_rw context of its window
 * entry, in place of kverbs_perf_req_list_add() and _flush(): the
 * context's scatterlist names the slot's pages, rdma_rw_ctx_init() maps
 * them and builds the work requests, a registration among them where
 * rdma_rw wants one, and they are posted at once, the last one
 * signaled.  The context is the entry's until kverbs_perf_req_rw_put().
 */
static int kverbs_perf_req_post_rw(struct kverbs_perf_req *c)
{
	struct kverbs_ep *ep = c->ep;
	struct ib_qp *qp = ep->id->qp;
	u64 seq = c->posted, n64 = seq, rseq = seq, remote_addr;
	u32 slot = do_div(n64, c->slots), rslot = do_div(rseq, c->remote_slots);
	u32 port = kverbs_ep_port(ep), len = c->run->msg_size, n;
	size_t off = (size_t)slot * len;
	struct ib_send_wr *first, *wr;
	struct kverbs_perf_wr *w;
	bool mr = false;
	int nr_wrs, ret;

	n64 = seq;
	w = &c->wrs[do_div(n64, c->window)];
	w->seq = seq;
	remote_addr = c->remote_addr + (u64)rslot * c->remote_stride;
	kverbs_buf_check_device(&c->buf, off, len);
	/* A latency sample includes what rdma_rw costs a ULP. */
	if (c->smp.chunk)
		c->post_ns = ktime_get_ns();
	n = kverbs_buf_sg_pages(&c->buf, off, len, w->sgl);
	nr_wrs = rdma_rw_ctx_init(&w->rw, qp, port, w->sgl, n, 0, remote_addr,
				  c->rkey, c->rw_dir);
	if (nr_wrs < 0)
		return kverbs_ep_failed(ep, nr_wrs, c->step);
	w->sg_cnt = n;
	w->rw_active = true;

	first = rdma_rw_ctx_wrs(&w->rw, qp, port, &w->cqe.cqe, NULL);
	/*
	 * rdma_rw leaves the work requests before the last without a
	 * completion handler; a flush of one of them would reach ib_core
	 * with none.  Ours reports any of them that fails.  An MR is
	 * rdma_rw's choice, seen in the registration it puts in the chain.
	 */
	for (wr = first; wr; wr = wr->next) {
		if (!wr->wr_cqe)
			wr->wr_cqe = &w->cqe.cqe;
		mr |= wr->opcode == IB_WR_REG_MR;
	}
	trace_kverbs_rw_post(ep->cq_id, kverbs_ep_next_cid(ep), qp, c->rw_dir,
			     c->run->msg_size, nr_wrs);
	ret = kverbs_post_send(ep, first, c->step);
	if (ret)
		return ret;
	c->run->rw_ctxs++;
	c->run->rw_mr_ctxs += mr;
	return 0;
}

/*
 * --rw: release the context of entry @w, once every work request of it
 * has completed or was flushed: its MRs go back to the QP's pool and
 * the unmap syncs the slot for the CPU.  While the QP exists.
 */
static void kverbs_perf_req_rw_put(struct kverbs_perf_req *c,
				   struct kverbs_perf_wr *w)
{
	struct kverbs_ep *ep = c->ep;

	if (!w->rw_active)
		return;
	rdma_rw_ctx_destroy(&w->rw, ep->id->qp, kverbs_ep_port(ep), w->sgl,
			    w->sg_cnt, c->rw_dir);
	w->rw_active = false;
}

/*
 * --rw: destroy the contexts the send queue has completed, in order: a
 * signaled completion says that everything before it is done too.
 */
static void kverbs_perf_req_rw_reap(struct kverbs_perf_req *c)
{
	u64 completed = kverbs_perf_req_completed(c), n;

	for (; c->rw_reaped < completed; c->rw_reaped++) {
		n = c->rw_reaped;
		kverbs_perf_req_rw_put(c, &c->wrs[do_div(n, c->window)]);
	}
}

/*
 * --rw, at the end: contexts still held after a failure or a signal.
 * Their work requests may still be in flight, so the QP is drained
 * first, and reset if that did not end (kverbs_ep_stop()); then each is
 * destroyed, before the QP that owns their MRs.
 */
static void kverbs_perf_req_rw_release(struct kverbs_perf_req *c)
{
	bool held = false;
	u32 i;

	if (!c->rw_sgls)
		return;
	for (i = 0; i < c->window; i++)
		held |= c->wrs[i].rw_active;
	if (!held)
		return;
	kverbs_ep_drain(c->ep);
	kverbs_ep_stop(c->ep);
	for (i = 0; i < c->window; i++)
		kverbs_perf_req_rw_put(c, &c->wrs[i]);
}

/*
 * Hand the post list to the device, in one ib_post_send().  The work
 * requests are counted in c->posted as they are built, so that the
 * window has room for them.
 */
static int kverbs_perf_req_flush(struct kverbs_perf_req *c)
{
	u32 n = c->listed;

	if (!n)
		return 0;
	c->listed = 0;
	if (n > 1)
		trace_kverbs_post_list(c->ep->cq_id, kverbs_ep_next_cid(c->ep),
				       c->ep->id->qp, n);
	if (c->smp.chunk)
		c->post_ns = ktime_get_ns();
	/* ->wr is the first member of both ib_rdma_wr and ib_atomic_wr. */
	return kverbs_post_send(c->ep, &c->list[0].u.rdma.wr, c->step);
}

/*
 * The responder may grant SEND_BW its receives a window at a time
 * (KVERBS_PERF_ADV_GRANTS): on iWARP, which has no receiver-not-ready
 * retry, a SEND that finds no receive ends the connection; and an SRQ's
 * receives are shared, so that a peer must not take more than its
 * window of them, on any fabric.  Once the responder has taken a
 * window's worth and posted them again, it says so, and we may send
 * another.  Called when the grant is used up; the responder's message
 * says it took exactly that much.
 */
static int kverbs_perf_req_credit(struct kverbs_perf_req *c)
{
	struct kverbs_perf_msg m;
	int ret;

	ret = kverbs_perf_req_wait_ctrl(c, KVERBS_PERF_MSG_ROUND_OK, &m);
	if (ret)
		return ret;
	if (le64_to_cpu(m.a) != c->granted)
		return kverbs_ep_failed(c->ep, -EPROTO, KVERBS_STEP_RECV);
	c->granted += c->remote_slots;
	return 0;
}

/*
 * Atomic --validate: what each completed operation fetched is known (see
 * kverbs_perf_req_list_add()).
 */
static int kverbs_perf_req_check_atomics(struct kverbs_perf_req *c)
{
	u64 seq, n, want, got, completed = kverbs_perf_req_completed(c);
	u32 slot;

	if (!(c->run->flags & KVERBS_PERF_F_VALIDATE))
		return 0;
	for (; c->checked < completed; c->checked++) {
		seq = c->checked;
		n = seq;
		slot = do_div(n, c->slots);
		want = seq;
		do_div(want, c->remote_slots);
		/* This slot only: others may be taking fetched values now. */
		kverbs_buf_sync_range_for_cpu(&c->buf, (size_t)slot * sizeof(u64),
					      sizeof(u64));
		memcpy(&got, c->buf.vaddr + (size_t)slot * sizeof(u64), sizeof(got));
		if (!kverbs_perf_atomic_is(got, want)) {
			c->run->result->mismatch_iter = seq;
			return kverbs_ep_mismatch(c->ep, 0);
		}
		/* The slot takes the value a later operation fetches. */
		kverbs_buf_sync_range_for_device(&c->buf, (size_t)slot * sizeof(u64),
						 sizeof(u64));
	}
	return 0;
}

/*
 * KVERBS_PERF_F_PHASES: the thread runs again after a wait, and sees the
 * completion that ended it, if one did (the first wait of a burst finds
 * room at once).  Before kverbs_perf_req_reap() flushes the samples.
 */
static void kverbs_perf_req_seen(struct kverbs_perf_req *c)
{
	if (c->smp.phases && c->smp.seen < c->smp.len)
		kverbs_perf_phases_seen(&c->smp, c->post_ns, c->done_ns,
					ktime_get_ns());
}

/* What to do once completions moved the window on, before posting again. */
static int kverbs_perf_req_reap(struct kverbs_perf_req *c)
{
	if (c->rw)
		kverbs_perf_req_rw_reap(c);
	if (c->smp.len == KVERBS_PERF_CHUNK)
		kverbs_perf_samples_flush(&c->smp, c->run);
	if (c->run->t->op == KVERBS_PERF_OP_ATOMIC)
		return kverbs_perf_req_check_atomics(c);
	return 0;
}

/* Whether the window has room for another data work request. */
static bool kverbs_perf_req_has_room(void *arg)
{
	struct kverbs_perf_req *c = arg;

	return c->posted - kverbs_perf_req_completed(c) < c->window;
}

/* Whether every data work request posted has completed. */
static bool kverbs_perf_req_drained(void *arg)
{
	struct kverbs_perf_req *c = arg;

	return kverbs_perf_req_completed(c) == c->posted;
}

/* Account completions for the peak rate, over intervals of a millisecond. */
static void kverbs_perf_req_sample(struct kverbs_perf_req *c, u64 now)
{
	u64 bytes, completed = kverbs_perf_req_completed(c);

	if (now - c->sample_ns < KVERBS_PERF_SAMPLE_NS)
		return;
	bytes = (completed - c->sample_done) * c->run->msg_size;
	c->peak_bps = max(c->peak_bps, kverbs_perf_per_sec(bytes, now - c->sample_ns));
	c->sample_ns = now;
	c->sample_done = completed;
}

/*
 * Post @n data work requests, or in duration mode (@n 0) until the time
 * is up, keeping the window full; return once all of them completed.
 */
static int kverbs_perf_req_burst(struct kverbs_perf_req *c, u64 n)
{
	struct kverbs_perf_run *run = c->run;
	struct kverbs_ep *ep = c->ep;
	u64 first = c->posted, now = 0, k;
	bool last = false, expired = false, tick;
	int ret;

	while (!last) {
		/* What waits in the post list must be posted to complete. */
		if (!kverbs_perf_req_has_room(c)) {
			ret = kverbs_perf_req_flush(c);
			if (ret)
				return ret;
		}
		ret = kverbs_perf_wait(ep, kverbs_perf_req_has_room, c, run->common.timeout_ns);
		if (ret)
			return kverbs_ep_failed(ep, ret, c->step);
		kverbs_perf_req_seen(c);
		ret = kverbs_perf_req_reap(c);
		if (ret)
			return ret;
		/* The clock now and then only: see kverbs_perf_poll(). */
		k = c->posted - first;
		tick = !(k % KVERBS_PERF_CLOCK_POSTS);
		if (tick) {
			now = ktime_get_ns();
			kverbs_perf_req_sample(c, now);
			expired = now >= c->deadline_ns;
		}
		last = n ? c->posted + 1 == first + n :
			   expired || c->posted + 1 == c->limit;
		if (c->flow && c->posted == c->granted) {
			/* The responder grants more once it has these. */
			ret = kverbs_perf_req_flush(c);
			if (!ret)
				ret = kverbs_perf_req_credit(c);
			if (ret)
				return ret;
		}
		if (c->rw) {
			/* rdma_rw builds each message's chain; posted at once. */
			ret = kverbs_perf_req_post_rw(c);
			if (ret)
				return ret;
			c->posted++;
		} else {
			k = c->posted - first;
			kverbs_perf_req_list_add(c, last ||
						 do_div(k, c->signal_every) ==
						 c->signal_every - 1, last);
			c->posted++;
			if (last || c->listed == run->post_list) {
				ret = kverbs_perf_req_flush(c);
				if (ret)
					return ret;
			}
		}
		/*
		 * The responder sees nothing of RDMA READs and WRITEs; so that
		 * its wait can be bounded, tell it now and then that we are
		 * still at it.  It sees SENDs.
		 */
		if (tick && kverbs_perf_uses(run->t, KVERBS_PERF_MSG_PROGRESS) &&
		    now - c->ctrl_ns > run->common.timeout_ns / 4 &&
		    kverbs_is_done(&c->ctrl_send.done)) {
			ret = kverbs_perf_req_flush(c);
			if (!ret)
				ret = kverbs_perf_req_ctrl(c, KVERBS_PERF_MSG_PROGRESS,
							   kverbs_perf_req_completed(c),
							   0, 0);
			if (ret)
				return ret;
		}
	}
	ret = kverbs_perf_wait(ep, kverbs_perf_req_drained, c, run->common.timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, c->step);
	kverbs_perf_req_seen(c);
	kverbs_perf_req_sample(c, ktime_get_ns());
	return kverbs_perf_req_reap(c);
}

/*
 * --validate: rounds of as many messages as the buffers hold.  We fill
 * what we WRITE or SEND; the responder checks it.  The responder fills what we
 * READ; we check it.  For WRITE and READ, a message after each round
 * tells the other side that it may look at, or refill, the slots.
 */
static int kverbs_perf_req_round(struct kverbs_perf_req *c, u64 first,
				 u64 n)
{
	struct kverbs_perf_run *run = c->run;
	bool read = run->t->op == KVERBS_PERF_OP_READ;
	struct kverbs_perf_msg m;
	u32 len = run->msg_size, offset;
	u64 i;
	int ret;

	if (!read) {
		for (i = 0; i < n; i++)
			kverbs_perf_fill(c->buf.vaddr + i * len, len, first + i);
		kverbs_buf_sync_for_device(&c->buf);
	}
	/*
	 * The last round's READ with invalidate took the sink's key: a
	 * fresh one before any READ places data in it.  Registration maps
	 * no memory, so the sync above and below stand as they are.
	 */
	if (c->sink_invalid) {
		ret = kverbs_perf_register(c->ep, &c->buf, c->access,
					   run->common.timeout_ns);
		if (ret)
			return ret;
		c->sink_invalid = false;
	}
	ret = kverbs_perf_req_burst(c, n);
	/* SEND_BW: the responder checks each message as it arrives. */
	if (ret || !kverbs_perf_uses(run->t, KVERBS_PERF_MSG_ROUND))
		return ret;
	if (c->read_inv) {
		c->sink_invalid = true;
		run->read_inv++;
	}
	if (read) {
		kverbs_buf_sync_range_for_cpu(&c->buf, 0, (size_t)n * len);
		for (i = 0; i < n; i++) {
			if (!kverbs_perf_check(c->buf.vaddr + i * len, len,
					       first + i, &offset)) {
				run->result->mismatch_iter = first + i;
				return kverbs_ep_mismatch(c->ep, offset);
			}
		}
		/* The next round READs into the same slots. */
		kverbs_buf_sync_range_for_device(&c->buf, 0, (size_t)n * len);
	}
	ret = kverbs_perf_req_ctrl(c, KVERBS_PERF_MSG_ROUND, first, n, 0);
	if (!ret)
		ret = kverbs_perf_req_wait_ctrl(c, KVERBS_PERF_MSG_ROUND_OK, &m);
	if (ret)
		return ret;
	if (le64_to_cpu(m.a) != first + n)
		return kverbs_ep_failed(c->ep, -EPROTO, KVERBS_STEP_RECV);
	if (!(run->flags & KVERBS_PERF_F_INV))
		return 0;
	/* The responder took the key we invalidated, and offers a fresh one. */
	run->inv_sent++;
	if (le32_to_cpu(m.rkey) == c->rkey)
		return kverbs_ep_failed(c->ep, -EPROTO, KVERBS_STEP_RECV);
	c->rkey = le32_to_cpu(m.rkey);
	return 0;
}

/*
 * --validate fills or checks the buffers in rounds, but an atomic test's
 * values are checked as they complete.
 */
static bool kverbs_perf_req_rounds(const struct kverbs_perf_run *run)
{
	return (run->flags & KVERBS_PERF_F_VALIDATE) &&
	       run->t->op != KVERBS_PERF_OP_ATOMIC;
}

static int kverbs_perf_req_loop(struct kverbs_perf_req *c)
{
	struct kverbs_perf_run *run = c->run;
	u64 n, total;
	int ret;

	c->start_ns = ktime_get_ns();
	c->sample_ns = c->start_ns;
	c->ctrl_ns = c->start_ns;
	c->deadline_ns = c->start_ns + run->duration_ns;
	/* A latency test ends when the samples have no more room. */
	c->limit = run->samples_max ?: U64_MAX;
	/* Operations to run, 0 in duration mode. */
	total = run->iterations ? min(run->iterations, c->limit) : 0;
	if (kverbs_perf_is_pingpong(run->t)) {
		ret = kverbs_perf_pp_client(&c->pp, total, c->limit, c->deadline_ns,
					    &c->smp);
		atomic64_set(&c->completed, c->pp.iters);
		return ret;
	}
	if (!kverbs_perf_req_rounds(run))
		return kverbs_perf_req_burst(c, total);
	for (;;) {
		if (total ? c->posted == total :
			    ktime_get_ns() >= c->deadline_ns || c->posted == c->limit)
			return 0;
		n = min_t(u64, c->slots, (total ?: c->limit) - c->posted);
		ret = kverbs_perf_req_round(c, c->posted, n);
		if (ret)
			return ret;
	}
}

/*
 * On iWARP a SEND completes once the connection's TCP socket has taken
 * its bytes, not once the peer has them, and a teardown of ours that
 * comes before they left can lose them: over siw the responder then
 * sees the connection reset where DONE should have been.  There the
 * responder disconnects as soon as it has DONE (kverbs_perf_resp_linger()),
 * and the requester waits for that before it tears its own side down.
 * Bounded by the step's limit and ended by any signal; either way the
 * test has already run in full here, so nothing of that wait fails it.
 * On InfiniBand and RoCE the SEND's completion is the responder's
 * acknowledgment, and the requester disconnects first.
 */
static void kverbs_perf_req_await_close(struct kverbs_perf_req *c)
{
	struct kverbs_ep *ep = c->ep;

	if (!kverbs_perf_responder_closes_first(ep))
		return;
	kverbs_ep_wait_interruptible(ep, false,
				     kverbs_ep_wait_timeout(c->run->common.timeout_ns));
}

/* The responder's report is ours: tell it, and wait until it has it. */
static int kverbs_perf_req_done(struct kverbs_perf_req *c, u64 elapsed_ns)
{
	struct kverbs_ep *ep = c->ep;
	int ret = 0;

	/* DONE takes a receive too. */
	if (c->flow && c->posted == c->granted)
		ret = kverbs_perf_req_credit(c);
	if (!ret)
		ret = kverbs_perf_req_ctrl(c, KVERBS_PERF_MSG_DONE,
					   kverbs_perf_req_completed(c),
					   elapsed_ns, c->peak_bps);
	if (!ret)
		ret = kverbs_perf_wait_done(ep, &c->ctrl_send.done, c->run->common.timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_SEND);
	kverbs_perf_req_await_close(c);
	return 0;
}

static void kverbs_perf_req_free(void *arg);

/**
 * kverbs_perf_req_create - set up the requester's side of a perf test
 * @run: the test, as the client asked for it
 * @ep: its endpoint, bound to a device, not yet connected
 *
 * Creates the QP, allocates the buffer and posts the receive for the
 * responder's first message, all before the connection exists, so that
 * nothing the responder sends can find us unready.
 *
 * Return: the side,
 * or an ERR_PTR() with the failure recorded in @ep.
 */
struct kverbs_perf_req *kverbs_perf_req_create(struct kverbs_perf_run *run,
					       struct kverbs_ep *ep)
{
	struct kverbs_perf_req *c;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return ERR_PTR(kverbs_ep_failed(ep, -ENOMEM, KVERBS_STEP_SETUP));
	c->run = run;
	c->ep = ep;
	c->step = run->t->step;
	c->rw = run->flags & KVERBS_PERF_F_RW;
	kverbs_ep_set_release(ep, kverbs_perf_req_free, c);
	ret = kverbs_perf_req_setup(c);
	if (ret)
		ret = kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP);
	else
		ret = kverbs_msg_post_recv(&c->ctrl_recv, ep);
	if (ret) {
		kverbs_perf_req_stop(c);
		return ERR_PTR(ret);
	}
	return c;
}

/**
 * kverbs_perf_req_run - run the test on a connected endpoint
 * @c: the requester's side
 *
 * Return: 0 when the test ran to its end and the responder has our
 * report, else the first failure, which is also in the endpoint;
 * -EINTR when a signal ended it.  The result holds the numbers of what
 * ran, and the latency samples went to userspace, either way.
 */
int kverbs_perf_req_run(struct kverbs_perf_req *c)
{
	struct kverbs_perf_run *run = c->run;
	u64 elapsed = 0;
	int ret;

	ret = kverbs_perf_req_start(c);
	if (ret)
		goto out;
	ret = kverbs_perf_req_loop(c);
	elapsed = ktime_get_ns() - c->start_ns;
	run->ended_ns = ktime_get_real_ns();
	/*
	 * With the completions handled in softirq context or on a
	 * workqueue, the one still
	 * in flight after a failure or a signal could add a sample while
	 * they are copied: flush the QP first.
	 */
	if (ret && !c->ep->polled)
		kverbs_ep_drain(c->ep);
	/* The samples of what ran go back also when a failure or signal ended it. */
	kverbs_perf_samples_flush(&c->smp, run);
	if (!ret)
		ret = kverbs_perf_req_done(c, elapsed);
out:
	kverbs_perf_set_rates(run->result, kverbs_perf_req_completed(c), elapsed,
			      c->peak_bps);
	run->result->samples_stored = c->smp.stored;
	return ret;
}

/**
 * kverbs_perf_req_stop - the requester's side is over
 * @c: the side
 *
 * The rdma_rw contexts it still holds go now, while the QP and its MR
 * pool exist.  The rest goes with the endpoint (kverbs_ep_destroy()),
 * once the device is done with it (kverbs_perf_req_free()).
 */
void kverbs_perf_req_stop(struct kverbs_perf_req *c)
{
	kverbs_perf_req_rw_release(c);
}

/* The endpoint's release (kverbs_ep_set_release()): the device is done. */
static void kverbs_perf_req_free(void *arg)
{
	struct kverbs_perf_req *c = arg;

	kverbs_msg_free(&c->ctrl_recv);
	kverbs_msg_free(&c->ctrl_send);
	kverbs_buf_free(&c->buf);
	kvfree(c->rw_sgls);
	kvfree(c->wrs);
	kvfree(c->list);
	kverbs_perf_samples_free(&c->smp);
	kfree(c);
}
