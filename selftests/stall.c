// SPDX-License-Identifier: GPL-2.0
/*
 * stall: a kverbs test whose output lands on memory nobody serves.
 *
 *   stall ping|read_lat ADDR PORT
 *
 * Runs a validated ping client (its payload log) or a read_lat client
 * (its latency samples) against ADDR:PORT, with that output in a page
 * registered with userfaultfd: the first touch of it waits until this
 * program serves the page, which it does only when told.  (Or fails at
 * once: a kernel whose long-term pin of user pages cannot wait for a
 * userfaultfd, as Debian's 6.1, refuses the page with EFAULT.)  It
 * prints "started" once the test is running in its thread, "returned
 * ret=R errno=E" when its call returns, and reads commands on stdin:
 *
 *   serve   fill the page with zeros, which lets the test go on
 *
 * and, at "serve" or end of input, waits for the test and prints one
 * line: "result ret=R errno=E error=N step=S iterations=I".
 *
 * removal.sh uses it to show that an RDMA device's removal does not wait
 * on such memory: kverbs pins it before it holds a device.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uapi/kverbs.h>

struct stall {
	int fd;
	int ping;
	union {
		struct kverbs_ping p;
		struct kverbs_perf f;
	};
	long ret;
	int err;
};

static void *stall_run(void *arg)
{
	struct stall *st = arg;

	st->ret = ioctl(st->fd, st->ping ? KVERBS_IOC_PING : KVERBS_IOC_PERF,
			st->ping ? (void *)&st->p : (void *)&st->f);
	st->err = st->ret ? errno : 0;
	printf("returned ret=%ld errno=%d\n", st->ret, st->err);
	fflush(stdout);
	return NULL;
}

static int stall_addr(struct __kernel_sockaddr_storage *ss, const char *addr,
		      const char *port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(atoi(port));
	return inet_pton(AF_INET, addr, &sin->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {};
	struct uffdio_zeropage zero = {};
	static struct stall st;
	pthread_t thread;
	char line[64];
	__u64 *seq;
	char *mem;
	int uffd;

	if (argc != 4 || (strcmp(argv[1], "ping") && strcmp(argv[1], "read_lat"))) {
		fprintf(stderr, "usage: stall ping|read_lat ADDR PORT\n");
		return 2;
	}
	st.ping = !strcmp(argv[1], "ping");
	st.fd = open("/dev/kverbs", O_RDWR | O_CLOEXEC);
	if (st.fd < 0) {
		perror("/dev/kverbs");
		return 1;
	}
	/* Page 0 is the stalling one; page 1 holds the log's counter. */
	mem = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	seq = (__u64 *)(mem + page);
	*seq = 0;
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 && errno == ENOSYS) {
		/* A kernel without CONFIG_USERFAULTFD: the test cannot be. */
		printf("no userfaultfd\n");
		return 4;
	}
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		return 1;
	}
	reg.range.start = (unsigned long)mem;
	reg.range.len = page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		return 1;
	}

	if (st.ping) {
		st.p.size = sizeof(st.p);
		st.p.role = KVERBS_ROLE_CLIENT;
		st.p.flags = KVERBS_PING_F_VALIDATE;
		st.p.msg_size = 64;
		st.p.count = 100;
		st.p.log.buf = (unsigned long)mem;
		st.p.log.seq = (unsigned long)seq;
		st.p.log.slots = page / 64;
		st.p.log.slot_size = 64;
		if (stall_addr(&st.p.addr, argv[2], argv[3]))
			return 2;
	} else {
		st.f.size = sizeof(st.f);
		st.f.role = KVERBS_ROLE_CLIENT;
		st.f.test = KVERBS_PERF_READ_LAT;
		st.f.msg_size = 64;
		st.f.iterations = 100;
		st.f.samples = (unsigned long)mem;
		st.f.samples_max = page / sizeof(__u64);
		if (stall_addr(&st.f.addr, argv[2], argv[3]))
			return 2;
	}
	if (pthread_create(&thread, NULL, stall_run, &st)) {
		perror("pthread_create");
		return 1;
	}
	printf("started\n");
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin))
		if (!strncmp(line, "serve", 5))
			break;
	zero.range.start = (unsigned long)mem;
	zero.range.len = page;
	/* EEXIST: the page was never touched, nothing waits on it. */
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zero) && errno != EEXIST) {
		perror("UFFDIO_ZEROPAGE");
		return 1;
	}
	pthread_join(thread, NULL);
	if (st.ping)
		printf("result ret=%ld errno=%d error=%d step=%u iterations=%llu\n",
		       st.ret, st.err, st.p.result.error, st.p.result.failed_step,
		       (unsigned long long)st.p.result.iterations);
	else
		printf("result ret=%ld errno=%d error=%d step=%u iterations=%llu\n",
		       st.ret, st.err, st.f.result.error, st.f.result.failed_step,
		       (unsigned long long)st.f.result.iterations);
	return 0;
}
