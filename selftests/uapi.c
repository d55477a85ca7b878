// SPDX-License-Identifier: GPL-2.0
/*
 * uapi: the /dev/kverbs ioctl contract of include/uapi/kverbs.h, checked
 * one call at a time for the exact errno (or output) each input must get.
 *
 * For each of KVERBS_IOC_INFO, _DEVICES, _PING, _PERF and _LISTEN (the
 * kverbs_cmd fixture, one variant per command): the @size rules
 * (cmd_length: too small, the first version's size, larger with a zero
 * tail, larger with a non-zero one), unknown @flags bits, arguments that
 * cannot be read or written, and the ioctl number with direction and
 * size bits.  Unknown ioctl numbers.  What INFO and DEVICES report, also
 * into entries larger than the kernel's.  Every argument check of PING
 * and PERF (those they share: the kverbs_test_cmd fixture), and, over
 * the guest's soft-RoCE device, a refused connection, a ping with a
 * payload log and a ping whose log the kernel cannot write, and a perf
 * client that nobody answers.  A samples array longer than the pin
 * limits, in entries whose byte count a 32-bit size_t wraps; a log and
 * samples in shared memory (memfd, tmpfs file, shared anonymous), which
 * the module refuses, beside private memory, which it takes.
 *
 * Written on kselftest_harness.h, which selftests/Makefile takes from
 * Debian's linux-source-6.12 at build time.  Each test runs in a process
 * of its own, with /dev/kverbs opened by its fixture.
 *
 * Runs as root in a guest where selftests/run.sh brought up $KV_DEV on
 * $KV_ADDR and loaded the module.  Without /dev/kverbs every test skips.
 */
#include "kvlib.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <uapi/kverbs.h>

#include "kselftest_harness.h"
#include "kvharness.h"

/*
 * Ports 17400-17499 are this program's, so that the shell tests' servers
 * never answer for ours.  Arguments that must fail their checks aim at a
 * port nobody listens on: if the kernel wrongly accepted one, the ping
 * would be refused at once instead of hanging.
 */
#define KV_PORT_NO_LISTENER	17401
#define KV_PORT_PING_LOG	17402
#define KV_PORT_BAD_ARGS	17499
#define KV_PORT_LISTEN		17404

#define KV_ONE_HOUR_NS		(3600ULL * 1000000000ULL)
#define KV_MAX_LOG_BYTES	(64U << 20)

/* enum rdma_cm_event_type in the kernel's rdma/rdma_cm.h. */
#define KV_RDMA_CM_EVENT_REJECTED	8

/* Larger than any struct we pass, with room for a 64-byte tail. */
#define KV_MAX(a, b)	((a) > (b) ? (a) : (b))
#define KV_ARG_MAX	(KV_MAX(KV_MAX(sizeof(struct kverbs_perf), sizeof(struct kverbs_ping)), \
				sizeof(struct kverbs_lesson)) + 64)

/* ------------------------------------------------------------------ */
/* The device, the environment, memory that faults                     */
/* ------------------------------------------------------------------ */

FIXTURE(kverbs) {
	int fd;
};

FIXTURE_SETUP(kverbs)
{
	kv_open(_metadata, &self->fd);
}

FIXTURE_TEARDOWN(kverbs)
{
	kv_close(self->fd);
}

static int kv_all_bytes(const void *buf, size_t len, unsigned char byte)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != byte)
			return 0;
	return 1;
}

/*
 * Three adjacent pages: one readable and writable, one PROT_NONE, one
 * read-only.  An argument placed to end at the PROT_NONE page is
 * readable only up to there; one in the last page cannot be written.
 */
static struct {
	long page;
	char *rw;
	char *none;
	char *ro;
} kv_mem;

static void kv_mem_init(void)
{
	char *p;

	if (kv_mem.rw)
		return;
	kv_mem.page = sysconf(_SC_PAGESIZE);
	p = mmap(NULL, 3 * kv_mem.page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KV_ASSERT_TRUE(p != MAP_FAILED);
	KV_ASSERT_OK(mprotect(p + kv_mem.page, kv_mem.page, PROT_NONE));
	KV_ASSERT_OK(mprotect(p + 2 * kv_mem.page, kv_mem.page, PROT_READ));
	kv_mem.rw = p;
	kv_mem.none = p + kv_mem.page;
	kv_mem.ro = p + 2 * kv_mem.page;
}

/* A page that can be neither read nor written. */
static void *kv_unmapped(void)
{
	kv_mem_init();
	return kv_mem.none;
}

/* Where @len bytes must start so that they end where the PROT_NONE page begins. */
static void *kv_before_unmapped(size_t len)
{
	kv_mem_init();
	return kv_mem.none - len;
}

/* A read-only copy of @len bytes of @src. */
static void *kv_readonly_copy(const void *src, size_t len)
{
	kv_mem_init();
	KV_ASSERT_OK(mprotect(kv_mem.ro, kv_mem.page, PROT_READ | PROT_WRITE));
	memcpy(kv_mem.ro, src, len);
	KV_ASSERT_OK(mprotect(kv_mem.ro, kv_mem.page, PROT_READ));
	return kv_mem.ro;
}

/* A parameter of the module's. */
static unsigned long long kv_param(const char *param)
{
	unsigned long long v;
	char path[128];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/module/kverbs/parameters/%s", param);
	f = fopen(path, "r");
	if (!f)
		KV_FAIL_AT(1, "%s: %s", path, strerror(errno));
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		KV_FAIL_AT(1, "%s: not a number", path);
	return v;
}

static unsigned int kv_max_msg_size(void)
{
	unsigned long long v = kv_param("max_msg_size");

	/* Nothing would be above the limit: no EMSGSIZE to provoke. */
	if (v >= UINT32_MAX)
		kv_skip("max_msg_size is the largest __u32");
	return v;
}

/* ------------------------------------------------------------------ */
/* Checks every command shares                                          */
/* ------------------------------------------------------------------ */

/**
 * struct kv_cmd - one command, for the checks every command shares
 * @ioc: its ioctl number
 * @nr: the command number within it
 * @size: sizeof its struct as this uAPI header has it
 * @min_size: the smallest the kernel takes: the struct of the command's
 *	first version, where fields were added since (0: @size)
 * @fill: writes into a zeroed buffer an argument that passes the size
 *	checks and then gets @expect
 * @expect: 0 if the filled argument succeeds, else the errno it gets
 * @no_output: the command writes nothing back: a read-only argument is
 *	no fault
 */
struct kv_cmd {
	unsigned long ioc;
	unsigned int nr;
	size_t size;
	size_t min_size;
	void (*fill)(void *arg);
	int expect;
	bool no_output;
};

static size_t kv_cmd_min_size(const struct kv_cmd *c)
{
	return c->min_size ?: c->size;
}

static long kv_ioctl(unsigned long ioc, void *arg)
{
	return ioctl(kv_fd, ioc, arg);
}

/* An aligned buffer for an argument and a tail behind it. */
static union {
	__u64 align;
	unsigned char b[KV_ARG_MAX];
} kv_arg;

/* Fill kv_arg.b with @c's argument, claiming @size bytes; the rest stays zero. */
static void *kv_cmd_arg(const struct kv_cmd *c, __u32 size)
{
	memset(&kv_arg, 0, sizeof(kv_arg));
	c->fill(kv_arg.b);
	memcpy(kv_arg.b, &size, sizeof(size));
	return kv_arg.b;
}

/* Each test of this fixture runs once for each command: its variants. */
FIXTURE(kverbs_cmd) {
	int fd;
};

FIXTURE_VARIANT(kverbs_cmd) {
	const struct kv_cmd *cmd;
};

FIXTURE_SETUP(kverbs_cmd)
{
	kv_open(_metadata, &self->fd);
}

FIXTURE_TEARDOWN(kverbs_cmd)
{
	kv_close(self->fd);
}

static void kv_cmd_call(struct __test_metadata *_metadata,
			const struct kv_cmd *c, void *arg, int err)
{
	if (err)
		EXPECT_ERRNO(err, kv_ioctl(c->ioc, arg));
	else
		EXPECT_OK(kv_ioctl(c->ioc, arg));
}

/*
 * The @size rules of include/uapi/kverbs.h, at their edges: one byte
 * short of the first version's struct is refused; that struct, and this
 * header's, are taken; a larger one is the same call if its tail is
 * zero (and the kernel writes nothing there), -E2BIG if it is not.
 */
TEST_F(kverbs_cmd, cmd_length)
{
	const struct kv_cmd *c = variant->cmd;
	unsigned char *arg;

	EXPECT_ERRNO(EINVAL, kv_ioctl(c->ioc, kv_cmd_arg(c, kv_cmd_min_size(c) - 1)));
	kv_cmd_call(_metadata, c, kv_cmd_arg(c, kv_cmd_min_size(c)), c->expect);
	kv_cmd_call(_metadata, c, kv_cmd_arg(c, c->size), c->expect);
	arg = kv_cmd_arg(c, c->size + 1);
	kv_cmd_call(_metadata, c, arg, c->expect);
	EXPECT_EQ(0, arg[c->size]);
	arg = kv_cmd_arg(c, c->size + 1);
	arg[c->size] = 0x80;
	EXPECT_ERRNO(E2BIG, kv_ioctl(c->ioc, arg));
}

TEST_F(kverbs_cmd, size_zero)
{
	const struct kv_cmd *c = variant->cmd;

	EXPECT_ERRNO(EINVAL, kv_ioctl(c->ioc, kv_cmd_arg(c, 0)));
}

TEST_F(kverbs_cmd, size_too_small)
{
	const struct kv_cmd *c = variant->cmd;

	EXPECT_ERRNO(EINVAL, kv_ioctl(c->ioc, kv_cmd_arg(c, kv_cmd_min_size(c) - 1)));
	/* Just the size field itself. */
	EXPECT_ERRNO(EINVAL, kv_ioctl(c->ioc, kv_cmd_arg(c, sizeof(__u32))));
}

/*
 * A newer caller's larger struct is accepted when the bytes the kernel
 * does not know are zero, and the kernel writes nothing into them.
 */
TEST_F(kverbs_cmd, larger_zero_tail)
{
	static const size_t extra[] = { 8, 64 };
	const struct kv_cmd *c = variant->cmd;
	unsigned char *arg;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(extra); i++) {
		arg = kv_cmd_arg(c, c->size + extra[i]);
		kv_cmd_call(_metadata, c, arg, c->expect);
		EXPECT_TRUE(kv_all_bytes(arg + c->size, extra[i], 0));
	}
}

/* Any non-zero byte the kernel does not know: -E2BIG. */
TEST_F(kverbs_cmd, nonzero_tail)
{
	static const struct {
		size_t extra, at;
	} cases[] = {
		{ 8, 7 },	/* the last byte of a small tail */
		{ 64, 0 },	/* the first byte of a large one */
		{ 64, 63 },	/* its last */
	};
	const struct kv_cmd *c = variant->cmd;
	unsigned char *arg;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		arg = kv_cmd_arg(c, c->size + cases[i].extra);
		arg[c->size + cases[i].at] = 0x01;
		EXPECT_ERRNO(E2BIG, kv_ioctl(c->ioc, arg));
	}
}

/* @flags is the second __u32 of every argument struct. */
TEST_F(kverbs_cmd, unknown_flag)
{
	const struct kv_cmd *c = variant->cmd;
	__u32 *arg = kv_cmd_arg(c, c->size);

	arg[1] |= 1U << 31;
	EXPECT_ERRNO(EINVAL, kv_ioctl(c->ioc, arg));
}

TEST_F(kverbs_cmd, null_arg)
{
	EXPECT_ERRNO(EFAULT, kv_ioctl(variant->cmd->ioc, NULL));
}

TEST_F(kverbs_cmd, unmapped_arg)
{
	EXPECT_ERRNO(EFAULT, kv_ioctl(variant->cmd->ioc, kv_unmapped()));
}

/* @size can be read, everything after it lies in the PROT_NONE page. */
TEST_F(kverbs_cmd, only_size_readable)
{
	__u32 *size = kv_before_unmapped(sizeof(__u32));

	*size = variant->cmd->size;
	EXPECT_ERRNO(EFAULT, kv_ioctl(variant->cmd->ioc, size));
}

/*
 * A valid argument whose output cannot be written back; a command
 * without output reads it as well as any.
 */
TEST_F(kverbs_cmd, readonly_arg)
{
	const struct kv_cmd *c = variant->cmd;
	void *arg = kv_readonly_copy(kv_cmd_arg(c, c->size), c->size);

	if (c->no_output)
		kv_cmd_call(_metadata, c, arg, c->expect);
	else
		EXPECT_ERRNO(EFAULT, kv_ioctl(c->ioc, arg));
}

/* The right command number, but with direction and size bits: not ours. */
TEST_F(kverbs_cmd, ioctl_with_dir_bits)
{
	const struct kv_cmd *c = variant->cmd;
	void *arg = kv_cmd_arg(c, c->size);

	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IOC(_IOC_READ | _IOC_WRITE, KVERBS_TYPE, c->nr,
					   c->size), arg));
	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IOC(_IOC_READ, KVERBS_TYPE, c->nr, c->size), arg));
	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IOC(_IOC_WRITE, KVERBS_TYPE, c->nr, c->size), arg));
	/* A size without a direction is not _IO() either. */
	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IOC(_IOC_NONE, KVERBS_TYPE, c->nr, c->size), arg));
}

/* ------------------------------------------------------------------ */
/* Unknown commands                                                     */
/* ------------------------------------------------------------------ */

/* A valid INFO argument, so that only the number can be wrong. */
static struct kverbs_info *kv_info_arg(void)
{
	static struct kverbs_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	return &info;
}

TEST_F(kverbs, ioctl_unknown_nr_above)
{
	/* The first number after the last command. */
	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IO(KVERBS_TYPE, KVERBS_CMD_LESSON + 1), kv_info_arg()));
	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IO(KVERBS_TYPE, 0xff), kv_info_arg()));
}

TEST_F(kverbs, ioctl_unknown_nr_below)
{
	/* 0x00-0x7f of type 'k' belong to others. */
	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IO(KVERBS_TYPE, 0x7f), kv_info_arg()));
	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IO(KVERBS_TYPE, 0x00), kv_info_arg()));
}

TEST_F(kverbs, ioctl_other_type)
{
	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IO('x', KVERBS_CMD_INFO), kv_info_arg()));
}

TEST_F(kverbs, ioctl_info_iowr)
{
	EXPECT_ERRNO(ENOTTY, kv_ioctl(_IOWR(KVERBS_TYPE, KVERBS_CMD_INFO,
					    struct kverbs_info), kv_info_arg()));
}

/* ------------------------------------------------------------------ */
/* KVERBS_IOC_INFO                                                      */
/* ------------------------------------------------------------------ */

static void kv_fill_info(void *arg)
{
	struct kverbs_info *info = arg;

	info->size = sizeof(*info);
}

static const struct kv_cmd kv_cmd_info = {
	.ioc = KVERBS_IOC_INFO,
	.nr = KVERBS_CMD_INFO,
	.size = sizeof(struct kverbs_info),
	.fill = kv_fill_info,
};

FIXTURE_VARIANT_ADD(kverbs_cmd, info) {
	.cmd = &kv_cmd_info,
};

TEST_F(kverbs, info_reports_module)
{
	struct kverbs_info info;
	const __u64 want = KVERBS_FEATURE_DEVICES | KVERBS_FEATURE_PING |
			   KVERBS_FEATURE_PING_LOG | KVERBS_FEATURE_PERF |
			   KVERBS_FEATURE_PERF_LAT | KVERBS_FEATURE_PERF_PINGPONG |
			   KVERBS_FEATURE_DEVICE_CAPS;

	/* Output fields' input values are ignored: make stale ones visible. */
	memset(&info, 0xff, sizeof(info));
	info.size = sizeof(info);
	info.flags = 0;
	info.__reserved = 0;
	ASSERT_OK(kv_ioctl(KVERBS_IOC_INFO, &info));
	EXPECT_EQ(KVERBS_ABI_VERSION, info.abi_version);
	EXPECT_EQ(want, info.features & want);
	ASSERT_TRUE(memchr(info.version, '\0', sizeof(info.version)) != NULL);
	EXPECT_TRUE(info.version[0] != '\0');
	/* Input fields are not written back changed. */
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_EQ(0, info.flags);
	EXPECT_EQ(0, info.__reserved);
	TH_LOG("kverbs %s, ABI %u, features 0x%llx", info.version,
		info.abi_version, (unsigned long long)info.features);
}

TEST_F(kverbs, info_reserved_nonzero)
{
	struct kverbs_info info = { .size = sizeof(info), .__reserved = 1 };

	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_INFO, &info));
	info.__reserved = 1U << 31;
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_INFO, &info));
}

TEST_F(kverbs, info_flags_nonzero)
{
	struct kverbs_info info = { .size = sizeof(info), .flags = 1 };

	/* INFO has no flags at all: even the lowest bit is unknown. */
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_INFO, &info));
}

/* The kernel knows sizeof(struct kverbs_info) bytes and leaves the rest alone. */
TEST_F(kverbs, info_larger_struct_tail_untouched)
{
	struct {
		struct kverbs_info info;
		unsigned char tail[64];
	} arg;

	memset(&arg, 0, sizeof(arg));
	arg.info.size = sizeof(arg);
	ASSERT_OK(kv_ioctl(KVERBS_IOC_INFO, &arg));
	EXPECT_EQ(KVERBS_ABI_VERSION, arg.info.abi_version);
	EXPECT_TRUE(memchr(arg.info.version, '\0', sizeof(arg.info.version)) != NULL);
	EXPECT_TRUE(kv_all_bytes(arg.tail, sizeof(arg.tail), 0));
}

/* ------------------------------------------------------------------ */
/* KVERBS_IOC_DEVICES                                                   */
/* ------------------------------------------------------------------ */

#define KV_DEVS_MAX	32
#define KV_PORTS_MAX	128

static struct kverbs_device_info kv_devs[KV_DEVS_MAX];
static struct kverbs_port_info kv_ports[KV_PORTS_MAX];

/* A complete query into arrays far larger than a test guest needs. */
static void kv_fill_devices(void *arg)
{
	struct kverbs_devices *d = arg;

	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->device_entry_size = sizeof(struct kverbs_device_info);
	d->port_entry_size = sizeof(struct kverbs_port_info);
	d->device_capacity = KV_DEVS_MAX;
	d->port_capacity = KV_PORTS_MAX;
	d->devices = (uintptr_t)kv_devs;
	d->ports = (uintptr_t)kv_ports;
}

static const struct kv_cmd kv_cmd_devices = {
	.ioc = KVERBS_IOC_DEVICES,
	.nr = KVERBS_CMD_DEVICES,
	.size = sizeof(struct kverbs_devices),
	.fill = kv_fill_devices,
};

FIXTURE_VARIANT_ADD(kverbs_cmd, devices) {
	.cmd = &kv_cmd_devices,
};

/* Sizes only, no arrays: what the first call of a two-call query looks like. */
static struct kverbs_devices kv_devices_sizes(__u32 dsz, __u32 psz)
{
	struct kverbs_devices d = {
		.size = sizeof(d),
		.device_entry_size = dsz,
		.port_entry_size = psz,
	};

	return d;
}

/*
 * The first version's entries are the smallest taken: one byte less is
 * refused, whatever the other entry's size; they and every size up to
 * this header's pass the check (and the empty arrays are too small).
 */
TEST_F(kverbs, devices_entry_size_too_small)
{
	const __u32 dsz = KVERBS_DEVICE_INFO_SIZE_VER0;
	const __u32 psz = KVERBS_PORT_INFO_SIZE_VER0;
	struct kverbs_devices d;

	d = kv_devices_sizes(dsz - 1, psz);
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	d = kv_devices_sizes(dsz - 1, sizeof(struct kverbs_port_info));
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	d = kv_devices_sizes(0, psz);
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	d = kv_devices_sizes(dsz, psz - 1);
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	d = kv_devices_sizes(sizeof(struct kverbs_device_info), psz - 1);
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	d = kv_devices_sizes(dsz, 0);
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_DEVICES, &d));

	d = kv_devices_sizes(dsz, psz);
	EXPECT_ERRNO(ENOSPC, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	d = kv_devices_sizes(dsz + 1, psz + 1);
	EXPECT_ERRNO(ENOSPC, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	d = kv_devices_sizes(sizeof(struct kverbs_device_info) - 1,
			     sizeof(struct kverbs_port_info) - 1);
	EXPECT_ERRNO(ENOSPC, kv_ioctl(KVERBS_IOC_DEVICES, &d));
}

TEST_F(kverbs, devices_entry_size_too_large)
{
	const __u32 dsz = sizeof(struct kverbs_device_info);
	const __u32 psz = sizeof(struct kverbs_port_info);
	struct kverbs_devices d;

	d = kv_devices_sizes(4097, psz);
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	d = kv_devices_sizes(dsz, 4097);
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	d = kv_devices_sizes(UINT32_MAX, UINT32_MAX);
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	/* A page is still a size: it passes, and the empty arrays are too small. */
	d = kv_devices_sizes(4096, 4096);
	EXPECT_ERRNO(ENOSPC, kv_ioctl(KVERBS_IOC_DEVICES, &d));
}

TEST_F(kverbs, devices_count_only)
{
	struct kverbs_devices d = kv_devices_sizes(sizeof(struct kverbs_device_info),
						   sizeof(struct kverbs_port_info));

	d.device_count = d.port_count = 0xdeadbeef;
	ASSERT_ERRNO(ENOSPC, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	/* The guest has at least $KV_DEV, with one port. */
	EXPECT_GE(d.device_count, 1);
	EXPECT_GE(d.port_count, 1);
	EXPECT_TRUE(d.device_count != 0xdeadbeef && d.port_count != 0xdeadbeef);
	EXPECT_GE(d.port_count, d.device_count);
}

/* One array too small: -ENOSPC, the counts, and nothing written to either array. */
TEST_F(kverbs, devices_array_too_small)
{
	struct kverbs_devices d = kv_devices_sizes(sizeof(struct kverbs_device_info),
						   sizeof(struct kverbs_port_info));
	__u32 ndev, nport;

	ASSERT_ERRNO(ENOSPC, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	ndev = d.device_count;
	nport = d.port_count;
	ASSERT_TRUE(ndev >= 1 && ndev <= KV_DEVS_MAX && nport >= 1 && nport <= KV_PORTS_MAX);

	memset(kv_devs, 0xff, sizeof(kv_devs));
	memset(kv_ports, 0xff, sizeof(kv_ports));
	kv_fill_devices(&d);
	d.port_capacity = nport - 1;
	EXPECT_ERRNO(ENOSPC, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	EXPECT_EQ(ndev, d.device_count);
	EXPECT_EQ(nport, d.port_count);
	EXPECT_TRUE(kv_all_bytes(kv_devs, sizeof(kv_devs), 0xff));
	EXPECT_TRUE(kv_all_bytes(kv_ports, sizeof(kv_ports), 0xff));

	kv_fill_devices(&d);
	d.device_capacity = ndev - 1;
	EXPECT_ERRNO(ENOSPC, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	EXPECT_TRUE(kv_all_bytes(kv_devs, sizeof(kv_devs), 0xff));
	EXPECT_TRUE(kv_all_bytes(kv_ports, sizeof(kv_ports), 0xff));
}

TEST_F(kverbs, devices_null_array)
{
	struct kverbs_devices d;

	kv_fill_devices(&d);
	d.devices = 0;
	EXPECT_ERRNO(EFAULT, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	kv_fill_devices(&d);
	d.ports = 0;
	EXPECT_ERRNO(EFAULT, kv_ioctl(KVERBS_IOC_DEVICES, &d));
}

TEST_F(kverbs, devices_unmapped_array)
{
	struct kverbs_devices d;

	kv_fill_devices(&d);
	d.devices = (uintptr_t)kv_unmapped();
	EXPECT_ERRNO(EFAULT, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	kv_fill_devices(&d);
	d.ports = (uintptr_t)kv_unmapped();
	EXPECT_ERRNO(EFAULT, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	/* The first entry fits, the rest of the array would be in the hole. */
	kv_fill_devices(&d);
	d.devices = (uintptr_t)kv_before_unmapped(sizeof(struct kverbs_device_info) - 8);
	EXPECT_ERRNO(EFAULT, kv_ioctl(KVERBS_IOC_DEVICES, &d));
}

/**
 * struct kv_devlist - every device and port, in caller-sized entries
 * @cmd: the successful query
 * @devs: @cmd.device_count entries of @cmd.device_entry_size bytes, then
 *	one spare entry the kernel must not touch
 * @ports: likewise for ports
 */
struct kv_devlist {
	struct kverbs_devices cmd;
	unsigned char *devs;
	unsigned char *ports;
};

/*
 * Query the counts, then everything into arrays of @dsz and @psz-byte
 * entries filled with 0xff, one entry larger than needed.
 */
static void kv_devices_get(struct __test_metadata *_metadata,
			   struct kv_devlist *l, __u32 dsz, __u32 psz)
{
	struct kverbs_devices d = kv_devices_sizes(dsz, psz);

	memset(l, 0, sizeof(*l));
	ASSERT_ERRNO(ENOSPC, kv_ioctl(KVERBS_IOC_DEVICES, &d));
	ASSERT_GE(d.device_count, 1);
	ASSERT_GE(d.port_count, 1);

	d.device_capacity = d.device_count + 1;
	d.port_capacity = d.port_count + 1;
	l->devs = malloc((size_t)d.device_capacity * dsz);
	l->ports = malloc((size_t)d.port_capacity * psz);
	ASSERT_TRUE(l->devs && l->ports);
	memset(l->devs, 0xff, (size_t)d.device_capacity * dsz);
	memset(l->ports, 0xff, (size_t)d.port_capacity * psz);
	d.devices = (uintptr_t)l->devs;
	d.ports = (uintptr_t)l->ports;
	l->cmd = d;
	ASSERT_OK(kv_ioctl(KVERBS_IOC_DEVICES, &l->cmd));
	/* Nothing was added or removed between the two calls. */
	ASSERT_EQ(d.device_count, l->cmd.device_count);
	ASSERT_EQ(d.port_count, l->cmd.port_count);
}

static void kv_devlist_free(struct kv_devlist *l)
{
	free(l->devs);
	free(l->ports);
}

static size_t kv_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Entry @i, as much of it as the entries hold; the rest of the struct 0. */
static struct kverbs_device_info kv_devlist_dev(const struct kv_devlist *l, __u32 i)
{
	struct kverbs_device_info info = { 0 };

	memcpy(&info, l->devs + (size_t)i * l->cmd.device_entry_size,
	       kv_min(sizeof(info), l->cmd.device_entry_size));
	return info;
}

static struct kverbs_port_info kv_devlist_port(const struct kv_devlist *l, __u32 i)
{
	struct kverbs_port_info info = { 0 };

	memcpy(&info, l->ports + (size_t)i * l->cmd.port_entry_size,
	       kv_min(sizeof(info), l->cmd.port_entry_size));
	return info;
}

/* The entries hold this header's fields, the capabilities among them. */
static bool kv_devlist_has_caps(const struct kv_devlist *l)
{
	return l->cmd.device_entry_size >= sizeof(struct kverbs_device_info) &&
	       l->cmd.port_entry_size >= sizeof(struct kverbs_port_info);
}

/*
 * $KV_DEV's capabilities, as ib_core has them: rxe (RoCE) has SRQ, UD,
 * immediate data, both invalidations and atomics, and not READ with
 * invalidate, which ib_core grants iWARP only; siw (iWARP) the reverse
 * for the port's and no atomics.  devices.sh compares the numbers with
 * ibv_devinfo.
 */
static void kv_devlist_check_caps(struct __test_metadata *_metadata,
				  const struct kverbs_device_info *dev,
				  const struct kverbs_port_info *port)
{
	const bool iwarp = !strcmp(kv_env("KV_TYPE", "rxe"), "siw");
	const __u64 inv = KVERBS_DEVICE_CAP_LOCAL_INV | KVERBS_DEVICE_CAP_SEND_INV;

	EXPECT_GE(dev->max_srq, 1);
	EXPECT_GE(dev->max_srq_wr, 1);
	EXPECT_GE(dev->max_srq_sge, 1);
	EXPECT_EQ(inv, dev->cap_flags & inv);
	EXPECT_LE(dev->masked_atomic_cap, KVERBS_ATOMIC_GLOB);
	EXPECT_EQ(0, port->__reserved2);
	if (iwarp) {
		EXPECT_EQ(KVERBS_TRANSPORT_IWARP, dev->transport);
		EXPECT_EQ(KVERBS_PORT_CAP_READ_INV, port->cap_flags);
	} else {
		EXPECT_EQ(KVERBS_TRANSPORT_IB, dev->transport);
		EXPECT_NE(KVERBS_ATOMIC_NONE, dev->atomic_cap);
		EXPECT_EQ(KVERBS_PORT_CAP_UD | KVERBS_PORT_CAP_IMM, port->cap_flags);
	}
}

/*
 * The entries in @l parse, and $KV_DEV is there with an active port 1 of
 * an Ethernet link layer and the fast registration kverbs needs.
 */
static void kv_devlist_check(struct __test_metadata *_metadata,
			     const struct kv_devlist *l)
{
	const char *want = kv_env("KV_DEV", "rxe0");
	struct kverbs_device_info dev, ours = { 0 };
	struct kverbs_port_info port;
	__u32 i, found = 0, first = 0, nports = 0;
	int port1 = 0;

	for (i = 0; i < l->cmd.device_count; i++) {
		dev = kv_devlist_dev(l, i);
		EXPECT_TRUE(memchr(dev.name, '\0', sizeof(dev.name)) != NULL);
		EXPECT_GE(dev.port_count, 1);
		EXPECT_LE((__u64)dev.first_port + dev.port_count, l->cmd.port_count);
		if (!strncmp(dev.name, want, sizeof(dev.name))) {
			found++;
			ours = dev;
			first = dev.first_port;
			nports = dev.port_count;
			EXPECT_TRUE(dev.cap_flags & KVERBS_DEVICE_CAP_FAST_REG);
			EXPECT_GE(dev.max_fast_reg_page_list_len, 1);
			EXPECT_GE(dev.max_qp, 1);
		}
	}
	if (found != 1) {
		for (i = 0; i < l->cmd.device_count; i++)
			TH_LOG("device %u: %.64s", i, kv_devlist_dev(l, i).name);
		KV_FAIL_FATAL("device %s found %u times, expected once", want, found);
	}
	ASSERT_TRUE((__u64)first + nports <= l->cmd.port_count);

	for (i = 0; i < l->cmd.port_count; i++) {
		port = kv_devlist_port(l, i);
		EXPECT_GE(port.port_num, 1);
		EXPECT_EQ(0, port.__reserved0);
		EXPECT_EQ(0, port.__reserved1);
	}
	for (i = first; i < first + nports; i++) {
		port = kv_devlist_port(l, i);
		if (port.port_num != 1)
			continue;
		port1++;
		EXPECT_EQ(KVERBS_PORT_ACTIVE, port.state);
		EXPECT_EQ(KVERBS_LINK_LAYER_ETHERNET, port.link_layer);
		if (port.active_mtu != 256 && port.active_mtu != 512 &&
		    port.active_mtu != 1024 && port.active_mtu != 2048 &&
		    port.active_mtu != 4096)
			KV_FAIL("%s port 1: active_mtu %u is not an IB MTU",
				   want, port.active_mtu);
		EXPECT_GE(port.max_mtu, port.active_mtu);
		EXPECT_GE(port.gid_tbl_len, 1);
		if (kv_devlist_has_caps(l))
			kv_devlist_check_caps(_metadata, &ours, &port);
	}
	EXPECT_EQ(1, port1);
}

/*
 * Bytes of the caller's entries past the kernel's struct are zeroed, and
 * the spare entry after the last is left as it was (0xff).
 */
static void kv_devlist_check_padding(struct __test_metadata *_metadata,
				     const struct kv_devlist *l)
{
	const __u32 dsz = l->cmd.device_entry_size, psz = l->cmd.port_entry_size;
	const size_t dknown = kv_min(sizeof(struct kverbs_device_info), dsz);
	const size_t pknown = kv_min(sizeof(struct kverbs_port_info), psz);
	__u32 i;

	for (i = 0; i < l->cmd.device_count; i++)
		if (!kv_all_bytes(l->devs + (size_t)i * dsz + dknown, dsz - dknown, 0))
			KV_FAIL("device entry %u: bytes past %zu not zeroed", i, dknown);
	for (i = 0; i < l->cmd.port_count; i++)
		if (!kv_all_bytes(l->ports + (size_t)i * psz + pknown, psz - pknown, 0))
			KV_FAIL("port entry %u: bytes past %zu not zeroed", i, pknown);
	EXPECT_TRUE(kv_all_bytes(l->devs + (size_t)l->cmd.device_count * dsz, dsz, 0xff));
	EXPECT_TRUE(kv_all_bytes(l->ports + (size_t)l->cmd.port_count * psz, psz, 0xff));
}

TEST_F(kverbs, devices_find_kv_dev)
{
	struct kv_devlist l;

	kv_devices_get(_metadata, &l, sizeof(struct kverbs_device_info),
		       sizeof(struct kverbs_port_info));
	kv_devlist_check(_metadata, &l);
	kv_devlist_check_padding(_metadata, &l);
	kv_devlist_free(&l);
}

/* A newer caller's larger entries: the known fields still parse, the rest is zeroed. */
TEST_F(kverbs, devices_larger_entries)
{
	struct kv_devlist l;

	kv_devices_get(_metadata, &l, sizeof(struct kverbs_device_info) + 16,
		       sizeof(struct kverbs_port_info) + 8);
	kv_devlist_check(_metadata, &l);
	kv_devlist_check_padding(_metadata, &l);
	kv_devlist_free(&l);
}

/*
 * struct kverbs_device_info and kverbs_port_info as the first version of
 * this header has them, which a tool built then still uses.  Frozen:
 * this is the layout the module must keep serving.
 */
struct kv_device_info_v0 {
	char name[KVERBS_DEVICE_NAME_MAX];
	__aligned_u64 node_guid;
	__u32 node_type;
	__u32 transport;
	__u32 first_port;
	__u32 port_count;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 max_cqe;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_sge_rd;
	__u32 max_qp_rd_atom;
	__u32 max_qp_init_rd_atom;
	__aligned_u64 max_mr_size;
	__u32 max_fast_reg_page_list_len;
	__u32 atomic_cap;
	__aligned_u64 cap_flags;
};

struct kv_port_info_v0 {
	__u32 port_num;
	__u8 state;
	__u8 phys_state;
	__u8 link_layer;
	__u8 __reserved0;
	__u32 active_mtu;
	__u32 max_mtu;
	__u32 gid_tbl_len;
	__u32 __reserved1;
};

_Static_assert(sizeof(struct kv_device_info_v0) == KVERBS_DEVICE_INFO_SIZE_VER0,
	       "KVERBS_DEVICE_INFO_SIZE_VER0 is the first version's size");
_Static_assert(sizeof(struct kv_port_info_v0) == KVERBS_PORT_INFO_SIZE_VER0,
	       "KVERBS_PORT_INFO_SIZE_VER0 is the first version's size");

/*
 * A tool of the first version on this module: its entries get exactly
 * the bytes that this header's entries begin with (the fields did not
 * move), nothing is written past them, and $KV_DEV still parses.
 */
TEST_F(kverbs, devices_first_version_entries)
{
	struct kv_devlist old, cur;
	struct kv_device_info_v0 d0;
	struct kv_port_info_v0 p0;
	__u32 i;

	kv_devices_get(_metadata, &old, sizeof(d0), sizeof(p0));
	kv_devlist_check(_metadata, &old);
	kv_devlist_check_padding(_metadata, &old);
	kv_devices_get(_metadata, &cur, sizeof(struct kverbs_device_info),
		       sizeof(struct kverbs_port_info));
	ASSERT_EQ(old.cmd.device_count, cur.cmd.device_count);
	ASSERT_EQ(old.cmd.port_count, cur.cmd.port_count);
	for (i = 0; i < old.cmd.device_count; i++) {
		memcpy(&d0, old.devs + (size_t)i * sizeof(d0), sizeof(d0));
		if (memcmp(&d0, cur.devs + (size_t)i * cur.cmd.device_entry_size,
			   sizeof(d0)))
			KV_FAIL("device %u (%.64s): the first version's entry differs from the start of this one's",
				i, d0.name);
	}
	for (i = 0; i < old.cmd.port_count; i++) {
		memcpy(&p0, old.ports + (size_t)i * sizeof(p0), sizeof(p0));
		EXPECT_EQ(0, p0.__reserved1);
		if (memcmp(&p0, cur.ports + (size_t)i * cur.cmd.port_entry_size,
			   sizeof(p0)))
			KV_FAIL("port entry %u: the first version's entry differs from the start of this one's",
				i);
	}
	kv_devlist_free(&old);
	kv_devlist_free(&cur);
}

TEST_F(kverbs, devices_page_sized_entries)
{
	struct kv_devlist l;

	kv_devices_get(_metadata, &l, 4096, 4096);
	kv_devlist_check(_metadata, &l);
	kv_devlist_check_padding(_metadata, &l);
	kv_devlist_free(&l);
}

/* ------------------------------------------------------------------ */
/* What every test command (PING, PERF) checks alike                    */
/* ------------------------------------------------------------------ */

/*
 * The test commands take their time limit and addresses the same way
 * (kernel/core/test.c), and hand back a result that a rejected call zeroes.
 * These checks run on each of them through this description.
 */
struct kv_test_cmd {
	unsigned long ioc;
	void (*client)(void *arg);	/* valid client arguments */
	void (*server)(void *arg);	/* valid server arguments */
	size_t timeout_off;
	size_t addr_off;
	size_t src_off;
	size_t result_off;
	size_t result_len;
};

#define KV_TEST_CMD(_ioc, _struct, _client, _server) {			\
	.ioc = (_ioc),							\
	.client = (_client),						\
	.server = (_server),						\
	.timeout_off = offsetof(_struct, timeout_ns),			\
	.addr_off = offsetof(_struct, addr),				\
	.src_off = offsetof(_struct, src_addr),				\
	.result_off = offsetof(_struct, result),			\
	.result_len = sizeof(((_struct *)0)->result),			\
}

/* Large enough for the struct of any test command. */
union kv_test_args {
	struct kverbs_ping ping;
	struct kverbs_perf perf;
};

/*
 * @arg must fail with @err.  Whatever failed, the result part of the
 * caller's struct is written back: for a rejected argument, all zero.
 */
static void kv_rejected(struct __test_metadata *_metadata,
			const struct kv_test_cmd *c, void *arg, int err, int line)
{
	unsigned char *res = (unsigned char *)arg + c->result_off;
	int failed = kv_failed();

	memset(res, 0xff, c->result_len);
	EXPECT_ERRNO(err, kv_ioctl(c->ioc, arg));
	if (!kv_all_bytes(res, c->result_len, 0))
		KV_FAIL("result not zeroed after the call");
	if (kv_failed() && !failed)
		TH_LOG("(the case at line %d)", line);
}

#define KV_REJECTED(c, arg, err) kv_rejected(_metadata, c, arg, err, __LINE__)

/* Each test of this fixture runs for PING and for PERF: its variants. */
FIXTURE(kverbs_test_cmd) {
	int fd;
};

FIXTURE_VARIANT(kverbs_test_cmd) {
	const struct kv_test_cmd *cmd;
};

FIXTURE_SETUP(kverbs_test_cmd)
{
	kv_open(_metadata, &self->fd);
}

FIXTURE_TEARDOWN(kverbs_test_cmd)
{
	kv_close(self->fd);
}

static __u64 *kv_timeout_of(const struct kv_test_cmd *c, union kv_test_args *a)
{
	return (__u64 *)((unsigned char *)a + c->timeout_off);
}

static struct __kernel_sockaddr_storage *
kv_addr_of(const struct kv_test_cmd *c, union kv_test_args *a)
{
	return (void *)((unsigned char *)a + c->addr_off);
}

static struct __kernel_sockaddr_storage *
kv_src_of(const struct kv_test_cmd *c, union kv_test_args *a)
{
	return (void *)((unsigned char *)a + c->src_off);
}

TEST_F(kverbs_test_cmd, timeout_above_one_hour)
{
	const struct kv_test_cmd *c = variant->cmd;
	union kv_test_args a;

	c->client(&a);
	*kv_timeout_of(c, &a) = KV_ONE_HOUR_NS + 1;
	KV_REJECTED(c, &a, EINVAL);
	*kv_timeout_of(c, &a) = UINT64_MAX;
	KV_REJECTED(c, &a, EINVAL);
}

TEST_F(kverbs_test_cmd, addr_bad_family)
{
	const struct kv_test_cmd *c = variant->cmd;
	union kv_test_args a;

	c->client(&a);
	kv_addr_of(c, &a)->ss_family = AF_UNIX;
	KV_REJECTED(c, &a, EINVAL);
	/* No address at all. */
	memset(kv_addr_of(c, &a), 0, sizeof(struct __kernel_sockaddr_storage));
	KV_REJECTED(c, &a, EINVAL);
	/* An address and port, but family 0. */
	kv_sockaddr(kv_addr_of(c, &a), kv_addr(), KV_PORT_BAD_ARGS);
	kv_addr_of(c, &a)->ss_family = 0;
	KV_REJECTED(c, &a, EINVAL);
}

TEST_F(kverbs_test_cmd, addr_port_zero)
{
	const struct kv_test_cmd *c = variant->cmd;
	union kv_test_args a;

	c->client(&a);
	kv_sockaddr(kv_addr_of(c, &a), "10.209.0.1", 0);
	KV_REJECTED(c, &a, EINVAL);
	kv_sockaddr(kv_addr_of(c, &a), "fd00::1", 0);
	KV_REJECTED(c, &a, EINVAL);
	/* A server needs its port too. */
	c->server(&a);
	kv_sockaddr(kv_addr_of(c, &a), "0.0.0.0", 0);
	KV_REJECTED(c, &a, EINVAL);
}

/* Past the sockaddr_in or sockaddr_in6, the storage must be zero. */
TEST_F(kverbs_test_cmd, addr_trailing_bytes)
{
	const struct kv_test_cmd *c = variant->cmd;
	static const struct {
		const char *addr;
		size_t at;	/* from the end of the sockaddr */
	} cases[] = {
		{ "10.209.0.1", 0 },
		{ "10.209.0.1", sizeof(struct __kernel_sockaddr_storage) -
				sizeof(struct sockaddr_in) - 1 },
		{ "fd00::1", 0 },
		{ "fd00::1", sizeof(struct __kernel_sockaddr_storage) -
			     sizeof(struct sockaddr_in6) - 1 },
	};
	union kv_test_args a;
	size_t i;
	int family;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		c->client(&a);
		family = kv_sockaddr(kv_addr_of(c, &a), cases[i].addr,
				     KV_PORT_BAD_ARGS);
		((unsigned char *)kv_addr_of(c, &a))[kv_sockaddr_len(family) +
						     cases[i].at] = 1;
		KV_REJECTED(c, &a, EINVAL);
	}
}

TEST_F(kverbs_test_cmd, server_with_src_addr)
{
	const struct kv_test_cmd *c = variant->cmd;
	union kv_test_args a;

	c->server(&a);
	kv_sockaddr(kv_src_of(c, &a), kv_addr(), 0);
	KV_REJECTED(c, &a, EINVAL);
}

TEST_F(kverbs_test_cmd, src_addr_other_family)
{
	const struct kv_test_cmd *c = variant->cmd;
	union kv_test_args a;
	int family;

	c->client(&a);
	family = kv_addr_of(c, &a)->ss_family;
	kv_sockaddr(kv_src_of(c, &a), family == AF_INET ? "fd00::1" : "10.209.0.1", 0);
	KV_REJECTED(c, &a, EINVAL);
}

TEST_F(kverbs_test_cmd, src_addr_with_port)
{
	const struct kv_test_cmd *c = variant->cmd;
	union kv_test_args a;

	c->client(&a);
	kv_sockaddr(kv_src_of(c, &a), kv_addr(), 4791);
	KV_REJECTED(c, &a, EINVAL);
}

TEST_F(kverbs_test_cmd, src_addr_stray_bytes)
{
	const struct kv_test_cmd *c = variant->cmd;
	union kv_test_args a;
	int family;

	/* "All zero" means all: family 0 with anything else set is not. */
	c->client(&a);
	((unsigned char *)kv_src_of(c, &a))[4] = 1;
	KV_REJECTED(c, &a, EINVAL);
	c->client(&a);
	((unsigned char *)kv_src_of(c, &a))[sizeof(struct __kernel_sockaddr_storage) - 1] = 1;
	KV_REJECTED(c, &a, EINVAL);
	/* A source address has the same zero tail as a destination. */
	c->client(&a);
	family = kv_sockaddr(kv_src_of(c, &a), kv_addr(), 0);
	((unsigned char *)kv_src_of(c, &a))[kv_sockaddr_len(family)] = 1;
	KV_REJECTED(c, &a, EINVAL);
}

/* ------------------------------------------------------------------ */
/* KVERBS_IOC_PING: argument checks                                     */
/* ------------------------------------------------------------------ */

/* Valid except for a message larger than the module's limit: -EMSGSIZE. */
static void kv_fill_ping(void *arg)
{
	struct kverbs_ping *p = arg;

	kv_ping_base(p, KV_PORT_BAD_ARGS);
	p->msg_size = kv_max_msg_size() + 1;
}

static const struct kv_cmd kv_cmd_ping = {
	.ioc = KVERBS_IOC_PING,
	.nr = KVERBS_CMD_PING,
	.size = sizeof(struct kverbs_ping),
	/* The invalidation counts came with KVERBS_FEATURE_PING_INV. */
	.min_size = offsetof(struct kverbs_ping, inv_remote),
	.fill = kv_fill_ping,
	.expect = EMSGSIZE,
};

FIXTURE_VARIANT_ADD(kverbs_cmd, ping) {
	.cmd = &kv_cmd_ping,
};

static void kv_ping_client(void *arg)
{
	kv_ping_base(arg, KV_PORT_BAD_ARGS);
}

static void kv_ping_server(void *arg)
{
	struct kverbs_ping *p = arg;

	kv_ping_base(p, KV_PORT_BAD_ARGS);
	p->role = KVERBS_ROLE_SERVER;
	p->msg_size = 0;
	p->count = 0;
}

static const struct kv_test_cmd kv_args_ping =
	KV_TEST_CMD(KVERBS_IOC_PING, struct kverbs_ping, kv_ping_client,
		    kv_ping_server);

FIXTURE_VARIANT_ADD(kverbs_test_cmd, ping) {
	.cmd = &kv_args_ping,
};

#define KV_PING_REJECTED(p, err) KV_REJECTED(&kv_args_ping, p, err)

TEST_F(kverbs, ping_unknown_flags)
{
	struct kverbs_ping p;

	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.flags = KVERBS_PING_F_UD << 1;	/* the first bit past enum kverbs_ping_flags */
	KV_PING_REJECTED(&p, EINVAL);
	p.flags = KVERBS_PING_F_VALIDATE | 1U << 31;
	KV_PING_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, ping_reserved_nonzero)
{
	struct kverbs_ping p;

	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.__reserved0 = 1;
	KV_PING_REJECTED(&p, EINVAL);
	p.__reserved0 = 1U << 31;
	KV_PING_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, ping_unknown_role)
{
	struct kverbs_ping p;

	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.role = 0;
	KV_PING_REJECTED(&p, EINVAL);
	p.role = 3;
	KV_PING_REJECTED(&p, EINVAL);
	p.role = UINT32_MAX;
	KV_PING_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, ping_persistent_client)
{
	struct kverbs_ping p;

	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.flags = KVERBS_PING_F_PERSISTENT;
	KV_PING_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, ping_client_msg_size_zero)
{
	struct kverbs_ping p;

	/* 0 means "the module's limit" only for a server. */
	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.msg_size = 0;
	KV_PING_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, ping_msg_size_below_min)
{
	struct kverbs_ping p;

	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.msg_size = KVERBS_PING_MIN_SIZE - 1;
	KV_PING_REJECTED(&p, EINVAL);
	p.msg_size = 1;
	KV_PING_REJECTED(&p, EINVAL);
	/* A server's limit has the same floor. */
	p.role = KVERBS_ROLE_SERVER;
	p.msg_size = KVERBS_PING_MIN_SIZE - 1;
	KV_PING_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, ping_msg_size_above_max)
{
	unsigned int max = kv_max_msg_size();
	struct kverbs_ping p;

	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.msg_size = max + 1;
	KV_PING_REJECTED(&p, EMSGSIZE);
	p.msg_size = UINT32_MAX;
	KV_PING_REJECTED(&p, EMSGSIZE);
	p.role = KVERBS_ROLE_SERVER;
	p.count = 0;
	p.msg_size = max + 1;
	KV_PING_REJECTED(&p, EMSGSIZE);
}

TEST_F(kverbs, ping_log_partial)
{
	static __u64 seq;
	static char buf[256];
	const struct kverbs_ping_log all = {
		.buf = (uintptr_t)buf,
		.seq = (uintptr_t)&seq,
		.slots = 4,
		.slot_size = 64,
	};
	struct kverbs_ping p;
	unsigned int mask;

	/* Every combination of the four fields but none and all. */
	for (mask = 1; mask < 15; mask++) {
		kv_ping_base(&p, KV_PORT_BAD_ARGS);
		if (mask & 1)
			p.log.buf = all.buf;
		if (mask & 2)
			p.log.seq = all.seq;
		if (mask & 4)
			p.log.slots = all.slots;
		if (mask & 8)
			p.log.slot_size = all.slot_size;
		KV_PING_REJECTED(&p, EINVAL);
	}
}

TEST_F(kverbs, ping_log_too_large)
{
	static const struct {
		__u32 slots, slot_size;
	} cases[] = {
		{ KV_MAX_LOG_BYTES / 1024 + 1, 1024 },
		{ 1, KV_MAX_LOG_BYTES + 1 },
		/* Exactly 4 GiB: zero, were the product taken in 32 bits. */
		{ 0x10000, 0x10000 },
		{ UINT32_MAX, UINT32_MAX },
	};
	static __u64 seq;
	struct kverbs_ping p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		kv_ping_base(&p, KV_PORT_BAD_ARGS);
		/* Never written: the call must fail before anything runs. */
		p.log.buf = (uintptr_t)kv_unmapped();
		p.log.seq = (uintptr_t)&seq;
		p.log.slots = cases[i].slots;
		p.log.slot_size = cases[i].slot_size;
		KV_PING_REJECTED(&p, EINVAL);
	}
}

/* The result is output as a whole: stale bytes in it are cleared on any failure. */
TEST_F(kverbs, ping_einval_zeroes_result)
{
	struct kverbs_ping p;

	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.role = 0;
	memset(&p.result, 0xff, sizeof(p.result));
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_PING, &p));
	EXPECT_TRUE(kv_all_bytes(&p.result, sizeof(p.result), 0));
	/* And the input part is left as the caller wrote it. */
	EXPECT_EQ(sizeof(p), p.size);
	EXPECT_EQ(64, p.msg_size);
	EXPECT_EQ(kv_step_timeout_ns(), p.timeout_ns);
}

/* ------------------------------------------------------------------ */
/* KVERBS_IOC_PERF: argument checks                                     */
/* ------------------------------------------------------------------ */

/* A valid client request, to a port nobody listens on. */
static void kv_perf_base(void *arg)
{
	struct kverbs_perf *p = arg;

	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->role = KVERBS_ROLE_CLIENT;
	p->test = KVERBS_PERF_WRITE_BW;
	p->msg_size = 64;
	p->iterations = 10;
	p->timeout_ns = kv_step_timeout_ns();
	kv_sockaddr(&p->addr, kv_addr(), KV_PORT_BAD_ARGS);
}

/* A valid client of @test, at the one size an atomic test takes. */
static void kv_perf_base_test(struct kverbs_perf *p, uint32_t test)
{
	kv_perf_base(p);
	p->test = test;
	if (test == KVERBS_PERF_ATOMIC_LAT || test == KVERBS_PERF_ATOMIC_BW)
		p->msg_size = 8;
}

/* A valid server, before the fields a test changes. */
static void kv_perf_server_base(void *arg)
{
	struct kverbs_perf *p = arg;

	kv_perf_base(p);
	p->role = KVERBS_ROLE_SERVER;
	p->iterations = 0;
	p->msg_size = 0;
}

/* Valid except for a message larger than the module's limit: -EMSGSIZE. */
static void kv_fill_perf(void *arg)
{
	struct kverbs_perf *p = arg;

	kv_perf_base(p);
	p->msg_size = kv_max_msg_size() + 1;
}

static const struct kv_cmd kv_cmd_perf = {
	.ioc = KVERBS_IOC_PERF,
	.nr = KVERBS_CMD_PERF,
	.size = sizeof(struct kverbs_perf),
	/* The samples came with KVERBS_FEATURE_PERF_LAT. */
	.min_size = offsetof(struct kverbs_perf, samples),
	.fill = kv_fill_perf,
	.expect = EMSGSIZE,
};

FIXTURE_VARIANT_ADD(kverbs_cmd, perf) {
	.cmd = &kv_cmd_perf,
};

/* A caller built before the samples: its struct is taken, the rest is 0. */
TEST_F(kverbs, perf_first_version_size)
{
	kv_cmd_call(_metadata, &kv_cmd_perf,
		    kv_cmd_arg(&kv_cmd_perf, kv_cmd_perf.min_size), kv_cmd_perf.expect);
}

static const struct kv_test_cmd kv_args_perf =
	KV_TEST_CMD(KVERBS_IOC_PERF, struct kverbs_perf, kv_perf_base,
		    kv_perf_server_base);

FIXTURE_VARIANT_ADD(kverbs_test_cmd, perf) {
	.cmd = &kv_args_perf,
};

#define KV_PERF_REJECTED(p, err) KV_REJECTED(&kv_args_perf, p, err)

TEST_F(kverbs, perf_unknown_flags)
{
	struct kverbs_perf p;

	kv_perf_base(&p);
	p.flags = 1U << 30;	/* not in enum kverbs_perf_flags */
	KV_PERF_REJECTED(&p, EINVAL);
	p.flags = KVERBS_PERF_F_VALIDATE | 1U << 31;
	KV_PERF_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, perf_unknown_role)
{
	struct kverbs_perf p;

	kv_perf_base(&p);
	p.role = 0;
	KV_PERF_REJECTED(&p, EINVAL);
	p.role = 3;
	KV_PERF_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, perf_unknown_test)
{
	struct kverbs_perf p;

	kv_perf_base(&p);
	/* "Any test" is for a server. */
	p.test = KVERBS_PERF_ANY;
	KV_PERF_REJECTED(&p, EINVAL);
	p.test = KVERBS_PERF_SEND_LAT + 1;
	KV_PERF_REJECTED(&p, EINVAL);
	p.test = UINT32_MAX;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.test = KVERBS_PERF_SEND_LAT + 1;
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * Every known test gets past the test check, to the message size, which
 * is checked later; a latency test's client with samples too.
 */
TEST_F(kverbs, perf_known_tests)
{
	static __u64 samples[4];
	struct kverbs_perf p;
	__u32 test;

	for (test = KVERBS_PERF_WRITE_BW; test <= KVERBS_PERF_SEND_LAT; test++) {
		if (test == KVERBS_PERF_ATOMIC_LAT || test == KVERBS_PERF_ATOMIC_BW)
			continue;	/* 8 bytes or EINVAL: perf_atomic_size */
		kv_perf_base(&p);
		p.test = test;
		p.msg_size = kv_max_msg_size() + 1;
		KV_PERF_REJECTED(&p, EMSGSIZE);
		kv_perf_server_base(&p);
		p.test = test;
		p.msg_size = kv_max_msg_size() + 1;
		KV_PERF_REJECTED(&p, EMSGSIZE);
	}
	for (test = KVERBS_PERF_WRITE_LAT; test <= KVERBS_PERF_SEND_LAT; test++) {
		kv_perf_base(&p);
		p.test = test;
		p.msg_size = kv_max_msg_size() + 1;
		p.samples = (uintptr_t)samples;
		p.samples_max = ARRAY_SIZE(samples);
		KV_PERF_REJECTED(&p, EMSGSIZE);
	}
}

/* An atomic operation moves 8 bytes: no other size is a request for one. */
TEST_F(kverbs, perf_atomic_size)
{
	static const __u32 sizes[] = { 1, 7, 9, 16, 4096 };
	struct kverbs_perf p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		kv_perf_base(&p);
		p.test = KVERBS_PERF_ATOMIC_BW;
		p.msg_size = sizes[i];
		KV_PERF_REJECTED(&p, EINVAL);
		p.test = KVERBS_PERF_ATOMIC_LAT;
		KV_PERF_REJECTED(&p, EINVAL);
	}
}

/* Compare-and-swap is a kind of atomic test, and a client's choice. */
TEST_F(kverbs, perf_cmp_swap_not_atomic)
{
	struct kverbs_perf p;

	kv_perf_base(&p);
	p.flags = KVERBS_PERF_F_CMP_SWAP;
	KV_PERF_REJECTED(&p, EINVAL);
	p.test = KVERBS_PERF_READ_LAT;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_CMP_SWAP;
	KV_PERF_REJECTED(&p, EINVAL);
}

/* The module says it has @feature (KVERBS_IOC_INFO). */
#define KV_EXPECT_FEATURE(feature) kv_expect_feature(_metadata, self->fd, feature, #feature)
static void kv_expect_feature(struct __test_metadata *_metadata, int fd,
			      __u64 feature, const char *name)
{
	struct kverbs_info info = { .size = sizeof(info) };

	ASSERT_EQ(0, ioctl(fd, KVERBS_IOC_INFO, &info));
	if (!(info.features & feature))
		KV_FAIL("the module lacks %s (features 0x%llx)", name,
			(unsigned long long)info.features);
}

/*
 * Immediate data is a client's request, for the tests that WRITE or
 * SEND: a READ or an atomic operation carries none.  Refused before
 * anything is resolved or posted.  The control: the four tests that take
 * it get past the flag check to the message size's -EMSGSIZE.
 */
TEST_F(kverbs, perf_imm_write_send_only)
{
	static const uint32_t none[] = {
		KVERBS_PERF_READ_BW, KVERBS_PERF_READ_LAT,
		KVERBS_PERF_ATOMIC_LAT, KVERBS_PERF_ATOMIC_BW,
	};
	static const uint32_t some[] = {
		KVERBS_PERF_WRITE_BW, KVERBS_PERF_SEND_BW,
		KVERBS_PERF_WRITE_LAT, KVERBS_PERF_SEND_LAT,
	};
	struct kverbs_perf p;
	size_t i;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PERF_IMM);
	for (i = 0; i < ARRAY_SIZE(none); i++) {
		kv_perf_base_test(&p, none[i]);
		p.flags = KVERBS_PERF_F_IMM;
		KV_PERF_REJECTED(&p, EINVAL);
		ASSERT_EQ(0, p.imm_expected);
		ASSERT_EQ(0, p.imm_got);
	}
	for (i = 0; i < ARRAY_SIZE(some); i++) {
		kv_perf_base(&p);
		p.test = some[i];
		p.flags = KVERBS_PERF_F_IMM | KVERBS_PERF_F_VALIDATE;
		p.msg_size = kv_max_msg_size() + 1;
		/* (out) fields: whatever comes in, they go back as 0. */
		p.imm_expected = 1;
		p.imm_got = 2;
		KV_PERF_REJECTED(&p, EMSGSIZE);
		ASSERT_EQ(0, p.imm_expected);
		ASSERT_EQ(0, p.imm_got);
	}
	/* The client asks; a server runs what it is asked. */
	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_IMM;
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * rdma_rw moves RDMA READs and WRITEs: --rw for WRITE_BW, READ_BW and
 * READ_LAT, not for SEND, the atomics or WRITE_LAT's ping-pong, and never
 * with immediate data, a post list, CQ moderation or inline data, which
 * rdma_rw's own work requests cannot have.  A test that takes it gets
 * past the flag checks to the size check.
 */
TEST_F(kverbs, perf_rw_read_write_only)
{
	static const uint32_t none[] = {
		KVERBS_PERF_SEND_BW, KVERBS_PERF_SEND_LAT, KVERBS_PERF_WRITE_LAT,
		KVERBS_PERF_ATOMIC_LAT, KVERBS_PERF_ATOMIC_BW,
	};
	static const uint32_t some[] = {
		KVERBS_PERF_WRITE_BW, KVERBS_PERF_READ_BW, KVERBS_PERF_READ_LAT,
	};
	struct kverbs_perf p;
	size_t i;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PERF_RW);
	for (i = 0; i < ARRAY_SIZE(none); i++) {
		kv_perf_base_test(&p, none[i]);
		p.flags = KVERBS_PERF_F_RW;
		KV_PERF_REJECTED(&p, EINVAL);
	}
	for (i = 0; i < ARRAY_SIZE(some); i++) {
		kv_perf_base(&p);
		p.test = some[i];
		p.flags = KVERBS_PERF_F_RW | KVERBS_PERF_F_VALIDATE;
		p.msg_size = kv_max_msg_size() + 1;
		/* (out) fields: whatever comes in, they go back as 0. */
		p.rw_ctxs = 1;
		p.rw_mr_ctxs = 2;
		KV_PERF_REJECTED(&p, EMSGSIZE);
		ASSERT_EQ(0, p.rw_ctxs);
		ASSERT_EQ(0, p.rw_mr_ctxs);
	}
	kv_perf_base(&p);
	p.test = KVERBS_PERF_WRITE_BW;
	p.flags = KVERBS_PERF_F_RW | KVERBS_PERF_F_IMM;
	KV_PERF_REJECTED(&p, EINVAL);
	/* rdma_rw chains and signals its work requests itself, none inline. */
	kv_perf_base(&p);
	p.flags = KVERBS_PERF_F_RW;
	p.post_list = 2;
	KV_PERF_REJECTED(&p, EINVAL);
	p.post_list = 1;
	p.cq_mod = 2;
	KV_PERF_REJECTED(&p, EINVAL);
	p.cq_mod = 1;
	p.inline_size = 64;
	KV_PERF_REJECTED(&p, EINVAL);
	/* The control: one work request per post and each signaled pass. */
	p.inline_size = 0;
	p.msg_size = kv_max_msg_size() + 1;
	KV_PERF_REJECTED(&p, EMSGSIZE);
	/* The client asks; a server runs what it is asked. */
	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_RW;
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * Remote invalidation is a client's request, for the tests whose
 * --validate rounds end with a control message of the requester, and
 * only with --validate and without immediate data.  Refused before
 * anything is resolved or posted, the report block zeroed.  The control:
 * the three tests that take it get past the flag check to the message
 * size's -EMSGSIZE.
 */
TEST_F(kverbs, perf_inv_rounds_only)
{
	static const uint32_t none[] = {
		KVERBS_PERF_SEND_BW, KVERBS_PERF_SEND_LAT, KVERBS_PERF_WRITE_LAT,
		KVERBS_PERF_ATOMIC_LAT, KVERBS_PERF_ATOMIC_BW,
	};
	static const uint32_t some[] = {
		KVERBS_PERF_WRITE_BW, KVERBS_PERF_READ_BW, KVERBS_PERF_READ_LAT,
	};
	struct kverbs_perf p;
	size_t i;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PERF_INV);
	for (i = 0; i < ARRAY_SIZE(none); i++) {
		kv_perf_base_test(&p, none[i]);
		p.flags = KVERBS_PERF_F_INV | KVERBS_PERF_F_VALIDATE;
		KV_PERF_REJECTED(&p, EINVAL);
	}
	for (i = 0; i < ARRAY_SIZE(some); i++) {
		kv_perf_base(&p);
		p.test = some[i];
		/* Without --validate there are no rounds to end. */
		p.flags = KVERBS_PERF_F_INV;
		KV_PERF_REJECTED(&p, EINVAL);
		p.flags = KVERBS_PERF_F_INV | KVERBS_PERF_F_VALIDATE;
		p.msg_size = kv_max_msg_size() + 1;
		/* (out) fields: whatever comes in, they go back as 0. */
		p.inv_remote = 1;
		p.inv_sent = 2;
		p.read_inv = 3;
		p.inv_expected = 4;
		p.inv_got = 5;
		KV_PERF_REJECTED(&p, EMSGSIZE);
		ASSERT_EQ(0, p.inv_remote);
		ASSERT_EQ(0, p.inv_sent);
		ASSERT_EQ(0, p.read_inv);
		ASSERT_EQ(0, p.inv_expected);
		ASSERT_EQ(0, p.inv_got);
	}
	/* WRITE_BW takes both flags, not together. */
	kv_perf_base(&p);
	p.flags = KVERBS_PERF_F_INV | KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_IMM;
	KV_PERF_REJECTED(&p, EINVAL);
	/* Nor with rdma_rw, which registers and invalidates its own memory. */
	p.flags = KVERBS_PERF_F_INV | KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_RW;
	KV_PERF_REJECTED(&p, EINVAL);
	/* The client asks; a server runs what it is asked. */
	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_INV;
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * How a server receives is the server's: a client with KVERBS_PERF_F_SRQ
 * or its fields is refused, and a server's SRQ fields go with the flag,
 * the limit within the receives, the receives within
 * KVERBS_PERF_SRQ_MAX_WR and their memory within
 * KVERBS_PERF_SRQ_MAX_BYTES.  Each refusal has a control that differs
 * only there and gets past it, to the message size (-EMSGSIZE).
 */
TEST_F(kverbs, perf_srq_server_only)
{
	struct kverbs_perf p;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PERF_SRQ);
	/* The client: the flag, the receives, the limit, the reserved word. */
	kv_perf_base_test(&p, KVERBS_PERF_SEND_BW);
	p.msg_size = kv_max_msg_size() + 1;
	KV_PERF_REJECTED(&p, EMSGSIZE);
	p.flags = KVERBS_PERF_F_SRQ;
	KV_PERF_REJECTED(&p, EINVAL);
	p.flags = 0;
	p.srq_wr = 16;
	KV_PERF_REJECTED(&p, EINVAL);
	p.srq_wr = 0;
	p.srq_limit = 1;
	KV_PERF_REJECTED(&p, EINVAL);
	p.srq_limit = 0;
	p.__reserved_srq = 1;
	KV_PERF_REJECTED(&p, EINVAL);

	/*
	 * The server: a valid SRQ gets to the message size.  Of receives as
	 * large as the message (max_msg_size + 1) at most 15 fit in
	 * KVERBS_PERF_SRQ_MAX_BYTES.
	 */
	kv_perf_server_base(&p);
	p.msg_size = kv_max_msg_size() + 1;
	p.flags = KVERBS_PERF_F_SRQ;
	p.srq_wr = 2;
	p.srq_limit = 2;
	/* (out) fields: whatever comes in, they go back as 0. */
	p.srq_limit_events = 7;
	p.srq_shared = 7;
	KV_PERF_REJECTED(&p, EMSGSIZE);
	ASSERT_EQ(0, p.srq_limit_events);
	ASSERT_EQ(0, p.srq_shared);
	/* ... the SRQ's fields without the flag do not. */
	p.flags = 0;
	KV_PERF_REJECTED(&p, EINVAL);
	p.srq_wr = 0;
	KV_PERF_REJECTED(&p, EINVAL);
	p.srq_wr = 2;
	p.srq_limit = 0;
	KV_PERF_REJECTED(&p, EINVAL);
	/* A limit above the receives. */
	p.flags = KVERBS_PERF_F_SRQ;
	p.srq_limit = 3;
	KV_PERF_REJECTED(&p, EINVAL);
	/* Too many receives. */
	p.srq_limit = 0;
	p.srq_wr = KVERBS_PERF_SRQ_MAX_WR + 1;
	KV_PERF_REJECTED(&p, EINVAL);
	/* Too much memory: 15 such receives fit, 16 do not. */
	p.srq_wr = KVERBS_PERF_SRQ_MAX_BYTES / p.msg_size;
	KV_PERF_REJECTED(&p, EMSGSIZE);
	p.srq_wr++;
	KV_PERF_REJECTED(&p, EINVAL);
	/* The reserved word. */
	p.srq_wr = 2;
	p.__reserved_srq = 1;
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * The reverse direction is a client's request, and only for the
 * bandwidth tests: a latency test times the client's own operations.
 */
TEST_F(kverbs, perf_reverse_bw_only)
{
	static const uint32_t lat[] = {
		KVERBS_PERF_READ_LAT, KVERBS_PERF_ATOMIC_LAT,
		KVERBS_PERF_WRITE_LAT, KVERBS_PERF_SEND_LAT,
	};
	struct kverbs_perf p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(lat); i++) {
		kv_perf_base(&p);
		p.test = lat[i];
		p.msg_size = lat[i] == KVERBS_PERF_ATOMIC_LAT ? 8 : 64;
		p.flags = KVERBS_PERF_F_REVERSE;
		KV_PERF_REJECTED(&p, EINVAL);
	}
	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_REVERSE;
	KV_PERF_REJECTED(&p, EINVAL);
}

/* write_lat's client sees each answer only by polling its memory. */
TEST_F(kverbs, perf_events_not_write_lat)
{
	struct kverbs_perf p;

	kv_perf_base(&p);
	p.test = KVERBS_PERF_WRITE_LAT;
	p.flags = KVERBS_PERF_F_EVENTS;
	KV_PERF_REJECTED(&p, EINVAL);
	/* A server's own choice of events goes with no client's flag. */
	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_EVENTS | KVERBS_PERF_F_REVERSE;
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * Busy polling for a client is the server's to allow: a client cannot
 * set it, a server cannot both sleep and poll, and a bit no flag has
 * is still "must be 0".
 */
TEST_F(kverbs, perf_busy_poll_server_only)
{
	struct kverbs_perf p;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PERF_BUSY_POLL);
	kv_perf_base(&p);
	p.flags = KVERBS_PERF_F_BUSY_POLL;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_BUSY_POLL | KVERBS_PERF_F_EVENTS;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_BUSY_POLL | 1U << 30;	/* not in enum kverbs_perf_flags */
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * The ceilings are a server's: a client that sets them is refused, and
 * a server may lower the module's ceilings, not raise them: refused,
 * not clamped, so that it is never told it allows more than it does.
 */
TEST_F(kverbs, perf_ceilings)
{
	unsigned long long max_iters = kv_param("perf_max_iterations");
	unsigned long long max_s = kv_param("perf_max_duration_s");
	struct kverbs_perf p;

	kv_perf_base(&p);
	p.max_duration_ns = 1000000000;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_base(&p);
	p.max_iterations = 10;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_base(&p);
	p.flags = KVERBS_PERF_F_NO_REVERSE;
	KV_PERF_REJECTED(&p, EINVAL);

	kv_perf_server_base(&p);
	p.max_duration_ns = max_s * 1000000000ULL + 1;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.max_duration_ns = KVERBS_PERF_MAX_DURATION_NS + 1;
	KV_PERF_REJECTED(&p, EINVAL);
	if (max_iters == UINT64_MAX)
		SKIP(return, "perf_max_iterations is the largest __u64");
	kv_perf_server_base(&p);
	p.max_iterations = max_iters + 1;
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * Post lists, CQ moderation and inline data (KVERBS_FEATURE_PERF_POST)
 * are a client's, within its TX depth: a latency test has one operation
 * in flight, and only a WRITE or a SEND carries data to put inline.
 * Each refusal comes before anything is resolved; the controls get past
 * these checks to the message size's -EMSGSIZE.
 */
TEST_F(kverbs, perf_post_modes)
{
	static const struct {
		uint32_t test, msg_size, tx_depth;
		__u16 post_list, cq_mod;
		__u32 inline_size, reserved;
		int err;
	} cases[] = {
		{ KVERBS_PERF_WRITE_BW, 64, 32, 33, 0, 0, 0, EINVAL },
		{ KVERBS_PERF_WRITE_BW, 64, 0, KVERBS_PERF_DEFAULT_DEPTH + 1, 0, 0, 0, EINVAL },
		{ KVERBS_PERF_SEND_BW, 64, 32, 0, 33, 0, 0, EINVAL },
		{ KVERBS_PERF_READ_LAT, 64, 0, 2, 0, 0, 0, EINVAL },
		{ KVERBS_PERF_SEND_LAT, 64, 0, 0, 2, 0, 0, EINVAL },
		{ KVERBS_PERF_READ_BW, 64, 0, 0, 0, 64, 0, EINVAL },
		{ KVERBS_PERF_ATOMIC_BW, 8, 0, 0, 0, 8, 0, EINVAL },
		{ KVERBS_PERF_WRITE_BW, 64, 0, 0, 0, KVERBS_PERF_MAX_INLINE + 1, 0, EINVAL },
		{ KVERBS_PERF_WRITE_BW, 64, 0, 0, 0, 0, 1, EINVAL },
		/* The controls. */
		{ KVERBS_PERF_WRITE_BW, 0, 32, 32, 32, KVERBS_PERF_MAX_INLINE, 0, EMSGSIZE },
		{ KVERBS_PERF_SEND_BW, 0, 0, KVERBS_PERF_DEFAULT_DEPTH, 1, 0, 0, EMSGSIZE },
		{ KVERBS_PERF_SEND_LAT, 0, 0, 1, 1, 64, 0, EMSGSIZE },
	};
	struct kverbs_perf p;
	size_t i;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PERF_POST);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		kv_perf_base(&p);
		p.test = cases[i].test;
		p.msg_size = cases[i].msg_size ? cases[i].msg_size : kv_max_msg_size() + 1;
		p.tx_depth = cases[i].tx_depth;
		p.post_list = cases[i].post_list;
		p.cq_mod = cases[i].cq_mod;
		p.inline_size = cases[i].inline_size;
		p.__reserved = cases[i].reserved;
		/* (out): whatever comes in, it goes back as 0. */
		p.max_inline = 7;
		TH_LOG("case %zu", i);
		KV_PERF_REJECTED(&p, cases[i].err);
		ASSERT_EQ(0, p.max_inline);
	}
	/* The client asks; a server posts as its client asked. */
	kv_perf_server_base(&p);
	p.post_list = 2;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.cq_mod = 1;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.inline_size = 64;
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * The completion policy (KVERBS_FEATURE_PERF_POLL): a value past
 * KVERBS_PERF_POLL_UNBOUND_WORKQUEUE, or a CQ flag past
 * KVERBS_PERF_CQ_DIM, is refused on either side.
 */
TEST_F(kverbs, perf_poll_unknown)
{
	static const __u16 polls[] = { KVERBS_PERF_POLL_UNBOUND_WORKQUEUE + 1, 0x8000, 0xffff };
	static const __u16 cq_flags[] = { KVERBS_PERF_CQ_DIM << 1, 0x8000, 0xffff };
	struct kverbs_perf p;
	size_t i;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PERF_POLL);
	for (i = 0; i < ARRAY_SIZE(polls); i++) {
		kv_perf_base(&p);
		p.poll = polls[i];
		KV_PERF_REJECTED(&p, EINVAL);
		kv_perf_server_base(&p);
		p.poll = polls[i];
		KV_PERF_REJECTED(&p, EINVAL);
	}
	for (i = 0; i < ARRAY_SIZE(cq_flags); i++) {
		kv_perf_base(&p);
		p.poll = KVERBS_PERF_POLL_SOFTIRQ;
		p.cq_flags = cq_flags[i];
		KV_PERF_REJECTED(&p, EINVAL);
		kv_perf_server_base(&p);
		p.cq_flags = cq_flags[i];
		KV_PERF_REJECTED(&p, EINVAL);
	}
}

/*
 * Policies that contradict each other or the test: the pool and
 * moderation need interrupts, -e is softirq, a server's --busy-poll is
 * direct, and write_lat's client sees its answers only by polling.
 */
TEST_F(kverbs, perf_poll_contradictions)
{
	static const struct {
		__u32 role, test, flags;
		__u16 poll, cq_flags;
	} cases[] = {
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_BW, 0,
		  KVERBS_PERF_POLL_DIRECT, KVERBS_PERF_CQ_POOL },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_BW, 0,
		  KVERBS_PERF_POLL_DIRECT, KVERBS_PERF_CQ_DIM },
		{ KVERBS_ROLE_SERVER, KVERBS_PERF_ANY, 0,
		  KVERBS_PERF_POLL_DIRECT, KVERBS_PERF_CQ_POOL },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_BW, KVERBS_PERF_F_EVENTS,
		  KVERBS_PERF_POLL_WORKQUEUE, 0 },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_BW, KVERBS_PERF_F_EVENTS,
		  KVERBS_PERF_POLL_DIRECT, 0 },
		{ KVERBS_ROLE_SERVER, KVERBS_PERF_ANY, KVERBS_PERF_F_EVENTS,
		  KVERBS_PERF_POLL_UNBOUND_WORKQUEUE, 0 },
		{ KVERBS_ROLE_SERVER, KVERBS_PERF_ANY, KVERBS_PERF_F_BUSY_POLL,
		  KVERBS_PERF_POLL_SOFTIRQ, 0 },
		{ KVERBS_ROLE_SERVER, KVERBS_PERF_ANY, KVERBS_PERF_F_BUSY_POLL,
		  KVERBS_PERF_POLL_WORKQUEUE, 0 },
		{ KVERBS_ROLE_SERVER, KVERBS_PERF_ANY, KVERBS_PERF_F_BUSY_POLL,
		  KVERBS_PERF_POLL_DEFAULT, KVERBS_PERF_CQ_POOL },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_LAT, 0,
		  KVERBS_PERF_POLL_SOFTIRQ, 0 },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_LAT, 0,
		  KVERBS_PERF_POLL_WORKQUEUE, 0 },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_LAT, 0,
		  KVERBS_PERF_POLL_DEFAULT, KVERBS_PERF_CQ_POOL },
	};
	struct kverbs_perf p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].role == KVERBS_ROLE_SERVER)
			kv_perf_server_base(&p);
		else
			kv_perf_base(&p);
		p.test = cases[i].test;
		p.flags = cases[i].flags;
		p.poll = cases[i].poll;
		p.cq_flags = cases[i].cq_flags;
		KV_PERF_REJECTED(&p, EINVAL);
		if (kv_failed())
			TH_LOG("case %zu", i);
	}
}


/*
 * Samples are what a latency test's client returns: both fields or
 * neither, on no other test and no server, and an array userspace can
 * write to the end of.
 */
TEST_F(kverbs, perf_samples)
{
	static __u64 samples[4];
	struct kverbs_perf p;

	kv_perf_base(&p);
	p.test = KVERBS_PERF_READ_LAT;
	p.samples = (uintptr_t)samples;
	KV_PERF_REJECTED(&p, EINVAL);
	p.samples = 0;
	p.samples_max = ARRAY_SIZE(samples);
	KV_PERF_REJECTED(&p, EINVAL);
	/* A bandwidth test has no samples. */
	kv_perf_base(&p);
	p.samples = (uintptr_t)samples;
	p.samples_max = ARRAY_SIZE(samples);
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.test = KVERBS_PERF_READ_LAT;
	p.samples = (uintptr_t)samples;
	p.samples_max = ARRAY_SIZE(samples);
	KV_PERF_REJECTED(&p, EINVAL);
	/* Reaching into the kernel's half of the address space. */
	kv_perf_base(&p);
	p.test = KVERBS_PERF_READ_LAT;
	p.samples = 0xffff800000000000ULL;
	p.samples_max = 1;
	KV_PERF_REJECTED(&p, EFAULT);
}

/*
 * Phases (KVERBS_FEATURE_PERF_PHASES) are a latency client's, beside its
 * samples, on a test whose round trip ends in a completion handler: the
 * flag and the array together.  Each refusal has a control beside it that
 * gets past these checks to the message size's -EMSGSIZE.
 */
TEST_F(kverbs, perf_phases)
{
	static __u64 samples[4], phases[8];
	static const struct {
		__u32 role, test, flags;
		bool samples, phases;
		int err;
	} cases[] = {
		/* The controls: READ_LAT and SEND_LAT take them. */
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_READ_LAT, KVERBS_PERF_F_PHASES, 1, 1, EMSGSIZE },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_SEND_LAT, KVERBS_PERF_F_PHASES, 1, 1, EMSGSIZE },
		/* WRITE_LAT's round trip ends in memory the client polls. */
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_LAT, KVERBS_PERF_F_PHASES, 1, 1, EINVAL },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_LAT,
		  KVERBS_PERF_F_PHASES | KVERBS_PERF_F_IMM, 1, 1, EINVAL },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_LAT, 0, 1, 0, EMSGSIZE },
		/* The flag and the array go together, with samples. */
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_READ_LAT, KVERBS_PERF_F_PHASES, 1, 0, EINVAL },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_READ_LAT, 0, 1, 1, EINVAL },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_READ_LAT, KVERBS_PERF_F_PHASES, 0, 1, EINVAL },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_READ_LAT, 0, 1, 0, EMSGSIZE },
		/* A bandwidth test times no single operation. */
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_BW, KVERBS_PERF_F_PHASES, 0, 1, EINVAL },
		{ KVERBS_ROLE_CLIENT, KVERBS_PERF_WRITE_BW, 0, 0, 0, EMSGSIZE },
		/* A server times nothing. */
		{ KVERBS_ROLE_SERVER, KVERBS_PERF_READ_LAT, KVERBS_PERF_F_PHASES, 0, 0, EINVAL },
		{ KVERBS_ROLE_SERVER, KVERBS_PERF_READ_LAT, 0, 0, 1, EINVAL },
		{ KVERBS_ROLE_SERVER, KVERBS_PERF_READ_LAT, 0, 0, 0, EMSGSIZE },
	};
	struct kverbs_info info = { .size = sizeof(info) };
	struct kverbs_perf p;
	size_t i;

	ASSERT_EQ(0, ioctl(self->fd, KVERBS_IOC_INFO, &info));
	EXPECT_TRUE(info.features & KVERBS_FEATURE_PERF_PHASES);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].role == KVERBS_ROLE_SERVER)
			kv_perf_server_base(&p);
		else
			kv_perf_base(&p);
		p.test = cases[i].test;
		p.flags = cases[i].flags;
		p.msg_size = kv_max_msg_size() + 1;
		if (cases[i].samples) {
			p.samples = (uintptr_t)samples;
			p.samples_max = ARRAY_SIZE(samples);
		}
		if (cases[i].phases)
			p.phases = (uintptr_t)phases;
		TH_LOG("case %zu", i);
		KV_PERF_REJECTED(&p, cases[i].err);
	}
	/* Reaching into the kernel's half of the address space. */
	kv_perf_base(&p);
	p.test = KVERBS_PERF_READ_LAT;
	p.flags = KVERBS_PERF_F_PHASES;
	p.samples = (uintptr_t)samples;
	p.samples_max = ARRAY_SIZE(samples);
	p.phases = 0xffff800000000000ULL;
	KV_PERF_REJECTED(&p, EFAULT);
	EXPECT_EQ(0, samples[0]);
	EXPECT_EQ(0, phases[0]);
}

TEST_F(kverbs, perf_client_msg_size_zero)
{
	struct kverbs_perf p;

	kv_perf_base(&p);
	p.msg_size = 0;
	KV_PERF_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, perf_msg_size_above_max)
{
	unsigned int max = kv_max_msg_size();
	struct kverbs_perf p;

	kv_perf_base(&p);
	p.msg_size = max + 1;
	KV_PERF_REJECTED(&p, EMSGSIZE);
	p.msg_size = UINT32_MAX;
	KV_PERF_REJECTED(&p, EMSGSIZE);
	kv_perf_server_base(&p);
	p.msg_size = max + 1;
	KV_PERF_REJECTED(&p, EMSGSIZE);
}

TEST_F(kverbs, perf_tx_depth_above_max)
{
	struct kverbs_perf p;

	kv_perf_base(&p);
	p.tx_depth = KVERBS_PERF_MAX_DEPTH + 1;
	KV_PERF_REJECTED(&p, EINVAL);
	p.tx_depth = UINT32_MAX;
	KV_PERF_REJECTED(&p, EINVAL);
}

TEST_F(kverbs, perf_iterations_and_duration)
{
	struct kverbs_perf p;

	/* Exactly one of the two. */
	kv_perf_base(&p);
	p.iterations = 0;
	KV_PERF_REJECTED(&p, EINVAL);
	p.iterations = 10;
	p.duration_ns = 1000000000;
	KV_PERF_REJECTED(&p, EINVAL);
	p.iterations = 0;
	p.duration_ns = KVERBS_PERF_MAX_DURATION_NS + 1;
	KV_PERF_REJECTED(&p, EINVAL);
	p.duration_ns = UINT64_MAX;
	KV_PERF_REJECTED(&p, EINVAL);
}

/* What the client asks for is not for the server to set. */
TEST_F(kverbs, perf_server_client_fields)
{
	struct kverbs_perf p;

	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_VALIDATE;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.tx_depth = 16;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.iterations = 10;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	p.duration_ns = 1000000000;
	KV_PERF_REJECTED(&p, EINVAL);
	kv_perf_server_base(&p);
	kv_sockaddr(&p.src_addr, kv_addr(), 0);
	KV_PERF_REJECTED(&p, EINVAL);
}

/* ------------------------------------------------------------------ */
/* KVERBS_IOC_LISTEN, and the servers that take clients from it        */
/* ------------------------------------------------------------------ */

/*
 * A file of its own: a file listens once, and stops when it is closed.
 * The fixture found the module loaded: a file that cannot be opened is a
 * failure.
 */
static int kv_listen_fd(void)
{
	int fd;

	fd = open("/dev/kverbs", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		KV_FAIL_AT(1, "open /dev/kverbs: %s", strerror(errno));
	return fd;
}

static void kv_listen_base(struct kverbs_listen *l, __u16 port)
{
	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	kv_sockaddr(&l->addr, "0.0.0.0", port);
}

/*
 * Valid, for an address that is not the guest's: -EADDRNOTAVAIL, and
 * no listener left on the file.
 */
static void kv_fill_listen(void *arg)
{
	struct kverbs_listen *l = arg;

	kv_listen_base(l, KV_PORT_LISTEN);
	kv_sockaddr(&l->addr, "192.0.2.1", KV_PORT_LISTEN);
}

static const struct kv_cmd kv_cmd_listen = {
	.ioc = KVERBS_IOC_LISTEN,
	.nr = KVERBS_CMD_LISTEN,
	.size = sizeof(struct kverbs_listen),
	.fill = kv_fill_listen,
	.expect = EADDRNOTAVAIL,
	.no_output = true,
};

FIXTURE_VARIANT_ADD(kverbs_cmd, listen) {
	.cmd = &kv_cmd_listen,
};

/* ------------------------------------------------------------------ */
/* KVERBS_IOC_LESSON: the checks every command shares                   */
/* ------------------------------------------------------------------ */

/*
 * Valid, for an address that is not the guest's: -EADDRNOTAVAIL, with
 * the lesson's failure written back.
 */
static void kv_fill_lesson(void *arg)
{
	struct kverbs_lesson *l = arg;

	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	l->lesson = KVERBS_LESSON_UNSIGNALED;
	kv_sockaddr(&l->addr, "192.0.2.1", 0);
}

static const struct kv_cmd kv_cmd_lesson = {
	.ioc = KVERBS_IOC_LESSON,
	.nr = KVERBS_CMD_LESSON,
	.size = sizeof(struct kverbs_lesson),
	.fill = kv_fill_lesson,
	.expect = EADDRNOTAVAIL,
};

FIXTURE_VARIANT_ADD(kverbs_cmd, lesson) {
	.cmd = &kv_cmd_lesson,
};

TEST_F(kverbs, listen_bad_args)
{
	struct {
		struct kverbs_listen l;
		unsigned char tail[8];
	} big;
	struct kverbs_listen l;
	int fd = kv_listen_fd();

	kv_listen_base(&l, KV_PORT_LISTEN);
	l.flags = 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_LISTEN, &l));
	kv_listen_base(&l, KV_PORT_LISTEN);
	l.__reserved = 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_LISTEN, &l));
	kv_listen_base(&l, 0);
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_LISTEN, &l));
	kv_listen_base(&l, KV_PORT_LISTEN);
	l.addr.ss_family = AF_UNIX;
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_LISTEN, &l));
	kv_listen_base(&l, KV_PORT_LISTEN);
	((unsigned char *)&l.addr)[sizeof(l.addr) - 1] = 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_LISTEN, &l));
	kv_listen_base(&l, KV_PORT_LISTEN);
	l.size = offsetof(struct kverbs_listen, __reserved);
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_LISTEN, &l));
	memset(&big, 0, sizeof(big));
	kv_listen_base(&big.l, KV_PORT_LISTEN);
	big.l.size = sizeof(big);
	big.tail[3] = 1;
	EXPECT_ERRNO(E2BIG, ioctl(fd, KVERBS_IOC_LISTEN, &big));
	EXPECT_ERRNO(EFAULT, ioctl(fd, KVERBS_IOC_LISTEN, NULL));
	/* None of that left a listener behind. */
	kv_listen_base(&l, KV_PORT_LISTEN);
	EXPECT_OK(ioctl(fd, KVERBS_IOC_LISTEN, &l));
	close(fd);
}

TEST_F(kverbs, listen_once_per_file)
{
	struct kverbs_listen l;
	int fd = kv_listen_fd(), fd2 = kv_listen_fd();

	kv_listen_base(&l, KV_PORT_LISTEN);
	EXPECT_OK(ioctl(fd, KVERBS_IOC_LISTEN, &l));
	EXPECT_ERRNO(EBUSY, ioctl(fd, KVERBS_IOC_LISTEN, &l));
	EXPECT_ERRNO(EADDRINUSE, ioctl(fd2, KVERBS_IOC_LISTEN, &l));
	/* Closing the file stops the listener: the port is free again. */
	close(fd);
	EXPECT_OK(ioctl(fd2, KVERBS_IOC_LISTEN, &l));
	close(fd2);
}

TEST_F(kverbs, listen_not_local)
{
	struct kverbs_listen l;
	int fd = kv_listen_fd();

	kv_listen_base(&l, KV_PORT_LISTEN);
	kv_sockaddr(&l.addr, "192.0.2.1", KV_PORT_LISTEN);
	EXPECT_ERRNO(EADDRNOTAVAIL, ioctl(fd, KVERBS_IOC_LISTEN, &l));
	close(fd);
}

/* KVERBS_PERF_F_LISTENER: only for a server, on a file that listens, without an address. */
TEST_F(kverbs, perf_listener_flag)
{
	struct kverbs_listen l;
	struct kverbs_perf p;
	int fd = kv_listen_fd();

	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_LISTENER;
	memset(&p.addr, 0, sizeof(p.addr));
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_PERF, &p));

	kv_listen_base(&l, KV_PORT_LISTEN);
	ASSERT_OK(ioctl(fd, KVERBS_IOC_LISTEN, &l));
	kv_perf_server_base(&p);
	p.flags = KVERBS_PERF_F_LISTENER;
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_PERF, &p));
	kv_perf_base(&p);
	p.flags = KVERBS_PERF_F_LISTENER;
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_PERF, &p));
	close(fd);
}

/*
 * KVERBS_PING_F_LISTENER, as KVERBS_PERF_F_LISTENER: a server's only, on
 * a file that listens, with no address of its own.
 */
TEST_F(kverbs, ping_listener_flag)
{
	struct kverbs_listen l;
	struct kverbs_ping p;
	int fd = kv_listen_fd();

	/* Not listening: as accept(2) on a socket that does not listen. */
	kv_ping_base(&p, 0);
	p.role = KVERBS_ROLE_SERVER;
	p.count = 0;
	p.flags = KVERBS_PING_F_LISTENER;
	memset(&p.addr, 0, sizeof(p.addr));
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_PING, &p));

	kv_listen_base(&l, KV_PORT_LISTEN);
	ASSERT_OK(ioctl(fd, KVERBS_IOC_LISTEN, &l));
	/* An address of its own besides. */
	kv_ping_base(&p, KV_PORT_LISTEN);
	p.role = KVERBS_ROLE_SERVER;
	p.count = 0;
	p.flags = KVERBS_PING_F_LISTENER;
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_PING, &p));
	/* A client. */
	kv_ping_base(&p, KV_PORT_LISTEN);
	p.flags = KVERBS_PING_F_LISTENER;
	EXPECT_ERRNO(EINVAL, ioctl(fd, KVERBS_IOC_PING, &p));
	close(fd);
}

/* ------------------------------------------------------------------ */
/* KVERBS_IOC_PING over the guest's device                              */
/* ------------------------------------------------------------------ */

/*
 * The tests that connect have a time limit of their own (the harness
 * kills a test at its limit, and says which): a call that never returns
 * ends one test, not the suite.  It is the harness's default, 30 s, for
 * the others.  Scaled by KV_TIME_SCALE like every limit of the tests
 * (the harness sets a test's limit in a constructor, at run time).
 */
#define KV_NET_TIMEOUT		(60 * kv_time_scale())
#define KV_NET_LONG_TIMEOUT	(120 * kv_time_scale())

/* What a test over the network needs first. */
static void kv_net_begin(void)
{
	struct __kernel_sockaddr_storage ss;

	kv_sockaddr(&ss, kv_addr(), 1);
	kv_mem_init();
}

/*
 * @p gets as far as connecting, and is refused there: its arguments
 * passed every check.
 */
#define KV_EXPECT_REFUSED(p) kv_expect_refused(_metadata, p, __LINE__)
static void kv_expect_refused(struct __test_metadata *_metadata,
			      struct kverbs_ping *p, int line)
{
	long ret;
	int err;

	errno = 0;
	ret = kv_ioctl(KVERBS_IOC_PING, p);
	err = errno;
	if (!kv_refused(ret, err, &p->result) ||
	    p->result.failed_step != KVERBS_STEP_CONNECT)
		KV_FAIL("line %d: returned %ld errno %d (%s) at step %u, expected a refused connection",
			   line, ret, err, strerror(err), p->result.failed_step);
}

static void kv_diag_result(struct __test_metadata *_metadata,
			   const char *who, const struct kverbs_ping_result *r)
{
	TH_LOG("%s: iterations %llu read %llu written %llu clients %u failed %u",
		who, (unsigned long long)r->iterations, (unsigned long long)r->bytes_read,
		(unsigned long long)r->bytes_written, r->clients, r->clients_failed);
	TH_LOG("%s: valid 0x%x step %u wc %u/%u cm %u/%d mismatch %u", who,
		r->valid, r->failed_step, r->wc_status, r->vendor_err, r->cm_event,
		r->cm_status, r->mismatch_offset);
}

/* rping's payload of iteration @iter: "rdma-ping-N: ", 'A'..'z' from N on, NUL. */
static void kv_rping_payload(char *buf, size_t len, unsigned int iter)
{
	const int run = 'z' - 'A' + 1;
	char c = 'A' + iter % run;
	size_t i;

	i = snprintf(buf, len, "rdma-ping-%u: ", iter);
	for (; i < len - 1; i++) {
		buf[i] = c;
		c = c == 'z' ? 'A' : c + 1;
	}
	buf[len - 1] = '\0';
}

TEST_F_TIMEOUT(kverbs, ping_no_listener, KV_NET_TIMEOUT)
{
	struct kverbs_ping p;

	kv_net_begin();
	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	memset(&p.result, 0xff, sizeof(p.result));
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PING, &p));
	EXPECT_EQ(KVERBS_STEP_CONNECT, p.result.failed_step);
	/*
	 * Over InfiniBand's CM (rxe) the refusal is a REJECTED event.  An
	 * iWARP connect is a TCP connect, which siw makes synchronously:
	 * rdma_connect() itself fails, and no CM event is involved.
	 */
	if (!strcmp(kv_env("KV_TYPE", "rxe"), "siw") &&
	    !(p.result.valid & KVERBS_RESULT_CM)) {
		EXPECT_EQ(0, p.result.cm_event);
	} else {
		EXPECT_TRUE(p.result.valid & KVERBS_RESULT_CM);
		EXPECT_EQ(KV_RDMA_CM_EVENT_REJECTED, p.result.cm_event);
	}
	EXPECT_EQ(0, p.result.iterations);
	EXPECT_EQ(-ECONNREFUSED, p.result.error);
	if (kv_failed())
		kv_diag_result(_metadata, "client", &p.result);
}

/*
 * KVERBS_PING_F_NO_INV is either side's, and passes the checks: a client
 * gets as far as the connection, which nobody accepts.  The counts are
 * (out) fields: whatever comes in, they go back as 0.
 */
TEST_F_TIMEOUT(kverbs, ping_no_inv_flag, KV_NET_TIMEOUT)
{
	struct kverbs_ping p;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PING_INV);
	kv_net_begin();
	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	p.flags = KVERBS_PING_F_NO_INV | KVERBS_PING_F_VALIDATE;
	p.inv_remote = 1;
	p.inv_sent = 2;
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PING, &p));
	EXPECT_EQ(KVERBS_STEP_CONNECT, p.result.failed_step);
	EXPECT_EQ(0, p.inv_remote);
	EXPECT_EQ(0, p.inv_sent);
	/* A server's too: refused here only for its message size. */
	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.role = KVERBS_ROLE_SERVER;
	p.flags = KVERBS_PING_F_NO_INV;
	p.msg_size = kv_max_msg_size() + 1;
	p.inv_sent = 3;
	EXPECT_ERRNO(EMSGSIZE, kv_ioctl(KVERBS_IOC_PING, &p));
	EXPECT_EQ(0, p.inv_sent);
	/* The first bit past the flags is unknown. */
	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.flags = KVERBS_PING_F_UD << 1;
	EXPECT_ERRNO(EINVAL, kv_ioctl(KVERBS_IOC_PING, &p));
}

/*
 * KVERBS_PING_F_UD is either side's, with a count of 1 to
 * KVERBS_PING_UD_MAX_COUNT and nothing of a connection's (a persistent
 * server, a listener, remote invalidation): every other combination is
 * refused before anything is made.  The control, a fair client, gets as
 * far as the service ID resolution, which nobody answers; over iWARP,
 * which has no UD, it is refused at setup.  The UD block is (out): what
 * comes in goes back as what the call found.
 */
TEST_F_TIMEOUT(kverbs, ping_ud_flag, KV_NET_TIMEOUT)
{
	const bool iwarp = !strcmp(kv_env("KV_TYPE", "rxe"), "siw");
	static const struct {
		__u32 role;
		__u32 flags;
		__u32 count;
	} bad[] = {
		{ KVERBS_ROLE_CLIENT, 0, 0 },
		{ KVERBS_ROLE_SERVER, 0, 0 },
		{ KVERBS_ROLE_CLIENT, 0, KVERBS_PING_UD_MAX_COUNT + 1 },
		{ KVERBS_ROLE_SERVER, 0, UINT32_MAX },
		{ KVERBS_ROLE_CLIENT, KVERBS_PING_F_NO_INV, 1 },
		{ KVERBS_ROLE_SERVER, KVERBS_PING_F_NO_INV, 1 },
		{ KVERBS_ROLE_SERVER, KVERBS_PING_F_PERSISTENT, 1 },
	};
	struct kverbs_ping p;
	size_t i;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PING_UD);
	kv_net_begin();
	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	p.flags = KVERBS_PING_F_UD | KVERBS_PING_F_VALIDATE;
	p.count = KVERBS_PING_UD_MAX_COUNT;
	p.path_mtu = 1;
	p.remote_qpn = 2;
	p.remote_qkey = 3;
	if (iwarp) {
		EXPECT_ERRNO(EOPNOTSUPP, kv_ioctl(KVERBS_IOC_PING, &p));
		EXPECT_EQ(KVERBS_STEP_SETUP, p.result.failed_step);
		EXPECT_EQ(0, p.path_mtu);
	} else {
		EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PING, &p));
		EXPECT_EQ(KVERBS_STEP_CONNECT, p.result.failed_step);
		/* The port's MTU, one of IB's five. */
		EXPECT_TRUE(p.path_mtu == 256 || p.path_mtu == 512 ||
			    p.path_mtu == 1024 || p.path_mtu == 2048 ||
			    p.path_mtu == 4096);
	}
	EXPECT_EQ(0, p.remote_qpn);
	EXPECT_EQ(0, p.remote_qkey);
	EXPECT_EQ(0, p.result.iterations);
	if (kv_failed())
		kv_diag_result(_metadata, "client", &p.result);

	for (i = 0; i < KV_ARRAY_SIZE(bad); i++) {
		kv_ping_base(&p, KV_PORT_BAD_ARGS);
		p.role = bad[i].role;
		p.flags = KVERBS_PING_F_UD | bad[i].flags;
		p.count = bad[i].count;
		if (p.role == KVERBS_ROLE_SERVER)
			p.msg_size = 0;
		KV_PING_REJECTED(&p, EINVAL);
	}
	kv_ping_base(&p, KV_PORT_BAD_ARGS);
	p.flags = KVERBS_PING_F_UD;
	p.__reserved1 = 1;
	KV_PING_REJECTED(&p, EINVAL);
}

/*
 * A caller whose struct ends before the UD block, as a tool built before
 * it: its datagram ping runs, and nothing is written past its struct.
 */
TEST_F_TIMEOUT(kverbs, ping_ud_not_written_past_struct, KV_NET_TIMEOUT)
{
	struct kverbs_ping p;

	if (!strcmp(kv_env("KV_TYPE", "rxe"), "siw"))
		SKIP(return, "iWARP (siw) has no UD");
	kv_net_begin();
	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	p.size = offsetof(struct kverbs_ping, path_mtu);
	p.flags = KVERBS_PING_F_UD;
	memset(&p.path_mtu, 0xa5, sizeof(p) - offsetof(struct kverbs_ping, path_mtu));
	/* Beyond the caller's size: ignored, must-be-0 or not. */
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PING, &p));
	EXPECT_EQ(-ECONNREFUSED, p.result.error);
	EXPECT_TRUE(kv_all_bytes(&p.path_mtu, sizeof(p) - offsetof(struct kverbs_ping, path_mtu),
				 0xa5));
}

/*
 * A caller whose struct ends with the result, as a tool built before the
 * invalidation counts: its ping runs, and nothing is written past its
 * struct.
 */
TEST_F_TIMEOUT(kverbs, ping_inv_not_written_past_struct, KV_NET_TIMEOUT)
{
	struct kverbs_ping p;

	kv_net_begin();
	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	p.size = offsetof(struct kverbs_ping, inv_remote);
	memset(&p.inv_remote, 0xa5, sizeof(p.inv_remote) + sizeof(p.inv_sent));
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PING, &p));
	EXPECT_EQ(-ECONNREFUSED, p.result.error);
	EXPECT_TRUE(kv_all_bytes(&p.inv_remote, sizeof(p.inv_remote) + sizeof(p.inv_sent),
				 0xa5));
}

/*
 * Values at the limits pass the checks: each ping gets as far as the
 * connection, which nobody accepts.  (Which errno a refusal gets is
 * ping_no_listener's business.)
 */
TEST_F_TIMEOUT(kverbs, ping_limits_accepted, KV_NET_LONG_TIMEOUT)
{
	struct {
		struct kverbs_ping p;
		unsigned char tail[64];
	} big;
	struct kverbs_ping p;
	static __u64 seq;
	void *log;

	kv_net_begin();

	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	p.msg_size = KVERBS_PING_MIN_SIZE;
	KV_EXPECT_REFUSED(&p);

	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	p.timeout_ns = KV_ONE_HOUR_NS;
	KV_EXPECT_REFUSED(&p);

	/* 64 MiB of log, pinned for the call; nothing is stored without a connection. */
	log = mmap(NULL, KV_MAX_LOG_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(log != MAP_FAILED);
	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	p.log.buf = (uintptr_t)log;
	p.log.seq = (uintptr_t)&seq;
	p.log.slots = KV_MAX_LOG_BYTES / 65536;
	p.log.slot_size = 65536;
	KV_EXPECT_REFUSED(&p);
	EXPECT_EQ(0, seq);
	munmap(log, KV_MAX_LOG_BYTES);

	/* A source address of the destination's family, port 0. */
	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	kv_sockaddr(&p.src_addr, kv_addr(), 0);
	KV_EXPECT_REFUSED(&p);

	/* A larger struct with a zero tail is the same call, tail untouched. */
	memset(&big, 0, sizeof(big));
	kv_ping_base(&big.p, KV_PORT_NO_LISTENER);
	big.p.size = sizeof(big);
	KV_EXPECT_REFUSED(&big.p);
	EXPECT_TRUE(kv_all_bytes(big.tail, sizeof(big.tail), 0));
}

#define KV_LOG_SLOTS	4
#define KV_LOG_SLOT	64
#define KV_LOG_COUNT	3

TEST_F_TIMEOUT(kverbs, ping_with_log, KV_NET_TIMEOUT)
{
	static char log[KV_LOG_SLOTS][KV_LOG_SLOT];
	char want[KV_LOG_SLOT];
	struct kverbs_ping p;
	struct kv_server *s;
	__u64 seq;
	long ret;
	int err, waited;
	unsigned int i;

	kv_net_begin();
	s = kv_server_start(KV_PORT_PING_LOG);

	/* From here on no KV_ASSERT: the server must be waited for. */
	memset(log, 0xff, sizeof(log));
	seq = UINT64_MAX;
	kv_ping_base(&p, KV_PORT_PING_LOG);
	p.flags = KVERBS_PING_F_VALIDATE;
	p.count = KV_LOG_COUNT;
	p.msg_size = KV_LOG_SLOT;
	p.log.buf = (uintptr_t)log;
	p.log.seq = (uintptr_t)&seq;
	p.log.slots = KV_LOG_SLOTS;
	p.log.slot_size = KV_LOG_SLOT;
	ret = kv_client_run(&p, &err);
	waited = kv_server_wait(s, 15);

	if (ret)
		KV_FAIL("client: returned %ld errno %d (%s), expected 0", ret,
			   err, strerror(err));
	EXPECT_EQ(KV_LOG_COUNT, p.result.iterations);
	EXPECT_EQ(KV_LOG_COUNT * KV_LOG_SLOT, p.result.bytes_read);
	EXPECT_EQ(KV_LOG_COUNT * KV_LOG_SLOT, p.result.bytes_written);
	EXPECT_EQ(KVERBS_STEP_NONE, p.result.failed_step);
	EXPECT_EQ(0, p.result.valid);
	EXPECT_LE(p.result.iter_ns_min, p.result.iter_ns_avg);
	EXPECT_LE(p.result.iter_ns_avg, p.result.iter_ns_max);
	EXPECT_GE(p.result.elapsed_ns, p.result.iter_ns_max);
	if (kv_failed())
		kv_diag_result(_metadata, "client", &p.result);

	EXPECT_EQ(KV_LOG_COUNT, seq);
	for (i = 0; i < KV_LOG_COUNT; i++) {
		kv_rping_payload(want, sizeof(want), i);
		if (memcmp(log[i], want, sizeof(want)))
			KV_FAIL("log slot %u: '%.*s', expected '%s'", i,
				   KV_LOG_SLOT, log[i], want);
	}
	/* Slots past the last iteration are never written. */
	for (; i < KV_LOG_SLOTS; i++)
		if (!kv_all_bytes(log[i], KV_LOG_SLOT, 0xff))
			KV_FAIL("log slot %u written, only %u iterations ran",
				   i, KV_LOG_COUNT);

	if (waited)
		KV_FAIL("server did not end when its client left");
	if (s->ret)
		KV_FAIL("server: returned %ld errno %d (%s), expected 0",
			   s->ret, s->err, strerror(s->err));
	EXPECT_EQ(1, s->ping.result.clients);
	EXPECT_EQ(0, s->ping.result.clients_failed);
	EXPECT_EQ(KV_LOG_COUNT, s->ping.result.iterations);
	EXPECT_EQ(KV_LOG_COUNT * KV_LOG_SLOT, s->ping.result.bytes_read);
	if (kv_failed())
		kv_diag_result(_metadata, "server", &s->ping.result);
	free(s);
}

/*
 * A log the caller cannot write is refused before the ping begins: the
 * module pins the log before it holds a device (so that no page fault
 * of the caller's can hold up a device's removal), and a page that
 * cannot be pinned fails the call with -EFAULT at KVERBS_STEP_LOG,
 * before any connection.  At a port where nothing listens, so a ping
 * that got as far as connecting would say ECONNREFUSED instead.
 */
TEST_F_TIMEOUT(kverbs, ping_log_unwritable, KV_NET_TIMEOUT)
{
	static const char ro[4096] __attribute__((aligned(4096)));
	struct kverbs_ping p;
	__u64 seq = 0;
	size_t i;
	const struct {
		const char *what;
		__u64 buf;
		__u64 seq;
	} cases[] = {
		{ "an unmapped log", (uintptr_t)kv_unmapped(), (uintptr_t)&seq },
		{ "a read-only log", (uintptr_t)ro, (uintptr_t)&seq },
		{ "an unmapped counter", (uintptr_t)&seq, (uintptr_t)kv_unmapped() },
	};

	kv_net_begin();
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		kv_ping_base(&p, KV_PORT_NO_LISTENER);
		p.flags = KVERBS_PING_F_VALIDATE;
		p.count = KV_LOG_COUNT;
		p.msg_size = KV_LOG_SLOT;
		p.log.buf = cases[i].buf;
		p.log.seq = cases[i].seq;
		/* One slot of eight bytes, so that &seq serves as a log too. */
		p.log.slots = 1;
		p.log.slot_size = sizeof(seq);
		EXPECT_ERRNO(EFAULT, kv_ioctl(KVERBS_IOC_PING, &p));
		EXPECT_EQ(-EFAULT, p.result.error);
		EXPECT_EQ(KVERBS_STEP_LOG, p.result.failed_step);
		EXPECT_EQ(0, p.result.iterations);
		if (kv_failed())
			TH_LOG("%s", cases[i].what);
	}
	EXPECT_EQ(0, seq);

	/* The counter is a __u64 the reader loads in one access: aligned. */
	kv_ping_base(&p, KV_PORT_NO_LISTENER);
	p.log.buf = (uintptr_t)&seq;
	p.log.seq = (uintptr_t)&seq + 1;
	p.log.slots = 1;
	p.log.slot_size = 1;
	KV_PING_REJECTED(&p, EINVAL);
}

/* A client that nobody answers: refused, with the result saying where. */
TEST_F_TIMEOUT(kverbs, perf_no_listener, KV_NET_TIMEOUT)
{
	struct kverbs_perf p;

	kv_net_begin();
	kv_perf_base(&p);
	kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PERF, &p));
	EXPECT_EQ(-ECONNREFUSED, p.result.error);
	EXPECT_EQ(KVERBS_STEP_CONNECT, p.result.failed_step);
	EXPECT_EQ(KVERBS_PERF_REJECT_NONE, p.result.reject_reason);
	EXPECT_EQ(0, p.result.iterations);
}

/*
 * The control of perf_poll_unknown and perf_poll_contradictions: each policy, alone and with the pool,
 * is taken, and the CQ the client made before it found nobody to
 * connect to is the one asked for.  -e is --poll softirq, and so is
 * the pool's default.
 */
TEST_F_TIMEOUT(kverbs, perf_poll_taken, KV_NET_TIMEOUT)
{
	static const struct {
		__u32 flags;
		__u16 poll, cq_flags, want;
	} cases[] = {
		{ 0, KVERBS_PERF_POLL_DEFAULT, 0, KVERBS_PERF_POLL_DIRECT },
		{ 0, KVERBS_PERF_POLL_DIRECT, 0, KVERBS_PERF_POLL_DIRECT },
		{ 0, KVERBS_PERF_POLL_SOFTIRQ, 0, KVERBS_PERF_POLL_SOFTIRQ },
		{ KVERBS_PERF_F_EVENTS, 0, 0, KVERBS_PERF_POLL_SOFTIRQ },
		{ 0, KVERBS_PERF_POLL_WORKQUEUE, 0, KVERBS_PERF_POLL_WORKQUEUE },
		{ 0, KVERBS_PERF_POLL_UNBOUND_WORKQUEUE, 0,
		  KVERBS_PERF_POLL_UNBOUND_WORKQUEUE },
		{ 0, 0, KVERBS_PERF_CQ_POOL, KVERBS_PERF_POLL_SOFTIRQ },
		{ 0, KVERBS_PERF_POLL_WORKQUEUE, KVERBS_PERF_CQ_POOL,
		  KVERBS_PERF_POLL_WORKQUEUE },
		{ 0, KVERBS_PERF_POLL_UNBOUND_WORKQUEUE, KVERBS_PERF_CQ_POOL,
		  KVERBS_PERF_POLL_UNBOUND_WORKQUEUE },
	};
	long nproc = sysconf(_SC_NPROCESSORS_ONLN);
	bool spread = false;
	struct kverbs_perf p;
	__u32 last = 0;
	size_t i;

	kv_net_begin();
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		kv_perf_base(&p);
		kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
		p.flags = cases[i].flags;
		p.poll = cases[i].poll;
		p.cq_flags = cases[i].cq_flags;
		memset(&p.cq, 0xff, sizeof(p.cq));
		EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PERF, &p));
		EXPECT_EQ(KVERBS_STEP_CONNECT, p.result.failed_step);
		EXPECT_EQ(cases[i].want, p.cq.poll);
		EXPECT_EQ(cases[i].cq_flags, p.cq.flags);
		EXPECT_NE(0, p.cq.id);
		EXPECT_GT(nproc, p.cq.comp_vector);
		EXPECT_LE(1, p.cq.cqe);
		EXPECT_EQ(0, p.cq.__reserved);
		if (kv_failed())
			TH_LOG("case %zu", i);
		if (i && p.cq.comp_vector != last)
			spread = true;
		last = p.cq.comp_vector;
	}
	/*
	 * One endpoint after another takes the next vector: rxe and siw
	 * have one per possible CPU, and kverbs uses no more than are online.
	 */
	if (nproc > 1)
		EXPECT_TRUE(spread);
}

/*
 * Adaptive moderation needs a device that can moderate (ops.modify_cq):
 * rxe and siw cannot, and the test fails at its setup with -EOPNOTSUPP,
 * before any CQ is made.
 */
TEST_F_TIMEOUT(kverbs, perf_dim_unsupported, KV_NET_TIMEOUT)
{
	struct kverbs_perf p;

	kv_net_begin();
	kv_perf_base(&p);
	kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
	p.cq_flags = KVERBS_PERF_CQ_DIM;
	EXPECT_ERRNO(EOPNOTSUPP, kv_ioctl(KVERBS_IOC_PERF, &p));
	EXPECT_EQ(-EOPNOTSUPP, p.result.error);
	EXPECT_EQ(KVERBS_STEP_SETUP, p.result.failed_step);
	EXPECT_EQ(0, p.cq.poll);
}

/*
 * @p, a client to a port nobody listens on, called as one built when the
 * struct ended at @old: refused as ever, its result back, and every byte
 * past @old as it was.
 */
#define KV_PERF_OLDER_CALLER(p, old) kv_perf_older_caller(_metadata, p, old)
static void kv_perf_older_caller(struct __test_metadata *_metadata,
				 struct kverbs_perf *p, size_t old)
{
	p->size = old;
	memset((char *)p + old, 0xa5, sizeof(*p) - old);
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PERF, p));
	EXPECT_EQ(-ECONNREFUSED, p->result.error);
	EXPECT_TRUE(kv_all_bytes((char *)p + old, sizeof(*p) - old, 0xa5));
}

/*
 * A caller whose struct ends before &kverbs_perf.cq, as one built before
 * it, gets its result and nothing written past its struct.
 */
TEST_F_TIMEOUT(kverbs, perf_cq_not_written_past_struct, KV_NET_TIMEOUT)
{
	struct kverbs_perf p;
	size_t old = offsetof(struct kverbs_perf, cq);

	kv_net_begin();
	kv_perf_base(&p);
	kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
	KV_PERF_OLDER_CALLER(&p, old);
}

/*
 * A caller whose struct ends before &kverbs_perf.srq_wr, as one built before
 * the SRQ's fields, gets its result and nothing written past its struct;
 * one that holds them gets them back, 0 from a client.
 */
TEST_F_TIMEOUT(kverbs, perf_srq_not_written_past_struct, KV_NET_TIMEOUT)
{
	size_t old = offsetof(struct kverbs_perf, srq_wr);
	struct kverbs_perf p;

	kv_net_begin();
	kv_perf_base(&p);
	kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
	KV_PERF_OLDER_CALLER(&p, old);
	/* The same call at today's size: the block comes back, zeroed. */
	kv_perf_base(&p);
	kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
	p.srq_limit_events = 5;
	p.srq_shared = 5;
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PERF, &p));
	EXPECT_EQ(0, p.srq_wr);
	EXPECT_EQ(0, p.srq_limit);
	EXPECT_EQ(0, p.srq_limit_events);
	EXPECT_EQ(0, p.srq_shared);
}

/*
 * &kverbs_perf.ended_ns: 0 from a call whose test never ran, whatever
 * came in; and not written at all to a caller whose struct ends before
 * it.
 */
TEST_F_TIMEOUT(kverbs, perf_ended_ns, KV_NET_TIMEOUT)
{
	struct kverbs_perf p;

	kv_net_begin();
	kv_perf_base(&p);
	kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
	p.ended_ns = 77;
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PERF, &p));
	EXPECT_EQ(0, p.ended_ns);
	KV_PERF_OLDER_CALLER(&p, offsetof(struct kverbs_perf, ended_ns));
}

/*
 * KVERBS_PERF_F_UD is a client's, of SEND_BW and SEND_LAT, with no mode
 * but --validate beside it, in any poll mode: each refusal has a control that differs
 * only there and gets past the flag checks to the message size
 * (-EMSGSIZE).
 */
TEST_F(kverbs, perf_ud_flag)
{
	static const struct {
		__u32 flags;
		__u16 post_list, cq_mod, poll, cq_flags;
		__u32 inline_size;
	} bad[] = {
		{ .flags = KVERBS_PERF_F_IMM },
		{ .flags = KVERBS_PERF_F_REVERSE },
		{ .post_list = 2 },
		{ .cq_mod = 2 },
		{ .inline_size = 16 },
		{ .poll = KVERBS_PERF_POLL_SOFTIRQ, .cq_flags = KVERBS_PERF_CQ_POOL },
		{ .poll = KVERBS_PERF_POLL_SOFTIRQ, .cq_flags = KVERBS_PERF_CQ_DIM },
	};
	static const uint32_t tests[] = { KVERBS_PERF_SEND_BW, KVERBS_PERF_SEND_LAT };
	struct kverbs_perf p;
	size_t i, k;

	KV_EXPECT_FEATURE(KVERBS_FEATURE_PERF_UD);
	for (k = 0; k < ARRAY_SIZE(tests); k++) {
		kv_perf_base_test(&p, tests[k]);
		p.msg_size = kv_max_msg_size() + 1;
		p.flags = KVERBS_PERF_F_UD | KVERBS_PERF_F_VALIDATE;
		/* The controls: UD alone, and in each poll mode, get past. */
		KV_PERF_REJECTED(&p, EMSGSIZE);
		for (i = KVERBS_PERF_POLL_DIRECT; i <= KVERBS_PERF_POLL_UNBOUND_WORKQUEUE; i++) {
			p.poll = i;
			KV_PERF_REJECTED(&p, EMSGSIZE);
		}
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			if (tests[k] == KVERBS_PERF_SEND_LAT &&
			    (bad[i].flags == KVERBS_PERF_F_REVERSE || bad[i].post_list ||
			     bad[i].cq_mod))
				continue;	/* refused for a latency test anyway */
			kv_perf_base_test(&p, tests[k]);
			p.msg_size = kv_max_msg_size() + 1;
			p.flags = KVERBS_PERF_F_UD | bad[i].flags;
			p.post_list = bad[i].post_list;
			p.cq_mod = bad[i].cq_mod;
			p.poll = bad[i].poll;
			p.cq_flags = bad[i].cq_flags;
			p.inline_size = bad[i].inline_size;
			KV_PERF_REJECTED(&p, EINVAL);
			/* Without the flag the same call gets past. */
			p.flags &= ~KVERBS_PERF_F_UD;
			KV_PERF_REJECTED(&p, EMSGSIZE);
		}
	}
	/* Not a test that WRITEs, READs or runs atomics. */
	kv_perf_base_test(&p, KVERBS_PERF_WRITE_BW);
	p.msg_size = kv_max_msg_size() + 1;
	p.flags = KVERBS_PERF_F_UD;
	KV_PERF_REJECTED(&p, EINVAL);
	p.flags = 0;
	KV_PERF_REJECTED(&p, EMSGSIZE);
	/* The word beside the UD fields is out only: what comes in is ignored. */
	kv_perf_base_test(&p, KVERBS_PERF_SEND_BW);
	p.msg_size = kv_max_msg_size() + 1;
	p.foreign = 1;
	KV_PERF_REJECTED(&p, EMSGSIZE);
	/* A server: the client's request says, the server does not. */
	kv_perf_server_base(&p);
	p.msg_size = kv_max_msg_size() + 1;
	KV_PERF_REJECTED(&p, EMSGSIZE);
	p.flags = KVERBS_PERF_F_UD;
	KV_PERF_REJECTED(&p, EINVAL);
}

/*
 * &kverbs_perf.lost, .path_mtu and .foreign: 0 from an RC call, whatever came in;
 * a UD client learns the path MTU before it connects, also when nobody
 * listens; and neither is written to a caller whose struct ends before
 * them.
 */
TEST_F_TIMEOUT(kverbs, perf_ud_fields, KV_NET_TIMEOUT)
{
	struct kverbs_perf p;

	kv_net_begin();
	kv_perf_base_test(&p, KVERBS_PERF_SEND_BW);
	kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
	p.lost = 5;
	p.path_mtu = 5;
	p.foreign = 5;
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PERF, &p));
	EXPECT_EQ(0, p.lost);
	EXPECT_EQ(0, p.path_mtu);
	EXPECT_EQ(0, p.foreign);
	KV_PERF_OLDER_CALLER(&p, offsetof(struct kverbs_perf, lost));

	if (!strcmp(kv_env("KV_TYPE", "rxe"), "siw"))
		SKIP(return, "iWARP (siw) has no UD");
	kv_perf_base_test(&p, KVERBS_PERF_SEND_BW);
	kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
	p.flags = KVERBS_PERF_F_UD;
	p.foreign = 5;
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PERF, &p));
	EXPECT_EQ(0, p.lost);
	EXPECT_EQ(0, p.foreign);
	EXPECT_GE(p.path_mtu, 256);
	EXPECT_EQ(p.result.active_mtu, p.path_mtu);
	/* One byte past it: refused before connecting, the MTU said. */
	p.msg_size = p.path_mtu + 1;
	EXPECT_ERRNO(EMSGSIZE, kv_ioctl(KVERBS_IOC_PERF, &p));
	EXPECT_EQ(KVERBS_STEP_SETUP, p.result.failed_step);
	EXPECT_GE(p.path_mtu, 256);
}

/*
 * A caller whose struct ends before &kverbs_perf.phases, as one built
 * before them, asks for none: whatever lies past its struct is neither
 * read (0xa5 bytes there would be a pointer without its flag, -EINVAL)
 * nor written.
 */
TEST_F_TIMEOUT(kverbs, perf_phases_older_caller, KV_NET_TIMEOUT)
{
	size_t old = offsetof(struct kverbs_perf, phases);
	static __u64 samples[4];
	struct kverbs_perf p;

	kv_net_begin();
	kv_perf_base(&p);
	p.test = KVERBS_PERF_READ_LAT;
	kv_sockaddr(&p.addr, kv_addr(), KV_PORT_NO_LISTENER);
	p.samples = (uintptr_t)samples;
	p.samples_max = ARRAY_SIZE(samples);
	memset(&p.phases, 0xa5, sizeof(p.phases));
	/* The control: at today's size the bytes are a pointer without its flag. */
	KV_PERF_REJECTED(&p, EINVAL);
	KV_PERF_OLDER_CALLER(&p, old);
}

/* ------------------------------------------------------------------ */
/* Lengths and kinds of the memory the kernel pins                      */
/* ------------------------------------------------------------------ */

/* A perf latency client, to a port nobody listens on, storing @max samples at @samples. */
static void kv_perf_lat_base(struct kverbs_perf *p, void *samples, __u32 max)
{
	kv_perf_base(p);
	p->test = KVERBS_PERF_READ_LAT;
	kv_sockaddr(&p->addr, kv_addr(), KV_PORT_NO_LISTENER);
	p->samples = (uintptr_t)samples;
	p->samples_max = max;
}

/*
 * A perf call failed with @err at @step before it began: the result says
 * so and nothing else.
 */
#define KV_PERF_FAILED_AT(p, err, step) kv_perf_failed_at(_metadata, p, err, step, __LINE__)
static void kv_perf_failed_at(struct __test_metadata *_metadata,
			      struct kverbs_perf *p, int err, __u32 step, int line)
{
	long ret;
	int got;

	memset(&p->result, 0xff, sizeof(p->result));
	errno = 0;
	ret = kv_ioctl(KVERBS_IOC_PERF, p);
	got = errno;
	if (ret != -1 || got != err || p->result.error != -err ||
	    p->result.failed_step != step || p->result.valid ||
	    p->result.iterations || p->result.samples_stored)
		KV_FAIL("line %d: returned %ld errno %d (%s), result error %d step %u valid 0x%x, expected %s at step %u",
			line, ret, got, strerror(got), p->result.error,
			p->result.failed_step, p->result.valid, strerror(err), step);
}

/*
 * @len bytes of memory, the first of KV_USER_SPAN reserved address space:
 * an array that starts there and claims up to KV_USER_SPAN bytes is
 * inside user space, so access_ok() passes it and the kernel's answer is
 * about its length.  Without the reservation the address is wherever
 * mmap() puts it, which ASLR may place less than 32 GiB below the top of
 * user space; a 32 GiB array from there is outside it, and -EFAULT.
 */
#define KV_USER_SPAN (64ULL << 30)

static void *kv_user_span(size_t len)
{
	char *p = mmap(NULL, KV_USER_SPAN, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p, len, PROT_READ | PROT_WRITE)) {
		munmap(p, KV_USER_SPAN);
		return NULL;
	}
	return p;
}

/*
 * The samples array is pinned for the call, @samples_max __u64 of it,
 * counted in 64 bits: more than max_pinned_mb is -ENOBUFS and more than
 * max_pinned_mb_per_user -EDQUOT, at KVERBS_STEP_SAMPLES, whatever memory
 * backs the pointer.  0x20000001 entries are 4 GiB + 8 bytes, which a
 * 32-bit size_t wraps to 8: a kernel that pinned one page for them would
 * let the test write past it.  The array here is one page; a call that
 * got past the pin would be refused at the connection instead.
 */
TEST_F(kverbs, perf_samples_past_pin_limits)
{
	unsigned long long mb = kv_param("max_pinned_mb");
	unsigned long long user_mb = kv_param("max_pinned_mb_per_user");
	struct kverbs_perf p;
	__u64 *samples;
	long page = sysconf(_SC_PAGESIZE);

	samples = kv_user_span(page);
	ASSERT_TRUE(samples != NULL);

	kv_perf_lat_base(&p, samples, 0x20000001);
	KV_PERF_FAILED_AT(&p, ENOBUFS, KVERBS_STEP_SAMPLES);
	kv_perf_lat_base(&p, samples, UINT32_MAX);
	KV_PERF_FAILED_AT(&p, ENOBUFS, KVERBS_STEP_SAMPLES);
	/* One entry past the module's limit: one page more than it allows. */
	if (mb < (UINT32_MAX >> 17)) {
		kv_perf_lat_base(&p, samples, (mb << 17) + 1);
		KV_PERF_FAILED_AT(&p, ENOBUFS, KVERBS_STEP_SAMPLES);
	}
	/* Within the module's limit, past the user's. */
	if (user_mb < mb && user_mb < (UINT32_MAX >> 17)) {
		kv_perf_lat_base(&p, samples, (user_mb << 17) + 1);
		KV_PERF_FAILED_AT(&p, EDQUOT, KVERBS_STEP_SAMPLES);
	}
	/* Nothing was written, nothing stays pinned: the page is still ours. */
	EXPECT_EQ(0, samples[0]);
	EXPECT_EQ(0, munmap(samples, KV_USER_SPAN));
}

/* Write a parameter of the module's; 0, or -1 with errno. */
static int kv_param_set(const char *param, unsigned long long v)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/kverbs/parameters/%s", param);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fprintf(f, "%llu\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/*
 * The phases' array is pinned after the samples', 16 bytes an entry
 * counted in 64 bits, against the same limits.  With the user's limit at
 * 1 MiB (256 pages), 60000 samples (118 pages) fit, and with their phases
 * (235 pages) they do not: -EDQUOT at KVERBS_STEP_SAMPLES.  Counted at 8
 * bytes an entry the phases would fit in 118 pages, and the kernel would
 * write the other half past them.  The control is the same call without
 * phases, which gets past the pin to the connection nobody accepts.
 * 0x10000001 entries are 4 GiB and 16 bytes of phases, which a 32-bit
 * size_t wraps to 16; the samples' 2 GiB are refused first.  The phases'
 * page is never touched.
 */
TEST_F_TIMEOUT(kverbs, perf_phases_past_pin_limits, KV_NET_TIMEOUT)
{
	unsigned long long user_mb = kv_param("max_pinned_mb_per_user");
	unsigned long long mb = kv_param("max_pinned_mb");
	long page = sysconf(_SC_PAGESIZE);
	size_t len = 130 * page;
	struct kverbs_perf p;
	__u64 *samples, *phases;

	if (page != 4096 || mb < 2)
		SKIP(return, "needs 4 KiB pages and max_pinned_mb of 2 or more");
	samples = kv_user_span(len);
	ASSERT_TRUE(samples != NULL);
	phases = kv_user_span(page);
	ASSERT_TRUE(phases != NULL);

	kv_net_begin();
	if (mb < 2048) {
		kv_perf_lat_base(&p, samples, 0x10000001);
		p.flags = KVERBS_PERF_F_PHASES;
		p.phases = (uintptr_t)phases;
		KV_PERF_FAILED_AT(&p, ENOBUFS, KVERBS_STEP_SAMPLES);
	}

	ASSERT_EQ(0, kv_param_set("max_pinned_mb_per_user", 1));
	kv_perf_lat_base(&p, samples, 60000);
	p.flags = KVERBS_PERF_F_PHASES;
	p.phases = (uintptr_t)phases;
	KV_PERF_FAILED_AT(&p, EDQUOT, KVERBS_STEP_SAMPLES);
	/* The control: the samples alone fit. */
	kv_perf_lat_base(&p, samples, 60000);
	EXPECT_ERRNO(ECONNREFUSED, kv_ioctl(KVERBS_IOC_PERF, &p));
	EXPECT_EQ(-ECONNREFUSED, p.result.error);
	EXPECT_EQ(0, kv_param_set("max_pinned_mb_per_user", user_mb));
	EXPECT_EQ(user_mb, kv_param("max_pinned_mb_per_user"));
	EXPECT_EQ(0, phases[0]);
	EXPECT_EQ(0, munmap(phases, KV_USER_SPAN));
	EXPECT_EQ(0, munmap(samples, KV_USER_SPAN));
}

/* Memory for a log or samples, and whether the kernel takes it. */
struct kv_ubuf_kind {
	const char *what;
	void *mem;
	int shared;
	int fd;
};

#define KV_UBUF_BYTES	(64 * 1024)

/*
 * Shared mappings of every kind the kernel refuses, and private ones it
 * takes: anonymous, and a private mapping of the same memfd, whose pages
 * a write copies.  Returns how many of @k it filled.
 */
static int kv_ubuf_kinds(struct __test_metadata *_metadata,
			 struct kv_ubuf_kind *k)
{
	char path[] = "/tmp/kverbs-uapi-XXXXXX";
	int n = 0, i, memfd, tmpfd;

	memfd = memfd_create("kverbs-uapi", 0);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, KV_UBUF_BYTES));
	tmpfd = mkstemp(path);
	ASSERT_LE(0, tmpfd);
	unlink(path);
	ASSERT_EQ(0, ftruncate(tmpfd, KV_UBUF_BYTES));

	k[n++] = (struct kv_ubuf_kind){ "MAP_SHARED memfd",
		mmap(NULL, KV_UBUF_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0),
		1, memfd };
	k[n++] = (struct kv_ubuf_kind){ "MAP_SHARED | MAP_ANONYMOUS",
		mmap(NULL, KV_UBUF_BYTES, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0), 1, -1 };
	k[n++] = (struct kv_ubuf_kind){ "MAP_SHARED file in /tmp (tmpfs in the guests)",
		mmap(NULL, KV_UBUF_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, tmpfd, 0),
		1, tmpfd };
	k[n++] = (struct kv_ubuf_kind){ "MAP_PRIVATE | MAP_ANONYMOUS",
		mmap(NULL, KV_UBUF_BYTES, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0, -1 };
	k[n++] = (struct kv_ubuf_kind){ "MAP_PRIVATE memfd",
		mmap(NULL, KV_UBUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE, memfd, 0),
		0, memfd };
	for (i = 0; i < n; i++) {
		ASSERT_TRUE(k[i].mem != MAP_FAILED) {
			TH_LOG("%s: %s", k[i].what, strerror(errno));
		}
	}
	return n;
}

static void kv_ubuf_kinds_free(struct kv_ubuf_kind *k, int n)
{
	int i;

	for (i = 0; i < n; i++)
		munmap(k[i].mem, KV_UBUF_BYTES);
	/* The two files: the first and the third kind's. */
	close(k[0].fd);
	close(k[2].fd);
}

/*
 * The module pins only private memory for a ping's log and its counter:
 * a shared mapping (a file, a memfd, shared anonymous memory) fails with
 * -EOPNOTSUPP at KVERBS_STEP_LOG before anything is connected, on every
 * kernel (6.1 would pin a file's page cache; 6.12 pins shmem).  The
 * private kinds pass, and the ping is refused at the connection.
 */
TEST_F_TIMEOUT(kverbs, ping_log_shared_memory, KV_NET_TIMEOUT)
{
	struct kv_ubuf_kind k[5];
	struct kverbs_ping p;
	__u64 seq = 0;
	int n, i, as_seq;
	char *mem;

	kv_net_begin();
	n = kv_ubuf_kinds(_metadata, k);
	for (i = 0; i < n; i++) {
		mem = k[i].mem;
		memset(mem, 0xa5, KV_UBUF_BYTES);
		for (as_seq = 0; as_seq < 2; as_seq++) {
			kv_ping_base(&p, KV_PORT_NO_LISTENER);
			p.log.buf = (uintptr_t)(as_seq ? (void *)&seq : mem);
			p.log.seq = (uintptr_t)(as_seq ? mem : (void *)&seq);
			p.log.slots = as_seq ? 1 : KV_UBUF_BYTES / 64;
			p.log.slot_size = as_seq ? sizeof(seq) : 64;
			if (!k[i].shared) {
				KV_EXPECT_REFUSED(&p);
			} else {
				memset(&p.result, 0xff, sizeof(p.result));
				EXPECT_ERRNO(EOPNOTSUPP, kv_ioctl(KVERBS_IOC_PING, &p));
				EXPECT_EQ(-EOPNOTSUPP, p.result.error);
				EXPECT_EQ(KVERBS_STEP_LOG, p.result.failed_step);
				EXPECT_EQ(0, p.result.valid);
				EXPECT_EQ(0, p.result.iterations);
			}
			if (kv_failed()) {
				TH_LOG("%s as the %s", k[i].what, as_seq ? "counter" : "log");
				break;
			}
		}
		/* Nothing stored: no byte of it changed. */
		if (!kv_all_bytes(mem, KV_UBUF_BYTES, 0xa5))
			KV_FAIL("%s: written", k[i].what);
	}
	EXPECT_EQ(0, seq);
	kv_ubuf_kinds_free(k, n);
}

/* The same for a perf latency client's samples, at KVERBS_STEP_SAMPLES. */
TEST_F_TIMEOUT(kverbs, perf_samples_shared_memory, KV_NET_TIMEOUT)
{
	struct kv_ubuf_kind k[5];
	struct kverbs_perf p;
	long ret;
	int n, i, err;

	kv_net_begin();
	n = kv_ubuf_kinds(_metadata, k);
	for (i = 0; i < n; i++) {
		memset(k[i].mem, 0xa5, KV_UBUF_BYTES);
		kv_perf_lat_base(&p, k[i].mem, KV_UBUF_BYTES / sizeof(__u64));
		if (k[i].shared) {
			KV_PERF_FAILED_AT(&p, EOPNOTSUPP, KVERBS_STEP_SAMPLES);
		} else {
			errno = 0;
			ret = kv_ioctl(KVERBS_IOC_PERF, &p);
			err = errno;
			if (ret != -1 || err != ECONNREFUSED ||
			    p.result.failed_step != KVERBS_STEP_CONNECT)
				KV_FAIL("returned %ld errno %d (%s) at step %u, expected a refused connection",
					ret, err, strerror(err), p.result.failed_step);
		}
		if (!kv_all_bytes(k[i].mem, KV_UBUF_BYTES, 0xa5))
			KV_FAIL("%s: written", k[i].what);
		if (kv_failed()) {
			TH_LOG("%s as the samples", k[i].what);
			break;
		}
	}
	kv_ubuf_kinds_free(k, n);
}

KV_HARNESS_MAIN
