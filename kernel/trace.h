/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kverbs tracepoints: watch kernel verbs happen.
 *
 *   echo 1 > /sys/kernel/tracing/events/kverbs/enable
 *   cat /sys/kernel/tracing/trace_pipe
 *
 * shows every rdma_cm event, every work request posted, every completion
 * and every registration and invalidation, with the QP number to tell
 * connections apart.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kverbs

#if !defined(_KVERBS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KVERBS_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <uapi/kverbs.h>

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

#define kverbs_show_wr_opcode(x)					\
	__print_symbolic(x,						\
		{ IB_WR_RDMA_WRITE, "RDMA_WRITE" },			\
		{ IB_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM" },	\
		{ IB_WR_SEND, "SEND" },					\
		{ IB_WR_SEND_WITH_IMM, "SEND_WITH_IMM" },		\
		{ IB_WR_RDMA_READ, "RDMA_READ" },			\
		{ IB_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP" },	\
		{ IB_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD" },	\
		{ IB_WR_SEND_WITH_INV, "SEND_WITH_INV" },		\
		{ IB_WR_LOCAL_INV, "LOCAL_INV" },			\
		{ IB_WR_REG_MR, "REG_MR" })

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
#define kverbs_show_step(x)						\
	__print_symbolic(x,						\
		{ KVERBS_STEP_REG_MR, "REG_MR" },			\
		{ KVERBS_STEP_SEND, "SEND" },				\
		{ KVERBS_STEP_RECV, "RECV" },				\
		{ KVERBS_STEP_RDMA_READ, "RDMA_READ" },			\
		{ KVERBS_STEP_RDMA_WRITE, "RDMA_WRITE" },		\
		{ KVERBS_STEP_LOCAL_INV, "LOCAL_INV" },			\
		{ KVERBS_STEP_ATOMIC, "ATOMIC" })

/*
 * @cid numbers kverbs' endpoints and listeners in the order they were
 * made (a connection request's event carries its listener's): no kernel
 * address goes into the trace.
 */
TRACE_EVENT(kverbs_cm_event,
	TP_PROTO(u32 cid, const struct rdma_cm_id *id,
		 const struct rdma_cm_event *event),
	TP_ARGS(cid, id, event),
	TP_STRUCT__entry(
		__field(u32, cid)
		__field(u32, qp_num)
		__field(unsigned int, event)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->cid = cid;
		__entry->qp_num = id->qp ? id->qp->qp_num : 0;
		__entry->event = event->event;
		__entry->status = event->status;
	),
	TP_printk("cid=%u qp=%u %s status=%d", __entry->cid, __entry->qp_num,
		  kverbs_show_cm_event(__entry->event), __entry->status)
);

TRACE_EVENT(kverbs_post_send,
	TP_PROTO(const struct ib_qp *qp, const struct ib_send_wr *wr),
	TP_ARGS(qp, wr),
	TP_STRUCT__entry(
		__field(u32, qp_num)
		__field(unsigned int, opcode)
		__field(u32, length)
		__field(u32, key)
		__field(u64, remote_addr)
		__field(bool, signaled)
	),
	TP_fast_assign(
		int i;

		__entry->qp_num = qp->qp_num;
		__entry->opcode = wr->opcode;
		__entry->length = 0;
		for (i = 0; i < wr->num_sge; i++)
			__entry->length += wr->sg_list[i].length;
		__entry->remote_addr = 0;
		switch (wr->opcode) {
		case IB_WR_RDMA_READ:
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
			__entry->key = wr->ex.invalidate_rkey;
			break;
		default:
			__entry->key = 0;
			break;
		}
		__entry->signaled = wr->send_flags & IB_SEND_SIGNALED;
	),
	TP_printk("qp=%u %s len=%u key=0x%08x raddr=0x%llx%s",
		  __entry->qp_num, kverbs_show_wr_opcode(__entry->opcode),
		  __entry->length, __entry->key,
		  (unsigned long long)__entry->remote_addr,
		  __entry->signaled ? " signaled" : "")
);

TRACE_EVENT(kverbs_post_recv,
	TP_PROTO(const struct ib_qp *qp, u32 length),
	TP_ARGS(qp, length),
	TP_STRUCT__entry(
		__field(u32, qp_num)
		__field(u32, length)
	),
	TP_fast_assign(
		__entry->qp_num = qp->qp_num;
		__entry->length = length;
	),
	TP_printk("qp=%u len=%u", __entry->qp_num, __entry->length)
);

TRACE_EVENT(kverbs_wc,
	TP_PROTO(const struct ib_wc *wc, unsigned int step),
	TP_ARGS(wc, step),
	TP_STRUCT__entry(
		__field(u32, qp_num)
		__field(unsigned int, step)
		__field(unsigned int, status)
		__field(u32, vendor_err)
		__field(u32, byte_len)
	),
	TP_fast_assign(
		__entry->qp_num = wc->qp->qp_num;
		__entry->step = step;
		__entry->status = wc->status;
		__entry->vendor_err = wc->status ? wc->vendor_err : 0;
		__entry->byte_len = wc->status ? 0 : wc->byte_len;
	),
	TP_printk("qp=%u %s %s len=%u vendor_err=0x%x", __entry->qp_num,
		  kverbs_show_step(__entry->step),
		  kverbs_show_wc_status(__entry->status),
		  __entry->byte_len, __entry->vendor_err)
);

TRACE_EVENT(kverbs_ping_iter,
	TP_PROTO(const struct ib_qp *qp, bool server, u64 iteration, u32 len,
		 u64 ns),
	TP_ARGS(qp, server, iteration, len, ns),
	TP_STRUCT__entry(
		__field(u32, qp_num)
		__field(bool, server)
		__field(u64, iteration)
		__field(u32, len)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->qp_num = qp->qp_num;
		__entry->server = server;
		__entry->iteration = iteration;
		__entry->len = len;
		__entry->ns = ns;
	),
	TP_printk("qp=%u %s iteration=%llu len=%u ns=%llu", __entry->qp_num,
		  __entry->server ? "server" : "client",
		  (unsigned long long)__entry->iteration, __entry->len,
		  (unsigned long long)__entry->ns)
);

#endif /* _KVERBS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
