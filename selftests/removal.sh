#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Removing the RDMA device under running pings: both ends return promptly
# with a clear error, the removal itself completes, and the device can be
# added back and used at once.
. "$(dirname "$0")/lib.sh"

test_link_del_during_ping() {
	local start end pid
	kv_server srv 17601 -P || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p 17601 --json > "$KV_TMP/c.json" 2>"$KV_TMP/c.err" &
	pid=$!
	sleep 2
	start=$(date +%s%N)
	timeout $((20 * KV_TIME_SCALE)) rdma link del "$KV_DEV" || fail "rdma link del failed or hung" || return
	end=$(date +%s%N)
	[ $(((end - start) / 1000000)) -le $((10000 * KV_TIME_SCALE)) ] ||
		fail "removal took $(((end - start) / 1000000)) ms" || return
	wait_for 5 eval "! kill -0 $pid 2>/dev/null" || fail "client alive after removal" || return
	wait $pid
	[ $? = 1 ] || fail "client exit code, expected 1" || return
	json_check "$KV_TMP/c.json" 'd["error"]["name"] == "ENODEV"' \
		'd["error"]["message"] == "the RDMA device was removed"' || return
	kv_wait srv 5
	[ $? = 1 ] || fail "server exit code, expected 1: $(cat "$KV_TMP/srv.err")" || return
	json_check "$KV_TMP/srv.json" 'd["error"]["name"] == "ENODEV"'
}

test_device_usable_after_readd() {
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	kv_ping_pair 17602 -C 10
}

ktap_main test_link_del_during_ping test_device_usable_after_readd
