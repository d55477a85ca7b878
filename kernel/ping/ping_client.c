// SPDX-License-Identifier: GPL-2.0
/*
 * The ping client: advertises a source and a sink buffer each iteration
 * and checks that what the server wrote back is what it read.
 */
#include "ping.h"
#include "trace.h"

#include <linux/sched/signal.h>
#include <linux/timekeeping.h>

struct kverbs_ping_client {
	struct kverbs_ping_run *run;
	struct kverbs_ep *ep;
	struct kverbs_buf src;		/* the server RDMA READs it */
	struct kverbs_buf sink;		/* the server RDMA WRITEs it */
	struct kverbs_msg adv_src;	/* advertisement of @src */
	struct kverbs_msg adv_sink;	/* advertisement of @sink */
	struct kverbs_msg recv;		/* the server's go-ahead */
	bool inv;			/* each go-ahead invalidates the key it answers */
};

/*
 * Only one message is ever on its way to us: the server answers each
 * advertisement with one go-ahead, and the client does not advertise
 * again before it has that.
 */
static const struct kverbs_ep_caps kverbs_ping_client_caps = {
	/* LOCAL_INV + REG_MR + SEND per advertisement, two of them in flight. */
	.max_send_wr = 6,
	.max_recv_wr = 1,
	.max_send_sge = 1,
};

static int kverbs_ping_client_setup(struct kverbs_ping_client *c)
{
	struct kverbs_ep *ep = c->ep;
	struct ib_device *ibdev = kverbs_ep_device(ep);
	u32 len = c->run->msg_size;
	int ret;

	if (!kverbs_max_reg_size(ibdev)) {
		ibdev_dbg(ibdev, "no fast registration, cannot advertise buffers\n");
		return -EOPNOTSUPP;
	}
	if (len > kverbs_max_reg_size(ibdev))
		return -EMSGSIZE;

	ret = kverbs_ep_create_qp(ep, &kverbs_ping_client_caps);
	if (ret)
		return ret;
	ret = kverbs_buf_alloc(&c->src, len);
	if (ret)
		return ret;
	ret = kverbs_buf_map(&c->src, ep, DMA_TO_DEVICE);
	if (ret)
		return ret;
	ret = kverbs_buf_alloc(&c->sink, len);
	if (ret)
		return ret;
	/* Bidirectional: the CPU clears it before the device writes it. */
	ret = kverbs_buf_map(&c->sink, ep, DMA_BIDIRECTIONAL);
	if (ret)
		return ret;
	ret = kverbs_msg_alloc(&c->adv_src, ep->pd, sizeof(struct kverbs_ping_info),
			       DMA_TO_DEVICE);
	if (ret)
		return ret;
	ret = kverbs_msg_alloc(&c->adv_sink, ep->pd, sizeof(struct kverbs_ping_info),
			       DMA_TO_DEVICE);
	if (ret)
		return ret;
	/* Neither was sent yet: both are free to fill. */
	c->adv_src.done = true;
	c->adv_sink.done = true;
	return kverbs_msg_alloc(&c->recv, ep->pd, sizeof(struct kverbs_ping_info),
				DMA_FROM_DEVICE);
}

/*
 * Register @buf with a fresh key and the rights @access, and tell the
 * server about it; first revoke the key of @revoke, if not NULL (the
 * server is done with it, and the device runs the two in order).  The
 * advertisement goes out once the registration has completed (see
 * kverbs_buf_reg_wr()), so the server never learns a key before it is
 * valid.
 */
static int kverbs_ping_client_advertise(struct kverbs_ping_client *c,
					struct kverbs_buf *buf,
					struct kverbs_msg *adv, int access,
					struct kverbs_buf *revoke)
{
	struct kverbs_ping_info *info = adv->buf;
	struct kverbs_ep *ep = c->ep;
	struct ib_send_wr inv_wr, send_wr, *first;
	struct ib_reg_wr reg_wr;
	int ret;

	kverbs_buf_reg_wr(buf, &reg_wr, access);
	first = &reg_wr.wr;
	if (revoke) {
		kverbs_buf_inv_wr(revoke, &inv_wr, false);
		inv_wr.next = first;
		first = &inv_wr;
	}
	ret = kverbs_post_send(ep, first, KVERBS_STEP_REG_MR);
	if (ret)
		return ret;
	ret = kverbs_ep_wait(ep, kverbs_is_done(&buf->reg_done),
			     kverbs_ep_wait_timeout(c->run->common.timeout_ns));
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_REG_MR);
	/*
	 * The previous advertisement from @adv may have reached the server,
	 * and its go-ahead us, before its SEND completed here: the buffer
	 * is the device's until then (it would retransmit from it).
	 */
	ret = kverbs_ep_wait(ep, kverbs_is_done(&adv->done),
			     kverbs_ep_wait_timeout(c->run->common.timeout_ns));
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_SEND);

	info->addr = cpu_to_be64(buf->mr->iova);
	info->rkey = cpu_to_be32(buf->mr->rkey);
	info->size = cpu_to_be32(buf->len);
	kverbs_msg_send_wr(adv, &send_wr);
	return kverbs_post_send(ep, &send_wr, KVERBS_STEP_SEND);
}

/*
 * Wait for the server's go-ahead for @buf and get ready for the next one.
 *
 * Where remote invalidation was agreed, the go-ahead must have
 * invalidated @buf's key (IB_WC_WITH_INVALIDATE, the key in
 * ex.invalidate_rkey), as nvme_rdma_process_nvme_rsp()
 * (drivers/nvme/host/rdma.c) checks a response's; where it was not, it
 * must have invalidated nothing.  A device that checks the key fails a
 * wrong one in the receive's completion (rxe); siw invalidates the MR the
 * key's index names and reports the key, checked here.  Either way the
 * buffer's state is no longer what the client thinks, and the ping ends.
 * A key the server invalidated needs no LOCAL_INV: the buffer's next
 * kverbs_buf_reg_wr() gives it a fresh key, as after one.
 */
static int kverbs_ping_client_wait_goahead(struct kverbs_ping_client *c,
					   struct kverbs_buf *buf)
{
	struct kverbs_msg *recv = &c->recv;
	struct kverbs_ep *ep = c->ep;
	int ret;

	ret = kverbs_ep_wait(ep, kverbs_is_done(&recv->done),
			     kverbs_ep_wait_timeout(c->run->common.timeout_ns));
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_RECV);
	if (recv->byte_len != sizeof(struct kverbs_ping_info))
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	if (recv->invalidated != c->inv ||
	    (c->inv && recv->inv_rkey != buf->mr->rkey)) {
		ibdev_dbg(kverbs_ep_device(ep), "ping: the go-ahead invalidated key %#x, expected %#x (0: none)\n",
			  recv->invalidated ? recv->inv_rkey : 0,
			  c->inv ? buf->mr->rkey : 0);
		return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
	}
	c->run->inv_remote += recv->invalidated;
	return kverbs_msg_post_recv(recv, ep);
}

/*
 * The server is done with the sink: revoke its key, and wait for that,
 * before the CPU reads it.  Until then the server could still write it,
 * and what the client checks and logs could differ from what it keeps.
 *
 * A go-ahead that invalidated the sink's key gives the same guarantee:
 * the responder invalidates before it completes the receive, so when
 * the client has the go-ahead the key is dead and nothing is posted.
 */
static int kverbs_ping_client_revoke(struct kverbs_ping_client *c)
{
	struct kverbs_ep *ep = c->ep;
	struct ib_send_wr inv_wr;
	int ret;

	if (c->inv)
		return 0;

	kverbs_buf_inv_wr(&c->sink, &inv_wr, true);
	ret = kverbs_post_send(ep, &inv_wr, KVERBS_STEP_LOCAL_INV);
	if (!ret)
		ret = kverbs_ep_wait(ep, kverbs_is_done(&c->sink.inv_done),
				     kverbs_ep_wait_timeout(c->run->common.timeout_ns));
	/*
	 * A server that reached its own count may hang up first.  With the
	 * connection gone the key is out of reach anyway: the PD is this
	 * connection's alone, and the MR is deregistered on the way out.
	 */
	if (ret == -ECONNRESET)
		return 0;
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_LOCAL_INV);
	return 0;
}

/*
 * Connect with our hello, offering remote invalidation unless told not
 * to (ping.h), and learn from the server's accept whether it agreed: an
 * rping server's accept has no hello (zeros on IB, nothing on iWARP).
 */
static int kverbs_ping_client_connect(struct kverbs_ping_client *c)
{
	bool offer = !(c->run->flags & KVERBS_PING_F_NO_INV);
	struct kverbs_ping_hello hello = {
		.magic = cpu_to_le16(KVERBS_PING_MAGIC),
		.version = cpu_to_le16(KVERBS_PING_VERSION),
		.flags = cpu_to_le32(offer ? KVERBS_PING_HELLO_INV : 0),
	};
	struct kverbs_ep *ep = c->ep;
	int ret;

	/* One RDMA READ at a time is all rping needs from the responder. */
	ret = kverbs_ep_connect_data(ep, 1, c->run->common.timeout_ns,
				     &hello, sizeof(hello));
	if (ret)
		return ret;
	memset(&hello, 0, sizeof(hello));
	if (kverbs_ep_private_data(ep, &hello, sizeof(hello)) < sizeof(hello) ||
	    le16_to_cpu(hello.magic) != KVERBS_PING_MAGIC || !le16_to_cpu(hello.version))
		return 0;
	c->inv = offer && (le32_to_cpu(hello.flags) & KVERBS_PING_HELLO_INV);
	return 0;
}

static int kverbs_ping_client_iterate(struct kverbs_ping_client *c, u64 iter)
{
	struct kverbs_ping_run *run = c->run;
	struct kverbs_ep *ep = c->ep;
	u32 len = run->msg_size;
	u64 start = ktime_get_ns();
	u32 offset;
	int ret;

	kverbs_ping_fill(c->src.vaddr, len, iter);
	kverbs_buf_sync_for_device(&c->src);
	/* A sink the server never wrote must not pass for this iteration. */
	memset(c->sink.vaddr, 0, len);
	kverbs_buf_sync_for_device(&c->sink);

	/* The sink's key was revoked at the end of the last iteration. */
	ret = kverbs_ping_client_advertise(c, &c->src, &c->adv_src,
					   IB_ACCESS_REMOTE_READ, NULL);
	if (!ret)
		ret = kverbs_ping_client_wait_goahead(c, &c->src);
	if (ret)
		return ret;

	/*
	 * Remote write needs local write too, by the IB specification.  The
	 * source's key is revoked here, unless its go-ahead did.
	 */
	ret = kverbs_ping_client_advertise(c, &c->sink, &c->adv_sink,
					   IB_ACCESS_LOCAL_WRITE |
					   IB_ACCESS_REMOTE_WRITE,
					   c->inv ? NULL : &c->src);
	if (!ret)
		ret = kverbs_ping_client_wait_goahead(c, &c->sink);
	if (!ret)
		ret = kverbs_ping_client_revoke(c);
	if (ret)
		return ret;

	kverbs_buf_sync_for_cpu(&c->sink);
	if ((run->flags & KVERBS_PING_F_VALIDATE) &&
	    !kverbs_ping_check(c->sink.vaddr, len, iter, &offset))
		return kverbs_ep_mismatch(ep, offset);
	kverbs_ping_log(run, c->sink.vaddr, len);
	kverbs_ping_account(run, start, len);
	trace_kverbs_ping_iter(ep->cq_id, ep->id->qp, false, iter, len, ktime_get_ns() - start);
	return 0;
}

/**
 * kverbs_ping_client - run the client side of a ping
 * @run: the ping
 *
 * Return: 0 when all iterations completed, else the first failure, which
 * is also in @run->common.fail.
 */
int kverbs_ping_client(struct kverbs_ping_run *run)
{
	struct kverbs_ping_client *c;
	struct kverbs_ep *ep;
	u64 iter;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return kverbs_test_failed(&run->common, -ENOMEM, KVERBS_STEP_SETUP);
	c->run = run;

	ep = kverbs_test_ep_create(&run->common);
	if (IS_ERR(ep)) {
		ret = PTR_ERR(ep);
		goto out_free;
	}
	c->ep = ep;

	ret = kverbs_test_resolve(&run->common, ep);
	if (ret)
		goto out_destroy;
	ret = kverbs_ping_client_setup(c);
	if (ret) {
		kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP);
		goto out_destroy;
	}
	ret = kverbs_msg_post_recv(&c->recv, ep);
	if (ret)
		goto out_destroy;
	ret = kverbs_ping_client_connect(c);
	if (ret)
		goto out_destroy;

	for (iter = 0; !run->count || iter < run->count; iter++) {
		/* SIGINT ends a ping here, between iterations. */
		if (signal_pending(current)) {
			ret = kverbs_ep_failed(ep, -EINTR, KVERBS_STEP_NONE);
			break;
		}
		ret = kverbs_ping_client_iterate(c, iter);
		if (ret)
			break;
	}

out_destroy:
	/* Before the flushes of the teardown add failures of their own. */
	if (ret)
		kverbs_test_fail(&run->common, ep, ret);
	/* The device must be done with the buffers before they go. */
	kverbs_ep_quiesce(ep);
	kverbs_msg_free(&c->recv);
	kverbs_msg_free(&c->adv_sink);
	kverbs_msg_free(&c->adv_src);
	kverbs_buf_free(&c->sink);
	kverbs_buf_free(&c->src);
	kverbs_ep_destroy(ep);
out_free:
	kfree(c);
	return ret;
}
