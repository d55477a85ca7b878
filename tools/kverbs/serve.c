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
	uint32_t count;		/* sessions to serve, 0 until a signal */
	uint32_t taken;		/* sessions begun, up to @count */
	uint32_t failed;	/* sessions that failed */
	int stop;		/* a signal came, or the listener is gone */
	int fatal;		/* the exit code that stopped it, else 0 */
};

static void serve_usage(FILE *f)
{
	fprintf(f,
		"usage: %s serve [-p PORT] [-s SIZE] [-j JOBS] [-C COUNT] [--busy-poll]\n"
		"       %*s [--poll POLICY] [--cq-pool] [--dim]\n"
		"       %*s [--timeout SEC] [--max-duration SEC] [--max-iters N] [--no-reverse]\n"
		"       %*s [--srq [--srq-wr N] [--srq-limit N]]\n"
		"       %*s [--report_gbits] [--json] [-d] [ADDR]\n"
		"\n"
		"Serve every perf test (write_bw, read_bw, send_bw, read_lat, atomic_lat,\n"
		"atomic_bw, write_lat, send_lat) to any number of clients, several at once:\n"
		"each client says what to run.  Listens on ADDR (default: every IPv4\n"
		"address; '::' for IPv6 too, over InfiniBand and RoCE).\n"
		"\n"
		"  -p, --port PORT       port (default %u)\n"
		"  -s, --size SIZE       the largest message accepted (default: the module's\n"
		"                        max_msg_size; k, M, G suffixes)\n"
		"  -j, --jobs N          clients served at once (default %u, at most %u)\n"
		"  -C, --count N         serve N clients, then exit (default: until a signal)\n"
		"      --busy-poll       busy-poll the CQ for each client, where the data path\n"
		"                        runs through the server (send_bw, send_lat, the\n"
		"                        reverse half of -b), and serve write_lat, which polls\n"
		"                        memory.  Without it the server sleeps until the\n"
		"                        completion interrupt whatever a client asks, and\n"
		"                        refuses write_lat: a client cannot make it spin a CPU.\n"
		"  -e, --events          what the server does without --busy-poll: --poll\n"
		"                        softirq\n"
		"      --poll POLICY     how the server learns of its completions, in every\n"
		"                        session: direct (busy-poll, as --busy-poll but also\n"
		"                        as the server of a WRITE, READ or atomic test),\n"
		"                        softirq, workqueue or unbound (sleep; the handlers\n"
		"                        run in softirq context, on ib_core's bound or\n"
		"                        unbound workqueue); only direct serves write_lat\n"
		"      --cq-pool         take each session's CQ from ib_core's shared CQ pool;\n"
		"                        softirq unless --poll names a workqueue (not direct)\n"
		"      --dim             require adaptive interrupt moderation on the CQs (not\n"
		"                        with direct; rxe and siw have none)\n"
		"      --timeout SEC     limit on each step (default: the module's timeout_ms)\n"
		"      --max-duration SEC\n"
		"                        refuse a client that asks for longer, and end any\n"
		"                        session still running SEC and one step timeout on\n"
		"                        (default: the module's perf_max_duration_s; at most it)\n"
		"      --max-iters N     refuse a client that asks for more iterations\n"
		"                        (default: the module's perf_max_iterations; at most it)\n"
		"      --no-reverse      refuse the reverse direction, the half of a client's -b\n"
		"                        in which the server moves the data\n"
		"      --srq, --use-srq  take send_bw's and send_lat's SENDs in a shared\n"
		"                        receive queue, one per RDMA device for all the\n"
		"                        sessions of this server, as nvmet-rdma does; other\n"
		"                        tests run on their own receives (their report says\n"
		"                        srq_wr 0).  Messages up to -s SIZE, else 64 KiB.\n"
		"                        iWARP: each client gets a window of its receives\n"
		"      --srq-wr N        --srq: receives the SRQ holds (default 256)\n"
		"      --srq-limit N     --srq: the SRQ limit armed; each limit event is\n"
		"                        counted and the limit armed again (default: a\n"
		"                        quarter of --srq-wr)\n"
		"      --report_gbits    bandwidth in Gb/s instead of MiB/s\n"
		"      --json            one JSON document per session, one per line (a\n"
		"                        client's -q, -b or -a makes several sessions)\n"
		"  -d, --debug           print everything the kernel reported\n"
		"  -h, --help            this help\n"
		"\n"
		"Not wire-compatible with perftest: its clients cannot use this server.\n"
		"\n"
		"Exit status, as for a persistent ping server (ping -s -P): serving until a\n"
		"signal is what was asked, so SIGINT or SIGTERM ends it with 0 when every\n"
		"test it served passed, 1 when one failed; so does the end of -C COUNT.  A\n"
		"signal before the COUNT clients were served exits 130.\n",
		kv_prog, (int)strlen(kv_prog), "", (int)strlen(kv_prog), "",
		(int)strlen(kv_prog), "", (int)strlen(kv_prog), "", KVERBS_PERF_DEFAULT_PORT,
		KV_SERVE_JOBS, KV_SERVE_MAX_JOBS);
}

/* Returns 0, 1 after --help, -1 after a usage error. */
static int kv_serve_parse(int argc, char **argv, struct kv_serve *sv,
			  uint32_t *jobs)
{
	enum {
		OPT_GBITS = 256, OPT_JSON, OPT_TIMEOUT, OPT_MAX_DURATION, OPT_MAX_ITERS,
		OPT_NO_REVERSE, OPT_BUSY_POLL, OPT_POLL, OPT_CQ_POOL, OPT_DIM,
		OPT_SRQ, OPT_SRQ_WR, OPT_SRQ_LIMIT,
	};
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "count", required_argument, NULL, 'C' },
		{ "events", no_argument, NULL, 'e' },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-duration", required_argument, NULL, OPT_MAX_DURATION },
		{ "max-iters", required_argument, NULL, OPT_MAX_ITERS },
		{ "no-reverse", no_argument, NULL, OPT_NO_REVERSE },
		{ "busy-poll", no_argument, NULL, OPT_BUSY_POLL },
		{ "poll", required_argument, NULL, OPT_POLL },
		{ "cq-pool", no_argument, NULL, OPT_CQ_POOL },
		{ "dim", no_argument, NULL, OPT_DIM },
		{ "srq", no_argument, NULL, OPT_SRQ },
		{ "use-srq", no_argument, NULL, OPT_SRQ },
		{ "srq-wr", required_argument, NULL, OPT_SRQ_WR },
		{ "srq-limit", required_argument, NULL, OPT_SRQ_LIMIT },
		{ "report_gbits", no_argument, NULL, OPT_GBITS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char optstring[] = ":p:s:j:C:edh";
	struct kv_perf_opts *o = &sv->o;
	char buf[8];
	int opt;

	o->cmd = "serve";
	o->test = KVERBS_PERF_ANY;
	o->role = KVERBS_ROLE_SERVER;
	o->port = KVERBS_PERF_DEFAULT_PORT;
	o->qps = 1;
	*jobs = KV_SERVE_JOBS;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (kv_opt_port(o->cmd, optarg, &o->port))
				return -1;
			break;
		case 's':
			if (kv_parse_size(optarg, &o->size) || !o->size) {
				kv_usage_error(o->cmd, "invalid size '%s'", optarg);
				return -1;
			}
			break;
		case 'j':
			if (kv_parse_u32(optarg, jobs) || !*jobs || *jobs > KV_SERVE_MAX_JOBS) {
				kv_usage_error(o->cmd, "invalid jobs '%s' (1 to %u)", optarg,
					       KV_SERVE_MAX_JOBS);
				return -1;
			}
			break;
		case 'C':
			if (kv_parse_u32(optarg, &sv->count) || !sv->count) {
				kv_usage_error(o->cmd, "invalid count '%s' (at least 1)", optarg);
				return -1;
			}
			break;
		case 'e':
			o->events = true;
			break;
		case OPT_TIMEOUT:
			if (kv_opt_timeout(o->cmd, optarg, &o->timeout_ns))
				return -1;
			break;
		case OPT_MAX_DURATION:
			if (kv_opt_max_duration(o->cmd, optarg, &o->max_duration_ns))
				return -1;
			break;
		case OPT_MAX_ITERS:
			if (kv_opt_max_iters(o->cmd, optarg, &o->max_iters))
				return -1;
			break;
		case OPT_NO_REVERSE:
			o->no_reverse = true;
			break;
		case OPT_BUSY_POLL:
			o->busy_poll = true;
			break;
		case OPT_POLL:
			o->poll = kv_perf_poll_parse(o->cmd, optarg);
			if (!o->poll)
				return -1;
			break;
		case OPT_CQ_POOL:
			o->cq_pool = true;
			break;
		case OPT_DIM:
			o->dim = true;
			break;
		case OPT_SRQ_WR:
			if (kv_opt_srq(o->cmd, "--srq-wr", optarg, &o->srq_wr))
				return -1;
			o->srq = true;
			break;
		case OPT_SRQ_LIMIT:
			if (kv_opt_srq(o->cmd, "--srq-limit", optarg, &o->srq_limit))
				return -1;
			o->srq = true;
			break;
		case OPT_SRQ:
			o->srq = true;
			break;
		case OPT_GBITS:
			o->gbits = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'd':
			o->debug = true;
			break;
		case 'h':
			serve_usage(stdout);
			return 1;
		case ':':
			kv_usage_error(o->cmd, "option '%s' needs a value", argv[optind - 1]);
			return -1;
		default:
			kv_usage_error(o->cmd, "unknown option '%s'",
				       kv_bad_option(argv, optstring, buf, sizeof(buf)));
			return -1;
		}
	}
	if (optind < argc)
		o->addr = argv[optind++];
	if (optind < argc) {
		kv_usage_error(o->cmd, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (o->busy_poll && o->events) {
		kv_usage_error(o->cmd, "--busy-poll and -e exclude each other");
		return -1;
	}
	if (o->srq_limit > (o->srq_wr ? o->srq_wr : KVERBS_PERF_SRQ_DEFAULT_WR)) {
		kv_usage_error(o->cmd, "--srq-limit %u is above the SRQ's receives, %u", o->srq_limit,
			       o->srq_wr ? o->srq_wr : KVERBS_PERF_SRQ_DEFAULT_WR);
		return -1;
	}
	if (kv_perf_parse_poll(o, NULL))
		return -1;
	/* With -C, no more threads than sessions. */
	if (sv->count && *jobs > sv->count)
		*jobs = sv->count;
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
	uint32_t jobs, i;
	int ret, code;

	ret = kv_serve_parse(argc, argv, &sv, &jobs);
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
			sv.where, jobs, jobs == 1 ? "" : "s");

	for (i = 0; i < jobs; i++)
		args[i] = &sv;
	ret = kv_threads_run(jobs, kv_serve_worker, args, &sv.stop);
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
