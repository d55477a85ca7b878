/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvlib: what kverbs' C selftests share.  The suites are written on
 * kselftest_harness.h, which kvlib.c cannot include (it defines the
 * runner); its few failure and skip reports call kv_harness_fail() and
 * kv_harness_skip() instead, which kvharness.h defines for the test in
 * progress.  So the helpers are called from within test cases.
 */
#ifndef KVERBS_KVLIB_H
#define KVERBS_KVLIB_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fails the test in progress; @fatal: ends it too. */
void kv_harness_fail(int fatal, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Skips the test in progress, with @reason; does not return. */
void kv_harness_skip(const char *reason) __attribute__((noreturn));

/* Diagnostics to stderr, unbuffered: a test ends in _exit(). */
#define kv_diag(fmt, ...) fprintf(stderr, "# " fmt "\n", ##__VA_ARGS__)
#define KV_FAIL_AT(fatal, fmt, ...) \
	kv_harness_fail(fatal, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
#define kv_skip(reason) kv_harness_skip(reason)
#define KV_ASSERT_OK(call) do {						\
	if ((call) != 0)						\
		KV_FAIL_AT(1, "%s: %s", #call, strerror(errno));	\
} while (0)
#define KV_ASSERT_TRUE(c) do {						\
	if (!(c))							\
		KV_FAIL_AT(1, "%s is false", #c);			\
} while (0)

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <uapi/kverbs.h>

/* Per-step limit of our pings: small, so that a bug fails fast. */
#define KV_STEP_TIMEOUT_NS	(5ULL * 1000000000ULL)

#define KV_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* /dev/kverbs, as the test's fixture opened it (kv_open()). */
extern int kv_fd;
int kv_dev(void);

/* $@name, or @def if it is unset or empty. */
const char *kv_env(const char *name, const char *def);
/* The guest's RDMA address: $KV_ADDR. */
const char *kv_addr(void);
unsigned int kv_time_scale(void);
/* KV_STEP_TIMEOUT_NS, scaled: the per-step limit kv_ping_base() sets. */
__u64 kv_step_timeout_ns(void);
int kv_sockaddr(struct __kernel_sockaddr_storage *ss, const char *addr,
		unsigned short port);
size_t kv_sockaddr_len(int family);

void kv_ping_base(struct kverbs_ping *p, unsigned short port);

/**
 * struct kv_server - a server ping or perf test running in its own thread
 * @thread: the thread
 * @ioc: KVERBS_IOC_PING or KVERBS_IOC_PERF
 * @ping: its argument, for KVERBS_IOC_PING
 * @perf: its argument, for KVERBS_IOC_PERF
 * @ret: what the ioctl returned
 * @err: errno after it
 * @fail_nth: (in) make the thread's fail_nth-th allocation fail, 0: none
 * @fail_nth_left: what was left of @fail_nth after the call; -1 if it
 *	could not be set or read
 * @done: set (release) when the call has returned
 */
struct kv_server {
	pthread_t thread;
	pid_t tid;
	unsigned long ioc;
	union {
		struct kverbs_ping ping;
		struct kverbs_perf perf;
	};
	long ret;
	int err;
	unsigned int fail_nth;
	long fail_nth_left;
	int done;
};

uint64_t kv_now_ns(void);

int kv_fail_nth_set(unsigned int n);
long kv_fail_nth_get(void);
void kv_fail_nth_close(void);

struct kv_server *kv_server_start(unsigned short port);
struct kv_server *kv_server_start_with(unsigned short port, __u32 flags,
				       __u64 timeout_ns, unsigned int fail_nth);
struct kv_server *kv_perf_server_start(unsigned short port, __u32 flags, __u16 cq_flags,
				       unsigned int fail_nth);
int kv_server_wait(struct kv_server *s, int seconds);
void kv_server_stop(struct kv_server *s);
int kv_refused(long ret, int err, const struct kverbs_ping_result *r);
long kv_client_run(struct kverbs_ping *p, int *err);

#endif /* KVERBS_KVLIB_H */
