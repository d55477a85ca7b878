# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# scripts/units.sh, sourced: units of work taken by workers, as
# scripts/check runs its guests, pairs and bench two at a time.
#
# The caller sets
#   units_dir     a directory of its own for the units' state
#   units         the units, an array, in the order they are taken
# and defines run_unit UNIT, which runs one and leaves its exit code in
# $units_dir/unit-UNIT.rc (and whatever else it keeps there).
#
#   units_start JOBS [LOCK]  starts JOBS workers.  Each takes the next
#                            unit not taken yet until none is left.
#                            Every worker but the first starts only once
#                            the lock file LOCK is free (flock), and not
#                            at all if the others took every unit first:
#                            the lock is held by whatever else keeps a
#                            core busy meanwhile.
#   units_wait NAME          returns once $units_dir/unit-NAME.rc is
#                            there (0), or no worker is left to write it
#                            (1).
#   units_end                waits for the workers.
#
# units_poll: how often a waiting worker and units_wait look, in
# seconds (default 2).
# shellcheck disable=SC2154 # units_dir and units are the caller's
units_pids=()

# units_worker [LOCK]: takes units until none is left; with LOCK, only
# once LOCK is free, or never if every unit was taken meanwhile.
units_worker() {
	local i lock=${1:-}
	while [ -n "$lock" ] && ! flock -n "$lock" true; do
		[ "$(cat "$units_dir/units.next")" -lt "${#units[@]}" ] || return 0
		sleep "${units_poll:-2}"
	done
	[ -z "$lock" ] || echo "units: a worker starts, $lock being free" >&2
	while :; do
		# shellcheck disable=SC2016
		i=$(flock "$units_dir/units.lock" bash -c \
			'i=$(cat "$1"); echo $((i + 1)) > "$1"; echo "$i"' _ "$units_dir/units.next")
		[ "$i" -lt "${#units[@]}" ] || return 0
		run_unit "${units[$i]}"
	done
}

units_start() {
	local jobs=$1 lock=${2:-} w
	units_pids=()
	echo 0 > "$units_dir/units.next"
	for ((w = 0; w < jobs; w++)); do
		if [ $w -gt 0 ] && [ -n "$lock" ]; then
			units_worker "$lock" &
		else
			units_worker &
		fi
		units_pids+=($!)
	done
}

units_wait() {
	local pid alive
	while [ ! -f "$units_dir/unit-$1.rc" ]; do
		alive=0
		for pid in "${units_pids[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		[ $alive = 1 ] || { [ -f "$units_dir/unit-$1.rc" ]; return; }
		sleep "${units_poll:-2}"
	done
}

units_end() {
	[ ${#units_pids[@]} -eq 0 ] || wait "${units_pids[@]}"
}
