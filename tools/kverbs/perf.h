/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf commands' own declarations, shared by perf.c (the tests'
 * table and the command), perf_opts.c (its options), perf_run.c (the
 * module's ioctl and the threads) and perf_report.c (text and JSON).
 */
#ifndef KVERBS_TOOL_PERF_H
#define KVERBS_TOOL_PERF_H

#include "kverbs.h"

/* -c UD without -s: within the active MTU of a RoCE port on 1500-byte Ethernet. */
#define KV_PERF_UD_SIZE	1024

/* -q: connections, and threads, of one test at most. */
#define KV_PERF_MAX_QPS		32
/* perftest's defaults for its latency tests. */
#define KV_PERF_LAT_ITERS	1000
/* Atomic operations are on 8-byte words, which makes them the message. */
#define KV_PERF_ATOMIC_SIZE	8
/*
 * Room a latency client gives the kernel for samples in duration mode,
 * where their count is not known: one per microsecond of the duration,
 * more than one operation at a time can take on any device we know of (a
 * READ's or an atomic's round trip is longer); at most 16 Mi, 128 MiB.
 * Should the array fill all the same, the kernel ends the test there,
 * and we say so.
 */
#define KV_PERF_NS_PER_SAMPLE	1000
#define KV_PERF_SAMPLES_MAX	(16u << 20)

/* What a test reports, and how it ran. */
enum {
	KV_PERF_LAT = 1 << 0,		/* latency: each operation timed, perftest's columns */
	KV_PERF_ATOMIC = 1 << 1,	/* 8-byte atomics: the type in the title and --json */
	/* The server's CPU takes every message: with --busy-poll it polls as the responder too. */
	KV_PERF_RECV = 1 << 2,
};

/* The options a test takes beyond those every test takes. */
enum {
	KV_OPT_SIZE = 1 << 0,		/* -s any size, -a */
	KV_OPT_ATOMIC = 1 << 1,		/* -A TYPE */
	KV_OPT_DEPTH = 1 << 2,		/* -t N, -q N; without it the depth is 1 */
	KV_OPT_REVERSE = 1 << 3,	/* -b, and the server's --no-reverse */
	KV_OPT_EVENTS = 1 << 4,		/* -e; without it, .polls says why */
	KV_OPT_IMM = 1 << 5,		/* --imm: WRITE or SEND with immediate data */
	KV_OPT_INLINE = 1 << 6,		/* -I: the messages a WRITE or SEND carries */
	KV_OPT_RW = 1 << 7,		/* --rw: READ or WRITE through rdma_rw contexts */
	KV_OPT_INV = 1 << 8,		/* --inv: each round's key invalidated by the peer */
	KV_OPT_SRQ = 1 << 9,		/* --srq: the server's receives in a shared queue */
	KV_OPT_PHASES = 1 << 10,	/* --phases: post to handler, handler to thread */
	KV_OPT_UD = 1 << 11,		/* -c UD: the data in datagrams */
	KV_OPT_WRITE_IMM = 1 << 12,	/* --write_with_imm: perftest's --imm of a WRITE */
};

/*
 * One perf subcommand.  Adding a test takes an entry here, beside the
 * module's (kverbs_perf_tests[] in kernel/perf/perf.c); the option checks,
 * --help, the text and --json reports read it.
 */
struct kv_perf_test {
	const char *cmd;	/* the subcommand, and "test" in --json */
	uint32_t test;		/* &enum kverbs_perf_test */
	const char *verb;	/* as perftest's titles name it */
	unsigned int kind;	/* KV_PERF_*: what it reports */
	unsigned int opts;	/* KV_OPT_*: the options it takes */
	uint32_t size;		/* perftest's default -s */
	uint32_t iters;		/* perftest's default -n */
	uint64_t feature;	/* the module's KVERBS_FEATURE_* that runs it */
	const char *counts;	/* --help: what -n counts */
	const char *validate;	/* --help: what --validate checks */
	const char *bidir;	/* --help: what -b's server does to the client */
	const char *polls;	/* no -e: why each side busy-polls */
};

/* perftest's names for -A, as its atomicTypesStr[] spells them. */
#define KV_FETCH_AND_ADD	"FETCH_AND_ADD"
#define KV_CMP_AND_SWAP		"CMP_AND_SWAP"

/* perf.c: the tests */
const struct kv_perf_test *kv_perf_test(uint32_t test);
bool kv_perf_writes(const struct kv_perf_test *t);

/* perf_run.c: a perf command, from its command line to its exit status */
int kv_perf_main(uint32_t test, int argc, char **argv);

/* perf_report.c: what a test did, as text or JSON */
/*
 * What a latency client worked out from its samples; all zero for other
 * tests and for servers, which take none.
 */
struct kv_perf_lat {
	uint32_t samples;	/* the kernel stored */
	bool full;		/* duration mode ended early: no room for more */
	bool have_stats;
	struct kv_lat_stats stats;
	/* --phases: post to handler, handler to thread (uAPI: kverbs_perf.phases) */
	bool have_phases;
	struct kv_lat_stats to_handler;
	struct kv_lat_stats to_thread;
};

int kv_perf_report(const struct kv_perf_opts *o, const struct kverbs_perf *cmd,
		   int err, const char *addr, const char *where,
		   const struct kv_span *span, const struct kv_cpu *cpu,
		   const struct kv_perf_lat *lat);
void kv_perf_report_all_end(const struct kv_perf_opts *o, bool rows);

#endif /* KVERBS_TOOL_PERF_H */
