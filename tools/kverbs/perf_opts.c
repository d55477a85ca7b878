// SPDX-License-Identifier: GPL-2.0
/*
 * The perf commands' options: kv_perf_options[], a row per option, which
 * the command line is read by (kv_perf_parse()) and --help made of; the
 * checks of values against each other that no row can say; and perftest's
 * options, taken or refused with a reason.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kverbs.h"
#include "perf.h"

/* Where perftest's --out_json writes when no --out_json_file names a file. */
#define KV_PERFTEST_JSON_FILE	"perftest_out.json"

/**
 * kv_perftest_only - refuse a perftest option that has no place here
 * @cmd: the command, for the message
 * @opt: the option as perftest spells it: "-d", "-i", "-x" or
 *	"--run_infinitely"
 *
 * perftest opens an RDMA device, port and GID of the user's choosing and
 * connects its QPs itself; kverbs connects with rdma_cm, which takes all
 * three from the address.  Say so rather than "unknown option".
 *
 * Return: -1, after the usage error was printed.
 */
static int kv_perftest_only(const char *cmd, const char *opt)
{
	if (!strcmp(opt, "--run_infinitely")) {
		kv_usage_error(cmd, "--run_infinitely is perftest's; kverbs reports once, at the end: use -D SECONDS");
		return -1;
	}
	kv_usage_error(cmd, "%s %s is perftest's; kverbs does not need it: rdma_cm picks the RDMA device, port and GID that reach the address%s",
		       opt, !strcmp(opt, "-d") ? "DEVICE" : !strcmp(opt, "-i") ? "PORT" : "GID_INDEX",
		       !strcmp(opt, "-d") ? " (here -d is --debug, and takes no value)" : "");
	return -1;
}

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
