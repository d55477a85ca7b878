// SPDX-License-Identifier: GPL-2.0
/*
 * A perf test's session: who connects to whom, what the client asks for
 * in its hello, and which side moves the data.
 *
 * The data path has two ends.  The requester posts the data work
 * requests (perf_req.c); the responder offers its buffer, takes SENDs
 * and checks or fills messages with --validate (perf_resp.c).  The
 * client is the requester and the server the responder, unless the
 * client asks for the reverse direction (KVERBS_PERF_F_REVERSE): then
 * the server moves the data into, or out of, the client's buffer.  A
 * bidirectional test (the tool's -b) is one session each way at once.
 *
 * Both ends set up their QP and post their first receives before the
 * connection exists, so nothing the other end sends can find them
 * unready; the hello decides which end each side is.  The client sends
 * the first message, whichever end it is (see perf.h).
 */
#include "perf.h"

#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/timer.h>

/*
 * A server's ceilings: how long a client may keep it busy, and how many
 * iterations it may ask for, whatever the hello says.  The uAPI's own
 * limit, a day (KVERBS_PERF_MAX_DURATION_NS), is what a test may run at
 * all; these are what a server runs for a peer it does not know.  A
 * server's call may lower them (&kverbs_perf.max_duration_ns,
 * .max_iterations), not raise them.
 *
 * Ten minutes covers any benchmark run anyone makes by hand (perftest's
 * -D is seconds to minutes) while a stranger's hello can hold a server
 * for no longer: asleep until its completions' interrupts, or busy-
 * polling a CPU if the server chose to (KVERBS_PERF_F_BUSY_POLL).
 */
static int kverbs_perf_max_duration_s_set(const char *val,
					  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1,
				     div_u64(KVERBS_PERF_MAX_DURATION_NS, NSEC_PER_SEC));
}

static const struct kernel_param_ops kverbs_perf_max_duration_s_ops = {
	.set = kverbs_perf_max_duration_s_set,
	.get = param_get_uint,
};

static unsigned int kverbs_perf_max_duration_s = 600;
module_param_cb(perf_max_duration_s, &kverbs_perf_max_duration_s_ops,
		&kverbs_perf_max_duration_s, 0644);
MODULE_PARM_DESC(perf_max_duration_s,
		 "longest perf session a server runs for a client, in s, 1 to 86400 (default 600)");

/*
 * Ten million iterations are 2000 times perftest's default of 5000: a
 * few seconds of small messages on hardware, tens of seconds on rxe, and
 * at the 4 MiB max_msg_size 40 TiB, which the duration ceiling still
 * cuts short.  Longer runs are what duration mode is for.  Any value
 * from 1 up.
 */
static int kverbs_perf_max_iterations_set(const char *val,
					  const struct kernel_param *kp)
{
	u64 v;
	int ret;

	ret = kstrtoull(val, 0, &v);
	if (ret)
		return ret;
	if (!v)
		return -EINVAL;
	WRITE_ONCE(*(u64 *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops kverbs_perf_max_iterations_ops = {
	.set = kverbs_perf_max_iterations_set,
	.get = param_get_ullong,
};

static u64 kverbs_perf_max_iters = 10000000;
module_param_cb(perf_max_iterations, &kverbs_perf_max_iterations_ops,
		&kverbs_perf_max_iters, 0644);
MODULE_PARM_DESC(perf_max_iterations,
		 "most iterations a perf server runs for a client, from 1 (default 10000000)");

/**
 * kverbs_perf_max_duration_ns - the module's ceiling on a session's duration
 *
 * Return: perf_max_duration_s in ns, at most KVERBS_PERF_MAX_DURATION_NS.
 */
u64 kverbs_perf_max_duration_ns(void)
{
	return (u64)READ_ONCE(kverbs_perf_max_duration_s) * NSEC_PER_SEC;
}

/**
 * kverbs_perf_max_iterations - the module's ceiling on iterations
 *
 * Return: perf_max_iterations, at least 1.
 */
u64 kverbs_perf_max_iterations(void)
{
	return READ_ONCE(kverbs_perf_max_iters);
}

/*
 * A server's ceilings as they stand now: its own, unless the admin has
 * lowered the module's below them since the call began.
 */
static u64 kverbs_perf_server_max_duration(const struct kverbs_perf_run *run)
{
	u64 module = kverbs_perf_max_duration_ns();

	return run->max_duration_ns ? min(run->max_duration_ns, module) : module;
}

static u64 kverbs_perf_server_max_iterations(const struct kverbs_perf_run *run)
{
	u64 module = kverbs_perf_max_iterations();

	return run->max_iterations ? min(run->max_iterations, module) : module;
}

/* What this side of the connection does in the data path. */
struct kverbs_perf_end {
	struct kverbs_perf_req *req;
	struct kverbs_perf_resp *resp;
	struct kverbs_perf_ud *ud;
};

static int kverbs_perf_end_create(struct kverbs_perf_end *end,
				  struct kverbs_perf_run *run,
				  struct kverbs_ep *ep, bool requester)
{
	/* Datagrams: an end of their own, either side (perf_ud.c). */
	if (run->flags & KVERBS_PERF_F_UD) {
		end->ud = kverbs_perf_ud_create(run, ep, requester);
		if (IS_ERR(end->ud))
			return PTR_ERR(xchg(&end->ud, NULL));
	} else if (requester) {
		end->req = kverbs_perf_req_create(run, ep);
		if (IS_ERR(end->req))
			return PTR_ERR(xchg(&end->req, NULL));
	} else {
		end->resp = kverbs_perf_resp_create(run, ep);
		if (IS_ERR(end->resp))
			return PTR_ERR(xchg(&end->resp, NULL));
	}
	return 0;
}

static int kverbs_perf_end_run(struct kverbs_perf_end *end)
{
	if (end->ud)
		return kverbs_perf_ud_run(end->ud);
	return end->req ? kverbs_perf_req_run(end->req) :
			  kverbs_perf_resp_run(end->resp);
}

/*
 * The end is over: what needs the QP goes now.  Its memory is the
 * endpoint's to free (kverbs_ep_set_release()), once the device is done
 * with it: kverbs_ep_destroy() may keep it for a while on a CQ of
 * ib_core's pool (--cq-pool), after this call returned.
 */
static void kverbs_perf_end_stop(struct kverbs_perf_end *end)
{
	if (end->req)
		kverbs_perf_req_stop(end->req);
	if (end->resp)
		kverbs_perf_resp_stop(end->resp);
	if (end->ud)
		kverbs_perf_ud_stop(end->ud);
}

static void kverbs_perf_client_hello(const struct kverbs_perf_run *run,
				     struct kverbs_perf_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le16(KVERBS_PERF_MAGIC);
	h->version = cpu_to_le16(KVERBS_PERF_VERSION);
	h->test = cpu_to_le16(run->test);
	h->flags = cpu_to_le16(run->flags);
	h->msg_size = cpu_to_le32(run->msg_size);
	h->tx_depth = cpu_to_le32(run->tx_depth);
	h->iterations = cpu_to_le64(run->iterations);
	h->duration_ns = cpu_to_le64(run->duration_ns);
	/* Only where the server posts data too: see the hello. */
	if (!kverbs_perf_client_requests(run->flags)) {
		h->post_list = cpu_to_le16(run->post_list > 1 ? run->post_list : 0);
		h->cq_mod = cpu_to_le16(run->cq_mod);
	}
	if (!kverbs_perf_client_requests(run->flags) || kverbs_perf_is_pingpong(run->t))
		h->inline_size = cpu_to_le16(run->inline_size);
}

/* The server refused us: what did it say? */
static void kverbs_perf_client_rejected(struct kverbs_perf_run *run,
					struct kverbs_ep *ep)
{
	struct kverbs_perf_result *res = run->result;
	struct kverbs_perf_reject_msg rej = {};
	bool ours;

	ours = kverbs_ep_private_data(ep, &rej, sizeof(rej)) >= sizeof(rej);
	/* Anything else is a busy server, or not a kverbs perf server. */
	if (!ours || le16_to_cpu(rej.magic) != KVERBS_PERF_MAGIC || !rej.reason)
		return;
	res->reject_reason = le16_to_cpu(rej.reason);
	res->reject_value = le32_to_cpu(rej.value);
	res->reject_version = le16_to_cpu(rej.version);
	run->common.fail.step = KVERBS_STEP_HELLO;
}

/**
 * kverbs_perf_client - run the client side of a perf test
 * @run: the test
 *
 * Return: 0 when the test ran to its end, else the first failure, which
 * is also in @run->common.fail; -EINTR when a signal ended it, with the
 * numbers of what ran until then in @run->result.
 */
int kverbs_perf_client(struct kverbs_perf_run *run)
{
	bool requester = kverbs_perf_client_requests(run->flags);
	struct kverbs_perf_end end = {};
	struct kverbs_perf_hello hello;
	struct kverbs_ep *ep;
	int ret;

	ep = kverbs_test_ep_create(&run->common);
	if (IS_ERR(ep))
		return PTR_ERR(ep);
	ret = kverbs_test_resolve(&run->common, ep);
	if (ret)
		goto out;
	kverbs_perf_describe_ep(run, ep);
	ret = kverbs_perf_end_create(&end, run, ep, requester);
	if (ret)
		goto out;
	kverbs_perf_client_hello(run, &hello);
	/* READ: as many in flight each way as both devices allow. */
	ret = kverbs_ep_connect_data(ep, min_t(u32, run->tx_depth, U8_MAX),
				     run->common.timeout_ns, &hello, sizeof(hello));
	if (!ret)
		ret = kverbs_perf_end_run(&end);
out:
	/*
	 * The teardown's own flushes are recorded after the failure that
	 * ended the test, if any, and so do not replace it.
	 */
	if (ret)
		kverbs_test_fail(&run->common, ep, ret);
	if (ret == -ECONNREFUSED)
		kverbs_perf_client_rejected(run, ep);
	kverbs_perf_end_stop(&end);
	kverbs_ep_destroy(ep);
	return ret;
}

/* A client's hello in host order, as the server checks it. */
struct kverbs_perf_asked {
	const struct kverbs_perf_ops *t;
	bool reserved;
	u16 version;
	u32 test;
	u32 flags;
	u32 msg_size;
	u32 tx_depth;
	u32 post_list;
	u32 cq_mod;
	u32 inline_size;
	u64 iterations;
	u64 duration_ns;
};

/*
 * One copy of the hello in the connection's private data, checked and
 * used (see kverbs_ep_private_data()).  False if it is no perf hello.
 */
static bool kverbs_perf_hello_decode(struct kverbs_ep *ep, struct kverbs_perf_asked *a)
{
	struct kverbs_perf_hello h = {};

	if (kverbs_ep_private_data(ep, &h, sizeof(h)) < sizeof(h) ||
	    le16_to_cpu(h.magic) != KVERBS_PERF_MAGIC)
		return false;
	a->version = le16_to_cpu(h.version);
	a->reserved = memchr_inv(h.reserved, 0, sizeof(h.reserved));
	a->test = le16_to_cpu(h.test);
	a->t = kverbs_perf_ops_get(a->test);
	a->flags = le16_to_cpu(h.flags);
	a->msg_size = le32_to_cpu(h.msg_size);
	a->tx_depth = le32_to_cpu(h.tx_depth);
	a->iterations = le64_to_cpu(h.iterations);
	a->duration_ns = le64_to_cpu(h.duration_ns);
	a->post_list = le16_to_cpu(h.post_list);
	a->cq_mod = le16_to_cpu(h.cq_mod);
	a->inline_size = le16_to_cpu(h.inline_size);
	return true;
}

/*
 * Is the hello well-formed, and a test this server runs, within its
 * message size?  Returns 0 or the reason to reject it, with *value and
 * *error.
 */
static enum kverbs_perf_reject
kverbs_perf_hello_check(const struct kverbs_perf_run *run, const struct kverbs_perf_asked *a,
			u32 *value, int *error)
{
	const struct kverbs_perf_ops *t = a->t;
	u32 flags = a->flags;

	if (a->version != KVERBS_PERF_VERSION) {
		*value = a->version;
		*error = -EPROTONOSUPPORT;
		return KVERBS_PERF_REJECT_VERSION;
	}
	/*
	 * Only the flags the test takes.  A test this server does not know
	 * is refused below, for itself; its flags are checked first, as
	 * those of a test that is not atomic.
	 */
	if (a->reserved ||
	    flags & ~(t ? t->flags : KVERBS_PERF_FLAGS & ~KVERBS_PERF_F_CMP_SWAP) ||
	    !kverbs_perf_flags_agree(flags))
		return KVERBS_PERF_REJECT_RESERVED;
	if (!t || (run->test && a->test != run->test)) {
		*value = a->test;
		*error = -EOPNOTSUPP;
		return KVERBS_PERF_REJECT_TEST;
	}
	if (!a->msg_size || a->msg_size > run->msg_size) {
		*value = run->msg_size;
		*error = -EMSGSIZE;
		return KVERBS_PERF_REJECT_SIZE;
	}
	if (t->msg_size && a->msg_size != t->msg_size) {
		*value = t->msg_size;
		*error = -EINVAL;
		return KVERBS_PERF_REJECT_SIZE;
	}
	*error = -EINVAL;
	if (!a->tx_depth || a->tx_depth > KVERBS_PERF_MAX_DEPTH) {
		*value = KVERBS_PERF_MAX_DEPTH;
		return KVERBS_PERF_REJECT_DEPTH;
	}
	if (!a->iterations == !a->duration_ns ||
	    a->duration_ns > KVERBS_PERF_MAX_DURATION_NS)
		return KVERBS_PERF_REJECT_ITERS;
	/*
	 * How the server's end posts, where it posts data: in the reverse
	 * direction, and in a ping-pong (inline data only).  Anything else
	 * is a hello this server does not understand.
	 */
	*error = -EPROTO;
	if (((a->post_list || a->cq_mod) && kverbs_perf_client_requests(flags)) ||
	    (a->inline_size && kverbs_perf_client_requests(flags) &&
	     !kverbs_perf_is_pingpong(t)) ||
	    kverbs_perf_post_check(t, flags, a->tx_depth, a->post_list, a->cq_mod,
				   a->inline_size))
		return KVERBS_PERF_REJECT_RESERVED;
	return KVERBS_PERF_REJECT_NONE;
}

/*
 * The server's ceilings on a well-formed hello.  These are the server's
 * choice, not the client's mistake: not -EINVAL, so that a server's
 * report tells a policy refusal from a broken peer.
 */
static enum kverbs_perf_reject
kverbs_perf_hello_allowed(struct kverbs_perf_run *run, struct kverbs_ep *ep,
			  const struct kverbs_perf_asked *a, u32 *value, int *error)
{
	u64 ceiling;

	if ((a->flags & KVERBS_PERF_F_REVERSE) && run->no_reverse) {
		/* As for a test the server does not run. */
		*error = -EOPNOTSUPP;
		return KVERBS_PERF_REJECT_REVERSE;
	}
	/*
	 * Immediate data is InfiniBand's and RoCE's: the client's device
	 * refuses it over iWARP before it connects, and so does a server.
	 */
	if ((a->flags & KVERBS_PERF_F_IMM) &&
	    !rdma_ib_or_roce(kverbs_ep_device(ep), kverbs_ep_port(ep))) {
		*value = a->test;
		*error = -EOPNOTSUPP;
		return KVERBS_PERF_REJECT_IMM;
	}
	/*
	 * A WRITE_LAT responder sees each WRITE only in its memory, with no
	 * completion to sleep on: it would spin a CPU for the peer.
	 */
	if (a->t->seen_in_memory && run->events) {
		*value = a->test;
		*error = -EOPNOTSUPP;
		return KVERBS_PERF_REJECT_BUSY_POLL;
	}
	ceiling = kverbs_perf_server_max_duration(run);
	if (a->duration_ns > ceiling) {
		*value = div_u64(ceiling, NSEC_PER_SEC);
		*error = -ERANGE;
		return KVERBS_PERF_REJECT_DURATION;
	}
	ceiling = kverbs_perf_server_max_iterations(run);
	if (a->iterations > ceiling) {
		*value = min_t(u64, ceiling, U32_MAX);
		*error = -ERANGE;
		return KVERBS_PERF_REJECT_ITERATIONS;
	}
	return KVERBS_PERF_REJECT_NONE;
}

/* The hello accepted: it becomes the test @run describes. */
static void kverbs_perf_hello_apply(struct kverbs_perf_run *run,
				    const struct kverbs_perf_asked *a)
{
	run->test = a->test;
	run->t = a->t;
	run->flags = a->flags;
	run->msg_size = a->msg_size;
	run->tx_depth = a->tx_depth;
	run->iterations = a->iterations;
	run->duration_ns = a->duration_ns;
	run->post_list = max_t(u32, a->post_list, 1);
	run->cq_mod = a->cq_mod;
	run->inline_size = a->inline_size;
	run->result->test = a->test;
	run->result->flags = a->flags;
	run->result->msg_size = a->msg_size;
	run->result->tx_depth = a->tx_depth;
	run->result->count = run->iterations;
	run->result->duration_ns = run->duration_ns;
}

/*
 * What the client asks for, checked like any input from the network.
 * On success it becomes the test @run describes; the server's own
 * @run->test and @run->msg_size are the limits it is checked against.
 * Returns 0 or the reason to reject it, with *value and *error.
 */
static enum kverbs_perf_reject
kverbs_perf_server_hello(struct kverbs_perf_run *run, struct kverbs_ep *ep,
			 u32 *value, int *error)
{
	struct kverbs_perf_asked a = {};
	enum kverbs_perf_reject why;

	*value = 0;
	*error = -EPROTO;
	if (!kverbs_perf_hello_decode(ep, &a))
		return KVERBS_PERF_REJECT_MAGIC;
	why = kverbs_perf_hello_check(run, &a, value, error);
	if (!why)
		why = kverbs_perf_hello_allowed(run, ep, &a, value, error);
	if (!why)
		kverbs_perf_hello_apply(run, &a);
	return why;
}

static void kverbs_perf_server_reject(struct kverbs_perf_run *run,
				      struct kverbs_ep *ep,
				      enum kverbs_perf_reject reason, u32 value)
{
	struct kverbs_perf_reject_msg rej = {
		.magic = cpu_to_le16(KVERBS_PERF_MAGIC),
		.version = cpu_to_le16(KVERBS_PERF_VERSION),
		.reason = cpu_to_le16(reason),
		.value = cpu_to_le32(value),
	};

	run->result->reject_reason = reason;
	run->result->reject_value = value;
	run->result->reject_version = KVERBS_PERF_VERSION;
	kverbs_ep_reject_data(ep, &rej, sizeof(rej));
}

/*
 * The server's own bound on a session, whatever its client does.
 *
 * The hello check keeps what the client asks for under the ceilings,
 * but that does not bound the session: a responder learns the end only
 * from its requester's DONE, and a peer that never sends it while it
 * keeps sending PROGRESS, SEND_BW data or ping-pong messages would keep
 * it busy for ever; every wait is bounded by the step timeout, the
 * number of waits is not.  A server's requester (KVERBS_PERF_F_REVERSE)
 * stops at the end of its duration, but in iterations mode a client's
 * slow side can stretch any count.  So a timer ends the session one step
 * timeout past the duration ceiling, in either mode, the way device
 * removal aborts a test: it records the endpoint's failure, which every
 * wait checks at each poll, and wakes it.  Checks in the requester's and
 * responder's loops would do it too, but in more places (the ping-pong
 * loop answers messages without returning to its caller), and each
 * future loop would need its own.  The step timeout on top gives a
 * client that asked for the whole ceiling time to set up and to report.
 */
struct kverbs_perf_limit {
	struct timer_list timer;
	struct kverbs_ep *ep;
};

static void kverbs_perf_limit_expired(struct timer_list *t)
{
	struct kverbs_perf_limit *lim = container_of(t, struct kverbs_perf_limit,
						     timer);

	/* The step stays whatever the test was doing; -ETIME says why. */
	kverbs_ep_failed(lim->ep, -ETIME, KVERBS_STEP_NONE);
}

static int kverbs_perf_server_run(struct kverbs_perf_run *run,
				  struct kverbs_perf_end *end,
				  struct kverbs_ep *ep)
{
	struct kverbs_perf_limit lim = { .ep = ep };
	/* At most a day and an hour: no overflow. */
	u64 limit_ns = kverbs_perf_server_max_duration(run) + run->common.timeout_ns;
	int ret;

	timer_setup_on_stack(&lim.timer, kverbs_perf_limit_expired, 0);
	mod_timer(&lim.timer, jiffies + nsecs_to_jiffies(limit_ns));
	ret = kverbs_perf_end_run(end);
	/* Waits at most for kverbs_perf_limit_expired(), which only records. */
	timer_delete_sync(&lim.timer);
	timer_destroy_on_stack(&lim.timer);
	return ret;
}

/* Serve one client from its request to its end, and release it. */
static int kverbs_perf_server_session(struct kverbs_perf_run *run,
				      struct kverbs_ep *ep)
{
	struct kverbs_perf_end end = {};
	enum kverbs_perf_reject reason;
	u32 value;
	int ret;

	/* Set if the request could not be attached to its device. */
	ret = kverbs_ep_error(ep);
	if (ret)
		goto out;
	kverbs_perf_describe_ep(run, ep);
	reason = kverbs_perf_server_hello(run, ep, &value, &ret);
	if (reason) {
		ibdev_dbg(kverbs_ep_device(ep), "perf: rejecting a client: reason %d, value %u\n",
			  reason, value);
		kverbs_ep_failed(ep, ret, KVERBS_STEP_HELLO);
		kverbs_perf_server_reject(run, ep, reason, value);
		goto out;
	}
	ret = kverbs_perf_end_create(&end, run, ep,
				     !kverbs_perf_client_requests(run->flags));
	if (ret) {
		kverbs_perf_server_reject(run, ep, KVERBS_PERF_REJECT_SETUP, -ret);
		goto out;
	}
	ret = kverbs_ep_accept(ep, run->common.timeout_ns);
	if (!ret)
		ret = kverbs_perf_server_run(run, &end, ep);
out:
	if (ret)
		kverbs_test_fail(&run->common, ep, ret);
	kverbs_perf_end_stop(&end);
	kverbs_ep_destroy(ep);
	return ret;
}

/**
 * kverbs_perf_server - run the server side of a perf test
 * @run: the test
 *
 * Serves one client.
 *
 * Return: 0 when its test ran to its end, -EINTR when
 * a signal ended the wait or the test, or the failure that ended it.
 */
int kverbs_perf_server(struct kverbs_perf_run *run)
{
	struct kverbs_listener *lsn;
	struct kverbs_ep *ep;
	int ret;

	/* The file's listener outlives us; our own does not. */
	lsn = run->lsn ?: kverbs_test_listen(&run->common);
	if (IS_ERR(lsn))
		return PTR_ERR(lsn);
	ep = kverbs_listener_accept(lsn);
	if (IS_ERR(ep)) {
		ret = PTR_ERR(ep);
		kverbs_test_accept_failed(&run->common, ret);
	} else {
		ret = kverbs_perf_server_session(run, ep);
	}
	if (lsn != run->lsn)
		kverbs_listener_destroy(lsn);
	return ret;
}
