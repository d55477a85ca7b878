// SPDX-License-Identifier: GPL-2.0
/*
 * What a perf test did, as perftest prints it or as one JSON document, on
 * stdout, and why it failed on stderr; also the words for a server's
 * refusal, which both ends print.  Nothing here calls the module.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kverbs.h"
#include "perf.h"

/* The test that ran, as the kernel says; the one asked for if it never began. */
static const struct kv_perf_test *kv_perf_ran(const struct kv_perf_opts *o,
					      const struct kverbs_perf *cmd)
{
	return kv_perf_test(cmd->result.test ? cmd->result.test : o->test);
}

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

/* perftest's units: MiB/s, or Gb/s with --report_gbits. */
static double kv_perf_bw(const struct kv_perf_opts *o, uint64_t bps)
{
	return o->gbits ? bps * 8 / 1e9 : bps / 1048576.0;
}

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

/* The header and column titles once, then a row per size (-a), as perftest. */
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
	/* With -a, kv_perf_report_all_end() closes the table. */
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

/* Reports of servers running in threads (kverbs serve) are not mixed. */
static pthread_mutex_t kv_perf_print_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Print a test's outcome as text or JSON on stdout, and what failed on
 * stderr.  Returns the exit code that says how it went.
 */
int kv_perf_report(const struct kv_perf_opts *o, const struct kverbs_perf *cmd,
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
 * kv_perf_report_all_end - close the report of -a, a test per size
 * @o: the command line
 * @rows: whether a size's row went into the table
 *
 * The JSON array, in the file of --out_json too, or the table's last line.
 */
void kv_perf_report_all_end(const struct kv_perf_opts *o, bool rows)
{
	if (o->json_out)
		fprintf(o->json_out, "]\n");
	if (o->json)
		printf("]\n");
	else if (rows)
		printf("%s", kv_perf_line);
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
