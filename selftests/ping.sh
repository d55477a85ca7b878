#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel-to-kernel ping over rxe: every count and size in the matrix, with
# both ends validating every byte against rping's pattern.
. "$(dirname "$0")/lib.sh"

port=17200

# ping_case CLIENT_OPTS...: kv_ping_pair on a port of its own; each
# call's wall-clock span lies within the case's and holds its test, the
# server's beginning first.  Two kverbs ends agree on remote
# invalidation: each of the server's two go-aheads per iteration
# invalidated the key the client advertised, which the client checked.
ping_case() {
	local t0=${EPOCHREALTIME/./}000 t1
	port=$((port + 1))
	kv_ping_pair "$port" "$@" || return
	t1=${EPOCHREALTIME/./}000
	json_check "$KV_TMP/cli.json" "$t0 <= d['start_ns']" "d['end_ns'] <= $t1" \
		'd["end_ns"] - d["start_ns"] >= d["elapsed_ns"]' \
		'd["inv_remote"] == 2 * d["iterations"]' 'd["inv_sent"] == 0' \
		-- "$KV_TMP/srv.json" "$t0 <= d['start_ns']" "d['end_ns'] <= $t1" \
		'd["end_ns"] - d["start_ns"] >= d["elapsed_ns"]' \
		'd["inv_sent"] == 2 * d["iterations"]' 'd["inv_remote"] == 0' || return
	kv_python "$KV_TMP/cli.json" "$KV_TMP/srv.json" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
assert s["start_ns"] <= c["start_ns"], f"server's call {s['start_ns']} after the client's {c['start_ns']}"
PY
}

# The matrix: counts 1, 10, 1000 by sizes 26 (rping's smallest), 64
# (rping's default), a page, 64 KiB and 1 MiB.
matrix=()
# KV_BIG_COUNT: the debug lane's sanitizers make every iteration some
# twenty times slower, so it runs fewer there (the names say how many).
big=${KV_BIG_COUNT:-1000}
for count in 1 10 "$big"; do
	for size in 26 64 4096 65536 1M; do
		# 1000 MiB each way through rxe under TCG can take over 140 s
		# on two loaded cores: the hang guard gives it room.
		limit=120
		[ "$size" = 1M ] && [ "$count" -ge 1000 ] && limit=600
		eval "test_count_${count}_size_${size}() { KV_CLIENT_LIMIT=$limit ping_case -C $count -S $size; }"
		matrix+=("test_count_${count}_size_${size}")
	done
done

# The combinations (KV_MATRIX=0 leaves them out: lib.sh): the long runs
# but one.  count_1000_size_64 keeps the long run's path (a key rotated
# a thousand times), count_10_size_1M the largest registration's.
# shellcheck disable=SC2034 # kv_matrix: read by lib.sh's ktap_main (KV_MATRIX=0)
kv_matrix="count_${big}_size_26 count_${big}_size_4096 count_${big}_size_65536 count_${big}_size_1M"

# Odd sizes: the last page is partly used, the sg list is not page-sized.
test_count_10_size_4097()	{ ping_case -C 10 -S 4097; }
test_count_10_size_1000003()	{ ping_case -C 10 -S 1000003; }

# The client advertises a key only once its registration has completed:
# rxe runs a registration again when it retransmits a SEND posted before
# it, and a second REG_MR of a valid MR fails (see kverbs_buf_reg_wr()).
# The kverbs_post_send and kverbs_wc tracepoints pair each completion
# with its post by completion id (cq.id, cid): on the client's QP (the
# one that posts REG_MR) no SEND may be posted while a REG_MR is
# outstanding.
test_advertise_once_registered_traced() {
	local tr=/sys/kernel/tracing rc
	trace_need
	trace_start kverbs_post_send kverbs_wc || fail "cannot set up tracing" || return
	ping_case -C 5 -S 64
	rc=$?
	trace_stop kverbs_post_send kverbs_wc
	[ $rc = 0 ] || return
	# "... kverbs_post_send: cq.id=1 cid=2 qp=17 REG_MR len=64 key=0x... raddr=0x0 signaled",
	# "... kverbs_wc: cq.id=1 cid=2 qp=17 REG_MR SUCCESS len=0 vendor_err=0x0"
	kv_python $tr/trace <<'PY'
import re, sys
# Per QP: REG_MRs posted, SENDs posted, the cids of REG_MRs outstanding,
# early SENDs.
regs, sends, outstanding, early = {}, {}, {}, {}
for line in open(sys.argv[1]):
    m = re.search(r"kverbs_post_send: cq\.id=(\d+) cid=(\d+) qp=(\d+) (\w+) ", line)
    if m:
        cq, cid, qp, op = m.groups()
        if op == "REG_MR":
            regs[qp] = regs.get(qp, 0) + 1
            outstanding.setdefault(qp, set()).add((cq, cid))
        elif op == "SEND":
            sends[qp] = sends.get(qp, 0) + 1
            if outstanding.get(qp):
                early.setdefault(qp, []).append(line.strip())
        continue
    m = re.search(r"kverbs_wc: cq\.id=(\d+) cid=(\d+) qp=(\d+) REG_MR SUCCESS", line)
    if m:
        cq, cid, qp = m.groups()
        if (cq, cid) not in outstanding.get(qp, set()):
            sys.exit(f"a REG_MR completion without its post: {line.strip()}")
        outstanding[qp].discard((cq, cid))
# Two advertisements per iteration.  (On iWARP the server's rdma_rw
# registers its READ sink too, five times, unsignaled.)
client = [qp for qp, n in regs.items() if n == 10]
if len(client) != 1:
    sys.exit(f"REG_MR posts per QP: {regs}, expected 10 on the client's")
qp = client[0]
if sends.get(qp) != 10:
    sys.exit(f"the client's QP {qp} posted {sends.get(qp)} SENDs, expected 10")
if qp in early:
    sys.exit(f"{len(early[qp])} SENDs posted before the REG_MR ahead of them "
             f"completed, first: {early[qp][0]}")
PY
}

# inv_traced SERVER_OPTS CLIENT_OPTS: a validated ping of 5 iterations
# between SERVER_OPTS and CLIENT_OPTS (quoted lists), traced: its
# work requests and completions in $KV_TMP/inv.trace.
inv_traced() {
	local tr=/sys/kernel/tracing rc srv_opts=$1 cli_opts=$2
	trace_need
	port=$((port + 1))
	trace_start kverbs_post_send kverbs_wc || fail "cannot set up tracing" || return
	# shellcheck disable=SC2086
	kv_server srv "$port" -V $srv_opts || { trace_stop kverbs_post_send kverbs_wc; return 1; }
	# shellcheck disable=SC2086
	kv_client cli "$port" -V -C 5 $cli_opts
	rc=$?
	kv_wait srv 30
	rc=$((rc | $?))
	trace_stop kverbs_post_send kverbs_wc
	cp $tr/trace "$KV_TMP/inv.trace"
	[ $rc = 0 ] || fail "ping failed: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json" "$KV_TMP/srv.json")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["iterations"] == 5' \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["iterations"] == 5'
}

# inv_trace_check MODE: what the client's QP (the one that posts REG_MR)
# posted and saw in $KV_TMP/inv.trace.  MODE remote: no LOCAL_INV at all,
# every go-ahead received as a SEND with invalidate of the key the
# client's last REG_MR gave, and the server's QP posted 10 SEND_WITH_INV
# naming those keys, no plain SEND.  MODE local: 10 LOCAL_INVs of the
# keys registered, no SEND_WITH_INV anywhere, no receive invalidating.
inv_trace_check() {
	kv_python "$KV_TMP/inv.trace" "$1" <<'PY'
import re, sys
trace, mode = sys.argv[1], sys.argv[2]
posts, wcs = [], []
for line in open(trace):
    m = re.search(r"kverbs_post_send: cq\.id=(\d+) cid=(\d+) qp=(\d+) (\w+) len=\d+ key=0x([0-9a-f]+)", line)
    if m:
        posts.append((m.group(3), m.group(4), int(m.group(5), 16)))
        continue
    m = re.search(r"kverbs_wc: cq\.id=\d+ cid=\d+ qp=(\d+) (\w+) SUCCESS len=\d+ vendor_err=0x0( invalidated=0x([0-9a-f]+))?", line)
    if m:
        wcs.append((m.group(1), m.group(2), int(m.group(4), 16) if m.group(4) else None))
regs = {}
for qp, op, key in posts:
    if op == "REG_MR":
        regs.setdefault(qp, []).append(key)
client = [qp for qp, k in regs.items() if len(k) == 10]
if len(client) != 1:
    sys.exit(f"REG_MR posts per QP: { {q: len(k) for q, k in regs.items()} }, expected 10 on the client's")
cqp = client[0]
keys = regs[cqp]
cli_inv = [key for qp, op, key in posts if qp == cqp and op == "LOCAL_INV"]
withinv = [(qp, key) for qp, op, key in posts if op == "SEND_WITH_INV"]
recv_inv = [key for qp, step, key in wcs if qp == cqp and step == "RECV" and key is not None]
recvs = [key for qp, step, key in wcs if qp == cqp and step == "RECV"]
if mode == "remote":
    if cli_inv:
        sys.exit(f"the client posted {len(cli_inv)} LOCAL_INVs, expected none")
    if sorted(k for q, k in withinv if q != cqp) != sorted(keys) or len(withinv) != 10:
        sys.exit(f"SEND_WITH_INV keys {[hex(k) for q, k in withinv]}, expected the client's {[hex(k) for k in keys]}")
    if recv_inv != keys:
        sys.exit(f"the client's receives invalidated {[hex(k) for k in recv_inv]}, expected {[hex(k) for k in keys]} in order")
    plain = [1 for qp, op, key in posts if qp != cqp and op == "SEND"]
    if plain:
        sys.exit(f"the server posted {len(plain)} plain SENDs")
else:
    if sorted(cli_inv) != sorted(keys):
        sys.exit(f"the client's LOCAL_INVs {[hex(k) for k in cli_inv]}, expected {[hex(k) for k in keys]}")
    if withinv or recv_inv:
        sys.exit(f"SEND_WITH_INV posted {withinv}, receives invalidating {recv_inv}")
    if len(recvs) != 10:
        sys.exit(f"the client completed {len(recvs)} receives, expected 10")
PY
}

# Two kverbs ends: each go-ahead is a SEND with invalidate of the key the
# client advertised (the trace shows it posted and received with that
# key), and the client posts no LOCAL_INV.
test_inv_remote_traced() {
	inv_traced "" "" || return
	inv_trace_check remote || return
	json_check "$KV_TMP/cli.json" 'd["inv_remote"] == 10' 'd["inv_sent"] == 0' 'd["no_inv"] is False' \
		-- "$KV_TMP/srv.json" 'd["inv_sent"] == 10' 'd["inv_remote"] == 0'
}

# --no-inv on either end: nothing is invalidated remotely, and the
# client revokes each key itself, as with rping.
test_inv_client_no_inv() {
	inv_traced "" "--no-inv" || return
	inv_trace_check local || return
	json_check "$KV_TMP/cli.json" 'd["inv_remote"] == 0' 'd["inv_sent"] == 0' 'd["no_inv"] is True' \
		-- "$KV_TMP/srv.json" 'd["inv_sent"] == 0' 'd["inv_remote"] == 0'
}

test_inv_server_no_inv() {
	inv_traced "--no-inv" "" || return
	inv_trace_check local || return
	json_check "$KV_TMP/cli.json" 'd["inv_remote"] == 0' 'd["inv_sent"] == 0' \
		-- "$KV_TMP/srv.json" 'd["inv_sent"] == 0' 'd["no_inv"] is True'
}

# The text report counts the keys on both ends.
test_inv_text_output() {
	port=$((port + 1))
	"$KVERBS" ping -s -a "$KV_ADDR" -p "$port" > "$KV_TMP/ts.out" 2>&1 &
	# shellcheck disable=SC2034 # kv_pid_ts: read by the eval of kv_wait ts
	kv_pid_ts=$!
	wait_for 10 kv_listening "$KV_ADDR" "$port" || fail "server not listening" || return
	timeout $((60 * KV_TIME_SCALE)) "$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -C 3 \
		> "$KV_TMP/tc.out" 2>&1 || fail "client: $(cat "$KV_TMP/tc.out")" || return
	kv_wait ts 30 || fail "server: $(cat "$KV_TMP/ts.out")" || return
	grep -q '; remote invalidation: 6 of our keys by the peer, 0 SENDs with invalidate$' \
		"$KV_TMP/tc.out" || fail "client output: $(cat "$KV_TMP/tc.out")" || return
	grep -q '; remote invalidation: 0 of our keys by the peer, 6 SENDs with invalidate$' \
		"$KV_TMP/ts.out" || fail "server output: $(cat "$KV_TMP/ts.out")"
}

# inv_peer MODE: a validated 3-iteration ping of the kverbs client with
# selftests/ping_peer -m MODE as its server; the client's exit code in
# rc, the peer's output in $KV_TMP/peer.out.
inv_peer() {
	port=$((port + 1))
	"$(dirname "$KVERBS")/ping_peer" -a "$KV_ADDR" -p "$port" -m "$1" \
		> "$KV_TMP/peer.out" 2>&1 &
	# shellcheck disable=SC2034 # kv_pid_peer: read by the eval of kv_wait peer
	kv_pid_peer=$!
	wait_for 10 kv_listening "$KV_ADDR" "$port" ping_peer ||
		fail "ping_peer is not listening: $(cat "$KV_TMP/peer.out")" || return
	kv_client cli "$port" -C 3 -V
	rc=$?
	kv_wait peer 60 || fail "ping_peer exited $?: $(cat "$KV_TMP/peer.out")"
}

# The control for the peers below: one that keeps the agreement is
# served, each key checked.
inv_peer_fair() {
	inv_peer ok || return
	[ $rc = 0 ] || fail "client failed on a fair peer: $(cat "$KV_TMP/cli.json")" || return
	grep -qx "iterations 3" "$KV_TMP/peer.out" || fail "ping_peer: $(cat "$KV_TMP/peer.out")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' 'd["inv_remote"] == 6'
}

# inv_peer_refused MODE ITERS: the client refuses the peer's go-ahead in
# iteration ITERS (after ITERS complete ones) with EPROTO at its receive.
inv_peer_refused() {
	inv_peer_fair || return
	inv_peer "$1" || return
	[ $rc = 1 ] || fail "client should fail: $(cat "$KV_TMP/cli.json")" || return
	grep -qx "iterations $2" "$KV_TMP/peer.out" || fail "ping_peer: $(cat "$KV_TMP/peer.out")" ||
		return
	json_check "$KV_TMP/cli.json" 'd["error"]["name"] == "EPROTO"' \
		'd["error"]["step"] == "recv"' "d['iterations'] == $2" \
		"d['inv_remote'] == 2 * $2"
}

# A server that agreed to invalidate and answers with a plain SEND.
test_inv_peer_none_refused()		{ inv_peer_refused none 0; }
# One that agreed to nothing and invalidates the source's key anyway.
test_inv_peer_unasked_refused()		{ inv_peer_refused unasked 0; }
# One that invalidates another key of the client's than the one it answers.
test_inv_peer_other_key_refused()	{ inv_peer_refused other 1; }

# Documentation/walkthrough.rst lists the trace of one ping: each side's
# kverbs events, normalized by selftests/walkthrough.py, which says what
# must match and what may vary.  KV_UPDATE_DOC=1 writes this run's
# listing into the document instead (Documentation/testing.rst).
# walkthrough_ping: one ping traced and compared; returns 2 for a ping
# that ended the other way it may (see selftests/walkthrough.py).
walkthrough_ping() {
	local tr=/sys/kernel/tracing doc=$KV_TOP/Documentation/walkthrough.rst rc mode=check ev

	ev=("$tr"/events/kverbs/kverbs_*)
	ev=("${ev[@]##*/}")

	# One clock for all CPUs: a completion is never stamped before its post.
	echo global >$tr/trace_clock || fail "cannot set trace_clock" || return
	if ! trace_start "${ev[@]}"; then
		echo local >$tr/trace_clock
		fail "cannot set up tracing"
		return
	fi
	port=$((port + 1))
	kv_ping_pair "$port" -C 2
	rc=$?
	trace_stop "${ev[@]}"
	# Read before the clock goes back: a change of clock empties the buffer.
	cp $tr/trace "$KV_TMP/walkthrough.trace"
	echo local >$tr/trace_clock
	[ $rc = 0 ] || return 1
	[ "${KV_UPDATE_DOC:-0}" = 1 ] && mode=update
	# shellcheck disable=SC2154 # kv_pid_srv: set by the eval of what started it
	python3 "$KV_TOP/selftests/walkthrough.py" $mode "$doc" \
		"$KV_TMP/walkthrough.trace" "$kv_pid_srv"
	rc=$?
	[ $rc = 1 ] && fail "the trace, or the steps, differ from $doc: see above"
	return $rc
}

test_walkthrough_trace_matches_doc() {
	local rc

	trace_need
	[ "${KV_TYPE}" = rxe ] || skip "the listing is of a ping over rxe"
	for _ in 1 2 3; do
		walkthrough_ping
		rc=$?
		[ $rc = 2 ] || return $rc
	done
	fail "three pings in a row ended with the server's go-ahead flushed"
}

# After tracing_recipes_as_written: the boot's event as it was, then the
# test's instance gone.
kv_after_test() {
	local tr=/sys/kernel/tracing was

	[ -d "$RECIPES_HOLD" ] || return 0
	was=$(cat "$KV_TMP/recipes.hold" 2>/dev/null)
	[ "$was" != 1 ] || echo 1 > $tr/events/oom/mark_victim/enable || return
	echo 0 > "$RECIPES_HOLD/events/oom/mark_victim/enable" && rmdir "$RECIPES_HOLD"
}

# Documentation/tracing.rst's recipes, as written (the blocks between
# ".. recipe-begin" and ".. recipe-end"), with this guest's kverbs and
# address: each shows what the page says it shows, and the tracefs one
# leaves no ping running and no event or filter on.
tracing_recipe() {
	awk -v n="$1" '/^\.\. recipe-begin/ { i++; on = (i == n); next }
		/^\.\. recipe-end/ { on = 0 }
		on && (/^   / || /^$/) { print substr($0, 4) }' \
		"$KV_TOP/Documentation/tracing.rst" |
		sed -e "s|^\( *\)kverbs ping |\1\"\$KVERBS\" ping |" -e "s|10\.0\.0\.1|$KV_ADDR|g"
}

#
# The recipes turn every event off ("echo > set_event", trace-cmd's
# end), the one tools/vm/run enables from boot to hold the scheduler's
# trace hooks included: unhooked and hooked again while other vCPUs run
# the scheduler, a TCG guest can die of "Oops: int3" in __schedule()
# (Documentation/testing.rst, "TCG's cross-vCPU code changes").  An event
# enabled in a trace instance of the test's own holds them meanwhile;
# kv_after_test turns the boot's event on again, then lets go.
RECIPES_HOLD=/sys/kernel/tracing/instances/kv_recipes
test_tracing_recipes_as_written() {
	local tr=/sys/kernel/tracing dir=$KV_TMP/recipes out cq cm qp mr f

	trace_need
	[ "$(awk '/^\.\. recipe-begin/ { n++ } END { print n }' \
		"$KV_TOP/Documentation/tracing.rst")" = 2 ] ||
		fail "expected two recipes in tracing.rst" || return
	mkdir -p "$dir"
	cat $tr/events/oom/mark_victim/enable > "$KV_TMP/recipes.hold" &&
		mkdir -p "$RECIPES_HOLD" &&
		echo 1 > "$RECIPES_HOLD/events/oom/mark_victim/enable" ||
		fail "cannot hold the scheduler's trace hooks in $RECIPES_HOLD" || return

	# tracefs: everything enabled first, then narrowed to the client's CQ.
	(tracing_recipe 2 | timeout $((120 * KV_TIME_SCALE)) bash) > "$dir/2.out" 2>&1 ||
		fail "tracefs recipe: $(tail -5 "$dir/2.out")" || return
	out=$(grep ' kverbs_qp_create: ' "$dir/2.out" | grep ' send_wr=7 ')
	cq=$(sed -n 's/.* cq\.id=\([0-9]*\) .*/\1/p' <<<"$out" | head -1)
	qp=$(sed -n 's/.* qp=\([0-9]*\) .*/\1/p' <<<"$out" | head -1)
	cm=$(sed -n "s/.* cm_qp_create: *cm\.id=\([0-9]*\) .* qp_num=$qp .*/\1/p" "$dir/2.out" | head -1)
	[ -n "$cq" ] && [ -n "$cm" ] || fail "no client QP in: $(head -20 "$dir/2.out")" || return
	# Before the narrowing only the QPs' creation, after it only the
	# client's.  Its rdma_disconnect() is traced; the DISCONNECTED event
	# its DREQ's answer would bring is not certain: kverbs destroys the ID
	# without waiting for it (kverbs_ep_disconnect()).
	out=$(grep ' kverbs_' "$dir/2.out" | grep -v ' kverbs_qp_create: ' | grep -Ev " cq\.id=$cq( |\$)")
	[ -z "$out" ] || fail "kverbs events of another CQ than $cq: $out" || return
	for f in "kverbs_post_send: cq\.id=$cq .* SEND " "kverbs_wc: cq\.id=$cq .* RECV SUCCESS " \
		"kverbs_ping_iter: cq\.id=$cq " "kverbs_drain_end: .* cq\.id=$cq " \
		"cq_poll: cq\.id=$cq " "cm_disconnect: *cm\.id=$cm "; do
		grep -q " $f" "$dir/2.out" || fail "no '$f' in the tracefs recipe's trace" || return
	done
	# Undone: no event, no filter, tracing on, no ping left.
	[ -z "$(cat $tr/set_event)" ] || fail "events left on: $(cat $tr/set_event)" || return
	out=$(grep -lv '^none$' $tr/events/kverbs/*/filter $tr/events/rdma_core/*/filter \
		$tr/events/rdma_cma/*/filter)
	[ -z "$out" ] || fail "filters left: $out" || return
	[ "$(cat $tr/tracing_on)" = 1 ] || fail "tracing left off" || return
	out=$(pgrep -a -x kverbs)
	[ -z "$out" ] || fail "pings left running: $out" || return

	# trace-cmd: record a ping, then each side's QP and CQ.  make check
	# installs it (scripts/deps); without it, the recipe is untried.
	command -v trace-cmd > /dev/null ||
		skip "trace-cmd is not installed: the tracefs recipe passed, trace-cmd's is untried"
	(cd "$dir" && tracing_recipe 1 | timeout $((120 * KV_TIME_SCALE)) bash) \
		> "$dir/1.out" 2>&1 || fail "trace-cmd recipe: $(tail -5 "$dir/1.out")" || return
	out=$(grep -E ' (kverbs_qp_create|cm_qp_create): ' "$dir/1.out")
	[ "$(grep -c 'kverbs_qp_create: .* send_wr=7 ' <<<"$out")" = 1 ] &&
	[ "$(grep -c 'kverbs_qp_create: ' <<<"$out")" = 2 ] &&
	[ "$(grep -c 'cm_qp_create: ' <<<"$out")" = 2 ] ||
		fail "trace-cmd report -F should show two QPs of each: $out" || return
	# mr_dereg's one field is id, the MR's id: the page's filter.
	mr=$(cd "$dir" && trace-cmd report -F kverbs_mr_alloc ping.dat |
		sed -n 's/.*kverbs_mr_alloc: .* mr\.id=\([0-9]*\) .*/\1/p' | head -1)
	[ -n "$mr" ] || fail "no kverbs_mr_alloc recorded" || return
	out=$(cd "$dir" && trace-cmd report -F "rdma_core: id == $mr" ping.dat | grep ' mr_dereg: ')
	[ "$(wc -l <<<"$out")" = 1 ] && grep -q "mr\.id=$mr\$" <<<"$out" ||
		fail "the filter id == $mr should give MR $mr's mr_dereg: $out"
}

# -v prints each iteration's data as rping does, on both ends.
test_verbose_output() {
	port=$((port + 1))
	kv_server vsrv "$port" -v || return 1
	timeout $((60 * KV_TIME_SCALE)) "$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -C 3 -S 40 -v \
		> "$KV_TMP/v.out" 2>&1 || fail "client: $(cat "$KV_TMP/v.out")" || return
	kv_wait vsrv 30 || return 1
	# 40 bytes: the 13-byte prefix, 26 of the run, the NUL.
	grep '^ping data:' "$KV_TMP/v.out" | diff -u - <(cat <<'OUT'
ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ
ping data: rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[
ping data: rdma-ping-2: CDEFGHIJKLMNOPQRSTUVWXYZ[\
OUT
) || fail "client -v output differs" || return
	json_check "$KV_TMP/vsrv.json" \
		'd["data"] == ["rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ", "rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[", "rdma-ping-2: CDEFGHIJKLMNOPQRSTUVWXYZ[\\"]'
}

# A client with -C 0 pings until interrupted, and that is success.
test_count_0_until_sigint() {
	port=$((port + 1))
	kv_server srv "$port" -V || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -V --json > "$KV_TMP/c0.json" 2>&1 &
	local pid=$!
	kv_trace_wait 30 1 kverbs_ping_iter 'server == 0' ||
		fail "the client did no iteration: $(cat "$KV_TMP/c0.json")" || return
	kill -INT $pid
	wait_for 5 kv_ended $pid || fail "client still running 5 s after SIGINT" || return
	wait $pid || fail "client exited $? after SIGINT: $(cat "$KV_TMP/c0.json")" || return
	json_check "$KV_TMP/c0.json" 'd["status"] == "ok"' 'd["iterations"] > 0' \
		'd["bytes_written"] == d["iterations"] * 64' || return
	# The client stopped between iterations: for the server a clean end.
	kv_wait srv 10 || fail "server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")"
}

# A server refuses a ping larger than its -S, and says so.
test_server_limit_rejects_large_ping() {
	port=$((port + 1))
	kv_server lim "$port" -S 1000 || return 1
	kv_client big "$port" -C 1 -S 4096
	[ $? = 1 ] || fail "client should fail: $(cat "$KV_TMP/big.json")" || return
	kv_wait lim 20
	[ $? = 1 ] || fail "server should report the oversized ping" || return
	json_check "$KV_TMP/lim.json" 'd["error"]["name"] == "EMSGSIZE"' \
		'"larger than this server accepts" in d["error"]["message"]' || return
	json_check "$KV_TMP/big.json" 'd["error"]["name"] in ("ECONNRESET", "ETIMEDOUT")'
}

# The same over IPv6: rdma_cm resolves the address to the device's IPv6
# GID (RoCEv2) or to TCP over IPv6 (iWARP).
test_ipv6() {
	[ -n "${KV_ADDR6:-}" ] || skip "kv0 has no IPv6 address (a kernel without IPv6?)"
	local KV_ADDR=$KV_ADDR6
	kv_ping_pair 17690 -C 10 -S 4096 || return 1
	json_check "$KV_TMP/cli.json" "d['address'] == '$KV_ADDR6'"
}

ktap_main "${matrix[@]}" test_count_10_size_4097 test_count_10_size_1000003 \
	test_advertise_once_registered_traced test_walkthrough_trace_matches_doc \
	test_tracing_recipes_as_written test_ipv6 \
	test_verbose_output test_count_0_until_sigint \
	test_server_limit_rejects_large_ping \
	test_inv_remote_traced test_inv_client_no_inv test_inv_server_no_inv \
	test_inv_text_output test_inv_peer_none_refused test_inv_peer_unasked_refused \
	test_inv_peer_other_key_refused
