/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels kverbs builds against, in one place.
 *
 * compat-autoconf.h is generated at build time by scripts/compat-probe,
 * which compiles each file in kernel/probes/ against the target kernel's
 * headers and defines KVERBS_HAVE_<NAME> for each one that builds.
 * Probing features rather than comparing version numbers keeps this right
 * for distribution kernels with backports.
 */
#ifndef _KVERBS_COMPAT_H
#define _KVERBS_COMPAT_H

#include <linux/timer.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>

#include "compat-autoconf.h"

#ifdef KVERBS_HAVE_IB_DEVICE_ATOMIC_WRITE
#define KVERBS_IB_DEVICE_ATOMIC_WRITE	((u64)IB_DEVICE_ATOMIC_WRITE)
#define KVERBS_IB_DEVICE_FLUSH		((u64)IB_DEVICE_FLUSH_GLOBAL | \
					 (u64)IB_DEVICE_FLUSH_PERSISTENT)
#else
/* Before 6.2 a device could not advertise these. */
#define KVERBS_IB_DEVICE_ATOMIC_WRITE	0ULL
#define KVERBS_IB_DEVICE_FLUSH		0ULL
#endif

#ifndef KVERBS_HAVE_RDMA_RW_MAX_SEND_WR
/*
 * Send queue entries that @max_rdma_ctxs rdma_rw contexts need: one work
 * request each, plus a registration and an invalidation where the device
 * uses MRs for RDMA READ and WRITE, as rdma_rw_init_qp() adds them.
 * (rw.c's rdma_rw_force_mr debug parameter is not visible from here.)
 */
static inline unsigned int rdma_rw_max_send_wr(struct ib_device *dev,
					       u32 port_num,
					       unsigned int max_rdma_ctxs,
					       u32 create_flags)
{
	unsigned int factor = 1;

	if (rdma_protocol_iwarp(dev, port_num) || dev->attrs.max_sgl_rd)
		factor += 2;
	return factor * max_rdma_ctxs;
}
#endif

#ifndef KVERBS_HAVE_TIMER_DESTROY_ON_STACK
/* The name upstream gave destroy_timer_on_stack() with its other timer_*() renames. */
static inline void timer_destroy_on_stack(struct timer_list *timer)
{
	destroy_timer_on_stack(timer);
}
#endif

#endif /* _KVERBS_COMPAT_H */
