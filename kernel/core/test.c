// SPDX-License-Identifier: GPL-2.0
/*
 * What every test (ping, perf) does alike: check the addresses and the
 * time limit it was given, make its endpoint or listener, and keep the
 * first failure for the result it hands back to userspace.
 *
 * A test's run structure embeds a struct kverbs_test; its own code only
 * adds what the test is about.
 */
#include "kverbs.h"

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>

/*
 * Within what an ioctl's timeout_ns may ask for: 0 is not "no limit"
 * here, the waits need a bound.
 */
static int kverbs_timeout_ms_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1,
				     div_u64(KVERBS_MAX_TIMEOUT_NS, NSEC_PER_MSEC));
}

static const struct kernel_param_ops kverbs_timeout_ms_ops = {
	.set = kverbs_timeout_ms_set,
	.get = param_get_uint,
};

static unsigned int kverbs_timeout_ms = 10000;
module_param_cb(timeout_ms, &kverbs_timeout_ms_ops, &kverbs_timeout_ms, 0644);
MODULE_PARM_DESC(timeout_ms,
		 "default limit on each step of a test, in ms, 1 to 3600000 (default 10000)");

static unsigned int kverbs_max_msg_size = 4 << 20;
module_param_named(max_msg_size, kverbs_max_msg_size, uint, 0644);
MODULE_PARM_DESC(max_msg_size,
		 "largest ping message in bytes (default 4 MiB); devices may allow less");

/**
 * kverbs_test_timeout_ns - the step limit of a test that asked for none
 *
 * Return: the timeout_ms module parameter, in ns.
 */
u64 kverbs_test_timeout_ns(void)
{
	return (u64)READ_ONCE(kverbs_timeout_ms) * NSEC_PER_MSEC;
}

/**
 * kverbs_test_max_msg_size - the largest message a test may move
 *
 * Return: the max_msg_size module parameter, in bytes.
 */
u32 kverbs_test_max_msg_size(void)
{
	return READ_ONCE(kverbs_max_msg_size);
}

/**
 * kverbs_sockaddr_check - check an address from userspace
 * @ss: a sockaddr_in or sockaddr_in6 in its storage
 * @need_port: whether the port must be set (else it must be 0)
 *
 * Return: 0, or -EINVAL for another family, a port that is or is not
 * there against @need_port, or non-zero bytes past the address.
 */
int kverbs_sockaddr_check(const struct __kernel_sockaddr_storage *ss,
			  bool need_port)
{
	const struct sockaddr_in *sin = (const void *)ss;
	const struct sockaddr_in6 *sin6 = (const void *)ss;
	size_t len;

	switch (ss->ss_family) {
	case AF_INET:
		len = sizeof(*sin);
		if (need_port != !!sin->sin_port)
			return -EINVAL;
		break;
	case AF_INET6:
		len = sizeof(*sin6);
		if (need_port != !!sin6->sin6_port)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	/* What lies past the address must be zero, for a later use. */
	if (memchr_inv((const u8 *)ss + len, 0, sizeof(*ss) - len))
		return -EINVAL;
	return 0;
}

/**
 * kverbs_test_parse - check and take a test's addresses and time limit
 * @t: the test
 * @server: whether it listens (else it connects)
 * @timeout_ns: the caller's limit on each step, 0 for the module default
 * @addr: the caller's address: where to connect, or where to listen;
 *	NULL for a server that takes its client from a listener it was given
 * @src: the caller's local address for a client, all zero if none
 *
 * Return: 0, or -EINVAL: a limit above an hour, a bad address, or a
 * source address where there may be none (a server) or of the wrong
 * family.
 */
int kverbs_test_parse(struct kverbs_test *t, bool server, u64 timeout_ns,
		      const struct __kernel_sockaddr_storage *addr,
		      const struct __kernel_sockaddr_storage *src)
{
	int ret;

	if (timeout_ns > KVERBS_MAX_TIMEOUT_NS)
		return -EINVAL;
	if (addr) {
		ret = kverbs_sockaddr_check(addr, true);
		if (ret)
			return ret;
		memcpy(&t->addr, addr, sizeof(t->addr));
	}
	if (src->ss_family) {
		if (server || !addr || src->ss_family != addr->ss_family)
			return -EINVAL;
		ret = kverbs_sockaddr_check(src, false);
		if (ret)
			return ret;
	} else if (memchr_inv(src, 0, sizeof(*src))) {
		return -EINVAL;
	}

	t->timeout_ns = timeout_ns ?: kverbs_test_timeout_ns();
	memcpy(&t->src, src, sizeof(t->src));
	t->have_src = src->ss_family;
	return 0;
}

/**
 * kverbs_test_failed - record a failure that happened outside a connection
 * @t: the test
 * @error: negative errno
 * @step: what the test was doing
 *
 * Return: @error.
 */
int kverbs_test_failed(struct kverbs_test *t, int error, enum kverbs_step step)
{
	t->fail = (struct kverbs_fail){ .error = error, .step = step };
	return error;
}

/**
 * kverbs_test_fail - make a connection's failure the test's report
 * @t: the test
 * @ep: the connection
 * @error: the error the connection ended with, as the test saw it
 */
void kverbs_test_fail(struct kverbs_test *t, struct kverbs_ep *ep, int error)
{
	kverbs_ep_fail_info(ep, &t->fail);
	if (!t->fail.error)
		t->fail.error = error;
}

/**
 * kverbs_test_ep_create - a new endpoint for the test
 * @t: the test
 *
 * Return: the endpoint, or an ERR_PTR with the failure in @t->fail.
 */
struct kverbs_ep *kverbs_test_ep_create(struct kverbs_test *t)
{
	struct kverbs_ep *ep = kverbs_ep_create();

	if (IS_ERR(ep))
		kverbs_test_failed(t, PTR_ERR(ep), KVERBS_STEP_SETUP);
	return ep;
}

/**
 * kverbs_test_ep_create_ud - a new datagram endpoint for the test
 * @t: the test
 *
 * Return: the endpoint, or an ERR_PTR with the failure in @t->fail.
 */
struct kverbs_ep *kverbs_test_ep_create_ud(struct kverbs_test *t)
{
	struct kverbs_ep *ep = kverbs_ep_create_ud();

	if (IS_ERR(ep))
		kverbs_test_failed(t, PTR_ERR(ep), KVERBS_STEP_SETUP);
	return ep;
}

/**
 * kverbs_test_resolve - bind a client's endpoint to the server's address
 * @t: the test
 * @ep: its endpoint
 *
 * Return: 0 once @ep has the device, port and route that reach @t->addr,
 * else the failure, which @ep records.
 */
int kverbs_test_resolve(struct kverbs_test *t, struct kverbs_ep *ep)
{
	return kverbs_ep_resolve(ep, t->have_src ? (struct sockaddr *)&t->src : NULL,
				 (struct sockaddr *)&t->addr, t->timeout_ns);
}

/**
 * kverbs_test_listen - a server's listener on @t->addr
 * @t: the test
 *
 * Return: the listener, or an ERR_PTR with the failure in @t->fail.
 */
struct kverbs_listener *kverbs_test_listen(struct kverbs_test *t)
{
	struct kverbs_listener *lsn;

	lsn = kverbs_listener_create((struct sockaddr *)&t->addr, false, t->timeout_ns);
	if (IS_ERR(lsn))
		kverbs_test_failed(t, PTR_ERR(lsn), KVERBS_STEP_LISTEN);
	return lsn;
}

/**
 * kverbs_test_listen_ud - a datagram server's listener on @t->addr
 * @t: the test
 *
 * Return: the listener, or an ERR_PTR with the failure in @t->fail:
 * -EOPNOTSUPP at KVERBS_STEP_SETUP where no device can take datagrams
 * (kverbs_listener_create_ud()), else at KVERBS_STEP_LISTEN.
 */
struct kverbs_listener *kverbs_test_listen_ud(struct kverbs_test *t)
{
	struct kverbs_listener *lsn;

	lsn = kverbs_listener_create_ud((struct sockaddr *)&t->addr, t->timeout_ns);
	if (IS_ERR(lsn))
		kverbs_test_failed(t, PTR_ERR(lsn), PTR_ERR(lsn) == -EOPNOTSUPP ?
				   KVERBS_STEP_SETUP : KVERBS_STEP_LISTEN);
	return lsn;
}

/**
 * kverbs_test_accept_failed - record why a server got no connection
 * @t: the test
 * @error: what kverbs_listener_accept() returned
 */
void kverbs_test_accept_failed(struct kverbs_test *t, int error)
{
	/* -ENODEV: the device went away, listening was fine. */
	kverbs_test_failed(t, error,
			   error == -ENODEV ? KVERBS_STEP_NONE : KVERBS_STEP_LISTEN);
}
