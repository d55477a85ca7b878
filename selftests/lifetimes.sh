#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lifetimes: what a NIC may deliver late reaches nothing kverbs has
# freed.  rxe and siw complete and flush a QP's work in an order a NIC
# does not promise; the debug lane's rxe has a fault mode that gives the
# orders a NIC may (tools/vm/patches/0009, Documentation/testing.rst):
# receive completions that reach the CQ late, Last WQE Reached after an
# SRQ's receives, a drain's markers later than kverbs waits, the
# completion handler late and on another CPU.  kverbs' own fault point
# holds a drain marker's handler up right after it signalled, as an
# interrupt or a preempted vCPU may (kernel/core/fault.h).
#
# KASAN judges first: ktap_main checks the kernel log after every test.
# Each test checks what its sessions reported besides, and that the
# SRQ, the device and the module serve a fair client afterwards.  Every
# test needs the fault mode, and skips without it (stock kernels).
. "$(dirname "$0")/lib.sh"

port=18800
kv_before_test() {
	port=$((18800 + 10 * KV_TEST_NUM))
}
step_limit=$((10 * KV_TIME_SCALE))
FAULT=/sys/module/rdma_rxe/parameters
STALL=/sys/kernel/debug/kverbs/marker_done_stall_us

fault_need() {
	[ "$KV_TYPE" = rxe ] || skip "the fault mode is rxe's: over rxe only"
	[ -w "$FAULT/fault_recv_delay_ms" ] ||
		skip "rxe has no fault mode (the debug lane's kernel has it: 0009 of tools/vm/patches/)"
}

# fault_set NAME=VALUE...: rxe's fault_NAME parameters.
fault_set() {
	local kv
	for kv; do
		echo "${kv#*=}" > "$FAULT/fault_${kv%%=*}" || return
	done
}

fault_reset() {
	[ ! -w "$FAULT/fault_recv_delay_ms" ] ||
		fault_set qpn=0 send_delay_ms=0 recv_delay_ms=0 last_wqe_delay_ms=0 \
			irq_delay_ms=0 irq_cpu=-1
	[ ! -w "$STALL" ] || echo 0 > "$STALL"
}

kv_after_test() {
	fault_reset
}

# serve_bg NAME [serve options]: kverbs serve on $port in the background,
# one JSON document per session in $KV_TMP/NAME.json; waits until it
# listens.  Sets kv_pid_NAME.
serve_bg() {
	local name=$1
	shift
	"$KVERBS" serve -p "$port" --timeout "$step_limit" --json "$@" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err" &
	eval "kv_pid_$name=$!"
	wait_for 10 kv_listening 0.0.0.0 "$port" ||
		fail "serve did not listen on $port: $(cat "$KV_TMP/$name.err")"
}

# client NAME TEST [options]: a client against $KV_ADDR:$port, output as
# for serve_bg, with a time limit; returns its exit code.
client() {
	local name=$1 test=$2
	shift 2
	timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" "$test" -p "$port" \
		--timeout "$step_limit" --json "$@" "$KV_ADDR" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err"
}

# client_bg NAME TEST [options]: the same client, in the background,
# its pid in kv_pid_NAME: the tool's own, for the signal that ends it (a
# background subshell ignores SIGINT, and would not pass it on).
client_bg() {
	local name=$1 test=$2
	shift 2
	"$KVERBS" "$test" -p "$port" --timeout "$step_limit" --json "$@" "$KV_ADDR" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err" &
	eval "kv_pid_$name=$!"
}

# interrupt NAME: SIGINT to client_bg's NAME, which must end within the
# drain's bound and a little, its stream cut short (exit 1 or 130).
interrupt() {
	local pid rc

	pid=$(eval echo "\$kv_pid_$1")
	kill -INT "$pid"
	kv_wait "$1" $((20 * KV_TIME_SCALE))
	rc=$?
	[ $rc = 1 ] || [ $rc = 130 ] ||
		fail "$1 exited $rc after SIGINT: $(cat "$KV_TMP/$1.err" "$KV_TMP/$1.json")"
}

# A fair client, after whatever the test did: the SRQ, the pool's CQ and
# the device still serve a validated send_bw, every receive back.
fair_after() {
	client fair send_bw -s 1024 -n 256 --validate ||
		fail "a fair client after it: $(cat "$KV_TMP/fair.err" "$KV_TMP/fair.json")"
}

# srq_ended HOW [--cq-pool]: a send_bw session on serve's SRQ ends in the
# middle of its stream, HOW: signal (its client's SIGINT), ceiling (the
# server's duration ceiling) or protocol (a peer that sends past its
# credits, perf_hello -S over), while the device completes its receives
# two seconds late, raises Last WQE Reached only after them, and
# interrupts 100 ms late on another CPU.  The session's teardown must
# wait for those receives: taken on the QP's own CQ, they would be lost
# to the SRQ; on the pool's CQ, handled after the endpoint was freed.
# Two seconds outlast the rest of a teardown that does not wait (the
# DREQ, the QP's and the CQ's destruction), so that the late receives
# find the endpoint freed; the delay starts once the stream runs where
# the test can tell (signal, ceiling), so that the connection's own
# messages are not slowed.
srq_ended() {
	local how=$1 opts=("${@:2}") want late=(recv_delay_ms=2000 irq_delay_ms=100)
	fault_need
	case $how in
	ceiling)
		# KV_TIME_SCALE seconds, and a step: the session ends 4 s in
		# on a plain kernel, 13 s in on the debug lane's.  The fair
		# client after it runs under the same ceiling, so it scales
		# with the lane: on a loaded debug guest, its 256 validated
		# sends take some 4 s.
		serve_bg srv -C 2 --srq --srq-wr 16 \
			--max-duration "$KV_TIME_SCALE" --timeout 3 \
			"${opts[@]}" || return
		want=ETIME ;;
	*)
		serve_bg srv -C 2 --srq --srq-wr 16 "${opts[@]}" || return
		want=ECONNRESET ;;
	esac
	case $how in
	signal|ceiling)
		client_bg b send_bw -s 1024 -n 1000000
		wait_for 20 kv_any_connected "$port" ||
			fail "the client did not connect: $(cat "$KV_TMP/b.err" "$KV_TMP/b.json")" || return
		fault_set "${late[@]}"
		if [ "$how" = signal ]; then
			kv_sleep 2
			interrupt b || return
		else
			kv_wait b $((60 * KV_TIME_SCALE))
		fi ;;
	protocol)
		fault_set "${late[@]}"
		timeout $((60 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" \
			-a "$KV_ADDR" -p "$port" -n 8 -S over > "$KV_TMP/hello.out" 2>&1
		want=EPROTO ;;
	esac
	# The server's end of it is over; then a fair client, at full speed.
	wait_for 30 eval '! kv_any_connected "$port"' ||
		fail "the session did not end: $(rdma res show cm_id)" || return
	fault_reset
	fair_after || return
	kv_wait srv 30
	[ $? = 1 ] || fail "serve: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	check_lines "$KV_TMP/srv.json" 'len(L) == 2' \
		"L[0]['status'] == 'failed' and L[0]['error']['name'] == '$want'" \
		'L[1]["status"] == "ok" and L[1]["srq"] is True'
}

test_srq_ended_by_signal()		{ srq_ended signal; }
test_srq_ended_by_signal_pool()		{ srq_ended signal --cq-pool; }
test_srq_ended_by_ceiling()		{ srq_ended ceiling; }
test_srq_ended_by_ceiling_pool()	{ srq_ended ceiling --cq-pool; }
test_srq_ended_by_protocol()		{ srq_ended protocol; }
test_srq_ended_by_protocol_pool()	{ srq_ended protocol --cq-pool; }

# A drain marker's handler is held up 20 ms right after it signalled,
# with the completion handlers on the other CPU from the tests', on the
# pool's CQ, which the teardown gives back without waiting for them:
# the waiter may free the endpoint in those 20 ms, and the handler must
# touch nothing of it then.  Five sessions, each with its own teardown.
test_drain_marker_handler_late_pool() {
	local i
	fault_need
	[ -w "$STALL" ] || skip "no fault points in this kverbs.ko (the debug lane builds them: KVERBS_FAULTS=y)"
	[ "$(nproc)" -ge 2 ] || skip "the handler's CPU must be another: one CPU"
	serve_bg srv -C 5 --cq-pool || return
	echo 20000 > "$STALL"
	fault_set irq_cpu=1
	for i in 1 2 3 4 5; do
		taskset -c 0 timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" write_bw \
			-p "$port" --timeout "$step_limit" --json --cq-pool -s 4096 -n 64 \
			"$KV_ADDR" >"$KV_TMP/c$i.json" 2>"$KV_TMP/c$i.err" ||
			fail "client $i: $(cat "$KV_TMP/c$i.err" "$KV_TMP/c$i.json")" || return
	done
	kv_wait srv 60 || fail "serve: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")"
}

# park_one: a server session on the pool's CQ ends while every
# completion reaches its CQ 40 s late (see below): its endpoint is
# parked, as the kernel log says.
park_one() {
	local before
	before=$(dmesg | wc -l)
	serve_bg srv -C 1 --cq-pool || return
	# As many iterations as a server runs (perf_max_iterations): the
	# signal ends it long before.
	client_bg c write_bw -s 4096 -n 10000000
	wait_for 20 kv_any_connected "$port" ||
		fail "the client did not connect: $(cat "$KV_TMP/c.err" "$KV_TMP/c.json")" || return
	kv_sleep 1
	fault_set send_delay_ms=40000 recv_delay_ms=40000 irq_delay_ms=500
	interrupt c || return
	# The server's session ended, and left its endpoint parked.
	kv_wait srv $((60 * KV_TIME_SCALE))
	[ $? = 1 ] || fail "serve: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	dmesg | tail -n +"$((before + 1))" |
		grep -q "its CQ is shared; the QP and the test's memory are kept until its drain ends" ||
		fail "no endpoint was parked: $(dmesg | tail -5)"
}

# A drain that does not end in time on the pool's CQ: every completion
# of every kernel QP reaches its CQ 40 s late, past kverbs' 5 s bound on a
# drain, and each interrupt comes 500 ms late.  The server's session,
# its client gone, cannot destroy its QP and free its memory: the late
# completions would run its handlers on it, from the pool's CQ, which
# outlives the QP.  It keeps both until the drain ends, counted as a
# session against max_sessions and its user's max_sessions_per_user
# meanwhile (a new test is refused with ENFILE while max_sessions is 1,
# with EDQUOT while max_sessions_per_user is), and lets go of them once
# it did.
test_drain_late_pool_parks() {
	local ping_rc per_user
	fault_need
	park_one || return
	echo 1 > /sys/module/kverbs/parameters/max_sessions
	"$KVERBS" devices > /dev/null
	"$KVERBS" ping -c -a "$KV_ADDR" -p 1 -C 1 --json > "$KV_TMP/refused.json" 2>&1
	ping_rc=$?
	echo 256 > /sys/module/kverbs/parameters/max_sessions
	[ $ping_rc != 0 ] && grep -q ENFILE "$KV_TMP/refused.json" ||
		fail "a test was not refused while the parked endpoint holds max_sessions: $(cat "$KV_TMP/refused.json")" ||
		return
	# ... and its user's max_sessions_per_user: the server ran as root.
	per_user=$(< /sys/module/kverbs/parameters/max_sessions_per_user)
	echo 1 > /sys/module/kverbs/parameters/max_sessions_per_user
	"$KVERBS" ping -c -a "$KV_ADDR" -p 1 -C 1 --json > "$KV_TMP/refused.json" 2>&1
	ping_rc=$?
	echo "$per_user" > /sys/module/kverbs/parameters/max_sessions_per_user
	[ $ping_rc != 0 ] && grep -q EDQUOT "$KV_TMP/refused.json" ||
		fail "a test was not refused while the parked endpoint holds its user's sessions: $(cat "$KV_TMP/refused.json")" ||
		return
	# Its drain ends at 40 s and a little: then the endpoint goes.
	wait_for 60 kv_no_connections ||
		fail "the parked endpoint was never released: $(rdma res show cm_id)" || return
	fault_reset
	port=$((port + 1))
	serve_bg srv2 -C 1 --cq-pool || return
	client c2 write_bw -s 4096 -n 1000 --cq-pool ||
		fail "after the parking: $(cat "$KV_TMP/c2.err" "$KV_TMP/c2.json")" || return
	kv_wait srv2 30
}

# A parked endpoint holds the module: the pool's CQ outlives kverbs'
# client, and the late completions it still holds call kverbs' handlers
# on the endpoint's memory.  An unload then would leave them freed
# memory and freed code.  rmmod is refused while the endpoint is parked,
# and unloads once its drain ended.
test_rmmod_refused_while_parked() {
	local out
	fault_need
	park_one || return
	if out=$(rmmod kverbs 2>&1); then
		fail "rmmod succeeded while an endpoint was parked (the module is loaded again)"
		insmod "$KV_MODULE"
		return 1
	fi
	[[ $out == *"in use"* ]] || fail "rmmod said: $out" || return
	wait_for 60 kv_no_connections ||
		fail "the parked endpoint was never released: $(rdma res show cm_id)" || return
	fault_reset
	wait_for 10 eval '[ "$(cat /sys/module/kverbs/refcnt)" = 0 ]' ||
		fail "the module is still held after the parking: refcnt $(cat /sys/module/kverbs/refcnt)" ||
		return
	rmmod kverbs || fail "rmmod failed once the parking ended" || return
	insmod "$KV_MODULE" || fail "cannot load $KV_MODULE again"
}

ktap_main test_srq_ended_by_signal test_srq_ended_by_signal_pool \
	test_srq_ended_by_ceiling test_srq_ended_by_ceiling_pool \
	test_srq_ended_by_protocol test_srq_ended_by_protocol_pool \
	test_drain_marker_handler_late_pool test_drain_late_pool_parks \
	test_rmmod_refused_while_parked
