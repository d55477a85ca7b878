#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/run.sh [--module PATH] [--pair] [TEST...]: run the kverbs
# selftests.  As root, inside a throw-away guest (tools/vm/run): it loads
# rxe on a veth pair, loads the module, runs each test script or program
# as a KTAP subtest, then unloads the module.  Prints KTAP; exits non-zero
# if any test failed.
#
# With --pair, as guest A of a pair of guests (tools/vm/pair): $KV_TYPE on
# the wire to guest B instead (B takes A's KV_TYPE and time scale), whose agent (peer-agent.sh) must be ready
# before the suites run (default suites: hosts hosts_faults); B is told
# when A is done.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
here=$top/selftests
module=
pair=

while [ $# -gt 0 ]; do
	case "$1" in
	--module) module=$2; shift 2 ;;
	--pair) pair=1; shift ;;
	--) shift; break ;;
	-*) echo "usage: $0 [--module PATH] [--pair] [TEST...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -n "$module" ] || module=$top/build/$(uname -r)/kernel/kverbs.ko
[ -f "$module" ] || module=$top/kernel/kverbs.ko
module=$(realpath "$module")
tests=("$@")
[ ${#tests[@]} -gt 0 ] || [ -z "$pair" ] || tests=(hosts hosts_faults)
if [ ${#tests[@]} = 0 ]; then
	tests=(uapi devices ping perf validate counters serve interop ud errors concurrent limits faults removal netns perm security fuzz failnth lessons lifetimes)
	# KV_SKIP_SUITES="NAME ...": the default list without these.
	for s in ${KV_SKIP_SUITES:-}; do
		for i in "${!tests[@]}"; do
			[ "${tests[$i]}" = "$s" ] && unset "tests[$i]"
		done
	done
	tests=("${tests[@]}")
fi

# KV_TYPE=siw runs the suites over soft-iWARP instead of soft-RoCE.
KV_TYPE=${KV_TYPE:-rxe}
export KV_TOP=$top KV_ADDR=10.209.0.1 KV_TYPE KV_DEV=${KV_TYPE}0 KV_MODULE=$module
# For kv_splats: what counts as a kernel splat.
. "$here/lib.sh"
rm -rf "$KV_TMP"

# Run copies: a rebuild on the host must not change binaries under us
# (the tree is shared over 9p without caching).
bin=$(mktemp -d /tmp/kverbs-bin.XXXXXX)
cp "$top/tools/kverbs/kverbs" "$bin/" 2>/dev/null
for p in "$here"/*; do
	[ -f "$p" ] && [ -x "$p" ] && [ "${p##*.}" != sh ] && cp "$p" "$bin/"
done
export KVERBS=$bin/kverbs

bail() {
	echo "Bail out! $*"
	exit 1
}

# A KV_ONLY name for one suite (SUITE:name) must name a suite of this
# run, or its tests would run in full without a word.
for name in ${KV_ONLY:-}; do
	[[ $name == *:* ]] || continue
	[[ " ${tests[*]} " == *" ${name%%:*} "* ]] ||
		bail "KV_ONLY names $name, but ${name%%:*} is no suite of this run (${tests[*]})"
done

[ "$(id -u)" = 0 ] || bail "needs root (run it in a guest: tools/vm/run)"
if [ -n "$pair" ]; then
	kv_pair_env || bail "not guest A of a pair (tools/vm/pair)"
	[ "$KV_ROLE" = a ] || bail "--pair runs in guest A; B runs selftests/peer-agent.sh"
	# B learns that A is done however this ends.
	trap ': > "$KV_PAIR/a.done"' EXIT
	# B runs over what A runs over, with A's time scale and sizes.
	kv_pair_env_publish || bail "cannot write $KV_PAIR/a.env"
	why=$(kv_pair_setup 2>&1) || bail "$why"
	# B boots alongside: a bound on its boot and setup, under TCG on a
	# loaded host, not a measure.
	start=$SECONDS
	while ((SECONDS - start < 300 * KV_TIME_SCALE)); do
		[ -e "$KV_PAIR/b.ready" ] && break
		[ -e "$KV_PAIR/b.failed" ] && bail "guest B's setup failed: $(cat "$KV_PAIR/b.failed")"
		[ -e "$KV_PAIR/b.gone" ] && bail "guest B ended before it was ready: $(cat "$KV_PAIR/b.gone")"
		sleep 0.1
	done
	[ -e "$KV_PAIR/b.ready" ] || bail "guest B was not ready within $((300 * KV_TIME_SCALE)) s"
	peer_release=$(cat "$KV_PAIR/b.ready")
else
	"$top/tools/vm/rdma-setup" "$KV_TYPE" "$KV_ADDR/24" "$KV_DEV" || bail "cannot set up $KV_DEV"
	insmod "$module" || bail "cannot load $module"
	# The IPv6 address rdma-setup gives kv0, if the kernel has IPv6.
	if ip -6 addr show dev kv0 2>/dev/null | grep -q "inet6 fd00:209::1/"; then
		export KV_ADDR6=fd00:209::1
	fi
fi
# kverbs' events on, filtered to nothing, before any test runs: tests
# record by filters (kv_trace_arm in lib.sh).
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
kv_trace_arm || bail "cannot enable kverbs' trace events"
# What the kernel logs from here on is the tests' business.
dmesg_base=$(dmesg | wc -l)

# With kmemleak (the debug lane's kernel), forget what boot leaked: the
# scan after the tests reports only what they did.
kv_kmemleak_forget

echo "KTAP version 1"
echo "# kernel $(uname -r), $KV_DEV ($KV_TYPE), module $module"
[ -z "$pair" ] || echo "# guest A ($KV_ADDR, MTU $(cat /sys/class/net/kvw0/mtu)) to guest B ($KV_PEER_ADDR, kernel $peer_release)"
boot=$(dmesg | head -n "$dmesg_base" | kv_splats)
if [ -n "$boot" ]; then
	echo "# the kernel reported this before any test ran (not counted against them):"
	echo "$boot" | head -40 | sed 's/^/#   /'
fi
echo "1..$((${#tests[@]} + 1))"
# A bound on each suite, so that one hang cannot cost the others: the
# slowest takes some ten minutes on the debug lane's kernel.
# Its default is kselftest's per-suite timeout, in selftests/settings.
settings_timeout=$(sed -n 's/^timeout=//p' "$here/settings" 2>/dev/null)
suite_limit=${KV_SUITE_LIMIT:-${settings_timeout:-1200}}

# Where the tasks of a suite that overran are: their kernel stacks, and
# every blocked task of the guest (sysrq w), kernel threads included.
kv_show_stuck() {
	local pid task before

	for pid in $(pgrep -f "$1"); do
		echo "# stuck: $pid $(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null)"
		for task in /proc/$pid/task/*; do
			echo "#   task ${task##*/} ($(cat $task/wchan 2>/dev/null)):"
			sed 's/^/#     /' $task/stack 2>/dev/null
		done
	done
	before=$(dmesg | wc -l)
	echo w > /proc/sysrq-trigger 2>/dev/null
	sleep 1
	echo "# blocked tasks (sysrq w):"
	dmesg | tail -n +"$((before + 1))" | head -n 300 | sed 's/^/#   /'
}

# Signal every process in the sessions of the processes matching $2.
kv_kill_sessions() {
	local sig=$1 pid sid mine

	mine=$(ps -o sid= -p $$ | tr -d " ")
	for pid in $(pgrep -f "$2"); do
		sid=$(ps -o sid= -p "$pid" | tr -d " ")
		[ -n "$sid" ] && [ "$sid" != "$mine" ] && pkill "-$sig" -s "$sid"
	done
}

# Run "$@" in a session of its own for at most $1 seconds; past that,
# show where the tasks matching the pattern $2 are and kill their
# sessions (the suite with every server and client it started).
# Returns 124 then.  The suite stays in the foreground: a background job
# would start with SIGINT ignored, and so would everything it runs.
kv_run_bounded() {
	local limit=$1 pattern=$2 watch rc

	shift 2
	rm -f "$KV_TMP.overran"
	(
		sleep "$limit" > /dev/null 2>&1 &
		trap 'kill $! 2>/dev/null; exit 0' TERM
		wait $!
		touch "$KV_TMP.overran"
		kv_show_stuck "$pattern"
		kv_kill_sessions TERM "$pattern"
		sleep 10
		kv_kill_sessions KILL "$pattern"
	) &
	watch=$!
	setsid "$@"
	rc=$?
	kill "$watch" 2>/dev/null
	wait "$watch" 2>/dev/null
	[ -e "$KV_TMP.overran" ] && rc=124
	rm -f "$KV_TMP.overran"
	return $rc
}

# The C suites, built or not: PROGS in selftests/Makefile.  Only one of
# these may be missing for want of a build; any other name is a mistake.
c_suites=
while read -r line; do
	[[ $line == "PROGS :="* ]] && c_suites=" ${line#PROGS :=} "
done < "$here/Makefile"

n=0 failed=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	if [ -x "$bin/$t" ]; then
		cmd=("$bin/$t")
	elif [ -f "$here/$t.sh" ]; then
		cmd=(bash "$here/$t.sh")
	elif [[ $c_suites == *" $t "* ]]; then
		echo "    KTAP version 1"
		echo "    1..0 # SKIP $t is not built (make selftests)"
		echo "ok $n $t # SKIP not built"
		continue
	else
		echo "# no suite $t: neither selftests/$t.sh nor a C program of selftests/Makefile"
		echo "not ok $n $t"
		failed=1
		continue
	fi
	start=$(date +%s)
	before=$(dmesg | wc -l)
	kv_run_bounded "$suite_limit" "$bin/|$here/$t\.sh" "${cmd[@]}" 2>&1 | sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	[ "$rc" = 124 ] && echo "# $t did not finish within $suite_limit s"
	# failnth closes its window in the kernel log itself, unless it died.
	[ "$t" = failnth ] && echo "$KV_FAILNTH_END" > /dev/kmsg
	echo "# $t: $(($(date +%s) - start)) s"
	# The shell suites check this themselves; the C ones do not.
	splat=$(dmesg | tail -n +"$((before + 1))" | kv_splats)
	if [ -n "$splat" ] && [ "$rc" = 0 ]; then
		echo "# the kernel complained during $t:"
		echo "$splat" | head -160 | sed 's/^/#   /'
		rc=1
	fi
	if [ "$rc" = 0 ]; then
		echo "ok $n $t"
	else
		[ "$rc" -gt 128 ] && echo "# $t was killed by signal $((rc - 128))"
		echo "not ok $n $t"
		failed=1
	fi
done

# Leaving cleanly is a test of its own: no test process left behind, every
# object released, no splat.
n=$((n + 1))
echo "    KTAP version 1"
echo "    1..4"
sub=0
left=$(pgrep -d ' ' -f "$bin/")
if [ -z "$left" ]; then
	echo "    ok 1 no_process_left"
else
	for pid in $left; do
		echo "    # left running: $(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null)"
		sed 's/^/    #   /' /proc/$pid/stack 2>/dev/null
	done
	echo "    not ok 1 no_process_left"
	kill -9 $left 2>/dev/null
	sleep 1
	sub=1
fi
# Every kmemleak report fails, kverbs' frames in it or not, but those
# lib.sh's KV_KMEMLEAK_ALLOWED names (kv_kmemleak_check).
kmem_out=$(kv_kmemleak_check)
case $? in
0)	[ -z "$kmem_out" ] || echo "$kmem_out" | sed 's/^/    # /'
	echo "    ok 2 kmemleak" ;;
2)	echo "    ok 2 kmemleak # SKIP no kmemleak in this kernel" ;;
*)	echo "$kmem_out" | sed 's/^/    # /'
	echo "    not ok 2 kmemleak"
	sub=1 ;;
esac
if wait_out=$(timeout 30 rmmod kverbs 2>&1); then
	echo "    ok 3 rmmod"
else
	echo "$wait_out" | sed 's/^/    # /'
	echo "    not ok 3 rmmod"
	sub=1
fi
splat=$(dmesg | tail -n +"$((dmesg_base + 1))" | kv_splats)
if [ -z "$splat" ]; then
	echo "    ok 4 dmesg_clean"
else
	echo "$splat" | head -160 | sed 's/^/    # /'
	echo "    not ok 4 dmesg_clean"
	sub=1
fi
if [ $sub = 0 ]; then echo "ok $n unload"; else echo "not ok $n unload"; failed=1; fi
exit $failed
