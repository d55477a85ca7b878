#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perm: who may use /dev/kverbs.  The module creates it root-only (0600);
# with the shipped udev rule, udevd makes it root:rdma 0660.  An ordinary
# user is refused either way, with the tool's clear message and exit 3;
# a member of rdma is allowed once the rule applies.
. "$(dirname "$0")/lib.sh"

rule=$KV_TOP/udev/60-kverbs.rules
# The tool where an unprivileged user can run it.
bin=$KV_TMP/bin
mkdir -p "$bin"
cp "$KVERBS" "$bin/kverbs"
chmod 755 "$KV_TMP" "$bin" "$bin/kverbs"
# Tests run in subshells: the daemon's pid goes in a file.
udevd_pidfile=/run/kverbs-test-udevd.pid

# as USER GROUPS CMD...: run CMD as USER (uid), with only GROUPS (may be
# empty) as supplementary groups.
as() {
	local user=$1 groups=$2
	shift 2
	local g=(--clear-groups)
	[ -n "$groups" ] && g=(--groups="$groups")
	setpriv --reuid="$user" --regid="$(id -g "$user")" "${g[@]}" \
		--inh-caps=-all -- "$@"
}

test_created_root_only() {
	local mode
	mode=$(stat -c '%a %U:%G' /dev/kverbs) || return 1
	[ "$mode" = "600 root:root" ] || fail "/dev/kverbs is $mode, expected 600 root:root"
}

# An ordinary user: exit 3, and the message says why.
refused() {
	local rc=0
	as nobody "$@" "$bin/kverbs" devices > "$KV_TMP/out" 2> "$KV_TMP/err" || rc=$?
	if [ "$rc" != 3 ] || ! grep -q 'cannot open /dev/kverbs: permission denied' "$KV_TMP/err"; then
		cat "$KV_TMP/err"
		fail "as nobody: exit $rc, expected 3 with 'permission denied'"
	fi
}

test_user_refused() {
	refused ""
}

test_udev_rule_gives_rdma_group() {
	local mode
	getent group rdma > /dev/null || skip "no rdma group on this system (rdma-core creates it)"
	udevd=$(command -v systemd-udevd || echo /lib/systemd/systemd-udevd)
	[ -x "$udevd" ] && command -v udevadm > /dev/null || skip "no udevd (the udev package)"
	mkdir -p /run/udev/rules.d
	cp "$rule" /run/udev/rules.d/
	"$udevd" > /dev/null 2>&1 &
	echo $! > "$udevd_pidfile"
	wait_for 10 udevadm control --ping || fail "udevd did not start" || return 1
	udevadm trigger --action=add --sysname-match=kverbs --subsystem-match=misc
	udevadm settle --timeout=10
	wait_for 5 eval '[ "$(stat -c "%a %G" /dev/kverbs)" = "660 rdma" ]' ||
		fail "after udev: /dev/kverbs is $(stat -c '%a %U:%G' /dev/kverbs)" || return 1
}

test_user_still_refused() {
	[ "$(stat -c %G /dev/kverbs)" = rdma ] || skip "the udev rule did not apply"
	refused ""
}

test_rdma_group_allowed() {
	[ "$(stat -c %G /dev/kverbs)" = rdma ] || skip "the udev rule did not apply"
	if ! as nobody rdma "$bin/kverbs" devices > "$KV_TMP/out" 2> "$KV_TMP/err"; then
		cat "$KV_TMP/err"
		fail "a member of rdma cannot use /dev/kverbs"
		return 1
	fi
	grep -q "$KV_DEV" "$KV_TMP/out" || fail "devices as a member of rdma does not list $KV_DEV"
}

cleanup() {
	if [ -f "$udevd_pidfile" ]; then
		kill "$(cat "$udevd_pidfile")" 2>/dev/null
		rm -f "$udevd_pidfile"
	fi
	rm -f /run/udev/rules.d/60-kverbs.rules
	# Leave the node as the module made it.
	chown root:root /dev/kverbs
	chmod 600 /dev/kverbs
}
trap cleanup EXIT

ktap_main test_created_root_only test_user_refused \
	test_udev_rule_gives_rdma_group test_user_still_refused \
	test_rdma_group_allowed
