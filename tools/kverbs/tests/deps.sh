#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/kverbs/tests/deps.sh: scripts/deps against stand-ins for apt-get,
# dpkg, dpkg-query and id on PATH, so that what it installs for each
# target, and what it does when an index or an install fails, is checked
# on the host without touching its packages.  KTAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
deps=$(cd "$here/../../.." && pwd)/scripts/deps
tmp=$(mktemp -d /tmp/kverbs-deps.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The stand-ins keep their state in $STUB: "installed" (one package a
# line), "arches" (foreign architectures), "calls" (every apt-get and dpkg
# call), "uid"; "update-fails" makes 'apt-get update' fail as a mirror
# mid-sync does, "install-fails" (a package a line) makes an install of
# one of those packages fail.
mkdir -p "$tmp/bin"
cat > "$tmp/bin/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >> "$STUB/calls"
case " $* " in
*" update "*)
	if [ -f "$STUB/update-fails" ]; then
		echo "E: Failed to fetch http://mirror/debian-security/dists/bookworm-security/main/binary-i386/Packages.xz  File has unexpected size (346968 != 368052). Mirror sync in progress?"
		echo "E: Some index files failed to download. They have been ignored, or old ones used instead."
		exit 100
	fi
	exit 0 ;;
*" install "*)
	for p in "$@"; do
		case "$p" in -*|install) continue ;; esac
		if grep -qx "$p" "$STUB/install-fails" 2>/dev/null; then
			echo "E: Unable to locate package $p"
			exit 100
		fi
	done
	for p in "$@"; do
		case "$p" in -*|install) continue ;; esac
		echo "$p" >> "$STUB/installed"
	done
	exit 0 ;;
esac
exit 1
EOF
cat > "$tmp/bin/dpkg-query" <<'EOF'
#!/bin/sh
# dpkg-query -W -f='${Status}' PACKAGE
for p; do :; done
grep -qx "$p" "$STUB/installed" 2>/dev/null || exit 1
printf 'install ok installed'
EOF
cat > "$tmp/bin/dpkg" <<'EOF'
#!/bin/sh
echo "dpkg $*" >> "$STUB/calls"
case "$1" in
--print-foreign-architectures) cat "$STUB/arches" 2>/dev/null ;;
--add-architecture) echo "$2" >> "$STUB/arches" ;;
*) exit 1 ;;
esac
EOF
cat > "$tmp/bin/id" <<'EOF'
#!/bin/sh
cat "$STUB/uid"
EOF
chmod +x "$tmp/bin/"*

n=0
failed=0
# fresh: a machine with nothing installed, running as root.
fresh() {
	export STUB=$tmp/state-$n
	rm -rf "$STUB"
	mkdir -p "$STUB"
	echo 0 > "$STUB/uid"
	: > "$STUB/calls"
}
# run TARGET [ENV...]: scripts/deps TARGET with the stand-ins first on
# PATH; its output in $out, its exit code in $rc.
run() {
	local target=$1
	shift
	out=$(env PATH="$tmp/bin:$PATH" "$@" sh "$deps" "$target" 2>&1)
	rc=$?
}
result() {
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		printf '%s\n' "$out" | sed 's/^/# out: /'
		sed 's/^/# call: /' "$STUB/calls"
		failed=1
	fi
}
# check NAME CONDITION...: one result, ok if every condition holds.
check() {
	local name=$1
	shift
	if "$@"; then result ok "$name"; else result fail "$name"; fi
}
installed() { grep -qx "$1" "$STUB/installed" 2>/dev/null; }
called() { grep -q -- "$1" "$STUB/calls"; }
all() { local c; for c in "$@"; do eval "$c" || return 1; done; }

echo "KTAP version 1"
echo "1..10"

# make demo on a fresh machine whose mirror is mid-sync for an i386 index:
# a warning, and everything the demo needs installed.
fresh
touch "$STUB/update-fails"
run demo
check demo_survives_failed_index all '[ $rc = 0 ]' \
	'installed qemu-system-x86' 'installed linux-image-6.12-amd64' \
	'installed rdmacm-utils' 'installed linux-headers-6.12-amd64' \
	'grep -q "warning: apt-get update could not fetch" <<< "$out"' \
	'grep -q "binary-i386/Packages.xz" <<< "$out"'
check demo_needs_no_i386_nor_check_tools all \
	'! called add-architecture' '! grep -q ":i386" "$STUB/installed"' \
	'! installed sparse' '! installed dkms' '! installed trace-cmd' \
	'! installed linux-source-6.12' '! installed perftest' '! installed python3-docutils'

fresh
run demo TRACE=1
check demo_trace_adds_trace_cmd all '[ $rc = 0 ]' 'installed trace-cmd'

fresh
run bench
check bench_adds_perftest all '[ $rc = 0 ]' 'installed perftest' '! installed sparse' \
	'! called add-architecture'

# make check: the i386 architecture, and its package in an install of
# its own.
fresh
run check
check check_installs_i386_on_its_own all '[ $rc = 0 ]' \
	'grep -qx i386 "$STUB/arches"' 'installed linux-headers-686:i386' \
	'installed sparse' 'installed dkms' 'installed linux-source-6.12' \
	'installed python3-docutils' \
	'[ "$(grep -c "apt-get .*install" "$STUB/calls")" = 2 ]' \
	'grep "apt-get .*install" "$STUB/calls" | grep -q "install.* linux-headers-686:i386$"'

# An install that fails is a failure that names the target and packages.
fresh
touch "$STUB/update-fails"
echo qemu-system-x86 > "$STUB/install-fails"
run demo
check failed_install_names_target all '[ $rc = 1 ]' \
	'grep -q "apt-get install failed for .demo." <<< "$out"' \
	'grep -q "qemu-system-x86" <<< "$out"' \
	'grep -q "Unable to locate package qemu-system-x86" <<< "$out"'

# The i386 package failing fails check, after the rest was installed.
fresh
echo linux-headers-686:i386 > "$STUB/install-fails"
run check
check failed_i386_install_fails_check all '[ $rc = 1 ]' 'installed sparse' \
	'grep -q "failed for .check. (check, 32-bit build)" <<< "$out"'

# Nothing missing: no apt-get at all.
fresh
run check
: > "$STUB/calls"
run check
check nothing_missing_no_apt all '[ $rc = 0 ]' '! called apt-get' '[ -z "$out" ]'

# Not root: the commands to run, and nothing run.
fresh
echo 1000 > "$STUB/uid"
run check
check non_root_prints_commands all '[ $rc = 1 ]' '! called apt-get' \
	'! called add-architecture' \
	'grep -q "dpkg --add-architecture i386" <<< "$out"' \
	'grep -q "apt-get update && apt-get install -y .*sparse" <<< "$out"'

fresh
run nonsense
check unknown_target all '[ $rc = 2 ]' '! called apt-get' 'grep -q usage <<< "$out"'

exit $failed
