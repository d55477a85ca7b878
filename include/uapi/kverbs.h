/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kverbs - in-kernel RDMA verbs tests driven through /dev/kverbs.
 *
 * This header is the whole contract between the kverbs module and its
 * users.  The rules every command follows:
 *
 * - The ioctl number carries no size.  Every argument struct starts with
 *   __u32 @size, which the caller sets to sizeof() the struct as it knows
 *   it.  A smaller @size than the first version of the struct fails with
 *   -EINVAL; a larger one is accepted if every byte the kernel does not
 *   know is zero, and fails with -E2BIG otherwise.  Output is copied back
 *   up to the smaller of the two sizes.
 * - Fields named __reserved and unknown bits in @flags must be zero
 *   (-EINVAL otherwise), so that they can be given meaning later.
 * - User pointers are passed as __aligned_u64, times in nanoseconds.
 * - An unknown command fails with -ENOTTY; an unreadable or unwritable
 *   argument with -EFAULT.
 *
 * Output fields are marked (out) and are written by the kernel; their
 * values on input are ignored.  Fields marked (in) are read only.
 */
#ifndef _UAPI_KVERBS_H
#define _UAPI_KVERBS_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/socket.h>

/* Bumped only for incompatible changes; extensions use @size instead. */
#define KVERBS_ABI_VERSION	1

/* ioctl type 'k', commands 0x80 and up (0x00-0x17 belong to others). */
#define KVERBS_TYPE		'k'

enum {
	KVERBS_CMD_BASE = 0x80,
	KVERBS_CMD_INFO = KVERBS_CMD_BASE,
	KVERBS_CMD_DEVICES,
	KVERBS_CMD_PING,
	KVERBS_CMD_PERF,
	KVERBS_CMD_LISTEN,
	KVERBS_CMD_LESSON,
};

/**
 * enum kverbs_feature - capabilities reported in &kverbs_info.features
 * @KVERBS_FEATURE_DEVICES: KVERBS_IOC_DEVICES is available
 * @KVERBS_FEATURE_PING: KVERBS_IOC_PING is available
 * @KVERBS_FEATURE_PING_LOG: KVERBS_IOC_PING can store each iteration's
 *	payload in a user buffer (&kverbs_ping.log)
 * @KVERBS_FEATURE_PERF: KVERBS_IOC_PERF is available, with the bandwidth
 *	tests KVERBS_PERF_WRITE_BW, _READ_BW and _SEND_BW
 * @KVERBS_FEATURE_PERF_LAT: KVERBS_IOC_PERF also runs KVERBS_PERF_READ_LAT,
 *	_ATOMIC_LAT and _ATOMIC_BW, and stores latency samples
 *	(&kverbs_perf.samples)
 * @KVERBS_FEATURE_PERF_PINGPONG: KVERBS_IOC_PERF also runs the ping-pong
 *	latency tests KVERBS_PERF_WRITE_LAT and _SEND_LAT
 * @KVERBS_FEATURE_LISTEN: KVERBS_IOC_LISTEN is available, and perf servers
 *	take their clients from it with KVERBS_PERF_F_LISTENER
 * @KVERBS_FEATURE_PERF_REVERSE: KVERBS_IOC_PERF takes KVERBS_PERF_F_REVERSE
 * @KVERBS_FEATURE_PERF_EVENTS: KVERBS_IOC_PERF takes KVERBS_PERF_F_EVENTS
 * @KVERBS_FEATURE_PING_LISTENER: KVERBS_IOC_PING takes KVERBS_PING_F_LISTENER
 * @KVERBS_FEATURE_PERF_CEILINGS: a perf server refuses hellos over its
 *	ceilings (&kverbs_perf.max_duration_ns, .max_iterations, the module's
 *	perf_max_duration_s and perf_max_iterations) and takes
 *	KVERBS_PERF_F_NO_REVERSE
 * @KVERBS_FEATURE_LESSON: KVERBS_IOC_LESSON is available
 * @KVERBS_FEATURE_PERF_BUSY_POLL: a perf server busy-polls for its client
 *	only with KVERBS_PERF_F_BUSY_POLL, and refuses a KVERBS_PERF_WRITE_LAT
 *	client without it (KVERBS_PERF_REJECT_BUSY_POLL)
 * @KVERBS_FEATURE_DEVICE_CAPS: KVERBS_IOC_DEVICES fills the fields of
 *	&kverbs_device_info after @cap_flags (SRQ limits, masked atomics)
 *	and &kverbs_port_info.cap_flags, and sets KVERBS_DEVICE_CAP_LOCAL_INV
 *	and _SEND_INV; without it they read as 0 and mean "not known"
 * @KVERBS_FEATURE_PERF_IMM: KVERBS_IOC_PERF takes KVERBS_PERF_F_IMM, and
 *	its servers KVERBS_PERF_REJECT_IMM, and fills
 *	&kverbs_perf.imm_expected and .imm_got
 * @KVERBS_FEATURE_PERF_POLL: KVERBS_IOC_PERF takes a completion policy
 *	(&kverbs_perf.poll, .cq_flags) and reports the CQ it ran on
 *	(&kverbs_perf.cq)
 * @KVERBS_FEATURE_PERF_POST: KVERBS_IOC_PERF takes post lists, CQ
 *	moderation and inline data (&kverbs_perf.post_list, .cq_mod,
 *	.inline_size), and reports the QP's inline limit (.max_inline)
 * @KVERBS_FEATURE_PERF_RW: KVERBS_IOC_PERF takes KVERBS_PERF_F_RW, and
 *	fills &kverbs_perf.rw_ctxs and .rw_mr_ctxs
 * @KVERBS_FEATURE_PERF_INV: KVERBS_IOC_PERF takes KVERBS_PERF_F_INV and
 *	fills &kverbs_perf.inv_remote to .inv_got
 * @KVERBS_FEATURE_PING_INV: KVERBS_IOC_PING offers and agrees to remote
 *	invalidation with a kverbs peer (see &enum kverbs_ping_flags), takes
 *	KVERBS_PING_F_NO_INV, and fills &kverbs_ping.inv_remote and .inv_sent
 * @KVERBS_FEATURE_PERF_PHASES: KVERBS_IOC_PERF clients take
 *	KVERBS_PERF_F_PHASES and &kverbs_perf.phases
 * @KVERBS_FEATURE_PERF_SRQ: KVERBS_IOC_PERF servers take KVERBS_PERF_F_SRQ
 *	(&kverbs_perf.srq_wr to .srq_shared)
 * @KVERBS_FEATURE_PING_UD: KVERBS_IOC_PING takes KVERBS_PING_F_UD and
 *	fills &kverbs_ping.path_mtu, .remote_qpn and .remote_qkey
 * @KVERBS_FEATURE_PERF_UD: KVERBS_IOC_PERF takes KVERBS_PERF_F_UD and
 *	fills &kverbs_perf.lost and .path_mtu
 * @KVERBS_FEATURE_PERF_UD_FOREIGN: with KVERBS_PERF_F_UD, datagrams from
 *	another QP than the peer's are dropped and counted in
 *	&kverbs_perf.foreign (a module without it takes them for the peer's)
 */
enum kverbs_feature {
	KVERBS_FEATURE_DEVICES = 1 << 0,
	KVERBS_FEATURE_PING = 1 << 1,
	KVERBS_FEATURE_PING_LOG = 1 << 2,
	KVERBS_FEATURE_PERF = 1 << 3,
	KVERBS_FEATURE_PERF_LAT = 1 << 4,
	KVERBS_FEATURE_PERF_PINGPONG = 1 << 5,
	KVERBS_FEATURE_LISTEN = 1 << 6,
	KVERBS_FEATURE_PERF_REVERSE = 1 << 7,
	KVERBS_FEATURE_PERF_EVENTS = 1 << 8,
	KVERBS_FEATURE_PING_LISTENER = 1 << 9,
	KVERBS_FEATURE_PERF_CEILINGS = 1 << 10,
	KVERBS_FEATURE_LESSON = 1 << 11,
	KVERBS_FEATURE_PERF_BUSY_POLL = 1 << 12,
	KVERBS_FEATURE_DEVICE_CAPS = 1 << 13,
	KVERBS_FEATURE_PERF_IMM = 1 << 14,
	KVERBS_FEATURE_PERF_POLL = 1 << 15,
	KVERBS_FEATURE_PERF_POST = 1 << 16,
	KVERBS_FEATURE_PERF_RW = 1 << 17,
	KVERBS_FEATURE_PERF_INV = 1 << 18,
	KVERBS_FEATURE_PERF_SRQ = 1 << 19,
	KVERBS_FEATURE_PING_INV = 1 << 20,
	KVERBS_FEATURE_PERF_PHASES = 1 << 21,
	KVERBS_FEATURE_PING_UD = 1 << 22,
	KVERBS_FEATURE_PERF_UD_FOREIGN = 1 << 23,
	KVERBS_FEATURE_PERF_UD = 1 << 24,
};

/**
 * struct kverbs_info - KVERBS_IOC_INFO: what this module is
 * @size: sizeof(struct kverbs_info)
 * @flags: must be 0
 * @abi_version: (out) KVERBS_ABI_VERSION of the running module
 * @__reserved: must be 0
 * @features: (out) bit mask of &enum kverbs_feature
 * @version: (out) module version, NUL-terminated
 */
struct kverbs_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 __reserved;
	__aligned_u64 features;
	char version[32];
};

#define KVERBS_IOC_INFO		_IO(KVERBS_TYPE, KVERBS_CMD_INFO)

/*
 * Values below that describe a device or a port are the ones the
 * InfiniBand Architecture Specification and the kernel's ib_verbs.h use,
 * so they also match libibverbs' enum ibv_*.
 */

/**
 * enum kverbs_node_type - &kverbs_device_info.node_type
 * @KVERBS_NODE_UNSPECIFIED: the driver did not say
 * @KVERBS_NODE_CA: InfiniBand or RoCE channel adapter
 * @KVERBS_NODE_SWITCH: InfiniBand switch
 * @KVERBS_NODE_ROUTER: InfiniBand router
 * @KVERBS_NODE_RNIC: iWARP RDMA NIC
 * @KVERBS_NODE_USNIC: Cisco usNIC
 * @KVERBS_NODE_USNIC_UDP: Cisco usNIC over UDP
 */
enum kverbs_node_type {
	KVERBS_NODE_UNSPECIFIED = 0,
	KVERBS_NODE_CA = 1,
	KVERBS_NODE_SWITCH = 2,
	KVERBS_NODE_ROUTER = 3,
	KVERBS_NODE_RNIC = 4,
	KVERBS_NODE_USNIC = 5,
	KVERBS_NODE_USNIC_UDP = 6,
};

/**
 * enum kverbs_transport - &kverbs_device_info.transport
 * @KVERBS_TRANSPORT_IB: InfiniBand transport (InfiniBand and RoCE)
 * @KVERBS_TRANSPORT_IWARP: iWARP (RDMAP/DDP/MPA over TCP)
 * @KVERBS_TRANSPORT_USNIC: usNIC
 * @KVERBS_TRANSPORT_USNIC_UDP: usNIC over UDP
 * @KVERBS_TRANSPORT_UNSPECIFIED: the driver did not say
 */
enum kverbs_transport {
	KVERBS_TRANSPORT_IB = 0,
	KVERBS_TRANSPORT_IWARP = 1,
	KVERBS_TRANSPORT_USNIC = 2,
	KVERBS_TRANSPORT_USNIC_UDP = 3,
	KVERBS_TRANSPORT_UNSPECIFIED = 4,
};

/**
 * enum kverbs_atomic_cap - &kverbs_device_info.atomic_cap
 * @KVERBS_ATOMIC_NONE: no atomic operations
 * @KVERBS_ATOMIC_HCA: atomic with respect to this device only
 * @KVERBS_ATOMIC_GLOB: atomic with respect to the device and the CPUs
 */
enum kverbs_atomic_cap {
	KVERBS_ATOMIC_NONE = 0,
	KVERBS_ATOMIC_HCA = 1,
	KVERBS_ATOMIC_GLOB = 2,
};

/**
 * enum kverbs_device_cap - bits in &kverbs_device_info.cap_flags
 * @KVERBS_DEVICE_CAP_FAST_REG: fast registration work requests
 *	(IB_WR_REG_MR / IB_WR_LOCAL_INV), which kverbs needs
 * @KVERBS_DEVICE_CAP_SG_GAPS_REG: one MR can map a scatterlist with gaps
 * @KVERBS_DEVICE_CAP_ATOMIC_WRITE: RDMA atomic write (IBTA 1.5); never
 *	set by kernels older than 6.2, which cannot report it
 * @KVERBS_DEVICE_CAP_FLUSH: RDMA flush to global or persistent
 *	visibility (IBTA 1.5); never set by kernels older than 6.2
 * @KVERBS_DEVICE_CAP_LOCAL_INV: IB_WR_LOCAL_INV, invalidating an rkey
 *	with a work request (IB_DEVICE_MEM_MGT_EXTENSIONS).  With
 *	KVERBS_FEATURE_DEVICE_CAPS only.
 * @KVERBS_DEVICE_CAP_SEND_INV: IB_WR_SEND_WITH_INV, a SEND that
 *	invalidates an rkey of the receiver (IB_DEVICE_MEM_MGT_EXTENSIONS;
 *	InfiniBand, RoCE and iWARP all define it).  With
 *	KVERBS_FEATURE_DEVICE_CAPS only.
 */
enum kverbs_device_cap {
	KVERBS_DEVICE_CAP_FAST_REG = 1 << 0,
	KVERBS_DEVICE_CAP_SG_GAPS_REG = 1 << 1,
	KVERBS_DEVICE_CAP_ATOMIC_WRITE = 1 << 2,
	KVERBS_DEVICE_CAP_FLUSH = 1 << 3,
	KVERBS_DEVICE_CAP_LOCAL_INV = 1 << 4,
	KVERBS_DEVICE_CAP_SEND_INV = 1 << 5,
};

/**
 * enum kverbs_port_state - &kverbs_port_info.state
 * @KVERBS_PORT_NOP: no state change
 * @KVERBS_PORT_DOWN: link down
 * @KVERBS_PORT_INIT: link up, not yet configured by the subnet manager
 * @KVERBS_PORT_ARMED: configured, not yet active
 * @KVERBS_PORT_ACTIVE: ready to carry traffic
 * @KVERBS_PORT_ACTIVE_DEFER: active, deferring to a pending change
 */
enum kverbs_port_state {
	KVERBS_PORT_NOP = 0,
	KVERBS_PORT_DOWN = 1,
	KVERBS_PORT_INIT = 2,
	KVERBS_PORT_ARMED = 3,
	KVERBS_PORT_ACTIVE = 4,
	KVERBS_PORT_ACTIVE_DEFER = 5,
};

/**
 * enum kverbs_link_layer - &kverbs_port_info.link_layer
 * @KVERBS_LINK_LAYER_UNSPECIFIED: the driver did not say
 * @KVERBS_LINK_LAYER_INFINIBAND: InfiniBand
 * @KVERBS_LINK_LAYER_ETHERNET: Ethernet (RoCE and iWARP)
 */
enum kverbs_link_layer {
	KVERBS_LINK_LAYER_UNSPECIFIED = 0,
	KVERBS_LINK_LAYER_INFINIBAND = 1,
	KVERBS_LINK_LAYER_ETHERNET = 2,
};

/**
 * enum kverbs_port_cap - bits in &kverbs_port_info.cap_flags
 * @KVERBS_PORT_CAP_UD: unreliable datagram QPs (IB_QPT_UD): InfiniBand
 *	and RoCE ports (rdma_ib_or_roce()); iWARP has no datagram service
 * @KVERBS_PORT_CAP_IMM: SEND and RDMA WRITE with immediate data, as the
 *	InfiniBand transport defines them: InfiniBand and RoCE ports
 *	(rdma_ib_or_roce()).  Never set on iWARP ports: RDMAP (RFC 5040) has
 *	no immediate data and no kernel iWARP driver sends
 *	IB_WR_SEND_WITH_IMM; the RDMA WRITE with immediate of RFC 7306, which
 *	iw_cxgb4 (with T6 firmware) and irdma post and siw does not, is a
 *	driver's choice that ib_core does not report
 * @KVERBS_PORT_CAP_READ_INV: IB_WR_RDMA_READ_WITH_INV, as rdma_rw posts
 *	it: ib_core's rdma_cap_read_inv(), which is true for iWARP ports only
 *
 * Per port, because they follow the port's protocol, as ib_core's
 * rdma_protocol_*() and rdma_cap_*() helpers answer them; all are 0 from
 * a module without KVERBS_FEATURE_DEVICE_CAPS.
 */
enum kverbs_port_cap {
	KVERBS_PORT_CAP_UD = 1 << 0,
	KVERBS_PORT_CAP_IMM = 1 << 1,
	KVERBS_PORT_CAP_READ_INV = 1 << 2,
};

/**
 * struct kverbs_port_info - one port of an RDMA device
 * @port_num: port number, from 1
 * @state: &enum kverbs_port_state
 * @phys_state: physical port state as the IBTA numbers it
 *	(5 is LinkUp, 3 Disabled, 2 Polling)
 * @link_layer: &enum kverbs_link_layer
 * @__reserved0: written as 0
 * @active_mtu: path MTU in use, in bytes (256 to 4096)
 * @max_mtu: largest MTU the port supports, in bytes
 * @gid_tbl_len: entries in the port's GID table
 * @__reserved1: written as 0
 * @cap_flags: bit mask of &enum kverbs_port_cap
 * @__reserved2: written as 0
 *
 * The first version ends at @__reserved1: KVERBS_PORT_INFO_SIZE_VER0.
 */
struct kverbs_port_info {
	__u32 port_num;
	__u8 state;
	__u8 phys_state;
	__u8 link_layer;
	__u8 __reserved0;
	__u32 active_mtu;
	__u32 max_mtu;
	__u32 gid_tbl_len;
	__u32 __reserved1;
	__u32 cap_flags;
	__u32 __reserved2;
};

#define KVERBS_PORT_INFO_SIZE_VER0	24

#define KVERBS_DEVICE_NAME_MAX	64

/**
 * struct kverbs_device_info - one RDMA device and its limits
 * @name: device name (e.g. "mlx5_0", "rxe0"), NUL-terminated
 * @node_guid: node GUID as a number, printed as ibv_devices prints it
 * @node_type: &enum kverbs_node_type
 * @transport: &enum kverbs_transport
 * @first_port: index of this device's first entry in the port array
 * @port_count: number of consecutive port array entries for this device
 * @max_qp: number of QPs the device supports
 * @max_qp_wr: largest work queue, in work requests
 * @max_cqe: largest completion queue, in entries
 * @max_send_sge: scatter/gather entries per send work request
 * @max_recv_sge: scatter/gather entries per receive work request
 * @max_sge_rd: scatter/gather entries per RDMA READ work request
 * @max_qp_rd_atom: RDMA READs and atomics a QP can answer at once
 * @max_qp_init_rd_atom: RDMA READs and atomics a QP can issue at once
 * @max_mr_size: largest memory region, in bytes
 * @max_fast_reg_page_list_len: pages one fast-registration MR can map
 * @atomic_cap: &enum kverbs_atomic_cap
 * @cap_flags: bit mask of &enum kverbs_device_cap
 * @max_srq: shared receive queues the device supports; 0 when it has none
 * @max_srq_wr: largest shared receive queue, in work requests
 * @max_srq_sge: scatter/gather entries per shared receive queue work
 *	request
 * @masked_atomic_cap: &enum kverbs_atomic_cap of the masked atomics
 *	(IB_WR_MASKED_ATOMIC_CMP_AND_SWP, _FETCH_AND_ADD)
 *
 * The first version ends at @cap_flags: KVERBS_DEVICE_INFO_SIZE_VER0.
 * The fields after it are written by a module with
 * KVERBS_FEATURE_DEVICE_CAPS, and are 0 from an older one.
 */
struct kverbs_device_info {
	char name[KVERBS_DEVICE_NAME_MAX];
	__aligned_u64 node_guid;
	__u32 node_type;
	__u32 transport;
	__u32 first_port;
	__u32 port_count;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 max_cqe;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_sge_rd;
	__u32 max_qp_rd_atom;
	__u32 max_qp_init_rd_atom;
	__aligned_u64 max_mr_size;
	__u32 max_fast_reg_page_list_len;
	__u32 atomic_cap;
	__aligned_u64 cap_flags;
	__u32 max_srq;
	__u32 max_srq_wr;
	__u32 max_srq_sge;
	__u32 masked_atomic_cap;
};

#define KVERBS_DEVICE_INFO_SIZE_VER0	144

/**
 * struct kverbs_devices - KVERBS_IOC_DEVICES: the RDMA devices kverbs sees
 * @size: sizeof(struct kverbs_devices)
 * @flags: must be 0
 * @device_entry_size: (in) sizeof(struct kverbs_device_info) as the
 *	caller knows it; at least the first version's size
 *	(KVERBS_DEVICE_INFO_SIZE_VER0), at most 4096.  The kernel
 *	writes the entries it knows and zeroes any bytes beyond them.
 * @port_entry_size: (in) sizeof(struct kverbs_port_info), likewise
 *	(at least KVERBS_PORT_INFO_SIZE_VER0)
 * @device_capacity: (in) entries @devices has room for
 * @port_capacity: (in) entries @ports has room for
 * @device_count: (out) devices present
 * @port_count: (out) ports across all of them
 * @devices: (in) user pointer to @device_capacity device entries;
 *	may be 0 when @device_capacity is 0
 * @ports: (in) user pointer to @port_capacity port entries;
 *	may be 0 when @port_capacity is 0
 *
 * Fails with -ENOSPC, having written only @device_count and @port_count,
 * when either array is too small; the caller grows them and asks again;
 * with -ENOMEM when the kernel is out of memory.
 */
struct kverbs_devices {
	__u32 size;
	__u32 flags;
	__u32 device_entry_size;
	__u32 port_entry_size;
	__u32 device_capacity;
	__u32 port_capacity;
	__u32 device_count;
	__u32 port_count;
	__aligned_u64 devices;
	__aligned_u64 ports;
};

#define KVERBS_IOC_DEVICES	_IO(KVERBS_TYPE, KVERBS_CMD_DEVICES)

/**
 * enum kverbs_role - &kverbs_ping.role
 * @KVERBS_ROLE_CLIENT: connect to a server and ping it
 * @KVERBS_ROLE_SERVER: listen and answer pings
 */
enum kverbs_role {
	KVERBS_ROLE_CLIENT = 1,
	KVERBS_ROLE_SERVER = 2,
};

/**
 * enum kverbs_ping_flags - &kverbs_ping.flags
 * @KVERBS_PING_F_VALIDATE: check every byte received against the rping
 *	pattern for its iteration (client: the echo; server: the data read)
 * @KVERBS_PING_F_PERSISTENT: server only: after a client leaves, serve
 *	the next one, until a signal ends the call
 * @KVERBS_PING_F_LISTENER: server only: take the client from the file's
 *	listener (KVERBS_IOC_LISTEN) instead of listening on &kverbs_ping.addr,
 *	which must then be all zero.  Any number of such calls may wait on
 *	one listener at once, in as many threads; each serves the next
 *	client that connects, which is how a persistent server serves
 *	several clients at once, as rping -P does.
 * @KVERBS_PING_F_NO_INV: either side: no remote invalidation.  Without
 *	it a kverbs client offers, in its connection request, to have its
 *	keys invalidated by the server's go-aheads (IB_WR_SEND_WITH_INV),
 *	and a kverbs server whose device can post them agrees in its
 *	accept; the client then posts no IB_WR_LOCAL_INV of its own.  With
 *	it a client does not offer and a server does not agree, and the
 *	client revokes each key itself, as with rping, which neither offers
 *	nor agrees.  Feature bit: KVERBS_FEATURE_PING_INV.
 * @KVERBS_PING_F_UD: either side: ping over an Unreliable Datagram QP, as
 *	rdma-core's udaddy does, instead of rping's exchange over a reliable
 *	connection.  The client sends &kverbs_ping.count messages of
 *	&kverbs_ping.msg_size bytes, the server receives them all and sends as many of
 *	the same size back, each to the address the message came from.
 *	@count must be 1 to KVERBS_PING_UD_MAX_COUNT, on both sides; the
 *	messages are at most the path MTU (-EMSGSIZE above it); not with
 *	KVERBS_PING_F_PERSISTENT, _LISTENER or _NO_INV (-EINVAL).  A message
 *	that does not come within &kverbs_ping.timeout_ns ends the call with
 *	-ETIMEDOUT.  iWARP has no UD: over an iWARP device the call fails
 *	with -EOPNOTSUPP before anything is sent.  Feature bit:
 *	KVERBS_FEATURE_PING_UD.
 */
enum kverbs_ping_flags {
	KVERBS_PING_F_VALIDATE = 1 << 0,
	KVERBS_PING_F_PERSISTENT = 1 << 1,
	KVERBS_PING_F_LISTENER = 1 << 2,
	KVERBS_PING_F_NO_INV = 1 << 3,
	KVERBS_PING_F_UD = 1 << 4,
};

/* Most messages each way of one KVERBS_PING_F_UD call: all are in flight. */
#define KVERBS_PING_UD_MAX_COUNT	1024

/*
 * Ping message sizes.  The smallest holds "rdma-ping-%d: " for any int,
 * as rping requires; the largest the module accepts is its max_msg_size
 * parameter, further limited by what one fast-registration MR of the
 * device can map.
 */
#define KVERBS_PING_MIN_SIZE	26
#define KVERBS_PING_DEFAULT_PORT 7174

/**
 * enum kverbs_step - what a ping was doing when it failed
 * @KVERBS_STEP_NONE: nothing failed
 * @KVERBS_STEP_SETUP: checking arguments or allocating local resources
 * @KVERBS_STEP_RESOLVE_ADDR: resolving the destination to a device
 * @KVERBS_STEP_RESOLVE_ROUTE: resolving the path to the destination
 * @KVERBS_STEP_LISTEN: binding and listening
 * @KVERBS_STEP_CONNECT: waiting for the server to accept
 * @KVERBS_STEP_ACCEPT: accepting a client's connection
 * @KVERBS_STEP_REG_MR: fast-registering a buffer
 * @KVERBS_STEP_SEND: sending a message
 * @KVERBS_STEP_RECV: waiting for the peer's message
 * @KVERBS_STEP_RDMA_READ: RDMA READ of the peer's buffer
 * @KVERBS_STEP_RDMA_WRITE: RDMA WRITE to the peer's buffer
 * @KVERBS_STEP_LOCAL_INV: invalidating a buffer's rkey
 * @KVERBS_STEP_VALIDATE: comparing received data with the pattern
 * @KVERBS_STEP_LOG: storing the payload in &kverbs_ping.log
 * @KVERBS_STEP_HELLO: perf: the server checking the client's request,
 *	or the client learning that the server refused it
 * @KVERBS_STEP_ATOMIC: perf: an atomic operation on the peer's buffer
 * @KVERBS_STEP_SAMPLES: perf: storing latency samples in
 *	&kverbs_perf.samples
 */
enum kverbs_step {
	KVERBS_STEP_NONE = 0,
	KVERBS_STEP_SETUP,
	KVERBS_STEP_RESOLVE_ADDR,
	KVERBS_STEP_RESOLVE_ROUTE,
	KVERBS_STEP_LISTEN,
	KVERBS_STEP_CONNECT,
	KVERBS_STEP_ACCEPT,
	KVERBS_STEP_REG_MR,
	KVERBS_STEP_SEND,
	KVERBS_STEP_RECV,
	KVERBS_STEP_RDMA_READ,
	KVERBS_STEP_RDMA_WRITE,
	KVERBS_STEP_LOCAL_INV,
	KVERBS_STEP_VALIDATE,
	KVERBS_STEP_LOG,
	KVERBS_STEP_HELLO,
	KVERBS_STEP_ATOMIC,
	KVERBS_STEP_SAMPLES,
};

/**
 * enum kverbs_result_flags - &kverbs_ping_result.valid
 * @KVERBS_RESULT_WC: @wc_status and @vendor_err hold the failed work
 *	completion
 * @KVERBS_RESULT_CM: @cm_event and @cm_status hold the rdma_cm event
 *	that ended the connection or the attempt to make one
 * @KVERBS_RESULT_MISMATCH: @mismatch_offset holds the first byte that
 *	differed from the pattern
 * @KVERBS_RESULT_REFUSED: the test was refused before it began, by a
 *	limit on tests running at once: @error is -ENFILE, -EMFILE or
 *	-EDQUOT (or -ENOMEM).  It tells a refused session from memory
 *	refused at the setup step with the same errno.
 * @KVERBS_RESULT_IMM: perf, KVERBS_PERF_F_IMM: the completion of message
 *	&kverbs_perf_result.mismatch_iter did not carry the immediate data
 *	it should have (@error -EBADMSG, @failed_step KVERBS_STEP_VALIDATE):
 *	&kverbs_perf.imm_expected is what it should have carried and, unless
 *	KVERBS_RESULT_NO_IMM, &kverbs_perf.imm_got what it did
 * @KVERBS_RESULT_NO_IMM: with KVERBS_RESULT_IMM: the completion carried
 *	no immediate data at all (no IB_WC_WITH_IMM)
 */
enum kverbs_result_flags {
	KVERBS_RESULT_WC = 1 << 0,
	KVERBS_RESULT_CM = 1 << 1,
	KVERBS_RESULT_MISMATCH = 1 << 2,
	KVERBS_RESULT_REFUSED = 1 << 3,
	KVERBS_RESULT_IMM = 1 << 4,
	KVERBS_RESULT_NO_IMM = 1 << 5,
};

/**
 * struct kverbs_ping_result - what a ping did; (out) as a whole
 * @iterations: iterations completed (server: over all clients)
 * @bytes_read: bytes moved by RDMA READ (client: read from it)
 * @bytes_written: bytes moved by RDMA WRITE (client: written to it)
 * @elapsed_ns: time from the first iteration's start to the last one's end
 * @iter_ns_min: fastest iteration
 * @iter_ns_avg: mean iteration time
 * @iter_ns_max: slowest iteration
 * @clients: server: clients whose connection was accepted
 * @clients_failed: server: clients whose session ended in an error
 * @valid: &enum kverbs_result_flags saying which fields below hold data
 * @failed_step: &enum kverbs_step of the first failure, or 0
 * @wc_status: status of the failed work completion (enum ib_wc_status,
 *	the same values as libibverbs' enum ibv_wc_status)
 * @vendor_err: the device's vendor error code for it
 * @cm_event: rdma_cm event (enum rdma_cm_event_type) that ended things
 * @cm_status: its status, a negative errno or an IB CM reject reason
 * @mismatch_offset: first differing byte when validation failed
 * @error: the failure the fields above describe, a negative errno, 0 if
 *	none.  It is the call's own error, except for a persistent server:
 *	its call ends with -EINTR, and the fields describe the last client
 *	that failed.
 */
struct kverbs_ping_result {
	__aligned_u64 iterations;
	__aligned_u64 bytes_read;
	__aligned_u64 bytes_written;
	__aligned_u64 elapsed_ns;
	__aligned_u64 iter_ns_min;
	__aligned_u64 iter_ns_avg;
	__aligned_u64 iter_ns_max;
	__u32 clients;
	__u32 clients_failed;
	__u32 valid;
	__u32 failed_step;
	__u32 wc_status;
	__u32 vendor_err;
	__u32 cm_event;
	__s32 cm_status;
	__u32 mismatch_offset;
	__s32 error;
};

/**
 * struct kverbs_ping_log - where the payload of each iteration goes
 * @buf: (in) user pointer to @slots slots of @slot_size bytes
 * @seq: (in) user pointer to a __u64 that the kernel sets to the number
 *	of iterations stored so far, after storing each one.  Iteration n
 *	is in slot n % @slots, truncated to @slot_size bytes; another
 *	thread can read it while seq - n < @slots.
 * @slots: (in) number of slots
 * @slot_size: (in) bytes per slot
 *
 * All zero when no log is wanted.  At most 64 MiB in all: @slots times
 * @slot_size, computed in 64 bits, above it fails with -EINVAL.  The
 * ring and the counter are pinned for the call; failures to pin them
 * (-EFAULT, -ENOBUFS, -EDQUOT) have @result.failed_step KVERBS_STEP_LOG.
 * Both must be private memory (malloc(), MAP_PRIVATE): a shared mapping
 * of a file, a memfd, tmpfs or MAP_SHARED | MAP_ANONYMOUS fails with
 * -EOPNOTSUPP at KVERBS_STEP_LOG, on every kernel.
 */
struct kverbs_ping_log {
	__aligned_u64 buf;
	__aligned_u64 seq;
	__u32 slots;
	__u32 slot_size;
};

/**
 * struct kverbs_ping - KVERBS_IOC_PING: run an rping-compatible ping
 * @size: sizeof(struct kverbs_ping)
 * @flags: &enum kverbs_ping_flags
 * @role: &enum kverbs_role
 * @msg_size: client: bytes per ping, from KVERBS_PING_MIN_SIZE; server:
 *	the largest ping accepted, 0 for the module's max_msg_size
 * @count: client: iterations to run; server: iterations to serve per
 *	client before hanging up; 0 for no limit
 * @__reserved0: must be 0
 * @timeout_ns: limit on each step: address and route resolution,
 *	connection set-up, and every message or RDMA operation of an
 *	iteration; 0 for the module's default (its timeout_ms parameter).
 *	A server waits for clients without limit.  At most one hour.
 * @addr: client: the server's address and port; server: the address and
 *	port to listen on, the address may be a wildcard; all zero with
 *	KVERBS_PING_F_LISTENER.  A sockaddr_in
 *	or sockaddr_in6, bytes past it zero.
 * @src_addr: client: local address to use (port 0), or all zero to let
 *	routing choose; server: must be all zero
 * @log: where to store each iteration's payload, or all zero
 * @result: (out) what happened, also filled in when the call fails
 * @inv_remote: (out) keys of this side that the peer invalidated with a
 *	SEND with invalidate, each checked to be the key this side
 *	advertised: a client's two per iteration when remote invalidation
 *	was agreed, else 0 (a server's are always 0)
 * @inv_sent: (out) SENDs with invalidate this side posted whose
 *	iteration the peer went on with or completed: a server's two per
 *	iteration, over all its clients, when agreed, else 0 (a client's
 *	are always 0).  Both exist since KVERBS_FEATURE_PING_INV, and go
 *	back, also on failure, to a caller whose struct holds them; an
 *	older module leaves them alone.
 * @path_mtu: (out) KVERBS_PING_F_UD: the active MTU of the port the ping
 *	ran on, in bytes: the largest message it takes; 0 before it is known
 * @remote_qpn: (out) KVERBS_PING_F_UD: the peer's QP number, from the
 *	server's answer (client) or the first message (server); 0 before
 * @remote_qkey: (out) KVERBS_PING_F_UD: the Q_Key the messages were sent
 *	with, rdma_cm's for its UDP port space; 0 before
 * @__reserved1: must be 0.  It and the three above exist since
 *	KVERBS_FEATURE_PING_UD; the three go back, also on failure, to a
 *	caller whose struct holds them.
 *
 * Where remote invalidation was agreed (see KVERBS_PING_F_NO_INV), a
 * go-ahead that does not invalidate exactly the key the client
 * advertised fails the client with -EPROTO at KVERBS_STEP_RECV; where
 * it was not, so does a go-ahead that invalidates any key.
 *
 * The call returns when the ping is over.  0 means every iteration
 * succeeded; on failure @result says which step failed and why.  A signal
 * ends the call with -EINTR and @result filled in, so a ping with
 * @count 0 or a persistent server ends that way.  Errors: -EINVAL for bad
 * arguments, -EMSGSIZE for a @msg_size the module or device cannot
 * register, -ETIMEDOUT when a step exceeded @timeout_ns, -ECONNREFUSED
 * when nothing listens at @addr, -EHOSTUNREACH / -ENETUNREACH when it
 * cannot be reached, -EADDRINUSE when a server's port is taken,
 * -ECONNRESET when the peer hung up mid-iteration, -EIO when a work
 * request failed, -EBADMSG when validation found a difference, -EPROTO
 * when the peer broke the ping protocol, -EACCES when the peer made an
 * RDMA access it had not been granted, -ENODEV when the RDMA device went
 * away, -ENETDOWN when its port went down, -ENETRESET when the address
 * moved to another device, -EADDRNOTAVAIL when a server's address is not
 * one of this host's, -ENFILE or -EMFILE past the module's limits on
 * tests running in all or on this file, -ENOBUFS past its limit on memory
 * held for RDMA, -EDQUOT past the caller's user's (effective uid's) limit
 * on tests running or on memory held (max_sessions_per_user,
 * max_pinned_mb_per_user; @result.valid has KVERBS_RESULT_REFUSED for
 * the first), -ENOMEM when the kernel is out of memory (@result then
 * names the step, KVERBS_STEP_SETUP if none had begun).
 */
struct kverbs_ping {
	__u32 size;
	__u32 flags;
	__u32 role;
	__u32 msg_size;
	__u32 count;
	__u32 __reserved0;
	__aligned_u64 timeout_ns;
	struct __kernel_sockaddr_storage addr;
	struct __kernel_sockaddr_storage src_addr;
	struct kverbs_ping_log log;
	struct kverbs_ping_result result;
	/* KVERBS_FEATURE_PING_INV */
	__aligned_u64 inv_remote;
	__aligned_u64 inv_sent;
	/* KVERBS_FEATURE_PING_UD */
	__u32 path_mtu;
	__u32 remote_qpn;
	__u32 remote_qkey;
	__u32 __reserved1;
};

#define KVERBS_IOC_PING		_IO(KVERBS_TYPE, KVERBS_CMD_PING)

/**
 * enum kverbs_perf_test - &kverbs_perf.test
 * @KVERBS_PERF_ANY: server only: run whatever test the client asks for
 * @KVERBS_PERF_WRITE_BW: RDMA WRITE bandwidth, as perftest's ib_write_bw
 * @KVERBS_PERF_READ_BW: RDMA READ bandwidth, as ib_read_bw
 * @KVERBS_PERF_SEND_BW: SEND bandwidth, as ib_send_bw
 * @KVERBS_PERF_READ_LAT: RDMA READ latency, as ib_read_lat: one READ at a
 *	time, each timed from its post to its completion
 * @KVERBS_PERF_ATOMIC_LAT: atomic latency, as ib_atomic_lat: one atomic
 *	operation at a time, each timed like a READ
 * @KVERBS_PERF_ATOMIC_BW: atomic operation rate, as ib_atomic_bw
 * @KVERBS_PERF_WRITE_LAT: RDMA WRITE latency, as ib_write_lat: a ping-pong,
 *	the client WRITEs a message into the server's buffer and the server,
 *	seeing it arrive, WRITEs one back
 * @KVERBS_PERF_SEND_LAT: SEND latency, as ib_send_lat: a ping-pong of
 *	SENDs, each side answering the other's
 *
 * In the two ping-pong tests, as in perftest, each latency sample is half
 * a round trip in ns: from the client's post to its seeing the server's
 * answer, divided by 2.
 * The atomic tests do fetch-and-add, or compare-and-swap with
 * KVERBS_PERF_F_CMP_SWAP, on 8-byte words; their message size is 8.
 */
enum kverbs_perf_test {
	KVERBS_PERF_ANY = 0,
	KVERBS_PERF_WRITE_BW = 1,
	KVERBS_PERF_READ_BW = 2,
	KVERBS_PERF_SEND_BW = 3,
	KVERBS_PERF_READ_LAT = 4,
	KVERBS_PERF_ATOMIC_LAT = 5,
	KVERBS_PERF_ATOMIC_BW = 6,
	KVERBS_PERF_WRITE_LAT = 7,
	KVERBS_PERF_SEND_LAT = 8,
};

/**
 * enum kverbs_perf_flags - &kverbs_perf.flags
 * @KVERBS_PERF_F_VALIDATE: client only: check every byte of every message
 *	against a pattern that carries its iteration number.  The side that
 *	receives the data checks it: the server for WRITE and SEND, the
 *	client for READ.  For WRITE and READ the test then runs in rounds
 *	of as many messages as the buffers hold, with a message between the
 *	two sides after each round, so rates are lower than without.  The
 *	atomic tests check every value fetched, and the server every word's
 *	final value.
 * @KVERBS_PERF_F_CMP_SWAP: client only, atomic tests: compare-and-swap
 *	instead of fetch-and-add
 * @KVERBS_PERF_F_LISTENER: server only: take the client from the file's
 *	listener (KVERBS_IOC_LISTEN) instead of listening on &kverbs_perf.addr,
 *	which must then be all zero.  Any number of such calls may wait on
 *	one listener at once; each serves the next client that connects.
 * @KVERBS_PERF_F_REVERSE: client only, bandwidth tests (WRITE_BW, READ_BW,
 *	SEND_BW, ATOMIC_BW): the data moves the other way.  The server
 *	posts the WRITEs, READs, SENDs or atomic operations, aimed at the
 *	client's buffer; the client offers it and, with
 *	KVERBS_PERF_F_VALIDATE, checks what arrives (WRITE, SEND) or fills
 *	what is read (the server then checks READ).  The client's result
 *	holds the server's numbers, as a server's result holds its client's.
 *	A bidirectional test is one session of each direction at once.  A
 *	server that predates the flag rejects it with
 *	KVERBS_PERF_REJECT_RESERVED.
 * @KVERBS_PERF_F_EVENTS: client: sleep until the device's completion
 *	interrupt instead of busy polling the CQ, as perftest's -e; the
 *	completions are handled in softirq context.  Less CPU, more
 *	latency.  Not for a KVERBS_PERF_WRITE_LAT client, which sees each
 *	answer only by polling memory (perftest refuses it too).  Without
 *	the flag a client busy-polls.  Server: what a server does without
 *	KVERBS_PERF_F_BUSY_POLL anyway; accepted, and excludes it.
 *	Not part of the hello, and not echoed in &kverbs_perf_result.flags.
 * @KVERBS_PERF_F_NO_REVERSE: server only: refuse a client that asks for
 *	KVERBS_PERF_F_REVERSE (the half of a bidirectional test in which the
 *	server posts the work requests) with KVERBS_PERF_REJECT_REVERSE.
 *	Feature bit: KVERBS_FEATURE_PERF_CEILINGS.
 * @KVERBS_PERF_F_BUSY_POLL: server only: busy-poll the CQ, in the
 *	calling thread, where the data path runs through the server: as
 *	the requester of the reverse direction, and as the responder of
 *	SEND_BW, SEND_LAT and WRITE_LAT.  The responder of a WRITE, READ
 *	or atomic test sleeps either way, as perftest's passive side does:
 *	it only waits for the requester's control messages.  Without the
 *	flag a server busy-polls for no client: it sleeps until the
 *	completion interrupt, its completions handled in softirq context,
 *	whatever the hello asks for; and it refuses KVERBS_PERF_WRITE_LAT,
 *	whose responder sees each message only by polling its memory, with
 *	KVERBS_PERF_REJECT_BUSY_POLL.  Busy polling costs the server a CPU
 *	for as long as any peer that reaches it asks (up to its duration
 *	ceiling, &kverbs_perf.max_duration_ns), so it is the server's
 *	choice, never the hello's.  Excludes KVERBS_PERF_F_EVENTS.
 *	Feature bit: KVERBS_FEATURE_PERF_BUSY_POLL.
 * @KVERBS_PERF_F_IMM: client only, WRITE_BW, SEND_BW, WRITE_LAT and
 *	SEND_LAT: post the data as RDMA WRITE with immediate data
 *	(IB_WR_RDMA_WRITE_WITH_IMM) or SEND with immediate data
 *	(IB_WR_SEND_WITH_IMM).  The immediate data of message i is i's low
 *	32 bits, big-endian on the wire as every immediate is; the side that
 *	receives the data checks it on every completion, and fails the
 *	test with -EBADMSG and KVERBS_RESULT_IMM when it is wrong or
 *	missing.  A WRITE with immediate data consumes a receive at the
 *	responder and completes there (IB_WC_RECV_RDMA_WITH_IMM), so the
 *	responder of WRITE_BW takes every message, as in SEND_BW.  Part of
 *	the hello and echoed in &kverbs_perf_result.flags.  Another test
 *	fails with -EINVAL; a port without immediate data (iWARP: siw;
 *	KVERBS_PORT_CAP_IMM unset) with -EOPNOTSUPP at KVERBS_STEP_SETUP, before anything is posted,
 *	and a server on one rejects the hello with KVERBS_PERF_REJECT_IMM.
 *	A server that predates the flag rejects it with
 *	KVERBS_PERF_REJECT_RESERVED.  Feature bit: KVERBS_FEATURE_PERF_IMM.
 * @KVERBS_PERF_F_RW: client only, WRITE_BW, READ_BW and READ_LAT: the
 *	requester moves its data through ib_core's rdma_rw API, as the NVMe,
 *	SCSI and NFS RDMA targets do, instead of posting each RDMA WRITE or
 *	READ itself: one rdma_rw context per message, set up with
 *	rdma_rw_ctx_init() (which DMA-maps the message's pages), posted
 *	with the work requests rdma_rw_ctx_wrs() builds, each context
 *	signaled, and destroyed (unmapped) once it completed.  rdma_rw
 *	decides per context whether the local DMA key will do or a memory
 *	registration is needed: always for an RDMA READ over iWARP, for
 *	every READ and WRITE when ib_core's force_mr module parameter is
 *	set, and where a device asks for it (max_sgl_rd); the counts in
 *	&kverbs_perf.rw_ctxs and .rw_mr_ctxs say which it chose.  With
 *	KVERBS_PERF_F_REVERSE the server's requester does it.  The latency
 *	samples of READ_LAT include rdma_rw_ctx_init().  Part of the hello
 *	and echoed in &kverbs_perf_result.flags.  Another test fails with
 *	-EINVAL: SEND and the atomics are not RDMA READ or WRITE, and
 *	WRITE_LAT's ping-pong WRITEs from and into one buffer that the peer
 *	polls, which kverbs registers for the peer; rdma_rw would map it a
 *	second time, for nothing a ULP does.  So does KVERBS_PERF_F_IMM,
 *	which rdma_rw cannot post.  A server that predates the flag rejects
 *	it with KVERBS_PERF_REJECT_RESERVED.
 *	Feature bit: KVERBS_FEATURE_PERF_RW.
 * @KVERBS_PERF_F_INV: client only, WRITE_BW, READ_BW and READ_LAT, with
 *	KVERBS_PERF_F_VALIDATE and without KVERBS_PERF_F_IMM: every round
 *	ends with the responder's key invalidated by the requester's
 *	control message, as an NVMe/RDMA target invalidates the key its
 *	host advertised.  The requester sends ROUND as a SEND with
 *	invalidate (IB_WR_SEND_WITH_INV) naming the key it used; the
 *	responder takes it only with IB_WC_WITH_INVALIDATE and that key in
 *	ex.invalidate_rkey, posts no IB_WR_LOCAL_INV, registers its buffer
 *	again under a fresh key and advertises that key in ROUND_OK for the
 *	next round.  In READ_BW and READ_LAT on a port where
 *	rdma_cap_read_inv() holds (iWARP: siw), as rdma_rw does there, each
 *	round's last READ is also an RDMA READ with invalidate
 *	(IB_WR_RDMA_READ_WITH_INV) of the requester's own sink, which is
 *	registered again before the next round; on InfiniBand and RoCE the
 *	READs are plain and the sink keeps its key.  The counts are in
 *	&kverbs_perf.inv_remote, .inv_sent and .read_inv.  A message that
 *	invalidates a key when the protocol does not say so, or does not
 *	when it does, or names another key, fails the test with -EPROTO at
 *	KVERBS_STEP_RECV, what was expected and what came in
 *	&kverbs_perf.inv_expected and .inv_got.  Another test, or the flag
 *	without KVERBS_PERF_F_VALIDATE or with KVERBS_PERF_F_IMM, fails
 *	with -EINVAL (a server rejects such a hello with
 *	KVERBS_PERF_REJECT_RESERVED); a device without SEND with invalidate
 *	(no IB_DEVICE_MEM_MGT_EXTENSIONS) with -EOPNOTSUPP at
 *	KVERBS_STEP_SETUP.  A server that predates the flag rejects it with
 *	KVERBS_PERF_REJECT_RESERVED.  Feature bit: KVERBS_FEATURE_PERF_INV.
 * @KVERBS_PERF_F_SRQ: server only: take the client's SENDs in a shared
 *	receive queue (ib_create_srq()), as nvmet-rdma does with use_srq,
 *	instead of in receives posted on the QP.  Servers of one file's
 *	listener (KVERBS_PERF_F_LISTENER) share one SRQ per RDMA device,
 *	on one PD: the first that needs it creates it, with
 *	&kverbs_perf.srq_wr receives and &kverbs_perf.srq_limit, the next
 *	ones take it as it is, and it goes when the last of them has ended
 *	and the file is closed, or with its device.  A server without
 *	the listener has an SRQ of its own.  Every receive, the client's
 *	control messages too, lands in the SRQ; the server posts each one
 *	again once it has taken its message (SEND_LAT: before it answers).
 *	Only the responder of KVERBS_PERF_SEND_BW and _SEND_LAT uses it: a
 *	server whose client asks for another test, or for the reverse
 *	direction, runs it on its QP's own receives, as without the flag,
 *	and reports &kverbs_perf.srq_wr 0, as a server that takes any
 *	client (kverbs serve) must.  A device without SRQs (max_srq 0) fails
 *	with -EOPNOTSUPP at KVERBS_STEP_SETUP (the client is rejected with
 *	KVERBS_PERF_REJECT_SETUP, value EOPNOTSUPP).  Over iWARP, which
 *	has no receiver-not-ready retry, each session reserves a window of
 *	the SRQ's receives for its client, at most the client's tx_depth
 *	and a quarter of the SRQ, and grants the client only receives
 *	posted for it (send_bw: the window in its ADV and each ROUND_OK;
 *	send_lat: one message per answer); when the other sessions'
 *	windows hold every receive, -ENOSPC at KVERBS_STEP_SETUP (the
 *	client is rejected with KVERBS_PERF_REJECT_SETUP, value ENOSPC),
 *	and a client that sends beyond its grant ends its session with
 *	-EPROTO.  The
 *	client's messages must fit the SRQ's receives (at most its
 *	server's &kverbs_perf.msg_size, or KVERBS_PERF_SRQ_MSG_SIZE),
 *	else -EMSGSIZE at KVERBS_STEP_SETUP.  Not part of the hello: a
 *	client with the flag fails with -EINVAL.
 *	Feature bit: KVERBS_FEATURE_PERF_SRQ.
 * @KVERBS_PERF_F_UD: client only, SEND_BW and SEND_LAT: the data moves
 *	in datagrams over a UD QP of each side's, as perftest's -c UD; the
 *	hello and the control messages stay on the RC connection.  Each
 *	message is a SEND with immediate data (its iteration's low 32
 *	bits) of at most the port's active MTU (&kverbs_perf.path_mtu),
 *	else -EMSGSIZE at KVERBS_STEP_SETUP before connecting.  Over
 *	iWARP, which has no UD, -EOPNOTSUPP at KVERBS_STEP_SETUP, also
 *	before connecting.  Only with KVERBS_PERF_F_VALIDATE among the
 *	other flags, no post list, CQ moderation, inline data, phases nor
 *	CQ flags: else -EINVAL.  The UD QP's CQ takes the side's poll
 *	mode, as its RC CQ does.  SEND_BW counts the
 *	datagrams that did not arrive in &kverbs_perf.lost; in SEND_LAT a
 *	lost message ends the test with -ETIMEDOUT at KVERBS_STEP_RECV.
 *	Anyone who knows a UD QP's number and Q_Key can send to it: a
 *	datagram from another QP than the peer's UD QP is no part of the
 *	test, and is dropped, its receive posted again, and counted in
 *	&kverbs_perf.foreign.
 *	A server that predates the flag rejects the hello with
 *	KVERBS_PERF_REJECT_RESERVED.  Feature bit: KVERBS_FEATURE_PERF_UD.
 * @KVERBS_PERF_F_PHASES: client only, READ_LAT, ATOMIC_LAT and SEND_LAT,
 *	with &kverbs_perf.samples: where each operation's time goes, in
 *	&kverbs_perf.phases: from the post to the run of the completion
 *	handler that ends its round trip, and from there to the waiting
 *	thread running again and seeing it.  Only a run with the flag
 *	reads the clock for them, once in the handler and once in the
 *	thread per operation (see &kverbs_perf.phases).  WRITE_LAT fails
 *	with -EINVAL, with immediate data or without: its round trip ends
 *	when the server's WRITE lands in the memory the client polls, with
 *	no completion and so no handler to time.  So does another test, a
 *	server, the flag without &kverbs_perf.samples, or without
 *	&kverbs_perf.phases and the reverse.  Not part of the hello, and
 *	not echoed in &kverbs_perf_result.flags.
 *	Feature bit: KVERBS_FEATURE_PERF_PHASES.
 */
enum kverbs_perf_flags {
	KVERBS_PERF_F_VALIDATE = 1 << 0,
	KVERBS_PERF_F_CMP_SWAP = 1 << 1,
	KVERBS_PERF_F_LISTENER = 1 << 2,
	KVERBS_PERF_F_REVERSE = 1 << 3,
	KVERBS_PERF_F_EVENTS = 1 << 4,
	KVERBS_PERF_F_NO_REVERSE = 1 << 5,
	KVERBS_PERF_F_BUSY_POLL = 1 << 6,
	KVERBS_PERF_F_IMM = 1 << 7,
	KVERBS_PERF_F_RW = 1 << 8,
	KVERBS_PERF_F_INV = 1 << 9,
	KVERBS_PERF_F_SRQ = 1 << 10,
	KVERBS_PERF_F_PHASES = 1 << 11,
	KVERBS_PERF_F_UD = 1 << 12,
};

/**
 * enum kverbs_perf_poll - &kverbs_perf.poll: how a side learns of its
 *	completions, as ib_core's &enum ib_poll_context names it
 * @KVERBS_PERF_POLL_DEFAULT: the side's default, as callers that predate
 *	the field get it: a client busy-polls (IB_POLL_DIRECT) unless
 *	KVERBS_PERF_F_EVENTS; a server busy-polls only where
 *	KVERBS_PERF_F_BUSY_POLL says and sleeps (IB_POLL_SOFTIRQ) elsewhere;
 *	with KVERBS_PERF_CQ_POOL or KVERBS_PERF_CQ_DIM, IB_POLL_SOFTIRQ
 * @KVERBS_PERF_POLL_DIRECT: IB_POLL_DIRECT: no interrupts; the test's
 *	thread polls the CQ with ib_process_cq_direct() and runs the
 *	completion handlers itself.  On every end of this side's session,
 *	the responder of a WRITE, READ or atomic test too.  A server's own
 *	choice, as KVERBS_PERF_F_BUSY_POLL, which it may also set.  Not with
 *	KVERBS_PERF_CQ_POOL or KVERBS_PERF_CQ_DIM, which need interrupts.
 * @KVERBS_PERF_POLL_SOFTIRQ: IB_POLL_SOFTIRQ: the thread sleeps; the
 *	interrupt schedules an irq_poll that runs the handlers in softirq
 *	context.  A client's KVERBS_PERF_F_EVENTS is this.
 * @KVERBS_PERF_POLL_WORKQUEUE: IB_POLL_WORKQUEUE: the thread sleeps; the
 *	handlers run in process context on ib_core's ib-comp-wq, a
 *	high-priority workqueue bound to the CPU the interrupt came on
 * @KVERBS_PERF_POLL_UNBOUND_WORKQUEUE: IB_POLL_UNBOUND_WORKQUEUE: as
 *	the workqueue, on ib-comp-unb-wq, on any CPU
 *
 * A policy other than KVERBS_PERF_POLL_DIRECT sleeps, and so is refused
 * where -e is: by a KVERBS_PERF_WRITE_LAT client with -EINVAL, by a
 * KVERBS_PERF_WRITE_LAT server with KVERBS_PERF_REJECT_BUSY_POLL.
 * Feature bit: KVERBS_FEATURE_PERF_POLL.
 */
enum kverbs_perf_poll {
	KVERBS_PERF_POLL_DEFAULT = 0,
	KVERBS_PERF_POLL_DIRECT = 1,
	KVERBS_PERF_POLL_SOFTIRQ = 2,
	KVERBS_PERF_POLL_WORKQUEUE = 3,
	KVERBS_PERF_POLL_UNBOUND_WORKQUEUE = 4,
};

/**
 * enum kverbs_perf_cq_flags - &kverbs_perf.cq_flags and &kverbs_perf_cq.flags
 * @KVERBS_PERF_CQ_POOL: take the CQ from ib_core's shared pool
 *	(ib_cq_pool_get()), as nvme-rdma, nvmet-rdma and iser do, instead of
 *	a CQ of the session's own; other ULPs' QPs on the device may share
 *	it.  The pool's CQs are softirq and workqueue ones: with
 *	KVERBS_PERF_POLL_DIRECT -EINVAL.
 * @KVERBS_PERF_CQ_DIM: the CQ must have dynamic interrupt moderation
 *	(ib_core's DIM, cq->dim), which ib_core gives a CQ that is not
 *	IB_POLL_DIRECT on a device that has ops.modify_cq and adaptive
 *	moderation on (``rdma dev set DEV adaptive-moderation on``).  A
 *	device without ops.modify_cq (rxe, siw), or with moderation off,
 *	fails the test with -EOPNOTSUPP, failed step KVERBS_STEP_SETUP (a
 *	server rejects its client with KVERBS_PERF_REJECT_SETUP, value
 *	EOPNOTSUPP).  With KVERBS_PERF_POLL_DIRECT -EINVAL.
 *
 * Feature bit: KVERBS_FEATURE_PERF_POLL.
 */
enum kverbs_perf_cq_flags {
	KVERBS_PERF_CQ_POOL = 1 << 0,
	KVERBS_PERF_CQ_DIM = 1 << 1,
};

/**
 * struct kverbs_perf_cq - the CQ a perf test ran on; (out) as a whole
 * @poll: &enum kverbs_perf_poll in effect, never KVERBS_PERF_POLL_DEFAULT;
 *	0 when no CQ was made (or a module without KVERBS_FEATURE_PERF_POLL)
 * @flags: &enum kverbs_perf_cq_flags in effect: KVERBS_PERF_CQ_POOL for a
 *	pool's CQ, KVERBS_PERF_CQ_DIM when it has adaptive moderation,
 *	whether asked for or not
 * @id: the CQ's resource id, the "cqn" of ``rdma resource show cq``
 * @comp_vector: the completion vector its interrupts arrive on
 * @cqe: the entries it holds; a pool's CQ is shared, and larger
 * @__reserved: 0
 *
 * A server's describes the CQ of the session it served.
 */
struct kverbs_perf_cq {
	__u32 poll;
	__u32 flags;
	__u32 id;
	__u32 comp_vector;
	__u32 cqe;
	__u32 __reserved;
};

/* perftest's defaults: its port, TX depth and iterations. */
#define KVERBS_PERF_DEFAULT_PORT	18515
#define KVERBS_PERF_DEFAULT_DEPTH	128
#define KVERBS_PERF_MAX_DEPTH		8192
/* The most bytes &kverbs_perf.inline_size may ask for; the device may allow fewer. */
#define KVERBS_PERF_MAX_INLINE		4096
#define KVERBS_PERF_DEFAULT_ITERS	5000
/*
 * Longest duration a test may be asked to run, one day: the absolute
 * limit.  A server's ceilings (&kverbs_perf.max_duration_ns, the module's
 * perf_max_duration_s) are lower.
 */
#define KVERBS_PERF_MAX_DURATION_NS	(86400ULL * 1000000000ULL)

/**
 * enum kverbs_perf_reject - why a perf server refused a client
 * @KVERBS_PERF_REJECT_NONE: it did not
 * @KVERBS_PERF_REJECT_MAGIC: the request was not a kverbs perf hello
 * @KVERBS_PERF_REJECT_VERSION: the hello's version is one the server does
 *	not speak; @reject_value is that version, @reject_version the
 *	server's
 * @KVERBS_PERF_REJECT_RESERVED: reserved bytes or unknown flags were set
 * @KVERBS_PERF_REJECT_TEST: the server does not run that test (it runs
 *	another, or does not know it); @reject_value is the test asked for
 * @KVERBS_PERF_REJECT_SIZE: the message size is 0 or above what the server
 *	accepts; @reject_value is the server's limit
 * @KVERBS_PERF_REJECT_DEPTH: the TX depth is 0 or above
 *	KVERBS_PERF_MAX_DEPTH; @reject_value is the limit
 * @KVERBS_PERF_REJECT_ITERS: neither or both of iterations and duration,
 *	or a duration above KVERBS_PERF_MAX_DURATION_NS
 * @KVERBS_PERF_REJECT_SETUP: the server could not set up for the test;
 *	@reject_value is its errno
 * @KVERBS_PERF_REJECT_DURATION: the duration asked for is above the
 *	server's ceiling; @reject_value is the ceiling in whole seconds,
 *	rounded down
 * @KVERBS_PERF_REJECT_ITERATIONS: the iterations asked for are above the
 *	server's ceiling; @reject_value is the ceiling, U32_MAX if larger
 * @KVERBS_PERF_REJECT_REVERSE: the server does not run the reverse
 *	direction (KVERBS_PERF_F_NO_REVERSE)
 * @KVERBS_PERF_REJECT_BUSY_POLL: the test needs the server to busy-poll
 *	(KVERBS_PERF_WRITE_LAT), which it does only with
 *	KVERBS_PERF_F_BUSY_POLL; @reject_value is the test
 * @KVERBS_PERF_REJECT_IMM: the client asked for immediate data
 *	(KVERBS_PERF_F_IMM), which the server's device does not carry
 *	(iWARP); @reject_value is the test
 *
 * KVERBS_PERF_REJECT_DURATION to _REVERSE came with
 * KVERBS_FEATURE_PERF_CEILINGS, KVERBS_PERF_REJECT_BUSY_POLL with
 * KVERBS_FEATURE_PERF_BUSY_POLL, KVERBS_PERF_REJECT_IMM with
 * KVERBS_FEATURE_PERF_IMM.
 */
enum kverbs_perf_reject {
	KVERBS_PERF_REJECT_NONE = 0,
	KVERBS_PERF_REJECT_MAGIC,
	KVERBS_PERF_REJECT_VERSION,
	KVERBS_PERF_REJECT_RESERVED,
	KVERBS_PERF_REJECT_TEST,
	KVERBS_PERF_REJECT_SIZE,
	KVERBS_PERF_REJECT_DEPTH,
	KVERBS_PERF_REJECT_ITERS,
	KVERBS_PERF_REJECT_SETUP,
	KVERBS_PERF_REJECT_DURATION,
	KVERBS_PERF_REJECT_ITERATIONS,
	KVERBS_PERF_REJECT_REVERSE,
	KVERBS_PERF_REJECT_BUSY_POLL,
	KVERBS_PERF_REJECT_IMM,
};

/**
 * struct kverbs_perf_result - what a perf test did; (out) as a whole
 * @iterations: messages completed
 * @bytes: bytes moved, @iterations times @msg_size
 * @elapsed_ns: from the first message posted to the last one completed
 * @peak_bps: highest rate over any interval of at least a millisecond,
 *	in bytes per second; the average when the test was shorter
 * @avg_bps: average rate, bytes per second
 * @msg_rate: average rate, messages per second
 * @test: the test that ran (server: the one the client asked for)
 * @msg_size: bytes per message
 * @tx_depth: work requests kept outstanding
 * @flags: &enum kverbs_perf_flags in effect
 * @count: iterations asked for, 0 in duration mode
 * @duration_ns: duration asked for, 0 in iterations mode
 * @ibdev: the RDMA device the test ran on, NUL-terminated
 * @port_num: its port
 * @transport: &enum kverbs_transport
 * @link_layer: &enum kverbs_link_layer
 * @active_mtu: the port's path MTU in bytes
 * @valid: &enum kverbs_result_flags saying which failure fields hold data
 * @failed_step: &enum kverbs_step of the first failure, or 0
 * @wc_status: status of the failed work completion (enum ib_wc_status)
 * @vendor_err: the device's vendor error code for it
 * @cm_event: rdma_cm event (enum rdma_cm_event_type) that ended things
 * @cm_status: its status, a negative errno or an IB CM reject reason
 * @mismatch_offset: first differing byte in its message when validation
 *	failed
 * @error: the failure the fields describe, a negative errno, 0 if none
 * @mismatch_iter: the iteration whose message failed validation; for
 *	the server of an atomic test, the index of the word whose final
 *	value was wrong
 * @reject_reason: &enum kverbs_perf_reject: why the server refused the
 *	client's hello (server: why it refused it), 0 if it did not
 * @reject_value: what the reason refers to, see &enum kverbs_perf_reject
 * @reject_version: the hello version the server speaks
 * @samples_stored: latency tests: entries written to &kverbs_perf.samples,
 *	and with KVERBS_PERF_F_PHASES pairs to &kverbs_perf.phases
 */
struct kverbs_perf_result {
	__aligned_u64 iterations;
	__aligned_u64 bytes;
	__aligned_u64 elapsed_ns;
	__aligned_u64 peak_bps;
	__aligned_u64 avg_bps;
	__aligned_u64 msg_rate;
	__u32 test;
	__u32 msg_size;
	__u32 tx_depth;
	__u32 flags;
	__aligned_u64 count;
	__aligned_u64 duration_ns;
	char ibdev[KVERBS_DEVICE_NAME_MAX];
	__u32 port_num;
	__u32 transport;
	__u32 link_layer;
	__u32 active_mtu;
	__u32 valid;
	__u32 failed_step;
	__u32 wc_status;
	__u32 vendor_err;
	__u32 cm_event;
	__s32 cm_status;
	__u32 mismatch_offset;
	__s32 error;
	__aligned_u64 mismatch_iter;
	__u32 reject_reason;
	__u32 reject_value;
	__u32 reject_version;
	__u32 samples_stored;
};

/**
 * struct kverbs_perf - KVERBS_IOC_PERF: run a perftest-style test
 * @size: sizeof(struct kverbs_perf)
 * @flags: &enum kverbs_perf_flags; a server's may only be
 *	KVERBS_PERF_F_LISTENER, KVERBS_PERF_F_EVENTS or
 *	KVERBS_PERF_F_BUSY_POLL, and KVERBS_PERF_F_NO_REVERSE
 * @role: &enum kverbs_role
 * @test: client: &enum kverbs_perf_test, not KVERBS_PERF_ANY; server: the
 *	test it runs, or KVERBS_PERF_ANY for whatever the client asks
 * @msg_size: client: bytes per message, at least 1; server: the largest
 *	accepted, 0 for the module's max_msg_size.  At most max_msg_size.
 * @tx_depth: client: work requests kept outstanding, 0 for
 *	KVERBS_PERF_DEFAULT_DEPTH, at most KVERBS_PERF_MAX_DEPTH (and what
 *	the device allows); server: must be 0
 * @iterations: client: messages to move; server: must be 0
 * @duration_ns: client: run this long instead, at most
 *	KVERBS_PERF_MAX_DURATION_NS; exactly one of @iterations and
 *	@duration_ns is non-zero.  Server: must be 0.
 * @timeout_ns: limit on each step and on the silence of the peer; 0 for
 *	the module's timeout_ms; at most one hour.  A server waits for its
 *	client to connect without limit, and once connected allows it twice
 *	this between messages, so that a stalled test is ended by the client,
 *	which can tell why.
 * @addr: client: the server's address and port; server: the address and
 *	port to listen on, the address may be a wildcard.  A sockaddr_in or
 *	sockaddr_in6, bytes past it zero.
 * @src_addr: client: local address to use (port 0), or all zero; server:
 *	must be all zero
 * @result: (out) what happened, also filled in when the call fails
 * @samples: client, latency tests: user pointer to an array of
 *	@samples_max __u64, where the time of each operation goes, in ns
 *	and in order (half of each round trip for KVERBS_PERF_WRITE_LAT and
 *	_SEND_LAT); or 0 for none.  A latency test ends when the array is
 *	full, in duration mode too.  Must be 0 for other tests and servers.
 * @samples_max: entries in @samples, 0 if none.  The array,
 *	@samples_max * 8 bytes computed in 64 bits on every kernel, is
 *	pinned for the call: longer than the module's max_pinned_mb allows
 *	fails with -ENOBUFS, than max_pinned_mb_per_user allows with
 *	-EDQUOT, both with @result.failed_step KVERBS_STEP_SAMPLES; not in
 *	the caller's writable memory with -EFAULT (at once, with @result
 *	zero, when it lies outside user space); in a shared mapping with
 *	-EOPNOTSUPP, as &kverbs_ping_log.
 * @poll: &enum kverbs_perf_poll: how this side learns of its completions;
 *	larger than KVERBS_PERF_POLL_UNBOUND_WORKQUEUE -EINVAL.  A client's
 *	KVERBS_PERF_F_EVENTS goes only with KVERBS_PERF_POLL_SOFTIRQ or
 *	the default, a server's KVERBS_PERF_F_EVENTS the same way and its
 *	KVERBS_PERF_F_BUSY_POLL only with KVERBS_PERF_POLL_DIRECT or the
 *	default, else -EINVAL.  Each side's own choice: not in the hello.
 * @cq_flags: &enum kverbs_perf_cq_flags; unknown bits -EINVAL
 * @max_duration_ns: server: the longest duration a client may ask for,
 *	and how long any of its sessions may run, in either mode: a session
 *	still running one step timeout past it is ended with -ETIME.  0 for
 *	the module's perf_max_duration_s; above it -EINVAL: a server may
 *	lower the module's ceiling, not raise it.  Client: must be 0.
 * @max_iterations: server: the most iterations a client may ask for; 0
 *	for the module's perf_max_iterations, above it -EINVAL.  Client:
 *	must be 0.
 * @imm_expected: (out) with KVERBS_RESULT_IMM in @result.valid: the
 *	immediate data message @result.mismatch_iter should have carried,
 *	in host byte order; else 0
 * @imm_got: (out) ... and what its completion carried, in host byte
 *	order; 0 with KVERBS_RESULT_NO_IMM.  Both exist since
 *	KVERBS_FEATURE_PERF_IMM: an older module leaves them alone.
 * @cq: (out) the CQ this side ran on, written back with @result when the
 *	caller's struct is large enough to hold it.  Feature bit:
 *	KVERBS_FEATURE_PERF_POLL.
 * @post_list: client, bandwidth tests: data work requests chained into
 *	each ib_post_send() call, as perftest's -l; 0 or 1 for one at a
 *	time.  At most the TX depth; the latency tests, one operation in
 *	flight, take only 0 or 1.  Else -EINVAL.  Server: must be 0.
 * @cq_mod: client, bandwidth tests: one data work request in @cq_mod is
 *	signaled (the last of a run always), as perftest's -Q; 0 for a
 *	quarter of the work requests in flight.  At most the TX depth, and
 *	taken as the work requests in flight where --validate's rounds hold
 *	fewer; the latency tests take only 0 or 1.  Else -EINVAL.  Server:
 *	must be 0.
 * @inline_size: client, tests that WRITE or SEND: data messages of up to
 *	this many bytes are posted inline (IB_SEND_INLINE), the CPU copying
 *	them into the work request, as perftest's -I; 0 for none.  At most
 *	KVERBS_PERF_MAX_INLINE, else -EINVAL, as for READ and atomic tests.
 *	A device whose QPs cannot hold that much inline fails the test with
 *	-EOPNOTSUPP at KVERBS_STEP_SETUP (a server rejects its client with
 *	KVERBS_PERF_REJECT_SETUP, value EOPNOTSUPP).  Server: must be 0.
 * @max_inline: (out) the inline data the QP of this side holds, as the
 *	device made it; 0 when no inline data was asked for
 * @__reserved: must be 0
 * @rw_ctxs: (out) with KVERBS_PERF_F_RW: the rdma_rw contexts the
 *	requester posted, one per message; a responder's are its
 *	requester's, as its DONE said (then the messages completed).  0
 *	without the flag.
 * @rw_mr_ctxs: (out) ... and of them, those for which rdma_rw registered
 *	memory (an IB_WR_REG_MR in the context's work requests) rather than
 *	using the PD's local DMA key.  Both are written back with @result
 *	when the caller's struct holds them.  Feature bit:
 *	KVERBS_FEATURE_PERF_RW.
 * @inv_remote: (out) KVERBS_PERF_F_INV: messages that invalidated this
 *	side's key, each checked to name the key it advertised: the
 *	responder's count of rounds
 * @inv_sent: (out) ... SENDs with invalidate this side posted whose
 *	round the peer answered: the requester's count of rounds
 * @read_inv: (out) ... RDMA READs with invalidate this side posted and
 *	saw complete, each invalidating its own sink: the requester of
 *	READ_BW and READ_LAT where rdma_cap_read_inv() holds, else 0
 * @inv_expected: (out) with -EPROTO for an invalidation the protocol did
 *	not expect: the key the message should have invalidated, 0 for none
 * @inv_got: (out) ... and the key it did invalidate, 0 for none.  The
 *	five exist since KVERBS_FEATURE_PERF_INV, and go back to a caller
 *	whose struct holds them; an older module leaves them alone.
 * @srq_wr: server, KVERBS_PERF_F_SRQ: the receives of an SRQ this call
 *	creates, 0 for KVERBS_PERF_SRQ_DEFAULT_WR, at most the device's
 *	max_srq_wr (-EINVAL above KVERBS_PERF_SRQ_MAX_WR; -EOPNOTSUPP at
 *	KVERBS_STEP_SETUP above the device's).  (out) the receives of the
 *	SRQ the session ran on, 0 when it ran without one.  Client: must
 *	be 0.
 * @srq_limit: server, KVERBS_PERF_F_SRQ: the limit armed on an SRQ this
 *	call creates (ib_modify_srq() with IB_SRQ_LIMIT), 0 for a quarter
 *	of its receives; at most @srq_wr, else -EINVAL.  The device raises
 *	IB_EVENT_SRQ_LIMIT_REACHED once fewer receives than this are
 *	posted, and disarms the limit; kverbs arms it again as soon as the
 *	server has posted the receives back up to it.  (out) the SRQ's
 *	limit.  Client: must be 0.
 * @srq_limit_events: (out) the IB_EVENT_SRQ_LIMIT_REACHED events of the
 *	SRQ, over its life until this session ended
 * @srq_shared: (out) the QPs that have used the SRQ, this one included,
 *	until this session ended.  The four exist since
 *	KVERBS_FEATURE_PERF_SRQ and go back to a caller whose struct holds
 *	them; an older module leaves them alone.
 * @__reserved_srq: must be 0
 * @ended_ns: (out) when this side's measured phase ended, in ns of
 *	CLOCK_REALTIME: the instant @result.elapsed_ns runs up to, so the
 *	test's messages moved between @ended_ns - elapsed_ns and @ended_ns
 *	on this host's clock, however long the connection's setup and
 *	teardown took around them.  A responder's phase ends when its
 *	requester's DONE arrives.  0 when no test ran to a measured end
 *	(a failure before it; a responder whose test failed).  Goes back
 *	to a caller whose struct holds it; an older module leaves it alone.
 * @phases: client, KVERBS_PERF_F_PHASES: user pointer to an array of
 *	2 * @samples_max __u64, written as @samples is: for operation i,
 *	entry 2i is the ns from just before its post (the time @samples
 *	starts from) to the run of the completion handler that ends its
 *	round trip (the RDMA READ's or atomic's own completion; SEND_LAT:
 *	the receive of the server's answer), and entry 2i + 1 the ns from
 *	there to the waiting thread running again and seeing it.  Both are
 *	of the whole round trip: not halved, as SEND_LAT's @samples are.
 *	Under KVERBS_PERF_POLL_DIRECT the thread runs the handler itself;
 *	otherwise the second phase holds the wake-up and the scheduler.
 *	Both 0 for an operation whose completion the thread had not seen
 *	when a failure or a signal ended the test.  The array,
 *	@samples_max * 16 bytes computed in 64 bits, is pinned as @samples
 *	is, with the same errors and failed step, its bytes counted
 *	against the limits beside @samples'; @result.samples_stored counts
 *	its pairs too.  0 without the flag.  Input only: an older caller's
 *	struct, without it, asks for no phases.
 *	Feature bit: KVERBS_FEATURE_PERF_PHASES.
 * @lost: (out) KVERBS_PERF_F_UD, SEND_BW: the datagrams the requester
 *	sent that the responder did not receive; 0 otherwise
 * @path_mtu: (out) KVERBS_PERF_F_UD: the active MTU of the port, in
 *	bytes: the largest message a datagram carries; 0 before it is known
 * @foreign: (out) KVERBS_PERF_F_UD: the datagrams from another QP than
 *	the peer's UD QP that this side received and dropped; 0 otherwise.
 *	These three go back, also on failure, to a caller whose struct
 *	holds them.  Feature bits: KVERBS_FEATURE_PERF_UD, and for @foreign
 *	KVERBS_FEATURE_PERF_UD_FOREIGN (before it, the word was reserved
 *	and had to be 0; it is now ignored on input).
 *
 * @post_list, @cq_mod and @inline_size are the requester's, and travel in
 * the hello when the server posts data work requests too: @post_list
 * and @cq_mod with KVERBS_PERF_F_REVERSE, @inline_size with it and in the
 * ping-pong tests.  A server that predates them then rejects the hello
 * with KVERBS_PERF_REJECT_RESERVED.  Feature bit: KVERBS_FEATURE_PERF_POST.
 *
 * A server serves one client and returns.  The client's request travels
 * in the connection request as a versioned hello; a server that cannot
 * run it rejects the connection and says why (@result.reject_reason).
 * A signal ends the call with -EINTR and @result filled in.  Errors are
 * those of KVERBS_IOC_PING, and: -ECONNREFUSED with @result.reject_reason
 * set when the server refused the request; a server refusing a request
 * fails with -EPROTO (a hello it does not understand), -EPROTONOSUPPORT
 * (another version), -EMSGSIZE (too large a message), -EINVAL (other
 * values out of range), -EOPNOTSUPP (another test, the reverse
 * direction it refuses, or a test it would have to busy-poll for
 * without KVERBS_PERF_F_BUSY_POLL) or -ERANGE (a duration or iterations above its
 * ceilings).  A server with
 * KVERBS_PERF_F_LISTENER on a file that does not listen fails with
 * -EINVAL, as accept(2) does.
 */
struct kverbs_perf {
	__u32 size;
	__u32 flags;
	__u32 role;
	__u32 test;
	__u32 msg_size;
	__u32 tx_depth;
	__aligned_u64 iterations;
	__aligned_u64 duration_ns;
	__aligned_u64 timeout_ns;
	struct __kernel_sockaddr_storage addr;
	struct __kernel_sockaddr_storage src_addr;
	struct kverbs_perf_result result;
	__aligned_u64 samples;
	__u32 samples_max;
	__u16 poll;
	__u16 cq_flags;
	__aligned_u64 max_duration_ns;
	__aligned_u64 max_iterations;
	__u32 imm_expected;
	__u32 imm_got;
	struct kverbs_perf_cq cq;
	__u16 post_list;
	__u16 cq_mod;
	__u32 inline_size;
	__u32 max_inline;
	__u32 __reserved;
	/* KVERBS_FEATURE_PERF_RW */
	__aligned_u64 rw_ctxs;
	__aligned_u64 rw_mr_ctxs;
	/* KVERBS_PERF_F_INV's report: KVERBS_FEATURE_PERF_INV */
	__aligned_u64 inv_remote;
	__aligned_u64 inv_sent;
	__aligned_u64 read_inv;
	__u32 inv_expected;
	__u32 inv_got;
	/* KVERBS_PERF_F_SRQ: KVERBS_FEATURE_PERF_SRQ */
	__u32 srq_wr;
	__u32 srq_limit;
	__aligned_u64 srq_limit_events;
	__u32 srq_shared;
	__u32 __reserved_srq;
	__aligned_u64 ended_ns;
	/* KVERBS_PERF_F_PHASES: KVERBS_FEATURE_PERF_PHASES */
	__aligned_u64 phases;
	/* KVERBS_PERF_F_UD: KVERBS_FEATURE_PERF_UD */
	__aligned_u64 lost;
	__u32 path_mtu;
	/* KVERBS_FEATURE_PERF_UD_FOREIGN */
	__u32 foreign;
};

/* KVERBS_PERF_F_SRQ: the SRQ's receives by default, and at most. */
#define KVERBS_PERF_SRQ_DEFAULT_WR	256
#define KVERBS_PERF_SRQ_MAX_WR		16384
/*
 * ... the largest message in them when the server sets no msg_size; and
 * the most memory they take, receives times their size, else -EINVAL.
 */
#define KVERBS_PERF_SRQ_MSG_SIZE	65536
#define KVERBS_PERF_SRQ_MAX_BYTES	(64U << 20)

#define KVERBS_IOC_PERF		_IO(KVERBS_TYPE, KVERBS_CMD_PERF)

/**
 * struct kverbs_listen - KVERBS_IOC_LISTEN: listen for this file's servers
 * @size: sizeof(struct kverbs_listen)
 * @flags: must be 0
 * @addr: the address and port to listen on, a sockaddr_in or sockaddr_in6,
 *	bytes past it zero; the address may be a wildcard, the port not 0.
 *	The IPv6 wildcard takes IPv4 clients too over InfiniBand and RoCE,
 *	whatever net.ipv6.bindv6only says; so does a server's own listener.
 *	Over iWARP (siw) an IPv4 client of it is reset.
 * @__reserved: must be 0
 *
 * Binds a listener that lives as long as the open file.  Servers started
 * with KVERBS_PERF_F_LISTENER take their clients from it: a process that
 * runs several of them at once, in threads, serves several clients at
 * once on one port, and one that runs them one after another leaves no
 * moment in which a client finds the port closed.  A listener bound to
 * one address ends with its RDMA device: the servers waiting on it fail
 * with -ENODEV, and so does every one after.
 *
 * Errors: -EBUSY when the file listens already, -EADDRINUSE when the port
 * is taken, -EADDRNOTAVAIL when the address is not local, -EINVAL for a
 * bad address or flags, -ENOMEM.
 */
struct kverbs_listen {
	__u32 size;
	__u32 flags;
	struct __kernel_sockaddr_storage addr;
	__aligned_u64 __reserved;
};

#define KVERBS_IOC_LISTEN	_IO(KVERBS_TYPE, KVERBS_CMD_LISTEN)

/**
 * enum kverbs_lesson_id - &kverbs_lesson.lesson: the classic verbs mistakes
 * @KVERBS_LESSON_UNSIGNALED: unsignaled sends fill the send queue.  Wrong:
 *	a burst of unsignaled RDMA WRITEs, never a signaled one, until
 *	ib_post_send() fails (-ENOMEM).  Right: one in four signaled, and
 *	no more posted than the queue holds until a signaled one completed.
 * @KVERBS_LESSON_RNR: a SEND to a peer with no receive posted.  Wrong:
 *	rnr_retry_count 0, the SEND completes with IB_WC_RNR_RETRY_EXC_ERR.
 *	Right: rnr_retry_count 7, the SEND waits and completes once the
 *	receive is posted.  Not on iWARP, which has no receiver-not-ready.
 * @KVERBS_LESSON_FENCE: an RDMA READ followed by a SEND of the data it
 *	reads.  Wrong: no IB_SEND_FENCE, the SEND may carry what the buffer
 *	held before the READ landed.  Right: the SEND fenced.
 * @KVERBS_LESSON_ACCESS: access rights.  Wrong: an RDMA WRITE to an MR
 *	registered without remote write, then an atomic to an MR without
 *	remote atomic (not on devices without atomics).  Right: both with
 *	local write, remote write and remote atomic.
 * @KVERBS_LESSON_STALE_KEY: an rkey used after its owner invalidated it.
 *	Wrong: the server invalidates its MR (IB_WR_LOCAL_INV), the client
 *	then RDMA WRITEs with the key it was given, the WRITE completes with
 *	IB_WC_REM_ACCESS_ERR.  Right: the server registers again under a new
 *	key (ib_update_fast_reg_key(), IB_WR_REG_MR), the client WRITEs with
 *	that one.
 * @KVERBS_LESSON_MAX_SGE: a work request beyond what its QP was created
 *	for.  Wrong: a SEND with one scatter/gather entry more than the QP's
 *	max_send_sge; an inline SEND one byte over its max_inline_data: each
 *	refused by ib_post_send() (-EINVAL on rxe and siw).  Right: a QP
 *	created with four entries, a SEND gathering four pieces.
 * @KVERBS_LESSON_ALIGN: an atomic on an address that is not 8-byte
 *	aligned.  Wrong: fetch-and-add at an offset of 4, refused by
 *	ib_post_send() (-EINVAL on rxe; not run on devices without atomics).
 *	Right: the same at an offset of 8.
 * @KVERBS_LESSON_MR_SIZE: a buffer larger than one MR maps.  Wrong: one
 *	page more than the device's max_fast_reg_page_list_len, mapped into
 *	an MR allocated for that many: ib_map_mr_sg() maps fewer entries
 *	than given (rxe) or none (siw, -ENOMEM).  Right: the buffer split
 *	across two MRs, an RDMA WRITE to each.
 */
enum kverbs_lesson_id {
	KVERBS_LESSON_UNSIGNALED = 1,
	KVERBS_LESSON_RNR,
	KVERBS_LESSON_FENCE,
	KVERBS_LESSON_ACCESS,
	KVERBS_LESSON_STALE_KEY,
	KVERBS_LESSON_MAX_SGE,
	KVERBS_LESSON_ALIGN,
	KVERBS_LESSON_MR_SIZE,
};

/* Runs a lesson reports at most: &kverbs_lesson.runs. */
#define KVERBS_LESSON_MAX_RUNS	4

/**
 * enum kverbs_lesson_kind - &kverbs_lesson_run.kind
 * @KVERBS_LESSON_WRONG: the mistake
 * @KVERBS_LESSON_RIGHT: the same operation done right
 */
enum kverbs_lesson_kind {
	KVERBS_LESSON_WRONG = 1,
	KVERBS_LESSON_RIGHT = 2,
};

/**
 * struct kverbs_lesson_run - one run of a lesson, on a connection of its
 *	own; (out) as a whole
 * @kind: &enum kverbs_lesson_kind
 * @error: how the run ended: 0 when the operation succeeded, else a
 *	negative errno: the post's (@post_error), -EIO when a work request
 *	failed (@wc_status), -EBADMSG when the data that arrived is not
 *	what the operation was meant to move, -ETIMEDOUT
 * @post_error: the errno ib_post_send() returned, 0 if every post
 *	succeeded
 * @posted: work requests the run posted successfully
 * @valid: &enum kverbs_result_flags for the fields below
 * @step: &enum kverbs_step of the failure, 0 if none
 * @wc_status: the requester's failed completion (enum ib_wc_status)
 * @vendor_err: its vendor error
 * @cm_event: the rdma_cm event that ended the connection, if one did
 * @cm_status: its status
 * @peer_error: the responder's failure, 0 if it saw none: -EACCES when its
 *	QP reported an access error (IB_EVENT_QP_ACCESS_ERR)
 * @peer_valid: &enum kverbs_result_flags for @peer_wc_status
 * @peer_wc_status: the responder's failed completion, if it had one
 * @queue_depth: the send queue's depth as the device made it
 *	(ib_query_qp()'s max_send_wr), 0 if the lesson did not ask
 * @elapsed_ns: from the run's first post to its last completion
 * @value: what the run measured: the atomic's original value, the first
 *	8 bytes that arrived, the QP's limit a refused post went past
 *	(max_send_sge or max_inline_data as the device made them), the
 *	stale and the new rkey (the stale one in the upper 32 bits), the
 *	pages one MR mapped, or 0
 */
struct kverbs_lesson_run {
	__u32 kind;
	__s32 error;
	__s32 post_error;
	__u32 posted;
	__u32 valid;
	__u32 step;
	__u32 wc_status;
	__u32 vendor_err;
	__u32 cm_event;
	__s32 cm_status;
	__s32 peer_error;
	__u32 peer_valid;
	__u32 peer_wc_status;
	__u32 queue_depth;
	__aligned_u64 elapsed_ns;
	__aligned_u64 value;
};

/**
 * struct kverbs_lesson - KVERBS_IOC_LESSON: show a classic verbs mistake
 * @size: sizeof(struct kverbs_lesson)
 * @flags: must be 0
 * @lesson: (in) &enum kverbs_lesson_id
 * @__reserved0: must be 0
 * @timeout_ns: (in) limit on each step, 0 for the module's default; at
 *	most one hour
 * @addr: (in) a local address of the RDMA device to run on, a sockaddr_in
 *	or sockaddr_in6 with port 0, bytes past it zero
 * @__reserved1: must be 0
 * @nruns: (out) runs in @runs
 * @error: (out) the lesson's own failure, 0 when every run ran (whatever
 *	each run's outcome): as @runs' fields, for setting up a connection
 * @failed_step: (out) &enum kverbs_step of @error
 * @runs: (out) the wrong way first, then the right way
 *
 * The lesson runs in the kernel, in the caller's thread, against itself:
 * it listens on @addr's device on a port of its own, connects to itself,
 * and gives each run a fresh connection, PD, CQ, QPs and MRs, all torn
 * down before the call returns.  It counts as one test against the
 * limits on sessions (max_sessions and the rest, -ENFILE, -EMFILE,
 * -EDQUOT) and on memory held for RDMA.  The work requests go through
 * the tracepoints kverbs_post_send and kverbs_wc like any test's.
 *
 * Return: 0 when the lesson ran (the runs say how each ended), -EINVAL
 * for bad arguments, -ENOENT for an unknown @lesson, -EOPNOTSUPP when the
 * device cannot show it (RNR on iWARP, alignment without atomics,
 * mr_size without fast registration or past 1024 pages per MR),
 * -EADDRNOTAVAIL when @addr is not a local address, or the error of
 * setting up a connection (@error, @failed_step).
 */
struct kverbs_lesson {
	__u32 size;
	__u32 flags;
	__u32 lesson;
	__u32 __reserved0;
	__aligned_u64 timeout_ns;
	struct __kernel_sockaddr_storage addr;
	__u32 __reserved1;
	__u32 nruns;
	__s32 error;
	__u32 failed_step;
	struct kverbs_lesson_run runs[KVERBS_LESSON_MAX_RUNS];
};

#define KVERBS_IOC_LESSON	_IO(KVERBS_TYPE, KVERBS_CMD_LESSON)

#endif /* _UAPI_KVERBS_H */
