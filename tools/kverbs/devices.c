// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs devices: the RDMA devices the module sees.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kverbs.h"

struct kv_devices {
	struct kverbs_device_info *devs;
	struct kverbs_port_info *ports;
	uint32_t ndevs;
	uint32_t nports;
};

static void devices_usage(FILE *f)
{
	fprintf(f,
		"usage: %s devices [--json]\n"
		"\n"
		"List the RDMA devices the kverbs module sees, with their ports and\n"
		"the limits that matter to kernel verbs.\n"
		"\n"
		"      --json   one JSON document instead of text\n"
		"  -h, --help   this help\n",
		kv_prog);
}

/* Ask with a guess, and again with what the kernel says it needs. */
static int kv_devices_query(int fd, struct kv_devices *d)
{
	uint32_t dcap = 4, pcap = 8;
	int ret, tries;

	for (tries = 0; tries < 5; tries++) {
		struct kverbs_devices cmd = {
			.size = sizeof(cmd),
			.device_entry_size = sizeof(*d->devs),
			.port_entry_size = sizeof(*d->ports),
			.device_capacity = dcap,
			.port_capacity = pcap,
		};

		free(d->devs);
		free(d->ports);
		d->devs = calloc(dcap, sizeof(*d->devs));
		d->ports = calloc(pcap, sizeof(*d->ports));
		if (!d->devs || !d->ports)
			return -ENOMEM;
		cmd.devices = (uintptr_t)d->devs;
		cmd.ports = (uintptr_t)d->ports;
		ret = kv_ioctl(fd, KVERBS_IOC_DEVICES, &cmd);
		if (ret == -ENOSPC) {
			/* Devices come and go: leave some room this time. */
			dcap = cmd.device_count + 2;
			pcap = cmd.port_count + 4;
			continue;
		}
		d->ndevs = cmd.device_count;
		d->nports = cmd.port_count;
		return ret;
	}
	return -EAGAIN;
}

static const char *kv_mtu_str(uint32_t mtu, char *buf, size_t len)
{
	if (mtu)
		snprintf(buf, len, "%u", mtu);
	else
		snprintf(buf, len, "none");
	return buf;
}

/**
 * kv_devices_max_mr - the largest buffer every RDMA device here registers
 * @fd: /dev/kverbs
 *
 * With one fast-registration MR: the kernel's limit, the smaller of the
 * device's page list length times the page size and its max_mr_size.
 * Returns it in bytes, or 0 when there is no device or the query failed.
 */
uint64_t kv_devices_max_mr(int fd)
{
	struct kv_devices d = { 0 };
	uint64_t page = sysconf(_SC_PAGESIZE), max = 0, v;
	uint32_t i;

	if (!kv_devices_query(fd, &d)) {
		for (i = 0; i < d.ndevs; i++) {
			v = (uint64_t)d.devs[i].max_fast_reg_page_list_len * page;
			if (d.devs[i].max_mr_size && d.devs[i].max_mr_size < v)
				v = d.devs[i].max_mr_size;
			if (!max || v < max)
				max = v;
		}
	}
	free(d.devs);
	free(d.ports);
	return max;
}

static void kv_devices_print_text(const struct kv_devices *d)
{
	uint32_t i, p;
	char a[16], b[16];

	if (!d->ndevs) {
		printf("no RDMA devices\n");
		return;
	}
	for (i = 0; i < d->ndevs; i++) {
		const struct kverbs_device_info *dev = &d->devs[i];

		printf("%s: %s, %s transport, node GUID %016" PRIx64 "\n",
		       dev->name, kv_node_type_str(dev->node_type),
		       kv_transport_str(dev->transport), (uint64_t)dev->node_guid);
		printf("    max_qp %u, max_qp_wr %u, max_cqe %u\n",
		       dev->max_qp, dev->max_qp_wr, dev->max_cqe);
		printf("    max_sge %u send, %u recv, %u RDMA READ; max_qp_rd_atom %u, max_qp_init_rd_atom %u\n",
		       dev->max_send_sge, dev->max_recv_sge, dev->max_sge_rd,
		       dev->max_qp_rd_atom, dev->max_qp_init_rd_atom);
		printf("    max_mr_size 0x%" PRIx64 ", fast registration %s",
		       (uint64_t)dev->max_mr_size,
		       dev->cap_flags & KVERBS_DEVICE_CAP_FAST_REG ? "yes" : "no");
		if (dev->cap_flags & KVERBS_DEVICE_CAP_FAST_REG)
			printf(" (%u pages per MR)", dev->max_fast_reg_page_list_len);
		printf(", atomics %s\n", kv_atomic_cap_str(dev->atomic_cap));
		for (p = dev->first_port; p < dev->first_port + dev->port_count &&
		     p < d->nports; p++) {
			const struct kverbs_port_info *port = &d->ports[p];

			printf("    port %u: %s (%s), link layer %s, MTU %s (max %s), %u GIDs\n",
			       port->port_num, kv_port_state_str(port->state),
			       kv_phys_state_str(port->phys_state),
			       kv_link_layer_str(port->link_layer),
			       kv_mtu_str(port->active_mtu, a, sizeof(a)),
			       kv_mtu_str(port->max_mtu, b, sizeof(b)),
			       port->gid_tbl_len);
		}
	}
}

static void kv_devices_print_json(const struct kv_devices *d)
{
	struct kv_json j;
	uint32_t i, p;
	char guid[17];

	kv_json_init(&j, stdout);
	kv_json_begin_object(&j);
	kv_json_key(&j, "devices");
	kv_json_begin_array(&j);
	for (i = 0; i < d->ndevs; i++) {
		const struct kverbs_device_info *dev = &d->devs[i];

		kv_json_begin_object(&j);
		kv_json_key(&j, "name");
		kv_json_string(&j, dev->name);
		snprintf(guid, sizeof(guid), "%016" PRIx64, (uint64_t)dev->node_guid);
		kv_json_key(&j, "node_guid");
		kv_json_string(&j, guid);
		kv_json_key(&j, "node_type");
		kv_json_string(&j, kv_node_type_str(dev->node_type));
		kv_json_key(&j, "transport");
		kv_json_string(&j, kv_transport_str(dev->transport));
		kv_json_key(&j, "max_qp");
		kv_json_u64(&j, dev->max_qp);
		kv_json_key(&j, "max_qp_wr");
		kv_json_u64(&j, dev->max_qp_wr);
		kv_json_key(&j, "max_cqe");
		kv_json_u64(&j, dev->max_cqe);
		kv_json_key(&j, "max_send_sge");
		kv_json_u64(&j, dev->max_send_sge);
		kv_json_key(&j, "max_recv_sge");
		kv_json_u64(&j, dev->max_recv_sge);
		kv_json_key(&j, "max_sge_rd");
		kv_json_u64(&j, dev->max_sge_rd);
		kv_json_key(&j, "max_qp_rd_atom");
		kv_json_u64(&j, dev->max_qp_rd_atom);
		kv_json_key(&j, "max_qp_init_rd_atom");
		kv_json_u64(&j, dev->max_qp_init_rd_atom);
		kv_json_key(&j, "max_mr_size");
		kv_json_u64(&j, dev->max_mr_size);
		kv_json_key(&j, "fast_reg");
		kv_json_bool(&j, dev->cap_flags & KVERBS_DEVICE_CAP_FAST_REG);
		kv_json_key(&j, "max_fast_reg_page_list_len");
		kv_json_u64(&j, dev->max_fast_reg_page_list_len);
		kv_json_key(&j, "sg_gaps_reg");
		kv_json_bool(&j, dev->cap_flags & KVERBS_DEVICE_CAP_SG_GAPS_REG);
		kv_json_key(&j, "atomic_write");
		kv_json_bool(&j, dev->cap_flags & KVERBS_DEVICE_CAP_ATOMIC_WRITE);
		kv_json_key(&j, "flush");
		kv_json_bool(&j, dev->cap_flags & KVERBS_DEVICE_CAP_FLUSH);
		kv_json_key(&j, "atomic_cap");
		kv_json_string(&j, kv_atomic_cap_str(dev->atomic_cap));
		kv_json_key(&j, "ports");
		kv_json_begin_array(&j);
		for (p = dev->first_port; p < dev->first_port + dev->port_count &&
		     p < d->nports; p++) {
			const struct kverbs_port_info *port = &d->ports[p];

			kv_json_begin_object(&j);
			kv_json_key(&j, "port");
			kv_json_u64(&j, port->port_num);
			kv_json_key(&j, "state");
			kv_json_string(&j, kv_port_state_str(port->state));
			kv_json_key(&j, "phys_state");
			kv_json_string(&j, kv_phys_state_str(port->phys_state));
			kv_json_key(&j, "link_layer");
			kv_json_string(&j, kv_link_layer_str(port->link_layer));
			kv_json_key(&j, "active_mtu");
			kv_json_u64(&j, port->active_mtu);
			kv_json_key(&j, "max_mtu");
			kv_json_u64(&j, port->max_mtu);
			kv_json_key(&j, "gid_tbl_len");
			kv_json_u64(&j, port->gid_tbl_len);
			kv_json_end_object(&j);
		}
		kv_json_end_array(&j);
		kv_json_end_object(&j);
	}
	kv_json_end_array(&j);
	kv_json_end_object(&j);
	kv_json_end(&j);
}

int kv_cmd_devices(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kv_devices d = {};
	bool json = false;
	char buf[8];
	int opt, fd, ret;

	/*
	 * -j is --jobs in ping and serve; JSON is --json, long only, in every
	 * command.  Here -j still works, undocumented but for the man page,
	 * for scripts written when it meant --json: devices has no jobs.
	 */
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'h':
			devices_usage(stdout);
			return KV_EXIT_OK;
		default:
			kv_usage_error("devices", "unknown option '%s'",
				       kv_bad_option(argv, "jh", buf, sizeof(buf)));
			return KV_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		kv_usage_error("devices", "unexpected argument '%s'", argv[optind]);
		return KV_EXIT_USAGE;
	}

	fd = kv_open();
	if (fd < 0)
		return KV_EXIT_ENV;
	ret = kv_devices_query(fd, &d);
	close(fd);
	if (ret) {
		fprintf(stderr, "%s devices: cannot list devices: %s\n", kv_prog,
			strerror(-ret));
		free(d.devs);
		free(d.ports);
		return KV_EXIT_FAILED;
	}
	if (json)
		kv_devices_print_json(&d);
	else
		kv_devices_print_text(&d);
	free(d.devs);
	free(d.ports);
	return KV_EXIT_OK;
}
