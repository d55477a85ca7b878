/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kverbs tracepoints: watch kernel verbs happen.
 *
 *   echo 1 > /sys/kernel/tracing/events/kverbs/enable
 *   cat /sys/kernel/tracing/trace_pipe
 *
 * shows every rdma_cm event, every work request posted, every completion
 * and every registration and invalidation, and the life of each QP, CQ
 * and MR.  A post and its completion carry the same completion id
 * (cq.id, cid); Documentation/tracing.rst has recipes.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kverbs

#if !defined(_KVERBS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KVERBS_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <uapi/kverbs.h>

/*
 * Each enum the events show is defined to the tracing core as well
 * (TRACE_DEFINE_ENUM), so that the events' formats carry its values and
 * trace-cmd or perf, which read the raw records, print the names too.
 */
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ADDR_RESOLVED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ADDR_ERROR);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ROUTE_RESOLVED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ROUTE_ERROR);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_CONNECT_REQUEST);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_CONNECT_RESPONSE);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_CONNECT_ERROR);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_UNREACHABLE);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_REJECTED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ESTABLISHED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_DISCONNECTED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_DEVICE_REMOVAL);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ADDR_CHANGE);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_TIMEWAIT_EXIT);

#define kverbs_show_cm_event(x)						\
	__print_symbolic(x,						\
		{ RDMA_CM_EVENT_ADDR_RESOLVED, "ADDR_RESOLVED" },	\
		{ RDMA_CM_EVENT_ADDR_ERROR, "ADDR_ERROR" },		\
		{ RDMA_CM_EVENT_ROUTE_RESOLVED, "ROUTE_RESOLVED" },	\
		{ RDMA_CM_EVENT_ROUTE_ERROR, "ROUTE_ERROR" },		\
		{ RDMA_CM_EVENT_CONNECT_REQUEST, "CONNECT_REQUEST" },	\
		{ RDMA_CM_EVENT_CONNECT_RESPONSE, "CONNECT_RESPONSE" },	\
		{ RDMA_CM_EVENT_CONNECT_ERROR, "CONNECT_ERROR" },	\
		{ RDMA_CM_EVENT_UNREACHABLE, "UNREACHABLE" },		\
		{ RDMA_CM_EVENT_REJECTED, "REJECTED" },			\
		{ RDMA_CM_EVENT_ESTABLISHED, "ESTABLISHED" },		\
		{ RDMA_CM_EVENT_DISCONNECTED, "DISCONNECTED" },		\
		{ RDMA_CM_EVENT_DEVICE_REMOVAL, "DEVICE_REMOVAL" },	\
		{ RDMA_CM_EVENT_ADDR_CHANGE, "ADDR_CHANGE" },		\
		{ RDMA_CM_EVENT_TIMEWAIT_EXIT, "TIMEWAIT_EXIT" })

TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_SEND);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WR_RDMA_READ_WITH_INV);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_CMP_AND_SWP);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_FETCH_AND_ADD);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_INV);
TRACE_DEFINE_ENUM(IB_WR_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WR_REG_MR);

#define kverbs_show_wr_opcode(x)					\
	__print_symbolic(x,						\
		{ IB_WR_RDMA_WRITE, "RDMA_WRITE" },			\
		{ IB_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM" },	\
		{ IB_WR_SEND, "SEND" },					\
		{ IB_WR_SEND_WITH_IMM, "SEND_WITH_IMM" },		\
		{ IB_WR_RDMA_READ, "RDMA_READ" },			\
		{ IB_WR_RDMA_READ_WITH_INV, "RDMA_READ_WITH_INV" },	\
		{ IB_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP" },	\
		{ IB_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD" },	\
		{ IB_WR_SEND_WITH_INV, "SEND_WITH_INV" },		\
		{ IB_WR_LOCAL_INV, "LOCAL_INV" },			\
		{ IB_WR_REG_MR, "REG_MR" })

TRACE_DEFINE_ENUM(IB_WC_SUCCESS);
TRACE_DEFINE_ENUM(IB_WC_LOC_LEN_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_QP_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_PROT_ERR);
TRACE_DEFINE_ENUM(IB_WC_WR_FLUSH_ERR);
TRACE_DEFINE_ENUM(IB_WC_MW_BIND_ERR);
TRACE_DEFINE_ENUM(IB_WC_BAD_RESP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_RNR_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_RDD_VIOL_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_RD_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ABORT_ERR);
TRACE_DEFINE_ENUM(IB_WC_INV_EECN_ERR);
TRACE_DEFINE_ENUM(IB_WC_INV_EEC_STATE_ERR);
TRACE_DEFINE_ENUM(IB_WC_FATAL_ERR);
TRACE_DEFINE_ENUM(IB_WC_RESP_TIMEOUT_ERR);
TRACE_DEFINE_ENUM(IB_WC_GENERAL_ERR);

#define kverbs_show_wc_status(x)					\
	__print_symbolic(x,						\
		{ IB_WC_SUCCESS, "SUCCESS" },				\
		{ IB_WC_LOC_LEN_ERR, "LOC_LEN_ERR" },			\
		{ IB_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR" },		\
		{ IB_WC_LOC_PROT_ERR, "LOC_PROT_ERR" },			\
		{ IB_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR" },			\
		{ IB_WC_MW_BIND_ERR, "MW_BIND_ERR" },			\
		{ IB_WC_BAD_RESP_ERR, "BAD_RESP_ERR" },			\
		{ IB_WC_LOC_ACCESS_ERR, "LOC_ACCESS_ERR" },		\
		{ IB_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR" },		\
		{ IB_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR" },		\
		{ IB_WC_REM_OP_ERR, "REM_OP_ERR" },			\
		{ IB_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR" },		\
		{ IB_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR" },	\
		{ IB_WC_LOC_RDD_VIOL_ERR, "LOC_RDD_VIOL_ERR" },		\
		{ IB_WC_REM_INV_RD_REQ_ERR, "REM_INV_RD_REQ_ERR" },	\
		{ IB_WC_REM_ABORT_ERR, "REM_ABORT_ERR" },		\
		{ IB_WC_INV_EECN_ERR, "INV_EECN_ERR" },			\
		{ IB_WC_INV_EEC_STATE_ERR, "INV_EEC_STATE_ERR" },	\
		{ IB_WC_FATAL_ERR, "FATAL_ERR" },			\
		{ IB_WC_RESP_TIMEOUT_ERR, "RESP_TIMEOUT_ERR" },		\
		{ IB_WC_GENERAL_ERR, "GENERAL_ERR" })

/* What a completion finished, in the terms of &enum kverbs_step. */
TRACE_DEFINE_ENUM(KVERBS_STEP_REG_MR);
TRACE_DEFINE_ENUM(KVERBS_STEP_SEND);
TRACE_DEFINE_ENUM(KVERBS_STEP_RECV);
TRACE_DEFINE_ENUM(KVERBS_STEP_RDMA_READ);
TRACE_DEFINE_ENUM(KVERBS_STEP_RDMA_WRITE);
TRACE_DEFINE_ENUM(KVERBS_STEP_LOCAL_INV);
TRACE_DEFINE_ENUM(KVERBS_STEP_ATOMIC);

#define kverbs_show_step(x)						\
	__print_symbolic(x,						\
		{ KVERBS_STEP_REG_MR, "REG_MR" },			\
		{ KVERBS_STEP_SEND, "SEND" },				\
		{ KVERBS_STEP_RECV, "RECV" },				\
		{ KVERBS_STEP_RDMA_READ, "RDMA_READ" },			\
		{ KVERBS_STEP_RDMA_WRITE, "RDMA_WRITE" },		\
		{ KVERBS_STEP_LOCAL_INV, "LOCAL_INV" },			\
		{ KVERBS_STEP_ATOMIC, "ATOMIC" })

TRACE_DEFINE_ENUM(IB_POLL_SOFTIRQ);
TRACE_DEFINE_ENUM(IB_POLL_WORKQUEUE);
TRACE_DEFINE_ENUM(IB_POLL_UNBOUND_WORKQUEUE);
TRACE_DEFINE_ENUM(IB_POLL_DIRECT);

#define kverbs_show_poll_ctx(x)						\
	__print_symbolic(x,						\
		{ IB_POLL_SOFTIRQ, "SOFTIRQ" },				\
		{ IB_POLL_WORKQUEUE, "WORKQUEUE" },			\
		{ IB_POLL_UNBOUND_WORKQUEUE, "UNBOUND_WORKQUEUE" },	\
		{ IB_POLL_DIRECT, "DIRECT" })

/*
 * Names in the trace, never kernel addresses:
 *
 *  ep=     kverbs' number of an endpoint or listener, in the order they
 *          were made (a connection request's event carries its
 *          listener's)
 *  cq.id=  the CQ's restrack id, as in ib_core's rdma_core events and
 *          "rdma res show cq"; every event of a connection carries it
 *          (0 before its CQ exists), so that "cq_id == N" picks one QP's
 *          events out of all of kverbs' and of rdma_core's CQ events
 *  cid=    with cq.id, a work request's completion id: its post and its
 *          completion show the same pair (&struct kverbs_cqe)
 *  qp=     the QP number, as the peer and rdma_cma know it
 *  mr.id=  the MR's restrack id, as in rdma_core's mr_alloc and mr_dereg
 */

/*
 * The QP number comes from the endpoint, not from the ID: rdma_cm's
 * handler may run while the test destroys the QP (and clears id->qp).
 */
TRACE_EVENT(kverbs_cm_event,
	TP_PROTO(u32 ep, u32 cq_id, u32 qp_num,
		 const struct rdma_cm_event *event),
	TP_ARGS(ep, cq_id, qp_num, event),
	TP_STRUCT__entry(
		__field(u32, ep)
		__field(u32, cq_id)
		__field(u32, qp_num)
		__field(unsigned int, event)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->ep = ep;
		__entry->cq_id = cq_id;
		__entry->qp_num = qp_num;
		__entry->event = event->event;
		__entry->status = event->status;
	),
	TP_printk("ep=%u cq.id=%u qp=%u %s status=%d", __entry->ep,
		  __entry->cq_id, __entry->qp_num,
		  kverbs_show_cm_event(__entry->event), __entry->status)
);

TRACE_EVENT(kverbs_cq_alloc,
	TP_PROTO(u32 ep, const struct ib_cq *cq),
	TP_ARGS(ep, cq),
	TP_STRUCT__entry(
		__field(u32, ep)
		__field(u32, cq_id)
		__field(int, cqe)
		__field(unsigned int, poll_ctx)
	),
	TP_fast_assign(
		__entry->ep = ep;
		__entry->cq_id = cq->res.id;
		__entry->cqe = cq->cqe;
		__entry->poll_ctx = cq->poll_ctx;
	),
	TP_printk("ep=%u cq.id=%u cqe=%d poll=%s", __entry->ep, __entry->cq_id,
		  __entry->cqe, kverbs_show_poll_ctx(__entry->poll_ctx))
);

TRACE_EVENT(kverbs_cq_free,
	TP_PROTO(u32 ep, u32 cq_id),
	TP_ARGS(ep, cq_id),
	TP_STRUCT__entry(
		__field(u32, ep)
		__field(u32, cq_id)
	),
	TP_fast_assign(
		__entry->ep = ep;
		__entry->cq_id = cq_id;
	),
	TP_printk("ep=%u cq.id=%u", __entry->ep, __entry->cq_id)
);

/*
 * What kverbs asked the QP to hold, the drain's marker included.  rdma_rw
 * adds what its contexts need and the device may round up (rdma_cma's
 * cm_qp_create shows the result): kernels differ there, kverbs does not.
 */
TRACE_EVENT(kverbs_qp_create,
	TP_PROTO(u32 ep, u32 cq_id, const struct ib_qp *qp,
		 const struct ib_qp_cap *cap),
	TP_ARGS(ep, cq_id, qp, cap),
	TP_STRUCT__entry(
		__field(u32, ep)
		__field(u32, cq_id)
		__field(u32, qp_num)
		__field(u32, max_send_wr)
		__field(u32, max_recv_wr)
		__field(u32, max_send_sge)
		__field(u32, max_recv_sge)
		__field(u32, max_rdma_ctxs)
	),
	TP_fast_assign(
		__entry->ep = ep;
		__entry->cq_id = cq_id;
		__entry->qp_num = qp->qp_num;
		__entry->max_send_wr = cap->max_send_wr;
		__entry->max_recv_wr = cap->max_recv_wr;
		__entry->max_send_sge = cap->max_send_sge;
		__entry->max_recv_sge = cap->max_recv_sge;
		__entry->max_rdma_ctxs = cap->max_rdma_ctxs;
	),
	TP_printk("ep=%u cq.id=%u qp=%u send_wr=%u recv_wr=%u send_sge=%u recv_sge=%u rdma_ctxs=%u",
		  __entry->ep, __entry->cq_id, __entry->qp_num,
		  __entry->max_send_wr, __entry->max_recv_wr,
		  __entry->max_send_sge, __entry->max_recv_sge,
		  __entry->max_rdma_ctxs)
);

DECLARE_EVENT_CLASS(kverbs_qp_class,
	TP_PROTO(u32 ep, u32 cq_id, const struct ib_qp *qp),
	TP_ARGS(ep, cq_id, qp),
	TP_STRUCT__entry(
		__field(u32, ep)
		__field(u32, cq_id)
		__field(u32, qp_num)
	),
	TP_fast_assign(
		__entry->ep = ep;
		__entry->cq_id = cq_id;
		__entry->qp_num = qp->qp_num;
	),
	TP_printk("ep=%u cq.id=%u qp=%u", __entry->ep, __entry->cq_id,
		  __entry->qp_num)
);

#define KVERBS_QP_EVENT(name)						\
	DEFINE_EVENT(kverbs_qp_class, name,				\
		TP_PROTO(u32 ep, u32 cq_id, const struct ib_qp *qp),	\
		TP_ARGS(ep, cq_id, qp))

/* The QP is about to go; nothing completes on it any more. */
KVERBS_QP_EVENT(kverbs_qp_destroy);
/* The QP goes to the error state to flush what is outstanding. */
KVERBS_QP_EVENT(kverbs_drain_start);

TRACE_EVENT(kverbs_drain_end,
	TP_PROTO(u32 ep, u32 cq_id, const struct ib_qp *qp, bool drained),
	TP_ARGS(ep, cq_id, qp, drained),
	TP_STRUCT__entry(
		__field(u32, ep)
		__field(u32, cq_id)
		__field(u32, qp_num)
		__field(bool, drained)
	),
	TP_fast_assign(
		__entry->ep = ep;
		__entry->cq_id = cq_id;
		__entry->qp_num = qp->qp_num;
		__entry->drained = drained;
	),
	TP_printk("ep=%u cq.id=%u qp=%u %s", __entry->ep, __entry->cq_id,
		  __entry->qp_num, __entry->drained ? "drained" : "timed_out")
);

TRACE_EVENT(kverbs_mr_alloc,
	TP_PROTO(u32 cq_id, const struct ib_mr *mr, u32 max_pages),
	TP_ARGS(cq_id, mr, max_pages),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, mr_id)
		__field(u32, max_pages)
	),
	TP_fast_assign(
		__entry->cq_id = cq_id;
		__entry->mr_id = mr->res.id;
		__entry->max_pages = max_pages;
	),
	TP_printk("cq.id=%u mr.id=%u max_pages=%u", __entry->cq_id,
		  __entry->mr_id, __entry->max_pages)
);

/* ib_map_mr_sg(): @nents of the scatterlist mapped, covering len bytes. */
TRACE_EVENT(kverbs_mr_map,
	TP_PROTO(u32 cq_id, const struct ib_mr *mr, int nents),
	TP_ARGS(cq_id, mr, nents),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, mr_id)
		__field(u64, length)
		__field(int, nents)
		__field(u32, key)
	),
	TP_fast_assign(
		__entry->cq_id = cq_id;
		__entry->mr_id = mr->res.id;
		__entry->length = mr->length;
		__entry->nents = nents;
		__entry->key = mr->rkey;
	),
	TP_printk("cq.id=%u mr.id=%u len=%llu nents=%d key=0x%08x",
		  __entry->cq_id, __entry->mr_id,
		  (unsigned long long)__entry->length, __entry->nents,
		  __entry->key)
);

TRACE_EVENT(kverbs_mr_free,
	TP_PROTO(u32 cq_id, const struct ib_mr *mr),
	TP_ARGS(cq_id, mr),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, mr_id)
	),
	TP_fast_assign(
		__entry->cq_id = cq_id;
		__entry->mr_id = mr->res.id;
	),
	TP_printk("cq.id=%u mr.id=%u", __entry->cq_id, __entry->mr_id)
);

/*
 * An rdma_rw context about to be posted: what rdma_rw made of the
 * transfer (@nr_wrs work requests, registrations included), and the
 * completion id its first work request gets.
 */
TRACE_EVENT(kverbs_rw_post,
	TP_PROTO(u32 cq_id, u32 cid, const struct ib_qp *qp,
		 enum dma_data_direction dir, u32 length, int nr_wrs),
	TP_ARGS(cq_id, cid, qp, dir, length, nr_wrs),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qp_num)
		__field(bool, read)
		__field(u32, length)
		__field(int, nr_wrs)
	),
	TP_fast_assign(
		__entry->cq_id = cq_id;
		__entry->cid = cid;
		__entry->qp_num = qp->qp_num;
		__entry->read = dir == DMA_FROM_DEVICE;
		__entry->length = length;
		__entry->nr_wrs = nr_wrs;
	),
	TP_printk("cq.id=%u cid=%u qp=%u %s len=%u wrs=%d", __entry->cq_id,
		  __entry->cid, __entry->qp_num,
		  __entry->read ? "RDMA_READ" : "RDMA_WRITE",
		  __entry->length, __entry->nr_wrs)
);

/*
 * A perf test's post list (-l): @nr_wrs data work requests chained and
 * about to be handed to the device in one ib_post_send() call, the first
 * with completion id @cid; each is traced by kverbs_post_send as well.
 */
TRACE_EVENT(kverbs_post_list,
	TP_PROTO(u32 cq_id, u32 cid, const struct ib_qp *qp, u32 nr_wrs),
	TP_ARGS(cq_id, cid, qp, nr_wrs),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qp_num)
		__field(u32, nr_wrs)
	),
	TP_fast_assign(
		__entry->cq_id = cq_id;
		__entry->cid = cid;
		__entry->qp_num = qp->qp_num;
		__entry->nr_wrs = nr_wrs;
	),
	TP_printk("cq.id=%u cid=%u qp=%u wrs=%u", __entry->cq_id, __entry->cid,
		  __entry->qp_num, __entry->nr_wrs)
);

TRACE_EVENT(kverbs_post_send,
	TP_PROTO(const struct ib_qp *qp, const struct ib_send_wr *wr,
		 u32 cq_id, u32 cid),
	TP_ARGS(qp, wr, cq_id, cid),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qp_num)
		__field(unsigned int, opcode)
		__field(u32, length)
		__field(u32, key)
		__field(u64, remote_addr)
		__field(bool, signaled)
		__field(bool, inline_data)
	),
	TP_fast_assign(
		int i;

		__entry->cq_id = cq_id;
		__entry->cid = cid;
		__entry->qp_num = qp->qp_num;
		__entry->opcode = wr->opcode;
		__entry->length = 0;
		for (i = 0; i < wr->num_sge; i++)
			__entry->length += wr->sg_list[i].length;
		__entry->remote_addr = 0;
		switch (wr->opcode) {
		case IB_WR_RDMA_READ:
		case IB_WR_RDMA_READ_WITH_INV:
		case IB_WR_RDMA_WRITE:
		case IB_WR_RDMA_WRITE_WITH_IMM:
			__entry->key = rdma_wr(wr)->rkey;
			__entry->remote_addr = rdma_wr(wr)->remote_addr;
			break;
		case IB_WR_REG_MR:
			__entry->key = reg_wr(wr)->key;
			__entry->length = reg_wr(wr)->mr->length;
			break;
		case IB_WR_LOCAL_INV:
		case IB_WR_SEND_WITH_INV:
			__entry->key = wr->ex.invalidate_rkey;
			break;
		default:
			__entry->key = 0;
			break;
		}
		__entry->signaled = wr->send_flags & IB_SEND_SIGNALED;
		__entry->inline_data = wr->send_flags & IB_SEND_INLINE;
	),
	TP_printk("cq.id=%u cid=%u qp=%u %s len=%u key=0x%08x raddr=0x%llx%s%s",
		  __entry->cq_id, __entry->cid, __entry->qp_num,
		  kverbs_show_wr_opcode(__entry->opcode),
		  __entry->length, __entry->key,
		  (unsigned long long)__entry->remote_addr,
		  __entry->signaled ? " signaled" : "",
		  __entry->inline_data ? " inline" : "")
);

TRACE_EVENT(kverbs_post_recv,
	TP_PROTO(const struct ib_qp *qp, u32 length, u32 cq_id, u32 cid),
	TP_ARGS(qp, length, cq_id, cid),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qp_num)
		__field(u32, length)
	),
	TP_fast_assign(
		__entry->cq_id = cq_id;
		__entry->cid = cid;
		__entry->qp_num = qp->qp_num;
		__entry->length = length;
	),
	TP_printk("cq.id=%u cid=%u qp=%u len=%u", __entry->cq_id,
		  __entry->cid, __entry->qp_num, __entry->length)
);

/*
 * A receive posted to a shared receive queue: which QP takes it, and
 * on which CQ it completes, is known only at its completion (kverbs_wc,
 * the same cid).
 */
TRACE_EVENT(kverbs_srq_post_recv,
	TP_PROTO(const struct ib_srq *srq, u32 length, u32 cid),
	TP_ARGS(srq, length, cid),
	TP_STRUCT__entry(
		__field(u32, srq_id)
		__field(u32, cid)
		__field(u32, length)
	),
	TP_fast_assign(
		__entry->srq_id = srq->res.id;
		__entry->cid = cid;
		__entry->length = length;
	),
	TP_printk("srq.id=%u cid=%u len=%u", __entry->srq_id, __entry->cid,
		  __entry->length)
);

/*
 * Every work request kverbs posts has its wr_cqe in a &struct
 * kverbs_cqe, which holds the completion id it was posted with.  The
 * length is the one a receive got; other completions do not define one.
 * The QP's number is its endpoint's (kverbs_wc_qp_num()), not wc->qp's.
 * A receive that carried immediate data says so, and which: "imm=0x..."
 * in host order, after "RECV_RDMA_WITH_IMM" when an RDMA WRITE with
 * immediate data consumed it rather than a SEND.
 */
TRACE_EVENT(kverbs_wc,
	TP_PROTO(const struct ib_cq *cq, const struct ib_wc *wc,
		 unsigned int step),
	TP_ARGS(cq, wc, step),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qp_num)
		__field(unsigned int, step)
		__field(unsigned int, status)
		__field(u32, vendor_err)
		__field(u32, byte_len)
		__array(char, imm, 40)
	),
	TP_fast_assign(
		const struct kverbs_cqe *kc = container_of(wc->wr_cqe,
							   struct kverbs_cqe, cqe);
		/* wc_flags and opcode mean nothing in a failed completion. */
		bool recv = !wc->status && (wc->opcode & IB_WC_RECV);

		__entry->cq_id = cq->res.id;
		__entry->cid = kc->cid;
		__entry->qp_num = kverbs_wc_qp_num(wc);
		__entry->step = step;
		__entry->status = wc->status;
		__entry->vendor_err = wc->status ? wc->vendor_err : 0;
		__entry->byte_len = recv ? wc->byte_len : 0;
		/*
		 * Text, so that the line without immediate data or an
		 * invalidated key stays as it was.
		 */
		if (recv && (wc->wc_flags & IB_WC_WITH_IMM))
			snprintf(__entry->imm, sizeof(__entry->imm), "%s imm=0x%08x",
				 wc->opcode == IB_WC_RECV_RDMA_WITH_IMM ?
				 " RECV_RDMA_WITH_IMM" : "",
				 be32_to_cpu(wc->ex.imm_data));
		else if (recv && (wc->wc_flags & IB_WC_WITH_INVALIDATE))
			snprintf(__entry->imm, sizeof(__entry->imm), " invalidated=0x%08x",
				 wc->ex.invalidate_rkey);
		else
			__entry->imm[0] = '\0';
	),
	TP_printk("cq.id=%u cid=%u qp=%u %s %s len=%u vendor_err=0x%x%s",
		  __entry->cq_id, __entry->cid, __entry->qp_num,
		  kverbs_show_step(__entry->step),
		  kverbs_show_wc_status(__entry->status),
		  __entry->byte_len, __entry->vendor_err, __entry->imm)
);

/*
 * A drain's marker (kverbs_ep_drain()), posted to the send queue (SQ) or
 * the receive queue (RQ) of a QP in the error state, and its flushed
 * completion: events of their own, so that what counts a test's work
 * requests and completions (kverbs_post_send, kverbs_post_recv,
 * kverbs_wc) never counts them.
 */
TRACE_EVENT(kverbs_drain_post,
	TP_PROTO(const struct ib_qp *qp, u32 cq_id, u32 cid, bool send),
	TP_ARGS(qp, cq_id, cid, send),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qp_num)
		__field(bool, send)
	),
	TP_fast_assign(
		__entry->cq_id = cq_id;
		__entry->cid = cid;
		__entry->qp_num = qp->qp_num;
		__entry->send = send;
	),
	TP_printk("cq.id=%u cid=%u qp=%u %s", __entry->cq_id, __entry->cid,
		  __entry->qp_num, __entry->send ? "SQ" : "RQ")
);

TRACE_EVENT(kverbs_drain_wc,
	TP_PROTO(const struct ib_cq *cq, const struct ib_wc *wc),
	TP_ARGS(cq, wc),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qp_num)
		__field(unsigned int, status)
	),
	TP_fast_assign(
		const struct kverbs_cqe *kc = container_of(wc->wr_cqe,
							   struct kverbs_cqe, cqe);

		__entry->cq_id = cq->res.id;
		__entry->cid = kc->cid;
		__entry->qp_num = kverbs_wc_qp_num(wc);
		__entry->status = wc->status;
	),
	TP_printk("cq.id=%u cid=%u qp=%u %s", __entry->cq_id, __entry->cid,
		  __entry->qp_num, kverbs_show_wc_status(__entry->status))
);

TRACE_EVENT(kverbs_ping_iter,
	TP_PROTO(u32 cq_id, const struct ib_qp *qp, bool server, u64 iteration,
		 u32 len, u64 ns),
	TP_ARGS(cq_id, qp, server, iteration, len, ns),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, qp_num)
		__field(bool, server)
		__field(u64, iteration)
		__field(u32, len)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->cq_id = cq_id;
		__entry->qp_num = qp->qp_num;
		__entry->server = server;
		__entry->iteration = iteration;
		__entry->len = len;
		__entry->ns = ns;
	),
	TP_printk("cq.id=%u qp=%u %s iteration=%llu len=%u ns=%llu",
		  __entry->cq_id, __entry->qp_num,
		  __entry->server ? "server" : "client",
		  (unsigned long long)__entry->iteration, __entry->len,
		  (unsigned long long)__entry->ns)
);

/*
 * Device removal: kverbs_remove_one() aborted @users connections and
 * listeners, and waits until each has let go of the device
 * (kverbs_dev_removed).  Between the two, every listener that lets go
 * shows which path released it (kverbs_listener_release).
 */
TRACE_EVENT(kverbs_dev_remove,
	TP_PROTO(const struct ib_device *ibdev, unsigned int users),
	TP_ARGS(ibdev, users),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__array(char, name, IB_DEVICE_NAME_MAX)
		__field(unsigned int, users)
	),
	TP_fast_assign(
		__entry->cq_id = 0;
		strscpy(__entry->name, dev_name(&ibdev->dev), IB_DEVICE_NAME_MAX);
		__entry->users = users;
	),
	TP_printk("device=%s users=%u", __entry->name, __entry->users)
);

TRACE_EVENT(kverbs_dev_removed,
	TP_PROTO(const struct ib_device *ibdev),
	TP_ARGS(ibdev),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__array(char, name, IB_DEVICE_NAME_MAX)
	),
	TP_fast_assign(
		__entry->cq_id = 0;
		strscpy(__entry->name, dev_name(&ibdev->dev), IB_DEVICE_NAME_MAX);
	),
	TP_printk("device=%s", __entry->name)
);

/*
 * A listener destroys its ID and lets go of its device: by its owner (a
 * server test ending, a file's close) or, after a device removal
 * aborted it, by its release work.
 */
TRACE_EVENT(kverbs_listener_release,
	TP_PROTO(u32 ep, bool owner),
	TP_ARGS(ep, owner),
	TP_STRUCT__entry(
		__field(u32, ep)
		__field(u32, cq_id)
		__field(bool, owner)
	),
	TP_fast_assign(
		__entry->ep = ep;
		__entry->cq_id = 0;
		__entry->owner = owner;
	),
	TP_printk("ep=%u by=%s", __entry->ep,
		  __entry->owner ? "owner" : "removal")
);

#endif /* _KVERBS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
