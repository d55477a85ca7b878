// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz: throw random and mutated ioctls at /dev/kverbs.
 *
 * Each call is one of: a random command number in and around kverbs'
 * ioctl type, with a random direction and size; or a valid
 * KVERBS_IOC_INFO, _DEVICES, _PING, _PERF, _LISTEN or _LESSON argument
 * mutated a few times,
 * field by field (sizes, counts, flags, reserved words, pointers,
 * addresses) or bit by bit, and placed where it may straddle an unmapped
 * page or sit in a read-only one.  Pointers inside arguments are NULL,
 * unmapped, read-only, kernel addresses, non-canonical, or land in our own
 * arena.
 *
 * What must hold: every call returns 0 or -1 with an errno the uAPI
 * documents for it, none blocks past its bound (a ping or perf test may
 * wait for the network, so each is interrupted by SIGALRM after
 * KV_FUZZ_PING_MS), the process survives, and valid calls work
 * afterwards.  run.sh's unload step then checks that rmmod works and
 * dmesg is clean; the debug lane adds KASAN and kmemleak.
 *
 * The run is reproducible from its seed, which is printed first:
 *	KV_FUZZ_SEED=1234 KV_FUZZ_CALLS=100000 selftests/fuzz -t calls
 *
 * Written on kselftest_harness.h (see uapi.c): each test runs in a
 * process of its own, with /dev/kverbs opened by the fuzz fixture;
 * without it every test skips.
 */
#include "kvlib.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kvharness.h"

/* Nobody listens on these ports while the fuzzer runs. */
#define KV_FUZZ_PORT_BASE	17500
#define KV_FUZZ_PORTS		100
/* The ports of the valid ping and perf test after the run. */
#define KV_FUZZ_PORT_VALID	17498
#define KV_FUZZ_PORT_VALID_PERF	17499
/* How long a ping or perf test may run before SIGALRM interrupts it. */
#define KV_FUZZ_PING_MS		20
/* A call that takes longer than this despite the alarm is a hang. */
#define KV_FUZZ_CALL_LIMIT_NS	(5ULL * 1000000000ULL)
/* Reopen /dev/kverbs this often, so that release runs too. */
#define KV_FUZZ_REOPEN		997
/* Check that a valid call still works this often. */
#define KV_FUZZ_SANITY		1000

/* ------------------------------------------------------------------ */
/* Randomness: xorshift64*, from a printed seed                          */
/* ------------------------------------------------------------------ */

static uint64_t kv_rng;

static uint64_t kv_rand(void)
{
	kv_rng ^= kv_rng >> 12;
	kv_rng ^= kv_rng << 25;
	kv_rng ^= kv_rng >> 27;
	return kv_rng * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, @n). */
static uint64_t kv_below(uint64_t n)
{
	return n ? kv_rand() % n : 0;
}

static uint64_t kv_pick(const uint64_t *v, size_t n)
{
	return v[kv_below(n)];
}

/* ------------------------------------------------------------------ */
/* Memory: an arena, a page that faults, a page that is read-only        */
/* ------------------------------------------------------------------ */

#define KV_ARENA_PAGES	16

static struct {
	long page;
	size_t size;		/* of the read-write part */
	unsigned char *rw;
	unsigned char *none;	/* right after rw */
	unsigned char *ro;	/* right after none */
} kv_arena;

static void kv_arena_init(void)
{
	unsigned char *p;

	kv_arena.page = sysconf(_SC_PAGESIZE);
	kv_arena.size = KV_ARENA_PAGES * kv_arena.page;
	p = mmap(NULL, kv_arena.size + 2 * kv_arena.page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KV_ASSERT_TRUE(p != MAP_FAILED);
	kv_arena.rw = p;
	kv_arena.none = p + kv_arena.size;
	kv_arena.ro = kv_arena.none + kv_arena.page;
	KV_ASSERT_OK(mprotect(kv_arena.none, kv_arena.page, PROT_NONE));
	memset(kv_arena.ro, 0xa5, kv_arena.page);
	KV_ASSERT_OK(mprotect(kv_arena.ro, kv_arena.page, PROT_READ));
}

/*
 * A user pointer for the kernel to read or write through.  Most are bad;
 * the good ones point into the arena, never at anything else of ours.
 */
static uint64_t kv_pointer(void)
{
	switch (kv_below(10)) {
	case 0:
		return 0;
	case 1:
		return (uintptr_t)kv_arena.none + kv_below(kv_arena.page);
	case 2:
		return (uintptr_t)kv_arena.ro + kv_below(kv_arena.page);
	case 3:		/* ends just inside the arena: straddles the hole */
		return (uintptr_t)kv_arena.none - 1 - kv_below(256);
	case 4:		/* the direct map of a typical x86_64 kernel */
		return 0xffff888000000000ULL + (kv_rand() & 0xfffffff8);
	case 5:		/* non-canonical */
		return 0x0000800000000000ULL + (kv_rand() & 0xffff);
	case 6:
		return ~0ULL - kv_below(64);
	case 7:		/* random: almost always non-canonical or unmapped */
		return kv_rand();
	default:
		return (uintptr_t)kv_arena.rw + kv_below(kv_arena.size);
	}
}

/* ------------------------------------------------------------------ */
/* Mutating arguments                                                    */
/* ------------------------------------------------------------------ */

/* A field of an argument struct that mutations aim at. */
struct kv_field {
	const char *name;
	size_t offset;
	size_t width;		/* 1, 2, 4 or 8 bytes */
	int pointer;		/* a user pointer */
};

#define KV_FIELD(type, member, ptr) {					\
	#member, offsetof(type, member),				\
	sizeof(((type *)0)->member), ptr }

static const struct kv_field kv_info_fields[] = {
	KV_FIELD(struct kverbs_info, size, 0),
	KV_FIELD(struct kverbs_info, flags, 0),
	KV_FIELD(struct kverbs_info, __reserved, 0),
};

static const struct kv_field kv_devices_fields[] = {
	KV_FIELD(struct kverbs_devices, size, 0),
	KV_FIELD(struct kverbs_devices, flags, 0),
	KV_FIELD(struct kverbs_devices, device_entry_size, 0),
	KV_FIELD(struct kverbs_devices, port_entry_size, 0),
	KV_FIELD(struct kverbs_devices, device_capacity, 0),
	KV_FIELD(struct kverbs_devices, port_capacity, 0),
	KV_FIELD(struct kverbs_devices, device_count, 0),
	KV_FIELD(struct kverbs_devices, port_count, 0),
	KV_FIELD(struct kverbs_devices, devices, 1),
	KV_FIELD(struct kverbs_devices, ports, 1),
};

/*
 * What PING and PERF share: the size, flags, role, per-step limit and
 * addresses, and two output fields whose input values must not matter.
 */
#define KV_TEST_FIELDS(type)						\
	KV_FIELD(type, size, 0),					\
	KV_FIELD(type, flags, 0),					\
	KV_FIELD(type, role, 0),					\
	KV_FIELD(type, msg_size, 0),					\
	KV_FIELD(type, timeout_ns, 0),					\
	KV_FIELD(type, addr.ss_family, 0),				\
	KV_FIELD(type, addr.__data[0], 0),	/* port */		\
	KV_FIELD(type, addr.__data[2], 0),	/* IPv4 address */	\
	KV_FIELD(type, addr.__data[60], 0),	/* past any sockaddr */	\
	KV_FIELD(type, src_addr.ss_family, 0),				\
	KV_FIELD(type, src_addr.__data[2], 0),				\
	KV_FIELD(type, result.iterations, 0),				\
	KV_FIELD(type, result.error, 0)

static const struct kv_field kv_ping_fields[] = {
	KV_TEST_FIELDS(struct kverbs_ping),
	KV_FIELD(struct kverbs_ping, count, 0),
	KV_FIELD(struct kverbs_ping, __reserved0, 0),
	KV_FIELD(struct kverbs_ping, log.buf, 1),
	KV_FIELD(struct kverbs_ping, log.seq, 1),
	KV_FIELD(struct kverbs_ping, log.slots, 0),
	KV_FIELD(struct kverbs_ping, log.slot_size, 0),
};

static const struct kv_field kv_perf_fields[] = {
	KV_TEST_FIELDS(struct kverbs_perf),
	KV_FIELD(struct kverbs_perf, test, 0),
	KV_FIELD(struct kverbs_perf, tx_depth, 0),
	KV_FIELD(struct kverbs_perf, iterations, 0),
	KV_FIELD(struct kverbs_perf, duration_ns, 0),
	KV_FIELD(struct kverbs_perf, result.samples_stored, 0),
	KV_FIELD(struct kverbs_perf, samples, 1),
	KV_FIELD(struct kverbs_perf, samples_max, 0),
	KV_FIELD(struct kverbs_perf, poll, 0),
	KV_FIELD(struct kverbs_perf, cq_flags, 0),
	KV_FIELD(struct kverbs_perf, max_duration_ns, 0),
	KV_FIELD(struct kverbs_perf, max_iterations, 0),
	KV_FIELD(struct kverbs_perf, post_list, 0),
	KV_FIELD(struct kverbs_perf, cq_mod, 0),
	KV_FIELD(struct kverbs_perf, inline_size, 0),
	KV_FIELD(struct kverbs_perf, __reserved, 0),
	KV_FIELD(struct kverbs_perf, srq_wr, 0),
	KV_FIELD(struct kverbs_perf, srq_limit, 0),
	KV_FIELD(struct kverbs_perf, __reserved_srq, 0),
	KV_FIELD(struct kverbs_perf, phases, 1),
	KV_FIELD(struct kverbs_perf, foreign, 0),
};

static const struct kv_field kv_listen_fields[] = {
	KV_FIELD(struct kverbs_listen, size, 0),
	KV_FIELD(struct kverbs_listen, flags, 0),
	KV_FIELD(struct kverbs_listen, addr.ss_family, 0),
	KV_FIELD(struct kverbs_listen, addr.__data[0], 0),
	KV_FIELD(struct kverbs_listen, addr.__data[2], 0),
	KV_FIELD(struct kverbs_listen, addr.__data[60], 0),
	KV_FIELD(struct kverbs_listen, __reserved, 0),
};

static const struct kv_field kv_lesson_fields[] = {
	KV_FIELD(struct kverbs_lesson, size, 0),
	KV_FIELD(struct kverbs_lesson, flags, 0),
	KV_FIELD(struct kverbs_lesson, lesson, 0),
	KV_FIELD(struct kverbs_lesson, __reserved0, 0),
	KV_FIELD(struct kverbs_lesson, timeout_ns, 0),
	KV_FIELD(struct kverbs_lesson, addr.ss_family, 0),
	KV_FIELD(struct kverbs_lesson, addr.__data[0], 0),	/* port: must be 0 */
	KV_FIELD(struct kverbs_lesson, addr.__data[2], 0),
	KV_FIELD(struct kverbs_lesson, addr.__data[60], 0),
	KV_FIELD(struct kverbs_lesson, __reserved1, 0),
	KV_FIELD(struct kverbs_lesson, nruns, 0),
	KV_FIELD(struct kverbs_lesson, error, 0),
};

/* Values that find boundary bugs, for a field of any width. */
static uint64_t kv_interesting(void)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 7, 8, 15, 16, 25, 26, 27, 63, 64, 65, 255, 256,
		4095, 4096, 4097, 65535, 65536, 1 << 20, (1 << 20) + 1,
		1 << 24, 1U << 31, 0x7fffffff, 0xfffffffe, 0xffffffff,
		0x100000000ULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
		~0ULL,
		sizeof(struct kverbs_info), sizeof(struct kverbs_devices),
		sizeof(struct kverbs_ping), sizeof(struct kverbs_ping) + 8,
		sizeof(struct kverbs_device_info), sizeof(struct kverbs_port_info),
		KVERBS_DEVICE_INFO_SIZE_VER0, KVERBS_DEVICE_INFO_SIZE_VER0 - 1,
		KVERBS_PORT_INFO_SIZE_VER0, KVERBS_PORT_INFO_SIZE_VER0 - 1,
		3600ULL * 1000000000ULL, 3600ULL * 1000000000ULL + 1,
		/* PERF: its sizes before and after the samples, its limits */
		offsetof(struct kverbs_perf, samples), sizeof(struct kverbs_perf),
		sizeof(struct kverbs_perf) + 8, KVERBS_PERF_SEND_LAT + 1,
		KVERBS_PERF_MAX_DEPTH, KVERBS_PERF_MAX_DEPTH + 1,
		KVERBS_PERF_MAX_DURATION_NS, KVERBS_PERF_MAX_DURATION_NS + 1,
		/* the SRQ's limits, the poll policies', a lesson's */
		KVERBS_PERF_SRQ_MAX_WR, KVERBS_PERF_SRQ_MAX_WR + 1,
		KVERBS_PERF_SRQ_MAX_BYTES, KVERBS_PERF_SRQ_MAX_BYTES + 1,
		KVERBS_PERF_POLL_UNBOUND_WORKQUEUE + 1,
		KVERBS_LESSON_MR_SIZE + 1, sizeof(struct kverbs_lesson),
	};

	if (kv_below(4) == 0)
		return kv_rand() >> kv_below(64);
	return kv_pick(v, KV_ARRAY_SIZE(v));
}

static void kv_store(unsigned char *p, size_t width, uint64_t v)
{
	uint8_t v8 = v;
	uint16_t v16 = v;
	uint32_t v32 = v;

	switch (width) {
	case 1:
		memcpy(p, &v8, 1);
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

static uint64_t kv_load(const unsigned char *p, size_t width)
{
	uint64_t v = 0;

	memcpy(&v, p, width);	/* little-endian */
	return v;
}

/*
 * A mutated pointer field may now name any of our own memory: a bit
 * flipped in the arena's address reaches libc's data as easily as the
 * hole.  The kernel would rightly write there and the fuzzer would die
 * of its own doing, so user addresses outside the arena become the hole.
 */
static void kv_confine_pointers(unsigned char *arg, const struct kv_field *fields,
				size_t nfields)
{
	uintptr_t lo = (uintptr_t)kv_arena.rw;
	uintptr_t hi = (uintptr_t)kv_arena.ro + kv_arena.page;
	size_t i;

	for (i = 0; i < nfields; i++) {
		uint64_t v;

		if (!fields[i].pointer)
			continue;
		v = kv_load(arg + fields[i].offset, fields[i].width);
		if (v >= (uint64_t)kv_arena.page && v < 0x0000800000000000ULL &&
		    (v < lo || v >= hi))
			kv_store(arg + fields[i].offset, fields[i].width,
				 (uintptr_t)kv_arena.none);
	}
}

/* One to four mutations of the @len-byte argument at @arg. */
static void kv_mutate(unsigned char *arg, size_t len,
		      const struct kv_field *fields, size_t nfields)
{
	int i, n = 1 + kv_below(4);

	for (i = 0; i < n; i++) {
		const struct kv_field *f = &fields[kv_below(nfields)];

		switch (kv_below(4)) {
		case 0:		/* flip a bit anywhere */
			arg[kv_below(len)] ^= 1 << kv_below(8);
			break;
		case 1:		/* a random byte anywhere */
			arg[kv_below(len)] = kv_rand();
			break;
		default:	/* a field: a pointer or a boundary value */
			kv_store(arg + f->offset, f->width,
				 f->pointer && kv_below(4) ? kv_pointer() :
							     kv_interesting());
			break;
		}
	}
	kv_confine_pointers(arg, fields, nfields);
}

/* ------------------------------------------------------------------ */
/* Valid arguments to start from                                         */
/* ------------------------------------------------------------------ */

static void kv_valid_info(void *arg)
{
	struct kverbs_info *i = arg;

	i->size = sizeof(*i);
}

static void kv_valid_devices(void *arg)
{
	struct kverbs_devices *d = arg;
	/* Entries go to the second half of the arena. */
	unsigned char *out = kv_arena.rw + kv_arena.size / 2;

	d->size = sizeof(*d);
	d->device_entry_size = sizeof(struct kverbs_device_info);
	d->port_entry_size = sizeof(struct kverbs_port_info);
	d->device_capacity = 4;
	d->port_capacity = 8;
	d->devices = (uintptr_t)out;
	d->ports = (uintptr_t)out + 4 * sizeof(struct kverbs_device_info);
}

static void kv_valid_ping(void *arg)
{
	struct kverbs_ping *p = arg;
	unsigned short port = KV_FUZZ_PORT_BASE + kv_below(KV_FUZZ_PORTS);

	kv_ping_base(p, port);
	p->count = 1 + kv_below(3);
	p->timeout_ns = 1000000ULL * (1 + kv_below(50));
	if (kv_below(2))
		p->flags |= KVERBS_PING_F_VALIDATE;
	if (kv_below(4) == 0) {
		p->role = KVERBS_ROLE_SERVER;
		p->msg_size = 0;
		if (kv_below(2))
			p->flags |= KVERBS_PING_F_PERSISTENT;
	}
	if (kv_below(4) == 0) {
		/* A log in the first half of the arena. */
		p->log.buf = (uintptr_t)kv_arena.rw + 64;
		p->log.seq = (uintptr_t)kv_arena.rw;
		p->log.slots = 4;
		p->log.slot_size = 128;
	}
}

/*
 * The options each test takes, one or two at a time, around their
 * limits: how the side polls and which CQ, post lists, CQ moderation and
 * inline data, immediate data, remote invalidation, rdma_rw and
 * datagrams.  A combination a test does not take is EINVAL, as a
 * mutation's is.
 */
static void kv_valid_perf_options(struct kverbs_perf *p)
{
	static const uint64_t inline_sizes[] = { 0, 1, 64, 220, 256, 1024, 4096 };
	static const uint32_t options[] = {
		KVERBS_PERF_F_IMM, KVERBS_PERF_F_INV, KVERBS_PERF_F_RW,
		KVERBS_PERF_F_UD,
	};
	int n;

	if (kv_below(3) == 0)
		p->poll = kv_below(KVERBS_PERF_POLL_UNBOUND_WORKQUEUE + 2);
	if (kv_below(5) == 0)
		p->cq_flags = kv_below(2) ? KVERBS_PERF_CQ_POOL : KVERBS_PERF_CQ_DIM;
	if (p->role == KVERBS_ROLE_SERVER)
		return;
	for (n = kv_below(3); n > 0; n--) {
		switch (kv_below(4)) {
		case 0:
			p->post_list = 1 + kv_below(p->tx_depth ? p->tx_depth + 1 : 32);
			break;
		case 1:
			p->cq_mod = 1 + kv_below(p->tx_depth ? p->tx_depth + 1 : 32);
			break;
		case 2:
			p->inline_size = kv_pick(inline_sizes, KV_ARRAY_SIZE(inline_sizes));
			break;
		default:
			p->flags |= options[kv_below(KV_ARRAY_SIZE(options))];
			break;
		}
	}
}

/*
 * A server's SRQ, sized around its limits: receives, the limit event's
 * threshold and the size of each receive.
 */
static void kv_valid_perf_srq(struct kverbs_perf *p)
{
	static const uint64_t wrs[] = {
		0, 1, 16, KVERBS_PERF_SRQ_DEFAULT_WR, 1024,
		KVERBS_PERF_SRQ_MAX_WR, KVERBS_PERF_SRQ_MAX_WR + 1,
	};
	uint32_t wr;

	p->flags |= KVERBS_PERF_F_SRQ;
	p->srq_wr = kv_pick(wrs, KV_ARRAY_SIZE(wrs));
	wr = p->srq_wr ?: KVERBS_PERF_SRQ_DEFAULT_WR;
	switch (kv_below(4)) {
	case 0:
		p->srq_limit = 1 + kv_below(wr);
		break;
	case 1:
		p->srq_limit = wr + 1;
		break;
	}
	/* Past KVERBS_PERF_SRQ_MAX_BYTES with enough receives. */
	if (kv_below(2))
		p->msg_size = 1 + kv_below(1 << 20);
}

/* Latency samples go to the first half of the arena, after the ping log. */
#define KV_SAMPLES_OFFSET	1024

static void kv_valid_perf(void *arg)
{
	static const uint64_t tests[] = {
		KVERBS_PERF_WRITE_BW, KVERBS_PERF_READ_BW, KVERBS_PERF_SEND_BW,
		KVERBS_PERF_READ_LAT, KVERBS_PERF_ATOMIC_LAT, KVERBS_PERF_ATOMIC_BW,
		KVERBS_PERF_WRITE_LAT, KVERBS_PERF_SEND_LAT,
	};
	struct kverbs_perf *p = arg;
	unsigned short port = KV_FUZZ_PORT_BASE + kv_below(KV_FUZZ_PORTS);
	int atomic, lat;

	p->size = sizeof(*p);
	p->timeout_ns = 1000000ULL * (1 + kv_below(50));
	kv_sockaddr(&p->addr, kv_addr(), port);
	p->test = kv_pick(tests, KV_ARRAY_SIZE(tests));
	if (kv_below(4) == 0) {
		/* Serves one client, or none: the alarm ends it. */
		p->role = KVERBS_ROLE_SERVER;
		if (kv_below(2))
			p->test = KVERBS_PERF_ANY;
		/* From the file's listener, if a LISTEN made one. */
		if (kv_below(3) == 0) {
			p->flags = KVERBS_PERF_F_LISTENER;
			memset(&p->addr, 0, sizeof(p->addr));
		}
		/* Asleep (the default, or said), or polling for its client. */
		switch (kv_below(3)) {
		case 0:
			p->flags |= KVERBS_PERF_F_EVENTS;
			break;
		case 1:
			p->flags |= KVERBS_PERF_F_BUSY_POLL;
			break;
		}
		if (kv_below(3) == 0)
			p->flags |= KVERBS_PERF_F_NO_REVERSE;
		if (kv_below(3) == 0)
			kv_valid_perf_srq(p);
		kv_valid_perf_options(p);
		return;
	}
	atomic = p->test == KVERBS_PERF_ATOMIC_LAT || p->test == KVERBS_PERF_ATOMIC_BW;
	lat = p->test == KVERBS_PERF_READ_LAT || p->test == KVERBS_PERF_ATOMIC_LAT ||
	      p->test == KVERBS_PERF_WRITE_LAT || p->test == KVERBS_PERF_SEND_LAT;
	p->role = KVERBS_ROLE_CLIENT;
	p->msg_size = atomic ? 8 : 1 + kv_below(4096);
	p->tx_depth = kv_below(17);		/* 0: the default */
	if (kv_below(2))
		p->iterations = 1 + kv_below(10);
	else
		p->duration_ns = 1000000ULL * (1 + kv_below(10));
	if (kv_below(2))
		p->flags |= KVERBS_PERF_F_VALIDATE;
	if (atomic && kv_below(2))
		p->flags |= KVERBS_PERF_F_CMP_SWAP;
	/* The server moves the data; EINVAL for a latency test. */
	if (kv_below(4) == 0)
		p->flags |= KVERBS_PERF_F_REVERSE;
	/* Completions by interrupt; EINVAL for write_lat. */
	if (kv_below(3) == 0)
		p->flags |= KVERBS_PERF_F_EVENTS;
	kv_valid_perf_options(p);
	if (lat && kv_below(2)) {
		size_t room = kv_arena.size / 2 - KV_SAMPLES_OFFSET;

		p->samples = (uintptr_t)kv_arena.rw + KV_SAMPLES_OFFSET;
		/* Each sample's phases, two words, after the samples. */
		if (kv_below(3) == 0) {
			p->flags |= KVERBS_PERF_F_PHASES;
			p->samples_max = 1 + kv_below(room / (3 * sizeof(__u64)));
			p->phases = p->samples + p->samples_max * sizeof(__u64);
		} else {
			p->samples_max = 1 + kv_below(room / sizeof(__u64));
		}
	}
}

/*
 * The file's one listener, on a port of ours: the first that works stays
 * (every later one is EBUSY), and F_LISTENER servers take from it.
 */
static void kv_valid_listen(void *arg)
{
	struct kverbs_listen *l = arg;

	l->size = sizeof(*l);
	kv_sockaddr(&l->addr, kv_below(2) ? "0.0.0.0" : kv_addr(),
		    KV_FUZZ_PORT_BASE + kv_below(KV_FUZZ_PORTS));
}

/*
 * A lesson, on our address: it listens on a port of its own and connects
 * to itself.  The alarm interrupts most of them while they set up or run.
 */
static void kv_valid_lesson(void *arg)
{
	struct kverbs_lesson *l = arg;

	l->size = sizeof(*l);
	l->lesson = 1 + kv_below(KVERBS_LESSON_MR_SIZE);
	l->timeout_ns = 1000000ULL * (1 + kv_below(50));
	kv_sockaddr(&l->addr, kv_addr(), 0);
}

/**
 * struct kv_kind - one kind of call the fuzzer makes
 * @name: for the report
 * @ioc: its ioctl number
 * @len: sizeof its struct
 * @valid: fills a zeroed buffer with a valid argument
 * @fields: what kv_mutate() aims at
 * @nfields: how many
 * @errnos: every errno the uAPI documents for the call, 0-terminated
 */
struct kv_kind {
	const char *name;
	unsigned long ioc;
	size_t len;
	void (*valid)(void *arg);
	const struct kv_field *fields;
	size_t nfields;
	const int *errnos;
};

/* Argument checks: what any kverbs ioctl may answer. */
#define KV_ARG_ERRNOS	EINVAL, EFAULT, E2BIG

static const int kv_info_errnos[] = { KV_ARG_ERRNOS, 0 };
static const int kv_devices_errnos[] = { KV_ARG_ERRNOS, ENOSPC, ENOMEM, 0 };
/* As listed in include/uapi/kverbs.h for struct kverbs_ping. */
#define KV_PING_ERRNOS							\
	KV_ARG_ERRNOS, EINTR, EMSGSIZE, ETIMEDOUT, ECONNREFUSED, EHOSTUNREACH, \
	ENETUNREACH, EADDRINUSE, EADDRNOTAVAIL, ECONNRESET, EIO, EBADMSG, \
	EPROTO, EACCES, ENODEV, ENETDOWN, ENETRESET, ENFILE, EMFILE, ENOBUFS, \
	EDQUOT, ENOMEM

static const int kv_ping_errnos[] = { KV_PING_ERRNOS, 0 };
/*
 * As listed for struct kverbs_perf: PING's, and what a server's refusal
 * of the client's request fails with (EPROTO, EMSGSIZE, EINVAL are
 * PING's already; ECONNREFUSED is the client's side of it), a hello over
 * the server's ceilings (ERANGE), a session past them (ETIME), and an
 * SRQ whose other sessions' windows hold every receive (ENOSPC).
 */
static const int kv_perf_errnos[] = {
	KV_PING_ERRNOS, EPROTONOSUPPORT, EOPNOTSUPP, ERANGE, ETIME, ENOSPC, 0
};
/* As listed for struct kverbs_listen. */
static const int kv_listen_errnos[] = {
	KV_ARG_ERRNOS, EBUSY, EADDRINUSE, EADDRNOTAVAIL, ENODEV, ENOMEM, 0
};
/*
 * As listed for struct kverbs_lesson: its own refusals, and what setting
 * up a connection fails with, as PING's.
 */
static const int kv_lesson_errnos[] = { KV_PING_ERRNOS, ENOENT, EOPNOTSUPP, 0 };
/* Anything but exactly one of our numbers is turned away unread. */
static const int kv_unknown_errnos[] = { ENOTTY, 0 };

static const struct kv_kind kv_kinds[] = {
	{ "INFO", KVERBS_IOC_INFO, sizeof(struct kverbs_info), kv_valid_info,
	  kv_info_fields, KV_ARRAY_SIZE(kv_info_fields), kv_info_errnos },
	{ "DEVICES", KVERBS_IOC_DEVICES, sizeof(struct kverbs_devices),
	  kv_valid_devices, kv_devices_fields,
	  KV_ARRAY_SIZE(kv_devices_fields), kv_devices_errnos },
	{ "PING", KVERBS_IOC_PING, sizeof(struct kverbs_ping), kv_valid_ping,
	  kv_ping_fields, KV_ARRAY_SIZE(kv_ping_fields), kv_ping_errnos },
	{ "PERF", KVERBS_IOC_PERF, sizeof(struct kverbs_perf), kv_valid_perf,
	  kv_perf_fields, KV_ARRAY_SIZE(kv_perf_fields), kv_perf_errnos },
	{ "LISTEN", KVERBS_IOC_LISTEN, sizeof(struct kverbs_listen), kv_valid_listen,
	  kv_listen_fields, KV_ARRAY_SIZE(kv_listen_fields), kv_listen_errnos },
	{ "LESSON", KVERBS_IOC_LESSON, sizeof(struct kverbs_lesson), kv_valid_lesson,
	  kv_lesson_fields, KV_ARRAY_SIZE(kv_lesson_fields), kv_lesson_errnos },
};

static int kv_errno_allowed(const int *list, int err)
{
	for (; *list; list++)
		if (*list == err)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The run                                                               */
/* ------------------------------------------------------------------ */

static void kv_alarm(int sig)
{
	(void)sig;
}

/* Interrupt whatever is running in @ms milliseconds (0: never). */
static void kv_alarm_in(unsigned int ms)
{
	/*
	 * Repeating: a signal that lands before the thread is inside the
	 * ioctl is used up there, and a server ping would wait for ever.
	 */
	struct itimerval it = {
		.it_value = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 },
		.it_interval = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 },
	};

	setitimer(ITIMER_REAL, &it, NULL);
}

/* What one call was, to report it. */
struct kv_call {
	unsigned long ioc;
	const char *what;
	size_t len;
	void *arg;
	size_t kind;		/* in kv_kinds[]; past its end for a random one */
};

/*
 * Make the next call: decide, from the generator, what to ask and where
 * its argument lies.  Returns the errnos it may get.
 */
static const int *kv_make_call(struct kv_call *c)
{
	/* Arguments go in the last page before the hole, or in the read-only page. */
	unsigned char *slot = kv_arena.none - kv_arena.page;
	const struct kv_kind *k;
	size_t len;

	memset(slot, 0, kv_arena.page);
	if (kv_below(10) == 0) {
		/* A random command near ours: any nr, direction and size. */
		static const uint64_t types[] = { KVERBS_TYPE - 1, KVERBS_TYPE,
						  KVERBS_TYPE, KVERBS_TYPE + 1 };
		/* Half of them within a few of ours, the rest anywhere. */
		unsigned int nr = kv_below(2) ? KVERBS_CMD_BASE - 2 + kv_below(8) :
						kv_below(256);

		c->ioc = _IOC(kv_below(4), kv_pick(types, KV_ARRAY_SIZE(types)), nr,
			      kv_below(_IOC_SIZEMASK + 1));
		c->what = "random";
		c->kind = KV_ARRAY_SIZE(kv_kinds);
		c->len = kv_below(kv_arena.page);
		for (len = 0; len < c->len; len++)
			slot[len] = kv_below(4) ? 0 : kv_rand();
		c->arg = kv_below(3) ? slot : (void *)(uintptr_t)kv_pointer();
		/* The dice can make it exactly one of ours. */
		for (k = kv_kinds; k < kv_kinds + KV_ARRAY_SIZE(kv_kinds); k++) {
			if (k->ioc == c->ioc) {
				kv_confine_pointers(slot, k->fields, k->nfields);
				return k->errnos;
			}
		}
		return kv_unknown_errnos;
	}

	c->kind = kv_below(KV_ARRAY_SIZE(kv_kinds));
	k = &kv_kinds[c->kind];
	c->ioc = k->ioc;
	c->what = k->name;
	/* Sometimes larger than the struct, with a tail that may be non-zero. */
	len = k->len + (kv_below(4) ? 0 : kv_below(128));
	k->valid(slot);
	if (len > k->len && kv_below(2))
		kv_store(slot, sizeof(__u32), len);
	kv_mutate(slot, len, k->fields, k->nfields);
	c->len = len;
	switch (kv_below(8)) {
	case 0:		/* cut off by the hole: only part can be read */
		c->arg = kv_arena.none - kv_below(len);
		memmove(c->arg, slot, kv_arena.none - (unsigned char *)c->arg);
		break;
	case 1:		/* read-only: the result cannot be written back */
		KV_ASSERT_OK(mprotect(kv_arena.ro, kv_arena.page, PROT_READ | PROT_WRITE));
		memcpy(kv_arena.ro, slot, len);
		KV_ASSERT_OK(mprotect(kv_arena.ro, kv_arena.page, PROT_READ));
		c->arg = kv_arena.ro;
		break;
	case 2:
		c->arg = (void *)(uintptr_t)kv_pointer();
		break;
	default:
		c->arg = slot;
		break;
	}
	return k->errnos;
}

/* ------------------------------------------------------------------ */
/* The tests                                                             */
/* ------------------------------------------------------------------ */

static unsigned long kv_fuzz_calls(void)
{
	return strtoul(kv_env("KV_FUZZ_CALLS", "100000"), NULL, 0);
}

/*
 * The harness kills a test at its time limit, and names it.  The limits
 * are set at run time, in the harness's constructors, so they scale with
 * KV_TIME_SCALE as every limit of the tests does.  The run's: a minute,
 * and 5 ms a call, ten times what 100,000 calls take on Debian's kernel
 * (30 to 60 s); each call is bounded by the alarm and the check below.
 * The valid calls after it: a client that retries for 5 s, a server
 * given 30 s to end and 6 more on a signal, and room for their steps.
 */
static int kv_fuzz_timeout(void)
{
	unsigned long long s = (60 + kv_fuzz_calls() / 200ULL) * kv_time_scale();

	return s < INT_MAX ? s : INT_MAX;
}

#define KV_FUZZ_VALID_TIMEOUT	(90 * kv_time_scale())

FIXTURE(fuzz) {
	int fd;
};

FIXTURE_SETUP(fuzz)
{
	kv_open(_metadata, &self->fd);
}

FIXTURE_TEARDOWN(fuzz)
{
	kv_close(self->fd);
}

/* A valid INFO must still work. */
static int kv_info_works(int fd)
{
	struct kverbs_info info = { .size = sizeof(info) };

	return ioctl(fd, KVERBS_IOC_INFO, &info) == 0 &&
	       info.abi_version == KVERBS_ABI_VERSION;
}

/* The run itself, on a file of its own that it reopens as it goes. */
TEST_F_TIMEOUT(fuzz, calls, kv_fuzz_timeout())
{
	struct sigaction sa = { .sa_handler = kv_alarm };	/* no SA_RESTART */
	unsigned long calls = kv_fuzz_calls();
	uint64_t seed = strtoull(kv_env("KV_FUZZ_SEED", "0"), NULL, 0);
	unsigned long i, ok = 0, bad = 0, by_errno[256] = { 0 };
	/* Per kind, and last the random ones: calls made, and succeeded. */
	unsigned long made[KV_ARRAY_SIZE(kv_kinds) + 1] = { 0 };
	unsigned long made_ok[KV_ARRAY_SIZE(kv_kinds) + 1] = { 0 };
	uint64_t spent[KV_ARRAY_SIZE(kv_kinds) + 1] = { 0 };
	uint64_t start = kv_now_ns(), slowest = 0;
	int fd;

	if (!seed)
		seed = (kv_now_ns() ^ ((uint64_t)getpid() << 32)) | 1;
	kv_rng = seed;
	TH_LOG("seed %llu, %lu calls (replay: KV_FUZZ_SEED=%llu KV_FUZZ_CALLS=%lu)",
	       (unsigned long long)seed, calls, (unsigned long long)seed, calls);

	fd = open("/dev/kverbs", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open /dev/kverbs: %s", strerror(errno));
	kv_arena_init();
	ASSERT_OK(sigaction(SIGALRM, &sa, NULL));

	for (i = 0; i < calls; i++) {
		struct kv_call c;
		const int *allowed = kv_make_call(&c);
		uint64_t t0, took;
		long ret;
		int err, works;

		if (i && i % KV_FUZZ_REOPEN == 0) {
			close(fd);
			fd = open("/dev/kverbs", O_RDWR | O_CLOEXEC);
			ASSERT_LE(0, fd) TH_LOG("reopening /dev/kverbs after call %lu: %s",
						i, strerror(errno));
		}
		t0 = kv_now_ns();
		kv_alarm_in(KV_FUZZ_PING_MS);
		errno = 0;
		ret = ioctl(fd, c.ioc, c.arg);
		err = errno;
		kv_alarm_in(0);
		took = kv_now_ns() - t0;
		if (took > slowest)
			slowest = took;

		made[c.kind]++;
		spent[c.kind] += took;
		if (ret == 0) {
			ok++;
			made_ok[c.kind]++;
		} else if (ret != -1 || !kv_errno_allowed(allowed, err)) {
			if (bad++ < 10)
				TH_LOG("call %lu: %s ioctl 0x%lx, %zu bytes at %p: returned %ld errno %d (%s), which the uAPI does not document",
				       i, c.what, c.ioc, c.len, c.arg, ret, err,
				       strerror(err));
		} else {
			by_errno[err & 255]++;
		}
		if (took > KV_FUZZ_CALL_LIMIT_NS * kv_time_scale()) {
			KV_FAIL("call %lu: %s ioctl 0x%lx took %llu ms despite the alarm, errno %d",
				i, c.what, c.ioc, (unsigned long long)(took / 1000000), err);
			/* Which lesson, and where its report says it was. */
			if (c.ioc == KVERBS_IOC_LESSON &&
			    c.len >= sizeof(struct kverbs_lesson)) {
				const struct kverbs_lesson *l = c.arg;

				TH_LOG("  lesson %u, timeout %llu ns: %u runs, error %d at step %u",
				       l->lesson, (unsigned long long)l->timeout_ns,
				       l->nruns, l->error, l->failed_step);
			}
		}
		if (i % KV_FUZZ_SANITY == 0) {
			errno = 0;
			works = kv_info_works(fd);
			err = errno;
			ASSERT_TRUE(works) TH_LOG("after call %lu, a valid INFO fails: %s",
						  i, strerror(err));
		}
	}
	close(fd);

	TH_LOG("%lu calls in %llu ms, slowest %llu ms: %lu succeeded, %lu unexpected",
	       calls, (unsigned long long)((kv_now_ns() - start) / 1000000),
	       (unsigned long long)(slowest / 1000000), ok, bad);
	for (i = 0; i <= KV_ARRAY_SIZE(kv_kinds); i++)
		TH_LOG("  %-7s %lu calls, %lu succeeded, %llu ms",
		       i < KV_ARRAY_SIZE(kv_kinds) ? kv_kinds[i].name : "random",
		       made[i], made_ok[i],
		       (unsigned long long)(spent[i] / 1000000));
	for (i = 1; i < 256; i++)
		if (by_errno[i])
			TH_LOG("  %-6lu %s", by_errno[i], strerror(i));
	EXPECT_EQ(0, bad) TH_LOG("%lu of %lu calls got an answer the uAPI does not document for them",
				 bad, calls);
}

/* After the run, the device answers and a real ping works. */
TEST_F_TIMEOUT(fuzz, valid_calls_after, KV_FUZZ_VALID_TIMEOUT)
{
	struct kverbs_devices d = { 0 };
	struct kverbs_ping p;
	struct kv_server *s;
	int err, works;
	long ret;

	errno = 0;
	works = kv_info_works(self->fd);
	err = errno;
	ASSERT_TRUE(works) TH_LOG("a valid INFO fails: %s", strerror(err));
	kv_arena_init();
	kv_valid_devices(&d);
	EXPECT_OK(ioctl(self->fd, KVERBS_IOC_DEVICES, &d));
	EXPECT_LE(1, d.device_count) TH_LOG("DEVICES reports no RDMA device");

	s = kv_server_start(KV_FUZZ_PORT_VALID);
	kv_ping_base(&p, KV_FUZZ_PORT_VALID);
	p.count = 10;
	p.msg_size = 4096;
	p.flags = KVERBS_PING_F_VALIDATE;
	ret = kv_client_run(&p, &err);
	EXPECT_EQ(0, ret) TH_LOG("client: errno %d (%s), step %u", err, strerror(err),
				 p.result.failed_step);
	EXPECT_EQ(10, p.result.iterations) TH_LOG("the client's iterations");
	/* Fails the test and ends it if the server is stuck. */
	EXPECT_EQ(0, kv_server_wait(s, 30)) TH_LOG("the server did not end after its client");
	EXPECT_EQ(0, s->ret) TH_LOG("server: errno %d (%s), step %u", s->err,
				    strerror(s->err), s->ping.result.failed_step);
	free(s);
}

/* A perf server of one client, in a thread; returns its errno, 0 if none. */
static void *kv_perf_server_main(void *arg)
{
	long ret = ioctl(kv_fd, KVERBS_IOC_PERF, arg);

	return (void *)(intptr_t)(ret ? errno : 0);
}

/* And a real latency test works, its samples stored in full. */
TEST_F_TIMEOUT(fuzz, valid_perf_after, KV_FUZZ_VALID_TIMEOUT)
{
	struct sigaction sa = { .sa_handler = kv_alarm };
	struct kverbs_perf server = { 0 }, input = { 0 }, p;
	static __u64 samples[100];
	uint64_t start = kv_now_ns();
	struct timespec ts;
	pthread_t thread;
	void *server_err;
	long ret;
	int err;

	ASSERT_OK(sigaction(SIGALRM, &sa, NULL));
	input.size = sizeof(input);
	input.role = KVERBS_ROLE_SERVER;
	input.timeout_ns = kv_step_timeout_ns();
	kv_sockaddr(&input.addr, kv_addr(), KV_FUZZ_PORT_VALID_PERF);
	server = input;
	ASSERT_EQ(0, pthread_create(&thread, NULL, kv_perf_server_main, &server))
		TH_LOG("cannot start the server's thread");

	input.role = KVERBS_ROLE_CLIENT;
	input.test = KVERBS_PERF_READ_LAT;
	input.flags = KVERBS_PERF_F_VALIDATE;
	input.msg_size = 4096;
	input.iterations = KV_ARRAY_SIZE(samples);
	input.samples = (uintptr_t)samples;
	input.samples_max = KV_ARRAY_SIZE(samples);
	/* Refused until the server's thread is listening. */
	for (;;) {
		p = input;
		errno = 0;
		ret = ioctl(self->fd, KVERBS_IOC_PERF, &p);
		err = errno;
		if (!ret || err != ECONNREFUSED || p.result.reject_reason ||
		    kv_now_ns() - start > 5000000000ULL * kv_time_scale())
			break;
		usleep(20000);
	}
	EXPECT_EQ(0, ret) TH_LOG("client: errno %d (%s), step %u, reject %u", err,
				 strerror(err), p.result.failed_step, p.result.reject_reason);
	EXPECT_EQ(KV_ARRAY_SIZE(samples), p.result.iterations) TH_LOG("the client's iterations");
	EXPECT_EQ(KV_ARRAY_SIZE(samples), p.result.samples_stored)
		TH_LOG("samples stored of %zu asked for", KV_ARRAY_SIZE(samples));
	EXPECT_NE(0, samples[KV_ARRAY_SIZE(samples) - 1]) TH_LOG("the last sample is not set");

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 30 * kv_time_scale();
	if (pthread_timedjoin_np(thread, &server_err, &ts)) {
		KV_FAIL("server still running after 30 s: interrupting it");
		pthread_kill(thread, SIGALRM);
		ASSERT_EQ(0, pthread_join(thread, &server_err))
			TH_LOG("cannot join the server's thread");
	}
	EXPECT_EQ(0, (intptr_t)server_err) TH_LOG("server: %s", strerror((intptr_t)server_err));
	EXPECT_EQ(KVERBS_PERF_READ_LAT, server.result.test) TH_LOG("the test the server ran");
}

KV_HARNESS_MAIN
