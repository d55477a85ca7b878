#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Network namespaces: kverbs' rdma_cm IDs live in the caller's, as
# rdma-core's do through ucma.  A process in another namespace (a
# container given /dev/kverbs) can neither reach the host's addresses
# nor listen on them, and sees only the devices its namespace may use.
# rxe works in the initial namespace only, so the other one here has no
# RDMA device at all: each test also runs the same thing from the
# initial namespace, which must work, so that none passes because the
# command was wrong.
. "$(dirname "$0")/lib.sh"

need_unshare() {
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare -n true 2>/dev/null || skip "cannot create a network namespace here"
}

# A client in a new namespace cannot reach a server on an address of the
# initial one; the same client from the initial namespace can.
test_client_in_netns_cannot_reach_host() {
	local rc
	need_unshare
	kv_server srv 17901 -V || return 1
	timeout -k 5 $((60 * KV_TIME_SCALE)) unshare -n "$KVERBS" ping -c -a "$KV_ADDR" -p 17901 \
		-C 1 -V --json > "$KV_TMP/ns.json" 2> "$KV_TMP/ns.err"
	rc=$?
	[ $rc = 1 ] || fail "client in a new netns exited $rc, expected 1: $(cat "$KV_TMP/ns.err")" ||
		return
	# Its namespace has no route there, and no RDMA device at all.
	json_check "$KV_TMP/ns.json" 'd["status"] == "failed"' \
		'd["error"]["name"] in ("ENETUNREACH", "EHOSTUNREACH", "EADDRNOTAVAIL", "ENODEV")' \
		'd["error"]["step"] in ("resolve_addr", "resolve_route")' \
		'd["iterations"] == 0' || return
	# The server saw no client, and still serves one from here.
	# shellcheck disable=SC2154 # kv_pid_srv: set by the eval of what started it
	kv_alive "$kv_pid_srv" || fail "the server ended: $(cat "$KV_TMP/srv.err")" || return
	kv_client cli 17901 -C 3 -V || fail "client in the initial netns: $(cat "$KV_TMP/cli.err")" ||
		return
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err")" || return
	json_check "$KV_TMP/srv.json" 'd["clients"] == 1' 'd["iterations"] == 3'
}

# A server in a new namespace cannot listen on an address of the initial
# one, ping or perf; the initial namespace can.
# server_in_netns NAME COMMAND...: COMMAND must fail with EADDRNOTAVAIL.
server_in_netns() {
	local name=$1 rc
	shift
	timeout -k 5 $((30 * KV_TIME_SCALE)) unshare -n "$@" \
		> "$KV_TMP/$name.json" 2> "$KV_TMP/$name.err"
	rc=$?
	[ $rc = 1 ] || fail "$name in a new netns exited $rc, expected 1: $(cat "$KV_TMP/$name.err")" ||
		return
	grep -q 'EADDRNOTAVAIL\|not an address of this host' "$KV_TMP/$name.json" "$KV_TMP/$name.err" ||
		fail "$name: not refused for its address: $(cat "$KV_TMP/$name.json" "$KV_TMP/$name.err")"
}

test_server_in_netns_cannot_bind_host_address() {
	need_unshare
	server_in_netns ping "$KVERBS" ping -s -a "$KV_ADDR" -p 17902 --json || return
	server_in_netns serve "$KVERBS" serve -p 17903 --json "$KV_ADDR" || return
	# The control: the same from the initial namespace listens.
	kv_server srv 17902 || return 1
	kill -INT "$kv_pid_srv"
	kv_wait srv 10 >/dev/null
	return 0
}

# With ib_core keeping devices to their namespace (`rdma system set netns
# exclusive`), DEVICES from a new namespace lists none, and the initial
# namespace still sees its device.  The mode can only change while no
# other namespace exists: the ones the tests before made may take a
# moment to go.
test_devices_in_netns_exclusive() {
	local mode rc
	need_unshare
	mode=$(rdma system show 2>/dev/null | grep -o 'netns [a-z]*' | cut -d' ' -f2)
	[ -n "$mode" ] || skip "rdma system show does not tell the netns mode"
	wait_for 20 rdma system set netns exclusive 2>/dev/null ||
		fail "cannot set the RDMA netns mode to exclusive" || return
	unshare -n "$KVERBS" devices --json > "$KV_TMP/d.json" 2> "$KV_TMP/d.err"
	rc=$?
	"$KVERBS" devices --json > "$KV_TMP/d0.json" 2> "$KV_TMP/d0.err"
	# Back as it was, whatever happened.
	wait_for 20 rdma system set netns "$mode" 2>/dev/null ||
		fail "cannot set the RDMA netns mode back to $mode" || return
	[ $rc = 0 ] || fail "devices in a new netns exited $rc: $(cat "$KV_TMP/d.err")" || return
	json_check "$KV_TMP/d.json" 'len(d["devices"]) == 0' -- \
		"$KV_TMP/d0.json" "'$KV_DEV' in [x['name'] for x in d['devices']]"
}

ktap_main test_client_in_netns_cannot_reach_host \
	test_server_in_netns_cannot_bind_host_address \
	test_devices_in_netns_exclusive
