#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# --validate fails on bad data: a peer that keeps the protocol and
# corrupts one message (selftests/perf_peer.c; ping_peer.c for the
# ping) plays the other end of a kverbs test, on each data path kverbs
# validates, as client against a kverbs server and as server against a
# kverbs client.  For each path the same peer plays fair first (the
# control: kverbs reports the data validated); then it spoils byte X of
# message K, its iteration stamp (word 0 of the pattern, or the
# immediate data), or its length, and kverbs must report EBADMSG at the
# validate step naming exactly that iteration and offset, or where a
# message of the wrong length is no data message at all, EPROTO at the
# receive.  What kverbs cannot see (the source of its own WRITEs and
# SENDs, the memory a READ takes from it) is in Documentation/uapi.rst.
. "$(dirname "$0")/lib.sh"

port=18600
kv_before_test() {
	port=$((18600 + 10 * KV_TEST_NUM))
}
# Each step's limit, as perf.sh's.  A WRITE_LAT side that sees a wrong
# message waits this long for the rest of it to land before it says so
# (kverbs_perf_pp_check()): those runs take a shorter one.
step_limit=$((10 * KV_TIME_SCALE))
short_limit=$((2 * KV_TIME_SCALE))
peer_bin=$(dirname "$KVERBS")/perf_peer
ping_peer_bin=$(dirname "$KVERBS")/ping_peer
# Messages per run: a few rounds of the default 8 slots, short on any lane.
msgs=20

need_peer() {
	[ -x "$peer_bin" ] && [ -x "$ping_peer_bin" ] ||
		skip "perf_peer is not built (libibverbs-dev, librdmacm-dev)"
	return 0
}

no_imm_on_siw() {
	[ "$KV_TYPE" = siw ] && skip "siw has no immediate data"
	return 0
}

no_atomics_on_siw() {
	[ "$KV_TYPE" = siw ] && skip "siw has no atomic operations"
	return 0
}

no_ud_on_siw() {
	[ "$KV_TYPE" = siw ] && skip "iWARP (siw) has no UD"
	return 0
}

# kverbs_server NAME TEST LIMIT [options]: a kverbs perf server on $port
# in the background, --json to $KV_TMP/NAME.json; waits until it listens.
kverbs_server() {
	local name=$1 test=$2 limit=$3
	shift 3
	"$KVERBS" "$test" -p "$port" --timeout "$limit" --json "$@" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err" &
	eval "kv_pid_$name=$!"
	wait_for 10 kv_listening 0.0.0.0 "$port" ||
		fail "kverbs $test server did not listen on $port: $(cat "$KV_TMP/$name.err")"
}

# peer_server [perf_peer options]: perf_peer -s on $KV_ADDR:$port in the
# background, its output in $KV_TMP/peer.out; waits until it listens.
peer_server() {
	"$peer_bin" -a "$KV_ADDR" -p "$port" -s -w $((30 * KV_TIME_SCALE)) "$@" \
		>"$KV_TMP/peer.out" 2>&1 &
	# shellcheck disable=SC2034 # kv_pid_peer: read by the eval of kv_wait peer
	kv_pid_peer=$!
	wait_for 10 kv_listening "$KV_ADDR" "$port" perf_peer ||
		fail "perf_peer did not listen on $port: $(cat "$KV_TMP/peer.out")"
}

# on_server TEST "SERVER_OPTS" "PEER_OPTS" [CORRUPTION]: a kverbs TEST
# server with SERVER_OPTS (and --timeout LIMIT: $limit) and perf_peer as
# its client with PEER_OPTS, spoiling CORRUPTION; leaves the server's
# report in $KV_TMP/kv.json, sets srv_rc and peer_rc.
limit=$step_limit
on_server() {
	local test=$1 srv=$2 opts=$3 bad=${4:-}
	port=$((port + 1))
	# shellcheck disable=SC2086
	kverbs_server kv "$test" "$limit" $srv || return
	# shellcheck disable=SC2086
	timeout $((60 * KV_TIME_SCALE)) "$peer_bin" -a "$KV_ADDR" -p "$port" -t "$test" \
		-n "$msgs" -w $((30 * KV_TIME_SCALE)) $opts ${bad:+-x "$bad"} >"$KV_TMP/peer.out" 2>&1
	peer_rc=$?
	kv_wait kv 30 > "$KV_TMP/wait.out"
	srv_rc=$?
}

# on_client TEST "CLIENT_OPTS" "PEER_OPTS" [CORRUPTION]: perf_peer -s with
# PEER_OPTS spoiling CORRUPTION, and a kverbs TEST client with
# CLIENT_OPTS against it; the client's report in $KV_TMP/kv.json, its
# exit code in srv_rc (the side on test), the peer's in peer_rc.
on_client() {
	local test=$1 cli=$2 opts=$3 bad=${4:-}
	port=$((port + 1))
	# shellcheck disable=SC2086
	peer_server $opts ${bad:+-x "$bad"} || return
	# shellcheck disable=SC2086
	timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" "$test" -p "$port" \
		--timeout "$limit" --json -n "$msgs" $cli "$KV_ADDR" \
		>"$KV_TMP/kv.json" 2>"$KV_TMP/kv.err"
	srv_rc=$?
	kv_wait peer $((60 * KV_TIME_SCALE)) > "$KV_TMP/wait.out"
	peer_rc=$?
}

# kv_report: what kverbs' report says of the end: its status and error.
kv_report() {
	kv_python "$KV_TMP/kv.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print(f"status {d['status']}, {d['iterations']} iterations, error {json.dumps(d['error'])}")
except Exception as e:
    print(f"no report ({e}): {open(sys.argv[1]).read()[:500]}")
PY
}

# expect OUTCOME: what kverbs' report in $KV_TMP/kv.json must say, and
# perf_peer's exit code, after a run:
#   ok            the control: the test ran to its end, every message
#                 validated, and the peer did too (done)
#   bad:K:X       EBADMSG at the validate step, in iteration K at byte X
#   word:W        ... an atomic server: word W's final count wrong
#   imm:K:E:G     EBADMSG, message K's immediate data G where E was due
#   proto         EPROTO at the receive: no data message, nor control
# A peer that kverbs cut off, or that finished before kverbs said so,
# is right either way; one that failed on its own (2) is not.
expect() {
	local what=$1 k x g
	if [ "$what" = ok ]; then
		[ "$srv_rc" = 0 ] && [ "$peer_rc" = 0 ] ||
			fail "the control failed: kverbs exited $srv_rc ($(kv_report))," \
			     "perf_peer $peer_rc: $(cat "$KV_TMP/peer.out")" || return
		json_check "$KV_TMP/kv.json" 'd["status"] == "ok"' 'd["error"] is None' \
			'd["validate"] is True'
		return
	fi
	[ "$srv_rc" = 1 ] || fail "kverbs should have failed, exited $srv_rc: $(kv_report)" || return
	[ "$peer_rc" = 0 ] || [ "$peer_rc" = 1 ] ||
		fail "perf_peer failed on its own ($peer_rc): $(cat "$KV_TMP/peer.out")" || return
	# K, then X: an offset, or the immediate expected; G: the one got.
	IFS=: read -r what k x g <<< "$what"
	case $what in
	bad)
		json_check "$KV_TMP/kv.json" 'd["error"]["name"] == "EBADMSG"' \
			'd["error"]["step"] == "validate"' \
			"d['error']['mismatch_iteration'] == $k" "d['error']['mismatch_offset'] == $x" \
			"d['error']['message'] == 'data mismatch in iteration $k at byte $x'" ;;
	word)
		json_check "$KV_TMP/kv.json" 'd["error"]["name"] == "EBADMSG"' \
			'd["error"]["step"] == "validate"' \
			"d['error']['mismatch_iteration'] == $k" 'd["error"]["mismatch_offset"] == 0' ;;
	imm)
		json_check "$KV_TMP/kv.json" 'd["error"]["name"] == "EBADMSG"' \
			'd["error"]["step"] == "validate"' "d['error']['mismatch_iteration'] == $k" \
			"d['error']['imm_expected'] == $x" "d['error']['imm_got'] == $g" \
			'"mismatch_offset" not in d["error"]' ;;
	proto)
		json_check "$KV_TMP/kv.json" 'd["error"]["name"] == "EPROTO"' \
			'd["error"]["step"] == "recv"' ;;
	*)
		fail "expect: no outcome $what" ;;
	esac
}

# cases SIDE TEST "KVERBS_OPTS" "PEER_OPTS" [CORRUPTION=OUTCOME...]: the
# control, then each corruption, on_SIDE, each outcome as expect says.
cases() {
	local side=$1 test=$2 kv=$3 opts=$4 c
	shift 4
	"on_$side" "$test" "$kv" "$opts" || return
	expect ok || return
	for c; do
		"on_$side" "$test" "$kv" "$opts" "${c%%=*}" || return
		expect "${c#*=}" > "$KV_TMP/expect.out" ||
			fail "after perf_peer -x ${c%%=*}: $(cat "$KV_TMP/expect.out");" \
			     "kverbs: $(kv_report); perf_peer exited $peer_rc: $(cat "$KV_TMP/peer.out")" ||
			return
	done
}

# ---- kverbs server, perf_peer its client ----

# WRITE rounds, checked by the responder: a byte, the stamp, and a
# message cut short over zeros (the first round) and over the message
# of the round before (the third).
test_write_bw_server() {
	need_peer
	cases server write_bw "" "-f validate" byte:3:17=bad:3:17 stamp:5=bad:5:0 \
		len:2:40=bad:2:40 byte:17:63=bad:17:63 len:18:24=bad:18:24
}

# WRITEs with immediate data each take a receive and carry their
# iteration there, checked on every completion; their bytes by rounds.
test_write_bw_imm_server() {
	need_peer
	no_imm_on_siw
	cases server write_bw "" "-f validate,imm" byte:3:17=bad:3:17 stamp:5=bad:5:0 \
		imm:4=imm:4:4:5 len:2:40=bad:2:40
}

# Each round ends with the server's key invalidated by the peer's ROUND,
# and is checked before the server registers its buffer again.
test_write_bw_inv_server() {
	need_peer
	cases server write_bw "" "-f validate,inv" byte:3:17=bad:3:17 stamp:12=bad:12:0
}

# SENDs, each checked in its receive of the server's ring.  A message
# cut short is neither data nor control: EPROTO.
test_send_bw_server() {
	need_peer
	cases server send_bw "" "-f validate" byte:3:17=bad:3:17 stamp:5=bad:5:0 \
		byte:19:0=bad:19:0 len:2:40=proto
}

test_send_bw_imm_server() {
	need_peer
	no_imm_on_siw
	cases server send_bw "" "-f validate,imm" byte:3:17=bad:3:17 imm:4=imm:4:4:5
}

# --srq: each SEND checked in whichever receive of the shared queue it
# landed in, the peer sending a window at a time.
test_send_bw_srq_server() {
	need_peer
	cases server send_bw "--srq" "-f validate" byte:3:17=bad:3:17 stamp:5=bad:5:0 \
		len:2:40=proto
}

# The server of an atomic test checks each word's final count at DONE:
# the word operation K added one too many to is named (its index, here
# K, below the server's 8 words).
test_atomic_bw_server() {
	need_peer
	no_atomics_on_siw
	cases server atomic_bw "" "-S 8 -f validate" value:3=word:3
}

test_atomic_bw_cmp_swap_server() {
	need_peer
	no_atomics_on_siw
	cases server atomic_bw "" "-S 8 -f validate,cmp_swap" value:17=word:1
}

# The ping-pong's server checks each of the client's messages before it
# answers.  WRITE_LAT sees one by its last byte (so its server must
# busy-poll), then waits out the step limit for the rest to land before
# it says the rest is wrong.
test_write_lat_server() {
	need_peer
	limit=$short_limit
	cases server write_lat "--busy-poll" "-f validate" byte:3:17=bad:3:17 stamp:5=bad:5:0
}

test_write_lat_imm_server() {
	need_peer
	no_imm_on_siw
	cases server write_lat "--busy-poll" "-f validate,imm" byte:3:63=bad:3:63 imm:4=imm:4:4:5 \
		len:2:40=bad:2:40
}

test_send_lat_server() {
	need_peer
	cases server send_lat "" "-f validate" byte:3:17=bad:3:17 stamp:5=bad:5:0 \
		len:2:40=proto
}

test_send_lat_imm_server() {
	need_peer
	no_imm_on_siw
	cases server send_lat "" "-f validate,imm" byte:3:17=bad:3:17 imm:4=imm:4:4:5
}

test_send_lat_srq_server() {
	need_peer
	cases server send_lat "--srq" "-f validate" byte:3:17=bad:3:17 stamp:5=bad:5:0
}

# Datagrams: each names its iteration in its immediate data, and is
# checked against the pattern of the iteration it names: a stamp one too
# high is message 5 that does not hold 5's pattern.  A datagram of
# another length is refused as such.
test_send_bw_ud_server() {
	need_peer
	no_ud_on_siw
	cases server send_bw "" "-f validate,ud" byte:3:17=bad:3:17 stamp:6=bad:6:0 \
		imm:4=bad:5:0 len:2:40=proto
}

test_send_lat_ud_server() {
	need_peer
	no_ud_on_siw
	cases server send_lat "" "-f validate,ud" byte:3:17=bad:3:17 imm:4=bad:5:0
}

# The reverse direction: the server READs the peer's slots and checks
# them, as a client does.
test_read_bw_reverse_server() {
	need_peer
	cases server read_bw "" "-f validate,reverse" byte:3:17=bad:3:17 stamp:5=bad:5:0 \
		byte:12:63=bad:12:63
}

# ... through rdma_rw, and with the post modes the hello hands the server.
test_read_bw_rw_reverse_server() {
	need_peer
	cases server read_bw "" "-f validate,reverse,rw" byte:11:17=bad:11:17
}
test_read_bw_post_list_reverse_server() {
	need_peer
	cases server read_bw "" "-f validate,reverse -P 4,0,0" byte:11:17=bad:11:17
}
test_read_bw_cq_mod_reverse_server() {
	need_peer
	cases server read_bw "" "-f validate,reverse -P 0,4,0" byte:11:17=bad:11:17
}

# ... and does the atomic operations, checking what each fetched.
test_atomic_bw_reverse_server() {
	need_peer
	no_atomics_on_siw
	cases server atomic_bw "" "-S 8 -f validate,reverse" value:3=word:3
}

# ---- kverbs client, perf_peer its server ----

# ping_peer_run [K:X]: a validated 5-iteration ping of the kverbs client
# with selftests/ping_peer as its server, flipping byte X of what it
# WRITEs back in iteration K; the client's report in $KV_TMP/cli.json,
# its exit code in rc.
ping_peer_run() {
	port=$((port + 1))
	"$ping_peer_bin" -a "$KV_ADDR" -p "$port" -m ok ${1:+-x "$1"} > "$KV_TMP/peer.out" 2>&1 &
	# shellcheck disable=SC2034 # kv_pid_peer: read by the eval of kv_wait peer
	kv_pid_peer=$!
	wait_for 10 kv_listening "$KV_ADDR" "$port" ping_peer ||
		fail "ping_peer is not listening: $(cat "$KV_TMP/peer.out")" || return
	kv_client cli "$port" -C 5 -V --timeout "$step_limit"
	rc=$?
	kv_wait peer 60 > "$KV_TMP/wait.out" ||
		fail "ping_peer exited $?: $(cat "$KV_TMP/peer.out" "$KV_TMP/wait.out")"
}

# The ping's client checks what the server WRITEs back to its sink.
test_ping_client() {
	need_peer
	ping_peer_run || return
	[ $rc = 0 ] || fail "the control failed: $(cat "$KV_TMP/cli.json")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["iterations"] == 5' \
		'd["validate"] is True' || return
	ping_peer_run 3:17 || return
	[ $rc = 1 ] || fail "kverbs should have failed, exited $rc: $(cat "$KV_TMP/cli.json")" || return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "EBADMSG"' \
		'd["error"]["step"] == "validate"' 'd["error"]["mismatch_offset"] == 17' \
		'd["iterations"] == 3'
}

# READ rounds, checked by the client: a byte, the stamp, and a slot
# whose message the peer cut short over the message before it.
test_read_bw_client() {
	need_peer
	cases client read_bw "-t 8 --validate" "" byte:3:17=bad:3:17 stamp:5=bad:5:0 \
		byte:12:63=bad:12:63 len:10:32=bad:10:32
}

test_read_bw_rw_client() {
	need_peer
	cases client read_bw "-t 8 --validate --rw" "" byte:3:17=bad:3:17 stamp:13=bad:13:0
}

test_read_bw_post_list_client() {
	need_peer
	cases client read_bw "-t 8 -l 4 --validate" "" byte:11:17=bad:11:17
}

test_read_bw_cq_mod_client() {
	need_peer
	cases client read_bw "-t 8 -Q 8 --validate" "" byte:11:17=bad:11:17
}

# --inv: the peer's key is a memory window, invalidated by each ROUND.
test_read_bw_inv_client() {
	need_peer
	[ "$KV_TYPE" = siw ] && skip "siw has no memory windows"
	cases client read_bw "-t 8 --validate --inv" "" byte:11:17=bad:11:17
}

test_read_lat_client() {
	need_peer
	cases client read_lat "-s 64 --validate" "" byte:3:17=bad:3:17 stamp:5=bad:5:0
}

test_read_lat_rw_client() {
	need_peer
	cases client read_lat "-s 64 --validate --rw" "" byte:3:17=bad:3:17
}

# What each atomic operation fetched: the word operation K takes first
# held garbage.
test_atomic_bw_client() {
	need_peer
	no_atomics_on_siw
	cases client atomic_bw "--validate" "" value:3=bad:3:0
}

test_atomic_lat_client() {
	need_peer
	no_atomics_on_siw
	cases client atomic_lat "--validate -A CMP_AND_SWAP" "" value:5=bad:5:0
}

# The ping-pong's client checks each answer.
test_write_lat_client() {
	need_peer
	limit=$short_limit
	cases client write_lat "-s 64 --validate" "" byte:3:17=bad:3:17 stamp:5=bad:5:0
}

test_write_lat_imm_client() {
	need_peer
	no_imm_on_siw
	cases client write_lat "-s 64 --validate --imm" "" byte:3:63=bad:3:63 \
		imm:4=imm:4:4:5 len:2:40=bad:2:40
}

test_send_lat_client() {
	need_peer
	cases client send_lat "-s 64 --validate" "" byte:3:17=bad:3:17 stamp:5=bad:5:0 \
		len:2:40=proto
}

# Inline data changes how the client posts, not what it checks.
test_send_lat_inline_client() {
	need_peer
	cases client send_lat "-s 64 -I 64 --validate" "" byte:3:17=bad:3:17
}

test_send_lat_imm_client() {
	need_peer
	no_imm_on_siw
	cases client send_lat "-s 64 --validate --imm" "" byte:3:17=bad:3:17 imm:4=imm:4:4:5
}

test_send_lat_ud_client() {
	need_peer
	no_ud_on_siw
	cases client send_lat "-s 64 -c UD --validate" "" byte:3:17=bad:3:17 imm:4=bad:5:0 \
		len:2:40=proto
}

# -b: the client is also the responder of the server's half, and checks
# what the peer WRITEs or SENDs it there.
test_write_bw_bidir_client() {
	need_peer
	cases client write_bw "-s 64 -t 8 -b --validate" "-k 2" byte:3:17=bad:3:17 \
		stamp:5=bad:5:0 len:10:24=bad:10:24
}

test_write_bw_imm_bidir_client() {
	need_peer
	no_imm_on_siw
	cases client write_bw "-s 64 -t 8 -b --validate --imm" "-k 2" imm:4=imm:4:4:5
}

test_send_bw_bidir_client() {
	need_peer
	cases client send_bw "-s 64 -t 8 -b --validate" "-k 2" byte:3:17=bad:3:17 \
		stamp:5=bad:5:0 len:2:40=proto
}

# The post modes of the server's half travel in the hello: the peer
# ignores them, and the client's receive path is the same.
test_write_bw_post_modes_bidir_client() {
	need_peer
	cases client write_bw "-s 64 -t 8 -l 2 -Q 4 -I 64 -b --validate" "-k 2" byte:3:17=bad:3:17
}

# shellcheck disable=SC2034 # kv_matrix: read by lib.sh's ktap_main (KV_MATRIX=0)
kv_matrix="atomic_bw_cmp_swap_server read_bw_post_list_reverse_server
	read_bw_cq_mod_reverse_server read_bw_post_list_client read_bw_cq_mod_client
	read_lat_rw_client send_lat_inline_client write_bw_post_modes_bidir_client"

test_list=(test_write_bw_server test_write_bw_imm_server test_write_bw_inv_server
	test_send_bw_server test_send_bw_imm_server test_send_bw_srq_server
	test_atomic_bw_server test_atomic_bw_cmp_swap_server
	test_write_lat_server test_write_lat_imm_server test_send_lat_server
	test_send_lat_imm_server test_send_lat_srq_server
	test_send_bw_ud_server test_send_lat_ud_server
	test_read_bw_reverse_server test_read_bw_rw_reverse_server
	test_read_bw_post_list_reverse_server test_read_bw_cq_mod_reverse_server
	test_atomic_bw_reverse_server
	test_ping_client
	test_read_bw_client test_read_bw_rw_client test_read_bw_post_list_client
	test_read_bw_cq_mod_client test_read_bw_inv_client
	test_read_lat_client test_read_lat_rw_client
	test_atomic_bw_client test_atomic_lat_client
	test_write_lat_client test_write_lat_imm_client
	test_send_lat_client test_send_lat_inline_client test_send_lat_imm_client
	test_send_lat_ud_client
	test_write_bw_bidir_client test_write_bw_imm_bidir_client test_send_bw_bidir_client
	test_write_bw_post_modes_bidir_client)
ktap_main "${test_list[@]}"
