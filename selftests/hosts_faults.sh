#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two hosts, faults: what a second host can do to a test and loopback
# cannot.  Runs in guest A of a pair (tools/vm/pair), as hosts.sh does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hosts-lib.sh"

# Faults that a second host has and loopback does not.  In each, one
# side loses its peer mid-test; the side that survives must end its test
# within its step limit saying what happened (error name and step), let
# go of everything (its module unloads), and run a fresh test once the
# peer is back.

# wait_for and kv_peer_wait scale their bounds by KV_TIME_SCALE
# themselves: give them the step limit unscaled.
# shellcheck disable=SC2154 # port, step_limit: hosts-lib.sh's
step_s=$((step_limit / KV_TIME_SCALE))

# error_is FILE NAME[|NAME...] STEP...: the --json report's error: one
# of those names, in one of those steps.
error_is() {
	local f=$1 names steps

	names=$(printf "'%s'," ${2//|/ })
	shift 2
	steps=$(printf "'%s'," "$@")
	json_check "$f" 'd["status"] == "failed"' "d['error']['name'] in ($names)" \
		"d['error']['step'] in ($steps)"
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

# flap_repair_here / flap_repair_peer: the wire's card up again, its
# cable plugged in, and rxe0 re-created (a flap leaves rxe's GSI QP in the
# error state: faults.sh).
flap_repair_here() {
	kv_pair_cable a on || fail "A's cable: still unplugged" || return
	ip link set kvw0 up
	# Its IPv6 address went with the link (keep_addr_on_down is off).
	kv_has_addr6 || ip -6 addr add "$KV_ADDR6/64" dev kvw0 nodad
	timeout 20 rdma link del "$KV_DEV" || fail "A: rdma link del failed" || return
	kv_rxe_readd || fail "A: $KV_DEV did not come back"
}

flap_repair_peer() {
	kv_pair_cable b on || fail "B's cable: still unplugged" || return
	kv_peer -t 60 'ip link set kvw0 up && { kv_has_addr6 || ip -6 addr add "$KV_ADDR6/64" dev kvw0 nodad; } &&' \
		'timeout 20 rdma link del "$KV_DEV" && kv_rxe_readd' ||
		fail "B: $KV_DEV did not come back"
}

# wire_down_client_a SIDE [CARD]: a write_bw from A to a server on B;
# SIDE's card goes down mid-test (with CARD "up", only its cable is
# unplugged).  The side whose card went down ends at once (its port went
# down); the other, its peer silent, within its step limit.  The card's
# cable is unplugged first, as a real card's link goes when it is taken
# down: the peer's frames are then lost on the wire.  (A guest's card
# that is only down stops taking frames off QEMU's TCP wire, whose
# buffers then fill and hold the peer's frames, and with them its rxe's
# QP, in the peer's transmit queue: destroying that QP then waits 10 s
# for them and frees it regardless, and Debian's 6.12 rxe crashes in
# rxe_skb_tx_dtor() when the frames are let go.  Unplugged after the card
# went down, the card's receive ring can be full already, and QEMU reads
# the wire no more.)
wire_down_client_a() {
	local side=$1 card=${2:-down} pid rc d start
	# shellcheck disable=SC2154 # port, step_limit: hosts-lib.sh's
	kv_peer_bg srv "\"\$KVERBS\" write_bw -p $port --timeout $step_limit --json > srv.json 2> srv.err"
	d=$(kv_peer_dir srv)
	kv_peer -t 30 "wait_for 10 kv_listening 0.0.0.0 $port" ||
		fail "B's server is not listening: $(kv_cat "$d/srv.err")" || return
	"$KVERBS" write_bw -p "$port" --timeout "$step_limit" --json -s 65536 -D 600 "$KV_PEER_ADDR" \
		> "$KV_TMP/cli.json" 2> "$KV_TMP/cli.err" &
	pid=$!
	# A's RDMA WRITEs completing (KVERBS_STEP_RDMA_WRITE): the test runs.
	kv_trace_wait 30 1 kverbs_wc 'step == 11 && status == 0' ||
		fail "no RDMA WRITE completed: $(kv_cat "$KV_TMP/cli.err")" || return
	kv_alive $pid || fail "A's client ended early: $(kv_cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	start=$SECONDS
	kv_pair_cable "$side" off || fail "cannot unplug $side's cable" || return
	# The guest sees the cable go, as with a real card, before its card
	# goes down.
	if [ "$side" = a ]; then
		wait_for 10 kv_no_carrier ||
			fail "A's card kept its carrier with its cable unplugged" || return
		[ "$card" = up ] || ip link set kvw0 down
	else
		kv_peer -t 60 'wait_for 10 kv_no_carrier || { echo "its card kept its carrier with its cable unplugged"; exit 1; };' \
			'ip link set kvw0 down' || fail "B: see above" || return
	fi
	wait_for $((step_s + 10)) kv_ended $pid ||
		fail "A's client alive $(((step_s + 10) * KV_TIME_SCALE)) s after the wire went down: $(kv_stack $pid)" || return
	wait $pid
	rc=$?
	echo "# A's client ended $((SECONDS - start)) s after the wire went down"
	[ $rc = 1 ] || fail "A's client exited $rc, expected 1: $(kv_cat "$KV_TMP/cli.err")" || return
	kv_peer_wait srv $((step_s + 20))
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

# A's cable unplugged mid-test, its card left up.  rxe marks its port
# down when the carrier goes (rxe_set_port_state()); siw sends its port
# event only when the netdev goes down, and its WRITEs, on a TCP socket
# that outlives the carrier, neither complete nor fail.  Either way A's
# client says the link went down: over siw once its step limit runs out
# (kverbs_ep_timed_out()).
test_cable_unplugged_on_a_mid_write_bw() {
	wire_down_client_a a up || return
	error_is "$KV_TMP/cli.json" ENETDOWN rdma_write || return
	error_is "$(kv_peer_dir srv)/srv.json" ETIMEDOUT recv || return
	flap_repair_here
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
	if out=$(kv_peer -t 30 'rmmod kverbs' 2>&1); then
		fail "B's rmmod succeeded under a running server"
		return
	fi
	[[ $out == *"in use"* ]] || fail "B's rmmod said: $out" || return
	# The server itself, not its request's process group: the agent
	# writes 137 for a group it kills, while this 137 is the shell's
	# own report of how the server ended.
	kv_peer -t 30 "kill -KILL \$(cat ../${d##*/}/srv.pid)" ||
		fail "cannot SIGKILL B's server" || return
	kv_peer_wait srv 30
	rc=$?
	[ $rc = 137 ] || fail "B's server exited $rc, expected SIGKILL's 137" || return
	[ ! -s "$d/srv.json" ] || fail "B's killed server reported: $(kv_cat "$d/srv.json")" || return
	start=$SECONDS
	kv_peer -t 60 'timeout 30 rmmod kverbs' ||
		fail "B's rmmod failed once its server was killed" || return
	wait_for $((step_s + 10)) kv_ended $pid ||
		fail "A's client alive $(((step_s + 10) * KV_TIME_SCALE)) s after B's module went: $(kv_stack $pid)" || return
	wait $pid
	rc=$?
	echo "# A's client ended $((SECONDS - start)) s after B's module went"
	kv_peer -t 30 'insmod "$KV_MODULE"' || fail "B: cannot load the module again" || return
	[ $rc = 1 ] || fail "A's client exited $rc, expected 1: $(kv_cat "$KV_TMP/cli.err")" || return
	# The server's goodbye (its DREQ, sent as the killed process's file
	# closes) finds the client somewhere in an iteration: mostly waiting
	# for the server's message, but registering or sending is as honest.
	# Over siw the goodbye is the end of the TCP stream, which can cut a
	# message of the server's in the middle: siw then ends the receive
	# it was placing that message in with an error, not a flush (EIO at
	# recv).
	local reset=ECONNRESET
	[ "$KV_TYPE" != siw ] || reset="ECONNRESET|EIO"
	error_is "$KV_TMP/cli.json" "$reset" reg_mr send recv local_inv || return
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
	kv_trace_wait 30 1 kverbs_wc 'step == 11 && status == 0' ||
		fail "no RDMA WRITE completed: $(kv_cat "$KV_TMP/cli.err")" || return
	kv_alive $pid || fail "A's client ended early: $(kv_cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	start=$SECONDS
	kv_pair_kill_b || return
	wait_for $((step_s + 10)) kv_ended $pid ||
		fail "A's client alive $(((step_s + 10) * KV_TIME_SCALE)) s after B died: $(kv_stack $pid)" || return
	wait $pid
	rc=$?
	echo "# A's client ended $((SECONDS - start)) s after B's QEMU was told to end"
	[ $rc = 1 ] || fail "A's client exited $rc, expected 1: $(kv_cat "$KV_TMP/cli.err")" || return
	error_is "$KV_TMP/cli.json" ETIMEDOUT rdma_write || return
	reload_module_here || return
	kv_pair_boot_b || return
	perf_validated ab write_bw 65536 50 && ping_b_to_a 4096 10
}

# B, booted again by the last fault, is checked once more: its fresh
# test left it clean too.
test_peer_clean_after_reboot() {
	test_peer_clean
}

# B's leaks and log are checked before B's guest is killed, which would
# take with it the evidence of how B let go of the earlier faults.
ktap_main test_wire_down_on_a_mid_write_bw test_cable_unplugged_on_a_mid_write_bw \
	test_wire_down_on_b_mid_write_bw \
	test_peer_process_killed_then_module_removed test_peer_kmemleak test_peer_clean \
	test_peer_guest_killed_mid_write_bw test_peer_clean_after_reboot
