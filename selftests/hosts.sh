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
	# A test that had B killed and failed before it booted B again.
	if [ -e "$KV_PAIR/b.gone" ]; then
		echo "B was gone: booting it again"
		kv_pair_boot_b || return
	fi
	kv_peer -t 60 "kv_kill_leftovers; read -r c < /sys/class/net/\$KV_NETDEV/carrier_changes;" \
		"kv_rxe_restore $1 \"\$c\""
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
	count=20
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
		'd["iterations"] == 0' || return
	# What it said, for the record of this lane's log.
	kv_python "$KV_TMP/cli.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["error"]
print(f"# client's error: {e['name']} at {e['step']}: {e['message']}")
PY
}

# perf_run WAY TEST OPTS...: a perf test across the wire, WAY "ab" (the
# client on A, its server on B) or "ba"; the server gets the options of
# the array srv_opts.  Both must succeed and report the same run, as
# perf.sh's perf_pair checks.  Leaves the reports' paths in cli and srv.
srv_opts=()
perf_run() {
	local way=$1 test=$2 rc d
	shift 2
	if [ "$way" = ab ]; then
		kv_peer_bg srv "\"\$KVERBS\" $test -p $port --timeout $step_limit --json" \
			"${srv_opts[*]} > srv.json 2> srv.err"
		d=$(kv_peer_dir srv)
		srv=$d/srv.json
		kv_peer -t 30 "wait_for 10 kv_listening 0.0.0.0 $port" ||
			fail "B's $test server is not listening: $(cat "$d/srv.err")" || return
		cli=$KV_TMP/cli.json
		timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" "$test" -p "$port" \
			--timeout "$step_limit" --json "$@" "$KV_PEER_ADDR" > "$cli" 2> "$KV_TMP/cli.err"
		rc=$?
		kv_peer_wait srv 60 || fail "B's server exited $?: $(cat "$d/srv.err" "$srv")" ||
			return
		[ $rc = 0 ] || fail "A's client exited $rc: $(cat "$KV_TMP/cli.err" "$cli")" || return
	else
		"$KVERBS" "$test" -p "$port" --timeout "$step_limit" --json "${srv_opts[@]}" \
			> "$KV_TMP/srv.json" 2> "$KV_TMP/srv.err" &
		kv_pid_srv=$!
		srv=$KV_TMP/srv.json
		wait_for 10 kv_listening 0.0.0.0 "$port" ||
			fail "A's $test server is not listening: $(cat "$KV_TMP/srv.err")" || return
		kv_peer -t 150 "timeout -k 5 120 \"\$KVERBS\" $test -p $port --timeout $step_limit" \
			"--json $* \$KV_PEER_ADDR > cli.json 2> cli.err"
		rc=$?
		d=$(kv_peer_dir fg)
		cli=$d/cli.json
		kv_wait srv 60 || fail "A's server exited $?: $(cat "$KV_TMP/srv.err" "$srv")" || return
		[ $rc = 0 ] || fail "B's client exited $rc: $(cat "$d/cli.err" "$cli")" || return
	fi
}

# perf_agree: the client's report and the server's, of a run of one
# connection or several, agree on what ran.
perf_agree() {
	json_check "$cli" 'd["status"] == "ok"' 'd["error"] is None' 'd["validate"] is True' \
		'd["bytes"] == d["iterations"] * d["size"]' 'd["elapsed_ns"] > 0' \
		-- "$srv" 'd["status"] == "ok"' 'd["error"] is None' || return
	kv_python "$cli" "$srv" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
for k in ("test", "size", "validate", "iterations", "bytes", "elapsed_ns"):
    if c[k] != s[k]:
        sys.exit(f"client and server disagree on {k}: {c[k]} != {s[k]}")
PY
}

# perf_validated WAY TEST SIZE ITERS [OPTS...]
perf_validated() {
	perf_run "$1" "$2" -s "$3" -n "$4" --validate "${@:5}" || return
	perf_agree || return
	json_check "$cli" "d['iterations'] == $4" "d['size'] == $3" "d['test'] == '$2'"
}

# perf_lat WAY TEST SIZE ITERS [OPTS...]: a sample per operation.
perf_lat() {
	perf_validated "$@" || return
	json_check "$cli" "d['samples'] == $4" 'd["latency_usec"]["min"] > 0' \
		'(lambda l: l["min"] <= l["typical"] <= l["p99"] <= l["max"])(d["latency_usec"])'
}

test_send_bw_ab()	{ perf_validated ab send_bw 4096 200; }
test_write_bw_ba()	{ perf_validated ba write_bw 65536 50; }
test_read_bw_ab()	{ perf_validated ab read_bw 65536 50; }
test_atomic_bw_ba()	{ perf_validated ba atomic_bw 8 200; }
test_atomic_bw_cmp_swap_ab()	{ perf_validated ab atomic_bw 8 200 -A CMP_AND_SWAP; }
test_send_lat_ba()	{ perf_lat ba send_lat 4096 50; }
test_write_lat_ab()	{ perf_lat ab write_lat 64 50; }
test_read_lat_ba()	{ perf_lat ba read_lat 4096 50; }
test_atomic_lat_ab()	{ perf_lat ab atomic_lat 8 50; }

# -b: a connection each way, each byte checked by the side it lands on;
# the numbers are the sums of both directions.
perf_bidir() {
	srv_opts=(-b)
	perf_run "$1" "$2" -b -s "$3" -n "$4" --validate || return
	perf_agree || return
	json_check "$cli" "d['iterations'] == 2 * $4" 'd["bidirectional"] is True' \
		-- "$srv" 'd["bidirectional"] is True'
}

test_write_bw_bidir_ab()	{ perf_bidir ab write_bw 4096 100; }
test_send_bw_bidir_ba()		{ perf_bidir ba send_bw 4096 100; }

# -q 4: four connections, four threads, every byte checked.
test_write_bw_4_qps_ab() {
	srv_opts=(-q 4)
	perf_run ab write_bw -q 4 -s 4096 -n 100 --validate || return
	perf_agree || return
	json_check "$cli" 'd["iterations"] == 400' 'd["qps"] == 4' -- "$srv" 'd["qps"] == 4'
}

test_read_bw_4_qps_ba() {
	srv_opts=(-q 4)
	perf_run ba read_bw -q 4 -s 4096 -n 50 --validate || return
	perf_agree || return
	json_check "$cli" 'd["iterations"] == 200' 'd["qps"] == 4'
}

# -a: every size from 2 bytes to the largest both modules take, here
# made 64 KiB on both hosts to keep it short.
perf_all_max=/sys/module/kverbs/parameters/max_msg_size
test_write_bw_all_sizes_ab() {
	local old rc sizes="[2 ** i for i in range(1, 17)]"
	old=$(cat $perf_all_max)
	kv_peer -t 30 "echo 65536 > $perf_all_max" || return
	echo 65536 > $perf_all_max
	srv_opts=(-a)
	perf_run ab write_bw -a -D 0.1 --validate
	rc=$?
	echo "$old" > $perf_all_max
	kv_peer -t 30 "echo $old > $perf_all_max"
	[ $rc = 0 ] || return
	json_check "$cli" 'isinstance(d, list)' "[r['size'] for r in d] == $sizes" \
		'all(r["status"] == "ok" and r["iterations"] > 0 and r["validate"] for r in d)' \
		-- "$srv" 'isinstance(d, list)' "[r['size'] for r in d] == $sizes" \
		'all(r["status"] == "ok" and r["role"] == "server" for r in d)'
}

# check_lines FILE EXPR...: FILE holds one JSON document per line; the
# Python expressions hold over the list of them, L.
check_lines() {
	kv_python "$@" <<'PY'
import json, sys
path, exprs = sys.argv[1], sys.argv[2:]
try:
    L = [json.loads(line) for line in open(path) if line.strip()]
except Exception as e:
    print(f"{path}: not JSON lines: {e}")
    print(open(path).read()[:2000])
    sys.exit(1)
for e in exprs:
    if not eval(e):
        print(f"{path}: {e} does not hold")
        print(json.dumps(L)[:3000])
        sys.exit(1)
PY
}

# kverbs serve on A, three clients on B at once, three tests, each byte
# checked: each client gets its test, and serve reports each.
test_serve_three_clients_from_b() {
	local c rc=0 d
	"$KVERBS" serve -p "$port" --timeout "$step_limit" --json -C 3 -j 3 \
		> "$KV_TMP/sv.json" 2> "$KV_TMP/sv.err" &
	kv_pid_sv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" ||
		fail "serve is not listening: $(cat "$KV_TMP/sv.err")" || return
	kv_peer_bg c1 "\"\$KVERBS\" write_bw -p $port --timeout $step_limit --json -s 4096 -n 200 --validate \$KV_PEER_ADDR > c.json 2> c.err"
	kv_peer_bg c2 "\"\$KVERBS\" read_lat -p $port --timeout $step_limit --json -s 64 -n 50 --validate \$KV_PEER_ADDR > c.json 2> c.err"
	kv_peer_bg c3 "\"\$KVERBS\" send_bw -p $port --timeout $step_limit --json -s 1024 -n 200 --validate \$KV_PEER_ADDR > c.json 2> c.err"
	for c in c1 c2 c3; do
		d=$(kv_peer_dir $c)
		kv_peer_wait $c 150 || { echo "B's client $c failed: $(cat "$d/c.err" "$d/c.json")"; rc=1; }
	done
	kv_wait sv 30 || fail "serve exited $?: $(cat "$KV_TMP/sv.err" "$KV_TMP/sv.json")" || return
	[ $rc = 0 ] || return 1
	json_check "$(kv_peer_dir c1)/c.json" 'd["status"] == "ok"' 'd["iterations"] == 200' \
		-- "$(kv_peer_dir c2)/c.json" 'd["status"] == "ok"' 'd["latency_usec"]["typical"] > 0' \
		-- "$(kv_peer_dir c3)/c.json" 'd["status"] == "ok"' 'd["validate"] is True' || return
	check_lines "$KV_TMP/sv.json" 'len(L) == 3' 'all(d["status"] == "ok" for d in L)' \
		'sorted(d["test"] for d in L) == ["read_lat", "send_bw", "write_bw"]' \
		'sorted(d["size"] for d in L) == [64, 1024, 4096]'
}

# Faults that a second host has and loopback does not.  In each, one
# side loses its peer mid-test; the side that survives must end its test
# within its step limit saying what happened (error name and step), let
# go of everything (its module unloads), and run a fresh test once the
# peer is back.

# error_is FILE NAME STEP: the --json report's error.
error_is() {
	json_check "$1" 'd["status"] == "failed"' "d['error']['name'] == '$2'" \
		"d['error']['step'] == '$3'"
}

# reload_module_here: nothing holds kverbs: it unloads, and loads again.
reload_module_here() {
	timeout 30 rmmod kverbs || fail "A: rmmod kverbs failed" || return
	insmod "$KV_MODULE" || fail "A: cannot load $KV_MODULE again"
}

reload_module_peer() {
	kv_peer -t 60 'timeout 30 rmmod kverbs && insmod "$KV_MODULE"' ||
		fail "B: kverbs would not unload and load again"
}

# flap_repair_here / flap_repair_peer: the wire's card up again, and rxe0
# re-created (a flap leaves rxe's GSI QP in the error state: faults.sh).
flap_repair_here() {
	ip link set kvw0 up
	timeout 20 rdma link del "$KV_DEV" || fail "A: rdma link del failed" || return
	kv_rxe_readd || fail "A: $KV_DEV did not come back"
}

flap_repair_peer() {
	kv_peer -t 60 'ip link set kvw0 up && timeout 20 rdma link del "$KV_DEV" && kv_rxe_readd' ||
		fail "B: $KV_DEV did not come back"
}

# wire_down_client_a SIDE: a write_bw from A to a server on B; SIDE's
# card goes down mid-test.  The side whose card went down ends at once
# (its port went down); the other, its peer silent, within its step
# limit.
wire_down_client_a() {
	local side=$1 pid rc d start
	kv_peer_bg srv "\"\$KVERBS\" write_bw -p $port --timeout $step_limit --json > srv.json 2> srv.err"
	d=$(kv_peer_dir srv)
	kv_peer -t 30 "wait_for 10 kv_listening 0.0.0.0 $port" ||
		fail "B's server is not listening: $(kv_cat "$d/srv.err")" || return
	"$KVERBS" write_bw -p "$port" --timeout "$step_limit" --json -s 65536 -D 600 "$KV_PEER_ADDR" \
		> "$KV_TMP/cli.json" 2> "$KV_TMP/cli.err" &
	pid=$!
	kv_sleep 3
	kv_alive $pid || fail "A's client ended early: $(kv_cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	start=$SECONDS
	if [ "$side" = a ]; then
		ip link set kvw0 down
	else
		kv_peer -t 30 'ip link set kvw0 down' || fail "cannot take B's card down" || return
	fi
	wait_for $((step_limit + 10)) kv_ended $pid ||
		fail "A's client alive $((step_limit + 10)) s after the wire went down: $(kv_stack $pid)" || return
	wait $pid
	rc=$?
	echo "# A's client ended $((SECONDS - start)) s after the wire went down"
	[ $rc = 1 ] || fail "A's client exited $rc, expected 1: $(kv_cat "$KV_TMP/cli.err")" || return
	kv_peer_wait srv $((step_limit + 20))
	rc=$?
	[ $rc = 1 ] || fail "B's server exited $rc, expected 1: $(kv_cat "$d/srv.err" "$d/srv.json")" ||
		return
}

test_wire_down_on_a_mid_write_bw() {
	wire_down_client_a a || return
	error_is "$KV_TMP/cli.json" ENETDOWN rdma_write || return
	error_is "$(kv_peer_dir srv)/srv.json" ETIMEDOUT recv || return
	flap_repair_here || return
	reload_module_here && reload_module_peer || return
	perf_validated ab write_bw 65536 50
}

test_wire_down_on_b_mid_write_bw() {
	wire_down_client_a b || return
	error_is "$KV_TMP/cli.json" ETIMEDOUT rdma_write || return
	error_is "$(kv_peer_dir srv)/srv.json" ENETDOWN recv || return
	flap_repair_peer || return
	reload_module_here && reload_module_peer || return
	perf_validated ab write_bw 65536 50
}

# The peer's module cannot go while its test holds /dev/kverbs; the
# honest equivalent of removing it under a connection is to kill the
# process that holds it (SIGKILL: no goodbye from user space) and then
# remove the module, the connection still up on A's side.  A's ping
# ends within its step limit, and the module comes back to serve.
test_peer_process_killed_then_module_removed() {
	local pid rc out start d
	peer_server srv "$port" -V || return
	d=$(kv_peer_dir srv)
	"$KVERBS" ping -c -a "$KV_PEER_ADDR" -p "$port" --timeout "$step_limit" --json -V -C 0 -S 4096 \
		> "$KV_TMP/cli.json" 2> "$KV_TMP/cli.err" &
	pid=$!
	wait_for 30 eval '[ "$(kv_connected "$port")" -ge 1 ]' ||
		fail "A's client never connected: $(kv_cat "$KV_TMP/cli.err")" || return
	out=$(kv_peer -t 30 'rmmod kverbs' 2>&1) &&
		fail "B's rmmod succeeded under a running server" || true
	[[ $out == *"in use"* ]] || fail "B's rmmod said: $out" || return
	kv_peer_kill srv KILL
	kv_peer_wait srv 30
	rc=$?
	[ $rc = 137 ] || fail "B's server exited $rc, expected SIGKILL's 137" || return
	start=$SECONDS
	kv_peer -t 60 'timeout 30 rmmod kverbs' ||
		fail "B's rmmod failed once its server was killed" || return
	wait_for $((step_limit + 10)) kv_ended $pid ||
		fail "A's client alive $((step_limit + 10)) s after B's module went: $(kv_stack $pid)" || return
	wait $pid
	rc=$?
	echo "# A's client ended $((SECONDS - start)) s after B's module went"
	kv_peer -t 30 'insmod "$KV_MODULE"' || fail "B: cannot load the module again" || return
	[ $rc = 1 ] || fail "A's client exited $rc, expected 1: $(kv_cat "$KV_TMP/cli.err")" || return
	error_is "$KV_TMP/cli.json" ECONNRESET recv || return
	reload_module_here || return
	ping_a_to_b 4096 10 && ping_b_to_a 4096 10
}

# B's guest dies outright mid-transfer (the host ends its QEMU): A's
# client, its peer silent, ends within its step limit; A lets go of
# everything; B boots again, and a fresh test runs.
test_peer_guest_killed_mid_write_bw() {
	local pid rc start
	kv_peer_bg srv "\"\$KVERBS\" write_bw -p $port --timeout $step_limit --json > srv.json 2> srv.err"
	kv_peer -t 30 "wait_for 10 kv_listening 0.0.0.0 $port" ||
		fail "B's server is not listening" || return
	"$KVERBS" write_bw -p "$port" --timeout "$step_limit" --json -s 65536 -D 600 "$KV_PEER_ADDR" \
		> "$KV_TMP/cli.json" 2> "$KV_TMP/cli.err" &
	pid=$!
	kv_sleep 3
	kv_alive $pid || fail "A's client ended early: $(kv_cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	start=$SECONDS
	kv_pair_kill_b || return
	wait_for $((step_limit + 10)) kv_ended $pid ||
		fail "A's client alive $((step_limit + 10)) s after B died: $(kv_stack $pid)" || return
	wait $pid
	rc=$?
	echo "# A's client ended $((SECONDS - start)) s after B's QEMU was told to end"
	[ $rc = 1 ] || fail "A's client exited $rc, expected 1: $(kv_cat "$KV_TMP/cli.err")" || return
	error_is "$KV_TMP/cli.json" ETIMEDOUT rdma_write || return
	reload_module_here || return
	kv_pair_boot_b || return
	perf_validated ab write_bw 65536 50 && ping_b_to_a 4096 10
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
	test_send_bw_ab test_write_bw_ba test_read_bw_ab test_atomic_bw_ba test_atomic_bw_cmp_swap_ab \
	test_send_lat_ba test_write_lat_ab test_read_lat_ba test_atomic_lat_ab \
	test_write_bw_bidir_ab test_send_bw_bidir_ba test_write_bw_4_qps_ab test_read_bw_4_qps_ba \
	test_write_bw_all_sizes_ab test_serve_three_clients_from_b \
	test_wire_down_on_a_mid_write_bw test_wire_down_on_b_mid_write_bw \
	test_peer_process_killed_then_module_removed test_peer_guest_killed_mid_write_bw \
	test_peer_clean
