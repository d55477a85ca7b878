#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Pings at once on different ports share nothing but the device: each
# runs, validated, while the others do.
. "$(dirname "$0")/lib.sh"

# Four validated pings of four sizes, each on its own port, run at once.
# Once the kernel shows all eight ends connected, they run as long again
# as they took to get there, and a few seconds more for their teardown:
# long against each one's setup and teardown, so that each client's
# report alone bounds when its test ran.  Then each is interrupted, each
# pair agrees on what it did, validated throughout, and the four tests
# share an instant while every server's call is in progress
# (kv_at_once): pings run one after another never do.
test_four_pings_at_once() {
	local i sizes=(64 4096 65536 1M) pids=() start
	for i in 0 1 2 3; do
		kv_server "s$i" $((17500 + i)) -V || return 1
	done
	start=$SECONDS
	for i in 0 1 2 3; do
		"$KVERBS" ping -c -a "$KV_ADDR" -p $((17500 + i)) -C 1000000 -S "${sizes[$i]}" -V \
			--json > "$KV_TMP/c$i.json" 2> "$KV_TMP/c$i.err" &
		pids+=($!)
	done
	kv_overlap 8 "${pids[*]}" 17500 17501 17502 17503 || return
	kv_sleep $((SECONDS - start + 3 * KV_TIME_SCALE))
	kill -INT "${pids[@]}"
	for i in 0 1 2 3; do
		kv_interrupted_pair "c$i" "${pids[$i]}" "s$i" || return
	done
	kv_at_once "$KV_TMP"/c[0-3].json -- "$KV_TMP"/s[0-3].json
}

# kverbs devices answers while pings run: no global lock is held by them.
# No clock decides it: the pings are open-ended, each has printed its
# first ping data before devices runs, and each is still running when
# devices has answered; the limit on devices only guards against a hang.
test_devices_during_pings() {
	local i pids=() rc
	for i in 0 1; do
		kv_server "s$i" $((17510 + i)) || return 1
		"$KVERBS" ping -c -a "$KV_ADDR" -p $((17510 + i)) -C 1000000 -v \
			> "$KV_TMP/c$i.out" 2> "$KV_TMP/c$i.err" &
		pids+=($!)
	done
	for i in 0 1; do
		wait_for 30 grep -q "^ping data:" "$KV_TMP/c$i.out" ||
			fail "client $i did not start pinging: $(cat "$KV_TMP/c$i.err")" || return
	done
	for i in 1 2 3 4 5; do
		timeout $((60 * KV_TIME_SCALE)) "$KVERBS" devices > /dev/null 2> "$KV_TMP/d.err"
		rc=$?
		[ $rc = 0 ] || fail "devices exited $rc during pings: $(cat "$KV_TMP/d.err")" || return
		kv_alive "${pids[0]}" "${pids[1]}" ||
			fail "a ping ended while devices ran: $(cat "$KV_TMP/c0.err" "$KV_TMP/c1.err")" || return
	done
	kill -INT "${pids[@]}"
	for i in 0 1; do
		wait "${pids[$i]}"
		rc=$?
		[ $rc = 130 ] || fail "client $i exited $rc after SIGINT, expected 130: $(cat "$KV_TMP/c$i.err")" || return
		kv_wait "s$i" 30 > /dev/null
		[ $? -le 1 ] || fail "server $i did not end after its client left" || return
	done
}

ktap_main test_four_pings_at_once test_devices_during_pings
