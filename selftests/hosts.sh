#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two hosts: kverbs between two guests joined by a wire (tools/vm/pair),
# where every packet leaves one rxe (or siw, KV_TYPE) device and arrives
# at another, instead of looping back inside one.  Runs in guest A (10.210.0.1);
# guest B (10.210.0.2) runs what the tests ask of it through the pair
# directory (kv_peer, selftests/lib.sh).  Each test is run both ways
# where it has two ends: the two guests may run different kernels.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hosts-lib.sh"

# The wire is what it should be: each guest reaches the other, and
# $KV_DEV runs on the wire's MTU.  rxe's RoCE MTU is the largest that
# fits with its headers (9000 gives 4096; 1500, 1024); siw reports the
# netdev's MTU rounded down to an IB MTU (9000: 4096; 1500: 1024), which
# bounds nothing on iWARP, where TCP segments the stream.
test_wire_and_mtu() {
	local want mtu active peer_active
	mtu=$(cat /sys/class/net/kvw0/mtu)
	want=1024
	if [ "$KV_TYPE" = siw ]; then
		[ "$mtu" -ge 2048 ] && want=2048
		[ "$mtu" -ge 4096 ] && want=4096
	else
		[ "$mtu" -ge 4200 ] && want=4096
	fi
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
	# A TCP wire's sockets as tools/vm/wire-tune makes them: without
	# Nagle's delays.
	wait_for 10 eval '[ ! -e "$KV_PAIR/host/wire-untuned" ]' ||
		fail "the wire's sockets are not tuned: $(kv_cat "$KV_PAIR/host/wire-untuned")"
}

# The wire's IPv6 addresses, which rdma-setup gives kvw0: an ICMPv6 echo
# each way, then a validated ping each way over them (RoCEv2 over IPv6
# on rxe, iWARP over TCP on IPv6 on siw).
test_wire_ipv6() {
	busybox ping -6 -c 1 -W 10 "$KV_PEER_ADDR6" > "$KV_TMP/ping6.out" 2>&1 ||
		fail "no ICMPv6 echo from B ($KV_PEER_ADDR6): $(cat "$KV_TMP/ping6.out")" || return
	kv_peer -t 30 "busybox ping -6 -c 1 -W 10 \$KV_PEER_ADDR6" > /dev/null ||
		fail "no ICMPv6 echo from A ($KV_ADDR6) to B" || return
}

test_ping_ipv6_a_to_b_4096()	{ v6=1 ping_a_to_b 4096 10; }
test_ping_ipv6_b_to_a_4096()	{ v6=1 ping_b_to_a 4096 10; }

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
	# shellcheck disable=SC2154 # port, step_limit: hosts-lib.sh's
	kv_server srv "$port" -P -V --timeout "$step_limit" || return
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
	# shellcheck disable=SC2154 # kv_pid_srv: set by the eval of what started it
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
	kv_server srv "$port" -V -v --timeout "$step_limit" || return
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

# kclient_a_rping_b_served SIZE: ten pings of SIZE from A's kverbs client
# to rping -s on B, both ends done, and rping saw all ten.
kclient_a_rping_b_served() {
	local d
	kclient_a_rping_b "$1" 10 || fail "kverbs client exited $?: $(cat "$KV_TMP/cli.err")" || return
	d=$(kv_peer_dir rs)
	kv_peer_wait rs 30 || fail "rping -s on B: $(cat "$d/rs.err")" || return
	[ "$(grep -c '^server ping data: rdma-ping-' "$d/rs.out")" = 10 ] ||
		fail "rping -s printed $(grep -c '^server ping data: ' "$d/rs.out") of 10 pings"
}

test_kclient_a_rping_b_64() {
	kclient_a_rping_b_served 64 || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["iterations"] == 10'
}

test_kclient_a_rping_b_65535() {
	kclient_a_rping_b_served 65535
}

# rping's server buffer is its -S: a client advertising more than that
# makes rping's RDMA READ of it fail at rping's end (a local length
# error), and rping, giving up, disconnects.  The kverbs client, waiting
# for rping's go-ahead, says so within its step limit instead of waiting
# for ever: ECONNRESET at recv, no ping done.
test_kclient_a_larger_than_rping_b() {
	local rc
	kclient_a_rping_b 4096 5 64
	rc=$?
	[ $rc = 1 ] || fail "kverbs client exited $rc, expected 1: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "failed"' 'd["iterations"] == 0' \
		'd["error"]["name"] == "ECONNRESET"' 'd["error"]["step"] == "recv"' ||
		fail "the client's report: $(cat "$KV_TMP/cli.json")"
}

# perf_lat WAY TEST SIZE ITERS [OPTS...]: a sample per operation.
perf_lat() {
	perf_validated "$@" || return
	# shellcheck disable=SC2154 # cli, srv: the reports' paths, set by hosts-lib.sh's perf_run
	json_check "$cli" "d['samples'] == $(perf_iters "$4")" 'd["latency_usec"]["min"] > 0' \
		'(lambda l: l["min"] <= l["typical"] <= l["p99"] <= l["max"])(d["latency_usec"])'
}

# siw has no atomic operations (perf.sh checks that kverbs refuses them
# there, saying so).
need_atomics() {
	[ "$KV_TYPE" != siw ] || skip "siw has no atomic operations"
}

test_send_bw_ab()	{ perf_validated ab send_bw 4096 200; }
test_write_bw_ba()	{ perf_validated ba write_bw 65536 50; }
test_read_bw_ab()	{ perf_validated ab read_bw 65536 50; }
test_atomic_bw_ba()	{ need_atomics; perf_validated ba atomic_bw 8 200; }
test_atomic_bw_cmp_swap_ab()	{ need_atomics; perf_validated ab atomic_bw 8 200 -A CMP_AND_SWAP; }
test_send_lat_ba()	{ perf_lat ba send_lat 4096 50; }
test_write_lat_ab()	{ perf_lat ab write_lat 64 50; }
test_read_lat_ba()	{ perf_lat ba read_lat 4096 50; }
test_atomic_lat_ab()	{ need_atomics; perf_lat ab atomic_lat 8 50; }

# UD across the wire: datagrams leave one device and arrive at another,
# their address handles from SIDR (the ping) or from the RC connection's
# path (send_bw -c UD).  1024 bytes fit either wire MTU's RoCE MTU.
# iWARP has no UD: perf.sh and ud.sh check the refusal over siw.
need_ud() {
	[ "$KV_TYPE" != siw ] || skip "iWARP (siw) has no UD"
}

# A validated UD ping, a server on B and a client on A: both report
# every message, the same path MTU, and each other's QP.
test_ping_ud_a_to_b_1024() {
	local rc d count=20
	need_ud
	peer_server srv "$port" --ud -C $count -V || return
	KV_ADDR=$KV_PEER_ADDR KV_CLIENT_LIMIT=300 kv_client cli "$port" --ud -V -C $count \
		-S 1024 --timeout "$step_limit"
	rc=$?
	d=$(kv_peer_dir srv)
	kv_peer_wait srv 30 || fail "B's server: $(cat "$d/srv.err" "$d/srv.json")" || return
	[ $rc = 0 ] || fail "A's client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["transport"] == "ud"' \
		"d['iterations'] == $count" "d['bytes_read'] == $count * 1024" \
		'd["path_mtu"] >= 1024' 'd["remote_qpn"] > 1' \
		-- "$d/srv.json" 'd["status"] == "ok"' 'd["transport"] == "ud"' \
		"d['iterations'] == $count" 'd["clients"] == 1' 'd["clients_failed"] == 0' || return
	kv_python "$KV_TMP/cli.json" "$d/srv.json" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
assert c["path_mtu"] == s["path_mtu"], f"path MTU {c['path_mtu']} vs {s['path_mtu']}"
PY
}

# send_bw -c UD, a client on A and its server on B: every datagram that
# arrives is checked by its iteration; what the wire drops is counted,
# the same on both sides, and is no failure.
test_send_bw_ud_ab() {
	local n
	need_ud
	n=$(perf_iters 400)
	perf_run ab send_bw -c UD -s 1024 -n "$n" --validate || return
	# shellcheck disable=SC2154 # cli, srv: the reports' paths, set by hosts-lib.sh's perf_run
	json_check "$cli" 'd["status"] == "ok"' 'd["connection"] == "UD"' 'd["validate"] is True' \
		"d['iterations'] == $n" 'd["size"] == 1024' \
		-- "$srv" 'd["status"] == "ok"' 'd["connection"] == "UD"' \
		"d['iterations'] + d['lost'] == $n" 'd["iterations"] > 0' || return
	kv_python "$cli" "$srv" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
assert c["lost"] == s["lost"], f"lost: client {c['lost']}, server {s['lost']}"
PY
}

# ud_drop PERCENT: A's wire drops PERCENT % of the datagrams A sends to a
# UD QP other than QP1.  RoCEv2 is UDP to port 4791; the IPv4 header rxe
# builds has no options, so the BTH starts at byte 28 of the packet: its
# opcode there (0x64 SEND_ONLY, 0x65 SEND_ONLY_WITH_IMMEDIATE, UD's) and
# the destination QP in the low 24 bits of the word at 32.  QP1 carries
# the CM's MADs, which set up and tear down the RC connection: those
# pass, as does everything RC.  Undone by ud_drop_off, or after a test
# that failed before it, by kv_after_test.
ud_drop() {
	command -v tc > /dev/null || skip "no tc to drop datagrams with"
	tc qdisc add dev kvw0 root handle 1: prio bands 4 \
		priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 || return
	tc qdisc add dev kvw0 parent 1:4 handle 40: netem loss "$1%" &&
	tc filter add dev kvw0 parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff \
		match u32 0x00000001 0x00ffffff at 32 flowid 1:1 &&
	tc filter add dev kvw0 parent 1: protocol ip prio 2 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff \
		match u8 0x64 0xfe at 28 flowid 1:4 || { ud_drop_off; return 1; }
}

ud_drop_off() {
	tc qdisc del dev kvw0 root 2> /dev/null
	return 0
}

# A datagram that the wire drops is lost for good: send_bw -c UD counts
# it, the same on both sides, and validates every one that arrived by
# the iteration it carries, past the gaps.
test_send_bw_ud_lossy_ab() {
	local n=300 rc
	need_ud
	ud_drop 20 || fail "cannot set up the drops" || return
	perf_run ab send_bw -c UD -s 1024 -n $n --validate
	rc=$?
	ud_drop_off
	[ $rc = 0 ] || return
	json_check "$cli" 'd["status"] == "ok"' "d['iterations'] == $n" 'd["lost"] > 0' \
		-- "$srv" 'd["status"] == "ok"' 'd["validate"] is True' 'd["iterations"] > 0' \
		"d['iterations'] + d['lost'] == $n" || return
	kv_python "$cli" "$srv" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
assert c["lost"] == s["lost"], f"lost: client {c['lost']}, server {s['lost']}"
# 20 % of 300: far from 0 and from all.
assert 10 <= s["lost"] <= 150, f"{s['lost']} lost"
PY
}

# In send_lat a message lost ends the test: the client's wait for its
# answer runs into the step's time limit, ETIMEDOUT.  The server, which
# took nothing, fails when the client's connection goes.
test_send_lat_ud_lost_times_out_ab() {
	local d rc limit=$((3 * KV_TIME_SCALE)) t0
	need_ud
	kv_peer_bg srv "\"\$KVERBS\" send_lat -p $port --timeout $step_limit --json > srv.json 2> srv.err"
	d=$(kv_peer_dir srv)
	kv_peer -t 30 "wait_for 10 kv_listening 0.0.0.0 $port" ||
		fail "B's server is not listening: $(cat "$d/srv.err")" || return
	ud_drop 100 || fail "cannot set up the drops" || return
	t0=$SECONDS
	timeout -k 5 $((60 * KV_TIME_SCALE)) "$KVERBS" send_lat -c UD -s 64 -n 10 --validate \
		-p "$port" --timeout "$limit" --json "$KV_PEER_ADDR" > "$KV_TMP/cli.json" \
		2> "$KV_TMP/cli.err"
	rc=$?
	ud_drop_off
	kv_peer_wait srv 60
	[ $rc = 1 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	((SECONDS - t0 >= limit)) || fail "ETIMEDOUT after $((SECONDS - t0)) s, the limit is $limit" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "failed"' 'd["connection"] == "UD"' \
		'd["error"]["name"] == "ETIMEDOUT"' 'd["error"]["step"] == "recv"' \
		-- "$d/srv.json" 'd["status"] == "failed"' 'd["iterations"] == 0'
}

# -b: a connection each way, each byte checked by the side it lands on;
# the numbers are the sums of both directions.
perf_bidir() {
	srv_opts=(-b)
	perf_run "$1" "$2" -b -s "$3" -n "$(perf_iters "$4")" --validate "${@:5}" || return
	perf_agree || return
	json_check "$cli" "d['iterations'] == 2 * $(perf_iters "$4")" 'd["bidirectional"] is True' \
		-- "$srv" 'd["bidirectional"] is True'
}

test_write_bw_bidir_ab()	{ perf_bidir ab write_bw 4096 100; }
test_send_bw_bidir_ba()		{ perf_bidir ba send_bw 4096 100; }

# Post lists, one in four signaled and inline data, each way: the
# server's half posts as its client's hello says.
test_write_bw_post_modes_bidir_ab() {
	perf_bidir ab write_bw 64 400 -t 32 -l 8 -Q 4 -I 64 || return
	json_check "$cli" 'd["post_list"] == 8' 'd["cq_mod"] == 4' 'd["inline_size"] == 64' \
		'd["max_inline"] >= 64'
}

# Completions on ib_core's workqueue on both hosts' ends.
test_send_bw_workqueue_ba() {
	srv_opts=(--poll workqueue)
	perf_validated ba send_bw 4096 200 --poll workqueue || return
	json_check "$cli" 'd["cq"]["poll"] == "workqueue"' -- "$srv" 'd["cq"]["poll"] == "workqueue"'
}

# -q 4: four connections, four threads, every byte checked.
test_write_bw_4_qps_ab() {
	srv_opts=(-q 4)
	perf_run ab write_bw -q 4 -s 4096 -n "$(perf_iters 100)" --validate || return
	perf_agree || return
	json_check "$cli" "d['iterations'] == 4 * $(perf_iters 100)" 'd["qps"] == 4' -- "$srv" 'd["qps"] == 4'
}

test_read_bw_4_qps_ba() {
	srv_opts=(-q 4)
	perf_run ba read_bw -q 4 -s 4096 -n "$(perf_iters 50)" --validate || return
	perf_agree || return
	json_check "$cli" "d['iterations'] == 4 * $(perf_iters 50)" 'd["qps"] == 4'
}

# A shared receive queue on B: four QPs of A's send_bw take their SENDs
# from B's one SRQ, every byte checked.
test_send_bw_srq_4_qps_ab() {
	srv_opts=(-q 4 --srq)
	perf_run ab send_bw -q 4 -s 4096 -n "$(perf_iters 100)" --validate || return
	perf_agree || return
	json_check "$cli" "d['iterations'] == 4 * $(perf_iters 100)" 'd["qps"] == 4' \
		-- "$srv" 'd["srq"] is True' 'd["srq_shared"] == 4'
}

# WRITE with immediate data, B to A: each WRITE is seen at A only through
# its receive, whose immediate is checked.
test_write_bw_imm_ba() {
	perf_validated ba write_bw 4096 200 --imm || return
	json_check "$cli" 'd["imm"] is True' -- "$srv" 'd["imm"] is True'
}

# READ with the source's key invalidated by the peer, A reading from B:
# after each round A's SEND with invalidate retires B's key, and B posts
# no LOCAL_INV of its own; both count the same rounds.
test_read_bw_inv_ab() {
	perf_validated ab read_bw 4096 100 --inv || return
	json_check "$cli" 'd["inv"] is True' 'd["inv_sent"] > 0' 'd["inv_remote"] == 0' || return
	kv_python "$cli" "$srv" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:3])
if s["inv_remote"] != c["inv_sent"] or s["inv_sent"] != 0:
    sys.exit(f"A sent {c['inv_sent']} invalidations; B took {s['inv_remote']}, "
             f"sent {s['inv_sent']}")
PY
}

# Remote invalidation across the wire: two kverbs ends agree on it, and
# B's go-aheads invalidate each of A's advertised keys.
test_ping_inv_a_to_b() {
	ping_a_to_b 4096 10 || return
	json_check "$KV_TMP/cli.json" 'd["inv_remote"] == 20' 'd["inv_sent"] == 0'
}

# -a: every size from 2 bytes to the largest both modules take, here
# made 64 KiB on both hosts to keep it short.
perf_all_max=/sys/module/kverbs/parameters/max_msg_size
test_write_bw_all_sizes_ab() {
	local old rc sizes="[2 ** i for i in range(1, 17)]"
	old=$(cat $perf_all_max)
	kv_peer -t 30 "echo 65536 > $perf_all_max" || return
	echo 65536 > $perf_all_max
	# shellcheck disable=SC2034 # srv_opts: read by hosts-lib.sh's perf_run
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

# kverbs serve on A, three clients on B at once, three tests, each byte
# checked: each client gets its test, and serve reports each.  The
# clients run for a while (-D), long against their setup and teardown,
# and their reports, on B's clock, share an instant (kv_at_once); A's
# clock is another, and serve's calls began long before their clients'
# requests reached it over the pair directory.  Every end sleeps for
# its completions (-e): polling, on a guest's one vCPU, one client's
# call took twice its test's time and the three shared no instant.
test_serve_three_clients_from_b() {
	local c rc=0 d secs=$((3 * KV_TIME_SCALE))
	"$KVERBS" serve -p "$port" --timeout "$step_limit" --json -C 3 -j 3 -e \
		> "$KV_TMP/sv.json" 2> "$KV_TMP/sv.err" &
	# shellcheck disable=SC2034 # kv_pid_sv: read by the eval of kv_wait sv
	kv_pid_sv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" ||
		fail "serve is not listening: $(cat "$KV_TMP/sv.err")" || return
	kv_peer_bg c1 "\"\$KVERBS\" write_bw -p $port --timeout $step_limit --json -e -s 4096 -D $secs --validate \$KV_PEER_ADDR > c.json 2> c.err"
	kv_peer_bg c2 "\"\$KVERBS\" read_lat -p $port --timeout $step_limit --json -e -s 64 -D $secs --validate \$KV_PEER_ADDR > c.json 2> c.err"
	kv_peer_bg c3 "\"\$KVERBS\" send_bw -p $port --timeout $step_limit --json -e -s 1024 -D $secs --validate \$KV_PEER_ADDR > c.json 2> c.err"
	for c in c1 c2 c3; do
		d=$(kv_peer_dir $c)
		kv_peer_wait $c 150 || { echo "B's client $c failed: $(cat "$d/c.err" "$d/c.json")"; rc=1; }
	done
	kv_wait sv 30 || fail "serve exited $?: $(cat "$KV_TMP/sv.err" "$KV_TMP/sv.json")" || return
	[ $rc = 0 ] || return 1
	json_check "$(kv_peer_dir c1)/c.json" 'd["status"] == "ok"' 'd["iterations"] > 0' \
		-- "$(kv_peer_dir c2)/c.json" 'd["status"] == "ok"' 'd["iterations"] > 0' \
		'd["latency_usec"]["typical"] > 0' \
		-- "$(kv_peer_dir c3)/c.json" 'd["status"] == "ok"' 'd["iterations"] > 0' \
		'd["validate"] is True' || return
	check_lines "$KV_TMP/sv.json" 'len(L) == 3' \
		'all(d["status"] == "ok" and d["iterations"] > 0 for d in L)' \
		'sorted(d["test"] for d in L) == ["read_lat", "send_bw", "write_bw"]' \
		'sorted(d["size"] for d in L) == [64, 1024, 4096]' || return
	kv_at_once "$(kv_peer_dir c1)/c.json" "$(kv_peer_dir c2)/c.json" "$(kv_peer_dir c3)/c.json"
}

# The combinations (KV_MATRIX=0 leaves them out: lib.sh): each size and
# family of the ping one way only, rping's larger message, the other
# direction of a test run both ways, compare-and-swap beside fetch-and-add,
# and the sweep of every size.  make check's second pair runs without
# them: the first runs them between the same kernels the other way round.
# shellcheck disable=SC2034 # kv_matrix: read by lib.sh's ktap_main (KV_MATRIX=0)
kv_matrix="ping_b_to_a_26 ping_a_to_b_4095 ping_b_to_a_4096 ping_b_to_a_65535
	ping_a_to_b_1048576 ping_ipv6_b_to_a_4096 rping_b_kserver_a_65535
	kclient_a_rping_b_65535 atomic_bw_cmp_swap_ab send_bw_bidir_ba read_bw_4_qps_ba
	write_bw_all_sizes_ab"

ktap_main test_wire_and_mtu \
	test_ping_b_to_a_26 test_ping_a_to_b_26 test_ping_b_to_a_4095 test_ping_a_to_b_4095 \
	test_ping_b_to_a_4096 test_ping_a_to_b_4096 test_ping_b_to_a_65535 test_ping_a_to_b_65535 \
	test_ping_b_to_a_1048576 test_ping_a_to_b_1048576 \
	test_wire_ipv6 test_ping_ipv6_a_to_b_4096 test_ping_ipv6_b_to_a_4096 \
	test_ping_persistent_both_hosts \
	test_rping_b_kserver_a_64 test_rping_b_kserver_a_65535 \
	test_kclient_a_rping_b_64 test_kclient_a_rping_b_65535 test_kclient_a_larger_than_rping_b \
	test_send_bw_ab test_write_bw_ba test_read_bw_ab test_atomic_bw_ba test_atomic_bw_cmp_swap_ab \
	test_send_lat_ba test_write_lat_ab test_read_lat_ba test_atomic_lat_ab \
	test_write_bw_bidir_ab test_send_bw_bidir_ba test_write_bw_post_modes_bidir_ab \
	test_send_bw_workqueue_ba test_write_bw_4_qps_ab test_read_bw_4_qps_ba \
	test_send_bw_srq_4_qps_ab test_write_bw_imm_ba test_read_bw_inv_ab test_ping_inv_a_to_b \
	test_write_bw_all_sizes_ab test_serve_three_clients_from_b \
	test_ping_ud_a_to_b_1024 test_send_bw_ud_ab test_send_bw_ud_lossy_ab \
	test_send_lat_ud_lost_times_out_ab \
	test_peer_kmemleak test_peer_clean
