// SPDX-License-Identifier: GPL-2.0
/*
 * The ping server: RDMA READs what each client advertises and RDMA
 * WRITEs it back.
 *
 * The transfers go through the rdma_rw API (drivers/infiniband/core/rw.c),
 * as in the NVMe and SCSI RDMA targets: it DMA-maps the buffer, and
 * decides per device whether plain scatter/gather entries will do or a
 * memory registration is needed, as iWARP requires for an RDMA READ sink.
 *
 * Where the client offered it and the device can (ping.h), each go-ahead
 * is a SEND with invalidate of the key it answers, as
 * nvmet_rdma_queue_response() (drivers/nvme/target/rdma.c) answers a
 * command whose host asked for it.
 */
#include "ping.h"
#include "trace.h"

#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <rdma/ib_cm.h>
#include <rdma/rw.h>

/* A session that ends with the client hanging up between iterations. */
#define KVERBS_PING_CLIENT_LEFT	1

/* Scatter/gather entries per work request; plenty for page-sized pieces. */
#define KVERBS_PING_MAX_SGE	32

struct kverbs_ping_server {
	struct kverbs_ping_run *run;
	struct kverbs_ep *ep;
	struct kverbs_buf buf;		/* RDMA READ sink, RDMA WRITE source */
	struct kverbs_msg recv;		/* the client's advertisements */
	struct kverbs_msg goahead;	/* the answer to each, all zero as in rping */
	bool inv;			/* the go-aheads invalidate the client's keys */
	struct rdma_rw_ctx rw;
	struct scatterlist *rw_sgl;	/* @buf for @rw, a page per entry */
	unsigned int rw_sg_cnt;		/* ... entries of it in use */
	bool rw_active;			/* @rw holds a mapping of @buf */
	enum dma_data_direction rw_dir;
	enum kverbs_step rw_step;
	struct kverbs_cqe rw_cqe;
	bool rw_done;
	bool goahead_posted;		/* the WRITE and its go-ahead are posted */
};

static void kverbs_ping_server_rw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_ping_server *s = container_of(wc->wr_cqe,
						    struct kverbs_ping_server,
						    rw_cqe.cqe);
	struct kverbs_ep *ep = kverbs_wc_ep(wc);

	trace_kverbs_wc(cq, wc, s->rw_step);
	if (wc->status != IB_WC_SUCCESS) {
		kverbs_ep_wc_failed(ep, wc, s->rw_step);
		return;
	}
	kverbs_set_done(&s->rw_done);
	wake_up(&ep->wait);
}

static int kverbs_ping_server_setup(struct kverbs_ping_server *s)
{
	struct kverbs_ep *ep = s->ep;
	struct ib_device *ibdev = kverbs_ep_device(ep);
	u32 port = kverbs_ep_port(ep);
	u32 pages = DIV_ROUND_UP(s->run->msg_size, PAGE_SIZE);
	u32 sge = min_t(u32, min_t(u32, ibdev->attrs.max_send_sge,
				   ibdev->attrs.max_sge_rd), KVERBS_PING_MAX_SGE);
	struct kverbs_ep_caps caps = {
		/*
		 * The largest READ or WRITE in plain SGEs, plus the two
		 * go-aheads that may be in flight with it.  rdma_rw_init_qp()
		 * adds what max_rdma_ctxs contexts of that size need, on every
		 * transport: counted twice where plain SGEs serve (RoCE, IB),
		 * which costs a few send queue entries and is simpler than
		 * asking rdma_rw which it will use.
		 */
		.max_send_wr = 2 + DIV_ROUND_UP(pages, max(sge, 1U)),
		.max_recv_wr = 1,
		.max_send_sge = min_t(u32, ibdev->attrs.max_send_sge,
				      KVERBS_PING_MAX_SGE),
		/* MRs for the largest transfer, one transfer at a time. */
		.max_rdma_ctxs = rdma_rw_mr_factor(ibdev, port, pages),
	};
	int ret;

	ret = kverbs_ep_create_qp(ep, &caps);
	if (ret)
		return ret;
	/* A page per entry (kverbs_buf_sg_pages()), one more for the offset. */
	s->rw_sgl = kvcalloc(pages + 1, sizeof(*s->rw_sgl), GFP_KERNEL_ACCOUNT);
	if (!s->rw_sgl)
		return -ENOMEM;
	ret = kverbs_msg_alloc(&s->recv, ep->pd, sizeof(struct kverbs_ping_info),
			       DMA_FROM_DEVICE);
	if (ret)
		return ret;
	ret = kverbs_msg_alloc(&s->goahead, ep->pd, sizeof(struct kverbs_ping_info),
			       DMA_TO_DEVICE);
	if (ret)
		return ret;
	s->rw_cqe.cqe.done = kverbs_ping_server_rw_done;
	/* The go-ahead has never been sent: nothing to wait for. */
	s->goahead.done = true;
	return kverbs_msg_post_recv(&s->recv, ep);
}

/*
 * Wait for an advertisement and check it like any input from outside.
 * Returns 0 or the recorded failure.
 */
static int kverbs_ping_server_wait_adv(struct kverbs_ping_server *s,
				       bool first, u64 *addr, u32 *rkey, u32 *len)
{
	struct kverbs_ep *ep = s->ep;
	struct kverbs_ping_info *info = s->recv.buf;
	long timeout = kverbs_ep_wait_timeout(s->run->common.timeout_ns);
	int ret;

	/* Between iterations any signal may end the session. */
	if (first)
		ret = kverbs_ep_wait_interruptible(ep, kverbs_is_done(&s->recv.done),
						   timeout);
	else
		ret = kverbs_ep_wait(ep, kverbs_is_done(&s->recv.done), timeout);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
	if (s->recv.byte_len != sizeof(*info))
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	kverbs_msg_sync_for_cpu(&s->recv);
	*addr = be64_to_cpu(info->addr);
	*rkey = be32_to_cpu(info->rkey);
	*len = be32_to_cpu(info->size);
	if (!*len)
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	if (*len > s->run->msg_size)
		return kverbs_ep_failed(ep, -EMSGSIZE, KVERBS_STEP_RECV);
	/* The client sends nothing more before our answer to this one. */
	return kverbs_msg_post_recv(&s->recv, ep);
}

/*
 * The go-ahead that answers the client's advertisement of @rkey, which
 * the server is done with.  The go-ahead buffer is shared: send it again
 * only once it went out.
 */
static int kverbs_ping_server_goahead_wr(struct kverbs_ping_server *s,
					 struct ib_send_wr *wr, u32 rkey)
{
	struct kverbs_ep *ep = s->ep;
	int ret;

	ret = kverbs_ep_wait(ep, kverbs_is_done(&s->goahead.done),
			     kverbs_ep_wait_timeout(s->run->common.timeout_ns));
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_SEND);
	kverbs_msg_send_wr(&s->goahead, wr);
	if (s->inv) {
		wr->opcode = IB_WR_SEND_WITH_INV;
		wr->ex.invalidate_rkey = rkey;
	}
	return 0;
}

/*
 * What the client's hello offers (ping.h), and the answer for its
 * accept in @answer: 0 for a client that sent none (rping), which gets
 * an accept without private data, as from rping; else its size.
 */
static u8 kverbs_ping_server_hello(struct kverbs_ping_server *s,
				   struct kverbs_ping_hello *answer)
{
	struct ib_device *ibdev = kverbs_ep_device(s->ep);
	struct kverbs_ping_hello hello = {};
	u8 len;

	len = kverbs_ep_private_data(s->ep, &hello, sizeof(hello));
	if (len < sizeof(hello) || le16_to_cpu(hello.magic) != KVERBS_PING_MAGIC ||
	    !le16_to_cpu(hello.version))
		return 0;
	s->inv = (le32_to_cpu(hello.flags) & KVERBS_PING_HELLO_INV) &&
		 !(s->run->flags & KVERBS_PING_F_NO_INV) &&
		 (ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS);
	answer->magic = cpu_to_le16(KVERBS_PING_MAGIC);
	answer->version = cpu_to_le16(KVERBS_PING_VERSION);
	answer->flags = cpu_to_le32(s->inv ? KVERBS_PING_HELLO_INV : 0);
	return sizeof(*answer);
}

static void kverbs_ping_server_rw_destroy(struct kverbs_ping_server *s)
{
	struct kverbs_ep *ep = s->ep;

	if (!s->rw_active)
		return;
	rdma_rw_ctx_destroy(&s->rw, ep->id->qp, kverbs_ep_port(ep),
			    s->rw_sgl, s->rw_sg_cnt, s->rw_dir);
	s->rw_active = false;
}

/*
 * RDMA READ (DMA_FROM_DEVICE) or WRITE (DMA_TO_DEVICE) all of s->buf,
 * followed by @chain if given.  Waits until the last work request has
 * completed, then releases the mapping.
 */
static int kverbs_ping_server_rdma(struct kverbs_ping_server *s,
				   enum dma_data_direction dir,
				   u64 addr, u32 rkey, struct ib_send_wr *chain,
				   bool *chain_done)
{
	struct kverbs_ep *ep = s->ep;
	enum kverbs_step step = dir == DMA_FROM_DEVICE ? KVERBS_STEP_RDMA_READ :
							 KVERBS_STEP_RDMA_WRITE;
	struct ib_send_wr *first, *wr;
	bool *done = chain ? chain_done : &s->rw_done;
	int nr_wrs, ret;

	s->rw_sg_cnt = kverbs_buf_sg_pages(&s->buf, 0, s->buf.len, s->rw_sgl);
	nr_wrs = rdma_rw_ctx_init(&s->rw, ep->id->qp, kverbs_ep_port(ep),
				  s->rw_sgl, s->rw_sg_cnt, 0, addr, rkey, dir);
	if (nr_wrs < 0)
		return kverbs_ep_failed(ep, nr_wrs, step);
	s->rw_active = true;
	s->rw_dir = dir;
	s->rw_step = step;
	s->rw_done = false;

	first = rdma_rw_ctx_wrs(&s->rw, ep->id->qp, kverbs_ep_port(ep),
				chain ? NULL : &s->rw_cqe.cqe, chain);
	/*
	 * rdma_rw leaves its unsignaled work requests without a completion
	 * handler.  Were one of them to fail, only the flushes after it
	 * would be seen; with ours the real status is reported.
	 */
	for (wr = first; wr && wr != chain; wr = wr->next)
		if (!wr->wr_cqe)
			wr->wr_cqe = &s->rw_cqe.cqe;

	trace_kverbs_rw_post(ep->cq_id, kverbs_ep_next_cid(ep), ep->id->qp,
			     dir, s->buf.len, nr_wrs);
	ret = kverbs_post_send(ep, first, step);
	s->goahead_posted = !ret && chain;
	if (!ret)
		ret = kverbs_ep_wait(ep, kverbs_is_done(done),
				     kverbs_ep_wait_timeout(s->run->common.timeout_ns));
	if (ret)
		/* Still in flight: the mapping goes after the drain. */
		return kverbs_ep_failed(ep, ret, step);
	kverbs_ping_server_rw_destroy(s);
	return 0;
}

static int kverbs_ping_server_iterate(struct kverbs_ping_server *s, u64 iter)
{
	struct kverbs_ping_run *run = s->run;
	struct kverbs_ep *ep = s->ep;
	struct ib_send_wr send_wr;
	u64 start, addr;
	u32 rkey, len, sink_len, offset;
	int ret;

	ret = kverbs_ping_server_wait_adv(s, true, &addr, &rkey, &len);
	/* Hanging up instead of starting an iteration is how a client leaves. */
	if (ret == -ECONNRESET)
		return KVERBS_PING_CLIENT_LEFT;
	if (ret)
		return ret;
	/* "rdma-ping-%d: " alone can take 25 bytes: less cannot be checked. */
	if ((run->flags & KVERBS_PING_F_VALIDATE) && len < KVERBS_PING_MIN_SIZE)
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	start = ktime_get_ns();

	ret = kverbs_buf_resize(&s->buf, len);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RDMA_READ);
	ret = kverbs_ping_server_rdma(s, DMA_FROM_DEVICE, addr, rkey, NULL, NULL);
	if (ret)
		return ret;
	kverbs_buf_sync_for_cpu(&s->buf);

	if ((run->flags & KVERBS_PING_F_VALIDATE) &&
	    !kverbs_ping_check(s->buf.vaddr, len, iter, &offset))
		return kverbs_ep_mismatch(ep, offset);
	kverbs_ping_log(run, s->buf.vaddr, len);

	ret = kverbs_ping_server_goahead_wr(s, &send_wr, rkey);
	if (!ret)
		ret = kverbs_post_send(ep, &send_wr, KVERBS_STEP_SEND);
	if (!ret)
		ret = kverbs_ping_server_wait_adv(s, false, &addr, &rkey, &sink_len);
	if (ret)
		return ret;
	/* The client advertises its sink only once it has the go-ahead. */
	run->inv_sent += s->inv;
	if (sink_len < len)
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);

	/*
	 * Echo what was read, and in the same chain the go-ahead: the send
	 * queue orders it after the WRITE, and RC delivery puts the data in
	 * place before the client sees the go-ahead.
	 */
	kverbs_buf_sync_for_device(&s->buf);
	ret = kverbs_ping_server_goahead_wr(s, &send_wr, rkey);
	if (!ret)
		ret = kverbs_ping_server_rdma(s, DMA_TO_DEVICE, addr, rkey,
					      &send_wr, &s->goahead.done);
	/*
	 * The client hangs up as soon as it has the last go-ahead, which can
	 * be before our side has processed the acknowledgment: the send is
	 * then flushed.  Once it was posted, this iteration is done for us.
	 */
	if (ret == -ECONNRESET && s->goahead_posted) {
		kverbs_ping_account(run, start, len);
		run->inv_sent += s->inv;
		return KVERBS_PING_CLIENT_LEFT;
	}
	if (ret)
		return ret;

	kverbs_ping_account(run, start, len);
	run->inv_sent += s->inv;
	trace_kverbs_ping_iter(ep->cq_id, ep->id->qp, true, iter, len, ktime_get_ns() - start);
	return 0;
}

/* Serve one client from request to hang-up, and release it. */
static int kverbs_ping_server_session(struct kverbs_ping_run *run,
				      struct kverbs_ep *ep)
{
	struct kverbs_ping_hello answer;
	struct kverbs_ping_server *s;
	u64 iter;
	u8 answer_len;
	int ret;

	run->result->clients++;
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s) {
		ret = kverbs_ep_failed(ep, -ENOMEM, KVERBS_STEP_SETUP);
		kverbs_ep_reject(ep);
		goto out_report;
	}
	s->run = run;
	s->ep = ep;

	/* Set if the request could not be attached to its device. */
	ret = kverbs_ep_error(ep);
	if (ret)
		goto out_free;
	ret = kverbs_ping_server_setup(s);
	if (ret) {
		kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP);
		kverbs_ep_reject(ep);
		goto out_free;
	}
	answer_len = kverbs_ping_server_hello(s, &answer);
	ret = kverbs_ep_accept_data(ep, run->common.timeout_ns,
				    answer_len ? &answer : NULL, answer_len);
	if (ret)
		goto out_free;

	for (iter = 0; !run->count || iter < run->count; iter++) {
		ret = kverbs_ping_server_iterate(s, iter);
		if (ret)
			break;
	}

out_free:
	/*
	 * The teardown's own flushes are recorded after the failure that
	 * ended the session, if any, and so do not replace it.
	 */
	kverbs_ep_drain(ep);
	/*
	 * While the QP exists, and once the device is done with the
	 * buffers: reset if the drain did not end.
	 */
	if (s->rw_active)
		kverbs_ep_stop(ep);
	kverbs_ping_server_rw_destroy(s);
	kverbs_ep_quiesce(ep);
	kverbs_msg_free(&s->goahead);
	kverbs_msg_free(&s->recv);
	kverbs_buf_free(&s->buf);
	kvfree(s->rw_sgl);
	kfree(s);
	if (ret == KVERBS_PING_CLIENT_LEFT)
		ret = 0;
out_report:
	/* A signal ends the server, it is not the client's failure. */
	if (ret && ret != -EINTR) {
		kverbs_test_fail(&run->common, ep, ret);
		run->result->clients_failed++;
	}
	kverbs_ep_destroy(ep);
	return ret;
}

/**
 * kverbs_ping_server - run the server side of a ping
 * @run: the ping
 *
 * Serves one client, or with KVERBS_PING_F_PERSISTENT one after another
 * until a signal; from its own listener, or the file's with
 * KVERBS_PING_F_LISTENER, which other servers may share.
 *
 * Return: 0 when the (last) client's session succeeded,
 * -EINTR when a signal ended it, or the failure that ended it.
 */
int kverbs_ping_server(struct kverbs_ping_run *run)
{
	struct kverbs_listener *lsn;
	struct kverbs_ep *ep;
	int ret;

	/* The file's listener outlives us; our own does not. */
	lsn = run->lsn ?: kverbs_test_listen(&run->common);
	if (IS_ERR(lsn))
		return PTR_ERR(lsn);

	for (;;) {
		ep = kverbs_listener_accept(lsn);
		if (IS_ERR(ep)) {
			ret = PTR_ERR(ep);
			/* A persistent server's report is of its last failed client. */
			if (!run->common.fail.error || ret != -EINTR)
				kverbs_test_accept_failed(&run->common, ret);
			break;
		}
		ret = kverbs_ping_server_session(run, ep);
		if (!(run->flags & KVERBS_PING_F_PERSISTENT) || ret == -EINTR)
			break;
	}
	if (lsn != run->lsn)
		kverbs_listener_destroy(lsn);
	return ret;
}
