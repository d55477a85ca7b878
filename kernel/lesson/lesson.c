// SPDX-License-Identifier: GPL-2.0
/*
 * The lessons' harness: what every run does alike: connect to itself,
 * hold both ends, register buffers, post and wait, report, tear down.
 * The command and the lessons' table are lesson_cmd.c's.
 *
 * A run's life: kverbs_lesson_begin() makes the connection (client
 * resolves and sends its request, the lesson takes the request off its
 * own listener as the server, accepts, waits for both ends to be
 * established); the lesson posts on the client and watches both ends;
 * kverbs_lesson_end() copies both ends' first failures into the run's
 * report, then runs the endpoints' teardown ladder: quiesce both, free
 * the buffers, destroy both.
 */
#include "lesson.h"
#include "trace.h"

#include <linux/random.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

/**
 * kverbs_lesson_timeout - a step's limit, in jiffies
 * @lc: the lesson
 *
 * Return: the limit for kverbs_ep_wait().
 */
long kverbs_lesson_timeout(const struct kverbs_lesson_ctx *lc)
{
	return kverbs_ep_wait_timeout(lc->common.timeout_ns);
}

static void kverbs_lesson_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_lesson_wr *w = container_of(wc->wr_cqe,
						  struct kverbs_lesson_wr, cqe.cqe);
	struct kverbs_ep *ep = kverbs_wc_ep(wc);

	trace_kverbs_wc(cq, wc, w->step);
	if (wc->status != IB_WC_SUCCESS) {
		kverbs_ep_wc_failed(ep, wc, w->step);
		return;
	}
	/* A send queue completes in order: @seq only grows. */
	smp_store_release(&w->lc->done, w->seq);
	wake_up(&ep->wait);
}

/**
 * kverbs_lesson_wr_init - give a client work request its context
 * @lc: the lesson
 * @wr: the work request, whose opcode and data the caller fills in
 * @seq: its number in the run, from 1; its context is @lc->wrs[@seq %
 *	KVERBS_LESSON_MAX_WRS], which must not be in flight any more
 * @step: what it does
 * @signaled: whether it completes; an unsignaled one still has the
 *	context, so that a failure names it
 */
void kverbs_lesson_wr_init(struct kverbs_lesson_ctx *lc, struct ib_send_wr *wr,
			   u32 seq, enum kverbs_step step, bool signaled)
{
	struct kverbs_lesson_wr *w = &lc->wrs[seq % KVERBS_LESSON_MAX_WRS];

	w->cqe.cqe.done = kverbs_lesson_wr_done;
	w->lc = lc;
	w->seq = seq;
	w->step = step;
	wr->wr_cqe = &w->cqe.cqe;
	wr->send_flags |= signaled ? IB_SEND_SIGNALED : 0;
}

/**
 * kverbs_lesson_post - post a chain on the client, counting it
 * @lc: the lesson
 * @wr: the chain, each with a context from kverbs_lesson_wr_init()
 * @step: what it does, for the failure report
 *
 * The first post of a run starts its clock.
 *
 * Return: 0 or the recorded failure, the post's errno also in
 * @lc->run->post_error.
 */
int kverbs_lesson_post(struct kverbs_lesson_ctx *lc, struct ib_send_wr *wr,
		       enum kverbs_step step)
{
	const struct ib_send_wr *w;
	int ret;

	if (!lc->start_ns)
		lc->start_ns = ktime_get_ns();
	ret = kverbs_post_send(lc->cli, wr, step);
	if (ret) {
		lc->run->post_error = ret;
		return ret;
	}
	for (w = wr; w; w = w->next)
		lc->run->posted++;
	return 0;
}

/**
 * kverbs_lesson_wait - wait until the client's work request @seq completed
 * @lc: the lesson
 * @seq: its number, signaled
 *
 * Return: 0, or the client's failure, -ETIMEDOUT past the step limit.
 */
int kverbs_lesson_wait(struct kverbs_lesson_ctx *lc, u32 seq)
{
	int ret;

	/* Pairs with the handler's smp_store_release(): its results first. */
	ret = kverbs_ep_wait(lc->cli, smp_load_acquire(&lc->done) >= seq,
			     kverbs_lesson_timeout(lc));
	if (!ret)
		lc->run->elapsed_ns = ktime_get_ns() - lc->start_ns;
	return ret;
}

/**
 * kverbs_lesson_wait_peer - give the server its moment to see a failure
 * @lc: the lesson, whose client just failed
 *
 * The responder learns of a fault in its own context (an access error
 * event, its receives flushed once its QP is in the error state), a
 * little after the requester's completion.  At most a second.
 */
void kverbs_lesson_wait_peer(struct kverbs_lesson_ctx *lc)
{
	wait_event_killable_timeout(lc->srv->wait, kverbs_ep_error(lc->srv),
				    min_t(long, HZ, kverbs_lesson_timeout(lc)));
}

/**
 * kverbs_lesson_pair - a lesson's wrong run, then its right one
 * @lc: the lesson
 * @wrong: the connection the wrong run is made on
 * @right: ... and the right run; the same for a lesson whose two runs
 *	differ only in what they post
 * @run: one run on its connection, @right false for the wrong one;
 *	returns 0 once the run's outcome is in its report, whatever it
 *	was, else why the lesson cannot go on
 *
 * Each run has a connection of its own, set up by kverbs_lesson_begin()
 * and torn down by kverbs_lesson_end() however the run went, so that
 * the wrong run's QP in the error state never spoils the right one.
 *
 * Return: 0 when both runs ran, else why the lesson stopped.
 */
int kverbs_lesson_pair(struct kverbs_lesson_ctx *lc,
		       const struct kverbs_lesson_conn *wrong,
		       const struct kverbs_lesson_conn *right,
		       int (*run)(struct kverbs_lesson_ctx *lc, bool right))
{
	unsigned int i;
	int ret;

	for (i = 0; i < 2; i++) {
		ret = kverbs_lesson_begin(lc, i ? right : wrong,
					  i ? KVERBS_LESSON_RIGHT : KVERBS_LESSON_WRONG);
		if (!ret)
			ret = run(lc, i);
		kverbs_lesson_end(lc);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * kverbs_lesson_buf - a buffer registered for one end, with @access
 * @lc: the lesson
 * @ep: the end, connected
 * @buf: zeroed
 * @len: its size
 * @access: the rights, IB_ACCESS_*
 *
 * Return: 0 once the registration completed, or the failure; the
 * buffer is freed by kverbs_lesson_end() either way.
 */
int kverbs_lesson_buf(struct kverbs_lesson_ctx *lc, struct kverbs_ep *ep,
		      struct kverbs_buf *buf, size_t len, int access)
{
	int ret;

	ret = kverbs_buf_alloc(buf, len);
	if (!ret)
		ret = kverbs_buf_map(buf, ep, DMA_BIDIRECTIONAL);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_SETUP);
	return kverbs_lesson_reg(lc, ep, buf, access);
}

/**
 * kverbs_lesson_reg - register @buf's MR under a new key, and wait
 * @lc: the lesson
 * @ep: the end that owns @buf, connected
 * @buf: mapped, its MR not valid (never registered, or invalidated)
 * @access: the rights, IB_ACCESS_*
 *
 * Return: 0 once the registration completed, @buf->mr->rkey the new
 * key; else the failure, recorded on @ep.
 */
int kverbs_lesson_reg(struct kverbs_lesson_ctx *lc, struct kverbs_ep *ep,
		      struct kverbs_buf *buf, int access)
{
	struct ib_reg_wr reg;
	int ret;

	kverbs_buf_reg_wr(buf, &reg, access);
	ret = kverbs_post_send(ep, &reg.wr, KVERBS_STEP_REG_MR);
	if (!ret)
		ret = kverbs_ep_wait(ep, kverbs_is_done(&buf->reg_done),
				     kverbs_lesson_timeout(lc));
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_REG_MR);
	return 0;
}

/* The run's first failures, both ends', into its report. */
static void kverbs_lesson_report(struct kverbs_lesson_ctx *lc)
{
	struct kverbs_lesson_run *run = lc->run;
	struct kverbs_fail f;

	if (lc->cli) {
		kverbs_ep_fail_info(lc->cli, &f);
		if (!run->error)
			run->error = f.error;
		if (!run->step)
			run->step = f.step;
		run->valid |= f.valid & (KVERBS_RESULT_WC | KVERBS_RESULT_CM);
		run->wc_status = f.wc_status;
		run->vendor_err = f.vendor_err;
		run->cm_event = f.cm_event;
		run->cm_status = f.cm_status;
	}
	if (lc->srv) {
		kverbs_ep_fail_info(lc->srv, &f);
		run->peer_error = f.error;
		run->peer_valid = f.valid & KVERBS_RESULT_WC;
		run->peer_wc_status = f.wc_status;
	}
}

/**
 * kverbs_lesson_end - report the run and tear down its connection
 * @lc: the lesson; nothing happens if no run is going on
 */
void kverbs_lesson_end(struct kverbs_lesson_ctx *lc)
{
	if (!lc->run)
		return;
	kverbs_lesson_report(lc);
	/* Both ends quiet before any buffer goes: either may reach either. */
	if (lc->cli)
		kverbs_ep_quiesce(lc->cli);
	if (lc->srv)
		kverbs_ep_quiesce(lc->srv);
	kverbs_msg_free(&lc->recv);
	kverbs_msg_free(&lc->send);
	kverbs_buf_free(&lc->remote2);
	kverbs_buf_free(&lc->local2);
	kverbs_buf_free(&lc->remote);
	kverbs_buf_free(&lc->local);
	kverbs_ep_destroy(lc->srv);
	kverbs_ep_destroy(lc->cli);
	lc->srv = NULL;
	lc->cli = NULL;
	lc->run = NULL;
	lc->done = 0;
	lc->start_ns = 0;
	memset(lc->wrs, 0, sizeof(lc->wrs));
}

/*
 * The lesson's own client's request, taken off the lesson's listener.
 * The listener's port is an ordinary one, which anyone who can reach
 * the address may connect to while the lesson waits: a request without
 * the nonce its client sends (kverbs_lesson_begin()) is rejected, and
 * the lesson waits on for its own, within the same limit.
 */
static struct kverbs_ep *kverbs_lesson_take(struct kverbs_lesson_ctx *lc)
{
	unsigned long deadline = jiffies + kverbs_lesson_timeout(lc);
	u8 nonce[sizeof(lc->nonce)];
	struct kverbs_ep *srv;
	long left;

	for (;;) {
		left = max_t(long, (long)(deadline - jiffies), 1);
		srv = kverbs_listener_accept_timeout(lc->lsn, left);
		if (IS_ERR(srv))
			return srv;
		if (kverbs_ep_private_data(srv, nonce, sizeof(nonce)) >= sizeof(nonce) &&
		    !memcmp(nonce, lc->nonce, sizeof(nonce)))
			return srv;
		ibdev_dbg(kverbs_ep_device(srv), "lesson: rejecting a stranger's connection request\n");
		kverbs_ep_reject(srv);
		kverbs_ep_destroy(srv);
	}
}

/* The server end: the client's request, taken off the lesson's listener. */
static int kverbs_lesson_accept(struct kverbs_lesson_ctx *lc,
				const struct kverbs_lesson_conn *conn)
{
	struct kverbs_ep *srv;
	int ret;

	srv = kverbs_lesson_take(lc);
	if (IS_ERR(srv))
		return kverbs_test_failed(&lc->common, PTR_ERR(srv),
					  KVERBS_STEP_ACCEPT);
	lc->srv = srv;
	/* Set if the request could not be attached to its device. */
	ret = kverbs_ep_error(srv);
	if (ret)
		return ret;
	srv->rnr_retry = conn->rnr_retry;
	ret = kverbs_ep_create_qp(srv, &conn->caps);
	if (ret) {
		kverbs_ep_failed(srv, ret, KVERBS_STEP_SETUP);
		kverbs_ep_reject(srv);
		return ret;
	}
	return kverbs_ep_accept(srv, lc->common.timeout_ns);
}

/**
 * kverbs_lesson_begin - start a run on a connection of its own
 * @lc: the lesson, with no run going on
 * @conn: what the connection is made with
 * @kind: wrong or right
 *
 * Return: 0 once both ends are established, else the failure, which is
 * the lesson's (@lc->common.fail); kverbs_lesson_end() releases what was
 * made either way.
 */
int kverbs_lesson_begin(struct kverbs_lesson_ctx *lc,
			const struct kverbs_lesson_conn *conn,
			enum kverbs_lesson_kind kind)
{
	struct kverbs_lesson *cmd = lc->cmd;
	struct kverbs_ep *cli;
	int ret;

	if (WARN_ON_ONCE(lc->run || cmd->nruns >= KVERBS_LESSON_MAX_RUNS))
		return kverbs_test_failed(&lc->common, -EINVAL, KVERBS_STEP_SETUP);
	lc->run = &cmd->runs[cmd->nruns++];
	lc->run->kind = kind;

	cli = kverbs_test_ep_create(&lc->common);
	if (IS_ERR(cli))
		return PTR_ERR(cli);
	lc->cli = cli;
	ret = kverbs_test_resolve(&lc->common, cli);
	if (!ret)
		ret = kverbs_ep_create_qp(cli, &conn->caps);
	if (!ret)
		ret = kverbs_ep_connect_start(cli, conn->rd_atom, lc->nonce,
					      sizeof(lc->nonce));
	if (ret)
		goto out_fail;
	ret = kverbs_lesson_accept(lc, conn);
	if (ret) {
		if (lc->common.fail.error)
			return ret;
		kverbs_test_fail(&lc->common, lc->srv, ret);
		return ret;
	}
	ret = kverbs_ep_wait_connected(cli, lc->common.timeout_ns);
	if (!ret)
		return 0;
out_fail:
	kverbs_test_fail(&lc->common, cli, ret);
	return ret;
}
