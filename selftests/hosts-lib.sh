# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# selftests/hosts-lib.sh: what the two-host suites (hosts.sh,
# hosts_faults.sh) share, sourced after lib.sh: ports per test, B's
# cleanup after each, servers on either guest, pings and perf tests
# with the client on one guest and the server on the other, and the
# last test of each suite, test_peer_clean.

[ -n "${KV_PAIR:-}" ] || { echo "1..0 # SKIP not in a pair of guests (tools/vm/pair)"; exit 0; }

# Each test from its own ports.
port=17900
kv_before_test() {
	port=$((17900 + 20 * KV_TEST_NUM))
}
step_limit=$((10 * KV_TIME_SCALE))

# What a test left on B goes too, and B's wire and device are repaired,
# as ktap_main does here after each test.  Returns as kv_rxe_restore
# does: 2 if the test left something (here or on B), 1 if it could not
# be repaired.
kv_after_test() {
	local role left=0
	# A test that unplugged a cable and failed before it plugged it in.
	for role in a b; do
		[ -e "$KV_PAIR/cable-$role.off" ] || continue
		echo "$role's cable was unplugged: plugging it in"
		left=2
		kv_pair_cable "$role" on || return 1
	done
	# A test that made A's wire drop datagrams (hosts.sh's ud_drop).
	if tc qdisc show dev kvw0 2> /dev/null | grep -q netem; then
		echo "A's wire drops datagrams: undoing it"
		left=2
		tc qdisc del dev kvw0 root || return 1
	fi
	# A test that had B killed and failed before it booted B again.
	if [ -e "$KV_PAIR/b.gone" ]; then
		echo "B was gone: booting it again"
		left=2
		kv_pair_boot_b || return 1
	fi
	kv_peer -t 60 "kv_kill_leftovers; l=\$?; read -r c < /sys/class/net/\$KV_NETDEV/carrier_changes;" \
		"kv_rxe_restore $1 \"\$c\"; kv_worst \$l \$?"
	kv_worst $left $?
}

# The ping helpers below use the wire's IPv4 addresses, or with v6=1
# its IPv6 ones (fd00:210::1 and ::2).

# peer_server NAME PORT PING_OPTS...: a kverbs ping server on B's
# address, in the background on B, --json to NAME.json and its pid to
# NAME.pid in its request directory; waits until it listens.  Servers
# get the clients' step limit, not the module's 10 s: on the debug lane
# a client's first RDMA WRITE of 1 MiB, registration included, took
# longer than that.
peer_server() {
	local name=$1 port=$2 a="\$KV_ADDR${v6:+6}"
	shift 2
	kv_peer_bg "$name" "echo \$BASHPID > $name.pid;" \
		"exec \"\$KVERBS\" ping -s -a \"$a\" -p $port --timeout $step_limit --json $*" \
		"> $name.json 2> $name.err"
	kv_peer -t 30 "wait_for 10 kv_listening \"$a\" $port" ||
		fail "B's server $name is not listening on $port: $(cat "$(kv_peer_dir "$name")/$name.err")"
}

# ping_checks CLIENT_JSON SERVER_JSON COUNT: both reports of a validated
# ping of COUNT iterations that went well.
ping_checks() {
	json_check "$1" 'd["status"] == "ok"' "d['iterations'] == $3" \
		'd["bytes_read"] == d["iterations"] * d["size"]' 'd["error"] is None' \
		-- "$2" 'd["status"] == "ok"' "d['iterations'] == $3" \
		'd["clients"] == 1' 'd["clients_failed"] == 0'
}

# ping_b_to_a SIZE COUNT: a server on A, a client on B.
ping_b_to_a() {
	local size=$1 count=$2 rc d KV_ADDR=$KV_ADDR
	[ -z "${v6:-}" ] || KV_ADDR=$KV_ADDR6
	kv_server srv "$port" -V --timeout "$step_limit" || return
	kv_peer -t 300 "\"\$KVERBS\" ping -c -a \"\$KV_PEER_ADDR${v6:+6}\" -p $port --json -V" \
		"-C $count -S $size --timeout $step_limit > cli.json 2> cli.err"
	rc=$?
	d=$(kv_peer_dir fg)
	kv_wait srv 30 || fail "A's server: $(cat "$KV_TMP/srv.err" "$KV_TMP/srv.json")" || return
	[ $rc = 0 ] || fail "B's client exited $rc: $(cat "$d/cli.err" "$d/cli.json")" || return
	ping_checks "$d/cli.json" "$KV_TMP/srv.json" "$count" || return
	json_check "$d/cli.json" "d['size'] == $size" "d['address'] == '$KV_ADDR'"
}

# ping_a_to_b SIZE COUNT: a server on B, a client on A.
ping_a_to_b() {
	local size=$1 count=$2 rc d
	local to=$KV_PEER_ADDR
	[ -z "${v6:-}" ] || to=$KV_PEER_ADDR6
	peer_server srv "$port" -V || return
	KV_ADDR=$to KV_CLIENT_LIMIT=300 kv_client cli "$port" -V -C "$count" -S "$size" \
		--timeout "$step_limit"
	rc=$?
	d=$(kv_peer_dir srv)
	kv_peer_wait srv 30 || fail "B's server: $(cat "$d/srv.err" "$d/srv.json")" || return
	[ $rc = 0 ] || fail "A's client exited $rc: $(cat "$KV_TMP/cli.err" "$KV_TMP/cli.json")" ||
		return
	ping_checks "$KV_TMP/cli.json" "$d/srv.json" "$count" || return
	json_check "$KV_TMP/cli.json" "d['size'] == $size" "d['address'] == '$to'"
}

# perf_run WAY TEST OPTS...: a perf test across the wire, WAY "ab" (the
# client on A, its server on B) or "ba"; the server gets the options of
# the array srv_opts.  Both must succeed and report the same run, as
# perf.sh's perf_pair checks.  Leaves the reports' paths in cli and srv.
srv_opts=()
perf_run() {
	local way=$1 test=$2 rc d
	shift 2
	if [ "$way" = ab ]; then
		kv_peer_bg srv "\"\$KVERBS\" $test -p $port --timeout $step_limit --json" \
			"${srv_opts[*]} > srv.json 2> srv.err"
		d=$(kv_peer_dir srv)
		srv=$d/srv.json
		kv_peer -t 30 "wait_for 10 kv_listening 0.0.0.0 $port" ||
			fail "B's $test server is not listening: $(cat "$d/srv.err")" || return
		cli=$KV_TMP/cli.json
		timeout -k 5 $((120 * KV_TIME_SCALE)) "$KVERBS" "$test" -p "$port" \
			--timeout "$step_limit" --json "$@" "$KV_PEER_ADDR" > "$cli" 2> "$KV_TMP/cli.err"
		rc=$?
		kv_peer_wait srv 60 || fail "B's server exited $?: $(cat "$d/srv.err" "$srv")" ||
			return
		[ $rc = 0 ] || fail "A's client exited $rc: $(cat "$KV_TMP/cli.err" "$cli")" || return
	else
		"$KVERBS" "$test" -p "$port" --timeout "$step_limit" --json "${srv_opts[@]}" \
			> "$KV_TMP/srv.json" 2> "$KV_TMP/srv.err" &
		# shellcheck disable=SC2034 # kv_pid_srv: read by the eval of kv_wait srv
		kv_pid_srv=$!
		srv=$KV_TMP/srv.json
		wait_for 10 kv_listening 0.0.0.0 "$port" ||
			fail "A's $test server is not listening: $(cat "$KV_TMP/srv.err")" || return
		kv_peer -t 150 "timeout -k 5 120 \"\$KVERBS\" $test -p $port --timeout $step_limit" \
			"--json $* \$KV_PEER_ADDR > cli.json 2> cli.err"
		rc=$?
		d=$(kv_peer_dir fg)
		cli=$d/cli.json
		kv_wait srv 60 || fail "A's server exited $?: $(cat "$KV_TMP/srv.err" "$srv")" || return
		[ $rc = 0 ] || fail "B's client exited $rc: $(cat "$d/cli.err" "$cli")" || return
	fi
}

# perf_agree: the client's report and the server's, of a run of one
# connection or several, agree on what ran.
perf_agree() {
	json_check "$cli" 'd["status"] == "ok"' 'd["error"] is None' 'd["validate"] is True' \
		'd["bytes"] == d["iterations"] * d["size"]' 'd["elapsed_ns"] > 0' \
		-- "$srv" 'd["status"] == "ok"' 'd["error"] is None' || return
	kv_python "$cli" "$srv" <<'PY'
import json, sys
c, s = (json.load(open(p)) for p in sys.argv[1:])
for k in ("test", "size", "validate", "iterations", "bytes", "elapsed_ns"):
    if c[k] != s[k]:
        sys.exit(f"client and server disagree on {k}: {c[k]} != {s[k]}")
PY
}

# perf_iters N: N divided by KV_PERF_DIV, at least 10, as perf.sh's
# (the debug lane runs fewer messages).
perf_iters() {
	local n=$(($1 / ${KV_PERF_DIV:-1}))
	echo $((n < 10 ? 10 : n))
}

# perf_validated WAY TEST SIZE ITERS [OPTS...]: ITERS as perf_iters has it.
perf_validated() {
	local n
	n=$(perf_iters "$4")
	perf_run "$1" "$2" -s "$3" -n "$n" --validate "${@:5}" || return
	perf_agree || return
	json_check "$cli" "d['iterations'] == $n" "d['size'] == $3" "d['test'] == '$2'"
}

# B's leaks, as run.sh's unload step checks A's: what kmemleak (the
# debug lane's kernel) finds since B was set up (kv_kmemleak_check).
# Before B's module goes, whose frames name kverbs in a report.
test_peer_kmemleak() {
	local out rc
	out=$(kv_peer -t 120 'kv_kill_leftovers; [ $? != 1 ] && kv_kmemleak_check' 2>&1)
	rc=$?
	[ $rc != 2 ] || skip "no kmemleak in B's kernel"
	[ $rc = 0 ] || fail "B's kmemleak (status $rc):" "$out" || return
	[ -z "$out" ] || echo "# B: $out"
}

# The end of the run, B's side: nothing left running there, its module
# unloads, and its kernel said nothing that looks like a splat.
test_peer_clean() {
	local out
	out=$(kv_peer -t 60 'kv_kill_leftovers; [ $? != 1 ] && timeout 30 rmmod kverbs && insmod "$KV_MODULE"' 2>&1) ||
		fail "B: $out" || return
	out=$(kv_peer -t 60 'dmesg | tail -n +$((KV_DMESG_BASE + 1)) | kv_splats' 2>&1) ||
		fail "B's kernel log: $out" || return
	[ -z "$out" ] || fail "B's kernel complained:" "$out"
}
