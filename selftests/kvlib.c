// SPDX-License-Identifier: GPL-2.0
/*
 * kvlib: what kverbs' C selftests share -- the device, the guest's
 * address, ping arguments, and a server ping in a thread of its own.
 */
#include "kvlib.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int kv_fd = -1;

/*
 * /dev/kverbs, which the test's fixture opened (kv_open() in
 * kvharness.h), skipping the test without the module.  A helper that
 * needs it and finds it closed is called outside a fixture: a bug of
 * the suite's.
 */
int kv_dev(void)
{
	if (kv_fd < 0)
		KV_FAIL_AT(1, "/dev/kverbs is not open: no fixture opened it");
	return kv_fd;
}

const char *kv_env(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

/*
 * $KV_TIME_SCALE, as in selftests/lib.sh: every time limit of the tests
 * is multiplied by it on a kernel that runs slower (the debug lane's).
 */
unsigned int kv_time_scale(void)
{
	unsigned long v = strtoul(kv_env("KV_TIME_SCALE", "1"), NULL, 10);

	return v ? v : 1;
}

__u64 kv_step_timeout_ns(void)
{
	return KV_STEP_TIMEOUT_NS * kv_time_scale();
}

const char *kv_addr(void)
{
	return kv_env("KV_ADDR", "10.209.0.1");
}

/* Fill @ss with @addr (IPv4 or IPv6) and @port; returns the family. */
int kv_sockaddr(struct __kernel_sockaddr_storage *ss, const char *addr,
		unsigned short port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		return AF_INET6;
	}
	KV_FAIL_AT(1, "'%s' is neither an IPv4 nor an IPv6 address", addr);
	return 0;
}

size_t kv_sockaddr_len(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) :
				   sizeof(struct sockaddr_in6);
}

/* A client ping of one 64-byte message to $KV_ADDR:@port; valid as it is. */
void kv_ping_base(struct kverbs_ping *p, unsigned short port)
{
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->role = KVERBS_ROLE_CLIENT;
	p->msg_size = 64;
	p->count = 1;
	p->timeout_ns = kv_step_timeout_ns();
	kv_sockaddr(&p->addr, kv_addr(), port);
}

/*
 * Fault injection: the calling thread's @n-th allocation from now on
 * fails (CONFIG_FAULT_INJECTION with failslab configured; see
 * Documentation/fault-injection/fault-injection.rst).  The file stays
 * open, per thread: opening it again would itself allocate, and count.
 * Returns 0, or -1 with errno set (ENOENT: the kernel has no fail-nth).
 */
static __thread int kv_nth_fd = -1;

int kv_fail_nth_set(unsigned int n)
{
	char buf[16];
	int len;

	if (kv_nth_fd < 0)
		kv_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (kv_nth_fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%u", n);
	return pwrite(kv_nth_fd, buf, len, 0) == len ? 0 : -1;
}

/* Close this thread's fail-nth file, as a thread must before it ends. */
void kv_fail_nth_close(void)
{
	if (kv_nth_fd >= 0)
		close(kv_nth_fd);
	kv_nth_fd = -1;
}

/*
 * What is left of the count set by kv_fail_nth_set(): 0 once the failure
 * was injected, else how many more allocations it would have taken (the
 * count is then reset to 0); -1 on error.
 */
long kv_fail_nth_get(void)
{
	char buf[16] = "";
	long left;

	if (kv_nth_fd < 0 || pread(kv_nth_fd, buf, sizeof(buf) - 1, 0) <= 0)
		return -1;
	left = strtol(buf, NULL, 10);
	if (left && kv_fail_nth_set(0))
		return -1;
	return left;
}

/* SIGUSR1 only interrupts: it ends a server waiting for clients. */
static void kv_wakeup(int sig)
{
	(void)sig;
}

static void *kv_server_main(void *arg)
{
	struct kv_server *s = arg;

	__atomic_store_n(&s->tid, gettid(), __ATOMIC_RELEASE);
	if (s->fail_nth && kv_fail_nth_set(s->fail_nth))
		s->fail_nth_left = -1;		/* could not inject: say so */
	errno = 0;
	s->ret = ioctl(kv_fd, s->ioc, s->ioc == KVERBS_IOC_PERF ? (void *)&s->perf :
							      (void *)&s->ping);
	s->err = errno;
	if (s->fail_nth && !s->fail_nth_left)
		s->fail_nth_left = kv_fail_nth_get();
	kv_fail_nth_close();
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Serve on $KV_ADDR:@port, any size, with @flags (persistent: until
 * interrupted; else one client, until it leaves), each step limited to
 * @timeout_ns (0: kv_step_timeout_ns()).  A non-zero @fail_nth makes the
 * server thread's @fail_nth-th allocation fail.
 */
static struct kv_server *kv_server_alloc(unsigned long ioc, unsigned int fail_nth)
{
	struct sigaction sa = { .sa_handler = kv_wakeup };
	struct kv_server *s;

	kv_dev();	/* the thread must find it open: it cannot fail the test */
	KV_ASSERT_OK(sigaction(SIGUSR1, &sa, NULL));
	s = calloc(1, sizeof(*s));
	KV_ASSERT_TRUE(s);
	s->ioc = ioc;
	s->fail_nth = fail_nth;
	return s;
}

struct kv_server *kv_server_start_with(unsigned short port, __u32 flags,
				       __u64 timeout_ns, unsigned int fail_nth)
{
	struct kv_server *s = kv_server_alloc(KVERBS_IOC_PING, fail_nth);

	kv_ping_base(&s->ping, port);
	s->ping.role = KVERBS_ROLE_SERVER;
	s->ping.flags = flags;
	s->ping.msg_size = 0;
	s->ping.count = 0;
	if (timeout_ns)
		s->ping.timeout_ns = timeout_ns;
	KV_ASSERT_OK(pthread_create(&s->thread, NULL, kv_server_main, s));
	return s;
}

/*
 * A perf server for one client of any test on $KV_ADDR:@port, with the
 * server's @flags (KVERBS_PERF_F_SRQ, say) and @cq_flags, each step
 * limited to kv_step_timeout_ns(); @fail_nth as for kv_server_start_with().
 */
struct kv_server *kv_perf_server_start(unsigned short port, __u32 flags, __u16 cq_flags,
				       unsigned int fail_nth)
{
	struct kv_server *s = kv_server_alloc(KVERBS_IOC_PERF, fail_nth);

	s->perf.size = sizeof(s->perf);
	s->perf.role = KVERBS_ROLE_SERVER;
	s->perf.test = KVERBS_PERF_ANY;
	s->perf.flags = flags;
	s->perf.cq_flags = cq_flags;
	s->perf.timeout_ns = kv_step_timeout_ns();
	kv_sockaddr(&s->perf.addr, kv_addr(), port);
	KV_ASSERT_OK(pthread_create(&s->thread, NULL, kv_server_main, s));
	return s;
}

/* Serve one client on $KV_ADDR:@port, any size, until it leaves. */
struct kv_server *kv_server_start(unsigned short port)
{
	return kv_server_start_with(port, KVERBS_PING_F_VALIDATE, 0, 0);
}

/* Where a thread of ours is stuck in the kernel: its stack, as a diagnostic. */
static void kv_show_stack(pid_t tid)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return;
	kv_diag("thread %d is in the kernel at:", (int)tid);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		kv_diag("  %s", line);
	}
	fclose(f);
}

/*
 * Wait up to @seconds (times kv_time_scale()) for the server to end by
 * itself.  Returns 0 if it did; otherwise interrupts it and returns -1.
 * If even that does not end it, the test fails and ends here, leaving
 * @s to the thread.
 */
int kv_server_wait(struct kv_server *s, int seconds)
{
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += seconds * kv_time_scale();
	if (!pthread_timedjoin_np(s->thread, NULL, &ts))
		return 0;
	kv_diag("server still running after %d s: interrupting it", seconds);
	pthread_kill(s->thread, SIGUSR1);
	clock_gettime(CLOCK_REALTIME, &ts);
	/* A step in progress may finish first: allow one step's limit. */
	ts.tv_sec += 6 * kv_time_scale();
	ret = pthread_timedjoin_np(s->thread, NULL, &ts);
	/* The thread still owns @s: leave it, and end the test here. */
	if (ret) {
		kv_show_stack(__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE));
		KV_FAIL_AT(1, "server did not end on a signal either: abandoning it");
	}
	kv_diag("server ended on the signal: ret %ld errno %d (%s)", s->ret,
		s->err, strerror(s->err));
	return -1;
}

/* CLOCK_MONOTONIC, in ns. */
uint64_t kv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * End the server now, whatever it is doing, and wait for it: a signal
 * until it returns (one sent before its call would be lost), for at most
 * a step's limit.  The test fails and ends here if it does not return.
 */
void kv_server_stop(struct kv_server *s)
{
	uint64_t start = kv_now_ns();

	while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) {
		if (kv_now_ns() - start > 6000000000ULL * kv_time_scale()) {
			kv_show_stack(__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE));
			KV_FAIL_AT(1, "server did not end on a signal: abandoning it");
		}
		pthread_kill(s->thread, SIGUSR1);
		usleep(20000);
	}
	KV_ASSERT_OK(pthread_join(s->thread, NULL));
}

/* A refusal at connect time: nothing listens (yet). */
int kv_refused(long ret, int err, const struct kverbs_ping_result *r)
{
	return ret == -1 && err == ECONNREFUSED &&
	       r->failed_step == KVERBS_STEP_CONNECT;
}

/*
 * Run the client @p until the server is listening: a refusal within
 * the first 5 s means the server's thread has not got there yet.
 * Returns the last call's return value, and its errno in @err.
 */
long kv_client_run(struct kverbs_ping *p, int *err)
{
	const struct kverbs_ping input = *p;
	struct timespec start, now;
	long ret;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		*p = input;
		errno = 0;
		ret = ioctl(kv_fd, KVERBS_IOC_PING, p);
		*err = errno;
		if (!kv_refused(ret, *err, &p->result))
			return ret;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= 5 * kv_time_scale())
			return ret;
		usleep(20000);
	}
}

