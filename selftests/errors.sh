#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Failures end promptly with a clear message, signals end a ping at once,
# and a persistent server outlives the clients that die on it.
. "$(dirname "$0")/lib.sh"

port=17100

next_port() { port=$((port + 1)); }

# "$@" must finish within $1 seconds; its exit code goes to $rc.
timed() {
	local limit=$(($1 * KV_TIME_SCALE)) start end
	shift
	start=$(date +%s%N)
	timeout -k 2 "$((limit + 5))" "$@"
	rc=$?
	end=$(date +%s%N)
	elapsed_ms=$(((end - start) / 1000000))
	[ "$elapsed_ms" -le $((limit * 1000)) ] ||
		{ echo "took ${elapsed_ms} ms, more than ${limit} s"; return 1; }
}

test_no_listener() {
	next_port
	timed 10 "$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -C 1 2> "$KV_TMP/e" || return
	[ $rc = 1 ] || fail "exit $rc, expected 1" || return
	grep -qx "kverbs ping: no listener at $KV_ADDR:$port (connection rejected)" "$KV_TMP/e" ||
		fail "message: $(cat "$KV_TMP/e")"
}

test_unresolvable_address() {
	# On the test subnet, but nobody answers ARP for it.
	timed 10 "$KVERBS" ping -c -a 10.209.0.99 -C 1 --timeout 2 2> "$KV_TMP/e" || return
	[ $rc = 1 ] || fail "exit $rc, expected 1" || return
	grep -q "^kverbs ping: cannot resolve 10.209.0.99:7174" "$KV_TMP/e" ||
		fail "message: $(cat "$KV_TMP/e")"
}

test_port_in_use() {
	next_port
	kv_server a "$port" || return 1
	timed 10 "$KVERBS" ping -s -a "$KV_ADDR" -p "$port" 2> "$KV_TMP/e" || return
	[ $rc = 1 ] || fail "exit $rc, expected 1" || return
	grep -qx "kverbs ping: cannot listen on $KV_ADDR:$port: already in use" "$KV_TMP/e" ||
		fail "message: $(cat "$KV_TMP/e")" || return
	# shellcheck disable=SC2154 # kv_pid_a: set by the eval of what started it
	kill -INT "$kv_pid_a"
	kv_wait a 5 >/dev/null
	[ $? = 130 ] || fail "interrupted idle server should exit 130"
}

test_size_above_module_limit() {
	local max
	max=$(cat /sys/module/kverbs/parameters/max_msg_size)
	timed 5 "$KVERBS" ping -c -a "$KV_ADDR" -S $((max + 1)) 2> "$KV_TMP/e" || return
	[ $rc = 2 ] || fail "exit $rc, expected 2" || return
	grep -q "max_msg_size" "$KV_TMP/e" || fail "message: $(cat "$KV_TMP/e")"
}

test_server_sigint_while_waiting() {
	next_port
	kv_server idle "$port" || return 1
	# shellcheck disable=SC2154 # kv_pid_idle: set by the eval of what started it
	kill -INT "$kv_pid_idle"
	kv_wait idle 3
	[ $? = 130 ] || fail "exit code, expected 130: $(cat "$KV_TMP/idle.err")" || return
	wait_for 3 eval "! kv_listening $KV_ADDR $port" || fail "listener still there"
}

# A client interrupted before its count is done says so and exits 130.
test_client_sigint_mid_count() {
	local rc
	next_port
	kv_server srv "$port" -V || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -C 1000000 -V --json > "$KV_TMP/c.json" 2>&1 &
	local pid=$!
	kv_trace_wait 30 1 kverbs_ping_iter 'server == 0' ||
		fail "the client did no iteration: $(cat "$KV_TMP/c.json")" || return
	kill -INT $pid
	wait_for 3 kv_ended $pid || fail "client alive 3 s after SIGINT" || return
	wait $pid
	rc=$?
	[ $rc = 130 ] || fail "client exit $rc, expected 130" || return
	json_check "$KV_TMP/c.json" 'd["status"] == "interrupted"' 'd["iterations"] > 0' || return
	kv_wait srv 10 >/dev/null
	[ $? -le 1 ] || fail "server did not end after the client left"
}

# kill_client_under_persistent_server SIGNAL: a -P server serves the next
# client after one is killed mid-ping.
kill_client_under_persistent_server() {
	local sig=$1 pid
	next_port
	kv_server srv "$port" -P -V || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -V > /dev/null 2>&1 &
	pid=$!
	kv_trace_wait 30 1 kverbs_ping_iter 'server == 0' ||
		fail "the client did no iteration" || return
	kill -"$sig" $pid
	wait_for 3 kv_ended $pid || fail "client alive 3 s after SIG$sig" || return
	wait $pid 2>/dev/null
	wait_for 10 kv_no_connections ||
		fail "connections left after the client died: $(rdma res show cm_id)" || return
	kv_client next "$port" -C 10 -V ||
		fail "next client failed: $(cat "$KV_TMP/next.err")" || return
	json_check "$KV_TMP/next.json" 'd["status"] == "ok"' 'd["iterations"] == 10' || return
	# shellcheck disable=SC2154 # kv_pid_srv: set by the eval of what started it
	kill -INT "$kv_pid_srv"
	kv_wait srv 5 >/dev/null
	json_check "$KV_TMP/srv.json" 'd["clients"] == 2' 'd["iterations"] >= 10'
}

test_sigint_client_persistent_server_survives() { kill_client_under_persistent_server INT; }
test_sigkill_client_persistent_server_survives() { kill_client_under_persistent_server KILL; }

# The server dies mid-ping: the client learns it from the network, by
# the disconnect the dying server's module sends or by a work request
# that fails, not by running into its own step limit (10 s), which
# would end it with ETIMEDOUT.  No clock decides it: the limit on the
# wait, past that step limit, only guards against a hang.
test_server_killed_client_reports() {
	local rc
	next_port
	kv_server srv "$port" || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" --json > "$KV_TMP/c.json" 2> "$KV_TMP/c.err" &
	local pid=$!
	kv_trace_wait 30 1 kverbs_ping_iter 'server == 0' ||
		fail "the client did no iteration: $(cat "$KV_TMP/c.err")" || return
	kill -KILL "$kv_pid_srv"
	wait_for 30 kv_ended $pid ||
		fail "client alive 30 s after the server died: $(cat "$KV_TMP/c.err"; kv_stack $pid)" ||
		return
	wait $pid
	rc=$?
	[ $rc = 1 ] || fail "client exit code $rc, expected 1: $(cat "$KV_TMP/c.err")" || return
	json_check "$KV_TMP/c.json" 'd["status"] == "failed"' \
		'd["error"]["name"] in ("ECONNRESET", "EIO")' 'd["iterations"] > 0'
}

# A busy server does not accept: the next client's connect times out.
test_connect_timeout_while_server_busy() {
	next_port
	kv_server srv "$port" || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" > /dev/null 2>&1 &
	local busy=$!
	wait_for 30 eval '[ "$(kv_connected "$port")" -ge 2 ]' ||
		fail "the first client never connected" || return
	timed 6 "$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -C 1 --timeout 2 --json \
		> "$KV_TMP/t.json" 2>&1 || return
	[ $rc = 1 ] || fail "exit $rc, expected 1" || return
	json_check "$KV_TMP/t.json" 'd["error"]["name"] == "ETIMEDOUT"' \
		'd["error"]["step"] == "connect"' || return
	kill -INT $busy
	wait $busy
	kv_wait srv 10 >/dev/null
	wait_for 10 kv_no_connections || fail "connections left: $(rdma res show cm_id)"
}

ktap_main test_no_listener test_unresolvable_address test_port_in_use \
	test_size_above_module_limit test_server_sigint_while_waiting \
	test_client_sigint_mid_count test_sigint_client_persistent_server_survives \
	test_sigkill_client_persistent_server_survives \
	test_server_killed_client_reports test_connect_timeout_while_server_busy
