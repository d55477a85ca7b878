// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests of the kverbs tool: the command-line parsers, the
 * words for the kernel's numbers, the failure messages and the JSON
 * writer.  They need no module and no RDMA device.
 *
 * Built by "make -C tools/kverbs tests/unit" against the tool's own
 * objects; prints KTAP and exits 0 if every test passed.  Naming tests on
 * the command line runs only those.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kverbs.h"
#include "ktap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* main.o, which defines it, is not linked in: main() is KV_MAIN(). */
const char *kv_prog = "kverbs";

/*
 * @s with control characters and bytes above 0x7e escaped, so that a
 * diagnostic stays one KTAP line whatever the string holds.
 */
static const char *kv_printable(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	if (!s)
		return "(null)";
	for (; *s && n + 5 < len; s++) {
		unsigned char c = *s;

		if (c < 0x20 || c > 0x7e || c == '\\')
			n += snprintf(buf + n, len - n, "\\x%02x", c);
		else
			buf[n++] = c;
	}
	buf[n] = '\0';
	return buf;
}

#define KV_EXPECT_STREQ(a, b) do {					\
	const char *kv_sa = (a), *kv_sb = (b);				\
	char kv_pa[512], kv_pb[512];					\
	if (!kv_sa || !kv_sb || strcmp(kv_sa, kv_sb))			\
		KV_FAIL_AT(0, "%s == %s: \"%s\" vs \"%s\"", #a, #b,	\
			   kv_printable(kv_sa, kv_pa, sizeof(kv_pa)),	\
			   kv_printable(kv_sb, kv_pb, sizeof(kv_pb)));	\
} while (0)

#define KV_EXPECT_CONTAINS(hay, needle) do {				\
	const char *kv_sh = (hay), *kv_sn = (needle);			\
	char kv_ph[512], kv_pn[512];					\
	if (!kv_sh || !strstr(kv_sh, kv_sn))				\
		KV_FAIL_AT(0, "%s contains %s: \"%s\" lacks \"%s\"", #hay, #needle, \
			   kv_printable(kv_sh, kv_ph, sizeof(kv_ph)),	\
			   kv_printable(kv_sn, kv_pn, sizeof(kv_pn)));	\
} while (0)

/* ---- kv_parse_u32 ---- */

KV_TEST(parse_u32_valid)
{
	static const struct {
		const char *s;
		uint32_t v;
	} ok[] = {
		{ "0", 0 }, { "1", 1 }, { "7174", 7174 }, { "007", 7 },
		{ "65535", 65535 }, { "4294967295", UINT32_MAX },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		uint32_t v = 12345;

		if (kv_parse_u32(ok[i].s, &v) || v != ok[i].v)
			KV_FAIL_AT(0, "kv_parse_u32(\"%s\"): %u, expected %u",
				   ok[i].s, v, ok[i].v);
	}
}

KV_TEST(parse_u32_rejects)
{
	/*
	 * strtoul() alone would take a sign (even "-1", as 2^32-1), leading
	 * space and, with base 0, hex; none of that is a count or a port.
	 */
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "\t1", "1 ", "4294967296",
		"18446744073709551616", "99999999999999999999999", "12a",
		"0x10", "1.0", "1e3", "1k",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		uint32_t v = 12345;
		int ret = kv_parse_u32(bad[i], &v);

		if (ret != -EINVAL)
			KV_FAIL_AT(0, "kv_parse_u32(\"%s\") returned %d (value %u), expected -EINVAL",
				   bad[i], ret, v);
		/* The option keeps its default when its value is bad. */
		else if (v != 12345)
			KV_FAIL_AT(0, "kv_parse_u32(\"%s\") failed but wrote %u", bad[i], v);
	}
}

/* ---- kv_parse_size ---- */

KV_TEST(parse_size_valid)
{
	static const struct {
		const char *s;
		uint32_t v;
	} ok[] = {
		{ "0", 0 }, { "26", 26 }, { "4096", 4096 },
		{ "64k", 65536 }, { "64K", 65536 }, { "64Ki", 65536 },
		{ "1m", 1048576 }, { "1M", 1048576 }, { "1Mi", 1048576 },
		{ "1G", 1073741824 }, { "1Gi", 1073741824 },
		{ "3G", 3221225472u }, { "4194303K", 4294966272u },
		{ "4294967295", UINT32_MAX },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		uint32_t v = 12345;

		if (kv_parse_size(ok[i].s, &v) || v != ok[i].v)
			KV_FAIL_AT(0, "kv_parse_size(\"%s\"): %u, expected %u",
				   ok[i].s, v, ok[i].v);
	}
}

KV_TEST(parse_size_rejects)
{
	/* Fractions, signs, bare or unknown suffixes, and 2^32 and above. */
	static const char *const bad[] = {
		"1.5M", "-1", "+1", "k", "K", "4096x", "5G", "4G", "4096M",
		"4194304K", "4294967296", "", " 64", "64 ", "64KB", "64kib",
		"64i", "1Mii", "1T", "99999999999999999999999k",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		uint32_t v = 12345;
		int ret = kv_parse_size(bad[i], &v);

		if (ret != -EINVAL || v != 12345)
			KV_FAIL_AT(0, "kv_parse_size(\"%s\") returned %d (value %u), expected -EINVAL",
				   bad[i], ret, v);
	}
}

/* ---- kv_parse_seconds ---- */

KV_TEST(parse_seconds_valid)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = {
		{ "0", 0 }, { "0.5", 500000000 }, { ".25", 250000000 },
		{ "10", 10000000000ULL }, { "3600", 3600000000000ULL },
		{ "0.000000001", 1 },
		/* Not exact as doubles: must round, not truncate, to the ns. */
		{ "1.001", 1001000000 }, { "0.3", 300000000 },
		{ "2.675", 2675000000ULL }, { "3599.999999999", 3599999999999ULL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		uint64_t ns = 12345;

		if (kv_parse_seconds(ok[i].s, &ns) || ns != ok[i].ns)
			KV_FAIL_AT(0, "kv_parse_seconds(\"%s\"): %llu ns, expected %llu",
				   ok[i].s, (unsigned long long)ns,
				   (unsigned long long)ok[i].ns);
	}
}

KV_TEST(parse_seconds_rejects)
{
	/*
	 * strtod() also reads signs, space, "inf", "nan" and hexadecimal;
	 * 1e999 overflows.  More than a year is not a timeout either.
	 */
	static const char *const bad[] = {
		"-1", "abc", "1e999", "", " 1", "1 ", "+1", "1s", "inf", "nan",
		"0x10", "0X1p3", ".", "1..2", "31536001",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t ns = 12345;
		int ret = kv_parse_seconds(bad[i], &ns);

		if (ret != -EINVAL || ns != 12345)
			KV_FAIL_AT(0, "kv_parse_seconds(\"%s\") returned %d (%llu ns), expected -EINVAL",
				   bad[i], ret, (unsigned long long)ns);
	}
}

/* ---- kv_parse_addr and kv_addr_str ---- */

/* The module wants every byte of the sockaddr_storage past the address zero. */
static void kv_expect_zero_from(const struct sockaddr_storage *ss, size_t from,
				int line)
{
	const unsigned char *p = (const unsigned char *)ss;
	size_t i;

	for (i = from; i < sizeof(*ss); i++)
		if (p[i]) {
			kv_diag("%s:%d: byte %zu of the sockaddr_storage is 0x%02x, expected 0",
				__FILE__, line, i, p[i]);
			kv_test_failed = 1;
			return;
		}
}

KV_TEST(parse_addr_ipv4)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	const unsigned char *port = (const unsigned char *)&sin->sin_port;
	size_t i;

	/* Garbage where the function must write zeroes. */
	memset(&ss, 0xa5, sizeof(ss));
	KV_ASSERT_OK(kv_parse_addr("10.0.0.1", 7174, &ss));
	KV_EXPECT_EQ(ss.ss_family, AF_INET);
	KV_EXPECT_EQ(ntohl(sin->sin_addr.s_addr), 0x0a000001);
	/* Network order: 7174 is 0x1c06. */
	KV_EXPECT_EQ(port[0], 0x1c);
	KV_EXPECT_EQ(port[1], 0x06);
	for (i = 0; i < sizeof(sin->sin_zero); i++)
		KV_EXPECT_EQ(sin->sin_zero[i], 0);
	kv_expect_zero_from(&ss, sizeof(*sin), __LINE__);

	/* The server's default: the wildcard, with the port still set. */
	memset(&ss, 0xa5, sizeof(ss));
	KV_ASSERT_OK(kv_parse_addr("0.0.0.0", 1, &ss));
	KV_EXPECT_EQ(ss.ss_family, AF_INET);
	KV_EXPECT_EQ(sin->sin_addr.s_addr, 0);
	KV_EXPECT_EQ(port[0], 0);
	KV_EXPECT_EQ(port[1], 1);
	kv_expect_zero_from(&ss, sizeof(*sin), __LINE__);
}

KV_TEST(parse_addr_ipv6)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	const unsigned char *port = (const unsigned char *)&sin6->sin6_port;
	struct in6_addr want;

	memset(&ss, 0xa5, sizeof(ss));
	KV_ASSERT_OK(kv_parse_addr("2001:db8::1", 65535, &ss));
	KV_EXPECT_EQ(ss.ss_family, AF_INET6);
	KV_ASSERT_EQ(inet_pton(AF_INET6, "2001:db8::1", &want), 1);
	KV_EXPECT_OK(memcmp(&sin6->sin6_addr, &want, sizeof(want)));
	KV_EXPECT_EQ(port[0], 0xff);
	KV_EXPECT_EQ(port[1], 0xff);
	KV_EXPECT_EQ(sin6->sin6_flowinfo, 0);
	KV_EXPECT_EQ(sin6->sin6_scope_id, 0);
	kv_expect_zero_from(&ss, sizeof(*sin6), __LINE__);

	memset(&ss, 0xa5, sizeof(ss));
	KV_ASSERT_OK(kv_parse_addr("::", 7174, &ss));
	KV_EXPECT_EQ(ss.ss_family, AF_INET6);
	KV_EXPECT_EQ(port[0], 0x1c);
	KV_EXPECT_EQ(port[1], 0x06);
	KV_EXPECT_TRUE(IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr));
	kv_expect_zero_from(&ss, sizeof(*sin6), __LINE__);
}

KV_TEST(parse_addr_ipv6_scope)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	unsigned int lo = if_nametoindex("lo");
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE];

	if (!lo)
		kv_skip("no interface named lo");
	/* Link-local addresses need the interface, as %name or %index. */
	KV_ASSERT_OK(kv_parse_addr("fe80::1%lo", 7174, &ss));
	KV_EXPECT_EQ(ss.ss_family, AF_INET6);
	KV_EXPECT_EQ(sin6->sin6_scope_id, lo);
	KV_EXPECT_STREQ(kv_addr_str(&ss, buf, sizeof(buf)), "fe80::1%lo");

	snprintf(buf, sizeof(buf), "fe80::1%%%u", lo);
	KV_ASSERT_OK(kv_parse_addr(buf, 7174, &ss));
	KV_EXPECT_EQ(sin6->sin6_scope_id, lo);
}

KV_TEST(parse_addr_rejects)
{
	/*
	 * None of these is a valid host name either (space, '!', ':' or
	 * brackets), so the resolver fails them without asking DNS.
	 */
	static const char *const bad[] = {
		"", "not an address!", "::1::2", "[::1]", "10.0.0.1:7174",
		"[10.0.0.1]", "fe80::1%no-such-if!", "a b",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct sockaddr_storage ss;
		int ret = kv_parse_addr(bad[i], 7174, &ss);

		if (!ret)
			KV_FAIL_AT(0, "kv_parse_addr(\"%s\") accepted it", bad[i]);
	}
}

KV_TEST(addr_str_round_trip)
{
	static const char *const addrs[] = {
		"10.0.0.1", "0.0.0.0", "127.0.0.1", "255.255.255.255",
		"::", "::1", "2001:db8::1", "fe80::1:2:3:4", "::ffff:10.0.0.1",
	};
	char buf[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		struct sockaddr_storage ss;

		if (kv_parse_addr(addrs[i], 7174, &ss)) {
			KV_FAIL_AT(0, "kv_parse_addr(\"%s\") failed", addrs[i]);
			continue;
		}
		/* Without the port: callers add it, with [] for IPv6. */
		KV_EXPECT_STREQ(kv_addr_str(&ss, buf, sizeof(buf)), addrs[i]);
	}
}

KV_TEST(addr_str_canonical_and_bounded)
{
	struct sockaddr_storage ss;
	char buf[128];

	/* The message shows the address as the kernel will use it. */
	KV_ASSERT_OK(kv_parse_addr("2001:0DB8:0:0:0:0:0:0001", 1, &ss));
	KV_EXPECT_STREQ(kv_addr_str(&ss, buf, sizeof(buf)), "2001:db8::1");

	/* A short buffer truncates, NUL-terminated, and is what is returned. */
	KV_ASSERT_OK(kv_parse_addr("10.0.0.1", 1, &ss));
	memset(buf, 'x', sizeof(buf));
	KV_EXPECT_TRUE(kv_addr_str(&ss, buf, 4) == buf);
	KV_EXPECT_STREQ(buf, "10.");

	/* No address at all (all zero, AF_UNSPEC): a placeholder, not a crash. */
	memset(&ss, 0, sizeof(ss));
	KV_EXPECT_STREQ(kv_addr_str(&ss, buf, sizeof(buf)), "?");
}

/* ---- kv_bad_option: which option a usage error names ---- */

static const char *kv_getopt_reject(char **argv, int argc)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "timeout", required_argument, NULL, 256 },
		{ NULL, 0, NULL, 0 },
	};
	static char buf[8];
	int opt;

	optind = 0;	/* glibc: start afresh, forgetting any half-read group */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":jhC:", longopts, NULL)) != -1)
		if (opt == '?')
			return kv_bad_option(argv, ":jhC:", buf, sizeof(buf));
	return NULL;
}

KV_TEST(bad_option_names_the_option)
{
	char *a1[] = { "ping", "-x", NULL };
	char *a2[] = { "ping", "-xj", NULL };
	char *a2b[] = { "ping", "-jx", NULL };
	char *a3[] = { "ping", "--json", "-xj", NULL };
	char *a4[] = { "ping", "--bogus", NULL };
	char *a5[] = { "ping", "--help=1", NULL };
	char *a6[] = { "ping", "--timeout", "1", "--json=yes", NULL };
	char *a7[] = { "ping", "stray", "-C", "1", "-x", NULL };

	KV_EXPECT_STREQ(kv_getopt_reject(a1, 2), "-x");
	/* Inside a group optind still points at the group: not "ping". */
	KV_EXPECT_STREQ(kv_getopt_reject(a2, 2), "-x");
	KV_EXPECT_STREQ(kv_getopt_reject(a2b, 2), "-x");
	KV_EXPECT_STREQ(kv_getopt_reject(a3, 3), "-x");
	KV_EXPECT_STREQ(kv_getopt_reject(a4, 2), "--bogus");
	/* A known option given a value it does not take: say it as typed. */
	KV_EXPECT_STREQ(kv_getopt_reject(a5, 2), "--help=1");
	KV_EXPECT_STREQ(kv_getopt_reject(a6, 4), "--json=yes");
	/* getopt_long() moves non-options to the end as it goes. */
	KV_EXPECT_STREQ(kv_getopt_reject(a7, 5), "-x");
}

/* ---- words for the kernel's numbers ---- */

KV_TEST(wc_status_str)
{
	/* enum ib_wc_status: the kernel passes the values through. */
	KV_EXPECT_STREQ(kv_wc_status_str(0), "success");
	KV_EXPECT_STREQ(kv_wc_status_str(1), "local length error");
	KV_EXPECT_STREQ(kv_wc_status_str(4), "local protection error");
	KV_EXPECT_STREQ(kv_wc_status_str(5), "work request flushed");
	KV_EXPECT_STREQ(kv_wc_status_str(10), "remote access error");
	KV_EXPECT_STREQ(kv_wc_status_str(12), "transport retry counter exceeded");
	KV_EXPECT_STREQ(kv_wc_status_str(13), "RNR retry counter exceeded");
	KV_EXPECT_STREQ(kv_wc_status_str(19), "fatal error");
	KV_EXPECT_STREQ(kv_wc_status_str(21), "general error");
	KV_EXPECT_STREQ(kv_wc_status_str(22), "unknown");
	KV_EXPECT_STREQ(kv_wc_status_str(1000), "unknown");
	KV_EXPECT_STREQ(kv_wc_status_str(UINT32_MAX), "unknown");
}

KV_TEST(step_str_every_step)
{
	const char *names[KVERBS_STEP_SAMPLES + 1];
	uint32_t s, t;

	/*
	 * The names are JSON "step" values that scripts match on: each step
	 * needs its own, and one that is safe as an identifier.
	 */
	for (s = KVERBS_STEP_NONE; s <= KVERBS_STEP_SAMPLES; s++) {
		const char *p;

		names[s] = kv_step_str(s);
		if (!names[s] || !*names[s] || !strcmp(names[s], "unknown")) {
			KV_FAIL_AT(0, "step %u has no name", s);
			continue;
		}
		for (p = names[s]; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || *p == '_'))
				KV_FAIL_AT(0, "step %u: \"%s\" is not lower_case", s, names[s]);
		for (t = 0; t < s; t++)
			if (names[t] && !strcmp(names[s], names[t]))
				KV_FAIL_AT(0, "steps %u and %u are both \"%s\"", t, s, names[s]);
	}
	KV_EXPECT_STREQ(kv_step_str(KVERBS_STEP_NONE), "none");
	KV_EXPECT_STREQ(kv_step_str(KVERBS_STEP_CONNECT), "connect");
	KV_EXPECT_STREQ(kv_step_str(KVERBS_STEP_RDMA_READ), "rdma_read");
	KV_EXPECT_STREQ(kv_step_str(KVERBS_STEP_HELLO), "hello");
	KV_EXPECT_STREQ(kv_step_str(KVERBS_STEP_ATOMIC), "atomic");
	KV_EXPECT_STREQ(kv_step_str(KVERBS_STEP_SAMPLES), "samples");
	KV_EXPECT_STREQ(kv_step_str(KVERBS_STEP_SAMPLES + 1), "unknown");
	KV_EXPECT_STREQ(kv_step_str(UINT32_MAX), "unknown");
}

KV_TEST(step_op_str_for_work_requests)
{
	/* The steps whose work completions the kernel can report as failed. */
	static const uint32_t wr_steps[] = {
		KVERBS_STEP_REG_MR, KVERBS_STEP_SEND, KVERBS_STEP_RECV,
		KVERBS_STEP_RDMA_READ, KVERBS_STEP_RDMA_WRITE,
		KVERBS_STEP_LOCAL_INV, KVERBS_STEP_ATOMIC,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(wr_steps); i++)
		if (!strcmp(kv_step_op_str(wr_steps[i]), "unknown"))
			KV_FAIL_AT(0, "step %u has no operation name", wr_steps[i]);
	KV_EXPECT_STREQ(kv_step_op_str(KVERBS_STEP_RDMA_READ), "RDMA READ");
	KV_EXPECT_STREQ(kv_step_op_str(KVERBS_STEP_RDMA_WRITE), "RDMA WRITE");
	KV_EXPECT_STREQ(kv_step_op_str(KVERBS_STEP_LOG + 1), "unknown");
}

KV_TEST(other_names)
{
	/* enum rdma_cm_event_type */
	KV_EXPECT_STREQ(kv_cm_event_str(0), "ADDR_RESOLVED");
	KV_EXPECT_STREQ(kv_cm_event_str(8), "REJECTED");
	KV_EXPECT_STREQ(kv_cm_event_str(10), "DISCONNECTED");
	KV_EXPECT_STREQ(kv_cm_event_str(15), "TIMEWAIT_EXIT");
	KV_EXPECT_STREQ(kv_cm_event_str(16), "unknown");

	KV_EXPECT_STREQ(kv_errno_name(ECONNREFUSED), "ECONNREFUSED");
	KV_EXPECT_STREQ(kv_errno_name(EBADMSG), "EBADMSG");
	KV_EXPECT_STREQ(kv_errno_name(ERANGE), "ERANGE");
	KV_EXPECT_STREQ(kv_errno_name(ETIME), "ETIME");
	KV_EXPECT_STREQ(kv_errno_name(0), "unknown");
	KV_EXPECT_STREQ(kv_errno_name(-EINVAL), "unknown");

	KV_EXPECT_STREQ(kv_port_state_str(KVERBS_PORT_ACTIVE), "ACTIVE");
	KV_EXPECT_STREQ(kv_port_state_str(6), "unknown");
	/* IBTA physical states start at 1: 0 is a hole in the table. */
	KV_EXPECT_STREQ(kv_phys_state_str(0), "unknown");
	KV_EXPECT_STREQ(kv_phys_state_str(5), "LINK_UP");
	KV_EXPECT_STREQ(kv_phys_state_str(8), "unknown");
	KV_EXPECT_STREQ(kv_link_layer_str(KVERBS_LINK_LAYER_ETHERNET), "Ethernet");
	KV_EXPECT_STREQ(kv_node_type_str(KVERBS_NODE_RNIC), "RNIC");
	KV_EXPECT_STREQ(kv_transport_str(KVERBS_TRANSPORT_IWARP), "iWARP");
	KV_EXPECT_STREQ(kv_transport_str(KVERBS_TRANSPORT_UNSPECIFIED), "unspecified");
	KV_EXPECT_STREQ(kv_atomic_cap_str(KVERBS_ATOMIC_GLOB), "global");
	KV_EXPECT_STREQ(kv_atomic_cap_str(3), "unknown");
}

/* ---- kv_describe_ping_failure ---- */

#define PEER "10.0.0.1:7174"

static struct kverbs_ping kv_ping_of(uint32_t role, uint32_t step,
				     uint64_t iterations)
{
	struct kverbs_ping cmd = { .size = sizeof(cmd), .role = role };

	cmd.result.failed_step = step;
	cmd.result.iterations = iterations;
	return cmd;
}

/* The message, after checking that the return value is its length. */
static const char *kv_describe(int err, const struct kverbs_ping *cmd,
			       const char *peer)
{
	static char buf[512];
	int n;

	memset(buf, 'x', sizeof(buf));
	n = kv_describe_ping_failure(buf, sizeof(buf), err, cmd, peer);
	if (n < 0 || (size_t)n != strlen(buf))
		KV_FAIL_AT(0, "returned %d for a %zu-byte message", n, strlen(buf));
	return buf;
}

KV_TEST(describe_no_listener_ib)
{
	/* IB and RoCE: REJECTED with reject reason 8, invalid service ID. */
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_CONNECT, 0);

	cmd.result.valid = KVERBS_RESULT_CM;
	cmd.result.cm_event = 8;
	cmd.result.cm_status = 8;
	KV_EXPECT_CONTAINS(kv_describe(ECONNREFUSED, &cmd, PEER),
			   "no listener at 10.0.0.1:7174");
	KV_EXPECT_STREQ(kv_describe(ECONNREFUSED, &cmd, PEER),
			"no listener at 10.0.0.1:7174 (connection rejected)");
}

KV_TEST(describe_no_listener_iwarp)
{
	/* iWARP: REJECTED with the TCP connection's -ECONNREFUSED. */
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_CONNECT, 0);

	cmd.result.valid = KVERBS_RESULT_CM;
	cmd.result.cm_event = 8;
	cmd.result.cm_status = -111;
	KV_EXPECT_STREQ(kv_describe(ECONNREFUSED, &cmd, "[fe80::1%lo]:7174"),
			"no listener at [fe80::1%lo]:7174 (connection rejected)");
}

KV_TEST(describe_no_listener_siw_sync)
{
	/* siw: rdma_connect() itself fails, no CM event recorded. */
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_CONNECT, 0);

	cmd.result.error = -ECONNREFUSED;
	KV_EXPECT_STREQ(kv_describe(ECONNREFUSED, &cmd, PEER),
			"no listener at 10.0.0.1:7174 (connection rejected)");
}

KV_TEST(describe_rejected_for_other_reasons)
{
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_CONNECT, 0);

	/* A listener that said no, e.g. a busy kverbs or rping server. */
	cmd.result.valid = KVERBS_RESULT_CM;
	cmd.result.cm_event = 8;
	cmd.result.cm_status = 28;
	KV_EXPECT_STREQ(kv_describe(ECONNREFUSED, &cmd, PEER),
			PEER " rejected the connection (server busy or out of resources, reason 28)");
	cmd.result.cm_status = 5;
	KV_EXPECT_STREQ(kv_describe(ECONNREFUSED, &cmd, PEER),
			PEER " rejected the connection (CM reason 5)");

	/* cm_status only counts when valid says so. */
	cmd.result.valid = 0;
	cmd.result.cm_status = 8;
	KV_EXPECT_STREQ(kv_describe(ECONNREFUSED, &cmd, PEER),
			PEER " rejected the connection (CM reason 8)");

	/* Nor when the event was not a rejection. */
	cmd.result.valid = KVERBS_RESULT_CM;
	cmd.result.cm_event = 7;	/* UNREACHABLE */
	cmd.result.cm_status = 8;
	KV_EXPECT_STREQ(kv_describe(EHOSTUNREACH, &cmd, PEER),
			"connecting to " PEER " failed: No route to host");
}

KV_TEST(describe_wc_failure)
{
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_SERVER, KVERBS_STEP_RDMA_READ, 3);

	cmd.result.valid = KVERBS_RESULT_WC;
	cmd.result.wc_status = 10;
	cmd.result.vendor_err = 0x88;
	KV_EXPECT_CONTAINS(kv_describe(EIO, &cmd, "0.0.0.0:7174"),
			   "RDMA READ failed in iteration 3: remote access error");
	KV_EXPECT_STREQ(kv_describe(EIO, &cmd, "0.0.0.0:7174"),
			"RDMA READ failed in iteration 3: remote access error (vendor error 0x88)");

	/* The completion explains it, whatever errno came with it. */
	cmd.role = KVERBS_ROLE_CLIENT;
	cmd.result.failed_step = KVERBS_STEP_SEND;
	cmd.result.wc_status = 12;
	cmd.result.vendor_err = 0;
	cmd.result.iterations = 0;
	KV_EXPECT_STREQ(kv_describe(ETIMEDOUT, &cmd, PEER),
			"SEND failed in iteration 0: transport retry counter exceeded (vendor error 0x0)");
}

KV_TEST(describe_validate_mismatch)
{
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_VALIDATE, 7);

	cmd.result.valid = KVERBS_RESULT_MISMATCH;
	cmd.result.mismatch_offset = 4095;
	KV_EXPECT_CONTAINS(kv_describe(EBADMSG, &cmd, PEER), "data mismatch in iteration");
	KV_EXPECT_CONTAINS(kv_describe(EBADMSG, &cmd, PEER), "4095");
	KV_EXPECT_STREQ(kv_describe(EBADMSG, &cmd, PEER),
			"data mismatch in iteration 7 at byte 4095");
}

KV_TEST(describe_connection_reset)
{
	/* A flushed receive after the peer left: no step, or RECV. */
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_NONE, 5);

	KV_EXPECT_STREQ(kv_describe(ECONNRESET, &cmd, PEER),
			"the server closed the connection in iteration 5");
	cmd.result.failed_step = KVERBS_STEP_RECV;
	KV_EXPECT_STREQ(kv_describe(ECONNRESET, &cmd, PEER),
			"the server closed the connection in iteration 5");
	cmd.role = KVERBS_ROLE_SERVER;
	KV_EXPECT_STREQ(kv_describe(ECONNRESET, &cmd, "0.0.0.0:7174"),
			"the client closed the connection in iteration 5");
}

KV_TEST(describe_timeouts)
{
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_RECV, 2);

	KV_EXPECT_STREQ(kv_describe(ETIMEDOUT, &cmd, PEER),
			"the server did not answer within the timeout (iteration 2, waiting for RECV)");
	cmd.result.failed_step = KVERBS_STEP_CONNECT;
	KV_EXPECT_STREQ(kv_describe(ETIMEDOUT, &cmd, PEER),
			PEER " did not answer within the timeout");
	cmd.result.failed_step = KVERBS_STEP_RESOLVE_ADDR;
	KV_EXPECT_STREQ(kv_describe(ETIMEDOUT, &cmd, PEER),
			"cannot resolve " PEER ": no answer within the timeout");
}

KV_TEST(describe_port_down)
{
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_RECV, 3);

	/* The link is the cause, whatever completion or CM event came first. */
	cmd.result.valid = KVERBS_RESULT_WC;
	cmd.result.wc_status = 5;
	KV_EXPECT_STREQ(kv_describe(ENETDOWN, &cmd, PEER),
			"the RDMA port went down in iteration 3");
	cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_CONNECT, 0);
	cmd.result.valid = KVERBS_RESULT_CM;
	KV_EXPECT_STREQ(kv_describe(ENETDOWN, &cmd, PEER),
			"the RDMA port went down while connecting to " PEER);
}

KV_TEST(describe_no_device)
{
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_NONE, 9);

	/* DEVICE_REMOVAL mid-ping. */
	KV_EXPECT_STREQ(kv_describe(ENODEV, &cmd, PEER), "the RDMA device was removed");
	cmd.result.failed_step = KVERBS_STEP_RECV;
	KV_EXPECT_STREQ(kv_describe(ENODEV, &cmd, PEER), "the RDMA device was removed");

	/* No RDMA device for the route: rdma_resolve_addr() says ENODEV. */
	cmd.result.failed_step = KVERBS_STEP_RESOLVE_ADDR;
	KV_EXPECT_STREQ(kv_describe(ENODEV, &cmd, PEER),
			"cannot resolve " PEER ": no RDMA device of this network namespace serves that route or source address (No such device)");

	cmd = kv_ping_of(KVERBS_ROLE_SERVER, KVERBS_STEP_LISTEN, 0);
	KV_EXPECT_STREQ(kv_describe(ENODEV, &cmd, "192.0.2.1:7174"),
			"cannot listen on 192.0.2.1:7174: not an address of an RDMA device in this network namespace");
}

KV_TEST(describe_server_and_setup)
{
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_SERVER, KVERBS_STEP_LISTEN, 0);

	KV_EXPECT_STREQ(kv_describe(EADDRINUSE, &cmd, "0.0.0.0:7174"),
			"cannot listen on 0.0.0.0:7174: already in use");
	cmd.result.failed_step = KVERBS_STEP_RECV;
	cmd.msg_size = 4096;
	KV_EXPECT_STREQ(kv_describe(EMSGSIZE, &cmd, "0.0.0.0:7174"),
			"the client's ping is larger than this server accepts (-S 4096)");
	KV_EXPECT_STREQ(kv_describe(EPROTO, &cmd, "0.0.0.0:7174"),
			"the client broke the ping protocol in iteration 0");

	cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_SETUP, 0);
	cmd.msg_size = 1048576;
	KV_EXPECT_STREQ(kv_describe(EMSGSIZE, &cmd, PEER),
			"a 1048576-byte buffer is more than the RDMA device can register with one MR");
}

KV_TEST(describe_per_user_limits)
{
	/* A session refused at its start: the kernel says it was refused. */
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_SETUP, 0);

	cmd.result.valid = KVERBS_RESULT_REFUSED;
	cmd.result.error = -EDQUOT;
	KV_EXPECT_STREQ(kv_describe(EDQUOT, &cmd, PEER),
			"too many tests are running as this user (max_sessions_per_user)");
	/* The same errno, for buffers at the setup step: memory. */
	cmd.result.valid = 0;
	KV_EXPECT_STREQ(kv_describe(EDQUOT, &cmd, PEER),
			"this user's limit on memory for RDMA buffers is reached (max_pinned_mb_per_user)");
	/* Or for a log pinned first, on a server too. */
	cmd = kv_ping_of(KVERBS_ROLE_SERVER, KVERBS_STEP_LOG, 0);
	KV_EXPECT_STREQ(kv_describe(EDQUOT, &cmd, "0.0.0.0:7174"),
			"this user's limit on memory for RDMA buffers is reached (max_pinned_mb_per_user)");
	KV_EXPECT_STREQ(kv_errno_name(EDQUOT), "EDQUOT");
}

KV_TEST(describe_shared_memory)
{
	/* The module pins only private memory for the log and the samples. */
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_LOG, 0);
	char buf[256];

	KV_EXPECT_STREQ(kv_describe(EOPNOTSUPP, &cmd, PEER),
			"cannot store the ping data: its buffer is shared memory (a file, a memfd or a MAP_SHARED mapping), and the module pins only private memory");
	kv_describe_pinned(buf, sizeof(buf), EOPNOTSUPP, "latency samples");
	KV_EXPECT_STREQ(buf, "cannot store the latency samples: its buffer is shared memory (a file, a memfd or a MAP_SHARED mapping), and the module pins only private memory");
	/* Other failures keep the errno's own words. */
	KV_EXPECT_STREQ(kv_describe(EFAULT, &cmd, PEER),
			"cannot store the ping data: Bad address");
}

KV_TEST(describe_truncates_safely)
{
	struct kverbs_ping cmd = kv_ping_of(KVERBS_ROLE_CLIENT, KVERBS_STEP_NONE, 5);
	char buf[12];
	int n;

	/* Like snprintf(): cut and terminated, the full length returned. */
	memset(buf, 'x', sizeof(buf));
	n = kv_describe_ping_failure(buf, sizeof(buf), ECONNRESET, &cmd, PEER);
	KV_EXPECT_EQ(n, strlen("the server closed the connection in iteration 5"));
	KV_EXPECT_STREQ(buf, "the server ");
}

/* ---- latency statistics ---- */

/* Doubles computed from whole nanoseconds: equal to well within 1e-9 usec. */
#define KV_EXPECT_NEAR(a, b) do {					\
	double kv_da = (a), kv_db = (b);				\
	if (!(fabs(kv_da - kv_db) <= 1e-9 * (1 + fabs(kv_db))))		\
		KV_FAIL_AT(0, "%s == %s: %.12g vs %.12g", #a, #b, kv_da, kv_db); \
} while (0)

KV_TEST(lat_stats_known_sets)
{
	/* Automatic, for sqrt() in the initializers. */
	const struct {
		const char *what;
		const uint64_t *ns;
		size_t n;
		struct kv_lat_stats want;
	} sets[] = {
		{ "one sample", (const uint64_t[]){ 1500 }, 1,
		  { 1, 1.5, 1.5, 1.5, 1.5, 0, 1.5, 1.5 } },
		/*
		 * In the order the operations ran, not sorted.  Nearest rank:
		 * ceil(0.99 * 3) = 3, so both percentiles are the largest.
		 */
		{ "odd count", (const uint64_t[]){ 3000, 1000, 2000 }, 3,
		  { 3, 1, 3, 2, 2, sqrt(2.0 / 3), 3, 3 } },
		/* sorted[n / 2]: the upper middle sample, not the mean of the two. */
		{ "even count", (const uint64_t[]){ 4000, 1000, 3000, 2000 }, 4,
		  { 4, 1, 4, 3, 2.5, sqrt(1.25), 4, 4 } },
		/* The textbook set: mean 5, population standard deviation 2. */
		{ "known stdev",
		  (const uint64_t[]){ 2000, 4000, 4000, 4000, 5000, 5000, 7000, 9000 }, 8,
		  { 8, 2, 9, 5, 5, 2, 9, 9 } },
		/* An hour in ns: no precision lost, stdev exactly 0. */
		{ "large and equal", (const uint64_t[]){ 3600000000000ULL, 3600000000000ULL }, 2,
		  { 2, 3.6e9, 3.6e9, 3.6e9, 3.6e9, 0, 3.6e9, 3.6e9 } },
	};
	struct kv_lat_stats st;
	uint64_t ns[8];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sets); i++) {
		int failed = kv_test_failed;

		kv_test_failed = 0;
		memcpy(ns, sets[i].ns, sets[i].n * sizeof(*ns));
		KV_ASSERT_OK(kv_lat_stats_compute(ns, sets[i].n, &st));
		KV_EXPECT_EQ(st.samples, sets[i].want.samples);
		KV_EXPECT_NEAR(st.min, sets[i].want.min);
		KV_EXPECT_NEAR(st.max, sets[i].want.max);
		KV_EXPECT_NEAR(st.typical, sets[i].want.typical);
		KV_EXPECT_NEAR(st.avg, sets[i].want.avg);
		KV_EXPECT_NEAR(st.stdev, sets[i].want.stdev);
		KV_EXPECT_NEAR(st.p99, sets[i].want.p99);
		KV_EXPECT_NEAR(st.p99_9, sets[i].want.p99_9);
		/* The caller's array is sorted in a copy, not in place. */
		KV_EXPECT_OK(memcmp(ns, sets[i].ns, sets[i].n * sizeof(*ns)));
		if (kv_test_failed)
			kv_diag("in the set: %s", sets[i].what);
		kv_test_failed |= failed;
	}
}

KV_TEST(lat_stats_no_samples)
{
	const uint64_t none[] = { 0 };
	struct kv_lat_stats st;

	memset(&st, 0xa5, sizeof(st));
	KV_EXPECT_EQ(kv_lat_stats_compute(none, 0, &st), -EINVAL);
	KV_EXPECT_EQ(st.samples, 0xa5a5a5a5a5a5a5a5ULL);
}

KV_TEST(lat_stats_percentiles)
{
	static const size_t counts[] = { 1000, 100, 10, 2000 };
	struct kv_lat_stats st;
	uint64_t *ns;
	size_t i, c, n;

	ns = malloc(2000 * sizeof(*ns));
	if (!ns)
		KV_FAIL_AT(1, "no memory");
	for (c = 0; c < ARRAY_SIZE(counts); c++) {
		n = counts[c];
		/* 1..n usec, shuffled the same way every run. */
		for (i = 0; i < n; i++)
			ns[i] = ((i * 7919) % n + 1) * 1000;
		KV_ASSERT_OK(kv_lat_stats_compute(ns, n, &st));
		KV_EXPECT_EQ(st.samples, n);
		KV_EXPECT_NEAR(st.min, 1);
		KV_EXPECT_NEAR(st.max, n);
		KV_EXPECT_NEAR(st.avg, (n + 1) / 2.0);
		KV_EXPECT_NEAR(st.typical, n / 2 + 1);
		/* 1..n has a population variance of (n^2 - 1) / 12. */
		KV_EXPECT_NEAR(st.stdev, sqrt((n * n - 1) / 12.0));
		/* sorted[ceil(p * n) - 1], the value ceil(p * n) here. */
		KV_EXPECT_NEAR(st.p99, ceil(n * 99 / 100.0));
		KV_EXPECT_NEAR(st.p99_9, (n * 999 + 999) / 1000);
	}
	/* Spelled out for 1..1000 and 1..100. */
	for (i = 0; i < 1000; i++)
		ns[i] = (i + 1) * 1000;
	KV_ASSERT_OK(kv_lat_stats_compute(ns, 1000, &st));
	KV_EXPECT_NEAR(st.p99, 990);
	KV_EXPECT_NEAR(st.p99_9, 999);
	KV_EXPECT_NEAR(st.typical, 501);
	KV_EXPECT_NEAR(st.stdev, sqrt(999999 / 12.0));
	KV_ASSERT_OK(kv_lat_stats_compute(ns, 100, &st));
	KV_EXPECT_NEAR(st.p99, 99);
	KV_EXPECT_NEAR(st.p99_9, 100);
	free(ns);
}

/* ---- the perf subcommands' options ---- */

/*
 * kv_perf_parse() on "@cmd @args...", with what it says on stderr in @err
 * (usage errors) rather than in the KTAP output.
 */
static int kv_perf_parse_args(uint32_t test, const char *cmd,
			      const char *const *args, struct kv_perf_opts *o,
			      char *err, size_t len)
{
	char *argv[8] = { (char *)cmd };	/* and up to 6 arguments */
	FILE *tmp = tmpfile();
	int argc = 1, saved, ret;
	size_t n;

	if (!tmp)
		KV_FAIL_AT(1, "tmpfile: %s", strerror(errno));
	/* getopt_long() reorders argv[], not the strings. */
	for (; argc < 7 && args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	ret = kv_perf_parse(test, argc, argv, o);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, len - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return ret;
}

#define KV_SERVER	KVERBS_ROLE_SERVER
#define KV_CLIENT	KVERBS_ROLE_CLIENT

KV_TEST(perf_parse_accepts)
{
	static const struct {
		uint32_t test;
		const char *cmd;
		const char *args[6];	/* NULL-terminated */
		int role;
		uint32_t size, iters, tx_depth;
		bool cmp_swap;
	} ok[] = {
		/* perftest's defaults; a tx_depth of 0 is the module's 128. */
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "10.0.0.1" },
		  KV_CLIENT, 65536, 5000, 0, false },
		{ KVERBS_PERF_READ_LAT, "read_lat", { "10.0.0.1" }, KV_CLIENT, 2, 1000, 1, false },
		{ KVERBS_PERF_ATOMIC_LAT, "atomic_lat", { "10.0.0.1" },
		  KV_CLIENT, 8, 1000, 1, false },
		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { "10.0.0.1" }, KV_CLIENT, 8, 5000, 0, false },
		/* A server without -s takes what the module allows. */
		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { NULL }, KV_SERVER, 0, 5000, 0, false },
		{ KVERBS_PERF_READ_LAT, "read_lat", { NULL }, KV_SERVER, 0, 1000, 1, false },
		{ KVERBS_PERF_WRITE_LAT, "write_lat", { "10.0.0.1" },
		  KV_CLIENT, 2, 1000, 1, false },
		{ KVERBS_PERF_SEND_LAT, "send_lat", { "10.0.0.1" },
		  KV_CLIENT, 2, 1000, 1, false },
		{ KVERBS_PERF_WRITE_LAT, "write_lat", { NULL }, KV_SERVER, 0, 1000, 1, false },
		{ KVERBS_PERF_SEND_LAT, "send_lat", { "-s", "4k", "-n", "7", "10.0.0.1" },
		  KV_CLIENT, 4096, 7, 1, false },

		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { "-A", "CMP_AND_SWAP", "10.0.0.1" },
		  KV_CLIENT, 8, 5000, 0, true },
		{ KVERBS_PERF_ATOMIC_LAT, "atomic_lat", { "--atomic_type=CMP_AND_SWAP", "10.0.0.1" },
		  KV_CLIENT, 8, 1000, 1, true },
		/* The last one given counts. */
		{ KVERBS_PERF_ATOMIC_LAT, "atomic_lat",
		  { "-A", "CMP_AND_SWAP", "--atomic_type", "FETCH_AND_ADD", "10.0.0.1" },
		  KV_CLIENT, 8, 1000, 1, false },
		/* A server takes -A, as perftest's does; its client decides. */
		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { "-A", "CMP_AND_SWAP" },
		  KV_SERVER, 0, 5000, 0, true },
		/* -s 8 is the size there is; a server given it accepts 8 bytes. */
		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { "-s", "8", "10.0.0.1" },
		  KV_CLIENT, 8, 5000, 0, false },
		{ KVERBS_PERF_ATOMIC_LAT, "atomic_lat", { "--size=8" }, KV_SERVER, 8, 1000, 1, false },
		{ KVERBS_PERF_READ_LAT, "read_lat", { "-s", "4k", "-n", "7", "10.0.0.1" },
		  KV_CLIENT, 4096, 7, 1, false },
		/* -t 1 is the depth a latency test has; the others take any. */
		{ KVERBS_PERF_READ_LAT, "read_lat", { "-t", "1", "10.0.0.1" },
		  KV_CLIENT, 2, 1000, 1, false },
		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { "-t", "512", "10.0.0.1" },
		  KV_CLIENT, 8, 5000, 512, false },
	};
	struct kv_perf_opts o;
	char err[512];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		if (kv_perf_parse_args(ok[i].test, ok[i].cmd, ok[i].args, &o, err,
				       sizeof(err))) {
			KV_FAIL_AT(0, "case %zu (%s): refused: %s", i, ok[i].cmd, err);
			continue;
		}
		if (o.role != ok[i].role || o.size != ok[i].size ||
		    o.iters != ok[i].iters || o.tx_depth != ok[i].tx_depth ||
		    o.cmp_swap != ok[i].cmp_swap || strcmp(o.cmd, ok[i].cmd))
			KV_FAIL_AT(0, "case %zu (%s): role %d size %u iters %u tx_depth %u cmp_swap %d",
				   i, o.cmd, o.role, o.size, o.iters, o.tx_depth, o.cmp_swap);
	}

	/* Duration mode: the latency client sizes its samples by it. */
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_READ_LAT, "read_lat",
					(const char *const[]){ "-D", "2.5", "::1", NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_EQ(o.duration_ns, 2500000000ULL);

	/* One QP unless told, every size with -a; both also for a server. */
	KV_EXPECT_EQ(o.qps, 1);
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_WRITE_BW, "write_bw",
					(const char *const[]){ "-a", "-q", "4", NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_EQ(o.qps, 4);
	KV_EXPECT_TRUE(o.all);
	KV_EXPECT_EQ(o.role, KV_SERVER);

	/* A server's ceilings; none unless given, so the module's apply. */
	KV_EXPECT_EQ(o.max_duration_ns, 0);
	KV_EXPECT_EQ(o.max_iters, 0);
	KV_EXPECT_TRUE(!o.no_reverse);
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_WRITE_BW, "write_bw",
					(const char *const[]){ "--max-duration", "1.5",
							       "--max-iters=1000",
							       "--no-reverse", NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_EQ(o.role, KV_SERVER);
	KV_EXPECT_EQ(o.max_duration_ns, 1500000000ULL);
	KV_EXPECT_EQ(o.max_iters, 1000);
	KV_EXPECT_TRUE(o.no_reverse);
	/* The uAPI's own limits are the options' too. */
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_READ_LAT, "read_lat",
					(const char *const[]){ "--max-duration", "86400",
							       "--max-iters", "4294967295",
							       NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_EQ(o.max_duration_ns, KVERBS_PERF_MAX_DURATION_NS);
	KV_EXPECT_EQ(o.max_iters, 4294967295ULL);
}

KV_TEST(perf_parse_rejects)
{
	static const struct {
		uint32_t test;
		const char *cmd;
		const char *args[6];	/* NULL-terminated */
		const char *msg;
	} bad[] = {
		/* perftest's spelling only. */
		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { "-A", "BOGUS", "1.2.3.4" },
		  "kverbs atomic_bw: invalid atomic type 'BOGUS' (FETCH_AND_ADD or CMP_AND_SWAP)\n"
		  "Try 'kverbs atomic_bw --help'." },
		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { "-A", "fetch_and_add", "1.2.3.4" },
		  "invalid atomic type 'fetch_and_add'" },
		{ KVERBS_PERF_ATOMIC_LAT, "atomic_lat", { "-A" }, "option '-A' needs a value" },
		/* Not a thing the other tests do. */
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "-A", "FETCH_AND_ADD", "1.2.3.4" },
		  "kverbs write_bw: -A is for the atomic tests" },
		{ KVERBS_PERF_READ_LAT, "read_lat", { "--atomic_type=CMP_AND_SWAP", "1.2.3.4" },
		  "kverbs read_lat: -A is for the atomic tests" },
		/* Atomics are 8 bytes, client and server alike. */
		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { "-s", "16", "1.2.3.4" },
		  "kverbs atomic_bw: invalid size '16': atomic operations are on 8-byte words" },
		{ KVERBS_PERF_ATOMIC_LAT, "atomic_lat", { "-s", "4" }, "invalid size '4'" },
		{ KVERBS_PERF_ATOMIC_LAT, "atomic_lat", { "-s", "8k" }, "invalid size '8k'" },
		{ KVERBS_PERF_ATOMIC_LAT, "atomic_lat", { "-s", "0" }, "invalid size '0'" },
		/* One operation in flight is what a latency test is. */
		{ KVERBS_PERF_ATOMIC_LAT, "atomic_lat", { "-t", "2", "1.2.3.4" },
		  "kverbs atomic_lat: invalid TX depth '2': a latency test has one operation in flight" },
		{ KVERBS_PERF_READ_LAT, "read_lat", { "-t", "0", "1.2.3.4" },
		  "invalid TX depth '0' (1 to 8192)" },
		{ KVERBS_PERF_READ_LAT, "read_lat", { "-D", "1", "-n", "5", "1.2.3.4" },
		  "-n and -D exclude each other" },
		/* -a: not with a size, not for atomics (8 bytes is all they do). */
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "-a", "-s", "64", "1.2.3.4" },
		  "kverbs write_bw: -a and -s exclude each other" },
		{ KVERBS_PERF_ATOMIC_BW, "atomic_bw", { "-a", "1.2.3.4" },
		  "kverbs atomic_bw: -a is not for the atomic tests: their only size is 8" },
		/* -q: bandwidth tests, 1 to 32. */
		{ KVERBS_PERF_READ_LAT, "read_lat", { "-q", "2", "1.2.3.4" },
		  "kverbs read_lat: -q is for the bandwidth tests" },
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "-q", "0", "1.2.3.4" },
		  "invalid number of QPs '0' (1 to 32)" },
		{ KVERBS_PERF_SEND_BW, "send_bw", { "-q", "33" }, "invalid number of QPs '33' (1 to 32)" },
		/* Ceilings: a server's, within the uAPI's limits. */
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "--max-duration", "10", "1.2.3.4" },
		  "kverbs write_bw: --max-duration is for the server" },
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "--max-iters", "10", "1.2.3.4" },
		  "kverbs write_bw: --max-iters is for the server" },
		{ KVERBS_PERF_SEND_BW, "send_bw", { "--no-reverse", "1.2.3.4" },
		  "kverbs send_bw: --no-reverse is for the server" },
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "--max-duration", "0" },
		  "invalid maximum duration '0' (seconds, more than 0, at most 86400)" },
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "--max-duration", "86401" },
		  "invalid maximum duration '86401'" },
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "--max-duration", "-1" },
		  "invalid maximum duration '-1'" },
		{ KVERBS_PERF_READ_BW, "read_bw", { "--max-iters", "0" },
		  "invalid maximum iterations '0' (1 to 4294967295)" },
		{ KVERBS_PERF_READ_BW, "read_bw", { "--max-iters", "4294967296" },
		  "invalid maximum iterations '4294967296'" },
		{ KVERBS_PERF_READ_BW, "read_bw", { "--max-iters" },
		  "option '--max-iters' needs a value" },
		{ KVERBS_PERF_WRITE_BW, "write_bw", { "--no-reverse", "-b" },
		  "kverbs write_bw: --no-reverse and -b exclude each other" },
		{ KVERBS_PERF_SEND_LAT, "send_lat", { "--no-reverse" },
		  "kverbs send_lat: --no-reverse is for the bandwidth tests" },
	};
	struct kv_perf_opts o;
	char err[512];
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = kv_perf_parse_args(bad[i].test, bad[i].cmd, bad[i].args, &o, err,
					 sizeof(err));
		if (ret != -1)
			KV_FAIL_AT(0, "case %zu (%s): returned %d, expected -1", i, bad[i].cmd, ret);
		KV_EXPECT_CONTAINS(err, bad[i].msg);
	}
}

/* ---- option tables (opt_table.c) ---- */

/* What kv_tab[]'s options set. */
struct kv_tab_opts {
	bool x;
	bool y;
	bool z;
	const char *v;
};

/* --vv V: "default" is the default, and counts as not given. */
static int kv_tab_opt_v(const struct kv_cmdline *cl)
{
	struct kv_tab_opts *o = cl->ctx;

	o->v = cl->arg;
	return strcmp(cl->arg, "default") ? 0 : 1;
}

enum { KV_TAB_X, KV_TAB_Y, KV_TAB_Z, KV_TAB_V, KV_TAB_HELP };

/* A table with one row of each kind: taken by some variants, a role's, excluding, a value. */
static const struct kv_opt kv_tab[] = {
	[KV_TAB_X] = {
		.name = "xx", .key = 'x', .flag = KV_FLAG(struct kv_tab_opts, x),
		.takes = 1, .not_for = "-x is not for %t: %n",
		.alt_when = 2, .not_for_alt = "-x is for the ones, not %t",
		.help = "an x",
	},
	[KV_TAB_Y] = {
		.name = "yy", .flag = KV_FLAG(struct kv_tab_opts, y),
		.role = KVERBS_ROLE_SERVER, .role_why = "a client has none",
		.excludes = KV_BIT(KV_TAB_Z), .excl_why = "one or the other",
		.help = "a y, the server's",
	},
	[KV_TAB_Z] = {
		.name = "zz", .key = 'z', .flag = KV_FLAG(struct kv_tab_opts, z), .shown = "-z Z",
		.help = "a z\n               on two lines", .usage = "[-z Z]",
	},
	[KV_TAB_V] = { .name = "vv", .alias = "ww", .arg = "V", .parse = kv_tab_opt_v, .help = "a value" },
	[KV_TAB_HELP] = { .name = "help", .key = 'h', .help = "this help", .usage = "" },
};

static void kv_tab_usage(FILE *f, const struct kv_cmdline *cl)
{
	kv_cmdline_synopsis(f, cl, NULL, "[ADDR]");
	kv_cmdline_help(f, cl);
}

static void kv_tab_init(struct kv_cmdline *cl, struct kv_tab_opts *o, unsigned int has)
{
	memset(o, 0, sizeof(*o));
	*cl = (struct kv_cmdline){
		.cmd = "tab", .opts = kv_tab, .nopts = ARRAY_SIZE(kv_tab),
		.variant = "VAR", .has = has, .note = "NOTE", .ctx = o, .flags = o,
		.usage = kv_tab_usage, .help_col = 15,
	};
}

/*
 * kv_cmdline_parse() of "tab @args...", then, if it accepts them,
 * kv_cmdline_check() for @role; what they say on stderr in @err.
 */
static int kv_tab_parse(struct kv_cmdline *cl, int role, const char *const *args,
			char *err, size_t len)
{
	char *argv[8] = { "tab" };	/* and up to 6 arguments */
	FILE *tmp = tmpfile();
	int argc = 1, saved, ret;
	size_t n;

	if (!tmp)
		KV_FAIL_AT(1, "tmpfile: %s", strerror(errno));
	for (; argc < 7 && args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	ret = kv_cmdline_parse(cl, argc, argv);
	if (!ret)
		ret = kv_cmdline_check(cl, role);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, len - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return ret;
}

KV_TEST(opt_table_parses_and_refuses_as_its_rows_say)
{
	static const struct {
		unsigned int has;
		int role;
		const char *args[6];
		uint64_t given;
		const char *err;	/* NULL: accepted, with @given */
	} cases[] = {
		{ 1, KV_SERVER, { "-x", "--ww", "v1", "--yy" },
		  KV_BIT(KV_TAB_X) | KV_BIT(KV_TAB_V) | KV_BIT(KV_TAB_Y), NULL },
		/* A parser's default counts as not given, even after another value. */
		{ 1, KV_CLIENT, { "--vv", "v1", "--ww", "default" }, 0, NULL },
		/* .takes, with the variant's name and note, or the other words. */
		{ 0, KV_CLIENT, { "-zx" }, 0,
		  "kverbs tab: -x is not for VAR: NOTE\nTry 'kverbs tab --help'.\n" },
		{ 2, KV_CLIENT, { "-x" }, 0, "kverbs tab: -x is for the ones, not VAR\n" },
		/* .role, before .excludes; then .excludes, as .shown names them. */
		{ 1, KV_CLIENT, { "-z", "--yy" }, 0,
		  "kverbs tab: --yy is for the server: a client has none\n" },
		{ 1, KV_SERVER, { "-z", "--yy" }, 0,
		  "kverbs tab: --yy and -z Z exclude each other: one or the other\n" },
		/* What getopt_long() rejects. */
		{ 1, KV_CLIENT, { "-q" }, 0, "kverbs tab: unknown option '-q'\n" },
		{ 1, KV_CLIENT, { "--yy=1" }, 0, "kverbs tab: unknown option '--yy=1'\n" },
		{ 1, KV_CLIENT, { "--vv" }, 0, "kverbs tab: option '--vv' needs a value\n" },
	};
	struct kv_cmdline cl;
	struct kv_tab_opts o;
	char err[512];
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		kv_tab_init(&cl, &o, cases[i].has);
		ret = kv_tab_parse(&cl, cases[i].role, cases[i].args, err, sizeof(err));
		if (!cases[i].err && (ret || cl.given != cases[i].given))
			KV_FAIL_AT(0, "case %zu: returned %d, given 0x%llx: %s", i, ret,
				   (unsigned long long)cl.given, err);
		if (cases[i].err && ret != -1)
			KV_FAIL_AT(0, "case %zu: returned %d, expected -1", i, ret);
		if (cases[i].err)
			KV_EXPECT_CONTAINS(err, cases[i].err);
	}
	/* The flags and the value went where the rows say. */
	kv_tab_init(&cl, &o, 1);
	KV_ASSERT_OK(kv_tab_parse(&cl, KV_SERVER,
				  (const char *const[]){ "-x", "--yy", "--ww=v2", NULL },
				  err, sizeof(err)));
	KV_EXPECT_TRUE(o.x && o.y && !o.z);
	KV_EXPECT_STREQ(o.v, "v2");
}

KV_TEST(opt_table_help_and_synopsis)
{
	struct kv_cmdline cl;
	struct kv_tab_opts o;
	char *text;
	size_t len;
	FILE *f;

	/* A variant that does not take -x is not told of it. */
	kv_tab_init(&cl, &o, 0);
	f = open_memstream(&text, &len);
	if (!f)
		KV_FAIL_AT(1, "open_memstream: %s", strerror(errno));
	kv_tab_usage(f, &cl);
	fclose(f);
	KV_EXPECT_STREQ(text,
			"usage: kverbs tab [--yy] [-z Z] [--vv V] [ADDR]\n"
			"      --yy     a y, the server's\n"
			"  -z, --zz     a z\n"
			"               on two lines\n"
			"      --vv, --ww V\n"
			"               a value\n"
			"  -h, --help   this help\n");
	free(text);

	kv_tab_init(&cl, &o, 1);
	f = open_memstream(&text, &len);
	if (!f)
		KV_FAIL_AT(1, "open_memstream: %s", strerror(errno));
	kv_cmdline_synopsis(f, &cl, "-s|-c", "[A LONG LIST OF WORDS THAT GOES ON]");
	fclose(f);
	/* Wrapped within 79 columns, under the first word. */
	KV_EXPECT_STREQ(text,
			"usage: kverbs tab -s|-c [-x] [--yy] [-z Z] [--vv V]\n"
			"                  [A LONG LIST OF WORDS THAT GOES ON]\n");
	free(text);
}

/* A perf option's default counts as not given: no refusal of what it excludes. */
KV_TEST(perf_parse_defaults_are_not_given)
{
	struct kv_perf_opts o;
	char err[512];

	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_SEND_BW, "send_bw",
					(const char *const[]){ "-c", "UD", "-q", "1", "10.0.0.1",
							       NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_TRUE(o.ud);
	KV_EXPECT_EQ(o.qps, 1);
	KV_EXPECT_EQ(kv_perf_parse_args(KVERBS_PERF_SEND_BW, "send_bw",
					(const char *const[]){ "-c", "UD", "-q", "2", "10.0.0.1",
							       NULL },
					&o, err, sizeof(err)), -1);
	KV_EXPECT_CONTAINS(err, "-c UD and -q exclude each other");
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_SEND_LAT, "send_lat",
					(const char *const[]){ "-I", "0", "--connection=UD",
							       "10.0.0.1", NULL },
					&o, err, sizeof(err)));
	/* -c UD then -c RC: RC, with what UD excludes. */
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_SEND_BW, "send_bw",
					(const char *const[]){ "-c", "UD", "-b", "-c", "RC",
							       "10.0.0.1", NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_TRUE(!o.ud && o.bidir);
	/* A server forgets -c UD: its client's hello says. */
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_SEND_BW, "send_bw",
					(const char *const[]){ "-c", "UD", "-b", NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_TRUE(!o.ud && o.bidir);
}

/* ---- a perf server's refusals, as both ends print them ---- */

KV_TEST(perf_reject_names)
{
	KV_EXPECT_STREQ(kv_perf_reject_str(KVERBS_PERF_REJECT_DURATION),
			"duration above the server's ceiling");
	KV_EXPECT_STREQ(kv_perf_reject_str(KVERBS_PERF_REJECT_ITERATIONS),
			"iterations above the server's ceiling");
	KV_EXPECT_STREQ(kv_perf_reject_str(KVERBS_PERF_REJECT_REVERSE),
			"reverse direction not served");
	KV_EXPECT_STREQ(kv_perf_reject_str(KVERBS_PERF_REJECT_BUSY_POLL),
			"test needs a busy-polling server");
	KV_EXPECT_STREQ(kv_perf_reject_str(KVERBS_PERF_REJECT_IMM),
			"no immediate data on the server's device");
	KV_EXPECT_STREQ(kv_perf_reject_str(KVERBS_PERF_REJECT_IMM + 1), "unknown");
}

/*
 * --rw goes to the module for every test, which refuses it where rdma_rw
 * has nothing to move; a server that predates it refuses the flag as
 * reserved, and the client says which flag.
 */
KV_TEST(perf_rw_parsed_and_refusal_described)
{
	static const char *const tests[] = { "write_bw", "send_bw", "write_lat" };
	static const uint32_t nums[] = {
		KVERBS_PERF_WRITE_BW, KVERBS_PERF_SEND_BW, KVERBS_PERF_WRITE_LAT,
	};
	struct kverbs_perf_result r = {
		.reject_reason = KVERBS_PERF_REJECT_RESERVED,
		.flags = KVERBS_PERF_F_RW | KVERBS_PERF_F_VALIDATE,
	};
	struct kv_perf_opts o;
	char err[512], buf[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		KV_ASSERT_OK(kv_perf_parse_args(nums[i], tests[i],
						(const char *const[]){ "--rw", "10.0.0.1", NULL },
						&o, err, sizeof(err)));
		KV_EXPECT_TRUE(o.rw);
	}
	kv_perf_describe_reject(buf, sizeof(buf), &r, false, false);
	KV_EXPECT_STREQ(buf, "the server refused the request: reserved fields set (the server's module does not take --rw)");
}

/*
 * A server whose module predates --inv rejects its flag as reserved bits:
 * the client says which of its options the server lacks.
 */
KV_TEST(perf_reject_inv_described)
{
	struct kverbs_perf_result r = {
		.reject_reason = KVERBS_PERF_REJECT_RESERVED,
		.flags = KVERBS_PERF_F_VALIDATE | KVERBS_PERF_F_INV,
	};
	char buf[256];

	kv_perf_describe_reject(buf, sizeof(buf), &r, false, false);
	KV_EXPECT_STREQ(buf, "the server refused the request: reserved fields set (the server's module does not take --inv)");
	r.flags = KVERBS_PERF_F_VALIDATE;
	kv_perf_describe_reject(buf, sizeof(buf), &r, false, false);
	KV_EXPECT_STREQ(buf, "the server refused the request: reserved fields set");
}

/*
 * -c UD: parsed into the flag's option, RC the default, anything else
 * refused; a server whose module predates KVERBS_PERF_F_UD rejects it
 * as reserved bits, and one whose port's MTU is lower than the
 * client's refuses the size: the client says which.
 */
KV_TEST(perf_ud_parsed_and_refusal_described)
{
	struct kverbs_perf_result r = {
		.reject_reason = KVERBS_PERF_REJECT_RESERVED,
		.flags = KVERBS_PERF_F_UD | KVERBS_PERF_F_VALIDATE,
		.msg_size = 4096,
	};
	struct kv_perf_opts o;
	char err[512], buf[256];

	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_SEND_BW, "send_bw",
					(const char *const[]){ "-c", "UD", "10.0.0.1", NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_TRUE(o.ud);
	/* Without -s, a size that fits a RoCE port on 1500-byte Ethernet. */
	KV_EXPECT_EQ(o.size, 1024);
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_SEND_LAT, "send_lat",
					(const char *const[]){ "--connection=UD", "-s", "64",
							       "10.0.0.1", NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_TRUE(o.ud);
	KV_EXPECT_EQ(o.size, 64);
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_SEND_BW, "send_bw",
					(const char *const[]){ "-c", "RC", "10.0.0.1", NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_TRUE(!o.ud);
	KV_EXPECT_EQ(o.size, 65536);
	/* A server takes either; its client's hello says. */
	KV_ASSERT_OK(kv_perf_parse_args(KVERBS_PERF_SEND_BW, "send_bw",
					(const char *const[]){ "-c", "UD", NULL },
					&o, err, sizeof(err)));
	KV_EXPECT_TRUE(!o.ud);
	KV_EXPECT_EQ(kv_perf_parse_args(KVERBS_PERF_SEND_BW, "send_bw",
					(const char *const[]){ "-c", "ud", "10.0.0.1", NULL },
					&o, err, sizeof(err)), -1);
	KV_EXPECT_TRUE(strstr(err, "invalid connection type 'ud' (RC or UD)") != NULL);
	KV_EXPECT_EQ(kv_perf_parse_args(KVERBS_PERF_READ_BW, "read_bw",
					(const char *const[]){ "-c", "UD", "10.0.0.1", NULL },
					&o, err, sizeof(err)), -1);
	KV_EXPECT_TRUE(strstr(err, "-c UD is for send_bw and send_lat") != NULL);
	KV_EXPECT_EQ(kv_perf_parse_args(KVERBS_PERF_SEND_LAT, "send_lat",
					(const char *const[]){ "-c", "UD", "-I", "16", "10.0.0.1",
							       NULL },
					&o, err, sizeof(err)), -1);
	KV_EXPECT_TRUE(strstr(err, "-c UD and -I exclude each other") != NULL);

	kv_perf_describe_reject(buf, sizeof(buf), &r, false, false);
	KV_EXPECT_STREQ(buf, "the server refused the request: reserved fields set (the server's module does not take -c UD)");
	r.reject_reason = KVERBS_PERF_REJECT_SETUP;
	r.reject_value = EMSGSIZE;
	kv_perf_describe_reject(buf, sizeof(buf), &r, false, false);
	KV_EXPECT_STREQ(buf, "the server refused the request: server could not set up (4096-byte messages do not fit a datagram on the server's port: its path MTU is lower: try a smaller -s)");
}

KV_TEST(perf_reject_ceilings_described)
{
	struct kverbs_perf_result r = {
		.reject_reason = KVERBS_PERF_REJECT_DURATION,
		.reject_value = 10,
	};
	char buf[256];

	kv_perf_describe_reject(buf, sizeof(buf), &r, false, false);
	KV_EXPECT_STREQ(buf, "the server refused the request: duration above the server's ceiling (at most 10 s)");
	kv_perf_describe_reject(buf, sizeof(buf), &r, true, false);
	KV_EXPECT_STREQ(buf, "refused the client's request: duration above the server's ceiling (at most 10 s)");

	r.reject_reason = KVERBS_PERF_REJECT_ITERATIONS;
	r.reject_value = 1000;
	kv_perf_describe_reject(buf, sizeof(buf), &r, false, false);
	KV_EXPECT_STREQ(buf, "the server refused the request: iterations above the server's ceiling (at most 1000)");
	/* The value saturates at 32 bits: the ceiling may be higher still. */
	r.reject_value = UINT32_MAX;
	kv_perf_describe_reject(buf, sizeof(buf), &r, true, false);
	KV_EXPECT_STREQ(buf, "refused the client's request: iterations above the server's ceiling (at most 4294967295 or more)");

	r.reject_reason = KVERBS_PERF_REJECT_REVERSE;
	r.reject_value = 0;
	kv_perf_describe_reject(buf, sizeof(buf), &r, false, false);
	KV_EXPECT_STREQ(buf, "the server refused the request: reverse direction not served (the server runs with --no-reverse: run without -b)");
	kv_perf_describe_reject(buf, sizeof(buf), &r, true, false);
	KV_EXPECT_STREQ(buf, "refused the client's request: reverse direction not served (this server runs with --no-reverse)");
}

/* ---- the JSON writer ---- */

/* A kv_json writing into memory, so that the exact text can be checked. */
struct kv_mem {
	FILE *f;
	char *text;
	size_t len;
};

static void kv_mem_open(struct kv_mem *m, struct kv_json *j)
{
	m->text = NULL;
	m->len = 0;
	m->f = open_memstream(&m->text, &m->len);
	if (!m->f)
		KV_FAIL_AT(1, "open_memstream: %s", strerror(errno));
	kv_json_init(j, m->f);
}

/* The document, NUL-terminated; free() it. */
static char *kv_mem_close(struct kv_mem *m)
{
	fclose(m->f);
	return m->text;
}

#define KV_EXPECT_JSON(m, want) do {					\
	char *kv_text = kv_mem_close(m);				\
	KV_EXPECT_STREQ(kv_text, want);					\
	free(kv_text);							\
} while (0)

KV_TEST(json_scalars)
{
	struct kv_mem m;
	struct kv_json j;

	kv_mem_open(&m, &j);
	kv_json_begin_object(&j);
	kv_json_key(&j, "u");
	kv_json_u64(&j, UINT64_MAX);
	kv_json_key(&j, "zero");
	kv_json_u64(&j, 0);
	kv_json_key(&j, "i");
	kv_json_i64(&j, INT64_MIN);
	kv_json_key(&j, "t");
	kv_json_bool(&j, true);
	kv_json_key(&j, "f");
	kv_json_bool(&j, false);
	kv_json_key(&j, "n");
	kv_json_null(&j);
	kv_json_key(&j, "d");
	kv_json_double(&j, 0.5);
	kv_json_key(&j, "s");
	kv_json_string(&j, "");
	kv_json_end_object(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "{\"u\":18446744073709551615,\"zero\":0,"
		       "\"i\":-9223372036854775808,\"t\":true,\"f\":false,"
		       "\"n\":null,\"d\":0.5,\"s\":\"\"}\n");
}

KV_TEST(json_nesting_and_empty_containers)
{
	struct kv_mem m;
	struct kv_json j;

	kv_mem_open(&m, &j);
	kv_json_begin_object(&j);
	kv_json_key(&j, "a");
	kv_json_begin_object(&j);
	kv_json_key(&j, "b");
	kv_json_begin_array(&j);
	kv_json_u64(&j, 1);
	kv_json_begin_object(&j);
	kv_json_key(&j, "c");
	kv_json_begin_array(&j);
	kv_json_end_array(&j);
	kv_json_end_object(&j);
	kv_json_begin_array(&j);
	kv_json_end_array(&j);
	kv_json_string(&j, "x");
	kv_json_end_array(&j);
	kv_json_key(&j, "d");
	kv_json_begin_object(&j);
	kv_json_end_object(&j);
	kv_json_end_object(&j);
	/* Commas at the outer level resume after the inner ones closed. */
	kv_json_key(&j, "e");
	kv_json_begin_array(&j);
	kv_json_begin_array(&j);
	kv_json_end_array(&j);
	kv_json_begin_array(&j);
	kv_json_end_array(&j);
	kv_json_end_array(&j);
	kv_json_key(&j, "f");
	kv_json_u64(&j, 2);
	kv_json_end_object(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "{\"a\":{\"b\":[1,{\"c\":[]},[],\"x\"],\"d\":{}},"
		       "\"e\":[[],[]],\"f\":2}\n");
}

/*
 * A session's span: its two keys, in that order, and wall-clock times:
 * what other processes' reports are compared with.
 */
KV_TEST(json_span)
{
	struct kv_span span = { .start_ns = 1, .end_ns = UINT64_MAX };
	uint64_t before, now, after;
	struct kv_mem m;
	struct kv_json j;

	kv_mem_open(&m, &j);
	kv_json_begin_object(&j);
	kv_json_key(&j, "elapsed_ns");
	kv_json_u64(&j, 0);
	kv_json_span(&j, &span);
	kv_json_end_object(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "{\"elapsed_ns\":0,\"start_ns\":1,"
		       "\"end_ns\":18446744073709551615}\n");

	/*
	 * time() reads the coarse clock, up to a tick behind the one
	 * kv_realtime_ns() reads: a second of slack on the far side.
	 */
	before = (uint64_t)time(NULL) * 1000000000u;
	now = kv_realtime_ns();
	after = ((uint64_t)time(NULL) + 2) * 1000000000u;
	KV_EXPECT_GE(now, before);
	KV_EXPECT_TRUE(now < after);
}

KV_TEST(json_empty_documents)
{
	struct kv_mem m;
	struct kv_json j;

	/* "kverbs devices --json" with no devices. */
	kv_mem_open(&m, &j);
	kv_json_begin_object(&j);
	kv_json_key(&j, "devices");
	kv_json_begin_array(&j);
	kv_json_end_array(&j);
	kv_json_end_object(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "{\"devices\":[]}\n");

	kv_mem_open(&m, &j);
	kv_json_begin_array(&j);
	kv_json_end_array(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "[]\n");
}

KV_TEST(json_array_of_objects)
{
	struct kv_mem m;
	struct kv_json j;
	int i;

	kv_mem_open(&m, &j);
	kv_json_begin_array(&j);
	for (i = 1; i <= 3; i++) {
		kv_json_begin_object(&j);
		kv_json_key(&j, "port");
		kv_json_u64(&j, i);
		kv_json_key(&j, "state");
		kv_json_string(&j, "ACTIVE");
		kv_json_end_object(&j);
	}
	kv_json_end_array(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "[{\"port\":1,\"state\":\"ACTIVE\"},"
		       "{\"port\":2,\"state\":\"ACTIVE\"},"
		       "{\"port\":3,\"state\":\"ACTIVE\"}]\n");
}

KV_TEST(json_string_escapes)
{
	struct kv_mem m;
	struct kv_json j;

	kv_mem_open(&m, &j);
	kv_json_begin_array(&j);
	kv_json_string(&j, "say \"hi\"");
	kv_json_string(&j, "C:\\dir\\");
	kv_json_string(&j, "a\nb\tc\rd");
	kv_json_string(&j, "\x01\x1f\x7f");
	kv_json_string(&j, "/ stays");
	kv_json_end_array(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "[\"say \\\"hi\\\"\",\"C:\\\\dir\\\\\","
		       "\"a\\nb\\tc\\rd\",\"\\u0001\\u001f\\u007f\","
		       "\"/ stays\"]\n");
}

KV_TEST(json_string_high_bytes)
{
	struct kv_mem m;
	struct kv_json j;

	/*
	 * Valid UTF-8 goes out as it is; any other byte of 0x80 and above
	 * as \u00XX, so the document stays valid even for data that is not
	 * UTF-8 (ping payloads of a misbehaving peer, say).  Overlong forms
	 * and surrogates are not valid UTF-8.
	 */
	kv_mem_open(&m, &j);
	kv_json_string(&j, "\x80\xff caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
		       "\xc0\xaf \xed\xa0\x80 \xe2\x82");
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "\"\\u0080\\u00ff caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
		       "\\u00c0\\u00af \\u00ed\\u00a0\\u0080 \\u00e2\\u0082\"\n");
}

KV_TEST(json_string_len_and_keys)
{
	struct kv_mem m;
	struct kv_json j;

	/* Lengths, not NULs, end strings from fixed-size kernel fields. */
	kv_mem_open(&m, &j);
	kv_json_begin_object(&j);
	kv_json_key(&j, "k\"\\\n");
	kv_json_string_len(&j, "a\0b", 3);
	kv_json_key(&j, "cut");
	kv_json_string_len(&j, "abcdef", 2);
	kv_json_end_object(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "{\"k\\\"\\\\\\n\":\"a\\u0000b\",\"cut\":\"ab\"}\n");
}

KV_TEST(json_doubles)
{
	struct kv_mem m;
	struct kv_json j;

	/* JSON has no NaN or infinity: they become null, not "nan". */
	kv_mem_open(&m, &j);
	kv_json_begin_array(&j);
	kv_json_double(&j, NAN);
	kv_json_double(&j, INFINITY);
	kv_json_double(&j, -INFINITY);
	kv_json_double(&j, 1.5);
	kv_json_double(&j, -2);
	kv_json_double(&j, 0);
	kv_json_double(&j, 1e300);
	kv_json_double(&j, 0.001);
	kv_json_end_array(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, "[null,null,null,1.5,-2,0,1e+300,0.001]\n");
}

/* ---- kverbs devices: the capabilities, and a module that lacks them ---- */

/*
 * What KVERBS_IOC_DEVICES gives for an rxe device and a siw device, one
 * port each, from a module with KVERBS_FEATURE_DEVICE_CAPS.
 */
static void kv_devices_sample(struct kverbs_device_info devs[2],
			      struct kverbs_port_info ports[2])
{
	memset(devs, 0, 2 * sizeof(*devs));
	memset(ports, 0, 2 * sizeof(*ports));
	snprintf(devs[0].name, sizeof(devs[0].name), "rxe0");
	devs[0].node_guid = 0x5054fffe123456ULL;
	devs[0].node_type = KVERBS_NODE_CA;
	devs[0].transport = KVERBS_TRANSPORT_IB;
	devs[0].first_port = 0;
	devs[0].port_count = 1;
	devs[0].max_qp = 1048576;
	devs[0].max_fast_reg_page_list_len = 512;
	devs[0].atomic_cap = KVERBS_ATOMIC_HCA;
	devs[0].cap_flags = KVERBS_DEVICE_CAP_FAST_REG | KVERBS_DEVICE_CAP_LOCAL_INV |
			    KVERBS_DEVICE_CAP_SEND_INV;
	devs[0].max_srq = 65536;
	devs[0].max_srq_wr = 1048576;
	devs[0].max_srq_sge = 27;
	devs[0].masked_atomic_cap = KVERBS_ATOMIC_NONE;
	ports[0].port_num = 1;
	ports[0].state = KVERBS_PORT_ACTIVE;
	ports[0].phys_state = 5;
	ports[0].link_layer = KVERBS_LINK_LAYER_ETHERNET;
	ports[0].active_mtu = 1024;
	ports[0].max_mtu = 4096;
	ports[0].gid_tbl_len = 1024;
	ports[0].cap_flags = KVERBS_PORT_CAP_UD | KVERBS_PORT_CAP_IMM;

	snprintf(devs[1].name, sizeof(devs[1].name), "siw0");
	devs[1].node_type = KVERBS_NODE_RNIC;
	devs[1].transport = KVERBS_TRANSPORT_IWARP;
	devs[1].first_port = 1;
	devs[1].port_count = 1;
	devs[1].cap_flags = KVERBS_DEVICE_CAP_FAST_REG | KVERBS_DEVICE_CAP_LOCAL_INV |
			    KVERBS_DEVICE_CAP_SEND_INV;
	devs[1].max_srq = 1024;
	devs[1].max_srq_wr = 4096;
	devs[1].max_srq_sge = 6;
	ports[1] = ports[0];
	ports[1].cap_flags = KVERBS_PORT_CAP_READ_INV;
}

/*
 * The same from a module without KVERBS_FEATURE_DEVICE_CAPS: it knows
 * only the first version of the entries and zeroes the rest of the
 * caller's (kverbs_copy_array(), checked by selftests/uapi.c's
 * devices_larger_entries).
 */
static void kv_devices_sample_old(struct kverbs_device_info devs[2],
				  struct kverbs_port_info ports[2])
{
	int i;

	kv_devices_sample(devs, ports);
	for (i = 0; i < 2; i++) {
		memset((char *)&devs[i] + KVERBS_DEVICE_INFO_SIZE_VER0, 0,
		       sizeof(devs[i]) - KVERBS_DEVICE_INFO_SIZE_VER0);
		memset((char *)&ports[i] + KVERBS_PORT_INFO_SIZE_VER0, 0,
		       sizeof(ports[i]) - KVERBS_PORT_INFO_SIZE_VER0);
	}
}

/* kverbs devices' output for @devs and @ports; free() it. */
static char *kv_devices_output(struct kverbs_device_info *devs,
			       struct kverbs_port_info *ports, bool json,
			       bool caps)
{
	struct kv_devices d = { devs, ports, 2, 2 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		KV_FAIL_AT(1, "open_memstream: %s", strerror(errno));
	if (json)
		kv_devices_print_json(f, &d, caps);
	else
		kv_devices_print_text(f, &d, caps);
	fclose(f);
	return text;
}

KV_TEST(devices_text_caps)
{
	struct kverbs_device_info devs[2];
	struct kverbs_port_info ports[2];
	char *out;

	kv_devices_sample(devs, ports);
	out = kv_devices_output(devs, ports, false, true);
	KV_EXPECT_CONTAINS(out, "atomics HCA\n"
			   "    SRQ yes (max_srq 65536, max_srq_wr 1048576, max_srq_sge 27), masked atomics none\n"
			   "    local invalidate yes, SEND with invalidate yes, inline data not known without a QP\n"
			   "    port 1: ACTIVE (LINK_UP), link layer Ethernet, MTU 1024 (max 4096), 1024 GIDs\n"
			   "        UD yes, immediate data yes, rdma_rw READ with invalidate no\n"
			   "siw0: RNIC, iWARP transport");
	KV_EXPECT_CONTAINS(out, "        UD no, immediate data no, rdma_rw READ with invalidate yes\n");
	free(out);
	/* No SRQ is "no", not a row of zero limits. */
	devs[0].max_srq = 0;
	devs[0].max_srq_wr = 0;
	devs[0].max_srq_sge = 0;
	out = kv_devices_output(devs, ports, false, true);
	KV_EXPECT_CONTAINS(out, "    SRQ no, masked atomics none\n");
	free(out);
}

/* A newer tool on an older module: unknown, not "no". */
KV_TEST(devices_text_caps_unknown)
{
	struct kverbs_device_info devs[2];
	struct kverbs_port_info ports[2];
	char *out;

	kv_devices_sample_old(devs, ports);
	out = kv_devices_output(devs, ports, false, false);
	KV_EXPECT_CONTAINS(out, "atomics HCA\n"
			   "    SRQ, UD, immediate data, invalidation: unknown, the kverbs module loaded is older than this tool\n"
			   "    port 1: ACTIVE (LINK_UP), link layer Ethernet, MTU 1024 (max 4096), 1024 GIDs\n"
			   "siw0: ");
	if (strstr(out, " no,") || strstr(out, " no\n") || strstr(out, "inline"))
		KV_FAIL_AT(0, "a capability the module does not report is shown: %s", out);
	free(out);
}

KV_TEST(devices_json_caps)
{
	struct kverbs_device_info devs[2];
	struct kverbs_port_info ports[2];
	char *out;

	kv_devices_sample(devs, ports);
	out = kv_devices_output(devs, ports, true, true);
	KV_EXPECT_CONTAINS(out, "\"atomic_cap\":\"HCA\",\"masked_atomic_cap\":\"none\","
			   "\"srq\":true,\"max_srq\":65536,\"max_srq_wr\":1048576,\"max_srq_sge\":27,"
			   "\"local_inv\":true,\"send_with_inv\":true,\"max_inline_data\":null,"
			   "\"ports\":[{\"port\":1,");
	KV_EXPECT_CONTAINS(out, "\"gid_tbl_len\":1024,\"ud\":true,\"immediate\":true,"
			   "\"read_with_inv\":false}]},{\"name\":\"siw0\"");
	KV_EXPECT_CONTAINS(out, "\"ud\":false,\"immediate\":false,\"read_with_inv\":true}]}]}\n");
	free(out);
}

KV_TEST(devices_json_caps_unknown)
{
	struct kverbs_device_info devs[2];
	struct kverbs_port_info ports[2];
	char *out;

	kv_devices_sample_old(devs, ports);
	out = kv_devices_output(devs, ports, true, false);
	KV_EXPECT_CONTAINS(out, "\"atomic_cap\":\"HCA\",\"masked_atomic_cap\":null,"
			   "\"srq\":null,\"max_srq\":null,\"max_srq_wr\":null,\"max_srq_sge\":null,"
			   "\"local_inv\":null,\"send_with_inv\":null,\"max_inline_data\":null,");
	KV_EXPECT_CONTAINS(out, "\"gid_tbl_len\":1024,\"ud\":null,\"immediate\":null,"
			   "\"read_with_inv\":null}]}");
	/* What the older module does report is still there. */
	KV_EXPECT_CONTAINS(out, "\"max_qp\":1048576,");
	KV_EXPECT_CONTAINS(out, "\"fast_reg\":true,");
	free(out);
}

/* ---- the ping's remote invalidation counts ---- */

/* The counts of @cmd, @known or not, as text and as JSON. */
static void kv_expect_ping_inv(const struct kverbs_ping *cmd, bool known,
			       const char *want_text, const char *want_json)
{
	struct kv_mem m;
	struct kv_json j;
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		KV_FAIL_AT(1, "open_memstream: %s", strerror(errno));
	kv_ping_print_inv(f, cmd, known);
	fclose(f);
	KV_EXPECT_STREQ(text, want_text);
	free(text);
	kv_mem_open(&m, &j);
	kv_json_begin_object(&j);
	kv_ping_json_inv(&j, cmd, known);
	kv_json_end_object(&j);
	kv_json_end(&j);
	KV_EXPECT_JSON(&m, want_json);
}

KV_TEST(ping_inv_counts)
{
	struct kverbs_ping cmd = { .size = sizeof(cmd), .inv_remote = 20, .inv_sent = 0 };

	kv_expect_ping_inv(&cmd, true,
			   "; remote invalidation: 20 of our keys by the peer, 0 SENDs with invalidate",
			   "{\"inv_remote\":20,\"inv_sent\":0}\n");
}

/* A newer tool on an older module: unknown, not 0. */
KV_TEST(ping_inv_counts_unknown)
{
	struct kverbs_ping cmd = { .size = sizeof(cmd) };

	kv_expect_ping_inv(&cmd, false,
			   "; remote invalidation: unknown, the kverbs module loaded is older than this tool",
			   "{\"inv_remote\":null,\"inv_sent\":null}\n");
}

/*
 * KV_MAIN()'s loop calls setjmp() once per test, and its counters only
 * change after the test returned, so they are not really clobbered; but
 * with -O2 -Wextra GCC cannot tell and -Werror makes that fatal.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wclobbered"
#endif
KV_MAIN()
