// SPDX-License-Identifier: GPL-2.0
/*
 * copy-rate: how fast this CPU copies memory, for 'make bench''s estimate
 * of what rxe allows (rxe copies every payload byte into an skb on the
 * sending side and out of one on the receiving side).
 *
 *   copy-rate [-b BLOCK] [-w WORKSET] [-t SECONDS] [-m METHOD]
 *
 * Copies BLOCK bytes at a time (default 4096, rxe's largest packet
 * payload; a multiple of 32) from a source of WORKSET bytes (default
 * 1 MiB) to a destination of the same size, for SECONDS (default 1), three
 * ways: "rep movsb", which is what the x86 kernel's memcpy() runs on CPUs
 * with FSRM; 8-byte moves, what it runs without; and the C library's
 * memcpy(), for comparison.  -m movsb, words or libc: that way alone
 * (make bench's check of the host's speed before and after each row).
 * Prints one line per method:
 *   <method> <bytes per second>
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void copy_movsb(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__) || defined(__i386__)
	asm volatile("rep movsb"
		     : "+D"(dst), "+S"(src), "+c"(n)
		     :
		     : "memory");
#else
	memcpy(dst, src, n);
#endif
}

/*
 * Without FSRM the kernel's memcpy() is memcpy_orig: 8-byte moves, four
 * at a time.  Not vectorized, and not turned back into a memcpy() call.
 */
__attribute__((optimize("no-tree-vectorize", "no-tree-loop-distribute-patterns")))
static void copy_words(void *dst, const void *src, size_t n)
{
	uint64_t *d = dst;
	const uint64_t *s = src;

	for (n /= 32; n; n--, d += 4, s += 4) {
		uint64_t a = s[0], b = s[1], c = s[2], e = s[3];

		d[0] = a;
		d[1] = b;
		d[2] = c;
		d[3] = e;
	}
	asm volatile("" : : "r"(d) : "memory");
}

static void copy_libc(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	/* Keep the compiler from dropping or merging the copies. */
	asm volatile("" : : "r"(dst) : "memory");
}

/* Bytes per second that @copy moves in @secs, BLOCK bytes at a time. */
static double measure(void (*copy)(void *, const void *, size_t),
		      char *dst, const char *src, size_t block, size_t workset,
		      double secs)
{
	size_t off = 0, blocks = workset / block;
	uint64_t bytes = 0;
	double start = now(), t;

	for (;;) {
		/* Check the clock only every 64 blocks: it costs under TCG. */
		for (int i = 0; i < 64; i++) {
			copy(dst + off * block, src + off * block, block);
			if (++off == blocks)
				off = 0;
		}
		bytes += 64 * (uint64_t)block;
		t = now() - start;
		if (t >= secs)
			break;
	}
	return bytes / t;
}

int main(int argc, char **argv)
{
	size_t block = 4096, workset = 1 << 20;
	double secs = 1;
	static const struct {
		const char *name;
		void (*copy)(void *, const void *, size_t);
	} methods[] = {
		{ "movsb", copy_movsb }, { "words", copy_words }, { "libc", copy_libc },
	};
	const char *only = NULL;
	char *src, *dst;
	size_t i;
	int c;

	while ((c = getopt(argc, argv, "b:w:t:m:")) != -1) {
		switch (c) {
		case 'b':
			block = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			workset = strtoul(optarg, NULL, 0);
			break;
		case 't':
			secs = strtod(optarg, NULL);
			break;
		case 'm':
			only = optarg;
			break;
		default:
			fprintf(stderr, "usage: copy-rate [-b BLOCK] [-w WORKSET] [-t SECONDS] [-m METHOD]\n");
			return 2;
		}
	}
	for (i = 0; only && i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(only, methods[i].name))
			break;
	if (only && i == sizeof(methods) / sizeof(methods[0])) {
		fprintf(stderr, "copy-rate: no method %s (movsb, words, libc)\n", only);
		return 2;
	}
	if (!block || block % 32 || workset < block || secs <= 0) {
		fprintf(stderr, "copy-rate: need 0 < BLOCK <= WORKSET, BLOCK a multiple of 32, SECONDS > 0\n");
		return 2;
	}
	src = aligned_alloc(4096, (workset + 4095) & ~(size_t)4095);
	dst = aligned_alloc(4096, (workset + 4095) & ~(size_t)4095);
	if (!src || !dst) {
		fprintf(stderr, "copy-rate: out of memory\n");
		return 1;
	}
	/* Touch every page first so that no fault is timed. */
	memset(src, 0x5a, workset);
	memset(dst, 0, workset);
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!only || !strcmp(only, methods[i].name))
			printf("%s %.0f\n", methods[i].name,
			       measure(methods[i].copy, dst, src, block, workset, secs));
	return 0;
}
