/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kverbs tool: shared declarations.
 */
#ifndef KVERBS_TOOL_H
#define KVERBS_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <uapi/kverbs.h>

/* Exit codes; see kverbs --help. */
enum {
	KV_EXIT_OK = 0,
	KV_EXIT_FAILED = 1,	/* the test ran and failed */
	KV_EXIT_USAGE = 2,	/* bad command line, or arguments the module refused */
	KV_EXIT_ENV = 3,	/* no module, no permission, ABI mismatch, module too old */
	KV_EXIT_INTERRUPTED = 130, /* a signal ended it before it was done */
};

#define KV_DEVICE_PATH "/dev/kverbs"

extern const char *kv_prog;

/* dev.c: talking to the module */
int kv_open(void);
int kv_open_for(uint64_t features, const char *what);
uint64_t kv_features(int fd);
int kv_ioctl(int fd, unsigned long cmd, void *arg);
void kv_catch_signals(void);

/* opts.c: parsing */
int kv_parse_u32(const char *s, uint32_t *out);
int kv_parse_size(const char *s, uint32_t *out);
int kv_parse_seconds(const char *s, uint64_t *ns);
int kv_opt_port(const char *cmd, const char *arg, uint16_t *port);
int kv_opt_timeout(const char *cmd, const char *arg, uint64_t *ns);
int kv_opt_max_duration(const char *cmd, const char *arg, uint64_t *ns);
int kv_opt_max_iters(const char *cmd, const char *arg, uint64_t *n);
int kv_opt_srq(const char *cmd, const char *name, const char *arg, uint32_t *n);
int kv_parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss);
const char *kv_addr_str(const struct sockaddr_storage *ss, char *buf, size_t len);
const char *kv_bad_option(char **argv, const char *optstring, char *buf,
			  size_t len);
void kv_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * opt_table.c: a command's options as a table.  Each row is one option:
 * its names and value, who takes it, what reads it, what it excludes and
 * its --help; kv_cmdline_parse() makes getopt_long()'s strings of them.
 */
#define KV_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define KV_STR(x)		KV_STR_(x)	/* a macro's value as a string */
#define KV_STR_(x)		#x
/* Rows of one table at most: a row's bit (KV_BIT(row)) fits a uint64_t. */
#define KV_OPTS_MAX		64
#define KV_BIT(row)		(1ULL << (row))
/*
 * struct kv_opt.flag: the bool @member of @type (the command's options,
 * kv_cmdline.flags) that the option sets; not a bool does not compile.
 */
#define KV_FLAG(type, member) \
	_Generic(((type *)0)->member, bool: offsetof(type, member) + 1)

struct kv_cmdline;

struct kv_opt {
	const char *name;	/* --name */
	const char *alias;	/* a second long name (perftest's), or NULL */
	int key;		/* -k, or 0: a long option only; 'h' is --help */
	const char *arg;	/* its value as --help names it; NULL: it takes none */
	/*
	 * Reads @cl->arg, the value of row @cl->opt, into @cl->ctx.  Returns
	 * 0, 1 when the value is the default, which counts as not given, or
	 * -1 after a usage error.  NULL: .flag, or nothing (an option
	 * accepted for compatibility that changes nothing).
	 */
	int (*parse)(const struct kv_cmdline *cl);
	size_t flag;		/* KV_FLAG(): the bool it sets, without .parse */
	/*
	 * Which variants of the command take it (perf: which tests): those
	 * with a bit of @takes in kv_cmdline.has; 0: every one.  The others
	 * refuse it with @not_for, or @not_for_alt where they have a bit of
	 * @alt_when; "%t" is the variant's name, "%n" its note.
	 */
	unsigned int takes;
	const char *not_for;
	unsigned int alt_when;
	const char *not_for_alt;
	/*
	 * The role that takes it (KVERBS_ROLE_*; 0: both), and why, for the
	 * other's refusal: "-l is for the client: @role_why".
	 */
	int role;
	const char *role_why;
	/* KV_BIT() of the rows it cannot go with, and why: "-a and -s exclude each other" */
	uint64_t excludes;
	const char *excl_why;
	const char *shown;	/* how messages name it, if not -k or --name */
	/*
	 * --help, for the variants that take it (and have a bit of
	 * @help_takes, if not 0): @heading first (a new section), then the
	 * option and @help, or what @help_fn prints (kv_cmdline_head() and a
	 * description that depends on the variant); neither: not in --help.
	 * @usage: its words in the synopsis; NULL: "[-k ARG]", "": none.
	 */
	unsigned int help_takes;
	const char *heading;
	const char *help;
	void (*help_fn)(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt);
	const char *usage;
};

struct kv_cmdline {
	const char *cmd;		/* the command, for messages */
	const struct kv_opt *opts;	/* its table */
	unsigned int nopts;
	const char *variant;		/* perf: the test, its name */
	unsigned int has;		/* ... what it takes, against kv_opt.takes */
	const char *note;		/* ... and a note for the refusals */
	void *ctx;			/* for .parse */
	void *flags;			/* for .flag */
	const void *data;		/* for @usage and .help_fn */
	void (*usage)(FILE *f, const struct kv_cmdline *cl);	/* --help */
	int help_col;			/* where --help's descriptions begin */
	uint64_t given;			/* KV_BIT() of the rows given */
	/* While a row's .parse runs: the row, and its value or NULL. */
	const struct kv_opt *opt;
	const char *arg;
};

int kv_cmdline_parse(struct kv_cmdline *cl, int argc, char **argv);
int kv_cmdline_check(const struct kv_cmdline *cl, int role);
const char *kv_opt_shown(const struct kv_opt *opt, char *buf, size_t len);
void kv_cmdline_synopsis(FILE *f, const struct kv_cmdline *cl, const char *before,
			 const char *after);
void kv_cmdline_help(FILE *f, const struct kv_cmdline *cl);
void kv_cmdline_head(FILE *f, const struct kv_cmdline *cl, const struct kv_opt *opt,
		     const char *arg);

/* describe.c: what the kernel's numbers mean */
const char *kv_wc_status_str(uint32_t status);
const char *kv_step_str(uint32_t step);
const char *kv_step_op_str(uint32_t step);
const char *kv_cm_event_str(uint32_t event);
const char *kv_errno_name(int err);
const char *kv_port_state_str(uint32_t state);
const char *kv_phys_state_str(uint32_t state);
const char *kv_link_layer_str(uint32_t ll);
const char *kv_node_type_str(uint32_t type);
const char *kv_transport_str(uint32_t transport);
const char *kv_atomic_cap_str(uint32_t cap);
int kv_describe_pinned(char *buf, size_t len, int err, const char *what);
int kv_describe_ping_failure(char *buf, size_t len, int err,
			     const struct kverbs_ping *cmd, const char *peer);
bool kv_args_refused(int err, uint32_t failed_step);
int kv_describe_refused(char *buf, size_t len, int err);

/* json.c: a JSON writer that only produces valid documents */
struct kv_json {
	FILE *f;
	int depth;
	bool need_comma[16];
	bool after_key;
};
void kv_json_init(struct kv_json *j, FILE *f);
void kv_json_begin_object(struct kv_json *j);
void kv_json_end_object(struct kv_json *j);
void kv_json_begin_array(struct kv_json *j);
void kv_json_end_array(struct kv_json *j);
void kv_json_key(struct kv_json *j, const char *key);
void kv_json_string(struct kv_json *j, const char *s);
void kv_json_string_len(struct kv_json *j, const char *s, size_t len);
void kv_json_u64(struct kv_json *j, uint64_t v);
void kv_json_i64(struct kv_json *j, int64_t v);
void kv_json_double(struct kv_json *j, double v);
void kv_json_bool(struct kv_json *j, bool v);
void kv_json_null(struct kv_json *j);
void kv_json_end(struct kv_json *j);

/*
 * A failed test, as the "error" member of a JSON document: the errno,
 * the step and the message, plus the fields @valid says hold data.  The
 * ping and perf results name these fields alike; KV_FAILURE() picks
 * them from either.
 */
struct kv_failure {
	int err;
	const char *message;
	uint32_t step;
	uint32_t valid;
	uint32_t wc_status;
	uint32_t vendor_err;
	uint32_t cm_event;
	int32_t cm_status;
	uint32_t mismatch_offset;
};

#define KV_FAILURE(res, e, msg) ((struct kv_failure){			\
	.err = (e), .message = (msg), .step = (res)->failed_step,	\
	.valid = (res)->valid, .wc_status = (res)->wc_status,		\
	.vendor_err = (res)->vendor_err, .cm_event = (res)->cm_event,	\
	.cm_status = (res)->cm_status,					\
	.mismatch_offset = (res)->mismatch_offset })

bool kv_json_failure(struct kv_json *j, const struct kv_failure *f);

/*
 * When a session's call into the module began and when it returned, in
 * CLOCK_REALTIME nanoseconds: the test's elapsed_ns lies within, so that
 * reports of sessions in other processes can be set side by side.  Where
 * the module says when the measured phase itself ran (perf, struct
 * kverbs_perf.ended_ns), test_start_ns and test_end_ns bound it; else
 * both are 0.
 */
struct kv_span {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t test_start_ns;
	uint64_t test_end_ns;
};

uint64_t kv_realtime_ns(void);
void kv_json_span(struct kv_json *j, const struct kv_span *span);

/*
 * The CPU a perf test cost while its calls into the module ran: the
 * calling threads' (in the kernel: posting, busy polling, waiting), and
 * every CPU's of this host that was not idle (softirq context, ib_core's
 * and the device's work items, and a peer on the same host), from
 * /proc/stat in clock ticks.  @known: both could be read.
 */
struct kv_cpu {
	uint64_t thread_ns;
	uint64_t busy_ns;
	bool known;
};

void kv_cpu_begin(struct kv_cpu *c, bool process);
void kv_cpu_end(struct kv_cpu *c, bool process);

/*
 * The perftest-style tests (perf.c, perf.h): their command line, which
 * serve and tests/unit.c use too.
 */
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
	uint32_t tx_depth;	/* 0: the module's default */
	bool cmp_swap;		/* -A CMP_AND_SWAP */
	bool gbits;
	bool validate;
	bool imm;		/* --imm: WRITE or SEND with immediate data */
	bool rw;		/* --rw: READs and WRITEs through rdma_rw contexts */
	bool inv;		/* --inv: each round's key invalidated by the peer */
	bool phases;		/* --phases: where each operation's time goes */
	bool ud;		/* -c UD: the data in datagrams */
	bool json;
	bool debug;
	uint64_t timeout_ns;
	bool all;		/* -a: every size from 2 up */
	uint32_t qps;		/* -q: connections at once, each its own QP */
	bool bidir;		/* -b: as many again, the server sending */
	bool events;		/* -e: sleep for completions, not busy-poll */
	uint32_t poll;		/* --poll, -e: KVERBS_PERF_POLL_*, 0 for the default */
	bool cq_pool;		/* --cq-pool: a CQ of ib_core's shared pool */
	bool dim;		/* --dim: adaptive interrupt moderation required */
	uint32_t post_list;	/* -l: WRs chained per post, 0 for one */
	uint32_t cq_mod;	/* -Q: one WR in this many signaled, 0 for the default */
	uint32_t inline_size;	/* -I: the largest message posted inline, 0 for none */
	bool cpu_util;		/* --cpu_util: the CPU per operation, in text too */
	unsigned int seq;	/* -a: the size's place in the run, 0 first */
	/* A server's ceilings; 0: the module's (perf_max_duration_s, ...) */
	uint64_t max_duration_ns;	/* --max-duration */
	uint64_t max_iters;		/* --max-iters */
	bool no_reverse;		/* --no-reverse: refuse -b's reverse half */
	bool busy_poll;			/* --busy-poll: a server polls for its clients */
	bool srq;			/* --srq: a server's receives in a shared queue */
	uint32_t srq_wr;		/* --srq-wr: its receives, 0 for the module's */
	uint32_t srq_limit;		/* --srq-limit: its limit, 0 for the module's */
	const char *json_file;		/* --out_json(_file): the report there too */
	FILE *json_out;			/* ... open while the test runs */
	bool ud_foreign;		/* the module counts kverbs_perf.foreign */
};
/* perf_opts.c: the command line */
int kv_perf_parse(uint32_t test, int argc, char **argv, struct kv_perf_opts *o);
const char *kv_perf_poll_str(uint32_t poll);
uint32_t kv_perf_poll_parse(const char *cmd, const char *name);
int kv_perf_parse_poll(struct kv_perf_opts *o, const char *polls);
/* perf_run.c: KVERBS_IOC_PERF's argument made of it, and the ioctl */
int kv_perf_where(const struct kv_perf_opts *o, struct sockaddr_storage *ss,
		  char *addr, size_t addr_len, char *where, size_t where_len);
int kv_perf_listen(int fd, const struct kv_perf_opts *o,
		   const struct sockaddr_storage *ss, const char *addr,
		   const char *where);
int kv_perf_run(int fd, const struct kv_perf_opts *o, struct kverbs_perf *cmd,
		const char *addr, const char *where);
int kv_perf_server_ceilings(const struct kv_perf_opts *o, struct kverbs_perf *cmd,
			    uint64_t *features);
int kv_perf_server_srq(int fd, const struct kv_perf_opts *o, struct kverbs_perf *cmd);
void kv_perf_set_poll(const struct kv_perf_opts *o, struct kverbs_perf *cmd,
		      uint64_t *features, char *what, size_t len);
/* perf_report.c: what the test did */
void kv_perf_print_srq(const struct kverbs_perf *cmd);
void kv_perf_json_srq(struct kv_json *j, const struct kverbs_perf *cmd);
void kv_perf_hint(const struct kv_perf_opts *o, const struct kverbs_perf *cmd, int err,
		  const char *where);
int kv_perf_describe_reject(char *buf, size_t len,
			    const struct kverbs_perf_result *r, bool server,
			    bool atomic);
const char *kv_perf_reject_str(uint32_t reason);

/* stats.c: a latency test's samples as perftest reports them, in usec */
struct kv_lat_stats {
	uint64_t samples;
	double min;
	double max;
	double typical;
	double avg;
	double stdev;
	double p99;
	double p99_9;
};
int kv_lat_stats_compute(const uint64_t *ns, size_t n, struct kv_lat_stats *st);

/* devices.c */
/* Every device and port KVERBS_IOC_DEVICES gave, in this header's entries. */
struct kv_devices {
	struct kverbs_device_info *devs;
	struct kverbs_port_info *ports;
	uint32_t ndevs;
	uint32_t nports;
};

uint64_t kv_devices_max_mr(int fd);
void kv_devices_print_text(FILE *f, const struct kv_devices *d, bool caps);
void kv_devices_print_json(FILE *f, const struct kv_devices *d, bool caps);

/* ping.c: its report's remote invalidation, also from an older module */
void kv_ping_print_inv(FILE *f, const struct kverbs_ping *cmd, bool known);
void kv_ping_json_inv(struct kv_json *j, const struct kverbs_ping *cmd, bool known);

/* threads.c: tests in threads, which one signal ends */
#define KV_THREADS_MAX	64
int kv_threads_run(unsigned int n, void *(*fn)(void *arg), void **args, int *stop);

/* subcommands */
int kv_cmd_devices(int argc, char **argv);
int kv_cmd_ping(int argc, char **argv);
int kv_cmd_perf(int argc, char **argv);	/* argv[0]: write_bw, read_lat, ... */
bool kv_perf_is_cmd(const char *name);
void kv_perf_commands(FILE *f);
int kv_cmd_serve(int argc, char **argv);
int kv_cmd_lesson(int argc, char **argv);
void kv_lesson_commands(FILE *f);

#endif /* KVERBS_TOOL_H */
