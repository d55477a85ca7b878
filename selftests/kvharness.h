/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvharness: what kverbs' C suites add to kselftest_harness.h -- errno
 * checks, failures with a message, kvlib's reports for the test in
 * progress, and /dev/kverbs opened by a fixture.
 *
 * Include it once per program, after kselftest_harness.h: like that
 * header, it defines functions (kvlib.h's kv_harness_fail() and
 * kv_harness_skip()), not only declares them.
 */
#ifndef KVERBS_KVHARNESS_H
#define KVERBS_KVHARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvlib.h"

/* A call that must fail with @err: it returns -1 and sets errno to @err. */
#define __KV_ERRNO(kind, err, call) do {				\
	errno = 0;							\
	long __r = (long)(call);					\
	int __e = errno;						\
	kind##_EQ(-1, __r) TH_LOG("%s: errno %d (%s), expected %d (%s)", \
				  #call, __e, strerror(__e), (err), strerror(err)); \
	kind##_EQ((err), __e) TH_LOG("%s: %s, expected %s", #call,	\
				     strerror(__e), strerror(err));	\
} while (0)
#define EXPECT_ERRNO(err, call) __KV_ERRNO(EXPECT, err, call)
#define ASSERT_ERRNO(err, call) __KV_ERRNO(ASSERT, err, call)

/* A call that must succeed: it returns 0. */
#define __KV_OK(kind, call) do {					\
	errno = 0;							\
	long __r = (long)(call);					\
	int __e = errno;						\
	kind##_EQ(0, __r) TH_LOG("%s: errno %d (%s)", #call, __e,	\
				 strerror(__e));			\
} while (0)
#define EXPECT_OK(call) __KV_OK(EXPECT, call)
#define ASSERT_OK(call) __KV_OK(ASSERT, call)

/* A failure that no comparison says as well as its message. */
#define KV_FAIL(fmt, ...) do {						\
	TH_LOG(fmt, ##__VA_ARGS__);					\
	_metadata->exit_code = KSFT_FAIL;				\
} while (0)
/* The same, ending the test. */
#define KV_FAIL_FATAL(fmt, ...) ASSERT_TRUE(0) TH_LOG(fmt, ##__VA_ARGS__)

/* Has the test failed so far? */
#define kv_failed() (_metadata->exit_code == KSFT_FAIL)

/*
 * kvlib's reports (kvlib.h), for the test in progress: each test runs in
 * a process of its own, whose fixture set this (kv_open()).
 */
static struct __test_metadata *kv_meta;

void kv_harness_fail(int fatal, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "# %s:%d:%s:", file, line, kv_meta->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	kv_meta->exit_code = KSFT_FAIL;
	if (fatal) {
		/* What a failed ASSERT_*() does. */
		kv_meta->aborted = true;
		longjmp(kv_meta->env, 1);
	}
}

void kv_harness_skip(const char *reason)
{
	struct __test_metadata *_metadata = kv_meta;

	/* The harness ends the test and runs its teardown from here. */
	SKIP(longjmp(_metadata->env, 1), "%s", reason);
	abort();	/* not reached */
}

/*
 * /dev/kverbs, opened by a fixture's setup for each test, which runs in a
 * process of its own; kvlib's kv_fd is the same file.  Without the
 * module the test skips: check _metadata->exit_code after this.
 */
static inline void kv_open(struct __test_metadata *_metadata, int *fd)
{
	kv_meta = _metadata;
	*fd = open("/dev/kverbs", O_RDWR | O_CLOEXEC);
	if (*fd < 0 && (errno == ENOENT || errno == ENXIO || errno == ENODEV))
		SKIP(return, "no /dev/kverbs: module not loaded");
	ASSERT_LE(0, *fd) TH_LOG("open /dev/kverbs: %s", strerror(errno));
	kv_fd = *fd;
}

static inline void kv_close(int fd)
{
	if (fd >= 0)
		close(fd);
	kv_fd = -1;
}

#endif /* KVERBS_KVHARNESS_H */
