#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/kverbs/tests/cli.sh: black-box tests of the kverbs command line,
# run on the host without the module.  Usage, usage errors and the exit
# codes that scripts rely on (kverbs --help): 2 for a bad command line,
# 3 when /dev/kverbs cannot be used.  KVERBS names the binary (default:
# the one built next to this directory).  Prints KTAP; exits 0 if every
# test passed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KVERBS=${KVERBS:-$here/../kverbs}

if [ ! -x "$KVERBS" ]; then
	echo "KTAP version 1"
	echo "Bail out! no kverbs binary at $KVERBS (make -C tools/kverbs)"
	exit 1
fi

tmp=$(mktemp -d /tmp/kverbs-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Results are collected and printed after the plan, once they are counted.
results=()
n=0
failed=0

emit() {
	results+=("$1")
}

# A stuck binary must not stall the run; without timeout(1), run it as is.
if command -v timeout >/dev/null; then
	run_limited=(timeout -k 5 20)
else
	run_limited=()
fi

# kv_case NAME STATUS [CHECK...] -- ARG...
#
# Runs "kverbs ARG..." and expects exit STATUS; each CHECK is one of
#	out=TEXT	stdout contains TEXT (a fixed string)
#	err=TEXT	stderr contains TEXT
#	out-lacks=TEXT	stdout does not contain TEXT
#	err-lacks=TEXT	stderr does not contain TEXT
#	out-empty	nothing on stdout
#	err-empty	nothing on stderr
kv_case() {
	local name=$1 want=$2 rc c pat
	local checks=() diag=()

	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		checks+=("$1")
		shift
	done
	shift

	"${run_limited[@]}" "$KVERBS" "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
	rc=$?
	[ "$rc" = "$want" ] || diag+=("exit status $rc, expected $want")
	for c in "${checks[@]}"; do
		case "$c" in
		out=*)
			pat=${c#out=}
			grep -qF -e "$pat" "$tmp/stdout" || diag+=("stdout lacks: $pat")
			;;
		err=*)
			pat=${c#err=}
			grep -qF -e "$pat" "$tmp/stderr" || diag+=("stderr lacks: $pat")
			;;
		out-lacks=*)
			pat=${c#out-lacks=}
			grep -qF -e "$pat" "$tmp/stdout" && diag+=("stdout has: $pat")
			;;
		err-lacks=*)
			pat=${c#err-lacks=}
			grep -qF -e "$pat" "$tmp/stderr" && diag+=("stderr has: $pat")
			;;
		out-empty)
			[ -s "$tmp/stdout" ] && diag+=("stdout is not empty")
			;;
		err-empty)
			[ -s "$tmp/stderr" ] && diag+=("stderr is not empty")
			;;
		*)
			diag+=("bad check '$c' in cli.sh")
			;;
		esac
	done

	n=$((n + 1))
	if [ ${#diag[@]} = 0 ]; then
		emit "ok $n $name"
		return
	fi
	emit "# $name: ran kverbs$(printf ' %q' "$@")"
	for c in "${diag[@]}"; do
		emit "# $name: $c"
	done
	while IFS= read -r c; do
		emit "# stdout: $c"
	done < <(head -n 5 "$tmp/stdout")
	while IFS= read -r c; do
		emit "# stderr: $c"
	done < <(head -n 5 "$tmp/stderr")
	emit "not ok $n $name"
	failed=1
}

# kv_usage_error NAME COMMAND MESSAGE -- ARG...: exit 2, MESSAGE and the
# pointer to COMMAND's help on stderr, and stdout left empty for scripts.
kv_usage_error() {
	local name=$1 cmd=$2 msg=$3

	shift 3
	kv_case "$name" 2 "err=kverbs $cmd: $msg" "err=Try 'kverbs $cmd --help'." \
		out-empty "$@"
}

kv_skip() {
	n=$((n + 1))
	emit "ok $n $1 # SKIP $2"
}

# ---- the top level ----

kv_case no_arguments 2 "err=usage: kverbs COMMAND" out-empty --
for h in long_option:--help command:help short_option:-h; do
	# The usage names both commands and every exit code.
	kv_case "help_${h%%:*}" 0 "out=usage: kverbs COMMAND" out=devices out=ping \
		"out=exit status" "out=  0 " "out=  1 " "out=  2 " "out=  3 " \
		"out=  130 " err-empty -- "${h#*:}"
done
# Every lesson that 'kverbs lesson' lists is named in the usage too.
kv_case lesson_lists_lessons 0 out=unsignaled out=mr_size err-empty -- lesson
while read -r lesson _; do
	kv_case "help_names_lesson_$lesson" 0 "out= $lesson" -- --help
done < <("$KVERBS" lesson)
kv_case version 0 "out=(ABI " err-empty -- --version
kv_case unknown_command 2 "err=kverbs: unknown command 'bogus'" \
	"err=usage: kverbs COMMAND" out-empty -- bogus
# Options belong after the command.
kv_case option_before_command 2 "err=unknown command '--json'" out-empty -- --json devices

# ---- help of the commands ----

for h in long_option:--help short_option:-h; do
	kv_case "ping_help_${h%%:*}" 0 "out=usage: kverbs ping -s" "out=kverbs ping -c -a ADDR" \
		out=--timeout out=--json err-empty -- ping "${h#*:}"
	kv_case "devices_help_${h%%:*}" 0 "out=usage: kverbs devices" out=--json \
		err-empty -- devices "${h#*:}"
done
# Help wins over what is missing, but not over what is wrong before it.
kv_case ping_help_despite_missing_role 0 "out=usage: kverbs ping" err-empty -- ping -v --help
kv_usage_error ping_help_after_unknown_option ping "unknown option '--bogus'" -- ping --bogus --help

# ---- ping usage errors ----

kv_usage_error ping_without_role ping "say -s (server) or -c (client)" -- ping
kv_usage_error ping_without_role_with_address ping "say -s (server) or -c (client)" \
	-- ping -a 127.0.0.1
kv_usage_error ping_server_and_client ping "-s and -c exclude each other" -- ping -s -c
kv_usage_error ping_client_and_server ping "-s and -c exclude each other" \
	-- ping --client -a 127.0.0.1 --server
kv_usage_error ping_client_without_address ping "the client needs the server's address: -a ADDR" \
	-- ping -c
kv_usage_error ping_persistent_client ping "-P is for the server" -- ping -c -a 127.0.0.1 -P
kv_usage_error ping_server_with_source ping "-I is for the client" -- ping -s -I 127.0.0.1
kv_usage_error ping_ud_persistent ping "--ud takes no -P" -- ping --ud -s -P
kv_usage_error ping_ud_no_inv ping "--ud takes no --no-inv" -- ping --ud -c -a 127.0.0.1 --no-inv
kv_usage_error ping_ud_count_zero ping "invalid count 0 with --ud (1 to 1024" \
	-- ping --ud -c -a 127.0.0.1 -C 0
kv_usage_error ping_ud_count_too_big ping "invalid count 1025 with --ud (1 to 1024" \
	-- ping --ud -s -C 1025
kv_usage_error ping_client_size_below_minimum ping "invalid size 25 (at least 26" \
	-- ping -c -a 127.0.0.1 -S 25
kv_usage_error ping_server_size_below_minimum ping "invalid size 25 (at least 26" \
	-- ping -s -S 25
kv_usage_error ping_size_junk ping "invalid size '10x'" -- ping -c -a 127.0.0.1 -S 10x
kv_usage_error ping_size_fraction ping "invalid size '1.5M'" -- ping -c -a 127.0.0.1 -S 1.5M
kv_usage_error ping_size_overflow ping "invalid size '4G'" -- ping -c -a 127.0.0.1 -S 4G
kv_usage_error ping_port_zero ping "invalid port '0' (1 to 65535)" -- ping -c -a 127.0.0.1 -p 0
kv_usage_error ping_port_too_big ping "invalid port '70000' (1 to 65535)" \
	-- ping -c -a 127.0.0.1 -p 70000
kv_usage_error ping_port_name ping "invalid port 'http'" -- ping -c -a 127.0.0.1 -p http
kv_usage_error ping_count_negative ping "invalid count '-1'" -- ping -c -a 127.0.0.1 -C -1
kv_usage_error ping_count_overflow ping "invalid count '4294967296'" \
	-- ping -c -a 127.0.0.1 -C 4294967296
kv_usage_error ping_timeout_zero ping "invalid timeout '0'" \
	-- ping -c -a 127.0.0.1 --timeout 0
kv_usage_error ping_timeout_below_a_nanosecond ping "invalid timeout '0.0000000001'" \
	-- ping -c -a 127.0.0.1 --timeout 0.0000000001
kv_usage_error ping_timeout_over_an_hour ping "invalid timeout '4000'" \
	-- ping -c -a 127.0.0.1 --timeout 4000
kv_usage_error ping_timeout_negative ping "invalid timeout '-1'" \
	-- ping -c -a 127.0.0.1 --timeout -1
kv_usage_error ping_timeout_hex ping "invalid timeout '0x10'" \
	-- ping -c -a 127.0.0.1 --timeout 0x10
kv_usage_error ping_unknown_long_option ping "unknown option '--bogus'" \
	-- ping -c -a 127.0.0.1 --bogus
kv_usage_error ping_unknown_short_option ping "unknown option '-x'" -- ping -c -a 127.0.0.1 -x
# Inside a group: the letter, not the argument before the group.
kv_usage_error ping_unknown_option_in_group ping "unknown option '-x'" -- ping -xc -a 127.0.0.1
kv_usage_error ping_value_for_flag ping "unknown option '--json=yes'" \
	-- ping -c -a 127.0.0.1 --json=yes
kv_usage_error ping_missing_value ping "option '-a' needs a value" -- ping -c -a
kv_usage_error ping_missing_long_value ping "option '--timeout' needs a value" \
	-- ping -c -a 127.0.0.1 --timeout
kv_usage_error ping_extra_argument ping "unexpected argument 'extra'" \
	-- ping -c -a 127.0.0.1 extra
# Names that no resolver can take (a space, a '!'), so DNS is not asked.
kv_usage_error ping_bad_address ping "cannot resolve address 'no such host!'" \
	-- ping -c -a "no such host!"
kv_usage_error ping_bad_source_address ping "cannot resolve source address 'no such host!'" \
	-- ping -c -a 127.0.0.1 -I "no such host!"
kv_usage_error ping_source_family_mismatch ping "-I and -a must both be IPv4 or both IPv6" \
	-- ping -c -a 127.0.0.1 -I ::1

# ---- devices usage errors ----

kv_usage_error devices_unknown_option devices "unknown option '--bogus'" -- devices --bogus
kv_usage_error devices_unknown_option_in_group devices "unknown option '-x'" -- devices -xj
kv_usage_error devices_extra_argument devices "unexpected argument 'extra'" -- devices extra

# ---- the latency and atomic tests ----

for c in read_lat atomic_lat atomic_bw write_lat send_lat; do
	kv_case "${c}_help" 0 "out=usage: kverbs $c" "out=perftest's ib_$c" out=--json \
		err-empty -- "$c" --help
	kv_case "top_level_help_lists_$c" 0 "out=  $c " -- --help
done
kv_case atomic_help_names_the_types 0 "out=-A, --atomic_type TYPE" out=FETCH_AND_ADD \
	out=CMP_AND_SWAP -- atomic_bw --help
kv_usage_error atomic_bad_type atomic_bw \
	"invalid atomic type 'BOGUS' (FETCH_AND_ADD or CMP_AND_SWAP)" -- atomic_bw -A BOGUS 1.2.3.4
kv_usage_error atomic_type_missing atomic_lat "option '-A' needs a value" -- atomic_lat -A
kv_usage_error atomic_type_on_write_bw write_bw "-A is for the atomic tests" \
	-- write_bw -A FETCH_AND_ADD 1.2.3.4
kv_usage_error atomic_type_on_read_lat read_lat "-A is for the atomic tests" \
	-- read_lat --atomic_type=CMP_AND_SWAP 1.2.3.4
kv_usage_error atomic_size_not_8 atomic_bw "invalid size '16': atomic operations are on 8-byte words" \
	-- atomic_bw -s 16 1.2.3.4
kv_usage_error atomic_server_size_not_8 atomic_lat "invalid size '64k'" -- atomic_lat -s 64k
kv_usage_error latency_depth_not_1 read_lat "invalid TX depth '2': a latency test has one operation in flight" \
	-- read_lat -t 2 1.2.3.4
kv_usage_error latency_iters_and_duration atomic_lat "-n and -D exclude each other" \
	-- atomic_lat -n 10 -D 1 1.2.3.4
kv_case pingpong_help_both_sides_check 0 "out=both sides check" -- write_lat --help
kv_usage_error pingpong_depth_not_1 send_lat "invalid TX depth '4': a latency test" \
	-- send_lat -t 4 1.2.3.4
kv_usage_error atomic_type_on_write_lat write_lat "-A is for the atomic tests" \
	-- write_lat -A FETCH_AND_ADD 1.2.3.4

# ---- a server's ceilings ----

kv_case serve_help_ceilings 0 "out=--max-duration SEC" "out=--max-iters N" out=--no-reverse \
	out=perf_max_duration_s out=perf_max_iterations err-empty -- serve --help
kv_case write_bw_help_ceilings 0 "out=--max-duration SEC" "out=--max-iters N" \
	out=--no-reverse err-empty -- write_bw --help
# A latency test has no reverse direction to refuse.
kv_case read_lat_help_no_no_reverse 0 "out=--max-duration SEC" -- read_lat --help
kv_usage_error ceiling_on_client write_bw "--max-duration is for the server" \
	-- write_bw --max-duration 10 1.2.3.4
kv_usage_error no_reverse_on_client send_bw "--no-reverse is for the server" \
	-- send_bw --no-reverse 1.2.3.4
kv_usage_error no_reverse_with_bidir write_bw "--no-reverse and -b exclude each other" \
	-- write_bw --no-reverse -b
kv_usage_error no_reverse_on_latency write_lat "--no-reverse is for the bandwidth tests" \
	-- write_lat --no-reverse
kv_usage_error serve_max_duration_zero serve \
	"invalid maximum duration '0' (seconds, more than 0, at most 86400)" \
	-- serve --max-duration 0
kv_usage_error serve_max_duration_over_a_day serve "invalid maximum duration '90000'" \
	-- serve --max-duration 90000
kv_usage_error serve_max_iters_zero serve "invalid maximum iterations '0' (1 to 4294967295)" \
	-- serve --max-iters 0
kv_usage_error serve_max_iters_not_a_number serve "invalid maximum iterations 'lots'" \
	-- serve --max-iters lots

# ---- busy polling is the server's to allow ----

kv_case serve_help_busy_poll 0 out=--busy-poll "out=refuses write_lat" err-empty -- serve --help
kv_case send_bw_help_busy_poll 0 out=--busy-poll "out=whatever the client asks" \
	"out=server sleeps unless --busy-poll" -- send_bw --help
kv_case write_lat_help_busy_poll_implied 0 out=--busy-poll "out=implied: a write_lat" \
	-- write_lat --help
kv_usage_error busy_poll_on_client send_bw "--busy-poll is for the server: a client busy-polls unless -e" \
	-- send_bw --busy-poll 1.2.3.4
kv_usage_error busy_poll_with_events send_lat "--busy-poll and -e exclude each other" \
	-- send_lat --busy-poll -e
kv_usage_error serve_busy_poll_with_events serve "--busy-poll and -e exclude each other" \
	-- serve -e --busy-poll
kv_usage_error busy_poll_value serve "unknown option '--busy-poll=1'" -- serve --busy-poll=1
kv_usage_error poll_unknown write_bw "invalid --poll 'fast' (direct, softirq, workqueue or unbound)" \
	-- write_bw --poll fast 1.2.3.4
kv_usage_error poll_missing write_bw "option '--poll' needs a value" -- write_bw --poll
kv_usage_error cq_pool_direct write_bw \
	"--cq-pool and --poll direct exclude each other: ib_core's CQ pool has softirq and workqueue CQs, none polled directly" \
	-- write_bw --cq-pool --poll direct 1.2.3.4
kv_usage_error dim_direct send_lat \
	"--dim and --poll direct exclude each other: interrupt moderation needs completion interrupts, which a directly polled CQ has none of" \
	-- send_lat --poll direct --dim
kv_usage_error events_with_poll write_bw "-e is --poll softirq: it excludes --poll workqueue" \
	-- write_bw -e --poll workqueue 1.2.3.4
kv_usage_error busy_poll_with_poll send_bw \
	"--busy-poll and --poll exclude each other: the server polls directly" \
	-- send_bw --busy-poll --poll unbound
kv_usage_error busy_poll_with_cq_pool send_bw \
	"--busy-poll and --cq-pool exclude each other: the server polls directly" \
	-- send_bw --busy-poll --cq-pool
kv_usage_error write_lat_poll write_lat \
	"--poll is not for write_lat: each side sees the other's WRITE only by polling its memory" \
	-- write_lat --poll workqueue 1.2.3.4
kv_usage_error write_lat_cq_pool write_lat \
	"--cq-pool is not for write_lat: each side sees the other's WRITE only by polling its memory" \
	-- write_lat --cq-pool
kv_usage_error serve_poll_unknown serve "invalid --poll 'irq' (direct, softirq, workqueue or unbound)" \
	-- serve --poll irq
kv_usage_error serve_cq_pool_direct serve \
	"--cq-pool and --poll direct exclude each other: ib_core's CQ pool has softirq and workqueue CQs, none polled directly" \
	-- serve --poll direct --cq-pool
kv_case serve_help_poll 0 "out=--poll POLICY" out=--cq-pool out=--dim err-empty -- serve --help
kv_case write_bw_help_poll 0 "out=--poll POLICY" out=--cq-pool out=--dim err-empty -- write_bw --help

# ---- immediate data: the tests that WRITE or SEND only ----

kv_case write_bw_help_imm 0 out=--imm "out=--write_with_imm  the same" -- write_bw --help
kv_case send_lat_help_imm 0 "out=--imm             SEND with immediate data" -- send_lat --help
for c in read_bw read_lat atomic_bw atomic_lat; do
	kv_usage_error "${c}_imm" "$c" "--imm is for write_bw, write_lat, send_bw and send_lat: $c carries no immediate data" \
		-- "$c" --imm 1.2.3.4
done
kv_usage_error read_bw_write_with_imm read_bw "--write_with_imm is for write_bw and write_lat" \
	-- read_bw --write_with_imm 1.2.3.4
kv_usage_error send_bw_write_with_imm send_bw "--write_with_imm is for write_bw and write_lat: use --imm" \
	-- send_bw --write_with_imm 1.2.3.4

# ---- post lists, CQ moderation, inline data: the client's ----

kv_case write_bw_help_post 0 "out=-l, --post_list N" "out=-Q, --cq-mod N" \
	"out=-I, --inline_size SIZE" err-empty -- write_bw --help
kv_case read_bw_help_no_inline 0 "out=-l, --post_list N" out-lacks=--inline_size err-empty \
	-- read_bw --help
kv_case send_lat_help_no_post_list 0 "out=-I, --inline_size SIZE" out-lacks=--post_list \
	err-empty -- send_lat --help
for c in read_lat atomic_lat write_lat send_lat; do
	kv_usage_error "${c}_post_list" "$c" \
		"-l is for the bandwidth tests: a latency test has one operation in flight" \
		-- "$c" -l 4 1.2.3.4
	kv_usage_error "${c}_cq_mod" "$c" \
		"-Q is for the bandwidth tests: a latency test has one operation in flight" \
		-- "$c" -Q 4 1.2.3.4
done
for c in read_bw read_lat; do
	kv_usage_error "${c}_inline" "$c" \
		"-I is for write_bw, write_lat, send_bw and send_lat: an RDMA READ carries no data of the requester's" \
		-- "$c" -I 64 1.2.3.4
done
for c in atomic_bw atomic_lat; do
	kv_usage_error "${c}_inline" "$c" \
		"-I is for write_bw, write_lat, send_bw and send_lat: an atomic operation carries no message" \
		-- "$c" -I 64 1.2.3.4
done
kv_usage_error post_list_zero write_bw "invalid post list '0' (1 to 8192)" -- write_bw -l 0 1.2.3.4
kv_usage_error cq_mod_too_big send_bw "invalid CQ moderation '8193' (1 to 8192)" \
	-- send_bw -Q 8193 1.2.3.4
kv_usage_error inline_too_big write_bw "invalid inline size '5000' (0 to 4096)" \
	-- write_bw -I 5000 1.2.3.4
kv_usage_error post_list_over_depth write_bw "-l 64 is more than the TX depth, 32 (-t)" \
	-- write_bw -t 32 -l 64 1.2.3.4
kv_usage_error cq_mod_over_default_depth atomic_bw "-Q 129 is more than the TX depth, 128 (-t)" \
	-- atomic_bw -Q 129 1.2.3.4
kv_usage_error post_list_server write_bw \
	"-l is for the client: its request brings it to the server where the server posts too" \
	-- write_bw -l 4
kv_usage_error inline_server send_lat \
	"-I is for the client: its request brings it to the server where the server posts too" \
	-- send_lat -I 64
# ---- rdma_rw: the tests that READ or WRITE in bulk ----

kv_case write_bw_help_rw 0 "out=--rw              RDMA WRITE through ib_core's rdma_rw API" \
	"out=Not with --imm, -l, -Q or -I: rdma_rw builds," -- write_bw --help
kv_case read_lat_help_rw 0 "out=--rw              RDMA READ through ib_core's rdma_rw API" \
	-- read_lat --help
for c in send_bw send_lat atomic_bw atomic_lat write_lat; do
	kv_case "${c}_help_no_rw" 0 out-lacks=--rw err-empty -- "$c" --help
done
# ---- remote invalidation: the tests whose rounds hand a key back ----

kv_case read_bw_help_inv 0 "out=--inv             with --validate" "out=invalidate of the client's own sink" -- read_bw --help
kv_case write_bw_help_inv 0 "out=--inv             with --validate" -- write_bw --help
for c in send_bw send_lat write_lat atomic_bw atomic_lat; do
	kv_usage_error "${c}_inv" "$c" "--inv is for write_bw, read_bw and read_lat: $c has no rounds that end with a key handed back" \
		-- "$c" --inv 1.2.3.4
done
kv_usage_error write_bw_inv_no_validate write_bw "--inv needs --validate: the key is handed back at the end of each of its rounds" \
	-- write_bw --inv 1.2.3.4
kv_usage_error write_bw_inv_imm write_bw "--inv and --imm exclude each other: the receives of WRITEs with immediate data lie in the buffer whose key --inv invalidates" \
	-- write_bw --inv --imm --validate 1.2.3.4
# ---- phases: the latency tests whose round trip ends in a completion handler ----

kv_case read_lat_help_phases 0 "out=--phases          client: after the latency table" \
	"out=completion's handler, then to the test's thread" -- read_lat --help
kv_case send_lat_help_phases 0 "out=--phases          client: after the latency table" \
	"out=the whole round trip (not halved, as the latency" -- send_lat --help
kv_case atomic_lat_help_phases 0 "out=--phases          client: after the latency table" \
	-- atomic_lat --help
for c in write_bw read_bw send_bw atomic_bw; do
	kv_case "${c}_help_no_phases" 0 out-lacks=--phases err-empty -- "$c" --help
	kv_usage_error "${c}_phases" "$c" "--phases is for read_lat, atomic_lat and send_lat: a bandwidth test times no single operation" \
		-- "$c" --phases 1.2.3.4
done
kv_case write_lat_help_no_phases 0 out-lacks=--phases err-empty -- write_lat --help
kv_usage_error write_lat_phases write_lat "--phases is for read_lat, atomic_lat and send_lat: write_lat's round trip ends when the server's WRITE lands in memory the client polls, with no completion handler to time" \
	-- write_lat --phases 1.2.3.4
kv_usage_error read_lat_phases_server read_lat "--phases is for the client: the server times nothing" \
	-- read_lat --phases

# ---- perftest's habits ----

# Same names, options and port as perftest, not the same protocol: say so.
for c in write_bw read_bw send_bw read_lat atomic_lat atomic_bw write_lat send_lat serve; do
	kv_case "${c}_help_not_perftest_wire" 0 "out=Not wire-compatible with perftest" \
		err-empty -- "$c" --help
done
kv_case write_bw_help_perftest_no_ops 0 "out=-F, --CPU-freq" "out=-R, --rdma_cm" \
	out=--report-both out=--out_json out=--out_json_file -- write_bw --help
# rdma_cm picks device, port and GID: perftest's ways to name them are refused, saying why.
kv_usage_error perftest_device_client write_bw "-d DEVICE is perftest's; kverbs does not need it: rdma_cm picks" \
	-- write_bw -d mlx5_0 1.2.3.4
kv_usage_error perftest_device_server read_bw "-d DEVICE is perftest's" -- read_bw -d mlx5_0
kv_usage_error perftest_device_attached send_bw "-d DEVICE is perftest's" -- send_bw -dmlx5_0 1.2.3.4
kv_usage_error perftest_device_unresolvable write_bw "-d DEVICE is perftest's" \
	-- write_bw -d "no such device!"
kv_usage_error perftest_device_long read_lat "-d DEVICE is perftest's" -- read_lat --ib-dev=rxe0 1.2.3.4
kv_usage_error perftest_gid_index write_bw "-x GID_INDEX is perftest's" -- write_bw -x 3 1.2.3.4
kv_usage_error perftest_ib_port atomic_bw "-i PORT is perftest's" -- atomic_bw -i 1 1.2.3.4
kv_usage_error perftest_ib_port_long write_lat "-i PORT is perftest's" -- write_lat --ib-port=1
kv_usage_error perftest_run_infinitely write_bw "--run_infinitely is perftest's; kverbs reports once" \
	-- write_bw --run_infinitely -D 1 1.2.3.4
kv_usage_error perftest_out_json_file_empty write_bw "--out_json_file needs a file name" \
	-- write_bw --out_json_file= 1.2.3.4
# ---- the refusals of the option tables that the sections above leave out ----

# A value each row's parser refuses.
kv_usage_error perf_iters_zero write_bw "invalid iterations '0' (at least 1)" \
	-- write_bw -n 0 1.2.3.4
kv_usage_error perf_duration_zero read_bw \
	"invalid duration '0' (seconds, more than 0, at most a day)" -- read_bw -D 0 1.2.3.4
kv_usage_error perf_port_zero send_bw "invalid port '0' (1 to 65535)" -- send_bw -p 0 1.2.3.4
kv_usage_error perf_timeout_zero write_lat "invalid timeout '0'" \
	-- write_lat --timeout 0 1.2.3.4
kv_usage_error srq_wr_zero send_bw "invalid --srq-wr '0' (1 to " -- send_bw --srq-wr 0
kv_usage_error srq_limit_zero send_lat "invalid --srq-limit '0' (1 to " -- send_lat --srq-limit 0
kv_usage_error serve_jobs_zero serve "invalid jobs '0' (1 to 64)" -- serve -j 0
kv_usage_error serve_count_zero serve "invalid count '0' (at least 1)" -- serve -C 0
# A row the test does not take (.takes).
kv_usage_error bidir_on_latency read_lat \
	"-b is for the bandwidth tests: a latency test times the client's own operations" \
	-- read_lat -b 1.2.3.4
kv_usage_error events_on_write_lat write_lat \
	"-e is not for write_lat: each side sees the other's WRITE only by polling its memory" \
	-- write_lat -e 1.2.3.4
for o in --srq --use-srq --srq-wr=16 --srq-limit=8; do
	kv_usage_error "write_bw_${o%%=*}" write_bw \
		"--srq is for send_bw's and send_lat's server: write_bw's server takes no SENDs" \
		-- write_bw "$o"
done
# A row the role does not take (.role).
kv_usage_error srq_on_client send_lat \
	"--srq is for the server: how it takes its receives is its own choice" \
	-- send_lat --srq-wr 16 1.2.3.4
kv_usage_error cq_mod_server write_bw \
	"-Q is for the client: its request brings it to the server where the server posts too" \
	-- write_bw -Q 4
kv_usage_error max_iters_on_client read_lat \
	"--max-iters is for the server: the client asks, the server sets ceilings" \
	-- read_lat --max-iters 5 1.2.3.4
# Rows that exclude each other (.excludes), -c UD's every one.
for o in -b -q=2 -a --imm -l=2 -Q=2 --cq-pool --dim; do
	kv_usage_error "ud_and_${o%%=*}" send_bw \
		"-c UD and ${o%%=*} exclude each other: datagrams go one SEND per post on a QP and a plain CQ of their own" \
		-- send_bw -c UD ${o/=/ } 1.2.3.4
done
kv_usage_error ud_and_phases send_lat "-c UD and --phases exclude each other" \
	-- send_lat --phases --connection=UD 1.2.3.4
# What the rows cannot say: values against each other.
kv_usage_error srq_limit_above_default_wr send_bw "--srq-limit 300 is above the SRQ's receives, 256" \
	-- send_bw --srq-limit 300
kv_usage_error serve_srq_limit_above_wr serve "--srq-limit 20 is above the SRQ's receives, 16" \
	-- serve --srq-wr 16 --srq-limit 20
kv_usage_error busy_poll_with_dim send_bw \
	"--busy-poll and --dim exclude each other: the server polls directly" \
	-- send_bw --busy-poll --dim
kv_usage_error write_lat_dim write_lat \
	"--dim is not for write_lat: each side sees the other's WRITE only by polling its memory" \
	-- write_lat --dim 1.2.3.4
# The table's parser: what getopt_long() rejects, and what is left.
kv_usage_error perf_unknown_option read_bw "unknown option '--bogus'" -- read_bw --bogus 1.2.3.4
kv_usage_error perf_unknown_option_in_group atomic_lat "unknown option '-z'" \
	-- atomic_lat -ez 1.2.3.4
kv_usage_error perf_extra_argument atomic_bw "unexpected argument '5.6.7.8'" \
	-- atomic_bw 1.2.3.4 5.6.7.8
kv_usage_error perftest_gid_index_long write_bw "-x GID_INDEX is perftest's" \
	-- write_bw --gid-index=1 1.2.3.4
kv_usage_error serve_unknown_option serve "unknown option '--bogus'" -- serve --bogus
kv_usage_error serve_extra_argument serve "unexpected argument '5.6.7.8'" -- serve 1.2.3.4 5.6.7.8

# devices' -j is --json, as its help says; elsewhere -j is --jobs.
kv_case devices_help_json_short_option 0 "out=  -j, --json" "out=elsewhere -j is" \
	err-empty -- devices --help
kv_case ping_help_j_is_jobs 0 "out=  -j, --jobs N" -- ping --help

# ---- without the module: exit 3 and what to do about it ----

without_module=(
	devices_without_module "devices"
	devices_json_without_module "devices --json"
	ping_client_without_module "ping -c -a 127.0.0.1"
	ping_client_ipv6_without_module "ping -c -a ::1 -p 1 -C 3 -S 64k --timeout 0.5"
	ping_minimum_size_without_module "ping -c -a 127.0.0.1 -S 26"
	ping_server_without_module "ping -s"
	ping_persistent_server_without_module "ping -s -a :: -P -S 1M"
	read_lat_client_without_module "read_lat -t 1 -D 2 127.0.0.1"
	atomic_lat_client_without_module "atomic_lat -A CMP_AND_SWAP -s 8 127.0.0.1"
	atomic_bw_server_without_module "atomic_bw --json"
	write_lat_client_without_module "write_lat -s 4096 --validate 127.0.0.1"
	send_lat_server_without_module "send_lat --json"
	serve_ceilings_without_module "serve --max-duration 10 --max-iters 1000 --no-reverse"
	write_bw_server_ceilings_without_module "write_bw --max-duration 1.5 --no-reverse"
	serve_busy_poll_without_module "serve --busy-poll -C 1 --json"
	send_bw_server_busy_poll_without_module "send_bw --busy-poll -b --json"
	# perftest's no-ops are taken, and -d before an address is --debug.
	write_bw_perftest_no_ops_without_module "write_bw -F -R --report-both -b 127.0.0.1"
	read_bw_out_json_without_module "read_bw --out_json --out_json_file=/nonexistent/x.json 127.0.0.1"
	send_bw_debug_then_address_without_module "send_bw -d 127.0.0.1"
	write_bw_long_value_then_debug_address_without_module "write_bw --timeout 5 -d 127.0.0.1"
	devices_old_json_spelling_without_module "devices -j"
	# Defaults count as not given: -c RC anywhere, -q 1 and -I 0 with -c UD.
	write_bw_rc_without_module "write_bw -c RC 127.0.0.1"
	send_bw_ud_one_qp_without_module "send_bw -c UD -q 1 127.0.0.1"
	send_lat_ud_no_inline_without_module "send_lat -c UD -I 0 127.0.0.1"
	# A server takes either connection type: its client says.
	send_bw_server_ud_bidir_without_module "send_bw -c UD -b"
)
for ((i = 0; i < ${#without_module[@]}; i += 2)); do
	name=${without_module[i]}
	if [ -e /dev/kverbs ]; then
		# With the module these would really run, or wait for clients.
		kv_skip "$name" "/dev/kverbs exists: the kverbs module is loaded"
		continue
	fi
	# Word splitting of the command is intended: no argument has spaces.
	# shellcheck disable=SC2086
	kv_case "$name" 3 "err=kverbs: cannot open /dev/kverbs: is the kverbs module loaded?" \
		out-empty -- ${without_module[i + 1]}
done

# A newer tool on an older module (tests/oldmod.so, preloaded, stands
# for one that reports every feature but FEATURE): the option that needs
# it is refused with its name, exit 3, before anything is asked of the
# module; the control, a module with the feature, gets past the check
# (to the stand-in's ENOTTY for the command itself).
oldmod=$here/oldmod.so
# KVERBS_FEATURE_* of include/uapi/kverbs.h: all, and the ones tested.
all_features=$((0x1ffffff))
older_module=(
	ping_ud $((1 << 22)) "--ud (no datagram ping)" "ping -c --ud -a 127.0.0.1"
	send_bw_ud $((1 << 24)) "-c UD (datagrams)" "send_bw -c UD 127.0.0.1"
	send_lat_ud $((1 << 24)) "-c UD (datagrams)" "send_lat -c UD 127.0.0.1"
	send_bw_srq $((1 << 19)) "--srq (shared receive queues)" "send_bw --srq"
	serve_srq $((1 << 19)) "--srq (shared receive queues)" "serve --srq -C 1"
	write_bw_imm $((1 << 14)) "--imm (immediate data)" "write_bw --imm 127.0.0.1"
	read_bw_inv $((1 << 18)) "--inv (remote invalidation)" "read_bw --inv --validate 127.0.0.1"
	read_bw_rw $((1 << 17)) "--rw (rdma_rw contexts)" "read_bw --rw 127.0.0.1"
)
for ((i = 0; i < ${#older_module[@]}; i += 4)); do
	name=${older_module[i]}
	if [ ! -f "$oldmod" ] || [ -e /dev/kverbs ]; then
		kv_skip "${name}_older_module" "no tests/oldmod.so, or the kverbs module is loaded"
		continue
	fi
	# shellcheck disable=SC2086
	KV_OLDMOD_FEATURES=$((all_features & ~older_module[i + 1])) LD_PRELOAD=$oldmod \
		kv_case "${name}_older_module" 3 \
		"err=the kverbs module loaded does not support ${older_module[i + 2]}" \
		out-empty -- ${older_module[i + 3]}
	# shellcheck disable=SC2086
	KV_OLDMOD_FEATURES=$all_features LD_PRELOAD=$oldmod \
		kv_case "${name}_module_with_it" 1 "err-lacks=does not support" \
		-- ${older_module[i + 3]} --timeout 1
done

# -c UD's report counts a stranger's datagrams (foreign) only where the
# module drops them: null from one that takes them for the peer's.
if [ ! -f "$oldmod" ] || [ -e /dev/kverbs ]; then
	kv_skip ud_foreign_older_module "no tests/oldmod.so, or the kverbs module is loaded"
	kv_skip ud_foreign_module_with_it "no tests/oldmod.so, or the kverbs module is loaded"
else
	KV_OLDMOD_FEATURES=$((all_features & ~(1 << 23))) LD_PRELOAD=$oldmod \
		kv_case ud_foreign_older_module 1 'out="foreign":null' \
		-- send_bw -c UD 127.0.0.1 --json --timeout 1
	KV_OLDMOD_FEATURES=$all_features LD_PRELOAD=$oldmod \
		kv_case ud_foreign_module_with_it 1 'out="foreign":0' \
		-- send_bw -c UD 127.0.0.1 --json --timeout 1
fi

echo "KTAP version 1"
echo "1..$n"
printf '%s\n' "${results[@]}"
exit $failed
