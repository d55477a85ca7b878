// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs write_bw, read_bw, send_bw, read_lat, atomic_lat, atomic_bw,
 * write_lat, send_lat: perftest's tests, run by the kernel.
 *
 * The options are perftest's where they overlap.  Without an address the
 * command waits as the server, with one it runs the client; the client
 * says what to run, and the server takes it from the connection request.
 * The whole test is one KVERBS_IOC_PERF call; a latency test's client
 * also hands it an array for each operation's time, and works out the
 * statistics from that (stats.c).
 *
 * This file is the tests' table and the command; perf_opts.c reads the
 * command line, perf_run.c makes the ioctl's argument of it and runs the
 * test, in threads for -q and -b, and perf_report.c says what happened.
 */
#include <stdio.h>
#include <string.h>

#include "kverbs.h"
#include "perf.h"

/* --validate, as the tests that move data check it. */
#define KV_VALIDATE_DATA \
	"check every byte of every message against a pattern\n" \
	"                        carrying its iteration number (the receiving side\n" \
	"                        checks; WRITE and READ then run in rounds)"
#define KV_VALIDATE_ATOMIC \
	"check every value fetched, and the server every word's\n" \
	"                        final value"
#define KV_VALIDATE_PINGPONG \
	"check every byte of every message against a pattern\n" \
	"                        carrying its iteration number (both sides check\n" \
	"                        what the other sent)"
/* The bandwidth and the latency tests' options. */
#define KV_OPTS_BW	(KV_OPT_DEPTH | KV_OPT_REVERSE | KV_OPT_EVENTS)
#define KV_OPTS_LAT	KV_OPT_EVENTS

static const struct kv_perf_test kv_perf_tests[] = {
	{
		.cmd = "write_bw", .test = KVERBS_PERF_WRITE_BW, .verb = "RDMA_Write",
		.opts = KV_OPTS_BW | KV_OPT_SIZE | KV_OPT_IMM | KV_OPT_WRITE_IMM | KV_OPT_INLINE |
			KV_OPT_RW | KV_OPT_INV,
		.size = 65536, .iters = KVERBS_PERF_DEFAULT_ITERS,
		.feature = KVERBS_FEATURE_PERF,
		.counts = "messages to move", .validate = KV_VALIDATE_DATA,
		.bidir = "writes to",
	},
	{
		.cmd = "read_bw", .test = KVERBS_PERF_READ_BW, .verb = "RDMA_Read",
		.opts = KV_OPTS_BW | KV_OPT_SIZE | KV_OPT_RW | KV_OPT_INV,
		.size = 65536, .iters = KVERBS_PERF_DEFAULT_ITERS,
		.feature = KVERBS_FEATURE_PERF,
		.counts = "messages to move", .validate = KV_VALIDATE_DATA,
		.bidir = "reads from",
	},
	{
		.cmd = "send_bw", .test = KVERBS_PERF_SEND_BW, .verb = "Send",
		.kind = KV_PERF_RECV,
		.opts = KV_OPTS_BW | KV_OPT_SIZE | KV_OPT_IMM | KV_OPT_INLINE | KV_OPT_SRQ |
			KV_OPT_UD,
		.size = 65536, .iters = KVERBS_PERF_DEFAULT_ITERS,
		.feature = KVERBS_FEATURE_PERF,
		.counts = "messages to move", .validate = KV_VALIDATE_DATA,
		.bidir = "sends to",
	},
	{
		.cmd = "read_lat", .test = KVERBS_PERF_READ_LAT, .verb = "RDMA_Read",
		.kind = KV_PERF_LAT,
		.opts = KV_OPTS_LAT | KV_OPT_SIZE | KV_OPT_RW | KV_OPT_INV | KV_OPT_PHASES,
		.size = 2, .iters = KV_PERF_LAT_ITERS,
		.feature = KVERBS_FEATURE_PERF_LAT,
		.counts = "operations to time", .validate = KV_VALIDATE_DATA,
	},
	{
		.cmd = "atomic_lat", .test = KVERBS_PERF_ATOMIC_LAT, .verb = "Atomic",
		.kind = KV_PERF_LAT | KV_PERF_ATOMIC,
		.opts = KV_OPTS_LAT | KV_OPT_ATOMIC | KV_OPT_PHASES,
		.size = KV_PERF_ATOMIC_SIZE, .iters = KV_PERF_LAT_ITERS,
		.feature = KVERBS_FEATURE_PERF_LAT,
		.counts = "operations to time", .validate = KV_VALIDATE_ATOMIC,
	},
	{
		.cmd = "atomic_bw", .test = KVERBS_PERF_ATOMIC_BW, .verb = "Atomic",
		.kind = KV_PERF_ATOMIC, .opts = KV_OPTS_BW | KV_OPT_ATOMIC,
		.size = KV_PERF_ATOMIC_SIZE, .iters = KVERBS_PERF_DEFAULT_ITERS,
		.feature = KVERBS_FEATURE_PERF_LAT,
		.counts = "operations to do", .validate = KV_VALIDATE_ATOMIC,
		.bidir = "does atomics on",
	},
	{
		.cmd = "write_lat", .test = KVERBS_PERF_WRITE_LAT, .verb = "RDMA_Write",
		.kind = KV_PERF_LAT, .opts = KV_OPT_SIZE | KV_OPT_IMM | KV_OPT_WRITE_IMM | KV_OPT_INLINE,
		.size = 2, .iters = KV_PERF_LAT_ITERS,
		.feature = KVERBS_FEATURE_PERF_PINGPONG,
		.counts = "round trips to time", .validate = KV_VALIDATE_PINGPONG,
		.polls = "each side sees the other's WRITE only by polling its memory",
	},
	{
		.cmd = "send_lat", .test = KVERBS_PERF_SEND_LAT, .verb = "Send",
		.kind = KV_PERF_LAT | KV_PERF_RECV,
		.opts = KV_OPTS_LAT | KV_OPT_SIZE | KV_OPT_IMM | KV_OPT_INLINE | KV_OPT_SRQ |
			KV_OPT_UD |
			KV_OPT_PHASES,
		.size = 2, .iters = KV_PERF_LAT_ITERS,
		.feature = KVERBS_FEATURE_PERF_PINGPONG,
		.counts = "round trips to time", .validate = KV_VALIDATE_PINGPONG,
	},
};

#define KV_PERF_NTESTS	(sizeof(kv_perf_tests) / sizeof(kv_perf_tests[0]))

const struct kv_perf_test *kv_perf_test(uint32_t test)
{
	size_t i;

	for (i = 0; i < KV_PERF_NTESTS; i++)
		if (kv_perf_tests[i].test == test)
			return &kv_perf_tests[i];
	return &kv_perf_tests[0];
}

/* Whether @t's data work requests are RDMA WRITEs (--write_with_imm). */
bool kv_perf_writes(const struct kv_perf_test *t)
{
	return !strcmp(t->verb, "RDMA_Write");
}

/**
 * kv_perf_is_cmd - whether @name is a perf subcommand
 * @name: a command's name
 */
bool kv_perf_is_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < KV_PERF_NTESTS; i++)
		if (!strcmp(name, kv_perf_tests[i].cmd))
			return true;
	return false;
}

/**
 * kv_perf_commands - the perf subcommands' lines of the tool's usage
 * @f: where to print them
 */
void kv_perf_commands(FILE *f)
{
	size_t i;

	for (i = 0; i < KV_PERF_NTESTS; i++)
		fprintf(f, "  %-10s perftest's ib_%s%s\n", kv_perf_tests[i].cmd,
			kv_perf_tests[i].cmd, i ? "" : ": no ADDR to serve, ADDR to run");
}

/*
 * write_bw, read_bw, send_bw, read_lat, atomic_lat, atomic_bw, write_lat
 * and send_lat: which test to run is the subcommand's name, argv[0].
 */
int kv_cmd_perf(int argc, char **argv)
{
	size_t i;

	for (i = 0; i < KV_PERF_NTESTS; i++)
		if (!strcmp(argv[0], kv_perf_tests[i].cmd))
			return kv_perf_main(kv_perf_tests[i].test, argc, argv);
	fprintf(stderr, "%s: '%s' is not a perf test\n", kv_prog, argv[0]);
	return KV_EXIT_USAGE;
}
