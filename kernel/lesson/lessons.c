// SPDX-License-Identifier: GPL-2.0
/*
 * The lessons: each classic verbs mistake done wrong, then right, on
 * connections of their own (lesson.c makes and ends them).  The client
 * end is the requester, the server end the responder.  Each lesson's
 * comment says what the wrong run does, what the device answers, and
 * what the right run changes; Documentation/lessons.rst says why.
 */
#include "lesson.h"
#include "trace.h"

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

/* Bytes each lesson moves: small, the mistakes are not about size. */
#define KVERBS_LESSON_LEN	64

static void kverbs_lesson_sge(struct ib_sge *sge, struct kverbs_buf *buf,
			      size_t offset, u32 len)
{
	sge->addr = buf->mr->iova + offset;
	sge->length = len;
	sge->lkey = buf->mr->lkey;
}

/* An RDMA WRITE of @sge to the start of the server's buffer. */
static void kverbs_lesson_write_wr(struct kverbs_lesson_ctx *lc,
				   struct ib_rdma_wr *wr, struct ib_sge *sge)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr.opcode = IB_WR_RDMA_WRITE;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	wr->remote_addr = lc->remote.mr->iova;
	wr->rkey = lc->remote.mr->rkey;
}

/* The run's data is not what the lesson expects. */
static void kverbs_lesson_mismatch(struct kverbs_lesson_run *run)
{
	run->error = -EBADMSG;
	run->valid |= KVERBS_RESULT_MISMATCH;
	run->step = KVERBS_STEP_VALIDATE;
}

/*
 * Unsignaled sends fill the send queue.  A work request's slot in the
 * send queue is the consumer's again only once the consumer has seen it
 * complete, and an unsignaled one completes only with a later signaled
 * one: post only unsignaled ones and the queue fills, and ib_post_send()
 * fails with -ENOMEM, however fast the device works.  (A soft device
 * such as rxe frees a slot as soon as the work request is done, so a
 * slow enough poster never sees it there; the lesson posts as a busy
 * ULP does, faster than the wire: WRITEs of 64 KiB, each many packets,
 * so that the queue fills long before the first one is done.)  Right: signal one in
 * KVERBS_LESSON_SIGNAL_EVERY, and never have more posted than the queue
 * holds beyond the last signaled one seen complete.
 */
#define KVERBS_LESSON_SQ_DEPTH		16
#define KVERBS_LESSON_SIGNAL_EVERY	4
#define KVERBS_LESSON_UNSIGNALED_WRS	(8 * KVERBS_LESSON_SQ_DEPTH)
static_assert(KVERBS_LESSON_UNSIGNALED_WRS <= KVERBS_LESSON_MAX_WRS);
#define KVERBS_LESSON_UNSIGNALED_LEN	(64 * 1024)

/*
 * The wrong run fills the queue the device made, deeper than asked on
 * most devices; in the error state every one of those WRITEs completes,
 * unsignaled or not, and the CQ holds them all (fill_sq).
 */
static const struct kverbs_lesson_conn kverbs_lesson_unsignaled_conn = {
	.caps = {
		.max_send_wr = KVERBS_LESSON_SQ_DEPTH,
		.max_recv_wr = 1,
		.max_send_sge = 1,
		.fill_sq = true,
	},
	.rnr_retry = 7,
};

static int kverbs_lesson_write_bufs(struct kverbs_lesson_ctx *lc, size_t len,
				    int remote_access)
{
	int ret;

	ret = kverbs_lesson_buf(lc, lc->cli, &lc->local, len,
				IB_ACCESS_LOCAL_WRITE);
	if (!ret)
		ret = kverbs_lesson_buf(lc, lc->srv, &lc->remote, len,
					remote_access);
	return ret;
}

static void kverbs_lesson_queue_depth(struct kverbs_lesson_ctx *lc)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (!ib_query_qp(lc->cli->id->qp, &attr, IB_QP_CAP, &init))
		lc->run->queue_depth = attr.cap.max_send_wr;
}

/*
 * After the -ENOMEM: one signaled WRITE, posted as soon as there is
 * room, retires every unsignaled one before it.  On a device that frees
 * slots only on a signaled completion there is never room again, and
 * this gives up after the step limit: then only the QP's error state
 * (the teardown) empties the queue.
 */
static void kverbs_lesson_unsignaled_recover(struct kverbs_lesson_ctx *lc,
					     u32 seq)
{
	unsigned long deadline = jiffies + kverbs_lesson_timeout(lc);
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	int ret;

	kverbs_lesson_sge(&sge, &lc->local, 0, KVERBS_LESSON_UNSIGNALED_LEN);
	for (;;) {
		kverbs_lesson_write_wr(lc, &wr, &sge);
		kverbs_lesson_wr_init(lc, &wr.wr, seq, KVERBS_STEP_RDMA_WRITE, true);
		ret = kverbs_post_send_try(lc->cli, &wr.wr);
		if (ret != -ENOMEM || time_after(jiffies, deadline) ||
		    fatal_signal_pending(current))
			break;
		usleep_range(500, 1000);
	}
	if (ret)
		return;
	/* Pairs with the handler's smp_store_release(), as in kverbs_lesson_wait(). */
	kverbs_ep_wait(lc->cli, smp_load_acquire(&lc->done) >= seq,
		       kverbs_lesson_timeout(lc));
}

static int kverbs_lesson_unsignaled_wrong(struct kverbs_lesson_ctx *lc)
{
	struct kverbs_lesson_run *run = lc->run;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	int ret = 0;
	u32 seq;

	kverbs_lesson_sge(&sge, &lc->local, 0, KVERBS_LESSON_UNSIGNALED_LEN);
	lc->start_ns = ktime_get_ns();
	for (seq = 1; seq <= KVERBS_LESSON_UNSIGNALED_WRS; seq++) {
		kverbs_lesson_write_wr(lc, &wr, &sge);
		kverbs_lesson_wr_init(lc, &wr.wr, seq, KVERBS_STEP_RDMA_WRITE, false);
		/* The failure is the lesson, not the connection's. */
		ret = kverbs_post_send_try(lc->cli, &wr.wr);
		if (ret)
			break;
		run->posted++;
	}
	run->elapsed_ns = ktime_get_ns() - lc->start_ns;
	if (ret) {
		run->post_error = ret;
		run->error = ret;
		run->step = KVERBS_STEP_RDMA_WRITE;
		kverbs_lesson_unsignaled_recover(lc, seq);
	}
	return 0;
}

static int kverbs_lesson_unsignaled_right(struct kverbs_lesson_ctx *lc)
{
	const u32 total = KVERBS_LESSON_UNSIGNALED_WRS;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	bool signaled;
	u32 seq;
	int ret;

	kverbs_lesson_sge(&sge, &lc->local, 0, KVERBS_LESSON_UNSIGNALED_LEN);
	for (seq = 1; seq <= total; seq++) {
		/*
		 * Room for this one: no more than the queue's depth posted
		 * past the last signaled work request seen complete.  One
		 * of every KVERBS_LESSON_SIGNAL_EVERY is signaled, so the
		 * wait is for one that is already posted.
		 */
		if (seq - smp_load_acquire(&lc->done) > KVERBS_LESSON_SQ_DEPTH) {
			ret = kverbs_lesson_wait(lc, seq - KVERBS_LESSON_SQ_DEPTH);
			if (ret)
				return 0;
		}
		signaled = !(seq % KVERBS_LESSON_SIGNAL_EVERY) || seq == total;
		kverbs_lesson_write_wr(lc, &wr, &sge);
		kverbs_lesson_wr_init(lc, &wr.wr, seq, KVERBS_STEP_RDMA_WRITE,
				      signaled);
		if (kverbs_lesson_post(lc, &wr.wr, KVERBS_STEP_RDMA_WRITE))
			return 0;
	}
	kverbs_lesson_wait(lc, total);
	return 0;
}

/**
 * kverbs_lesson_unsignaled - KVERBS_LESSON_UNSIGNALED
 * @lc: the lesson
 *
 * Return: 0 when both runs ran, else why the lesson stopped.
 */
int kverbs_lesson_unsignaled(struct kverbs_lesson_ctx *lc)
{
	static int (*const runs[])(struct kverbs_lesson_ctx *lc) = {
		kverbs_lesson_unsignaled_wrong,
		kverbs_lesson_unsignaled_right,
	};
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		ret = kverbs_lesson_begin(lc, &kverbs_lesson_unsignaled_conn,
					  i ? KVERBS_LESSON_RIGHT : KVERBS_LESSON_WRONG);
		if (ret)
			return ret;
		ret = kverbs_lesson_write_bufs(lc, KVERBS_LESSON_UNSIGNALED_LEN,
					       IB_ACCESS_LOCAL_WRITE |
					       IB_ACCESS_REMOTE_WRITE);
		if (!ret) {
			kverbs_lesson_queue_depth(lc);
			ret = runs[i](lc);
		}
		kverbs_lesson_end(lc);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Receiver not ready.  A SEND consumes a receive the peer posted; when
 * there is none, an InfiniBand or RoCE responder answers RNR NAK and the
 * requester tries again after the responder's RNR timer, as often as its
 * QP's rnr_retry says (which the peer's connection reply sets: rdma_cm's
 * rnr_retry_count).  Wrong: 0, the first RNR NAK fails the SEND with
 * IB_WC_RNR_RETRY_EXC_ERR and the connection with it.  Right: 7, retry
 * for ever: the SEND waits, and completes once the receive is posted.
 * A ULP still posts its receives first; the retry only covers a peer
 * that is late.  iWARP has no RNR NAK at all (the lesson is refused).
 */
#define KVERBS_LESSON_RNR_LATE_MS	200

static const char kverbs_lesson_rnr_msg[] = "kverbs lesson: receiver not ready";

static int kverbs_lesson_rnr_run(struct kverbs_lesson_ctx *lc, bool right)
{
	struct kverbs_lesson_run *run = lc->run;
	struct ib_send_wr wr;
	int ret;

	ret = kverbs_msg_alloc(&lc->send, lc->cli->pd, KVERBS_LESSON_LEN,
			       DMA_TO_DEVICE);
	if (!ret)
		ret = kverbs_msg_alloc(&lc->recv, lc->srv->pd, KVERBS_LESSON_LEN,
				       DMA_FROM_DEVICE);
	if (ret)
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	strscpy(lc->send.buf, kverbs_lesson_rnr_msg, KVERBS_LESSON_LEN);

	kverbs_msg_send_wr(&lc->send, &wr);
	kverbs_lesson_wr_init(lc, &wr, 1, KVERBS_STEP_SEND, true);
	if (kverbs_lesson_post(lc, &wr, KVERBS_STEP_SEND))
		return 0;
	if (!right) {
		/* Fails: IB_WC_RNR_RETRY_EXC_ERR, which the report shows. */
		kverbs_lesson_wait(lc, 1);
		return 0;
	}

	/* The server is late: its receive comes after the SEND. */
	ret = kverbs_ep_wait(lc->cli, smp_load_acquire(&lc->done) >= 1,
			     msecs_to_jiffies(KVERBS_LESSON_RNR_LATE_MS));
	if (ret != -ETIMEDOUT)
		return 0;
	if (kverbs_msg_post_recv(&lc->recv, lc->srv))
		return 0;
	if (kverbs_lesson_wait(lc, 1))
		return 0;
	ret = kverbs_ep_wait(lc->srv, kverbs_is_done(&lc->recv.done),
			     kverbs_lesson_timeout(lc));
	if (ret)
		return 0;
	kverbs_msg_sync_for_cpu(&lc->recv);
	memcpy(&run->value, lc->recv.buf, sizeof(run->value));
	if (lc->recv.byte_len != KVERBS_LESSON_LEN ||
	    memcmp(lc->recv.buf, lc->send.buf, KVERBS_LESSON_LEN)) {
		run->error = -EBADMSG;
		run->step = KVERBS_STEP_VALIDATE;
	}
	return 0;
}

/**
 * kverbs_lesson_rnr - KVERBS_LESSON_RNR
 * @lc: the lesson
 *
 * Return: 0 when both runs ran, else why the lesson stopped.
 */
int kverbs_lesson_rnr(struct kverbs_lesson_ctx *lc)
{
	/* The requester's retries of a SEND the responder has no receive for. */
	static const struct kverbs_lesson_conn none = {
		.caps = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1 },
		.rnr_retry = 0,
	};
	static const struct kverbs_lesson_conn forever = {
		.caps = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1 },
		.rnr_retry = 7,
	};

	return kverbs_lesson_pair(lc, &none, &forever, kverbs_lesson_rnr_run);
}

/*
 * Fence.  An RDMA READ and the SEND after it in the same send queue: the
 * READ is only a request when the device moves on to the SEND, and the
 * SEND's data is gathered from memory as it goes out, so a SEND of the
 * READ's sink may carry what the sink held before the READ's response
 * landed.  IB_SEND_FENCE makes the device hold the SEND until every
 * READ and atomic before it completed.  Wrong: no fence.  Right: the
 * SEND fenced.  The server receives the SEND and the lesson compares it
 * with what the READ fetched ('N', new) and what the sink held ('O',
 * old).  The READ is large and the SEND carries its sink's last bytes,
 * the last the READ's response places: unfenced, the SEND goes out
 * stale unless the device finished the whole READ before gathering it.
 * The READ is 64 packets at the 1024-byte MTU rxe has on a 1500-byte
 * Ethernet, within 128: rxe holds a request back while more than 128
 * PSNs are unacknowledged (RXE_MAX_UNACKED_PSNS), which would hold the
 * SEND until half of a longer READ had landed, in effect a fence.
 * Whether the wrong run shows stale data still depends on the device:
 * the report says what it saw.  On iWARP the READ's sink is registered
 * with remote write too: the READ response is placed as a WRITE.
 */
#define KVERBS_LESSON_FENCE_LEN	SZ_64K
#define KVERBS_LESSON_FENCE_TAIL (KVERBS_LESSON_FENCE_LEN - KVERBS_LESSON_LEN)

static int kverbs_lesson_fence_run(struct kverbs_lesson_ctx *lc, bool fenced)
{
	struct ib_device *ibdev = kverbs_ep_device(lc->cli);
	struct kverbs_lesson_run *run = lc->run;
	struct ib_rdma_wr read_wr;
	struct ib_send_wr send_wr;
	struct ib_sge read_sge, send_sge;
	int sink_access = IB_ACCESS_LOCAL_WRITE;
	int ret;

	if (rdma_protocol_iwarp(ibdev, kverbs_ep_port(lc->cli)))
		sink_access |= IB_ACCESS_REMOTE_WRITE;
	ret = kverbs_lesson_buf(lc, lc->cli, &lc->local,
				KVERBS_LESSON_FENCE_LEN, sink_access);
	if (!ret)
		ret = kverbs_lesson_buf(lc, lc->srv, &lc->remote,
					KVERBS_LESSON_FENCE_LEN,
					IB_ACCESS_REMOTE_READ);
	if (ret)
		return 0;
	ret = kverbs_msg_alloc(&lc->recv, lc->srv->pd, KVERBS_LESSON_LEN,
			       DMA_FROM_DEVICE);
	if (ret)
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	memset(lc->local.vaddr, 'O', KVERBS_LESSON_FENCE_LEN);
	kverbs_buf_sync_for_device(&lc->local);
	memset(lc->remote.vaddr, 'N', KVERBS_LESSON_FENCE_LEN);
	kverbs_buf_sync_for_device(&lc->remote);
	if (kverbs_msg_post_recv(&lc->recv, lc->srv))
		return 0;

	kverbs_lesson_sge(&read_sge, &lc->local, 0, KVERBS_LESSON_FENCE_LEN);
	memset(&read_wr, 0, sizeof(read_wr));
	read_wr.wr.opcode = IB_WR_RDMA_READ;
	read_wr.wr.sg_list = &read_sge;
	read_wr.wr.num_sge = 1;
	read_wr.remote_addr = lc->remote.mr->iova;
	read_wr.rkey = lc->remote.mr->rkey;
	kverbs_lesson_wr_init(lc, &read_wr.wr, 1, KVERBS_STEP_RDMA_READ, false);

	kverbs_lesson_sge(&send_sge, &lc->local, KVERBS_LESSON_FENCE_TAIL,
			  KVERBS_LESSON_LEN);
	memset(&send_wr, 0, sizeof(send_wr));
	send_wr.opcode = IB_WR_SEND;
	send_wr.sg_list = &send_sge;
	send_wr.num_sge = 1;
	send_wr.send_flags = fenced ? IB_SEND_FENCE : 0;
	kverbs_lesson_wr_init(lc, &send_wr, 2, KVERBS_STEP_SEND, true);
	read_wr.wr.next = &send_wr;

	if (kverbs_lesson_post(lc, &read_wr.wr, KVERBS_STEP_RDMA_READ))
		return 0;
	if (kverbs_lesson_wait(lc, 2))
		return 0;
	if (kverbs_ep_wait(lc->srv, kverbs_is_done(&lc->recv.done),
			   kverbs_lesson_timeout(lc)))
		return 0;
	kverbs_msg_sync_for_cpu(&lc->recv);
	memcpy(&run->value, lc->recv.buf, sizeof(run->value));
	if (memchr_inv(lc->recv.buf, 'N', KVERBS_LESSON_LEN))
		kverbs_lesson_mismatch(run);
	return 0;
}

/**
 * kverbs_lesson_fence - KVERBS_LESSON_FENCE
 * @lc: the lesson
 *
 * Return: 0 when both runs ran, else why the lesson stopped.
 */
int kverbs_lesson_fence(struct kverbs_lesson_ctx *lc)
{
	static const struct kverbs_lesson_conn conn = {
		.caps = { .max_send_wr = 3, .max_recv_wr = 1, .max_send_sge = 1 },
		.rnr_retry = 7,
		.rd_atom = 1,
	};

	return kverbs_lesson_pair(lc, &conn, &conn, kverbs_lesson_fence_run);
}

/*
 * Access rights.  The rights of an MR are checked by the responder, on
 * every access: an RDMA WRITE needs remote write, an atomic remote
 * atomic.  Without them the responder answers with a NAK, the
 * requester's work request completes with IB_WC_REM_ACCESS_ERR, and
 * both QPs go to the error state (the responder's receives are
 * flushed).  Wrong: a WRITE to an MR registered with remote read only;
 * an atomic to one with remote write only.  Right: local write, remote
 * write and remote atomic: by the specification remote write and remote
 * atomic are allowed only with local write, since both write the
 * memory.  The atomic's run is marked -EOPNOTSUPP on a device without
 * atomics (siw).
 */
#define KVERBS_LESSON_ATOMIC_OFF	KVERBS_LESSON_LEN
#define KVERBS_LESSON_ATOMIC_INIT	41

enum kverbs_lesson_access_run {
	KVERBS_LESSON_ACCESS_WRITE,
	KVERBS_LESSON_ACCESS_ATOMIC,
	KVERBS_LESSON_ACCESS_RIGHT,
};

static void kverbs_lesson_atomic_wr(struct kverbs_lesson_ctx *lc,
				    struct ib_atomic_wr *wr, struct ib_sge *sge)
{
	kverbs_lesson_sge(sge, &lc->local, KVERBS_LESSON_ATOMIC_OFF, sizeof(u64));
	memset(wr, 0, sizeof(*wr));
	wr->wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	wr->remote_addr = lc->remote.mr->iova + KVERBS_LESSON_ATOMIC_OFF;
	wr->rkey = lc->remote.mr->rkey;
	wr->compare_add = 1;
}

static int kverbs_lesson_access_run(struct kverbs_lesson_ctx *lc,
				    enum kverbs_lesson_access_run which,
				    bool atomics)
{
	static const int remote_access[] = {
		[KVERBS_LESSON_ACCESS_WRITE] = IB_ACCESS_LOCAL_WRITE |
					       IB_ACCESS_REMOTE_READ,
		[KVERBS_LESSON_ACCESS_ATOMIC] = IB_ACCESS_LOCAL_WRITE |
						IB_ACCESS_REMOTE_WRITE,
		[KVERBS_LESSON_ACCESS_RIGHT] = IB_ACCESS_LOCAL_WRITE |
					       IB_ACCESS_REMOTE_WRITE |
					       IB_ACCESS_REMOTE_ATOMIC,
	};
	struct kverbs_lesson_run *run = lc->run;
	size_t len = KVERBS_LESSON_ATOMIC_OFF + sizeof(u64);
	struct ib_sge write_sge, atomic_sge;
	struct ib_atomic_wr atomic_wr;
	struct ib_rdma_wr write_wr;
	u64 *orig, *target;
	u32 last;
	int ret;

	if (kverbs_lesson_write_bufs(lc, len, remote_access[which]))
		return 0;
	ret = kverbs_msg_alloc(&lc->recv, lc->srv->pd, KVERBS_LESSON_LEN,
			       DMA_FROM_DEVICE);
	if (ret)
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	/* Posted so that the server's side of a failure shows: it is flushed. */
	if (kverbs_msg_post_recv(&lc->recv, lc->srv))
		return 0;
	memset(lc->local.vaddr, 'W', KVERBS_LESSON_LEN);
	kverbs_buf_sync_for_device(&lc->local);
	target = lc->remote.vaddr + KVERBS_LESSON_ATOMIC_OFF;
	*target = KVERBS_LESSON_ATOMIC_INIT;
	kverbs_buf_sync_for_device(&lc->remote);

	kverbs_lesson_sge(&write_sge, &lc->local, 0, KVERBS_LESSON_LEN);
	kverbs_lesson_write_wr(lc, &write_wr, &write_sge);
	kverbs_lesson_atomic_wr(lc, &atomic_wr, &atomic_sge);
	switch (which) {
	case KVERBS_LESSON_ACCESS_WRITE:
		kverbs_lesson_wr_init(lc, &write_wr.wr, 1, KVERBS_STEP_RDMA_WRITE, true);
		ret = kverbs_lesson_post(lc, &write_wr.wr, KVERBS_STEP_RDMA_WRITE);
		last = 1;
		break;
	case KVERBS_LESSON_ACCESS_ATOMIC:
		kverbs_lesson_wr_init(lc, &atomic_wr.wr, 1, KVERBS_STEP_ATOMIC, true);
		ret = kverbs_lesson_post(lc, &atomic_wr.wr, KVERBS_STEP_ATOMIC);
		last = 1;
		break;
	default:
		kverbs_lesson_wr_init(lc, &write_wr.wr, 1, KVERBS_STEP_RDMA_WRITE,
				      !atomics);
		if (atomics) {
			kverbs_lesson_wr_init(lc, &atomic_wr.wr, 2,
					      KVERBS_STEP_ATOMIC, true);
			write_wr.wr.next = &atomic_wr.wr;
		}
		ret = kverbs_lesson_post(lc, &write_wr.wr, KVERBS_STEP_RDMA_WRITE);
		last = atomics ? 2 : 1;
		break;
	}
	if (ret)
		return 0;
	ret = kverbs_lesson_wait(lc, last);
	if (ret) {
		kverbs_lesson_wait_peer(lc);
		return 0;
	}
	if (which != KVERBS_LESSON_ACCESS_RIGHT)
		return 0;

	kverbs_buf_sync_for_cpu(&lc->local);
	kverbs_buf_sync_for_cpu(&lc->remote);
	orig = lc->local.vaddr + KVERBS_LESSON_ATOMIC_OFF;
	if (atomics)
		run->value = *orig;
	if (memchr_inv(lc->remote.vaddr, 'W', KVERBS_LESSON_LEN) ||
	    (atomics && (*orig != KVERBS_LESSON_ATOMIC_INIT ||
			 *target != KVERBS_LESSON_ATOMIC_INIT + 1)))
		kverbs_lesson_mismatch(run);
	return 0;
}

/**
 * kverbs_lesson_access - KVERBS_LESSON_ACCESS
 * @lc: the lesson
 *
 * Return: 0 when every run ran, else why the lesson stopped.
 */
int kverbs_lesson_access(struct kverbs_lesson_ctx *lc)
{
	static const struct kverbs_lesson_conn conn = {
		.caps = { .max_send_wr = 2, .max_recv_wr = 1, .max_send_sge = 1 },
		.rnr_retry = 7,
		.rd_atom = 1,
	};
	struct ib_device *ibdev = lc->lsn->id->device;
	bool atomics = ibdev->attrs.atomic_cap != IB_ATOMIC_NONE;
	enum kverbs_lesson_access_run which;
	struct kverbs_lesson_run *run;
	int ret;

	for (which = KVERBS_LESSON_ACCESS_WRITE;
	     which <= KVERBS_LESSON_ACCESS_RIGHT; which++) {
		if (which == KVERBS_LESSON_ACCESS_ATOMIC && !atomics) {
			/* Nothing to show: reported, not run. */
			run = &lc->cmd->runs[lc->cmd->nruns++];
			run->kind = KVERBS_LESSON_WRONG;
			run->error = -EOPNOTSUPP;
			run->step = KVERBS_STEP_ATOMIC;
			continue;
		}
		ret = kverbs_lesson_begin(lc, &conn,
					  which == KVERBS_LESSON_ACCESS_RIGHT ?
					  KVERBS_LESSON_RIGHT : KVERBS_LESSON_WRONG);
		if (!ret)
			ret = kverbs_lesson_access_run(lc, which, atomics);
		kverbs_lesson_end(lc);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Stale key.  An rkey opens an MR only while the MR is registered under
 * it.  Once the owner invalidated it (IB_WR_LOCAL_INV, or a peer's SEND
 * with invalidate) the responder refuses every access that names it:
 * the requester's work request completes with IB_WC_REM_ACCESS_ERR and
 * both QPs go to the error state.  Wrong: the server registers its
 * buffer, hands the key to the client, invalidates the MR and waits for
 * the invalidation to complete; the client then RDMA WRITEs with the key
 * it was given.  Right: the rotation kverbs uses (mr.c): before the MR
 * is registered again the key's low byte is changed
 * (ib_update_fast_reg_key()), an IB_WR_REG_MR makes the MR valid under
 * the new key, the server hands that one over, and the client's WRITE
 * with it lands; the lesson checks the bytes.  The old key stays dead.
 *
 * The wrong WRITE goes out while the MR is invalid, before anything is
 * registered again, so it fails on every device however the device
 * matches keys: siw finds the MR to invalidate by the key's index (its
 * upper 24 bits) alone, and a test that re-registered first would show
 * how that device compares low bytes, not the mistake.  Over iWARP the
 * writer may see its WRITE complete (TCP took the data) while the
 * target, refusing it, ends the connection: as in the access lesson.
 */
static int kverbs_lesson_inv(struct kverbs_lesson_ctx *lc,
			     struct kverbs_buf *buf)
{
	struct ib_send_wr wr;
	int ret;

	kverbs_buf_inv_wr(buf, &wr, true);
	ret = kverbs_post_send(lc->srv, &wr, KVERBS_STEP_LOCAL_INV);
	if (!ret)
		ret = kverbs_ep_wait(lc->srv, kverbs_is_done(&buf->inv_done),
				     kverbs_lesson_timeout(lc));
	if (ret)
		return kverbs_ep_failed(lc->srv, ret, KVERBS_STEP_LOCAL_INV);
	return 0;
}

static int kverbs_lesson_stale_key_run(struct kverbs_lesson_ctx *lc,
				       bool right)
{
	const int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	struct kverbs_lesson_run *run = lc->run;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	u32 stale;
	int ret;

	if (kverbs_lesson_write_bufs(lc, KVERBS_LESSON_LEN, access))
		return 0;
	ret = kverbs_msg_alloc(&lc->recv, lc->srv->pd, KVERBS_LESSON_LEN,
			       DMA_FROM_DEVICE);
	if (ret)
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	/* Posted so that the server's side of a failure shows: it is flushed. */
	if (kverbs_msg_post_recv(&lc->recv, lc->srv))
		return 0;

	/* The key the client was given, then the server is done with it. */
	stale = lc->remote.mr->rkey;
	run->value = (u64)stale << 32;
	if (kverbs_lesson_inv(lc, &lc->remote))
		return 0;
	if (right) {
		if (kverbs_lesson_reg(lc, lc->srv, &lc->remote, access))
			return 0;
		run->value |= lc->remote.mr->rkey;
	}

	memset(lc->local.vaddr, 'K', KVERBS_LESSON_LEN);
	kverbs_buf_sync_for_device(&lc->local);
	kverbs_lesson_sge(&sge, &lc->local, 0, KVERBS_LESSON_LEN);
	kverbs_lesson_write_wr(lc, &wr, &sge);
	wr.rkey = right ? lc->remote.mr->rkey : stale;
	kverbs_lesson_wr_init(lc, &wr.wr, 1, KVERBS_STEP_RDMA_WRITE, true);
	if (kverbs_lesson_post(lc, &wr.wr, KVERBS_STEP_RDMA_WRITE))
		return 0;
	if (kverbs_lesson_wait(lc, 1)) {
		kverbs_lesson_wait_peer(lc);
		return 0;
	}
	if (!right) {
		/* The writer heard nothing: the target may still refuse it. */
		kverbs_lesson_wait_peer(lc);
		return 0;
	}
	kverbs_buf_sync_for_cpu(&lc->remote);
	if (memchr_inv(lc->remote.vaddr, 'K', KVERBS_LESSON_LEN))
		kverbs_lesson_mismatch(run);
	return 0;
}

/**
 * kverbs_lesson_stale_key - KVERBS_LESSON_STALE_KEY
 * @lc: the lesson
 *
 * Return: 0 when both runs ran, else why the lesson stopped.
 */
int kverbs_lesson_stale_key(struct kverbs_lesson_ctx *lc)
{
	static const struct kverbs_lesson_conn conn = {
		.caps = { .max_send_wr = 2, .max_recv_wr = 1, .max_send_sge = 1 },
		.rnr_retry = 7,
	};

	return kverbs_lesson_pair(lc, &conn, &conn, kverbs_lesson_stale_key_run);
}

/*
 * max_sge and max_inline_data.  A QP's send queue is built for the work
 * requests its creator said it would post: up to max_send_sge
 * scatter/gather entries each, and up to max_inline_data bytes copied
 * into the queue itself with IB_SEND_INLINE.  The device may make
 * either larger than asked, never smaller; ib_query_qp() says what it
 * made (rxe: room for one entry is 16 bytes of inline data; siw: 80
 * bytes of inline data whatever was asked).  ib_post_send() refuses a
 * work request past them before anything is queued: rxe's
 * validate_send_wr() and siw_post_send() both return -EINVAL, nothing is
 * posted, nothing completes, and the QP carries on.  Wrong: a SEND of
 * one entry more than the QP's max_send_sge; an inline SEND one byte
 * over its max_inline_data.  Right: a QP created for
 * KVERBS_LESSON_SGES entries, and a SEND that gathers that many pieces
 * of the client's buffer, the last piece first: the bytes arrive in the
 * order of the list, not of the memory, and the lesson checks each.
 */
#define KVERBS_LESSON_SGES	4
#define KVERBS_LESSON_PIECE	(KVERBS_LESSON_LEN / KVERBS_LESSON_SGES)

enum kverbs_lesson_sge_run {
	KVERBS_LESSON_SGE_TOO_MANY,
	KVERBS_LESSON_SGE_INLINE,
	KVERBS_LESSON_SGE_RIGHT,
};

/* The wrong post: refused, or, if the device took it, its outcome. */
static int kverbs_lesson_post_refused(struct kverbs_lesson_ctx *lc,
				      struct ib_send_wr *wr)
{
	struct kverbs_lesson_run *run = lc->run;
	int ret;

	kverbs_lesson_wr_init(lc, wr, 1, KVERBS_STEP_SEND, true);
	/* The failure is the lesson, not the connection's. */
	ret = kverbs_post_send_try(lc->cli, wr);
	if (ret) {
		run->post_error = ret;
		run->error = ret;
		run->step = KVERBS_STEP_SEND;
		return 0;
	}
	run->posted++;
	kverbs_lesson_wait(lc, 1);
	return 0;
}

static int kverbs_lesson_max_sge_run(struct kverbs_lesson_ctx *lc,
				     enum kverbs_lesson_sge_run which)
{
	struct kverbs_lesson_run *run = lc->run;
	struct ib_sge sge[KVERBS_LESSON_SGES];
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	struct ib_send_wr wr;
	u8 *got, *want;
	unsigned int i, n;
	int ret;

	ret = ib_query_qp(lc->cli->id->qp, &attr, IB_QP_CAP, &init);
	if (!ret)
		ret = kverbs_msg_alloc(&lc->recv, lc->srv->pd, KVERBS_LESSON_LEN,
				       DMA_FROM_DEVICE);
	if (ret)
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	if (kverbs_lesson_buf(lc, lc->cli, &lc->local, KVERBS_LESSON_LEN,
			      IB_ACCESS_LOCAL_WRITE))
		return 0;
	/* Were a wrong SEND taken, it would land rather than wait. */
	if (kverbs_msg_post_recv(&lc->recv, lc->srv))
		return 0;
	for (i = 0; i < KVERBS_LESSON_SGES; i++)
		memset(lc->local.vaddr + i * KVERBS_LESSON_PIECE, 'A' + i,
		       KVERBS_LESSON_PIECE);
	kverbs_buf_sync_for_device(&lc->local);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IB_WR_SEND;
	wr.sg_list = sge;
	switch (which) {
	case KVERBS_LESSON_SGE_TOO_MANY:
		run->value = attr.cap.max_send_sge;
		n = attr.cap.max_send_sge + 1;
		if (n > KVERBS_LESSON_SGES)
			return kverbs_test_failed(&lc->common, -EOPNOTSUPP,
						  KVERBS_STEP_SETUP);
		for (i = 0; i < n; i++)
			kverbs_lesson_sge(&sge[i], &lc->local,
					  i * KVERBS_LESSON_PIECE,
					  KVERBS_LESSON_PIECE);
		wr.num_sge = n;
		return kverbs_lesson_post_refused(lc, &wr);
	case KVERBS_LESSON_SGE_INLINE:
		/*
		 * Inline data is read by the CPU at the post: the entry holds
		 * a kernel virtual address, not a registered one.
		 */
		run->value = attr.cap.max_inline_data;
		ret = kverbs_msg_alloc(&lc->send, lc->cli->pd,
				       attr.cap.max_inline_data + 1,
				       DMA_TO_DEVICE);
		if (ret)
			return kverbs_test_failed(&lc->common, ret,
						  KVERBS_STEP_SETUP);
		memset(lc->send.buf, 'I', attr.cap.max_inline_data + 1);
		sge[0].addr = (uintptr_t)lc->send.buf;
		sge[0].length = attr.cap.max_inline_data + 1;
		sge[0].lkey = 0;
		wr.num_sge = 1;
		wr.send_flags = IB_SEND_INLINE;
		return kverbs_lesson_post_refused(lc, &wr);
	default:
		break;
	}

	/* The pieces last first: D C B A. */
	for (i = 0; i < KVERBS_LESSON_SGES; i++)
		kverbs_lesson_sge(&sge[i], &lc->local,
				  (KVERBS_LESSON_SGES - 1 - i) * KVERBS_LESSON_PIECE,
				  KVERBS_LESSON_PIECE);
	wr.num_sge = KVERBS_LESSON_SGES;
	kverbs_lesson_wr_init(lc, &wr, 1, KVERBS_STEP_SEND, true);
	if (kverbs_lesson_post(lc, &wr, KVERBS_STEP_SEND))
		return 0;
	if (kverbs_lesson_wait(lc, 1))
		return 0;
	if (kverbs_ep_wait(lc->srv, kverbs_is_done(&lc->recv.done),
			   kverbs_lesson_timeout(lc)))
		return 0;
	kverbs_msg_sync_for_cpu(&lc->recv);
	got = lc->recv.buf;
	memcpy(&run->value, got, sizeof(run->value));
	if (lc->recv.byte_len != KVERBS_LESSON_LEN) {
		kverbs_lesson_mismatch(run);
		return 0;
	}
	for (i = 0; i < KVERBS_LESSON_SGES; i++) {
		want = lc->local.vaddr +
		       (KVERBS_LESSON_SGES - 1 - i) * KVERBS_LESSON_PIECE;
		if (memcmp(got + i * KVERBS_LESSON_PIECE, want,
			   KVERBS_LESSON_PIECE))
			kverbs_lesson_mismatch(run);
	}
	return 0;
}

/**
 * kverbs_lesson_max_sge - KVERBS_LESSON_MAX_SGE
 * @lc: the lesson
 *
 * Return: 0 when every run ran, else why the lesson stopped.
 */
int kverbs_lesson_max_sge(struct kverbs_lesson_ctx *lc)
{
	/* Created as a ULP that never thought about gathering does. */
	static const struct kverbs_lesson_conn narrow = {
		.caps = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1 },
		.rnr_retry = 7,
	};
	static const struct kverbs_lesson_conn wide = {
		.caps = {
			.max_send_wr = 1,
			.max_recv_wr = 1,
			.max_send_sge = KVERBS_LESSON_SGES,
		},
		.rnr_retry = 7,
	};
	enum kverbs_lesson_sge_run which;
	int ret;

	for (which = KVERBS_LESSON_SGE_TOO_MANY;
	     which <= KVERBS_LESSON_SGE_RIGHT; which++) {
		bool right = which == KVERBS_LESSON_SGE_RIGHT;

		ret = kverbs_lesson_begin(lc, right ? &wide : &narrow,
					  right ? KVERBS_LESSON_RIGHT :
					  KVERBS_LESSON_WRONG);
		if (!ret)
			ret = kverbs_lesson_max_sge_run(lc, which);
		kverbs_lesson_end(lc);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Alignment.  An atomic works on one 8-byte word, which must be
 * naturally aligned: its remote address a multiple of 8.  A responder
 * answers a misaligned one with an invalid request NAK (the requester's
 * completion IB_WC_REM_INV_REQ_ERR), but a device may refuse it sooner:
 * rxe's validate_send_wr() fails ib_post_send() with -EINVAL ("misaligned
 * atomic address"), nothing is posted, nothing reaches the wire.  Wrong:
 * a fetch-and-add 4 bytes into the word.  Right: the same on the word
 * itself, whose old value (41) comes back and which then holds 42.  A
 * device without atomics (siw) refuses the lesson.
 */
#define KVERBS_LESSON_MISALIGN	4

static int kverbs_lesson_align_run(struct kverbs_lesson_ctx *lc, bool right)
{
	const int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			   IB_ACCESS_REMOTE_ATOMIC;
	struct kverbs_lesson_run *run = lc->run;
	struct ib_atomic_wr wr;
	struct ib_sge sge;
	u64 *orig, *target;
	int ret;

	if (kverbs_lesson_write_bufs(lc, KVERBS_LESSON_ATOMIC_OFF + 2 * sizeof(u64),
				     access))
		return 0;
	ret = kverbs_msg_alloc(&lc->recv, lc->srv->pd, KVERBS_LESSON_LEN,
			       DMA_FROM_DEVICE);
	if (ret)
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	/* Posted so that the server's side of a failure shows: it is flushed. */
	if (kverbs_msg_post_recv(&lc->recv, lc->srv))
		return 0;
	target = lc->remote.vaddr + KVERBS_LESSON_ATOMIC_OFF;
	*target = KVERBS_LESSON_ATOMIC_INIT;
	kverbs_buf_sync_for_device(&lc->remote);

	kverbs_lesson_atomic_wr(lc, &wr, &sge);
	if (!right) {
		wr.remote_addr += KVERBS_LESSON_MISALIGN;
		kverbs_lesson_wr_init(lc, &wr.wr, 1, KVERBS_STEP_ATOMIC, true);
		/* The failure is the lesson, not the connection's. */
		ret = kverbs_post_send_try(lc->cli, &wr.wr);
		if (ret) {
			run->post_error = ret;
			run->error = ret;
			run->step = KVERBS_STEP_ATOMIC;
			return 0;
		}
		run->posted++;
		if (kverbs_lesson_wait(lc, 1))
			kverbs_lesson_wait_peer(lc);
		return 0;
	}
	kverbs_lesson_wr_init(lc, &wr.wr, 1, KVERBS_STEP_ATOMIC, true);
	if (kverbs_lesson_post(lc, &wr.wr, KVERBS_STEP_ATOMIC))
		return 0;
	if (kverbs_lesson_wait(lc, 1))
		return 0;
	kverbs_buf_sync_for_cpu(&lc->local);
	kverbs_buf_sync_for_cpu(&lc->remote);
	orig = lc->local.vaddr + KVERBS_LESSON_ATOMIC_OFF;
	run->value = *orig;
	if (*orig != KVERBS_LESSON_ATOMIC_INIT ||
	    *target != KVERBS_LESSON_ATOMIC_INIT + 1)
		kverbs_lesson_mismatch(run);
	return 0;
}

/**
 * kverbs_lesson_align - KVERBS_LESSON_ALIGN
 * @lc: the lesson
 *
 * Return: 0 when both runs ran, else why the lesson stopped.
 */
int kverbs_lesson_align(struct kverbs_lesson_ctx *lc)
{
	static const struct kverbs_lesson_conn conn = {
		.caps = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1 },
		.rnr_retry = 7,
		.rd_atom = 1,
	};

	return kverbs_lesson_pair(lc, &conn, &conn, kverbs_lesson_align_run);
}

/*
 * MR size.  A fast-registration MR maps at most the device's
 * max_fast_reg_page_list_len pages: ib_alloc_mr() takes no more, and
 * ib_map_mr_sg() maps no more than the MR was allocated for.  Wrong: the
 * server maps a buffer one page larger, one scatter/gather entry per
 * page, into an MR allocated for the device's most: ib_map_mr_sg()
 * returns fewer entries than it was given.  rxe maps the pages that fit
 * and returns their count (max_fast_reg_page_list_len, 512); siw
 * refuses the whole list (-ENOMEM).  Either way no key covers the
 * buffer, and a ULP that registered what was mapped would advertise a
 * key one page short.  Right: the transfer split across two MRs on each
 * side, one of the device's most and one of the page left over, and an
 * RDMA WRITE to each key; the lesson checks every byte of both.
 * kverbs_buf_map() refuses such a buffer itself (-EMSGSIZE) before the
 * device sees it; the wrong run maps by hand to show the device's
 * answer.
 */
#define KVERBS_LESSON_MR_MAX_PAGES	1024

static int kverbs_lesson_mr_size_wrong(struct kverbs_lesson_ctx *lc,
				       unsigned int max_pages)
{
	struct kverbs_lesson_run *run = lc->run;
	struct kverbs_buf *buf = &lc->remote;
	struct ib_pd *pd = lc->srv->pd;
	struct scatterlist *sg;
	unsigned int i;
	int ret, n;

	ret = kverbs_buf_alloc(buf, (size_t)(max_pages + 1) * PAGE_SIZE);
	if (ret)
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	/* One entry per page, so that the device counts what it maps. */
	sg_free_table(&buf->sgt);
	ret = sg_alloc_table(&buf->sgt, buf->npages, GFP_KERNEL);
	if (ret) {
		buf->len = 0;
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	}
	for_each_sgtable_sg(&buf->sgt, sg, i)
		sg_set_page(sg, buf->pages[i], PAGE_SIZE, 0);
	ret = ib_dma_map_sgtable_attrs(pd->device, &buf->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	buf->ibdev = pd->device;
	buf->dir = DMA_BIDIRECTIONAL;
	buf->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max_pages);
	if (IS_ERR(buf->mr)) {
		ret = PTR_ERR(buf->mr);
		buf->mr = NULL;
		return kverbs_test_failed(&lc->common, ret, KVERBS_STEP_SETUP);
	}
	buf->trace_cq_id = lc->srv->cq_id;
	trace_kverbs_mr_alloc(buf->trace_cq_id, buf->mr, max_pages);
	n = ib_map_mr_sg(buf->mr, buf->sgt.sgl, buf->sgt.nents, NULL, PAGE_SIZE);
	trace_kverbs_mr_map(buf->trace_cq_id, buf->mr, n);
	if (n == buf->sgt.nents)
		return 0;
	run->error = n < 0 ? n : -EMSGSIZE;
	run->step = KVERBS_STEP_REG_MR;
	run->value = max(n, 0);
	return 0;
}

static void kverbs_lesson_fill(struct kverbs_buf *buf, unsigned int first_page)
{
	size_t i;

	for (i = 0; i < buf->len; i += PAGE_SIZE)
		memset(buf->vaddr + i, 'a' + (first_page + i / PAGE_SIZE) % 26,
		       min_t(size_t, PAGE_SIZE, buf->len - i));
	kverbs_buf_sync_for_device(buf);
}

static int kverbs_lesson_mr_size_right(struct kverbs_lesson_ctx *lc,
				       unsigned int max_pages)
{
	const int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	const size_t len = (size_t)max_pages * PAGE_SIZE;
	struct kverbs_lesson_run *run = lc->run;
	struct ib_rdma_wr wr[2];
	struct ib_sge sge[2];

	if (kverbs_lesson_buf(lc, lc->cli, &lc->local, len, IB_ACCESS_LOCAL_WRITE) ||
	    kverbs_lesson_buf(lc, lc->cli, &lc->local2, PAGE_SIZE,
			      IB_ACCESS_LOCAL_WRITE) ||
	    kverbs_lesson_buf(lc, lc->srv, &lc->remote, len, access) ||
	    kverbs_lesson_buf(lc, lc->srv, &lc->remote2, PAGE_SIZE, access))
		return 0;
	kverbs_lesson_fill(&lc->local, 0);
	kverbs_lesson_fill(&lc->local2, max_pages);

	/* Each part to its own key: a WRITE reaches one MR. */
	kverbs_lesson_sge(&sge[0], &lc->local, 0, len);
	kverbs_lesson_write_wr(lc, &wr[0], &sge[0]);
	kverbs_lesson_sge(&sge[1], &lc->local2, 0, PAGE_SIZE);
	memset(&wr[1], 0, sizeof(wr[1]));
	wr[1].wr.opcode = IB_WR_RDMA_WRITE;
	wr[1].wr.sg_list = &sge[1];
	wr[1].wr.num_sge = 1;
	wr[1].remote_addr = lc->remote2.mr->iova;
	wr[1].rkey = lc->remote2.mr->rkey;
	kverbs_lesson_wr_init(lc, &wr[0].wr, 1, KVERBS_STEP_RDMA_WRITE, false);
	kverbs_lesson_wr_init(lc, &wr[1].wr, 2, KVERBS_STEP_RDMA_WRITE, true);
	wr[0].wr.next = &wr[1].wr;
	if (kverbs_lesson_post(lc, &wr[0].wr, KVERBS_STEP_RDMA_WRITE))
		return 0;
	if (kverbs_lesson_wait(lc, 2))
		return 0;
	kverbs_buf_sync_for_cpu(&lc->remote);
	kverbs_buf_sync_for_cpu(&lc->remote2);
	run->value = max_pages;
	if (memcmp(lc->remote.vaddr, lc->local.vaddr, len) ||
	    memcmp(lc->remote2.vaddr, lc->local2.vaddr, PAGE_SIZE))
		kverbs_lesson_mismatch(run);
	return 0;
}

/**
 * kverbs_lesson_mr_size_refuse - whether the device cannot show mr_size
 * @ibdev: the device
 *
 * Return: true without fast registration, or where one MR maps more
 * than KVERBS_LESSON_MR_MAX_PAGES pages (the lesson would pin too much).
 */
bool kverbs_lesson_mr_size_refuse(struct ib_device *ibdev)
{
	u32 max = ibdev->attrs.max_fast_reg_page_list_len;

	return !kverbs_max_reg_size(ibdev) || !max ||
	       max > KVERBS_LESSON_MR_MAX_PAGES ||
	       (u64)max * PAGE_SIZE > kverbs_max_reg_size(ibdev);
}

/* Either run, for the device's max_fast_reg_page_list_len. */
static int kverbs_lesson_mr_size_run(struct kverbs_lesson_ctx *lc, bool right)
{
	u32 max_pages = lc->lsn->id->device->attrs.max_fast_reg_page_list_len;

	return right ? kverbs_lesson_mr_size_right(lc, max_pages) :
		       kverbs_lesson_mr_size_wrong(lc, max_pages);
}

/**
 * kverbs_lesson_mr_size - KVERBS_LESSON_MR_SIZE
 * @lc: the lesson
 *
 * Return: 0 when both runs ran, else why the lesson stopped.
 */
int kverbs_lesson_mr_size(struct kverbs_lesson_ctx *lc)
{
	static const struct kverbs_lesson_conn conn = {
		.caps = { .max_send_wr = 2, .max_recv_wr = 1, .max_send_sge = 1 },
		.rnr_retry = 7,
	};

	return kverbs_lesson_pair(lc, &conn, &conn, kverbs_lesson_mr_size_run);
}
