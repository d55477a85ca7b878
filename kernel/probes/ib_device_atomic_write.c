// SPDX-License-Identifier: GPL-2.0
/* IBTA 1.5 atomic write and flush capability bits: 6.2. */
#include <rdma/ib_verbs.h>

u64 kverbs_probe(void);
u64 kverbs_probe(void)
{
	return (u64)IB_DEVICE_ATOMIC_WRITE | (u64)IB_DEVICE_FLUSH_GLOBAL |
	       (u64)IB_DEVICE_FLUSH_PERSISTENT;
}
