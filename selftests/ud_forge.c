// SPDX-License-Identifier: GPL-2.0
/*
 * ud_forge: datagrams from a stranger's QP, written on rdma-core's
 * libibverbs, to see a kverbs UD test leave them alone.
 *
 *	ud_forge -d DEVICE -g GID_INDEX -q QPN[,QPN...] [-k QKEY] [-s SIZE]
 *		 [-n COUNT] [-i IMM] [-w MSEC]
 *
 * From a UD QP of its own on port 1 of DEVICE, sends COUNT datagrams
 * (1) of SIZE bytes (64), each byte 0xa5, as SENDs with immediate data
 * IMM (0), with Q_Key QKEY (0x01234567, rdma_cm's for its UDP port
 * space, which kverbs' UD tests use), to each QPN, at the address of
 * GID_INDEX of that port: a QP of the same device.  Its own QP number
 * is nobody's that a test expects.  With -w, it waits MSEC milliseconds
 * after each round of datagrams (one to each QPN), so that COUNT rounds
 * spread over a running test rather than arrive in one burst.
 *
 * Prints "sent N" and exits 0 once every SEND completed; 2 on any
 * failure, with the reason on stderr.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MAX_QPNS	8

static void die(const char *what, int err)
{
	fprintf(stderr, "ud_forge: %s: %s\n", what, strerror(err));
	exit(2);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list", errno);
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "ud_forge: no device %s\n", name);
		exit(2);
	}
	return ctx;
}

/* A UD QP through INIT, RTR and RTS with @qkey. */
static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t qkey)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = qkey,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		die("ibv_create_qp", errno);
	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_QKEY);
	if (errno)
		die("INIT", errno);
	attr.qp_state = IBV_QPS_RTR;
	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (errno)
		die("RTR", errno);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (errno)
		die("RTS", errno);
	return qp;
}

/* Wait at most 10 s for one send completion, which must succeed. */
static void reap(struct ibv_cq *cq)
{
	time_t end = time(NULL) + 10;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
		if (time(NULL) > end) {
			fprintf(stderr, "ud_forge: no send completion within 10 s\n");
			exit(2);
		}
		usleep(100);
	}
	if (n < 0)
		die("ibv_poll_cq", -n);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "ud_forge: send completed with %s\n", ibv_wc_status_str(wc.status));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	unsigned long size = 64, count = 1, imm = 0, qkey = 0x01234567, gid_index = ~0UL;
	uint32_t qpns[MAX_QPNS];
	const char *dev = NULL;
	unsigned int nqpn = 0, q;
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	unsigned long i, sent = 0, wait_ms = 0;
	char *buf, *tok, *end;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:q:k:s:n:i:w:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gid_index = strtoul(optarg, NULL, 0);
			break;
		case 'q':
			for (tok = strtok(optarg, ","); tok && nqpn < MAX_QPNS;
			     tok = strtok(NULL, ",")) {
				qpns[nqpn++] = strtoul(tok, &end, 0);
				if (*end)
					goto usage;
			}
			break;
		case 'k':
			qkey = strtoul(optarg, NULL, 0);
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			imm = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			wait_ms = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (!dev || gid_index == ~0UL || !nqpn || !size || size > 1 << 20)
		goto usage;

	ctx = open_device(dev);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq", errno);
	qp = ud_qp(pd, cq, qkey);
	buf = malloc(size);
	if (!buf)
		die("malloc", errno);
	memset(buf, 0xa5, size);
	mr = ibv_reg_mr(pd, buf, size, 0);
	if (!mr)
		die("ibv_reg_mr", errno);
	errno = ibv_query_gid(ctx, 1, gid_index, &ah_attr.grh.dgid);
	if (errno)
		die("ibv_query_gid", errno);
	ah_attr.grh.sgid_index = gid_index;
	ah_attr.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah)
		die("ibv_create_ah", errno);

	for (i = 0; i < count; i++) {
		for (q = 0; q < nqpn; q++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)buf,
				.length = size,
				.lkey = mr->lkey,
			};
			struct ibv_send_wr wr = {
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IBV_WR_SEND_WITH_IMM,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = htobe32(imm),
				.wr.ud = { .ah = ah, .remote_qpn = qpns[q],
					   .remote_qkey = qkey },
			};
			struct ibv_send_wr *bad;

			errno = ibv_post_send(qp, &wr, &bad);
			if (errno)
				die("ibv_post_send", errno);
			reap(cq);
			sent++;
		}
		if (wait_ms && i + 1 < count) {
			struct timespec ts = {
				.tv_sec = wait_ms / 1000,
				.tv_nsec = (wait_ms % 1000) * 1000000,
			};

			nanosleep(&ts, NULL);
		}
	}
	printf("sent %lu\n", sent);
	ibv_destroy_ah(ah);
	ibv_dereg_mr(mr);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return 0;

usage:
	fprintf(stderr, "usage: ud_forge -d DEVICE -g GID_INDEX -q QPN[,QPN...] [-k QKEY] [-s SIZE] [-n COUNT] [-i IMM] [-w MSEC]\n");
	return 2;
}
