// SPDX-License-Identifier: GPL-2.0
/*
 * What the perf tests' files share: the tests' table, the data pattern,
 * waiting and busy polling, memory and registration, results.  The
 * command itself is perf_cmd.c's.
 */
#include "perf.h"
#include "trace.h"

#include <linux/math64.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

/* Completions handled per ib_process_cq_direct() call. */
#define KVERBS_PERF_POLL_BUDGET	64

static_assert(sizeof(struct kverbs_perf_hello) == KVERBS_EP_PRIVATE_DATA_MAX);

/*
 * The perf tests, by &enum kverbs_perf_test: each entry is what its test
 * does on the wire (struct kverbs_perf_ops says what each field means),
 * and the engine asks it wherever one test differs from another.
 *
 * Adding a test that posts one of these work requests and answers in one
 * of these ways takes an entry here, its number in the uAPI's
 * &enum kverbs_perf_test, and the tool's entry (kv_perf_tests[] in
 * tools/kverbs/perf.c).  A new kind of data work request is a new
 * &enum kverbs_perf_op, built in kverbs_perf_req_list_add() (and in
 * kverbs_perf_pp_post() if a ping-pong sends it); a new way to
 * answer, a new &enum kverbs_perf_answer, set up in
 * kverbs_perf_resp_setup() and taken in kverbs_perf_resp_next().  What
 * some tests do and others not (a post mode, a completion policy a test
 * needs) is a new field of &struct kverbs_perf_ops, set here and read
 * where the engine does it.  A mode a test may run in is a flag in its
 * @flags: KVERBS_PERF_F_IMM in those of the tests that WRITE or SEND,
 * KVERBS_PERF_F_RW in those whose requester READs or WRITEs in bulk
 * (not WRITE_LAT: see the uAPI), KVERBS_PERF_F_INV in those whose
 * --validate runs in rounds that a control message of the requester
 * ends.
 */
static const struct kverbs_perf_ops kverbs_perf_tests[] = {
	[KVERBS_PERF_WRITE_BW] = {
		.op = KVERBS_PERF_OP_WRITE,
		.step = KVERBS_STEP_RDMA_WRITE,
		.answer = KVERBS_PERF_ANSWER_NONE,
		.flags = KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_REVERSE | KVERBS_PERF_F_IMM |
			 KVERBS_PERF_F_RW | KVERBS_PERF_F_INV,
		/* --validate: the responder checks each round the requester wrote. */
		.ctrl = BIT(KVERBS_PERF_MSG_ROUND) | BIT(KVERBS_PERF_MSG_PROGRESS),
		/* Remote write needs local write too, by the IB specification. */
		.resp_access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	},
	[KVERBS_PERF_READ_BW] = {
		.op = KVERBS_PERF_OP_READ,
		.step = KVERBS_STEP_RDMA_READ,
		.answer = KVERBS_PERF_ANSWER_NONE,
		.flags = KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_REVERSE | KVERBS_PERF_F_RW |
			 KVERBS_PERF_F_INV,
		/* --validate: the responder fills the next round once one is read. */
		.ctrl = BIT(KVERBS_PERF_MSG_ROUND) | BIT(KVERBS_PERF_MSG_PROGRESS),
		.resp_access = IB_ACCESS_REMOTE_READ,
	},
	[KVERBS_PERF_SEND_BW] = {
		.op = KVERBS_PERF_OP_SEND,
		.step = KVERBS_STEP_SEND,
		.answer = KVERBS_PERF_ANSWER_RECV,
		.flags = KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_REVERSE | KVERBS_PERF_F_IMM |
			 KVERBS_PERF_F_UD,
		/*
		 * The responder sees every SEND: no PROGRESS, and --validate
		 * checks each as it arrives.  On iWARP the responder grants
		 * its receives ring by ring with ROUND_OK.
		 */
		.ctrl = 0,
		.resp_access = IB_ACCESS_LOCAL_WRITE,
	},
	[KVERBS_PERF_READ_LAT] = {
		.op = KVERBS_PERF_OP_READ,
		.step = KVERBS_STEP_RDMA_READ,
		.answer = KVERBS_PERF_ANSWER_NONE,
		.lat = true,
		.flags = KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_RW |
			 KVERBS_PERF_F_INV,
		.ctrl = BIT(KVERBS_PERF_MSG_ROUND) | BIT(KVERBS_PERF_MSG_PROGRESS),
		.resp_access = IB_ACCESS_REMOTE_READ,
	},
	[KVERBS_PERF_ATOMIC_LAT] = {
		.op = KVERBS_PERF_OP_ATOMIC,
		.step = KVERBS_STEP_ATOMIC,
		.answer = KVERBS_PERF_ANSWER_NONE,
		.lat = true,
		.atomics = true,
		.msg_size = KVERBS_PERF_ATOMIC_SIZE,
		/* --validate: what each operation fetched, then each word's count. */
		.flags = KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_CMP_SWAP,
		.ctrl = BIT(KVERBS_PERF_MSG_PROGRESS),
		/* The words start at 0, as the buffer was allocated. */
		.resp_access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC,
	},
	[KVERBS_PERF_ATOMIC_BW] = {
		.op = KVERBS_PERF_OP_ATOMIC,
		.step = KVERBS_STEP_ATOMIC,
		.answer = KVERBS_PERF_ANSWER_NONE,
		.atomics = true,
		.msg_size = KVERBS_PERF_ATOMIC_SIZE,
		.flags = KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_CMP_SWAP |
			 KVERBS_PERF_F_REVERSE,
		.ctrl = BIT(KVERBS_PERF_MSG_PROGRESS),
		.resp_access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC,
	},
	[KVERBS_PERF_WRITE_LAT] = {
		.op = KVERBS_PERF_OP_WRITE,
		.step = KVERBS_STEP_RDMA_WRITE,
		.answer = KVERBS_PERF_ANSWER_PINGPONG,
		.lat = true,
		/*
		 * The last byte of a WRITE turning says it arrived; with
		 * immediate data, its receive's completion.
		 */
		.seen_in_memory = true,
		.flags = KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_IMM,
		.ctrl = 0,
		/* The responder WRITEs its answers into the requester's buffer. */
		.req_access = IB_ACCESS_REMOTE_WRITE,
		.resp_access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	},
	[KVERBS_PERF_SEND_LAT] = {
		.op = KVERBS_PERF_OP_SEND,
		.step = KVERBS_STEP_SEND,
		.answer = KVERBS_PERF_ANSWER_PINGPONG,
		.lat = true,
		.flags = KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_IMM | KVERBS_PERF_F_UD,
		.ctrl = 0,
		.resp_access = IB_ACCESS_LOCAL_WRITE,
	},
};

/**
 * kverbs_perf_ops_get - the entry of a perf test
 * @test: &enum kverbs_perf_test, from a caller or a peer
 *
 * Return: the test's entry, or NULL for KVERBS_PERF_ANY and for a number
 * that names no test.
 */
const struct kverbs_perf_ops *kverbs_perf_ops_get(u32 test)
{
	if (test >= ARRAY_SIZE(kverbs_perf_tests))
		return NULL;
	test = array_index_nospec(test, ARRAY_SIZE(kverbs_perf_tests));
	/* KVERBS_PERF_ANY's entry is empty. */
	if (kverbs_perf_tests[test].step == KVERBS_STEP_NONE)
		return NULL;
	return &kverbs_perf_tests[test];
}

/**
 * kverbs_perf_slots - how many messages a side's buffer holds
 * @stride: bytes per message
 * @depth: messages in flight (the TX depth), or SEND_BW receives kept
 *	posted; more slots than that buy nothing
 * @max_bytes: the buffer's limit
 *
 * With --validate a slot is rewritten every this many iterations, and a
 * message that never arrived leaves the older one in place.  The first
 * byte of the pattern changes with the iteration with a period of 256,
 * so a multiple of 256 is avoided: a stale 1-byte message cannot pass.
 *
 * Return: the number of slots, at least 1 and at most @depth.
 */
u32 kverbs_perf_slots(u32 stride, u32 depth, u32 max_bytes)
{
	u32 n = clamp_t(u32, max_bytes / stride, 1, depth);

	if (n >= 256 && !(n % 256))
		n--;
	return n;
}

/*
 * Messages start anywhere: slots are msg_size bytes apart.  memcpy() of
 * a word is what get/put_unaligned compile to, and their header moved
 * between the kernels kverbs builds for.
 */
static inline void kverbs_perf_put_word(u8 *p, u64 v)
{
	__le64 le = cpu_to_le64(v);

	memcpy(p, &le, sizeof(le));
}

static inline u64 kverbs_perf_get_word(const u8 *p)
{
	__le64 le;

	memcpy(&le, p, sizeof(le));
	return le64_to_cpu(le);
}

/**
 * kverbs_perf_fill - write the pattern of iteration @iter
 * @buf: where
 * @len: the message size, at least 1
 * @iter: iteration number, from 0
 */
void kverbs_perf_fill(void *buf, u32 len, u64 iter)
{
	u8 *p = buf;
	u32 w, i;
	u64 v;

	for (w = 0; (w + 1) * 8 <= len; w++)
		kverbs_perf_put_word(p + w * 8, kverbs_perf_word(iter, w));
	v = kverbs_perf_word(iter, w);
	for (i = w * 8; i < len; i++, v >>= 8)
		p[i] = v;
}

/**
 * kverbs_perf_check - compare a message with the pattern of @iter
 * @buf: the message
 * @len: its size
 * @iter: iteration number
 * @offset: set to the first differing byte when they differ
 *
 * Return: true when every byte matches.
 */
bool kverbs_perf_check(const void *buf, u32 len, u64 iter, u32 *offset)
{
	const u8 *p = buf;
	u32 w, i;
	u64 v;

	for (w = 0; (w + 1) * 8 <= len; w++)
		if (kverbs_perf_get_word(p + w * 8) != kverbs_perf_word(iter, w))
			break;
	v = kverbs_perf_word(iter, w);
	for (i = w * 8; i < len; i++, v >>= 8) {
		if (p[i] != (u8)v) {
			*offset = i;
			return false;
		}
	}
	return true;
}

/**
 * kverbs_perf_poll - one round of busy polling
 * @ep: an endpoint whose CQ is IB_POLL_DIRECT
 * @timeout_ns: the wait's limit
 * @deadline_ns: ktime_get_ns() past which the wait has failed, 0 before
 *	the first round sets it
 * @round: rounds of this wait before this one
 *
 * Runs the handlers of what completed, in the caller's thread.  Any
 * signal ends a test, which then reports what it did so far.
 *
 * The clock is read in the first round and then every
 * KVERBS_PERF_CLOCK_ROUNDS: it can cost more than a poll (in a guest
 * whose kernel marks the TSC unstable the clocksource is an emulated
 * HPET, and reading it every round costs a third of a 64-byte
 * write_bw's time there).
 *
 * Return: 0 to poll again, the endpoint's failure, -EINTR, or
 * kverbs_ep_timed_out()'s -ETIMEDOUT or -ENETDOWN.
 */
int kverbs_perf_poll(struct kverbs_ep *ep, u64 timeout_ns, u64 *deadline_ns,
		     unsigned int round)
{
	u64 now;

	ib_process_cq_direct(ep->cq, KVERBS_PERF_POLL_BUDGET);
	if (kverbs_ep_error(ep))
		return kverbs_ep_reset_cause(ep);
	if (signal_pending(current))
		return -EINTR;
	if (!(round % KVERBS_PERF_CLOCK_ROUNDS)) {
		now = ktime_get_ns();
		if (!*deadline_ns)
			*deadline_ns = now + timeout_ns;
		else if (now > *deadline_ns)
			return kverbs_ep_timed_out(ep);
	}
	/* Busy, but not at the expense of the device's own threads (rxe, siw). */
	cond_resched();
	return 0;
}

/**
 * kverbs_perf_wait - wait until a condition holds, polling the CQ or sleeping
 * @ep: the endpoint
 * @cond: the condition, which completion handlers make true; called
 *	again and again, from the waiting thread only
 * @arg: what @cond looks at
 * @timeout_ns: limit, from now
 *
 * With a polled CQ, busy-polls it (kverbs_perf_poll()); otherwise sleeps
 * until the handlers, which the completion interrupt has run in softirq
 * context or on a workqueue (the CQ's poll context), wake the
 * endpoint (kverbs_ep_wake()).  Returns at once if @cond holds already
 * (what completed meanwhile is reaped by the next wait that polls).
 *
 * A wait can learn of a failure before it sees completions that came
 * first.  A peer that sends its last message (DONE), waits for it to be
 * acknowledged and disconnects has put that message into our CQ before
 * its disconnect request left; but our rdma_cm handler may record the
 * disconnect before the CQ is polled again (IB_POLL_DIRECT: between two
 * polls of ours; with completion events: before the CQ's softirq or
 * work ran).
 * So a wait that the endpoint's failure ends drains the QP, which runs
 * the handler of every completion ahead of the flushes whatever the poll
 * context, and holds after all if what it waited for was among them.
 * The test is over either way, and a drained QP is what it tears down.
 * A signal or the time limit does not drain: our own disconnect would
 * come back as the peer's and be reported instead.
 *
 * Return: 0 once @cond holds; otherwise the endpoint's failure,
 * -ETIMEDOUT, or -EINTR on any signal.
 */
int kverbs_perf_wait(struct kverbs_ep *ep, bool (*cond)(void *arg), void *arg,
		     u64 timeout_ns)
{
	unsigned int round = 0;
	u64 deadline = 0;
	int err = 0;

	if (!ep->polled) {
		err = kverbs_ep_wait_interruptible(ep, cond(arg),
						   kverbs_ep_wait_timeout(timeout_ns));
	} else {
		while (!err && !cond(arg))
			err = kverbs_perf_poll(ep, timeout_ns, &deadline, round++);
	}
	if (!err || cond(arg))
		return 0;
	if (!kverbs_ep_error(ep))
		return err;
	kverbs_ep_drain(ep);
	return cond(arg) ? 0 : err;
}

static bool kverbs_perf_cond_done(void *done)
{
	return kverbs_is_done(done);
}

/**
 * kverbs_perf_wait_done - kverbs_perf_wait() for a flag a completion sets
 * @ep: the endpoint
 * @done: the flag, which kverbs_set_done() sets
 * @timeout_ns: limit, from now
 *
 * Return: as kverbs_perf_wait().
 */
int kverbs_perf_wait_done(struct kverbs_ep *ep, bool *done, u64 timeout_ns)
{
	return kverbs_perf_wait(ep, kverbs_perf_cond_done, done, timeout_ns);
}

/**
 * kverbs_perf_samples_alloc - room for a latency test's samples
 * @smp: the samples, zeroed
 * @run: the test: a chunk if it has an array for samples
 *	(&kverbs_perf_run.samples_max), and one for the phases if it has
 *	one for them too (KVERBS_PERF_F_PHASES)
 *
 * Return: 0 or -ENOMEM; kverbs_perf_samples_free() releases what was
 * allocated either way.
 */
int kverbs_perf_samples_alloc(struct kverbs_perf_samples *smp,
			      const struct kverbs_perf_run *run)
{
	if (!run->samples_max)
		return 0;
	smp->chunk = kmalloc_array(KVERBS_PERF_CHUNK, sizeof(u64), GFP_KERNEL_ACCOUNT);
	if (!smp->chunk)
		return -ENOMEM;
	if (!run->phases.kaddr)
		return 0;
	smp->phases = kmalloc_array(2 * KVERBS_PERF_CHUNK, sizeof(u64),
				    GFP_KERNEL_ACCOUNT);
	return smp->phases ? 0 : -ENOMEM;
}

/**
 * kverbs_perf_samples_free - release what kverbs_perf_samples_alloc() took
 * @smp: the samples, flushed or not
 */
void kverbs_perf_samples_free(struct kverbs_perf_samples *smp)
{
	kfree(smp->phases);
	kfree(smp->chunk);
}

/**
 * kverbs_perf_samples_flush - copy the latency samples taken so far
 * @smp: the samples
 * @run: the test, with the caller's array, which is pinned: the copy
 *	cannot fault, nor wait on the caller's memory (ubuf.c)
 *
 * The phases of a sample whose completion the thread has not seen, which
 * only a failure or a signal leaves, go as 0.
 */
void kverbs_perf_samples_flush(struct kverbs_perf_samples *smp,
			       struct kverbs_perf_run *run)
{
	u64 *dst = (u64 *)run->samples.kaddr + smp->stored;
	/*
	 * Read once: after a drain that did not end, a late completion's
	 * handler (kverbs_perf_req_wr_done()) may still add a sample.
	 */
	u32 n = READ_ONCE(smp->len);
	size_t len = n * sizeof(u64);

	if (!n)
		return;
	memcpy(dst, smp->chunk, len);
	kverbs_ubuf_written(&run->samples, dst, len);
	if (smp->phases) {
		memset(smp->phases + 2 * smp->seen, 0,
		       2 * (n - smp->seen) * sizeof(u64));
		dst = (u64 *)run->phases.kaddr + 2 * (size_t)smp->stored;
		memcpy(dst, smp->phases, 2 * len);
		kverbs_ubuf_written(&run->phases, dst, 2 * len);
	}
	smp->stored += n;
	smp->len = 0;
	smp->seen = 0;
}

static void kverbs_perf_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_perf_recv *r = container_of(wc->wr_cqe, struct kverbs_perf_recv,
						  cqe.cqe);

	trace_kverbs_wc(cq, wc, KVERBS_STEP_RECV);
	if (wc->status != IB_WC_SUCCESS) {
		kverbs_ep_wc_failed(r->ep, wc, KVERBS_STEP_RECV);
		return;
	}
	r->byte_len = wc->byte_len;
	r->opcode = wc->opcode;
	r->wc_flags = wc->wc_flags;
	r->imm = wc->wc_flags & IB_WC_WITH_IMM ? be32_to_cpu(wc->ex.imm_data) : 0;
	r->inv_rkey = wc->wc_flags & IB_WC_WITH_INVALIDATE ? wc->ex.invalidate_rkey : 0;
	/* Only when asked: a clock read can cost more than the rest here. */
	if (r->stamp)
		r->done_ns = ktime_get_ns();
	kverbs_set_done(&r->done);
	kverbs_ep_wake(r->ep);
}

/**
 * kverbs_perf_imm_check - whether a data message carried its immediate data
 * @run: the test, with KVERBS_PERF_F_IMM or not
 * @r: the receive message @iter completed in
 * @iter: the message's iteration
 *
 * Every completion of a data message is checked, with --validate or
 * without: the immediate data travels in the completion, not in the
 * buffer, and costs nothing to look at.
 *
 * Return: 0 when it carried kverbs_perf_imm(@iter), or the test has no
 * immediate data; else -EBADMSG, recorded on the endpoint with
 * KVERBS_RESULT_IMM (and KVERBS_RESULT_NO_IMM when it carried none).
 */
int kverbs_perf_imm_check(struct kverbs_perf_run *run, const struct kverbs_perf_recv *r,
			  u64 iter)
{
	bool present = r->wc_flags & IB_WC_WITH_IMM;

	if (!(run->flags & KVERBS_PERF_F_IMM) ||
	    (present && r->imm == kverbs_perf_imm(iter)))
		return 0;
	run->result->mismatch_iter = iter;
	run->imm_expected = kverbs_perf_imm(iter);
	run->imm_got = r->imm;
	return kverbs_ep_imm_mismatch(r->ep, present);
}

/**
 * kverbs_perf_inv_check - whether a message invalidated the key it should
 * @run: the test
 * @ep: the endpoint the message arrived on
 * @invalidated: its completion had IB_WC_WITH_INVALIDATE ...
 * @inv_rkey: ... of this key
 * @want: the protocol says it invalidates our key: a ROUND with
 *	KVERBS_PERF_F_INV
 * @rkey: the key we advertised, which it must name
 *
 * Every message a responder takes is checked, in every test: a peer that
 * invalidates a key the protocol does not hand back takes away a buffer
 * we think registered, and one that does not invalidate a key that it
 * should leaves it registered, where the test would re-register it and
 * fail.  A device that checks the key refuses a wrong one in the
 * message's completion (rxe: IB_WC_REM_INV_REQ_ERR); siw invalidates
 * the MR the key's index names whatever its key byte, and says which
 * key it was asked for, which is checked here.  The MR is not touched:
 * it is deregistered with the rest of the test, valid or not.
 *
 * Return: 0 when it did what the protocol says, counted in
 * @run->inv_remote if it invalidated; else -EPROTO, recorded on @ep as
 * KVERBS_STEP_RECV with @run->inv_expected and @run->inv_got.
 */
int kverbs_perf_inv_check(struct kverbs_perf_run *run, struct kverbs_ep *ep,
			  bool invalidated, u32 inv_rkey, bool want, u32 rkey)
{
	if (invalidated == want && (!want || inv_rkey == rkey)) {
		run->inv_remote += invalidated;
		return 0;
	}
	run->inv_expected = want ? rkey : 0;
	run->inv_got = invalidated ? inv_rkey : 0;
	ibdev_dbg(kverbs_ep_device(ep), "perf: the peer's message invalidated key %#x, expected %#x (0: none)\n",
		  run->inv_got, run->inv_expected);
	return kverbs_ep_failed(ep, -EPROTO, KVERBS_STEP_RECV);
}

/**
 * kverbs_perf_recv_init - prepare a receive of data or control messages
 * @r: the receive
 * @ep: the endpoint it is posted on
 */
void kverbs_perf_recv_init(struct kverbs_perf_recv *r, struct kverbs_ep *ep)
{
	r->cqe.cqe.done = kverbs_perf_recv_done;
	r->ep = ep;
}

/**
 * kverbs_perf_recv_post - post @r into part of a registered buffer
 * @r: the receive, which kverbs_perf_recv_init() prepared
 * @buf: the buffer, whose MR names it
 * @offset: where in @buf the message lands
 * @len: room for it, which the CPU must have given back to the device
 *	(kverbs_buf_sync_range_for_device()) if it read any of it
 *
 * Clears @r->done, which the completion sets along with @r->byte_len.
 * Return: 0 or the failure, recorded as KVERBS_STEP_RECV.
 */
int kverbs_perf_recv_post(struct kverbs_perf_recv *r, struct kverbs_buf *buf,
			  u32 offset, u32 len)
{
	struct ib_sge sge = {
		.addr = buf->mr->iova + offset,
		.length = len,
		.lkey = buf->mr->lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &r->cqe.cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	kverbs_buf_check_device(buf, offset, len);
	r->done = false;
	return kverbs_post_recv(r->ep, &wr);
}

/**
 * kverbs_perf_ctrl_wr - build the SEND of a control message
 * @msg: a send buffer whose contents the caller filled in
 * @wr: the work request to fill in, signaled
 * @type: the message's type, written into it
 *
 * A plain SEND of the whole buffer: its length, not its type, marks it
 * as control where data may arrive in the same receives (SEND_BW).
 */
void kverbs_perf_ctrl_wr(struct kverbs_msg *msg, struct ib_send_wr *wr,
			 enum kverbs_perf_msg_type type)
{
	struct kverbs_perf_msg *m = msg->buf;

	m->type = cpu_to_le32(type);
	kverbs_msg_send_wr(msg, wr);
}

/**
 * kverbs_perf_alloc - a side's data buffer and its control message buffer
 * @ep: the side's endpoint, with its PD
 * @buf: the data buffer to allocate, map and register later
 * @bytes: its size
 * @map: DMA-map it and give it an MR now; false for a requester with
 *	KVERBS_PERF_F_RW, whose rdma_rw contexts map each message
 *	themselves
 * @ctrl_send: the buffer control messages are sent from
 * @ctrl_len: its size
 *
 * Return: 0 or a negative errno; the caller frees whatever was allocated.
 */
int kverbs_perf_alloc(struct kverbs_ep *ep, struct kverbs_buf *buf,
		      size_t bytes, bool map, struct kverbs_msg *ctrl_send,
		      u32 ctrl_len)
{
	int ret;

	ret = kverbs_buf_alloc(buf, bytes);
	if (ret)
		return ret;
	/* Both ways: WRITE and READ each fill it on one side. */
	ret = map ? kverbs_buf_map(buf, ep, DMA_BIDIRECTIONAL) : 0;
	if (ret)
		return ret;
	ret = kverbs_msg_alloc(ctrl_send, ep->pd, ctrl_len, DMA_TO_DEVICE);
	if (ret)
		return ret;
	/* Nothing was sent yet: the buffer is free. */
	ctrl_send->done = true;
	return 0;
}

/**
 * kverbs_perf_device_check - whether a device has what a test needs
 * @t: the test
 * @flags: &enum kverbs_perf_flags it runs with
 * @ep: its endpoint, bound to a device and port
 *
 * Called before the QP exists, so that nothing is posted for a test
 * the device cannot run.  Immediate data is InfiniBand's and RoCE's:
 * iWARP's RDMAP has none (siw), as KVERBS_PORT_CAP_IMM says.  SEND with
 * invalidate comes with the memory management extensions, as ib_core
 * and NVMe/RDMA's target take it (KVERBS_DEVICE_CAP_SEND_INV).
 *
 * Return: 0, or -EOPNOTSUPP when it lacks something.
 */
int kverbs_perf_device_check(const struct kverbs_perf_ops *t, u32 flags,
			     struct kverbs_ep *ep)
{
	struct ib_device *ibdev = kverbs_ep_device(ep);

	if (t->atomics && ibdev->attrs.atomic_cap == IB_ATOMIC_NONE) {
		ibdev_dbg(ibdev, "no atomic operations\n");
		return -EOPNOTSUPP;
	}
	if ((flags & KVERBS_PERF_F_IMM) && !rdma_ib_or_roce(ibdev, kverbs_ep_port(ep))) {
		ibdev_dbg(ibdev, "no immediate data on port %u\n", kverbs_ep_port(ep));
		return -EOPNOTSUPP;
	}
	if ((flags & KVERBS_PERF_F_INV) &&
	    !(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		ibdev_dbg(ibdev, "no SEND with invalidate\n");
		return -EOPNOTSUPP;
	}
	return 0;
}

/**
 * kverbs_perf_register - register a test's buffer and wait until it is done
 * @ep: the endpoint
 * @buf: the buffer, mapped by kverbs_perf_alloc()
 * @access: the rights the peer gets, IB_ACCESS_*
 * @timeout_ns: limit on the wait
 *
 * Nothing else of the test is posted before the registration completed
 * (see kverbs_buf_reg_wr()).
 *
 * Return: 0 or the recorded failure.
 */
int kverbs_perf_register(struct kverbs_ep *ep, struct kverbs_buf *buf,
			 int access, u64 timeout_ns)
{
	struct ib_reg_wr reg_wr;
	int ret;

	kverbs_buf_reg_wr(buf, &reg_wr, access);
	ret = kverbs_post_send(ep, &reg_wr.wr, KVERBS_STEP_REG_MR);
	if (ret)
		return ret;
	ret = kverbs_perf_wait_done(ep, &buf->reg_done, timeout_ns);
	if (ret)
		return kverbs_ep_failed(ep, ret, KVERBS_STEP_REG_MR);
	return 0;
}

/**
 * kverbs_perf_describe_ep - note in the result where the test runs
 * @run: the test
 * @ep: its connection, bound to a device and port
 */
void kverbs_perf_describe_ep(struct kverbs_perf_run *run, struct kverbs_ep *ep)
{
	struct kverbs_perf_result *res = run->result;
	struct ib_device *ibdev = kverbs_ep_device(ep);
	u32 port = kverbs_ep_port(ep);
	struct ib_port_attr attr;

	strscpy(res->ibdev, dev_name(&ibdev->dev), sizeof(res->ibdev));
	res->port_num = port;
	res->transport = rdma_node_get_transport(ibdev->node_type);
	res->link_layer = rdma_port_get_link_layer(ibdev, port);
	if (!ib_query_port(ibdev, port, &attr))
		res->active_mtu = ib_mtu_enum_to_int(attr.active_mtu);
}

/* ib_core's poll contexts by &enum kverbs_perf_poll. */
static const enum ib_poll_context kverbs_perf_poll_ctxs[] = {
	[KVERBS_PERF_POLL_DIRECT] = IB_POLL_DIRECT,
	[KVERBS_PERF_POLL_SOFTIRQ] = IB_POLL_SOFTIRQ,
	[KVERBS_PERF_POLL_WORKQUEUE] = IB_POLL_WORKQUEUE,
	[KVERBS_PERF_POLL_UNBOUND_WORKQUEUE] = IB_POLL_UNBOUND_WORKQUEUE,
};

/**
 * kverbs_perf_cq_caps - the completion policy of one end of a test
 * @run: the test, with the side's policy
 * @caps: the end's QP caps, whose CQ fields are set here
 * @polls: whether the end busy-polls when the side left the choice to it
 *	(KVERBS_PERF_POLL_DEFAULT)
 *
 * The one place where a side's --poll, --cq-pool and --dim become an
 * end's CQ, for every test alike: kverbs_perf_parse() has refused what
 * a test cannot run with.
 */
void kverbs_perf_cq_caps(const struct kverbs_perf_run *run,
			 struct kverbs_ep_caps *caps, bool polls)
{
	if (run->poll)
		caps->poll_ctx = kverbs_perf_poll_ctxs[run->poll];
	else
		caps->poll_ctx = polls ? IB_POLL_DIRECT : IB_POLL_SOFTIRQ;
	caps->cq_pool = run->cq_flags & KVERBS_PERF_CQ_POOL;
	caps->cq_dim = run->cq_flags & KVERBS_PERF_CQ_DIM;
}

/**
 * kverbs_perf_describe_cq - note in the result the CQ an end runs on
 * @run: the test
 * @ep: the end's endpoint; nothing is noted while it has no CQ
 */
void kverbs_perf_describe_cq(struct kverbs_perf_run *run, struct kverbs_ep *ep)
{
	struct kverbs_perf_cq *out = run->cq;
	struct ib_cq *cq = ep->cq;
	u32 poll;

	if (!cq)
		return;
	for (poll = KVERBS_PERF_POLL_DIRECT; poll < ARRAY_SIZE(kverbs_perf_poll_ctxs); poll++)
		if (kverbs_perf_poll_ctxs[poll] == cq->poll_ctx)
			out->poll = poll;
	out->flags = (ep->cq_pool_cqe ? KVERBS_PERF_CQ_POOL : 0) |
		     (cq->dim ? KVERBS_PERF_CQ_DIM : 0);
	out->id = cq->res.id;
	out->comp_vector = cq->comp_vector;
	out->cqe = cq->cqe;
}

/**
 * kverbs_perf_create_qp - create an end's QP, and note what it got
 * @run: the test
 * @ep: the end's endpoint, bound to a device
 * @caps: what the end needs, its CQ's as kverbs_perf_cq_caps() set them
 * @posts_data: whether the end posts data work requests (the requester,
 *	both ends of a ping-pong), and so holds the test's inline data
 *
 * Return: what kverbs_ep_create_qp() returns.  The CQ and the QP's inline
 * data are noted in the result either way, as far as they were made.
 */
int kverbs_perf_create_qp(struct kverbs_perf_run *run, struct kverbs_ep *ep,
			  struct kverbs_ep_caps *caps, bool posts_data)
{
	int ret;

	if (posts_data)
		caps->max_inline_data = run->inline_size;
	ret = kverbs_ep_create_qp(ep, caps);
	kverbs_perf_describe_cq(run, ep);
	run->max_inline = ep->max_inline;
	return ret;
}

/**
 * kverbs_perf_per_sec - @count per second over @ns nanoseconds
 * @count: bytes or operations
 * @ns: the time they took, not 0
 *
 * Return: the rate, or U64_MAX where it does not fit in 64 bits: on
 * x86-64 mul_u64_u64_div_u64() is one divide instruction, which traps
 * when the quotient overflows.
 */
u64 kverbs_perf_per_sec(u64 count, u64 ns)
{
	if (div64_u64(count, ns) >= U64_MAX / NSEC_PER_SEC)
		return U64_MAX;
	return mul_u64_u64_div_u64(count, NSEC_PER_SEC, ns);
}

/**
 * kverbs_perf_set_rates - fill in the numbers of a test that ran
 * @res: the result
 * @iterations: messages completed
 * @elapsed_ns: how long they took
 * @peak_bps: the highest rate over a millisecond or more, 0 if unknown
 *
 * A responder's numbers come from its requester's DONE, which
 * kverbs_perf_done_valid() checked.
 */
void kverbs_perf_set_rates(struct kverbs_perf_result *res, u64 iterations,
			   u64 elapsed_ns, u64 peak_bps)
{
	res->iterations = iterations;
	res->bytes = iterations * res->msg_size;
	res->elapsed_ns = elapsed_ns;
	if (!elapsed_ns)
		return;
	res->avg_bps = kverbs_perf_per_sec(res->bytes, elapsed_ns);
	res->msg_rate = kverbs_perf_per_sec(iterations, elapsed_ns);
	res->peak_bps = max(peak_bps, res->avg_bps);
}

/**
 * kverbs_perf_done_valid - whether a requester's DONE can be true
 * @run: the test, with the iterations the hello asked for
 * @msg_size: bytes per message
 * @ops: the operations DONE says completed
 * @elapsed_ns: ... and the time they took
 *
 * DONE comes from the network, so it is checked as ioctl input is: no
 * more operations than were asked for, and a byte count and rates that
 * fit in the result's 64-bit fields.
 *
 * Return: true when DONE is within those bounds.
 */
bool kverbs_perf_done_valid(const struct kverbs_perf_run *run, u32 msg_size,
			    u64 ops, u64 elapsed_ns)
{
	u64 bytes;

	if (run->iterations && ops > run->iterations)
		return false;
	if (check_mul_overflow(ops, (u64)msg_size, &bytes))
		return false;
	return !elapsed_ns ||
	       div64_u64(bytes, elapsed_ns) < U64_MAX / NSEC_PER_SEC;
}

/**
 * kverbs_perf_post_check - whether a test takes these ways to post
 * @t: the test
 * @flags: &enum kverbs_perf_flags it runs with, which @t takes
 * @tx_depth: its TX depth as asked for, before a latency test's 1
 * @post_list: data work requests chained per post, 0 or 1 for one
 * @cq_mod: one data work request in this many signaled, 0 for the default
 * @inline_size: the largest data message posted inline, 0 for none
 *
 * For a client's own arguments and for a hello alike.  A latency test
 * has one operation in flight: nothing to chain or leave unsignaled.
 * Inline data is what a SEND or WRITE carries; a READ or an atomic
 * operation carries none.  With KVERBS_PERF_F_RW, rdma_rw builds each
 * message's work requests itself, in a chain of its own whose last one
 * it signals: no immediate data, no list of ours, no signaling of ours
 * and no inline data go with it.
 *
 * Return: 0, or -EINVAL.
 */
int kverbs_perf_post_check(const struct kverbs_perf_ops *t, u32 flags, u32 tx_depth,
			   u32 post_list, u32 cq_mod, u32 inline_size)
{
	u32 depth = t->lat ? 1 : tx_depth;

	if ((flags & KVERBS_PERF_F_RW) &&
	    ((flags & KVERBS_PERF_F_IMM) || post_list > 1 || cq_mod > 1 || inline_size))
		return -EINVAL;
	if (post_list > depth || cq_mod > depth)
		return -EINVAL;
	if (inline_size > KVERBS_PERF_MAX_INLINE ||
	    (inline_size && t->op != KVERBS_PERF_OP_WRITE && t->op != KVERBS_PERF_OP_SEND))
		return -EINVAL;
	return 0;
}
