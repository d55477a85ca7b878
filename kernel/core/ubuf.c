// SPDX-License-Identifier: GPL-2.0
/*
 * User memory that a test writes while it runs: the ping's payload log
 * and a latency test's samples.
 *
 * A copy_to_user() while the test holds a device could wait without
 * bound on the page it writes (userfaultfd nobody serves, a stuck FUSE
 * daemon), and the device's removal with it.  So the caller's pages are
 * pinned before the test holds anything, and written through a kernel
 * mapping while it runs: no fault, no wait.  Only private memory is
 * pinned, shared mappings are refused with -EOPNOTSUPP, and lengths are
 * u64 from the caller on: Documentation/architecture.rst, "Objects and
 * owners", says why.
 */
#include "kverbs.h"

#include <linux/highmem.h>
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

/*
 * Whether every VMA over [@start, @last] is private.  Returns 0,
 * -EOPNOTSUPP for a shared one, -EFAULT for a hole, -EINTR when a fatal
 * signal came while waiting for the lock.
 */
static int kverbs_ubuf_check_vmas(unsigned long start, unsigned long last)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	int ret = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	while (start <= last) {
		vma = find_vma(mm, start);
		if (!vma || vma->vm_start > start) {
			ret = -EFAULT;
			break;
		}
		/* VM_MAYSHARE: MAP_SHARED, also one mapped read-only. */
		if (vma->vm_flags & VM_MAYSHARE) {
			ret = -EOPNOTSUPP;
			break;
		}
		if (vma->vm_end - 1 >= last)
			break;
		start = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/*
 * Charge @npages to the caller's mm, against its RLIMIT_MEMLOCK, as
 * ib_umem_get() does.  kverbs_ubuf_unpin() gives them back, to the mm
 * charged, whoever calls it.
 */
static int kverbs_ubuf_charge(struct kverbs_ubuf *ub, u64 npages)
{
	u64 limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned;

	ub->mm = current->mm;
	mmgrab(ub->mm);
	ub->charged = npages;
	pinned = atomic64_add_return(npages, &ub->mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK))
		return -ENOMEM;
	return 0;
}

/**
 * kverbs_ubuf_pin - pin @len bytes of user memory at @uaddr for writing
 * @ub: zeroed by the caller
 * @uaddr: the user address
 * @len: bytes, at least 1; computed by the caller in u64 from the user's
 *	count and entry size, without truncation
 *
 * May fault the pages in, and so sleep as long as that takes; a fatal
 * signal ends it.  Call it before the test holds any device.
 *
 * Return: 0 with @ub->kaddr mapping the range; -ENOBUFS when the range
 * needs more pages than max_pinned_mb allows, whatever else is pinned,
 * or past it with what is; -EDQUOT past max_pinned_mb_per_user; -ENOMEM
 * past the process's RLIMIT_MEMLOCK, with what it pins besides, unless
 * it has CAP_IPC_LOCK (as ibv_reg_mr()); -EFAULT
 * when a page of it cannot be written, or the range does not fit in the
 * kernel's pointers; -EOPNOTSUPP when part of it is a shared mapping (of
 * a file, a memfd, tmpfs or shared anonymous memory); -EINTR on a fatal
 * signal; or -ENOMEM.  The limits are checked first, so that a length
 * gets the same errno on 32-bit and 64-bit kernels.
 * kverbs_ubuf_unpin() releases it, also after a failure.
 */
int kverbs_ubuf_pin(struct kverbs_ubuf *ub, u64 uaddr, u64 len)
{
	u64 last, npages;
	unsigned long start;
	int pinned, ret, i;

	if (!len || check_add_overflow(uaddr, len - 1, &last))
		return -EFAULT;
	npages = (last >> PAGE_SHIFT) - (uaddr >> PAGE_SHIFT) + 1;
	ret = kverbs_pin_account(&ub->user, npages);
	if (ret)
		return ret;
	ub->accounted = npages;
	/*
	 * An address past what a 32-bit kernel's pointers hold is none;
	 * pin_user_pages_fast() counts pages in an int.
	 */
	if (last > ULONG_MAX || npages > INT_MAX)
		return -EFAULT;
	ret = kverbs_ubuf_charge(ub, npages);
	if (ret)
		return ret;
	start = uaddr & PAGE_MASK;
	ret = kverbs_ubuf_check_vmas(start, last);
	if (ret)
		return ret;
	ub->pages = kvcalloc(npages, sizeof(*ub->pages), GFP_KERNEL_ACCOUNT);
	if (!ub->pages)
		return -ENOMEM;
	pinned = pin_user_pages_fast(start, npages, FOLL_WRITE | FOLL_LONGTERM,
				     ub->pages);
	if (pinned > 0)
		ub->npages = pinned;
	/* Fewer pages than asked: the range has a hole, or a read-only page. */
	if (pinned != (int)npages)
		return pinned == -ENOMEM ? -ENOMEM : -EFAULT;
	/* Remapped shared since the VMAs were checked: a page-cache page. */
	for (i = 0; i < pinned; i++)
		if (!PageAnon(ub->pages[i]))
			return -EOPNOTSUPP;
	ub->vaddr = vmap(ub->pages, npages, VM_MAP, PAGE_KERNEL);
	if (!ub->vaddr)
		return -ENOMEM;
	ub->kaddr = ub->vaddr + (uaddr & ~PAGE_MASK);
	return 0;
}

/**
 * kverbs_ubuf_written - make what was written through @ub's mapping
 *	visible at the caller's addresses
 * @ub: a pinned range
 * @p: the first byte written, within @ub->kaddr
 * @len: bytes written
 *
 * Nothing on x86; on CPUs with virtually indexed caches the kernel's
 * alias must be written back before the user's mapping reads the page.
 */
void kverbs_ubuf_written(struct kverbs_ubuf *ub, void *p, size_t len)
{
	flush_kernel_vmap_range(p, len);
}

/**
 * kverbs_ubuf_unpin - let go of a pinned range
 * @ub: the range, possibly half pinned; zeroed on return
 *
 * The pages are marked dirty: the test wrote them.
 */
void kverbs_ubuf_unpin(struct kverbs_ubuf *ub)
{
	if (ub->vaddr)
		vunmap(ub->vaddr);
	if (ub->npages)
		unpin_user_pages_dirty_lock(ub->pages, ub->npages, true);
	kvfree(ub->pages);
	kverbs_pin_unaccount(ub->user, ub->accounted);
	if (ub->mm) {
		atomic64_sub(ub->charged, &ub->mm->pinned_vm);
		mmdrop(ub->mm);
	}
	memset(ub, 0, sizeof(*ub));
}
