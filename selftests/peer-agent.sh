#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/peer-agent.sh: guest B of a pair (tools/vm/pair).  Sets up
# this guest's end of the wire, rxe0 on it and the module, says so in
# the pair directory, then runs the requests guest A's suites drop
# there until A is done.  The protocol is described in lib.sh, above
# kv_cmdline.
. "$(dirname "$0")/lib.sh"
set -u

kv_pair_env || exit 1
module=$KV_TOP/build/$(uname -r)/kernel/kverbs.ko
[ -f "$module" ] || module=$KV_TOP/kernel/kverbs.ko
export KV_MODULE=$module KV_TOP KV_TYPE KV_DEV
# A copy, as run.sh does: a rebuild on the host must not change it.
bin=$(mktemp -d /tmp/kverbs-bin.XXXXXX)
cp "$KV_TOP/tools/kverbs/kverbs" "$bin/" 2>/dev/null
export KVERBS=$bin/kverbs
req=$KV_PAIR/req

if ! why=$(kv_pair_setup 2>&1); then
	echo "$why" > "$KV_PAIR/b.failed"
	echo "peer-agent: $why"
	exit 1
fi
# What the kernel logs from here on is the tests' business; a test asks
# for it with kv_splats from this line on.
KV_DMESG_BASE=$(dmesg | wc -l)
export KV_DMESG_BASE
uname -r > "$KV_PAIR/b.ready.tmp" && mv "$KV_PAIR/b.ready.tmp" "$KV_PAIR/b.ready"
echo "peer-agent: $(uname -r) ready on $KV_ADDR (${KV_MTU:-default} MTU)"

# One request: in its directory, in a session of its own (setsid, not a
# group leader here, calls setsid() itself: its pid is the session's).
kv_agent_run() {
	local d=$1 pid
	cd "$d" || return
	setsid bash -c '. "$KV_TOP/selftests/lib.sh"; . ./cmd' >out 2>err </dev/null &
	pid=$!
	echo "$pid" > pid.tmp && mv pid.tmp pid
	wait "$pid"
	echo $? > rc.tmp && mv rc.tmp rc
}

# kv_sleep without a process each time: a read from a FIFO nobody writes.
mkfifo "$KV_TMP/sleep" && exec {KV_SLEEP_FD}<>"$KV_TMP/sleep"
declare -A started killed
while [ ! -e "$KV_PAIR/a.done" ]; do
	for d in "$req"/*; do
		[ -f "$d/cmd" ] || continue
		id=${d##*/}
		if [ -z "${started[$id]:-}" ]; then
			started[$id]=1
			kv_agent_run "$d" &
		elif [ -e "$d/kill" ] && [ -z "${killed[$id]:-}" ] && [ ! -e "$d/rc" ]; then
			read -r pid < "$d/pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null &&
				killed[$id]=1
		fi
	done
	kv_sleep 0.1
done
for d in "$req"/*; do
	[ -e "$d/rc" ] || { read -r pid < "$d/pid" && kill -KILL -- "-$pid"; } 2>/dev/null
done
echo "peer-agent: A is done"
exit 0
