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

static const char *kv_yes_no(bool v)
{
	return v ? "yes" : "no";
}

/*
 * Inline data: ib_device_attr has no limit for it, in 6.1 as in 6.12;
 * the only number is ib_qp_cap.max_inline_data, what a driver grants
 * one QP when it is created.  Drivers derive it from the QP's shape
 * (send SGEs, WQE size), and many refuse a request over their maximum
 * rather than lower it, so a probe QP would answer only for the probe's
 * own shape, and ibv_devinfo does not show it either.  kverbs says it is
 * not known: a test that wants inline data asks for it when it creates
 * its QP and uses what it was granted.
 */
#define KV_INLINE_UNKNOWN "inline data not known without a QP"

static void kv_devices_print_caps(FILE *f, const struct kverbs_device_info *dev)
{
	fprintf(f, "    SRQ %s", kv_yes_no(dev->max_srq));
	if (dev->max_srq)
		fprintf(f, " (max_srq %u, max_srq_wr %u, max_srq_sge %u)",
			dev->max_srq, dev->max_srq_wr, dev->max_srq_sge);
	fprintf(f, ", masked atomics %s\n",
		kv_atomic_cap_str(dev->masked_atomic_cap));
	fprintf(f, "    local invalidate %s, SEND with invalidate %s, %s\n",
		kv_yes_no(dev->cap_flags & KVERBS_DEVICE_CAP_LOCAL_INV),
		kv_yes_no(dev->cap_flags & KVERBS_DEVICE_CAP_SEND_INV),
		KV_INLINE_UNKNOWN);
}

/**
 * kv_devices_print_text - kverbs devices' text output
 * @f: where to
 * @d: the devices and ports, as KVERBS_IOC_DEVICES gave them
 * @caps: the module has KVERBS_FEATURE_DEVICE_CAPS; without it the
 *	capabilities are said to be unknown instead of shown as absent
 */
void kv_devices_print_text(FILE *f, const struct kv_devices *d, bool caps)
{
	uint32_t i, p;
	char a[16], b[16];

	if (!d->ndevs) {
		fprintf(f, "no RDMA devices\n");
		return;
	}
	for (i = 0; i < d->ndevs; i++) {
		const struct kverbs_device_info *dev = &d->devs[i];

		fprintf(f, "%s: %s, %s transport, node GUID %016" PRIx64 "\n",
			dev->name, kv_node_type_str(dev->node_type),
			kv_transport_str(dev->transport), (uint64_t)dev->node_guid);
		fprintf(f, "    max_qp %u, max_qp_wr %u, max_cqe %u\n",
			dev->max_qp, dev->max_qp_wr, dev->max_cqe);
		fprintf(f, "    max_sge %u send, %u recv, %u RDMA READ; max_qp_rd_atom %u, max_qp_init_rd_atom %u\n",
			dev->max_send_sge, dev->max_recv_sge, dev->max_sge_rd,
			dev->max_qp_rd_atom, dev->max_qp_init_rd_atom);
		fprintf(f, "    max_mr_size 0x%" PRIx64 ", fast registration %s",
			(uint64_t)dev->max_mr_size,
			kv_yes_no(dev->cap_flags & KVERBS_DEVICE_CAP_FAST_REG));
		if (dev->cap_flags & KVERBS_DEVICE_CAP_FAST_REG)
			fprintf(f, " (%u pages per MR)", dev->max_fast_reg_page_list_len);
		fprintf(f, ", atomics %s\n", kv_atomic_cap_str(dev->atomic_cap));
		if (caps)
			kv_devices_print_caps(f, dev);
		else
			fprintf(f, "    SRQ, UD, immediate data, invalidation: unknown, the kverbs module loaded is older than this tool\n");
		for (p = dev->first_port; p < dev->first_port + dev->port_count &&
		     p < d->nports; p++) {
			const struct kverbs_port_info *port = &d->ports[p];

			fprintf(f, "    port %u: %s (%s), link layer %s, MTU %s (max %s), %u GIDs\n",
				port->port_num, kv_port_state_str(port->state),
				kv_phys_state_str(port->phys_state),
				kv_link_layer_str(port->link_layer),
				kv_mtu_str(port->active_mtu, a, sizeof(a)),
				kv_mtu_str(port->max_mtu, b, sizeof(b)),
				port->gid_tbl_len);
			if (caps)
				fprintf(f, "        UD %s, immediate data %s, rdma_rw READ with invalidate %s\n",
					kv_yes_no(port->cap_flags & KVERBS_PORT_CAP_UD),
					kv_yes_no(port->cap_flags & KVERBS_PORT_CAP_IMM),
					kv_yes_no(port->cap_flags & KVERBS_PORT_CAP_READ_INV));
		}
	}
}

/* A capability as JSON: true or false, or null when the module does not say. */
static void kv_json_cap(struct kv_json *j, const char *key, bool caps, bool v)
{
	kv_json_key(j, key);
	if (caps)
		kv_json_bool(j, v);
	else
		kv_json_null(j);
}

/* A limit as JSON, or null when the module does not say. */
static void kv_json_limit(struct kv_json *j, const char *key, bool caps,
			  uint64_t v)
{
	kv_json_key(j, key);
	if (caps)
		kv_json_u64(j, v);
	else
		kv_json_null(j);
}

/**
 * kv_devices_print_json - kverbs devices --json
 * @f: where to
 * @d: the devices and ports, as KVERBS_IOC_DEVICES gave them
 * @caps: as for kv_devices_print_text(); without it every capability
 *	the module does not report is null
 */
void kv_devices_print_json(FILE *f, const struct kv_devices *d, bool caps)
{
	struct kv_json j;
	uint32_t i, p;
	char guid[17];

	kv_json_init(&j, f);
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
		kv_json_key(&j, "masked_atomic_cap");
		if (caps)
			kv_json_string(&j, kv_atomic_cap_str(dev->masked_atomic_cap));
		else
			kv_json_null(&j);
		kv_json_cap(&j, "srq", caps, dev->max_srq);
		kv_json_limit(&j, "max_srq", caps, dev->max_srq);
		kv_json_limit(&j, "max_srq_wr", caps, dev->max_srq_wr);
		kv_json_limit(&j, "max_srq_sge", caps, dev->max_srq_sge);
		kv_json_cap(&j, "local_inv", caps,
			    dev->cap_flags & KVERBS_DEVICE_CAP_LOCAL_INV);
		kv_json_cap(&j, "send_with_inv", caps,
			    dev->cap_flags & KVERBS_DEVICE_CAP_SEND_INV);
		/* Not known without a QP: see KV_INLINE_UNKNOWN. */
		kv_json_key(&j, "max_inline_data");
		kv_json_null(&j);
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
			kv_json_cap(&j, "ud", caps, port->cap_flags & KVERBS_PORT_CAP_UD);
			kv_json_cap(&j, "immediate", caps,
				    port->cap_flags & KVERBS_PORT_CAP_IMM);
			kv_json_cap(&j, "read_with_inv", caps,
				    port->cap_flags & KVERBS_PORT_CAP_READ_INV);
			kv_json_end_object(&j);
		}
		kv_json_end_array(&j);
		kv_json_end_object(&j);
	}
	kv_json_end_array(&j);
	kv_json_end_object(&j);
	kv_json_end(&j);
}

/* What devices' options set. */
struct kv_devices_opts {
	bool json;
};

static const struct kv_opt kv_devices_options[] = {
	/*
	 * -j is --jobs in ping and serve; JSON is --json, long only, in every
	 * other command.  Here -j still works, for scripts written when it
	 * meant --json: devices has no jobs.
	 */
	{
		.name = "json", .key = 'j', .flag = KV_FLAG(struct kv_devices_opts, json),
		.help = "one JSON document instead of text; -j is its older\n"
			"               spelling, kept in this command only (elsewhere -j is\n"
			"               --jobs)",
		.usage = "[--json]",
	},
	{ .name = "help", .key = 'h', .help = "this help", .usage = "" },
};

static void kv_devices_usage(FILE *f, const struct kv_cmdline *cl)
{
	kv_cmdline_synopsis(f, cl, NULL, NULL);
	fprintf(f,
		"\n"
		"List the RDMA devices the kverbs module sees, with their ports, the\n"
		"limits that matter to kernel verbs, and the verbs each supports: SRQ,\n"
		"UD, immediate data, invalidation, atomics.\n"
		"\n");
	kv_cmdline_help(f, cl);
}

int kv_cmd_devices(int argc, char **argv)
{
	struct kv_devices_opts o = { .json = false };
	struct kv_cmdline cl = {
		.cmd = "devices", .opts = kv_devices_options,
		.nopts = KV_ARRAY_SIZE(kv_devices_options), .flags = &o,
		.usage = kv_devices_usage, .help_col = 15,
	};
	struct kv_devices d = {};
	bool caps;
	int fd, ret;

	ret = kv_cmdline_parse(&cl, argc, argv);
	if (ret)
		return ret > 0 ? KV_EXIT_OK : KV_EXIT_USAGE;
	if (optind < argc) {
		kv_usage_error("devices", "unexpected argument '%s'", argv[optind]);
		return KV_EXIT_USAGE;
	}

	fd = kv_open();
	if (fd < 0)
		return KV_EXIT_ENV;
	caps = kv_features(fd) & KVERBS_FEATURE_DEVICE_CAPS;
	ret = kv_devices_query(fd, &d);
	close(fd);
	if (ret) {
		fprintf(stderr, "%s devices: cannot list devices: %s\n", kv_prog,
			strerror(-ret));
		free(d.devs);
		free(d.ports);
		return KV_EXIT_FAILED;
	}
	if (o.json)
		kv_devices_print_json(stdout, &d, caps);
	else
		kv_devices_print_text(stdout, &d, caps);
	free(d.devs);
	free(d.ports);
	return KV_EXIT_OK;
}
