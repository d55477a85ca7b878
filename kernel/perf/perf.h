/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perftest-style bandwidth and latency tests, shared by their client and
 * server halves, and by their requester and responder (perf_session.c).
 *
 * The client's hello (perf_proto.h) says what to run, in its connection
 * request.  The client sends the first message, START (or with
 * KVERBS_PERF_F_REVERSE its ADV): iWARP lets only the initiator send
 * first.  The responder ADVertises its buffer, or posts its receives;
 * the requester keeps a window of data work requests in flight, with
 * ROUND / ROUND_OK between --validate's rounds and PROGRESS now and then,
 * and ends with DONE and its numbers.  The exchange, each option's part
 * in it and the reasons: Documentation/perf-internals.rst.
 */
#ifndef _KVERBS_PERF_H
#define _KVERBS_PERF_H

#include "kverbs.h"
#include "perf_proto.h"

/*
 * Control receives are credits: a side keeps a receive posted for every
 * control message its peer may send before it waits for an answer, since
 * over iWARP a SEND that finds no receive ends the connection.  The
 * requester may send PROGRESS and at once ROUND or DONE; the responder
 * answers one message at a time.  Documentation/perf-internals.rst,
 * "Control messages and credits".
 */
#define KVERBS_PERF_CTRL_CREDITS	2

/* The completion policies a caller may ask for, in &kverbs_perf.cq_flags. */
#define KVERBS_PERF_CQ_FLAGS	(KVERBS_PERF_CQ_POOL | KVERBS_PERF_CQ_DIM)

/*
 * A perf test is one entry of kverbs_perf_tests[] (perf.c): what the
 * requester posts, what the responder does with it, and what the two
 * say to each other besides.  Every part of the engine that differs
 * from test to test asks the entry.
 */

/* The requester's data work request. */
enum kverbs_perf_op {
	KVERBS_PERF_OP_WRITE,		/* RDMA WRITE into the responder's buffer */
	KVERBS_PERF_OP_READ,		/* RDMA READ out of it */
	KVERBS_PERF_OP_SEND,		/* SEND into the responder's receives */
	KVERBS_PERF_OP_ATOMIC,		/* fetch-and-add or compare-and-swap on its words */
};

/* What the responder does with each of the requester's messages. */
enum kverbs_perf_answer {
	KVERBS_PERF_ANSWER_NONE,	/* nothing: the data never reaches its CPU */
	KVERBS_PERF_ANSWER_RECV,	/* takes it in a ring of receives, posted again */
	KVERBS_PERF_ANSWER_PINGPONG,	/* answers it with one of its own (perf_pingpong.c) */
};

/**
 * struct kverbs_perf_ops - one perf test, as both ends run it
 * @op: the requester's data work request
 * @step: what traces (kverbs_wc, kverbs_post_send) and failure reports
 *	call the data work requests
 * @answer: what the responder does with each message
 * @lat: a latency test: one operation in flight, each timed by the
 *	client; no KVERBS_PERF_F_REVERSE
 * @atomics: needs a device with atomic operations
 * @seen_in_memory: each side sees the other's message only by polling
 *	its own memory, with no completion to sleep on: neither side may
 *	sleep (no KVERBS_PERF_F_EVENTS; a server must busy-poll)
 * @msg_size: the only message size the test takes, 0 for any
 * @flags: the hello's KVERBS_PERF_F_* the test takes
 * @ctrl: the optional control messages it uses, BIT(KVERBS_PERF_MSG_*):
 *	ROUND (--validate's rounds, each answered by ROUND_OK) and PROGRESS
 *	(the requester's sign of life to a responder that sees no data);
 *	START, ADV and DONE every test has
 * @req_access: the rights the requester's buffer gives the responder;
 *	with any, the requester advertises it with an ADV of its own
 * @resp_access: the rights the responder's buffer gives the requester
 *
 * What adding a test takes: see kverbs_perf_tests[].
 */
struct kverbs_perf_ops {
	enum kverbs_perf_op op;
	enum kverbs_step step;
	enum kverbs_perf_answer answer;
	bool lat;
	bool atomics;
	bool seen_in_memory;
	u32 msg_size;
	u32 flags;
	u32 ctrl;
	int req_access;
	int resp_access;
};

const struct kverbs_perf_ops *kverbs_perf_ops_get(u32 test);

/*
 * Where the requester's data arrives in the responder's receives, its
 * control messages arrive there too: SEND_BW, SEND_LAT, and with
 * immediate data WRITE_BW and WRITE_LAT, whose WRITEs each consume a
 * receive.
 */
static inline bool kverbs_perf_recv_data(const struct kverbs_perf_ops *t, u32 flags)
{
	return t->op == KVERBS_PERF_OP_SEND || (flags & KVERBS_PERF_F_IMM);
}

/*
 * What the responder does with each message under @flags: a WRITE with
 * immediate data is taken in a receive, as a SEND is, where a plain
 * WRITE never reaches the responder's CPU.
 */
static inline enum kverbs_perf_answer
kverbs_perf_answer(const struct kverbs_perf_ops *t, u32 flags)
{
	if ((flags & KVERBS_PERF_F_IMM) && t->answer == KVERBS_PERF_ANSWER_NONE)
		return KVERBS_PERF_ANSWER_RECV;
	return t->answer;
}

/*
 * The immediate data of message @iter (KVERBS_PERF_F_IMM): its low 32
 * bits, in host order; the work request carries cpu_to_be32() of it.
 */
static inline u32 kverbs_perf_imm(u64 iter)
{
	return lower_32_bits(iter);
}

/* The opcode of @t's data work requests under @flags, atomics aside. */
static inline enum ib_wr_opcode kverbs_perf_wr_opcode(const struct kverbs_perf_ops *t,
						      u32 flags)
{
	bool imm = flags & KVERBS_PERF_F_IMM;

	switch (t->op) {
	case KVERBS_PERF_OP_SEND:
		return imm ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
	case KVERBS_PERF_OP_WRITE:
		return imm ? IB_WR_RDMA_WRITE_WITH_IMM : IB_WR_RDMA_WRITE;
	default:
		return IB_WR_RDMA_READ;
	}
}

/*
 * Which side of a connection goes first at the end: the requester on
 * InfiniBand and RoCE, whose SEND completion is the responder's
 * acknowledgment of DONE; the responder on iWARP, where a SEND completes
 * once TCP has its bytes (kverbs_perf_req_await_close(),
 * kverbs_perf_resp_linger()).
 */
static inline bool kverbs_perf_responder_closes_first(struct kverbs_ep *ep)
{
	return rdma_protocol_iwarp(kverbs_ep_device(ep), kverbs_ep_port(ep));
}

static inline bool kverbs_perf_is_pingpong(const struct kverbs_perf_ops *t)
{
	return t->answer == KVERBS_PERF_ANSWER_PINGPONG;
}

/* Whether @t uses the control message of type @type. */
static inline bool kverbs_perf_uses(const struct kverbs_perf_ops *t,
				    enum kverbs_perf_msg_type type)
{
	return t->ctrl & BIT(type);
}

/**
 * kverbs_perf_ctrl_len - bytes in each of the client's control messages
 * @t: the test
 * @flags: &enum kverbs_perf_flags
 * @msg_size: bytes per data message
 *
 * A &struct kverbs_perf_msg, padded with zeros where a data message that
 * arrives in the same receives would be just as long.
 *
 * Return: the length in bytes.
 */
static inline u32 kverbs_perf_ctrl_len(const struct kverbs_perf_ops *t, u32 flags,
				       u32 msg_size)
{
	u32 len = sizeof(struct kverbs_perf_msg);

	return kverbs_perf_recv_data(t, flags) && msg_size == len ? len + 8 : len;
}

/**
 * struct kverbs_perf_run - one KVERBS_IOC_PERF call
 * @common: addresses, time limit and failure, as for every test
 * @test: &enum kverbs_perf_test
 * @t: the test's entry, NULL while a server does not know it yet
 * @flags: KVERBS_PERF_F_*
 * @msg_size: client: bytes per message; server: the largest accepted
 * @tx_depth: client: work requests outstanding
 * @iterations: client: messages, 0 in duration mode
 * @duration_ns: client: duration, 0 in iterations mode
 * @samples: client, latency tests: the caller's array for each
 *	operation's time, pinned before the test holds a device (ubuf.c)
 * @samples_max: entries @samples holds, 0 for none
 * @phases: client, KVERBS_PERF_F_PHASES: the caller's array for each
 *	operation's two phases, 2 * @samples_max entries, pinned as
 *	@samples is; else not pinned
 * @lsn: a server's listener, the file's (KVERBS_PERF_F_LISTENER), or NULL
 *	for one of its own
 * @events: wait for completions by interrupt, not by busy polling: a
 *	client's KVERBS_PERF_F_EVENTS; a server without
 *	KVERBS_PERF_F_BUSY_POLL; any side whose @poll is not
 *	KVERBS_PERF_POLL_DIRECT
 * @poll: the caller's &enum kverbs_perf_poll, KVERBS_PERF_POLL_DEFAULT
 *	to let each end choose (kverbs_perf_cq_caps())
 * @cq_flags: the caller's &enum kverbs_perf_cq_flags
 * @cq: where the CQ's description goes back to userspace
 * @max_duration_ns: server: its ceiling on a session's duration, 0 for
 *	the module's perf_max_duration_s
 * @max_iterations: server: its ceiling on the iterations asked for, 0 for
 *	the module's perf_max_iterations
 * @no_reverse: server: refuse KVERBS_PERF_F_REVERSE
 *	(KVERBS_PERF_F_NO_REVERSE)
 * @result: the results that go back to userspace
 * @imm_expected: KVERBS_RESULT_IMM: what &kverbs_perf.imm_expected says
 * @imm_got: ... and &kverbs_perf.imm_got
 * @post_list: the requester: data work requests chained per post, at
 *	least 1 (&kverbs_perf.post_list)
 * @cq_mod: the requester of a bandwidth test: one data work request in
 *	this many is signaled, 0 for the default (&kverbs_perf.cq_mod)
 * @inline_size: the requester, and both ends of a ping-pong: the largest
 *	data message posted inline, 0 for none (&kverbs_perf.inline_size)
 * @max_inline: the inline data this side's QP holds, for
 *	&kverbs_perf.max_inline
 * @rw_ctxs: KVERBS_PERF_F_RW: what &kverbs_perf.rw_ctxs says
 * @rw_mr_ctxs: ... and &kverbs_perf.rw_mr_ctxs
 * @inv_remote: KVERBS_PERF_F_INV: &kverbs_perf.inv_remote
 * @inv_sent: ... .inv_sent
 * @read_inv: ... .read_inv
 * @inv_expected: a wrong invalidation: &kverbs_perf.inv_expected
 * @inv_got: ... .inv_got
 * @srq: server: KVERBS_PERF_F_SRQ
 * @srq_wr: server, KVERBS_PERF_F_SRQ: the receives of an SRQ it creates;
 *	then &kverbs_perf.srq_wr, the SRQ's, 0 if the session had none
 * @srq_limit: ... its limit; then &kverbs_perf.srq_limit
 * @srq_msg_size: ... the largest message its receives take
 * @srq_limit_events: &kverbs_perf.srq_limit_events
 * @srq_shared: &kverbs_perf.srq_shared
 * @ended_ns: when the measured phase ended: &kverbs_perf.ended_ns
 * @lost: KVERBS_PERF_F_UD: &kverbs_perf.lost
 * @path_mtu: KVERBS_PERF_F_UD: &kverbs_perf.path_mtu
 * @foreign: KVERBS_PERF_F_UD: &kverbs_perf.foreign
 */
struct kverbs_perf_run {
	struct kverbs_test common;
	u32 test;
	const struct kverbs_perf_ops *t;
	u32 flags;
	u32 msg_size;
	u32 tx_depth;
	u64 iterations;
	u64 duration_ns;
	struct kverbs_ubuf samples;
	u32 samples_max;
	struct kverbs_ubuf phases;
	struct kverbs_listener *lsn;
	bool events;
	u32 poll;
	u32 cq_flags;
	struct kverbs_perf_cq *cq;
	u64 max_duration_ns;
	u64 max_iterations;
	bool no_reverse;
	struct kverbs_perf_result *result;
	u32 imm_expected;
	u32 imm_got;
	u32 post_list;
	u32 cq_mod;
	u32 inline_size;
	u32 max_inline;
	u64 rw_ctxs;
	u64 rw_mr_ctxs;
	u64 inv_remote;
	u64 inv_sent;
	u64 read_inv;
	u32 inv_expected;
	u32 inv_got;
	bool srq;
	u32 srq_wr;
	u32 srq_limit;
	u32 srq_msg_size;
	u64 srq_limit_events;
	u32 srq_shared;
	u64 ended_ns;
	u64 lost;
	u32 path_mtu;
	u32 foreign;
};

/* A server's ceilings, perf_session.c. */
u64 kverbs_perf_max_duration_ns(void);
u64 kverbs_perf_max_iterations(void);

/* The flags a client may set, and a server accept in a hello. */
#define KVERBS_PERF_FLAGS	(KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_CMP_SWAP | \
				 KVERBS_PERF_F_REVERSE | KVERBS_PERF_F_IMM | \
				 KVERBS_PERF_F_RW | KVERBS_PERF_F_INV | \
				 KVERBS_PERF_F_UD)

/*
 * Whether a test's flags go together.  KVERBS_PERF_F_INV invalidates
 * the responder's key at the end of each of --validate's rounds, and
 * only there.  It excludes KVERBS_PERF_F_IMM: WRITE_BW's receives of
 * WRITEs with immediate data are posted in the responder's buffer,
 * under the key the requester would invalidate while they are posted.
 * And KVERBS_PERF_F_RW: rdma_rw registers and invalidates the memory of
 * its contexts itself (with an RDMA READ with invalidate on iWARP).
 */
static inline bool kverbs_perf_flags_agree(u32 flags)
{
	/* The datagrams' own protocol (perf_ud.c) has no modes. */
	if ((flags & KVERBS_PERF_F_UD) &&
	    (flags & ~(KVERBS_PERF_F_UD | KVERBS_PERF_F_VALIDATE)))
		return false;
	return !(flags & KVERBS_PERF_F_INV) ||
	       ((flags & KVERBS_PERF_F_VALIDATE) &&
		!(flags & (KVERBS_PERF_F_IMM | KVERBS_PERF_F_RW)));
}

/*
 * Whether the requester of a READ test ends each round with an RDMA
 * READ with invalidate of its sink: with KVERBS_PERF_F_INV, where
 * rdma_rw would (rdma_cap_read_inv(): iWARP).  rxe takes the work
 * request on RC but its requester has no wire opcode for it
 * (next_opcode_rc()): the QP fails (6.12) or stalls (6.1).  On
 * InfiniBand and RoCE the READs stay plain.
 */
static inline bool kverbs_perf_read_inv(const struct kverbs_perf_ops *t, u32 flags,
					struct kverbs_ep *ep)
{
	return (flags & KVERBS_PERF_F_INV) && t->op == KVERBS_PERF_OP_READ &&
	       rdma_cap_read_inv(kverbs_ep_device(ep), kverbs_ep_port(ep));
}
/* The size of an atomic operation's operand, and so of its message. */
#define KVERBS_PERF_ATOMIC_SIZE	sizeof(u64)

/*
 * Whether the client is the requester, so that its requester sends the
 * connection's first message, START, and the server's responder waits
 * for it; in the reverse direction the client's ADV comes first.
 */
static inline bool kverbs_perf_client_requests(u32 flags)
{
	return !(flags & KVERBS_PERF_F_REVERSE);
}

/*
 * Whether an atomic word read from memory holds @want.  The IB
 * specification leaves the byte order of the word in memory to the
 * device: rxe keeps the host's, ConnectX network order.  Either is right.
 */
static inline bool kverbs_perf_atomic_is(u64 got, u64 want)
{
	return got == want || got == swab64(want);
}

/* A side's buffer: enough slots to keep a window busy, not more than this. */
#define KVERBS_PERF_BUF_BYTES	(16U << 20)

/* Latency samples are copied to userspace this many at a time. */
#define KVERBS_PERF_CHUNK	(PAGE_SIZE / sizeof(u64))

/**
 * struct kverbs_perf_samples - latency samples on their way to userspace
 * @chunk: KVERBS_PERF_CHUNK samples not yet copied, or NULL for none
 * @phases: KVERBS_PERF_F_PHASES: the two phases of each of @chunk's
 *	samples, 2 * KVERBS_PERF_CHUNK entries; else NULL
 * @len: entries of @chunk in use
 * @seen: ... of them, those whose phases are known: the thread has seen
 *	their completion
 * @stored: samples copied to &kverbs_perf_run.samples
 */
struct kverbs_perf_samples {
	u64 *chunk;
	u64 *phases;
	u32 len;
	u32 seen;
	u32 stored;
};

int kverbs_perf_samples_alloc(struct kverbs_perf_samples *smp,
			      const struct kverbs_perf_run *run);
void kverbs_perf_samples_free(struct kverbs_perf_samples *smp);
void kverbs_perf_samples_flush(struct kverbs_perf_samples *smp,
			       struct kverbs_perf_run *run);

/**
 * kverbs_perf_phases_seen - the thread has seen the completions of the
 *	samples taken so far
 * @smp: the samples, with phases
 * @post_ns: ktime_get_ns() just before the operation was posted
 * @handler_ns: ... when the handler of its completion ran
 * @now: ... now, the thread running again after its wait
 *
 * One operation is in flight in a latency test, so at most one sample
 * is new.
 */
static inline void kverbs_perf_phases_seen(struct kverbs_perf_samples *smp,
					   u64 post_ns, u64 handler_ns, u64 now)
{
	for (; smp->seen < smp->len; smp->seen++) {
		smp->phases[2 * smp->seen] = handler_ns - post_ns;
		smp->phases[2 * smp->seen + 1] = now - handler_ns;
	}
}

/*
 * A receive of SEND data, of a WRITE with immediate data, or of a
 * control message (kverbs_perf_recv_data()); its completion's
 * @byte_len, @opcode (IB_WC_RECV or IB_WC_RECV_RDMA_WITH_IMM), @wc_flags,
 * @imm (host order) and @inv_rkey (IB_WC_WITH_INVALIDATE) once @done;
 * with @stamp, which its owner sets, @done_ns, ktime_get_ns() when the
 * completion's handler ran (KVERBS_PERF_F_PHASES).
 */
struct kverbs_perf_recv {
	struct kverbs_cqe cqe;
	struct kverbs_ep *ep;
	u32 byte_len;
	u32 opcode;
	u32 wc_flags;
	u32 imm;
	u32 inv_rkey;
	bool done;
	bool stamp;
	u64 done_ns;
};

/*
 * Whether a receive that completed holds a data message of @t, not a
 * control message.  A WRITE with immediate data completes as
 * IB_WC_RECV_RDMA_WITH_IMM and places nothing in the receive; a SEND is
 * data when it is as long as the data (kverbs_perf_ctrl_len()).
 */
static inline bool kverbs_perf_recv_is_data(const struct kverbs_perf_ops *t,
					    const struct kverbs_perf_recv *r,
					    u32 msg_size)
{
	if (t->op == KVERBS_PERF_OP_WRITE)
		return r->opcode == IB_WC_RECV_RDMA_WITH_IMM;
	return r->byte_len == msg_size;
}

int kverbs_perf_imm_check(struct kverbs_perf_run *run, const struct kverbs_perf_recv *r,
			  u64 iter);
int kverbs_perf_inv_check(struct kverbs_perf_run *run, struct kverbs_ep *ep,
			  bool invalidated, u32 inv_rkey, bool want, u32 rkey);
int kverbs_perf_device_check(const struct kverbs_perf_ops *t, u32 flags,
			     struct kverbs_ep *ep);
int kverbs_perf_register(struct kverbs_ep *ep, struct kverbs_buf *buf,
			 int access, u64 timeout_ns);
void kverbs_perf_recv_init(struct kverbs_perf_recv *r, struct kverbs_ep *ep);
int kverbs_perf_recv_post(struct kverbs_perf_recv *r, struct kverbs_buf *buf,
			  u32 offset, u32 len);

/*
 * Ping-pong: one data work request in KVERBS_PERF_PP_SIGNAL is signaled.
 * An unsignaled one keeps its place in the send queue until a signaled
 * one after it completes, so a side waits before posting while
 * KVERBS_PERF_PP_SQ of them may not have: twice the signaling interval,
 * so that the wait ends as soon as the last signaled one completes,
 * which in a ping-pong it has long done.
 */
#define KVERBS_PERF_PP_SIGNAL	16
#define KVERBS_PERF_PP_SQ	(2 * KVERBS_PERF_PP_SIGNAL)

/**
 * struct kverbs_perf_pp - one side of a ping-pong (WRITE_LAT, SEND_LAT)
 * @run: the test
 * @ep: the connection
 * @buf: the side's buffer: where the peer's messages land at offset 0,
 *	and ours are sent from @src_off
 * @t: the test
 * @flags: &enum kverbs_perf_flags
 * @msg_size: bytes per message
 * @recv_len: SEND_LAT: bytes of each receive, room for control messages
 * @src_off: where in @buf our messages are built
 * @step: what our data work requests do
 * @inline_data: our messages are posted inline (&kverbs_perf.inline_size)
 * @recv_data: the peer's messages arrive in @recv (kverbs_perf_recv_data())
 * @in_memory: each side sees the other's message by polling the last
 *	byte of its buffer: WRITE_LAT without immediate data
 * @remote_addr: WRITE_LAT: where the peer's buffer is
 * @rkey: ... and its key
 * @remote_known: ... once the peer said
 * @send_cqe: the signaled data work requests complete here
 * @posted: data work requests posted
 * @sq_done: ... and known to be out of the send queue
 * @recv: SEND_LAT: the receive kept posted
 * @iters: messages answered (server) or answers seen (client)
 * @srq: SEND_LAT's server with KVERBS_PERF_F_SRQ: the client's messages
 *	arrive in this SRQ's receives, not in @recv
 * @srq_credits: ... each answer grants the client's next message
 *	(kverbs_srq_credit())
 * @answer: ... our messages are built and sent from here, with the PD's
 *	local DMA key: no MR of the session's is on the SRQ's PD, which its
 *	other sessions' peers reach too (srq.c)
 */
struct kverbs_perf_pp {
	struct kverbs_perf_run *run;
	struct kverbs_ep *ep;
	struct kverbs_buf *buf;
	const struct kverbs_perf_ops *t;
	u32 flags;
	u32 msg_size;
	u32 recv_len;
	u32 src_off;
	enum kverbs_step step;
	bool inline_data;
	bool recv_data;
	bool in_memory;
	u64 remote_addr;
	u32 rkey;
	bool remote_known;
	struct kverbs_cqe send_cqe;
	u64 posted;
	u64 sq_done;
	struct kverbs_perf_recv recv;
	u64 iters;
	struct kverbs_srq *srq;
	bool srq_credits;
	struct kverbs_msg *answer;
};

void kverbs_perf_pp_init(struct kverbs_perf_pp *pp, struct kverbs_perf_run *run,
			 struct kverbs_ep *ep, struct kverbs_buf *buf,
			 const struct kverbs_perf_ops *t, u32 flags, u32 msg_size,
			 u32 recv_len);
int kverbs_perf_pp_client(struct kverbs_perf_pp *pp, u64 total, u64 limit,
			  u64 deadline_ns, struct kverbs_perf_samples *smp);
int kverbs_perf_pp_server_start(struct kverbs_perf_pp *pp);
int kverbs_perf_pp_server(struct kverbs_perf_pp *pp, struct kverbs_msg *ctrl_recv,
			  u32 ctrl_len, struct kverbs_perf_msg *m);

int kverbs_perf_client(struct kverbs_perf_run *run);
int kverbs_perf_server(struct kverbs_perf_run *run);

/* The two ends of the data path; see perf_session.c. */
struct kverbs_perf_req;
struct kverbs_perf_req *kverbs_perf_req_create(struct kverbs_perf_run *run,
					       struct kverbs_ep *ep);
int kverbs_perf_req_run(struct kverbs_perf_req *c);
void kverbs_perf_req_stop(struct kverbs_perf_req *c);
struct kverbs_perf_resp;
struct kverbs_perf_resp *kverbs_perf_resp_create(struct kverbs_perf_run *run,
						 struct kverbs_ep *ep);
int kverbs_perf_resp_run(struct kverbs_perf_resp *s);
void kverbs_perf_resp_stop(struct kverbs_perf_resp *s);
/* Both ends of SEND_BW and SEND_LAT over UD (KVERBS_PERF_F_UD): perf_ud.c. */
struct kverbs_perf_ud;
struct kverbs_perf_ud *kverbs_perf_ud_create(struct kverbs_perf_run *run,
					     struct kverbs_ep *ep, bool client);
int kverbs_perf_ud_run(struct kverbs_perf_ud *u);
void kverbs_perf_ud_stop(struct kverbs_perf_ud *u);

u32 kverbs_perf_slots(u32 stride, u32 depth, u32 max_bytes);
void kverbs_perf_fill(void *buf, u32 len, u64 iter);
bool kverbs_perf_check(const void *buf, u32 len, u64 iter, u32 *offset);
/* kverbs_perf_poll() reads the clock once in this many rounds. */
#define KVERBS_PERF_CLOCK_ROUNDS	64
int kverbs_perf_poll(struct kverbs_ep *ep, u64 timeout_ns, u64 *deadline_ns,
		     unsigned int round);
int kverbs_perf_alloc(struct kverbs_ep *ep, struct kverbs_buf *buf,
		      size_t bytes, bool map, struct kverbs_msg *ctrl_send,
		      u32 ctrl_len);
void kverbs_perf_describe_ep(struct kverbs_perf_run *run, struct kverbs_ep *ep);
void kverbs_perf_cq_caps(const struct kverbs_perf_run *run,
			 struct kverbs_ep_caps *caps, bool polls);
void kverbs_perf_describe_cq(struct kverbs_perf_run *run, struct kverbs_ep *ep);
int kverbs_perf_post_check(const struct kverbs_perf_ops *t, u32 flags, u32 tx_depth,
			   u32 post_list, u32 cq_mod, u32 inline_size);
int kverbs_perf_create_qp(struct kverbs_perf_run *run, struct kverbs_ep *ep,
			  struct kverbs_ep_caps *caps, bool posts_data);
u64 kverbs_perf_per_sec(u64 count, u64 ns);
void kverbs_perf_set_rates(struct kverbs_perf_result *res, u64 iterations,
			   u64 elapsed_ns, u64 peak_bps);
bool kverbs_perf_done_valid(const struct kverbs_perf_run *run, u32 msg_size,
			    u64 ops, u64 elapsed_ns);
void kverbs_perf_ctrl_wr(struct kverbs_msg *msg, struct ib_send_wr *wr,
			 enum kverbs_perf_msg_type type);

int kverbs_perf_wait(struct kverbs_ep *ep, bool (*cond)(void *arg), void *arg,
		     u64 timeout_ns);
int kverbs_perf_wait_done(struct kverbs_ep *ep, bool *done, u64 timeout_ns);

/*
 * KVERBS_IOC_PERF, for chardev.c: @refused is the error the test was
 * refused with before it began (a limit on sessions), else 0.
 */
int kverbs_perf_cmd(struct kverbs_perf *cmd, int refused,
		    struct kverbs_listener *lsn);

#endif /* _KVERBS_PERF_H */
