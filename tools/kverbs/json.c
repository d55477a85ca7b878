// SPDX-License-Identifier: GPL-2.0
/*
 * A small JSON writer.  It tracks nesting and commas itself and escapes
 * every string, so the output parses whatever the data holds.
 */
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kverbs.h"

void kv_json_init(struct kv_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

/* Separate this value from the previous one at the same level. */
static void kv_json_value(struct kv_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
}

static void kv_json_open(struct kv_json *j, char c)
{
	kv_json_value(j);
	fputc(c, j->f);
	if (j->depth + 1 < (int)(sizeof(j->need_comma) / sizeof(j->need_comma[0])))
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void kv_json_close(struct kv_json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

void kv_json_begin_object(struct kv_json *j) { kv_json_open(j, '{'); }
void kv_json_end_object(struct kv_json *j) { kv_json_close(j, '}'); }
void kv_json_begin_array(struct kv_json *j) { kv_json_open(j, '['); }
void kv_json_end_array(struct kv_json *j) { kv_json_close(j, ']'); }

/*
 * Length of the valid UTF-8 sequence at @s (at most @len bytes), 0 if it
 * is not one: overlong forms, surrogates and values past U+10FFFF are not.
 */
static size_t kv_utf8_len(const unsigned char *s, size_t len)
{
	size_t n, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > len)
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void kv_json_escaped(struct kv_json *j, const char *s, size_t len)
{
	size_t i, n;

	fputc('"', j->f);
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c >= 0x80) {
			n = kv_utf8_len((const unsigned char *)s + i, len - i);
			if (n) {
				fwrite(s + i, 1, n, j->f);
				i += n - 1;
				continue;
			}
		}

		switch (c) {
		case '"':
			fputs("\\\"", j->f);
			break;
		case '\\':
			fputs("\\\\", j->f);
			break;
		case '\n':
			fputs("\\n", j->f);
			break;
		case '\t':
			fputs("\\t", j->f);
			break;
		case '\r':
			fputs("\\r", j->f);
			break;
		default:
			/* Control characters, and bytes that are not UTF-8. */
			if (c < 0x20 || c >= 0x7f)
				fprintf(j->f, "\\u%04x", c);
			else
				fputc(c, j->f);
		}
	}
	fputc('"', j->f);
}

void kv_json_key(struct kv_json *j, const char *key)
{
	kv_json_value(j);
	kv_json_escaped(j, key, strlen(key));
	fputc(':', j->f);
	j->after_key = true;
}

void kv_json_string_len(struct kv_json *j, const char *s, size_t len)
{
	kv_json_value(j);
	kv_json_escaped(j, s, len);
}

void kv_json_string(struct kv_json *j, const char *s)
{
	kv_json_string_len(j, s, strlen(s));
}

void kv_json_u64(struct kv_json *j, uint64_t v)
{
	kv_json_value(j);
	fprintf(j->f, "%" PRIu64, v);
}

void kv_json_i64(struct kv_json *j, int64_t v)
{
	kv_json_value(j);
	fprintf(j->f, "%" PRId64, v);
}

void kv_json_double(struct kv_json *j, double v)
{
	kv_json_value(j);
	/* JSON has no NaN or infinity. */
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void kv_json_bool(struct kv_json *j, bool v)
{
	kv_json_value(j);
	fputs(v ? "true" : "false", j->f);
}

void kv_json_null(struct kv_json *j)
{
	kv_json_value(j);
	fputs("null", j->f);
}

uint64_t kv_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* CPU time of this thread, or with @process of the whole process, in ns. */
static bool kv_cpu_own(bool process, uint64_t *ns)
{
	struct rusage ru;

	if (getrusage(process ? RUSAGE_SELF : RUSAGE_THREAD, &ru))
		return false;
	*ns = ((uint64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
	      ((uint64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
	return true;
}

/* Time every CPU of the host spent not idle, from /proc/stat, in ns. */
static bool kv_cpu_busy(uint64_t *ns)
{
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return false;
	/* user nice system idle iowait irq softirq steal */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8 || hz <= 0)
		return false;
	*ns = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * (1000000000ull / hz);
	return true;
}

/**
 * kv_cpu_begin - start counting what a test's calls cost
 * @c: the count
 * @process: count every thread of the process (-q, -b), not the caller's
 */
void kv_cpu_begin(struct kv_cpu *c, bool process)
{
	c->known = kv_cpu_own(process, &c->thread_ns) && kv_cpu_busy(&c->busy_ns);
}

/**
 * kv_cpu_end - what they cost since kv_cpu_begin()
 * @c: the count, turned into the differences
 * @process: as given to kv_cpu_begin()
 */
void kv_cpu_end(struct kv_cpu *c, bool process)
{
	uint64_t own, busy;

	c->known = c->known && kv_cpu_own(process, &own) && kv_cpu_busy(&busy) &&
		   own >= c->thread_ns && busy >= c->busy_ns;
	c->thread_ns = c->known ? own - c->thread_ns : 0;
	c->busy_ns = c->known ? busy - c->busy_ns : 0;
}

/*
 * A session's &struct kv_span, as "start_ns" and "end_ns", and
 * "test_start_ns" and "test_end_ns" when the measured phase is known.
 */
void kv_json_span(struct kv_json *j, const struct kv_span *span)
{
	kv_json_key(j, "start_ns");
	kv_json_u64(j, span->start_ns);
	kv_json_key(j, "end_ns");
	kv_json_u64(j, span->end_ns);
	if (!span->test_end_ns)
		return;
	kv_json_key(j, "test_start_ns");
	kv_json_u64(j, span->test_start_ns);
	kv_json_key(j, "test_end_ns");
	kv_json_u64(j, span->test_end_ns);
}

/* Finish the document: a newline, and flushed. */
void kv_json_end(struct kv_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}
