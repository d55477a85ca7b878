// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs write_bw, read_bw, send_bw: perftest's bandwidth tests, run by
 * the kernel.
 *
 * The options are perftest's where they overlap.  Without an address the
 * command waits as the server, with one it runs the client; the client
 * says what to run, and the server takes it from the connection request.
 * The whole test is one KVERBS_IOC_PERF call.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kverbs.h"

struct kv_perf_opts {
	const char *cmd;
	uint32_t test;
	int role;
	const char *addr;
	uint16_t port;
	uint32_t size;
	bool size_set;
	uint32_t iters;
	bool iters_set;
	uint64_t duration_ns;
	uint32_t tx_depth;
	bool gbits;
	bool validate;
	bool json;
	bool debug;
	uint64_t timeout_ns;
};

static const struct {
	const char *cmd;
	uint32_t test;
	const char *title;	/* as perftest names it */
	const char *op;
} kv_perf_tests[] = {
	{ "write_bw", KVERBS_PERF_WRITE_BW, "RDMA_Write BW Test", "RDMA WRITE" },
	{ "read_bw", KVERBS_PERF_READ_BW, "RDMA_Read BW Test", "RDMA READ" },
	{ "send_bw", KVERBS_PERF_SEND_BW, "Send BW Test", "SEND" },
};

#define KV_PERF_NTESTS	(sizeof(kv_perf_tests) / sizeof(kv_perf_tests[0]))

static size_t kv_perf_index(uint32_t test)
{
	size_t i;

	for (i = 0; i < KV_PERF_NTESTS; i++)
		if (kv_perf_tests[i].test == test)
			return i;
	return 0;
}

static void perf_usage(FILE *f, const char *cmd)
{
	fprintf(f,
		"usage: %s %s [-s SIZE] [-n ITERS | -D SECONDS] [-t TXDEPTH] [-p PORT]\n"
		"       %*s [--report_gbits] [--validate] [--json] [--timeout SEC] [ADDR]\n"
		"\n"
		"perftest's ib_%s, with the kernel's verbs.  Without ADDR, wait for a client\n"
		"as the server; with ADDR, connect to the server there and run the test.\n"
		"The client says what to run; the server's options only set limits.\n"
		"\n"
		"  -s, --size SIZE       bytes per message (default 65536; k and M suffixes);\n"
		"                        server: the largest accepted (default: the module's\n"
		"                        max_msg_size)\n"
		"  -n, --iters ITERS     messages to move (default %u)\n"
		"  -D, --duration SEC    run this long instead\n"
		"  -t, --tx-depth N      work requests kept in flight (default %u, at most %u)\n"
		"  -p, --port PORT       port (default %u)\n"
		"      --report_gbits    bandwidth in Gb/s instead of MiB/s\n"
		"      --validate        check every byte of every message against a pattern\n"
		"                        carrying its iteration number (the receiving side\n"
		"                        checks; WRITE and READ then run in rounds)\n"
		"      --timeout SEC     limit on each step (default: the module's timeout_ms)\n"
		"      --json            one JSON document instead of text\n"
		"  -d, --debug           print everything the kernel reported\n"
		"  -h, --help            this help\n",
		kv_prog, cmd, (int)(strlen(kv_prog) + strlen(cmd) + 1), "", cmd,
		KVERBS_PERF_DEFAULT_ITERS, KVERBS_PERF_DEFAULT_DEPTH,
		KVERBS_PERF_MAX_DEPTH, KVERBS_PERF_DEFAULT_PORT);
}

static int kv_perf_parse(int argc, char **argv, struct kv_perf_opts *o)
{
	enum { OPT_GBITS = 256, OPT_VALIDATE, OPT_JSON, OPT_TIMEOUT };
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'D' },
		{ "tx-depth", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "report_gbits", no_argument, NULL, OPT_GBITS },
		{ "validate", no_argument, NULL, OPT_VALIDATE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char optstring[] = ":s:n:D:t:p:dh";
	const char *cmd = o->cmd;
	uint32_t v;
	char buf[8];
	int opt;

	o->port = KVERBS_PERF_DEFAULT_PORT;
	o->size = 65536;
	o->iters = KVERBS_PERF_DEFAULT_ITERS;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (kv_parse_size(optarg, &o->size) || !o->size) {
				kv_usage_error(cmd, "invalid size '%s'", optarg);
				return -1;
			}
			o->size_set = true;
			break;
		case 'n':
			if (kv_parse_u32(optarg, &o->iters) || !o->iters) {
				kv_usage_error(cmd, "invalid iterations '%s' (at least 1)", optarg);
				return -1;
			}
			o->iters_set = true;
			break;
		case 'D':
			if (kv_parse_seconds(optarg, &o->duration_ns) || !o->duration_ns ||
			    o->duration_ns > KVERBS_PERF_MAX_DURATION_NS) {
				kv_usage_error(cmd, "invalid duration '%s' (seconds, more than 0, at most a day)",
					       optarg);
				return -1;
			}
			break;
		case 't':
			if (kv_parse_u32(optarg, &o->tx_depth) || !o->tx_depth ||
			    o->tx_depth > KVERBS_PERF_MAX_DEPTH) {
				kv_usage_error(cmd, "invalid TX depth '%s' (1 to %u)", optarg,
					       KVERBS_PERF_MAX_DEPTH);
				return -1;
			}
			break;
		case 'p':
			if (kv_parse_u32(optarg, &v) || !v || v > 65535) {
				kv_usage_error(cmd, "invalid port '%s' (1 to 65535)", optarg);
				return -1;
			}
			o->port = v;
			break;
		case OPT_GBITS:
			o->gbits = true;
			break;
		case OPT_VALIDATE:
			o->validate = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_TIMEOUT:
			if (kv_parse_seconds(optarg, &o->timeout_ns) || !o->timeout_ns ||
			    o->timeout_ns > 3600ULL * 1000000000ULL) {
				kv_usage_error(cmd, "invalid timeout '%s' (seconds, more than 0, at most 3600)",
					       optarg);
				return -1;
			}
			break;
		case 'd':
			o->debug = true;
			break;
		case 'h':
			perf_usage(stdout, cmd);
			return 1;
		case ':':
			kv_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
			return -1;
		default:
			kv_usage_error(cmd, "unknown option '%s'",
				       kv_bad_option(argv, optstring, buf, sizeof(buf)));
			return -1;
		}
	}
	if (optind < argc)
		o->addr = argv[optind++];
	if (optind < argc) {
		kv_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	o->role = o->addr ? KVERBS_ROLE_CLIENT : KVERBS_ROLE_SERVER;
	if (o->duration_ns && o->iters_set) {
		kv_usage_error(cmd, "-n and -D exclude each other");
		return -1;
	}
	if (o->role == KVERBS_ROLE_SERVER && !o->size_set)
		o->size = 0;
	return 0;
}

/* perftest's units: MiB/s, or Gb/s with --report_gbits. */
static double kv_perf_bw(const struct kv_perf_opts *o, uint64_t bps)
{
	return o->gbits ? bps * 8 / 1e9 : bps / 1048576.0;
}

static void kv_perf_print_text(const struct kv_perf_opts *o,
			       const struct kverbs_perf *cmd)
{
	const struct kverbs_perf_result *r = &cmd->result;
	static const char line[] =
		"---------------------------------------------------------------------------------------\n";

	printf("%s", line);
	printf("                    %s\n", kv_perf_tests[kv_perf_index(r->test)].title);
	printf(" Device         : %s\n", r->ibdev);
	printf(" Transport type : %s\n", r->transport == KVERBS_TRANSPORT_IWARP ? "IW" : "IB");
	printf(" Link type      : %s\n", r->link_layer == KVERBS_LINK_LAYER_ETHERNET ?
	       "Ethernet" : r->link_layer == KVERBS_LINK_LAYER_INFINIBAND ? "IB" : "unknown");
	printf(" Mtu            : %u[B]\n", r->active_mtu);
	printf(" TX depth       : %u\n", r->tx_depth);
	printf(" Validate       : %s\n", r->flags & KVERBS_PERF_F_VALIDATE ? "ON" : "OFF");
	if (r->duration_ns)
		printf(" Duration       : %.3f[sec]\n", r->duration_ns / 1e9);
	printf("%s", line);
	printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
	       o->gbits ? "Gb/sec" : "MiB/sec", o->gbits ? "Gb/sec" : "MiB/sec");
	printf(" %-7u    %-7" PRIu64 "          %-7.2f            %-7.2f\t\t   %-7.6f\n",
	       r->msg_size, (uint64_t)r->iterations, kv_perf_bw(o, r->peak_bps),
	       kv_perf_bw(o, r->avg_bps), r->msg_rate / 1e6);
	printf("%s", line);
}

static const char *kv_perf_reject_str(uint32_t reason)
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
	};

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "unknown";
}

/* Why the hello was refused, from either end. */
static int kv_perf_describe_reject(char *buf, size_t len,
				   const struct kverbs_perf_result *r, bool server)
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
	case KVERBS_PERF_REJECT_SETUP:
		return snprintf(buf, len, "%s: %s (%s)", who, why, strerror(r->reject_value));
	default:
		return snprintf(buf, len, "%s: %s", who, why);
	}
}

static void kv_perf_describe(char *buf, size_t len, int err,
			     const struct kv_perf_opts *o,
			     const struct kverbs_perf *cmd, const char *where)
{
	const struct kverbs_perf_result *r = &cmd->result;
	struct kverbs_ping ping = { .role = cmd->role, .msg_size = r->msg_size };
	struct kverbs_ping_result *p = &ping.result;

	if (r->reject_reason) {
		kv_perf_describe_reject(buf, len, r, o->role == KVERBS_ROLE_SERVER);
		return;
	}
	if (r->failed_step == KVERBS_STEP_VALIDATE) {
		snprintf(buf, len, "data mismatch in iteration %" PRIu64 " at byte %u",
			 (uint64_t)r->mismatch_iter, r->mismatch_offset);
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

static void kv_perf_print_json(const struct kv_perf_opts *o,
			       const struct kverbs_perf *cmd, const char *addr,
			       int err, const char *status, const char *message)
{
	const struct kverbs_perf_result *r = &cmd->result;
	struct kv_json j;

	kv_json_init(&j, stdout);
	kv_json_begin_object(&j);
	kv_json_key(&j, "test");
	kv_json_string(&j, r->test ? kv_perf_tests[kv_perf_index(r->test)].cmd : o->cmd);
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
	kv_json_key(&j, "count");
	kv_json_u64(&j, r->count);
	kv_json_key(&j, "duration_ns");
	kv_json_u64(&j, r->duration_ns);
	kv_json_key(&j, "validate");
	kv_json_bool(&j, r->flags & KVERBS_PERF_F_VALIDATE);
	kv_json_key(&j, "status");
	kv_json_string(&j, status);
	kv_json_key(&j, "iterations");
	kv_json_u64(&j, r->iterations);
	kv_json_key(&j, "bytes");
	kv_json_u64(&j, r->bytes);
	kv_json_key(&j, "elapsed_ns");
	kv_json_u64(&j, r->elapsed_ns);
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
	if (kv_json_failure(&j, &KV_FAILURE(r, err, message))) {
		if (r->valid & KVERBS_RESULT_MISMATCH) {
			kv_json_key(&j, "mismatch_iteration");
			kv_json_u64(&j, r->mismatch_iter);
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
		"cm_event %u (%s) cm_status %d mismatch %" PRIu64 "/%u reject %u/%u/%u\n",
		-err, kv_errno_name(err), (uint64_t)r->iterations, (uint64_t)r->bytes,
		(uint64_t)r->elapsed_ns, (uint64_t)r->peak_bps, (uint64_t)r->avg_bps,
		(uint64_t)r->msg_rate, r->valid, r->failed_step,
		kv_step_str(r->failed_step), r->wc_status, kv_wc_status_str(r->wc_status),
		r->vendor_err, r->cm_event, kv_cm_event_str(r->cm_event), r->cm_status,
		(uint64_t)r->mismatch_iter, r->mismatch_offset, r->reject_reason,
		r->reject_value, r->reject_version);
}

static int kv_perf_main(uint32_t test, int argc, char **argv)
{
	struct kverbs_perf cmd = { .size = sizeof(cmd) };
	struct kv_perf_opts o = { .cmd = kv_perf_tests[kv_perf_index(test)].cmd,
				  .test = test };
	char addr[128], where[160], msg[512];
	const char *status, *message = NULL;
	int fd, ret, err, code;

	ret = kv_perf_parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? KV_EXIT_OK : KV_EXIT_USAGE;

	cmd.role = o.role;
	cmd.test = test;
	cmd.msg_size = o.size;
	cmd.timeout_ns = o.timeout_ns;
	if (o.role == KVERBS_ROLE_CLIENT) {
		cmd.tx_depth = o.tx_depth;
		cmd.iterations = o.duration_ns ? 0 : o.iters;
		cmd.duration_ns = o.duration_ns;
		if (o.validate)
			cmd.flags |= KVERBS_PERF_F_VALIDATE;
	}
	/* The server checks, or fills, what the client asked it to. */
	if (kv_parse_addr(o.addr ? o.addr : "0.0.0.0", o.port,
			  (struct sockaddr_storage *)&cmd.addr)) {
		kv_usage_error(o.cmd, "cannot resolve address '%s'", o.addr);
		return KV_EXIT_USAGE;
	}
	kv_addr_str((struct sockaddr_storage *)&cmd.addr, addr, sizeof(addr));
	snprintf(where, sizeof(where), cmd.addr.ss_family == AF_INET6 ?
		 "[%s]:%u" : "%s:%u", addr, o.port);

	fd = kv_open();
	if (fd < 0)
		return KV_EXIT_ENV;
	kv_catch_signals();
	err = -kv_ioctl(fd, KVERBS_IOC_PERF, &cmd);
	close(fd);

	if (!err) {
		status = "ok";
		code = KV_EXIT_OK;
	} else if (err == EINTR) {
		status = "interrupted";
		code = KV_EXIT_INTERRUPTED;
	} else {
		status = "failed";
		code = kv_args_refused(err, cmd.result.failed_step) ?
		       KV_EXIT_USAGE : KV_EXIT_FAILED;
	}
	if (err) {
		if (code == KV_EXIT_USAGE)
			kv_describe_refused(msg, sizeof(msg), err);
		else
			kv_perf_describe(msg, sizeof(msg), err, &o, &cmd, where);
		message = msg;
	}
	if (o.debug)
		kv_perf_print_debug(&cmd, err);
	if (o.json) {
		kv_perf_print_json(&o, &cmd, addr, err, status, message);
	} else {
		if (message)
			fprintf(stderr, "%s %s: %s\n", kv_prog, o.cmd, message);
		if (cmd.result.iterations || !err)
			kv_perf_print_text(&o, &cmd);
	}
	return code;
}

int kv_cmd_write_bw(int argc, char **argv)
{
	return kv_perf_main(KVERBS_PERF_WRITE_BW, argc, argv);
}

int kv_cmd_read_bw(int argc, char **argv)
{
	return kv_perf_main(KVERBS_PERF_READ_BW, argc, argv);
}

int kv_cmd_send_bw(int argc, char **argv)
{
	return kv_perf_main(KVERBS_PERF_SEND_BW, argc, argv);
}
