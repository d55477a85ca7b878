/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lessons (KVERBS_IOC_LESSON): what the harness (lesson.c) and the
 * lessons themselves (lessons.c) share.
 *
 * A lesson runs against itself, in the ioctl's thread: it listens on the
 * caller's device on a port of its own, and each run connects a client
 * to that listener, takes the request as the server, and so holds both
 * ends of one connection, each with its PD, CQ, QP and buffers.  The run
 * does one thing wrong or right, and its outcome goes to userspace in a
 * &struct kverbs_lesson_run.  Everything a run made is torn down before
 * the next one starts: a wrong run usually leaves its QPs in the error
 * state.
 */
#ifndef _KVERBS_LESSON_H
#define _KVERBS_LESSON_H

#include "kverbs.h"

/**
 * struct kverbs_lesson_wr - the context of one work request of a lesson
 * @cqe: its completion context
 * @lc: the lesson
 * @seq: its number in the run, from 1
 * @step: what it does, for the trace and the failure report
 */
struct kverbs_lesson_wr {
	struct kverbs_cqe cqe;
	struct kverbs_lesson_ctx *lc;
	u32 seq;
	enum kverbs_step step;
};

/*
 * Contexts for a run's work requests, one per work request that can be
 * in flight at once: as many as the unsignaled lesson posts, since a
 * device may make its send queue deeper than asked (rxe makes 31 of 16),
 * and every one of them is in flight when the queue is full.
 */
#define KVERBS_LESSON_MAX_WRS	128

/**
 * struct kverbs_lesson_ctx - a lesson being given
 * @common: the time limit, the listener's address, the lesson's failure
 * @lsn: the lesson's own listener, on a port rdma_cm chose
 * @cmd: the caller's command, whose runs are filled in
 * @run: the run going on
 * @cli: the run's client end, which the lessons make the requester
 * @srv: the run's server end, the responder
 * @local: the client's buffer: the source or sink of its operations
 * @remote: the server's buffer, which the client reaches
 * @local2: a second client buffer, for a transfer split across two MRs
 * @remote2: a second server buffer, likewise
 * @send: the client's message for SENDs
 * @recv: the server's receive
 * @wrs: contexts of the client's work requests
 * @done: highest @wrs seq that completed successfully
 * @start_ns: when the run's first work request was posted
 * @nonce: random bytes the lesson's client sends in its connection
 *	request, by which its server tells its own client from a stranger
 */
struct kverbs_lesson_ctx {
	struct kverbs_test common;
	struct kverbs_listener *lsn;
	struct kverbs_lesson *cmd;
	struct kverbs_lesson_run *run;
	struct kverbs_ep *cli;
	struct kverbs_ep *srv;
	struct kverbs_buf local;
	struct kverbs_buf remote;
	struct kverbs_buf local2;
	struct kverbs_buf remote2;
	struct kverbs_msg send;
	struct kverbs_msg recv;
	struct kverbs_lesson_wr wrs[KVERBS_LESSON_MAX_WRS];
	u32 done;
	u64 start_ns;
	u8 nonce[16];
};

/**
 * struct kverbs_lesson_conn - what a run's connection is made with
 * @caps: both QPs' needs
 * @rnr_retry: how often the client's SENDs are retried when the server
 *	has no receive posted (the server offers it in its reply)
 * @rd_atom: RDMA READs and atomics outstanding at once
 */
struct kverbs_lesson_conn {
	struct kverbs_ep_caps caps;
	u8 rnr_retry;
	u8 rd_atom;
};

int kverbs_lesson_begin(struct kverbs_lesson_ctx *lc,
			const struct kverbs_lesson_conn *conn,
			enum kverbs_lesson_kind kind);
void kverbs_lesson_end(struct kverbs_lesson_ctx *lc);
int kverbs_lesson_pair(struct kverbs_lesson_ctx *lc,
		       const struct kverbs_lesson_conn *wrong,
		       const struct kverbs_lesson_conn *right,
		       int (*run)(struct kverbs_lesson_ctx *lc, bool right));
int kverbs_lesson_buf(struct kverbs_lesson_ctx *lc, struct kverbs_ep *ep,
		      struct kverbs_buf *buf, size_t len, int access);
int kverbs_lesson_reg(struct kverbs_lesson_ctx *lc, struct kverbs_ep *ep,
		      struct kverbs_buf *buf, int access);
int kverbs_lesson_post(struct kverbs_lesson_ctx *lc, struct ib_send_wr *wr,
		       enum kverbs_step step);
void kverbs_lesson_wr_init(struct kverbs_lesson_ctx *lc, struct ib_send_wr *wr,
			   u32 seq, enum kverbs_step step, bool signaled);
int kverbs_lesson_wait(struct kverbs_lesson_ctx *lc, u32 seq);
void kverbs_lesson_wait_peer(struct kverbs_lesson_ctx *lc);
long kverbs_lesson_timeout(const struct kverbs_lesson_ctx *lc);

int kverbs_lesson_unsignaled(struct kverbs_lesson_ctx *lc);
int kverbs_lesson_rnr(struct kverbs_lesson_ctx *lc);
int kverbs_lesson_fence(struct kverbs_lesson_ctx *lc);
int kverbs_lesson_access(struct kverbs_lesson_ctx *lc);
int kverbs_lesson_stale_key(struct kverbs_lesson_ctx *lc);
int kverbs_lesson_max_sge(struct kverbs_lesson_ctx *lc);
int kverbs_lesson_align(struct kverbs_lesson_ctx *lc);
int kverbs_lesson_mr_size(struct kverbs_lesson_ctx *lc);
bool kverbs_lesson_mr_size_refuse(struct ib_device *ibdev);

/*
 * KVERBS_IOC_LESSON, for chardev.c: @refused is the error the lesson was
 * refused with before it began (a limit on sessions), else 0.
 */
int kverbs_lesson_cmd(struct kverbs_lesson *cmd, int refused);

#endif /* _KVERBS_LESSON_H */
