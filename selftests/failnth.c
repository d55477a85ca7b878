// SPDX-License-Identifier: GPL-2.0
/*
 * failnth: every kverbs ioctl survives an allocation failure at each of
 * its allocations in turn.
 *
 * For n = 1, 2, 3, ...: make the n-th fault-injection point the calling
 * thread reaches fail (/proc/thread-self/fail-nth).  With failslab told
 * to fail sleeping allocations too, those points are the thread's slab
 * allocations, kverbs' and those it makes ib_core and the driver do;
 * page allocations are not among them (no fail_page_alloc), nor what
 * runs in other contexts, such as rdma_cm's handlers.  Make the call, and check that it either
 * succeeded anyway or failed with an errno, and that the same call then
 * works without a fault.  The loop ends when a call completes without
 * reaching its n-th allocation.  A ping is tried on both ends: the
 * client faults against a healthy persistent server, and a server
 * faults against a healthy client.  So is a validated write_bw, each
 * attempt with a server of its own.  kmemleak, in the debug lane, checks
 * that the failed calls left nothing behind; run.sh checks dmesg.
 *
 * Needs CONFIG_FAULT_INJECTION_DEBUG_FS and CONFIG_FAILSLAB (the debug
 * lane's kernel); skips elsewhere.
 */
#include "kvlib.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

KV_MAIN()

#define KV_PORT_CLIENT_FAULTS	17480
#define KV_PORT_SERVER_FAULTS	17481
#define KV_PORT_PERF_FAULTS	17482
/* A call that needs more allocations than this is a bug of its own. */
#define KV_MAX_NTH		2000

#define KV_FAILSLAB		"/sys/kernel/debug/failslab/"

static int kv_write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = strlen(value);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, value, len) == len;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * As selftests/lib.sh has them: the kernel log between them is expected
 * to hold the allocators' reports of the failures injected.
 */
#define KV_FAILNTH_BEGIN	"kverbs-selftests: fail-nth injection begins"
#define KV_FAILNTH_END		"kverbs-selftests: fail-nth injection ends"

static void kv_failslab_done(void)
{
	kv_write_file("/dev/kmsg", KV_FAILNTH_END);
}

/*
 * Make failslab fail what fail-nth asks for, GFP_KERNEL allocations
 * included, and quietly: its stack dumps would read as splats.
 */
static void kv_failslab_setup(void)
{
	static int done;

	if (done)
		return;
	kv_dev();
	if (access("/proc/thread-self/fail-nth", W_OK))
		kv_skip("no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)");
	if (access(KV_FAILSLAB "ignore-gfp-wait", W_OK))
		kv_skip("no " KV_FAILSLAB " (CONFIG_FAILSLAB, debugfs)");
	KV_ASSERT_OK(kv_write_file(KV_FAILSLAB "ignore-gfp-wait", "N"));
	KV_ASSERT_OK(kv_write_file(KV_FAILSLAB "verbose", "0"));
	/* The allocators' reports of what we fail are expected from here on. */
	KV_ASSERT_OK(kv_write_file("/dev/kmsg", KV_FAILNTH_BEGIN));
	atexit(kv_failslab_done);
	done = 1;
}

/**
 * struct kv_nth - one call to repeat under fault injection
 * @name: for the diagnostics
 * @call: makes the call; returns its return value, errno in *@err
 * @again: makes it once more, without a fault, after one (NULL: @call)
 * @check: after a failed call: 0 if what it reported is consistent
 * @ctx: for @call and @check
 * @min_allocs: fewer injection points than this means injection failed
 */
struct kv_nth {
	const char *name;
	long (*call)(void *ctx, int *err);
	long (*again)(void *ctx, int *err);
	int (*check)(void *ctx, int err);
	void *ctx;
	unsigned int min_allocs;
};

/*
 * Run @c with the n-th allocation failing, for every n until the call
 * no longer reaches it; after each injected failure the call must work
 * without one.  Returns how many failures were injected.
 */
static unsigned int kv_each_nth(const struct kv_nth *c)
{
	unsigned int n, failed_calls = 0;
	long ret, left;
	int err;

	kv_failslab_setup();
	for (n = 1; n <= KV_MAX_NTH; n++) {
		KV_ASSERT_OK(kv_fail_nth_set(n));
		ret = c->call(c->ctx, &err);
		left = kv_fail_nth_get();
		KV_ASSERT_GE(left, 0);
		if (left) {
			/* The call finished before its n-th allocation. */
			if (ret)
				KV_FAIL_AT(1, "%s without an injected fault: errno %d (%s)",
					   c->name, err, strerror(err));
			kv_diag("%s: %u allocations, each failed once: %u calls failed, the rest coped",
				c->name, n - 1, failed_calls);
			if (c->min_allocs && n - 1 < c->min_allocs)
				KV_FAIL_AT(1, "%s made only %u allocations: is failslab working?",
					   c->name, n - 1);
			return n - 1;
		}
		if (ret) {
			failed_calls++;
			if (ret != -1 || !err)
				KV_FAIL_AT(1, "%s, allocation %u failed: returned %ld errno %d",
					   c->name, n, ret, err);
			if (c->check && c->check(c->ctx, err))
				KV_FAIL_AT(1, "%s, allocation %u failed: errno %d (%s) reported inconsistently",
					   c->name, n, err, strerror(err));
		}
		ret = (c->again ?: c->call)(c->ctx, &err);
		if (ret)
			KV_FAIL_AT(1, "%s right after allocation %u failed: errno %d (%s)",
				   c->name, n, err, strerror(err));
	}
	KV_FAIL_AT(1, "%s still allocating after %u allocations", c->name, n);
	return n;
}

static long kv_call_info(void *ctx, int *err)
{
	struct kverbs_info info = { .size = sizeof(info) };
	long ret;

	(void)ctx;
	errno = 0;
	ret = ioctl(kv_fd, KVERBS_IOC_INFO, &info);
	*err = errno;
	return ret;
}

KV_TEST(info)
{
	/* INFO allocates nothing today: this shows it fails nothing either. */
	struct kv_nth c = { "INFO", kv_call_info, NULL, NULL, NULL, 0 };

	kv_each_nth(&c);
}

static long kv_call_devices(void *ctx, int *err)
{
	struct kverbs_device_info dev[4];
	struct kverbs_port_info port[8];
	struct kverbs_devices d = {
		.size = sizeof(d),
		.device_entry_size = sizeof(dev[0]),
		.port_entry_size = sizeof(port[0]),
		.device_capacity = KV_ARRAY_SIZE(dev),
		.port_capacity = KV_ARRAY_SIZE(port),
		.devices = (uintptr_t)dev,
		.ports = (uintptr_t)port,
	};
	long ret;

	(void)ctx;
	errno = 0;
	ret = ioctl(kv_fd, KVERBS_IOC_DEVICES, &d);
	*err = errno;
	if (!ret && d.device_count < 1) {
		*err = ENODEV;
		return -1;
	}
	return ret;
}

KV_TEST(devices)
{
	struct kv_nth c = { "DEVICES", kv_call_devices, NULL, NULL, NULL, 1 };

	kv_each_nth(&c);
}

/* The ping of these tests: 3 validated 4 KiB iterations. */
static void kv_ping_fill(struct kverbs_ping *p, unsigned short port)
{
	kv_ping_base(p, port);
	p->count = 3;
	p->msg_size = 4096;
	p->flags = KVERBS_PING_F_VALIDATE;
}

/* A failed ping reports its errno in its result too, and where it failed. */
static int kv_ping_check(const struct kverbs_ping *p, int err)
{
	if (p->result.error == -err && p->result.failed_step)
		return 0;
	kv_diag("result: error %d, step %u, errno %d", p->result.error,
		p->result.failed_step, err);
	return -1;
}

static long kv_call_client(void *ctx, int *err)
{
	struct kverbs_ping *p = ctx;

	kv_ping_fill(p, KV_PORT_CLIENT_FAULTS);
	return kv_client_run(p, err);
}

static int kv_check_client(void *ctx, int err)
{
	return kv_ping_check(ctx, err);
}

/* How long the server of ping_client waits for a silent client. */
static __u64 kv_client_server_timeout_ns(void)
{
	return kv_step_timeout_ns() / 2;
}

/*
 * A client whose disconnect could not be sent (the allocation of its
 * DREQ failed, say) leaves without a word: the server finds out only
 * when its wait for the next advertisement times out, and until then
 * the next client waits in the listen queue, where its connect may time
 * out first (soft-iWARP gives an MPA reply ten seconds, whatever the
 * step's limit).  That is how a one-client-at-a-time server treats a
 * vanished peer; the client retries until the server must have given up.
 */
static long kv_call_client_again(void *ctx, int *err)
{
	struct kverbs_ping *p = ctx;
	struct timespec start, now;
	__u64 waited_ns;
	long ret;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		ret = kv_call_client(ctx, err);
		if (!ret || p->result.failed_step != KVERBS_STEP_CONNECT ||
		    (*err != ETIMEDOUT && *err != ECONNREFUSED && *err != ECONNRESET))
			return ret;
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited_ns = (now.tv_sec - start.tv_sec) * 1000000000ULL +
			    now.tv_nsec - start.tv_nsec;
		if (waited_ns > kv_client_server_timeout_ns() + kv_step_timeout_ns())
			return ret;
		kv_diag("connect: errno %d (%s) after %llu ms: the server is still waiting for a client that left silently",
			*err, strerror(*err), (unsigned long long)(waited_ns / 1000000));
		usleep(100000);
	}
}

/* The client's allocations fail; a persistent server serves each attempt. */
KV_TEST(ping_client)
{
	struct kverbs_ping p;
	struct kv_nth c = { "ping client", kv_call_client, kv_call_client_again,
			    kv_check_client, &p, 10 };
	struct kv_server *s;

	kv_failslab_setup();
	/* Quick to give up on a client that left silently: see above. */
	s = kv_server_start_with(KV_PORT_CLIENT_FAULTS,
				 KVERBS_PING_F_VALIDATE | KVERBS_PING_F_PERSISTENT,
				 kv_client_server_timeout_ns(), 0);
	kv_each_nth(&c);
	/* Only the signal ends it: it must still be serving. */
	KV_EXPECT_EQ(__atomic_load_n(&s->done, __ATOMIC_ACQUIRE), 0);
	KV_EXPECT_EQ(kv_server_wait(s, 0), -1);
	KV_EXPECT_EQ(s->err, EINTR);
	free(s);
}

/**
 * struct kv_round - one server, one client, in ping_server
 * @server: the server's ping, as it returned
 * @server_ret: its ioctl's return value
 * @server_err: and errno
 * @injected: the server's fault was injected
 * @client: the client's ping, as it returned
 * @client_ret: its ioctl's return value
 * @client_err: and errno
 */
struct kv_round {
	struct kverbs_ping server;
	long server_ret;
	int server_err;
	int injected;
	struct kverbs_ping client;
	long client_ret;
	int client_err;
};

/*
 * A one-client server whose thread's @n-th allocation fails (0: none),
 * and a healthy client for it, retried while the server is not yet
 * listening and has not given up.
 */
static void kv_round(unsigned int n, struct kv_round *r)
{
	struct timespec start, now;
	struct kv_server *s;

	s = kv_server_start_with(KV_PORT_SERVER_FAULTS, KVERBS_PING_F_VALIDATE, 0, n);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		kv_ping_fill(&r->client, KV_PORT_SERVER_FAULTS);
		/* A refusal within this window: the server is not listening yet. */
		errno = 0;
		r->client_ret = ioctl(kv_fd, KVERBS_IOC_PING, &r->client);
		r->client_err = errno;
		if (!kv_refused(r->client_ret, r->client_err, &r->client.result) ||
		    __atomic_load_n(&s->done, __ATOMIC_ACQUIRE))
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= 5 * kv_time_scale())
			break;
		usleep(20000);
	}
	if (kv_server_wait(s, 30))
		KV_FAIL_AT(1, "the server did not end after its client");
	r->server = s->ping;
	r->server_ret = s->ret;
	r->server_err = s->err;
	if (n && s->fail_nth_left < 0)
		KV_FAIL_AT(1, "could not set or read the server thread's fail-nth");
	r->injected = n && s->fail_nth_left == 0;
	free(s);
}

/* The server's allocations fail, one per round; a healthy client tries each. */
KV_TEST(ping_server)
{
	unsigned int n, failed_calls = 0;
	struct kv_round r;

	kv_failslab_setup();
	for (n = 1; n <= KV_MAX_NTH; n++) {
		kv_round(n, &r);
		if (!r.injected) {
			if (r.server_ret || r.client_ret)
				KV_FAIL_AT(1, "without an injected fault: server errno %d (%s), client errno %d (%s)",
					   r.server_err, strerror(r.server_err),
					   r.client_err, strerror(r.client_err));
			kv_diag("ping server: %u allocations, each failed once: %u calls failed, the rest coped",
				n - 1, failed_calls);
			if (n - 1 < 10)
				KV_FAIL_AT(1, "the server made only %u allocations: is failslab working?",
					   n - 1);
			return;
		}
		/* A server that coped must have served its client in full. */
		if (!r.server_ret && r.client_ret)
			KV_FAIL_AT(1, "server coped with allocation %u failing, but its client got errno %d (%s)",
				   n, r.client_err, strerror(r.client_err));
		if (r.server_ret) {
			failed_calls++;
			if (r.server_ret != -1 || !r.server_err ||
			    kv_ping_check(&r.server, r.server_err))
				KV_FAIL_AT(1, "server, allocation %u failed: returned %ld errno %d (%s)",
					   n, r.server_ret, r.server_err,
					   strerror(r.server_err));
		}
		/* Whatever the client saw, it returned; now all must work. */
		kv_round(0, &r);
		if (r.server_ret || r.client_ret)
			KV_FAIL_AT(1, "right after server allocation %u failed: server errno %d (%s), client errno %d (%s)",
				   n, r.server_err, strerror(r.server_err),
				   r.client_err, strerror(r.client_err));
	}
	KV_FAIL_AT(1, "server still allocating after %u allocations", n);
}

/* KVERBS_PERF_F_REVERSE in the reverse rounds, where the server writes. */
static uint32_t kv_perf_reverse;

/* The perf test of these tests: a validated write_bw of 20 4 KiB messages. */
static void kv_perf_fill(struct kverbs_perf *p)
{
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->role = KVERBS_ROLE_CLIENT;
	p->test = KVERBS_PERF_WRITE_BW;
	p->flags = KVERBS_PERF_F_VALIDATE | kv_perf_reverse;
	p->msg_size = 4096;
	p->iterations = 20;
	p->timeout_ns = kv_step_timeout_ns();
	kv_sockaddr(&p->addr, kv_addr(), KV_PORT_PERF_FAULTS);
}

/* A failed perf test reports its errno in its result too, and where it failed. */
static int kv_perf_check(const struct kverbs_perf *p, int err)
{
	if (p->result.error == -err && p->result.failed_step)
		return 0;
	kv_diag("result: error %d, step %u, errno %d", p->result.error,
		p->result.failed_step, err);
	return -1;
}

/**
 * struct kv_perf_round - a perf server and its client, one of them faulted
 * @server: the server's argument, as it returned
 * @server_ret: its ioctl's return value
 * @server_err: and errno
 * @client: the client's argument, as it returned
 * @client_ret: its ioctl's return value
 * @client_err: and errno
 * @injected: the fault was injected where it was asked for
 */
struct kv_perf_round {
	struct kverbs_perf server;
	long server_ret;
	int server_err;
	struct kverbs_perf client;
	long client_ret;
	int client_err;
	int injected;
};

/*
 * One server, one client; the client's @client_nth-th or the server's
 * @server_nth-th allocation fails (0: none).  The client retries while
 * the server is not listening yet.  A server whose client failed is
 * stopped: it may wait for a client that never comes.
 */
static void kv_perf_round(unsigned int client_nth, unsigned int server_nth,
			  struct kv_perf_round *r)
{
	uint64_t start = kv_now_ns();
	struct kv_server *s;
	long left = 1;

	s = kv_perf_server_start(KV_PORT_PERF_FAULTS, server_nth);
	for (;;) {
		kv_perf_fill(&r->client);
		if (client_nth)
			KV_ASSERT_OK(kv_fail_nth_set(client_nth));
		errno = 0;
		r->client_ret = ioctl(kv_fd, KVERBS_IOC_PERF, &r->client);
		r->client_err = errno;
		if (client_nth)
			left = kv_fail_nth_get();
		KV_ASSERT_GE(left, 0);
		if (!left || r->client_ret != -1 || r->client_err != ECONNREFUSED ||
		    r->client.result.failed_step != KVERBS_STEP_CONNECT ||
		    __atomic_load_n(&s->done, __ATOMIC_ACQUIRE) ||
		    kv_now_ns() - start > 5000000000ULL * kv_time_scale())
			break;
		usleep(20000);
	}
	if (r->client_ret)
		kv_server_stop(s);
	else if (kv_server_wait(s, 30))
		KV_FAIL_AT(1, "the server did not end after its client");
	r->server = s->perf;
	r->server_ret = s->ret;
	r->server_err = s->err;
	if (server_nth && s->fail_nth_left < 0)
		KV_FAIL_AT(1, "could not set or read the server thread's fail-nth");
	r->injected = client_nth ? !left : server_nth && s->fail_nth_left == 0;
	free(s);
}

/*
 * The client's (@client) or the server's allocations fail, one per
 * round, until a round no longer reaches the n-th; after each, a round
 * without a fault must work in full.
 */
static void kv_perf_each_nth(int client)
{
	const char *who = client ? "perf client" : "perf server";
	unsigned int n, failed_calls = 0;
	struct kv_perf_round r;
	long ret;
	int err;

	kv_failslab_setup();
	for (n = 1; n <= KV_MAX_NTH; n++) {
		kv_perf_round(client ? n : 0, client ? 0 : n, &r);
		ret = client ? r.client_ret : r.server_ret;
		err = client ? r.client_err : r.server_err;
		if (!r.injected) {
			if (r.server_ret || r.client_ret)
				KV_FAIL_AT(1, "%s without an injected fault: server errno %d (%s), client errno %d (%s)",
					   who, r.server_err, strerror(r.server_err),
					   r.client_err, strerror(r.client_err));
			kv_diag("%s: %u allocations, each failed once: %u calls failed, the rest coped",
				who, n - 1, failed_calls);
			if (n - 1 < 10)
				KV_FAIL_AT(1, "%s made only %u allocations: is failslab working?",
					   who, n - 1);
			return;
		}
		/* A side that coped must have run the test in full. */
		if (!ret && (client ? r.client.result.iterations :
				      r.server.result.iterations) != 20)
			KV_FAIL_AT(1, "%s coped with allocation %u failing, but ran %llu messages",
				   who, n, (unsigned long long)(client ?
				   r.client.result.iterations : r.server.result.iterations));
		if (ret) {
			failed_calls++;
			if (ret != -1 || !err ||
			    kv_perf_check(client ? &r.client : &r.server, err))
				KV_FAIL_AT(1, "%s, allocation %u failed: returned %ld errno %d (%s)",
					   who, n, ret, err, strerror(err));
		}
		kv_perf_round(0, 0, &r);
		if (r.server_ret || r.client_ret)
			KV_FAIL_AT(1, "right after %s allocation %u failed: server errno %d (%s), client errno %d (%s)",
				   who, n, r.server_err, strerror(r.server_err),
				   r.client_err, strerror(r.client_err));
	}
	KV_FAIL_AT(1, "%s still allocating after %u allocations", who, n);
}

KV_TEST(perf_client)
{
	kv_perf_reverse = 0;
	kv_perf_each_nth(1);
}

KV_TEST(perf_server)
{
	kv_perf_reverse = 0;
	kv_perf_each_nth(0);
}

/* The same with the roles in the data path swapped: see perf_session.c. */
KV_TEST(perf_client_reverse)
{
	kv_perf_reverse = KVERBS_PERF_F_REVERSE;
	kv_perf_each_nth(1);
	kv_perf_reverse = 0;
}

KV_TEST(perf_server_reverse)
{
	kv_perf_reverse = KVERBS_PERF_F_REVERSE;
	kv_perf_each_nth(0);
	kv_perf_reverse = 0;
}
