// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_cm events: one handler for every ID kverbs creates.
 *
 * rdma_cm calls it in process context, one event at a time per ID, with
 * the ID's handler mutex held; it must not destroy its own ID, but may
 * return non-zero to have rdma_cm destroy it.  A listener's events, and
 * the connection requests it spawns, come here with the listener's
 * context; every other ID's context is its endpoint.  The handler only
 * records what happened and wakes the owner (ep.c, listener.c).
 */
#include "cm.h"
#include "trace.h"

static int kverbs_ep_cm_event(struct kverbs_ep *ep, struct rdma_cm_event *event)
{
	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		kverbs_ep_set_state(ep, KVERBS_EP_ADDR_RESOLVED);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		kverbs_ep_set_state(ep, KVERBS_EP_ROUTE_RESOLVED);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/*
		 * A client's carries the server's accept (an IB CM REP, zero
		 * padded); a server's none, and its request's stays.
		 */
		if (event->param.conn.private_data_len)
			kverbs_ep_keep_private_data(ep, event);
		/*
		 * A UD client's carries the SIDR REP: where the server is,
		 * which rdma_cm frees once we return.
		 */
		if (ep->id->qp_type == IB_QPT_UD) {
			rdma_copy_ah_attr(&ep->ud_ah_attr, &event->param.ud.ah_attr);
			ep->ud_qpn = event->param.ud.qp_num;
			ep->ud_qkey = event->param.ud.qkey;
		}
		kverbs_ep_set_state(ep, KVERBS_EP_CONNECTED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		kverbs_ep_cm_failed(ep, event, event->status ?: -EHOSTUNREACH,
				    KVERBS_STEP_RESOLVE_ADDR);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		kverbs_ep_cm_failed(ep, event, event->status ?: -EHOSTUNREACH,
				    KVERBS_STEP_RESOLVE_ROUTE);
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (kverbs_ep_drop_pending(ep, -ECONNABORTED))
			return 1;
		/* event->status is an IB CM reject reason or an iWARP errno. */
		kverbs_ep_keep_private_data(ep, event);
		kverbs_ep_cm_failed(ep, event, -ECONNREFUSED, KVERBS_STEP_NONE);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (kverbs_ep_drop_pending(ep, -ECONNABORTED))
			return 1;
		/*
		 * A SIDR REP that turns a UD client down says why in a
		 * positive status: nothing listens there (IB_SIDR_UNSUPPORTED)
		 * or the server rejected it; as an RC reject, refused.
		 */
		if (ep->id->qp_type == IB_QPT_UD && event->status > 0) {
			kverbs_ep_keep_private_data(ep, event);
			kverbs_ep_cm_failed(ep, event, -ECONNREFUSED, KVERBS_STEP_NONE);
			break;
		}
		kverbs_ep_cm_failed(ep, event,
				    event->status < 0 ? event->status : -EHOSTUNREACH,
				    KVERBS_STEP_NONE);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (kverbs_ep_drop_pending(ep, -ECONNRESET))
			return 1;
		kverbs_ep_set_state(ep, KVERBS_EP_DISCONNECTED);
		kverbs_ep_cm_failed(ep, event, -ECONNRESET, KVERBS_STEP_NONE);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (kverbs_ep_drop_pending(ep, -ENODEV))
			return 1;
		/* The test destroys the ID itself; rdma_cm waits for that. */
		kverbs_ep_cm_failed(ep, event, -ENODEV, KVERBS_STEP_NONE);
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		kverbs_ep_cm_failed(ep, event, -ENETRESET, KVERBS_STEP_NONE);
		break;
	default:
		break;
	}
	return 0;
}

static int kverbs_listener_event(struct kverbs_listener *lsn,
				 struct rdma_cm_id *id,
				 struct rdma_cm_event *event)
{
	switch (event->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return kverbs_listener_request(lsn, id, event);
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		kverbs_listener_abort(&lsn->user, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

/**
 * kverbs_cm_handler - rdma_cm's event handler for every kverbs ID
 * @id: the ID the event is for; a connection request's new ID
 * @event: the event
 *
 * Return: non-zero to have rdma_cm destroy @id: a request that was
 * refused, or one that died while queued on its listener.
 */
int kverbs_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event)
{
	enum kverbs_cm_kind *kind = id->context;
	struct kverbs_listener *lsn;
	struct kverbs_ep *ep;

	/* A new connection's ID starts with its listener's context. */
	if (*kind == KVERBS_CM_LISTENER) {
		lsn = container_of(kind, struct kverbs_listener, kind);
		trace_kverbs_cm_event(lsn->trace_id, 0, 0, event);
		return kverbs_listener_event(lsn, id, event);
	}
	ep = container_of(kind, struct kverbs_ep, kind);
	trace_kverbs_cm_event(ep->trace_id, READ_ONCE(ep->cq_id),
			      READ_ONCE(ep->qp_num), event);
	return kverbs_ep_cm_event(ep, event);
}
