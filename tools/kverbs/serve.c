// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs serve: one perf server for every test, and for several clients
 * at once.
 *
 * It listens once (KVERBS_IOC_LISTEN), and then each of its threads runs
 * KVERBS_IOC_PERF as a server with KVERBS_PERF_F_LISTENER and
 * KVERBS_PERF_ANY, again and again: each call takes the next client that
 * connects and runs the test that client's hello asks for.  So -j N
 * threads serve N clients at once, each in its own ioctl and so in its
 * own kernel context, and a client never finds the port closed between
 * two of them.  Each session is reported as it ends, as the test's own
 * server reports it; with --json, one JSON document per line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kverbs.h"

/* Clients served at once by default, and at most (the module's default max_sessions_per_file). */
#define KV_SERVE_JOBS		8
#define KV_SERVE_MAX_JOBS	KV_THREADS_MAX

struct kv_serve {
	int fd;
	struct kv_perf_opts o;
	struct kverbs_perf tmpl;	/* what every call asks but its result */
	char addr[128];
	char where[160];
	uint32_t jobs;		/* threads, each serving one client at a time */
	uint32_t count;		/* sessions to serve, 0 until a signal */
	uint32_t taken;		/* sessions begun, up to @count */
	uint32_t failed;	/* sessions that failed */
	int stop;		/* a signal came, or the listener is gone */
	int fatal;		/* the exit code that stopped it, else 0 */
};

/* Each option's reader: cl->ctx is the struct kv_serve. */

static int kv_serve_opt_port(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	return kv_opt_port(sv->o.cmd, cl->arg, &sv->o.port);
}

static int kv_serve_opt_size(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	if (kv_parse_size(cl->arg, &sv->o.size) || !sv->o.size) {
		kv_usage_error(sv->o.cmd, "invalid size '%s'", cl->arg);
		return -1;
	}
	return 0;
}

static int kv_serve_opt_jobs(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	if (kv_parse_u32(cl->arg, &sv->jobs) || !sv->jobs || sv->jobs > KV_SERVE_MAX_JOBS) {
		kv_usage_error(sv->o.cmd, "invalid jobs '%s' (1 to %u)", cl->arg, KV_SERVE_MAX_JOBS);
		return -1;
	}
	return 0;
}

static int kv_serve_opt_count(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	if (kv_parse_u32(cl->arg, &sv->count) || !sv->count) {
		kv_usage_error(sv->o.cmd, "invalid count '%s' (at least 1)", cl->arg);
		return -1;
	}
	return 0;
}

static int kv_serve_opt_poll(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	sv->o.poll = kv_perf_poll_parse(sv->o.cmd, cl->arg);
	return sv->o.poll ? 0 : -1;
}

static int kv_serve_opt_timeout(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	return kv_opt_timeout(sv->o.cmd, cl->arg, &sv->o.timeout_ns);
}

static int kv_serve_opt_max_duration(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	return kv_opt_max_duration(sv->o.cmd, cl->arg, &sv->o.max_duration_ns);
}

static int kv_serve_opt_max_iters(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	return kv_opt_max_iters(sv->o.cmd, cl->arg, &sv->o.max_iters);
}

/* --srq-wr N, --srq-limit N: each also asks for --srq */
static int kv_serve_opt_srq_wr(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	sv->o.srq = true;
	return kv_opt_srq(sv->o.cmd, "--srq-wr", cl->arg, &sv->o.srq_wr);
}

static int kv_serve_opt_srq_limit(const struct kv_cmdline *cl)
{
	struct kv_serve *sv = cl->ctx;

	sv->o.srq = true;
	return kv_opt_srq(sv->o.cmd, "--srq-limit", cl->arg, &sv->o.srq_limit);
}

static void kv_serve_help_port(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "port (default %u)\n", KVERBS_PERF_DEFAULT_PORT);
}

static void kv_serve_help_jobs(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "clients served at once (default %u, at most %u)\n", KV_SERVE_JOBS,
		KV_SERVE_MAX_JOBS);
}

/* The rows of kv_serve_options[], in the order --help gives them. */
enum {
	KV_SO_PORT, KV_SO_SIZE, KV_SO_JOBS, KV_SO_COUNT, KV_SO_BUSY_POLL, KV_SO_EVENTS,
	KV_SO_POLL, KV_SO_CQ_POOL, KV_SO_DIM, KV_SO_TIMEOUT, KV_SO_MAX_DURATION,
	KV_SO_MAX_ITERS, KV_SO_NO_REVERSE, KV_SO_SRQ, KV_SO_SRQ_WR, KV_SO_SRQ_LIMIT, KV_SO_GBITS,
	KV_SO_JSON, KV_SO_DEBUG, KV_SO_HELP,
};

#define KV_SERVE_FLAG(member)	KV_FLAG(struct kv_perf_opts, member)

/* serve's options: a perf server's, for every test, and -j and -C. */
static const struct kv_opt kv_serve_options[] = {
	[KV_SO_PORT] = {
		.name = "port", .key = 'p', .arg = "PORT", .parse = kv_serve_opt_port,
		.help_fn = kv_serve_help_port,
	},
	[KV_SO_SIZE] = {
		.name = "size", .key = 's', .arg = "SIZE", .parse = kv_serve_opt_size,
		.help = "the largest message accepted (default: the module's\n"
			"                        max_msg_size; k, M, G suffixes)",
	},
	[KV_SO_JOBS] = {
		.name = "jobs", .key = 'j', .arg = "N", .parse = kv_serve_opt_jobs,
		.help_fn = kv_serve_help_jobs,
	},
	[KV_SO_COUNT] = {
		.name = "count", .key = 'C', .arg = "N", .parse = kv_serve_opt_count,
		.help = "serve N clients, then exit (default: until a signal)",
	},
	[KV_SO_BUSY_POLL] = {
		.name = "busy-poll", .flag = KV_SERVE_FLAG(busy_poll),
		.excludes = KV_BIT(KV_SO_EVENTS),
		.help = "busy-poll the CQ for each client, where the data path\n"
			"                        runs through the server (send_bw, send_lat, the\n"
			"                        reverse half of -b), and serve write_lat, which polls\n"
			"                        memory.  Without it the server sleeps until the\n"
			"                        completion interrupt whatever a client asks, and\n"
			"                        refuses write_lat: a client cannot make it spin a CPU.",
	},
	[KV_SO_EVENTS] = {
		.name = "events", .key = 'e', .flag = KV_SERVE_FLAG(events),
		.help = "what the server does without --busy-poll: --poll\n"
			"                        softirq",
	},
	[KV_SO_POLL] = {
		.name = "poll", .arg = "POLICY", .parse = kv_serve_opt_poll,
		.help = "how the server learns of its completions, in every\n"
			"                        session: direct (busy-poll, as --busy-poll but also\n"
			"                        as the server of a WRITE, READ or atomic test),\n"
			"                        softirq, workqueue or unbound (sleep; the handlers\n"
			"                        run in softirq context, on ib_core's bound or\n"
			"                        unbound workqueue); only direct serves write_lat",
	},
	[KV_SO_CQ_POOL] = {
		.name = "cq-pool", .flag = KV_SERVE_FLAG(cq_pool),
		.help = "take each session's CQ from ib_core's shared CQ pool;\n"
			"                        softirq unless --poll names a workqueue (not direct)",
	},
	[KV_SO_DIM] = {
		.name = "dim", .flag = KV_SERVE_FLAG(dim),
		.help = "require adaptive interrupt moderation on the CQs (not\n"
			"                        with direct; rxe and siw have none)",
	},
	[KV_SO_TIMEOUT] = {
		.name = "timeout", .arg = "SEC", .parse = kv_serve_opt_timeout,
		.help = "limit on each step (default: the module's timeout_ms)",
	},
	[KV_SO_MAX_DURATION] = {
		.name = "max-duration", .arg = "SEC", .parse = kv_serve_opt_max_duration,
		.help = "refuse a client that asks for longer, and end any\n"
			"                        session still running SEC and one step timeout on\n"
			"                        (default: the module's perf_max_duration_s; at most it)",
	},
	[KV_SO_MAX_ITERS] = {
		.name = "max-iters", .arg = "N", .parse = kv_serve_opt_max_iters,
		.help = "refuse a client that asks for more iterations\n"
			"                        (default: the module's perf_max_iterations; at most it)",
	},
	[KV_SO_NO_REVERSE] = {
		.name = "no-reverse", .flag = KV_SERVE_FLAG(no_reverse),
		.help = "refuse the reverse direction, the half of a client's -b\n"
			"                        in which the server moves the data",
	},
	[KV_SO_SRQ] = {
		.name = "srq", .alias = "use-srq", .flag = KV_SERVE_FLAG(srq),
		.help = "take send_bw's and send_lat's SENDs in a shared\n"
			"                        receive queue, one per RDMA device for all the\n"
			"                        sessions of this server, as nvmet-rdma does; other\n"
			"                        tests run on their own receives (their report says\n"
			"                        srq_wr 0).  Messages up to -s SIZE, else 64 KiB.\n"
			"                        iWARP: each client gets a window of its receives",
	},
	[KV_SO_SRQ_WR] = {
		.name = "srq-wr", .arg = "N", .parse = kv_serve_opt_srq_wr,
		.help = "--srq: receives the SRQ holds (default "
			KV_STR(KVERBS_PERF_SRQ_DEFAULT_WR) ")",
	},
	[KV_SO_SRQ_LIMIT] = {
		.name = "srq-limit", .arg = "N", .parse = kv_serve_opt_srq_limit,
		.help = "--srq: the SRQ limit armed; each limit event is\n"
			"                        counted and the limit armed again (default: a\n"
			"                        quarter of --srq-wr)",
	},
	[KV_SO_GBITS] = {
		.name = "report_gbits", .flag = KV_SERVE_FLAG(gbits),
		.help = "bandwidth in Gb/s instead of MiB/s",
	},
	[KV_SO_JSON] = {
		.name = "json", .flag = KV_SERVE_FLAG(json),
		.help = "one JSON document per session, one per line (a\n"
			"                        client's -q, -b or -a makes several sessions)",
	},
	[KV_SO_DEBUG] = {
		.name = "debug", .key = 'd', .flag = KV_SERVE_FLAG(debug),
		.help = "print everything the kernel reported",
	},
	[KV_SO_HELP] = { .name = "help", .key = 'h', .help = "this help", .usage = "" },
};

_Static_assert(KV_ARRAY_SIZE(kv_serve_options) <= KV_OPTS_MAX, "too many serve options");

static void kv_serve_usage(FILE *f, const struct kv_cmdline *cl)
{
	kv_cmdline_synopsis(f, cl, NULL, "[ADDR]");
	fprintf(f,
		"\n"
		"Serve every perf test (write_bw, read_bw, send_bw, read_lat, atomic_lat,\n"
		"atomic_bw, write_lat, send_lat) to any number of clients, several at once:\n"
		"each client says what to run.  Listens on ADDR (default: every IPv4\n"
		"address; '::' for IPv6 too, over InfiniBand and RoCE).\n"
		"\n");
	kv_cmdline_help(f, cl);
	fprintf(f,
		"\n"
		"Not wire-compatible with perftest: its clients cannot use this server.\n"
		"\n"
		"Exit status, as for a persistent ping server (ping -s -P): serving until a\n"
		"signal is what was asked, so SIGINT or SIGTERM ends it with 0 when every\n"
		"test it served passed, 1 when one failed; so does the end of -C COUNT.  A\n"
		"signal before the COUNT clients were served exits 130.\n");
}

/* Returns 0, 1 after --help, -1 after a usage error. */
static int kv_serve_parse(int argc, char **argv, struct kv_serve *sv)
{
	struct kv_perf_opts *o = &sv->o;
	struct kv_cmdline cl = {
		.cmd = "serve", .opts = kv_serve_options, .nopts = KV_ARRAY_SIZE(kv_serve_options),
		.ctx = sv, .flags = o, .usage = kv_serve_usage, .help_col = 24,
	};
	int ret;

	o->cmd = "serve";
	o->test = KVERBS_PERF_ANY;
	o->role = KVERBS_ROLE_SERVER;
	o->port = KVERBS_PERF_DEFAULT_PORT;
	o->qps = 1;
	sv->jobs = KV_SERVE_JOBS;
	ret = kv_cmdline_parse(&cl, argc, argv);
	if (ret)
		return ret;
	if (optind < argc)
		o->addr = argv[optind++];
	if (optind < argc) {
		kv_usage_error(o->cmd, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (kv_cmdline_check(&cl, 0))
		return -1;
	if (o->srq_limit > (o->srq_wr ? o->srq_wr : KVERBS_PERF_SRQ_DEFAULT_WR)) {
		kv_usage_error(o->cmd, "--srq-limit %u is above the SRQ's receives, %u", o->srq_limit,
			       o->srq_wr ? o->srq_wr : KVERBS_PERF_SRQ_DEFAULT_WR);
		return -1;
	}
	if (kv_perf_parse_poll(o, NULL))
		return -1;
	/* With -C, no more threads than sessions. */
	if (sv->count && sv->jobs > sv->count)
		sv->jobs = sv->count;
	return 0;
}

/* One thread: serve one client after another, until told to stop. */
static void *kv_serve_worker(void *arg)
{
	struct kv_serve *sv = arg;
	struct kverbs_perf cmd;
	int code;

	while (!__atomic_load_n(&sv->stop, __ATOMIC_ACQUIRE)) {
		if (sv->count && __atomic_fetch_add(&sv->taken, 1, __ATOMIC_RELAXED) >= sv->count)
			break;
		cmd = sv->tmpl;
		code = kv_perf_run(sv->fd, &sv->o, &cmd, sv->addr, sv->where);
		if (code == KV_EXIT_INTERRUPTED)
			break;
		if (code == KV_EXIT_OK)
			continue;
		__atomic_fetch_add(&sv->failed, 1, __ATOMIC_RELAXED);
		/*
		 * A client's failure is the client's; but bad arguments, or a
		 * listener whose device went away (no client, no device in the
		 * result), fail every call after this one too.
		 */
		if (code == KV_EXIT_USAGE ||
		    (cmd.result.error == -ENODEV && !cmd.result.ibdev[0])) {
			__atomic_store_n(&sv->fatal, code, __ATOMIC_RELAXED);
			__atomic_store_n(&sv->stop, 1, __ATOMIC_RELEASE);
			break;
		}
	}
	return NULL;
}

static int kv_serve_listen(struct kv_serve *sv)
{
	struct sockaddr_storage ss;

	if (kv_perf_where(&sv->o, &ss, sv->addr, sizeof(sv->addr), sv->where,
			  sizeof(sv->where)))
		return KV_EXIT_USAGE;
	return kv_perf_listen(sv->fd, &sv->o, &ss, sv->addr, sv->where);
}

int kv_cmd_serve(int argc, char **argv)
{
	struct kv_serve sv = { .fd = -1 };
	struct kverbs_perf *cmd = &sv.tmpl;
	void *args[KV_THREADS_MAX];
	uint64_t features;
	char what[96];
	uint32_t i;
	int ret, code;

	ret = kv_serve_parse(argc, argv, &sv);
	if (ret)
		return ret > 0 ? KV_EXIT_OK : KV_EXIT_USAGE;
	cmd->size = sizeof(*cmd);
	cmd->role = KVERBS_ROLE_SERVER;
	cmd->test = KVERBS_PERF_ANY;
	cmd->flags = KVERBS_PERF_F_LISTENER |
		     (sv.o.busy_poll ? KVERBS_PERF_F_BUSY_POLL : 0);
	cmd->msg_size = sv.o.size;
	cmd->timeout_ns = sv.o.timeout_ns;
	/* An older module busy-polls for any client: see kv_perf_main(). */
	features = KVERBS_FEATURE_LISTEN | KVERBS_FEATURE_PERF_PINGPONG |
		   KVERBS_FEATURE_PERF_BUSY_POLL;
	kv_perf_set_poll(&sv.o, cmd, &features, what, sizeof(what));
	if (kv_perf_server_ceilings(&sv.o, cmd, &features))
		return KV_EXIT_USAGE;
	sv.fd = kv_open_for(features, what);
	if (sv.fd < 0)
		return KV_EXIT_ENV;
	sv.o.ud_foreign = kv_features(sv.fd) & KVERBS_FEATURE_PERF_UD_FOREIGN;
	if (kv_perf_server_srq(sv.fd, &sv.o, cmd)) {
		close(sv.fd);
		return KV_EXIT_ENV;
	}
	code = kv_serve_listen(&sv);
	if (code) {
		close(sv.fd);
		return code;
	}
	if (!sv.o.json)
		fprintf(stderr, "%s serve: listening on %s, %u client%s at once\n", kv_prog,
			sv.where, sv.jobs, sv.jobs == 1 ? "" : "s");

	for (i = 0; i < sv.jobs; i++)
		args[i] = &sv;
	ret = kv_threads_run(sv.jobs, kv_serve_worker, args, &sv.stop);
	close(sv.fd);
	if (ret < 0) {
		fprintf(stderr, "%s serve: cannot start a thread: %s\n", kv_prog, strerror(-ret));
		return KV_EXIT_FAILED;
	}
	if (sv.fatal)
		return sv.fatal;
	/*
	 * As kv_ping_outcome() decides for ping -s -P: without -C a signal is
	 * the end asked for, and the sessions served say how it went; with
	 * -C it came before the count was done.
	 */
	if (ret && sv.count)
		return KV_EXIT_INTERRUPTED;
	return sv.failed ? KV_EXIT_FAILED : KV_EXIT_OK;
}
