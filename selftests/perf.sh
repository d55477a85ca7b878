#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perftest-style bandwidth and latency tests, kernel to kernel over the
# guest's device: each test at two sizes with every byte (or every value
# fetched) validated, duration mode, the latency samples and statistics,
# what --json reports, hellos the server must refuse, and a client killed
# mid-test while its server lives on.
. "$(dirname "$0")/lib.sh"

# Each test in a subshell of its own, from its own ports: its counter
# goes up in the subshell only, so without this every test would start
# from the same one.
port=17600
kv_before_test() {
	port=$((17600 + 10 * KV_TEST_NUM))
}
# Each step's limit: the module's default, 10 s, times the lane's scale
# (the debug lane's sanitizers make a round of 127 validated messages
# take seconds).
step_limit=$((10 * KV_TIME_SCALE))

# perf_server NAME TEST [options]: a server on $port in the background,
# --json output in $KV_TMP/NAME.json, stderr in NAME.err; waits until it
# listens.  Sets kv_pid_NAME.
perf_server() {
	local name=$1 test=$2
	shift 2
	"$KVERBS" "$test" -p "$port" --timeout "$step_limit" --json "$@" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err" &
	eval "kv_pid_$name=$!"
	if ! wait_for 10 kv_listening 0.0.0.0 "$port"; then
		echo "server $name did not start listening on port $port"
		cat "$KV_TMP/$name.err"
		return 1
	fi
}

# perf_client NAME TEST [options]: the client against $KV_ADDR:$port,
# with a time limit; returns its exit code.
perf_client() {
	local name=$1 test=$2
	shift 2
	timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" "$test" -p "$port" \
		--timeout "$step_limit" --json "$@" "$KV_ADDR" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err"
}

# perf_pair TEST CLIENT_OPTS...: a fresh server, with the options in the
# array srv_opts, and a client; both must succeed and agree.  Prints
# nothing on success.
srv_opts=()
perf_pair() {
	local test=$1 rc t0=${EPOCHREALTIME/./}000 t1
	shift
	port=$((port + 1))
	perf_server srv "$test" "${srv_opts[@]}" || return 1
	perf_client cli "$test" "$@"
	rc=$?
	if ! kv_wait srv 30; then
		echo "server failed:"
		cat "$KV_TMP/srv.err" "$KV_TMP/srv.json"
		echo "client exited $rc:"
		cat "$KV_TMP/cli.err" "$KV_TMP/cli.json"
		return 1
	fi
	[ $rc = 0 ] || { echo "client exited $rc:"; cat "$KV_TMP/cli.err" "$KV_TMP/cli.json"; return 1; }
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["error"] is None' \
		'd["bytes"] == d["iterations"] * d["size"]' 'd["elapsed_ns"] > 0' \
		'd["avg_bytes_per_sec"] > 0' 'd["peak_bytes_per_sec"] >= d["avg_bytes_per_sec"]' || return 1
	json_check "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["error"] is None' || return 1
	# Each call's wall-clock span lies within this function's and
	# holds the test; the server's call began before the client's.
	t1=${EPOCHREALTIME/./}000
	json_check "$KV_TMP/cli.json" "$t0 <= d['start_ns']" "d['end_ns'] <= $t1" \
		'd["end_ns"] - d["start_ns"] >= d["elapsed_ns"]' \
		-- "$KV_TMP/srv.json" "$t0 <= d['start_ns']" "d['end_ns'] <= $t1" || return 1
	kv_python "$KV_TMP/cli.json" "$KV_TMP/srv.json" <<'PY' || return 1
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
assert s["start_ns"] <= c["start_ns"], f"server's call {s['start_ns']} after the client's {c['start_ns']}"
PY
	# The server reports what the client told it at the end.
	kv_python "$KV_TMP/cli.json" "$KV_TMP/srv.json" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
for k in ("test", "size", "tx_depth", "validate", "iterations", "bytes", "elapsed_ns"):
    if c[k] != s[k]:
        sys.exit(f"client and server disagree on {k}: {c[k]} != {s[k]}")
PY
}

# perf_iters N: N, divided by KV_PERF_DIV (the debug lane runs fewer
# messages, as it runs shorter pings; the names keep the full counts),
# and at least 10.
perf_iters() {
	local n=$(($1 / ${KV_PERF_DIV:-1}))
	echo $((n < 10 ? 10 : n))
}

# perf_validated TEST SIZE ITERS [OPTS...]: a validated run of exactly
# ITERS (see perf_iters).
perf_validated() {
	local n
	n=$(perf_iters "$3")
	perf_pair "$1" -s "$2" -n "$n" --validate "${@:4}" || return 1
	json_check "$KV_TMP/cli.json" "d['iterations'] == $n" "d['size'] == $2" \
		'd["validate"] is True' "d['test'] == '$1'"
}

test_write_bw_64_validate()	{ perf_validated write_bw 64 2000; }
test_write_bw_1M_validate()	{ perf_validated write_bw 1048576 100; }
test_read_bw_64_validate()	{ perf_validated read_bw 64 2000; }
test_read_bw_1M_validate()	{ perf_validated read_bw 1048576 100; }
test_send_bw_64_validate()	{ perf_validated send_bw 64 2000; }
test_send_bw_1M_validate()	{ perf_validated send_bw 1048576 100; }
# An odd size: messages straddle pages and words.
test_send_bw_4097_validate()	{ perf_validated send_bw 4097 500; }
# A control message's length: the client pads its control messages then,
# and the server must still tell them from the data.
test_send_bw_48_validate()	{ perf_validated send_bw 48 500; }

# lat_stats_ok N: the client's report has N samples, and the statistics
# over them are in order.  A sample is a round trip or half of one, and
# the round trips of one test do not overlap: together they fit in the
# test's time.  A sample whose start was taken after its end wraps
# around, and its microseconds pass the whole test's.
lat_stats_ok() {
	json_check "$KV_TMP/cli.json" "d['iterations'] == $1" "d['samples'] == $1" \
		'd["latency_usec"]["min"] > 0' \
		'(lambda l: l["min"] <= l["typical"] <= l["p99"] <= l["p99_9"] <= l["max"])(d["latency_usec"])' \
		'(lambda l: l["min"] <= l["avg"] <= l["max"] and l["stdev"] >= 0)(d["latency_usec"])' \
		'd["latency_usec"]["max"] * 1000 <= d["elapsed_ns"]' \
		'd["latency_usec"]["avg"] * d["iterations"] * 1000 <= d["elapsed_ns"]'
}

# perf_lat TEST ITERS CLIENT_OPTS...: a latency test (ITERS as for
# perf_validated); every operation leaves a sample (lat_stats_ok).
perf_lat() {
	local test=$1 n
	n=$(perf_iters "$2")
	shift 2
	perf_pair "$test" -n "$n" "$@" || return 1
	json_check "$KV_TMP/cli.json" "d['test'] == '$test'" 'd["tx_depth"] == 1' || return 1
	lat_stats_ok "$n"
}

test_read_lat_2_validate()	{ perf_lat read_lat 1000 -s 2 --validate; }
test_read_lat_64K_validate()	{ perf_lat read_lat 100 -s 65536 --validate; }
# The ping-pong tests: both sides check what the other sent.
# A write_lat server polls memory for its client: starting one is the
# choice, so --busy-poll is implied.
test_write_lat_2_validate() {
	perf_lat write_lat 1000 -s 2 --validate || return
	json_check "$KV_TMP/srv.json" 'd["busy_poll"] is True' 'd["events"] is False'
}
test_write_lat_4096_validate()	{ perf_lat write_lat 200 -s 4096 --validate; }
test_send_lat_2_validate()	{ perf_lat send_lat 1000 -s 2 --validate; }
test_send_lat_4096_validate()	{ perf_lat send_lat 200 -s 4096 --validate; }
# A control message's length: the server must still tell data from control.
test_send_lat_48_validate()	{ perf_lat send_lat 200 -s 48 --validate; }

# ---- immediate data (--imm): WRITE and SEND with immediate ----

# imm_refused TEST: over iWARP (siw), which has no immediate data, a
# client's --imm is refused at setup, before it connects or posts,
# saying why; the server still waits for a client.
imm_refused() {
	port=$((port + 1))
	perf_server srv "$1" || return 1
	perf_client cli "$1" -n 10 --imm
	[ $? = 1 ] || fail "$1 --imm client should fail: $(cat "$KV_TMP/cli.json")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "failed"' 'd["imm"] is True' \
		'd["error"]["name"] == "EOPNOTSUPP"' 'd["error"]["step"] == "setup"' \
		'"is iWARP, which has no immediate data" in d["error"]["message"]' || return
	kv_listening 0.0.0.0 "$port" || fail "the $1 server stopped listening" || return
	kill -INT "$kv_pid_srv"
	kv_wait srv 10 > "$KV_TMP/wait.out"
	[ $? != 124 ] || fail "the $1 server did not end after SIGINT: $(cat "$KV_TMP/wait.out")"
}

# perf_imm KIND TEST ARGS...: TEST with --imm and --validate (KIND bw:
# SIZE ITERS, as perf_validated; lat: ITERS CLIENT_OPTS, as perf_lat);
# both ends report the mode.  Over siw, the refusal instead.
perf_imm() {
	local kind=$1 test=$2
	shift 2
	if [ "$KV_TYPE" = siw ]; then
		imm_refused "$test"
		return
	fi
	if [ "$kind" = bw ]; then
		perf_validated "$test" "$@" --imm || return 1
	else
		perf_lat "$test" "$@" --validate --imm || return 1
	fi
	json_check "$KV_TMP/cli.json" 'd["imm"] is True' 'd["validate"] is True' \
		-- "$KV_TMP/srv.json" 'd["imm"] is True'
}

test_write_bw_imm_validate()	{ perf_imm bw write_bw 64 2000; }
test_send_bw_imm_validate()	{ perf_imm bw send_bw 64 2000; }
# A control message's length, where the WRITEs' receives take both.
test_write_bw_imm_48_validate()	{ perf_imm bw write_bw 48 500; }
test_write_lat_imm_validate()	{ perf_imm lat write_lat 1000 -s 2; }
test_send_lat_imm_validate()	{ perf_imm lat send_lat 1000 -s 2; }
# The reverse direction: the server WRITEs, the client checks.
test_write_bw_imm_bidir_validate() {
	[ "$KV_TYPE" = siw ] && skip "siw has no immediate data"
	perf_bidir write_bw 4096 1000 --imm || return
	json_check "$KV_TMP/cli.json" 'd["imm"] is True' -- "$KV_TMP/srv.json" 'd["imm"] is True'
}

# What the tracepoints show: the WRITEs posted as RDMA_WRITE_WITH_IMM,
# and each one's receive completing as RECV_RDMA_WITH_IMM with the
# iteration, in order, on the server's QP.
test_write_bw_imm_traced() {
	local tr=/sys/kernel/tracing rc
	[ "$KV_TYPE" = siw ] && skip "siw has no immediate data"
	trace_need
	trace_start kverbs_post_send kverbs_wc || fail "cannot set up tracing" || return
	perf_pair write_bw -s 64 -n 100 --imm
	rc=$?
	trace_stop kverbs_post_send kverbs_wc
	[ $rc = 0 ] || return
	# "... kverbs_post_send: cq.id=1 cid=9 qp=17 RDMA_WRITE_WITH_IMM len=64 ...",
	# "... kverbs_wc: cq.id=2 cid=5 qp=18 RECV SUCCESS len=64 vendor_err=0x0 RECV_RDMA_WITH_IMM imm=0x00000000"
	kv_python $tr/trace <<'PY'
import re, sys
posts = imms = 0
seen = []
for line in open(sys.argv[1]):
    if re.search(r"kverbs_post_send: .* RDMA_WRITE_WITH_IMM len=64 ", line):
        posts += 1
    m = re.search(r"kverbs_wc: .* RECV SUCCESS len=64 vendor_err=0x0 RECV_RDMA_WITH_IMM imm=0x([0-9a-f]{8})$", line.rstrip())
    if m:
        seen.append(int(m.group(1), 16))
    if re.search(r"kverbs_post_send: .* RDMA_WRITE len=", line):
        sys.exit(f"a plain RDMA_WRITE in an --imm test: {line.strip()}")
if posts != 100:
    sys.exit(f"expected 100 RDMA_WRITE_WITH_IMM posted, saw {posts}")
if seen != list(range(100)):
    sys.exit(f"expected immediates 0..99 in order, saw {seen[:10]}... ({len(seen)})")
PY
	rc=$?
	echo >$tr/trace
	[ $rc = 0 ] || fail "see above"
}

# perf_imm_peer TEST HELLO_I: perf_hello plays a requester of TEST's
# number with immediate data (-I HELLO_I) against a TEST server; returns
# the server's exit code, leaves its report in $KV_TMP/imm.json, and
# sets rc to perf_hello's exit code when the server succeeded.  A peer
# the server cut off waits out its own retries: it is not waited for.
perf_imm_peer() {
	local num srv hpid
	port=$((port + 1))
	case $1 in write_bw) num=1 ;; send_bw) num=3 ;; esac
	perf_server imm "$1" || return 1
	timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" \
		-a "$KV_ADDR" -p "$port" -t "$num" -n 10 -I "$2" > "$KV_TMP/hello.out" 2>&1 &
	hpid=$!
	kv_wait imm 20
	srv=$?
	[ $srv = 0 ] || kill "$hpid" 2>/dev/null
	wait "$hpid"
	rc=$?
	return $srv
}

# A peer whose message 5 carries 6: the server catches it on that very
# completion and says which iteration, what it expected and what it got.
# The control first: the same peer with every immediate right is served.
test_imm_wrong_caught() {
	local rc
	[ "$KV_TYPE" = siw ] && skip "siw has no immediate data"
	perf_imm_peer write_bw ok ||
		fail "server failed on right immediates: $(cat "$KV_TMP/imm.json")" || return
	[ $rc = 0 ] || fail "perf_hello: $(cat "$KV_TMP/hello.out")" || return
	json_check "$KV_TMP/imm.json" 'd["status"] == "ok"' 'd["iterations"] == 10' \
		'd["imm"] is True' || return
	perf_imm_peer write_bw 5
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/imm.json")" || return
	json_check "$KV_TMP/imm.json" 'd["error"]["name"] == "EBADMSG"' \
		'd["error"]["step"] == "validate"' 'd["error"]["mismatch_iteration"] == 5' \
		'd["error"]["imm_expected"] == 5' 'd["error"]["imm_got"] == 6' \
		'd["error"]["message"] == "immediate data mismatch in iteration 5: expected 0x00000005, got 0x00000006"'
}

# A SEND without immediate data among SENDs with: "got none".
test_imm_missing_caught() {
	local rc
	[ "$KV_TYPE" = siw ] && skip "siw has no immediate data"
	perf_imm_peer send_bw ok ||
		fail "server failed on right immediates: $(cat "$KV_TMP/imm.json")" || return
	[ $rc = 0 ] || fail "perf_hello: $(cat "$KV_TMP/hello.out")" || return
	json_check "$KV_TMP/imm.json" 'd["status"] == "ok"' 'd["iterations"] == 10' || return
	perf_imm_peer send_bw 3,none
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/imm.json")" || return
	json_check "$KV_TMP/imm.json" 'd["error"]["name"] == "EBADMSG"' \
		'd["error"]["mismatch_iteration"] == 3' 'd["error"]["imm_expected"] == 3' \
		'd["error"]["imm_got"] is None' \
		'd["error"]["message"] == "immediate data mismatch in iteration 3: expected 0x00000003, got none"'
}

# A hello that asks read_bw for immediate data: the server refuses the
# flag, which read_bw does not take (KVERBS_PERF_REJECT_RESERVED).
test_imm_hello_read_refused() {
	perf_bad_hello rdi "-t 2 -f 128" "rejected: reason 3 value 0 version 4" EPROTO
}

# A server on iWARP refuses a hello asking for immediate data with its
# own reason (13, KVERBS_PERF_REJECT_IMM); over rxe, the control, the
# same hello is accepted.
test_imm_hello_iwarp_refused() {
	local out
	if [ "$KV_TYPE" = siw ]; then
		perf_bad_hello iwi "-f 128" "rejected: reason 13 value 1 version 4" EOPNOTSUPP ||
			return 1
		json_check "$KV_TMP/iwi.json" \
			'"no immediate data on the server'"'"'s device" in d["error"]["message"]'
		return
	fi
	port=$((port + 1))
	perf_server iwi write_bw || return 1
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" -f 128)
	[ $? = 1 ] && [ "$out" = accepted ] || fail "perf_hello: '$out', expected 'accepted'" || return
	# perf_hello hangs up at once; the server ends as it may.
	kv_wait iwi 30
	json_check "$KV_TMP/iwi.json" 'd["error"] is None or d["error"]["step"] != "hello"'
}

# ---- remote invalidation (--inv): each round's key handed back ----

# inv_rounds N SLOTS: the rounds of N validated messages in SLOTS slots.
inv_rounds() { echo $((($1 + $2 - 1) / $2)); }

# inv_counts ROUNDS: the client sent ROUNDS SENDs with invalidate, the
# server saw as many of its keys invalidated, each side nothing else;
# the client's READs with invalidate (read tests over siw, which has
# them: rdma_cap_read_inv()) are one per round, else none.
inv_counts() {
	local r=$1 reads=0
	[ "$KV_TYPE" = siw ] && [ "${2:-}" = read ] && reads=$r
	json_check "$KV_TMP/cli.json" 'd["inv"] is True' "d['inv_sent'] == $r" \
		'd["inv_remote"] == 0' "d['read_inv'] == $reads" \
		-- "$KV_TMP/srv.json" 'd["inv"] is True' "d['inv_remote'] == $r" \
		'd["inv_sent"] == 0' 'd["read_inv"] == 0'
}

# 64-byte messages: the client's 128 WRs in flight make 128 slots a side.
test_write_bw_inv_validate() {
	local n
	n=$(perf_iters 2000)
	perf_validated write_bw 64 2000 --inv || return
	inv_counts "$(inv_rounds "$n" 128)"
}
test_read_bw_inv_validate() {
	local n
	n=$(perf_iters 2000)
	perf_validated read_bw 64 2000 --inv || return
	inv_counts "$(inv_rounds "$n" 128)" read
}
# 1 MiB messages: as many slots as one MR maps, 16 at most (rxe 2, siw
# 1): the two sides count the same rounds, at least one per 16 messages.
test_read_bw_1M_inv_validate() {
	local n min
	n=$(perf_iters 100)
	min=$(inv_rounds "$n" 16)
	perf_validated read_bw 1048576 100 --inv || return
	json_check "$KV_TMP/cli.json" "d['inv_sent'] >= $min" 'd["inv_remote"] == 0' || return
	kv_python "$KV_TMP/cli.json" "$KV_TMP/srv.json" "$KV_TYPE" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:3])
if s["inv_remote"] != c["inv_sent"] or s["inv_sent"] or s["read_inv"]:
    sys.exit(f"client sent {c['inv_sent']} invalidations, server saw {s['inv_remote']}")
if c["read_inv"] != (c["inv_sent"] if sys.argv[3] == "siw" else 0):
    sys.exit(f"{c['read_inv']} READs with invalidate in {c['inv_sent']} rounds")
PY
}
# One operation in flight: a round, and a fresh key, per READ.
test_read_lat_inv_validate() {
	local n
	n=$(perf_iters 200)
	perf_lat read_lat 200 -s 2 --validate --inv || return
	inv_counts "$n" read
}
# Both ways at once: the client invalidates the server's keys on one
# connection, the server the client's on the other.
test_write_bw_inv_bidir_validate() {
	local n r
	n=$(perf_iters 1000)
	perf_bidir write_bw 4096 1000 --inv || return
	r=$(inv_rounds "$n" 128)
	json_check "$KV_TMP/cli.json" "d['inv_sent'] == $r" "d['inv_remote'] == $r" \
		-- "$KV_TMP/srv.json" "d['inv_sent'] == $r" "d['inv_remote'] == $r"
}

# What the tracepoints show of read_bw --inv, 300 messages of 64 bytes:
# three rounds, each ended by a SEND_WITH_INV of the key the round's
# READs used, which the server's receive reports invalidated; the server
# registers its buffer again under another key each time and the next
# round READs with it; no LOCAL_INV is posted on either side.  Over siw
# each round's last READ is an RDMA_READ_WITH_INV and the client
# registers its sink again before the next round.
test_read_bw_inv_traced() {
	local tr=/sys/kernel/tracing rc
	trace_need
	trace_start kverbs_post_send kverbs_wc || fail "cannot set up tracing" || return
	perf_pair read_bw -s 64 -n 300 --validate --inv
	rc=$?
	trace_stop kverbs_post_send kverbs_wc
	[ $rc = 0 ] || return
	# "... kverbs_post_send: cq.id=1 cid=9 qp=17 SEND_WITH_INV len=48 key=0x00000304 raddr=0x0 signaled"
	# "... kverbs_wc: cq.id=2 cid=5 qp=18 RECV SUCCESS len=48 vendor_err=0x0 invalidated=0x00000304"
	kv_python $tr/trace "$KV_TYPE" <<'PY'
import re, sys
siw = sys.argv[2] == "siw"
read_keys, inv_sent, inv_seen, regs = [], [], [], []
read_inv = 0
for line in open(sys.argv[1]):
    if "LOCAL_INV" in line:
        sys.exit(f"a LOCAL_INV in an --inv test: {line.strip()}")
    m = re.search(r"kverbs_post_send: .* qp=(\d+) (RDMA_READ|RDMA_READ_WITH_INV) len=64 key=0x([0-9a-f]{8})", line)
    if m:
        if not read_keys or read_keys[-1] != m.group(3):
            read_keys.append(m.group(3))
        read_inv += m.group(2) == "RDMA_READ_WITH_INV"
    m = re.search(r"kverbs_post_send: .* qp=(\d+) SEND_WITH_INV len=48 key=0x([0-9a-f]{8})", line)
    if m:
        inv_sent.append(m.group(2))
    m = re.search(r"kverbs_wc: .* RECV SUCCESS len=48 vendor_err=0x0 invalidated=0x([0-9a-f]{8})$", line.rstrip())
    if m:
        inv_seen.append(m.group(1))
    m = re.search(r"kverbs_post_send: .* qp=(\d+) REG_MR len=\d+ key=0x([0-9a-f]{8})", line)
    if m:
        regs.append((m.group(1), m.group(2)))
if len(read_keys) != 3 or len(set(read_keys)) != 3:
    sys.exit(f"expected 3 rounds, each READing with a key of its own, saw {read_keys}")
if inv_sent != read_keys or inv_seen != read_keys:
    sys.exit(f"each round's key: READ with {read_keys}, SEND_WITH_INV of {inv_sent}, invalidated at the server {inv_seen}")
if read_inv != (3 if siw else 0):
    sys.exit(f"{read_inv} RDMA_READ_WITH_INV posted, expected {3 if siw else 0}")
server_qp = [q for q, k in regs if k == read_keys[0]]
if len(server_qp) != 1:
    sys.exit(f"the first round's key registered {len(server_qp)} times: {regs}")
server = [k for q, k in regs if q == server_qp[0]]
# The first key, one per round's end, and the last is left registered.
if server[:3] != read_keys or len(server) != 4 or len(set(server)) != 4:
    sys.exit(f"the server registered {server}, expected the round keys {read_keys} and one more")
client = [k for q, k in regs if q != server_qp[0]]
if len(client) != (3 if siw else 1) or len(set(client)) != len(client):
    sys.exit(f"the client registered its sink under {client}")
PY
	rc=$?
	echo >$tr/trace
	[ $rc = 0 ] || fail "see above"
}

# inv_peer MODE: perf_hello plays write_bw --validate --inv's requester
# (-N MODE, 20 messages: a round of 16, the server's slots, and one of
# 4) against a write_bw server; returns the server's exit code, leaves
# its report in $KV_TMP/inv.json and perf_hello's output in hello.out,
# and sets rc to perf_hello's exit code.  A peer the server cut off
# waits out its own retries: it is not waited for.
inv_peer() {
	local srv hpid
	port=$((port + 1))
	perf_server inv write_bw || return 1
	timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" \
		-a "$KV_ADDR" -p "$port" -n 20 -N "$1" > "$KV_TMP/hello.out" 2>&1 &
	hpid=$!
	kv_wait inv 20
	srv=$?
	[ $srv = 0 ] || kill "$hpid" 2>/dev/null
	wait "$hpid"
	rc=$?
	return $srv
}

# The control for the peers below: a fair one is served, its two rounds
# each ending with the key it used invalidated.
inv_peer_fair() {
	inv_peer ok || fail "server failed on a fair peer: $(cat "$KV_TMP/inv.json")" || return
	[ $rc = 0 ] || fail "perf_hello: $(cat "$KV_TMP/hello.out")" || return
	json_check "$KV_TMP/inv.json" 'd["status"] == "ok"' 'd["iterations"] == 20' \
		'd["inv"] is True' 'd["inv_remote"] == 2'
}

# A ROUND that does not invalidate: the server, which would register its
# buffer again over a valid key, fails the test instead.
test_inv_missing_caught() {
	inv_peer_fair || return
	inv_peer none
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/inv.json")" || return
	json_check "$KV_TMP/inv.json" 'd["error"]["name"] == "EPROTO"' \
		'd["error"]["step"] == "recv"' 'd["error"]["inv_expected"] > 0' \
		'd["error"]["inv_got"] is None' 'd["inv_remote"] == 0' \
		'd["error"]["message"] == "the peer'"'"'s message invalidated the wrong key: expected 0x%08x, got none" % d["error"]["inv_expected"]'
}

# An invalidation the protocol does not ask for, of the right key, on a
# PROGRESS: the server's buffer is gone from under it, and it says so.
test_inv_unasked_caught() {
	inv_peer_fair || return
	inv_peer unasked
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/inv.json")" || return
	json_check "$KV_TMP/inv.json" 'd["error"]["name"] == "EPROTO"' \
		'd["error"]["step"] == "recv"' 'd["error"]["inv_expected"] is None' \
		'd["error"]["inv_got"] > 0' \
		'd["error"]["message"] == "the peer'"'"'s message invalidated the wrong key: expected none, got 0x%08x" % d["error"]["inv_got"]'
}

# A ROUND that names the server's MR with another key byte.  rxe checks
# the whole key and fails the receive (remote invalid request); siw
# invalidates the MR the key's index names and reports the key it was
# given, which the server checks.  Either way the server fails.
test_inv_wrong_key_caught() {
	inv_peer_fair || return
	inv_peer wrong
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/inv.json")" || return
	if [ "$KV_TYPE" = siw ]; then
		json_check "$KV_TMP/inv.json" 'd["error"]["name"] == "EPROTO"' \
			'd["error"]["inv_got"] == d["error"]["inv_expected"] ^ 1'
	else
		json_check "$KV_TMP/inv.json" 'd["error"]["step"] == "recv"' \
			'd["error"]["wc_status_str"] == "remote invalid request error"'
	fi
}

# The key a round invalidated is dead: a WRITE with it after the server
# offered the next one is refused, rxe NAKing it with a remote access
# error, and the server's session fails.  siw checks only a remote key's
# index, not its key byte (siw_check_mem()): the same MR registered again
# under the next key byte takes the old key as well, so there is nothing
# honest to assert.
test_inv_old_key_refused() {
	[ "$KV_TYPE" = siw ] && skip "siw takes a key whose key byte is stale once its MR is registered again"
	inv_peer_fair || return
	inv_peer old
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/inv.json")" || return
	[ $rc = 0 ] && grep -qx "old key: remote access error" "$KV_TMP/hello.out" ||
		fail "perf_hello exit $rc: $(cat "$KV_TMP/hello.out")" || return
	json_check "$KV_TMP/inv.json" 'd["status"] == "failed"' 'd["inv_remote"] == 1'
}

# The text report's Invalidation line: the client's SENDs, the server's
# keys invalidated by its client, one per round of 128 (500 messages).
test_inv_text_output() {
	port=$((port + 1))
	perf_server srv write_bw || return 1
	timeout $((60 * KV_TIME_SCALE)) "$KVERBS" write_bw -p "$port" -s 64 -n 500 --validate --inv \
		"$KV_ADDR" > "$KV_TMP/t.out" 2>&1 || fail "client: $(cat "$KV_TMP/t.out")" || return
	kv_wait srv 30 || return 1
	grep -qx ' Invalidation   : ON: 0 of our keys by the peer, 4 SENDs and 0 READs with invalidate' \
		"$KV_TMP/t.out" || fail "unexpected output: $(cat "$KV_TMP/t.out")" || return
	json_check "$KV_TMP/srv.json" 'd["inv_remote"] == 4'
}

# What a server whose module predates --inv does with the flag: refuse
# it as reserved bits (KVERBS_PERF_REJECT_RESERVED), as this server does
# for a test that does not take it (send_bw) and without --validate.
test_inv_hello_refused() {
	perf_bad_hello inh "-t 3 -f 513" "rejected: reason 3 value 0 version 4" EPROTO || return
	perf_bad_hello inh "-f 512" "rejected: reason 3 value 0 version 4" EPROTO || return
	perf_bad_hello inh "-f 641" "rejected: reason 3 value 0 version 4" EPROTO
}

# ---- post lists (-l), CQ moderation (-Q), inline data (-I) ----

# Validated, each test that takes a post list: WRITE and SEND data the
# responder checks, READ data the requester checks, and atomics whose
# every fetched value is checked.  -l 8 of -t 32: four lists in flight.
test_post_list_validate() {
	local t
	for t in write_bw read_bw send_bw; do
		perf_validated "$t" 64 2000 -t 32 -l 8 || return
		json_check "$KV_TMP/cli.json" 'd["post_list"] == 8' 'd["cq_mod"] == 8' \
			-- "$KV_TMP/srv.json" 'd["post_list"] is None' || return
	done
	[ "$KV_TYPE" = siw ] && return
	perf_pair atomic_bw -n "$(perf_iters 2000)" --validate -t 32 -l 8 -Q 4 || return
	json_check "$KV_TMP/cli.json" 'd["post_list"] == 8' 'd["cq_mod"] == 4' \
		'd["validate"] is True'
}

# Every way to post at once: lists of 8, one in 4 signaled, 64-byte
# messages inline, the data validated; the debug lane's one case of them.
test_post_modes_write_bw_validate() {
	perf_validated write_bw 64 2000 -t 32 -l 8 -Q 4 -I 64 || return
	json_check "$KV_TMP/cli.json" 'd["post_list"] == 8' 'd["cq_mod"] == 4' \
		'd["inline_size"] == 64' 'd["max_inline"] >= 64'
}

# post_list_trace FILE: what the trace of a write_bw says, one line of
# JSON: each QP's post lists (kverbs_post_list's wrs=) and its RDMA
# WRITEs, signaled and inline.
post_list_trace() {
	kv_python "$1" <<'PY'
import json, re, sys
qps = {}
for line in open(sys.argv[1]):
    m = re.search(r"kverbs_post_list: cq\.id=\d+ cid=\d+ qp=(\d+) wrs=(\d+)$", line.rstrip())
    if m:
        qps.setdefault(m.group(1), {"lists": [], "writes": 0, "signaled": 0, "inline": 0})
        qps[m.group(1)]["lists"].append(int(m.group(2)))
        continue
    m = re.search(r"kverbs_post_send: cq\.id=\d+ cid=\d+ qp=(\d+) RDMA_WRITE len=\d+ \S+ \S+( signaled)?( inline)?$",
                  line.rstrip())
    if m:
        q = qps.setdefault(m.group(1), {"lists": [], "writes": 0, "signaled": 0, "inline": 0})
        q["writes"] += 1
        q["signaled"] += bool(m.group(2))
        q["inline"] += bool(m.group(3))
print(json.dumps(qps))
PY
}

# post_traced CMD...: CMD (perf_pair or perf_validated and their
# arguments), traced; what the trace says goes to $KV_TMP/pl.json
# (post_list_trace).
post_traced() {
	local tr=/sys/kernel/tracing rc
	trace_start kverbs_post_list kverbs_post_send || fail "cannot set up tracing" || return
	"$@"
	rc=$?
	trace_stop kverbs_post_list kverbs_post_send
	[ $rc = 0 ] || return
	post_list_trace $tr/trace > "$KV_TMP/pl.json"
	rc=$?
	echo >$tr/trace
	[ $rc = 0 ] || fail "cannot read the trace"
}

# The trace shows what -l and -Q did: 100 WRITEs in lists of 8 (and the
# 4 left over) handed to ib_post_send() at once, one in 8 signaled and
# the last; with -Q 10 alone, one at a time and one in 10 signaled; with
# -b, the server's requester chains as its client asked in the hello.
test_post_list_traced() {
	trace_need
	post_traced perf_pair write_bw -s 64 -n 100 -t 32 -l 8 || return
	json_check "$KV_TMP/pl.json" 'len(d) == 1' \
		'sorted(list(d.values())[0]["lists"]) == [4] + [8] * 12' \
		'list(d.values())[0]["writes"] == 100' 'list(d.values())[0]["signaled"] == 13' ||
		return
	post_traced perf_pair write_bw -s 64 -n 100 -t 32 -Q 10 || return
	json_check "$KV_TMP/pl.json" 'len(d) == 1' 'list(d.values())[0]["lists"] == []' \
		'list(d.values())[0]["writes"] == 100' 'list(d.values())[0]["signaled"] == 10' \
		-- "$KV_TMP/cli.json" 'd["post_list"] == 1' 'd["cq_mod"] == 10' || return
	post_traced perf_qps write_bw 1 -b -s 64 -n 100 -t 32 -l 8 --validate || return
	json_check "$KV_TMP/pl.json" 'len(d) == 2' \
		'all(sorted(q["lists"]) == [4] + [8] * 12 for q in d.values())' \
		'all(q["writes"] == 100 and q["signaled"] == 13 for q in d.values())'
}

# -I 64: every 64-byte WRITE goes inline, none of a size above it; the
# data still checks out, and the QP holds what was asked.
test_inline_write_bw_validate() {
	trace_need
	post_traced perf_validated write_bw 64 100 -I 64 || return
	json_check "$KV_TMP/pl.json" 'len(d) == 1' 'list(d.values())[0]["writes"] == 100' \
		'list(d.values())[0]["inline"] == 100' \
		-- "$KV_TMP/cli.json" 'd["inline_size"] == 64' 'd["max_inline"] >= 64' || return
	post_traced perf_validated write_bw 65 100 -I 64 || return
	json_check "$KV_TMP/pl.json" 'list(d.values())[0]["writes"] == 100' \
		'list(d.values())[0]["inline"] == 0'
}

# A ping-pong's server answers inline too, as its client's hello says:
# both QPs' SENDs of 32 bytes are inline.  And send_bw, validated.
test_inline_send_validate() {
	local tr=/sys/kernel/tracing rc
	trace_need
	trace_start kverbs_post_send || fail "cannot set up tracing" || return
	perf_lat send_lat 100 -s 32 --validate -I 32
	rc=$?
	trace_stop kverbs_post_send
	[ $rc = 0 ] || return
	kv_python $tr/trace <<'PY'
import re, sys
per_qp = {}
for line in open(sys.argv[1]):
    m = re.search(r"kverbs_post_send: .* qp=(\d+) SEND len=32 .*?( inline)?$", line.rstrip())
    if m:
        n = per_qp.setdefault(m.group(1), [0, 0])
        n[0] += 1
        n[1] += bool(m.group(2))
if len(per_qp) != 2 or any(n[0] < 100 or n[1] != n[0] for n in per_qp.values()):
    sys.exit(f"expected two QPs with 100 or more 32-byte SENDs, all inline: {per_qp}")
PY
	rc=$?
	echo >$tr/trace
	[ $rc = 0 ] || fail "see above" || return
	json_check "$KV_TMP/cli.json" 'd["inline_size"] == 32' 'd["max_inline"] >= 32' || return
	perf_validated send_bw 48 500 -I 64
}

# More inline data than the device's QPs hold (rxe 512, siw 80): the
# client is refused before it connects; a server asked for it by a
# ping-pong client's hello rejects the hello, saying it could not set up.
test_inline_too_large_refused() {
	local rc out
	port=$((port + 1))
	perf_client cli write_bw -n 10 -I 4096
	rc=$?
	[ $rc = 1 ] || fail "client -I 4096 exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "failed"' \
		'd["error"]["name"] == "EOPNOTSUPP"' 'd["error"]["step"] == "setup"' \
		'd["error"]["message"].startswith("the RDMA device '"$KV_DEV"' cannot post 4096 bytes inline (-I)")' ||
		return
	port=$((port + 1))
	perf_server inl send_lat || return 1
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" \
		-p "$port" -t 8 -P 0,0,4096)
	[ $? = 0 ] && [ "$out" = "rejected: reason 8 value 95 version 4" ] ||
		fail "perf_hello: '$out', expected the setup's EOPNOTSUPP" || return
	kv_wait inl 20
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/inl.json")" || return
	json_check "$KV_TMP/inl.json" 'd["error"]["name"] == "EOPNOTSUPP"'
}

# How a server posts travels in the hello only where it posts data: a
# post list without the reverse direction, or inline data for a test
# whose server only receives, is a hello it does not understand.
test_hello_post_modes_refused() {
	perf_bad_hello pl "-P 8,0,0" "rejected: reason 3 value 0 version 4" EPROTO || return
	perf_bad_hello cm "-P 0,4,0" "rejected: reason 3 value 0 version 4" EPROTO || return
	perf_bad_hello il "-P 0,0,64" "rejected: reason 3 value 0 version 4" EPROTO
}

# ---- rdma_rw (--rw): READ and WRITE through rdma_rw contexts ----

# rw_mr_all TEST: whether rdma_rw registers an MR for every context of
# TEST here: for a READ over iWARP (siw), whose sink must be registered
# for remote write; with ib_core's force_mr, everywhere (KV_RW_FORCE_MR,
# set by test_rw_force_mr_validate).  Else for none: rxe needs no MR.
rw_mr_all() {
	[ -n "${KV_RW_FORCE_MR:-}" ] && return 0
	[ "$KV_TYPE" = siw ] && [ "$1" != write_bw ]
}

# perf_rw KIND TEST SIZE ITERS [OPTS...]: TEST with --rw, validated as
# without it (KIND bw: perf_validated; lat: perf_lat); both reports say
# rdma_rw ran, one context per message, and how many registered an MR:
# every one or none, as rw_mr_all says.  The server's counts are those
# its client sent in DONE: test_rw_each_end_traced checks each end by
# its own trace.
perf_rw() {
	local kind=$1 test=$2 size=$3 iters=$4 mr=0
	shift 4
	case $kind in
	bw) perf_validated "$test" "$size" "$iters" --rw "$@" || return 1 ;;
	lat) perf_lat "$test" "$iters" -s "$size" --validate --rw "$@" || return 1 ;;
	esac
	rw_mr_all "$test" && mr=1
	json_check "$KV_TMP/cli.json" 'd["rw"] is True' 'd["rw_ctxs"] == d["iterations"]' \
		"d['rw_mr_ctxs'] == $mr * d['rw_ctxs']" \
		-- "$KV_TMP/srv.json" 'd["rw"] is True' 'd["rw_ctxs"] == d["iterations"]' \
		"d['rw_mr_ctxs'] == $mr * d['rw_ctxs']"
}

test_write_bw_rw_64_validate()		{ perf_rw bw write_bw 64 2000; }
# Many pages per message: several SGEs, or work requests, per context.
test_write_bw_rw_1M_validate()		{ perf_rw bw write_bw 1048576 100; }
# Messages that straddle pages and words: a context's first and last
# scatterlist entries are parts of pages.
test_write_bw_rw_4097_validate()	{ perf_rw bw write_bw 4097 500; }
test_read_bw_rw_64_validate()		{ perf_rw bw read_bw 64 2000; }
test_read_bw_rw_1M_validate()		{ perf_rw bw read_bw 1048576 100; }
test_read_lat_rw_2_validate()		{ perf_rw lat read_lat 2 1000; }
test_read_lat_rw_64K_validate()		{ perf_rw lat read_lat 65536 100; }

# -b: the server's requester runs rdma_rw too, and each end reports both
# directions' contexts.
test_read_bw_rw_bidir_validate() {
	local mr=0
	perf_bidir read_bw 65536 200 --rw || return
	rw_mr_all read_bw && mr=1
	json_check "$KV_TMP/cli.json" 'd["rw"] is True' 'd["rw_ctxs"] == d["iterations"]' \
		"d['rw_mr_ctxs'] == $mr * d['rw_ctxs']" \
		-- "$KV_TMP/srv.json" 'd["rw"] is True' 'd["rw_ctxs"] == d["iterations"]'
}

# A server's report cannot show that it ran rdma_rw: one way, its
# rw_ctxs repeats the count its client sent in DONE.  Each end's own
# trace can: one kverbs_rw_post per message it moved, by the client's
# process alone one way and by each end with -b, and every RDMA READ or
# WRITE it posted one of those contexts' work requests, none built by
# hand (without an MR, all of a context's nr_wrs are; with one, one per
# context beside its registration).
test_rw_each_end_traced() {
	local n
	trace_need
	n=$(perf_iters 200)
	rw_traced write_bw "$n" 0 -s 4096 -n "$n" || return
	rw_traced read_bw "$n" "$n" -b -s 65536 -n "$n"
}

# rw_traced TEST N_CLIENT N_SERVER [-b] [client options]: TEST with --rw,
# validated, its READ and WRITE posts and rdma_rw contexts traced by
# process: N_CLIENT contexts by the client, N_SERVER by the server.
rw_traced() {
	local tr=/sys/kernel/tracing test=$1 ncli=$2 nsrv=$3 mr=0 rc
	shift 3
	rw_mr_all "$test" && mr=1
	# IB_WR_RDMA_WRITE, IB_WR_RDMA_READ, IB_WR_RDMA_READ_WITH_INV.
	echo 1 >$tr/options/record-tgid &&
		trace_record 'opcode == 0 || opcode == 4 || opcode == 11' kverbs_post_send &&
		echo 0 >$tr/events/kverbs/kverbs_rw_post/filter ||
		fail "cannot set up tracing" || return
	perf_qps "$test" 1 "$@" --validate --rw
	rc=$?
	trace_stop kverbs_post_send kverbs_rw_post
	[ $rc = 0 ] || return 1
	# "kverbs-123 (  120) [001] ..... 1.2: kverbs_rw_post: ... wrs=1"
	kv_python "$tr/trace" "$kv_pid_srv" "$ncli" "$nsrv" "$mr" <<'PY'
import re, sys
trace = sys.argv[1]
srv, ncli, nsrv, mr = (int(a) for a in sys.argv[2:])
ctxs, wrs, posts = {}, {}, {}
for line in open(trace):
    m = re.search(r"\(\s*(\d+)\)\s+\[\d+\].* (kverbs_rw_post|kverbs_post_send): (.*)", line)
    if not m:
        continue
    p = int(m.group(1))
    if m.group(2) == "kverbs_rw_post":
        ctxs[p] = ctxs.get(p, 0) + 1
        wrs[p] = wrs.get(p, 0) + int(re.search(r" wrs=(\d+)", m.group(3)).group(1))
    else:
        posts[p] = posts.get(p, 0) + 1
print(f"# rdma_rw contexts {ctxs}, their work requests {wrs}, "
      f"READ and WRITE posts {posts}, by process (server {srv})")
clients = set(ctxs) | set(posts)
clients.discard(srv)
if len(clients) != 1:
    sys.exit(f"expected one client process, found {sorted(clients)}")
cli = clients.pop()
for who, p, want in (("client", cli, ncli), ("server", srv, nsrv)):
    got = ctxs.get(p, 0)
    if got != want:
        sys.exit(f"the {who} posted {got} rdma_rw contexts, expected {want}")
    data = posts.get(p, 0)
    rw = got if mr else wrs.get(p, 0)
    if data != rw:
        sys.exit(f"the {who} posted {data} RDMA READs and WRITEs, "
                 f"rdma_rw's contexts {rw}: some were built by hand")
PY
	rc=$?
	echo >$tr/trace
	[ $rc = 0 ] || fail "see above"
}

# rw_refused TEST MESSAGE OPTS...: a client of TEST with OPTS is refused
# by the module with EINVAL, before it connects, and says MESSAGE; the
# tool exits 2, as for any arguments the module refuses.
rw_refused() {
	local test=$1 msg=$2
	shift 2
	perf_client cli "$test" -n 10 "$@"
	[ $? = 2 ] || fail "$test $* should fail: $(cat "$KV_TMP/cli.json" "$KV_TMP/cli.err")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "failed"' 'd["error"]["name"] == "EINVAL"' \
		"d['error']['message'] == '''$msg'''" 'd["rw_ctxs"] == 0'
}

# --rw where rdma_rw has nothing to move, or with immediate data, a post
# list, CQ moderation or inline data, which rdma_rw's own work requests
# cannot have: EINVAL from the module.  The control first: the same
# client on a test that takes it is served.
test_rw_refused() {
	local t
	perf_pair write_bw -s 64 -n 10 --rw || return 1
	json_check "$KV_TMP/cli.json" 'd["rw"] is True' 'd["rw_ctxs"] == 10' || return
	for t in send_bw atomic_bw atomic_lat send_lat; do
		rw_refused "$t" "--rw is for write_bw, read_bw and read_lat: rdma_rw moves RDMA READs and WRITEs only" --rw ||
			return
	done
	rw_refused write_lat "--rw is for write_bw, read_bw and read_lat: write_lat's ping-pong WRITEs from and into memory its peer polls, which rdma_rw has no part in" --rw ||
		return
	rw_refused write_bw "--rw and --imm exclude each other: rdma_rw posts no immediate data" --rw --imm ||
		return
	for t in "-l 4" "-Q 4" "-I 64"; do
		# shellcheck disable=SC2086
		rw_refused write_bw "--rw excludes ${t% *}: rdma_rw builds, chains and signals each message's work requests itself" --rw $t ||
			return
	done
}

# A hello that asks send_bw for rdma_rw, or write_bw for it with
# immediate data, is refused as a server that predates the flag refuses
# any (KVERBS_PERF_REJECT_RESERVED).  The control: write_bw's is accepted.
test_rw_hello_refused() {
	local out
	perf_bad_hello rws "-t 3 -f 256" "rejected: reason 3 value 0 version 4" EPROTO || return
	perf_bad_hello rwi "-f 384" "rejected: reason 3 value 0 version 4" EPROTO || return
	port=$((port + 1))
	perf_server rwa write_bw || return 1
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" -f 256)
	[ $? = 1 ] && [ "$out" = accepted ] || fail "perf_hello: '$out', expected 'accepted'" || return
	kv_wait rwa 30
	json_check "$KV_TMP/rwa.json" 'd["error"] is None or d["error"]["step"] != "hello"'
}

# rw_unload MODULE: unload MODULE and, first, every module that uses it;
# prints each module unloaded, users first.  One that several use goes
# with the first of them.
rw_unload() {
	local h
	[ -d "/sys/module/$1" ] || return 0
	for h in /sys/module/"$1"/holders/*; do
		[ -e "$h" ] || continue
		rw_unload "${h##*/}" || return 1
	done
	rmmod "$1" || return 1
	echo "$1"
}

# rw_reload_rdma [PARAM...]: the RDMA stack unloaded and loaded again
# with ib_core's PARAMs, $KV_DEV on it, and kverbs: as the guest was set
# up (tools/vm/rdma-setup), with every module that used ib_core back.
rw_reload_rdma() {
	local mods m
	rdma link delete "$KV_DEV" || return 1
	rmmod kverbs || return 1
	mods=$(rw_unload ib_core) || { echo "cannot unload the RDMA stack"; return 1; }
	modprobe ib_core "$@" || return 1
	for m in $mods; do
		[ "$m" = ib_core ] || modprobe "$m" || return 1
	done
	kv_rxe_readd || return 1
	insmod "$KV_MODULE"
}

# ib_core's force_mr: rdma_rw registers an MR for every context, on any
# device, rxe too.  A debugging parameter that only a fresh ib_core takes
# (it cannot be written once loaded), so the test reloads the RDMA stack
# with it, runs the validated READ and WRITE, and reloads it without; a
# short run after that, the control, finds the direct path again where
# it was (rxe: no MR for any context).
test_rw_force_mr_validate() {
	local ret=0 mr=0
	[ -d /sys/module/ib_core/holders ] && [ -e /sys/module/ib_core/initstate ] ||
		skip "ib_core is built in: force_mr only as a boot parameter"
	rw_reload_rdma force_mr=1 || fail "cannot load ib_core with force_mr=1" || return
	KV_RW_FORCE_MR=1
	perf_rw bw write_bw 4096 500 && perf_rw bw read_bw 65536 100 || ret=1
	unset KV_RW_FORCE_MR
	rw_reload_rdma || fail "cannot load ib_core again without force_mr" || return
	[ $ret = 0 ] || return 1
	perf_pair write_bw -s 4096 -n 10 --rw || return 1
	rw_mr_all write_bw && mr=1
	json_check "$KV_TMP/cli.json" 'd["rw_ctxs"] == 10' "d['rw_mr_ctxs'] == $mr * 10"
}

# atomic_check TEST OPTS...: every fetched value and every word's final
# count is checked.  siw has no atomic operations: there the test skips,
# and atomic_refused_on_siw checks that kverbs says so.
atomic_check() {
	local test=$1
	shift
	[ "$KV_TYPE" = siw ] && skip "siw has no atomic operations"
	if [ "$test" = atomic_lat ]; then
		perf_lat "$test" 1000 --validate "$@" || return 1
	else
		perf_validated "$test" 8 5000 "$@" || return 1
	fi
	json_check "$KV_TMP/cli.json" 'd["size"] == 8' \
		"d['atomic_type'] == '$([ "$*" = "-A CMP_AND_SWAP" ] && echo CMP_AND_SWAP || echo FETCH_AND_ADD)'"
}

# On a device without atomic operations each atomic test is refused at
# setup, before it connects, saying why: the server still waits for a
# client.  (On rxe the atomic tests run.)
test_atomic_refused_on_siw() {
	local test
	[ "$KV_TYPE" = siw ] || skip "$KV_TYPE has atomic operations: the atomic tests run"
	for test in atomic_lat atomic_bw; do
		port=$((port + 1))
		perf_server srv "$test" || return 1
		perf_client cli "$test" -n 10
		[ $? = 1 ] || fail "$test client should fail: $(cat "$KV_TMP/cli.json")" || return
		json_check "$KV_TMP/cli.json" 'd["status"] == "failed"' \
			'd["error"]["name"] == "EOPNOTSUPP"' 'd["error"]["step"] == "setup"' \
			'"does not support atomic operations" in d["error"]["message"]' || return
		kv_listening 0.0.0.0 "$port" || fail "the $test server stopped listening" || return
		kill -INT "$kv_pid_srv"
		kv_wait srv 10 > "$KV_TMP/wait.out"
		[ $? != 124 ] ||
			fail "the $test server did not end after SIGINT: $(cat "$KV_TMP/wait.out")" || return
	done
}

test_atomic_lat_fetch_add()	{ atomic_check atomic_lat; }
test_atomic_lat_cmp_swap()	{ atomic_check atomic_lat -A CMP_AND_SWAP; }
test_atomic_bw_fetch_add()	{ atomic_check atomic_bw; }
test_atomic_bw_cmp_swap()	{ atomic_check atomic_bw -A CMP_AND_SWAP; }

# perf_lat_duration TEST: a latency test in duration mode keeps a sample
# of every operation (every round trip of a ping-pong).
perf_lat_duration() {
	perf_pair "$1" -s 64 -D 1 || return 1
	json_check "$KV_TMP/cli.json" 'd["iterations"] > 0' 'd["samples"] == d["iterations"]' \
		'd["elapsed_ns"] >= 1000000000' 'd.get("samples_full") is not True'
}

test_read_lat_duration()	{ perf_lat_duration read_lat; }
test_write_lat_duration()	{ perf_lat_duration write_lat; }
test_send_lat_duration()	{ perf_lat_duration send_lat; }

# perftest's latency columns.
test_lat_text_output() {
	port=$((port + 1))
	perf_server srv read_lat || return 1
	timeout $((60 * KV_TIME_SCALE)) "$KVERBS" read_lat -p "$port" -n 200 "$KV_ADDR" > "$KV_TMP/t.out" 2>&1 ||
		fail "client: $(cat "$KV_TMP/t.out")" || return
	kv_wait srv 30 || return 1
	grep -q "^ Device *: $KV_DEV\$" "$KV_TMP/t.out" &&
	grep -Eq '^ #bytes +#iterations +t_min\[usec\] +t_max\[usec\] +t_typical\[usec\] +t_avg\[usec\] +t_stdev\[usec\] +99% percentile\[usec\] +99\.9% percentile\[usec\] *$' "$KV_TMP/t.out" &&
	grep -Eq '^ 2[[:space:]]+200([[:space:]]+[0-9]+\.[0-9]{2}){7}[[:space:]]*$' "$KV_TMP/t.out" ||
		fail "unexpected output: $(cat "$KV_TMP/t.out")"
}

# -D: the client runs for that long, and both ends report it.  A run
# five times as long did not stop at its duration: a bound that
# KV_TIME_SCALE stretches, as it does every limit here, not a measure.
test_write_bw_duration() {
	perf_pair write_bw -s 4096 -D 2 || return 1
	json_check "$KV_TMP/cli.json" 'd["duration_ns"] == 2000000000' 'd["count"] == 0' \
		'd["elapsed_ns"] >= 2000000000' "d['elapsed_ns'] < $((10 * KV_TIME_SCALE)) * 10**9" \
		'd["iterations"] > 0'
}

# Control messages back to back (kernel/perf/perf.h, KVERBS_PERF_CTRL_CREDITS).
# A run twice as long as the step timeout makes the requester send a
# PROGRESS every quarter of it, each followed by a ROUND or the DONE as
# soon as it completes; over iWARP, with no receiver-not-ready retry, a
# responder with no receive posted for that one loses the connection.
# One test: the write, read and atomic tests share their responder's
# control path, and a validated read_bw takes all of it (ROUND, PROGRESS,
# DONE); its time scales with KV_TIME_SCALE, as the step timeout must.
test_read_bw_progress_validate() {
	local t=$((2 * KV_TIME_SCALE))
	perf_pair read_bw -s 64 -D $((2 * t)) --timeout "$t" --validate
}
# The same from a peer that posts PROGRESS and the next message at once,
# twice (selftests/perf_hello -B): the server keeps both receives posted.
test_ctrl_back_to_back() {
	local out
	port=$((port + 1))
	perf_server b2b read_bw || return 1
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" -B)
	[ $? = 0 ] && [ "$out" = "done sent" ] || fail "perf_hello: '$out'" || return
	kv_wait b2b 20 || fail "server exited $?: $(cat "$KV_TMP/b2b.json" "$KV_TMP/b2b.err")" || return
	json_check "$KV_TMP/b2b.json" 'd["status"] == "ok"' 'd["iterations"] == 1' \
		'd["validate"] is True'
}

test_send_bw_duration_validate() {
	perf_pair send_bw -s 1000 -D 1 --validate
}

# Every field a script may rely on, with the right types.
test_json_fields() {
	perf_pair read_bw -s 8192 -n 300 -t 16 --report_gbits || return 1
	json_check "$KV_TMP/cli.json" 'd["test"] == "read_bw"' 'd["role"] == "client"' \
		'd["device"] == "'"$KV_DEV"'"' 'd["transport"] in ("InfiniBand", "iWARP")' \
		'd["link_layer"] == "Ethernet"' 'd["mtu"] in (256, 512, 1024, 2048, 4096)' \
		'd["size"] == 8192' 'd["tx_depth"] == 16' 'd["count"] == 300' \
		'd["iterations"] == 300' 'd["bytes"] == 300 * 8192' 'd["validate"] is False' \
		'd["bw_unit"] == "Gb/sec"' \
		'abs(d["bw_average"] - d["avg_bytes_per_sec"] * 8 / 1e9) < 1e-3 * max(1, d["bw_average"])' \
		'd["msg_rate_mpps"] > 0' 'isinstance(d["elapsed_ns"], int)' || return 1
	json_check "$KV_TMP/srv.json" 'd["role"] == "server"' 'd["test"] == "read_bw"'
}

# Over IPv6: kverbs serve on '::', a validated write_bw to its IPv6 address.
test_write_bw_ipv6_validate() {
	[ -n "${KV_ADDR6:-}" ] || skip "no IPv6 address on kv0"
	local n
	n=$(perf_iters 500)
	port=$((port + 1))
	"$KVERBS" serve -p "$port" -C 1 -j 1 --timeout "$step_limit" --json :: \
		>"$KV_TMP/srv.json" 2>"$KV_TMP/srv.err" &
	kv_pid_srv=$!
	wait_for 10 kv_listening :: "$port" || fail "serve not listening on [::]:$port" || return
	timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" write_bw -p "$port" \
		--timeout "$step_limit" --json -s 4096 -n "$n" --validate "$KV_ADDR6" \
		>"$KV_TMP/cli.json" 2>"$KV_TMP/cli.err" ||
		fail "client: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' "d['iterations'] == $n" \
		"d['address'] == '$KV_ADDR6'" -- "$KV_TMP/srv.json" 'd["status"] == "ok"' \
		'd["address"] == "::"'
}

# perf_qps TEST QPS [-b] CLIENT_OPTS...: -q QPS (and -b) on both sides,
# the server's other options in srv_opts; the numbers are the sum over
# the connections, and both sides agree on them.
perf_qps() {
	local test=$1 qps=$2 bidir=False qps_srv=("${srv_opts[@]}") rc
	shift 2
	[ "$1" = -b ] && bidir=True qps_srv+=(-b)
	port=$((port + 1))
	perf_server srv "$test" -q "$qps" "${qps_srv[@]}" || return 1
	perf_client cli "$test" -q "$qps" "$@"
	rc=$?
	kv_wait srv 60 || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	[ $rc = 0 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' "d['qps'] == $qps" \
		'd["bytes"] == d["iterations"] * d["size"]' 'd["validate"] is True' \
		"d['bidirectional'] is $bidir" \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' "d['qps'] == $qps" \
		"d['bidirectional'] is $bidir" || return
	kv_python "$KV_TMP/cli.json" "$KV_TMP/srv.json" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
for k in ("test", "size", "iterations", "bytes", "elapsed_ns"):
    if c[k] != s[k]:
        sys.exit(f"client and server disagree on {k}: {c[k]} != {s[k]}")
PY
}

# -q 4: four connections, four threads, every byte checked.
test_write_bw_4_qps_validate() {
	local n
	n=$(perf_iters 1000)
	perf_qps write_bw 4 -s 4096 -n "$n" --validate || return
	json_check "$KV_TMP/cli.json" "d['iterations'] == 4 * $n"
}

test_send_bw_2_qps_duration_validate() {
	perf_qps send_bw 2 -s 1024 -D 1 --validate
}

# perf_bidir TEST SIZE ITERS [CLIENT_OPTS...]
# -b: one connection each way, every byte checked by the side it lands
# on; the numbers are the sum of both directions.
perf_bidir() {
	local test=$1 size=$2 n
	n=$(perf_iters "$3")
	perf_qps "$test" 1 -b -s "$size" -n "$n" --validate "${@:4}" || return
	json_check "$KV_TMP/cli.json" "d['iterations'] == 2 * $n" "d['size'] == $size"
}

test_write_bw_bidir_validate()	{ perf_bidir write_bw 4096 1000; }
test_read_bw_bidir_validate()	{ perf_bidir read_bw 65536 200; }
test_send_bw_bidir_validate()	{ perf_bidir send_bw 1024 1000; }

test_atomic_bw_bidir_validate() {
	[ "$KV_TYPE" = siw ] && skip "siw has no atomic operations"
	perf_bidir atomic_bw 8 2000
}

test_write_bw_bidir_2_qps_validate() {
	local n
	n=$(perf_iters 500)
	perf_qps write_bw 2 -b -s 4096 -n "$n" --validate || return
	json_check "$KV_TMP/cli.json" "d['iterations'] == 4 * $n"
}

# -b really sends both ways: the kverbs_post_send tracepoint, with each
# event's process, shows RDMA WRITEs posted by the client and by the
# server, as many by each as the test ran one way.
test_bidir_both_ways_traced() {
	local tr=/sys/kernel/tracing n
	trace_need
	n=$(perf_iters 1000)
	# tools/vm/run's guests record tgids from boot.  Where it was off,
	# it stays on: the last event's disabling then unhooks the scheduler
	# (see tools/vm/run), not this option.
	echo 1 >$tr/options/record-tgid &&
		trace_record 'opcode == 0' kverbs_post_send || fail "cannot set up tracing" || return
	perf_qps write_bw 1 -b -s 64 -n "$n" -t 16 --validate
	local rc=$?
	trace_stop kverbs_post_send
	[ $rc = 0 ] || return 1
	# "kverbs-123 (  120) [001] ..... 1.2: kverbs_post_send: qp=17 RDMA_WRITE ..."
	kv_python "$tr/trace" "$kv_pid_srv" "$n" <<'PY'
import re, sys
trace, srv, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
by = {}
for line in open(trace):
    m = re.search(r"\(\s*(\d+)\)\s+\[\d+\].*kverbs_post_send: .*RDMA_WRITE ", line)
    if m:
        by[int(m.group(1))] = by.get(int(m.group(1)), 0) + 1
others = {p: c for p, c in by.items() if p != srv}
print(f"# RDMA WRITEs posted, by process: {by} (server {srv})")
if by.get(srv) != n or len(others) != 1 or list(others.values())[0] != n:
    sys.exit(f"expected {n} by the server and {n} by one client")
PY
	rc=$?
	echo >$tr/trace
	[ $rc = 0 ] || fail "see above"
}

# -e: completions by interrupt, handled in softirq context, beside the
# test's thread.  A client's own choice; a server sleeps unless it runs
# with --busy-poll, and then still as the server of a WRITE, READ or
# atomic test.  Every byte checked, and both sides say which way they
# waited.
# perf_events CLIENT_E SERVER_OPT TESTFN TEST ARGS...: CLIENT_E True where
# the client has -e; SERVER_OPT the server's -e, --busy-poll or "".
perf_events() {
	local cli=$1 srv=$2 srv_sleeps=True
	shift 2
	# One word or none: the split is intended.
	# shellcheck disable=SC2206
	local srv_opts=($srv)
	case $srv:$2 in
	--busy-poll:send_bw|--busy-poll:send_lat) srv_sleeps=False ;;
	esac
	"$@" || return
	json_check "$KV_TMP/cli.json" "d['events'] is $cli" -- "$KV_TMP/srv.json" \
		"d['events'] is $srv_sleeps" "d['busy_poll'] is $([ "$srv" = --busy-poll ] &&
			echo True || echo False)"
}

test_write_bw_events_validate()	{ perf_events True -e perf_validated write_bw 4096 1000 -e; }
test_read_bw_events_validate()	{ perf_events True "" perf_validated read_bw 65536 200 -e; }
test_read_bw_busy_poll_validate()	{ perf_events False --busy-poll perf_validated read_bw 65536 200; }
test_send_bw_events_validate()	{ perf_events False "" perf_validated send_bw 1024 1000; }
test_send_bw_busy_poll_validate()	{ perf_events True --busy-poll perf_validated send_bw 1024 1000 -e; }
test_atomic_bw_events_validate() {
	[ "$KV_TYPE" = siw ] && skip "siw has no atomic operations"
	perf_events True -e atomic_check atomic_bw -e
}
test_read_lat_events()		{ perf_events True -e perf_lat read_lat 1000 -s 64 -e; }
test_send_lat_events_validate()	{ perf_events True "" perf_lat send_lat 500 -s 64 --validate -e; }
test_send_lat_busy_poll_validate() {
	perf_events False --busy-poll perf_lat send_lat 500 -s 64 --validate
}
test_atomic_lat_events() {
	[ "$KV_TYPE" = siw ] && skip "siw has no atomic operations"
	perf_events True "" atomic_check atomic_lat -e
}
# A write_lat server sees each WRITE by polling memory: kverbs serve
# serves it only with --busy-poll, and says it polled; neither side of
# write_lat takes -e.
test_write_lat_serve_busy_poll() {
	local n rc
	n=$(perf_iters 500)
	port=$((port + 1))
	perf_server srv serve -C 1 --busy-poll || return 1
	perf_client cli write_lat -s 64 -n "$n" --validate
	rc=$?
	kv_wait srv 30 || fail "serve: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	[ $rc = 0 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' "d['iterations'] == $n" \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["test"] == "write_lat"' \
		'd["events"] is False' 'd["busy_poll"] is True' "d['iterations'] == $n"
}
# The same client, to kverbs serve without --busy-poll (with -e, as an
# older command line has it, or without): refused in the hello, and both
# sides say why.  The write_lat command's own server implies --busy-poll.
write_lat_serve_refused() {
	local rc
	port=$((port + 1))
	perf_server srv serve -C 1 "$@" || return 1
	perf_client cli write_lat -s 64 -n 10
	rc=$?
	kv_wait srv 30
	[ $? = 1 ] || fail "serve should fail: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	[ $rc = 1 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "ECONNREFUSED"' \
		'd["error"]["step"] == "hello"' \
		'd["error"]["reject_reason"] == "test needs a busy-polling server"' \
		'd["error"]["reject_value"] == 7' \
		'd["error"]["message"] == "the server refused the request: test needs a busy-polling server (the server runs without --busy-poll: start it with --busy-poll)"' \
		-- "$KV_TMP/srv.json" 'd["error"]["name"] == "EOPNOTSUPP"' 'd["error"]["step"] == "hello"' \
		'd["busy_poll"] is False' \
		'd["error"]["message"] == "refused the client'"'"'s request: test needs a busy-polling server (this server runs without --busy-poll)"'
}
test_write_lat_serve_refused()		{ write_lat_serve_refused; }
test_write_lat_serve_events_refused()	{ write_lat_serve_refused -e; }

# The tracepoint on each work completion, with the context it ran in
# ('s' in the trace's flags: softirq), and on each receive posted, with
# the process that posted it: each side posts its QP's first receives
# from its own thread, before it connects, so they say whose QP it is.
# A side that busy-polls runs its completions in its test's thread; one
# that sleeps (-e, a server without --busy-poll) has them in softirq
# context; with --poll workqueue or unbound, in a kworker of ib_core's
# bound workqueue ("kworker/1:1H") or of its unbound one
# ("kworker/u5:0H").
# events_context TEST SERVER_OPT STEP [-b] [-e]: runs TEST with a server
# given SERVER_OPT (one word or none; -b goes to both sides) and prints
# "client=CONTEXTS server=CONTEXTS" for the completions of STEP (as the
# trace names it: RDMA_WRITE, RECV; "" for all).
events_context() {
	# shellcheck disable=SC2206
	local tr=/sys/kernel/tracing rc test=$1 srv_opts=($2) step=$3
	shift 3
	echo 1 >$tr/options/record-tgid &&
		trace_start kverbs_post_recv kverbs_wc || { echo "cannot set up tracing"; return 1; }
	perf_qps "$test" 1 "$@" -s 64 -n "$(perf_iters 1000)" --validate >&2
	rc=$?
	trace_stop kverbs_post_recv kverbs_wc
	[ $rc = 0 ] || return
	# "kverbs-123 (  120) [001] ..s1. 1.2: kverbs_wc: cq.id=1 cid=9 qp=17 RDMA_WRITE SUCCESS ..."
	kv_python $tr/trace "$kv_pid_srv" "$step" <<'PY'
import re, sys
trace, srv, step = sys.argv[1], int(sys.argv[2]), sys.argv[3]
owner, wcs = {}, []
for line in open(trace):
    m = re.search(r"^\s*(.+?)-\d+\s+\(\s*(\d+)\)\s+\[\d+\]\s+(\S+)\s+[\d.]+: (kverbs_\w+): cq\.id=\d+ cid=\d+ qp=(\d+) (\S+)", line)
    if not m:
        continue
    comm, tgid, flags, event, qp, what = m.groups()
    if event == "kverbs_post_recv":
        owner.setdefault(qp, int(tgid))
    elif not step or what == step:
        ctx = ("softirq" if "s" in flags else
               "unbound" if comm.startswith("kworker/u") else
               "workqueue" if comm.startswith("kworker/") else "thread")
        wcs.append((ctx, qp))
side = {"client": set(), "server": set()}
for ctx, qp in wcs:
    if qp not in owner:
        sys.exit(f"a completion on QP {qp}, which posted no receive")
    side["server" if owner[qp] == srv else "client"].add(ctx)
print(" ".join(f"{k}={','.join(sorted(v)) or 'none'}" for k, v in side.items()))
PY
	rc=$?
	echo >$tr/trace
	return $rc
}

# write_bw: the server, the responder of a one-sided test, sleeps with
# or without --busy-poll; the client polls unless -e.
test_events_in_softirq_traced() {
	local polled events busy
	trace_need
	polled=$(events_context write_bw "" "") || fail "$polled" || return
	events=$(events_context write_bw -e "" -e) || fail "$events" || return
	busy=$(events_context write_bw --busy-poll "") || fail "$busy" || return
	[ "$polled" = "client=thread server=softirq" ] ||
		fail "without -e, completions ran in: $polled" || return
	[ "$events" = "client=softirq server=softirq" ] ||
		fail "with -e, completions ran in: $events" || return
	[ "$busy" = "client=thread server=softirq" ] ||
		fail "with a server's --busy-poll, completions ran in: $busy"
}

# send_bw: the server takes every message from its CQ.  Without
# --busy-poll the device's interrupt has them handled in softirq
# context; with it, the server's thread polls them.
test_send_bw_server_context_traced() {
	local dflt busy
	trace_need
	dflt=$(events_context send_bw "" "") || fail "$dflt" || return
	busy=$(events_context send_bw --busy-poll "") || fail "$busy" || return
	[ "$dflt" = "client=thread server=softirq" ] ||
		fail "a default server's completions ran in: $dflt" || return
	[ "$busy" = "client=thread server=thread" ] ||
		fail "a --busy-poll server's completions ran in: $busy"
}

# -b: in the reverse half the server posts the WRITEs, as the client's
# hello asked.  A default server has their completions handled in
# softirq context; only with --busy-poll does its thread poll them.
test_bidir_server_context_traced() {
	local dflt busy
	trace_need
	dflt=$(events_context write_bw "" RDMA_WRITE -b) || fail "$dflt" || return
	busy=$(events_context write_bw --busy-poll RDMA_WRITE -b) || fail "$busy" || return
	[ "$dflt" = "client=thread server=softirq" ] ||
		fail "a default server's WRITE completions ran in: $dflt" || return
	[ "$busy" = "client=thread server=thread" ] ||
		fail "a --busy-poll server's WRITE completions ran in: $busy"
}

# --poll: every completion of either side runs where the policy says,
# on every end: a server's --poll direct has its thread poll even as the
# responder of a WRITE test, which --busy-poll leaves asleep.
test_poll_context_traced() {
	local direct wq unb
	trace_need
	direct=$(events_context write_bw "--poll direct" "" --poll direct) ||
		fail "$direct" || return
	wq=$(events_context write_bw "--poll workqueue" "" --poll workqueue) || fail "$wq" || return
	unb=$(events_context send_bw "--poll unbound" "" --poll unbound) || fail "$unb" || return
	[ "$direct" = "client=thread server=thread" ] ||
		fail "with --poll direct, completions ran in: $direct" || return
	[ "$wq" = "client=workqueue server=workqueue" ] ||
		fail "with --poll workqueue, completions ran in: $wq" || return
	[ "$unb" = "client=unbound server=unbound" ] ||
		fail "with --poll unbound, completions ran in: $unb"
}

# Completion policies as ib_core itself shows them: rdma(8)'s `resource
# show cq` lists every CQ with its poll context ("poll-ctx") and the
# module that made it ("comm": kverbs, or ib_core for a CQ of its pool),
# by the id that --json's "cq" gives.  The test runs for two seconds
# (times KV_TIME_SCALE: on the debug lane's kernel one rdma(8) snapshot
# takes seconds), so that its CQs are there to be seen.
# rdma_cq_watch PID FILE: `rdma -j resource show cq`, a line each, until
# PID exits.
rdma_cq_watch() {
	while kv_alive "$1"; do
		rdma -j resource show cq >>"$2" 2>/dev/null
		echo >>"$2"
	done
}

# poll_case "OPTS" POLL POOL TEST ARGS...: a server and a client, both
# with OPTS, the client with ARGS too; both must end well, and both say,
# and rdma shows, that their CQs are POLL (--poll's name), from the pool
# or not (POOL: True or False).
poll_case() {
	local poll=$2 from_pool=$3 test=$4 rc cli
	# One word or several: the split is intended.
	# shellcheck disable=SC2206
	local opts=($1)
	shift 4
	command -v rdma >/dev/null || skip "no rdma(8) from iproute2 in the guest"
	port=$((port + 1))
	perf_server srv "$test" "${opts[@]}" || return 1
	: >"$KV_TMP/cq.watch"
	perf_client cli "$test" "${opts[@]}" -D $((2 * KV_TIME_SCALE)) --validate "$@" &
	cli=$!
	rdma_cq_watch "$cli" "$KV_TMP/cq.watch"
	wait "$cli"
	rc=$?
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	[ $rc = 0 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["iterations"] > 0' 		'd["validate"] is True' -- "$KV_TMP/srv.json" 'd["status"] == "ok"' || return
	kv_python "$KV_TMP/cq.watch" "$KV_TMP/cli.json" "$KV_TMP/srv.json" "$KV_DEV" \
		"$poll" "$from_pool" <<'PY'
import json, sys
watch, cli, srv, dev, want, pool = sys.argv[1:]
pool = pool == "True"
# rdma(8) of iproute2 (6.1, and still upstream) names the poll contexts in
# the order ib_core had before Linux 5.9 (its poll_ctx_to_str(): DIRECT,
# SOFTIRQ, WORKQUEUE, UNBOUND_WORKQUEUE); ib_core has since put the
# pool's first: IB_POLL_SOFTIRQ 0, _WORKQUEUE 1, _UNBOUND_WORKQUEUE 2,
# _DIRECT 3 (6.1 and 6.12).  So a softirq CQ shows as "DIRECT": its name
# is turned back into the number the kernel sent, and that is checked.
iproute2 = ["DIRECT", "SOFTIRQ", "WORKQUEUE", "UNBOUND_WORKQUEUE"]
kernel = {"softirq": 0, "workqueue": 1, "unbound": 2, "direct": 3}[want]
ids = {}
for side, path in (("client", cli), ("server", srv)):
    cq = json.load(open(path)).get("cq")
    if not cq or cq["poll"] != want or cq["pool"] is not pool:
        sys.exit(f"{side} reports its CQ as {cq}, not {want}, pool {pool}")
    ids[side] = cq["id"]
seen, snaps = {}, 0
for line in open(watch):
    if not line.strip():
        continue
    snaps += 1
    for e in json.loads(line):
        for side, i in ids.items():
            if e.get("ifname") == dev and e.get("cqn") == i:
                seen[side] = e
for side, i in ids.items():
    e = seen.get(side)
    if e is None:
        sys.exit(f"rdma never showed the {side}'s CQ {i} on {dev} ({snaps} snapshots)")
    # ib_core reports a kernel CQ's poll context (RDMA_NLDEV_ATTR_RES_POLL_CTX)
    # on every kernel kverbs builds for, and rdma(8) shows it: without
    # it, nothing here would be checked.
    if "poll-ctx" not in e:
        sys.exit(f"rdma shows no poll-ctx for the {side}'s CQ {i}: {e}")
    comm = e.get("comm", "").strip("[]")
    got = iproute2.index(e["poll-ctx"]) if e["poll-ctx"] in iproute2 else None
    if got != kernel or comm != ("ib_core" if pool else "kverbs"):
        sys.exit(f"rdma shows the {side}'s CQ {i} as {e}: poll context {got}, not {kernel}"
                 f" ({want}), of {'ib_core' if pool else 'kverbs'}")
    if e.get("adaptive-moderation") not in (None, False, "off"):
        sys.exit(f"rdma shows the {side}'s CQ {i} with adaptive moderation: {e}")
    print(f"# rdma: the {side}'s CQ {i}: poll-ctx {e['poll-ctx']} (kernel's {got}, {want})"
          f" [{comm}], adaptive-moderation {e.get('adaptive-moderation', 'not shown')}")
PY
}

# One bandwidth and one ping-pong test under each of ib_core's poll
# contexts, every byte checked.
test_poll_direct_write_bw_validate()	{ poll_case "--poll direct" direct False write_bw -s 4096; }
test_poll_softirq_write_bw_validate()	{ poll_case "--poll softirq" softirq False write_bw -s 4096; }
test_poll_workqueue_write_bw_validate()	{ poll_case "--poll workqueue" workqueue False write_bw -s 4096; }
test_poll_unbound_write_bw_validate()	{ poll_case "--poll unbound" unbound False write_bw -s 4096; }
test_poll_direct_send_lat_validate()	{ poll_case "--poll direct" direct False send_lat -s 64; }
test_poll_softirq_send_lat_validate()	{ poll_case "--poll softirq" softirq False send_lat -s 64; }
test_poll_workqueue_send_lat_validate()	{ poll_case "--poll workqueue" workqueue False send_lat -s 64; }
test_poll_unbound_send_lat_validate()	{ poll_case "--poll unbound" unbound False send_lat -s 64; }
# -e is --poll softirq.
test_poll_events_is_softirq()		{ poll_case -e softirq False read_bw -s 4096; }
# A CQ of ib_core's pool: softirq by default, as nvme-rdma's; shared by
# two connections and each side's reverse half with a workqueue, as
# nvmet-rdma's.
test_cq_pool_write_bw_validate()	{ poll_case --cq-pool softirq True write_bw -s 4096; }
test_cq_pool_workqueue_send_bw_validate() {
	poll_case "--cq-pool --poll workqueue -q 2 -b" workqueue True send_bw -s 1024
}

# --dim on rxe and siw, which cannot moderate their interrupts (no
# modify_cq): the client fails at its setup, before it connects, and a
# server refuses its client with that reason.  The control: the same
# client without --dim runs (test_poll_softirq_*).
test_dim_refused() {
	local rc
	port=$((port + 1))
	perf_client cli write_bw -n 10 --dim
	rc=$?
	[ $rc = 1 ] || fail "client --dim exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "failed"' \
		'd["error"]["name"] == "EOPNOTSUPP"' 'd["error"]["step"] == "setup"' \
		'd["error"]["message"].startswith("the RDMA device '"$KV_DEV"' has no adaptive interrupt moderation for --dim: it lacks the modify_cq verb")' \
		'd["cq"] is None' || return
	port=$((port + 1))
	perf_server srv write_bw --dim || return 1
	perf_client cli write_bw -n 10
	rc=$?
	kv_wait srv 30
	[ $? = 1 ] || fail "server --dim should fail: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" ||
		return
	[ $rc = 1 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["error"]["reject_reason"] == "server could not set up"' \
		-- "$KV_TMP/srv.json" 'd["error"]["name"] == "EOPNOTSUPP"'
}

# write_lat takes only --poll direct, on its server too.
test_poll_direct_write_lat_validate()	{ poll_case "--poll direct" direct False write_lat -s 64; }

# A send_bw server keeps four windows of receives posted: with only one,
# a server a few messages behind met SENDs with no receive, and rxe
# answered receiver-not-ready.  The kverbs_post_recv and kverbs_wc
# tracepoints give the receives outstanding on the server's QP (the one
# with 64-byte receives) after each event: at most, all of its slots,
# 4 x 16 here, and the START's receive if it was still there.
test_send_bw_receives_ahead_traced() {
	local tr=/sys/kernel/tracing rc
	trace_need
	trace_start kverbs_post_recv kverbs_wc || fail "cannot set up tracing" || return
	perf_validated send_bw 64 500 -t 16
	rc=$?
	trace_stop kverbs_post_recv kverbs_wc
	[ $rc = 0 ] || return
	# "... kverbs_post_recv: cq.id=2 cid=5 qp=17 len=64",
	# "... kverbs_wc: cq.id=2 cid=5 qp=17 RECV SUCCESS len=64 ..."
	kv_python $tr/trace <<'PY'
import re, sys
events = []
for line in open(sys.argv[1]):
    m = re.search(r"kverbs_post_recv: cq\.id=\d+ cid=\d+ qp=(\d+) len=(\d+)", line)
    if m:
        events.append(("post", m.group(1), int(m.group(2))))
        continue
    m = re.search(r"kverbs_wc: cq\.id=\d+ cid=\d+ qp=(\d+) RECV ", line)
    if m:
        events.append(("wc", m.group(1), 0))
qps = {qp for kind, qp, n in events if kind == "post" and n == 64}
if len(qps) != 1:
    sys.exit(f"expected one QP with 64-byte receives, found {sorted(qps)}")
qp = qps.pop()
out = peak = 0
for kind, q, _ in events:
    if q == qp:
        out += 1 if kind == "post" else -1
        peak = max(peak, out)
print(f"# the server's receives outstanding at most: {peak}")
if not 64 <= peak <= 65:
    sys.exit(f"expected 64 receives posted ahead (65 with START's), saw {peak}")
PY
	rc=$?
	echo >$tr/trace
	[ $rc = 0 ] || fail "see above"
}

test_write_lat_events_refused() {
	local out
	out=$("$KVERBS" write_lat -e "$KV_ADDR" 2>&1)
	[ $? = 2 ] || fail "write_lat -e should be a usage error: $out" || return
	[[ $out == *"-e is not for write_lat"* ]] || fail "message: $out"
}

# -a: every size from 2 bytes to the largest the module takes, here made
# 64 KiB to keep it short; one connection each, in duration mode; one
# JSON document, an array with an object per size, on both sides.
perf_all_max=/sys/module/kverbs/parameters/max_msg_size
perf_all_sizes="[2 ** i for i in range(1, 17)]"

test_write_bw_all_sizes() {
	local old rc
	old=$(cat $perf_all_max)
	echo 65536 > $perf_all_max
	port=$((port + 1))
	perf_server srv write_bw -a || { echo "$old" > $perf_all_max; return 1; }
	perf_client cli write_bw -a -D 0.1 --validate
	rc=$?
	kv_wait srv 60
	local src=$?
	echo "$old" > $perf_all_max
	[ $src = 0 ] && [ $rc = 0 ] ||
		fail "server exited $src: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" \
		     "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	json_check "$KV_TMP/cli.json" 'isinstance(d, list)' "[r['size'] for r in d] == $perf_all_sizes" \
		'all(r["status"] == "ok" and r["iterations"] > 0 and r["validate"] for r in d)' \
		'all(r["duration_ns"] == 100000000 for r in d)' \
		-- "$KV_TMP/srv.json" 'isinstance(d, list)' "[r['size'] for r in d] == $perf_all_sizes" \
		'all(r["status"] == "ok" and r["role"] == "server" for r in d)'
}

# -a in text: perftest's header once, then a row per size.
test_read_lat_all_sizes_text() {
	local old rc src rows
	old=$(cat $perf_all_max)
	echo 65536 > $perf_all_max
	port=$((port + 1))
	perf_server srv read_lat -a || { echo "$old" > $perf_all_max; return 1; }
	timeout $((120 * KV_TIME_SCALE)) "$KVERBS" read_lat -a -n 20 -p "$port" "$KV_ADDR" \
		> "$KV_TMP/t.out" 2>&1
	rc=$?
	kv_wait srv 60
	src=$?
	echo "$old" > $perf_all_max
	[ $rc = 0 ] || fail "client: $(cat "$KV_TMP/t.out")" || return
	[ $src = 0 ] || fail "server: $(cat "$KV_TMP/srv.err")" || return
	[ "$(grep -c 'RDMA_Read Latency Test' "$KV_TMP/t.out")" = 1 ] || fail "header not once" || return
	[ "$(grep -c '#bytes #iterations' "$KV_TMP/t.out")" = 1 ] || fail "titles not once" || return
	rows=$(grep -cE '^ [0-9]+ +20 ' "$KV_TMP/t.out")
	[ "$rows" = 16 ] || fail "$rows rows, not 16: $(cat "$KV_TMP/t.out")"
}

# perftest's header block and bandwidth columns.
test_text_output() {
	port=$((port + 1))
	perf_server srv write_bw || return 1
	timeout $((60 * KV_TIME_SCALE)) "$KVERBS" write_bw -p "$port" -s 1024 -n 500 "$KV_ADDR" > "$KV_TMP/t.out" 2>&1 ||
		fail "client: $(cat "$KV_TMP/t.out")" || return
	kv_wait srv 30 || return 1
	grep -q '^ *RDMA_Write BW Test$' "$KV_TMP/t.out" &&
	grep -q "^ Device *: $KV_DEV\$" "$KV_TMP/t.out" &&
	grep -q '^ Transport type : I[BW]$' "$KV_TMP/t.out" &&
	grep -q '^ Link type *: Ethernet$' "$KV_TMP/t.out" &&
	grep -q '^ Mtu *: [0-9]*\[B\]$' "$KV_TMP/t.out" &&
	grep -q '^ TX depth *: 128$' "$KV_TMP/t.out" &&
	grep -q '^ #bytes *#iterations *BW peak\[MiB/sec\] *BW average\[MiB/sec\] *MsgRate\[Mpps\]$' "$KV_TMP/t.out" &&
	grep -Eq '^ 1024 +500 +[0-9.]+ +[0-9.]+[[:space:]]+[0-9.]+$' "$KV_TMP/t.out" ||
		fail "unexpected output: $(cat "$KV_TMP/t.out")"
}

# perftest's habits: a text server says where it waits (on stderr, and
# not with --json); perftest's no-op flags are taken; --out_json_file
# gets the document --json prints.  A client that finds no kverbs server
# hints that perftest may be there.
test_perftest_habits() {
	port=$((port + 1))
	timeout -k 5 $((60 * KV_TIME_SCALE)) "$KVERBS" write_bw -p "$port" -F -R \
		--timeout "$step_limit" >"$KV_TMP/srv.out" 2>"$KV_TMP/srv.err" &
	kv_pid_srv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" || fail "server not listening" || return
	wait_for 5 grep -q "^kverbs write_bw: waiting for a client on 0.0.0.0:$port\$" \
		"$KV_TMP/srv.err" || fail "server stderr: $(cat "$KV_TMP/srv.err")" || return
	timeout -k 5 $((60 * KV_TIME_SCALE)) "$KVERBS" write_bw -p "$port" -F -R --report-both \
		--timeout "$step_limit" --json --out_json_file="$KV_TMP/out.json" -s 4096 -n 100 \
		"$KV_ADDR" >"$KV_TMP/cli.json" 2>"$KV_TMP/cli.err" ||
		fail "client: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err")" || return
	cmp -s "$KV_TMP/cli.json" "$KV_TMP/out.json" ||
		fail "--out_json_file differs from --json: $(cat "$KV_TMP/out.json")" || return
	json_check "$KV_TMP/out.json" 'd["status"] == "ok"' 'd["iterations"] == 100' || return
	[ ! -s "$KV_TMP/cli.err" ] || fail "client stderr: $(cat "$KV_TMP/cli.err")" || return
	# --json servers print nothing on stderr while they wait.
	port=$((port + 1))
	perf_server srv write_bw || return 1
	kv_sleep 1
	[ ! -s "$KV_TMP/srv.err" ] || fail "--json server's stderr: $(cat "$KV_TMP/srv.err")" || return
	kill -INT "$kv_pid_srv"
	kv_wait srv 10 >/dev/null
	# Nobody listens on the next port: kverbs or perftest, the client says.
	port=$((port + 1))
	perf_client none write_bw -n 10
	[ $? = 1 ] || fail "client without a server: $(cat "$KV_TMP/none.err")" || return
	grep -q "hint: if perftest serves $KV_ADDR:$port, it cannot answer kverbs" "$KV_TMP/none.err" ||
		fail "no perftest hint: $(cat "$KV_TMP/none.err")"
}

# A client asking for more than the server accepts is told why.
test_size_above_server_limit() {
	port=$((port + 1))
	perf_server lim send_bw -s 4096 || return 1
	perf_client big send_bw -s 65536 -n 10
	[ $? = 1 ] || fail "client should fail: $(cat "$KV_TMP/big.json")" || return
	kv_wait lim 20
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/lim.json")" || return
	json_check "$KV_TMP/big.json" 'd["error"]["name"] == "ECONNREFUSED"' \
		'd["error"]["step"] == "hello"' \
		'd["error"]["reject_reason"] == "message size not accepted"' \
		'"the server accepts 1 to 4096 bytes" in d["error"]["message"]' || return 1
	json_check "$KV_TMP/lim.json" 'd["error"]["name"] == "EMSGSIZE"' \
		'd["error"]["step"] == "hello"' 'd["error"]["reject_value"] == 4096'
}

# perf_refused SERVER_TEST CLIENT_TEST NUMBER: a server runs only its
# own test.  Both ends say so: the client that it was refused, the
# server which test it refused (NUMBER, the uAPI's for CLIENT_TEST) and
# that it does not run it (EOPNOTSUPP), and both exit 1.
perf_refused() {
	port=$((port + 1))
	perf_server only "$1" || return 1
	perf_client other "$2" -n 10
	[ $? = 1 ] || fail "client should fail: $(cat "$KV_TMP/other.json")" || return
	kv_wait only 20
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/only.err" "$KV_TMP/only.json")" || return
	json_check "$KV_TMP/other.json" 'd["error"]["reject_reason"] == "test not served"' \
		"d['error']['reject_value'] == $3" -- \
		"$KV_TMP/only.json" 'd["status"] == "failed"' 'd["error"]["name"] == "EOPNOTSUPP"' \
		'd["error"]["step"] == "hello"' 'd["error"]["reject_reason"] == "test not served"' \
		"d['error']['reject_value'] == $3" \
		"'test not served (test $3)' in d['error']['message']"
}

test_other_test_refused()	{ perf_refused read_bw write_bw 1; }
# The two ping-pongs are told apart too.
test_pingpong_other_refused()	{ perf_refused write_lat send_lat 8; }

# perf_bad_hello NAME OPTS EXPECT ERRNO: selftests/perf_hello sends a
# hello the server must refuse; both must say why.
perf_bad_hello() {
	local out
	port=$((port + 1))
	perf_server "$1" write_bw || return 1
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" $2)
	[ $? = 0 ] || fail "perf_hello: $out" || return
	[ "$out" = "$3" ] || fail "perf_hello: '$out', expected '$3'" || return
	kv_wait "$1" 20
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/$1.json")" || return
	json_check "$KV_TMP/$1.json" "d['error']['name'] == '$4'" 'd["error"]["step"] == "hello"'
}

test_hello_unknown_version() {
	perf_bad_hello v99 "-V 99" "rejected: reason 2 value 99 version 4" EPROTONOSUPPORT ||
		return 1
	json_check "$KV_TMP/v99.json" \
		'd["error"]["message"] == "refused the client'"'"'s request: unsupported hello version 99 (the server speaks version 4)"'
}

test_hello_reserved_set() {
	perf_bad_hello rsv "-r" "rejected: reason 3 value 0 version 4" EPROTO
}

# A hello that is not kverbs' is what a perftest client (ib_write_bw -R)
# sends: the server says it may be one.
test_hello_bad_magic() {
	perf_bad_hello mag "-m 0x1234" "rejected: reason 1 value 0 version 4" EPROTO || return 1
	grep -q "hint: was that perftest" "$KV_TMP/mag.err" ||
		fail "no perftest hint on the server: $(cat "$KV_TMP/mag.err")"
}

# No hello at all, as from a client that is not kverbs'.  (A short one
# cannot be told apart: InfiniBand pads the private data with zeros.)
test_hello_missing() {
	perf_bad_hello none "-l 0" "rejected: reason 1 value 0 version 4" EPROTO
}

# ---- a server's ceilings: forged hellos over them, and one just at them ----

# ceiling_refused NAME SERVER_OPTS HELLO_OPTS EXPECT ERRNO MESSAGE: a
# write_bw server with SERVER_OPTS refuses perf_hello's HELLO_OPTS with
# the reason EXPECT ("rejected: reason R value V version 4"), and its
# report gives ERRNO and MESSAGE.
ceiling_refused() {
	local out
	port=$((port + 1))
	# Word splitting of the options is intended.
	# shellcheck disable=SC2086
	perf_server "$1" write_bw $2 || return 1
	# shellcheck disable=SC2086
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" $3)
	[ $? = 0 ] || fail "perf_hello: $out" || return
	[ "$out" = "$4" ] || fail "perf_hello: '$out', expected '$4'" || return
	kv_wait "$1" 20
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/$1.json")" || return
	json_check "$KV_TMP/$1.json" "d['error']['name'] == '$5'" 'd["error"]["step"] == "hello"' \
		"d['error']['message'] == \"refused the client's request: $6\""
}

# ceiling_served NAME SERVER_OPTS HELLO_OPTS: the control, a hello at the
# ceiling that the same server serves; perf_hello -d plays it to DONE.
ceiling_served() {
	local out
	port=$((port + 1))
	# shellcheck disable=SC2086
	perf_server "$1" write_bw $2 || return 1
	# shellcheck disable=SC2086
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" $3 -d 10,1000000)
	[ $? = 0 ] && [ "$out" = "done sent" ] || fail "perf_hello: '$out'" || return
	kv_wait "$1" 20 || fail "server exited $?: $(cat "$KV_TMP/$1.json" "$KV_TMP/$1.err")" || return
	json_check "$KV_TMP/$1.json" 'd["status"] == "ok"' 'd["iterations"] == 10'
}

# Duration: a second over the server's ceiling is refused, with the
# ceiling in seconds; the ceiling itself is served.
test_hello_over_max_duration() {
	ceiling_refused dur "--max-duration 5" "-T 6" "rejected: reason 9 value 5 version 4" \
		ERANGE "duration above the server's ceiling (at most 5 s)" || return
	json_check "$KV_TMP/dur.json" \
		'd["error"]["reject_reason"] == "duration above the server'"'"'s ceiling"' \
		'd["error"]["reject_value"] == 5'
}
test_hello_at_max_duration() {
	ceiling_served durok "--max-duration 5" "-T 5" || return
	json_check "$KV_TMP/durok.json" 'd["duration_ns"] == 5000000000'
}

# Iterations: the server's own ceiling, and the module's (10,000,000 by
# default) for the 2^64 - 1 that the hello's field can carry.
test_hello_over_max_iters() {
	ceiling_refused its "--max-iters 1000" "-n 1001" "rejected: reason 10 value 1000 version 4" \
		ERANGE "iterations above the server's ceiling (at most 1000)"
}
test_hello_at_max_iters() {
	ceiling_served itsok "--max-iters 1000" "-n 1000" || return
	json_check "$KV_TMP/itsok.json" 'd["count"] == 1000'
}
test_hello_over_module_max_iters() {
	local max
	max=$(cat /sys/module/kverbs/parameters/perf_max_iterations)
	ceiling_refused itsmod "" "-n 18446744073709551615" \
		"rejected: reason 10 value $max version 4" ERANGE \
		"iterations above the server's ceiling (at most $max)"
}

# The reverse direction, to a server that does not run it; the same
# hello is accepted by a server that does, and the forward direction is
# still served by the one that does not.
test_hello_reverse_refused() {
	ceiling_refused rev "--no-reverse" "-b" "rejected: reason 11 value 0 version 4" \
		EOPNOTSUPP "reverse direction not served (this server runs with --no-reverse)"
}
test_hello_reverse_accepted_without_no_reverse() {
	local out
	port=$((port + 1))
	perf_server revok write_bw || return 1
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" -b)
	[ $? = 1 ] && [ "$out" = "accepted" ] || fail "perf_hello: '$out'" || return
	# perf_hello hangs up at once; the server ends as it may.
	kv_wait revok 30
	json_check "$KV_TMP/revok.json" 'd["error"] is None or d["error"]["step"] != "hello"'
}
test_hello_forward_served_with_no_reverse()	{ ceiling_served fwd "--no-reverse" "-n 10"; }

# ---- busy polling is the server's to allow ----

# write_lat from a forged hello (perf_hello -t 7): a server that does
# not busy-poll refuses it, with its own reason; the same hello is
# accepted by one with --busy-poll.
test_hello_write_lat_refused_without_busy_poll() {
	local out
	port=$((port + 1))
	perf_server wl serve -C 1 || return 1
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" -t 7)
	[ $? = 0 ] || fail "perf_hello: $out" || return
	[ "$out" = "rejected: reason 12 value 7 version 4" ] ||
		fail "perf_hello: '$out', expected reason 12 (KVERBS_PERF_REJECT_BUSY_POLL)" || return
	kv_wait wl 20
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/wl.json")" || return
	json_check "$KV_TMP/wl.json" 'd["error"]["name"] == "EOPNOTSUPP"' \
		'd["error"]["step"] == "hello"' 'd["error"]["reject_value"] == 7'
}
test_hello_write_lat_accepted_with_busy_poll() {
	local out
	port=$((port + 1))
	perf_server wlok serve -C 1 --busy-poll || return 1
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" -t 7)
	[ $? = 1 ] && [ "$out" = "accepted" ] || fail "perf_hello: '$out'" || return
	# perf_hello hangs up at once; the server ends as it may.
	kv_wait wlok 30
	json_check "$KV_TMP/wlok.json" 'd["error"] is None or d["error"]["step"] != "hello"'
}

# The CPU time, in clock ticks, that process PID has used.
kv_cpu_ticks() {
	# utime and stime, fields 14 and 15; the command name has no spaces.
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# reverse_hello_cpu NAME [SERVER_OPTS]: a forged hello asks a write_bw
# server for the reverse direction and then says nothing, for 8 s:
# the server, the requester, waits for the client's ADV.  Prints the
# server's CPU time over 2 s of that wait, in clock ticks.
reverse_hello_cpu() {
	local name=$1 hello a b rc
	port=$((port + 1))
	# shellcheck disable=SC2086
	perf_server "$name" write_bw $2 || return 1
	"$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" -b -w $((8 * KV_TIME_SCALE)) \
		>"$KV_TMP/$name.hello" 2>&1 &
	hello=$!
	kv_sleep $((3 * KV_TIME_SCALE))
	a=$(kv_cpu_ticks "$(eval echo "\$kv_pid_$name")")
	kv_sleep 2
	b=$(kv_cpu_ticks "$(eval echo "\$kv_pid_$name")")
	wait $hello
	rc=$?
	kv_wait "$name" 30
	[ $rc = 1 ] && [ "$(cat "$KV_TMP/$name.hello")" = accepted ] ||
		{ echo "perf_hello exited $rc: $(cat "$KV_TMP/$name.hello")"; return 1; }
	echo $((b - a))
}

# What a stranger's hello costs: a default server sleeps while a peer
# that asked for the reverse direction holds it; the control, a server
# with --busy-poll, spins a CPU for the same peer.
test_hello_reverse_costs_no_cpu() {
	local hz dflt busy
	hz=$(getconf CLK_TCK)
	dflt=$(reverse_hello_cpu rcpu) || fail "$dflt" || return
	busy=$(reverse_hello_cpu rcpubusy --busy-poll) || fail "$busy" || return
	echo "# server CPU over 2 s of a silent reverse peer: $dflt ticks by default, $busy with --busy-poll ($hz a second)"
	[ "$dflt" -le $((hz / 5)) ] ||
		fail "a default server used $dflt ticks of 2 s for a silent peer" || return
	[ "$busy" -ge "$hz" ] ||
		fail "a --busy-poll server used only $busy ticks of 2 s: the control does not spin"
}

# A peer that does not stop: the hello asked for a second, the ceiling
# is a second, and perf_hello keeps sending PROGRESS for far longer.  The
# server ends the session one step timeout past the ceiling, with ETIME;
# the control is the same peer stopping before that.
session_limit_server() {
	port=$((port + 1))
	perf_server "$1" write_bw --max-duration 1 --timeout $((2 * KV_TIME_SCALE))
}
test_session_cut_at_max_duration() {
	local out rc
	session_limit_server cut || return 1
	out=$(timeout $((60 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" \
		-T 1 -k $((40 * KV_TIME_SCALE)) -d 10,1000000)
	rc=$?
	kv_wait cut 20
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/cut.json" "$KV_TMP/cut.err")" || return
	[ $rc = 3 ] || fail "perf_hello exited $rc: '$out'" || return
	# The ceiling and one step timeout, not the peer's 40 s.
	out=${out#cut off after }
	[ "${out% s}" -le $((3 * KV_TIME_SCALE + 2)) ] ||
		fail "perf_hello cut off after $out, expected within $((3 * KV_TIME_SCALE)) s" || return
	json_check "$KV_TMP/cut.json" 'd["error"]["name"] == "ETIME"' \
		'"past this server'"'"'s maximum duration" in d["error"]["message"]'
}
test_session_within_max_duration() {
	local out
	session_limit_server within || return 1
	out=$(timeout $((60 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" \
		-T 1 -k 1 -d 10,1000000)
	[ $? = 0 ] && [ "$out" = "done sent" ] || fail "perf_hello: '$out'" || return
	kv_wait within 20 || fail "server exited $?: $(cat "$KV_TMP/within.json")" || return
	json_check "$KV_TMP/within.json" 'd["status"] == "ok"'
}

# perf_done NAME OPTS: selftests/perf_hello -d plays a write_bw requester
# as far as START, the server's ADV and a DONE with the numbers in OPTS;
# the server's exit code is left in $rc.  A DONE is input from the
# network: one that the server took unchecked once reached a 64-bit
# divide, which traps on x86-64 when the rate does not fit.
perf_done() {
	local out
	port=$((port + 1))
	perf_server "$1" write_bw || return 1
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p "$port" $2)
	[ $? = 0 ] && [ "$out" = "done sent" ] || fail "perf_hello: '$out'" || return
	kv_wait "$1" 20
	rc=$?
}

# The control: numbers that can be true are the server's report.
test_done_believed() {
	perf_done dok "-d 10,1000000" || return
	[ $rc = 0 ] || fail "server exited $rc: $(cat "$KV_TMP/dok.json" "$KV_TMP/dok.err")" || return
	json_check "$KV_TMP/dok.json" 'd["iterations"] == 10' 'd["elapsed_ns"] == 1000000' \
		'd["bytes"] == 640'
}

# perf_bad_done NAME OPTS: the server refuses the DONE and says so.
perf_bad_done() {
	perf_done "$@" || return
	[ $rc = 1 ] || fail "server exited $rc: $(cat "$KV_TMP/$1.json" "$KV_TMP/$1.err")" || return
	json_check "$KV_TMP/$1.json" 'd["error"]["name"] == "EPROTO"' 'd["error"]["step"] == "recv"'
}

# 2^40 messages where the hello asked for 10.
test_done_more_than_asked()	{ perf_bad_done dmore "-d 1099511627776,1000000"; }
# Duration mode, so any count goes: 2^40 messages of 64 bytes in a
# nanosecond, a rate past 64 bits.
test_done_rate_overflows()	{ perf_bad_done drate "-D -d 1099511627776,1"; }

# SIGINT ends a client early, with what it did so far; its server sees
# the connection go.
# client_sigint [OPTS...]: OPTS on both sides.
client_sigint() {
	local pid rc
	port=$((port + 1))
	perf_server srv send_bw "$@" || return 1
	"$KVERBS" send_bw -p "$port" -s 4096 -D 60 --json "$@" "$KV_ADDR" > "$KV_TMP/int.json" 2>&1 &
	pid=$!
	# SENDs completing (KVERBS_STEP_SEND): more than the control
	# messages before the data (the hello, its answer, START).
	kv_trace_wait 30 6 kverbs_wc 'step == 8 && status == 0' ||
		fail "no data SEND completed: $(cat "$KV_TMP/int.json")" || return
	kill -INT $pid
	wait_for 10 kv_ended $pid || fail "client still running 10 s after SIGINT" || return
	wait $pid
	rc=$?
	[ $rc = 130 ] || fail "client exited $rc: $(cat "$KV_TMP/int.json")" || return
	json_check "$KV_TMP/int.json" 'd["status"] == "interrupted"' 'd["iterations"] > 0' \
		'd["bytes"] == d["iterations"] * 4096' 'd["error"]["name"] == "EINTR"' || return 1
	kv_wait srv 30
	[ $? = 1 ] || fail "server: $(cat "$KV_TMP/srv.json")" || return
	json_check "$KV_TMP/srv.json" 'd["error"]["name"] == "ECONNRESET"'
}

test_client_sigint()		{ client_sigint; }
# Asleep for its completions, the client still ends at once.
test_client_sigint_events()	{ client_sigint -e; }

# SIGKILL mid-test: the server ends with the connection reset, and the
# next server on the same port works.
test_client_killed() {
	local pid why
	port=$((port + 1))
	perf_server srv write_bw || return 1
	"$KVERBS" write_bw -p "$port" -s 65536 -D 60 --timeout "$step_limit" --json "$KV_ADDR" \
		> "$KV_TMP/cli.json" 2> "$KV_TMP/cli.err" &
	pid=$!
	if ! kv_trace_wait 30 1 kverbs_wc 'step == 11 && status == 0'; then
		why="the client: $(kv_stack $pid | head -24)
connections: $(rdma res show cm_id)"
		kill -9 $pid
		wait $pid 2>/dev/null
		fail "no RDMA WRITE completed; $why
its output: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")"
		return
	fi
	kill -9 $pid
	wait_for 10 kv_ended $pid || fail "client alive 10 s after SIGKILL: $(kv_stack $pid)" || return
	wait $pid 2>/dev/null
	kv_wait srv 30
	[ $? = 1 ] || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	json_check "$KV_TMP/srv.json" 'd["error"]["name"] == "ECONNRESET"' || return 1
	perf_pair write_bw -s 65536 -n 200 --validate
}

# The SRQs of kverbs in rdma's view (rdma resource show srq), one line
# each.
kv_srqs() {
	rdma res show srq 2>/dev/null | grep -c 'comm \[kverbs\]'
}

# perf_srq QPS SRV_OPTS -- CLIENT_OPTS: send_bw with -q QPS against a
# server with --srq and SRV_OPTS, every byte validated by the server out
# of the SRQ's receives; the SRQ is gone from rdma's view once the
# server's file is closed.
perf_srq() {
	local qps=$1 srv=() rc
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	[ "$(kv_srqs)" = 0 ] || fail "SRQs before the test: $(rdma res show srq)" || return
	port=$((port + 1))
	perf_server srv send_bw -q "$qps" --srq "${srv[@]}" || return
	perf_client cli send_bw -q "$qps" --validate "$@"
	rc=$?
	kv_wait srv 60 || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	[ $rc = 0 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	wait_for 10 eval '[ "$(kv_srqs)" = 0 ]' ||
		fail "SRQ left after the server ended: $(rdma res show srq)" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' "d['qps'] == $qps" \
		'd["validate"] is True' 'd["bytes"] == d["iterations"] * d["size"]' \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' "d['qps'] == $qps" \
		'd["srq"] is True' "d['srq_shared'] == $qps" 'd["srq_wr"] > 0' || return
	kv_python "$KV_TMP/cli.json" "$KV_TMP/srv.json" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
for k in ("test", "size", "iterations", "bytes", "elapsed_ns", "validate"):
    if c[k] != s[k]:
        sys.exit(f"client and server disagree on {k}: {c[k]} != {s[k]}")
PY
}

# -q 4 against a --srq server: four QPs on one SRQ, every byte of every
# SEND checked by the server in the SRQ's receive it landed in.
test_send_bw_srq_4_qps_validate() {
	local n
	n=$(perf_iters 1000)
	perf_srq 4 -- -s 4096 -n "$n" || return
	json_check "$KV_TMP/cli.json" "d['iterations'] == 4 * $n" \
		-- "$KV_TMP/srv.json" 'd["srq_wr"] == 256' 'd["srq_limit"] == 64'
}

# The limit: an SRQ of 16 receives whose limit is 16 goes below it with
# the first message taken, so IB_EVENT_SRQ_LIMIT_REACHED certainly comes;
# the server arms it again each time it has posted all 16 back (srq.c,
# "The limit").  Two QPs of a window of 64 each keep the 16 receives
# short, and every byte is still checked.  How often all 16 are back
# before the next message takes one is the race of the two clients
# against the server: no count of events above one is certain, and none
# above one per message that took a receive (each QP's START and DONE,
# and its n SENDs).  test_send_lat_srq_limit_validate counts the re-arms.
test_send_bw_srq_limit_validate() {
	local n
	n=$(perf_iters 500)
	perf_srq 2 --srq-wr 16 --srq-limit 16 -- -s 1024 -t 64 -n "$n" || return
	json_check "$KV_TMP/srv.json" 'd["srq_wr"] == 16' 'd["srq_limit"] == 16' \
		'd["srq_limit_events"] >= 1' "d['srq_limit_events'] <= 2 * ($n + 2)" \
		"d['iterations'] == 2 * $n"
}

# The limit, armed again after every event: send_lat's server posts each
# receive again before it answers (perf_pingpong.c), and the limit is
# armed then, all 16 being posted; so each of the client's messages, its
# START, its n pings and its DONE, finds the SRQ full and the limit
# armed, and raises one event: n + 2 of them.  A server that did not arm
# the limit again would count one.
test_send_lat_srq_limit_validate() {
	local n
	n=$(perf_iters 200)
	srv_opts=(--srq --srq-wr 16 --srq-limit 16)
	perf_lat send_lat 200 -s 64 --validate || return
	json_check "$KV_TMP/srv.json" 'd["srq_wr"] == 16' 'd["srq_limit"] == 16' \
		'd["srq_shared"] == 1' "d['iterations'] == $n" "d['srq_limit_events'] == $n + 2"
}

# rdma's view: the SRQ belongs to the server's file, not to a session.
# kverbs serve --srq keeps its file open after a send_bw -q 4 client is
# done: exactly one SRQ of kverbs is there (four QPs used it); once serve
# ends on SIGINT and its file is closed, none.
test_send_bw_srq_rdma_view() {
	local n
	n=$(perf_iters 500)
	port=$((port + 1))
	"$KVERBS" serve -p "$port" -j 4 --srq --timeout "$step_limit" --json \
		>"$KV_TMP/srv.json" 2>"$KV_TMP/srv.err" &
	kv_pid_srv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" || fail "serve not listening on $port" || return
	[ "$(kv_srqs)" = 0 ] || fail "an SRQ before any client: $(rdma res show srq)" || return
	perf_client cli send_bw -q 4 -s 4096 -n "$n" --validate ||
		fail "client: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	# Each session reports as it ends: wait for all four.
	wait_for 10 eval '[ "$(grep -c . "$KV_TMP/srv.json")" -ge 4 ]' ||
		fail "serve reported $(grep -c . "$KV_TMP/srv.json") sessions, not 4" || return
	[ "$(kv_srqs)" = 1 ] ||
		fail "$(kv_srqs) SRQs of kverbs with serve's file open, not 1: $(rdma res show srq)" ||
		return
	kill -INT "$kv_pid_srv"
	kv_wait srv 30 || fail "serve did not end on SIGINT: $(cat "$KV_TMP/srv.err")" || return
	wait_for 10 eval '[ "$(kv_srqs)" = 0 ]' ||
		fail "SRQ left after serve ended: $(rdma res show srq)" || return
	kv_python "$KV_TMP/srv.json" <<'PY'
import json, sys
# The four served, and the waiting jobs SIGINT ended.
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sessions = [d for d in docs if d["status"] != "interrupted"]
assert len(sessions) == 4, docs
for s in sessions:
    assert s["status"] == "ok" and s["test"] == "send_bw" and s["validate"], s
    assert s["srq"] is True and s["srq_wr"] == 256 and 1 <= s["srq_shared"] <= 4, s
assert max(s["srq_shared"] for s in sessions) == 4, sessions
PY
}

# serve_two_then_one SERVE_OPTS BW_OPTS LAT_OPTS NAME THIRD: kverbs serve
# -C 3 -j 2 with SERVE_OPTS on a port of its own; a send_bw client (bw)
# with BW_OPTS and a send_lat client (lat) with LAT_OPTS at once, then
# NAME running THIRD (a test and its options) alone.  Each client and
# the server must succeed.  Each *_OPTS is a list of words.
serve_two_then_one() {
	local rc1 rc2 p1 p2
	port=$((port + 1))
	# shellcheck disable=SC2086
	"$KVERBS" serve -p "$port" -C 3 -j 2 $1 --timeout "$step_limit" --json \
		>"$KV_TMP/srv.json" 2>"$KV_TMP/srv.err" &
	kv_pid_srv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" || fail "serve not listening on $port" || return
	# shellcheck disable=SC2086
	perf_client bw send_bw $2 &
	p1=$!
	# shellcheck disable=SC2086
	perf_client lat send_lat $3 &
	p2=$!
	wait "$p1"
	rc1=$?
	wait "$p2"
	rc2=$?
	[ $rc1 = 0 ] || fail "send_bw exited $rc1: $(cat "$KV_TMP/bw.err" "$KV_TMP/bw.json")" || return
	[ $rc2 = 0 ] || fail "send_lat exited $rc2: $(cat "$KV_TMP/lat.err" "$KV_TMP/lat.json")" ||
		return
	# shellcheck disable=SC2086
	perf_client "$4" $5 || fail "$5: $(cat "$KV_TMP/$4.err" "$KV_TMP/$4.json")" || return
	kv_wait srv 30 || fail "serve: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")"
}

# kverbs serve -j 2 --srq: a send_bw and a send_lat client at once, both
# validated, their QPs on the one SRQ of the server's file (the session
# that ends last saw both: srq_shared 2); then a write_bw client, whose
# data lands in no receive, runs on its own QP's receives (srq_wr 0).
test_serve_srq_send_bw_send_lat_validate() {
	serve_two_then_one "--srq" "-s 4096 -D 2 --validate" "-s 64 -D 2 --validate" \
		wr "write_bw -s 4096 -n 100 --validate" || return
	wait_for 10 eval '[ "$(kv_srqs)" = 0 ]' ||
		fail "SRQ left after serve ended: $(rdma res show srq)" || return
	kv_python "$KV_TMP/srv.json" "$KV_TMP/bw.json" "$KV_TMP/lat.json" <<'PY'
import json, sys
sessions = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bw, lat = (json.load(open(p)) for p in sys.argv[2:])
assert bw["status"] == "ok" and lat["status"] == "ok", (bw, lat)
assert bw["validate"] and lat["validate"]
by = {s["test"]: s for s in sessions}
assert sorted(by) == ["send_bw", "send_lat", "write_bw"], sessions
for t in ("send_bw", "send_lat"):
    s = by[t]
    assert s["status"] == "ok" and s["srq"] is True, s
    assert s["srq_wr"] == 256 and s["srq_limit"] == 64, s
    assert s["srq_shared"] in (1, 2), s
assert max(by[t]["srq_shared"] for t in ("send_bw", "send_lat")) == 2, sessions
assert by["send_bw"]["iterations"] == bw["iterations"], (by["send_bw"], bw)
assert by["send_lat"]["iterations"] == lat["iterations"], (by["send_lat"], lat)
w = by["write_bw"]
assert w["status"] == "ok" and w["srq"] is True and w["srq_wr"] == 0, w
PY
}

# send_lat's server with --srq, its one QP on an SRQ of its own: each
# message checked in the SRQ's receive and posted again before the
# answer (over iWARP the answer is the client's credit for the next).
# At 48 bytes, a control message's length, the server must still tell
# data from control; with --imm (not on iWARP) every immediate is
# checked too.
test_send_lat_srq_validate() {
	local imm_opt=(--imm) imm_json=True
	# iWARP has no immediate data; its credits are the point there.
	[ "$KV_TYPE" = siw ] && imm_opt=() imm_json=False
	srv_opts=(--srq)
	perf_lat send_lat 500 -s 48 --validate "${imm_opt[@]}" || return
	json_check "$KV_TMP/srv.json" 'd["srq"] is True' 'd["srq_wr"] == 256' \
		'd["srq_shared"] == 1' "d['imm'] is $imm_json"
}

# send_bw at a control message's length, with immediate data, through
# an SRQ: data, control and immediates all come out of the SRQ's receives.
test_send_bw_srq_48_imm_validate() {
	[ "$KV_TYPE" = siw ] && skip "siw has no immediate data"
	srv_opts=(--srq)
	perf_validated send_bw 48 500 --imm || return
	json_check "$KV_TMP/srv.json" 'd["srq"] is True' 'd["srq_shared"] == 1' \
		'd["imm"] is True'
}

# A client with --srq: the tool refuses it (how the server receives is
# the server's choice); the module's EINVAL is uapi.c's.  A message
# larger than the SRQ's receives (64 KiB for a server without -s): the
# server refuses the client with EMSGSIZE at setup.
test_send_bw_srq_refused() {
	local rc
	"$KVERBS" send_bw --srq -n 10 "$KV_ADDR" >"$KV_TMP/cli.out" 2>&1
	rc=$?
	[ $rc = 2 ] || fail "client --srq exited $rc, not 2: $(cat "$KV_TMP/cli.out")" || return
	grep -q -- "--srq is for the server" "$KV_TMP/cli.out" ||
		fail "no reason given: $(cat "$KV_TMP/cli.out")" || return
	port=$((port + 1))
	perf_server srv send_bw --srq || return
	perf_client cli send_bw -s 131072 -n 10
	rc=$?
	kv_wait srv 30
	[ $rc != 0 ] || fail "a message larger than the SRQ's receives was served" || return
	json_check "$KV_TMP/cli.json" 'd["status"] != "ok"' 'd["error"]["reject_value"] == 90' \
		-- "$KV_TMP/srv.json" 'd["status"] != "ok"' 'd["error"]["name"] == "EMSGSIZE"'
}

# A --srq server grants each client's QP a window of the SRQ's receives
# (kernel/core/srq.c's "Credits"), and the windows add up to no more than the
# SRQ holds, on every transport.  An
# SRQ of 4 receives: a send_lat client holds a window of one for its
# whole run; the send_bw client that comes meanwhile asks for 16 and gets
# the rest, 1 (a quarter of the SRQ at most), and runs validated; then
# a third gets a window too, as the first two gave theirs back.  With
# --srq-wr 1 the send_lat client holds all there is, and a send_bw
# client meanwhile is refused at setup with ENOSPC, told to it as the
# reject's value (28); the send_lat client runs on, untouched.
test_srq_windows() {
	local p1 rc1
	port=$((port + 1))
	"$KVERBS" serve -p "$port" -C 3 -j 2 --srq --srq-wr 1 --timeout "$step_limit" \
		--json >"$KV_TMP/srv.json" 2>"$KV_TMP/srv.err" &
	kv_pid_srv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" || fail "serve not listening on $port" || return
	perf_client lat send_lat -s 64 -D 8 --validate &
	p1=$!
	wait_for 20 kv_any_connected "$port" || fail "send_lat did not connect" || return
	perf_client bw send_bw -s 1024 -n 10
	[ $? = 1 ] || fail "send_bw served with the SRQ's one receive taken: $(cat "$KV_TMP/bw.json")" ||
		return
	json_check "$KV_TMP/bw.json" 'd["error"]["name"] == "ECONNREFUSED"' \
		'd["error"]["reject_value"] == 28' || return
	wait "$p1"
	rc1=$?
	[ $rc1 = 0 ] || fail "send_lat exited $rc1: $(cat "$KV_TMP/lat.err" "$KV_TMP/lat.json")" ||
		return
	perf_client bw2 send_bw -s 1024 -n "$(perf_iters 200)" --validate ||
		fail "send_bw after send_lat: $(cat "$KV_TMP/bw2.err" "$KV_TMP/bw2.json")" || return
	# One session failed: serve exits 1.
	kv_wait srv 30
	[ $? = 1 ] || fail "serve: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	kv_python "$KV_TMP/srv.json" <<'PY' || return
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(s) == 3, s
bad = [d for d in s if d["status"] != "ok"]
assert len(bad) == 1 and bad[0]["error"]["name"] == "ENOSPC", s
assert bad[0]["error"]["step"] == "setup", bad
assert sorted(d["test"] for d in s if d["status"] == "ok") == ["send_bw", "send_lat"], s
PY
	port=$((port + 1))
	"$KVERBS" serve -p "$port" -C 3 -j 2 --srq --srq-wr 4 --timeout "$step_limit" \
		--json >"$KV_TMP/srv.json" 2>"$KV_TMP/srv.err" &
	kv_pid_srv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" || fail "serve not listening on $port" || return
	perf_client lat send_lat -s 64 -D 4 --validate &
	p1=$!
	wait_for 20 kv_any_connected "$port" || fail "send_lat did not connect" || return
	perf_client bw send_bw -s 1024 -t 16 -n "$(perf_iters 200)" --validate ||
		fail "send_bw beside send_lat: $(cat "$KV_TMP/bw.err" "$KV_TMP/bw.json")" || return
	wait "$p1"
	rc1=$?
	[ $rc1 = 0 ] || fail "send_lat exited $rc1: $(cat "$KV_TMP/lat.err" "$KV_TMP/lat.json")" ||
		return
	perf_client bw2 send_bw -s 1024 -n "$(perf_iters 200)" --validate ||
		fail "the third client: $(cat "$KV_TMP/bw2.err" "$KV_TMP/bw2.json")" || return
	kv_wait srv 30 || fail "serve: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	kv_python "$KV_TMP/srv.json" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(s) == 3 and all(d["status"] == "ok" and d["srq_wr"] == 4 for d in s), s
PY
}

# perf_srq_peer MODE: perf_hello -S MODE (48 SENDs: three windows of 16
# and DONE's credit) against a send_bw server with --srq.
perf_srq_peer() {
	local srv hpid
	port=$((port + 1))
	perf_server srq send_bw --srq || return 1
	timeout $((60 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" \
		-a "$KV_ADDR" -p "$port" -n 48 -S "$1" > "$KV_TMP/hello.out" 2>&1 &
	hpid=$!
	kv_wait srq 40
	srv=$?
	[ $srv = 0 ] || kill "$hpid" 2>/dev/null
	wait "$hpid"
	rc=$?
	return $srv
}

# The credits are enforced: a peer that sends 17 messages on its window
# of 16 (PROGRESS, for which the server grants no next window, as it does
# for data it took) ends its session with EPROTO at the 17th, counted as
# it completes, before the SRQ can run dry for anyone.  The control
# first: the same peer keeping to its window of 16, each next window
# after ROUND_OK, is served to the end.
test_srq_credits_enforced() {
	local rc
	perf_srq_peer ok || fail "server failed a peer within its credits: $(cat "$KV_TMP/srq.json")" ||
		return
	[ $rc = 0 ] || fail "perf_hello: $(cat "$KV_TMP/hello.out")" || return
	json_check "$KV_TMP/srq.json" 'd["status"] == "ok"' 'd["iterations"] == 48' \
		'd["srq"] is True' || return
	perf_srq_peer over
	[ $? = 1 ] || fail "server should fail: $(cat "$KV_TMP/srq.json")" || return
	json_check "$KV_TMP/srq.json" 'd["error"]["name"] == "EPROTO"' \
		'd["error"]["step"] == "recv"' || return
	{ [ "$rc" = 0 ] && grep -q '^sent$' "$KV_TMP/hello.out"; } ||
		fail "perf_hello ($rc): $(cat "$KV_TMP/hello.out")" || return
	# The server's side of the connection is gone.
	! kv_any_connected "$port" || fail "still connected: $(rdma res show cm_id)"
}

# A peer that breaks its credits costs the SRQ nothing: its drained QP
# completed every receive it took, and they went back.  serve's SRQ of 4
# gives windows of 1; four such peers in a row, then a fair one, which
# is served as if none had come (were a failed session's receive kept
# out of the credits, four of them would leave the fifth no window:
# ENOSPC).
test_srq_failed_peers_cost_nothing() {
	local i
	port=$((port + 1))
	"$KVERBS" serve -p "$port" -C 5 --srq --srq-wr 4 --timeout "$step_limit" \
		--json >"$KV_TMP/srv.json" 2>"$KV_TMP/srv.err" &
	kv_pid_srv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" || fail "serve not listening on $port" || return
	for i in 1 2 3 4 ok; do
		timeout $((60 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" \
			-a "$KV_ADDR" -p "$port" -n 8 -S "${i/[0-9]/over}" > "$KV_TMP/hello.out" 2>&1
		rc=$?
		[ $rc = 0 ] || fail "perf_hello -S ${i/[0-9]/over} ($rc): $(cat "$KV_TMP/hello.out")" ||
			return
		# serve takes the next client once this one's session ended.
		wait_for 30 eval '! kv_any_connected "$port"' ||
			fail "session $i still connected: $(rdma res show cm_id)" || return
	done
	# Four sessions failed: serve says so with 1.
	kv_wait srv 30
	[ $? = 1 ] || fail "serve: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	kv_python "$KV_TMP/srv.json" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(s) == 5, s
assert all(d["status"] != "ok" and d["error"]["name"] == "EPROTO" for d in s[:4]), s[:4]
assert s[4]["status"] == "ok" and s[4]["iterations"] == 8 and s[4]["srq_wr"] == 4, s[4]
PY
}

# A peer that sends DONE and then goes on sending, while its server
# waits for it to hang up (InfiniBand and RoCE, where the requester goes
# first), takes no receive of the SRQ's away from the other sessions:
# each message past DONE is beyond its grant, goes back to the SRQ as
# soon as it completes, and ends the session with EPROTO.  A fair client
# beside it on the same SRQ runs validated to its end.  Over iWARP the
# server hangs up at DONE, and the peer's next SEND finds none.
test_srq_peer_after_done_cut_off() {
	local pf rc
	port=$((port + 1))
	"$KVERBS" serve -p "$port" -C 2 -j 2 --srq --srq-wr 16 --timeout "$step_limit" \
		--json >"$KV_TMP/srv.json" 2>"$KV_TMP/srv.err" &
	kv_pid_srv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" || fail "serve not listening on $port" || return
	perf_client fair send_bw -s 1024 -D 4 --validate &
	pf=$!
	wait_for 20 kv_any_connected "$port" || fail "the fair client did not connect" || return
	timeout $((60 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" \
		-a "$KV_ADDR" -p "$port" -n 8 -S linger > "$KV_TMP/hello.out" 2>&1
	rc=$?
	[ $rc = 0 ] && grep -q '^cut off after ' "$KV_TMP/hello.out" ||
		fail "perf_hello -S linger ($rc): $(cat "$KV_TMP/hello.out")" || return
	wait "$pf" || fail "the fair client: $(cat "$KV_TMP/fair.err" "$KV_TMP/fair.json")" || return
	kv_wait srv 30
	rc=$?
	kv_python "$KV_TMP/srv.json" "$KV_TYPE" "$rc" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
iwarp, rc = sys.argv[2] == "siw", int(sys.argv[3])
assert len(s) == 2 and all(d["test"] == "send_bw" and d["srq"] for d in s), s
fair = [d for d in s if d["iterations"] > 8]
peer = [d for d in s if d["iterations"] == 8 or d["status"] != "ok"]
assert len(fair) == 1 and fair[0]["status"] == "ok", s
if iwarp:
    assert rc == 0 and peer[0]["status"] == "ok", (rc, s)
else:
    assert rc == 1 and peer[0]["error"]["name"] == "EPROTO", (rc, s)
    assert peer[0]["error"]["step"] == "recv", s
PY
}

# ---- phases (--phases): where each round trip's time goes ----

# perf_phases TEST ITERS CLIENT_OPTS...: a latency test with --phases (as
# perf_lat).  Each phase is over every sample, its statistics in order;
# every completion handler ran after its post; and the two phases, each
# of a whole round trip, fit in the longest one (twice the longest
# sample: send_lat's are halves).  No timings are compared: make bench.
perf_phases() {
	local test=$1 n
	n=$(perf_iters "$2")
	perf_lat "$test" "$2" --phases "${@:3}" || return 1
	json_check "$KV_TMP/cli.json" \
		"d['phases']['to_handler']['samples'] == $n" \
		"d['phases']['to_thread']['samples'] == $n" \
		'(lambda p: p["min"] <= p["typical"] <= p["p99"] <= p["p99_9"] <= p["max"])(d["phases"]["to_handler"])' \
		'(lambda p: p["min"] <= p["typical"] <= p["p99"] <= p["p99_9"] <= p["max"])(d["phases"]["to_thread"])' \
		'd["phases"]["to_handler"]["min"] > 0' 'd["phases"]["to_thread"]["min"] >= 0' \
		'd["phases"]["to_handler"]["typical"] + d["phases"]["to_thread"]["typical"] <= 2 * d["latency_usec"]["max"]' || return 1
	# A READ's or an atomic's sample runs to its completion's handler:
	# the first phase is the sample itself, value for value.
	[ "$test" = send_lat ] && return
	json_check "$KV_TMP/cli.json" \
		'(lambda h, l: all(h[k] == v for k, v in l.items()))(d["phases"]["to_handler"], d["latency_usec"])'
}

test_read_lat_phases()			{ perf_phases read_lat 1000 -s 2; }
test_send_lat_phases_events()		{ perf_phases send_lat 1000 -s 2 -e; }
test_read_lat_phases_workqueue()	{ perf_phases read_lat 500 -s 2 --poll workqueue; }
test_send_lat_phases_workqueue()	{ perf_phases send_lat 500 -s 2 --poll workqueue; }
test_atomic_lat_phases_unbound() {
	[ "$KV_TYPE" = siw ] && skip "siw has no atomic operations"
	perf_phases atomic_lat 500 --poll unbound
}

# The text report: a row per phase after the latency's.
test_phases_text_output() {
	local n
	n=$(perf_iters 200)
	port=$((port + 1))
	perf_server srv read_lat || return 1
	timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" read_lat -p "$port" \
		--timeout "$step_limit" -n "$n" --phases "$KV_ADDR" \
		>"$KV_TMP/cli.txt" 2>"$KV_TMP/cli.err" ||
		fail "client failed: $(cat "$KV_TMP/cli.err")" || return
	kv_wait srv 30 >/dev/null || fail "server failed: $(cat "$KV_TMP/srv.err")" || return
	grep -q '^ phase \[usec\] *t_min *t_typical' "$KV_TMP/cli.txt" &&
	grep -Eq '^ to handler +[0-9.]+ +[0-9.]+' "$KV_TMP/cli.txt" &&
	grep -Eq '^ to thread +[0-9.]+ +[0-9.]+' "$KV_TMP/cli.txt" ||
		fail "no phase rows: $(cat "$KV_TMP/cli.txt")"
}

# Where no completion handler ends a round trip (write_lat), nor a
# single operation is timed (the bandwidth tests), nor anything timed at
# all (a server), --phases is a usage error, before any connection.
test_phases_refused() {
	local args rc
	for args in "write_lat --phases $KV_ADDR" "write_bw --phases $KV_ADDR" \
		    "read_lat --phases"; do
		# shellcheck disable=SC2086
		"$KVERBS" $args -p "$port" >"$KV_TMP/out" 2>&1
		rc=$?
		[ $rc = 2 ] || fail "kverbs $args: exit $rc, not 2: $(cat "$KV_TMP/out")" || return
		grep -q -- '--phases is for' "$KV_TMP/out" ||
			fail "kverbs $args: $(cat "$KV_TMP/out")" || return
	done
	# The control: a client that may take it gets past the options.
	"$KVERBS" read_lat --phases --timeout 2 -p "$port" "$KV_ADDR" >"$KV_TMP/out" 2>&1
	[ $? = 1 ] || fail "read_lat --phases to nobody: $(cat "$KV_TMP/out")"
}

# The combinations: a path another case takes already, with another
# test, size, direction or option (KV_MATRIX=0 leaves them out: lib.sh).
# shellcheck disable=SC2034 # kv_matrix: read by lib.sh's ktap_main (KV_MATRIX=0)
kv_matrix=" read_bw_1M_validate send_bw_1M_validate atomic_lat_cmp_swap
	atomic_bw_fetch_add read_lat_64K_validate write_lat_4096_validate
	send_lat_4096_validate read_bw_bidir_validate send_bw_bidir_validate
	atomic_bw_bidir_validate write_bw_bidir_2_qps_validate write_bw_events_validate
	read_bw_events_validate atomic_bw_events_validate read_lat_events atomic_lat_events
	send_bw_busy_poll_validate send_lat_busy_poll_validate
	poll_direct_write_bw_validate poll_softirq_write_bw_validate
	poll_unbound_write_bw_validate poll_direct_send_lat_validate
	poll_softirq_send_lat_validate poll_workqueue_send_lat_validate
	cq_pool_workqueue_send_bw_validate send_bw_imm_validate write_bw_imm_48_validate
	write_lat_imm_validate write_bw_imm_bidir_validate post_list_validate
	inline_write_bw_validate inline_send_validate write_bw_rw_1M_validate
	write_bw_rw_4097_validate read_bw_rw_1M_validate read_lat_rw_64K_validate
	read_bw_rw_bidir_validate read_bw_1M_inv_validate write_bw_inv_bidir_validate
	read_lat_phases_workqueue send_lat_phases_workqueue atomic_lat_phases_unbound
	send_bw_srq_48_imm_validate send_bw_ud_workqueue_validate
	send_lat_ud_busy_poll_validate serve_ud_clients_validate "
# -c UD (perftest's -c UD): the data in datagrams over a UD QP of each
# side's, the control messages over RC.  At most 512 messages, the
# receiver's ring: none can be lost for want of a receive, and rxe
# drops nothing else between two QPs of one guest, so lost is 0.
need_ud() {
	[ "$KV_TYPE" = siw ] && skip "iWARP (siw) has no UD; send_bw_ud_refused_over_iwarp checks the refusal"
	return 0
}

# ud_pair TEST SIZE ITERS [client options]: a validated -c UD run, the
# server with the options in srv_opts, both sides reporting UD, every
# message, none lost.
ud_pair() {
	local test=$1 size=$2 n=$3 rc
	shift 3
	port=$((port + 1))
	perf_server srv "$test" "${srv_opts[@]}" || return 1
	perf_client cli "$test" -c UD -s "$size" -n "$n" --validate "$@"
	rc=$?
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return 1
	[ $rc = 0 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return 1
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["connection"] == "UD"' \
		"d['iterations'] == $n" "d['size'] == $size" 'd["validate"] is True' \
		'd["lost"] == 0' 'd["elapsed_ns"] > 0' \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["connection"] == "UD"' \
		"d['iterations'] == $n" "d['size'] == $size" 'd["lost"] == 0'
}

# The port's active MTU, from a client's report.
ud_mtu() {
	kv_python "$KV_TMP/cli.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print((d[0] if isinstance(d, list) else d)["mtu"])
PY
}

test_send_bw_ud_64_validate()	{ need_ud; ud_pair send_bw 64 500; }

# The datagrams' CQ takes each side's completion policy, as its RC CQ
# does: a client whose handlers run on a workqueue, and both sides of a
# ping-pong busy-polling (the default above: the client polls, the
# server sleeps).
test_send_bw_ud_workqueue_validate() {
	need_ud
	ud_pair send_bw 256 300 --poll workqueue || return
	json_check "$KV_TMP/cli.json" 'd["cq"]["poll"] == "workqueue"'
}

test_send_lat_ud_busy_poll_validate() {
	need_ud
	srv_opts=(--busy-poll)
	ud_pair send_lat 64 100 || return
	json_check "$KV_TMP/cli.json" 'd["cq"]["poll"] == "direct"' \
		-- "$KV_TMP/srv.json" 'd["cq"]["poll"] == "direct"'
}

test_send_bw_ud_mtu_validate() {
	local mtu
	need_ud
	ud_pair send_bw 64 10 || return
	mtu=$(ud_mtu) || return
	[ "$mtu" -ge 256 ] || fail "active MTU $mtu" || return
	ud_pair send_bw "$mtu" 200
}

test_send_lat_ud_validate() {
	need_ud
	ud_pair send_lat 64 200 || return
	lat_stats_ok 200
}

# Eight times the receiver's ring: a receiver that falls behind loses
# datagrams, which nothing retransmits.  Whatever was lost, every one
# that arrived is validated, the server counts exactly the rest as lost,
# and the client reports the server's count.
test_send_bw_ud_lost_counted() {
	local n=4096 rc
	need_ud
	port=$((port + 1))
	perf_server srv send_bw || return
	perf_client cli send_bw -c UD -s 64 -n $n --validate
	rc=$?
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	[ $rc = 0 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' "d['iterations'] == $n" \
		'd["lost"] < d["iterations"]' \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["iterations"] > 0' \
		"d['iterations'] + d['lost'] == $n" || return
	kv_python "$KV_TMP/cli.json" "$KV_TMP/srv.json" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
assert c["lost"] == s["lost"], f"lost: client {c['lost']}, server {s['lost']}"
print(f"# {s['lost']} of {c['iterations']} lost")
PY
}

# ud_forge_during TEST SECONDS COUNT SIZE IMM [client options]: a -c UD
# client running TEST for SECONDS against a fresh server, and, once both
# UD QPs exist, COUNT datagrams of SIZE bytes with immediate data IMM to
# each from a stranger's QP (selftests/ud_forge), 20 ms apart, all
# while the client still runs.  Both ends must succeed; the caller
# checks what they counted.  SECONDS must cover the stranger's start
# (its rdma and ud_forge processes), which takes seconds on a TCG guest
# beside another, and tens of seconds on the debug lane's kernel beside
# make check: the callers give ud_forge_secs.
ud_forge_secs=$((10 + 8 * KV_TIME_SCALE))
ud_forge_during() {
	local test=$1 secs=$2 count=$3 size=$4 imm=$5 rc
	shift 5
	port=$((port + 1))
	perf_server srv "$test" || return
	perf_client cli "$test" -c UD -D "$secs" --validate "$@" &
	kv_pid_cli=$!
	kv_ud_forge -n "$count" -s "$size" -i "$imm" -w 20 || return
	# Every stranger's datagram must have come while the test ran.
	# shellcheck disable=SC2154 # kv_forge_start: set by lib.sh's kv_ud_forge
	kill -0 "$kv_pid_cli" 2>/dev/null ||
		fail "the client ended before the stranger was done ($((SECONDS - kv_forge_start)) s): a longer run is needed" ||
		return
	kv_wait cli $((secs + 60))
	rc=$?
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" \
		"client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	[ $rc = 0 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" || return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["connection"] == "UD"' \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["connection"] == "UD"'
}

# A stranger's datagrams to the UD QPs of a running test are dropped and
# counted (foreign), not taken for the peer's: of the test's own size
# and an iteration's immediate data, each would fail --validate (its
# bytes are 0xa5) if it were taken.  send_bw's client posts one receive
# it never takes, so only the server counts.  A sender running flat out
# leaves the server's ring empty now and then, and the device drops
# whatever comes then, a stranger's datagram as the client's (lost).
# One datagram in flight (-t 1) makes that rare but not impossible: a
# UD SEND completes once it has left, not once it was received, and a
# fresh guest's server lost 12 of 100,000.  So the client's losses are
# checked by their accounting (both sides agree, and the server's count
# and its losses add up to what the client sent), and the strangers'
# datagrams, 20 ms apart, all counted.
test_send_bw_ud_foreign_datagrams_dropped() {
	need_ud
	ud_forge_during send_bw "$ud_forge_secs" 20 64 3 -s 64 -t 1 || return
	json_check "$KV_TMP/cli.json" 'd["foreign"] == 0' \
		-- "$KV_TMP/srv.json" 'd["foreign"] == 20' || return
	kv_python "$KV_TMP/cli.json" "$KV_TMP/srv.json" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
assert c["lost"] == s["lost"], f"lost: client {c['lost']}, server {s['lost']}"
assert s["iterations"] + s["lost"] == c["iterations"], (s["iterations"], s["lost"], c["iterations"])
PY
}

# A -c UD run's datagrams are traced on their own CQ and QP: each
# SEND_WITH_IMM posted and each receive posted has a completion id of
# the UD CQ's, and its completion shows the same CQ id, id and QP, the
# UD QP's and not the RC connection's, as an endpoint's work requests
# do.  send_lat: both sides send and receive datagrams.
test_send_lat_ud_traced() {
	local tr=/sys/kernel/tracing rc n=20
	need_ud
	trace_need
	trace_start kverbs_post_send kverbs_post_recv kverbs_wc ||
		fail "cannot set up tracing" || return
	ud_pair send_lat 2 $n
	rc=$?
	trace_stop kverbs_post_send kverbs_post_recv kverbs_wc
	[ $rc = 0 ] || return
	# "... kverbs_post_send: cq.id=5 cid=3 qp=20 SEND_WITH_IMM len=2 ... signaled",
	# "... kverbs_post_recv: cq.id=5 cid=4 qp=20 len=42",
	# "... kverbs_wc: cq.id=5 cid=3 qp=20 SEND SUCCESS len=0 vendor_err=0x0"
	kv_python $tr/trace "$n" <<'PY'
import re, sys
n = int(sys.argv[2])
posts, seen, wcs = {}, [], []
for line in open(sys.argv[1]):
    m = re.search(r"kverbs_post_(send|recv): cq\.id=(\d+) cid=(\d+) qp=(\d+) (\S+)", line)
    if m:
        seen.append(m.groups() + (line.strip(),))
        continue
    m = re.search(r"kverbs_wc: cq\.id=(\d+) cid=(\d+) qp=(\d+) (\S+) (\S+)", line)
    if m:
        wcs.append(m.groups())
# The datagrams' CQs are those of the SEND_WITH_IMMs; every receive
# posted there is a datagram's (the connection's control messages have
# their own CQ), whatever room it has for one.
dgram_cqs = {cq for kind, cq, _, _, what, _ in seen if kind == "send" and what == "SEND_WITH_IMM"}
for kind, cq, cid, qp, what, line in seen:
    if cq not in dgram_cqs or (kind == "send" and what != "SEND_WITH_IMM"):
        continue
    key = (cq, cid)
    if cid == "0" or key in posts:
        sys.exit(f"datagram post without an id of its own: {line}")
    posts[key] = (kind, qp)
sends = [k for k, (kind, _) in posts.items() if kind == "send"]
if len(sends) != 2 * n:
    sys.exit(f"{len(sends)} datagrams posted, expected {2 * n}")
ud_qps = {qp for _, qp in posts.values()}
ud_cqs = {cq for cq, _ in posts}
if len(ud_qps) != 2 or len(ud_cqs) != 2:
    sys.exit(f"datagrams on QPs {sorted(ud_qps)}, CQs {sorted(ud_cqs)}: expected two of each")
done = {}
for cq, cid, qp, op, status in wcs:
    if cq not in ud_cqs:
        continue
    if (cq, cid) not in posts:
        sys.exit(f"a completion on a UD CQ with no post: cq.id={cq} cid={cid} qp={qp} {op} {status}")
    kind, pqp = posts[(cq, cid)]
    if qp != pqp:
        sys.exit(f"cq.id={cq} cid={cid} posted on qp {pqp}, completed on qp {qp}")
    if status == "SUCCESS":
        done[(cq, cid)] = kind
got = sum(1 for k in sends if done.get(k) == "send")
if got != 2 * n:
    sys.exit(f"{got} of {2 * n} datagram SENDs completed with their ids")
recvs = sum(1 for kind in done.values() if kind == "recv")
if recvs != 2 * n:
    sys.exit(f"{recvs} datagram receives completed with their ids, expected {2 * n}")
PY
	rc=$?
	echo >$tr/trace
	[ $rc = 0 ] || fail "see above"
}

# In send_lat each side keeps a receive spare beside the one its
# peer's next message takes: one stranger's datagram to each side is
# taken there, dropped and counted, and the round trips go on.  Taken
# for the peer's, it would end the test (a byte short of the test's
# size: EPROTO).  A datagram larger than the receive it meets never
# completes at all: a UD QP without an SRQ drops it (IBA's class D
# error; rxe's responder sets drop_msg).
test_send_lat_ud_foreign_datagram_dropped() {
	need_ud
	ud_forge_during send_lat "$ud_forge_secs" 1 1 0 -s 2 || return
	json_check "$KV_TMP/cli.json" 'd["foreign"] == 1' 'd["iterations"] > 0' \
		-- "$KV_TMP/srv.json" 'd["foreign"] == 1'
}

# A stranger's datagram as large as the path MTU allows, far larger than
# the test's, is dropped and counted as any other stranger's: each
# receive has room for any datagram the port carries.
test_send_lat_ud_foreign_large_datagram_dropped() {
	local mtu
	need_ud
	ud_pair send_lat 2 10 || return
	mtu=$(ud_mtu) || return
	ud_forge_during send_lat "$ud_forge_secs" 1 "$mtu" 0 -s 2 || return
	json_check "$KV_TMP/cli.json" 'd["foreign"] == 1' 'd["iterations"] > 0' \
		-- "$KV_TMP/srv.json" 'd["foreign"] == 1'
}

# kverbs serve takes UD clients on its file's listener as any other,
# two at once beside an RC one: each session has its own datagram QP.
test_serve_ud_clients_validate() {
	need_ud
	serve_two_then_one "" "-c UD -s 256 -n 300 --validate" "-c UD -s 64 -n 100 --validate" \
		rc "send_bw -s 256 -n 100 --validate" || return
	kv_python "$KV_TMP/srv.json" "$KV_TMP/bw.json" "$KV_TMP/lat.json" "$KV_TMP/rc.json" <<'PY'
import json, sys
sessions = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bw, lat, rc = (json.load(open(p)) for p in sys.argv[2:])
assert len(sessions) == 3 and all(s["status"] == "ok" for s in sessions), sessions
conn = sorted((s["test"], s["connection"], s["iterations"], s["lost"]) for s in sessions)
assert conn == [("send_bw", "RC", 100, 0), ("send_bw", "UD", 300, 0),
                ("send_lat", "UD", 100, 0)], conn
assert (bw["connection"], lat["connection"], rc["connection"]) == ("UD", "UD", "RC")
PY
}

# One byte past the MTU: the client refuses before it connects, and the
# server, still waiting, serves a fair client next (the control).
test_send_bw_ud_above_mtu_emsgsize() {
	local mtu rc
	need_ud
	ud_pair send_bw 64 10 || return
	mtu=$(ud_mtu) || return
	port=$((port + 1))
	perf_server srv send_bw || return
	perf_client big send_bw -c UD -s $((mtu + 1)) -n 10
	rc=$?
	[ $rc = 1 ] || fail "client over the MTU exited $rc: $(cat "$KV_TMP/big.err")" || return
	json_check "$KV_TMP/big.json" 'd["error"]["name"] == "EMSGSIZE"' \
		'd["error"]["step"] == "setup"' '"path MTU" in d["error"]["message"]' \
		'd["iterations"] == 0' || return
	perf_client cli send_bw -c UD -s "$mtu" -n 10 --validate ||
		fail "fair client exited $?: $(cat "$KV_TMP/cli.err")" || return
	kv_wait srv 30 || fail "server: $(cat "$KV_TMP/srv.err")" || return
	json_check "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["iterations"] == 10' \
		'd["connection"] == "UD"'
}

# -c takes RC and UD only, UD only on send_bw and send_lat, and not with
# the RC modes; -c RC is the default and runs as before (the control).
test_ud_connection_usage() {
	local out
	out=$("$KVERBS" send_bw -c XX "$KV_ADDR" 2>&1)
	[ $? = 2 ] || fail "-c XX should be a usage error: $out" || return
	[[ $out == *"invalid connection type 'XX' (RC or UD)"* ]] || fail "message: $out" || return
	out=$("$KVERBS" write_bw -c UD "$KV_ADDR" 2>&1)
	[ $? = 2 ] || fail "write_bw -c UD should be a usage error: $out" || return
	[[ $out == *"-c UD is for send_bw and send_lat"* ]] || fail "message: $out" || return
	out=$("$KVERBS" send_bw -c UD -b "$KV_ADDR" 2>&1)
	[ $? = 2 ] || fail "-c UD -b should be a usage error: $out" || return
	[[ $out == *"-c UD and -b exclude each other"* ]] || fail "message: $out" || return
	perf_pair send_bw -c RC -s 64 -n 10 --validate || fail "-c RC" || return
	json_check "$KV_TMP/cli.json" 'd["connection"] == "RC"' 'd["lost"] == 0' \
		-- "$KV_TMP/srv.json" 'd["connection"] == "RC"'
}

# iWARP has no UD: the client refuses before it connects.
test_send_bw_ud_refused_over_iwarp() {
	local rc
	[ "$KV_TYPE" = siw ] || skip "UD is refused only over iWARP (KV_TYPE=siw)"
	port=$((port + 1))
	perf_server srv send_bw || return
	perf_client cli send_bw -c UD -s 64 -n 10
	rc=$?
	kill -INT "$kv_pid_srv" 2>/dev/null
	kv_wait srv 30
	[ $rc = 1 ] || fail "client exited $rc: $(cat "$KV_TMP/cli.err")" || return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "EOPNOTSUPP"' \
		'd["error"]["step"] == "setup"' '"iWARP" in d["error"]["message"]'
}

perf_tests=(test_write_bw_64_validate test_write_bw_1M_validate \
	test_read_bw_64_validate test_read_bw_1M_validate \
	test_send_bw_64_validate test_send_bw_1M_validate test_send_bw_4097_validate \
	test_send_bw_48_validate test_read_lat_2_validate test_read_lat_64K_validate \
	test_atomic_lat_fetch_add test_atomic_lat_cmp_swap \
	test_atomic_bw_fetch_add test_atomic_bw_cmp_swap test_atomic_refused_on_siw \
	test_read_lat_duration \
	test_lat_text_output \
	test_write_lat_2_validate test_write_lat_4096_validate \
	test_send_lat_2_validate test_send_lat_4096_validate test_send_lat_48_validate \
	test_write_lat_duration test_send_lat_duration test_pingpong_other_refused \
	test_write_bw_duration test_send_bw_duration_validate test_json_fields \
	test_read_bw_progress_validate test_ctrl_back_to_back \
	test_text_output test_perftest_habits test_size_above_server_limit test_other_test_refused \
	test_write_bw_all_sizes test_read_lat_all_sizes_text \
	test_write_bw_4_qps_validate test_send_bw_2_qps_duration_validate \
	test_write_bw_bidir_validate test_read_bw_bidir_validate \
	test_send_bw_bidir_validate test_atomic_bw_bidir_validate \
	test_write_bw_bidir_2_qps_validate test_bidir_both_ways_traced \
	test_write_bw_events_validate test_read_bw_events_validate \
	test_send_bw_events_validate test_atomic_bw_events_validate \
	test_read_lat_events test_send_lat_events_validate test_atomic_lat_events \
	test_read_bw_busy_poll_validate test_send_bw_busy_poll_validate \
	test_send_lat_busy_poll_validate test_write_lat_serve_busy_poll \
	test_write_lat_serve_refused test_write_lat_serve_events_refused \
	test_send_bw_server_context_traced test_bidir_server_context_traced \
	test_poll_context_traced test_poll_direct_write_bw_validate \
	test_poll_softirq_write_bw_validate test_poll_workqueue_write_bw_validate \
	test_poll_unbound_write_bw_validate test_poll_direct_send_lat_validate \
	test_poll_softirq_send_lat_validate test_poll_workqueue_send_lat_validate \
	test_poll_unbound_send_lat_validate test_poll_direct_write_lat_validate \
	test_poll_events_is_softirq test_cq_pool_write_bw_validate \
	test_cq_pool_workqueue_send_bw_validate test_dim_refused \
	test_hello_write_lat_refused_without_busy_poll \
	test_hello_write_lat_accepted_with_busy_poll test_hello_reverse_costs_no_cpu \
	test_write_lat_events_refused \
	test_events_in_softirq_traced test_send_bw_receives_ahead_traced \
	test_client_sigint_events \
	test_write_bw_ipv6_validate \
	test_hello_unknown_version test_hello_reserved_set test_hello_bad_magic \
	test_hello_missing test_hello_over_max_duration test_hello_at_max_duration \
	test_hello_over_max_iters test_hello_at_max_iters test_hello_over_module_max_iters \
	test_hello_reverse_refused test_hello_reverse_accepted_without_no_reverse \
	test_hello_forward_served_with_no_reverse test_session_cut_at_max_duration \
	test_session_within_max_duration test_done_believed test_done_more_than_asked \
	test_done_rate_overflows test_client_sigint test_client_killed \
	test_write_bw_imm_validate test_send_bw_imm_validate test_write_bw_imm_48_validate \
	test_write_lat_imm_validate test_send_lat_imm_validate test_write_bw_imm_bidir_validate \
	test_write_bw_imm_traced test_imm_wrong_caught test_imm_missing_caught \
	test_imm_hello_read_refused test_imm_hello_iwarp_refused \
	test_post_list_validate test_post_modes_write_bw_validate test_post_list_traced \
	test_inline_write_bw_validate \
	test_inline_send_validate test_inline_too_large_refused test_hello_post_modes_refused \
	test_write_bw_rw_64_validate test_write_bw_rw_1M_validate \
	test_write_bw_rw_4097_validate test_read_bw_rw_64_validate \
	test_read_bw_rw_1M_validate test_read_lat_rw_2_validate \
	test_read_lat_rw_64K_validate test_read_bw_rw_bidir_validate test_rw_each_end_traced \
	test_rw_refused test_rw_hello_refused test_rw_force_mr_validate \
	test_write_bw_inv_validate test_read_bw_inv_validate test_read_bw_1M_inv_validate \
	test_read_lat_inv_validate test_write_bw_inv_bidir_validate test_read_bw_inv_traced \
	test_inv_missing_caught test_inv_unasked_caught test_inv_wrong_key_caught \
	test_inv_old_key_refused test_inv_hello_refused test_inv_text_output \
	test_send_bw_srq_4_qps_validate test_send_bw_srq_limit_validate \
	test_send_lat_srq_limit_validate \
	test_send_bw_srq_rdma_view test_send_bw_srq_refused \
	test_serve_srq_send_bw_send_lat_validate test_send_lat_srq_validate \
	test_send_bw_srq_48_imm_validate test_srq_windows \
	test_srq_credits_enforced test_srq_failed_peers_cost_nothing \
	test_srq_peer_after_done_cut_off \
	test_read_lat_phases test_send_lat_phases_events test_read_lat_phases_workqueue \
	test_send_lat_phases_workqueue test_atomic_lat_phases_unbound \
	test_phases_text_output test_phases_refused \
	test_send_bw_ud_64_validate test_send_bw_ud_mtu_validate test_send_lat_ud_validate \
	test_send_bw_ud_workqueue_validate test_send_lat_ud_busy_poll_validate \
	test_send_bw_ud_lost_counted test_send_bw_ud_foreign_datagrams_dropped \
	test_send_lat_ud_foreign_datagram_dropped test_send_lat_ud_foreign_large_datagram_dropped \
	test_send_lat_ud_traced \
	test_serve_ud_clients_validate \
	test_send_bw_ud_above_mtu_emsgsize test_ud_connection_usage test_send_bw_ud_refused_over_iwarp)
ktap_main "${perf_tests[@]}"
