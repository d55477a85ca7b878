#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# counters: what kverbs reports against what the device counted.  rxe
# keeps its own port counters (hw_counters: packets sent and received,
# retries, RNR NAKs) and ib_cm its own (the connection's MADs, which rxe
# carries as packets too).  For each perf test and the ping, over one
# run, rxe's count of packets sent must be exactly what the work
# requests kverbs posted (its kverbs_post_send events) put on the wire
# by rxe's rules, plus ib_cm's MADs; and the data work requests among
# them must be the iterations the reports claim, at the size they
# claim.  Documentation/testing.rst ("The device's own count") derives
# the equation.  Both ends run in this guest on one device, so every
# packet is counted once sent and once received.
. "$(dirname "$0")/lib.sh"

port=18600
kv_before_test() {
	port=$((18600 + 10 * KV_TEST_NUM))
}
step_limit=$((10 * KV_TIME_SCALE))
HW=/sys/class/infiniband/$KV_DEV/ports/1/hw_counters
PORT=/sys/class/infiniband/$KV_DEV/ports/1

counters_need() {
	[ "$KV_TYPE" = siw ] && skip "siw keeps no port counters: rxe's are the oracle"
	trace_need
	[ -d "$HW" ] && [ -d "$PORT/cm_tx_msgs" ] ||
		fail "no port counters or no ib_cm counters under $PORT"
}

# snapshot FILE: every counter of the port and the MADs ib_cm sent on
# it (cm_tx_msgs counts each retry too), NAME VALUE.
snapshot() {
	local f v
	for f in "$HW"/* "$PORT"/cm_tx_msgs/*; do
		read -r v < "$f"
		echo "${f#/sys/class/} $v"
	done > "$1"
}

# settle FILE: snapshot into FILE once two snapshots half a second apart
# agree, for at most 10 s (times KV_TIME_SCALE).
settle() {
	local i prev="" now
	for ((i = 0; i < 20 * KV_TIME_SCALE; i++)); do
		kv_sleep 0.5
		snapshot "$1"
		mapfile -t now < "$1"
		[ "${now[*]}" = "$prev" ] && return 0
		prev=${now[*]}
	done
}

# The device's active MTU, which is every RC connection's path MTU here.
active_mtu() {
	ibv_devinfo -d "$KV_DEV" | awk '$1 == "active_mtu:" { print $2; exit }'
}

# measure NAME SERVER_CMD... -- CLIENT_CMD...: the server in the
# background, then the client, with the kverbs_post_send events and the
# counters recorded around both.  Reports in $KV_TMP/NAME.srv.json and
# NAME.cli.json, the trace in NAME.trace, the counters in NAME.before
# and NAME.after.
measure() {
	local name=$1 srv=() rc
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	trace_start kverbs_post_send || return
	snapshot "$KV_TMP/$name.before"
	"$KVERBS" "${srv[@]}" >"$KV_TMP/$name.srv.json" 2>"$KV_TMP/$name.srv.err" &
	eval "kv_pid_srv=$!"
	wait_for 10 kv_listening "${KV_LISTEN_ADDR:-0.0.0.0}" "$port" ||
		fail "the server did not listen: $(cat "$KV_TMP/$name.srv.err")" || return
	timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" "$@" \
		>"$KV_TMP/$name.cli.json" 2>"$KV_TMP/$name.cli.err"
	rc=$?
	kv_wait srv 30 ||
		fail "server: $(cat "$KV_TMP/$name.srv.err" "$KV_TMP/$name.srv.json")" || return
	[ $rc = 0 ] ||
		fail "client exited $rc: $(cat "$KV_TMP/$name.cli.err"; grep -o '"error":{[^}]*}' "$KV_TMP/$name.cli.json")" ||
		return
	# The last ACKs and the DREP may be on their way when the tools
	# return, and ib_cm counts a MAD that awaits an answer once it came:
	# the counters are read once they stand still for half a second.
	settle "$KV_TMP/$name.after"
	trace_stop kverbs_post_send
	cp /sys/kernel/tracing/trace "$KV_TMP/$name.trace"
}

# perf NAME TEST DATA_OPS PER_ITER [client options]: TEST measured, the
# client validated; DATA_OPS (comma-separated opcodes) of the message
# size are the data work requests, PER_ITER of them an iteration.
perf() {
	local name=$1 test=$2 ops=$3 per=$4 srv=()
	shift 4
	# A bidirectional test is so on both sides, as perftest's.
	[ "$1" = -b ] && srv=(-b)
	measure "$name" "$test" -p "$port" --timeout "$step_limit" --json "${srv[@]}" -- \
		"$test" -p "$port" --timeout "$step_limit" --json --validate "$@" "$KV_ADDR" ||
		return
	oracle "$name" perf "$ops" "$per"
}

# oracle NAME KIND DATA_OPS PER_ITER: the check, then the same check fed
# a report one iteration longer, one of twice the size, and the packets
# counted at half the path MTU (where some message is longer than
# that), each of which it must refuse: a check that cannot fail checks
# nothing.
oracle() {
	local out
	out=$(check "$@" 0 1 1) || fail "$out" || return
	if out=$(check "$@" 1 1 1); then
		fail "the oracle took a report one iteration longer: $out"
		return
	fi
	if out=$(check "$@" 0 2 1); then
		fail "the oracle took a report of twice the size: $out"
		return
	fi
	out=$(check "$@" 0 1 2)
	case $? in
	0) fail "the oracle took the packets of half the MTU: $out" ;;
	3) return 0 ;;	# every message fits in half the MTU
	esac
}

# check NAME KIND DATA_OPS PER_ITER EXTRA_ITERS SIZE_FACTOR MTU_DIVISOR
check() {
	kv_python "$KV_TMP/$1" "$2" "$3" "$4" "$5" "$6" "$7" "$(active_mtu)" <<'PY'
import json, re, sys

import traceback

def excepthook(*exc):
    print("the check itself failed: " + "".join(traceback.format_exception(*exc)))
    sys.exit(2)

sys.excepthook = excepthook
base, kind, ops, per, extra, factor, div, mtu = sys.argv[1:]
per, extra, factor, div = int(per), int(extra), int(factor), int(div)
mtu = int(mtu)
cli = json.loads(open(base + ".cli.json").read().splitlines()[-1])
size, iters = cli["size"], cli["iterations"]
if kind == "perf":
    ud = cli.get("connection") == "UD"
    mtu = cli["mtu"]
else:
    ud = cli.get("transport") == "ud"
size *= factor
iters += extra
mtu //= div

def counters(path):
    c = {}
    for line in open(path):
        k, v = line.split()
        c[k] = int(v)
    return c

before, after = counters(base + ".before"), counters(base + ".after")
delta = {k: after[k] - before[k] for k in after}
hw = {k.rsplit("/", 1)[1]: v for k, v in delta.items() if "/hw_counters/" in k}
mads = sum(v for k, v in delta.items() if "/cm_tx_msgs/" in k)

def pkts(n):
    return max(1, -(-n // mtu))

# rxe's requester asks for an ACK on a message's last packet and on
# every 66th packet before it (rxe_req.c: noack_pkts > RXE_MAX_PKT_PER_ACK,
# reset by the last); its responder answers each such packet.  A READ is
# one request and its response packets; an atomic a request and its ACK.
# UD: one packet, no answer.  REG_MR and LOCAL_INV stay on the host.
want = mads
data = 0
wrs = {}
lens = []
for line in open(base + ".trace"):
    m = re.search(r"kverbs_post_send: .* qp=\d+ (\w+) len=(\d+)", line)
    if not m:
        continue
    op, n = m.group(1), int(m.group(2))
    wrs[op] = wrs.get(op, 0) + 1
    if op not in ("REG_MR", "LOCAL_INV"):
        lens.append(n)
    if op in ops.split(",") and n == size:
        data += 1
    if op in ("SEND", "SEND_WITH_IMM", "SEND_WITH_INV", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM"):
        p = pkts(n)
        # A perf test over UD sends its data so, its control messages
        # over an RC QP; the ping over UD sends all its messages so.
        if ud and (kind == "ping" or (op in ops.split(",") and n == size)):
            want += p
        else:
            want += p + 1 + (p - 1) // 66
    elif op in ("RDMA_READ", "RDMA_READ_WITH_INV"):
        want += 1 + pkts(n)
    elif op.startswith("ATOMIC"):
        want += 2

if div > 1 and all(n <= mtu for n in lens):
    print(f"every message fits in {mtu} bytes: counting at that MTU changes nothing")
    sys.exit(3)
retries = {k: hw.get(k, 0) for k in ("duplicate_request", "out_of_seq_request",
           "rcvd_rnr_err", "send_rnr_err", "rcvd_seq_err", "completer_retry_err",
           "retry_exceeded_err", "retry_rnr_exceeded_err")}
story = (f"{iters} iterations of {size} bytes claimed, {data} data work requests "
         f"({ops} of {size} bytes) posted, {per} an iteration; work requests {wrs}; "
         f"MTU {mtu}; ib_cm MADs {mads}; rxe sent {hw['sent_pkts']} packets and "
         f"received {hw['rcvd_pkts']}, expected {want}; retries {retries}")
bad = []
if data != per * iters:
    bad.append("the data work requests are not the iterations reported")
if any(retries.values()):
    bad.append("the device retried, which this equation does not count")
elif hw["sent_pkts"] != want:
    bad.append("the device sent another number of packets than the work requests make")
if hw["rcvd_pkts"] != hw["sent_pkts"]:
    bad.append("one device, both ends: every packet sent is received")
print(("; ".join(bad) + ": " if bad else "") + story)
sys.exit(1 if bad else 0)
PY
}

test_write_bw() {
	counters_need || return
	perf write_bw write_bw RDMA_WRITE 1 -s 4096 -n 300
}

# 131,072 bytes: 128 packets at 1024, one ACK asked for in the middle.
test_write_bw_128_packets() {
	counters_need || return
	perf w128 write_bw RDMA_WRITE 1 -s 131072 -n 20
}

# -b: the report's iterations are both directions'.
test_write_bw_bidir() {
	counters_need || return
	perf wbidir write_bw RDMA_WRITE 1 -b -s 8192 -n 100
}

test_read_bw() {
	counters_need || return
	perf read_bw read_bw RDMA_READ 1 -s 5000 -n 200
}

test_send_bw() {
	counters_need || return
	perf send_bw send_bw SEND 1 -s 3000 -n 300
}

test_send_bw_imm() {
	counters_need || return
	perf send_imm send_bw SEND_WITH_IMM 1 -s 3000 -n 100 --imm
}

test_atomic_bw() {
	counters_need || return
	perf atomic_bw atomic_bw ATOMIC_FETCH_AND_ADD 1 -n 300
}

test_write_lat() {
	counters_need || return
	perf write_lat write_lat RDMA_WRITE 2 -s 2000 -n 100
}

test_read_lat() {
	counters_need || return
	perf read_lat read_lat RDMA_READ 1 -s 2000 -n 100
}

test_send_lat() {
	counters_need || return
	perf send_lat send_lat SEND 2 -s 2000 -n 100
}

test_atomic_lat() {
	counters_need || return
	perf atomic_lat atomic_lat ATOMIC_FETCH_AND_ADD 1 -n 100
}

test_send_bw_ud() {
	counters_need || return
	perf send_ud send_bw SEND_WITH_IMM 1 -s 512 -n 300 -c UD
}

# rdma_rw (--rw) builds the READs: one work request a message here.
test_read_bw_rw() {
	counters_need || return
	perf read_rw read_bw RDMA_READ 1 --rw -s 65536 -n 50
}

# --inv: each round's key handed back in a Send with Invalidate, the
# registrations and invalidations local.
test_write_bw_inv() {
	counters_need || return
	perf write_inv write_bw RDMA_WRITE 1 --inv -s 3000 -n 300
}

# The ping: per iteration the server READs the client's buffer and
# WRITEs it back, each one work request at this size.
test_ping() {
	counters_need || return
	KV_LISTEN_ADDR=$KV_ADDR measure ping ping -s -a "$KV_ADDR" -p "$port" -C 20 --json -- \
		ping -c -a "$KV_ADDR" -p "$port" -C 20 -S 20000 -V --json || return
	oracle ping ping RDMA_READ,RDMA_WRITE 2
}

# The ping over UD: each message a datagram, the data in SENDs.
test_ping_ud() {
	counters_need || return
	KV_LISTEN_ADDR=$KV_ADDR measure ping_ud ping -s -a "$KV_ADDR" -p "$port" --ud -C 20 -V --json -- \
		ping -c -a "$KV_ADDR" -p "$port" --ud -C 20 -S 600 -V --json || return
	oracle ping_ud ping SEND_WITH_IMM 2
}

ktap_main test_write_bw test_write_bw_128_packets test_write_bw_bidir \
	test_read_bw test_send_bw test_send_bw_imm test_atomic_bw \
	test_write_lat test_read_lat test_send_lat test_atomic_lat \
	test_send_bw_ud test_read_bw_rw test_write_bw_inv test_ping test_ping_ud
