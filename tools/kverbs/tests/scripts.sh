#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/kverbs/tests/scripts.sh: host-side tests of what judges the
# selftests, so that a broken judge cannot pass a run: scripts/ktap-summary,
# scripts/ktap-failures and scripts/ktap-skips on crafted KTAP (and the
# last on the table of expected skips), selftests/lib.sh's judge of
# kmemleak's reports and its kv_splats on crafted ones, and its
# ktap_main running a fake suite (its tests skip, fail, leave a process or
# a broken device behind), and scripts/check-docs: its table of kernel
# files on copies of Documentation/architecture.rst with a row taken out
# or made up, options made up or of another command on command lines,
# in inline code and in the man page, and docutils' verdict on a page
# with a malformed table or a short title underline (and the skip
# without docutils); and scripts/check-layers, on the tree and on crafted
# trees and their objects, one use against the layers each; and
# scripts/units.sh, which runs scripts/check's guests two at a time, on
# units that log what they do; and tools/vm/console-report on crafted
# consoles of guests that died.  No module, no root, nothing of the host's
# touched: the fake suite replaces lib.sh's device repair and its search
# for leftovers with fakes that see only its own process.  Prints KTAP;
# exits 0 if every test passed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d /tmp/kverbs-scripts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

results=()
n=0
failed=0

# result NAME DIAG...: ok without DIAG, not ok with it.
result() {
	local name=$1 d
	shift
	n=$((n + 1))
	if [ $# = 0 ]; then
		results+=("ok $n $name")
		return
	fi
	failed=1
	for d; do
		while IFS= read -r line; do
			results+=("# $line")
		done <<< "$d"
	done
	results+=("not ok $n $name")
}

# summary NAME STATUS STDOUT STDERR_TEXT: scripts/ktap-summary, given
# stdin, exits STATUS (0, or 1 for any failure), prints STDOUT and, if
# STDERR_TEXT is not empty, says it on stderr.
summary() {
	local name=$1 want=$2 out=$3 err=$4 rc diag=()
	cat > "$tmp/in"
	"$top/scripts/ktap-summary" < "$tmp/in" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc = "$want" ] || diag+=("exit status $rc, expected $want")
	[ "$(cat "$tmp/out")" = "$out" ] ||
		diag+=("stdout: $(cat "$tmp/out")" "expected: $out")
	if [ -n "$err" ]; then
		grep -qF -- "$err" "$tmp/err" || diag+=("stderr does not say '$err': $(cat "$tmp/err")")
	else
		[ ! -s "$tmp/err" ] || diag+=("stderr: $(cat "$tmp/err")")
	fi
	result "summary_$name" "${diag[@]}"
}

summary empty_input_fails 1 "0 passed, 1 failed, 0 skipped" "no test results" < /dev/null

summary version_line_alone_fails 1 "0 passed, 1 failed, 0 skipped" "no test results" <<'EOF'
KTAP version 1
EOF

summary all_passed 0 "2 passed, 0 failed, 0 skipped" "" <<'EOF'
KTAP version 1
1..2
ok 1 a
ok 2 b
EOF

summary plan_short_fails 1 "2 passed, 1 failed, 0 skipped" "line 2: plan 1..3 with 2 result(s)" <<'EOF'
KTAP version 1
1..3
ok 1 a
ok 2 b
EOF

summary nested_plan_short_fails 1 "1 passed, 1 failed, 0 skipped" "plan 1..2 with 1 result(s) (indented 4)" <<'EOF'
KTAP version 1
1..1
    KTAP version 1
    1..2
    ok 1 a
ok 1 suite
EOF

summary failure 1 "1 passed, 1 failed, 0 skipped" "" <<'EOF'
KTAP version 1
1..1
    KTAP version 1
    1..2
    # expected 1, got 2
    not ok 1 a
    ok 2 b
not ok 1 suite
EOF

# A parent that failed with every leaf ok: a crash, a timeout.
summary parent_failed_alone 1 "1 passed, 1 failed, 0 skipped" "" <<'EOF'
KTAP version 1
1..1
    KTAP version 1
    1..1
    ok 1 a
not ok 1 suite
EOF

# run.sh's suite that is not built, and kselftest's program that skips
# before its plan: the document is one skip, whatever its parent says.
summary nested_skip_is_a_skip 0 "1 passed, 0 failed, 2 skipped" "" <<'EOF'
KTAP version 1
1..3
    KTAP version 1
    1..0 # SKIP uapi is not built (make selftests)
ok 1 uapi # SKIP not built
    KTAP version 1
    1..0 # SKIP not in a pair of guests (tools/vm/pair)
ok 2 hosts
    KTAP version 1
    1..1
    ok 1 a
ok 3 other
EOF

summary nested_skip_under_failure_fails 1 "0 passed, 1 failed, 0 skipped" "" <<'EOF'
KTAP version 1
1..1
    KTAP version 1
    1..0 # SKIP no rping
not ok 1 suite
EOF

# A document planned 1..0 without a reason ran nothing: a failure,
# whatever its parent says, at any depth.
summary nested_empty_plan_fails 1 "1 passed, 1 failed, 0 skipped" \
	"line 4: plan 1..0 without # SKIP: 'ok 1 suite' ran nothing" <<'EOF'
KTAP version 1
1..2
    KTAP version 1
    1..0
ok 1 suite
    KTAP version 1
    1..1
    ok 1 a
ok 2 other
EOF

summary deeper_empty_plan_fails 1 "0 passed, 1 failed, 0 skipped" \
	"line 6: plan 1..0 without # SKIP: 'ok 1 inner' ran nothing" <<'EOF'
KTAP version 1
1..1
    KTAP version 1
    1..1
        KTAP version 1
        1..0
    ok 1 inner
ok 1 outer
EOF

summary empty_plan_under_failure_fails_once 1 "0 passed, 1 failed, 0 skipped" \
	"line 4: plan 1..0 without # SKIP: 'not ok 1 suite' ran nothing" <<'EOF'
KTAP version 1
1..1
    KTAP version 1
    1..0
not ok 1 suite
EOF

summary whole_input_skipped 0 "0 passed, 0 failed, 1 skipped" "" <<'EOF'
KTAP version 1
1..0 # SKIP not in a pair of guests
EOF

# A failure marked as a skip is a failure.
summary not_ok_skip_is_a_failure 1 "0 passed, 1 failed, 0 skipped" "" <<'EOF'
KTAP version 1
1..1
not ok 1 a # SKIP but it failed
EOF

# ktap-failures: each failure with its diagnostics, nothing of what passed.
cat > "$tmp/in" <<'EOF'
KTAP version 1
1..2
    KTAP version 1
    1..2
    # a passed quietly
    ok 1 a
    # b: expected 1, got 2
    not ok 2 b
not ok 1 suite
    ok 1 c
ok 2 other
EOF
"$top/scripts/ktap-failures" < "$tmp/in" > "$tmp/out" 2>&1
printf '    # b: expected 1, got 2\n    not ok 2 b\n\nnot ok 1 suite\n\n' > "$tmp/want"
if cmp -s "$tmp/out" "$tmp/want"; then
	result failures_prints_what_failed
else
	result failures_prints_what_failed "got:" "$(cat "$tmp/out")" "expected:" "$(cat "$tmp/want")"
fi

# ... and a document planned 1..0 without a reason, with its parent's
# result, whatever it says.
printf '%s\n' "KTAP version 1" "1..2" "    KTAP version 1" "    # ran nothing" "    1..0" \
	"ok 1 suite" "    KTAP version 1" "    1..1" "    ok 1 a" "ok 2 other" > "$tmp/in"
"$top/scripts/ktap-failures" < "$tmp/in" > "$tmp/out" 2>&1
printf '%s\n' "    # ran nothing" "    1..0    [no test, no reason: a failure]" "ok 1 suite" "" \
	> "$tmp/want"
if cmp -s "$tmp/out" "$tmp/want"; then
	result failures_prints_empty_document
else
	result failures_prints_empty_document "got:" "$(cat "$tmp/out")" "expected:" "$(cat "$tmp/want")"
fi

# skips LANE NAME STATUS STDERR_TEXT: scripts/ktap-skips LANE, given
# stdin, against the table of Documentation/testing.rst.
skips() {
	local lane=$1 name=$2 want=$3 err=$4 rc diag=()
	cat > "$tmp/in"
	"$top/scripts/ktap-skips" "$lane" < "$tmp/in" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc = "$want" ] || diag+=("exit status $rc, expected $want")
	if [ -n "$err" ]; then
		grep -qF -- "$err" "$tmp/err" || diag+=("stderr does not say '$err': $(cat "$tmp/err")")
	else
		[ ! -s "$tmp/err" ] || diag+=("stderr: $(cat "$tmp/err")")
	fi
	result "skips_$name" "${diag[@]}"
}

skips check expected 0 "" <<'EOF2'
KTAP version 1
1..2
    KTAP version 1
    1..2
    ok 1 failnth_call.info.each_alloc # SKIP no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)
    ok 2 atomic_refused_on_siw # SKIP rxe has atomic operations: the atomic tests run
ok 1 guest_6.12
ok 2 kmemleak # SKIP no kmemleak in this kernel
EOF2

skips check missing_tool_fails 1 "line 3: devices_match_ibv_devinfo # SKIP ibv_devinfo is not installed" <<'EOF2'
KTAP version 1
1..1
ok 1 devices_match_ibv_devinfo # SKIP ibv_devinfo is not installed
EOF2

skips check-debug other_lanes_skip_fails 1 "failnth_call.info.each_alloc # SKIP" <<'EOF2'
KTAP version 1
1..1
ok 1 failnth_call.info.each_alloc # SKIP no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)
EOF2

skips check other_tests_skip_fails 1 "json_fields # SKIP" <<'EOF2'
KTAP version 1
1..1
ok 1 json_fields # SKIP rxe has atomic operations: the atomic tests run
EOF2

skips check skipped_document_fails 1 "line 4: hosts # SKIP not in a pair" <<'EOF2'
KTAP version 1
1..1
    KTAP version 1
    1..0 # SKIP not in a pair of guests (tools/vm/pair)
ok 1 hosts
EOF2

# The newest kernel that cannot be had (scripts/newest-kernel's reason):
# its build and its guest skip in make check, and nothing else may.
newest="newest-kernel: no linux-binary-7.2.* at 7.2.13-1 in unstable (an upload in progress?)"
skips check newest_kernel_unavailable 0 "" <<EOF2
KTAP version 1
1..2
ok 1 module_newest # SKIP $newest
ok 2 guest_newest # SKIP $newest
EOF2

skips check newest_kernel_reason_elsewhere_fails 1 "guest_6.12.118+deb12-amd64 # SKIP newest-kernel" <<EOF2
KTAP version 1
1..1
ok 1 guest_6.12.118+deb12-amd64 # SKIP $newest
EOF2

# removal's unserved-page tests may skip on 6.1's kernel only: the same
# EFAULT on another is kverbs' own.
unserved="refuses to pin an unserved userfaultfd page (EFAULT before any device is held): no test waits on it"
skips check unserved_page_on_6.1 0 "" <<EOF2
KTAP version 1
1..1
ok 1 link_del_with_ping_log_unserved # SKIP Linux 6.1.0-57-amd64 $unserved
EOF2

skips check unserved_page_on_6.12_fails 1 "link_del_with_samples_unserved # SKIP Linux 6.12" <<EOF2
KTAP version 1
1..2
ok 1 link_del_with_samples_unserved # SKIP Linux 6.12.118+deb12-amd64 $unserved
ok 2 link_del_with_ping_log_unserved # SKIP Linux 6.16.3+deb14-amd64 $unserved
EOF2

if "$top/scripts/ktap-skips" --sources > "$tmp/out" 2>&1; then
	result skips_every_reason_listed
else
	result skips_every_reason_listed "$(cat "$tmp/out")"
fi

# lib.sh's kv_leftovers, the real one: each program a test may leave
# running, found by its argv[0] (exec -a), and nothing else.
mkdir -p "$tmp/bin"
left_pids=()
for argv0 in "$tmp/bin/kverbs" rping udaddy "$tmp/bin/hostile" "$tmp/bin/perf_hello" \
	     "$tmp/bin/ping_peer" "$tmp/bin/ud_forge" "$tmp/bin/stall" "$tmp/bin/other"; do
	# Not a job of this shell's, which would say when it is killed.
	pid=$( (exec -a "$argv0" sleep 600) > /dev/null 2>&1 & echo $!)
	left_pids+=("$pid")
	# It has run its exec once its argv[0] is the one given.
	for ((i = 0; i < 50; i++)); do
		read -r -d '' a 2>/dev/null < "/proc/$pid/cmdline"
		[ "$a" = "$argv0" ] && break
		sleep 0.1
	done
done
found=$(KVERBS=$tmp/bin/kverbs bash -c '. "$1/selftests/lib.sh"; rm -rf "$KV_TMP"; kv_leftovers' \
	_ "$top")
diag=()
for pid in "${left_pids[@]}"; do
	read -r -d '' a 2>/dev/null < "/proc/$pid/cmdline"
	if [ "$a" = "$tmp/bin/other" ]; then
		! grep -qx "$pid" <<< "$found" || diag+=("kv_leftovers lists $a (pid $pid)")
	else
		grep -qx "$pid" <<< "$found" || diag+=("kv_leftovers does not list $a (pid $pid)")
	fi
done
kill -9 "${left_pids[@]}" 2>/dev/null
result kv_leftovers_names_every_helper "${diag[@]}"

# lib.sh's ktap_main, on a fake suite.  Its leftovers are what runs as
# $KVERBS (a link to sleep, under $tmp); its device repair a fake that
# repairs what the test marked broken (a file), and fails to if the test
# marked it beyond repair.
ln -s "$(command -v sleep)" "$tmp/kverbs"
cat > "$tmp/fake.sh" <<EOF
. "$top/selftests/lib.sh"
KVERBS=$tmp/kverbs
FAKE=$tmp
EOF
cat >> "$tmp/fake.sh" <<'EOF'
dmesg() { :; }
kv_leftovers() {
	local d a
	for d in /proc/[0-9]*; do
		a=
		read -r -d '' a 2>/dev/null < "$d/cmdline"
		[ "$a" != "$KVERBS" ] || echo "${d#/proc/}"
	done
}
kv_rxe_restore() {
	[ ! -e "$FAKE/unrepairable" ] || { echo "cannot bring rxe0 back"; return 1; }
	[ -e "$FAKE/broken" ] || return 0
	echo "kv0 was down: bringing it up"
	rm -f "$FAKE/broken"
	return 2
}
test_passes() { :; }
test_fails() { fail "it failed"; }
test_skips() { skip "no such thing"; }
test_skips_in_a_subshell_then_fails() {
	( skip "no such thing" )
	fail "and then it failed"
}
test_skips_in_a_subshell_then_passes() {
	( skip "no such thing" )
}
test_leaves_a_process() {
	"$KVERBS" 600 > /dev/null 2>&1 &
}
test_leaves_a_broken_device() {
	: > "$FAKE/broken"
}
test_after_breakage() {
	[ ! -e "$FAKE/broken" ] || fail "the device was not repaired"
}
test_leaves_an_unrepairable_device() {
	: > "$FAKE/unrepairable"
}
ktap_main "$@"
EOF

# fake NAME... : run these tests of the fake suite; its KTAP in $tmp/ktap.
fake() {
	rm -f "$tmp/broken" "$tmp/unrepairable"
	KV_NETDEV=lo timeout -k 5 120 bash "$tmp/fake.sh" "$@" > "$tmp/ktap" 2>&1
}

# expect NAME LINE...: each LINE is a line of the fake suite's KTAP.
expect() {
	local name=$1 l diag=()
	shift
	for l; do
		grep -qxF -- "$l" "$tmp/ktap" || diag+=("no line '$l'")
	done
	[ ${#diag[@]} = 0 ] || diag+=("the fake suite printed:" "$(cat "$tmp/ktap")")
	result "ktap_main_$name" "${diag[@]}"
}

fake test_passes test_fails test_skips
expect control "ok 1 passes" "# it failed" "not ok 2 fails" "ok 3 skips # SKIP no such thing" \
	"ok 4 dmesg_clean"

fake test_skips_in_a_subshell_then_fails test_skips_in_a_subshell_then_passes
expect failure_wins_over_skip "# and then it failed" "# (it also called skip: no such thing)" \
	"not ok 1 skips_in_a_subshell_then_fails" \
	"ok 2 skips_in_a_subshell_then_passes # SKIP no such thing"

fake test_leaves_a_process test_passes
expect leftover_process_fails "not ok 1 leaves_a_process" "ok 2 passes" \
	"# it left what is above behind (repaired for the next test)"
if grep -q "^# after the test: left running: pid [0-9]*: $tmp/kverbs 600 $" "$tmp/ktap"; then
	result ktap_main_leftover_process_named
else
	result ktap_main_leftover_process_named "no '# after the test: left running: ...':" "$(cat "$tmp/ktap")"
fi
left=
for d in /proc/[0-9]*; do
	read -r -d '' a 2>/dev/null < "$d/cmdline" && [ "$a" = "$tmp/kverbs" ] && left+=" ${d#/proc/}"
done
if [ -z "$left" ]; then
	result ktap_main_leftover_process_killed
else
	# shellcheck disable=SC2086
	kill -9 $left 2>/dev/null
	result ktap_main_leftover_process_killed "still running:$left"
fi

fake test_leaves_a_broken_device test_after_breakage
expect broken_device_fails "# after the test: kv0 was down: bringing it up" \
	"not ok 1 leaves_a_broken_device" "ok 2 after_breakage"

fake test_leaves_an_unrepairable_device
expect unrepairable_device_fails "# after the test: cannot bring rxe0 back" \
	"# what it left could not be cleaned up (above)" "not ok 1 leaves_an_unrepairable_device"

KV_ONLY="passes fake:typo other:fails" fake test_passes test_fails
expect kv_only "1..3" "not ok 1 typo" "ok 2 passes" "ok 3 dmesg_clean"

# lib.sh's judge of kmemleak's reports, on crafted reports: every one
# fails but those KV_KMEMLEAK_ALLOWED names.
kv_report() {
	cat <<EOF
unreferenced object 0xffff888012345678 (size 1024):
  comm "$1", pid 321, jiffies 4294937296
  hex dump (first 32 bytes):
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
  backtrace (crc 5a1e2f3c):
    __kmalloc_cache_noprof+0x2d3/0x3a0
    $2
    $3
    process_one_work+0x5e6/0xfd0
EOF
}
kv_report kverbs "kverbs_ep_create+0x4f/0x2a0 [kverbs]" "kverbs_ping_run+0x1d/0x80 [kverbs]" \
	> "$tmp/leak.kverbs"
kv_report kworker/u4:2 "__rdma_create_id+0x51/0x5f0 [rdma_cm]" "cma_ib_new_conn_id+0x8e/0x4c0 [rdma_cm]" \
	> "$tmp/leak.rdma_cm"
# leaks NAME STATUS TEXT ALLOWED... < KMEMLEAK: kv_kmemleak_reports,
# with KV_KMEMLEAK_ALLOWED=(ALLOWED...), exits STATUS and prints a line
# that is TEXT, or (TEXT empty) nothing.
leaks() {
	local name=$1 want=$2 text=$3 rc diag=()
	shift 3
	bash -c '. "$1/selftests/lib.sh"; rm -rf "$KV_TMP"; shift
		 KV_KMEMLEAK_ALLOWED=("$@"); kv_kmemleak_reports' _ "$top" "$@" > "$tmp/out" 2>&1
	rc=$?
	[ $rc = "$want" ] || diag+=("exit status $rc, expected $want")
	if [ -n "$text" ]; then
		grep -qxF -- "$text" "$tmp/out" || diag+=("no line '$text'")
	else
		[ ! -s "$tmp/out" ] || diag+=("it should print nothing")
	fi
	[ ${#diag[@]} = 0 ] || diag+=("it printed:" "$(cat "$tmp/out")")
	result "kmemleak_$name" "${diag[@]}"
}
leaks none 0 "" < /dev/null
leaks kverbs_report_fails 1 "    kverbs_ep_create+0x4f/0x2a0 [kverbs]" < "$tmp/leak.kverbs"
leaks rdma_cm_report_fails 1 "    cma_ib_new_conn_id+0x8e/0x4c0 [rdma_cm]" < "$tmp/leak.rdma_cm"
leaks allowed_report_passes 0 \
	"allowed (child_id: made up for this test): unreferenced object 0xffff888012345678 (size 1024):" \
	child_id 'cma_ib_new_conn_id\+' 'made up for this test' < "$tmp/leak.rdma_cm"
leaks allowed_one_of_two_fails 1 "    kverbs_ep_create+0x4f/0x2a0 [kverbs]" \
	child_id 'cma_ib_new_conn_id\+' 'made up for this test' \
	< <(cat "$tmp/leak.rdma_cm" "$tmp/leak.kverbs")

# kv_splats leaves the scans' own "new suspected memory leaks" to
# kv_kmemleak_check, and no other.
bash -c '. "$1/selftests/lib.sh"; rm -rf "$KV_TMP"
	 printf "%s\n" "$KV_KMEMLEAK_BEGIN" "kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)" \
		"$KV_KMEMLEAK_END" | kv_splats' _ "$top" > "$tmp/out" 2>&1
if [ -s "$tmp/out" ]; then
	result kmemleak_scans_not_a_splat "kv_splats printed: $(cat "$tmp/out")"
else
	result kmemleak_scans_not_a_splat
fi
bash -c '. "$1/selftests/lib.sh"; rm -rf "$KV_TMP"
	 echo "kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)" | kv_splats' \
	_ "$top" > "$tmp/out" 2>&1
if grep -q "new suspected memory leaks" "$tmp/out"; then
	result kmemleak_other_scan_a_splat
else
	result kmemleak_other_scan_a_splat "kv_splats printed nothing"
fi

# docs NAME STATUS TEXT [FILE] < DOC: scripts/check-docs on DOC, saved
# as FILE (default architecture.rst, which check-docs takes for
# Documentation/architecture.rst), exits STATUS and, if TEXT is not
# empty, says TEXT.
docs() {
	local name=$1 want=$2 text=$3 file=${4:-architecture.rst} rc diag=()
	mkdir -p "$tmp/docs" && cat > "$tmp/docs/$file"
	"$top/scripts/check-docs" "$tmp/docs/$file" > "$tmp/out" 2>&1
	rc=$?
	[ $rc = "$want" ] || diag+=("exit status $rc, expected $want: $(cat "$tmp/out")")
	[ -z "$text" ] || grep -qF -- "$text" "$tmp/out" || diag+=("no '$text': $(cat "$tmp/out")")
	result "check_docs_$name" "${diag[@]}"
}
arch=$top/Documentation/architecture.rst
docs file_table_control 0 "" < "$arch"
docs file_table_missing_header_fails 1 "kernel/chardev.h has no row in the table of files" \
	< <(sed '/^``kernel\/chardev\.h``/d' "$arch")
docs file_table_missing_directory_fails 1 "kernel/probes/ has no row in the table of files" \
	< <(sed '/^``kernel\/probes\/``/,+1d' "$arch")
docs file_table_made_up_row_fails 1 "kernel/main2.c is in the table of files, not in kernel/" \
	< <(sed 's/^``kernel\/main\.c``          /``kernel\/main2.c``         /' "$arch")
docs kverbs_options_control 0 "" page.rst <<'EOF'
Run ``kverbs ping -c -a ADDR -C 2 -V``, or::

   kverbs write_bw 10.0.0.1 -s 4096 -D 5 --out_json_file=x.json
EOF
docs kverbs_option_unknown_fails 1 "kverbs ping --bogus: 'kverbs ping --help' has no --bogus" \
	page.rst <<< 'Run ``kverbs ping -c -a ADDR --bogus -C 2``.'
docs kverbs_option_of_another_command_fails 1 "kverbs write_lat -b: 'kverbs write_lat --help' has no -b" \
	page.rst <<< '   kverbs write_lat 10.0.0.1 -b'

# Options in inline code and on command lines in any document: each
# must be one that its command's --help names, or, alone in inline code,
# one that some --help names or another program's (FOREIGN_OPTIONS).
docs options_in_code_control 0 "" page.rst <<'EOF'
``--poll workqueue``, ``-C 3``, ``-EINVAL``, QEMU's ``-cpu max``, and
``tools/vm/run -k 6.12 -t 300 -- selftests/run.sh --module kverbs.ko ping``;
``dkms add -m kverbs -v 1.0``; ``kverbs --version``.
EOF
docs option_in_code_made_up_fails 1 "page.rst:1: --made-up: no command's --help has it" \
	page.rst <<< 'With ``--made-up`` the server waits.'
docs kverbs_unknown_command_fails 1 "kverbs bogus: 'kverbs --help' lists no command bogus" \
	page.rst <<< 'Run ``kverbs bogus -x``.'
docs script_option_unknown_fails 1 "tools/vm/run --bogus: 'tools/vm/run --help' has no --bogus" \
	page.rst <<< '``tools/vm/run -k 6.12 --bogus -- selftests/run.sh ping``'
docs script_option_after_dashes_fails 1 "selftests/run.sh --nope: 'selftests/run.sh --help' has no --nope" \
	page.rst <<< '``tools/vm/run -k 6.12 -- selftests/run.sh --nope ping``'
docs markdown_option_unknown_fails 1 "page.md:2: kverbs serve --nah: 'kverbs serve --help' has no --nah" \
	page.md <<'EOF'
```
host-a$ kverbs serve -j 8 --nah
```
EOF
# The man page: the control, an example's option made up, and one in its text.
page=$top/Documentation/kverbs.8
docs man_page_control 0 "" kverbs.8 < "$page"
docs man_example_option_unknown_fails 1 "kverbs.8:$(grep -n '^host\\-b\$ kverbs ping' "$page" |
	cut -d: -f1): kverbs ping --bogus: 'kverbs ping --help' has no --bogus" kverbs.8 \
	< <(sed 's/^host\\-b\$ kverbs ping \\-c .*/& \\-\\-bogus/' "$page")
docs man_text_option_unknown_fails 1 "names --made-up, which no --help names" kverbs.8 \
	< <(sed 's/^times are in seconds/times (\\-\\-made\\-up) are in seconds/' "$page")

# Every .rst page parses with docutils, with neither error nor warning.
# The control is the page of the first failure, fixed.
docs rst_control 0 "" page.rst <<'EOF'
The table
=========

========= =======================
field     meaning
========= =======================
``size``  the struct's size
========= =======================

A sentence after it.
EOF
# Without docutils (below) these two cannot fail, and are skipped.
if ! python3 -c 'import docutils' 2>/dev/null; then
	for t in rst_malformed_table_fails rst_short_underline_fails; do
		n=$((n + 1))
		results+=("ok $n check_docs_$t # SKIP no docutils for python3 (python3-docutils)")
	done
else
docs rst_malformed_table_fails 1 "page.rst:4: docutils: (ERROR/3) Malformed table." page.rst <<'EOF'
The table
=========

========= =======================
field     meaning
========= =======================
``size``  the struct's size
========= =======================  A
sentence after it.
EOF
docs rst_short_underline_fails 1 "page.rst:2: docutils: (WARNING/2) Title underline too short." \
	page.rst <<'EOF'
The table
=====

A sentence.
EOF
fi
# Without docutils the parse is skipped, saying so, and nothing fails.
mkdir -p "$tmp/no-docutils/docutils"
echo 'raise ImportError("no docutils in this test")' > "$tmp/no-docutils/docutils/__init__.py"
PYTHONPATH=$tmp/no-docutils docs rst_without_docutils_skips 0 \
	"check-docs: SKIP parsing 1 .rst page(s): no docutils" page.rst <<'EOF'
The table
=====
EOF

# units NAME SCRIPT: SCRIPT run by bash with scripts/units.sh sourced,
# in a directory of its own ($d, also units_dir) with a log of what the
# units did ($d/log), units_poll at 0.1 s and 60 s at most; its exit
# status and its stderr are in $d/rc and $d/err.
units() {
	local name=$1 d=$tmp/units-$1
	mkdir -p "$d"
	(
		cd "$d" || exit 1
		timeout -k 5 60 bash -c '. "$1"; units_dir=$PWD units_poll=0.1; eval "$2"' \
			_ "$top/scripts/units.sh" "$2" > out 2> err
		echo $? > rc
	)
}
# A unit that logs its start and end, taking a third of a second, or
# for a, until the file go-a exists.
units_run_unit='
run_unit() {
	local i
	echo "start $1" >> log
	if [ "$1" = a ] && [ -n "${a_waits:-}" ]; then
		for ((i = 0; i < 300; i++)); do [ -e go-a ] && break; sleep 0.1; done
	else
		sleep 0.3
	fi
	echo "end $1" >> log
	echo 0 > "unit-$1.rc"
}'

# Two workers: each unit runs once, two at a time, and units_wait
# returns for each.
units two_workers "$units_run_unit"'
units=(a b c d)
units_start 2
for u in "${units[@]}"; do units_wait "$u" || exit 1; done
units_end'
d=$tmp/units-two_workers diag=()
[ "$(cat "$d/rc")" = 0 ] || diag+=("exit status $(cat "$d/rc"): $(cat "$d/err")")
[ "$(grep start "$d/log" | sort | tr '\n' ' ')" = "start a start b start c start d " ] ||
	diag+=("each unit should start once: $(cat "$d/log")")
[ "$(sed -n 2p "$d/log")" = "start b" ] || diag+=("b should start while a runs: $(cat "$d/log")")
result units_two_workers "${diag[@]}"

# The second worker waits for the lock: until it is free only a runs,
# then b starts while a still runs.
units lock_gates_second_worker "$units_run_unit"'
flock lock bash -c "for ((i = 0; i < 300; i++)); do [ -e release ] && exit; sleep 0.1; done" &
for ((i = 0; i < 50; i++)); do flock -n lock true || break; sleep 0.1; done
units=(a b c) a_waits=1
units_start 2 lock
sleep 1
cp log log.held
touch release
for ((i = 0; i < 100; i++)); do grep -q "start b" log && break; sleep 0.1; done
cp log log.released
touch go-a
for u in "${units[@]}"; do units_wait "$u" || exit 1; done
units_end'
d=$tmp/units-lock_gates_second_worker diag=()
[ "$(cat "$d/rc")" = 0 ] || diag+=("exit status $(cat "$d/rc"): $(cat "$d/err")")
[ "$(cat "$d/log.held" 2>/dev/null)" = "start a" ] ||
	diag+=("while the lock is held only a should run: $(cat "$d/log.held")")
[ "$(cat "$d/log.released" 2>/dev/null)" = "start a
start b" ] || diag+=("b should start once the lock is free, a still running: $(cat "$d/log.released")")
grep -q "a worker starts" "$d/err" || diag+=("no word of the second worker: $(cat "$d/err")")
result units_lock_gates_second_worker "${diag[@]}"

# A second worker whose lock stays held gives up once the first took
# every unit: the run ends.
units gated_worker_gives_up "$units_run_unit"'
flock lock bash -c "for ((i = 0; i < 300; i++)); do [ -e release ] && exit; sleep 0.1; done" &
for ((i = 0; i < 50; i++)); do flock -n lock true || break; sleep 0.1; done
units=(a b)
units_start 2 lock
for u in "${units[@]}"; do units_wait "$u" || exit 1; done
units_end
touch release'
d=$tmp/units-gated_worker_gives_up diag=()
[ "$(cat "$d/rc")" = 0 ] || diag+=("exit status $(cat "$d/rc") (124: it waited for the lock): $(cat "$d/err")")
[ "$(tr '\n' ' ' < "$d/log")" = "start a end a start b end b " ] ||
	diag+=("one worker should run a then b: $(cat "$d/log")")
! grep -q "a worker starts" "$d/err" || diag+=("the second worker started: $(cat "$d/err")")
result units_gated_worker_gives_up "${diag[@]}"

# A worker that dies leaves no exit code: units_wait says so at once.
units wait_for_a_dead_worker '
run_unit() { exit 3; }
units=(a)
units_start 1
units_wait a
echo "units_wait: $?"
units_end'
d=$tmp/units-wait_for_a_dead_worker diag=()
[ "$(cat "$d/out")" = "units_wait: 1" ] || diag+=("units_wait should fail: $(cat "$d/out" "$d/err")")
result units_wait_for_a_dead_worker "${diag[@]}"

# report NAME CHECK... < CONSOLE: tools/vm/console-report on CONSOLE;
# each CHECK is "has TEXT", "lacks TEXT" or "first TEXT" (its first
# line holds TEXT) about what it printed.
report() {
	local name=$1 d=$tmp/report-$1 out what text diag=()
	shift
	mkdir -p "$d" && cat > "$d/console.log"
	out=$("$top/tools/vm/console-report" "$d/console.log" 2>&1) ||
		diag+=("exit status $?: $out")
	for what; do
		text=${what#* }
		case "$what" in
		has\ *) grep -qF -- "$text" <<< "$out" || diag+=("no '$text'") ;;
		lacks\ *) ! grep -qF -- "$text" <<< "$out" || diag+=("it says '$text'") ;;
		first\ *) [[ "$(head -n 1 <<< "$out")" == *"$text"* ]] || diag+=("its first line is not '$text'") ;;
		esac
	done
	[ ${#diag[@]} = 0 ] || diag+=("it printed:" "$out")
	result "console_report_$name" "${diag[@]}"
}
boot_splat='[    0.021000] BUG: KASAN: wild-memory-access in handle_edge_irq+0x1/0x2
[    0.021100] CPU: 0 UID: 0 PID: 0 Comm: swapper/0 Not tainted 6.12.0 #1
[    0.021200] RIP: 0010:handle_edge_irq+0x1/0x2
[    0.021300] Call Trace:
[    0.021400]  <TASK>
[    0.021500]  identify_cpu+0x3/0x4
[    0.021600]  </TASK>'
cmd_splat='[   80.000000] WARNING: CPU: 1 PID: 321 at kernel/perf/perf.c:99 kverbs_perf_run+0x5/0x6 [kverbs]
[   80.000100] CPU: 1 UID: 0 PID: 321 Comm: kverbs Not tainted 6.12.0 #1
[   80.000200] RIP: 0010:kverbs_perf_run+0x5/0x6 [kverbs]
[   80.000300] Call Trace:
[   80.000400]  <TASK>
[   80.000500]  ? __warn+0x1/0x2
[   80.000600]  kverbs_ioctl+0x7/0x8 [kverbs]
[   80.000700]  </TASK>'
mark='[   60.000000] kverbs-vm: command started'
report boot_splat_named_not_blamed "first a splat from before the command started (boot)" \
	"has --- splat 1: BUG: KASAN: wild-memory-access in handle_edge_irq" \
	"has last line of the console" <<EOF
$boot_splat
$mark
[  700.000000] last line of the console
EOF
report splat_after_the_command_first "first WARNING: CPU: 1 PID: 321 at kernel/perf/perf.c:99" \
	"has --- splat 1: WARNING: CPU: 1 PID: 321" "has       kverbs_ioctl+0x7/0x8 [kverbs]" \
	"lacks       ? __warn" "lacks handle_edge_irq" <<EOF
$boot_splat
$mark
[   70.000000] some line
$cmd_splat
EOF
# A panic replays the whole log after "Kernel panic": the report starts
# at the replay's splat after its mark.
report panic_replay_after_mark "first WARNING: CPU: 1 PID: 321" \
	"has --- Kernel panic - not syncing: panic_on_warn set" "lacks handle_edge_irq" <<EOF
$boot_splat
$mark
$cmd_splat
[   80.100000] Kernel panic - not syncing: panic_on_warn set
$boot_splat
$mark
$cmd_splat
[   80.100000] Kernel panic - not syncing: panic_on_warn set
EOF
report no_splat_last_lines "lacks splat" "has [  700.000000] the end" <<EOF
$mark
[  700.000000] the end
EOF

# layers NAME STATUS TEXT: scripts/check-layers on the tree $tmp/tree (and
# its objects, with objects) exits STATUS, and with 1 says TEXT.
layers() {
	local name=$1 want=$2 text=$3 rc diag=()
	shift 3
	KV_LAYERS_TOP=${layers_top:-$tmp/tree} "$top/scripts/check-layers" "$@" > "$tmp/out" 2>&1
	rc=$?
	[ $rc = "$want" ] || diag+=("exit status $rc, expected $want: $(cat "$tmp/out")")
	[ -z "$text" ] || grep -qF -- "$text" "$tmp/out" ||
		diag+=("no '$text' in: $(cat "$tmp/out")")
	result "check_layers_$name" "${diag[@]}"
}
# A tree of a few files in kverbs' layers, and its objects (gcc -c).
layer_tree() {
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree/kernel/core" "$tmp/tree/kernel/perf" "$tmp/tree/kernel/ping"
	printf '#include "kverbs.h"\nint kverbs_core_helper(void) { return 0; }\n' > "$tmp/tree/kernel/core/ep.c"
	: > "$tmp/tree/kernel/core/kverbs.h"
	: > "$tmp/tree/kernel/core/cm.h"
	printf '#include "perf.h"\nint kverbs_core_helper(void);\nint kverbs_perf_helper(void) { return kverbs_core_helper(); }\n' \
		> "$tmp/tree/kernel/perf/perf.c"
	printf '#include "perf.h"\nint kverbs_perf_helper(void);\nint kverbs_perf_cmd(void) { return kverbs_perf_helper(); }\n' \
		> "$tmp/tree/kernel/perf/perf_cmd.c"
	: > "$tmp/tree/kernel/perf/perf.h"
	: > "$tmp/tree/kernel/ping/ping.h"
	printf '#include "ping.h"\nint kverbs_ping_helper(void) { return 0; }\n' > "$tmp/tree/kernel/ping/ping.c"
	printf '#include "kverbs.h"\n#include "perf.h"\nint kverbs_perf_cmd(void);\nint main_entry(void) { return kverbs_perf_cmd(); }\n' \
		> "$tmp/tree/kernel/main.c"
}
layer_objects() {
	local c
	for c in $(cd "$tmp/tree" && find kernel -name '*.c'); do
		mkdir -p "$tmp/build/$(dirname "$c")"
		gcc -c -I"$tmp/tree/kernel/$(dirname "${c#kernel/}")" -I"$tmp/tree/kernel/core" \
			-I"$tmp/tree/kernel/perf" -I"$tmp/tree/kernel/ping" \
			-o "$tmp/build/${c%.c}.o" "$tmp/tree/$c" || return 1
	done
}
layers_top=$top layers real_tree_control 0 ""
layer_tree
rm -rf "$tmp/build"; layer_objects
layers crafted_control 0 "" "$tmp/build"
layer_tree
printf '#include "perf.h"\n' >> "$tmp/tree/kernel/core/ep.c"
layers core_includes_a_test_fails 1 "core includes perf's perf.h"
layer_tree
printf '#include "ping.h"\n' >> "$tmp/tree/kernel/perf/perf.c"
layers test_includes_another_fails 1 "perf includes ping's ping.h"
layer_tree
printf '#include "cm.h"\n' >> "$tmp/tree/kernel/perf/perf.c"
layers private_header_fails 1 "includes cm.h, which core keeps to itself"
layer_tree
printf 'int kverbs_perf_helper(void);\nint kverbs_core_up(void) { return kverbs_perf_helper(); }\n' \
	>> "$tmp/tree/kernel/core/ep.c"
rm -rf "$tmp/build"; layer_objects
layers core_calls_a_test_fails 1 "core calls perf's kverbs_perf_helper()" "$tmp/build"
layer_tree
printf 'int kverbs_perf_cmd(void);\nint kverbs_perf_back(void) { return kverbs_perf_cmd(); }\n' \
	>> "$tmp/tree/kernel/perf/perf.c"
rm -rf "$tmp/build"; layer_objects
layers helper_calls_its_command_fails 1 "only the top calls a command" "$tmp/build"

echo "KTAP version 1"
echo "1..$n"
printf '%s\n' "${results[@]}"
exit $failed
