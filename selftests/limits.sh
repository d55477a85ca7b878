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

ktap_main test_max_sessions test_max_pinned_mb test_max_msg_size_is_enforced_by_the_module \
	test_timeout_ms_range
