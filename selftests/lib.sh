# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# selftests/lib.sh: shared by the kverbs selftest scripts, which run as
# root inside a guest after run.sh has set up rxe0 and loaded the module.
#
# A script defines test_* functions and ends with
#	ktap_main test_one test_two ...
# Each function is one KTAP test case: it passes if it returns 0, fails
# with the diagnostics it printed otherwise, and calls skip "reason" to
# skip; a test that fails after a skip (one called in a subshell) fails.
# So does a test that leaves a process running or the device broken: it
# is repaired for the next test, and what was left is named.  After the
# listed tests, ktap_main adds "dmesg_clean": nothing the kernel logged
# while the script ran may look like a splat.

KV_TOP=${KV_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
KVERBS=${KVERBS:-$KV_TOP/tools/kverbs/kverbs}
KV_ADDR=${KV_ADDR:-10.209.0.1}
KV_TYPE=${KV_TYPE:-rxe}
KV_DEV=${KV_DEV:-${KV_TYPE}0}
# The netdev under $KV_DEV, and every netdev a test may take down that
# must be up again after it: the veth pair, or in a pair of guests
# (tools/vm/pair) the wire's card.
KV_NETDEV=${KV_NETDEV:-kv0}
KV_NETDEVS=${KV_NETDEVS:-kv0 kv1}
KV_TMP=$(mktemp -d /tmp/kverbs-test.XXXXXX)
# Every time limit of the tests is multiplied by this: the debug lane's
# kernel runs some twenty times slower than Debian's.
KV_TIME_SCALE=${KV_TIME_SCALE:-1}

# Lines that mean the kernel is unwell.
# Lockdep's reports start with WARNING: or BUG:, its other findings with
# INFO:; kmemleak logs when a scan finds leaks: its automatic scan is off
# in the debug lane's kernel, and the scans of kv_kmemleak_forget and
# kv_kmemleak_check are bracketed in the log (below), which judge their
# reports themselves.
KV_SPLAT='WARNING:|BUG:|INFO: |Oops|general protection|refcount_t|KASAN|UBSAN|new suspected memory leaks|list_(add|del) corruption|sleeping function called from invalid context|possible circular locking|blocked for more than|Call Trace'

# Allocation failures that selftests/failnth injects on purpose are
# logged by the allocators (warn_alloc: "vmalloc error", "page allocation
# failure") with a stack trace.  failnth brackets its run with these
# markers in the kernel log; between them such reports are expected.
KV_FAILNTH_BEGIN='kverbs-selftests: fail-nth injection begins'
KV_FAILNTH_END='kverbs-selftests: fail-nth injection ends'
KV_KMEMLEAK_BEGIN='kverbs-selftests: kmemleak scan begins'
KV_KMEMLEAK_END='kverbs-selftests: kmemleak scan ends'

# A lockdep report: its header names two locks, and the stacks that
# explain it (where each lock took the usage that conflicts) come some
# 20 to 100 lines later, before its own call trace.
KV_LOCKDEP='WARNING: .*(lock order detected|locking dependency detected|inconsistent lock state|lock inversion dependency|recursive locking detected)'

# kv_splats: read a kernel log on stdin, print every splat with the 20
# lines after it, a lockdep report with 150.
kv_splats() {
	awk -v begin="$KV_FAILNTH_BEGIN" -v end="$KV_FAILNTH_END" -v splat="$KV_SPLAT" \
	    -v kbegin="$KV_KMEMLEAK_BEGIN" -v kend="$KV_KMEMLEAK_END" -v lockdep="$KV_LOCKDEP" '
		index($0, begin) { inject = 1; next }
		index($0, end) { inject = 0; next }
		index($0, kbegin) { scan = 1; next }
		index($0, kend) { scan = 0; next }
		scan && /new suspected memory leaks/ { next }
		inject && /page allocation failure|vmalloc error/ { report = NR; next }
		# The stack trace of that report: "Call Trace:" a few lines on.
		inject && /Call Trace/ && report && NR - report <= 8 { next }
		$0 ~ lockdep { ctx = 151 }
		$0 ~ splat && ctx < 21 { ctx = 21 }
		ctx > 0 { print; ctx-- }'
}

# kmemleak, in the debug lane's kernel: kv_kmemleak_forget at the start
# of a run, so that what boot and the setup leaked is not counted;
# kv_kmemleak_check at its end, before the module goes (a report names
# kverbs by its frames, "func+0x../0x.. [kverbs]", which need the module
# loaded).  Every report fails the run, not only those with a frame of
# kverbs: what ib_core or rdma_cm allocate for kverbs' connections (a
# listener's child cm_id, a CM message) has none.  Used by run.sh for its
# own guest and, through the agent, for B of a pair (hosts-lib.sh's
# test_peer_kmemleak).
KV_KMEMLEAK=/sys/kernel/debug/kmemleak

# The reports that do not fail a run, three words an entry: a name, an
# extended regular expression that the report's text (its header and
# backtrace) matches, and why it is no leak of the tests', or one they
# cannot help.  An entry names one report that was seen and understood;
# kv_kmemleak_check prints each report it lets through, with its entry.
# None so far.
KV_KMEMLEAK_ALLOWED=()

# kv_kmemleak_scan: two scans, 6 s apart, bracketed in the kernel log
# (kv_splats leaves their "new suspected memory leaks" to the caller).
# kmemleak reports an object unreferenced in a scan once its contents
# did not change since the scan before and it is older than 5 s at the
# scan's start: the second reports every object that was unreferenced
# before the first.  Returns 1 if kmemleak would not scan.
kv_kmemleak_scan() {
	local rc=0
	echo "$KV_KMEMLEAK_BEGIN" > /dev/kmsg
	{ echo scan > "$KV_KMEMLEAK" && sleep 6 && echo scan > "$KV_KMEMLEAK"; } 2>/dev/null || rc=1
	echo "$KV_KMEMLEAK_END" > /dev/kmsg
	return $rc
}

kv_kmemleak_forget() {
	[ -w "$KV_KMEMLEAK" ] || return 0
	kv_kmemleak_scan || return 0
	# Marks what the scans reported as seen: it is not reported again.
	echo clear > "$KV_KMEMLEAK"
}

# kv_kmemleak_reports < KMEMLEAK: print the reports that
# KV_KMEMLEAK_ALLOWED does not allow, whole, and a line for each it
# does; returns 1 if one is not allowed.
kv_kmemleak_reports() {
	local names='' res='' whys='' i

	for ((i = 0; i + 2 < ${#KV_KMEMLEAK_ALLOWED[@]}; i += 3)); do
		names+=${KV_KMEMLEAK_ALLOWED[i]}$'\n'
		res+=${KV_KMEMLEAK_ALLOWED[i + 1]}$'\n'
		whys+=${KV_KMEMLEAK_ALLOWED[i + 2]}$'\n'
	done
	awk -v names="$names" -v res="$res" -v whys="$whys" '
		BEGIN {
			k = split(names, name, "\n") - 1
			split(res, re, "\n")
			split(whys, why, "\n")
		}
		function judge(	i) {
			if (head == "")
				return
			for (i = 1; i <= k; i++)
				if (b ~ re[i]) {
					printf "allowed (%s: %s): %s\n", name[i], why[i], head
					return
				}
			bad++
			printf "%s", b
		}
		/^unreferenced object/ { judge(); head = $0; b = "" }
		head != "" { b = b $0 "\n" }
		END { judge(); exit bad > 0 }'
}

# kv_kmemleak_check: scan, and judge every report (kv_kmemleak_reports).
# Prints the reports, at most 120 lines; returns 0 if none fails the
# run, 1 if one does, 2 without kmemleak, 3 if kmemleak would not scan.
kv_kmemleak_check() {
	local out rc

	[ -w "$KV_KMEMLEAK" ] || return 2
	if ! kv_kmemleak_scan; then
		echo "kmemleak would not scan (it disables itself on an internal error)"
		dmesg | grep kmemleak | tail -5
		return 3
	fi
	out=$(kv_kmemleak_reports < "$KV_KMEMLEAK")
	rc=$?
	[ -z "$out" ] || echo "$out" | head -120
	return $rc
}

# trace_need: tracefs mounted, with kverbs' events, or the test skips.
trace_need() {
	local tr=/sys/kernel/tracing

	[ -d $tr/events ] || mount -t tracefs nodev $tr 2>/dev/null
	[ -d $tr/events/kverbs ] || skip "no tracefs with kverbs' events"
}

# kverbs' events stay enabled from the module's load on, each filtered
# to nothing (KV_TRACE_NONE) until a test asks for it: tests record by
# changing filters and tracing_on, which change no code.  Enabling an
# event patches the kernel's text, and under TCG that races with another
# vCPU running through the tracepoint (Documentation/tracing.rst): a test
# that enabled one while a ping ran hung its guest in the patching.
KV_TRACE_NONE='common_pid < 0'

# kv_trace_arm: every kverbs event enabled and filtered to nothing, no
# recording, where tracefs is mounted and has them.  run.sh mounts it
# and calls this once the module is loaded, and ktap_main
# after each test (a module loaded again has its events off, and a test
# may have turned events off), both while no test runs.  Builtins only,
# and a file written only where it differs: ktap_main calls this after
# every test, and a process per event (a command substitution) cost
# two seconds a test under TCG, far more on the debug lane's kernel.
kv_trace_arm() {
	local tr=/sys/kernel/tracing e v

	[ -d $tr/events/kverbs ] || return 0
	echo 0 > $tr/tracing_on || return
	for e in $tr/events/kverbs/kverbs_*; do
		v=
		read -r v < "$e/filter" || return
		[ "$v" = "$KV_TRACE_NONE" ] || echo "$KV_TRACE_NONE" > "$e/filter" || return
		v=
		read -r v < "$e/enable" || return
		[ "$v" = 1 ] || echo 1 > "$e/enable" || return
	done
	echo 1 > $tr/tracing_on
}

# trace_record FILTER EVENT...: an empty trace, recording these kverbs
# events, those FILTER lets through (0: all).
trace_record() {
	local tr=/sys/kernel/tracing filter=$1 e v
	shift
	echo 0 >$tr/tracing_on && echo >$tr/trace || return
	for e in "$@"; do
		v=
		read -r v < $tr/events/kverbs/"$e"/enable
		[ "$v" = 1 ] ||
			{ echo "kverbs event $e is not enabled (kv_trace_arm)"; return 1; }
		echo "$filter" >$tr/events/kverbs/"$e"/filter || return
	done
	echo 1 >$tr/tracing_on
}

# trace_start EVENT...: an empty trace, recording these kverbs events.
trace_start() { trace_record 0 "$@"; }

# trace_stop EVENT...: stop recording them; the trace stays to be read.
trace_stop() {
	local tr=/sys/kernel/tracing e
	echo 0 >$tr/tracing_on
	for e in "$@"; do
		echo "$KV_TRACE_NONE" >$tr/events/kverbs/"$e"/filter
	done
}

# kv_trace_wait SECONDS COUNT EVENT [FILTER]: wait until the kernel has
# logged COUNT kverbs EVENTs that FILTER (a trace event filter) lets
# through, from now on: what a test waits for where no output shows a
# session's progress, e.g. a client's first ping iteration
# (kverbs_ping_iter 'server == 0') or a bandwidth test's first data
# completion (kverbs_wc 'step == 11 && status == 0', an RDMA WRITE that
# succeeded: the flushed ones of a test that failed are traced too).
# The event records nothing again when it returns.  Skips the test
# without tracefs.
kv_trace_wait() {
	local ev=$3 rc
	trace_need
	trace_record "${4:-0}" "$ev" || return
	wait_for "$1" kv_trace_entries "$2"
	rc=$?
	trace_stop "$ev"
	return $rc
}

# kv_trace_entries COUNT: the trace buffer holds at least COUNT events.
kv_trace_entries() {
	local f line n=0
	for f in /sys/kernel/tracing/per_cpu/cpu*/stats; do
		while IFS= read -r line; do
			[[ $line == "entries: "* ]] && n=$((n + ${line#entries: }))
		done < "$f"
	done
	((n >= $1))
}

fail() {
	echo "$*"
	return 1
}

skip() {
	echo "$*" > "$KV_TMP/skip"
	exit 0
}

# kv_sleep SECONDS: sleep without starting a process.  On the debug
# lane's kernel every process started costs more than a second of a
# vCPU, and the waits below poll ten times a second: a read
# with a time limit from a FIFO that nobody writes to sleeps as well.
# ktap_main opens that FIFO (kv_helpers_start); elsewhere this is sleep.
kv_sleep() {
	if [ -z "${KV_SLEEP_FD:-}" ]; then
		sleep "$1"
		return 0
	fi
	read -r -t "$1" -u "$KV_SLEEP_FD" _
	return 0
}

# kv_alive PID...: is every PID still running?  A child that has exited
# but that the shell has not reaped yet is a zombie, which kill -0 still
# finds; it has ended as far as a test is concerned.
kv_alive() {
	local pid stat
	for pid; do
		{ stat=$(<"/proc/$pid/stat"); } 2>/dev/null || return 1
		stat=${stat##*) }
		[ "${stat%% *}" != Z ] || return 1
	done
}

# kv_stopped PID: is PID stopped by a signal (SIGSTOP)?
kv_stopped() {
	local stat
	{ stat=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
	stat=${stat##*) }
	[ "${stat%% *}" = T ]
}

# kv_ended PID: has PID ended (exited, reaped or not)?
kv_ended() {
	! kv_alive "$1"
}

# Poll for up to $1 seconds until the rest of the arguments succeed.
wait_for() {
	local limit=$(($1 * KV_TIME_SCALE)) i
	shift
	for ((i = 0; i < limit * 10; i++)); do
		"$@" && return 0
		kv_sleep 0.1
	done
	return 1
}

# Is a kverbs listener bound to ADDR:PORT?  ADDR 0.0.0.0 stands for any
# wildcard, IPv4's or IPv6's '::' (where the perf servers listen by
# default, for both).  A third argument names another program (rping)
# that owns the listener.
kv_listening() {
	local line addr comm=${3:-kverbs}
	local addrs=$1

	[ "$1" = 0.0.0.0 ] && addrs="0.0.0.0 ::"
	# One process (rdma), the matching in the shell.
	while IFS= read -r line; do
		[[ $line == *"state LISTEN "* ]] || continue
		for addr in $addrs; do
			[[ "$line " == *"comm $comm src-addr $addr:$2 "* ||
			   "$line " == *"comm [$comm] src-addr $addr:$2 "* ]] && return 0
		done
	done < <(rdma res show cm_id 2>/dev/null)
	return 1
}

# Only listeners may be left: every connection kverbs made is gone.
kv_no_connections() {
	! rdma res show cm_id 2>/dev/null | grep 'comm \[kverbs\]' | grep -qv 'state LISTEN'
}

# kv_connected PORT...: how many kverbs cm_ids are connected, from or to
# one of these ports (a session has two: its client's and its server's).
# One process (rdma), the matching in the shell.
kv_connected() {
	local line port n=0

	while IFS= read -r line; do
		[[ $line == *" state CONNECT "* ]] || continue
		[[ $line == *" comm kverbs "* || $line == *" comm [kverbs] "* ]] || continue
		for port; do
			if [[ "$line " == *":$port "* ]]; then
				n=$((n + 1))
				break
			fi
		done
	done < <(rdma res show cm_id 2>/dev/null)
	echo $n
}

# kv_any_connected PORT...: is a kverbs cm_id connected, from or to one
# of these ports (kv_connected)?
kv_any_connected() {
	(($(kv_connected "$@") > 0))
}

# kv_overlap COUNT "PID..." PORT...: wait until COUNT cm_ids of the
# sessions on these ports are in rdma_cm's CONNECT state at one moment
# (kv_connected) while the clients PID... run.  rdma_cm enters it before
# a connection is up: a sign that the sessions are starting, not proof
# that they ran at once (their reports give that: kv_at_once).  Fails if
# a client ends first, or if that never happens within 300 s (a hang
# guard, not a measure).  For sessions that do not end by themselves.
kv_overlap() {
	local want=$1 pids=$2 seen most=0 start=$SECONDS
	shift 2
	while ((SECONDS - start < 300 * KV_TIME_SCALE)); do
		seen=$(kv_connected "$@")
		((seen > most)) && most=$seen
		((seen >= want)) && return 0
		# shellcheck disable=SC2086
		if ! kv_alive $pids; then
			echo "a client ended before $want ends of the sessions were connected at once (at most $most were)"
			return 1
		fi
		kv_sleep 0.1
	done
	echo "never $want ends of the sessions connected at once in $((SECONDS - start)) s (at most $most)"
	return 1
}

# kv_at_once FILE... [-- FILE...]: the sessions reported in the first
# FILEs ran their tests at one instant, by their own reports (--json:
# one document, or one per line), on this host's clock.  A perf report
# says when its measured phase ran (test_start_ns to test_end_ns); of
# another, the test's elapsed_ns lies somewhere within its call,
# start_ns to end_ns, so it certainly ran from end_ns - elapsed_ns to
# start_ns + elapsed_ns, which a slow setup or teardown can leave
# empty.  These must all share an instant, and every report after -- (a
# server's, whose call began by waiting for its client) must have been
# in its call then.  Sessions run one after another never share one.
kv_at_once() {
	kv_python "$@" <<'PY'
import json, sys
args = sys.argv[1:]
split = args.index("--") if "--" in args else len(args)
def reports(paths):
    out = []
    for p in paths:
        text = open(p).read()
        try:
            docs = [json.loads(text)]
        except ValueError:
            docs = [json.loads(l) for l in text.splitlines() if l.strip()]
        for d in docs:
            for r in d if isinstance(d, list) else [d]:
                out.append((p, r))
    return out
def certain(r):
    if "test_end_ns" in r:
        return r["test_start_ns"], r["test_end_ns"]
    return r["end_ns"] - r["elapsed_ns"], r["start_ns"] + r["elapsed_ns"]
ran, calls = reports(args[:split]), reports(args[split + 1:])
if not ran:
    sys.exit("kv_at_once: no session's report")
lo = max(certain(r)[0] for _, r in ran)
hi = min(certain(r)[1] for _, r in ran)
lo = max([lo] + [r["start_ns"] for _, r in calls])
hi = min([hi] + [r["end_ns"] for _, r in calls])
if lo <= hi:
    sys.exit(0)
t0 = min(r["start_ns"] for _, r in ran + calls)
ms = lambda ns: f"{(ns - t0) / 1e6:.1f}"
print(f"no instant at which all {len(ran)} tests ran"
      + (f" and all {len(calls)} calls were in progress" if calls else "")
      + " (ms from the first call; test: when it certainly ran, within its call):")
for p, r in ran:
    a, b = certain(r)
    print(f"  {p}: call {ms(r['start_ns'])}..{ms(r['end_ns'])}, test {r['elapsed_ns'] / 1e6:.1f} ms:"
          f" {'ran' if 'test_end_ns' in r else 'certainly'} {ms(a)}..{ms(b)}")
for p, r in calls:
    print(f"  {p}: call {ms(r['start_ns'])}..{ms(r['end_ns'])}")
sys.exit(1)
PY
}

# kv_interrupted_pair NAME PID SERVER: after SIGINT, the validated ping
# client NAME (PID) ends with what it did, and its server SERVER, which
# saw it leave cleanly, served as many iterations: the one in flight may
# have counted on the server's side only.
kv_interrupted_pair() {
	local rc
	wait_for 30 kv_ended "$2" || fail "$1 alive 30 s after SIGINT: $(kv_stack "$2")" || return
	wait "$2"
	rc=$?
	[ $rc = 130 ] || fail "$1 exited $rc after SIGINT, expected 130: $(cat "$KV_TMP/$1.err")" || return
	kv_wait "$3" 30 || fail "server $3: $(cat "$KV_TMP/$3.err" "$KV_TMP/$3.json")" || return
	json_check "$KV_TMP/$1.json" 'd["status"] == "interrupted"' 'd["iterations"] > 0' \
		'd["error"]["name"] == "EINTR"' 'd["bytes_read"] == d["iterations"] * d["size"]' \
		-- "$KV_TMP/$3.json" 'd["status"] == "ok"' 'd["clients"] == 1' \
		'd["clients_failed"] == 0' || return
	kv_python "$KV_TMP/$1.json" "$KV_TMP/$3.json" <<'PY'
import json, sys
c, s = (json.load(open(p))["iterations"] for p in sys.argv[1:])
assert c <= s <= c + 1, f"client {c} iterations, server {s}"
PY
}

# kv_server NAME PORT [ping options]: start a server on $KV_ADDR in the
# background, with --json output in $KV_TMP/NAME.json and stderr in
# $KV_TMP/NAME.err, and wait until it listens.  Sets kv_pid_NAME.  The
# array KV_RUN_AS, if set, is the command that runs it (another user's).
kv_server() {
	local name=$1 port=$2
	shift 2
	"${KV_RUN_AS[@]}" "$KVERBS" ping -s -a "$KV_ADDR" -p "$port" --json "$@" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err" &
	eval "kv_pid_$name=$!"
	if ! wait_for 10 kv_listening "$KV_ADDR" "$port"; then
		echo "server $name did not start listening on $KV_ADDR:$port"
		cat "$KV_TMP/$name.err"
		return 1
	fi
}

# kv_client NAME PORT [ping options]: run a client against $KV_ADDR:PORT
# with a time limit, output as for kv_server; returns its exit code.
# The limit only guards against a hang: KV_CLIENT_LIMIT seconds (120),
# times KV_TIME_SCALE.
kv_client() {
	local name=$1 port=$2
	shift 2
	timeout -k 5 $((${KV_CLIENT_LIMIT:-120} * KV_TIME_SCALE)) "$KVERBS" ping -c -a "$KV_ADDR" -p "$port" --json "$@" \
		>"$KV_TMP/$name.json" 2>"$KV_TMP/$name.err"
}

# The UD QPs in RTS in rdma's view, their numbers comma-separated:
# kverbs' (comm [kverbs], or [rdma_cm] for those rdma_create_qp() made).
kv_ud_qpns() {
	rdma res show qp 2>/dev/null | awk '/ type UD state RTS / {
		for (i = 1; i < NF; i++) if ($i == "lqpn") printf "%s%s", n++ ? "," : "", $(i + 1) }'
}

# The index of the RoCE v2 GID of $KV_ADDR on port 1 of $KV_DEV.
kv_gid_index() {
	local f want i
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${KV_ADDR//./ })
	for f in /sys/class/infiniband/"$KV_DEV"/ports/1/gids/*; do
		i=${f##*/}
		[ "$(cat "$f" 2>/dev/null)" = "$want" ] &&
			[ "$(cat "${f%/gids/*}/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
			echo "$i" && return
	done
	return 1
}

# kv_ud_forge [ud_forge options]: once a test's two UD QPs are in RTS
# (at most 30 s; kverbs posts their receives before RTR), datagrams
# from a stranger's QP to both (selftests/ud_forge,
# with the options given), its output in $KV_TMP/forge.out.  Sets
# kv_forge_start, the second the stranger started.  Fails the test
# with the reason if there are no two QPs or the forger fails.
kv_ud_forge() {
	local gid
	gid=$(kv_gid_index) || fail "no RoCE v2 GID of $KV_ADDR on $KV_DEV" || return
	wait_for 30 eval '[ "$(kv_ud_qpns | tr , "\n" | grep -c .)" = 2 ]' ||
		fail "no two UD QPs of kverbs in RTS: $(rdma res show qp)" || return
	# shellcheck disable=SC2034 # kv_forge_start: read by the suites after kv_ud_forge
	kv_forge_start=$SECONDS
	"$(dirname "$KVERBS")/ud_forge" -d "$KV_DEV" -g "$gid" -q "$(kv_ud_qpns)" "$@" \
		> "$KV_TMP/forge.out" 2>&1 || fail "ud_forge: $(cat "$KV_TMP/forge.out")"
}

# kv_wait NAME SECONDS: wait for background process NAME, at most SECONDS;
# returns its exit code, or 124 after killing it if it took too long.
# One that SIGKILL does not end either is left, with where it is stuck.
kv_wait() {
	local pid
	pid=$(eval echo "\$kv_pid_$1")
	if ! wait_for "$2" kv_ended "$pid"; then
		# Where it waits, before the kill ends the wait.
		echo "$1 (pid $pid) still running after $2 s, in:"
		kv_stack "$pid"
		kill -9 "$pid" 2>/dev/null
		if ! wait_for 10 kv_ended "$pid"; then
			echo "$1 (pid $pid) still running after $2 s and SIGKILL:"
			kv_stack "$pid"
			return 124
		fi
		wait "$pid" 2>/dev/null
		echo "$1 (pid $pid) still running after $2 s: killed"
		return 124
	fi
	wait "$pid"
}

# kv_stack PID: where each thread of PID is, for a test that gives up
# on a process that should have ended: its state, the system call it is
# in (or "running" in user space), and its kernel stack, three times a
# second apart.  A running task shows no kernel stack.
kv_stack() {
	local task i state
	for i in 1 2 3; do
		for task in /proc/"$1"/task/*; do
			state=$(grep -m1 '^State:' "$task/status")
			echo "task ${task##*/}: ${state#State:	}, syscall $(<"$task/syscall"), wchan $(<"$task/wchan")"
			echo "$(<"$task/stack")"
		done 2>/dev/null
		[ $i = 3 ] || kv_sleep 1
	done
}

# kv_python ARG... <<'PY' SCRIPT PY: run SCRIPT as "python3 - ARG..."
# would, in the suite's own interpreter (selftests/kvpy.py, which
# kv_helpers_start starts): on the debug lane's kernel starting python
# takes seconds.  Outside ktap_main, or should that interpreter be gone, in a
# python3 of its own.
kv_python() {
	local script out status

	IFS= read -r -d '' script
	if [ -z "${KV_PY_PID:-}" ] || ! kv_alive "$KV_PY_PID"; then
		python3 - "$@" <<< "$script"
		return
	fi
	printf '%s\0' "$#" "$script" "$@" >&"$KV_PY_REQ"
	if ! IFS= read -r -d '' -t $((60 * KV_TIME_SCALE)) out <&"$KV_PY_REP" ||
	   ! read -r -t 10 status <&"$KV_PY_REP"; then
		echo "kv_python: no answer from selftests/kvpy.py (pid $KV_PY_PID)"
		return 1
	fi
	printf '%s' "$out"
	return "$status"
}

# kv_helpers_start: in a suite's own shell, before its tests: the FIFO
# kv_sleep reads and the interpreter kv_python talks to.  Reads and
# writes on each: no open waits for the other side.
kv_helpers_start() {
	mkfifo "$KV_TMP/sleep" "$KV_TMP/py.req" "$KV_TMP/py.rep" || return 0
	exec {KV_SLEEP_FD}<>"$KV_TMP/sleep"
	python3 "$KV_TOP/selftests/kvpy.py" "$KV_TMP/py.req" "$KV_TMP/py.rep" </dev/null &
	KV_PY_PID=$!
	exec {KV_PY_REQ}<>"$KV_TMP/py.req" {KV_PY_REP}<>"$KV_TMP/py.rep"
}

kv_helpers_stop() {
	[ -n "${KV_PY_PID:-}" ] || return 0
	kill "$KV_PY_PID" 2>/dev/null
	wait "$KV_PY_PID" 2>/dev/null
	exec {KV_PY_REQ}>&- {KV_PY_REP}>&- {KV_SLEEP_FD}>&-
	KV_PY_PID='' KV_SLEEP_FD=''
}

# check_lines FILE EXPR...: FILE holds one JSON document per line; the
# Python expressions hold over the list of them, L.
check_lines() {
	kv_python "$@" <<'PY'
import json, sys
path, exprs = sys.argv[1], sys.argv[2:]
try:
    L = [json.loads(line) for line in open(path) if line.strip()]
except Exception as e:
    print(f"{path}: not JSON lines: {e}")
    print(open(path).read()[:2000])
    sys.exit(1)
for e in exprs:
    if not eval(e):
        print(f"{path}: {e} does not hold")
        print(json.dumps(L)[:3000])
        sys.exit(1)
PY
}

# json_check FILE EXPR... [-- FILE EXPR...]: every Python expression
# holds for d, the document in the FILE before it; prints the first that
# does not, and the document.
json_check() {
	kv_python "$@" <<'PY'
import json, sys
args = sys.argv[1:]
while args:
    path, args = args[0], args[1:]
    exprs = args[:args.index("--")] if "--" in args else args
    args = args[len(exprs) + 1:]
    try:
        d = json.load(open(path))
    except Exception as e:
        print(f"{path}: not valid JSON: {e}")
        print(open(path).read()[:2000])
        sys.exit(1)
    for e in exprs:
        if not eval(e, {}, {"d": d}):
            print(f"{path}: {e} does not hold")
            print(json.dumps(d)[:2000])
            sys.exit(1)
PY
}

# kv_ping_pair PORT CLIENT_OPTS...: ping through a fresh server on PORT
# (validating both ends) and check both reports.  The client options
# must include -C.
kv_ping_pair() {
	local port=$1 count rc
	shift
	count=" $* "
	count=${count#* -C }
	count=${count%% *}
	kv_server srv "$port" -V || return 1
	kv_client cli "$port" -V "$@"
	rc=$?
	if ! kv_wait srv 30; then
		echo "server failed:"
		cat "$KV_TMP/srv.err" "$KV_TMP/srv.json"
		echo "the client exited $rc:"
		cat "$KV_TMP/cli.err" "$KV_TMP/cli.json"
		return 1
	fi
	[ $rc = 0 ] || { echo "client exited $rc:"; cat "$KV_TMP/cli.err" "$KV_TMP/cli.json"; return 1; }
	json_check "$KV_TMP/cli.json" 'd["status"] == "ok"' \
		"d['iterations'] == $count" 'd["bytes_read"] == d["iterations"] * d["size"]' \
		'd["error"] is None' \
		-- "$KV_TMP/srv.json" 'd["status"] == "ok"' "d['iterations'] == $count" \
		'd["clients"] == 1' 'd["clients_failed"] == 0'
}

# Is port 1 of $KV_DEV ACTIVE?  (sysfs and a builtin: no process.)
kv_dev_active() {
	local state=

	read -r state 2>/dev/null < "/sys/class/infiniband/$KV_DEV/ports/1/state"
	[ "$state" = "4: ACTIVE" ]
}

# Bring up $KV_DEV again after a test removed it.  (kv_rxe_restore does
# it after every test; a test calls it to prove the device comes back.)
kv_rxe_readd() {
	[ -e "/sys/class/infiniband/$KV_DEV" ] ||
		rdma link add "$KV_DEV" type "$KV_TYPE" netdev "$KV_NETDEV"
	wait_for 10 kv_dev_active
}

# kv_link_up: bring kv0 up again after a test took it down, with what
# going down took from it (its IPv6 address: keep_addr_on_down is off),
# and wait until $KV_DEV's port is active.  A test puts back what it
# broke: ktap_main fails one that leaves it to kv_rxe_restore.
kv_link_up() {
	ip link set kv0 up || return 1
	if [ -n "${KV_ADDR6:-}" ] && ! kv_has_addr6; then
		ip -6 addr add "$KV_ADDR6/64" dev "$KV_NETDEV" nodad || return 1
	fi
	wait_for 10 eval "rdma link show $KV_DEV/1 | grep -q ACTIVE"
}

# kv_has_addr6: does $KV_NETDEV still have $KV_ADDR6?  A link that went
# down lost it (keep_addr_on_down is off).  /proc/net/if_inet6 holds it
# as 32 hex digits, KV_ADDR6_HEX (fd00:209::1's by default).
kv_has_addr6() {
	local addr rest

	while read -r addr rest; do
		[[ $addr == "${KV_ADDR6_HEX:-fd000209000000000000000000000001}" &&
		   $rest == *" $KV_NETDEV" ]] && return 0
	done < /proc/net/if_inet6
	return 1
}

# kv_rxe_restore RC CARRIER_CHANGES: after each test, with its exit code
# and the carrier's count before it, whatever the test did and wherever
# it returned: the module loaded, both ends of the veth up, kv0's IPv6
# (or the wire's card up, with its address)
# address back, and $KV_DEV there and usable.  A link flap leaves rxe's
# GSI QP in the error state (see faults.sh), and a failing test may not
# get to clean up; the next must not inherit that.  Only then is the QP
# looked at: 'rdma' is a process, and on the debug lane's kernel a dear
# one.  Says what it repaired; returns 0 if nothing needed it, 2 if it
# repaired something (the test left it so: ktap_main fails the test), 1
# if it could not.
kv_rxe_restore() {
	local flags=0 carrier='' nd repaired=0

	if [ -n "${KV_MODULE:-}" ] && [ ! -d /sys/module/kverbs ]; then
		echo "kverbs was not loaded: loading it again"
		repaired=2
		insmod "$KV_MODULE" || return 1
	fi
	for nd in $KV_NETDEVS; do
		flags=0
		read -r flags 2>/dev/null < "/sys/class/net/$nd/flags"
		# IFF_UP
		if ! (( flags & 1 )); then
			echo "$nd was down: bringing it up"
			repaired=2
			ip link set "$nd" up || return 1
		fi
	done
	if [ -n "${KV_ADDR6:-}" ] && ! kv_has_addr6; then
		echo "$KV_NETDEV lost $KV_ADDR6: adding it again"
		repaired=2
		ip -6 addr add "$KV_ADDR6/64" dev "$KV_NETDEV" nodad || return 1
	fi
	read -r carrier 2>/dev/null < "/sys/class/net/$KV_NETDEV/carrier_changes"
	if [ "$KV_TYPE" = rxe ] &&
	   { [ "$1" != 0 ] || [ "$2" != "$carrier" ]; } &&
	   rdma res show qp 2>/dev/null | grep -q "link $KV_DEV/.* type GSI state ERR"; then
		echo "$KV_DEV's GSI QP is in the error state: re-creating $KV_DEV"
		repaired=2
		rdma link del "$KV_DEV"
	fi
	if [ ! -e "/sys/class/infiniband/$KV_DEV" ]; then
		echo "$KV_DEV was gone: adding it again"
		repaired=2
	fi
	kv_rxe_readd >/dev/null || { echo "cannot bring $KV_DEV back"; return 1; }
	return $repaired
}

# kv_leftovers: the pids of what a test may have left running: this run's
# copy of the tool, rdma-core's peers (rping, udaddy), and the selftests'
# own peers and helpers (hostile, perf_hello, perf_peer, ping_peer, ud_forge,
# stall), found by their argv[0].
# Builtins only: on the debug lane's kernel every process started costs
# seconds, and pgrep, which reads all of /proc, several.
kv_leftovers() {
	local d argv0

	for d in /proc/[0-9]*; do
		argv0=
		read -r -d '' argv0 2>/dev/null < "$d/cmdline"
		case "$argv0" in
		"$KVERBS"|rping|*/rping|udaddy|*/udaddy|hostile|*/hostile|*/perf_hello|\
		*/perf_peer|*/ping_peer|*/ud_forge|*/stall) echo "${d#/proc/}" ;;
		esac
	done
}

# Kill what a test left running, and wait until it is gone.  Says what
# was left; returns 0 if nothing was, 2 if it was and is gone (the test
# left it: ktap_main fails the test), 1 if it would not go.
kv_kill_leftovers() {
	local pids pid i left=0

	for ((i = 0; i < 100 * KV_TIME_SCALE; i++)); do
		pids=$(kv_leftovers)
		[ -z "$pids" ] && return $left
		if [ $left = 0 ]; then
			for pid in $pids; do
				echo "left running: pid $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)"
			done
			left=2
		fi
		# shellcheck disable=SC2086
		kill -9 $pids 2>/dev/null
		kv_sleep 0.1
	done
	echo "still running after SIGKILL: $pids"
	for pid in $pids; do
		echo "pid $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)"
		kv_stack "$pid"
	done
	return 1
}

# kv_worst CODE...: the worst of the cleanup codes of kv_kill_leftovers
# and kv_rxe_restore: 1 (or any other failure) if one is, else 2 (left
# something, repaired) if one is, else 0, returned.
kv_worst() {
	local c w=0
	for c; do
		case $c in
		0) ;;
		2) [ $w != 0 ] || w=2 ;;
		*) w=1 ;;
		esac
	done
	return $w
}

ktap_main() {
	local n=0 failed=0 t out rc dmesg_start start carrier unknown=() cleanup crc
	local only=() want=() t2 found suite=${0##*/}
	# KV_ONLY="name ...": run only these tests (names without test_).
	# A name is for every suite of the run, or for one if it says which
	# (SUITE:name, e.g. hosts_faults:wire_down_on_a_mid_write_bw); one
	# that is no test of this suite is a failure of its own: a typo must
	# not pass by running nothing.  A suite with no name meant for it
	# runs every test.
	# KV_MATRIX=0: each path once.  A suite's kv_matrix names (without
	# test_) its combinations, the tests that take a path another one
	# takes already, with another size, count, test, direction or
	# option; they are left out (make check's 6.1 and newest guests,
	# Documentation/testing.rst), unless KV_ONLY names them.
	suite=${suite%.sh}
	for t2 in ${KV_ONLY:-}; do
		case "$t2" in
		"$suite":*) only+=("${t2#*:}") ;;
		*:*) ;;
		*) only+=("$t2") ;;
		esac
	done
	if [ ${#only[@]} -gt 0 ]; then
		for t2 in "${only[@]}"; do
			found=0
			for t in "$@"; do
				[ "${t#test_}" = "$t2" ] && found=1
			done
			[ $found = 1 ] || unknown+=("$t2")
		done
		for t in "$@"; do
			for t2 in "${only[@]}"; do
				[ "${t#test_}" = "$t2" ] && want+=("$t")
			done
		done
		set -- "${want[@]}"
	elif [ "${KV_MATRIX:-1}" = 0 ]; then
		t2=" ${kv_matrix:-} "
		t2=${t2//[[:space:]]/ }
		for t in "$@"; do
			[[ $t2 == *" ${t#test_} "* ]] || want+=("$t")
		done
		set -- "${want[@]}"
	fi
	dmesg_start=$(dmesg | wc -l)
	kv_helpers_start
	echo "KTAP version 1"
	echo "1..$(($# + ${#unknown[@]} + 1))"
	for t in "${unknown[@]}"; do
		n=$((n + 1))
		failed=1
		echo "# KV_ONLY names $t, which is no test case of ${0##*/}"
		echo "not ok $n $t"
	done
	for t in "$@"; do
		n=$((n + 1))
		rm -f "$KV_TMP/skip"
		start=$SECONDS
		carrier=
		read -r carrier 2>/dev/null < "/sys/class/net/$KV_NETDEV/carrier_changes"
		# A suite may prepare each test, e.g. give it ports of its own.
		export KV_TEST_NUM=$n
		out=$( ( set -o pipefail; ! declare -F kv_before_test >/dev/null ||
			kv_before_test; "$t" ) 2>&1 )
		rc=$?
		# Where the time goes, for the slow ones.
		[ $((SECONDS - start)) -lt 10 ] || echo "# ${t#test_}: $((SECONDS - start)) s"
		# Nothing a test started may outlive it.  It ran in a subshell,
		# so its background processes are not our jobs: find them.
		# Then what it broke is repaired, on every path it took: the
		# next test must not fail for it.  A test that left a process
		# or a broken device fails, with what it left, so that a
		# cascade starts at it; so does one after which that cannot
		# be repaired.
		cleanup=$( { kv_kill_leftovers; crc=$?
			    # A suite's own: what it left elsewhere (a peer).
			    if declare -F kv_after_test >/dev/null; then
				    kv_after_test "$rc"
				    kv_worst $crc $?; crc=$?
			    fi
			    kv_rxe_restore "$rc" "$carrier"
			    kv_worst $crc $?; } 2>&1 )
		crc=$?
		[ -z "$cleanup" ] || echo "$cleanup" | sed 's/^/# after the test: /'
		# The module may have been loaded again, or a test turned
		# events off: on again now, while no test runs.
		kv_trace_arm > /dev/null 2>&1
		case $crc in
		0) ;;
		2) rc=1
		   out=${out:+$out$'\n'}"it left what is above behind (repaired for the next test)" ;;
		*) rc=1
		   out=${out:+$out$'\n'}"what it left could not be cleaned up (above)" ;;
		esac
		# A failure wins over a skip: a test may call skip in a
		# subshell of its own, which then goes on and fails.
		if [ $rc != 0 ]; then
			failed=1
			[ ! -f "$KV_TMP/skip" ] ||
				out=${out:+$out$'\n'}"(it also called skip: $(<"$KV_TMP/skip"))"
			echo "$out" | sed 's/^/# /'
			echo "not ok $n ${t#test_}"
		elif [ -f "$KV_TMP/skip" ]; then
			echo "ok $n ${t#test_} # SKIP $(<"$KV_TMP/skip")"
		else
			echo "ok $n ${t#test_}"
		fi
	done
	kv_helpers_stop
	n=$((n + 1))
	out=$(dmesg | tail -n +"$((dmesg_start + 1))" | kv_splats)
	if [ -n "$out" ]; then
		failed=1
		echo "$out" | head -160 | sed 's/^/# /'
		echo "not ok $n dmesg_clean"
	else
		echo "ok $n dmesg_clean"
	fi
	rm -rf "$KV_TMP"
	exit $failed
}

# Two hosts: a pair of guests (tools/vm/pair), A running the suites and
# B running selftests/peer-agent.sh, joined by a wire (the virtio-net
# card kvw0 in each) and by the pair directory $KV_PAIR, which both see
# over 9p without caching.  The protocol, which the agent serves:
#
#   $KV_PAIR/a.env	A's KV_TYPE and knobs, which B takes before its
#			setup (kv_pair_env_publish)
#   $KV_PAIR/b.ready	B is set up (rxe0 on kvw0, the module loaded) and
#			serving requests; it holds B's kernel release
#   $KV_PAIR/b.failed	B's setup failed, and why
#   $KV_PAIR/b.gone	B's guest ended (tools/vm/pair writes it)
#   $KV_PAIR/req/ID.cmd	a request of A: a script, written in one write and
#			ending with the line "#end" (nothing is renamed
#			into place: that would cost a process on each
#			side, and under TCG each costs a tenth of a second)
#   $KV_PAIR/req/ID/	B runs the script there (its cwd), as root, in a
#			process group of its own (the agent has job
#			control), in a subshell of the agent, which has
#			lib.sh; stdout to out, stderr to err.  B writes
#			pid once it started, rc once it ended.  A file
#			kill there makes B SIGKILL the request's group
#   $KV_PAIR/a.done	A is done: B kills what still runs and ends
#   $KV_PAIR/host/	requests to tools/vm/pair itself: kill-b (end B's
#			QEMU at once), boot-b (boot B again); it answers
#			with b-killed, and B with b.ready once booted
#
# Every wait on either side is bounded.

# kv_cmdline NAME: the value of kverbs.NAME on the kernel command line
# (tools/vm/run --param).
kv_cmdline() {
	local arg
	for arg in $(</proc/cmdline); do
		[[ $arg == "kverbs.$1="* ]] && echo "${arg#kverbs.$1=}"
	done
	return 0
}

# kv_pair_env: in a guest of a pair, export who is who, from the kernel
# command line: A is 10.210.0.1 and fd00:210::1, B .2 and ::2.
kv_pair_env() {
	local role me peer
	role=$(kv_cmdline role)
	case "$role" in
	a) me=1 peer=2 ;;
	b) me=2 peer=1 ;;
	*) echo "kv_pair_env: kverbs.role is '$role', not a or b" >&2; return 1 ;;
	esac
	KV_PAIR=$(kv_cmdline pair)
	KV_MTU=$(kv_cmdline mtu)
	KV_WIRE_MAC=$(kv_cmdline mac)
	export KV_ROLE=$role KV_PAIR KV_MTU KV_WIRE_MAC
	export KV_ADDR=10.210.0.$me KV_PEER_ADDR=10.210.0.$peer
	export KV_ADDR6=fd00:210::$me KV_PEER_ADDR6=fd00:210::$peer
	export KV_ADDR6_HEX=fd00021000000000000000000000000$me
	export KV_NETDEV=kvw0 KV_NETDEVS=kvw0
}

# What B takes from A, whose command's environment is the pair's: the
# soft RDMA driver and the knobs that size the tests and their time
# limits (the debug lane's).  A writes them to $KV_PAIR/a.env before it
# sets itself up (kv_pair_env_publish); B's agent waits for that file,
# sources it, and only then sets up its end (kv_pair_env_adopt).
KV_PAIR_VARS="KV_TYPE KV_TIME_SCALE KV_PERF_DIV KV_BIG_COUNT"

kv_pair_env_publish() {
	local v
	for v in $KV_PAIR_VARS; do
		[ -z "${!v+x}" ] || printf 'export %s=%q\n' "$v" "${!v}"
	done > "$KV_PAIR/a.env.tmp" && mv "$KV_PAIR/a.env.tmp" "$KV_PAIR/a.env"
}

# kv_pair_env_adopt SECONDS: in B, wait at most SECONDS for A's a.env
# (A boots alongside) and take it.
kv_pair_env_adopt() {
	local start=$SECONDS
	while [ ! -e "$KV_PAIR/a.env" ]; do
		[ ! -e "$KV_PAIR/a.done" ] || { echo "A ended before it wrote a.env"; return 1; }
		((SECONDS - start < $1)) || { echo "no a.env from A within $1 s"; return 1; }
		kv_sleep 0.2
	done
	. "$KV_PAIR/a.env" || { echo "cannot read $KV_PAIR/a.env"; return 1; }
	export KV_DEV=${KV_TYPE}0
}

# kv_pair_setup: this guest's end of the wire, $KV_DEV on it, the module.
kv_pair_setup() {
	"$KV_TOP/tools/vm/rdma-setup" --wire "$KV_WIRE_MAC" ${KV_MTU:+--mtu "$KV_MTU"} \
		--addr6 "$KV_ADDR6/64" "$KV_TYPE" "$KV_ADDR/24" "$KV_DEV" ||
		{ echo "cannot set up $KV_DEV on the wire"; return 1; }
	insmod "$KV_MODULE" || { echo "cannot load $KV_MODULE"; return 1; }
}

# kv_peer_id: a name for a request no other will have: this shell's
# pid, the time and a random number, without starting a process.
kv_peer_id() {
	printf '%s-%s-%s%s' "$BASHPID" "${EPOCHREALTIME/./}" "$RANDOM" "$RANDOM"
}

# kv_peer_bg NAME SCRIPT...: start SCRIPT (its words joined by spaces, as
# ssh does: quote what the peer must expand) on the peer, in the
# background.  Its directory, where it runs and leaves what it writes,
# is $(kv_peer_dir NAME).
kv_peer_bg() {
	local name=$1 id
	shift
	[ -d "$KV_PAIR/req" ] || { echo "kv_peer: no peer (not in a pair: tools/vm/pair)"; return 1; }
	id=$(kv_peer_id)
	printf '%s\n#end\n' "$*" > "$KV_PAIR/req/$id.cmd" || return 1
	eval "kv_peer_dir_$name=\$KV_PAIR/req/\$id"
}

kv_peer_dir() {
	eval echo "\$kv_peer_dir_$1"
}

# kv_cat FILE...: cat without a process.
kv_cat() {
	local f line
	for f; do
		while IFS= read -r line || [ -n "$line" ]; do
			printf '%s\n' "$line"
		done < "$f"
	done 2>/dev/null
}

# kv_peer_wait NAME SECONDS: wait for NAME's end, at most SECONDS (times
# KV_TIME_SCALE); returns its exit code, 124 after having it killed if it
# took too long, 125 if the peer guest is gone.
kv_peer_wait() {
	local d limit=$(($2 * KV_TIME_SCALE)) start=$SECONDS rc=
	d=$(kv_peer_dir "$1")
	while :; do
		[ -s "$d/rc" ] && read -r rc < "$d/rc" && [ -n "$rc" ] && break
		if [ -e "$KV_PAIR/b.gone" ]; then
			echo "kv_peer: the peer guest is gone ($1: $(kv_cat "$d.cmd" | head -n 1))"
			return 125
		fi
		if ((SECONDS - start >= limit)); then
			echo "kv_peer: $1 ($(kv_cat "$d.cmd" | head -n 1)) still running on the peer after $2 s: killed"
			[ -d "$d" ] && : > "$d/kill"
			start=$SECONDS
			while [ ! -s "$d/rc" ] && ((SECONDS - start < 20)); do
				kv_sleep 0.1
			done
			return 124
		fi
		kv_sleep 0.1
	done
	return "$rc"
}

# kv_peer_kill NAME [SIGNAL]: signal NAME's process group on the peer
# (KILL: the agent does it itself when asked).
kv_peer_kill() {
	local d pid
	d=$(kv_peer_dir "$1")
	if [ "${2:-KILL}" = KILL ]; then
		: > "$d/kill"
		return
	fi
	read -r pid < "$d/pid" 2>/dev/null || return 1
	kv_peer -t 10 kill "-$2" -- "-$pid"
}

# kv_peer [-t SECONDS] SCRIPT...: run SCRIPT on the peer in the
# foreground, at most SECONDS (120); its output here, its exit code
# returned (kv_peer_wait's).
kv_peer() {
	local limit=120 rc d
	if [ "$1" = -t ]; then
		limit=$2
		shift 2
	fi
	kv_peer_bg fg "$@" || return 1
	kv_peer_wait fg "$limit"
	rc=$?
	d=$(kv_peer_dir fg)
	kv_cat "$d/out"
	kv_cat "$d/err" >&2
	return $rc
}

# kv_pair_kill_b: have the host end B's QEMU at once (tools/vm/pair,
# host/kill-b), and wait until it has, at most 60 s.
kv_pair_kill_b() {
	local start=$SECONDS
	rm -f "$KV_PAIR/host/b-killed"
	: > "$KV_PAIR/host/kill-b"
	while [ ! -e "$KV_PAIR/host/b-killed" ]; do
		((SECONDS - start < 60)) || { echo "the host did not kill B within 60 s"; return 1; }
		kv_sleep 0.2
	done
}

# kv_pair_boot_b: have the host boot B again, and wait until its agent
# is ready, at most 300 s (B boots under TCG).
kv_pair_boot_b() {
	local start=$SECONDS
	: > "$KV_PAIR/host/boot-b"
	while [ -e "$KV_PAIR/host/boot-b" ] || [ ! -e "$KV_PAIR/b.ready" ]; do
		[ -e "$KV_PAIR/b.failed" ] && { echo "B's setup failed: $(kv_cat "$KV_PAIR/b.failed")"; return 1; }
		((SECONDS - start < 300 * KV_TIME_SCALE)) ||
			{ echo "B was not ready within $((300 * KV_TIME_SCALE)) s of its boot"; return 1; }
		kv_sleep 0.2
	done
}

# kv_no_carrier: the wire's card has lost its carrier (cable unplugged).
kv_no_carrier() {
	[ "$(cat "/sys/class/net/$KV_NETDEV/carrier" 2>/dev/null)" = 0 ]
}

# kv_pair_cable ROLE off|on: have the host unplug the cable of guest
# ROLE's card (a or b), or plug it back (tools/vm/pair, host/link-*),
# and wait until it has, at most 30 s.  An unplugged card loses its
# carrier and every frame on the wire is dropped, both ways, as when a
# real card is taken down: its peer's frames are lost, not held back.
kv_pair_cable() {
	local req=$KV_PAIR/host/link-$1-$2 start=$SECONDS
	rm -f "$req.done" "$req.failed"
	: > "$req"
	until [ -e "$req.done" ]; do
		[ -e "$req.failed" ] && { echo "the host could not turn $1's cable $2: $(kv_cat "$req.failed")"; return 1; }
		((SECONDS - start < 30)) || { echo "the host did not turn $1's cable $2 within 30 s"; return 1; }
		kv_sleep 0.2
	done
	rm -f "$req.done"
	# What kv_after_test (hosts-lib.sh) plugs back in, should the test
	# end before it does.
	if [ "$2" = off ]; then : > "$KV_PAIR/cable-$1.off"; else rm -f "$KV_PAIR/cable-$1.off"; fi
}
