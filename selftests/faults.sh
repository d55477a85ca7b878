#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Faults under load: the link going down under a ping and under a
# bandwidth test, an attempt to unload the module while a test runs, many
# sessions of both kinds at once.
#
# A test puts back what it breaks here (the link, the device, the
# module).  One that fails half-way is failed for what it left too, and
# lib.sh's kv_rxe_restore repairs it: it cannot fail the ones after it.
. "$(dirname "$0")/lib.sh"

# recreate_device: what every test here ends with, the port being up
# again: re-create the device (rxe's QP1 may be in the error state for
# good, see below), which must not hang, and it works at once.
recreate_device() {
	timeout $((20 * KV_TIME_SCALE)) rdma link del "$KV_DEV" || fail "rdma link del failed or hung" ||
		return
	kv_rxe_readd || fail "cannot add $KV_DEV back" || return
	kv_ping_pair 17700 -C 10
}

# The netdev under rxe goes down mid-ping: the connection ends at once
# on both ends, and both say the port went down.  A persistent server
# counts the client as failed and keeps listening.
#
# rxe cannot carry connections across the flap: the teardown sends a
# DREQ while the netdev is down, rxe fails to transmit it and moves its
# GSI QP (QP1, all CM traffic) to the error state for good; on 6.1 even
# rping alone cannot connect after a flap.  So, as after any such fault,
# the device is re-created, which must end the server that listened on
# it, and leave a device that works at once.
test_netdev_down_during_ping() {
	local pid
	kv_server srv 17701 -P -V || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p 17701 -V --json > "$KV_TMP/c.json" 2> "$KV_TMP/c.err" &
	pid=$!
	kv_trace_wait 30 1 kverbs_ping_iter 'server == 0' ||
		fail "the client did no iteration: $(cat "$KV_TMP/c.err")" || return
	ip link set kv0 down
	wait_for 5 kv_ended $pid || fail "client alive 5 s after link down" || return
	wait $pid
	[ $? = 1 ] || fail "client exit code, expected 1: $(cat "$KV_TMP/c.err")" || return
	json_check "$KV_TMP/c.json" 'd["error"]["name"] == "ENETDOWN"' || return
	kv_link_up || fail "port did not come back" || return
	kv_listening "$KV_ADDR" 17701 || fail "the persistent server stopped listening" || return

	# shellcheck disable=SC2154 # kv_pid_srv: set by the eval of what started it
	kill -INT "$kv_pid_srv"
	kv_wait srv 10
	[ $? = 1 ] || fail "server exit code, expected 1 (one client failed)" || return
	# A persistent server's report is of its last failed client.
	json_check "$KV_TMP/srv.json" 'd["clients"] == 1' 'd["clients_failed"] == 1' \
		'd["error"]["name"] == "ENETDOWN"' || return
	recreate_device
}

# The same under a bandwidth test, which busy-polls in the ioctl: both
# ends stop at once and say the port went down.  Their step limit is
# scaled as the waits are: on the debug lane's loaded kernel a window of
# 64 KiB WRITEs over siw can take longer than the default 10 s to
# complete its first signaled one, and a step that times out with the
# link still up is no port going down.
test_netdev_down_during_write_bw() {
	local pid spid limit=$((30 * KV_TIME_SCALE))
	"$KVERBS" write_bw -p 17703 --timeout $limit --json > "$KV_TMP/bs.json" 2>"$KV_TMP/bs.err" &
	spid=$!
	wait_for 10 kv_listening 0.0.0.0 17703 || fail "server not listening" || return
	"$KVERBS" write_bw -p 17703 -s 65536 -D 600 --timeout $limit --json "$KV_ADDR" \
		> "$KV_TMP/bc.json" 2>"$KV_TMP/bc.err" &
	pid=$!
	# RDMA WRITEs completing (KVERBS_STEP_RDMA_WRITE): the test runs.
	kv_trace_wait 30 1 kverbs_wc 'step == 11 && status == 0' ||
		fail "no RDMA WRITE completed: $(cat "$KV_TMP/bc.err")" || return
	kv_alive $pid || fail "client ended early: $(cat "$KV_TMP/bc.json")" || return
	ip link set kv0 down
	wait_for 5 kv_ended $pid || fail "client alive 5 s after link down" || return
	wait $pid
	[ $? = 1 ] || fail "client exit code, expected 1: $(cat "$KV_TMP/bc.err")" || return
	json_check "$KV_TMP/bc.json" 'd["status"] == "failed"' 'd["error"]["name"] == "ENETDOWN"' \
		'd["iterations"] > 0' || return
	wait_for 5 kv_ended $spid || fail "server alive 5 s after link down" || return
	wait $spid
	[ $? = 1 ] || fail "server exit code, expected 1: $(cat "$KV_TMP/bs.err")" || return
	json_check "$KV_TMP/bs.json" 'd["error"]["name"] == "ENETDOWN"' || return
	# Both processes are gone, but not their connections: nothing is
	# sent from a port that is down, the DREQ included.  Their rdma_cm
	# IDs go once the port is back (kverbs_ep_destroy()).
	! kv_no_connections || fail "connections gone while the port is down" || return
	kv_link_up || fail "port did not come back" || return
	wait_for 10 kv_no_connections ||
		fail "connections left 10 s after the port came back: $(rdma res show cm_id)" || return
	# As after the ping: re-create the device, and it works at once.
	recreate_device
}

# A signal, then the netdev going down, then the end of the process:
# the client reports the signal, not the port, and ends at once; its
# server saw it leave cleanly; the device can be re-created at once (on
# 6.1 a DREQ sent from a port that is down wedges rxe's QP1, and "rdma
# link del" with it).  SIGSTOP ends the ping in the kernel as SIGINT
# does (its ioctl sees a signal pending), and stops the process on its
# way out, before it writes its report: the netdev goes down between.
test_signal_then_netdev_down() {
	local pid rc
	kv_server srv 17704 -V || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p 17704 -C 1000000 -V --json \
		> "$KV_TMP/c.json" 2> "$KV_TMP/c.err" &
	pid=$!
	wait_for 10 eval '[ "$(kv_connected 17704)" -ge 2 ]' ||
		fail "client not connected: $(cat "$KV_TMP/c.err")" || return
	kill -STOP $pid
	wait_for 5 kv_stopped $pid || fail "client not stopped 5 s after SIGSTOP: $(kv_stack $pid)" ||
		return
	kv_wait srv 10
	rc=$?
	[ $rc = 0 ] || fail "server exit code $rc, expected 0: $(cat "$KV_TMP/srv.err")" || return
	json_check "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["error"] is None' \
		'd["clients"] == 1' 'd["clients_failed"] == 0' 'd["iterations"] > 0' || return
	wait_for 10 kv_no_connections || fail "connections left: $(rdma res show cm_id)" || return
	ip link set kv0 down
	wait_for 5 eval "! rdma link show $KV_DEV/1 | grep -q ACTIVE" || fail "port still up" || return
	kill -CONT $pid
	wait_for 5 kv_ended $pid || fail "client alive 5 s after SIGCONT: $(kv_stack $pid)" || return
	wait $pid
	rc=$?
	[ $rc = 130 ] || fail "client exit code $rc, expected 130: $(cat "$KV_TMP/c.err")" || return
	json_check "$KV_TMP/c.json" 'd["status"] == "interrupted"' 'd["error"]["name"] == "EINTR"' \
		'd["iterations"] > 0' || return
	kv_link_up || fail "port did not come back" || return
	recreate_device
}

# queue_behind_a PORT: a persistent server on PORT that serves one
# client at a time (-j 1), client a pinging it, and client b's request
# queued behind a, once the listener has it (the trace's
# RDMA_CM_EVENT_CONNECT_REQUEST, 4).  Sets a and b to the clients' PIDs;
# their reports go to a.json and b.json.  The server's step limit is
# long, so that a server that answered b's request would still wait for
# the connection when interrupted, and say so.
queue_behind_a() {
	local port=$1 rc
	kv_server srv "$port" -P -j 1 -V --timeout 30 || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -V --json > "$KV_TMP/a.json" 2> "$KV_TMP/a.err" &
	a=$!
	wait_for 10 eval "[ \"\$(kv_connected $port)\" -ge 2 ]" ||
		fail "client a not connected: $(cat "$KV_TMP/a.err")" || return
	trace_record 'event == 4' kverbs_cm_event || return
	"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" -C 1 --timeout 30 --json \
		> "$KV_TMP/b.json" 2> "$KV_TMP/b.err" &
	b=$!
	wait_for 10 kv_trace_entries 1
	rc=$?
	trace_stop kverbs_cm_event
	[ $rc = 0 ] ||
		fail "client b's request did not reach the server: $(cat "$KV_TMP/b.err")" || return
	kv_alive $b || fail "client b ended early: $(cat "$KV_TMP/b.err" "$KV_TMP/b.json")"
}

# A connection request waits in a busy persistent server's queue while
# the netdev goes down: no port event reaches it there.  The server,
# once its first client failed, takes it and fails it at once with the
# port's error, sending nothing (on 6.1 a REP or DREQ sent from the port
# while it is down wedges rxe's QP1, and the teardown and "rdma link del"
# with it), and keeps listening.
#
# The link goes down as soon as the server has the request: siw's
# client gives up on an MPA request unanswered for ten seconds, whatever
# the time limit, and on a loaded debug kernel starting a process takes
# seconds.  Client b must say the port went down however its wait ends:
# the port event, or, where ib_core delivers that late, the request's
# own end (unanswered, or on siw reset by the server that dropped it).
test_request_queued_across_netdev_down() {
	local a b rc qpn
	trace_need
	queue_behind_a 17705 || return
	# The server's next QP is for b's request: it is created once the
	# server takes the request, before the accept.
	trace_start kverbs_qp_create || return
	trap 'trace_stop kverbs_qp_create' RETURN
	ip link set kv0 down
	wait_for 5 kv_ended $a || fail "client a alive 5 s after link down" || return
	wait_for 5 kv_ended $b || fail "client b alive 5 s after link down" || return
	wait $a
	rc=$?
	[ $rc = 1 ] || fail "client a exit code $rc, expected 1: $(cat "$KV_TMP/a.err")" || return
	wait $b
	rc=$?
	[ $rc = 1 ] || fail "client b exit code $rc, expected 1: $(cat "$KV_TMP/b.err")" || return
	json_check "$KV_TMP/a.json" 'd["error"]["name"] == "ENETDOWN"' -- \
		"$KV_TMP/b.json" 'd["error"]["name"] == "ENETDOWN"' 'd["error"]["step"] == "connect"' ||
		return
	# The server takes the queued request and fails it at once, sending
	# nothing, and that QP goes with it; one that answered the request
	# would wait on with it, and its report says so.
	wait_for 10 kv_trace_entries 1 || fail "the server did not take b's request" || return
	trace_stop kverbs_qp_create
	qpn=$(sed -n 's/.* kverbs_qp_create: .* qp=\([0-9]*\) .*/\1/p' /sys/kernel/tracing/trace |
	      head -n 1)
	[ -n "$qpn" ] || fail "no QP number in the trace: $(cat /sys/kernel/tracing/trace)" || return
	wait_for 10 eval "! rdma res show qp lqpn $qpn 2>/dev/null | grep -q 'lqpn $qpn '" ||
		fail "the server's QP $qpn for b's request is still there 10 s on:" \
			"$(rdma res show qp lqpn "$qpn" 2>&1)" || return
	kill -INT "$kv_pid_srv"
	kv_wait srv 5
	rc=$?
	[ $rc = 1 ] || fail "server exit code $rc, expected 1: $(cat "$KV_TMP/srv.err")" || return
	# The report is of the last failed client: the queued request.
	json_check "$KV_TMP/srv.json" 'd["clients"] == 2' 'd["clients_failed"] == 2' \
		'd["error"]["name"] == "ENETDOWN"' 'd["error"]["step"] == "accept"' || return
	kv_link_up || fail "port did not come back" || return
	wait_for 10 kv_no_connections ||
		fail "connections left 10 s after the port came back: $(rdma res show cm_id)" || return
	recreate_device
}

# siw sends no port event when its netdev loses the carrier (only when
# the netdev goes down), and a connection between two addresses of this
# host runs over the loopback, which needs no carrier: client a pings
# on.  Client b's request, queued behind a at a persistent server, then
# learns of the lost carrier from its own end alone, when siw gives up
# on the MPA request ten seconds after it: rdma_cm's UNREACHABLE, or a
# REJECTED with -ECONNRESET where the request's TCP connection was
# reset first.  b asks the netdev then, and says the port went down
# (kverbs_ep_reset_cause()).  rxe marks its port down with the carrier:
# test_request_queued_across_netdev_down shows what follows there.
test_request_queued_across_lost_carrier() {
	local a b rc
	[ "$KV_TYPE" = siw ] || skip "rxe marks its port down with the carrier: over siw only"
	trace_need
	queue_behind_a 17706 || return
	ip link set kv1 down
	wait_for 5 kv_no_carrier || fail "kv0 kept its carrier with its peer down" || return
	wait_for 30 kv_ended $b || fail "client b alive 30 s after the carrier went" || return
	wait $b
	rc=$?
	[ $rc = 1 ] || fail "client b exit code $rc, expected 1: $(cat "$KV_TMP/b.err")" || return
	json_check "$KV_TMP/b.json" 'd["error"]["name"] == "ENETDOWN"' \
		'd["error"]["step"] == "connect"' \
		'((d["error"]["cm_event"], d["error"]["cm_status"]) in
		  (("UNREACHABLE", -110), ("REJECTED", -104)))' ||
		return
	kv_alive $a || fail "client a ended without its carrier: $(cat "$KV_TMP/a.err")" || return
	ip link set kv1 up
	kill -INT $a
	wait_for 10 kv_ended $a || fail "client a alive 10 s after SIGINT: $(kv_stack $a)" || return
	wait $a
	rc=$?
	[ $rc = 0 ] || fail "client a exit code $rc, expected 0: $(cat "$KV_TMP/a.err")" || return
	json_check "$KV_TMP/a.json" 'd["status"] == "ok"' 'd["iterations"] > 0' || return
	kill -INT "$kv_pid_srv"
	kv_wait srv 10
	rc=$?
	[ $rc = 0 ] || fail "server exit code $rc, expected 0: $(cat "$KV_TMP/srv.err")" || return
	# b's request died in the queue: the server never took it as a client.
	json_check "$KV_TMP/srv.json" 'd["status"] == "ok"' 'd["clients"] == 1' \
		'd["clients_failed"] == 0' || return
	wait_for 10 kv_no_connections || fail "connections left: $(rdma res show cm_id)" || return
	kv_ping_pair 17700 -C 10
}

# Has PID /dev/kverbs open?
kv_holds_dev() {
	local f
	for f in /proc/"$1"/fd/*; do
		[ "$f" -ef /dev/kverbs ] && return 0
	done 2>/dev/null
	return 1
}

# The module cannot go while a test holds /dev/kverbs, its session up;
# once it ends it can.
test_rmmod_refused_while_running() {
	local pid out
	[ -n "${KV_MODULE:-}" ] || skip "KV_MODULE (the module to load again) is not set"
	kv_server srv 17702 || return 1
	"$KVERBS" ping -c -a "$KV_ADDR" -p 17702 > /dev/null 2>&1 &
	pid=$!
	wait_for 30 kv_holds_dev $pid || fail "the client never opened /dev/kverbs" || return
	wait_for 30 eval '[ "$(kv_connected 17702)" -ge 2 ]' ||
		fail "the client never connected" || return
	if out=$(rmmod kverbs 2>&1); then
		fail "rmmod succeeded under a running test (lib.sh loads it again)"
		return 1
	fi
	echo "$out" | grep -q "in use" || fail "rmmod said: $out" || return
	kill -INT $pid "$kv_pid_srv"
	wait $pid 2>/dev/null
	kv_wait srv 5 >/dev/null
	rmmod kverbs || fail "rmmod failed after the test ended" || return
	insmod "$KV_MODULE" || fail "cannot load $KV_MODULE again"
}

# 32 sessions at once, from 64 processes: 32 servers and 32 clients,
# three in four of them pings of several sizes, the rest bandwidth tests
# of each kind; every byte validated.  None ends by itself.  Once the
# kernel shows all 64 ends connected, they run as long again as they
# took to get there, and a few seconds more for their teardown: long
# against each one's setup and teardown, so that each client's report
# alone bounds when its test ran.  Then all are interrupted.  Each
# client ends with work done (iterations) and each ping's server saw its
# client leave cleanly after as many; the 32 tests share an instant
# while every server's call is in progress (kv_at_once), which sessions
# run one after another never do.
test_32_sessions_at_once() {
	local i pids=() sizes=(26 64 4096 65536) perf=(write_bw read_bw send_bw) ports=() rc
	local reset='d["error"]["name"] == "ECONNRESET"'
	# Over siw the client's goodbye is the end of its TCP stream, which
	# can cut a control message of the client's in the middle: siw then
	# ends the receive it was placing that message in with a general
	# error, not a flush (see hosts_faults.sh), or on a header it cannot
	# parse raises a fatal QP event, with no completion.  Either is EIO
	# in the server's wait for that message, and only there.  (A receive
	# missing for the client's message is ECONNRESET on siw, but the
	# client then fails before its SIGINT.)
	[ "$KV_TYPE" != siw ] ||
		reset="$reset or (d['error']['name'] == 'EIO' and d['error']['step'] == 'recv' and d['error'].get('wc_status_str', 'general error') == 'general error')"
	local start srvs=()
	for i in $(seq 0 31); do
		ports+=($((17710 + i)))
		srvs+=("$KV_TMP/s$i.json")
		if ((i % 4 == 3)); then
			"$KVERBS" "${perf[$((i / 4 % 3))]}" -p $((17710 + i)) --timeout 120 \
				--json > "$KV_TMP/s$i.json" 2> "$KV_TMP/s$i.err" &
			eval "kv_pid_s$i=$!"
			wait_for 10 kv_listening 0.0.0.0 $((17710 + i)) || fail "server $i not listening" || return
		else
			kv_server "s$i" $((17710 + i)) -V --timeout 120 || return 1
		fi
	done
	start=$SECONDS
	for i in $(seq 0 31); do
		# A generous step limit, on both ends of every session: 64
		# processes share two emulated CPUs (one on the debug lane).
		# The bandwidth tests ask for the servers' whole ceiling
		# (perf_max_duration_s) and end by SIGINT long before.
		if ((i % 4 == 3)); then
			"$KVERBS" "${perf[$((i / 4 % 3))]}" -p $((17710 + i)) -s $((4096 + i)) \
				-D 600 --validate --timeout 120 --json "$KV_ADDR" \
				> "$KV_TMP/c$i.json" 2> "$KV_TMP/c$i.err" &
		else
			"$KVERBS" ping -c -a "$KV_ADDR" -p $((17710 + i)) -C 1000000 -V \
				-S "${sizes[$((i % 4))]}" --timeout 120 --json \
				> "$KV_TMP/c$i.json" 2> "$KV_TMP/c$i.err" &
		fi
		pids+=($!)
	done
	kv_overlap 64 "${pids[*]}" "${ports[@]}" || return
	kv_sleep $((SECONDS - start + 5 * KV_TIME_SCALE))
	kill -INT "${pids[@]}"
	for i in $(seq 0 31); do
		if ((i % 4 != 3)); then
			kv_interrupted_pair "c$i" "${pids[$i]}" "s$i" || return
			continue
		fi
		# A bandwidth server learns only that its client left.
		wait_for 60 kv_ended "${pids[$i]}" ||
			fail "client $i alive 60 s after SIGINT: $(kv_stack "${pids[$i]}")" || return
		wait "${pids[$i]}"
		rc=$?
		[ $rc = 130 ] || fail "client $i exited $rc after SIGINT: $(cat "$KV_TMP/c$i.err")" || return
		kv_wait "s$i" 60
		[ $? = 1 ] || fail "server $i: $(cat "$KV_TMP/s$i.err" "$KV_TMP/s$i.json")" || return
		# The server of a WRITE or READ test is passive: the module
		# counts only the messages a send_bw server received.
		json_check "$KV_TMP/c$i.json" 'd["status"] == "interrupted"' 'd["iterations"] > 0' \
			'd["validate"] is True' 'd["error"]["name"] == "EINTR"' -- \
			"$KV_TMP/s$i.json" "$reset" 'd["test"] != "send_bw" or d["iterations"] > 0' || return
	done
	kv_at_once "$KV_TMP"/c{0..31}.json -- "${srvs[@]}"
}

ktap_main test_netdev_down_during_ping test_netdev_down_during_write_bw \
	test_signal_then_netdev_down test_request_queued_across_netdev_down \
	test_request_queued_across_lost_carrier test_rmmod_refused_while_running \
	test_32_sessions_at_once
