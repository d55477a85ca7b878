// SPDX-License-Identifier: GPL-2.0
/*
 * Memory: data buffers, their DMA mappings and fast registration, and
 * small control messages.
 *
 * A data buffer is built from single pages, so that a 4 MiB buffer does
 * not need a 4 MiB physically contiguous allocation, and is mapped once
 * more with vmap() so that the CPU can fill and check it in one piece.
 *
 * A buffer that a peer reaches with RDMA READ or WRITE is registered with
 * fast registration (FRWR): ib_alloc_mr() once, ib_map_mr_sg() once, then
 * for every advertisement an IB_WR_REG_MR work request with a fresh key
 * and only the rights that advertisement needs, and an IB_WR_LOCAL_INV
 * as soon as the peer is done.  A peer therefore never holds a key that
 * is valid longer than one exchange.
 */
#include "kverbs.h"
#include "trace.h"

#include <linux/highmem.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

/**
 * kverbs_max_reg_size - largest buffer one fast-registration MR can map
 * @ibdev: the device
 *
 * Return: the size in bytes, 0 if the device cannot fast-register.
 */
unsigned int kverbs_max_reg_size(struct ib_device *ibdev)
{
	const struct ib_device_attr *attrs = &ibdev->attrs;
	u64 size;

	if (!(attrs->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return 0;
	size = (u64)attrs->max_fast_reg_page_list_len * PAGE_SIZE;
	size = min(size, attrs->max_mr_size);
	return min_t(u64, size, UINT_MAX);
}

/*
 * What all tests together may hold for RDMA, their buffers and the user
 * memory they pin: past it a test fails with ENOBUFS, not the machine
 * with OOM.
 */
static unsigned int kverbs_max_pinned_mb = 1024;
module_param_named(max_pinned_mb, kverbs_max_pinned_mb, uint, 0644);
MODULE_PARM_DESC(max_pinned_mb,
		 "memory all tests together may hold for RDMA, in MiB (default 1024)");

static atomic_long_t kverbs_pinned_pages = ATOMIC_LONG_INIT(0);

/**
 * kverbs_pin_account - reserve @npages against max_pinned_mb, and against
 *	the caller's user's max_pinned_mb_per_user
 * @user: set to the user charged, to be kept with the pages; untouched
 *	on failure
 * @npages: pages about to be allocated or pinned for RDMA, at least 1.
 *	A u64, so that a count computed from a user's length reaches the
 *	limits whole: on a 32-bit kernel an unsigned long would wrap first.
 *
 * Call it in the thread of the test's ioctl.
 *
 * Return: 0, -ENOBUFS past the module's limit, -EDQUOT past the user's,
 * or -ENOMEM.
 */
int kverbs_pin_account(struct kverbs_user **user, u64 npages)
{
	u64 limit = (u64)READ_ONCE(kverbs_max_pinned_mb) << (20 - PAGE_SHIFT);
	struct kverbs_user *charged;

	/* The counter is a long: a limit past it is no limit it can check. */
	limit = min_t(u64, limit, LONG_MAX);
	if (npages > limit)
		return -ENOBUFS;
	if (atomic_long_add_return(npages, &kverbs_pinned_pages) > (long)limit) {
		atomic_long_sub(npages, &kverbs_pinned_pages);
		return -ENOBUFS;
	}
	charged = kverbs_user_pin(npages);
	if (IS_ERR(charged)) {
		atomic_long_sub(npages, &kverbs_pinned_pages);
		return PTR_ERR(charged);
	}
	*user = charged;
	return 0;
}

/**
 * kverbs_pin_unaccount - give back what kverbs_pin_account() reserved
 * @user: the user it charged, or NULL if it charged nothing
 * @npages: as reserved
 */
void kverbs_pin_unaccount(struct kverbs_user *user, unsigned long npages)
{
	if (!user)
		return;
	kverbs_user_unpin(user, npages);
	atomic_long_sub(npages, &kverbs_pinned_pages);
}

static int kverbs_buf_build_sgt(struct kverbs_buf *buf, size_t len)
{
	return sg_alloc_table_from_pages_segment(&buf->sgt, buf->pages,
						 DIV_ROUND_UP(len, PAGE_SIZE),
						 0, len, SZ_1G, GFP_KERNEL);
}

/**
 * kverbs_buf_alloc - allocate a zeroed data buffer of @len bytes
 * @buf: zeroed by the caller
 * @len: size, at least 1
 *
 * Return: 0, -ENOBUFS past the module's max_pinned_mb, -EDQUOT past the
 * caller's max_pinned_mb_per_user, or -ENOMEM.
 * kverbs_buf_free() releases what was allocated, also after a failure.
 */
int kverbs_buf_alloc(struct kverbs_buf *buf, size_t len)
{
	unsigned int i, npages = DIV_ROUND_UP(len, PAGE_SIZE);
	int ret;

	ret = kverbs_pin_account(&buf->user, npages);
	if (ret)
		return ret;
	buf->accounted = npages;
	buf->pages = kvcalloc(npages, sizeof(*buf->pages), GFP_KERNEL_ACCOUNT);
	if (!buf->pages)
		return -ENOMEM;
	for (i = 0; i < npages; i++) {
		/* Zeroed: nothing the kernel held before reaches a peer. */
		buf->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!buf->pages[i])
			return -ENOMEM;
		buf->npages++;
	}
	buf->vaddr = vmap(buf->pages, npages, VM_MAP, PAGE_KERNEL);
	if (!buf->vaddr)
		return -ENOMEM;
	if (kverbs_buf_build_sgt(buf, len))
		return -ENOMEM;
	buf->len = len;
	return 0;
}

/**
 * kverbs_buf_resize - make an unmapped buffer describe @len bytes
 * @buf: a buffer that is not DMA-mapped, or a zeroed one
 * @len: the new size, at least 1
 *
 * Keeps the pages when they are enough, else reallocates them (the
 * contents are then lost).
 *
 * Return: 0 or -ENOMEM, after which @buf must
 * still be freed.
 */
int kverbs_buf_resize(struct kverbs_buf *buf, size_t len)
{
	if (WARN_ON_ONCE(buf->ibdev || buf->mr))
		return -EBUSY;
	if (buf->len == len)
		return 0;
	if (!buf->pages || len > (size_t)buf->npages * PAGE_SIZE) {
		kverbs_buf_free(buf);
		return kverbs_buf_alloc(buf, len);
	}
	sg_free_table(&buf->sgt);
	buf->len = 0;
	if (kverbs_buf_build_sgt(buf, len))
		return -ENOMEM;
	buf->len = len;
	return 0;
}

/**
 * kverbs_buf_map - DMA-map a buffer and give it a fast-registration MR
 * @buf: an allocated buffer
 * @ep: the connection that will advertise it, with its PD and CQ
 * @dir: DMA direction of the transfers it takes part in
 *
 * The MR is not yet valid; kverbs_buf_reg_wr() builds the work request
 * that registers it.  Its iova is random, so that what is advertised to
 * the peer says nothing about kernel addresses (devices such as rxe and
 * siw use kernel virtual addresses as DMA addresses).
 *
 * Return: 0, -EMSGSIZE when the device cannot map that much with one MR,
 * or another negative errno.  kverbs_buf_free() undoes it.
 */
int kverbs_buf_map(struct kverbs_buf *buf, struct kverbs_ep *ep,
		   enum dma_data_direction dir)
{
	struct ib_pd *pd = ep->pd;
	struct ib_device *ibdev = pd->device;
	unsigned int npages = DIV_ROUND_UP(buf->len, PAGE_SIZE);
	int ret, n;

	if (buf->len > kverbs_max_reg_size(ibdev))
		return -EMSGSIZE;
	ret = ib_dma_map_sgtable_attrs(ibdev, &buf->sgt, dir, 0);
	if (ret)
		return ret;
	buf->ibdev = ibdev;
	buf->dir = dir;

	buf->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(buf->mr)) {
		ret = PTR_ERR(buf->mr);
		buf->mr = NULL;
		return ret;
	}
	buf->trace_cq_id = ep->cq_id;
	trace_kverbs_mr_alloc(buf->trace_cq_id, buf->mr, npages);
	n = ib_map_mr_sg(buf->mr, buf->sgt.sgl, buf->sgt.nents, NULL, PAGE_SIZE);
	trace_kverbs_mr_map(buf->trace_cq_id, buf->mr, n);
	if (n != buf->sgt.nents)
		return n < 0 ? n : -EINVAL;
	/*
	 * Any iova with the first byte's offset into its page is valid for
	 * the pages just mapped.  Stay far below 2^64 so iova + length
	 * cannot wrap.
	 */
	buf->mr->iova = (get_random_u64() & GENMASK_ULL(47, PAGE_SHIFT)) |
			(buf->mr->iova & ~PAGE_MASK);
	return 0;
}

/**
 * kverbs_buf_sg_pages - describe bytes of a buffer one page per entry
 * @buf: the buffer
 * @off: the first byte
 * @len: bytes, at least one, within @buf->len from @off
 * @sgl: room for DIV_ROUND_UP(offset_in_page(@off) + @len, PAGE_SIZE)
 *	entries
 *
 * For rdma_rw_ctx_init(), which registers a scatterlist where a device
 * needs an MR (iWARP's READ sink, or force_mr) and counts its entries as
 * pages when it sizes the MRs: @buf->sgt merges the pages that happen to
 * be contiguous into one entry, which rdma_rw's MR path would take for
 * one page.  Not DMA-mapped: rdma_rw maps it.
 *
 * Return: the entries used.
 */
unsigned int kverbs_buf_sg_pages(const struct kverbs_buf *buf, size_t off, u32 len,
				 struct scatterlist *sgl)
{
	struct page **pages = buf->pages + (off >> PAGE_SHIFT);
	u32 in_page = offset_in_page(off), piece;
	unsigned int n = DIV_ROUND_UP(in_page + len, PAGE_SIZE), i;
	struct scatterlist *sg;

	sg_init_table(sgl, n);
	for_each_sg(sgl, sg, n, i) {
		piece = min_t(u32, len, PAGE_SIZE - in_page);
		sg_set_page(sg, pages[i], piece, in_page);
		len -= piece;
		in_page = 0;
	}
	return n;
}

/**
 * kverbs_buf_free - release a buffer, its MR and DMA mapping
 * @buf: the buffer, possibly half built; zeroed on return
 *
 * The MR must not be in use: the QP it was registered on is drained.
 */
void kverbs_buf_free(struct kverbs_buf *buf)
{
	unsigned int i;

	if (buf->mr) {
		trace_kverbs_mr_free(buf->trace_cq_id, buf->mr);
		ib_dereg_mr(buf->mr);
	}
	if (buf->ibdev)
		ib_dma_unmap_sgtable_attrs(buf->ibdev, &buf->sgt, buf->dir, 0);
	if (buf->len)
		sg_free_table(&buf->sgt);
	if (buf->vaddr)
		vunmap(buf->vaddr);
	for (i = 0; i < buf->npages; i++)
		__free_page(buf->pages[i]);
	kvfree(buf->pages);
	kverbs_pin_unaccount(buf->user, buf->accounted);
	memset(buf, 0, sizeof(*buf));
}

/*
 * The DMA API's contract for a streaming mapping, which every buffer
 * here is: the CPU reads what the device wrote only after a sync for the
 * CPU, and gives a range back to the device (a receive posted into it, a
 * READ or atomic landing in it, a WRITE it reads) only after a sync for
 * the device.  With an IOMMU or bounce buffers (swiotlb) a missing sync
 * for the device lets a stale bounce copy, or dirty cache lines, overwrite
 * what the device writes next.  rxe and siw have no DMA device and every
 * sync is a no-op on them, so @buf->cpu_lo and @buf->cpu_hi keep the
 * range the CPU synced for itself and has not given back, and
 * kverbs_buf_check_device() warns when a post gives part of it to the
 * device: the contract is checked on the soft devices the tests run on.
 *
 * Syncs are skipped on purpose only where the CPU does not read: a
 * buffer the CPU never reads needs no sync for the CPU (a test without
 * --validate), and data the CPU writes whole needs no sync for the CPU
 * before it (on a DMA_TO_DEVICE mapping that sync does nothing).
 */

/* The CPU took [@offset, @end) of @buf: add it to what it holds. */
static void kverbs_buf_cpu_take(struct kverbs_buf *buf, size_t offset, size_t end)
{
	if (buf->cpu_lo == buf->cpu_hi) {
		buf->cpu_lo = offset;
		buf->cpu_hi = end;
		return;
	}
	buf->cpu_lo = min(buf->cpu_lo, offset);
	buf->cpu_hi = max(buf->cpu_hi, end);
}

/*
 * The CPU gave [@offset, @end) back.  What it holds is kept as one range;
 * a part given back from its middle leaves the whole counted.  No caller
 * does that: each gives back what it took, or the whole buffer.
 */
static void kverbs_buf_cpu_give(struct kverbs_buf *buf, size_t offset, size_t end)
{
	if (offset <= buf->cpu_lo && end >= buf->cpu_hi)
		buf->cpu_hi = buf->cpu_lo;
	else if (offset <= buf->cpu_lo && end > buf->cpu_lo)
		buf->cpu_lo = end;
	else if (offset < buf->cpu_hi && end >= buf->cpu_hi)
		buf->cpu_hi = offset;
}

/**
 * kverbs_buf_check_device - check that the device may have part of @buf
 * @buf: the buffer
 * @offset: the first byte a work request about to be posted uses
 * @len: how many
 *
 * Warns, once, when the CPU synced part of the range for itself and
 * did not give it back with kverbs_buf_sync_range_for_device().
 */
void kverbs_buf_check_device(struct kverbs_buf *buf, size_t offset, size_t len)
{
	WARN_ONCE(offset < buf->cpu_hi && offset + len > buf->cpu_lo,
		  "kverbs: bytes %zu-%zu of a buffer go to the device, bytes %zu-%zu of it were not synced for it\n",
		  offset, offset + len, buf->cpu_lo, buf->cpu_hi);
}

/*
 * The DMA sync of bytes [@offset, @offset + @len) of @buf, for the device
 * or for the CPU, segment by segment of its DMA mapping.  Nothing for a
 * buffer rdma_rw maps (no @buf->ibdev): see kverbs_buf_sync_for_cpu().
 */
static void kverbs_buf_sync_range(struct kverbs_buf *buf, size_t offset,
				  size_t len, bool for_device)
{
	size_t pos = 0, end = offset + len, lo, hi;
	struct scatterlist *sg;
	unsigned int i;
	u64 addr;

	if (!buf->ibdev)
		return;
	for_each_sgtable_dma_sg(&buf->sgt, sg, i) {
		lo = max(pos, offset);
		hi = min(pos + sg_dma_len(sg), end);
		if (lo < hi) {
			addr = sg_dma_address(sg) + (lo - pos);
			if (for_device)
				ib_dma_sync_single_for_device(buf->ibdev, addr,
							      hi - lo, buf->dir);
			else
				ib_dma_sync_single_for_cpu(buf->ibdev, addr,
							   hi - lo, buf->dir);
		}
		pos += sg_dma_len(sg);
		if (pos >= end)
			break;
	}
}

/**
 * kverbs_buf_sync_range_for_cpu - make what the device wrote to part of a
 *	buffer visible to the CPU
 * @buf: the buffer, DMA-mapped by kverbs_buf_map() or by rdma_rw
 * @offset: the first byte the CPU is about to read
 * @len: how many
 *
 * Only that part: the rest of the buffer may belong to the device at the
 * time (the slots of messages still on their way), and syncing it would
 * be wrong where syncing copies (bounce buffers) and slow everywhere.
 * The DMA segments cover the buffer in order, so byte offsets into it
 * are offsets into their concatenation.  The range is the CPU's until
 * kverbs_buf_sync_range_for_device() gives it back.
 */
void kverbs_buf_sync_range_for_cpu(struct kverbs_buf *buf, size_t offset,
				   size_t len)
{
	kverbs_buf_sync_range(buf, offset, len, false);
	/* The vmap() alias may hold stale lines on virtually indexed caches. */
	invalidate_kernel_vmap_range(buf->vaddr + offset, len);
	kverbs_buf_cpu_take(buf, offset, offset + len);
}

/**
 * kverbs_buf_sync_for_cpu - make what the device wrote visible to the CPU
 * @buf: the buffer
 *
 * For a buffer kverbs_buf_map() mapped, a DMA sync and the vmap()
 * alias's invalidation.  For one rdma_rw maps (no @buf->ibdev), only the
 * invalidation: its DMA sync is the unmap in rdma_rw_ctx_destroy(),
 * which must come first.
 */
void kverbs_buf_sync_for_cpu(struct kverbs_buf *buf)
{
	kverbs_buf_sync_range_for_cpu(buf, 0, buf->len);
}

/**
 * kverbs_buf_sync_range_for_device - give part of a buffer back to the
 *	device after the CPU read or wrote it
 * @buf: the buffer
 * @offset: the first byte
 * @len: how many
 *
 * Only that part, for the reason kverbs_buf_sync_range_for_cpu() gives:
 * on a bidirectional mapping with bounce buffers a sync for the device
 * copies the CPU's bytes over the bounce copy, and so over what the
 * device is writing in the rest of the buffer at the time.
 */
void kverbs_buf_sync_range_for_device(struct kverbs_buf *buf, size_t offset,
				      size_t len)
{
	flush_kernel_vmap_range(buf->vaddr + offset, len);
	kverbs_buf_sync_range(buf, offset, len, true);
	kverbs_buf_cpu_give(buf, offset, offset + len);
}

/**
 * kverbs_buf_sync_for_device - make what the CPU wrote visible to the device
 * @buf: the buffer, none of which the device may be writing at the time
 */
void kverbs_buf_sync_for_device(struct kverbs_buf *buf)
{
	kverbs_buf_sync_range_for_device(buf, 0, buf->len);
}

/* A local operation of @buf completed: note it, or record why it failed. */
static void kverbs_buf_local_done(struct ib_cq *cq, struct ib_wc *wc,
				  bool *done, enum kverbs_step step)
{
	struct kverbs_ep *ep = kverbs_wc_ep(wc);

	trace_kverbs_wc(cq, wc, step);
	if (wc->status != IB_WC_SUCCESS) {
		kverbs_ep_wc_failed(ep, wc, step);
		return;
	}
	kverbs_set_done(done);
	wake_up(&ep->wait);
}

static void kverbs_buf_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_buf *buf = container_of(wc->wr_cqe, struct kverbs_buf,
					      reg_cqe.cqe);

	kverbs_buf_local_done(cq, wc, &buf->reg_done, KVERBS_STEP_REG_MR);
}

static void kverbs_buf_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_buf *buf = container_of(wc->wr_cqe, struct kverbs_buf,
					      inv_cqe.cqe);

	kverbs_buf_local_done(cq, wc, &buf->inv_done, KVERBS_STEP_LOCAL_INV);
}

/**
 * kverbs_buf_reg_wr - build the work request that registers @buf
 * @buf: a buffer mapped by kverbs_buf_map(), whose MR is not valid
 * @wr: the work request to fill in; signaled
 * @access: the rights the peer gets, IB_ACCESS_*
 *
 * The MR's key is changed first, so the peer sees a key no earlier
 * advertisement used.
 *
 * Post nothing that uses the registration, the message advertising the
 * key included, before @buf->reg_done holds.  A send queue runs in order,
 * so chaining the two would do by the specification; but rxe, to
 * retransmit, rewinds its send queue to the oldest work request not yet
 * completed and runs again every local operation it finds after it, and
 * its 6.1 completer can decide to retransmit between the requester
 * running a local operation and completing it.  A second REG_MR of a
 * valid MR fails (IB_WC_LOC_QP_OP_ERR).  A completed registration is
 * never run again.
 */
void kverbs_buf_reg_wr(struct kverbs_buf *buf, struct ib_reg_wr *wr, int access)
{
	ib_update_fast_reg_key(buf->mr, ib_inc_rkey(buf->mr->rkey));
	buf->reg_cqe.cqe.done = kverbs_buf_reg_done;
	buf->reg_done = false;
	memset(wr, 0, sizeof(*wr));
	wr->wr.opcode = IB_WR_REG_MR;
	wr->wr.wr_cqe = &buf->reg_cqe.cqe;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	wr->mr = buf->mr;
	wr->key = buf->mr->rkey;
	wr->access = access;
}

/**
 * kverbs_buf_inv_wr - build the work request that invalidates @buf's key
 * @buf: a registered buffer
 * @wr: the work request to fill in
 * @signaled: complete it, so the caller can wait for @buf->inv_done
 *	to be set (kverbs_is_done()); unsignaled, it completes with the next
 *	signaled work request after it
 */
void kverbs_buf_inv_wr(struct kverbs_buf *buf, struct ib_send_wr *wr,
		       bool signaled)
{
	buf->inv_cqe.cqe.done = kverbs_buf_inv_done;
	buf->inv_done = false;
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IB_WR_LOCAL_INV;
	wr->wr_cqe = &buf->inv_cqe.cqe;
	wr->ex.invalidate_rkey = buf->mr->rkey;
	wr->send_flags = signaled ? IB_SEND_SIGNALED : 0;
}

static void kverbs_msg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kverbs_msg *msg = container_of(wc->wr_cqe, struct kverbs_msg, cqe.cqe);
	struct kverbs_ep *ep = kverbs_wc_ep(wc);
	enum kverbs_step step = msg->dir == DMA_TO_DEVICE ? KVERBS_STEP_SEND :
							    KVERBS_STEP_RECV;

	trace_kverbs_wc(cq, wc, step);
	if (wc->status != IB_WC_SUCCESS) {
		kverbs_ep_wc_failed(ep, wc, step);
		return;
	}
	msg->byte_len = wc->byte_len;
	/* Only a receive's completion says it, and ex means nothing else here. */
	msg->invalidated = step == KVERBS_STEP_RECV &&
			   (wc->wc_flags & IB_WC_WITH_INVALIDATE);
	msg->inv_rkey = msg->invalidated ? wc->ex.invalidate_rkey : 0;
	kverbs_set_done(&msg->done);
	wake_up(&ep->wait);
}

/**
 * kverbs_msg_alloc - allocate and DMA-map a control message buffer
 * @msg: zeroed by the caller
 * @pd: protection domain; its local DMA lkey covers the buffer
 * @len: size in bytes
 * @dir: DMA_TO_DEVICE for a send buffer, DMA_FROM_DEVICE for a receive
 *
 * Return: 0 or a negative errno; kverbs_msg_free() releases it either way.
 */
int kverbs_msg_alloc(struct kverbs_msg *msg, struct ib_pd *pd, size_t len,
		     enum dma_data_direction dir)
{
	struct ib_device *ibdev = pd->device;

	msg->buf = kzalloc(len, GFP_KERNEL_ACCOUNT);
	if (!msg->buf)
		return -ENOMEM;
	msg->dma = ib_dma_map_single(ibdev, msg->buf, len, dir);
	if (ib_dma_mapping_error(ibdev, msg->dma))
		return -ENOMEM;
	msg->ibdev = ibdev;
	msg->len = len;
	msg->dir = dir;
	msg->sge.addr = msg->dma;
	msg->sge.length = len;
	msg->sge.lkey = pd->local_dma_lkey;
	msg->cqe.cqe.done = kverbs_msg_done;
	return 0;
}

/**
 * kverbs_msg_free - unmap and free a control message buffer
 * @msg: the message, possibly half built; zeroed on return
 */
void kverbs_msg_free(struct kverbs_msg *msg)
{
	if (msg->ibdev)
		ib_dma_unmap_single(msg->ibdev, msg->dma, msg->len, msg->dir);
	kfree(msg->buf);
	memset(msg, 0, sizeof(*msg));
}

/**
 * kverbs_msg_post_recv - post a receive into @msg
 * @msg: a receive buffer
 * @ep: the endpoint
 *
 * Clears @msg->done, which the completion sets along with @msg->byte_len.
 * Return: 0 or the recorded failure.
 */
int kverbs_msg_post_recv(struct kverbs_msg *msg, struct kverbs_ep *ep)
{
	struct ib_recv_wr wr = {
		.wr_cqe = &msg->cqe.cqe,
		.sg_list = &msg->sge,
		.num_sge = 1,
	};

	msg->done = false;
	ib_dma_sync_single_for_device(msg->ibdev, msg->dma, msg->len, msg->dir);
	return kverbs_post_recv(ep, &wr);
}

/**
 * kverbs_msg_send_wr - build a signaled SEND of @msg
 * @msg: a send buffer whose contents the caller filled in
 * @wr: the work request to fill in
 *
 * Clears @msg->done, which the completion sets.
 */
void kverbs_msg_send_wr(struct kverbs_msg *msg, struct ib_send_wr *wr)
{
	/*
	 * No sync for the CPU before the caller filled @msg: the device
	 * only reads a DMA_TO_DEVICE mapping, so the CPU's copy is never
	 * stale (the sync would do nothing), and the caller refills it only
	 * once the last SEND from it completed (@msg->done).
	 */
	msg->done = false;
	ib_dma_sync_single_for_device(msg->ibdev, msg->dma, msg->len, msg->dir);
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IB_WR_SEND;
	wr->wr_cqe = &msg->cqe.cqe;
	wr->sg_list = &msg->sge;
	wr->num_sge = 1;
	wr->send_flags = IB_SEND_SIGNALED;
}

/**
 * kverbs_msg_sync_for_cpu - make a received message visible to the CPU
 * @msg: a receive buffer whose receive completed
 */
void kverbs_msg_sync_for_cpu(struct kverbs_msg *msg)
{
	ib_dma_sync_single_for_cpu(msg->ibdev, msg->dma, msg->len, msg->dir);
}
