// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing of numbers, sizes, times and addresses from the command line.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kverbs.h"

/* A decimal number that fits in 32 bits, nothing else. */
int kv_parse_u32(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Bytes, with an optional binary suffix: 4096, 64k, 1M. */
int kv_parse_size(const char *s, uint32_t *out)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mult = 1ULL << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1ULL << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1ULL << 30;
		end++;
		break;
	default:
		return -EINVAL;
	}
	if (mult > 1 && *end == 'i')
		end++;	/* 64Ki, 1Mi */
	if (*end || v > UINT32_MAX / mult)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

/* Seconds, possibly fractional, into nanoseconds. */
int kv_parse_seconds(const char *s, uint64_t *ns)
{
	double v;
	char *end;

	/* Decimal only: strtod() would also take hexadecimal "0x10". */
	if ((!isdigit((unsigned char)*s) && *s != '.') || strpbrk(s, "xX"))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v < 0 || v > 86400.0 * 365)
		return -EINVAL;
	/* Rounded: 1.001 is 1000999999.99... as a double. */
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/**
 * kv_opt_port - the value of -p, 1 to 65535
 * @cmd: the command, for the message
 * @arg: the option's value
 * @port: set to it
 *
 * Returns 0, or -1 after a usage error was printed.
 */
int kv_opt_port(const char *cmd, const char *arg, uint16_t *port)
{
	uint32_t v;

	if (kv_parse_u32(arg, &v) || !v || v > 65535) {
		kv_usage_error(cmd, "invalid port '%s' (1 to 65535)", arg);
		return -1;
	}
	*port = v;
	return 0;
}

/**
 * kv_opt_max_duration - the value of --max-duration: seconds, more than 0,
 * at most a day (KVERBS_PERF_MAX_DURATION_NS)
 * @cmd: the command, for the message
 * @arg: the option's value
 * @ns: set to it, in nanoseconds
 *
 * Returns 0, or -1 after a usage error was printed.
 */
int kv_opt_max_duration(const char *cmd, const char *arg, uint64_t *ns)
{
	if (kv_parse_seconds(arg, ns) || !*ns || *ns > KVERBS_PERF_MAX_DURATION_NS) {
		kv_usage_error(cmd, "invalid maximum duration '%s' (seconds, more than 0, at most 86400)",
			       arg);
		return -1;
	}
	return 0;
}

/**
 * kv_opt_max_iters - the value of --max-iters: 1 to 2^32 - 1, as many as
 * a client's -n can ask for
 * @cmd: the command, for the message
 * @arg: the option's value
 * @n: set to it
 *
 * Returns 0, or -1 after a usage error was printed.
 */
int kv_opt_max_iters(const char *cmd, const char *arg, uint64_t *n)
{
	uint32_t v;

	if (kv_parse_u32(arg, &v) || !v) {
		kv_usage_error(cmd, "invalid maximum iterations '%s' (1 to %u)", arg, UINT32_MAX);
		return -1;
	}
	*n = v;
	return 0;
}

/**
 * kv_opt_timeout - the value of --timeout: seconds, more than 0, at most
 * an hour (the kernel's limit on a step)
 * @cmd: the command, for the message
 * @arg: the option's value
 * @ns: set to it, in nanoseconds
 *
 * Returns 0, or -1 after a usage error was printed.
 */
int kv_opt_timeout(const char *cmd, const char *arg, uint64_t *ns)
{
	if (kv_parse_seconds(arg, ns) || !*ns || *ns > 3600ULL * 1000000000ULL) {
		kv_usage_error(cmd, "invalid timeout '%s' (seconds, more than 0, at most 3600)", arg);
		return -1;
	}
	return 0;
}

/*
 * A host name or numeric IPv4/IPv6 address (with %scope for link-local)
 * and a port, as a zeroed sockaddr_storage.
 */
int kv_parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	int ret;

	ret = getaddrinfo(s, NULL, &hints, &res);
	if (ret)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (res->ai_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		memcpy(sin, res->ai_addr, sizeof(*sin));
		memset(sin->sin_zero, 0, sizeof(sin->sin_zero));
		sin->sin_port = htons(port);
	} else if (res->ai_family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		memcpy(sin6, res->ai_addr, sizeof(*sin6));
		sin6->sin6_port = htons(port);
	} else {
		ret = -EAFNOSUPPORT;
	}
	freeaddrinfo(res);
	return ret;
}

/* "10.0.0.1" or "fe80::1%2", without the port. */
const char *kv_addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[NI_MAXHOST];

	if (getnameinfo((const struct sockaddr *)ss,
			ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						    sizeof(struct sockaddr_in),
			host, sizeof(host), NULL, 0, NI_NUMERICHOST))
		snprintf(host, sizeof(host), "?");
	snprintf(buf, len, "%s", host);
	return buf;
}

/*
 * The option getopt_long() just rejected with '?', for the message.  An
 * unknown letter inside a group such as -xc leaves optind on that group,
 * so argv[optind - 1] is the argument before it: name the letter instead.
 * For long options argv[optind - 1] is right: an unknown one sets optopt
 * to 0, a known one given a value it does not take (--help=1) to its own
 * value, which @optstring lists or which is not a character at all.
 */
const char *kv_bad_option(char **argv, const char *optstring, char *buf,
			  size_t len)
{
	if (optopt > 0 && optopt <= UCHAR_MAX &&
	    (optopt == ':' || !strchr(optstring, optopt))) {
		snprintf(buf, len, "-%c", optopt);
		return buf;
	}
	return argv[optind - 1];
}

void kv_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", kv_prog, cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s %s --help'.\n", kv_prog, cmd);
}

/**
 * kv_opt_srq - the value of --srq-wr or --srq-limit: 1 to
 *	KVERBS_PERF_SRQ_MAX_WR
 * @cmd: the command, for the message
 * @name: the option, for the message
 * @arg: the option's value
 * @n: set to it
 *
 * Returns 0, or -1 after a usage error was printed.
 */
int kv_opt_srq(const char *cmd, const char *name, const char *arg, uint32_t *n)
{
	if (kv_parse_u32(arg, n) || !*n || *n > KVERBS_PERF_SRQ_MAX_WR) {
		kv_usage_error(cmd, "invalid %s '%s' (1 to %u)", name, arg,
			       KVERBS_PERF_SRQ_MAX_WR);
		return -1;
	}
	return 0;
}
