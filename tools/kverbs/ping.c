// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs ping: the rping-compatible ping, run by the kernel.
 *
 * The options are rping's.  The whole ping is one KVERBS_IOC_PING call;
 * with -v the kernel also stores each iteration's payload in a ring in
 * our memory, which a second thread prints while the call runs.
 *
 * A persistent server (-P) serves its clients at once, as rping -P does:
 * it listens once (KVERBS_IOC_LISTEN) and -j threads each run a server
 * call with KVERBS_PING_F_LISTENER, one client per call, again and
 * again; what they report is summed up at the end.  Each session runs in
 * its own ioctl, so it keeps its own kernel context and counts against
 * the module's limits as a session of its own.
 *
 * Between two kverbs ends the server's go-aheads invalidate the client's
 * keys (IB_WR_SEND_WITH_INV), as the two ends agree when they connect,
 * unless either has --no-inv; the report counts the keys.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kverbs.h"

/* Slots in the payload ring; the printer looks at it every 10 ms. */
#define KV_LOG_SLOTS		256
/* At most this much ring in all. */
#define KV_LOG_MAX_BYTES	(16u << 20)
/* A server does not know the size of the pings it will get. */
#define KV_LOG_SERVER_SLOT	65536
/* With --json the payloads go into the document; keep it bounded. */
#define KV_LOG_JSON_MAX		10000
/* Clients a persistent server serves at once by default, as kverbs serve. */
#define KV_PING_JOBS		8

struct kv_ping_opts {
	int role;
	const char *addr;
	const char *src;
	uint16_t port;
	uint32_t count;
	uint32_t size;
	bool size_set;
	bool persistent;
	uint32_t jobs;
	bool verbose;
	bool validate;
	bool debug;
	bool json;
	bool no_inv;
	bool ud;
	bool count_set;
	uint64_t timeout_ns;
};

/* udaddy's default count, for --ud without -C. */
#define KV_PING_UD_COUNT	10

struct kv_log {
	char *buf;
	uint32_t slots;
	uint32_t slot_size;
	_Atomic uint64_t seq;		/* written by the kernel */
	uint64_t printed;
	uint64_t dropped;
	bool server;
	bool json;
	char **lines;			/* --json: kept for the document */
	size_t nlines;
	atomic_bool stop;
	pthread_t thread;
};

/* Each option's reader: cl->ctx is the struct kv_ping_opts. */

/* -s or -c; the other one's already given excludes it. */
static int kv_ping_opt_role(const struct kv_cmdline *cl)
{
	struct kv_ping_opts *o = cl->ctx;
	int role = cl->opt->key == 's' ? KVERBS_ROLE_SERVER : KVERBS_ROLE_CLIENT;

	if (o->role && o->role != role) {
		kv_usage_error("ping", "-s and -c exclude each other");
		return -1;
	}
	o->role = role;
	return 0;
}

static int kv_ping_opt_addr(const struct kv_cmdline *cl)
{
	struct kv_ping_opts *o = cl->ctx;

	o->addr = cl->arg;
	return 0;
}

static int kv_ping_opt_src(const struct kv_cmdline *cl)
{
	struct kv_ping_opts *o = cl->ctx;

	o->src = cl->arg;
	return 0;
}

static int kv_ping_opt_port(const struct kv_cmdline *cl)
{
	struct kv_ping_opts *o = cl->ctx;

	return kv_opt_port("ping", cl->arg, &o->port);
}

static int kv_ping_opt_count(const struct kv_cmdline *cl)
{
	struct kv_ping_opts *o = cl->ctx;

	if (kv_parse_u32(cl->arg, &o->count)) {
		kv_usage_error("ping", "invalid count '%s'", cl->arg);
		return -1;
	}
	o->count_set = true;
	return 0;
}

static int kv_ping_opt_size(const struct kv_cmdline *cl)
{
	struct kv_ping_opts *o = cl->ctx;

	if (kv_parse_size(cl->arg, &o->size)) {
		kv_usage_error("ping", "invalid size '%s'", cl->arg);
		return -1;
	}
	o->size_set = true;
	return 0;
}

static int kv_ping_opt_jobs(const struct kv_cmdline *cl)
{
	struct kv_ping_opts *o = cl->ctx;

	if (kv_parse_u32(cl->arg, &o->jobs) || !o->jobs || o->jobs > KV_THREADS_MAX) {
		kv_usage_error("ping", "invalid jobs '%s' (1 to %u)", cl->arg, KV_THREADS_MAX);
		return -1;
	}
	return 0;
}

static int kv_ping_opt_timeout(const struct kv_cmdline *cl)
{
	struct kv_ping_opts *o = cl->ctx;

	return kv_opt_timeout("ping", cl->arg, &o->timeout_ns);
}

static void kv_ping_help_port(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "port (default %u)\n", KVERBS_PING_DEFAULT_PORT);
}

static void kv_ping_help_size(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "client: bytes per ping (default 64, at least %u;\n"
		"                        k, M, G suffixes); server: the largest accepted\n"
		"                        (default: the module's max_msg_size)\n",
		KVERBS_PING_MIN_SIZE);
}

static void kv_ping_help_ud(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt)
{
	kv_cmdline_head(f, cl, opt, NULL);
	fprintf(f, "ping over Unreliable Datagrams, as rdma-core's udaddy:\n"
		"                        the client sends COUNT messages of SIZE bytes, the\n"
		"                        server answers each; either end interoperates with\n"
		"                        udaddy.  COUNT 1 to %u on both ends (default %u);\n"
		"                        SIZE at most the path MTU (server default: the\n"
		"                        MTU); -V only between two kverbs ends (udaddy's data\n"
		"                        is no pattern); no -P, no --no-inv; not over iWARP\n",
		KVERBS_PING_UD_MAX_COUNT, KV_PING_UD_COUNT);
}

#define KV_PING_FLAG(member)	KV_FLAG(struct kv_ping_opts, member)

/* ping's options, rping's where they overlap, in the order --help gives them. */
static const struct kv_opt kv_ping_options[] = {
	{
		.name = "server", .key = 's', .parse = kv_ping_opt_role,
		.help = "serve; one client, or one after another with -P",
	},
	{ .name = "client", .key = 'c', .parse = kv_ping_opt_role, .help = "ping a server" },
	{
		.name = "addr", .key = 'a', .arg = "ADDR", .parse = kv_ping_opt_addr,
		.help = "server: address to listen on (default: any IPv4;\n"
			"                        -a :: for any IPv6); client: the server's address",
	},
	{
		.name = "src-addr", .key = 'I', .arg = "ADDR", .parse = kv_ping_opt_src,
		.role = KVERBS_ROLE_CLIENT,
		.help = "client: local address to use",
	},
	{
		.name = "port", .key = 'p', .arg = "PORT", .parse = kv_ping_opt_port,
		.help_fn = kv_ping_help_port,
	},
	{
		.name = "count", .key = 'C', .arg = "COUNT", .parse = kv_ping_opt_count,
		.help = "iterations; 0 or none: until interrupted (client),\n"
			"                        as many as the client sends (server)",
	},
	{
		.name = "size", .key = 'S', .arg = "SIZE", .parse = kv_ping_opt_size,
		.help_fn = kv_ping_help_size,
	},
	{
		.name = "persistent", .key = 'P', .flag = KV_PING_FLAG(persistent),
		.role = KVERBS_ROLE_SERVER,
		.help = "server: keep serving clients until interrupted,\n"
			"                        several at once, as rping -P does",
	},
	{
		.name = "jobs", .key = 'j', .arg = "N", .parse = kv_ping_opt_jobs,
		.help = "with -P: clients served at once (default " KV_STR(KV_PING_JOBS) ", at\n"
			"                        most " KV_STR(KV_THREADS_MAX) ")",
	},
	{
		.name = "verbose", .key = 'v', .flag = KV_PING_FLAG(verbose),
		.help = "print the ping data, as rping does",
	},
	{
		.name = "validate", .key = 'V', .flag = KV_PING_FLAG(validate),
		.help = "check every byte received against the pattern",
	},
	{
		.name = "debug", .key = 'd', .flag = KV_PING_FLAG(debug),
		.help = "print everything the kernel reported",
	},
	{
		.name = "no-inv", .flag = KV_PING_FLAG(no_inv),
		.help = "client: do not offer remote invalidation; server: do\n"
			"                        not agree to it (the client revokes its keys itself,\n"
			"                        as with rping)",
	},
	{ .name = "ud", .flag = KV_PING_FLAG(ud), .help_fn = kv_ping_help_ud },
	{
		.name = "timeout", .arg = "SEC", .parse = kv_ping_opt_timeout,
		.help = "limit on each step (default: the module's timeout_ms)",
	},
	{ .name = "json", .flag = KV_PING_FLAG(json), .help = "one JSON document instead of text" },
	{ .name = "help", .key = 'h', .help = "this help" },
};

_Static_assert(KV_ARRAY_SIZE(kv_ping_options) <= KV_OPTS_MAX, "too many ping options");

/* The synopsis is one line per role, written out; the options come from the table. */
static void kv_ping_usage(FILE *f, const struct kv_cmdline *cl)
{
	fprintf(f,
		"usage: %s ping -s [-a ADDR] [-p PORT] [-C COUNT] [-S SIZE] [-P] [-v] [-V] [-d] [--no-inv] [--timeout SEC] [--json]\n"
		"       %s ping -c -a ADDR [-p PORT] [-C COUNT] [-S SIZE] [-I SRCADDR] [-v] [-V] [-d] [--no-inv] [--timeout SEC] [--json]\n"
		"       %s ping --ud -s|-c [-a ADDR] [-p PORT] [-C COUNT] [-S SIZE] [-I SRCADDR] [-v] [-V] [-d] [--timeout SEC] [--json]\n"
		"\n"
		"Ping as rdma-core's rping does, with the kernel's verbs: per iteration the\n"
		"client advertises a buffer that the server RDMA READs, then one that the\n"
		"server RDMA WRITEs back.  Either end interoperates with rping.  Between two\n"
		"kverbs ends the server's answers invalidate the client's keys (SEND with\n"
		"invalidate), so the client revokes none itself.\n"
		"\n",
		kv_prog, kv_prog, kv_prog);
	kv_cmdline_help(f, cl);
}

static int kv_ping_parse(int argc, char **argv, struct kv_ping_opts *o)
{
	struct kv_cmdline cl = {
		.cmd = "ping", .opts = kv_ping_options, .nopts = KV_ARRAY_SIZE(kv_ping_options),
		.ctx = o, .flags = o, .usage = kv_ping_usage, .help_col = 24,
	};
	int ret;

	memset(o, 0, sizeof(*o));
	o->port = KVERBS_PING_DEFAULT_PORT;
	o->size = 64;
	ret = kv_cmdline_parse(&cl, argc, argv);
	if (ret)
		return ret;
	if (optind < argc) {
		kv_usage_error("ping", "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (!o->role) {
		kv_usage_error("ping", "say -s (server) or -c (client)");
		return -1;
	}
	if (o->jobs && !o->persistent) {
		kv_usage_error("ping", "-j is for a persistent server (-s -P)");
		return -1;
	}
	if (!o->jobs)
		o->jobs = KV_PING_JOBS;
	if (o->ud) {
		if (o->persistent || o->no_inv) {
			kv_usage_error("ping", "--ud takes no %s: a datagram ping serves one client and invalidates nothing",
				       o->persistent ? "-P" : "--no-inv");
			return -1;
		}
		if (!o->count_set)
			o->count = KV_PING_UD_COUNT;
		if (!o->count || o->count > KVERBS_PING_UD_MAX_COUNT) {
			kv_usage_error("ping", "invalid count %u with --ud (1 to %u: every message is in flight at once)",
				       o->count, KVERBS_PING_UD_MAX_COUNT);
			return -1;
		}
	}
	if (o->role == KVERBS_ROLE_CLIENT && !o->addr) {
		kv_usage_error("ping", "the client needs the server's address: -a ADDR");
		return -1;
	}
	/* -P is the server's, -I the client's. */
	if (kv_cmdline_check(&cl, o->role))
		return -1;
	if (o->role == KVERBS_ROLE_CLIENT) {
		if (o->size < KVERBS_PING_MIN_SIZE) {
			kv_usage_error("ping", "invalid size %u (at least %u, as rping)",
				       o->size, KVERBS_PING_MIN_SIZE);
			return -1;
		}
	} else {
		if (o->size_set && o->size < KVERBS_PING_MIN_SIZE) {
			kv_usage_error("ping", "invalid size %u (at least %u, as rping)",
				       o->size, KVERBS_PING_MIN_SIZE);
			return -1;
		}
		if (!o->size_set)
			o->size = 0;
	}
	return 0;
}

/* Print (or keep, for JSON) what the kernel stored since last time. */
static void kv_log_drain(struct kv_log *l)
{
	uint64_t seq = atomic_load_explicit(&l->seq, memory_order_acquire);
	char *line = malloc(l->slot_size + 1);

	if (!line)
		return;
	if (seq - l->printed > l->slots) {
		l->dropped += seq - l->printed - l->slots;
		l->printed = seq - l->slots;
	}
	for (; l->printed < seq; l->printed++) {
		const char *slot = l->buf + (l->printed % l->slots) * (size_t)l->slot_size;
		size_t n = strnlen(slot, l->slot_size);

		memcpy(line, slot, n);
		line[n] = '\0';
		/* Overwritten while we copied: the kernel went round the ring. */
		if (atomic_load_explicit(&l->seq, memory_order_acquire) -
		    l->printed >= l->slots) {
			l->dropped++;
			continue;
		}
		if (l->json) {
			if (l->nlines < KV_LOG_JSON_MAX) {
				l->lines[l->nlines] = strdup(line);
				if (l->lines[l->nlines])
					l->nlines++;
			} else {
				l->dropped++;
			}
		} else {
			printf("%sping data: %s\n", l->server ? "server " : "", line);
		}
	}
	if (!l->json)
		fflush(stdout);
	free(line);
}

static void *kv_log_thread(void *arg)
{
	struct kv_log *l = arg;
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };

	while (!atomic_load(&l->stop)) {
		kv_log_drain(l);
		nanosleep(&tick, NULL);
	}
	return NULL;
}

/* A ring of at most @max_bytes, which the kernel pins while the call runs. */
static int kv_log_start(struct kv_log *l, const struct kv_ping_opts *o,
			struct kverbs_ping *cmd, uint64_t max_bytes)
{
	sigset_t all, old;
	int ret;

	memset(l, 0, sizeof(*l));
	l->server = o->role == KVERBS_ROLE_SERVER;
	l->json = o->json;
	l->slot_size = o->size ? o->size : KV_LOG_SERVER_SLOT;
	if (l->server && l->slot_size > KV_LOG_SERVER_SLOT)
		l->slot_size = KV_LOG_SERVER_SLOT;
	l->slots = KV_LOG_SLOTS;
	while (l->slots > 2 && (uint64_t)l->slots * l->slot_size > max_bytes)
		l->slots /= 2;
	l->buf = calloc(l->slots, l->slot_size);
	if (l->json)
		l->lines = calloc(KV_LOG_JSON_MAX, sizeof(*l->lines));
	if (!l->buf || (l->json && !l->lines))
		return -ENOMEM;

	cmd->log.buf = (uintptr_t)l->buf;
	cmd->log.seq = (uintptr_t)&l->seq;
	cmd->log.slots = l->slots;
	cmd->log.slot_size = l->slot_size;

	/* Signals are for the thread in the ioctl: that is what they stop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&l->thread, NULL, kv_log_thread, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -ret;
}

static void kv_log_stop(struct kv_log *l)
{
	atomic_store(&l->stop, true);
	pthread_join(l->thread, NULL);
	kv_log_drain(l);
	if (l->dropped && !l->json)
		fprintf(stderr, "%s ping: %" PRIu64 " iterations' data not shown: printing fell behind\n",
			kv_prog, l->dropped);
}

static void kv_log_free(struct kv_log *l)
{
	size_t i;

	for (i = 0; i < l->nlines; i++)
		free(l->lines[i]);
	free(l->lines);
	free(l->buf);
}

/**
 * struct kv_pserve - a persistent server's threads and what they report
 * @fd: /dev/kverbs, listening
 * @o: the options
 * @tmpl: the call each thread makes, with KVERBS_PING_F_LISTENER
 * @lock: protects what follows
 * @sum: every session's numbers added up; the failure fields are those
 *	of the last client that failed, or of the call that stopped them all
 * @inv_remote: every session's &kverbs_ping.inv_remote added up
 * @inv_sent: ... and .inv_sent
 * @iter_ns: the sum of every iteration's time, for the mean
 * @first_ns: when the earliest session's first iteration began
 *	(CLOCK_MONOTONIC), 0 before any
 * @last_ns: when the latest session ended
 * @lines: --json -v: the payloads of every session, for the document
 * @stop: a signal came, or a call failed for every call after it
 * @fatal: the errno of that call, 0 if a signal stopped them
 */
struct kv_pserve {
	int fd;
	const struct kv_ping_opts *o;
	const struct kverbs_ping *tmpl;
	pthread_mutex_t lock;
	struct kverbs_ping_result sum;
	uint64_t inv_remote;
	uint64_t inv_sent;
	uint64_t iter_ns;
	uint64_t first_ns;
	uint64_t last_ns;
	struct kv_log *lines;
	int stop;
	int fatal;
};

static uint64_t kv_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void kv_ping_copy_failure(struct kverbs_ping_result *to,
				 const struct kverbs_ping_result *from)
{
	to->valid = from->valid;
	to->failed_step = from->failed_step;
	to->wc_status = from->wc_status;
	to->vendor_err = from->vendor_err;
	to->cm_event = from->cm_event;
	to->cm_status = from->cm_status;
	to->mismatch_offset = from->mismatch_offset;
	to->error = from->error;
}

/* Add one session's report to the server's. */
static void kv_pserve_add(struct kv_pserve *ps, const struct kverbs_ping *cmd,
			  struct kv_log *log)
{
	const struct kverbs_ping_result *r = &cmd->result;
	struct kverbs_ping_result *s = &ps->sum;
	uint64_t now = kv_mono_ns();
	size_t i;

	pthread_mutex_lock(&ps->lock);
	if (r->iterations) {
		if (!s->iterations || r->iter_ns_min < s->iter_ns_min)
			s->iter_ns_min = r->iter_ns_min;
		if (r->iter_ns_max > s->iter_ns_max)
			s->iter_ns_max = r->iter_ns_max;
		ps->iter_ns += r->iter_ns_avg * r->iterations;
		if (!ps->first_ns || now - r->elapsed_ns < ps->first_ns)
			ps->first_ns = now - r->elapsed_ns;
		ps->last_ns = now;
	}
	s->iterations += r->iterations;
	s->bytes_read += r->bytes_read;
	s->bytes_written += r->bytes_written;
	s->clients += r->clients;
	s->clients_failed += r->clients_failed;
	ps->inv_remote += cmd->inv_remote;
	ps->inv_sent += cmd->inv_sent;
	s->iter_ns_avg = s->iterations ? ps->iter_ns / s->iterations : 0;
	s->elapsed_ns = ps->last_ns - ps->first_ns;
	if (r->clients_failed)
		kv_ping_copy_failure(s, r);
	if (log && ps->lines) {
		for (i = 0; i < log->nlines; i++) {
			if (ps->lines->nlines < KV_LOG_JSON_MAX) {
				ps->lines->lines[ps->lines->nlines++] = log->lines[i];
			} else {
				free(log->lines[i]);
				ps->lines->dropped++;
			}
		}
		ps->lines->dropped += log->dropped;
		log->nlines = 0;
	}
	pthread_mutex_unlock(&ps->lock);
}

/* One thread: serve one client after another, until told to stop. */
static void *kv_pserve_worker(void *arg)
{
	struct kv_pserve *ps = arg;
	const struct kv_ping_opts *o = ps->o;
	uint64_t ring = KV_LOG_MAX_BYTES / o->jobs;
	struct kverbs_ping cmd;
	struct kv_log log;
	int err;

	while (!__atomic_load_n(&ps->stop, __ATOMIC_ACQUIRE)) {
		cmd = *ps->tmpl;
		if (o->verbose && kv_log_start(&log, o, &cmd, ring)) {
			kv_log_free(&log);
			err = ENOMEM;
			memset(&cmd.result, 0, sizeof(cmd.result));
			cmd.result.error = -err;
			cmd.result.failed_step = KVERBS_STEP_SETUP;
		} else {
			err = -kv_ioctl(ps->fd, KVERBS_IOC_PING, &cmd);
			if (o->verbose) {
				kv_log_stop(&log);
				kv_pserve_add(ps, &cmd, &log);
				kv_log_free(&log);
			} else {
				kv_pserve_add(ps, &cmd, NULL);
			}
		}
		if (err == EINTR)
			break;
		/*
		 * A call that got no client (bad arguments, no memory, a
		 * listener whose device went away) fails every call after it
		 * the same way: stop them all and say why.
		 */
		if (err && !cmd.result.clients) {
			pthread_mutex_lock(&ps->lock);
			if (!ps->fatal) {
				ps->fatal = err;
				kv_ping_copy_failure(&ps->sum, &cmd.result);
			}
			pthread_mutex_unlock(&ps->lock);
			__atomic_store_n(&ps->stop, 1, __ATOMIC_RELEASE);
			break;
		}
	}
	return NULL;
}

/*
 * -s -P: listen once, serve -j clients at a time until a signal.  Fills
 * @cmd->result with what every session did, @lines with their payloads
 * for --json -v, and returns the errno to report as the call's: EINTR
 * after a signal, else what stopped the server (a failure to listen is
 * reported as the server's own would be, at KVERBS_STEP_LISTEN).
 */
static int kv_ping_serve_many(int fd, const struct kv_ping_opts *o,
			      struct kverbs_ping *cmd, struct kv_log *lines)
{
	struct kverbs_listen listen = { .size = sizeof(listen) };
	struct kv_pserve ps = { .fd = fd, .o = o, .lines = lines };
	struct kverbs_ping tmpl = *cmd;
	void *args[KV_THREADS_MAX];
	uint32_t i;
	int ret;

	memcpy(&listen.addr, &cmd->addr, sizeof(listen.addr));
	ret = -kv_ioctl(fd, KVERBS_IOC_LISTEN, &listen);
	if (ret) {
		cmd->result.error = -ret;
		cmd->result.failed_step = KVERBS_STEP_LISTEN;
		return ret;
	}
	tmpl.flags = (tmpl.flags & ~KVERBS_PING_F_PERSISTENT) | KVERBS_PING_F_LISTENER;
	memset(&tmpl.addr, 0, sizeof(tmpl.addr));
	ps.tmpl = &tmpl;
	pthread_mutex_init(&ps.lock, NULL);
	for (i = 0; i < o->jobs; i++)
		args[i] = &ps;
	ret = kv_threads_run(o->jobs, kv_pserve_worker, args, &ps.stop);
	pthread_mutex_destroy(&ps.lock);
	cmd->result = ps.sum;
	cmd->inv_remote = ps.inv_remote;
	cmd->inv_sent = ps.inv_sent;
	if (ret < 0)
		return -ret;
	return ps.fatal ? ps.fatal : EINTR;
}

/**
 * kv_ping_print_inv - the text report's remote invalidation clause
 * @f: where
 * @cmd: the call, its counts filled in
 * @known: the module reports them (KVERBS_FEATURE_PING_INV); an older
 *	one does not, and they are unknown, not 0
 */
void kv_ping_print_inv(FILE *f, const struct kverbs_ping *cmd, bool known)
{
	if (known)
		fprintf(f, "; remote invalidation: %" PRIu64 " of our keys by the peer, %" PRIu64 " SENDs with invalidate",
			(uint64_t)cmd->inv_remote, (uint64_t)cmd->inv_sent);
	else
		fprintf(f, "; remote invalidation: unknown, the kverbs module loaded is older than this tool");
}

/* The same for --json: null where the module does not say. */
void kv_ping_json_inv(struct kv_json *j, const struct kverbs_ping *cmd, bool known)
{
	kv_json_key(j, "inv_remote");
	if (known)
		kv_json_u64(j, cmd->inv_remote);
	else
		kv_json_null(j);
	kv_json_key(j, "inv_sent");
	if (known)
		kv_json_u64(j, cmd->inv_sent);
	else
		kv_json_null(j);
}

static double kv_ms(uint64_t ns)
{
	return ns / 1e6;
}

/* @inv: the module reports the invalidation counts (kv_ping_print_inv()). */
static void kv_ping_print_text(const struct kv_ping_opts *o,
			       const struct kverbs_ping *cmd, const char *where,
			       bool inv)
{
	const struct kverbs_ping_result *r = &cmd->result;

	if (o->role == KVERBS_ROLE_SERVER)
		printf("served %u client%s on %s (%u failed): ", r->clients,
		       r->clients == 1 ? "" : "s", where, r->clients_failed);
	else
		printf("ping %s: ", where);
	printf("%" PRIu64 " iterations, %" PRIu64 " bytes read and %" PRIu64 " written in %.3f ms",
	       (uint64_t)r->iterations, (uint64_t)r->bytes_read,
	       (uint64_t)r->bytes_written, kv_ms(r->elapsed_ns));
	if (r->iterations)
		printf("; per iteration min/avg/max %.3f/%.3f/%.3f ms",
		       kv_ms(r->iter_ns_min), kv_ms(r->iter_ns_avg),
		       kv_ms(r->iter_ns_max));
	if (o->validate && r->iterations)
		printf("; data validated");
	if (o->ud)
		printf("; UD, path MTU %u, peer QPN 0x%x, Q_Key 0x%x", cmd->path_mtu,
		       cmd->remote_qpn, cmd->remote_qkey);
	else
		kv_ping_print_inv(stdout, cmd, inv);
	printf("\n");
}

static void kv_ping_print_json(const struct kv_ping_opts *o,
			       const struct kverbs_ping *cmd, const char *addr,
			       int err, const char *status, const char *message,
			       const struct kv_span *span, const struct kv_log *log,
			       bool inv)
{
	const struct kverbs_ping_result *r = &cmd->result;
	struct kv_json j;
	size_t i;

	kv_json_init(&j, stdout);
	kv_json_begin_object(&j);
	kv_json_key(&j, "role");
	kv_json_string(&j, o->role == KVERBS_ROLE_SERVER ? "server" : "client");
	kv_json_key(&j, "address");
	kv_json_string(&j, addr);
	kv_json_key(&j, "port");
	kv_json_u64(&j, o->port);
	kv_json_key(&j, "size");
	kv_json_u64(&j, o->size);
	kv_json_key(&j, "count");
	kv_json_u64(&j, o->count);
	kv_json_key(&j, "validate");
	kv_json_bool(&j, o->validate);
	kv_json_key(&j, "no_inv");
	kv_json_bool(&j, o->no_inv);
	kv_json_key(&j, "transport");
	kv_json_string(&j, o->ud ? "ud" : "rc");
	if (o->ud) {
		kv_json_key(&j, "path_mtu");
		kv_json_u64(&j, cmd->path_mtu);
		kv_json_key(&j, "remote_qpn");
		kv_json_u64(&j, cmd->remote_qpn);
		kv_json_key(&j, "remote_qkey");
		kv_json_u64(&j, cmd->remote_qkey);
	}
	kv_json_key(&j, "status");
	kv_json_string(&j, status);
	kv_json_key(&j, "iterations");
	kv_json_u64(&j, r->iterations);
	kv_json_key(&j, "bytes_read");
	kv_json_u64(&j, r->bytes_read);
	kv_json_key(&j, "bytes_written");
	kv_json_u64(&j, r->bytes_written);
	kv_json_key(&j, "elapsed_ns");
	kv_json_u64(&j, r->elapsed_ns);
	kv_json_span(&j, span);
	kv_ping_json_inv(&j, cmd, inv);
	kv_json_key(&j, "iter_ns");
	kv_json_begin_object(&j);
	kv_json_key(&j, "min");
	kv_json_u64(&j, r->iter_ns_min);
	kv_json_key(&j, "avg");
	kv_json_u64(&j, r->iter_ns_avg);
	kv_json_key(&j, "max");
	kv_json_u64(&j, r->iter_ns_max);
	kv_json_end_object(&j);
	if (o->role == KVERBS_ROLE_SERVER) {
		kv_json_key(&j, "clients");
		kv_json_u64(&j, r->clients);
		kv_json_key(&j, "clients_failed");
		kv_json_u64(&j, r->clients_failed);
	}
	if (kv_json_failure(&j, &KV_FAILURE(r, err, message)))
		kv_json_end_object(&j);
	if (log) {
		kv_json_key(&j, "data");
		kv_json_begin_array(&j);
		for (i = 0; i < log->nlines; i++)
			kv_json_string(&j, log->lines[i]);
		kv_json_end_array(&j);
		kv_json_key(&j, "data_not_shown");
		kv_json_u64(&j, log->dropped);
	}
	kv_json_end_object(&j);
	kv_json_end(&j);
}

static void kv_ping_print_debug(const struct kverbs_ping *cmd, int err)
{
	const struct kverbs_ping_result *r = &cmd->result;

	fprintf(stderr,
		"ioctl: %d (%s)\n"
		"iterations %" PRIu64 " bytes_read %" PRIu64 " bytes_written %" PRIu64 "\n"
		"elapsed_ns %" PRIu64 " iter_ns min %" PRIu64 " avg %" PRIu64 " max %" PRIu64 "\n"
		"clients %u clients_failed %u valid 0x%x failed_step %u (%s)\n"
		"wc_status %u (%s) vendor_err 0x%x cm_event %u (%s) cm_status %d mismatch_offset %u\n"
		"inv_remote %" PRIu64 " inv_sent %" PRIu64 "\n"
		"path_mtu %u remote_qpn 0x%x remote_qkey 0x%x\n",
		-err, kv_errno_name(err), (uint64_t)r->iterations,
		(uint64_t)r->bytes_read, (uint64_t)r->bytes_written,
		(uint64_t)r->elapsed_ns, (uint64_t)r->iter_ns_min,
		(uint64_t)r->iter_ns_avg, (uint64_t)r->iter_ns_max, r->clients,
		r->clients_failed, r->valid, r->failed_step,
		kv_step_str(r->failed_step), r->wc_status,
		kv_wc_status_str(r->wc_status), r->vendor_err, r->cm_event,
		kv_cm_event_str(r->cm_event), r->cm_status, r->mismatch_offset,
		(uint64_t)cmd->inv_remote, (uint64_t)cmd->inv_sent,
		cmd->path_mtu, cmd->remote_qpn, cmd->remote_qkey);
}

/* Map the call's outcome to an exit code and a status word. */
static int kv_ping_outcome(const struct kv_ping_opts *o,
			   const struct kverbs_ping *cmd, int err,
			   const char **status)
{
	const struct kverbs_ping_result *r = &cmd->result;
	bool server = o->role == KVERBS_ROLE_SERVER;

	if (!err) {
		*status = "ok";
		return KV_EXIT_OK;
	}
	if (err == EINTR) {
		/*
		 * Running until interrupted is what was asked for, if the
		 * signal came between iterations rather than while connecting.
		 */
		if ((server && o->persistent) ||
		    (!server && !o->count && !r->failed_step)) {
			*status = r->clients_failed ? "failed" : "ok";
			return r->clients_failed ? KV_EXIT_FAILED : KV_EXIT_OK;
		}
		*status = "interrupted";
		return KV_EXIT_INTERRUPTED;
	}
	*status = "failed";
	return kv_args_refused(err, r->failed_step) ? KV_EXIT_USAGE : KV_EXIT_FAILED;
}

int kv_cmd_ping(int argc, char **argv)
{
	struct kverbs_ping cmd = { .size = sizeof(cmd) };
	struct kv_ping_opts o;
	struct kv_log log;
	char addr[128], where[160], msg[512];
	const char *status, *message = NULL;
	struct kv_span span = { 0 };
	int fd, ret, err, code, failure;
	bool have_log = false, inv;

	ret = kv_ping_parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? KV_EXIT_OK : KV_EXIT_USAGE;

	cmd.role = o.role;
	cmd.msg_size = o.size;
	cmd.count = o.count;
	cmd.timeout_ns = o.timeout_ns;
	if (o.validate)
		cmd.flags |= KVERBS_PING_F_VALIDATE;
	if (o.persistent)
		cmd.flags |= KVERBS_PING_F_PERSISTENT;
	if (o.no_inv)
		cmd.flags |= KVERBS_PING_F_NO_INV;
	if (o.ud)
		cmd.flags |= KVERBS_PING_F_UD;
	if (kv_parse_addr(o.addr ? o.addr : "0.0.0.0", o.port,
			  (struct sockaddr_storage *)&cmd.addr)) {
		kv_usage_error("ping", "cannot resolve address '%s'", o.addr);
		return KV_EXIT_USAGE;
	}
	if (o.src && kv_parse_addr(o.src, 0, (struct sockaddr_storage *)&cmd.src_addr)) {
		kv_usage_error("ping", "cannot resolve source address '%s'", o.src);
		return KV_EXIT_USAGE;
	}
	if (o.src && cmd.src_addr.ss_family != cmd.addr.ss_family) {
		kv_usage_error("ping", "-I and -a must both be IPv4 or both IPv6");
		return KV_EXIT_USAGE;
	}
	kv_addr_str((struct sockaddr_storage *)&cmd.addr, addr, sizeof(addr));
	snprintf(where, sizeof(where), cmd.addr.ss_family == AF_INET6 ?
		 "[%s]:%u" : "%s:%u", addr, o.port);

	fd = kv_open();
	if (fd < 0)
		return KV_EXIT_ENV;
	inv = kv_features(fd) & KVERBS_FEATURE_PING_INV;
	/* Said in words of its own, as perf's options: the flag would be EINVAL. */
	if (o.no_inv && !inv) {
		fprintf(stderr, "%s ping: the kverbs module loaded does not support --no-inv (it never uses remote invalidation in a ping): load the module built with this tool, or leave --no-inv out\n",
			kv_prog);
		close(fd);
		return KV_EXIT_ENV;
	}

	if (o.ud && !(kv_features(fd) & KVERBS_FEATURE_PING_UD)) {
		fprintf(stderr, "%s ping: the kverbs module loaded does not support --ud (no datagram ping): load the module built with this tool\n",
			kv_prog);
		close(fd);
		return KV_EXIT_ENV;
	}

	/* A module without KVERBS_PING_F_LISTENER serves one after another. */
	if (o.persistent && kv_features(fd) & KVERBS_FEATURE_PING_LISTENER) {
		memset(&log, 0, sizeof(log));
		log.json = o.json;
		if (o.json && o.verbose) {
			log.lines = calloc(KV_LOG_JSON_MAX, sizeof(*log.lines));
			if (!log.lines) {
				fprintf(stderr, "%s ping: out of memory\n", kv_prog);
				close(fd);
				return KV_EXIT_FAILED;
			}
			have_log = true;
		}
		span.start_ns = kv_realtime_ns();
		err = kv_ping_serve_many(fd, &o, &cmd, have_log ? &log : NULL);
		span.end_ns = kv_realtime_ns();
		close(fd);
	} else {
		if (o.verbose) {
			ret = kv_log_start(&log, &o, &cmd, KV_LOG_MAX_BYTES);
			if (ret) {
				fprintf(stderr, "%s ping: cannot set up -v: %s\n", kv_prog,
					strerror(-ret));
				kv_log_free(&log);
				close(fd);
				return KV_EXIT_FAILED;
			}
			have_log = true;
		}
		kv_catch_signals();
		span.start_ns = kv_realtime_ns();
		err = -kv_ioctl(fd, KVERBS_IOC_PING, &cmd);
		span.end_ns = kv_realtime_ns();
		close(fd);
		if (have_log)
			kv_log_stop(&log);
	}

	code = kv_ping_outcome(&o, &cmd, err, &status);
	/* What the failure fields describe: a persistent server's last failed client. */
	failure = cmd.result.error ? -cmd.result.error : err;
	if (code != KV_EXIT_OK || (err && err != EINTR) || cmd.result.clients_failed) {
		if (code == KV_EXIT_USAGE)
			kv_describe_refused(msg, sizeof(msg), err);
		else
			kv_describe_ping_failure(msg, sizeof(msg), failure, &cmd, where);
		message = msg;
	}
	if (o.debug)
		kv_ping_print_debug(&cmd, err);
	if (o.json) {
		kv_ping_print_json(&o, &cmd, addr, failure, status, message, &span,
				   have_log ? &log : NULL, inv);
	} else {
		if (message)
			fprintf(stderr, "%s ping: %s%s\n", kv_prog,
				o.persistent && cmd.result.clients_failed ? "last failed client: " : "",
				message);
		if (code != KV_EXIT_USAGE && (cmd.result.iterations || !err ||
					      cmd.result.clients))
			kv_ping_print_text(&o, &cmd, where, inv);
	}
	if (have_log)
		kv_log_free(&log);
	return code;
}
