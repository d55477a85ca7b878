// SPDX-License-Identifier: GPL-2.0
/*
 * Words for the numbers the kernel reports, and the one-line explanation
 * of a failed ping.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "kverbs.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *kv_lookup(const char *const *names, size_t n, uint32_t v)
{
	return v < n && names[v] ? names[v] : "unknown";
}

/* Work completion status, enum ib_wc_status / ibv_wc_status. */
const char *kv_wc_status_str(uint32_t status)
{
	static const char *const names[] = {
		"success", "local length error", "local QP operation error",
		"local EE context operation error", "local protection error",
		"work request flushed", "memory window bind error",
		"bad response", "local access error",
		"remote invalid request error", "remote access error",
		"remote operation error", "transport retry counter exceeded",
		"RNR retry counter exceeded", "local RDD violation",
		"remote invalid RD request", "remote operation aborted",
		"invalid EE context number", "invalid EE context state",
		"fatal error", "response timeout", "general error",
	};

	return kv_lookup(names, ARRAY_SIZE(names), status);
}

/* Short names of enum kverbs_step, as used in JSON. */
const char *kv_step_str(uint32_t step)
{
	static const char *const names[] = {
		[KVERBS_STEP_NONE] = "none",
		[KVERBS_STEP_SETUP] = "setup",
		[KVERBS_STEP_RESOLVE_ADDR] = "resolve_addr",
		[KVERBS_STEP_RESOLVE_ROUTE] = "resolve_route",
		[KVERBS_STEP_LISTEN] = "listen",
		[KVERBS_STEP_CONNECT] = "connect",
		[KVERBS_STEP_ACCEPT] = "accept",
		[KVERBS_STEP_REG_MR] = "reg_mr",
		[KVERBS_STEP_SEND] = "send",
		[KVERBS_STEP_RECV] = "recv",
		[KVERBS_STEP_RDMA_READ] = "rdma_read",
		[KVERBS_STEP_RDMA_WRITE] = "rdma_write",
		[KVERBS_STEP_LOCAL_INV] = "local_inv",
		[KVERBS_STEP_VALIDATE] = "validate",
		[KVERBS_STEP_LOG] = "log",
		[KVERBS_STEP_HELLO] = "hello",
		[KVERBS_STEP_ATOMIC] = "atomic",
		[KVERBS_STEP_SAMPLES] = "samples",
	};

	return kv_lookup(names, ARRAY_SIZE(names), step);
}

/* The operation of a step, for "... failed: <status>". */
const char *kv_step_op_str(uint32_t step)
{
	static const char *const names[] = {
		[KVERBS_STEP_REG_MR] = "memory registration",
		[KVERBS_STEP_SEND] = "SEND",
		[KVERBS_STEP_RECV] = "RECV",
		[KVERBS_STEP_RDMA_READ] = "RDMA READ",
		[KVERBS_STEP_RDMA_WRITE] = "RDMA WRITE",
		[KVERBS_STEP_LOCAL_INV] = "invalidation",
		[KVERBS_STEP_ATOMIC] = "atomic operation",
	};

	return kv_lookup(names, ARRAY_SIZE(names), step);
}

/* enum rdma_cm_event_type */
const char *kv_cm_event_str(uint32_t event)
{
	static const char *const names[] = {
		"ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR",
		"CONNECT_REQUEST", "CONNECT_RESPONSE", "CONNECT_ERROR",
		"UNREACHABLE", "REJECTED", "ESTABLISHED", "DISCONNECTED",
		"DEVICE_REMOVAL", "MULTICAST_JOIN", "MULTICAST_ERROR",
		"ADDR_CHANGE", "TIMEWAIT_EXIT",
	};

	return kv_lookup(names, ARRAY_SIZE(names), event);
}

const char *kv_errno_name(int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ EINVAL, "EINVAL" }, { EMSGSIZE, "EMSGSIZE" },
		{ ETIMEDOUT, "ETIMEDOUT" }, { ECONNREFUSED, "ECONNREFUSED" },
		{ EHOSTUNREACH, "EHOSTUNREACH" }, { ENETUNREACH, "ENETUNREACH" },
		{ EADDRINUSE, "EADDRINUSE" }, { EADDRNOTAVAIL, "EADDRNOTAVAIL" },
		{ ECONNRESET, "ECONNRESET" }, { ECONNABORTED, "ECONNABORTED" },
		{ EIO, "EIO" }, { EBADMSG, "EBADMSG" }, { EPROTO, "EPROTO" },
		{ EPROTONOSUPPORT, "EPROTONOSUPPORT" },
		{ ENODEV, "ENODEV" }, { EINTR, "EINTR" }, { ENOMEM, "ENOMEM" },
		{ EFAULT, "EFAULT" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ ENETRESET, "ENETRESET" }, { ENOSPC, "ENOSPC" },
		{ E2BIG, "E2BIG" }, { ENOTTY, "ENOTTY" }, { EBUSY, "EBUSY" },
		{ ENFILE, "ENFILE" }, { EMFILE, "EMFILE" }, { ENOBUFS, "ENOBUFS" },
		{ ENETDOWN, "ENETDOWN" }, { EACCES, "EACCES" },
		/* A perf server's ceilings: a hello over them, a session past them. */
		{ ERANGE, "ERANGE" }, { ETIME, "ETIME" },
		{ EDQUOT, "EDQUOT" }, { ENOENT, "ENOENT" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].err == err)
			return names[i].name;
	return "unknown";
}

const char *kv_port_state_str(uint32_t state)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	return kv_lookup(names, ARRAY_SIZE(names), state);
}

/* IBTA physical port states, as rdma-core's tools name them. */
const char *kv_phys_state_str(uint32_t state)
{
	static const char *const names[] = {
		[1] = "SLEEP", [2] = "POLLING", [3] = "DISABLED",
		[4] = "PORT_CONFIGURATION_TRAINING", [5] = "LINK_UP",
		[6] = "LINK_ERROR_RECOVERY", [7] = "PHY_TEST",
	};

	return kv_lookup(names, ARRAY_SIZE(names), state);
}

const char *kv_link_layer_str(uint32_t ll)
{
	static const char *const names[] = {
		"unspecified", "InfiniBand", "Ethernet",
	};

	return kv_lookup(names, ARRAY_SIZE(names), ll);
}

const char *kv_node_type_str(uint32_t type)
{
	static const char *const names[] = {
		"unspecified", "CA", "switch", "router", "RNIC", "usNIC",
		"usNIC UDP",
	};

	return kv_lookup(names, ARRAY_SIZE(names), type);
}

const char *kv_transport_str(uint32_t transport)
{
	static const char *const names[] = {
		"InfiniBand", "iWARP", "usNIC", "usNIC UDP", "unspecified",
	};

	return kv_lookup(names, ARRAY_SIZE(names), transport);
}

const char *kv_atomic_cap_str(uint32_t cap)
{
	static const char *const names[] = { "none", "HCA", "global" };

	return kv_lookup(names, ARRAY_SIZE(names), cap);
}

/* The IB CM reject reason "invalid service ID": nothing listens there. */
#define KV_IB_CM_REJ_INVALID_SERVICE_ID	8
#define KV_IB_CM_REJ_CONSUMER_DEFINED	28

static bool kv_no_listener(const struct kverbs_ping_result *res)
{
	/*
	 * siw makes an iWARP connect's TCP connection synchronously: a port
	 * with no listener fails rdma_connect() itself, with no CM event.
	 */
	if (!(res->valid & KVERBS_RESULT_CM))
		return res->error == -ECONNREFUSED;
	if (res->cm_event != 8 /* REJECTED */)
		return false;
	/* IB and RoCE report the CM reason, iWARP the TCP connection's errno. */
	return res->cm_status == KV_IB_CM_REJ_INVALID_SERVICE_ID ||
	       res->cm_status == -ECONNREFUSED;
}

/*
 * Why the kernel could not pin the memory it stores @what in for the
 * caller (the ping log, the latency samples), beyond the limits on
 * memory, which the callers name first.  Returns the length written.
 */
int kv_describe_pinned(char *buf, size_t len, int err, const char *what)
{
	if (err == EOPNOTSUPP)
		return snprintf(buf, len, "cannot store the %s: its buffer is shared memory (a file, a memfd or a MAP_SHARED mapping), and the module pins only private memory",
				what);
	if (err == ENOMEM)
		return snprintf(buf, len, "cannot store the %s: pinning it would pass this process's locked-memory limit (ulimit -l, RLIMIT_MEMLOCK; CAP_IPC_LOCK lifts it), or the kernel is out of memory",
				what);
	return snprintf(buf, len, "cannot store the %s: %s", what, strerror(err));
}

/*
 * Explain a failed ping in one line, without the program name.  @peer is
 * "ADDR:PORT" of the server (client) or of the listening address (server).
 * Returns the length written.
 */
int kv_describe_ping_failure(char *buf, size_t len, int err,
			     const struct kverbs_ping *cmd, const char *peer)
{
	const struct kverbs_ping_result *res = &cmd->result;
	bool server = cmd->role == KVERBS_ROLE_SERVER;
	const char *who = server ? "the client" : "the server";
	unsigned long long iter = res->iterations;

	/* A datagram ping's own failures, in udaddy's terms. */
	if (cmd->flags & KVERBS_PING_F_UD) {
		if (err == EOPNOTSUPP && res->failed_step == KVERBS_STEP_SETUP)
			return snprintf(buf, len, "no UD here: the RDMA device is iWARP (or, for a server on a wildcard address, no device is InfiniBand or RoCE), and iWARP has no Unreliable Datagram QPs");
		if (err == EMSGSIZE && cmd->path_mtu)
			return snprintf(buf, len, "a UD message carries at most the path MTU, %u bytes here: -S %u is larger",
					cmd->path_mtu, cmd->msg_size);
		if (err == ECONNREFUSED)
			return snprintf(buf, len, "no UD listener at %s (service ID resolution refused)",
					peer);
		if (err == ETIMEDOUT && res->failed_step == KVERBS_STEP_RECV)
			return snprintf(buf, len, "message %llu did not arrive within the timeout: UD does not retransmit, so a lost message or a peer that went away ends the ping",
					iter);
		if (err == EPROTO && res->failed_step == KVERBS_STEP_RECV)
			return snprintf(buf, len, "message %llu had another size than the others (or than -S on the client)",
					iter);
	}

	/* Limits are checked at whatever step allocates: name the limit. */
	if (err == ENOBUFS)
		return snprintf(buf, len, "the module's limit on memory for RDMA buffers is reached (max_pinned_mb)");
	/* The user's limits: a refused session, else memory. */
	if (err == EDQUOT && (res->valid & KVERBS_RESULT_REFUSED))
		return snprintf(buf, len, "too many tests are running as this user (max_sessions_per_user)");
	if (err == EDQUOT)
		return snprintf(buf, len, "this user's limit on memory for RDMA buffers is reached (max_pinned_mb_per_user)");
	/* The link going down is the cause; a failed completion its symptom. */
	if (err == ENETDOWN && res->failed_step == KVERBS_STEP_CONNECT)
		return snprintf(buf, len, "the RDMA port went down while connecting to %s", peer);
	if (err == ENETDOWN)
		return snprintf(buf, len, "the RDMA port went down in iteration %llu", iter);
	if ((res->valid & KVERBS_RESULT_WC) && res->failed_step)
		return snprintf(buf, len, "%s failed in iteration %llu: %s (vendor error 0x%x)",
				kv_step_op_str(res->failed_step), iter,
				kv_wc_status_str(res->wc_status), res->vendor_err);

	switch (res->failed_step) {
	case KVERBS_STEP_RESOLVE_ADDR:
		if (err == ENODEV || err == EADDRNOTAVAIL)
			return snprintf(buf, len, "cannot resolve %s: no RDMA device of this network namespace serves that route or source address (%s)",
					peer, strerror(err));
		if (err == ETIMEDOUT)
			return snprintf(buf, len, "cannot resolve %s: no answer within the timeout",
					peer);
		return snprintf(buf, len, "cannot resolve %s: %s", peer, strerror(err));
	case KVERBS_STEP_RESOLVE_ROUTE:
		return snprintf(buf, len, "cannot find a route to %s: %s", peer,
				strerror(err));
	case KVERBS_STEP_LISTEN:
		if (err == EADDRINUSE)
			return snprintf(buf, len, "cannot listen on %s: already in use", peer);
		if (err == EADDRNOTAVAIL || err == ENODEV)
			return snprintf(buf, len, "cannot listen on %s: not an address of an RDMA device in this network namespace",
					peer);
		if (err == EINTR)
			return snprintf(buf, len, "interrupted while waiting for a client on %s", peer);
		return snprintf(buf, len, "listening on %s failed: %s", peer, strerror(err));
	case KVERBS_STEP_CONNECT:
		if (kv_no_listener(res))
			return snprintf(buf, len, "no listener at %s (connection rejected)", peer);
		if (err == ECONNREFUSED)
			return snprintf(buf, len, "%s rejected the connection (%s reason %d)",
					peer, res->cm_status == KV_IB_CM_REJ_CONSUMER_DEFINED ?
					"server busy or out of resources," : "CM", res->cm_status);
		if (err == ETIMEDOUT)
			return snprintf(buf, len, "%s did not answer within the timeout", peer);
		return snprintf(buf, len, "connecting to %s failed: %s", peer, strerror(err));
	case KVERBS_STEP_ACCEPT:
		return snprintf(buf, len, "accepting a client on %s failed: %s", peer,
				strerror(err));
	case KVERBS_STEP_SETUP:
		if (err == ENFILE)
			return snprintf(buf, len, "too many tests are running (the module's max_sessions)");
		if (err == EMFILE)
			return snprintf(buf, len, "too many tests are running on this open %s (max_sessions_per_file)",
					KV_DEVICE_PATH);
		if (err == EMSGSIZE)
			return snprintf(buf, len, "a %u-byte buffer is more than the RDMA device can register with one MR",
					cmd->msg_size);
		if (err == EOPNOTSUPP)
			return snprintf(buf, len, "the RDMA device cannot do fast memory registration");
		return snprintf(buf, len, "setting up the connection failed: %s", strerror(err));
	case KVERBS_STEP_VALIDATE:
		return snprintf(buf, len, "data mismatch in iteration %llu at byte %u",
				iter, res->mismatch_offset);
	case KVERBS_STEP_LOG:
		return kv_describe_pinned(buf, len, err, "ping data");
	default:
		break;
	}

	switch (err) {
	case EACCES:
		return snprintf(buf, len, "%s made an RDMA access it had not been granted, in iteration %llu",
				who, iter);
	case ECONNRESET:
		return snprintf(buf, len, "%s closed the connection in iteration %llu", who, iter);
	case ETIMEDOUT:
		return snprintf(buf, len, "%s did not answer within the timeout (iteration %llu, waiting for %s)",
				who, iter, kv_step_op_str(res->failed_step));
	case EPROTO:
		return snprintf(buf, len, "%s broke the ping protocol in iteration %llu",
				who, iter);
	case EMSGSIZE:
		return snprintf(buf, len, "the client's ping is larger than this server accepts (-S %u)",
				cmd->msg_size);
	case ENODEV:
		return snprintf(buf, len, "the RDMA device was removed");
	case ENETRESET:
		return snprintf(buf, len, "the local address changed under the connection");
	case EINTR:
		return snprintf(buf, len, "interrupted in iteration %llu", iter);
	default:
		return snprintf(buf, len, "failed in iteration %llu: %s", iter, strerror(err));
	}
}

/*
 * Whether the module refused a test's arguments before anything ran: a
 * usage error rather than a failed test.
 */
bool kv_args_refused(int err, uint32_t failed_step)
{
	return !failed_step && (err == EINVAL || err == EMSGSIZE);
}

int kv_describe_refused(char *buf, size_t len, int err)
{
	return snprintf(buf, len, "the module refused the arguments: %s%s",
			strerror(err), err == EMSGSIZE ?
			" (more than the module's max_msg_size)" : "");
}

/**
 * kv_json_failure - write the "error" member of a test's document
 * @j: the writer, inside the document's object
 * @f: the failure; no message means there was none
 *
 * Writes null and returns false when there was no failure.  Otherwise
 * it leaves the error object open for the caller to add its own members
 * and close, and returns true.
 */
bool kv_json_failure(struct kv_json *j, const struct kv_failure *f)
{
	kv_json_key(j, "error");
	if (!f->message) {
		kv_json_null(j);
		return false;
	}
	kv_json_begin_object(j);
	kv_json_key(j, "errno");
	kv_json_i64(j, f->err);
	kv_json_key(j, "name");
	kv_json_string(j, kv_errno_name(f->err));
	kv_json_key(j, "step");
	kv_json_string(j, kv_step_str(f->step));
	kv_json_key(j, "message");
	kv_json_string(j, f->message);
	if (f->valid & KVERBS_RESULT_WC) {
		kv_json_key(j, "wc_status");
		kv_json_u64(j, f->wc_status);
		kv_json_key(j, "wc_status_str");
		kv_json_string(j, kv_wc_status_str(f->wc_status));
		kv_json_key(j, "vendor_err");
		kv_json_u64(j, f->vendor_err);
	}
	if (f->valid & KVERBS_RESULT_CM) {
		kv_json_key(j, "cm_event");
		kv_json_string(j, kv_cm_event_str(f->cm_event));
		kv_json_key(j, "cm_status");
		kv_json_i64(j, f->cm_status);
	}
	if (f->valid & KVERBS_RESULT_MISMATCH) {
		kv_json_key(j, "mismatch_offset");
		kv_json_u64(j, f->mismatch_offset);
	}
	return true;
}
