#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kverbs serve: one server for every perf test and several clients at
# once, on one listener (KVERBS_IOC_LISTEN); each client gets the test it
# asked for, a hello the server does not understand is refused with its
# reason while the server goes on serving, and a signal ends it at once.
. "$(dirname "$0")/lib.sh"

step_limit=$((10 * KV_TIME_SCALE))

# serve NAME PORT [options]: kverbs serve in the background, JSON lines in
# $KV_TMP/NAME.json; waits until it listens.  Sets kv_pid_NAME.
serve() {
	local name=$1 port=$2
	shift 2
	"$KVERBS" serve -p "$port" --timeout "$step_limit" --json "$@" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err" &
	eval "kv_pid_$name=$!"
	wait_for 10 kv_listening 0.0.0.0 "$port" ||
		fail "serve $name not listening on $port: $(cat "$KV_TMP/$name.err")"
}

# client NAME PORT TEST [options]: a perf client in the background.
client() {
	local name=$1 port=$2 test=$3
	shift 3
	timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" "$test" -p "$port" \
		--timeout "$step_limit" --json "$@" "$KV_ADDR" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err" &
	eval "kv_pid_$name=$!"
}

n_iters() {
	local n=$(($1 / ${KV_PERF_DIV:-1}))
	echo $((n < 10 ? 10 : n))
}

# Three clients, three tests, at the same time; each byte checked.  Each
# report says when its measured phase ran, within its call; the three
# share an instant (kv_at_once) while serve's three calls are in
# progress.  Served one after another they would not.
# read_lat starts first, and the others once it connects: before that
# the kernel pins its samples array (128 MiB for -D 30), which on a
# one-CPU debug guest beside two bandwidth tests outlasts them.
# read_lat runs twice as long as the others: on a loaded one-CPU guest
# they can take as long as their own run to start and set up.
# A server without --busy-poll sleeps for each of them, send_bw's too.
test_three_clients_at_once() {
	local c rc=0 secs=$((3 * KV_TIME_SCALE))
	local within='d["start_ns"] <= d["test_start_ns"] <= d["test_end_ns"] <= d["end_ns"] and d["test_end_ns"] - d["test_start_ns"] == d["elapsed_ns"]'
	serve sv 17801 -C 3 -j 3 || return
	client c2 17801 read_lat -s 64 -D "$((2 * secs))" --validate
	wait_for 60 kv_any_connected 17801 ||
		fail "read_lat never connected: $(cat "$KV_TMP/c2.err" "$KV_TMP/c2.json")" || return
	client c1 17801 write_bw -s 4096 -D "$secs" --validate
	client c3 17801 send_bw -s 1024 -D "$secs" --validate
	for c in c1 c2 c3; do
		if ! kv_wait $c 150; then
			echo "client $c failed: $(cat "$KV_TMP/$c.err" "$KV_TMP/$c.json")"
			rc=1
		fi
	done
	kv_wait sv 30 || fail "serve exited $?: $(cat "$KV_TMP/sv.err" "$KV_TMP/sv.json")" ||
		return
	[ $rc = 0 ] || return 1
	json_check "$KV_TMP/c1.json" 'd["status"] == "ok"' 'd["iterations"] > 0' "$within" \
		-- "$KV_TMP/c2.json" 'd["status"] == "ok"' 'd["iterations"] > 0' "$within" \
		'd["latency_usec"]["typical"] > 0' \
		-- "$KV_TMP/c3.json" 'd["status"] == "ok"' 'd["iterations"] > 0' "$within" \
		'd["validate"] is True' ||
		return
	check_lines "$KV_TMP/sv.json" 'len(L) == 3' 'all(d["role"] == "server" for d in L)' \
		'all(d["status"] == "ok" and d["iterations"] > 0 for d in L)' \
		"all($within for d in L)" \
		'sorted(d["test"] for d in L) == ["read_lat", "send_bw", "write_bw"]' \
		'sorted(d["size"] for d in L) == [64, 1024, 4096]' \
		'all(d["busy_poll"] is False and d["events"] is True for d in L)' || return
	kv_at_once "$KV_TMP/c1.json" "$KV_TMP/c2.json" "$KV_TMP/c3.json" -- "$KV_TMP/sv.json"
}

# A hello of another version is refused with the reason, on both sides;
# the next client is served as if nothing happened (write_lat: by a
# server that busy-polls for it).
test_unknown_version_then_served() {
	local out
	serve sv 17802 -C 2 -j 1 --busy-poll || return
	out=$(timeout $((30 * KV_TIME_SCALE)) "$(dirname "$KVERBS")/perf_hello" -a "$KV_ADDR" -p 17802 -V 99)
	[ "$out" = "rejected: reason 2 value 99 version 4" ] ||
		fail "perf_hello: '$out'" || return
	client c1 17802 write_lat -s 64 -n "$(n_iters 500)" --validate
	kv_wait c1 120 || fail "client: $(cat "$KV_TMP/c1.err" "$KV_TMP/c1.json"); serve: $(cat "$KV_TMP/sv.err" "$KV_TMP/sv.json")" || return
	kv_wait sv 30
	[ $? = 1 ] || fail "serve should exit 1 after a refused client: $(cat "$KV_TMP/sv.err")" ||
		return
	check_lines "$KV_TMP/sv.json" 'len(L) == 2' \
		'L[0]["error"]["name"] == "EPROTONOSUPPORT" and L[0]["error"]["step"] == "hello"' \
		'L[0]["error"]["message"].startswith("refused the client'"'"'s request: unsupported hello version 99")' \
		'L[1]["status"] == "ok" and L[1]["test"] == "write_lat"' \
		'L[1]["busy_poll"] is True and L[1]["events"] is False'
}

# Real clients against a server's ceilings, one after another: over the
# duration (JSON) and over the iterations (text) each refused with the
# reason on both sides, and the control just at the ceilings served.
test_ceilings_refuse_real_clients() {
	serve sv 17805 -C 3 -j 1 --max-duration 10 --max-iters 1000 || return
	client c1 17805 write_bw -s 4096 -D 20
	kv_wait c1 60
	[ $? = 1 ] || fail "-D 20 should be refused: $(cat "$KV_TMP/c1.err" "$KV_TMP/c1.json")" ||
		return
	json_check "$KV_TMP/c1.json" 'd["error"]["name"] == "ECONNREFUSED"' \
		'd["error"]["step"] == "hello"' \
		'd["error"]["reject_reason"] == "duration above the server'"'"'s ceiling"' \
		'd["error"]["reject_value"] == 10' \
		'd["error"]["message"] == "the server refused the request: duration above the server'"'"'s ceiling (at most 10 s)"' ||
		return
	# Text: the reason on stderr.
	timeout -k 5 $((60 * KV_TIME_SCALE)) "$KVERBS" write_bw -p 17805 -n 2000 "$KV_ADDR" \
		>"$KV_TMP/c2.out" 2>"$KV_TMP/c2.err"
	[ $? = 1 ] || fail "-n 2000 should be refused: $(cat "$KV_TMP/c2.err")" || return
	grep -qxF "kverbs write_bw: the server refused the request: iterations above the server's ceiling (at most 1000)" \
		"$KV_TMP/c2.err" || fail "client's message: $(cat "$KV_TMP/c2.err")" || return
	client c3 17805 write_bw -s 4096 -n 1000 --validate
	kv_wait c3 120 || fail "-n 1000: $(cat "$KV_TMP/c3.err" "$KV_TMP/c3.json")" || return
	kv_wait sv 30
	[ $? = 1 ] || fail "serve should exit 1 after refused clients: $(cat "$KV_TMP/sv.err")" ||
		return
	check_lines "$KV_TMP/sv.json" 'len(L) == 3' \
		'L[0]["error"]["name"] == "ERANGE" and L[0]["error"]["step"] == "hello"' \
		'L[0]["error"]["message"] == "refused the client'"'"'s request: duration above the server'"'"'s ceiling (at most 10 s)"' \
		'L[1]["error"]["reject_reason"] == "iterations above the server'"'"'s ceiling"' \
		'L[1]["error"]["reject_value"] == 1000' \
		'L[2]["status"] == "ok" and L[2]["iterations"] == 1000'
}

# -b against --no-reverse: the client's reverse half is refused and the
# client says why; the server goes on serving.
test_no_reverse_refuses_bidir_client() {
	local rc
	serve sv 17806 -j 2 --no-reverse || return
	client c1 17806 write_bw -s 4096 -n 100 -b
	kv_wait c1 60
	[ $? = 1 ] || fail "-b should fail: $(cat "$KV_TMP/c1.err" "$KV_TMP/c1.json")" || return
	json_check "$KV_TMP/c1.json" \
		'd["error"]["reject_reason"] == "reverse direction not served"' \
		'"run without -b" in d["error"]["message"]' || return
	client c2 17806 write_bw -s 4096 -n 100
	kv_wait c2 60 || fail "forward client: $(cat "$KV_TMP/c2.err" "$KV_TMP/c2.json")" || return
	# shellcheck disable=SC2154 # kv_pid_sv: set by the eval of what started it
	kill -INT "$kv_pid_sv"
	kv_wait sv 10
	rc=$?
	# As ping -s -P: after SIGINT, 1 when a session it served failed.
	[ $rc = 1 ] || fail "serve with a refused client: exit $rc, expected 1 after SIGINT" || return
	check_lines "$KV_TMP/sv.json" \
		'any(d["error"] and d["error"].get("reject_reason") == "reverse direction not served" and d["error"]["name"] == "EOPNOTSUPP" for d in L)' \
		'any(d["status"] == "ok" and d["iterations"] == 100 for d in L)'
}

# A ceiling above the module's is the admin's to raise, not the server's.
test_ceiling_above_module_refused() {
	local out max
	max=$(cat /sys/module/kverbs/parameters/perf_max_duration_s)
	out=$("$KVERBS" serve -p 17807 --max-duration $((max + 1)) 2>&1)
	[ $? = 2 ] || fail "exit code, expected 2: '$out'" || return
	case "$out" in
	*"is above the module's perf_max_duration_s, $max s: a server may only lower it"*) ;;
	*) fail "message: '$out'" ;;
	esac
}

# A signal ends it at once, waiting threads and all.  Serving until then
# is what was asked (as ping -s -P): 0 when nothing failed; but with -C,
# 130 when the count was not done.
test_sigint_while_waiting() {
	serve sv 17803 -j 4 || return
	kill -INT "$kv_pid_sv"
	kv_wait sv 10
	[ $? = 0 ] || fail "serve should exit 0 on SIGINT with nothing failed: $(cat "$KV_TMP/sv.err")" || return
	wait_for 5 eval '! kv_listening 0.0.0.0 17803' || fail "still listening after exit" || return
	serve sv 17803 -C 2 -j 1 || return
	kill -INT "$kv_pid_sv"
	kv_wait sv 10
	[ $? = 130 ] || fail "serve -C 2 should exit 130 on SIGINT before its count: $(cat "$KV_TMP/sv.err")"
}

test_port_in_use() {
	local out rc
	serve sv 17804 -j 1 || return
	out=$("$KVERBS" serve -p 17804 2>&1)
	rc=$?
	kill -INT "$kv_pid_sv"
	kv_wait sv 10
	[ $rc = 1 ] || fail "second serve on the port: exit $rc, expected 1" || return
	[ "$out" = "kverbs serve: cannot listen on 0.0.0.0:17804: port 17804 is in use" ] ||
		fail "message: '$out'"
}

# Sixty short ping-pong sessions through serve's listener, four at a
# time, then a TCP listener closed with a connection still in its
# accept queue.  TCP orphans the queued connection under its socket
# spinlock, which softirqs take, and write-locks the connection's
# sk_callback_lock there.  siw's socket upcalls take that lock too, from
# softirqs and from release_sock()'s backlog with softirqs enabled (data
# that came in while siw's transmit thread owned the socket): unless
# they disable them (tools/vm/patches/0010), lockdep reports the pair
# and switches itself off for the rest of the boot, and no later test
# of the run is checked for lock order.  The sessions, both ends
# sending, make that backlog likely; the listener is the guest's own,
# as any user's.  rxe's sockets are UDP ones, which the listener does
# not meet.
# Lockdep's "debug_locks" is 1 until its first report; empty without lockdep.
debug_locks() {
	awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats 2>/dev/null
}

test_tcp_listener_closed_after_sessions() {
	local on i j
	on=$(debug_locks)
	serve sv 17805 -C 60 -j 4 || return
	for ((i = 0; i < 15; i++)); do
		for j in 1 2 3 4; do
			client "c$j" 17805 send_lat -s 64 -n 20
		done
		for j in 1 2 3 4; do
			kv_wait "c$j" $((120 * KV_TIME_SCALE)) ||
				fail "client $i.$j: $(cat "$KV_TMP/c$j.err" "$KV_TMP/c$j.json")" || return
		done
		if [ "$on" = 1 ] && [ "$(debug_locks)" != 1 ]; then
			kill -INT "$kv_pid_sv"
			kv_wait sv 10
			fail "lockdep switched itself off in round $i: $(dmesg | grep -m1 -A4 'WARNING: .*lock')"
			return
		fi
	done
	kv_wait sv 60 || fail "serve: $(cat "$KV_TMP/sv.err")" || return
	kv_python <<'PY' || fail "the listener with a queued connection: $?" || return
import socket
listener = socket.create_server(("127.0.0.1", 0), backlog=1)
queued = socket.create_connection(listener.getsockname(), timeout=10)
listener.close()
queued.close()
PY
	[ "$on" != 1 ] || [ "$(debug_locks)" = 1 ] ||
		fail "lockdep switched itself off: $(dmesg | grep -m1 -A4 'WARNING: .*lock')"
}

test_usage() {
	local out
	out=$("$KVERBS" serve -j 0 2>&1)
	[ $? = 2 ] || fail "-j 0: exit code, expected 2" || return
	case "$out" in
	*"invalid jobs '0' (1 to 64)"*) ;;
	*) fail "-j 0: '$out'" || return ;;
	esac
	"$KVERBS" serve --help | grep -q -- "--count N" || fail "--help"
}

ktap_main test_three_clients_at_once test_unknown_version_then_served \
	test_ceilings_refuse_real_clients test_no_reverse_refuses_bidir_client \
	test_ceiling_above_module_refused \
	test_sigint_while_waiting test_port_in_use \
	test_tcp_listener_closed_after_sessions test_usage
