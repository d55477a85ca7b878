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

/*
 * KV_ONLY, read as lib.sh's ktap_main reads it for the shell suites:
 * "name ..." runs only the cases of these full names, fixture.test or
 * fixture.variant.test as the harness prints them; "SUITE:name" is
 * meant for the suite SUITE alone (a program's name: uapi, fuzz,
 * failnth), and a suite with no name meant for it runs every case.  A
 * name that is no case of this suite becomes a case of its own,
 * KV_ONLY.name, that fails: a typo must not pass by running nothing.
 * The harness's own options (-r, -t, -f, ...) add to KV_ONLY's.
 */
static const char *kv_only_suite;

static void kv_only_unknown(struct __test_metadata *_metadata,
			    struct __fixture_variant_metadata __attribute__((unused)) *variant)
{
	TH_LOG("KV_ONLY names %s, which is no test case of %s",
	       _metadata->name, kv_only_suite);
	_metadata->exit_code = KSFT_FAIL;
}

static struct __fixture_metadata kv_only_fixture = { .name = "KV_ONLY" };

/* Is @name the full name of a case of this program? */
static bool kv_only_is_case(const char *name)
{
	struct __fixture_variant_metadata no_variant = { .name = "" };
	struct __fixture_variant_metadata *v;
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	char full[1024];

	for (f = __fixture_list; f; f = f->next) {
		if (f == &kv_only_fixture)
			continue;
		for (v = f->variant ?: &no_variant; v; v = v->next) {
			for (t = f->tests; t; t = t->next) {
				snprintf(full, sizeof(full), "%s%s%s.%s", f->name,
					 v->name[0] ? "." : "", v->name, t->name);
				if (!strcmp(full, name))
					return true;
			}
		}
	}
	return false;
}

/* A failing case KV_ONLY.@name; returns its full name, for -r. */
static char *kv_only_add_unknown(char *name)
{
	struct __test_metadata *t = calloc(1, sizeof(*t));
	char *full;

	if (!t || asprintf(&full, "%s.%s", kv_only_fixture.name, name) < 0) {
		perror("kv_only_add_unknown");
		exit(KSFT_FAIL);
	}
	if (!kv_only_fixture.prev)
		__register_fixture(&kv_only_fixture);
	t->name = name;
	t->fn = kv_only_unknown;
	t->fixture = &kv_only_fixture;
	t->termsig = -1;
	t->timeout = 30;
	__register_test(t);
	return full;
}

static int kv_harness_main(int argc, char **argv)
{
	const char *only = getenv("KV_ONLY");
	char *names, *name, *save, *colon;
	char **args;
	int n = argc;

	kv_only_suite = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	if (!only || !*only)
		return test_harness_run(argc, argv);
	names = strdup(only);
	/* Two arguments for each name, a name at least two characters. */
	args = calloc(argc + strlen(only) + 2, sizeof(*args));
	if (!names || !args) {
		perror("KV_ONLY");
		return KSFT_FAIL;
	}
	memcpy(args, argv, argc * sizeof(*args));
	for (name = strtok_r(names, " \t\n", &save); name;
	     name = strtok_r(NULL, " \t\n", &save)) {
		colon = strchr(name, ':');
		if (colon) {
			*colon = '\0';
			if (strcmp(name, kv_only_suite))
				continue;
			name = colon + 1;
		}
		args[n++] = "-r";
		args[n++] = kv_only_is_case(name) ? name : kv_only_add_unknown(name);
	}
	if (n == argc)
		return test_harness_run(argc, argv);
	return test_harness_run(n, args);
}

/* kselftest_harness.h's TEST_HARNESS_MAIN, with KV_ONLY. */
#define KV_HARNESS_MAIN \
	int main(int argc, char **argv) { \
		return kv_harness_main(argc, argv); \
	}

#endif /* KVERBS_KVHARNESS_H */
