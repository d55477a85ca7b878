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
MANDIR ?= $(PREFIX)/share/man
# Kernels 'make check' tests in guests: "newest" is the newest kernel
# Debian has (scripts/newest-kernel fetches it).
KERNELS ?= 6.1 6.12 newest
SRC ?= $(CURDIR)
# DKMS: the version dkms.conf declares, and where the sources go for it.
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR)/dkms.conf 2>/dev/null)
DKMS_SRC ?= /usr/src/kverbs-$(DKMS_VERSION)
# The dkms command: scripts/check adds --dkmstree and friends to keep the
# host's dkms tree out of its test.
DKMS ?= dkms
# What dkms needs to build the module: sources, not what a build left.
DKMS_FILES = dkms.conf Makefile Kbuild kernel/Kbuild include/uapi/kverbs.h \
	scripts/compat-probe $(wildcard kernel/probes/*.c) \
	$(filter-out %.mod.c,$(wildcard kernel/*.c kernel/*/*.c)) \
	$(filter-out kernel/compat-autoconf.h,$(wildcard kernel/*.h kernel/*/*.h))

all: modules tool

# Build against KDIR in this tree: kernel/kverbs.ko.
modules:
	@test -n "$(KDIR)" || { echo "no kernel build tree: install linux-headers-amd64 or pass KDIR=" >&2; exit 1; }
	@$(MAKE) -s SRC=$(CURDIR) modules-in

# (internal) build in $(SRC), which scripts/build-module fills for other kernels
modules-in:
	@if [ "$$(cat $(SRC)/kernel/.compat-kdir 2>/dev/null)" != "$(KDIR)" ] || \
	    [ ! -f $(SRC)/kernel/compat-autoconf.h ] || \
	    [ -n "$$(find $(SRC)/kernel/probes $(SRC)/scripts/compat-probe \
		     -newer $(SRC)/kernel/compat-autoconf.h)" ]; then \
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
check-hosts:
	scripts/deps check
	scripts/check-hosts $(HOSTS_PAIRS)

# TRACE=1: and the trace of its ping (Documentation/tracing.rst).
demo:
	TRACE=$(TRACE) scripts/demo

# kverbs against perftest in a guest, then across two guests' wire; not a
# test, nothing is asserted.
# KERNEL=, BENCH_OUT=, BENCH_ROUNDS=, BENCH_ROWS=: see scripts/bench.
bench:
	scripts/bench

# The debug lane: a sanitizer kernel (built once, cached), rxe and siw.
# DEBUG_SUITES="uapi ping ..." runs only those suites; DEBUG_TIER=ci, what
# CI runs, leaves to rxe's guest the suites that take no path of siw's.
# DEBUG_KERNEL=newest builds the sanitizer kernel from the newest source
# Debian has instead of 6.12 (scripts/debug-kernel).
check-debug:
	scripts/deps debug
	KVERBS_DEBUG_SUITES="$(DEBUG_SUITES)" KVERBS_DEBUG_TIER="$(DEBUG_TIER)" \
		KVERBS_DEBUG_KERNEL="$(DEBUG_KERNEL)" scripts/check-debug

deps:
	scripts/deps check

# DESTDIR=/some/root stages the files there (for packaging, and for the
# test in scripts/check) and leaves the running system alone.
# Distribution kernels do not ship their signing key, so modules_install
# is not asked to sign; where Secure Boot wants signed modules, sign
# kverbs.ko with the kernel's scripts/sign-file and your own key.
install: modules install-tool
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra \
		KERNELRELEASE=$(KRELEASE) CONFIG_MODULE_SIG_ALL= \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR) DEPMOD=true) \
		modules_install
	$(if $(DESTDIR),,depmod -a $(KRELEASE))

# The tool, its man page and the udev rule, without the module: for a
# module that DKMS builds (make dkms-install).
install-tool: tool
	install -D -m 0644 udev/60-kverbs.rules $(DESTDIR)$(UDEVDIR)/60-kverbs.rules
	install -D -m 0755 tools/kverbs/kverbs $(DESTDIR)$(PREFIX)/bin/kverbs
	install -D -m 0644 Documentation/kverbs.8 $(DESTDIR)$(MANDIR)/man8/kverbs.8
	$(if $(DESTDIR),,-udevadm control --reload 2>/dev/null)

uninstall:
	rm -f $(DESTDIR)$(UDEVDIR)/60-kverbs.rules $(DESTDIR)$(PREFIX)/bin/kverbs \
		$(DESTDIR)$(MANDIR)/man8/kverbs.8
	rm -f $(DESTDIR)/lib/modules/*/extra/kernel/kverbs.ko*
	-rmdir $(DESTDIR)/lib/modules/*/extra/kernel 2>/dev/null
	$(if $(DESTDIR),,-depmod -a $(KRELEASE))
	$(if $(DESTDIR),,-udevadm control --reload 2>/dev/null)

# DKMS: the module's sources to $(DKMS_SRC) (DESTDIR honoured), where
# dkms add finds them; then dkms builds and installs the module for every
# kernel installed with its headers, and AUTOINSTALL in dkms.conf rebuilds
# it for each kernel installed later.  dkms-remove takes all that away.
dkms-source:
	@test -n "$(DKMS_VERSION)" || { echo "no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	rm -rf $(DESTDIR)$(DKMS_SRC)
	for f in $(DKMS_FILES); do install -D -m 0644 $$f $(DESTDIR)$(DKMS_SRC)/$$f || exit; done
	chmod 0755 $(DESTDIR)$(DKMS_SRC)/scripts/compat-probe

dkms-install: dkms-source
	$(DKMS) add -m kverbs -v $(DKMS_VERSION)
	for k in $$(ls /lib/modules); do \
		[ -d /lib/modules/$$k/kernel ] && [ -e /lib/modules/$$k/build ] || continue; \
		$(DKMS) install -m kverbs -v $(DKMS_VERSION) -k $$k || exit; \
	done

dkms-remove:
	-$(DKMS) remove -m kverbs -v $(DKMS_VERSION) --all
	rm -rf $(DESTDIR)$(DKMS_SRC)

# What a module build leaves, and nothing else (dkms.conf's CLEAN).
modules-clean:
	-test -z "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f kernel/compat-autoconf.h kernel/.compat-kdir

clean: modules-clean
	$(MAKE) -C tools/kverbs clean
	-$(MAKE) -C selftests clean

distclean: clean
	rm -rf build

.PHONY: all modules modules-in modules-clean tool selftests check check-hosts check-debug demo \
	bench deps install install-tool uninstall dkms-source dkms-install dkms-remove clean \
	distclean
