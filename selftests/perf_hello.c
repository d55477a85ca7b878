// SPDX-License-Identifier: GPL-2.0
/*
 * perf_hello: send a kverbs perf server a hello it must refuse, with
 * rdma-core's librdmacm, and print what the server said.
 *
 *	perf_hello -a ADDR -p PORT [-V VERSION] [-m MAGIC] [-r] [-l LEN]
 *
 * The hello is a valid write_bw request of version 3 except for what the
 * options change: -V its version, -m its magic, -r a reserved byte set,
 * -l its length.  Prints "rejected: reason R value V version S" and exits
 * 0 when the server rejected it with a kverbs perf reason, 1 when it
 * accepted it, 2 on any other outcome.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

/* kernel/perf.h, as on the wire. */
struct kv_hello {
	uint16_t magic, version, test, flags;
	uint32_t msg_size, tx_depth;
	uint64_t iterations, duration_ns;
	uint8_t reserved[24];
};

struct kv_reject {
	uint16_t magic, version, reason, reserved0;
	uint32_t value, reserved1;
};

int main(int argc, char **argv)
{
	struct kv_hello h = {
		.magic = htole16(0x6b76),
		.version = htole16(3),
		.test = htole16(1),	/* write_bw */
		.msg_size = htole32(64),
		.tx_depth = htole32(16),
		.iterations = htole64(10),
	};
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = { .private_data = &h, .retry_count = 7 };
	const char *addr = NULL, *port = NULL;
	const struct kv_reject *rej;
	struct rdma_cm_id *id;
	int opt, len = sizeof(h);

	while ((opt = getopt(argc, argv, "a:p:V:m:rl:")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'V': h.version = htole16(atoi(optarg)); break;
		case 'm': h.magic = htole16(strtol(optarg, NULL, 0)); break;
		case 'r': h.reserved[23] = 1; break;
		case 'l': len = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!addr || !port || len < 0 || len > (int)sizeof(h))
		return 2;
	param.private_data_len = len;
	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		perror("rdma_getaddrinfo");
		return 2;
	}
	if (rdma_create_ep(&id, res, NULL, &qpa)) {
		perror("rdma_create_ep");
		return 2;
	}
	rdma_freeaddrinfo(res);
	/* Synchronous: the failed connect leaves its event in id->event. */
	if (!rdma_connect(id, &param)) {
		printf("accepted\n");
		rdma_disconnect(id);
		return 1;
	}
	if (errno != ECONNREFUSED || !id->event ||
	    id->event->event != RDMA_CM_EVENT_REJECTED ||
	    id->event->param.conn.private_data_len < sizeof(*rej)) {
		perror("rdma_connect: not a reject with private data");
		return 2;
	}
	rej = id->event->param.conn.private_data;
	if (le16toh(rej->magic) != 0x6b76) {
		printf("rejected without a kverbs perf reason\n");
		return 2;
	}
	printf("rejected: reason %u value %u version %u\n", le16toh(rej->reason),
	       le32toh(rej->value), le16toh(rej->version));
	return 0;
}
