#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two hosts: kverbs between two guests joined by a wire (tools/vm/pair),
# where every packet leaves one rxe device and arrives at another,
# instead of looping back inside one.  Runs in guest A (10.210.0.1);
# guest B (10.210.0.2) runs what the tests ask of it through the pair
# directory (kv_peer, selftests/lib.sh).  Each test is run both ways
# where it has two ends: the two guests may run different kernels.
. "$(dirname "$0")/lib.sh"

[ -n "${KV_PAIR:-}" ] || { echo "1..0 # SKIP not in a pair of guests (tools/vm/pair)"; exit 0; }

# Each test from its own ports.
port=17900
kv_before_test() {
	port=$((17900 + 20 * KV_TEST_NUM))
}
step_limit=$((10 * KV_TIME_SCALE))

# What a test left on B goes too, and B's wire and device are repaired,
# as ktap_main does here after each test.
kv_after_test() {
	kv_peer -t 60 'kv_kill_leftovers; kv_rxe_restore 1 x'
}

# peer_server NAME PORT PING_OPTS...: a kverbs ping server on B's
# address, in the background on B, --json to NAME.json in its request
# directory; waits until it listens.
peer_server() {
	local name=$1 port=$2
	shift 2
	kv_peer_bg "$name" "\"\$KVERBS\" ping -s -a \"\$KV_ADDR\" -p $port --json $* > $name.json 2> $name.err"
	kv_peer -t 30 "wait_for 10 kv_listening \"\$KV_ADDR\" $port" ||
		fail "B's server $name is not listening on $port: $(cat "$(kv_peer_dir "$name")/$name.err")"
}

# ping_checks CLIENT_JSON SERVER_JSON COUNT: both reports of a validated
# ping of COUNT iterations that went well.
ping_checks() {
	json_check "$1" 'd["status"] == "ok"' "d['iterations'] == $3" \
		'd["bytes_read"] == d["iterations"] * d["size"]' 'd["error"] is None' \
		-- "$2" 'd["status"] == "ok"' "d['iterations'] == $3" \
		'd["clients"] == 1' 'd["clients_failed"] == 0'
}

# ping_b_to_a SIZE COUNT: a server on A, a client on B.
ping_b_to_a() {
	local size=$1 count=$2 rc d
	kv_server srv "$port" -V || return
	kv_peer -t 300 "\"\$KVERBS\" ping -c -a \"\$KV_PEER_ADDR\" -p $port --json -V" \
		"-C $count -S $size --timeout $step_limit > cli.json 2> cli.err"
	rc=$?
	d=$(kv_peer_dir fg)
	kv_wait srv 30 || fail "A's server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	[ $rc = 0 ] || fail "B's client exited $rc: $(cat "$d/cli.err" "$d/cli.json")" || return
	ping_checks "$d/cli.json" "$KV_TMP/srv.json" "$count" || return
	json_check "$d/cli.json" "d['size'] == $size"
}

# ping_a_to_b SIZE COUNT: a server on B, a client on A.
ping_a_to_b() {
	local size=$1 count=$2 rc d
	peer_server srv "$port" -V || return
	KV_ADDR=$KV_PEER_ADDR KV_CLIENT_LIMIT=300 kv_client cli "$port" -V -C "$count" -S "$size" \
		--timeout "$step_limit"
	rc=$?
	d=$(kv_peer_dir srv)
	kv_peer_wait srv 30 || fail "B's server: $(cat "$d/srv.err" "$d/srv.json")" || return
	[ $rc = 0 ] || fail "A's client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	ping_checks "$KV_TMP/cli.json" "$d/srv.json" "$count" || return
	json_check "$KV_TMP/cli.json" "d['size'] == $size"
}

# The wire is what it should be: each guest reaches the other, and rxe0
# runs on the wire's MTU (9000 gives RoCE's 4096; 1500, 1024).
test_wire_and_mtu() {
	local want mtu active peer_active
	mtu=$(cat /sys/class/net/kvw0/mtu)
	want=1024
	[ "$mtu" -ge 4200 ] && want=4096
	[ -z "$KV_MTU" ] || [ "$mtu" = "$KV_MTU" ] ||
		fail "kvw0's MTU is $mtu, the pair asked for $KV_MTU" || return
	busybox ping -c 1 -W 10 "$KV_PEER_ADDR" > "$KV_TMP/ping.out" 2>&1 ||
		fail "no IPv4 echo from B: $(cat "$KV_TMP/ping.out")" || return
	active=$(ibv_devinfo -d "$KV_DEV" -v 2>/dev/null | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
	[ "$active" = "$want" ] || fail "A's $KV_DEV active_mtu is '$active', expected $want (MTU $mtu)" ||
		return
	peer_active=$(kv_peer -t 30 "ibv_devinfo -d \$KV_DEV -v | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p'")
	[ "$peer_active" = "$want" ] ||
		fail "B's $KV_DEV active_mtu is '$peer_active', expected $want" || return
	kv_peer -t 30 "busybox ping -c 1 -W 10 \$KV_PEER_ADDR" > /dev/null ||
		fail "no IPv4 echo from A to B" || return
}

for size in 26 4095 4096 65535 1048576; do
	count=100
	[ $size -ge 65535 ] && count=10
	[ $size = 1048576 ] && count=4
	eval "test_ping_b_to_a_$size() { ping_b_to_a $size $count; }"
	eval "test_ping_a_to_b_$size() { ping_a_to_b $size $count; }"
done

# A persistent server on A serves clients from both hosts at once: each
# runs until interrupted, and their sessions are all connected at one
# moment (on A: the server's two ends and A's client's).
test_ping_persistent_both_hosts() {
	local apid rc d
	kv_server srv "$port" -P -V || return
	kv_peer_bg cli "\"\$KVERBS\" ping -c -a \"\$KV_PEER_ADDR\" -p $port --json -V -C 0 -S 4096" \
		"> cli.json 2> cli.err"
	"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" --json -V -C 0 -S 4096 \
		> "$KV_TMP/cli.json" 2> "$KV_TMP/cli.err" &
	apid=$!
	kv_overlap 3 "$apid" "$port" || return
	kv_peer_kill cli INT || fail "cannot interrupt B's client" || return
	kill -INT "$apid"
	d=$(kv_peer_dir cli)
	kv_peer_wait cli 30
	rc=$?
	[ $rc = 0 ] || fail "B's client exited $rc after SIGINT: $(cat "$d/cli.err")" || return
	wait_for 30 kv_ended "$apid" || fail "A's client alive 30 s after SIGINT" || return
	wait "$apid"
	rc=$?
	[ $rc = 0 ] || fail "A's client exited $rc after SIGINT: $(cat "$KV_TMP/cli.err")" || return
	kill -INT "$kv_pid_srv"
	kv_wait srv 30
	rc=$?
	[ $rc = 0 ] || fail "server exited $rc: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	json_check "$d/cli.json" 'd["iterations"] > 0' 'd["bytes_read"] == d["iterations"] * d["size"]' \
		-- "$KV_TMP/cli.json" 'd["iterations"] > 0' \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["clients"] == 2' \
		'd["clients_failed"] == 0'
}

need_rping() {
	command -v rping >/dev/null || skip "rping (rdmacm-utils) is not installed"
}

# rping on B against a kverbs server on A, and the other way round.
rping_b_kserver_a() {
	local size=$1 count=$2 rc d
	need_rping
	kv_server srv "$port" -V -v || return
	kv_peer -t 120 "rping -c -a \$KV_PEER_ADDR -p $port -C $count -S $size -V -v > rping.out 2> rping.err"
	rc=$?
	d=$(kv_peer_dir fg)
	[ $rc = 0 ] || fail "rping -c on B exited $rc: $(cat "$d/rping.err")" || return
	kv_wait srv 30 || fail "kverbs server: $(cat "$KV_TMP/srv.err")" || return
	json_check "$KV_TMP/srv.json" 'd["status"] == "ok"' "d['iterations'] == $count" \
		"d['bytes_read'] == $count * $size" 'd["clients"] == 1' || return
	[ "$(grep -c '^ping data: ' "$d/rping.out")" = "$count" ] ||
		fail "rping printed $(grep -c '^ping data: ' "$d/rping.out") of $count pings"
}

# kclient_a_rping_b SIZE COUNT [SERVER_SIZE]: rping -s on B with a
# buffer of SERVER_SIZE (default SIZE), the kverbs client on A.
kclient_a_rping_b() {
	local size=$1 count=$2 ssize=${3:-$1} rc d
	need_rping
	kv_peer_bg rs "rping -s -a \$KV_ADDR -p $port -S $ssize -V -v > rs.out 2> rs.err"
	d=$(kv_peer_dir rs)
	kv_peer -t 30 "wait_for 10 kv_listening \$KV_ADDR $port rping" ||
		fail "rping -s on B is not listening: $(cat "$d/rs.err")" || return
	KV_ADDR=$KV_PEER_ADDR kv_client cli "$port" -C "$count" -S "$size" -V --timeout "$step_limit"
}

test_rping_b_kserver_a_64()	{ rping_b_kserver_a 64 10; }
test_rping_b_kserver_a_65535()	{ rping_b_kserver_a 65535 10; }

test_kclient_a_rping_b_64() {
	local d
	kclient_a_rping_b 64 10 || fail "kverbs client exited $?: $(cat "$KV_TMP/cli.err")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["iterations"] == 10' || return
	d=$(kv_peer_dir rs)
	kv_peer_wait rs 30 || fail "rping -s on B: $(cat "$d/rs.err")" || return
	[ "$(grep -c '^server ping data: rdma-ping-' "$d/rs.out")" = 10 ] ||
		fail "rping -s printed $(grep -c '^server ping data: ' "$d/rs.out") of 10 pings"
}

test_kclient_a_rping_b_65535() {
	local d
	kclient_a_rping_b 65535 10 || fail "kverbs client exited $?: $(cat "$KV_TMP/cli.err")" || return
	d=$(kv_peer_dir rs)
	kv_peer_wait rs 30 || fail "rping -s on B: $(cat "$d/rs.err")" || return
	[ "$(grep -c '^server ping data: rdma-ping-' "$d/rs.out")" = 10 ] ||
		fail "rping -s printed $(grep -c '^server ping data: ' "$d/rs.out") of 10 pings"
}

# rping's server buffer is its -S: a client advertising more than that
# makes rping's RDMA READ of it fail, and the kverbs client says so
# within its step limit instead of waiting for ever.
test_kclient_a_larger_than_rping_b() {
	local rc
	kclient_a_rping_b 4096 5 64
	rc=$?
	[ $rc = 1 ] || fail "kverbs client exited $rc, expected 1: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "failed"' 'd["error"] is not None' \
		'd["iterations"] == 0'
}

# The end of the run, B's side: nothing left running there, its module
# unloads, and its kernel said nothing that looks like a splat.
test_peer_clean() {
	local out
	out=$(kv_peer -t 60 'kv_kill_leftovers && timeout 30 rmmod kverbs && insmod "$KV_MODULE"' 2>&1) ||
		fail "B: $out" || return
	out=$(kv_peer -t 60 'dmesg | tail -n +$((KV_DMESG_BASE + 1)) | kv_splats' 2>&1) ||
		fail "B's kernel log: $out" || return
	[ -z "$out" ] || fail "B's kernel complained:" "$out"
}

ktap_main test_wire_and_mtu \
	test_ping_b_to_a_26 test_ping_a_to_b_26 test_ping_b_to_a_4095 test_ping_a_to_b_4095 \
	test_ping_b_to_a_4096 test_ping_a_to_b_4096 test_ping_b_to_a_65535 test_ping_a_to_b_65535 \
	test_ping_b_to_a_1048576 test_ping_a_to_b_1048576 test_ping_persistent_both_hosts \
	test_rping_b_kserver_a_64 test_rping_b_kserver_a_65535 \
	test_kclient_a_rping_b_64 test_kclient_a_rping_b_65535 test_kclient_a_larger_than_rping_b \
	test_peer_clean
