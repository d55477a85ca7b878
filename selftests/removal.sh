#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Removing the RDMA device under a running ping and a running bandwidth
# test: both ends return promptly with a clear error, the removal itself
# completes, and the device can be added back and used at once.
#
# Each test adds the device back (then_readd) however it ended.  One
# that cannot is failed, and lib.sh's kv_rxe_restore repairs what it
# left: one failure cannot fail the tests after it.
. "$(dirname "$0")/lib.sh"

# then_readd CMD...: run CMD, which removes $KV_DEV, then add the device
# back whatever CMD returned: a test leaves the device as it found it
# (ktap_main fails one that leaves that to kv_rxe_restore).  CMD's
# status, or a failure if the device cannot come back.
then_readd() {
	local rc
	"$@"
	rc=$?
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	return $rc
}

link_del_during_ping() {
	local start end pid
	kv_server srv 17601 -P || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p 17601 --json > "$KV_TMP/c.json" 2>"$KV_TMP/c.err" &
	pid=$!
	kv_trace_wait 30 1 kverbs_ping_iter 'server == 0' ||
		fail "the client did no iteration: $(cat "$KV_TMP/c.err")" || return
	start=$(date +%s%N)
	timeout $((20 * KV_TIME_SCALE)) rdma link del "$KV_DEV" || fail "rdma link del failed or hung" || return
	end=$(date +%s%N)
	[ $(((end - start) / 1000000)) -le $((10000 * KV_TIME_SCALE)) ] ||
		fail "removal took $(((end - start) / 1000000)) ms" || return
	wait_for 5 kv_ended $pid || fail "client alive after removal" || return
	wait $pid
	[ $? = 1 ] || fail "client exit code, expected 1" || return
	json_check "$KV_TMP/c.json" 'd["error"]["name"] == "ENODEV"' \
		'd["error"]["message"] == "the RDMA device was removed"' || return
	kv_wait srv 5
	[ $? = 1 ] || fail "server exit code, expected 1: $(cat "$KV_TMP/srv.err")" || return
	json_check "$KV_TMP/srv.json" 'd["error"]["name"] == "ENODEV"'
}

test_link_del_during_ping() { then_readd link_del_during_ping; }

test_device_usable_after_readd() {
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	kv_ping_pair 17602 -C 10
}

# A bandwidth test busy-polls its CQ in the ioctl: the removal must still
# get through, and end both ends with ENODEV.  The steps' time limit is
# well above the module's default, so that on a host slow enough to stall
# the data path for seconds it is still the removal that ends the test.
# link_del_during_write_bw PORT [OPTS...]: OPTS for both ends.
link_del_during_write_bw() {
	local port=$1 start end pid spid limit=$((30 * KV_TIME_SCALE))
	shift
	"$KVERBS" write_bw -p $port --timeout $limit --json "$@" \
		> "$KV_TMP/bs.json" 2>"$KV_TMP/bs.err" &
	spid=$!
	wait_for 10 kv_listening 0.0.0.0 $port || fail "server not listening" || return
	"$KVERBS" write_bw -p $port -s 65536 -D 600 --timeout $limit --json "$@" "$KV_ADDR" \
		> "$KV_TMP/bc.json" 2>"$KV_TMP/bc.err" &
	pid=$!
	# RDMA WRITEs completing (KVERBS_STEP_RDMA_WRITE): the test runs.
	kv_trace_wait 30 1 kverbs_wc 'step == 11 && status == 0' ||
		fail "no RDMA WRITE completed: $(cat "$KV_TMP/bc.err")" || return
	kv_alive $pid || fail "client ended early: $(cat "$KV_TMP/bc.json")" || return
	start=$(date +%s%N)
	timeout $((20 * KV_TIME_SCALE)) rdma link del "$KV_DEV" || fail "rdma link del failed or hung" || return
	end=$(date +%s%N)
	[ $(((end - start) / 1000000)) -le $((10000 * KV_TIME_SCALE)) ] ||
		fail "removal took $(((end - start) / 1000000)) ms" || return
	wait_for 5 kv_ended $pid || fail "client alive after removal" || return
	wait $pid
	[ $? = 1 ] || fail "client exit code, expected 1: $(cat "$KV_TMP/bc.json")" || return
	json_check "$KV_TMP/bc.json" 'd["status"] == "failed"' 'd["error"]["name"] == "ENODEV"' \
		'd["error"]["message"] == "the RDMA device was removed"' 'd["iterations"] > 0' ||
		fail "the server said: $(cat "$KV_TMP/bs.json" "$KV_TMP/bs.err")" || return
	wait_for 5 kv_ended $spid || fail "server alive after removal" || return
	wait $spid
	[ $? = 1 ] || fail "server exit code, expected 1: $(cat "$KV_TMP/bs.err")" || return
	json_check "$KV_TMP/bs.json" 'd["error"]["name"] == "ENODEV"'
}

test_link_del_during_write_bw()	{ then_readd link_del_during_write_bw 17603; }

# The same with both ends asleep for their completions: the removal's
# flush and its CM event must wake them.  The device is added back for
# the suites after this one.
test_link_del_during_write_bw_events() {
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	then_readd link_del_during_write_bw 17607 -e
}

test_write_bw_after_readd() {
	local spid
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	"$KVERBS" write_bw -p 17604 --json > "$KV_TMP/bs2.json" 2>"$KV_TMP/bs2.err" &
	spid=$!
	wait_for 10 kv_listening 0.0.0.0 17604 || fail "server not listening" || return
	timeout $((60 * KV_TIME_SCALE)) "$KVERBS" write_bw -p 17604 -s 4096 -n 500 --validate \
		--json "$KV_ADDR" > "$KV_TMP/bc2.json" 2>"$KV_TMP/bc2.err" ||
		fail "client: $(cat "$KV_TMP/bc2.err" "$KV_TMP/bc2.json")" || return
	wait $spid || fail "server: $(cat "$KV_TMP/bs2.err")" || return
	json_check "$KV_TMP/bc2.json" 'd["status"] == "ok"' 'd["iterations"] == 500'
}

# kverbs serve listening on the device's address, one client in a test
# and a thread waiting for the next: the removal ends both, and the
# serve exits at once, saying why.
test_link_del_under_serve() { then_readd link_del_under_serve; }

link_del_under_serve() {
	local pid spid limit=$((30 * KV_TIME_SCALE))
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	"$KVERBS" serve -p 17605 -j 2 --timeout $limit --json "$KV_ADDR" \
		> "$KV_TMP/sv.json" 2>"$KV_TMP/sv.err" &
	spid=$!
	wait_for 10 kv_listening "$KV_ADDR" 17605 || fail "serve not listening" || return
	"$KVERBS" write_bw -p 17605 -s 65536 -D 600 --timeout $limit --json "$KV_ADDR" \
		> "$KV_TMP/bc.json" 2>"$KV_TMP/bc.err" &
	pid=$!
	kv_trace_wait 30 1 kverbs_wc 'step == 11 && status == 0' ||
		fail "no RDMA WRITE completed: $(cat "$KV_TMP/bc.err")" || return
	kv_alive $pid || fail "client ended early: $(cat "$KV_TMP/bc.json")" || return
	timeout $((20 * KV_TIME_SCALE)) rdma link del "$KV_DEV" || fail "rdma link del failed or hung" || return
	wait_for 5 kv_ended $pid || fail "client alive after removal" || return
	wait $pid
	[ $? = 1 ] || fail "client exit code, expected 1: $(cat "$KV_TMP/bc.json")" || return
	json_check "$KV_TMP/bc.json" 'd["error"]["name"] == "ENODEV"' || return
	wait_for 5 kv_ended $spid || fail "serve alive after removal" || return
	wait $spid
	[ $? = 1 ] || fail "serve exit code, expected 1: $(cat "$KV_TMP/sv.err")" || return
	kv_python "$KV_TMP/sv.json" <<'PY' || fail "serve's report: $(cat "$KV_TMP/sv.json")"
import json, os, sys
L = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
# The session with the client, and the thread that waited for the next;
# the first thread may come back to wait again before it hears that the
# other found the listener gone, and report that too.
assert all(d["error"]["name"] == "ENODEV" for d in L), L
devs = sorted(d["device"] for d in L)
assert devs in (["", os.environ["KV_DEV"]], ["", "", os.environ["KV_DEV"]]), devs
PY
}

# A file's listener with no server waiting on it (its process stopped)
# must not hold up the removal of its device: it lets go by itself.
test_link_del_idle_listener() {
	local spid
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	"$KVERBS" serve -p 17606 -j 1 "$KV_ADDR" > /dev/null 2>"$KV_TMP/sv2.err" &
	spid=$!
	wait_for 10 kv_listening "$KV_ADDR" 17606 || fail "serve not listening" || return
	kill -STOP $spid
	timeout $((20 * KV_TIME_SCALE)) rdma link del "$KV_DEV"
	local rc=$?
	kill -CONT $spid
	kill -INT $spid 2>/dev/null
	wait $spid
	[ $rc = 0 ] || fail "rdma link del failed or hung ($rc) while the listener's process was stopped" ||
		return
	kv_rxe_readd || fail "cannot add $KV_DEV back"
}

# kverbs serve --srq on the device's address, a send_bw client on the
# SRQ and a thread waiting for the next: the removal ends both with
# ENODEV, the SRQ goes with its device, and serve exits saying why.
test_link_del_under_serve_srq() { then_readd link_del_under_serve_srq; }

link_del_under_serve_srq() {
	local pid spid limit=$((30 * KV_TIME_SCALE))
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	"$KVERBS" serve -p 17607 -j 2 --srq --timeout $limit --json "$KV_ADDR" \
		> "$KV_TMP/sq.json" 2>"$KV_TMP/sq.err" &
	spid=$!
	wait_for 10 kv_listening "$KV_ADDR" 17607 || fail "serve not listening" || return
	"$KVERBS" send_bw -p 17607 -s 4096 -D 600 --timeout $limit --json "$KV_ADDR" \
		> "$KV_TMP/sc.json" 2>"$KV_TMP/sc.err" &
	pid=$!
	# A receive completed: the SRQ's, on the server (the client has none).
	kv_trace_wait 30 1 kverbs_wc 'step == 9 && status == 0' ||
		fail "no receive completed: $(cat "$KV_TMP/sc.err")" || return
	kv_alive $pid || fail "client ended early: $(cat "$KV_TMP/sc.json")" || return
	[ "$(rdma res show srq | grep -c 'comm \[kverbs\]')" = 1 ] ||
		fail "no SRQ of kverbs: $(rdma res show srq)" || return
	timeout $((20 * KV_TIME_SCALE)) rdma link del "$KV_DEV" || fail "rdma link del failed or hung" || return
	wait_for 5 kv_ended $pid || fail "client alive after removal" || return
	wait $pid
	[ $? = 1 ] || fail "client exit code, expected 1: $(cat "$KV_TMP/sc.json")" || return
	json_check "$KV_TMP/sc.json" 'd["error"]["name"] == "ENODEV"' || return
	wait_for 5 kv_ended $spid || fail "serve alive after removal" || return
	wait $spid
	[ $? = 1 ] || fail "serve exit code, expected 1: $(cat "$KV_TMP/sq.err")" || return
	kv_python "$KV_TMP/sq.json" <<'PY' || fail "serve's report: $(cat "$KV_TMP/sq.json")"
import json, sys
L = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
assert all(d["error"]["name"] == "ENODEV" for d in L), L
assert any(d["test"] == "send_bw" and d["srq_wr"] == 256 for d in L), L
PY
}

# An SRQ kept by a file whose servers wait for no one (its process
# stopped) must not hold up the removal of its device: the file listens
# on the wildcard, so only the SRQ is on the device, and it lets go by
# itself, from a work item, while the file stays open.
test_link_del_idle_srq() {
	local spid rc lpid
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	"$KVERBS" serve -p 17608 -j 1 --srq --json > "$KV_TMP/si.json" 2>"$KV_TMP/si.err" &
	spid=$!
	wait_for 10 kv_listening 0.0.0.0 17608 || fail "serve not listening" || return
	"$KVERBS" send_bw -p 17608 -s 4096 -n 200 --validate "$KV_ADDR" > "$KV_TMP/si1.out" 2>&1 ||
		fail "the client: $(cat "$KV_TMP/si1.out")" || return
	[ "$(rdma res show srq | grep -c 'comm \[kverbs\]')" = 1 ] ||
		fail "the file holds no SRQ after its client: $(rdma res show srq)" || return
	kill -STOP $spid
	# In the background: a removal that waits for the SRQ sleeps in the
	# kernel until the file is closed, which only ending serve does.
	rdma link del "$KV_DEV" &
	lpid=$!
	wait_for 20 kv_ended $lpid
	rc=$?
	kill -CONT $spid
	kill -INT $spid 2>/dev/null
	wait $spid
	wait $lpid || rc=1
	[ $rc = 0 ] || fail "rdma link del failed, or waited for the SRQ of a stopped process" ||
		return
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	kv_python "$KV_TMP/si.json" <<'PY'
import json, sys
L = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
assert L[0]["status"] == "ok" and L[0]["srq_wr"] == 256 and L[0]["srq_shared"] == 1, L
PY
}

# Has the stall program's test (output in $2) come to a stop: asleep on
# its userfaultfd page, or returned?  Or has the program found no
# userfaultfd to stall with?
kv_stalled_or_returned() {
	grep -q '^returned \|^no userfaultfd' "$2" && return 0
	kv_in_userfault "$1"
}

# Is a thread of PID asleep on a userfaultfd page?
kv_in_userfault() {
	local t w
	for t in /proc/"$1"/task/*; do
		read -r w 2>/dev/null < "$t/wchan"
		[ "$w" = handle_userfault ] && return 0
		grep -q handle_userfault "$t/stack" 2>/dev/null && return 0
	done
	return 1
}

# end_unserved SERVER STALL: a test that skips ends what it started: the
# server, still waiting for the client that never came, as ^C does, and
# the stall program, which has returned.
end_unserved() {
	local p
	kill -INT "$1" 2>/dev/null
	for p; do
		wait_for 10 kv_ended "$p" || kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}

# A test whose output (the ping's payload log, read_lat's samples) is in
# a userfaultfd page that nobody serves: its device's removal must not
# wait for that page.  kverbs pins such memory before it holds a device,
# so the test waits on the page holding nothing; a module that wrote it
# during the test waited there with the device held, and so did the
# removal, for as long as the page went unserved.  Served after the
# removal, the test goes on and fails for want of a device.  A kernel
# that cannot pin a userfaultfd page for the long term without its
# contents (Debian's 6.1) refuses the page at once instead: EFAULT at
# the log or samples step, before any device is held.  There nothing
# stalls, and the test skips, naming the kernel's release: an EFAULT
# from kverbs itself would skip alike, so only 6.1's skip is expected
# (testing.rst's table), on any other kernel the skip fails the lane.
# unserved_output_at_removal MODE PORT SERVER_CMD...
unserved_output_at_removal() {
	local mode=$1 port=$2 pid spid dpid rc ctl
	shift 2
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	"$@" > "$KV_TMP/us.json" 2> "$KV_TMP/us.err" &
	spid=$!
	wait_for 10 kv_listening "$KV_ADDR" "$port" ||
		fail "server not listening: $(cat "$KV_TMP/us.err")" || return
	rm -f "$KV_TMP/stall.in"
	mkfifo "$KV_TMP/stall.in"
	"$(dirname "$KVERBS")/stall" "$mode" "$KV_ADDR" "$port" < "$KV_TMP/stall.in" \
		> "$KV_TMP/stall.out" 2>&1 &
	pid=$!
	exec {ctl}> "$KV_TMP/stall.in"
	wait_for 20 kv_stalled_or_returned $pid "$KV_TMP/stall.out" ||
		fail "the test neither waited on its page nor returned: $(cat "$KV_TMP/stall.out")" ||
		return
	if grep -q '^no userfaultfd' "$KV_TMP/stall.out"; then
		exec {ctl}>&-
		end_unserved "$spid" "$pid"
		skip "no userfaultfd in this kernel (CONFIG_USERFAULTFD)"
	fi
	# Returned: only by refusing the page, before it held a device;
	# then nothing waits on the page, and the removal has nothing to
	# get past.
	if grep -q '^returned ' "$KV_TMP/stall.out"; then
		grep -q '^returned ret=-1 errno=14$' "$KV_TMP/stall.out" ||
			fail "the test returned otherwise than refusing its page: $(cat "$KV_TMP/stall.out")" ||
			return
		exec {ctl}>&-
		end_unserved "$spid" "$pid"
		skip "Linux $(</proc/sys/kernel/osrelease) refuses to pin an unserved userfaultfd page (EFAULT before any device is held): no test waits on it"
	fi
	# In the background: a removal that waits for the page cannot be
	# killed, and the page is served only after this verdict.
	rdma link del "$KV_DEV" &
	dpid=$!
	if wait_for 20 kv_ended $dpid; then
		wait $dpid
		rc=$?
	else
		rc=hung
	fi
	echo serve >&$ctl
	exec {ctl}>&-
	wait_for 30 kv_ended $pid || { kv_stack $pid; fail "the test did not end once served"; } ||
		return
	wait_for 30 kv_ended $dpid || fail "rdma link del still running after the page was served" ||
		return
	[ $rc = 0 ] || fail "rdma link del failed or hung ($rc) while a test waited on its page" ||
		return
	wait_for 10 kv_ended $spid || fail "server alive after the removal" || return
	grep -q '^result ret=-1 ' "$KV_TMP/stall.out" ||
		fail "the test did not fail without its device: $(cat "$KV_TMP/stall.out")" || return
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	kv_ping_pair $((port + 1)) -C 5
}

test_link_del_with_ping_log_unserved() {
	unserved_output_at_removal ping 17610 "$KVERBS" ping -s -a "$KV_ADDR" -p 17610 --json
}

test_link_del_with_samples_unserved() {
	unserved_output_at_removal read_lat 17612 "$KVERBS" serve -p 17612 --json "$KV_ADDR"
}

# seconds_of_us US: US microseconds, as seconds for kv_sleep.
seconds_of_us() { printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)); }

# close_round ROUND [KILL_US STEP_US]: four serve processes listening,
# then the device removed and, KILL_US microseconds after removal was
# started, the first one's file closed (kill -9), the next ones STEP_US
# apart; without KILL_US, after removal ended.  Both end promptly.
# Prints how long the removal took to reach kverbs from the start of
# 'rdma link del' (microseconds), and "overlap" when the trace shows the
# closes and the removal interleaved: some listeners released by their
# files' close before the removal reached kverbs (kverbs_listener_release
# by=owner before kverbs_dev_remove) and others still open when it did
# (kverbs_dev_remove users=N), or a close releasing its listener while
# the removal waited for it (by=owner between kverbs_dev_remove and
# kverbs_dev_removed).
close_round() {
	local round=$1 kill_us=${2:-} step_us=${3:-0} i pids=() rc del tr=/sys/kernel/tracing
	for i in 0 1 2 3; do
		"$KVERBS" serve -p $((17620 + i)) -j 2 "$KV_ADDR" > /dev/null 2>&1 &
		pids+=($!)
	done
	for i in 0 1 2 3; do
		wait_for 10 kv_listening "$KV_ADDR" $((17620 + i)) ||
			fail "round $round: serve $i not listening" || return
	done
	trace_start kverbs_dev_remove kverbs_dev_removed kverbs_listener_release || return
	echo "kverbs-selftests: link del" > $tr/trace_marker
	timeout $((20 * KV_TIME_SCALE)) rdma link del "$KV_DEV" &
	del=$!
	if [ -n "$kill_us" ]; then
		kv_sleep "$(seconds_of_us "$kill_us")"
		for i in 0 1 2 3; do
			((i == 0)) || kv_sleep "$(seconds_of_us "$step_us")"
			kill -9 "${pids[$i]}"
		done
	fi
	wait $del
	rc=$?
	[ -n "$kill_us" ] || kill -9 "${pids[@]}" 2>/dev/null
	trace_stop kverbs_dev_remove kverbs_dev_removed kverbs_listener_release
	[ $rc = 0 ] || fail "round $round: rdma link del failed or hung ($rc)" || return
	for i in 0 1 2 3; do
		wait_for 10 kv_ended "${pids[$i]}" ||
			{ kv_stack "${pids[$i]}"; fail "round $round: serve $i did not end"; } ||
			return
	done
	grep -q "kverbs_dev_removed: device=$KV_DEV" $tr/trace ||
		fail "round $round: no kverbs_dev_removed for $KV_DEV in the trace" || return
	awk 'function ts() { for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) return $i + 0 }
	     /kverbs-selftests: link del/ { start = ts() }
	     /kverbs_dev_remove: / {
		     reach = ts() - start; during = 1; removed = 1
		     for (i = 1; i <= NF; i++) if ($i ~ /^users=/) open_ = substr($i, 7) + 0
	     }
	     /kverbs_dev_removed: / { during = 0 }
	     /kverbs_listener_release: .* by=owner/ { if (during) seen = 1; else if (!removed) closed++ }
	     END {
		     if (closed && open_) seen = 1
		     printf "%d%s\n", reach * 1000000, seen ? " overlap" : ""
	     }' $tr/trace
}

# Files that listen on the device's address, closed while the device is
# being removed: the removal's abort and the file's release of the
# listener race, and neither may touch it once the other freed it (the
# debug lane's KASAN watches).  Every round ends promptly with the device
# gone and the listeners' processes ended, and at least one shows the
# closes and the removal interleaved in the trace (close_round).  Starting 'rdma link del' takes a guest
# hundreds of milliseconds, a killed process's exit tens to hundreds,
# both varying widely under TCG: kills at the start all land before the
# removal.  So every round measures how long the removal takes to reach
# kverbs, and the next kills the four servers around that moment, a
# quarter of it apart, from 30 % of it on, later each round and again.
# They go on, up to three times KV_CLOSE_ROUNDS, until one has
# interleaved.
test_close_listeners_during_removal() {
	local round rounds=${KV_CLOSE_ROUNDS:-6} overlaps=0 out rc=0 reach=0 kill_us
	local tr=/sys/kernel/tracing
	trace_need
	# One clock for every CPU's events, so that the trace's order is
	# the order they happened in.
	echo global > $tr/trace_clock || fail "cannot set trace_clock" || return
	for ((round = 0; round < 3 * rounds; round++)); do
		((round < rounds || overlaps == 0)) || break
		kv_rxe_readd || { fail "round $round: cannot add $KV_DEV back"; rc=1; break; }
		kill_us=
		((round == 0)) || kill_us=$((reach * (30 + 10 * ((round - 1) % 6)) / 100))
		out=$(close_round "$round" $kill_us $((reach / 4))) || { echo "$out"; rc=1; break; }
		# The latest round's measure: under a loaded host it drifts.
		reach=${out%% *}
		[[ $out == *overlap ]] && overlaps=$((overlaps + 1))
	done
	echo local > $tr/trace_clock
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	[ $rc = 0 ] || return 1
	echo "# $overlaps of $round rounds closed files and removed the device interleaved" \
	     "(removal reached kverbs $((reach / 1000)) ms after rdma link del began)"
	((overlaps > 0)) ||
		fail "in no round did the closes and the removal interleave (trace:" \
		     "kverbs_listener_release by=owner, kverbs_dev_remove users=N)" || return
	kv_ping_pair 17624 -C 5
}

ktap_main test_link_del_during_ping test_device_usable_after_readd \
	test_link_del_during_write_bw test_write_bw_after_readd \
	test_link_del_under_serve test_link_del_idle_listener \
	test_link_del_during_write_bw_events test_link_del_with_ping_log_unserved \
	test_link_del_with_samples_unserved test_close_listeners_during_removal \
	test_link_del_under_serve_srq test_link_del_idle_srq
