#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interoperability with rdma-core's rping, the peer nobody here wrote:
# each end of kverbs against the other end of rping, with -V on both, and
# the -v output compared line for line with rping talking to itself.
. "$(dirname "$0")/lib.sh"

port=17300

need_rping() {
	command -v rping >/dev/null || skip "rping (rdmacm-utils) is not installed"
	[ -e /dev/infiniband/rdma_cm ] || skip "no /dev/infiniband/rdma_cm (rdma_ucm not loaded)"
}

# kernel server, rping client
kserver_rping_client() {
	local size=$1 count=$2
	need_rping
	port=$((port + 1))
	kv_server srv "$port" -V -v || return 1
	timeout $((60 * KV_TIME_SCALE)) rping -c -a "$KV_ADDR" -p "$port" -C "$count" -S "$size" -V -v \
		> "$KV_TMP/rping.out" 2> "$KV_TMP/rping.err" ||
		fail "rping -c exited $?: $(cat "$KV_TMP/rping.err")" || return
	kv_wait srv 30 || fail "kverbs server: $(cat "$KV_TMP/srv.err")" || return
	# rping offers no remote invalidation: its keys are never invalidated.
	json_check "$KV_TMP/srv.json" 'd["status"] == "ok"' "d['iterations'] == $count" \
		"d['bytes_read'] == $count * $size" 'd["clients"] == 1' \
		'd["inv_sent"] == 0' 'd["inv_remote"] == 0' || return
	# rping validated our echo byte for byte; our data must be what it sent.
	[ "$(grep -c '^ping data: ' "$KV_TMP/rping.out")" = "$count" ] ||
		fail "rping printed $(grep -c '^ping data: ' "$KV_TMP/rping.out") of $count pings"
}

# rping server, kernel client
rping_server_kclient() {
	local size=$1 count=$2
	need_rping
	port=$((port + 1))
	rping -s -a "$KV_ADDR" -p "$port" -S "$size" -V -v > "$KV_TMP/rs.out" 2> "$KV_TMP/rs.err" &
	kv_pid_rs=$!
	wait_for 10 kv_listening "$KV_ADDR" "$port" rping ||
		fail "rping -s is not listening: $(cat "$KV_TMP/rs.err")" || return
	kv_client cli "$port" -C "$count" -S "$size" -V ||
		fail "kverbs client exited $?: $(cat "$KV_TMP/cli.err")" || return
	# rping agrees to no remote invalidation: the client revokes its keys.
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' "d['iterations'] == $count" \
		'd["inv_remote"] == 0' 'd["inv_sent"] == 0' || return
	kv_wait rs 30 || fail "rping -s: $(cat "$KV_TMP/rs.err")" || return
	# rping's server prints what it read from us.
	[ "$(grep -c '^server ping data: rdma-ping-' "$KV_TMP/rs.out")" = "$count" ] ||
		fail "rping -s printed $(grep -c '^server ping data: ' "$KV_TMP/rs.out") of $count pings"
}

test_kserver_rping_client_64()		{ kserver_rping_client 64 10; }
test_kserver_rping_client_26()		{ kserver_rping_client 26 100; }
test_kserver_rping_client_65535()	{ kserver_rping_client 65535 10; }
test_rping_server_kclient_64()		{ rping_server_kclient 64 10; }
test_rping_server_kclient_26()		{ rping_server_kclient 26 100; }
test_rping_server_kclient_65535()	{ rping_server_kclient 65535 10; }

# data_lines PREFIX FILE: how many lines of FILE are PREFIX and some data.
data_lines() {
	local line n=0
	while IFS= read -r line; do
		[[ $line == "$1"?* ]] && n=$((n + 1))
	done < "$2"
	echo $n
}

# Byte compatibility, seen from rping: the lines rping -c -v prints are the
# same whether the server is rping or kverbs, and so are the lines of the
# server side, whether it serves rping or kverbs.
test_verbose_lines_match_rping() {
	need_rping
	port=$((port + 1))
	rping -s -a "$KV_ADDR" -p "$port" -S 100 -v > "$KV_TMP/ref-s.out" 2>/dev/null &
	kv_pid_rs=$!
	wait_for 10 kv_listening "$KV_ADDR" "$port" rping || fail "rping -s not listening" || return
	timeout $((60 * KV_TIME_SCALE)) rping -c -a "$KV_ADDR" -p "$port" -C 5 -S 100 -v > "$KV_TMP/ref-c.out" 2>/dev/null ||
		fail "rping to rping failed" || return
	kv_wait rs 30 >/dev/null

	port=$((port + 1))
	"$KVERBS" ping -s -a "$KV_ADDR" -p "$port" -v > "$KV_TMP/kv-s.out" 2>/dev/null &
	# shellcheck disable=SC2034 # kv_pid_ks: read by the eval of kv_wait ks
	kv_pid_ks=$!
	wait_for 10 kv_listening "$KV_ADDR" "$port" || fail "kverbs -s not listening" || return
	timeout $((60 * KV_TIME_SCALE)) rping -c -a "$KV_ADDR" -p "$port" -C 5 -S 100 -v > "$KV_TMP/rk-c.out" 2>/dev/null ||
		fail "rping to kverbs failed" || return
	kv_wait ks 30 >/dev/null || return 1

	# Two empty outputs compare equal: first, each side printed a line
	# with data for each of the 5 pings.
	local f prefix
	for f in ref-c rk-c ref-s kv-s; do
		prefix="ping data: "
		[ "${f#*-}" = s ] && prefix="server ping data: "
		[ "$(data_lines "$prefix" "$KV_TMP/$f.out")" = 5 ] ||
			fail "$f.out has $(data_lines "$prefix" "$KV_TMP/$f.out") lines '$prefix...', expected 5:" \
				"$(cat "$KV_TMP/$f.out")" || return
	done
	diff -u <(grep '^ping data:' "$KV_TMP/ref-c.out") <(grep '^ping data:' "$KV_TMP/rk-c.out") ||
		fail "rping -c prints different data against kverbs" || return
	diff -u <(grep '^server ping data:' "$KV_TMP/ref-s.out") \
		<(grep '^server ping data:' "$KV_TMP/kv-s.out") ||
		fail "kverbs -s -v prints other lines than rping -s -v"
}

# What the kernel client advertises, as rping -d reports it: every
# advertisement has a key no earlier one had, and no address is a kernel
# address (rxe's DMA addresses are kernel virtual addresses; kverbs
# advertises a random iova instead).
test_advertisements_fresh_keys_no_kernel_addresses() {
	need_rping
	port=$((port + 1))
	rping -s -a "$KV_ADDR" -p "$port" -S 64 -d > "$KV_TMP/rd.out" 2>&1 &
	# shellcheck disable=SC2034 # kv_pid_rs: read by the eval of kv_wait rs
	kv_pid_rs=$!
	wait_for 10 kv_listening "$KV_ADDR" "$port" rping || fail "rping -s not listening" || return
	kv_client cli "$port" -C 20 -S 64 || fail "client: $(cat "$KV_TMP/cli.err")" || return
	kv_wait rs 30 >/dev/null
	kv_python "$KV_TMP/rd.out" <<'PY'
import re, sys
adv = re.findall(r"Received rkey ([0-9a-f]+) addr ([0-9a-f]+) len (\d+)", open(sys.argv[1]).read())
keys = [int(k, 16) for k, a, l in adv]
addrs = [int(a, 16) for k, a, l in adv]
# rping's debug output may lose the last lines as it exits.
assert 38 <= len(adv) <= 40, f"{len(adv)} advertisements seen, expected 40"
assert len(set(keys)) == len(keys), f"an rkey was advertised twice: {keys}"
assert all(int(l) == 64 for k, a, l in adv), "wrong advertised length"
kernel = [hex(a) for a in addrs if a >= 0xffff800000000000]
assert not kernel, f"kernel addresses advertised: {kernel}"
PY
}

# A persistent server serves its clients at once, as rping -P does: a
# client that runs until interrupted does not keep rping's and kverbs'
# clients waiting.  They complete while it runs (it is alive after them,
# and its session is still connected), and all three are in the
# server's report.  A server that took one client after another would
# have left the two others to their connect timeouts.
test_persistent_server_serves_at_once() {
	local lpid rc
	need_rping
	port=$((port + 1))
	kv_server srv "$port" -P -V || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -C 0 -V --json \
		> "$KV_TMP/long.json" 2> "$KV_TMP/long.err" &
	lpid=$!
	# Its connection is up: the server's end and the client's.
	kv_overlap 2 "$lpid" "$port" || return
	timeout $((60 * KV_TIME_SCALE)) rping -c -a "$KV_ADDR" -p "$port" -C 10 -S 64 -V \
		> "$KV_TMP/rping.out" 2> "$KV_TMP/rping.err" ||
		fail "rping -c exited $? while a kverbs client ran: $(cat "$KV_TMP/rping.err")" || return
	kv_client cli "$port" -C 10 -V ||
		fail "kverbs client exited $? while another ran: $(cat "$KV_TMP/cli.err")" || return
	kv_alive "$lpid" || fail "the long client ended: $(cat "$KV_TMP/long.json")" || return
	[ "$(kv_connected "$port")" -ge 2 ] || fail "the long client's session is not connected" ||
		return
	kill -INT "$lpid"
	wait_for 30 kv_ended "$lpid" || fail "long client alive 30 s after SIGINT" || return
	wait "$lpid"
	rc=$?
	[ $rc = 0 ] || fail "long client exited $rc: $(cat "$KV_TMP/long.err")" || return
	# shellcheck disable=SC2154 # kv_pid_srv: set by the eval of what started it
	kill -INT "$kv_pid_srv"
	kv_wait srv 30
	rc=$?
	[ $rc = 0 ] || fail "server exited $rc: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["iterations"] == 10' -- \
		"$KV_TMP/long.json" 'd["iterations"] > 0' -- \
		"$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["clients"] == 3' \
		'd["clients_failed"] == 0' 'd["iterations"] >= 20'
}

ktap_main test_kserver_rping_client_64 test_kserver_rping_client_26 \
	test_kserver_rping_client_65535 test_rping_server_kclient_64 \
	test_rping_server_kclient_26 test_rping_server_kclient_65535 \
	test_verbose_lines_match_rping \
	test_advertisements_fresh_keys_no_kernel_addresses \
	test_persistent_server_serves_at_once
