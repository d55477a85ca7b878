#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Pings at once on different ports share nothing but the device: each
# completes, validated, whatever the others do.
. "$(dirname "$0")/lib.sh"

test_four_pings_at_once() {
	# 200 iterations each, fewer where the long pings are shortened.
	local i port sizes=(64 4096 65536 1M) pids=() count=$((${KV_BIG_COUNT:-1000} / 5))
	for i in 0 1 2 3; do
		kv_server "s$i" $((17500 + i)) -V || return 1
	done
	for i in 0 1 2 3; do
		kv_client "c$i" $((17500 + i)) -C "$count" -S "${sizes[$i]}" -V &
		pids+=($!)
	done
	for i in 0 1 2 3; do
		wait "${pids[$i]}" || fail "client $i exited $?: $(cat "$KV_TMP/c$i.err")" || return
		kv_wait "s$i" 30 || fail "server $i: $(cat "$KV_TMP/s$i.err" "$KV_TMP/s$i.json")" || return
		json_check "$KV_TMP/c$i.json" 'd["status"] == "ok"' "d['iterations'] == $count" || return
		json_check "$KV_TMP/s$i.json" 'd["status"] == "ok"' "d['iterations'] == $count" || return
	done
}

# kverbs devices answers while pings run: no global lock is held by them.
test_devices_during_pings() {
	local i pids=()
	for i in 0 1; do
		kv_server "s$i" $((17510 + i)) || return 1
		kv_client "c$i" $((17510 + i)) -C 300 &
		pids+=($!)
	done
	for i in 1 2 3 4 5; do
		timeout 5 "$KVERBS" devices > /dev/null || fail "devices stalled or failed during pings" || return
	done
	for i in 0 1; do
		wait "${pids[$i]}" || fail "client $i: $(cat "$KV_TMP/c$i.err")" || return
		kv_wait "s$i" 30 || return 1
	done
}

ktap_main test_four_pings_at_once test_devices_during_pings
