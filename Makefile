# SPDX-License-Identifier: GPL-2.0
#
# kverbs: build the module and the tool, test them in QEMU guests.
# The module's objects are listed in kernel/Kbuild.

KVER ?= $(shell uname -r)
# The running kernel's build tree, else the newest one installed.
KDIR ?= $(or $(wildcard /lib/modules/$(KVER)/build),$(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1))
# Debian's header trees report the upstream version as kernelrelease; the
# /lib/modules/RELEASE/build path names the installed kernel.
KRELEASE ?= $(or $(patsubst /lib/modules/%/build,%,$(filter /lib/modules/%/build,$(KDIR))),$(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null))
PREFIX ?= /usr/local
UDEVDIR ?= /etc/udev/rules.d
# Kernels 'make check' and 'make demo' test in guests.
KERNELS ?= 6.1 6.12
SRC ?= $(CURDIR)

all: modules tool

# Build against KDIR in this tree: kernel/kverbs.ko.
modules:
	@test -n "$(KDIR)" || { echo "no kernel build tree: install linux-headers-amd64 or pass KDIR=" >&2; exit 1; }
	@$(MAKE) -s SRC=$(CURDIR) modules-in

# (internal) build in $(SRC), which scripts/build-module fills for other kernels
modules-in:
	@if [ "$$(cat $(SRC)/kernel/.compat-kdir 2>/dev/null)" != "$(KDIR)" ] || \
	    [ ! -f $(SRC)/kernel/compat-autoconf.h ]; then \
		$(SRC)/scripts/compat-probe $(KDIR) $(SRC)/kernel/compat-autoconf.h && \
		echo "$(KDIR)" > $(SRC)/kernel/.compat-kdir; \
	fi
	$(MAKE) -C $(KDIR) M=$(SRC) modules

tool:
	$(MAKE) -C tools/kverbs

selftests:
	$(MAKE) -C selftests

check: deps
	HOSTS_PAIRS="$(HOSTS_PAIRS)" scripts/check $(KERNELS)

# The two-host lane alone: each pair A:B[:MTU[:SUITE,...]] boots two guests on a
# wire (tools/vm/pair); 'make check' runs it too.
HOSTS_PAIRS ?= 6.1:6.12:9000 6.12:6.1:1500:hosts
check-hosts: deps
	scripts/check-hosts $(HOSTS_PAIRS)

demo: deps
	scripts/demo

# kverbs against perftest in a guest; not a test, nothing is asserted.
# KERNEL=, BENCH_OUT=, BENCH_ROUNDS=, BENCH_ROWS=: see scripts/bench.
bench: deps
	scripts/bench

# The debug lane: a sanitizer kernel (built once, cached), rxe and siw.
# DEBUG_SUITES="uapi ping ..." runs only those suites.
check-debug:
	scripts/deps debug
	KVERBS_DEBUG_SUITES="$(DEBUG_SUITES)" scripts/check-debug

deps:
	scripts/deps check

# DESTDIR=/some/root stages the files there (for packaging, and for the
# test in scripts/check) and leaves the running system alone.
# Distribution kernels do not ship their signing key, so modules_install
# is not asked to sign; where Secure Boot wants signed modules, sign
# kverbs.ko with the kernel's scripts/sign-file and your own key.
install: modules tool
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra \
		KERNELRELEASE=$(KRELEASE) CONFIG_MODULE_SIG_ALL= \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR) DEPMOD=true) \
		modules_install
	$(if $(DESTDIR),,depmod -a $(KRELEASE))
	install -D -m 0644 udev/60-kverbs.rules $(DESTDIR)$(UDEVDIR)/60-kverbs.rules
	install -D -m 0755 tools/kverbs/kverbs $(DESTDIR)$(PREFIX)/bin/kverbs
	$(if $(DESTDIR),,-udevadm control --reload 2>/dev/null)

uninstall:
	rm -f $(DESTDIR)$(UDEVDIR)/60-kverbs.rules $(DESTDIR)$(PREFIX)/bin/kverbs
	rm -f $(DESTDIR)/lib/modules/*/extra/kernel/kverbs.ko*
	-rmdir $(DESTDIR)/lib/modules/*/extra/kernel 2>/dev/null
	$(if $(DESTDIR),,-depmod -a $(KRELEASE))
	$(if $(DESTDIR),,-udevadm control --reload 2>/dev/null)

clean:
	-test -z "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f kernel/compat-autoconf.h kernel/.compat-kdir
	$(MAKE) -C tools/kverbs clean
	-$(MAKE) -C selftests clean

distclean: clean
	rm -rf build

.PHONY: all modules modules-in tool selftests check check-hosts check-debug demo bench deps install uninstall clean distclean
