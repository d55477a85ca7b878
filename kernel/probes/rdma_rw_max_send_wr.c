// SPDX-License-Identifier: GPL-2.0
/* rdma_rw_max_send_wr(): recent upstream, backported to some stable trees. */
#include <rdma/rw.h>

unsigned int kverbs_probe(struct ib_device *dev);
unsigned int kverbs_probe(struct ib_device *dev)
{
	return rdma_rw_max_send_wr(dev, 1, 1, 0);
}
