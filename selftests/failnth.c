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
 *
 * Written on kselftest_harness.h (see uapi.c): each test runs in a
 * process of its own, whose fixture opens /dev/kverbs and sets failslab
 * up, or skips and says what is missing.  The calls that are failed the
 * same way, INFO, DEVICES and a ping client, are the variants of
 * failnth_call; the four perf rounds, client or server, forward or
 * reverse, those of failnth_perf.
 */
#include "kvlib.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kvharness.h"

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

/*
 * What every test of this program needs first: /dev/kverbs, fail-nth,
 * and failslab told to fail what fail-nth asks for, GFP_KERNEL
 * allocations included, and quietly: its stack dumps would read as
 * splats.  Skips, saying what is missing, without them.  Each test runs
 * in a process of its own, so each marks its span in the kernel log
 * (kv_failnth_end() closes it; run.sh does too, should a test die).
 */
static void kv_failnth_begin(struct __test_metadata *_metadata, int *fd, int *marked)
{
	kv_open(_metadata, fd);
	if (_metadata->exit_code)
		return;
	if (access("/proc/thread-self/fail-nth", W_OK))
		SKIP(return, "no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)");
	if (access(KV_FAILSLAB "ignore-gfp-wait", W_OK))
		SKIP(return, "no " KV_FAILSLAB " (CONFIG_FAILSLAB, debugfs)");
	ASSERT_OK(kv_write_file(KV_FAILSLAB "ignore-gfp-wait", "N"));
	ASSERT_OK(kv_write_file(KV_FAILSLAB "verbose", "0"));
	/* The allocators' reports of what we fail are expected from here on. */
	ASSERT_OK(kv_write_file("/dev/kmsg", KV_FAILNTH_BEGIN));
	*marked = 1;
}

static void kv_failnth_end(int fd, int marked)
{
	if (marked)
		kv_write_file("/dev/kmsg", KV_FAILNTH_END);
	kv_close(fd);
}

/*
 * The harness kills a test at its time limit, and names it; the limit is
 * set at run time, in the harness's constructors, so it scales with
 * KV_TIME_SCALE as every limit of the tests does.  A test here makes a
 * call, or a round of a server and a client, twice for each of up to
 * some 150 allocations (a lesson some 700, a datagram server's more than
 * 1,100): on the debug lane's kernel over rxe (KV_TIME_SCALE 10) the
 * first eight took 741 s together with one vCPU, the options' ten some
 * 1,800 s with two.  siw, whose
 * connects can wait ten seconds for a silent client's server, was not
 * timed and may be slower, so each test gets ten minutes, times the
 * scale; at the debug lane's scale run.sh's suite limit
 * (KV_SUITE_LIMIT) comes first.
 */
#define KV_FAILNTH_TIMEOUT	(600 * kv_time_scale())

/* ------------------------------------------------------------------ */
/* One call repeated: INFO, DEVICES, a ping client                      */
/* ------------------------------------------------------------------ */

FIXTURE(failnth_call) {
	int fd;
	int marked;
	/* The ping client's argument, for kv_ping_check() after the call. */
	struct kverbs_ping ping;
};

/**
 * FIXTURE_VARIANT(failnth_call) - one call to repeat under fault injection
 * @name: for the diagnostics
 * @call: makes the call; returns its return value, errno in *@err
 * @again: makes it once more, without a fault, after one (NULL: @call)
 * @check: after a failed call: 0 if what it reported is consistent
 * @min_allocs: fewer injection points than this means injection failed
 * @server_port: a persistent ping server on this port serves the calls,
 *	and must still be serving after them (0: none)
 *
 * @call, @again and @check take the fixture's @ping.
 */
FIXTURE_VARIANT(failnth_call) {
	const char *name;
	long (*call)(void *ctx, int *err);
	long (*again)(void *ctx, int *err);
	int (*check)(void *ctx, int err);
	unsigned int min_allocs;
	unsigned short server_port;
};

FIXTURE_SETUP(failnth_call)
{
	kv_failnth_begin(_metadata, &self->fd, &self->marked);
}

FIXTURE_TEARDOWN(failnth_call)
{
	kv_failnth_end(self->fd, self->marked);
}

/*
 * Run @c with the n-th allocation failing, for every n until the call
 * no longer reaches it; after each injected failure the call must work
 * without one.
 */
static void kv_each_nth(struct __test_metadata *_metadata,
			const FIXTURE_VARIANT(failnth_call) *c, void *ctx)
{
	unsigned int n, failed_calls = 0;
	long ret, left;
	int err;

	for (n = 1; n <= KV_MAX_NTH; n++) {
		ASSERT_OK(kv_fail_nth_set(n));
		ret = c->call(ctx, &err);
		left = kv_fail_nth_get();
		ASSERT_LE(0, left) TH_LOG("%s, allocation %u: could not read or reset fail-nth",
					  c->name, n);
		if (left) {
			/* The call finished before its n-th allocation. */
			ASSERT_EQ(0, ret) TH_LOG("%s without an injected fault: errno %d (%s)",
						 c->name, err, strerror(err));
			TH_LOG("%s: %u allocations, each failed once: %u calls failed, the rest coped",
			       c->name, n - 1, failed_calls);
			ASSERT_LE(c->min_allocs, n - 1)
				TH_LOG("%s made only %u allocations: is failslab working?",
				       c->name, n - 1);
			return;
		}
		if (ret) {
			failed_calls++;
			ASSERT_TRUE(ret == -1 && err)
				TH_LOG("%s, allocation %u failed: returned %ld errno %d",
				       c->name, n, ret, err);
			if (c->check) {
				ASSERT_EQ(0, c->check(ctx, err))
					TH_LOG("%s, allocation %u failed: errno %d (%s) reported inconsistently",
					       c->name, n, err, strerror(err));
			}
		}
		ret = (c->again ?: c->call)(ctx, &err);
		ASSERT_EQ(0, ret) TH_LOG("%s right after allocation %u failed: errno %d (%s)",
					 c->name, n, err, strerror(err));
	}
	KV_FAIL_FATAL("%s still allocating after %u allocations", c->name, n);
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

/* INFO allocates nothing today: this shows it fails nothing either. */
FIXTURE_VARIANT_ADD(failnth_call, info) {
	.name = "INFO",
	.call = kv_call_info,
};

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

FIXTURE_VARIANT_ADD(failnth_call, devices) {
	.name = "DEVICES",
	.call = kv_call_devices,
	.min_allocs = 1,
};

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
FIXTURE_VARIANT_ADD(failnth_call, ping_client) {
	.name = "ping client",
	.call = kv_call_client,
	.again = kv_call_client_again,
	.check = kv_check_client,
	.min_allocs = 10,
	.server_port = KV_PORT_CLIENT_FAULTS,
};

/*
 * A lesson, on our address: its connections to itself, PDs, CQs, QPs and
 * MRs are all set up and torn down inside the call.  A run that an
 * allocation failed is reported in the run (the call coped); the call
 * without a fault must show the lesson: each wrong way fails, each right
 * way works.
 */
static struct kverbs_lesson kv_lesson_arg;

static long kv_call_lesson(void *ctx, int *err)
{
	struct kverbs_lesson *l = &kv_lesson_arg;
	long ret;

	(void)ctx;
	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	l->lesson = KVERBS_LESSON_ACCESS;
	l->timeout_ns = kv_step_timeout_ns();
	kv_sockaddr(&l->addr, kv_addr(), 0);
	errno = 0;
	ret = ioctl(kv_fd, KVERBS_IOC_LESSON, l);
	*err = errno;
	return ret;
}

static long kv_call_lesson_again(void *ctx, int *err)
{
	const struct kverbs_lesson *l = &kv_lesson_arg;
	long ret = kv_call_lesson(ctx, err);
	unsigned int i, wrong = 0, right = 0, bad = 0;

	if (ret)
		return ret;
	for (i = 0; i < l->nruns && i < KVERBS_LESSON_MAX_RUNS; i++) {
		if (l->runs[i].kind == KVERBS_LESSON_WRONG) {
			wrong++;
			bad += !l->runs[i].error;
		} else {
			right++;
			bad += l->runs[i].kind != KVERBS_LESSON_RIGHT || l->runs[i].error;
		}
	}
	if (!wrong || !right || bad) {
		kv_diag("lesson: %u runs, %u the wrong way, %u the right way, %u not as they should end",
			l->nruns, wrong, right, bad);
		*err = EBADMSG;
		return -1;
	}
	return 0;
}

/* A lesson that failed to set up says so, and where. */
static int kv_check_lesson(void *ctx, int err)
{
	(void)ctx;
	if (kv_lesson_arg.error == -err && kv_lesson_arg.failed_step)
		return 0;
	kv_diag("lesson: error %d, step %u, errno %d", kv_lesson_arg.error,
		kv_lesson_arg.failed_step, err);
	return -1;
}

FIXTURE_VARIANT_ADD(failnth_call, lesson) {
	.name = "lesson access",
	.call = kv_call_lesson,
	.again = kv_call_lesson_again,
	.check = kv_check_lesson,
	.min_allocs = 10,
};

TEST_F_TIMEOUT(failnth_call, each_alloc, KV_FAILNTH_TIMEOUT)
{
	struct kv_server *s = NULL;

	/* Quick to give up on a client that left silently: see above. */
	if (variant->server_port)
		s = kv_server_start_with(variant->server_port,
					 KVERBS_PING_F_VALIDATE | KVERBS_PING_F_PERSISTENT,
					 kv_client_server_timeout_ns(), 0);
	kv_each_nth(_metadata, variant, &self->ping);
	if (!s)
		return;
	/* Only the signal ends it: it must still be serving. */
	EXPECT_EQ(0, __atomic_load_n(&s->done, __ATOMIC_ACQUIRE))
		TH_LOG("the persistent server ended: errno %d (%s)", s->err, strerror(s->err));
	EXPECT_EQ(-1, kv_server_wait(s, 0)) TH_LOG("the persistent server ended by itself");
	EXPECT_EQ(EINTR, s->err) TH_LOG("the persistent server, interrupted: errno %d (%s)",
					s->err, strerror(s->err));
	free(s);
}

/* ------------------------------------------------------------------ */
/* A ping server's allocations                                          */
/* ------------------------------------------------------------------ */

FIXTURE(failnth) {
	int fd;
	int marked;
};

FIXTURE_SETUP(failnth)
{
	kv_failnth_begin(_metadata, &self->fd, &self->marked);
}

FIXTURE_TEARDOWN(failnth)
{
	kv_failnth_end(self->fd, self->marked);
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
static void kv_round(struct __test_metadata *_metadata, unsigned int n,
		     struct kv_round *r)
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
	ASSERT_EQ(0, kv_server_wait(s, 30)) TH_LOG("the server did not end after its client");
	r->server = s->ping;
	r->server_ret = s->ret;
	r->server_err = s->err;
	if (n) {
		ASSERT_LE(0, s->fail_nth_left)
			TH_LOG("could not set or read the server thread's fail-nth");
	}
	r->injected = n && s->fail_nth_left == 0;
	free(s);
}

/* The server's allocations fail, one per round; a healthy client tries each. */
TEST_F_TIMEOUT(failnth, ping_server, KV_FAILNTH_TIMEOUT)
{
	unsigned int n, failed_calls = 0;
	struct kv_round r;

	for (n = 1; n <= KV_MAX_NTH; n++) {
		kv_round(_metadata, n, &r);
		if (!r.injected) {
			ASSERT_TRUE(!r.server_ret && !r.client_ret)
				TH_LOG("without an injected fault: server errno %d (%s), client errno %d (%s)",
				       r.server_err, strerror(r.server_err),
				       r.client_err, strerror(r.client_err));
			TH_LOG("ping server: %u allocations, each failed once: %u calls failed, the rest coped",
			       n - 1, failed_calls);
			ASSERT_LE(10, n - 1)
				TH_LOG("the server made only %u allocations: is failslab working?",
				       n - 1);
			return;
		}
		/* A server that coped must have served its client in full. */
		if (!r.server_ret) {
			ASSERT_EQ(0, r.client_ret)
				TH_LOG("server coped with allocation %u failing, but its client got errno %d (%s)",
				       n, r.client_err, strerror(r.client_err));
		}
		if (r.server_ret) {
			failed_calls++;
			ASSERT_TRUE(r.server_ret == -1 && r.server_err &&
				    !kv_ping_check(&r.server, r.server_err))
				TH_LOG("server, allocation %u failed: returned %ld errno %d (%s)",
				       n, r.server_ret, r.server_err,
				       strerror(r.server_err));
		}
		/* Whatever the client saw, it returned; now all must work. */
		kv_round(_metadata, 0, &r);
		ASSERT_TRUE(!r.server_ret && !r.client_ret)
			TH_LOG("right after server allocation %u failed: server errno %d (%s), client errno %d (%s)",
			       n, r.server_err, strerror(r.server_err),
			       r.client_err, strerror(r.client_err));
	}
	KV_FAIL_FATAL("server still allocating after %u allocations", n);
}

/* ------------------------------------------------------------------ */
/* A write_bw's allocations, on either end, either way                  */
/* ------------------------------------------------------------------ */

FIXTURE(failnth_perf) {
	int fd;
	int marked;
};

/**
 * FIXTURE_VARIANT(failnth_perf) - whose allocations fail, in which test
 * @client: the client's (else the server's)
 * @test: &enum kverbs_perf_test, 0 for KVERBS_PERF_WRITE_BW
 * @flags: the client's KVERBS_PERF_F_* beside VALIDATE: REVERSE, where
 *	the server writes; RW, UD, INV, each with the paths it allocates on
 * @srv_flags: the server's: KVERBS_PERF_F_SRQ, the SRQ and its receives
 * @cq_flags: both ends': KVERBS_PERF_CQ_POOL, ib_core's pool
 * @unsupported: the errno of a device that has no such test (the test
 *	skips there), 0 if every device has it
 */
FIXTURE_VARIANT(failnth_perf) {
	int client;
	__u32 test;
	__u32 flags;
	__u32 srv_flags;
	__u16 cq_flags;
	int unsupported;
};

FIXTURE_SETUP(failnth_perf)
{
	kv_failnth_begin(_metadata, &self->fd, &self->marked);
}

FIXTURE_TEARDOWN(failnth_perf)
{
	kv_failnth_end(self->fd, self->marked);
}

FIXTURE_VARIANT_ADD(failnth_perf, client) {
	.client = 1,
};

FIXTURE_VARIANT_ADD(failnth_perf, server) {
	.client = 0,
};

/* The same with the roles in the data path swapped: see perf_session.c. */
FIXTURE_VARIANT_ADD(failnth_perf, client_reverse) {
	.client = 1,
	.flags = KVERBS_PERF_F_REVERSE,
};

FIXTURE_VARIANT_ADD(failnth_perf, server_reverse) {
	.client = 0,
	.flags = KVERBS_PERF_F_REVERSE,
};

/*
 * The options that allocate on paths of their own, on the side that
 * allocates them: the server's SRQ and its receives; rdma_rw's contexts
 * (and MRs, where the device needs them), the client's as requester;
 * a datagram test's AH and SIDR resolution, both sides; ib_core's CQ
 * pool, both sides; remote invalidation, the server's MRs and the
 * client's SEND_WITH_INV.
 */
FIXTURE_VARIANT_ADD(failnth_perf, server_srq) {
	.client = 0,
	.test = KVERBS_PERF_SEND_BW,
	.srv_flags = KVERBS_PERF_F_SRQ,
};

FIXTURE_VARIANT_ADD(failnth_perf, client_rw) {
	.client = 1,
	.flags = KVERBS_PERF_F_RW,
};

FIXTURE_VARIANT_ADD(failnth_perf, client_ud) {
	.client = 1,
	.test = KVERBS_PERF_SEND_BW,
	.flags = KVERBS_PERF_F_UD,
	.unsupported = EOPNOTSUPP,
};

FIXTURE_VARIANT_ADD(failnth_perf, server_ud) {
	.client = 0,
	.test = KVERBS_PERF_SEND_BW,
	.flags = KVERBS_PERF_F_UD,
	.unsupported = EOPNOTSUPP,
};

FIXTURE_VARIANT_ADD(failnth_perf, client_pool) {
	.client = 1,
	.cq_flags = KVERBS_PERF_CQ_POOL,
};

FIXTURE_VARIANT_ADD(failnth_perf, server_pool) {
	.client = 0,
	.cq_flags = KVERBS_PERF_CQ_POOL,
};

FIXTURE_VARIANT_ADD(failnth_perf, client_inv) {
	.client = 1,
	.flags = KVERBS_PERF_F_INV,
};

FIXTURE_VARIANT_ADD(failnth_perf, server_inv) {
	.client = 0,
	.flags = KVERBS_PERF_F_INV,
};

/*
 * The perf test of these tests: 20 validated 4 KiB messages of the
 * variant's test (a datagram's 1 KiB, within any path MTU).
 */
static void kv_perf_fill(struct kverbs_perf *p,
			 const FIXTURE_VARIANT(failnth_perf) *v)
{
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->role = KVERBS_ROLE_CLIENT;
	p->test = v->test ?: KVERBS_PERF_WRITE_BW;
	p->flags = KVERBS_PERF_F_VALIDATE | v->flags;
	p->cq_flags = v->cq_flags;
	p->msg_size = v->flags & KVERBS_PERF_F_UD ? 1024 : 4096;
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

/* What a side of a round reported, for the diagnostics of a failed one. */
static void kv_perf_side_diag(const char *side, long ret, int err,
			      const struct kverbs_perf *p)
{
	const struct kverbs_perf_result *r = &p->result;

	kv_diag("%s: returned %ld errno %d (%s): error %d at step %u, %llu messages, wc_status %u, cm_event %u status %d",
		side, ret, ret ? err : 0, ret ? strerror(err) : "-", r->error,
		r->failed_step, (unsigned long long)r->iterations, r->wc_status,
		r->cm_event, r->cm_status);
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
 * One server, one client, of the variant @v; the client's
 * @client_nth-th or the server's @server_nth-th allocation fails (0:
 * none).  The client retries while the server is not listening yet.  A
 * server whose client failed is stopped: it may wait for a client that
 * never comes.
 */
static void kv_perf_round(struct __test_metadata *_metadata,
			  const FIXTURE_VARIANT(failnth_perf) *v,
			  unsigned int client_nth, unsigned int server_nth,
			  struct kv_perf_round *r)
{
	uint64_t start = kv_now_ns();
	struct kv_server *s;
	long left = 1;

	s = kv_perf_server_start(KV_PORT_PERF_FAULTS, v->srv_flags, v->cq_flags, server_nth);
	for (;;) {
		kv_perf_fill(&r->client, v);
		if (client_nth) {
			ASSERT_OK(kv_fail_nth_set(client_nth));
		}
		errno = 0;
		r->client_ret = ioctl(kv_fd, KVERBS_IOC_PERF, &r->client);
		r->client_err = errno;
		if (client_nth)
			left = kv_fail_nth_get();
		ASSERT_LE(0, left) TH_LOG("client, allocation %u: could not read or reset fail-nth",
					  client_nth);
		if (!left || r->client_ret != -1 || r->client_err != ECONNREFUSED ||
		    r->client.result.failed_step != KVERBS_STEP_CONNECT ||
		    __atomic_load_n(&s->done, __ATOMIC_ACQUIRE) ||
		    kv_now_ns() - start > 5000000000ULL * kv_time_scale())
			break;
		usleep(20000);
	}
	if (r->client_ret) {
		kv_server_stop(s);
	} else {
		ASSERT_EQ(0, kv_server_wait(s, 30))
			TH_LOG("the server did not end after its client");
	}
	r->server = s->perf;
	r->server_ret = s->ret;
	r->server_err = s->err;
	if (server_nth) {
		ASSERT_LE(0, s->fail_nth_left)
			TH_LOG("could not set or read the server thread's fail-nth");
	}
	r->injected = client_nth ? !left : server_nth && s->fail_nth_left == 0;
	free(s);
}

/*
 * The client's or the server's allocations fail, as the variant says,
 * one per round, until a round no longer reaches the n-th; after each, a
 * round without a fault must work in full.  A device without the
 * variant's test (datagrams over iWARP) refuses the first round, which
 * has no fault, and the test skips.
 */
TEST_F_TIMEOUT(failnth_perf, each_alloc, KV_FAILNTH_TIMEOUT)
{
	const int client = variant->client;
	const char *who = client ? "perf client" : "perf server";
	unsigned int n, failed_calls = 0;
	struct kv_perf_round r;
	__u64 iterations;
	long ret;
	int err;

	kv_perf_round(_metadata, variant, 0, 0, &r);
	if (variant->unsupported && r.client_ret == -1 &&
	    r.client_err == variant->unsupported)
		SKIP(return, "the device refuses this test with EOPNOTSUPP (datagrams over iWARP)");
	ASSERT_TRUE(!r.server_ret && !r.client_ret) {
		kv_perf_side_diag("server", r.server_ret, r.server_err, &r.server);
		kv_perf_side_diag("client", r.client_ret, r.client_err, &r.client);
	}
	for (n = 1; n <= KV_MAX_NTH; n++) {
		kv_perf_round(_metadata, variant, client ? n : 0, client ? 0 : n, &r);
		ret = client ? r.client_ret : r.server_ret;
		err = client ? r.client_err : r.server_err;
		if (!r.injected) {
			ASSERT_TRUE(!r.server_ret && !r.client_ret)
				TH_LOG("%s without an injected fault: server errno %d (%s), client errno %d (%s)",
				       who, r.server_err, strerror(r.server_err),
				       r.client_err, strerror(r.client_err));
			TH_LOG("%s: %u allocations, each failed once: %u calls failed, the rest coped",
			       who, n - 1, failed_calls);
			ASSERT_LE(10, n - 1)
				TH_LOG("%s made only %u allocations: is failslab working?",
				       who, n - 1);
			return;
		}
		/* A side that coped must have run the test in full. */
		iterations = client ? r.client.result.iterations : r.server.result.iterations;
		if (!ret) {
			ASSERT_EQ(20, iterations)
				TH_LOG("%s coped with allocation %u failing, but ran %llu messages",
				       who, n, (unsigned long long)iterations);
		}
		if (ret) {
			failed_calls++;
			ASSERT_TRUE(ret == -1 && err &&
				    !kv_perf_check(client ? &r.client : &r.server, err))
				TH_LOG("%s, allocation %u failed: returned %ld errno %d (%s)",
				       who, n, ret, err, strerror(err));
		}
		kv_perf_round(_metadata, variant, 0, 0, &r);
		if (r.server_ret || r.client_ret) {
			kv_perf_side_diag("server", r.server_ret, r.server_err, &r.server);
			kv_perf_side_diag("client", r.client_ret, r.client_err, &r.client);
		}
		ASSERT_TRUE(!r.server_ret && !r.client_ret)
			TH_LOG("right after %s allocation %u failed: server errno %d (%s), client errno %d (%s)",
			       who, n, r.server_err, strerror(r.server_err),
			       r.client_err, strerror(r.client_err));
	}
	KV_FAIL_FATAL("%s still allocating after %u allocations", who, n);
}

KV_HARNESS_MAIN
