#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/kverbs/tests/run.sh: build the kverbs tool and its unit tests, run
# tests/unit, tests/cli.sh, tests/man.sh (the man page against every
# command's --help), tests/deps.sh (scripts/deps against stand-ins for
# apt-get and dpkg), tests/scripts.sh (what judges the selftests:
# scripts/ktap-summary, scripts/ktap-failures, scripts/ktap-skips,
# selftests/lib.sh's ktap_main), tools/bench/test-benchstat (the
# statistics of make bench's verdicts) and tests/suites.py (every suite
# is run, by run.sh and by every lane) on the host (no module needed),
# and print them as one KTAP document with each as a subtest.  Exits
# non-zero if one failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tool=$(dirname "$here")
tmp=$(mktemp -d /tmp/kverbs-tests.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "KTAP version 1"
if ! make -s -C "$tool" kverbs tests/unit tests/oldmod.so >"$tmp/build" 2>&1; then
	sed 's/^/# /' "$tmp/build"
	echo "Bail out! cannot build kverbs, tests/unit and tests/oldmod.so"
	exit 1
fi
tests=(unit cli man deps scripts bench suites)
echo "1..${#tests[@]}"

# The built binary, unless the caller names another one.
export KVERBS=${KVERBS:-$tool/kverbs}

n=0
failed=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	case $t in
	unit) cmd=("$here/unit") ;;
	cli) cmd=(bash "$here/cli.sh") ;;
	man) cmd=(bash "$here/man.sh") ;;
	deps) cmd=(bash "$here/deps.sh") ;;
	scripts) cmd=(bash "$here/scripts.sh") ;;
	bench) cmd=(python3 "$tool/../bench/test-benchstat") ;;
	suites) cmd=(python3 "$here/suites.py") ;;
	esac
	# A subtest is its own KTAP document, indented by four spaces.
	"${cmd[@]}" 2>&1 | sed 's/^/    /'
	if [ "${PIPESTATUS[0]}" = 0 ]; then
		echo "ok $n $t"
	else
		echo "not ok $n $t"
		failed=1
	fi
done
exit $failed
