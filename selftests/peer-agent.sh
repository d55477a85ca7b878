#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/peer-agent.sh: guest B of a pair (tools/vm/pair).  Sets up
# this guest's end of the wire, A's KV_TYPE (rxe0 or siw0) on it and the
# module, says so in
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

# A's driver and knobs first: A boots alongside, and on the debug
# lane's kernel under a loaded host that takes minutes.
# (Not in a subshell: what a.env sets must stay set here.)
if ! kv_pair_env_adopt 1800 > "$KV_TMP/setup.out" 2>&1 ||
   ! kv_pair_setup >> "$KV_TMP/setup.out" 2>&1; then
	why=$(<"$KV_TMP/setup.out")
	echo "$why" > "$KV_PAIR/b.failed"
	echo "peer-agent: $why"
	exit 1
fi
# What the kernel logs from here on is the tests' business; a test asks
# for it with kv_splats from this line on.
KV_DMESG_BASE=$(dmesg | wc -l)
export KV_DMESG_BASE
# So is what kmemleak finds (the debug lane's kernel): boot's is not.
kv_kmemleak_forget
# A B booted again (tools/vm/pair, host/boot-b) finds the requests of
# the B before it: they are not its own.
declare -A running
for f in "$KV_PAIR/req"/*.cmd; do
	[ -e "$f" ] && running[${f%.cmd}]="done"
done
uname -r > "$KV_PAIR/b.ready.tmp" && mv "$KV_PAIR/b.ready.tmp" "$KV_PAIR/b.ready"
echo "peer-agent: $(uname -r) ready on $KV_ADDR, $KV_DEV (${KV_MTU:-default} MTU)"

# One request, as a job of this shell: a subshell, which has lib.sh
# already and starts no interpreter.  Job control gives each job a
# process group of its own, whose id it writes to pid, which a kill
# request signals whole; and leaves SIGINT to the job.
set -m
kv_agent_run() {
	local d=$1
	mkdir "$d" && cd "$d" || exit
	echo "$BASHPID" > pid
	# shellcheck source=/dev/null # A's request, written at run time.
	( . "$d.cmd" ) >out 2>err </dev/null
	echo "$?" > rc
}

# kv_sleep without a process each time: a read from a FIFO nobody writes.
# shellcheck disable=SC2034 # KV_SLEEP_FD: read by lib.sh's kv_sleep
mkfifo "$KV_TMP/sleep" && exec {KV_SLEEP_FD}<>"$KV_TMP/sleep"
while [ ! -e "$KV_PAIR/a.done" ]; do
	for f in "$req"/*.cmd; do
		# No request yet: the pattern itself.
		[ -e "$f" ] || continue
		d=${f%.cmd}
		[ -n "${running[$d]+x}" ] && continue
		# Whole: its last line is there.
		last=
		while IFS= read -r line; do last=$line; done < "$f" 2>/dev/null
		[ "$last" = "#end" ] || continue
		running[$d]=
		kv_agent_run "$d" &
	done
	for d in "${!running[@]}"; do
		[ "${running[$d]}" = "done" ] && continue
		if [ -s "$d/rc" ]; then
			running[$d]="done"
		elif [ -e "$d/kill" ] && [ -z "${running[$d]}" ] && read -r pid < "$d/pid"; then
			kill -KILL -- "-$pid" 2>/dev/null
			# Its writer of rc is gone with it.
			echo 137 > "$d/rc"
			running[$d]=killed
		fi
	done 2>/dev/null
	kv_sleep 0.1
done
for d in "${!running[@]}"; do
	[ "${running[$d]}" = "done" ] || { read -r pid < "$d/pid" && kill -KILL -- "-$pid"; } 2>/dev/null
done
echo "peer-agent: A is done"
exit 0
