#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's limits: going past one fails the test with its errno and a
# message naming the parameter, and nothing else is disturbed.
. "$(dirname "$0")/lib.sh"

P=/sys/module/kverbs/parameters

# with_param NAME VALUE CMD...: run CMD with the parameter set, then restore it.
with_param() {
	local name=$1 value=$2 old rc
	old=$(cat "$P/$name")
	shift 2
	echo "$value" > "$P/$name"
	"$@"
	rc=$?
	echo "$old" > "$P/$name"
	return $rc
}

over_max_sessions() {
	kv_server a 17801 || return 1
	kv_server b 17802 || return 1
	timeout $((10 * KV_TIME_SCALE)) "$KVERBS" ping -c -a "$KV_ADDR" -p 17801 -C 1 2> "$KV_TMP/e"
	[ $? = 1 ] || fail "third test should fail" || return
	grep -q "too many tests are running (the module's max_sessions)" "$KV_TMP/e" ||
		fail "message: $(cat "$KV_TMP/e")"
}

test_max_sessions() {
	with_param max_sessions 2 over_max_sessions || return
	# The two servers still serve, now that the limit is back.
	kv_client a 17801 -C 5 || fail "a: $(cat "$KV_TMP/a.err")" || return
	kv_client b 17802 -C 5 || fail "b: $(cat "$KV_TMP/b.err")"
}

over_max_pinned() {
	kv_server srv 17803 || return 1
	timeout $((20 * KV_TIME_SCALE)) "$KVERBS" ping -c -a "$KV_ADDR" -p 17803 -C 1 -S 1M 2> "$KV_TMP/e"
	[ $? = 1 ] || fail "2 MiB of buffers under a 1 MiB limit should fail" || return
	grep -q "max_pinned_mb" "$KV_TMP/e" || fail "message: $(cat "$KV_TMP/e")"
}

test_max_pinned_mb() {
	with_param max_pinned_mb 1 over_max_pinned || return
	# The server is still there and pings of the same size work again.
	kv_client again 17803 -C 3 -S 1M -V || fail "after the limit: $(cat "$KV_TMP/again.err")"
}

# srq_session PORT WR: a send_bw server with an SRQ of WR receives of
# 64 KiB and a validated client of 20 1 KiB SENDs; the server's JSON in
# $KV_TMP/srq.json, the client's exit code in rc.
srq_session() {
	"$KVERBS" send_bw -p "$1" --srq --srq-wr "$2" -s 65536 --json \
		> "$KV_TMP/srq.json" 2> "$KV_TMP/srq.err" &
	# shellcheck disable=SC2034 # kv_pid_srq: read by the eval of kv_wait srq
	kv_pid_srq=$!
	wait_for 10 kv_listening 0.0.0.0 "$1" || fail "no server: $(cat "$KV_TMP/srq.err")" ||
		return
	timeout $((60 * KV_TIME_SCALE)) "$KVERBS" send_bw -p "$1" -s 1024 -n 20 --validate \
		"$KV_ADDR" > "$KV_TMP/srqc.out" 2>&1
	rc=$?
	kv_wait srq 30
}

# An SRQ's receives are pinned memory too: 64 of 64 KiB (4 MiB) under a
# 1 MiB max_pinned_mb, and the server's session fails at its setup with
# ENOBUFS; 4 of them (256 KiB) under the same limit serve the client.
over_max_pinned_srq() {
	srq_session 17806 64
	[ $rc = 1 ] || fail "client exited $rc: $(cat "$KV_TMP/srqc.out")" || return
	json_check "$KV_TMP/srq.json" 'd["error"]["name"] == "ENOBUFS"' \
		'd["error"]["step"] == "setup"' || return
	srq_session 17807 4
	[ $rc = 0 ] || fail "client exited $rc: $(cat "$KV_TMP/srqc.out")" || return
	json_check "$KV_TMP/srq.json" 'd["status"] == "ok"' 'd["srq_wr"] == 4'
}

test_max_pinned_mb_srq() {
	with_param max_pinned_mb 1 over_max_pinned_srq
}

# The per-user limits, with two unprivileged users A and B: uids with no
# passwd entry, in group rdma (or, where the guest has no such group, a
# gid with no entry either), for which /dev/kverbs is made group-usable
# as the udev rule makes it.  A holds all it may; its next test is
# refused with EDQUOT, while B runs a full validated ping at the same
# time: the control that shows the limit is A's and not everyone's.
UID_A=61001
UID_B=61002
rdma_gid=$(getent group rdma | cut -d: -f3)
rdma_gid=${rdma_gid:-61000}

# users_allow / users_restore: give /dev/kverbs to the group, and the
# tool's directory (run.sh's copy, root's 0700) to everyone; then back.
# The tool keeps its path, so the leftover sweep still finds it.
users_allow() {
	chgrp "$rdma_gid" /dev/kverbs && chmod 660 /dev/kverbs &&
		chmod 711 "$(dirname "$KVERBS")"
}

users_restore() {
	chown root:root /dev/kverbs
	chmod 600 /dev/kverbs
	chmod 700 "$(dirname "$KVERBS")"
}

# as_user UID CMD...: run CMD as UID, in the rdma group only, no caps.
as_user() {
	local uid=$1
	shift
	setpriv --reuid="$uid" --regid="$uid" --groups="$rdma_gid" \
		--inh-caps=-all -- "$@"
}

# user_server NAME UID PORT [ping options]: kv_server, run as UID.  Not
# through as_user: kv_pid_NAME is the tool's own, for the signal that
# ends a persistent server.
user_server() {
	local uid=$2
	# shellcheck disable=SC2034 # KV_RUN_AS: read by lib.sh's kv_server
	local KV_RUN_AS=(setpriv --reuid="$uid" --regid="$uid" --groups="$rdma_gid"
			 --inh-caps=-all --)
	kv_server "$1" "$3" "${@:4}" || { echo "(as uid $uid)"; return 1; }
}

# user_client NAME UID PORT [ping options]: kv_client, run as UID.
user_client() {
	local name=$1 uid=$2 port=$3
	shift 3
	as_user "$uid" timeout -k 5 $((${KV_CLIENT_LIMIT:-120} * KV_TIME_SCALE)) \
		"$KVERBS" ping -c -a "$KV_ADDR" -p "$port" --json "$@" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err"
}

# user_ping_pair UID PORT COUNT [client options]: kv_ping_pair, both ends
# run as UID.
user_ping_pair() {
	local uid=$1 port=$2 count=$3 rc
	shift 3
	user_server "srv$uid" "$uid" "$port" -V || return 1
	user_client "cli$uid" "$uid" "$port" -V -C "$count" "$@"
	rc=$?
	kv_wait "srv$uid" 30 ||
		{ echo "uid $uid: server failed:"; cat "$KV_TMP/srv$uid.err"; return 1; }
	[ $rc = 0 ] ||
		{ echo "uid $uid: client exited $rc:"; cat "$KV_TMP/cli$uid.err"; return 1; }
	json_check "$KV_TMP/cli$uid.json" 'd["status"] == "ok"' "d['iterations'] == $count" \
		'd["error"] is None' \
		-- "$KV_TMP/srv$uid.json" 'd["status"] == "ok"' "d['iterations'] == $count" \
		'd["clients"] == 1' 'd["clients_failed"] == 0'
}

# user_refused UID MESSAGE PORT [client options]: a client of UID fails
# with exit 1, EDQUOT and MESSAGE.
user_refused() {
	local uid=$1 msg=$2 port=$3 rc=0
	shift 3
	user_client refused "$uid" "$port" -C 1 "$@" || rc=$?
	[ $rc = 1 ] || fail "uid $uid: exit $rc, expected 1: $(cat "$KV_TMP/refused.json" "$KV_TMP/refused.err")" ||
		return
	json_check "$KV_TMP/refused.json" 'd["error"]["name"] == "EDQUOT"' \
		'd["error"]["step"] == "setup"' "d['error']['message'] == \"$msg\""
}

# Is a connection to or from PORT up, or being made?  A ping client
# allocates its buffers before it connects.
connected_on() {
	local line
	while IFS= read -r line; do
		[[ "$line " == *"state CONNECT "*":$1 "* ]] && return 0
	done < <(rdma res show cm_id 2>/dev/null)
	return 1
}

# with_users CMD...: run CMD with /dev/kverbs open to A and B, then close
# it again, whatever CMD did.
with_users() {
	local rc
	users_allow || { users_restore; fail "cannot open /dev/kverbs to group $rdma_gid"; return; }
	"$@"
	rc=$?
	users_restore
	return $rc
}

# stop_servers NAME...: end the persistent servers NAME as ^C ends them,
# and wait for each: a test leaves no process behind.
stop_servers() {
	local name pid rc=0

	for name; do
		pid=$(eval echo "\$kv_pid_$name")
		kill -INT "$pid" 2>/dev/null
	done
	for name; do
		kv_wait "$name" 30 > /dev/null
		[ $? != 124 ] || { echo "server $name did not end on SIGINT"; rc=1; }
	done
	return $rc
}

over_max_sessions_per_user() {
	local rc
	# A's two sessions: servers waiting for clients, one each (-j 1).
	user_server a1 $UID_A 17811 -P -j 1 || return 1
	user_server a2 $UID_A 17812 -P -j 1 || { stop_servers a1; return 1; }
	third_session_refused
	rc=$?
	stop_servers a1 a2 || rc=1
	return $rc
}

third_session_refused() {
	# A's third, to its own server, is refused before it begins.
	user_refused $UID_A "too many tests are running as this user (max_sessions_per_user)" 17811 ||
		return
	# B, with two sessions of its own at the same time, is not.
	user_ping_pair $UID_B 17813 3 || return
	# Root either: its sessions are its own.
	kv_ping_pair 17814 -C 2
}

test_max_sessions_per_user() {
	with_users with_param max_sessions_per_user 2 over_max_sessions_per_user
}

over_max_pinned_mb_per_user() {
	local hold rc
	# A holds 2 MiB of its 3: the two 1 MiB buffers (as large as siw
	# registers; rxe takes 2 MiB) of a client that pings on, with
	# root's server.
	kv_server rsrv 17821 -P || return 1
	setpriv --reuid=$UID_A --regid=$UID_A --groups="$rdma_gid" --inh-caps=-all -- \
		"$KVERBS" ping -c -a "$KV_ADDR" -p 17821 -S 1M -C 0 --json \
		>"$KV_TMP/hold.json" 2>"$KV_TMP/hold.err" &
	hold=$!
	pinned_while_held "$hold"
	rc=$?
	# Not left to the sweep: the test's output is read until it ends.
	kill -INT "$hold"
	wait_for 30 kv_ended "$hold" || kill -9 "$hold"
	wait "$hold"
	stop_servers rsrv || rc=1
	return $rc
}

pinned_while_held() {
	local hold=$1
	# Its buffers exist before it connects: wait for the connection.
	wait_for 10 connected_on 17821 ||
		fail "A's client did not connect: $(cat "$KV_TMP/hold.json" "$KV_TMP/hold.err")" || return
	kv_alive "$hold" ||
		fail "A's client ended: $(cat "$KV_TMP/hold.json" "$KV_TMP/hold.err")" || return
	# A's next client would hold 2 MiB more: refused at its setup.
	user_refused $UID_A "this user's limit on memory for RDMA buffers is reached (max_pinned_mb_per_user)" \
		17821 -S 1M || return
	# B holds all its 3 MiB with both ends of its ping (server 1,
	# client 2), now.
	user_ping_pair $UID_B 17822 3 -S 1M || return
	kv_alive "$hold" ||
		fail "A's client did not hold its memory throughout: $(cat "$KV_TMP/hold.json" "$KV_TMP/hold.err")"
}

test_max_pinned_mb_per_user() {
	with_users with_param max_pinned_mb_per_user 3 over_max_pinned_mb_per_user
}

# What a user held is given back when its tests end, however they end:
# A at its limits runs again and again.
per_user_counts_return() {
	local i
	# Two persistent servers, ended by a signal, as ^C ends them.
	user_server a1 $UID_A 17831 -P -j 1 || return 1
	user_server a2 $UID_A 17832 -P -j 1 || return 1
	stop_servers a1 a2 || return
	# Each pair takes both sessions, and 768 KiB of the 1 MiB: server
	# 256 KiB, client 512 KiB.
	for i in 1 2 3; do
		user_ping_pair $UID_A 17833 2 -S 256k || fail "pair $i" || return
	done
	# One refused past the limit (a client of 2 MiB) gives back nothing
	# it did not take.
	user_refused $UID_A "this user's limit on memory for RDMA buffers is reached (max_pinned_mb_per_user)" \
		17834 -S 1M || return
	user_ping_pair $UID_A 17835 2 -S 256k || fail "after the refusal"
}

test_per_user_counts_return() {
	with_users with_param max_sessions_per_user 2 \
		with_param max_pinned_mb_per_user 1 per_user_counts_return
}

test_max_msg_size_is_enforced_by_the_module() {
	with_param max_msg_size 4096 eval \
		'timeout $((10 * KV_TIME_SCALE)) "$KVERBS" ping -c -a "$KV_ADDR" -C 1 -S 8192 2> "$KV_TMP/e"; echo $? > "$KV_TMP/rc"'
	[ "$(cat "$KV_TMP/rc")" = 2 ] || fail "exit $(cat "$KV_TMP/rc"), expected 2" || return
	grep -q "max_msg_size" "$KV_TMP/e" || fail "message: $(cat "$KV_TMP/e")"
}

# timeout_ms takes what an ioctl's timeout_ns may ask for, 1 ms to an
# hour, and refuses the rest with EINVAL, keeping its value: 0 is no
# limit nowhere, and the connect waits added a second to it.
test_timeout_ms_range() {
	local v old
	old=$(<"$P/timeout_ms")
	for v in 0 3600001 -1 x; do
		if echo "$v" 2>/dev/null > "$P/timeout_ms"; then
			echo "$old" > "$P/timeout_ms"
			fail "timeout_ms took $v" || return
		fi
		[ "$(<"$P/timeout_ms")" = "$old" ] || fail "timeout_ms changed to $(<"$P/timeout_ms")" || return
	done
	for v in 1 3600000; do
		if ! echo "$v" > "$P/timeout_ms" || [ "$(<"$P/timeout_ms")" != "$v" ]; then
			echo "$old" > "$P/timeout_ms"
			fail "timeout_ms refused $v" || return
		fi
	done
	echo "$old" > "$P/timeout_ms"
	# The control: a ping works under the value restored.
	kv_ping_pair 17805 -C 2
}

# Pinned user memory counts against the process's RLIMIT_MEMLOCK, as a
# memory registration by ibv_reg_mr() does, unless it has CAP_IPC_LOCK.
# A read_lat of one second gives the kernel room for a million samples,
# 8 MiB of them: without CAP_IPC_LOCK, under a 1 MiB limit, it fails
# before it connects with ENOMEM at the samples step and a message that
# names the limit; the same run with CAP_IPC_LOCK, and a short one of
# 100 samples (800 bytes) without it, pass.
test_samples_past_memlock() {
	local port=17820 rc
	command -v prlimit >/dev/null && command -v setpriv >/dev/null ||
		skip "prlimit and setpriv (util-linux) are not installed"
	"$KVERBS" serve -p "$port" -C 2 --json > "$KV_TMP/srv.json" 2>&1 &
	# shellcheck disable=SC2034 # kv_pid_srv: read by the eval of kv_wait srv
	kv_pid_srv=$!
	wait_for 10 kv_listening 0.0.0.0 "$port" || fail "no server on $port" || return
	prlimit --memlock=1048576:1048576 setpriv --bounding-set -ipc_lock -- \
		"$KVERBS" read_lat -p "$port" -D 1 --json "$KV_ADDR" > "$KV_TMP/big.json" 2>&1
	rc=$?
	[ $rc = 1 ] || fail "past RLIMIT_MEMLOCK: exit $rc: $(cat "$KV_TMP/big.json")" || return
	json_check "$KV_TMP/big.json" 'd["error"]["name"] == "ENOMEM"' \
		'd["error"]["step"] == "samples"' '"ulimit -l" in d["error"]["message"]' || return
	prlimit --memlock=1048576:1048576 setpriv --bounding-set -ipc_lock -- \
		"$KVERBS" read_lat -p "$port" -n 100 --json "$KV_ADDR" > "$KV_TMP/small.json" 2>&1 ||
		fail "within RLIMIT_MEMLOCK: $(cat "$KV_TMP/small.json")" || return
	prlimit --memlock=1048576:1048576 \
		"$KVERBS" read_lat -p "$port" -D 1 --json "$KV_ADDR" > "$KV_TMP/cap.json" 2>&1 ||
		fail "with CAP_IPC_LOCK: $(cat "$KV_TMP/cap.json")" || return
	kv_wait srv 30
}

ktap_main test_max_sessions test_max_pinned_mb test_max_pinned_mb_srq \
	test_samples_past_memlock \
	test_max_msg_size_is_enforced_by_the_module \
	test_timeout_ms_range test_max_sessions_per_user test_max_pinned_mb_per_user \
	test_per_user_counts_return
