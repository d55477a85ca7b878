// SPDX-License-Identifier: GPL-2.0
/*
 * A perf command run: its options made into KVERBS_IOC_PERF's argument
 * (the only code here that fills the uAPI's struct kverbs_perf), the
 * module asked whether it has what they need, the listener of a server
 * of several clients, and the ioctl itself, once, in a thread per
 * connection for -q and -b, or once per size for -a.  What it returned
 * goes to perf_report.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kverbs.h"
#include "perf.h"

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
			/* What the failure names beside the result: an immediate, a key. */
			agg.imm_expected = qps[i].cmd.imm_expected;
			agg.imm_got = qps[i].cmd.imm_got;
			agg.inv_expected = qps[i].cmd.inv_expected;
			agg.inv_got = qps[i].cmd.inv_got;
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
	kv_perf_report_all_end(o, o->seq || cmd.result.iterations);
	return code;
}

int kv_perf_main(uint32_t test, int argc, char **argv)
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
