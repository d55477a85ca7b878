// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs lesson: the classic verbs mistakes, done wrong and then right,
 * in the kernel (KVERBS_IOC_LESSON), and what the device said to each.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kverbs.h"

#define KV_LESSON_DOC "Documentation/lessons.rst"

/*
 * What each lesson's runs do, in the order the kernel reports them
 * (include/uapi/kverbs.h, enum kverbs_lesson_id), and why.
 */
static const struct kv_lesson {
	const char *name;
	uint32_t id;
	const char *title;
	const char *runs[KVERBS_LESSON_MAX_RUNS];
	const char *why;
	const char *refused;
} kv_lessons[] = {
	{
		"unsignaled", KVERBS_LESSON_UNSIGNALED,
		"unsignaled sends fill the send queue",
		{
			"RDMA WRITEs, all unsignaled, posted as fast as possible",
			"one WRITE in 4 signaled, never more than 16 posted past the last signaled completion seen",
		},
		"an unsignaled work request's send queue slot is free again only once a later signaled one completes; with none signaled the queue fills and ib_post_send() fails with ENOMEM",
		NULL,
	},
	{
		"rnr", KVERBS_LESSON_RNR,
		"a SEND to a peer with no receive posted",
		{
			"SEND, the peer has no receive, rnr_retry_count 0",
			"SEND, the peer posts its receive late, rnr_retry_count 7",
		},
		"a SEND consumes a receive the peer posted; without one the peer answers RNR NAK, and the sender retries rnr_retry_count times (7: for ever) before the SEND fails; iWARP has no RNR retry",
		"iWARP has no receiver-not-ready retry",
	},
	{
		"fence", KVERBS_LESSON_FENCE,
		"an RDMA READ, then a SEND of what it read",
		{
			"READ then SEND of the READ's sink, no IB_SEND_FENCE",
			"READ then SEND of the READ's sink, SEND with IB_SEND_FENCE",
		},
		"the device may start the SEND before the READ's response landed and send the sink's old bytes; IB_SEND_FENCE holds the SEND until the READs and atomics before it completed",
		NULL,
	},
	{
		"access", KVERBS_LESSON_ACCESS,
		"access rights of a memory region",
		{
			"RDMA WRITE to an MR registered with local write and remote read only",
			"atomic fetch-and-add on an MR registered with local and remote write only",
			"WRITE and fetch-and-add on an MR with local write, remote write and remote atomic",
		},
		"the responder checks an MR's rights on every access: a WRITE needs remote write, an atomic remote atomic, and both need local write too; on iWARP an RDMA READ's sink needs remote write",
		NULL,
	},
	{
		"stale_key", KVERBS_LESSON_STALE_KEY,
		"an rkey used after its owner invalidated it",
		{
			"RDMA WRITE with the key the peer gave, after the peer invalidated it (LOCAL_INV)",
			"the peer registers again under a new key (ib_update_fast_reg_key, REG_MR), WRITE with that one",
		},
		"a key opens an MR only while the MR is registered under it; after an invalidation the responder refuses the old key (remote access error), so a ULP hands out a fresh key with every registration and never reuses one",
		NULL,
	},
	{
		"max_sge", KVERBS_LESSON_MAX_SGE,
		"a work request beyond what its QP was created for",
		{
			"SEND with one scatter/gather entry more than the QP's max_send_sge",
			"inline SEND one byte over the QP's max_inline_data",
			"QP created with max_send_sge 4, SEND gathering 4 pieces, last piece first",
		},
		"a send queue is built for max_send_sge entries and max_inline_data inline bytes per work request, as the device made them (ib_query_qp); ib_post_send() refuses more with EINVAL and posts nothing; create the QP for what will be posted",
		NULL,
	},
	{
		"alignment", KVERBS_LESSON_ALIGN,
		"an atomic on an address that is not 8-byte aligned",
		{
			"fetch-and-add 4 bytes into an 8-byte word",
			"fetch-and-add on the aligned word",
		},
		"an atomic works on one naturally aligned 8-byte word; a device refuses a misaligned one at the post (rxe: EINVAL) or the responder NAKs it (invalid request)",
		"the device has no atomics",
	},
	{
		"mr_size", KVERBS_LESSON_MR_SIZE,
		"a buffer larger than one MR maps",
		{
			"one page more than max_fast_reg_page_list_len, mapped into one MR",
			"the buffer split across two MRs, an RDMA WRITE to each",
		},
		"a fast-registration MR maps at most max_fast_reg_page_list_len pages; ib_map_mr_sg() maps fewer entries than given past it (rxe) or none (siw: ENOMEM); split a larger transfer across MRs, one WRITE or READ per key",
		"no fast registration, or one MR maps more pages than the lesson pins",
	},
};

#define KV_NLESSONS (sizeof(kv_lessons) / sizeof(kv_lessons[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: %s lesson [--json] [--timeout SEC] [NAME ADDR]\n"
		"\n"
		"Show a classic verbs mistake in the kernel: the wrong way, what the\n"
		"device reported, the right way and its result.  The lesson connects to\n"
		"itself on the RDMA device that ADDR, a local address, belongs to, on\n"
		"connections, QPs and MRs of its own.  Without NAME, list them.\n"
		"\n"
		"lessons:\n", kv_prog);
	for (i = 0; i < KV_NLESSONS; i++)
		fprintf(f, "  %-11s %s\n", kv_lessons[i].name, kv_lessons[i].title);
	fprintf(f,
		"\n"
		"options:\n"
		"  -J, --json         print one JSON document\n"
		"      --timeout SEC  limit on each step (module default: timeout_ms)\n"
		"  -h, --help         this text\n"
		"\n"
		"See " KV_LESSON_DOC " for each lesson and its trace.\n");
}

/**
 * kv_lesson_commands - the lesson command's lines of the tool's usage
 * @f: where to print them
 *
 * Every lesson of the table by name, wrapped under the description.
 */
void kv_lesson_commands(FILE *f)
{
	static const char indent[] = "             ";
	static const char tail[] = "('lesson' lists them)";
	size_t i, col = sizeof(indent) - 1;

	fprintf(f, "  lesson     the classic verbs mistakes, wrong and right, in the kernel:\n%s",
		indent);
	for (i = 0; i <= KV_NLESSONS; i++) {
		const char *word = i < KV_NLESSONS ? kv_lessons[i].name : tail;
		size_t len = strlen(word) + (i + 1 < KV_NLESSONS);

		if (i && col + 1 + len > 79) {
			fprintf(f, "\n%s", indent);
			col = sizeof(indent) - 1;
		} else if (i) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%s%s", word, i + 1 < KV_NLESSONS ? "," : "");
		col += len;
	}
	fputc('\n', f);
}

static const struct kv_lesson *kv_lesson_find(const char *name)
{
	size_t i;

	for (i = 0; i < KV_NLESSONS; i++)
		if (!strcmp(kv_lessons[i].name, name))
			return &kv_lessons[i];
	return NULL;
}

static const char *kv_kind_str(uint32_t kind)
{
	return kind == KVERBS_LESSON_RIGHT ? "right" : "wrong";
}

/* One line of what the kernel and the device said about a run. */
static void kv_lesson_print_run(const struct kverbs_lesson_run *r)
{
	printf("  result:");
	if (r->post_error)
		printf(" ib_post_send() failed after %u posts: %s (%s),",
		       r->posted, strerror(-r->post_error),
		       kv_errno_name(-r->post_error));
	else
		printf(" %u posted,", r->posted);
	if (r->queue_depth)
		printf(" send queue of %u,", r->queue_depth);
	if (r->valid & KVERBS_RESULT_WC)
		printf(" completion %s (status %u, vendor error 0x%x) at %s,",
		       kv_wc_status_str(r->wc_status), r->wc_status,
		       r->vendor_err, kv_step_str(r->step));
	if (r->valid & KVERBS_RESULT_CM)
		printf(" rdma_cm %s (%d),", kv_cm_event_str(r->cm_event),
		       r->cm_status);
	if (r->error == -EBADMSG)
		printf(" the data that arrived is not what was meant (first bytes %.8s),",
		       (const char *)&r->value);
	if (r->error == -EOPNOTSUPP)
		printf(" not shown: the device has no atomics,");
	if (r->post_error && r->value)
		printf(" the QP's limit %llu,", (unsigned long long)r->value);
	if (r->error && r->step == KVERBS_STEP_REG_MR && !(r->valid & KVERBS_RESULT_WC))
		printf(" ib_map_mr_sg() mapped %llu pages,", (unsigned long long)r->value);
	if (!r->error)
		printf(" succeeded in %.3f ms,", r->elapsed_ns / 1e6);
	printf(" %s\n", r->error ? kv_errno_name(-r->error) : "OK");
	if (r->peer_error) {
		printf("  peer:   %s", kv_errno_name(-r->peer_error));
		if (r->peer_valid & KVERBS_RESULT_WC)
			printf(", completion %s", kv_wc_status_str(r->peer_wc_status));
		else if (r->peer_error == -ECONNRESET)
			printf(", its QP in the error state, its receive flushed");
		else if (r->peer_error == -EACCES)
			printf(", an access error event on its QP");
		printf("\n");
	}
}

static void kv_lesson_json_run(struct kv_json *j, const struct kverbs_lesson_run *r,
			       const char *what)
{
	kv_json_begin_object(j);
	kv_json_key(j, "kind");
	kv_json_string(j, kv_kind_str(r->kind));
	kv_json_key(j, "what");
	kv_json_string(j, what ? what : "");
	kv_json_key(j, "error");
	kv_json_i64(j, r->error);
	kv_json_key(j, "errno");
	kv_json_string(j, r->error ? kv_errno_name(-r->error) : "");
	kv_json_key(j, "post_error");
	kv_json_i64(j, r->post_error);
	kv_json_key(j, "posted");
	kv_json_u64(j, r->posted);
	kv_json_key(j, "step");
	kv_json_string(j, kv_step_str(r->step));
	if (r->valid & KVERBS_RESULT_WC) {
		kv_json_key(j, "wc_status");
		kv_json_u64(j, r->wc_status);
		kv_json_key(j, "wc_status_str");
		kv_json_string(j, kv_wc_status_str(r->wc_status));
		kv_json_key(j, "vendor_err");
		kv_json_u64(j, r->vendor_err);
	}
	if (r->valid & KVERBS_RESULT_CM) {
		kv_json_key(j, "cm_event");
		kv_json_string(j, kv_cm_event_str(r->cm_event));
		kv_json_key(j, "cm_status");
		kv_json_i64(j, r->cm_status);
	}
	kv_json_key(j, "peer_error");
	kv_json_i64(j, r->peer_error);
	if (r->peer_valid & KVERBS_RESULT_WC) {
		kv_json_key(j, "peer_wc_status");
		kv_json_u64(j, r->peer_wc_status);
	}
	kv_json_key(j, "queue_depth");
	kv_json_u64(j, r->queue_depth);
	kv_json_key(j, "elapsed_ns");
	kv_json_u64(j, r->elapsed_ns);
	kv_json_key(j, "value");
	kv_json_u64(j, r->value);
	kv_json_end_object(j);
}

/* Every right run succeeded: the lesson's fix works on this device. */
static bool kv_lesson_fixed(const struct kverbs_lesson *cmd)
{
	uint32_t i;

	for (i = 0; i < cmd->nruns; i++)
		if (cmd->runs[i].kind == KVERBS_LESSON_RIGHT && cmd->runs[i].error)
			return false;
	return cmd->nruns > 0;
}

static int kv_lesson_run(const struct kv_lesson *l, const char *addr, bool json,
			 uint64_t timeout_ns)
{
	struct kverbs_lesson cmd = {
		.size = sizeof(cmd),
		.lesson = l->id,
		.timeout_ns = timeout_ns,
	};
	struct sockaddr_storage ss;
	struct kv_json j;
	uint32_t i;
	int fd, ret;

	if (kv_parse_addr(addr, 0, &ss)) {
		kv_usage_error("lesson", "cannot resolve '%s'", addr);
		return KV_EXIT_USAGE;
	}
	memcpy(&cmd.addr, &ss, sizeof(cmd.addr));
	fd = kv_open();
	if (fd < 0)
		return KV_EXIT_ENV;
	ret = kv_ioctl(fd, KVERBS_IOC_LESSON, &cmd);
	close(fd);
	if (ret == -ENOTTY) {
		fprintf(stderr, "%s lesson: this kverbs module has no lessons: upgrade it\n",
			kv_prog);
		return KV_EXIT_ENV;
	}
	if (ret == -EOPNOTSUPP) {
		fprintf(stderr, "%s lesson %s: the device of %s cannot show it (%s)\n",
			kv_prog, l->name, addr,
			l->refused ? l->refused : "unsupported");
		return KV_EXIT_FAILED;
	}
	if (ret) {
		fprintf(stderr, "%s lesson %s: %s (%s) at %s\n", kv_prog, l->name,
			strerror(-ret), kv_errno_name(-ret),
			kv_step_str(cmd.failed_step));
		return ret == -EINTR ? KV_EXIT_INTERRUPTED : KV_EXIT_FAILED;
	}

	if (json) {
		kv_json_init(&j, stdout);
		kv_json_begin_object(&j);
		kv_json_key(&j, "lesson");
		kv_json_string(&j, l->name);
		kv_json_key(&j, "title");
		kv_json_string(&j, l->title);
		kv_json_key(&j, "runs");
		kv_json_begin_array(&j);
		for (i = 0; i < cmd.nruns && i < KVERBS_LESSON_MAX_RUNS; i++)
			kv_lesson_json_run(&j, &cmd.runs[i], l->runs[i]);
		kv_json_end_array(&j);
		kv_json_key(&j, "why");
		kv_json_string(&j, l->why);
		kv_json_key(&j, "doc");
		kv_json_string(&j, KV_LESSON_DOC);
		kv_json_key(&j, "status");
		kv_json_string(&j, kv_lesson_fixed(&cmd) ? "ok" : "failed");
		kv_json_end_object(&j);
		kv_json_end(&j);
	} else {
		printf("lesson %s: %s\n", l->name, l->title);
		for (i = 0; i < cmd.nruns && i < KVERBS_LESSON_MAX_RUNS; i++) {
			printf("%s: %s\n", kv_kind_str(cmd.runs[i].kind),
			       l->runs[i] ? l->runs[i] : "");
			kv_lesson_print_run(&cmd.runs[i]);
		}
		printf("why: %s (%s, \"%s\")\n", l->why, KV_LESSON_DOC, l->name);
	}
	return kv_lesson_fixed(&cmd) ? KV_EXIT_OK : KV_EXIT_FAILED;
}

int kv_cmd_lesson(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct kv_lesson *l;
	uint64_t timeout_ns = 0;
	bool json = false;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "+Jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			json = true;
			break;
		case 't':
			if (kv_opt_timeout("lesson", optarg, &timeout_ns))
				return KV_EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return KV_EXIT_OK;
		default:
			usage(stderr);
			return KV_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		for (i = 0; i < KV_NLESSONS; i++)
			printf("%-11s %s\n", kv_lessons[i].name, kv_lessons[i].title);
		return KV_EXIT_OK;
	}
	if (argc - optind > 2) {
		kv_usage_error("lesson", "too many arguments");
		return KV_EXIT_USAGE;
	}
	l = kv_lesson_find(argv[optind]);
	if (!l) {
		kv_usage_error("lesson", "no lesson '%s' ('%s lesson' lists them)",
			       argv[optind], kv_prog);
		return KV_EXIT_USAGE;
	}
	/* Not 127.0.0.1: a loopback address names no RDMA device. */
	if (optind + 1 == argc) {
		kv_usage_error("lesson", "which device? give a local address of it (%s lesson %s ADDR)",
			       kv_prog, l->name);
		return KV_EXIT_USAGE;
	}
	return kv_lesson_run(l, argv[optind + 1], json, timeout_ns);
}
