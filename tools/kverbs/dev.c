// SPDX-License-Identifier: GPL-2.0
/*
 * Opening /dev/kverbs, checking that the module speaks our ABI, and
 * letting a signal end a test's ioctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kverbs.h"

int kv_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * Returns an open descriptor to a module that has all of @features
 * (&enum kverbs_feature), or -1 after saying why it cannot be had; @what
 * names what needs the features.  Features are added within an ABI
 * version, so a module of the same ABI may still lack a newer test.
 */
int kv_open_for(uint64_t features, const char *what)
{
	struct kverbs_info info = { .size = sizeof(info) };
	int fd, ret;

	fd = open(KV_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (err == ENOENT || err == ENXIO || err == ENODEV)
			fprintf(stderr, "%s: cannot open %s: is the kverbs module loaded? (modprobe kverbs, or insmod kernel/kverbs.ko)\n",
				kv_prog, KV_DEVICE_PATH);
		else if (err == EACCES || err == EPERM)
			fprintf(stderr, "%s: cannot open %s: permission denied (root, or a member of the rdma group with the shipped udev rule)\n",
				kv_prog, KV_DEVICE_PATH);
		else
			fprintf(stderr, "%s: cannot open %s: %s\n", kv_prog,
				KV_DEVICE_PATH, strerror(err));
		return -1;
	}
	ret = kv_ioctl(fd, KVERBS_IOC_INFO, &info);
	if (ret) {
		fprintf(stderr, "%s: %s does not answer KVERBS_IOC_INFO: %s\n",
			kv_prog, KV_DEVICE_PATH, strerror(-ret));
		close(fd);
		return -1;
	}
	if (info.abi_version != KVERBS_ABI_VERSION) {
		fprintf(stderr, "%s: the kverbs module speaks ABI %u, this tool ABI %u: use the tool built with the module\n",
			kv_prog, info.abi_version, KVERBS_ABI_VERSION);
		close(fd);
		return -1;
	}
	if ((info.features & features) != features) {
		fprintf(stderr, "%s: the kverbs module loaded (%.*s) cannot run %s, which is newer: load the module built with this tool\n",
			kv_prog, (int)sizeof(info.version), info.version, what);
		close(fd);
		return -1;
	}
	return fd;
}

/* What the module on @fd can do (&enum kverbs_feature), 0 if it does not say. */
uint64_t kv_features(int fd)
{
	struct kverbs_info info = { .size = sizeof(info) };

	return kv_ioctl(fd, KVERBS_IOC_INFO, &info) ? 0 : info.features;
}

/* As kv_open_for(), for what every kverbs module can do. */
int kv_open(void)
{
	return kv_open_for(0, NULL);
}

/* The handler has nothing to do: the ioctl it interrupts reports EINTR. */
static void kv_on_signal(int sig)
{
	(void)sig;
}

/*
 * SIGINT and SIGTERM end a running test: the kernel sees the signal
 * pending, stops the test and returns -EINTR with the numbers so far,
 * which the tool still prints.  Without SA_RESTART, so that the ioctl
 * is not restarted.
 */
void kv_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = kv_on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}
