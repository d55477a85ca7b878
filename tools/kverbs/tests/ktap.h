/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small KTAP harness for the tool's host-side unit tests, in the
 * spirit of tools/testing/selftests/kselftest_harness.h: each KV_TEST()
 * is one test case reported as one KTAP result line
 * (Documentation/dev-tools/ktap.rst).  The selftests use the kernel's
 * harness itself; these tests run in one process, with no fork per test.
 *
 *	KV_TEST(info_size_too_small)
 *	{
 *		struct kverbs_info info = { .size = 4 };
 *
 *		KV_EXPECT_ERRNO(ioctl(kv_fd, KVERBS_IOC_INFO, &info), EINVAL);
 *	}
 *
 * KV_ASSERT_* end the test case at the first failure, KV_EXPECT_* record
 * it and go on.  kv_skip() skips with a reason.  main() is KV_MAIN().
 */
#ifndef KVERBS_KTAP_H
#define KVERBS_KTAP_H

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kv_test {
	const char *name;
	void (*fn)(void);
	struct kv_test *next;
};

extern struct kv_test *kv_tests;
extern int kv_test_failed;
extern const char *kv_test_skip;
extern jmp_buf kv_test_abort;

#define KV_TEST(name)							\
	static void kv_test_##name(void);				\
	static struct kv_test kv_test_desc_##name = {			\
		#name, kv_test_##name, NULL };				\
	__attribute__((constructor)) static void kv_test_reg_##name(void) \
	{								\
		struct kv_test **p = &kv_tests;				\
		while (*p)						\
			p = &(*p)->next;				\
		*p = &kv_test_desc_##name;				\
	}								\
	static void kv_test_##name(void)

#define kv_diag(fmt, ...) printf("# " fmt "\n", ##__VA_ARGS__)

#define KV_FAIL_AT(fatal, fmt, ...) do {				\
	kv_diag("%s:%d: " fmt, __FILE__, __LINE__, ##__VA_ARGS__);	\
	kv_test_failed = 1;						\
	if (fatal)							\
		longjmp(kv_test_abort, 1);				\
} while (0)

/* A call that must fail with errno @err: (call) is -1 and errno matches. */
#define KV_CHECK_ERRNO(fatal, call, err) do {				\
	errno = 0;							\
	long __r = (long)(call);					\
	int __e = errno;						\
	if (__r != -1 || __e != (err))					\
		KV_FAIL_AT(fatal, "%s: returned %ld errno %d (%s), expected -1 errno %d (%s)", \
			   #call, __r, __e, strerror(__e), (err), strerror(err)); \
} while (0)
#define KV_EXPECT_ERRNO(call, err) KV_CHECK_ERRNO(0, call, err)
#define KV_ASSERT_ERRNO(call, err) KV_CHECK_ERRNO(1, call, err)

/* A call that must succeed: (call) is 0. */
#define KV_CHECK_OK(fatal, call) do {					\
	errno = 0;							\
	long __r = (long)(call);					\
	int __e = errno;						\
	if (__r != 0)							\
		KV_FAIL_AT(fatal, "%s: returned %ld errno %d (%s), expected 0", \
			   #call, __r, __e, strerror(__e));		\
} while (0)
#define KV_EXPECT_OK(call) KV_CHECK_OK(0, call)
#define KV_ASSERT_OK(call) KV_CHECK_OK(1, call)

#define KV_CHECK_CMP(fatal, a, op, b) do {				\
	long long __a = (long long)(a), __b = (long long)(b);		\
	if (!(__a op __b))						\
		KV_FAIL_AT(fatal, "%s %s %s: %lld vs %lld", #a, #op, #b, __a, __b); \
} while (0)
#define KV_EXPECT_EQ(a, b) KV_CHECK_CMP(0, a, ==, b)
#define KV_ASSERT_EQ(a, b) KV_CHECK_CMP(1, a, ==, b)
#define KV_EXPECT_NE(a, b) KV_CHECK_CMP(0, a, !=, b)
#define KV_EXPECT_GE(a, b) KV_CHECK_CMP(0, a, >=, b)
#define KV_ASSERT_GE(a, b) KV_CHECK_CMP(1, a, >=, b)
#define KV_EXPECT_LE(a, b) KV_CHECK_CMP(0, a, <=, b)
#define KV_EXPECT_TRUE(c) KV_CHECK_CMP(0, !!(c), ==, 1)
#define KV_ASSERT_TRUE(c) KV_CHECK_CMP(1, !!(c), ==, 1)

/* Skip the current test case, with the reason in its KTAP line. */
#define kv_skip(reason) do {						\
	kv_test_skip = (reason);					\
	longjmp(kv_test_abort, 1);					\
} while (0)

/* Runs every test, or those named on the command line; exit 0 if none failed. */
#define KV_MAIN()							\
struct kv_test *kv_tests;						\
int kv_test_failed;							\
const char *kv_test_skip;						\
jmp_buf kv_test_abort;							\
int main(int argc, char **argv)						\
{									\
	/* volatile: live across the setjmp() below. */			\
	struct kv_test *volatile t;					\
	volatile int n = 0, failed = 0;					\
	int i;								\
									\
	for (t = kv_tests; t; t = t->next)				\
		for (i = 1; i <= argc; i++)				\
			if (argc == 1 || (i < argc && !strcmp(argv[i], t->name))) { \
				n++;					\
				break;					\
			}						\
	printf("KTAP version 1\n1..%d\n", n);				\
	fflush(stdout);							\
	n = 0;								\
	for (t = kv_tests; t; t = t->next) {				\
		int run = argc == 1;					\
		for (i = 1; i < argc; i++)				\
			run |= !strcmp(argv[i], t->name);		\
		if (!run)						\
			continue;					\
		kv_test_failed = 0;					\
		kv_test_skip = NULL;					\
		if (!setjmp(kv_test_abort))				\
			t->fn();					\
		n++;							\
		if (kv_test_skip)					\
			printf("ok %d %s # SKIP %s\n", n, t->name, kv_test_skip); \
		else							\
			printf("%sok %d %s\n", kv_test_failed ? "not " : "", n, t->name); \
		failed |= kv_test_failed;				\
		fflush(stdout);						\
	}								\
	return failed;							\
}

#endif /* KVERBS_KTAP_H */
