#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ping over Unreliable Datagrams (kverbs ping --ud): kverbs to kverbs
# validated at a few sizes up to the path MTU, a size past it, a lost
# message, a signal; each end against rdma-core's udaddy; and over siw,
# which has no UD, the refusal.
. "$(dirname "$0")/lib.sh"

port=17400
# rdma_cm's Q_Key for its UDP port space (RDMA_UDP_QKEY).
qkey=$((0x01234567))
# udaddy has no port option: it always uses 7174, its port space's.
udaddy_port=7174

need_ud() {
	[ "$KV_TYPE" = siw ] && skip "iWARP (siw) has no UD; ud_refused_over_iwarp checks the refusal"
	return 0
}

need_udaddy() {
	command -v udaddy >/dev/null || skip "udaddy (rdmacm-utils) is not installed"
	[ -e /dev/infiniband/rdma_cm ] || skip "no /dev/infiniband/rdma_cm (rdma_ucm not loaded)"
}

# ud_pair SIZE COUNT [options for both]: a validated kverbs server and
# client on a port of their own; both report every message, the path
# MTU and the peer's QP and Q_Key.
ud_pair() {
	local size=$1 count=$2
	shift 2
	port=$((port + 1))
	kv_server srv "$port" --ud -C "$count" -V "$@" || return
	kv_client cli "$port" --ud -C "$count" -S "$size" -V "$@" ||
		fail "client exited $?: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["transport"] == "ud"' \
		"d['iterations'] == $count" "d['bytes_read'] == $count * $size" \
		"d['path_mtu'] >= $size" 'd["remote_qpn"] > 1' "d['remote_qkey'] == $qkey" \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["transport"] == "ud"' \
		"d['iterations'] == $count" "d['bytes_written'] == $count * $size" \
		'd["clients"] == 1' 'd["clients_failed"] == 0' 'd["remote_qpn"] > 1' \
		"d['remote_qkey'] == $qkey" || return
	kv_python "$KV_TMP/cli.json" "$KV_TMP/srv.json" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
assert c["path_mtu"] == s["path_mtu"], f"path MTU {c['path_mtu']} vs {s['path_mtu']}"
assert c["remote_qpn"] != s["remote_qpn"], "both ends name the same QP as the peer's"
PY
}

# The path MTU of the port, as a UD ping reports it.
path_mtu() {
	kv_python "$KV_TMP/cli.json" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["path_mtu"])
PY
}

test_validated_26()	{ need_ud; ud_pair 26 10; }
test_validated_100()	{ need_ud; ud_pair 100 100; }

# Both QPs are drained at the end, not destroyed with work outstanding:
# a UD send queue flushes only a SEND with an address handle as its
# marker (kverbs_ep_drain_markers()).
test_drained_traced() {
	local tr=/sys/kernel/tracing rc
	need_ud
	trace_need
	trace_start kverbs_drain_end || fail "cannot set up tracing" || return
	ud_pair 64 3
	rc=$?
	trace_stop kverbs_drain_end
	[ $rc = 0 ] || return
	kv_python $tr/trace <<'PY'
import sys
ends = [l.strip() for l in open(sys.argv[1]) if "kverbs_drain_end:" in l]
if len(ends) != 2:
    sys.exit(f"{len(ends)} drains, expected the client's and the server's: {ends}")
bad = [l for l in ends if not l.endswith(" drained")]
if bad:
    sys.exit(f"drains that timed out or failed: {bad}")
PY
}

# The largest message a UD QP carries: one path MTU, GRH not counted.
test_validated_path_mtu() {
	local mtu
	need_ud
	ud_pair 64 1 || return
	mtu=$(path_mtu) || return
	[ "$mtu" -ge 256 ] || fail "path MTU $mtu" || return
	ud_pair "$mtu" 10
}

# One byte past the MTU: the client says so before anything is sent, and
# the server, still waiting, serves the next (fair) client.
test_size_above_mtu_emsgsize() {
	local mtu rc
	need_ud
	ud_pair 64 1 || return
	mtu=$(path_mtu) || return
	port=$((port + 1))
	kv_server srv "$port" --ud -C 5 -V || return
	kv_client big "$port" --ud -C 5 -S $((mtu + 1)) -V
	rc=$?
	[ $rc = 1 ] || fail "client over the MTU exited $rc: $(cat "$KV_TMP/big.err")" || return
	json_check "$KV_TMP/big.json" 'd["error"]["name"] == "EMSGSIZE"' \
		'd["error"]["step"] == "setup"' "d['path_mtu'] == $mtu" \
		'"path MTU" in d["error"]["message"]' 'd["iterations"] == 0' \
		'd["remote_qpn"] == 0' || return
	kv_client cli "$port" --ud -C 5 -S "$mtu" -V ||
		fail "fair client exited $?: $(cat "$KV_TMP/cli.err")" || return
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err")" || return
	json_check "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["iterations"] == 5' \
		'd["clients"] == 1'
}

# A server larger than the MTU is refused when its client comes.
test_server_size_above_mtu_emsgsize() {
	local mtu rc
	need_ud
	ud_pair 64 1 || return
	mtu=$(path_mtu) || return
	port=$((port + 1))
	kv_server srv "$port" --ud -C 5 -S $((mtu + 1)) || return
	kv_client cli "$port" --ud -C 5 -S 64 --timeout 5
	rc=$?
	[ $rc = 1 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err")" || return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "ECONNREFUSED"' || return
	kv_wait srv 30
	json_check "$KV_TMP/srv.json" 'd["error"]["name"] == "EMSGSIZE"' \
		'd["error"]["step"] == "setup"' "d['path_mtu'] == $mtu" \
		'd["clients_failed"] == 1'
}

# Nothing is retransmitted: a server that waits for more messages than
# the client sends ends with ETIMEDOUT after one step's time limit, and
# so does the client, which waits for replies that never come.
test_missing_message_times_out() {
	local t0 t1
	need_ud
	port=$((port + 1))
	kv_server srv "$port" --ud -C 10 -V --timeout 3 || return
	t0=$SECONDS
	kv_client cli "$port" --ud -C 5 -S 64 -V --timeout 3
	[ $? = 1 ] || fail "client: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	kv_wait srv 30
	[ $? = 1 ] || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	t1=$SECONDS
	[ $((t1 - t0)) -le $((20 * KV_TIME_SCALE)) ] || fail "took $((t1 - t0)) s" || return
	json_check "$KV_TMP/srv.json" 'd["error"]["name"] == "ETIMEDOUT"' \
		'd["error"]["step"] == "recv"' 'd["iterations"] == 0' \
		'"did not arrive" in d["error"]["message"]' \
		-- "$KV_TMP/cli.json" 'd["error"]["name"] == "ETIMEDOUT"' \
		'd["error"]["step"] == "recv"' 'd["iterations"] == 0'
}

# A datagram from a QP that is not the peer's (selftests/ud_forge) fails
# the ping on either end (EPROTO), promptly: never taken for the peer's
# message or reply, never answered.  The server waits for three
# messages of a client that sends one: both are waiting when the
# stranger's datagrams come, of SIZE bytes (foreign_refused SIZE).
foreign_refused() {
	local t0 rc
	port=$((port + 1))
	kv_server srv "$port" --ud -C 3 --timeout 600 || return
	kv_client cli "$port" --ud -C 1 -S 64 --timeout 600 &
	kv_pid_cli=$!
	kv_ud_forge -s "$1" || return
	# shellcheck disable=SC2154 # kv_forge_start: set by lib.sh's kv_ud_forge
	t0=$kv_forge_start
	kv_wait cli 30
	rc=$?
	[ $rc = 1 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	kv_wait srv 30
	rc=$?
	[ $rc = 1 ] || fail "server exited $rc: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	[ $((SECONDS - t0)) -le $((20 * KV_TIME_SCALE)) ] ||
		fail "the ends took $((SECONDS - t0)) s" || return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "EPROTO"' \
		'd["error"]["step"] == "recv"' 'd["iterations"] == 0' \
		-- "$KV_TMP/srv.json" 'd["error"]["name"] == "EPROTO"' \
		'd["error"]["step"] == "recv"' 'd["iterations"] == 0'
}

test_foreign_datagram_refused() {
	need_ud
	foreign_refused 64
}

# ... of the path MTU, the largest a datagram can be, larger than the
# ping's: every receive has room for it, and it is refused as a
# stranger's (EPROTO), not taken for a receive the device had to fail
# (EIO).
test_foreign_large_datagram_refused() {
	local mtu
	need_ud
	ud_pair 64 1 || return
	mtu=$(path_mtu) || return
	foreign_refused "$mtu"
}

# A signal ends a server waiting for messages at once, not after the
# step's time limit.
test_sigint_ends_waiting_server() {
	local t0 rc
	need_ud
	port=$((port + 1))
	kv_server srv "$port" --ud -C 10 --timeout 600 || return
	kv_client cli "$port" --ud -C 2 -S 64 --timeout 2
	t0=$SECONDS
	# shellcheck disable=SC2154 # kv_pid_srv: set by the eval of what started it
	kill -INT "$kv_pid_srv"
	kv_wait srv 10
	rc=$?
	[ $rc = 130 ] || fail "server exited $rc after SIGINT: $(cat "$KV_TMP/srv.err")" || return
	[ $((SECONDS - t0)) -le $((5 * KV_TIME_SCALE)) ] ||
		fail "server took $((SECONDS - t0)) s to end" || return
	json_check "$KV_TMP/srv.json" 'd["status"] == "interrupted"' \
		'd["error"]["name"] == "EINTR"' 'd["remote_qpn"] > 1'
}

# The device goes away under both ends, each holding its QP, its
# receives and (the client) the server's address handle: both end at
# once with ENODEV, the removal completes, and the device comes back.
link_del_under_ud() {
	local start end rc
	port=$((port + 1))
	trace_need
	kv_server srv "$port" --ud -C 10 --timeout 600 || return
	# The server takes the client's first message (a receive completes,
	# KVERBS_STEP_RECV): both ends are set up.  Armed before the client
	# starts, which sends its two at once.
	trace_record 'step == 9' kverbs_wc || return
	"$KVERBS" ping -c --ud -a "$KV_ADDR" -p "$port" -C 2 -S 64 --timeout 600 --json \
		> "$KV_TMP/cli.json" 2> "$KV_TMP/cli.err" &
	# shellcheck disable=SC2034 # kv_pid_cli: read by the eval of kv_wait cli
	kv_pid_cli=$!
	wait_for 30 kv_trace_entries 1
	rc=$?
	trace_stop kverbs_wc
	[ $rc = 0 ] || fail "no receive completed: $(cat "$KV_TMP/cli.err" "$KV_TMP/srv.err")" || return
	start=$(date +%s%N)
	timeout $((20 * KV_TIME_SCALE)) rdma link del "$KV_DEV" ||
		fail "rdma link del failed or hung" || return
	end=$(date +%s%N)
	[ $(((end - start) / 1000000)) -le $((10000 * KV_TIME_SCALE)) ] ||
		fail "removal took $(((end - start) / 1000000)) ms" || return
	kv_wait cli 5
	[ $? = 1 ] || fail "client: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	kv_wait srv 5
	[ $? = 1 ] || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "ENODEV"' \
		-- "$KV_TMP/srv.json" 'd["error"]["name"] == "ENODEV"'
}

test_link_del_under_ud() {
	local rc
	need_ud
	link_del_under_ud
	rc=$?
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	[ $rc = 0 ] || return $rc
	# The control: the device serves a datagram ping again.
	ud_pair 64 2
}

# Nothing listens: the service ID resolution is refused.
test_no_listener_refused() {
	need_ud
	port=$((port + 1))
	kv_client cli "$port" --ud -C 1 -S 64 --timeout 5
	[ $? = 1 ] || fail "client: $(cat "$KV_TMP/cli.err")" || return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "ECONNREFUSED"' \
		'"no UD listener" in d["error"]["message"]'
}

# udaddy client, kverbs server: udaddy sends its buffer unset, so only
# counts and sizes are checked; udaddy's own exit says it got all replies.
test_udaddy_client_kserver() {
	need_ud
	need_udaddy
	kv_server srv "$udaddy_port" --ud -C 10 || return
	timeout $((60 * KV_TIME_SCALE)) udaddy -s "$KV_ADDR" -C 10 -S 100 \
		> "$KV_TMP/ud.out" 2>&1 ||
		fail "udaddy exited $?: $(cat "$KV_TMP/ud.out")" || return
	grep -q '^data transfers complete' "$KV_TMP/ud.out" ||
		fail "udaddy: $(cat "$KV_TMP/ud.out")" || return
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err")" || return
	json_check "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["iterations"] == 10' \
		'd["bytes_read"] == 1000' 'd["bytes_written"] == 1000' \
		'd["remote_qpn"] > 1' "d['remote_qkey'] == $qkey"
}

# udaddy server, kverbs client.
test_kclient_udaddy_server() {
	need_ud
	need_udaddy
	udaddy -b "$KV_ADDR" -C 10 -S 100 > "$KV_TMP/us.out" 2>&1 &
	kv_pid_us=$!
	wait_for 10 kv_listening "$KV_ADDR" "$udaddy_port" udaddy ||
		fail "udaddy is not listening: $(cat "$KV_TMP/us.out")" || return
	kv_client cli "$udaddy_port" --ud -C 10 -S 100 ||
		fail "client exited $?: $(cat "$KV_TMP/cli.err")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["iterations"] == 10' \
		'd["bytes_read"] == 1000' 'd["remote_qpn"] > 1' \
		"d['remote_qkey'] == $qkey" || return
	kv_wait us 30 || fail "udaddy: $(cat "$KV_TMP/us.out")" || return
	grep -q '^return status 0' "$KV_TMP/us.out" || fail "udaddy: $(cat "$KV_TMP/us.out")"
}

# -V is for two kverbs ends: udaddy's replies are no pattern, and a
# validating client says so.  (The control is test_kclient_udaddy_server.)
test_validate_against_udaddy_fails() {
	need_ud
	need_udaddy
	udaddy -b "$KV_ADDR" -C 3 -S 100 > "$KV_TMP/us.out" 2>&1 &
	# shellcheck disable=SC2034 # kv_pid_us: read by the eval of kv_wait us
	kv_pid_us=$!
	wait_for 10 kv_listening "$KV_ADDR" "$udaddy_port" udaddy ||
		fail "udaddy is not listening: $(cat "$KV_TMP/us.out")" || return
	kv_client cli "$udaddy_port" --ud -C 3 -S 100 -V
	[ $? = 1 ] || fail "client: $(cat "$KV_TMP/cli.err")" || return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "EBADMSG"' \
		'd["error"]["step"] == "validate"' || return
	kv_wait us 30 >/dev/null
	return 0
}

# iWARP has no UD: both ends refuse with EOPNOTSUPP at setup, before
# anything is sent or listened for, and say why.  On RoCE the same
# calls work (the cases above).
test_ud_refused_over_iwarp() {
	local rc
	[ "$KV_TYPE" = siw ] || skip "UD is refused only over iWARP (KV_TYPE=siw)"
	port=$((port + 1))
	"$KVERBS" ping -s --ud -a "$KV_ADDR" -p "$port" -C 1 --json \
		> "$KV_TMP/srv.json" 2> "$KV_TMP/srv.err"
	rc=$?
	[ $rc = 1 ] || fail "server exited $rc: $(cat "$KV_TMP/srv.err")" || return
	json_check "$KV_TMP/srv.json" 'd["error"]["name"] == "EOPNOTSUPP"' \
		'd["error"]["step"] == "setup"' '"iWARP" in d["error"]["message"]' || return
	kv_client cli "$port" --ud -C 1 -S 64 --timeout 5
	rc=$?
	[ $rc = 1 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err")" || return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "EOPNOTSUPP"' \
		'd["error"]["step"] == "setup"' '"iWARP" in d["error"]["message"]' \
		'd["path_mtu"] == 0'
}

# The combinations (KV_MATRIX=0 leaves them out: lib.sh): another size,
# the server's side of a refusal the client's shows, and the peers that
# are rdma-core's (udaddy runs the same kernel path as a kverbs peer: a
# SIDR exchange and datagrams).
# shellcheck disable=SC2034 # kv_matrix: read by lib.sh's ktap_main (KV_MATRIX=0)
kv_matrix="validated_26 server_size_above_mtu_emsgsize udaddy_client_kserver
	kclient_udaddy_server validate_against_udaddy_fails"

ktap_main test_validated_26 test_validated_100 test_drained_traced \
	test_validated_path_mtu \
	test_size_above_mtu_emsgsize test_server_size_above_mtu_emsgsize \
	test_missing_message_times_out test_foreign_datagram_refused \
	test_foreign_large_datagram_refused \
	test_sigint_ends_waiting_server \
	test_link_del_under_ud test_no_listener_refused test_udaddy_client_kserver \
	test_kclient_udaddy_server test_validate_against_udaddy_fails \
	test_ud_refused_over_iwarp
