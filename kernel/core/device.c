// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA device tracking.
 *
 * An ib_client hears about every RDMA device as it is registered and
 * before it is unregistered.  Each test attaches the objects it creates
 * on a device (a connection, a listener bound to the device's address) to
 * the device's kverbs_dev; when the device goes away, kverbs_remove_one()
 * aborts them and waits until every one has released its verbs objects,
 * because ib_core frees the device as soon as all clients returned.
 */
#include "kverbs.h"
#include "trace.h"

#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/overflow.h>

/**
 * struct kverbs_dev - kverbs' view of one RDMA device
 * @ibdev: the device
 * @list: entry in kverbs_dev_list
 * @users: &kverbs_dev_user.node of objects holding verbs resources on it
 * @nusers: how many; changed under kverbs_dev_lock, read without it
 * @removing: set once removal started; no new users from then on
 * @idle: woken when @nusers drops to 0
 * @events: asynchronous events of the device: ports going down and up
 * @port_events: counts port events and the start of removal, for
 *	kverbs_dev_wait_port_up(); changed under kverbs_dev_lock
 * @port_wait: woken when @port_events changes
 * @last_wqe: whether the device raises Last WQE Reached, as far as
 *	kverbs has seen (kverbs_dev_last_wqe_missing())
 */
struct kverbs_dev {
	struct ib_device *ibdev;
	struct list_head list;
	struct list_head users;
	unsigned int nusers;
	bool removing;
	wait_queue_head_t idle;
	struct ib_event_handler events;
	unsigned int port_events;
	wait_queue_head_t port_wait;
	int last_wqe;
};

/*
 * What kverbs has learned of a device's Last WQE Reached (&struct
 * kverbs_dev's @last_wqe): nothing yet; it raised one; or a QP on an SRQ
 * waited for one in vain while it never had.
 */
enum {
	KVERBS_DEV_LAST_WQE_UNKNOWN,
	KVERBS_DEV_LAST_WQE_RAISED,
	KVERBS_DEV_LAST_WQE_MISSING,
};

/*
 * One lock for the device list and every device's user list: it is taken
 * once per connection set-up and teardown and by KVERBS_IOC_DEVICES, and
 * never held across a wait or a call into a driver.
 */
static DEFINE_MUTEX(kverbs_dev_lock);
static LIST_HEAD(kverbs_dev_list);

static struct ib_client kverbs_client_ops;

static struct kverbs_dev *kverbs_dev_find(struct ib_device *ibdev)
{
	struct kverbs_dev *dev;

	lockdep_assert_held(&kverbs_dev_lock);
	list_for_each_entry(dev, &kverbs_dev_list, list)
		if (dev->ibdev == ibdev)
			return dev;
	return NULL;
}

/**
 * kverbs_dev_any_ud - whether any device could carry a datagram ping
 *
 * Return: true if a port of a device kverbs knows has an IB CM (IB,
 * RoCE): rdma_cm resolves a UD service ID with it.  iWARP ports have none.
 */
bool kverbs_dev_any_ud(void)
{
	struct kverbs_dev *dev;
	bool any = false;
	u32 port;

	mutex_lock(&kverbs_dev_lock);
	list_for_each_entry(dev, &kverbs_dev_list, list) {
		if (dev->removing)
			continue;
		rdma_for_each_port(dev->ibdev, port)
			any |= rdma_cap_ib_cm(dev->ibdev, port);
	}
	mutex_unlock(&kverbs_dev_lock);
	return any;
}

/**
 * kverbs_dev_attach - note that @user will create verbs objects on @ibdev
 * @user: the object; its ->abort must be set
 * @ibdev: the device rdma_cm bound it to
 * @port: the port, 0 for a listener not bound to one
 *
 * Return: 0, or -ENODEV when the device is being removed (or was never
 * seen), in which case @user is not attached.
 */
int kverbs_dev_attach(struct kverbs_dev_user *user, struct ib_device *ibdev,
		      u32 port)
{
	struct kverbs_dev *dev;
	int ret = -ENODEV;

	mutex_lock(&kverbs_dev_lock);
	dev = kverbs_dev_find(ibdev);
	if (dev && !dev->removing) {
		user->dev = dev;
		user->port = port;
		list_add_tail(&user->node, &dev->users);
		WRITE_ONCE(dev->nusers, dev->nusers + 1);
		ret = 0;
	}
	mutex_unlock(&kverbs_dev_lock);
	return ret;
}

/**
 * kverbs_dev_detach - @user released every verbs object on its device
 * @user: an attached user, or one that never was attached
 *
 * After this returns the device may be freed at any time.
 */
void kverbs_dev_detach(struct kverbs_dev_user *user)
{
	struct kverbs_dev *dev = user->dev;

	if (!dev)
		return;
	mutex_lock(&kverbs_dev_lock);
	list_del(&user->node);
	user->dev = NULL;
	WRITE_ONCE(dev->nusers, dev->nusers - 1);
	if (!dev->nusers)
		wake_up(&dev->idle);
	mutex_unlock(&kverbs_dev_lock);
}

/**
 * kverbs_dev_removing - whether the device of @user is being removed
 * @user: an attached user, or one that never was
 *
 * Return: true from the start of the device's removal on, and for a
 * user not attached.
 */
bool kverbs_dev_removing(const struct kverbs_dev_user *user)
{
	return !user->dev || READ_ONCE(user->dev->removing);
}

/**
 * kverbs_dev_last_wqe_raised - @user's device raised Last WQE Reached
 * @user: an attached user
 *
 * From then on a QP on an SRQ of the device that waits for the event in
 * vain has not drained (kverbs_dev_last_wqe_missing()).
 */
void kverbs_dev_last_wqe_raised(struct kverbs_dev_user *user)
{
	if (user->dev)
		WRITE_ONCE(user->dev->last_wqe, KVERBS_DEV_LAST_WQE_RAISED);
}

/**
 * kverbs_dev_last_wqe_missing - may a drain go on without Last WQE Reached?
 * @user: an attached user
 * @waited: a QP of the device has just waited for the event in vain
 *
 * Some devices never raise the event: rxe in Debian's 6.1 does not,
 * and ib_drain_qp() of that kernel does not wait for it.
 * A device that never raised it and let one wait pass is taken for one
 * of those, as ib_drain_qp() of later kernels goes on after its own wait
 * (Documentation/architecture.rst, "Draining"): its drains go on without
 * it.  A device that raised it once is waited for every time.
 *
 * Return: true when the drain should go on without the event.
 */
bool kverbs_dev_last_wqe_missing(struct kverbs_dev_user *user, bool waited)
{
	struct kverbs_dev *dev = user->dev;

	if (!dev)
		return false;
	if (waited && cmpxchg(&dev->last_wqe, KVERBS_DEV_LAST_WQE_UNKNOWN,
			      KVERBS_DEV_LAST_WQE_MISSING) ==
		      KVERBS_DEV_LAST_WQE_UNKNOWN)
		ibdev_warn(dev->ibdev,
			   "raises no Last WQE Reached: its SRQ QPs are drained without it\n");
	return READ_ONCE(dev->last_wqe) == KVERBS_DEV_LAST_WQE_MISSING;
}

/* Wake kverbs_dev_wait_port_up(): a port changed, or removal began. */
static void kverbs_dev_port_changed(struct kverbs_dev *dev)
{
	lockdep_assert_held(&kverbs_dev_lock);
	WRITE_ONCE(dev->port_events, dev->port_events + 1);
	wake_up(&dev->port_wait);
}

/*
 * A port went down (for RoCE and iWARP: its netdev).  Connections on it
 * cannot carry traffic until it comes back, which may be never: end them
 * now with a clear reason rather than let them run into retry timeouts.
 * Listeners stay: a server can take new clients once the port is up.
 * A port coming up releases the endpoints that waited for it to say
 * goodbye (kverbs_ep_destroy()).  ib_core calls this from a workqueue,
 * so the mutex is fine.
 */
static void kverbs_dev_event(struct ib_event_handler *handler,
			     struct ib_event *event)
{
	struct kverbs_dev *dev = container_of(handler, struct kverbs_dev, events);
	struct kverbs_dev_user *user;

	switch (event->event) {
	case IB_EVENT_DEVICE_FATAL:
		/*
		 * The device stopped working (a NIC's firmware, a PCI error):
		 * nothing it was asked will complete, so every test on it
		 * fails now, as ib_core's ULPs do, rather than at its step
		 * limit.  The device's removal follows, or its reset does:
		 * listeners and SRQs (port 0) wait for that.
		 */
		mutex_lock(&kverbs_dev_lock);
		list_for_each_entry(user, &dev->users, node)
			if (user->port)
				user->abort(user, -EIO);
		mutex_unlock(&kverbs_dev_lock);
		ibdev_warn(dev->ibdev, "fatal device error: its tests end with EIO\n");
		return;
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_PORT_ACTIVE:
		break;
	default:
		return;
	}
	mutex_lock(&kverbs_dev_lock);
	if (event->event == IB_EVENT_PORT_ERR)
		list_for_each_entry(user, &dev->users, node)
			if (user->port == event->element.port_num)
				user->abort(user, -ENETDOWN);
	kverbs_dev_port_changed(dev);
	mutex_unlock(&kverbs_dev_lock);
	ibdev_dbg(dev->ibdev, "port %u %s\n", event->element.port_num,
		  event->event == IB_EVENT_PORT_ERR ? "down" : "up");
}

/**
 * kverbs_dev_wait_port_up - wait until @user's port is up again, or its
 *	device is being removed
 * @user: an attached user
 * @down: tells whether the port is still down; process context, may sleep
 *
 * Woken by the device's port events and by the start of its removal;
 * checks again every second besides, for a link that came back without
 * an event.  Not interruptible, and without a bound: this wait is the
 * deferral itself, for work items (kverbs_ep_destroy()), never for a
 * test's thread; its end is the device's removal at the latest.
 */
void kverbs_dev_wait_port_up(struct kverbs_dev_user *user,
			     bool (*down)(struct kverbs_dev_user *user))
{
	struct kverbs_dev *dev = user->dev;
	unsigned int seen;

	if (!dev)
		return;
	for (;;) {
		/* Read before asking: an event from here on is not missed. */
		seen = READ_ONCE(dev->port_events);
		if (READ_ONCE(dev->removing) || !down(user))
			return;
		wait_event_timeout(dev->port_wait,
				   READ_ONCE(dev->port_events) != seen, HZ);
	}
}

static int kverbs_add_one(struct ib_device *ibdev)
{
	struct kverbs_dev *dev;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->ibdev = ibdev;
	INIT_LIST_HEAD(&dev->users);
	init_waitqueue_head(&dev->idle);
	init_waitqueue_head(&dev->port_wait);
	INIT_IB_EVENT_HANDLER(&dev->events, ibdev, kverbs_dev_event);
	ib_register_event_handler(&dev->events);

	mutex_lock(&kverbs_dev_lock);
	list_add_tail(&dev->list, &kverbs_dev_list);
	mutex_unlock(&kverbs_dev_lock);
	ib_set_client_data(ibdev, &kverbs_client_ops, dev);
	ibdev_dbg(ibdev, "device added\n");
	return 0;
}

static void kverbs_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct kverbs_dev *dev = client_data;
	struct kverbs_dev_user *user;
	unsigned int n = 0;

	/* Not under kverbs_dev_lock: this waits for a running handler. */
	ib_unregister_event_handler(&dev->events);

	mutex_lock(&kverbs_dev_lock);
	WRITE_ONCE(dev->removing, true);
	kverbs_dev_port_changed(dev);
	list_del(&dev->list);
	list_for_each_entry(user, &dev->users, node) {
		user->abort(user, -ENODEV);
		n++;
	}
	mutex_unlock(&kverbs_dev_lock);

	trace_kverbs_dev_remove(ibdev, n);
	if (n)
		ibdev_info(ibdev, "device removal: aborting %u connection(s)\n", n);
	/*
	 * Not bounded here, because every user's way out is: a test sleeps
	 * in a bounded wait that the abort woke up, and then tears down
	 * without waiting on the peer, its drain bounded on every device
	 * (kverbs_ep_drain()); an endpoint waiting for its port in
	 * kverbs_reap was woken by kverbs_dev_port_changed() above; a
	 * file's listener lets go from its own work (listener.c).  The
	 * device itself cannot stall it: nothing of ours waits on a
	 * completion of its, and ib_core frees nothing until we return.
	 */
	wait_event(dev->idle, !READ_ONCE(dev->nusers));
	/*
	 * The last user woke us from inside kverbs_dev_lock: once we hold
	 * the lock, it has left, and @dev is no longer touched by anyone.
	 * (A condition that took the lock itself would sleep inside
	 * wait_event(), which a kernel with CONFIG_DEBUG_ATOMIC_SLEEP
	 * reports as a blocking call while not TASK_RUNNING.)
	 */
	mutex_lock(&kverbs_dev_lock);
	mutex_unlock(&kverbs_dev_lock);
	trace_kverbs_dev_removed(ibdev);
	kfree(dev);
}

static struct ib_client kverbs_client_ops = {
	.name = "kverbs",
	.add = kverbs_add_one,
	.remove = kverbs_remove_one,
};

int kverbs_devices_register(void)
{
	return ib_register_client(&kverbs_client_ops);
}

void kverbs_devices_unregister(void)
{
	ib_unregister_client(&kverbs_client_ops);
}

static u64 kverbs_device_caps(const struct ib_device_attr *attr)
{
	u64 caps = 0;

	/*
	 * The memory management extensions are fast registration, local
	 * invalidation and SEND with invalidate together: ib_core has no
	 * finer bit, and ULPs that invalidate remotely (nvme-rdma, NFS/RDMA)
	 * test this one.
	 */
	if (attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)
		caps |= KVERBS_DEVICE_CAP_FAST_REG | KVERBS_DEVICE_CAP_LOCAL_INV |
			KVERBS_DEVICE_CAP_SEND_INV;
	if (attr->kernel_cap_flags & IBK_SG_GAPS_REG)
		caps |= KVERBS_DEVICE_CAP_SG_GAPS_REG;
	if (attr->device_cap_flags & KVERBS_IB_DEVICE_ATOMIC_WRITE)
		caps |= KVERBS_DEVICE_CAP_ATOMIC_WRITE;
	if (attr->device_cap_flags & KVERBS_IB_DEVICE_FLUSH)
		caps |= KVERBS_DEVICE_CAP_FLUSH;
	return caps;
}

static void kverbs_device_fill(struct kverbs_device_info *info,
			       struct ib_device *ibdev, u32 first_port)
{
	const struct ib_device_attr *attr = &ibdev->attrs;

	strscpy(info->name, dev_name(&ibdev->dev), sizeof(info->name));
	info->node_guid = be64_to_cpu(ibdev->node_guid);
	info->node_type = ibdev->node_type;
	info->transport = rdma_node_get_transport(ibdev->node_type);
	info->first_port = first_port;
	info->port_count = rdma_end_port(ibdev) - rdma_start_port(ibdev) + 1;
	info->max_qp = attr->max_qp;
	info->max_qp_wr = attr->max_qp_wr;
	info->max_cqe = attr->max_cqe;
	info->max_send_sge = attr->max_send_sge;
	info->max_recv_sge = attr->max_recv_sge;
	info->max_sge_rd = attr->max_sge_rd;
	info->max_qp_rd_atom = attr->max_qp_rd_atom;
	info->max_qp_init_rd_atom = attr->max_qp_init_rd_atom;
	info->max_mr_size = attr->max_mr_size;
	info->max_fast_reg_page_list_len = attr->max_fast_reg_page_list_len;
	info->atomic_cap = attr->atomic_cap;
	info->cap_flags = kverbs_device_caps(attr);
	info->max_srq = attr->max_srq;
	info->max_srq_wr = attr->max_srq_wr;
	info->max_srq_sge = attr->max_srq_sge;
	info->masked_atomic_cap = attr->masked_atomic_cap;
}

/*
 * What a port's protocol allows, from ib_core's helpers rather than the
 * driver's name.  UD and immediate data are InfiniBand transport
 * services that RoCE keeps.  iWARP has no datagram service, and RDMAP
 * (RFC 5040) no immediate data: siw takes IB_WR_SEND_WITH_IMM but fails
 * it when it transmits, iw_cxgb4 and irdma refuse it.  The RDMA WRITE
 * with immediate of RFC 7306, which iw_cxgb4 (T6 firmware) and irdma
 * post and siw refuses, is a driver's choice that ib_core does not
 * report, so an iWARP port is shown without immediate data rather than
 * with a guess.  ib_core has no rdma_cap_*() for UD or immediate data:
 * both follow rdma_ib_or_roce().  READ with invalidate is what
 * rdma_cap_read_inv() says, as rdma_rw decides with it.
 */
static u32 kverbs_port_caps(struct ib_device *ibdev, u32 port)
{
	u32 caps = 0;

	if (rdma_ib_or_roce(ibdev, port))
		caps |= KVERBS_PORT_CAP_UD | KVERBS_PORT_CAP_IMM;
	if (rdma_cap_read_inv(ibdev, port))
		caps |= KVERBS_PORT_CAP_READ_INV;
	return caps;
}

static int kverbs_port_fill(struct kverbs_port_info *info,
			    struct ib_device *ibdev, u32 port)
{
	struct ib_port_attr attr;
	int ret;

	ret = ib_query_port(ibdev, port, &attr);
	if (ret)
		return ret;
	info->port_num = port;
	info->state = attr.state;
	info->phys_state = attr.phys_state;
	info->link_layer = rdma_port_get_link_layer(ibdev, port);
	info->active_mtu = ib_mtu_enum_to_int(attr.active_mtu);
	info->max_mtu = ib_mtu_enum_to_int(attr.max_mtu);
	info->gid_tbl_len = attr.gid_tbl_len;
	info->cap_flags = kverbs_port_caps(ibdev, port);
	return 0;
}

/*
 * Pin every device kverbs knows that the caller's network namespace may
 * use (all of them while ib_core shares devices among namespaces, the
 * default; only those moved into it when it keeps them exclusive, `rdma
 * system set netns exclusive`) with a registration reference, and
 * return them in a new array.  Only this is done under kverbs_dev_lock:
 * the devices are queried after it is dropped, because a driver's
 * query_port may take the RTNL (rxe's does, for the link speed), and
 * RoCE's GID code holds the RTNL while it dispatches the device events
 * whose handler, kverbs_dev_event(), takes kverbs_dev_lock.  A pinned
 * device may still lose its kverbs_dev to kverbs_remove_one(), but it
 * stays registered, and its driver usable, until ib_device_put().
 */
static int kverbs_devices_pin(struct ib_device ***ibdevsp, u32 *np)
{
	struct net *net = current->nsproxy->net_ns;
	struct ib_device **ibdevs = NULL;
	struct kverbs_dev *dev;
	u32 n = 0;

	mutex_lock(&kverbs_dev_lock);
	list_for_each_entry(dev, &kverbs_dev_list, list)
		n++;
	if (n) {
		ibdevs = kcalloc(n, sizeof(*ibdevs), GFP_KERNEL);
		if (!ibdevs) {
			mutex_unlock(&kverbs_dev_lock);
			return -ENOMEM;
		}
	}
	n = 0;
	list_for_each_entry(dev, &kverbs_dev_list, list)
		if (rdma_dev_access_netns(dev->ibdev, net) &&
		    ib_device_try_get(dev->ibdev))
			ibdevs[n++] = dev->ibdev;
	mutex_unlock(&kverbs_dev_lock);
	*ibdevsp = ibdevs;
	*np = n;
	return 0;
}

/*
 * Take a snapshot of every device and port, holding no lock of ours
 * while the drivers are asked (see kverbs_devices_pin()).  Userspace
 * memory is written later, once the devices are let go, so that a slow
 * page fault cannot hold up device removal.
 */
static int kverbs_devices_snapshot(struct kverbs_device_info **devsp,
				   u32 *ndevs, struct kverbs_port_info **portsp,
				   u32 *nports)
{
	struct kverbs_device_info *devs = NULL;
	struct kverbs_port_info *ports = NULL;
	struct ib_device **ibdevs;
	u32 n, i, np = 0, port;
	int ret;

	ret = kverbs_devices_pin(&ibdevs, &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		np += rdma_end_port(ibdevs[i]) - rdma_start_port(ibdevs[i]) + 1;
	if (n) {
		devs = kvcalloc(n, sizeof(*devs), GFP_KERNEL);
		ports = kvcalloc(np, sizeof(*ports), GFP_KERNEL);
		if (!devs || !ports) {
			ret = -ENOMEM;
			goto out_put;
		}
	}
	np = 0;
	for (i = 0; i < n; i++) {
		kverbs_device_fill(&devs[i], ibdevs[i], np);
		rdma_for_each_port(ibdevs[i], port) {
			ret = kverbs_port_fill(&ports[np++], ibdevs[i], port);
			if (ret)
				goto out_put;
		}
	}
out_put:
	for (i = 0; i < n; i++)
		ib_device_put(ibdevs[i]);
	kfree(ibdevs);
	if (ret) {
		kvfree(devs);
		kvfree(ports);
		return ret;
	}
	*devsp = devs;
	*ndevs = n;
	*portsp = ports;
	*nports = np;
	return 0;
}

/* Entries grow by appending fields; a page is far beyond any future size. */
#define KVERBS_MAX_ENTRY_SIZE	PAGE_SIZE

/* A caller of the first version gets that much of each entry, unmoved. */
static_assert(offsetofend(struct kverbs_device_info, cap_flags) ==
	      KVERBS_DEVICE_INFO_SIZE_VER0);
static_assert(offsetofend(struct kverbs_port_info, __reserved1) ==
	      KVERBS_PORT_INFO_SIZE_VER0);

/*
 * Copy @n entries of @ksize bytes to a user array of @usize-byte entries:
 * fields the caller does not know are cut off, fields it knows and the
 * kernel does not are zeroed.
 */
static int kverbs_copy_array(u64 uptr, const void *kbuf, u32 n, size_t ksize,
			     u32 usize)
{
	void __user *dst = u64_to_user_ptr(uptr);
	size_t copy = min_t(size_t, ksize, usize);
	u32 i;

	for (i = 0; i < n; i++) {
		if (copy_to_user(dst, kbuf + i * ksize, copy))
			return -EFAULT;
		if (usize > copy && clear_user(dst + copy, usize - copy))
			return -EFAULT;
		dst += usize;
	}
	return 0;
}

/**
 * kverbs_devices_cmd - KVERBS_IOC_DEVICES
 * @cmd: the caller's arguments, copied in; counts are written back to it
 *
 * Return: 0, or -EINVAL for bad arguments, -ENOSPC when an array is too
 * small (the counts tell how large they must be), -EFAULT when an array
 * cannot be written, or an error from querying a port.
 */
int kverbs_devices_cmd(struct kverbs_devices *cmd)
{
	struct kverbs_device_info *devs;
	struct kverbs_port_info *ports;
	u32 nd, np;
	int ret;

	if (cmd->flags)
		return -EINVAL;
	if (cmd->device_entry_size < KVERBS_DEVICE_INFO_SIZE_VER0 ||
	    cmd->device_entry_size > KVERBS_MAX_ENTRY_SIZE ||
	    cmd->port_entry_size < KVERBS_PORT_INFO_SIZE_VER0 ||
	    cmd->port_entry_size > KVERBS_MAX_ENTRY_SIZE)
		return -EINVAL;

	ret = kverbs_devices_snapshot(&devs, &nd, &ports, &np);
	if (ret)
		return ret;
	cmd->device_count = nd;
	cmd->port_count = np;
	if (nd > cmd->device_capacity || np > cmd->port_capacity) {
		ret = -ENOSPC;
		goto out_free;
	}
	ret = kverbs_copy_array(cmd->devices, devs, nd, sizeof(*devs),
				cmd->device_entry_size);
	if (!ret)
		ret = kverbs_copy_array(cmd->ports, ports, np, sizeof(*ports),
					cmd->port_entry_size);
out_free:
	kvfree(devs);
	kvfree(ports);
	return ret;
}
