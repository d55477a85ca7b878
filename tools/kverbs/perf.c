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
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
 * module's (kverbs_perf_tests[] in kernel/perf.c); the option checks,
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

static const struct kv_perf_test *kv_perf_test(uint32_t test)
{
	size_t i;

	for (i = 0; i < KV_PERF_NTESTS; i++)
		if (kv_perf_tests[i].test == test)
			return &kv_perf_tests[i];
	return &kv_perf_tests[0];
}

/* The test that ran, as the kernel says; the one asked for if it never began. */
static const struct kv_perf_test *kv_perf_ran(const struct kv_perf_opts *o,
					      const struct kverbs_perf *cmd)
{
	return kv_perf_test(cmd->result.test ? cmd->result.test : o->test);
}

/* perftest's names for -A, as its atomicTypesStr[] spells them. */
#define KV_FETCH_AND_ADD	"FETCH_AND_ADD"
#define KV_CMP_AND_SWAP		"CMP_AND_SWAP"

/*
 * The atomic operation in effect: the client's, or the one its client
 * asked a server for; NULL while a server has not been asked.
 */
static const char *kv_perf_atomic_type(const struct kverbs_perf *cmd)
{
	const struct kverbs_perf_result *r = &cmd->result;

	if (!r->test && cmd->role == KVERBS_ROLE_SERVER)
		return NULL;
	return (r->test ? r->flags : cmd->flags) & KVERBS_PERF_F_CMP_SWAP ?
	       KV_CMP_AND_SWAP : KV_FETCH_AND_ADD;
}

/* Whether @t's data work requests are RDMA WRITEs (--write_with_imm). */
static bool kv_perf_writes(const struct kv_perf_test *t)
{
	return !strcmp(t->verb, "RDMA_Write");
}

/* Where perftest's --out_json writes when no --out_json_file names a file. */
#define KV_PERFTEST_JSON_FILE	"perftest_out.json"

/* Whether @name is an RDMA device of this host, as perftest's -d names one. */
static bool kv_is_ibdev(const char *name)
{
	char path[256];

	if (!*name || strchr(name, '/') || strlen(name) > 64)
		return false;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", name);
	return access(path, F_OK) == 0;
}

/*
 * perftest's "-d mlx5_0" or "-dmlx5_0": here -d is --debug and takes no
 * value, so the device name would become the address, or an unknown
 * option.  @after_d is the word that followed a lone -d, if it was not an
 * option: refuse it when it cannot be the address: an RDMA device's name,
 * a name no host has ('_'), or one followed by the real address.  Returns
 * 0, or -1 after a usage error.
 */
static int kv_perf_device_arg(const char *cmd, int argc, char **argv, const char *after_d)
{
	struct sockaddr_storage ss;
	bool positional = false;
	int i;

	if (!after_d)
		return 0;
	/* getopt_long() has moved the words that are not options to the end. */
	for (i = optind; i < argc; i++)
		positional |= argv[i] == after_d;
	if (positional && (argc - optind > 1 || kv_is_ibdev(after_d) || strchr(after_d, '_') ||
			   kv_parse_addr(after_d, 0, &ss)))
		return kv_perftest_only(cmd, "-d");
	return 0;
}

/* "-dmlx5_0", which getopt_long() would take for -d -m ...: before it does. */
static int kv_perf_device_attached(const char *cmd, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "-d", 2) && argv[i][2] &&
		    (kv_is_ibdev(argv[i] + 2) || strchr(argv[i] + 2, '_')))
			return kv_perftest_only(cmd, "-d");
	return 0;
}

/* --poll's names, by &enum kverbs_perf_poll. */
static const char *const kv_perf_polls[] = {
	[KVERBS_PERF_POLL_DIRECT] = "direct",
	[KVERBS_PERF_POLL_SOFTIRQ] = "softirq",
	[KVERBS_PERF_POLL_WORKQUEUE] = "workqueue",
	[KVERBS_PERF_POLL_UNBOUND_WORKQUEUE] = "unbound",
};

#define KV_PERF_NPOLLS	(sizeof(kv_perf_polls) / sizeof(kv_perf_polls[0]))

/**
 * kv_perf_poll_str - the name of a completion policy
 * @poll: &enum kverbs_perf_poll
 *
 * Returns what --poll and --json call it, "unknown" for a value this
 * tool does not know.
 */
const char *kv_perf_poll_str(uint32_t poll)
{
	return poll < KV_PERF_NPOLLS && kv_perf_polls[poll] ? kv_perf_polls[poll] : "unknown";
}

/**
 * kv_perf_poll_parse - --poll's argument
 * @cmd: the subcommand, for the usage error
 * @name: the argument
 *
 * Returns it as &enum kverbs_perf_poll, or 0 after a usage error was
 * printed when it is none of its names.
 */
uint32_t kv_perf_poll_parse(const char *cmd, const char *name)
{
	uint32_t i;

	for (i = KVERBS_PERF_POLL_DIRECT; i < KV_PERF_NPOLLS; i++)
		if (!strcmp(name, kv_perf_polls[i]))
			return i;
	kv_usage_error(cmd, "invalid --poll '%s' (direct, softirq, workqueue or unbound)", name);
	return 0;
}

/**
 * kv_perf_parse_poll - --poll, -e, --cq-pool, --dim and --busy-poll together
 * @o: the command line, all of it read
 * @polls: why the test takes only --poll direct, or NULL when it takes any
 *
 * Sets @o->poll: KVERBS_PERF_POLL_SOFTIRQ for -e and for a pool or
 * moderation without --poll.  Returns 0, or -1 after a usage error was
 * printed.
 */
int kv_perf_parse_poll(struct kv_perf_opts *o, const char *polls)
{
	const char *cq_opt = o->cq_pool ? "--cq-pool" : "--dim";

	if (o->events && o->poll && o->poll != KVERBS_PERF_POLL_SOFTIRQ) {
		kv_usage_error(o->cmd, "-e is --poll softirq: it excludes --poll %s",
			       kv_perf_poll_str(o->poll));
		return -1;
	}
	if (o->events || (!o->poll && (o->cq_pool || o->dim)))
		o->poll = KVERBS_PERF_POLL_SOFTIRQ;
	if ((o->cq_pool || o->dim) && o->poll == KVERBS_PERF_POLL_DIRECT) {
		kv_usage_error(o->cmd, "%s and --poll direct exclude each other: %s",
			       cq_opt, o->cq_pool ?
			       "ib_core's CQ pool has softirq and workqueue CQs, none polled directly" :
			       "interrupt moderation needs completion interrupts, which a directly polled CQ has none of");
		return -1;
	}
	if (o->busy_poll && o->poll && o->poll != KVERBS_PERF_POLL_DIRECT) {
		kv_usage_error(o->cmd, "--busy-poll and %s exclude each other: the server polls directly",
			       o->cq_pool || o->dim ? cq_opt : o->events ? "-e" : "--poll");
		return -1;
	}
	if (polls && o->poll && o->poll != KVERBS_PERF_POLL_DIRECT) {
		kv_usage_error(o->cmd, "%s is not for %s: %s",
			       o->cq_pool || o->dim ? cq_opt : "--poll", o->cmd, polls);
		return -1;
	}
	return 0;
}

/**
 * kv_perf_set_poll - the completion policy into the ioctl's argument
 * @o: the command line, as kv_perf_parse_poll() left it
 * @cmd: the argument
 * @features: the module features the command needs, added to
 * @what: set to what needs them, for kv_open_for(): "write_bw --poll
 *	workqueue"
 * @len: room in @what
 *
 * -e, which is --poll softirq, goes as KVERBS_PERF_F_EVENTS, which every
 * module since KVERBS_FEATURE_PERF_EVENTS takes; a policy the flags of an
 * older module (-e, --busy-poll) cannot say needs KVERBS_FEATURE_PERF_POLL.
 */
void kv_perf_set_poll(const struct kv_perf_opts *o, struct kverbs_perf *cmd,
		      uint64_t *features, char *what, size_t len)
{
	bool named = o->poll && o->poll != KVERBS_PERF_POLL_SOFTIRQ;

	snprintf(what, len, "%s", o->cmd);
	if (o->poll == KVERBS_PERF_POLL_SOFTIRQ) {
		cmd->flags |= KVERBS_PERF_F_EVENTS;
		*features |= KVERBS_FEATURE_PERF_EVENTS;
	}
	if (!named && !o->cq_pool && !o->dim)
		return;
	cmd->poll = o->poll;
	cmd->cq_flags = (o->cq_pool ? KVERBS_PERF_CQ_POOL : 0) |
			(o->dim ? KVERBS_PERF_CQ_DIM : 0);
	*features |= KVERBS_FEATURE_PERF_POLL;
	snprintf(what, len, "%s%s%s%s%s", o->cmd, named ? " --poll " : "",
		 named ? kv_perf_poll_str(o->poll) : "", o->cq_pool ? " --cq-pool" : "",
		 o->dim ? " --dim" : "");
}

/*
 * -l and -Q together, once the command line is read: within the client's
 * TX depth.  As perftest, -l without -Q signals the last of each list.
 * Returns 0, or -1 after a usage error.
 */
static int kv_perf_check_post(struct kv_perf_opts *o)
{
	uint32_t depth = o->tx_depth ? o->tx_depth : KVERBS_PERF_DEFAULT_DEPTH;

	if (o->post_list > depth || o->cq_mod > depth) {
		kv_usage_error(o->cmd, "%s %u is more than the TX depth, %u (-t)",
			       o->post_list > depth ? "-l" : "-Q",
			       o->post_list > depth ? o->post_list : o->cq_mod, depth);
		return -1;
	}
	if (o->post_list > 1 && !o->cq_mod)
		o->cq_mod = o->post_list;
	return 0;
}

/**
 * kv_perf_set_post - -l, -Q and -I into the ioctl's argument
 * @o: the command line
 * @cmd: the argument
 * @features: the module features the command needs, added to
 * @what: what needs them, for kv_open_for(), appended to
 * @len: room in @what
 */
static void kv_perf_set_post(const struct kv_perf_opts *o, struct kverbs_perf *cmd,
			     uint64_t *features, char *what, size_t len)
{
	size_t used = strlen(what);

	if (!o->post_list && !o->cq_mod && !o->inline_size)
		return;
	cmd->post_list = o->post_list;
	cmd->cq_mod = o->cq_mod;
	cmd->inline_size = o->inline_size;
	*features |= KVERBS_FEATURE_PERF_POST;
	snprintf(what + used, len - used, "%s%s%s", o->post_list ? " -l" : "",
		 o->cq_mod ? " -Q" : "", o->inline_size ? " -I" : "");
}

/*
 * The CQ this side ran on, as the module says; null from a module
 * that does not (without KVERBS_FEATURE_PERF_POLL) or when no CQ was made.
 */
static void kv_perf_json_cq(struct kv_json *j, const struct kverbs_perf_cq *cq)
{
	kv_json_key(j, "cq");
	if (!cq->poll) {
		kv_json_null(j);
		return;
	}
	kv_json_begin_object(j);
	kv_json_key(j, "poll");
	kv_json_string(j, kv_perf_poll_str(cq->poll));
	kv_json_key(j, "pool");
	kv_json_bool(j, cq->flags & KVERBS_PERF_CQ_POOL);
	kv_json_key(j, "dim");
	kv_json_bool(j, cq->flags & KVERBS_PERF_CQ_DIM);
	kv_json_key(j, "id");
	kv_json_u64(j, cq->id);
	kv_json_key(j, "comp_vector");
	kv_json_u64(j, cq->comp_vector);
	kv_json_key(j, "cqe");
	kv_json_u64(j, cq->cqe);
	kv_json_end_object(j);
}

/*
 * How this side posted: the client's -l, -Q and -I (null on a server,
 * which posts as its client asked), and the inline data its QP holds.
 */
static void kv_perf_json_post(struct kv_json *j, const struct kv_perf_opts *o,
			      const struct kverbs_perf *cmd)
{
	const struct {
		const char *key;
		uint32_t value;
	} asked[] = {
		{ "post_list", o->post_list ? o->post_list : 1 },
		{ "cq_mod", o->cq_mod },
		{ "inline_size", o->inline_size },
	};
	size_t i;

	for (i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
		kv_json_key(j, asked[i].key);
		if (o->role == KVERBS_ROLE_SERVER)
			kv_json_null(j);
		else
			kv_json_u64(j, asked[i].value);
	}
	kv_json_key(j, "max_inline");
	kv_json_u64(j, cmd->max_inline);
}

/* What the options' parsers read into, and from. */
struct kv_perf_args {
	struct kv_perf_opts *o;
	const struct kv_perf_test *t;
	int argc;
	char **argv;
	const char *after_d;	/* the word after a lone -d, if it is no option */
};

/* The rows of kv_perf_options[], in the order --help gives them. */
enum {
	KV_PO_ATOMIC, KV_PO_SIZE, KV_PO_ALL, KV_PO_ITERS, KV_PO_DURATION, KV_PO_TX_DEPTH,
	KV_PO_QP, KV_PO_BIDIR, KV_PO_IMM, KV_PO_WRITE_WITH_IMM, KV_PO_POST_LIST, KV_PO_CQ_MOD,
	KV_PO_INLINE, KV_PO_RW, KV_PO_INV, KV_PO_EVENTS, KV_PO_POLL, KV_PO_CQ_POOL, KV_PO_DIM,
	KV_PO_PHASES, KV_PO_CONNECTION, KV_PO_SRQ, KV_PO_SRQ_WR, KV_PO_SRQ_LIMIT, KV_PO_PORT,
	KV_PO_GBITS, KV_PO_VALIDATE, KV_PO_TIMEOUT, KV_PO_MAX_DURATION, KV_PO_MAX_ITERS,
	KV_PO_NO_REVERSE, KV_PO_BUSY_POLL, KV_PO_CPU_UTIL, KV_PO_JSON, KV_PO_DEBUG, KV_PO_HELP,
	/* perftest's, for its command lines: no-ops, or refused saying why */
	KV_PO_CPU_FREQ, KV_PO_RDMA_CM, KV_PO_REPORT_BOTH, KV_PO_OUT_JSON, KV_PO_OUT_JSON_FILE,
	KV_PO_IB_DEV, KV_PO_IB_PORT, KV_PO_GID_INDEX, KV_PO_RUN_INFINITELY,
};

/* -s SIZE: bytes per message; an atomic test's only size is its word. */
static int kv_perf_opt_size(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	struct kv_perf_opts *o = a->o;

	if (kv_parse_size(cl->arg, &o->size) || !o->size) {
		kv_usage_error(o->cmd, "invalid size '%s'", cl->arg);
		return -1;
	}
	if (!(a->t->opts & KV_OPT_SIZE) && o->size != a->t->size) {
		kv_usage_error(o->cmd, "invalid size '%s': atomic operations are on %u-byte words, -s can only be %u",
			       cl->arg, a->t->size, a->t->size);
		return -1;
	}
	o->size_set = true;
	return 0;
}

/* -n ITERS */
static int kv_perf_opt_iters(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	struct kv_perf_opts *o = a->o;

	if (kv_parse_u32(cl->arg, &o->iters) || !o->iters) {
		kv_usage_error(o->cmd, "invalid iterations '%s' (at least 1)", cl->arg);
		return -1;
	}
	o->iters_set = true;
	return 0;
}

/* -D SEC */
static int kv_perf_opt_duration(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	struct kv_perf_opts *o = a->o;

	if (kv_parse_seconds(cl->arg, &o->duration_ns) || !o->duration_ns ||
	    o->duration_ns > KVERBS_PERF_MAX_DURATION_NS) {
		kv_usage_error(o->cmd, "invalid duration '%s' (seconds, more than 0, at most a day)",
			       cl->arg);
		return -1;
	}
	return 0;
}

/* -t N: a latency test's only depth is 1. */
static int kv_perf_opt_tx_depth(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	struct kv_perf_opts *o = a->o;

	if (kv_parse_u32(cl->arg, &o->tx_depth) || !o->tx_depth ||
	    o->tx_depth > KVERBS_PERF_MAX_DEPTH) {
		kv_usage_error(o->cmd, "invalid TX depth '%s' (1 to %u)", cl->arg,
			       KVERBS_PERF_MAX_DEPTH);
		return -1;
	}
	if (!(a->t->opts & KV_OPT_DEPTH) && o->tx_depth != 1) {
		kv_usage_error(o->cmd, "invalid TX depth '%s': a latency test has one operation in flight, -t can only be 1",
			       cl->arg);
		return -1;
	}
	return 0;
}

/* -p PORT */
static int kv_perf_opt_port(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;

	return kv_opt_port(a->o->cmd, cl->arg, &a->o->port);
}

/* --poll POLICY */
static int kv_perf_opt_poll(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;

	a->o->poll = kv_perf_poll_parse(a->o->cmd, cl->arg);
	return a->o->poll ? 0 : -1;
}

/* -c RC|UD: RC is the default; UD only where datagrams carry the test's SENDs. */
static int kv_perf_opt_connection(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	struct kv_perf_opts *o = a->o;

	if (strcmp(cl->arg, "RC") && strcmp(cl->arg, "UD")) {
		kv_usage_error(o->cmd, "invalid connection type '%s' (RC or UD)", cl->arg);
		return -1;
	}
	if (!strcmp(cl->arg, "UD") && !(a->t->opts & KV_OPT_UD)) {
		kv_usage_error(o->cmd, "-c UD is for send_bw and send_lat: datagrams carry SENDs only");
		return -1;
	}
	o->ud = !strcmp(cl->arg, "UD");
	return o->ud ? 0 : 1;
}

/* -A TYPE: perftest's names for it */
static int kv_perf_opt_atomic(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	struct kv_perf_opts *o = a->o;

	if (!strcmp(cl->arg, KV_CMP_AND_SWAP)) {
		o->cmp_swap = true;
	} else if (!strcmp(cl->arg, KV_FETCH_AND_ADD)) {
		o->cmp_swap = false;
	} else {
		kv_usage_error(o->cmd, "invalid atomic type '%s' (%s or %s)", cl->arg,
			       KV_FETCH_AND_ADD, KV_CMP_AND_SWAP);
		return -1;
	}
	return 0;
}

/* -q N: 1 is the default */
static int kv_perf_opt_qp(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	struct kv_perf_opts *o = a->o;

	if (kv_parse_u32(cl->arg, &o->qps) || !o->qps || o->qps > KV_PERF_MAX_QPS) {
		kv_usage_error(o->cmd, "invalid number of QPs '%s' (1 to %u)", cl->arg,
			       KV_PERF_MAX_QPS);
		return -1;
	}
	return o->qps > 1 ? 0 : 1;
}

/* -l N or -Q N: work requests per post, or one signaled in N. */
static int kv_perf_opt_post(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	struct kv_perf_opts *o = a->o;
	bool list = cl->opt->key == 'l';
	uint32_t *n = list ? &o->post_list : &o->cq_mod;

	if (kv_parse_u32(cl->arg, n) || !*n || *n > KVERBS_PERF_MAX_DEPTH) {
		kv_usage_error(o->cmd, "invalid %s '%s' (1 to %u)",
			       list ? "post list" : "CQ moderation", cl->arg,
			       KVERBS_PERF_MAX_DEPTH);
		return -1;
	}
	return 0;
}

/* -I SIZE: 0 is the default, none inline */
static int kv_perf_opt_inline(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	struct kv_perf_opts *o = a->o;

	if (kv_parse_size(cl->arg, &o->inline_size) || o->inline_size > KVERBS_PERF_MAX_INLINE) {
		kv_usage_error(o->cmd, "invalid inline size '%s' (0 to %u)", cl->arg,
			       KVERBS_PERF_MAX_INLINE);
		return -1;
	}
	return o->inline_size ? 0 : 1;
}

/* --srq-wr N, --srq-limit N: each also asks for --srq */
static int kv_perf_opt_srq_wr(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;

	a->o->srq = true;
	return kv_opt_srq(a->o->cmd, "--srq-wr", cl->arg, &a->o->srq_wr);
}

static int kv_perf_opt_srq_limit(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;

	a->o->srq = true;
	return kv_opt_srq(a->o->cmd, "--srq-limit", cl->arg, &a->o->srq_limit);
}

/* --out_json: perftest's, the --json report also in perftest_out.json ... */
static int kv_perf_opt_out_json(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;

	if (!a->o->json_file)
		a->o->json_file = KV_PERFTEST_JSON_FILE;
	return 0;
}

/* ... or with --out_json_file FILE, in FILE */
static int kv_perf_opt_out_json_file(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;

	if (!*cl->arg) {
		kv_usage_error(a->o->cmd, "--out_json_file needs a file name");
		return -1;
	}
	a->o->json_file = cl->arg;
	return 0;
}

/* perftest's options that name what rdma_cm picks, or that do not end: refused, saying why */
static int kv_perf_opt_perftest(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;
	char buf[32];

	return kv_perftest_only(a->o->cmd, kv_opt_shown(cl->opt, buf, sizeof(buf)));
}

/* --timeout SEC */
static int kv_perf_opt_timeout(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;

	return kv_opt_timeout(a->o->cmd, cl->arg, &a->o->timeout_ns);
}

/* --max-duration SEC: a server's ceiling */
static int kv_perf_opt_max_duration(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;

	return kv_opt_max_duration(a->o->cmd, cl->arg, &a->o->max_duration_ns);
}

/* --max-iters N: a server's ceiling */
static int kv_perf_opt_max_iters(const struct kv_cmdline *cl)
{
	const struct kv_perf_args *a = cl->ctx;

	return kv_opt_max_iters(a->o->cmd, cl->arg, &a->o->max_iters);
}

/*
 * -d: --debug, not perftest's -d DEVICE; but the word after a lone -d,
 * before getopt_long() moves it, is kept for kv_perf_device_arg().
 */
static int kv_perf_opt_debug(const struct kv_cmdline *cl)
{
	struct kv_perf_args *a = cl->ctx;

	a->o->debug = true;
	if (!strcmp(a->argv[optind - 1], "-d") && optind < a->argc && a->argv[optind][0] != '-')
		a->after_d = a->argv[optind];
	return 0;
}

/* --help's descriptions that depend on the test: cl->data is the test. */

static void kv_perf_help_size(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	char only[16];

	if (!(t->opts & KV_OPT_SIZE)) {
		snprintf(only, sizeof(only), "%u", t->size);
		kv_cmdline_head(f, cl, opt, only);
		fprintf(f, "atomic operations are on %u-byte words: %u is the\n"
			"                        only size\n", t->size, t->size);
		return;
	}
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "bytes per message (default %u; k, M, G suffixes);\n"
		"                        server: the largest accepted (default: the module's\n"
		"                        max_msg_size)\n", t->size);
}

static void kv_perf_help_iters(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "%s (default %u)\n", t->counts, t->iters);
}

static void kv_perf_help_duration(FILE *f, const struct kv_cmdline *cl,
				  const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	if (!(t->kind & KV_PERF_LAT)) {
		fprintf(f, "run this long instead\n");
		return;
	}
	fprintf(f, "run this long instead, or until the samples run out:\n"
		"                        the client has room for one per microsecond of\n"
		"                        it, at most %u Mi\n", KV_PERF_SAMPLES_MAX >> 20);
}

static void kv_perf_help_tx_depth(FILE *f, const struct kv_cmdline *cl,
				  const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	if (!(t->opts & KV_OPT_DEPTH)) {
		kv_cmdline_head(f, cl, opt, "1");
		fprintf(f, "operations in flight: a latency test times them one\n"
			"                        at a time, so 1 is the only depth\n");
		return;
	}
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "work requests kept in flight (default %u, at most %u)\n",
		KVERBS_PERF_DEFAULT_DEPTH, KVERBS_PERF_MAX_DEPTH);
}

static void kv_perf_help_bidir(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "both ways at once: as many connections again, on\n"
		"                        which the server %s the client; the numbers\n"
		"                        are the sum of both directions.  Give it to the\n"
		"                        server too.\n", t->bidir);
}

static void kv_perf_help_imm(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "%s with immediate data: message i carries i,\n"
		"                        which the receiving side checks on every\n"
		"                        completion; not on iWARP (siw), which has none.\n"
		"                        The server runs what its client asks; given to\n"
		"                        it, --imm only checks that the module supports it.\n",
		kv_perf_writes(cl->data) ? "RDMA WRITE" : "SEND");
}

static void kv_perf_help_inline(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "client: post messages of up to SIZE bytes inline\n"
		"                        (IB_SEND_INLINE): the CPU copies them into the work\n"
		"                        request, and the device does not read the buffer;\n"
		"                        at most %u, and what the device's QPs hold (rxe\n"
		"                        512).  Default 0: none.  %s\n",
		KVERBS_PERF_MAX_INLINE,
		t->kind & KV_PERF_LAT ? "The server's answers too." :
		"With -b, the server's half too.");
}

static void kv_perf_help_rw(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "%s through ib_core's rdma_rw API, as the NVMe,\n"
		"                        SCSI and NFS RDMA targets do: one rdma_rw context\n"
		"                        per message, which maps it and registers an MR\n"
		"                        where rdma_rw must (iWARP READs, ib_core's\n"
		"                        force_mr); the report says how many did.\n"
		"%s"
		"                        The server runs what its client asks; given to\n"
		"                        it, --rw only checks that the module supports it.\n",
		kv_perf_writes(t) ? "RDMA WRITE" : "RDMA READ",
		t->opts & KV_OPT_IMM ?
		"                        Not with --imm, -l, -Q or -I: rdma_rw builds,\n"
		"                        chains and signals the work requests itself.\n" :
		t->opts & KV_OPT_DEPTH ?
		"                        Not with -l or -Q: rdma_rw builds, chains and\n"
		"                        signals the work requests itself.\n" : "");
}

static void kv_perf_help_inv(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "with --validate: each round ends with the server's\n"
		"                        key invalidated by the client's SEND with invalidate,\n"
		"                        as an NVMe/RDMA target invalidates its host's key;\n"
		"                        the server checks it, posts no LOCAL_INV and offers\n"
		"                        a fresh key for the next round.%s\n"
		"                        Not with --imm.  Given to a server, --inv only\n"
		"                        checks that the module supports it.\n",
		t->test == KVERBS_PERF_WRITE_BW ? "" :
		"  On iWARP (siw)\n"
		"                        each round's last READ is also a READ with\n"
		"                        invalidate of the client's own sink, as rdma_rw\n"
		"                        posts it there.");
}

/* --poll, and before it, for a test that takes no -e, why not. */
static void kv_perf_help_poll(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	if (!(t->opts & KV_OPT_EVENTS))
		fprintf(f, "  (no -e, and only --poll direct: %s)\n", t->polls);
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "how this side learns of its completions, on every\n"
		"                        connection and whichever way the data moves:\n"
		"                        direct (busy-poll the CQ in the test's thread),\n"
		"                        softirq, workqueue or unbound (sleep; the handlers\n"
		"                        run in softirq context, on ib_core's bound or\n"
		"                        unbound workqueue).  Default: a client busy-polls, a\n"
		"                        server sleeps unless --busy-poll\n");
}

static void kv_perf_help_phases(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	if (t->kind & KV_PERF_RECV)
		fprintf(f, "client: after the latency table, where each round\n"
			"                        trip's time goes: from the post to the run of the\n"
			"                        handler of the server's answer's receive, then to\n"
			"                        the test's thread running again and seeing it; min,\n"
			"                        typical, 99%%, 99.9%% and max of each, in usec, of\n"
			"                        the whole round trip (not halved, as the latency\n"
			"                        is).  Costs a clock read in each handler and one in\n"
			"                        the thread.  See --poll.\n");
	else
		fprintf(f, "client: after the latency table, where each round\n"
			"                        trip's time goes: from the post to the run of its\n"
			"                        completion's handler, then to the test's thread\n"
			"                        running again and seeing it; min, typical, 99%%,\n"
			"                        99.9%% and max of each, in usec.  Costs a clock read\n"
			"                        in the thread.  See --poll.\n");
}

static void kv_perf_help_port(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "port (default %u)\n", KVERBS_PERF_DEFAULT_PORT);
}

static void kv_perf_help_gbits(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "bandwidth in Gb/s instead of MiB/s%s\n",
		t->kind & KV_PERF_LAT ? " (in --json)" : "");
}

static void kv_perf_help_validate(FILE *f, const struct kv_cmdline *cl,
				  const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "%s\n", t->validate);
}

static void kv_perf_help_busy_poll(FILE *f, const struct kv_cmdline *cl,
				   const struct kv_opt *opt)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "server: %s\n", t->polls ?
		"busy-poll for the client; implied: a write_lat\n"
		"                        server sees each WRITE only by polling its memory" :
		"busy-poll the CQ for the client, as perftest's\n"
		"                        server does; without it the server sleeps until the\n"
		"                        completion interrupt, whatever the client asks");
}

/* Why -l, -Q and -I are the client's. */
#define KV_PERF_POSTS_WHY \
	"its request brings it to the server where the server posts too (-b, and the answers of write_lat and send_lat)"
/* Why only a server takes --srq. */
#define KV_PERF_SRQ_WHY		"how it takes its receives is its own choice"
#define KV_PERF_SRQ_NOT_FOR	"--srq is for send_bw's and send_lat's server: %t's server takes no SENDs"
/* Why only a server takes its ceilings. */
#define KV_PERF_CEILING_WHY	"the client asks, the server sets ceilings"

/*
 * A perf command's options, in the order of its --help.  .takes names
 * the tests that take an option by their KV_OPT_* bits; the synopsis
 * leaves out what a test cannot change (-s 8, -t 1): -a and -q carry -s
 * and -t in their words.
 */
static const struct kv_opt kv_perf_options[] = {
	[KV_PO_ATOMIC] = {
		.name = "atomic_type", .key = 'A', .arg = "TYPE", .parse = kv_perf_opt_atomic,
		.takes = KV_OPT_ATOMIC,
		.not_for = "-A is for the atomic tests, atomic_lat and atomic_bw",
		.help = KV_FETCH_AND_ADD " (default) or " KV_CMP_AND_SWAP "; the server\n"
			"                        runs the one its client asks for",
	},
	[KV_PO_SIZE] = {
		.name = "size", .key = 's', .arg = "SIZE", .parse = kv_perf_opt_size,
		.help_fn = kv_perf_help_size, .usage = "",
	},
	[KV_PO_ALL] = {
		.name = "all", .key = 'a', .flag = KV_FLAG(struct kv_perf_opts, all),
		.takes = KV_OPT_SIZE,
		.not_for = "-a is not for the atomic tests: their only size is "
			   KV_STR(KV_PERF_ATOMIC_SIZE),
		.excludes = KV_BIT(KV_PO_SIZE),
		.help = "every size from 2 bytes up to 8 MiB in powers of two,\n"
			"                        or to the largest the module (max_msg_size) and the\n"
			"                        RDMA devices here take, if lower; one connection\n"
			"                        per size.  Give it to the server too.",
		.usage = "[-s SIZE | -a]",
	},
	[KV_PO_ITERS] = {
		.name = "iters", .key = 'n', .arg = "ITERS", .parse = kv_perf_opt_iters,
		.excludes = KV_BIT(KV_PO_DURATION),
		.help_fn = kv_perf_help_iters, .usage = "[-n ITERS | -D SEC]",
	},
	[KV_PO_DURATION] = {
		.name = "duration", .key = 'D', .arg = "SEC", .parse = kv_perf_opt_duration,
		.help_fn = kv_perf_help_duration, .usage = "",
	},
	[KV_PO_TX_DEPTH] = {
		.name = "tx-depth", .key = 't', .arg = "N", .parse = kv_perf_opt_tx_depth,
		.help_fn = kv_perf_help_tx_depth, .usage = "",
	},
	[KV_PO_QP] = {
		.name = "qp", .key = 'q', .arg = "N", .parse = kv_perf_opt_qp,
		.takes = KV_OPT_DEPTH,
		.not_for = "-q is for the bandwidth tests: a latency test has one QP",
		.help = "N connections at once, each with its own QP and its\n"
			"                        own thread (default 1, at most " KV_STR(KV_PERF_MAX_QPS)
			"); the numbers are\n"
			"                        their sum.  Give it to the server too.",
		.usage = "[-t N] [-q N]",
	},
	[KV_PO_BIDIR] = {
		.name = "bidirectional", .key = 'b', .flag = KV_FLAG(struct kv_perf_opts, bidir),
		.takes = KV_OPT_REVERSE,
		.not_for = "-b is for the bandwidth tests: a latency test times the client's own operations",
		.help_fn = kv_perf_help_bidir,
	},
	[KV_PO_IMM] = {
		.name = "imm", .flag = KV_FLAG(struct kv_perf_opts, imm),
		.takes = KV_OPT_IMM,
		.not_for = "--imm is for write_bw, write_lat, send_bw and send_lat: %t carries no immediate data",
		.help_fn = kv_perf_help_imm,
	},
	[KV_PO_WRITE_WITH_IMM] = {
		.name = "write_with_imm", .flag = KV_FLAG(struct kv_perf_opts, imm),
		.takes = KV_OPT_WRITE_IMM,
		.not_for = "--write_with_imm is for write_bw and write_lat",
		.alt_when = KV_OPT_IMM,
		.not_for_alt = "--write_with_imm is for write_bw and write_lat: use --imm for SEND with immediate data",
		.shown = "--imm",
		.help = "the same: perftest's name for it", .usage = "",
	},
	[KV_PO_POST_LIST] = {
		.name = "post_list", .key = 'l', .arg = "N", .parse = kv_perf_opt_post,
		.takes = KV_OPT_DEPTH,
		.not_for = "-l is for the bandwidth tests: a latency test has one operation in flight",
		.role = KVERBS_ROLE_CLIENT, .role_why = KV_PERF_POSTS_WHY,
		.help = "client: chain N work requests into each post\n"
			"                        (ib_post_send()), as perftest's -l; at most the TX\n"
			"                        depth.  With -b, the server's half too.",
	},
	[KV_PO_CQ_MOD] = {
		.name = "cq-mod", .key = 'Q', .arg = "N", .parse = kv_perf_opt_post,
		.takes = KV_OPT_DEPTH,
		.not_for = "-Q is for the bandwidth tests: a latency test has one operation in flight",
		.role = KVERBS_ROLE_CLIENT, .role_why = KV_PERF_POSTS_WHY,
		.help = "client: ask for a completion on one work request in\n"
			"                        N (the last always), as perftest's -Q; at most the\n"
			"                        TX depth.  Default: a quarter of the TX depth, or N\n"
			"                        of -l.  With -b, the server's half too.",
	},
	[KV_PO_INLINE] = {
		.name = "inline_size", .key = 'I', .arg = "SIZE", .parse = kv_perf_opt_inline,
		.takes = KV_OPT_INLINE,
		.not_for = "-I is for write_bw, write_lat, send_bw and send_lat: an RDMA READ carries no data of the requester's",
		.alt_when = KV_OPT_ATOMIC,
		.not_for_alt = "-I is for write_bw, write_lat, send_bw and send_lat: an atomic operation carries no message",
		.role = KVERBS_ROLE_CLIENT, .role_why = KV_PERF_POSTS_WHY,
		.help_fn = kv_perf_help_inline,
	},
	/*
	 * --rw on a test that does not READ or WRITE in bulk, or with --imm,
	 * -l, -Q or -I, goes to the module, which refuses it with EINVAL, so
	 * that the refusal is the module's and a report says so
	 * (kv_perf_describe_rw()): rdma_rw builds, chains and signals each
	 * message's work requests itself, with no immediate or inline data.
	 * --help names it for the tests that take it.
	 */
	[KV_PO_RW] = {
		.name = "rw", .flag = KV_FLAG(struct kv_perf_opts, rw),
		.help_takes = KV_OPT_RW, .help_fn = kv_perf_help_rw,
	},
	[KV_PO_INV] = {
		.name = "inv", .flag = KV_FLAG(struct kv_perf_opts, inv),
		.takes = KV_OPT_INV,
		.not_for = "--inv is for write_bw, read_bw and read_lat: %t has no rounds that end with a key handed back",
		.excludes = KV_BIT(KV_PO_IMM) | KV_BIT(KV_PO_WRITE_WITH_IMM),
		.excl_why = "the receives of WRITEs with immediate data lie in the buffer whose key --inv invalidates",
		.help_fn = kv_perf_help_inv,
	},
	[KV_PO_EVENTS] = {
		.name = "events", .key = 'e', .flag = KV_FLAG(struct kv_perf_opts, events),
		.takes = KV_OPT_EVENTS,
		.not_for = "-e is not for %t: %n",
		.help = "client: sleep until the completion interrupt instead\n"
			"                        of busy polling the CQ: less CPU, more latency.  A\n"
			"                        server sleeps unless --busy-poll.  --poll softirq.",
	},
	[KV_PO_POLL] = {
		.name = "poll", .arg = "POLICY", .parse = kv_perf_opt_poll,
		.help_fn = kv_perf_help_poll,
	},
	[KV_PO_CQ_POOL] = {
		.name = "cq-pool", .flag = KV_FLAG(struct kv_perf_opts, cq_pool),
		.help = "take the CQ from ib_core's shared CQ pool, as\n"
			"                        nvme-rdma does; softirq unless --poll says which\n"
			"                        workqueue (not direct)",
	},
	[KV_PO_DIM] = {
		.name = "dim", .flag = KV_FLAG(struct kv_perf_opts, dim),
		.help = "require adaptive interrupt moderation on the CQ (not\n"
			"                        with direct; rxe and siw have none)",
	},
	[KV_PO_PHASES] = {
		.name = "phases", .flag = KV_FLAG(struct kv_perf_opts, phases),
		.takes = KV_OPT_PHASES,
		.not_for = "--phases is for read_lat, atomic_lat and send_lat: write_lat's round trip ends when the server's WRITE lands in memory the client polls, with no completion handler to time",
		.alt_when = KV_OPT_DEPTH,
		.not_for_alt = "--phases is for read_lat, atomic_lat and send_lat: a bandwidth test times no single operation",
		.role = KVERBS_ROLE_CLIENT, .role_why = "the server times nothing",
		.help_fn = kv_perf_help_phases,
	},
	/*
	 * -c RC is every test's; -c UD is send_bw's and send_lat's, whose
	 * --help names it.  A server takes either, as its client's hello
	 * says (kv_perf_parse()).
	 */
	[KV_PO_CONNECTION] = {
		.name = "connection", .key = 'c', .arg = "TYPE", .parse = kv_perf_opt_connection,
		.shown = "-c UD",
		.excludes = KV_BIT(KV_PO_BIDIR) | KV_BIT(KV_PO_QP) | KV_BIT(KV_PO_ALL) |
			    KV_BIT(KV_PO_IMM) | KV_BIT(KV_PO_WRITE_WITH_IMM) | KV_BIT(KV_PO_POST_LIST) |
			    KV_BIT(KV_PO_CQ_MOD) | KV_BIT(KV_PO_INLINE) | KV_BIT(KV_PO_PHASES) |
			    KV_BIT(KV_PO_CQ_POOL) | KV_BIT(KV_PO_DIM),
		.excl_why = "datagrams go one SEND per post on a QP and a plain CQ of their own",
		.help_takes = KV_OPT_UD,
		.help = "RC (the default) or UD: client, UD moves the data in\n"
			"                        datagrams, SENDs with immediate data over a UD QP\n"
			"                        of each side's, as perftest's -c UD; the hello and\n"
			"                        the control messages stay on RC.  A message is at\n"
			"                        most the path MTU (default size with UD: "
			KV_STR(KV_PERF_UD_SIZE) ").\n"
			"                        send_bw counts the datagrams lost (\"lost\"); in\n"
			"                        send_lat a lost one ends the test (ETIMEDOUT).  Not\n"
			"                        on iWARP, which has no UD.  A server takes either\n"
			"                        (its client says)",
		.usage = "[-c RC|UD]",
	},
	[KV_PO_SRQ] = {
		.name = "srq", .alias = "use-srq", .flag = KV_FLAG(struct kv_perf_opts, srq),
		.takes = KV_OPT_SRQ, .not_for = KV_PERF_SRQ_NOT_FOR,
		.role = KVERBS_ROLE_SERVER, .role_why = KV_PERF_SRQ_WHY,
		.help = "server: take the client's SENDs in a shared receive\n"
			"                        queue, as nvmet-rdma does: the connections of one\n"
			"                        server (-q) share one SRQ on one PD, each receive\n"
			"                        posted again once its message is taken.  Messages\n"
			"                        up to -s SIZE, else 64 KiB.  iWARP: each client\n"
			"                        gets a window of its receives as credits",
	},
	[KV_PO_SRQ_WR] = {
		.name = "srq-wr", .arg = "N", .parse = kv_perf_opt_srq_wr,
		.takes = KV_OPT_SRQ, .not_for = KV_PERF_SRQ_NOT_FOR,
		.role = KVERBS_ROLE_SERVER, .role_why = KV_PERF_SRQ_WHY, .shown = "--srq",
		.help = "server, --srq: receives the SRQ holds (default "
			KV_STR(KVERBS_PERF_SRQ_DEFAULT_WR) ")",
	},
	[KV_PO_SRQ_LIMIT] = {
		.name = "srq-limit", .arg = "N", .parse = kv_perf_opt_srq_limit,
		.takes = KV_OPT_SRQ, .not_for = KV_PERF_SRQ_NOT_FOR,
		.role = KVERBS_ROLE_SERVER, .role_why = KV_PERF_SRQ_WHY, .shown = "--srq",
		.help = "server, --srq: the SRQ limit armed (IB_SRQ_LIMIT);\n"
			"                        each IB_EVENT_SRQ_LIMIT_REACHED is counted and the\n"
			"                        limit armed again (default: a quarter of --srq-wr)",
	},
	[KV_PO_PORT] = {
		.name = "port", .key = 'p', .arg = "PORT", .parse = kv_perf_opt_port,
		.help_fn = kv_perf_help_port,
	},
	[KV_PO_GBITS] = {
		.name = "report_gbits", .flag = KV_FLAG(struct kv_perf_opts, gbits),
		.help_fn = kv_perf_help_gbits,
	},
	[KV_PO_VALIDATE] = {
		.name = "validate", .flag = KV_FLAG(struct kv_perf_opts, validate),
		.help_fn = kv_perf_help_validate,
	},
	[KV_PO_TIMEOUT] = {
		.name = "timeout", .arg = "SEC", .parse = kv_perf_opt_timeout,
		.help = "limit on each step (default: the module's timeout_ms)",
	},
	[KV_PO_MAX_DURATION] = {
		.name = "max-duration", .arg = "SEC", .parse = kv_perf_opt_max_duration,
		.role = KVERBS_ROLE_SERVER, .role_why = KV_PERF_CEILING_WHY,
		.help = "server: refuse a client that asks for longer, and end\n"
			"                        any session still running SEC and one step timeout on\n"
			"                        (default: the module's perf_max_duration_s; at most it)",
	},
	[KV_PO_MAX_ITERS] = {
		.name = "max-iters", .arg = "N", .parse = kv_perf_opt_max_iters,
		.role = KVERBS_ROLE_SERVER, .role_why = KV_PERF_CEILING_WHY,
		.help = "server: refuse a client that asks for more iterations\n"
			"                        (default: the module's perf_max_iterations; at most it)",
	},
	[KV_PO_NO_REVERSE] = {
		.name = "no-reverse", .flag = KV_FLAG(struct kv_perf_opts, no_reverse),
		.takes = KV_OPT_REVERSE,
		.not_for = "--no-reverse is for the bandwidth tests: a latency test has no reverse direction",
		.role = KVERBS_ROLE_SERVER, .role_why = KV_PERF_CEILING_WHY,
		/* A server of -b's reverse half that refuses it would serve nobody there. */
		.excludes = KV_BIT(KV_PO_BIDIR),
		.help = "server: refuse the reverse direction, the half of a\n"
			"                        client's -b in which the server moves the data",
	},
	[KV_PO_BUSY_POLL] = {
		.name = "busy-poll", .flag = KV_FLAG(struct kv_perf_opts, busy_poll),
		.role = KVERBS_ROLE_SERVER, .role_why = "a client busy-polls unless -e",
		.excludes = KV_BIT(KV_PO_EVENTS),
		.help_fn = kv_perf_help_busy_poll,
	},
	[KV_PO_CPU_UTIL] = {
		.name = "cpu_util", .flag = KV_FLAG(struct kv_perf_opts, cpu_util),
		.help = "after the table, the CPU time per operation: the\n"
			"                        test's threads' (posting, polling) and the host's,\n"
			"                        every CPU not idle (completion handlers, the device's\n"
			"                        work, a peer on the same host); --json always has it",
	},
	[KV_PO_JSON] = {
		.name = "json", .flag = KV_FLAG(struct kv_perf_opts, json),
		.help = "one JSON document instead of text",
	},
	[KV_PO_DEBUG] = {
		.name = "debug", .key = 'd', .parse = kv_perf_opt_debug,
		.help = "print everything the kernel reported (not perftest's\n"
			"                        -d DEVICE: rdma_cm picks the device)",
	},
	[KV_PO_HELP] = { .name = "help", .key = 'h', .help = "this help", .usage = "" },
	/* perftest's, for its command lines: no-ops, or refused saying why */
	[KV_PO_CPU_FREQ] = {
		.name = "CPU-freq", .key = 'F',
		.heading = "\n"
			   "perftest's options that change nothing here, accepted so that its command\n"
			   "lines run:\n",
		.help = "no effect: kverbs does not check the CPU frequency", .usage = "",
	},
	[KV_PO_RDMA_CM] = {
		.name = "rdma_cm", .key = 'R',
		.help = "no effect: kverbs always connects with rdma_cm", .usage = "",
	},
	[KV_PO_REPORT_BOTH] = {
		.name = "report-both",
		.help = "no effect: -b reports the sum of both directions", .usage = "",
	},
	[KV_PO_OUT_JSON] = {
		.name = "out_json", .parse = kv_perf_opt_out_json,
		.help = "also write the --json report to " KV_PERFTEST_JSON_FILE, .usage = "",
	},
	[KV_PO_OUT_JSON_FILE] = {
		.name = "out_json_file", .arg = "FILE", .parse = kv_perf_opt_out_json_file,
		.help = "... to FILE instead", .usage = "",
	},
	/* Refused; the end of --help says so. */
	[KV_PO_IB_DEV] = {
		.name = "ib-dev", .arg = "DEVICE", .shown = "-d", .parse = kv_perf_opt_perftest,
	},
	[KV_PO_IB_PORT] = {
		.name = "ib-port", .key = 'i', .arg = "PORT", .parse = kv_perf_opt_perftest,
	},
	[KV_PO_GID_INDEX] = {
		.name = "gid-index", .key = 'x', .arg = "GID_INDEX", .parse = kv_perf_opt_perftest,
	},
	[KV_PO_RUN_INFINITELY] = { .name = "run_infinitely", .parse = kv_perf_opt_perftest },
};

_Static_assert(KV_ARRAY_SIZE(kv_perf_options) <= KV_OPTS_MAX, "too many perf options");

static void kv_perf_usage(FILE *f, const struct kv_cmdline *cl)
{
	const struct kv_perf_test *t = cl->data;

	kv_cmdline_synopsis(f, cl, NULL, "[ADDR]");
	fprintf(f,
		"\n"
		"perftest's ib_%s, with the kernel's verbs.  Without ADDR, wait for a client\n"
		"as the server; with ADDR, connect to the server there and run the test.\n"
		"The client says what to run; the server's options only set limits.\n"
		"Not wire-compatible with perftest: a kverbs client needs a kverbs server\n"
		"(this command without ADDR, or kverbs serve), though both use port %u.\n"
		"\n",
		t->cmd, KVERBS_PERF_DEFAULT_PORT);
	kv_cmdline_help(f, cl);
	fprintf(f,
		"perftest's -d DEVICE (--ib-dev), -i PORT (--ib-port) and -x GID_INDEX\n"
		"(--gid-index) are refused: rdma_cm takes the device, port and GID from the\n"
		"address.  --run_infinitely is refused too.\n");
}

/**
 * kv_perf_parse - the command line of a perf subcommand
 * @test: the subcommand's &enum kverbs_perf_test
 * @argc: arguments, the subcommand's name first
 * @argv: them
 * @o: filled in, defaults for what is not given
 *
 * Returns 0, 1 when --help was printed, or -1 after a usage error
 * was printed.
 */
int kv_perf_parse(uint32_t test, int argc, char **argv, struct kv_perf_opts *o)
{
	const struct kv_perf_test *t = kv_perf_test(test);
	struct kv_perf_args a = { .o = o, .t = t, .argc = argc, .argv = argv };
	struct kv_cmdline cl = {
		.cmd = t->cmd, .opts = kv_perf_options, .nopts = KV_ARRAY_SIZE(kv_perf_options),
		.variant = t->cmd, .has = t->opts, .note = t->polls,
		.ctx = &a, .flags = o, .data = t, .usage = kv_perf_usage, .help_col = 24,
	};
	const char *cmd = t->cmd;
	int ret;

	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->test = test;
	o->port = KVERBS_PERF_DEFAULT_PORT;
	o->size = t->size;
	o->iters = t->iters;
	o->qps = 1;
	/* perftest's latency clients send one at a time; 0 is the module's 128. */
	o->tx_depth = t->opts & KV_OPT_DEPTH ? 0 : 1;
	if (kv_perf_device_attached(cmd, argc, argv))
		return -1;
	ret = kv_cmdline_parse(&cl, argc, argv);
	if (ret)
		return ret;
	if (kv_perf_device_arg(cmd, argc, argv, a.after_d))
		return -1;
	if (optind < argc)
		o->addr = argv[optind++];
	if (optind < argc) {
		kv_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	o->role = o->addr ? KVERBS_ROLE_CLIENT : KVERBS_ROLE_SERVER;
	/* A server takes either connection type: its client's hello says. */
	if (o->role == KVERBS_ROLE_SERVER) {
		o->ud = false;
		cl.given &= ~KV_BIT(KV_PO_CONNECTION);
	}
	if (kv_cmdline_check(&cl, o->role))
		return -1;
	if (o->srq_limit > (o->srq_wr ? o->srq_wr : KVERBS_PERF_SRQ_DEFAULT_WR)) {
		kv_usage_error(cmd, "--srq-limit %u is above the SRQ's receives, %u", o->srq_limit,
			       o->srq_wr ? o->srq_wr : KVERBS_PERF_SRQ_DEFAULT_WR);
		return -1;
	}
	if (kv_perf_parse_poll(o, t->polls))
		return -1;
	if (kv_perf_check_post(o))
		return -1;
	/* The only way to serve it: starting a write_lat server is the choice. */
	if (o->role == KVERBS_ROLE_SERVER && t->polls)
		o->busy_poll = true;
	if (o->role == KVERBS_ROLE_SERVER && !o->size_set)
		o->size = 0;
	if (o->inv && o->role == KVERBS_ROLE_CLIENT && !o->validate) {
		kv_usage_error(cmd, "--inv needs --validate: the key is handed back at the end of each of its rounds");
		return -1;
	}
	/* Datagrams: a message within the path MTU, unless -s says. */
	if (o->ud && !o->size_set)
		o->size = KV_PERF_UD_SIZE;
	return 0;
}

/* perftest's units: MiB/s, or Gb/s with --report_gbits. */
static double kv_perf_bw(const struct kv_perf_opts *o, uint64_t bps)
{
	return o->gbits ? bps * 8 / 1e9 : bps / 1048576.0;
}

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

/* --phases: one row per phase of the round trip, as the latency's columns. */
static void kv_perf_print_phase(const char *name, const struct kv_lat_stats *st)
{
	printf(" %-12s %9.2f    %9.2f    %14.2f   %16.2f  %8.2f\n", name, st->min,
	       st->typical, st->p99, st->p99_9, st->max);
}

/* perftest's latency columns; a server has no samples, only its count. */
static void kv_perf_print_lat(const struct kverbs_perf_result *r,
			      const struct kv_perf_lat *lat, bool titles)
{
	const struct kv_lat_stats *st = &lat->stats;

	if (!lat->have_stats) {
		if (titles)
			printf(" #bytes #iterations\n");
		printf(" %-7u %" PRIu64 "\n", r->msg_size, (uint64_t)r->iterations);
		return;
	}
	if (titles)
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec] \n");
	printf(" %-7u %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
	       r->msg_size, (uint64_t)r->iterations, st->min, st->max, st->typical,
	       st->avg, st->stdev, st->p99, st->p99_9);
	if (!lat->have_phases)
		return;
	printf(" phase [usec]     t_min    t_typical    99%% percentile   99.9%% percentile     t_max\n");
	kv_perf_print_phase("to handler", &lat->to_handler);
	kv_perf_print_phase("to thread", &lat->to_thread);
}

static const char kv_perf_line[] =
	"---------------------------------------------------------------------------------------\n";

/* The header and column titles once, then a row per size (-a), as perftest. */
/*
 * Whether this side slept until its completions' interrupt instead of
 * busy-polling its CQ (KVERBS_PERF_F_EVENTS and _BUSY_POLL in the uAPI
 * header).  Never in write_lat.  A client, with -e; a server, unless
 * --busy-poll, and then still as the responder of a WRITE, READ or
 * atomic test, whose data path does not reach its CPU.  A server's side
 * of -b, or a session of the reverse direction, is a requester, and
 * polls there.
 */
static bool kv_perf_slept(const struct kv_perf_opts *o, const struct kv_perf_test *t,
			  const struct kverbs_perf_result *r)
{
	bool responder = !o->bidir && !(r->flags & KVERBS_PERF_F_REVERSE);

	if (t->polls)
		return false;
	/* A policy given is every connection's, whichever way it moves data. */
	if (o->poll)
		return o->poll != KVERBS_PERF_POLL_DIRECT;
	if (o->role == KVERBS_ROLE_CLIENT)
		return o->events;
	if (!o->busy_poll)
		return true;
	/* A WRITE with immediate data completes at the responder as a SEND does. */
	return responder && !(t->kind & KV_PERF_RECV) && !(r->flags & KVERBS_PERF_F_IMM);
}

static void kv_perf_print_text(const struct kv_perf_opts *o,
			       const struct kverbs_perf *cmd, const struct kv_cpu *cpu,
			       const struct kv_perf_lat *lat)
{
	const struct kverbs_perf_result *r = &cmd->result;
	const struct kv_perf_test *t = kv_perf_ran(o, cmd);
	const char *line = kv_perf_line;
	bool head = !o->all || !o->seq;

	if (!head)
		goto row;
	printf("%s", line);
	/* "RDMA_Read Latency Test", "Atomic CMP_AND_SWAP BW Test" */
	printf("                    %s ", t->verb);
	if (t->kind & KV_PERF_ATOMIC)
		printf("%s ", kv_perf_atomic_type(cmd));
	printf("%s%s Test\n", o->bidir ? "Bidirectional " : "",
	       t->kind & KV_PERF_LAT ? "Latency" : "BW");
	printf(" Device         : %s\n", r->ibdev);
	printf(" Transport type : %s\n", r->transport == KVERBS_TRANSPORT_IWARP ? "IW" : "IB");
	printf(" Link type      : %s\n", r->link_layer == KVERBS_LINK_LAYER_ETHERNET ?
	       "Ethernet" : r->link_layer == KVERBS_LINK_LAYER_INFINIBAND ? "IB" : "unknown");
	printf(" Mtu            : %u[B]\n", r->active_mtu);
	printf(" Number of qps  : %u\n", o->qps);
	printf(" Connection type: %s\n", r->flags & KVERBS_PERF_F_UD ? "UD" : "RC");
	printf(" TX depth       : %u\n", r->tx_depth);
	printf(" Completions    : %s\n", kv_perf_slept(o, t, r) ? "events" : "polling");
	if (cmd->cq.poll)
		printf(" CQ             : %s%s%s, vector %u\n", kv_perf_poll_str(cmd->cq.poll),
		       cmd->cq.flags & KVERBS_PERF_CQ_POOL ? ", pool" : "",
		       cmd->cq.flags & KVERBS_PERF_CQ_DIM ? ", dim" : "", cmd->cq.comp_vector);
	printf(" Validate       : %s\n", r->flags & KVERBS_PERF_F_VALIDATE ? "ON" : "OFF");
	if (t->opts & KV_OPT_IMM)
		printf(" Immediate data : %s\n", r->flags & KVERBS_PERF_F_IMM ? "ON" : "OFF");
	if (o->post_list > 1)
		printf(" Post list      : %u\n", o->post_list);
	if (o->cq_mod)
		printf(" CQ moderation  : %u\n", o->cq_mod);
	if (o->inline_size)
		printf(" Inline data    : up to %u[B] (the QP holds %u)\n", o->inline_size,
		       cmd->max_inline);
	if ((t->opts & KV_OPT_RW) && (r->flags & KVERBS_PERF_F_RW))
		printf(" rdma_rw        : ON, %" PRIu64 " of %" PRIu64 " contexts with an MR\n",
		       (uint64_t)cmd->rw_mr_ctxs, (uint64_t)cmd->rw_ctxs);
	else if (t->opts & KV_OPT_RW)
		printf(" rdma_rw        : OFF\n");
	if ((t->opts & KV_OPT_INV) && !(r->flags & KVERBS_PERF_F_INV))
		printf(" Invalidation   : OFF\n");
	else if (t->opts & KV_OPT_INV)
		printf(" Invalidation   : ON: %" PRIu64 " of our keys by the peer, %" PRIu64
		       " SENDs and %" PRIu64 " READs with invalidate\n",
		       (uint64_t)cmd->inv_remote, (uint64_t)cmd->inv_sent, (uint64_t)cmd->read_inv);
	kv_perf_print_srq(cmd);
	if ((r->flags & KVERBS_PERF_F_UD) && !(t->kind & KV_PERF_LAT))
		printf(" Lost           : %" PRIu64 " datagrams\n", (uint64_t)cmd->lost);
	if ((r->flags & KVERBS_PERF_F_UD) && o->ud_foreign)
		printf(" Foreign        : %u datagrams from other QPs, dropped\n", cmd->foreign);
	if (r->duration_ns)
		printf(" Duration       : %.3f[sec]\n", r->duration_ns / 1e9);
	printf("%s", line);
row:
	if (t->kind & KV_PERF_LAT) {
		kv_perf_print_lat(r, lat, head);
	} else {
		if (head)
			printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
			       o->gbits ? "Gb/sec" : "MiB/sec", o->gbits ? "Gb/sec" : "MiB/sec");
		printf(" %-7u    %-7" PRIu64 "          %-7.2f            %-7.2f\t\t   %-7.6f\n",
		       r->msg_size, (uint64_t)r->iterations, kv_perf_bw(o, r->peak_bps),
		       kv_perf_bw(o, r->avg_bps), r->msg_rate / 1e6);
	}
	if (o->cpu_util && cpu->known && r->iterations)
		printf(" CPU per op     : %.3f usec in the test's threads, %.3f usec host-wide (%.3f CPU-sec/GiB)\n",
		       cpu->thread_ns / 1e3 / r->iterations, cpu->busy_ns / 1e3 / r->iterations,
		       r->bytes ? cpu->busy_ns / 1e9 * 1073741824.0 / r->bytes : 0.0);
	/* With -a, kv_perf_main() closes the table. */
	if (!o->all)
		printf("%s", line);
}

/**
 * kv_perf_reject_str - the name of a perf reject reason
 * @reason: &enum kverbs_perf_reject
 *
 * Returns what --json's "reject_reason" says, "unknown" for a reason
 * this tool does not know.
 */
const char *kv_perf_reject_str(uint32_t reason)
{
	static const char *const names[] = {
		[KVERBS_PERF_REJECT_NONE] = "none",
		[KVERBS_PERF_REJECT_MAGIC] = "not a kverbs perf request",
		[KVERBS_PERF_REJECT_VERSION] = "unsupported hello version",
		[KVERBS_PERF_REJECT_RESERVED] = "reserved fields set",
		[KVERBS_PERF_REJECT_TEST] = "test not served",
		[KVERBS_PERF_REJECT_SIZE] = "message size not accepted",
		[KVERBS_PERF_REJECT_DEPTH] = "TX depth not accepted",
		[KVERBS_PERF_REJECT_ITERS] = "iterations or duration not accepted",
		[KVERBS_PERF_REJECT_SETUP] = "server could not set up",
		[KVERBS_PERF_REJECT_DURATION] = "duration above the server's ceiling",
		[KVERBS_PERF_REJECT_ITERATIONS] = "iterations above the server's ceiling",
		[KVERBS_PERF_REJECT_REVERSE] = "reverse direction not served",
		[KVERBS_PERF_REJECT_BUSY_POLL] = "test needs a busy-polling server",
		[KVERBS_PERF_REJECT_IMM] = "no immediate data on the server's device",
	};

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "unknown";
}

#define KV_NO_ATOMICS	"does not support atomic operations"

/**
 * kv_perf_describe_reject - why the hello was refused, from either end
 * @buf: where the sentence goes
 * @len: its room
 * @r: the result, with the reason and its value
 * @server: worded for the server that refused, else for its client
 * @atomic: the test was an atomic one
 *
 * Returns what snprintf() returns.
 */
int kv_perf_describe_reject(char *buf, size_t len,
			    const struct kverbs_perf_result *r, bool server,
			    bool atomic)
{
	const char *who = server ? "refused the client's request" :
				   "the server refused the request";
	const char *why = kv_perf_reject_str(r->reject_reason);

	switch (r->reject_reason) {
	case KVERBS_PERF_REJECT_VERSION:
		return snprintf(buf, len, "%s: %s %u (the server speaks version %u)",
				who, why, r->reject_value, r->reject_version);
	case KVERBS_PERF_REJECT_TEST:
		return snprintf(buf, len, "%s: %s (test %u)", who, why, r->reject_value);
	case KVERBS_PERF_REJECT_SIZE:
		return snprintf(buf, len, "%s: %s (the server accepts 1 to %u bytes)",
				who, why, r->reject_value);
	case KVERBS_PERF_REJECT_DEPTH:
		return snprintf(buf, len, "%s: %s (1 to %u)", who, why, r->reject_value);
	case KVERBS_PERF_REJECT_DURATION:
		return snprintf(buf, len, "%s: %s (at most %u s)", who, why, r->reject_value);
	case KVERBS_PERF_REJECT_ITERATIONS:
		return snprintf(buf, len, "%s: %s (at most %u%s)", who, why, r->reject_value,
				r->reject_value == UINT32_MAX ? " or more" : "");
	case KVERBS_PERF_REJECT_REVERSE:
		return snprintf(buf, len, "%s: %s (%s --no-reverse%s)", who, why,
				server ? "this server runs with" : "the server runs with",
				server ? "" : ": run without -b");
	case KVERBS_PERF_REJECT_BUSY_POLL:
		return snprintf(buf, len, "%s: %s (%s without --busy-poll%s)", who, why,
				server ? "this server runs" : "the server runs",
				server ? "" : ": start it with --busy-poll");
	case KVERBS_PERF_REJECT_SETUP:
		/* The two ends' ports may differ: each checks its own MTU. */
		if ((r->flags & KVERBS_PERF_F_UD) && r->reject_value == EMSGSIZE)
			return snprintf(buf, len, "%s: %s (%u-byte messages do not fit a datagram on %s port: its path MTU is lower%s)",
					who, why, r->msg_size, server ? "this server's" : "the server's",
					server ? "" : ": try a smaller -s");
		if ((r->flags & KVERBS_PERF_F_UD) && r->reject_value == EOPNOTSUPP)
			return snprintf(buf, len, "%s: %s (%s RDMA device has no UD: iWARP)",
					who, why, server ? "this server's" : "the server's");
		if (atomic && r->reject_value == EOPNOTSUPP)
			return snprintf(buf, len, "%s: %s (%s RDMA device " KV_NO_ATOMICS ")",
					who, why, server ? "this" : "its");
		return snprintf(buf, len, "%s: %s (%s)", who, why, strerror(r->reject_value));
	case KVERBS_PERF_REJECT_IMM:
		return snprintf(buf, len, "%s: %s (%s is iWARP, which has none: run without --imm)",
				who, why, server ? "this server's RDMA device" : "the server's RDMA device");
	case KVERBS_PERF_REJECT_RESERVED:
		if (r->flags & KVERBS_PERF_F_UD)
			return snprintf(buf, len, "%s: %s (the server's module does not take -c UD)",
					who, why);
		if (r->flags & KVERBS_PERF_F_INV)
			return snprintf(buf, len, "%s: %s (the server's module does not take --inv)",
					who, why);
		if (r->flags & KVERBS_PERF_F_IMM)
			return snprintf(buf, len, "%s: %s (the server's module does not take --imm)",
					who, why);
		if (r->flags & KVERBS_PERF_F_RW)
			return snprintf(buf, len, "%s: %s (the server's module does not take --rw)",
					who, why);
		if (r->flags & KVERBS_PERF_F_REVERSE)
			return snprintf(buf, len, "%s: %s (the server's module does not take -b)",
					who, why);
		return snprintf(buf, len, "%s: %s", who, why);
	default:
		return snprintf(buf, len, "%s: %s", who, why);
	}
}

/**
 * kv_perf_hint - say on stderr when the peer may be perftest's
 * @o: the command line
 * @cmd: the test's argument and result
 * @err: its errno
 * @where: the address and port, for the message
 *
 * kverbs' perf tests share perftest's names, options and port but not its
 * protocol.  A server sees a perftest client (ib_write_bw -R) as a hello
 * that is not a kverbs one; a client finds a perftest server either not
 * listening with rdma_cm, or rejecting, or answering with messages that
 * are not kverbs': say what is likely.
 */
void kv_perf_hint(const struct kv_perf_opts *o, const struct kverbs_perf *cmd, int err,
		  const char *where)
{
	const struct kverbs_perf_result *r = &cmd->result;
	bool server = o->role == KVERBS_ROLE_SERVER;

	if (server) {
		if (r->reject_reason != KVERBS_PERF_REJECT_MAGIC &&
		    r->reject_reason != KVERBS_PERF_REJECT_VERSION)
			return;
		fprintf(stderr, "%s %s: hint: was that perftest (ib_*_bw -R, ib_*_lat -R)?  kverbs' perf tests are not wire-compatible with perftest: run kverbs at both ends\n",
			kv_prog, o->cmd);
		return;
	}
	if (r->reject_reason || r->iterations || (r->valid & KVERBS_RESULT_IMM))
		return;
	if ((r->failed_step == KVERBS_STEP_CONNECT && err == ECONNREFUSED) ||
	    err == EPROTO || err == EBADMSG)
		fprintf(stderr, "%s %s: hint: if perftest serves %s, it cannot answer kverbs: kverbs' perf tests are not wire-compatible with perftest (they share only the port, %u); run 'kverbs serve' or 'kverbs %s' there\n",
			kv_prog, o->cmd, where, KVERBS_PERF_DEFAULT_PORT, o->cmd);
}

/*
 * The module's refusal of --rw (see the uAPI's KVERBS_PERF_F_RW), which
 * is a refusal of the arguments: says why and returns true, or returns
 * false when @err is not it.
 */
static bool kv_perf_describe_rw(char *buf, size_t len, int err,
				const struct kv_perf_opts *o,
				const struct kverbs_perf *cmd)
{
	const struct kv_perf_test *t = kv_perf_ran(o, cmd);

	if (!(cmd->flags & KVERBS_PERF_F_RW) || err != EINVAL)
		return false;
	if (!(t->opts & KV_OPT_RW))
		snprintf(buf, len, "--rw is for write_bw, read_bw and read_lat: %s",
			 kv_perf_writes(t) ?
			 "write_lat's ping-pong WRITEs from and into memory its peer polls, which rdma_rw has no part in" :
			 "rdma_rw moves RDMA READs and WRITEs only");
	else if (cmd->flags & KVERBS_PERF_F_IMM)
		snprintf(buf, len, "--rw and --imm exclude each other: rdma_rw posts no immediate data");
	else if (cmd->post_list > 1 || cmd->cq_mod > 1 || cmd->inline_size)
		snprintf(buf, len, "--rw excludes %s: rdma_rw builds, chains and signals each message's work requests itself",
			 cmd->post_list > 1 ? "-l" : cmd->cq_mod > 1 ? "-Q" : "-I");
	else
		return false;
	return true;
}

/* A message that invalidated a key it should not have, or not the one it should. */
static void kv_perf_describe_inv(char *buf, size_t len, const struct kverbs_perf *cmd)
{
	char want[32] = "none", got[32] = "none";

	if (cmd->inv_expected)
		snprintf(want, sizeof(want), "0x%08x", cmd->inv_expected);
	if (cmd->inv_got)
		snprintf(got, sizeof(got), "0x%08x", cmd->inv_got);
	snprintf(buf, len, "the peer's message invalidated the wrong key: expected %s, got %s",
		 want, got);
}

static void kv_perf_describe(char *buf, size_t len, int err,
			     const struct kv_perf_opts *o,
			     const struct kverbs_perf *cmd, const char *where)
{
	const struct kverbs_perf_result *r = &cmd->result;
	struct kverbs_ping ping = { .role = cmd->role, .msg_size = r->msg_size };
	struct kverbs_ping_result *p = &ping.result;
	bool atomic = kv_perf_ran(o, cmd)->kind & KV_PERF_ATOMIC;

	if (r->reject_reason == KVERBS_PERF_REJECT_RESERVED &&
	    (o->post_list || o->cq_mod || o->inline_size)) {
		snprintf(buf, len, "the server refused the request: %s (the server's module may predate -l, -Q and -I, which the server's half of -b, and a ping-pong's answers, post with: run without them)",
			 kv_perf_reject_str(r->reject_reason));
		return;
	}
	if (r->reject_reason == KVERBS_PERF_REJECT_SETUP && o->inline_size &&
	    r->reject_value == EOPNOTSUPP) {
		snprintf(buf, len, "the server refused the request: its RDMA device cannot post %u bytes inline (-I): try a smaller -I",
			 o->inline_size);
		return;
	}
	if (r->reject_reason) {
		kv_perf_describe_reject(buf, len, r, o->role == KVERBS_ROLE_SERVER, atomic);
		return;
	}
	if ((r->flags & KVERBS_PERF_F_UD) && err == EMSGSIZE &&
	    r->failed_step == KVERBS_STEP_SETUP && cmd->path_mtu) {
		snprintf(buf, len, "%u-byte messages do not fit a datagram: the path MTU of %.*s is %u bytes; -c UD takes -s up to it",
			 r->msg_size, (int)sizeof(r->ibdev), r->ibdev, cmd->path_mtu);
		return;
	}
	if ((r->flags & KVERBS_PERF_F_UD) && err == EOPNOTSUPP &&
	    r->failed_step == KVERBS_STEP_SETUP) {
		snprintf(buf, len, "the RDMA device %.*s has no UD (iWARP has no datagrams): -c UD needs InfiniBand or RoCE",
			 (int)sizeof(r->ibdev), r->ibdev);
		return;
	}
	/* No QP of the device holds that much inline data: refused before any post. */
	if (o->inline_size && err == EOPNOTSUPP && r->failed_step == KVERBS_STEP_SETUP) {
		snprintf(buf, len, "the RDMA device %.*s cannot post %u bytes inline (-I): its QPs hold less; try a smaller -I",
			 (int)sizeof(r->ibdev), r->ibdev, o->inline_size);
		return;
	}
	if (r->failed_step == KVERBS_STEP_VALIDATE && (r->valid & KVERBS_RESULT_IMM)) {
		if (r->valid & KVERBS_RESULT_NO_IMM)
			snprintf(buf, len, "immediate data mismatch in iteration %" PRIu64
				 ": expected 0x%08x, got none",
				 (uint64_t)r->mismatch_iter, cmd->imm_expected);
		else
			snprintf(buf, len, "immediate data mismatch in iteration %" PRIu64
				 ": expected 0x%08x, got 0x%08x",
				 (uint64_t)r->mismatch_iter, cmd->imm_expected, cmd->imm_got);
		return;
	}
	if (err == EPROTO &&
	    (cmd->inv_expected || cmd->inv_got)) {
		kv_perf_describe_inv(buf, len, cmd);
		return;
	}
	if (r->failed_step == KVERBS_STEP_VALIDATE) {
		snprintf(buf, len, "data mismatch in iteration %" PRIu64 " at byte %u",
			 (uint64_t)r->mismatch_iter, r->mismatch_offset);
		return;
	}
	/* Refused before anything was posted: the device's protocol has none. */
	if ((r->flags & KVERBS_PERF_F_IMM) && err == EOPNOTSUPP &&
	    r->failed_step == KVERBS_STEP_SETUP && r->transport == KVERBS_TRANSPORT_IWARP) {
		snprintf(buf, len, "the RDMA device %.*s is iWARP, which has no immediate data: run without --imm",
			 (int)sizeof(r->ibdev), r->ibdev);
		return;
	}
	if (r->failed_step == KVERBS_STEP_SAMPLES) {
		kv_describe_pinned(buf, len, err, "latency samples");
		return;
	}
	/* Only a server's session has a time limit of its own. */
	if (err == ETIME && o->role == KVERBS_ROLE_SERVER) {
		snprintf(buf, len, "ended the session: it ran one step timeout past this server's maximum duration (--max-duration, or the module's perf_max_duration_s)");
		return;
	}
	/* --dim on a device that cannot give it: refused before any CQ is made. */
	if (o->dim && err == EOPNOTSUPP && r->failed_step == KVERBS_STEP_SETUP) {
		snprintf(buf, len, "the RDMA device %.*s has no adaptive interrupt moderation for --dim: it lacks the modify_cq verb (rxe and siw have none), or its moderation is off (rdma dev set %.*s adaptive-moderation on)",
			 (int)sizeof(r->ibdev), r->ibdev[0] ? r->ibdev : "here",
			 (int)sizeof(r->ibdev), r->ibdev[0] ? r->ibdev : "DEV");
		return;
	}
	/* Not fast registration, as a ping's words would have it: siw has no atomics. */
	if (atomic && err == EOPNOTSUPP) {
		if (r->ibdev[0])
			snprintf(buf, len, "the RDMA device %.*s " KV_NO_ATOMICS,
				 (int)sizeof(r->ibdev), r->ibdev);
		else
			snprintf(buf, len, "the RDMA device " KV_NO_ATOMICS);
		return;
	}
	/* The rest is worded as for a ping. */
	p->iterations = r->iterations;
	p->valid = r->valid;
	p->failed_step = r->failed_step;
	p->wc_status = r->wc_status;
	p->vendor_err = r->vendor_err;
	p->cm_event = r->cm_event;
	p->cm_status = r->cm_status;
	p->error = r->error;
	kv_describe_ping_failure(buf, len, err, &ping, where);
}

/*
 * A latency's statistics in usec: "latency_usec", and each of "phases",
 * which also says how many operations it is over (@count).
 */
static void kv_perf_json_stats(struct kv_json *j, const struct kv_lat_stats *st,
			       bool count)
{
	const struct {
		const char *key;
		double usec;
	} cols[] = {
		{ "min", st->min }, { "max", st->max }, { "typical", st->typical },
		{ "avg", st->avg }, { "stdev", st->stdev }, { "p99", st->p99 },
		{ "p99_9", st->p99_9 },
	};
	size_t i;

	kv_json_begin_object(j);
	if (count) {
		kv_json_key(j, "samples");
		kv_json_u64(j, st->samples);
	}
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		kv_json_key(j, cols[i].key);
		kv_json_double(j, cols[i].usec);
	}
	kv_json_end_object(j);
}

static void kv_perf_json_lat(struct kv_json *j, const struct kv_perf_lat *lat)
{
	const struct kv_lat_stats *st = &lat->stats;

	kv_json_key(j, "samples");
	kv_json_u64(j, lat->samples);
	kv_json_key(j, "samples_full");
	kv_json_bool(j, lat->full);
	kv_json_key(j, "latency_usec");
	if (!lat->have_stats) {
		kv_json_null(j);
		return;
	}
	kv_perf_json_stats(j, st, false);
	if (!lat->have_phases)
		return;
	kv_json_key(j, "phases");
	kv_json_begin_object(j);
	kv_json_key(j, "to_handler");
	kv_perf_json_stats(j, &lat->to_handler, true);
	kv_json_key(j, "to_thread");
	kv_perf_json_stats(j, &lat->to_thread, true);
	kv_json_end_object(j);
}

/*
 * What the test cost the CPUs (&struct kv_cpu), in all and per
 * operation; null where it could not be read.
 */
static void kv_perf_json_cpu(struct kv_json *j, const struct kverbs_perf_result *r,
			     const struct kv_cpu *cpu)
{
	kv_json_key(j, "cpu");
	if (!cpu->known) {
		kv_json_null(j);
		return;
	}
	kv_json_begin_object(j);
	kv_json_key(j, "thread_ns");
	kv_json_u64(j, cpu->thread_ns);
	kv_json_key(j, "host_busy_ns");
	kv_json_u64(j, cpu->busy_ns);
	kv_json_key(j, "thread_usec_per_op");
	if (r->iterations)
		kv_json_double(j, cpu->thread_ns / 1e3 / r->iterations);
	else
		kv_json_null(j);
	kv_json_key(j, "host_busy_usec_per_op");
	if (r->iterations)
		kv_json_double(j, cpu->busy_ns / 1e3 / r->iterations);
	else
		kv_json_null(j);
	kv_json_key(j, "host_busy_sec_per_gib");
	if (r->bytes)
		kv_json_double(j, cpu->busy_ns / 1e9 * 1073741824.0 / r->bytes);
	else
		kv_json_null(j);
	kv_json_end_object(j);
}

static void kv_perf_print_json(FILE *f, const struct kv_perf_opts *o,
			       const struct kverbs_perf *cmd, const char *addr,
			       int err, const char *status, const char *message,
			       const struct kv_span *span, const struct kv_cpu *cpu,
			       const struct kv_perf_lat *lat)
{
	const struct kverbs_perf_result *r = &cmd->result;
	const struct kv_perf_test *t = kv_perf_ran(o, cmd);
	const char *atomic_type = kv_perf_atomic_type(cmd);
	struct kv_json j;

	kv_json_init(&j, f);
	kv_json_begin_object(&j);
	kv_json_key(&j, "test");
	kv_json_string(&j, t->cmd);
	kv_json_key(&j, "role");
	kv_json_string(&j, o->role == KVERBS_ROLE_SERVER ? "server" : "client");
	kv_json_key(&j, "address");
	kv_json_string(&j, addr);
	kv_json_key(&j, "port");
	kv_json_u64(&j, o->port);
	kv_json_key(&j, "device");
	kv_json_string(&j, r->ibdev);
	kv_json_key(&j, "transport");
	kv_json_string(&j, kv_transport_str(r->transport));
	kv_json_key(&j, "link_layer");
	kv_json_string(&j, kv_link_layer_str(r->link_layer));
	kv_json_key(&j, "mtu");
	kv_json_u64(&j, r->active_mtu);
	kv_json_key(&j, "size");
	kv_json_u64(&j, r->msg_size);
	kv_json_key(&j, "tx_depth");
	kv_json_u64(&j, r->tx_depth);
	kv_json_key(&j, "qps");
	kv_json_u64(&j, o->qps);
	kv_json_key(&j, "bidirectional");
	kv_json_bool(&j, o->bidir);
	kv_json_key(&j, "events");
	kv_json_bool(&j, kv_perf_slept(o, t, r));
	if (o->role == KVERBS_ROLE_SERVER) {
		kv_json_key(&j, "busy_poll");
		kv_json_bool(&j, o->busy_poll);
	}
	kv_perf_json_cq(&j, &cmd->cq);
	kv_perf_json_post(&j, o, cmd);
	kv_json_key(&j, "count");
	kv_json_u64(&j, r->count);
	kv_json_key(&j, "duration_ns");
	kv_json_u64(&j, r->duration_ns);
	kv_json_key(&j, "validate");
	kv_json_bool(&j, r->flags & KVERBS_PERF_F_VALIDATE);
	kv_json_key(&j, "imm");
	kv_json_bool(&j, r->flags & KVERBS_PERF_F_IMM);
	kv_json_key(&j, "rw");
	kv_json_bool(&j, r->flags & KVERBS_PERF_F_RW);
	kv_json_key(&j, "rw_ctxs");
	kv_json_u64(&j, cmd->rw_ctxs);
	kv_json_key(&j, "rw_mr_ctxs");
	kv_json_u64(&j, cmd->rw_mr_ctxs);
	kv_json_key(&j, "inv");
	kv_json_bool(&j, r->flags & KVERBS_PERF_F_INV);
	kv_json_key(&j, "inv_remote");
	kv_json_u64(&j, cmd->inv_remote);
	kv_json_key(&j, "inv_sent");
	kv_json_u64(&j, cmd->inv_sent);
	kv_json_key(&j, "read_inv");
	kv_json_u64(&j, cmd->read_inv);
	kv_perf_json_srq(&j, cmd);
	kv_json_key(&j, "connection");
	kv_json_string(&j, r->flags & KVERBS_PERF_F_UD ? "UD" : "RC");
	kv_json_key(&j, "lost");
	kv_json_u64(&j, cmd->lost);
	/* null: a module that takes any QP's datagrams for the peer's */
	kv_json_key(&j, "foreign");
	if (o->ud_foreign)
		kv_json_u64(&j, cmd->foreign);
	else
		kv_json_null(&j);
	if (t->kind & KV_PERF_ATOMIC) {
		kv_json_key(&j, "atomic_type");
		if (atomic_type)
			kv_json_string(&j, atomic_type);
		else
			kv_json_null(&j);
	}
	kv_json_key(&j, "status");
	kv_json_string(&j, status);
	kv_json_key(&j, "iterations");
	kv_json_u64(&j, r->iterations);
	kv_json_key(&j, "bytes");
	kv_json_u64(&j, r->bytes);
	kv_json_key(&j, "elapsed_ns");
	kv_json_u64(&j, r->elapsed_ns);
	kv_json_span(&j, span);
	kv_json_key(&j, "peak_bytes_per_sec");
	kv_json_u64(&j, r->peak_bps);
	kv_json_key(&j, "avg_bytes_per_sec");
	kv_json_u64(&j, r->avg_bps);
	kv_json_key(&j, "bw_peak");
	kv_json_double(&j, kv_perf_bw(o, r->peak_bps));
	kv_json_key(&j, "bw_average");
	kv_json_double(&j, kv_perf_bw(o, r->avg_bps));
	kv_json_key(&j, "bw_unit");
	kv_json_string(&j, o->gbits ? "Gb/sec" : "MiB/sec");
	kv_json_key(&j, "msg_rate_mpps");
	kv_json_double(&j, r->msg_rate / 1e6);
	kv_perf_json_cpu(&j, r, cpu);
	if (t->kind & KV_PERF_LAT)
		kv_perf_json_lat(&j, lat);
	if (kv_json_failure(&j, &KV_FAILURE(r, err, message))) {
		if (r->valid & (KVERBS_RESULT_MISMATCH | KVERBS_RESULT_IMM)) {
			kv_json_key(&j, "mismatch_iteration");
			kv_json_u64(&j, r->mismatch_iter);
		}
		if (r->valid & KVERBS_RESULT_IMM) {
			kv_json_key(&j, "imm_expected");
			kv_json_u64(&j, cmd->imm_expected);
			kv_json_key(&j, "imm_got");
			if (r->valid & KVERBS_RESULT_NO_IMM)
				kv_json_null(&j);
			else
				kv_json_u64(&j, cmd->imm_got);
		}
		if (cmd->inv_expected || cmd->inv_got) {
			kv_json_key(&j, "inv_expected");
			if (cmd->inv_expected)
				kv_json_u64(&j, cmd->inv_expected);
			else
				kv_json_null(&j);
			kv_json_key(&j, "inv_got");
			if (cmd->inv_got)
				kv_json_u64(&j, cmd->inv_got);
			else
				kv_json_null(&j);
		}
		if (r->reject_reason) {
			kv_json_key(&j, "reject_reason");
			kv_json_string(&j, kv_perf_reject_str(r->reject_reason));
			kv_json_key(&j, "reject_value");
			kv_json_u64(&j, r->reject_value);
			kv_json_key(&j, "reject_version");
			kv_json_u64(&j, r->reject_version);
		}
		kv_json_end_object(&j);
	}
	kv_json_end_object(&j);
	kv_json_end(&j);
}

static void kv_perf_print_debug(const struct kverbs_perf *cmd, int err)
{
	const struct kverbs_perf_result *r = &cmd->result;

	fprintf(stderr,
		"ioctl: %d (%s)\n"
		"iterations %" PRIu64 " bytes %" PRIu64 " elapsed_ns %" PRIu64
		" peak_bps %" PRIu64 " avg_bps %" PRIu64 " msg_rate %" PRIu64 "\n"
		"valid 0x%x failed_step %u (%s) wc_status %u (%s) vendor_err 0x%x\n"
		"cm_event %u (%s) cm_status %d mismatch %" PRIu64 "/%u reject %u/%u/%u\n"
		"test %u flags 0x%x samples %u/%u rw %" PRIu64 "/%" PRIu64 "\n",
		-err, kv_errno_name(err), (uint64_t)r->iterations, (uint64_t)r->bytes,
		(uint64_t)r->elapsed_ns, (uint64_t)r->peak_bps, (uint64_t)r->avg_bps,
		(uint64_t)r->msg_rate, r->valid, r->failed_step,
		kv_step_str(r->failed_step), r->wc_status, kv_wc_status_str(r->wc_status),
		r->vendor_err, r->cm_event, kv_cm_event_str(r->cm_event), r->cm_status,
		(uint64_t)r->mismatch_iter, r->mismatch_offset, r->reject_reason,
		r->reject_value, r->reject_version, r->test, r->flags,
		r->samples_stored, cmd->samples_max, (uint64_t)cmd->rw_mr_ctxs,
		(uint64_t)cmd->rw_ctxs);
}

/*
 * Widen @span's measured phase to hold @cmd's: from its end
 * (kverbs_perf.ended_ns, 0 from a module before it, or when no test
 * ran) back by its elapsed_ns.  With -q, the span of all the QPs'.
 */
static void kv_perf_span_test(struct kv_span *span, const struct kverbs_perf *cmd)
{
	uint64_t end = cmd->ended_ns, start;

	if (!end || end < cmd->result.elapsed_ns)
		return;
	start = end - cmd->result.elapsed_ns;
	if (!span->test_end_ns || start < span->test_start_ns)
		span->test_start_ns = start;
	if (end > span->test_end_ns)
		span->test_end_ns = end;
}

/*
 * A latency client's array for the kernel to store each operation's time
 * in: one entry per iteration, or in duration mode as many as
 * KV_PERF_NS_PER_SAMPLE allows.  NULL when out of memory.
 */
static uint64_t *kv_perf_samples_alloc(const struct kv_perf_opts *o,
				       uint32_t *n)
{
	uint64_t want = o->iters;

	if (o->duration_ns) {
		want = o->duration_ns / KV_PERF_NS_PER_SAMPLE;
		if (want > KV_PERF_SAMPLES_MAX)
			want = KV_PERF_SAMPLES_MAX;
		if (!want)
			want = 1;
	}
	*n = want;
	return calloc(want, sizeof(uint64_t));
}

/*
 * --phases: the statistics of phase @which (0: to the handler, 1: to the
 * thread) of @n operations, out of the kernel's pairs.
 */
static int kv_perf_phase_stats(const uint64_t *phases, size_t n, int which,
			       struct kv_lat_stats *st)
{
	uint64_t *one = malloc(n * sizeof(*one));
	size_t i;
	int ret;

	if (!one)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		one[i] = phases[2 * i + which];
	ret = kv_lat_stats_compute(one, n, st);
	free(one);
	return ret;
}

/* The statistics of the samples the kernel stored, however the test ended. */
static void kv_perf_lat_collect(const struct kv_perf_opts *o,
				const struct kverbs_perf *cmd,
				const uint64_t *samples, const uint64_t *phases,
				struct kv_perf_lat *lat)
{
	int ret;

	lat->samples = cmd->result.samples_stored;
	if (lat->samples > cmd->samples_max)
		lat->samples = cmd->samples_max;
	/* In iterations mode a full array is the end asked for. */
	lat->full = o->duration_ns && lat->samples == cmd->samples_max;
	if (!lat->samples)
		return;
	ret = kv_lat_stats_compute(samples, lat->samples, &lat->stats);
	if (ret)
		fprintf(stderr, "%s %s: cannot work out the latency statistics: %s\n",
			kv_prog, o->cmd, strerror(-ret));
	lat->have_stats = !ret;
	if (!phases || ret)
		return;
	ret = kv_perf_phase_stats(phases, lat->samples, 0, &lat->to_handler);
	if (!ret)
		ret = kv_perf_phase_stats(phases, lat->samples, 1, &lat->to_thread);
	if (ret)
		fprintf(stderr, "%s %s: cannot work out the phases' statistics: %s\n",
			kv_prog, o->cmd, strerror(-ret));
	lat->have_phases = !ret;
}

/* Reports of servers running in threads (kverbs serve) are not mixed. */
static pthread_mutex_t kv_perf_print_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Print a test's outcome as text or JSON on stdout, and what failed on
 * stderr.  Returns the exit code that says how it went.
 */
static int kv_perf_report(const struct kv_perf_opts *o, const struct kverbs_perf *cmd,
			  int err, const char *addr, const char *where,
			  const struct kv_span *span, const struct kv_cpu *cpu,
			  const struct kv_perf_lat *lat)
{
	const char *status, *message = NULL;
	char msg[512];
	int code;

	if (!err) {
		status = "ok";
		code = KV_EXIT_OK;
	} else if (err == EINTR) {
		status = "interrupted";
		code = KV_EXIT_INTERRUPTED;
	} else {
		status = "failed";
		code = kv_args_refused(err, cmd->result.failed_step) ?
		       KV_EXIT_USAGE : KV_EXIT_FAILED;
	}
	if (err) {
		if (code == KV_EXIT_USAGE) {
			if (!kv_perf_describe_rw(msg, sizeof(msg), err, o, cmd))
				kv_describe_refused(msg, sizeof(msg), err);
		} else
			kv_perf_describe(msg, sizeof(msg), err, o, cmd, where);
		message = msg;
	}
	pthread_mutex_lock(&kv_perf_print_lock);
	if (o->debug)
		kv_perf_print_debug(cmd, err);
	/* --out_json: the same document in a file, whatever goes on stdout. */
	if (o->json_out) {
		if (o->all)
			fprintf(o->json_out, "%s", o->seq ? ",\n" : "[\n");
		kv_perf_print_json(o->json_out, o, cmd, addr, err, status, message, span, cpu,
				   lat);
		fflush(o->json_out);
	}
	if (err && code != KV_EXIT_USAGE)
		kv_perf_hint(o, cmd, err, where);
	if (o->json) {
		/* -a: one document, an array with an object per size. */
		if (o->all)
			printf("%s", o->seq ? ",\n" : "[\n");
		kv_perf_print_json(stdout, o, cmd, addr, err, status, message, span, cpu, lat);
	} else {
		if (message)
			fprintf(stderr, "%s %s: %s\n", kv_prog, o->cmd, message);
		if (lat->full)
			fprintf(stderr, "%s %s: note: the test stopped after %.3f of its %.3f s: the buffer for %u samples was full\n",
				kv_prog, o->cmd, cmd->result.elapsed_ns / 1e9,
				o->duration_ns / 1e9, cmd->samples_max);
		if (cmd->result.iterations || !err)
			kv_perf_print_text(o, cmd, cpu, lat);
	}
	fflush(stdout);
	pthread_mutex_unlock(&kv_perf_print_lock);
	return code;
}

/**
 * kv_perf_run - run one KVERBS_IOC_PERF on @fd and report it
 * @fd: /dev/kverbs
 * @o: the command line
 * @cmd: the ioctl's argument, filled in but for the samples
 * @addr: the address, as printed
 * @where: the address and port, for messages
 *
 * Prints the result as text or JSON on stdout, and what failed on
 * stderr.  Returns the exit code that says how it went.
 */
int kv_perf_run(int fd, const struct kv_perf_opts *o, struct kverbs_perf *cmd,
		const char *addr, const char *where)
{
	struct kv_perf_lat lat = { 0 };
	uint64_t *samples = NULL, *phases = NULL;
	struct kv_span span = { 0 };
	struct kv_cpu cpu;
	int err, code;

	if (o->role == KVERBS_ROLE_CLIENT && (kv_perf_test(o->test)->kind & KV_PERF_LAT)) {
		samples = kv_perf_samples_alloc(o, &cmd->samples_max);
		if (!samples) {
			fprintf(stderr, "%s %s: no memory for %u latency samples\n",
				kv_prog, o->cmd, cmd->samples_max);
			return KV_EXIT_FAILED;
		}
		cmd->samples = (uintptr_t)samples;
	}
	/* Two per sample, of the sample's operation (KVERBS_PERF_F_PHASES). */
	if (samples && o->phases) {
		phases = calloc(cmd->samples_max, 2 * sizeof(uint64_t));
		if (!phases) {
			fprintf(stderr, "%s %s: no memory for the phases of %u latency samples\n",
				kv_prog, o->cmd, cmd->samples_max);
			free(samples);
			return KV_EXIT_FAILED;
		}
		cmd->phases = (uintptr_t)phases;
	}
	kv_cpu_begin(&cpu, false);
	span.start_ns = kv_realtime_ns();
	err = -kv_ioctl(fd, KVERBS_IOC_PERF, cmd);
	span.end_ns = kv_realtime_ns();
	kv_perf_span_test(&span, cmd);
	kv_cpu_end(&cpu, false);
	if (samples)
		kv_perf_lat_collect(o, cmd, samples, phases, &lat);
	code = kv_perf_report(o, cmd, err, addr, where, &span, &cpu, &lat);
	free(phases);
	free(samples);
	return code;
}

/* -q: one of the test's connections, in a thread of its own. */
struct kv_perf_qp {
	int fd;
	struct kverbs_perf cmd;
	int err;
	int *stop;
};

static void *kv_perf_qp_main(void *arg)
{
	struct kv_perf_qp *q = arg;

	q->err = -kv_ioctl(q->fd, KVERBS_IOC_PERF, &q->cmd);
	/* As in perftest, one QP's failure ends the test. */
	if (q->err && q->err != EINTR)
		__atomic_store_n(q->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Connections of one test: -q of them, twice as many with -b. */
static uint32_t kv_perf_conns(const struct kv_perf_opts *o)
{
	return o->bidir ? 2 * o->qps : o->qps;
}

/*
 * -q N: N connections at once, each its own KVERBS_IOC_PERF in its own
 * thread, and so its own QP, CQ and kernel context; reported as one
 * test, with their sum.  Rates add up; the elapsed time is the longest.
 * A failure is the first connection's that failed other than by the
 * signal that ended the rest.  -b: N more, on which the client asks the
 * server to move the data (KVERBS_PERF_F_REVERSE).
 */
static int kv_perf_qps(int fd, const struct kv_perf_opts *o, const struct kverbs_perf *tmpl,
		       const char *addr, const char *where)
{
	static const struct kv_perf_lat no_lat;
	uint32_t i, n = kv_perf_conns(o);
	void *args[2 * KV_PERF_MAX_QPS];
	struct kv_perf_qp *qps;
	struct kverbs_perf agg;
	struct kverbs_perf_result *r = &agg.result;
	int stop = 0, err = 0, e, ret;
	uint64_t elapsed = 0;
	struct kv_span span = { 0 };
	struct kv_cpu cpu;

	qps = calloc(n, sizeof(*qps));
	if (!qps) {
		fprintf(stderr, "%s %s: no memory for %u QPs\n", kv_prog, o->cmd, n);
		return KV_EXIT_FAILED;
	}
	for (i = 0; i < n; i++) {
		qps[i] = (struct kv_perf_qp){ .fd = fd, .cmd = *tmpl, .stop = &stop };
		if (o->role == KVERBS_ROLE_CLIENT && i >= o->qps)
			qps[i].cmd.flags |= KVERBS_PERF_F_REVERSE;
		args[i] = &qps[i];
	}
	kv_cpu_begin(&cpu, true);
	span.start_ns = kv_realtime_ns();
	ret = kv_threads_run(n, kv_perf_qp_main, args, &stop);
	span.end_ns = kv_realtime_ns();
	for (i = 0; i < n; i++)
		kv_perf_span_test(&span, &qps[i].cmd);
	kv_cpu_end(&cpu, true);
	if (ret < 0) {
		fprintf(stderr, "%s %s: cannot start a thread: %s\n", kv_prog, o->cmd,
			strerror(-ret));
		free(qps);
		return KV_EXIT_FAILED;
	}

	/* What describes the test: the first real failure, else the first of any. */
	agg = qps[0].cmd;
	for (i = 0; i < n; i++) {
		e = qps[i].err;
		if (e && (!err || (err == EINTR && e != EINTR))) {
			err = e;
			agg.result = qps[i].cmd.result;
		}
	}
	r->iterations = r->bytes = r->peak_bps = 0;
	agg.rw_ctxs = agg.rw_mr_ctxs = 0;
	agg.inv_remote = agg.inv_sent = agg.read_inv = 0;
	for (i = 0; i < n; i++) {
		const struct kverbs_perf_result *q = &qps[i].cmd.result;
		const struct kverbs_perf *qc = &qps[i].cmd;

		/* One SRQ for all: the most any session saw of it. */
		if (qc->srq_wr > agg.srq_wr) {
			agg.srq_wr = qc->srq_wr;
			agg.srq_limit = qc->srq_limit;
		}
		if (qc->srq_limit_events > agg.srq_limit_events)
			agg.srq_limit_events = qc->srq_limit_events;
		if (qc->srq_shared > agg.srq_shared)
			agg.srq_shared = qc->srq_shared;

		agg.rw_ctxs += qps[i].cmd.rw_ctxs;
		agg.rw_mr_ctxs += qps[i].cmd.rw_mr_ctxs;
		agg.inv_remote += qps[i].cmd.inv_remote;
		agg.inv_sent += qps[i].cmd.inv_sent;
		agg.read_inv += qps[i].cmd.read_inv;
		r->iterations += q->iterations;
		r->bytes += q->bytes;
		r->peak_bps += q->peak_bps;
		if (q->elapsed_ns > elapsed)
			elapsed = q->elapsed_ns;
	}
	r->elapsed_ns = elapsed;
	r->avg_bps = elapsed ? (uint64_t)(r->bytes * 1e9 / elapsed) : 0;
	r->msg_rate = elapsed ? (uint64_t)(r->iterations * 1e9 / elapsed) : 0;
	if (r->peak_bps < r->avg_bps)
		r->peak_bps = r->avg_bps;
	if (ret > 0)
		err = EINTR;
	free(qps);
	return kv_perf_report(o, &agg, err, addr, where, &span, &cpu, &no_lat);
}

/* One test of the command line: on one connection, or with -q on several. */
static int kv_perf_one(int fd, const struct kv_perf_opts *o, struct kverbs_perf *cmd,
		       const char *addr, const char *where)
{
	if (kv_perf_conns(o) > 1)
		return kv_perf_qps(fd, o, cmd, addr, where);
	return kv_perf_run(fd, o, cmd, addr, where);
}

/**
 * kv_perf_where - resolve the address a perf command connects to or listens on
 * @o: the command line; without an address, the IPv4 wildcard
 * @ss: filled in with the address and @o->port
 * @addr: the address as printed
 * @addr_len: its room
 * @where: the address and port, for messages
 * @where_len: its room
 *
 * Returns 0, or -1 after a usage error was printed.
 */
int kv_perf_where(const struct kv_perf_opts *o, struct sockaddr_storage *ss,
		  char *addr, size_t addr_len, char *where, size_t where_len)
{
	/*
	 * Every IPv4 address.  Not '::', though the kernel listens there for
	 * both families: over iWARP (siw) an IPv4 client of an IPv6
	 * listener is reset, its v4-mapped address matching no device.
	 */
	if (kv_parse_addr(o->addr ? o->addr : "0.0.0.0", o->port, ss)) {
		kv_usage_error(o->cmd, "cannot resolve address '%s'", o->addr);
		return -1;
	}
	kv_addr_str(ss, addr, addr_len);
	snprintf(where, where_len, ss->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 addr, o->port);
	return 0;
}

/**
 * kv_perf_listen - make @fd's listener (KVERBS_IOC_LISTEN)
 * @fd: /dev/kverbs
 * @o: the command line, for messages
 * @ss: the address and port to listen on
 * @addr: the address, as printed
 * @where: the address and port, for messages
 *
 * Returns 0, or the exit code after the reason was printed.
 */
int kv_perf_listen(int fd, const struct kv_perf_opts *o,
		   const struct sockaddr_storage *ss, const char *addr,
		   const char *where)
{
	struct kverbs_listen cmd = { .size = sizeof(cmd) };
	char msg[256];
	int err;

	memcpy(&cmd.addr, ss, sizeof(cmd.addr));
	err = -kv_ioctl(fd, KVERBS_IOC_LISTEN, &cmd);
	if (!err)
		return KV_EXIT_OK;
	switch (err) {
	case EADDRINUSE:
		snprintf(msg, sizeof(msg), "port %u is in use", o->port);
		break;
	case EADDRNOTAVAIL:
		snprintf(msg, sizeof(msg), "%s is not an address of this host", addr);
		break;
	default:
		snprintf(msg, sizeof(msg), "%s", strerror(err));
		break;
	}
	fprintf(stderr, "%s %s: cannot listen on %s: %s\n", kv_prog, o->cmd, where, msg);
	return err == EINVAL ? KV_EXIT_USAGE : KV_EXIT_FAILED;
}

/*
 * -a: perftest's sizes, 2 B to 8 MiB; but none that this host would
 * refuse: not above the module's max_msg_size, nor above what every RDMA
 * device here can register with one MR.  Client and server work it out
 * alike; hosts whose limits differ should use the same -s instead.
 */
#define KV_PERF_ALL_MIN		2u
#define KV_PERF_ALL_MAX		(8u << 20)

static uint32_t kv_perf_all_max(int fd)
{
	uint64_t max = KV_PERF_ALL_MAX, mr = kv_devices_max_mr(fd);
	unsigned int v;
	FILE *f;

	if (mr && mr < max)
		max = mr;
	f = fopen("/sys/module/kverbs/parameters/max_msg_size", "r");
	if (f) {
		if (fscanf(f, "%u", &v) == 1 && v >= KV_PERF_ALL_MIN && v < max)
			max = v;
		fclose(f);
	}
	return max;
}

/*
 * -a: a test per size, each on its own connection, as perftest; the
 * server serves as many clients as there are sizes.  Stops at the first
 * size that fails.
 */
static int kv_perf_all(int fd, struct kv_perf_opts *o, const struct kverbs_perf *tmpl,
		       const char *addr, const char *where)
{
	uint32_t size, max = kv_perf_all_max(fd);
	struct kverbs_perf cmd = *tmpl;
	int code = KV_EXIT_OK;

	for (size = KV_PERF_ALL_MIN; size && size <= max; size *= 2, o->seq++) {
		cmd = *tmpl;
		if (o->role == KVERBS_ROLE_CLIENT)
			cmd.msg_size = size;
		code = kv_perf_one(fd, o, &cmd, addr, where);
		if (code)
			break;
	}
	/* Close the table, or the array, if anything went into it. */
	if (o->json_out)
		fprintf(o->json_out, "]\n");
	if (o->json)
		printf("]\n");
	else if (o->seq || cmd.result.iterations)
		printf("%s", kv_perf_line);
	return code;
}

static int kv_perf_main(uint32_t test, int argc, char **argv)
{
	struct kverbs_perf cmd = { .size = sizeof(cmd) };
	struct kv_perf_opts o;
	char addr[128], where[160], what[96];
	uint64_t features;
	bool many;
	int fd, ret, code;

	ret = kv_perf_parse(test, argc, argv, &o);
	if (ret)
		return ret > 0 ? KV_EXIT_OK : KV_EXIT_USAGE;

	cmd.role = o.role;
	cmd.test = test;
	cmd.msg_size = o.size;
	cmd.timeout_ns = o.timeout_ns;
	if (o.busy_poll)
		cmd.flags |= KVERBS_PERF_F_BUSY_POLL;
	if (o.role == KVERBS_ROLE_CLIENT) {
		cmd.tx_depth = o.tx_depth;
		cmd.iterations = o.duration_ns ? 0 : o.iters;
		cmd.duration_ns = o.duration_ns;
		if (o.validate)
			cmd.flags |= KVERBS_PERF_F_VALIDATE;
		if (o.cmp_swap)
			cmd.flags |= KVERBS_PERF_F_CMP_SWAP;
		if (o.imm)
			cmd.flags |= KVERBS_PERF_F_IMM;
		if (o.rw)
			cmd.flags |= KVERBS_PERF_F_RW;
		if (o.inv)
			cmd.flags |= KVERBS_PERF_F_INV;
		if (o.phases)
			cmd.flags |= KVERBS_PERF_F_PHASES;
		if (o.ud)
			cmd.flags |= KVERBS_PERF_F_UD;
	}
	/* The server checks, or fills, what the client asked it to. */
	if (kv_perf_where(&o, (struct sockaddr_storage *)&cmd.addr, addr, sizeof(addr),
			  where, sizeof(where)))
		return KV_EXIT_USAGE;

	/*
	 * A server of several clients (-a: one per size, -q and -b: several
	 * at once)
	 * listens once, on the file (KVERBS_IOC_LISTEN): a client never finds
	 * the port closed between two of them.
	 */
	many = o.role == KVERBS_ROLE_SERVER && (o.all || kv_perf_conns(&o) > 1);
	features = kv_perf_test(test)->feature;
	if (many)
		features |= KVERBS_FEATURE_LISTEN;
	if (o.bidir && o.role == KVERBS_ROLE_CLIENT)
		features |= KVERBS_FEATURE_PERF_REVERSE;
	kv_perf_set_poll(&o, &cmd, &features, what, sizeof(what));
	kv_perf_set_post(&o, &cmd, &features, what, sizeof(what));
	/*
	 * A server needs a module that sleeps unless told to poll: an older
	 * one busy-polls for any client, which this command would not say.
	 */
	if (o.role == KVERBS_ROLE_SERVER)
		features |= KVERBS_FEATURE_PERF_BUSY_POLL;
	if (o.role == KVERBS_ROLE_SERVER && kv_perf_server_ceilings(&o, &cmd, &features))
		return KV_EXIT_USAGE;
	fd = kv_open_for(features, what);
	if (fd < 0)
		return KV_EXIT_ENV;
	/* Said in words of its own: the test runs, only not with --imm. */
	if (o.imm && !(kv_features(fd) & KVERBS_FEATURE_PERF_IMM)) {
		fprintf(stderr, "%s %s: the kverbs module loaded does not support --imm (immediate data): load the module built with this tool\n",
			kv_prog, o.cmd);
		close(fd);
		return KV_EXIT_ENV;
	}
	if (o.rw && !(kv_features(fd) & KVERBS_FEATURE_PERF_RW)) {
		fprintf(stderr, "%s %s: the kverbs module loaded does not support --rw (rdma_rw contexts): load the module built with this tool\n",
			kv_prog, o.cmd);
		close(fd);
		return KV_EXIT_ENV;
	}
	if (kv_perf_server_srq(fd, &o, &cmd)) {
		close(fd);
		return KV_EXIT_ENV;
	}
	if (o.phases && !(kv_features(fd) & KVERBS_FEATURE_PERF_PHASES)) {
		fprintf(stderr, "%s %s: the kverbs module loaded does not support --phases (phase-resolved latency): load the module built with this tool\n",
			kv_prog, o.cmd);
		close(fd);
		return KV_EXIT_ENV;
	}
	if (o.ud && !(kv_features(fd) & KVERBS_FEATURE_PERF_UD)) {
		fprintf(stderr, "%s %s: the kverbs module loaded does not support -c UD (datagrams): load the module built with this tool\n",
			kv_prog, o.cmd);
		close(fd);
		return KV_EXIT_ENV;
	}
	if (o.inv && !(kv_features(fd) & KVERBS_FEATURE_PERF_INV)) {
		fprintf(stderr, "%s %s: the kverbs module loaded does not support --inv (remote invalidation): load the module built with this tool\n",
			kv_prog, o.cmd);
		close(fd);
		return KV_EXIT_ENV;
	}
	o.ud_foreign = kv_features(fd) & KVERBS_FEATURE_PERF_UD_FOREIGN;
	if (many) {
		code = kv_perf_listen(fd, &o, (struct sockaddr_storage *)&cmd.addr, addr, where);
		if (code) {
			close(fd);
			return code;
		}
		cmd.flags |= KVERBS_PERF_F_LISTENER;
		memset(&cmd.addr, 0, sizeof(cmd.addr));
	}
	if (o.json_file) {
		o.json_out = fopen(o.json_file, "w");
		if (!o.json_out) {
			fprintf(stderr, "%s %s: cannot write %s: %s\n", kv_prog, o.cmd,
				o.json_file, strerror(errno));
			close(fd);
			return KV_EXIT_USAGE;
		}
	}
	/* As perftest's servers say, where scripts look for it; JSON stays quiet. */
	if (o.role == KVERBS_ROLE_SERVER && !o.json)
		fprintf(stderr, "%s %s: waiting for a client on %s\n", kv_prog, o.cmd, where);
	kv_catch_signals();
	if (o.all)
		code = kv_perf_all(fd, &o, &cmd, addr, where);
	else
		code = kv_perf_one(fd, &o, &cmd, addr, where);
	close(fd);
	if (o.json_out && fclose(o.json_out) && code == KV_EXIT_OK) {
		fprintf(stderr, "%s %s: cannot write %s: %s\n", kv_prog, o.cmd, o.json_file,
			strerror(errno));
		code = KV_EXIT_FAILED;
	}
	return code;
}

/* The module's ceiling named @param, or 0 if it cannot be read. */
static uint64_t kv_perf_module_ceiling(const char *param)
{
	unsigned long long v = 0;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/kverbs/parameters/%s", param);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/**
 * kv_perf_server_ceilings - a server's ceilings into its ioctl argument
 * @o: the command line
 * @cmd: the argument, a server's
 * @features: the module features the command needs, added to
 *
 * A ceiling above the module's is refused by the module with EINVAL;
 * it is said here in words, when the module's can be read.
 * Returns 0, or -1 after a usage error was printed.
 */
int kv_perf_server_ceilings(const struct kv_perf_opts *o, struct kverbs_perf *cmd,
			    uint64_t *features)
{
	uint64_t max_s = kv_perf_module_ceiling("perf_max_duration_s");
	uint64_t max_iters = kv_perf_module_ceiling("perf_max_iterations");

	if (!o->max_duration_ns && !o->max_iters && !o->no_reverse)
		return 0;
	if (max_s && o->max_duration_ns > max_s * 1000000000ULL) {
		kv_usage_error(o->cmd, "--max-duration %.9g is above the module's perf_max_duration_s, %" PRIu64 " s: a server may only lower it",
			       o->max_duration_ns / 1e9, max_s);
		return -1;
	}
	if (max_iters && o->max_iters > max_iters) {
		kv_usage_error(o->cmd, "--max-iters %" PRIu64 " is above the module's perf_max_iterations, %" PRIu64 ": a server may only lower it",
			       o->max_iters, max_iters);
		return -1;
	}
	cmd->max_duration_ns = o->max_duration_ns;
	cmd->max_iterations = o->max_iters;
	if (o->no_reverse)
		cmd->flags |= KVERBS_PERF_F_NO_REVERSE;
	*features |= KVERBS_FEATURE_PERF_CEILINGS;
	return 0;
}

/**
 * kv_perf_server_srq - a server's --srq into its ioctl argument
 * @fd: the module
 * @o: the command line
 * @cmd: the argument, a server's
 *
 * Returns 0, or -1 after saying that the module loaded cannot.
 */
int kv_perf_server_srq(int fd, const struct kv_perf_opts *o, struct kverbs_perf *cmd)
{
	if (!o->srq)
		return 0;
	/* In words of its own, as --imm: an older module would take none of it. */
	if (!(kv_features(fd) & KVERBS_FEATURE_PERF_SRQ)) {
		fprintf(stderr, "%s %s: the kverbs module loaded does not support --srq (shared receive queues): load the module built with this tool\n",
			kv_prog, o->cmd);
		return -1;
	}
	cmd->flags |= KVERBS_PERF_F_SRQ;
	cmd->srq_wr = o->srq_wr;
	cmd->srq_limit = o->srq_limit;
	return 0;
}

/**
 * kv_perf_print_srq - a server's SRQ line of the report
 * @cmd: the server's argument, as the module returned it
 */
void kv_perf_print_srq(const struct kverbs_perf *cmd)
{
	if (!(cmd->flags & KVERBS_PERF_F_SRQ))
		return;
	if (!cmd->srq_wr) {
		printf(" SRQ            : not used by this test (its own receives)\n");
		return;
	}
	printf(" SRQ            : %u receives, limit %u, %" PRIu64 " limit events, shared by %u QPs\n",
	       cmd->srq_wr, cmd->srq_limit, (uint64_t)cmd->srq_limit_events, cmd->srq_shared);
}

/**
 * kv_perf_json_srq - a server's SRQ in its --json report
 * @j: the report, inside its object
 * @cmd: the server's argument, as the module returned it
 *
 * "srq" is false when the server did not ask for one; its fields are 0
 * when the test ran without (another test than send_bw).
 */
void kv_perf_json_srq(struct kv_json *j, const struct kverbs_perf *cmd)
{
	if (cmd->role != KVERBS_ROLE_SERVER)
		return;
	kv_json_key(j, "srq");
	kv_json_bool(j, cmd->flags & KVERBS_PERF_F_SRQ);
	kv_json_key(j, "srq_wr");
	kv_json_u64(j, cmd->srq_wr);
	kv_json_key(j, "srq_limit");
	kv_json_u64(j, cmd->srq_limit);
	kv_json_key(j, "srq_limit_events");
	kv_json_u64(j, cmd->srq_limit_events);
	kv_json_key(j, "srq_shared");
	kv_json_u64(j, cmd->srq_shared);
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
