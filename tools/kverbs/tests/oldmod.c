// SPDX-License-Identifier: GPL-2.0
/*
 * tests/oldmod.so: an older kverbs module, as the tool sees one, for
 * cli.sh on a host without the module.  Preloaded (LD_PRELOAD), it makes
 * open("/dev/kverbs") give a descriptor of /dev/null, on which
 * KVERBS_IOC_INFO reports this tree's ABI and only the features in
 * KV_OLDMOD_FEATURES (a number, 0x for hex); any other ioctl on it fails
 * with ENOTTY, as a module that does not know the command.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include <linux/types.h>
#include "uapi/kverbs.h"

static int kv_fd = -1;

int open(const char *path, int flags, ...)
{
	int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
	mode_t mode = 0;
	va_list ap;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (flags & O_CREAT) {
		va_start(ap, flags);
		mode = va_arg(ap, int);
		va_end(ap);
	}
	if (!strcmp(path, "/dev/kverbs")) {
		kv_fd = real("/dev/null", O_RDWR | (flags & O_CLOEXEC));
		return kv_fd;
	}
	return real(path, flags, mode);
}

/* On a 64-bit libc, open64() is open(). */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int ioctl(int fd, unsigned long request, ...)
{
	int (*real)(int, unsigned long, ...) = dlsym(RTLD_NEXT, "ioctl");
	struct kverbs_info info = {};
	const char *features;
	void *arg;
	va_list ap;
	__u32 size;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd < 0 || fd != kv_fd)
		return real ? real(fd, request, arg) : -1;
	if (request != KVERBS_IOC_INFO) {
		errno = ENOTTY;
		return -1;
	}
	memcpy(&size, arg, sizeof(size));
	if (size < sizeof(info)) {
		errno = EINVAL;
		return -1;
	}
	features = getenv("KV_OLDMOD_FEATURES");
	info.size = sizeof(info);
	info.abi_version = KVERBS_ABI_VERSION;
	info.features = features ? strtoull(features, NULL, 0) : 0;
	strcpy(info.version, "oldmod");
	memcpy(arg, &info, sizeof(info));
	return 0;
}
