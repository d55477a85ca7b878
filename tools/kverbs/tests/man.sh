#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/kverbs/tests/man.sh: Documentation/kverbs.8 against the tool.  The
# page must render without a warning from man(1) or groff, and must name
# every short and long option that any 'kverbs COMMAND --help' prints, so
# an option added to the tool without its paragraph fails here.  A control
# first checks that the comparison catches an option taken out of a copy
# of the page.  KVERBS names the binary, KVERBS_MAN the page.  Prints
# KTAP; exits 0 if every test passed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
KVERBS=${KVERBS:-$here/../kverbs}
page=${KVERBS_MAN:-$top/Documentation/kverbs.8}
cmds=(- devices ping write_bw read_bw send_bw atomic_bw read_lat atomic_lat write_lat
      send_lat serve)

tmp=$(mktemp -d /tmp/kverbs-man.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

results=()
n=0
failed=0

result() {	# result NAME DIAGNOSTICS_FILE
	n=$((n + 1))
	if [ -s "$2" ]; then
		while IFS= read -r l; do results+=("# $1: $l"); done < <(head -n 20 "$2")
		results+=("not ok $n $1")
		failed=1
	else
		results+=("ok $n $1")
	fi
}

# The options a help text names: -x and --long-name, each once.
help_options() {
	grep -oE '(^|[][ (,|])--?[A-Za-z][A-Za-z0-9_-]*' |
		sed -E 's/^[][ (,|]//; s/-+$//' | sort -u
}

# The page's words, with groff's escapes for '-' and fonts undone.
page_text() {
	sed -E 's/\\-/-/g; s/\\f[BIRP]//g; s/\\~/ /g' "$1"
}

# missing PAGE CMD: the options of CMD's --help that PAGE does not name.
missing() {
	local opt args=()

	[ "$2" = - ] || args=("$2")
	"$KVERBS" "${args[@]}" --help | help_options > "$tmp/opts" || {
		echo "kverbs ${args[*]} --help failed"
		return
	}
	[ -s "$tmp/opts" ] || echo "no options found in kverbs ${args[*]} --help"
	page_text "$1" > "$tmp/page.txt"
	while IFS= read -r opt; do
		grep -qE -- "(^|[^A-Za-z0-9_-])$opt([^A-Za-z0-9_-]|\$)" "$tmp/page.txt" ||
			echo "kverbs ${args[*]} --help has $opt, the page does not"
	done < "$tmp/opts"
}

if [ ! -x "$KVERBS" ] || [ ! -f "$page" ]; then
	echo "KTAP version 1"
	echo "Bail out! need $KVERBS (make -C tools/kverbs) and $page"
	exit 1
fi

# What man-db's and groff's own checks say: nothing, at a terminal's width.
MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null | sed 's/^/man: /' > "$tmp/diag"
command -v man >/dev/null || echo "man(1) is missing: apt-get install man-db" >> "$tmp/diag"
result renders_without_man_warnings "$tmp/diag"
groff -ww -z -man "$page" > "$tmp/diag" 2>&1 ||
	echo "groff -ww -z exited $?" >> "$tmp/diag"
result renders_without_groff_warnings "$tmp/diag"

# The control: a page without --json, and one without -P, must be caught.
: > "$tmp/diag"
sed -e 's/\\-\\-json//g' "$page" > "$tmp/no-json.8"
missing "$tmp/no-json.8" devices | grep -q -- 'has --json, the page does not' ||
	echo "a page without --json passed" >> "$tmp/diag"
sed -e 's/\\-P\b//g' "$page" > "$tmp/no-P.8"
missing "$tmp/no-P.8" ping | grep -q -- 'has -P, the page does not' ||
	echo "a page without -P passed" >> "$tmp/diag"
result control_missing_option_is_caught "$tmp/diag"

for c in "${cmds[@]}"; do
	missing "$page" "$c" > "$tmp/diag"
	result "options_of_${c/#-/kverbs}" "$tmp/diag"
done

echo "KTAP version 1"
echo "1..$n"
printf '%s\n' "${results[@]}"
exit $failed
