/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the three halves of connection management share, and nothing
 * else includes: the endpoint (ep.c), the listener (listener.c) and the
 * rdma_cm event handler that feeds both (cm_event.c).
 */
#ifndef _KVERBS_CM_H
#define _KVERBS_CM_H

#include "kverbs.h"

/* ep.c */
struct kverbs_ep *kverbs_ep_alloc(void);
void kverbs_ep_set_state(struct kverbs_ep *ep, enum kverbs_ep_state state);
void kverbs_ep_cm_failed(struct kverbs_ep *ep, const struct rdma_cm_event *event,
			 int error, enum kverbs_step step);
void kverbs_ep_keep_private_data(struct kverbs_ep *ep,
				 const struct rdma_cm_event *event);
bool kverbs_ep_drop_pending(struct kverbs_ep *ep, int error);

/* listener.c */
int kverbs_listener_request(struct kverbs_listener *lsn, struct rdma_cm_id *id,
			    struct rdma_cm_event *event);
void kverbs_listener_abort(struct kverbs_dev_user *user, int error);

/* cm_event.c */
int kverbs_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event);

/*
 * A number for each endpoint and listener, in the trace instead of a
 * kernel address, so that a reader can follow one connection.
 */
u32 kverbs_trace_id_next(void);

#endif /* _KVERBS_CM_H */
