#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/kverbs/tests/man.sh: Documentation/kverbs.8 against the tool.  The
# page must render without a warning from man(1) or groff, and must name
# every short and long option that any 'kverbs COMMAND --help' prints, so
# an option added to the tool without its paragraph fails here.  In the
# command's own section each option must have an entry with the argument
# --help gives it, written the same way, and a description
# (man_options.py); the page's exit status must read as 'kverbs --help'
# says.  The other way round, every option the page names, in an entry
# or in its text, must be one that a --help names, and an entry's
# options must be those of its section's commands.  Controls first check
# that the comparisons catch an option taken out of a copy of the page,
# an argument renamed, an exit status reworded and an option made up.  KVERBS names the binary, KVERBS_MAN the page.  Prints KTAP;
# exits 0 if every test passed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
KVERBS=${KVERBS:-$here/../kverbs}
page=${KVERBS_MAN:-$top/Documentation/kverbs.8}
cmds=(- devices ping write_bw read_bw send_bw atomic_bw read_lat atomic_lat write_lat
      send_lat serve lesson)

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

# differs PAGE CMD: where CMD's section of PAGE describes an option of its
# --help otherwise (argument, description); CMD - compares the exit status.
differs() {
	if [ "$2" = - ]; then
		"$KVERBS" --help | python3 "$here/man_options.py" "$1" --exit-status
	else
		"$KVERBS" "$2" --help | python3 "$here/man_options.py" "$1" "$2"
	fi
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

# The controls of the second comparison: ping's -p PORT written -p P,
# --out_json_file=FILE for --out_json_file FILE, -S's description gone,
# and exit status 2 cut short, each in a copy of the page.
: > "$tmp/diag"
sed -e 's/\\-\\-port " \\fIPORT\\fR"/\\-\\-port " \\fIP\\fR"/' "$page" > "$tmp/arg.8"
differs "$tmp/arg.8" ping | grep -- 'has -p, --port PORT, the page' >/dev/null ||
	echo "a page with -p P passed" >> "$tmp/diag"
sed -e 's/\\-\\-out_json_file " FILE"/\\-\\-out_json_file= FILE/' "$page" > "$tmp/eq.8"
differs "$tmp/eq.8" write_bw | grep -- 'has --out_json_file FILE, the page' >/dev/null ||
	echo "a page with --out_json_file=FILE passed" >> "$tmp/diag"
awk '/\\-\\-size " \\fISIZE\\fR"/ && !done { print; skip = 1; done = 1; next }
     skip && /^\.TP/ { skip = 0 } !skip' "$page" > "$tmp/nodesc.8"
differs "$tmp/nodesc.8" ping | grep -- 'has no description' >/dev/null ||
	echo "a page without -S's description passed" >> "$tmp/diag"
sed -e 's/^Bad command line, or arguments the module refused\.$/Bad command line./' \
	"$page" > "$tmp/exit.8"
differs "$tmp/exit.8" - | grep -- '^exit status 2: ' >/dev/null ||
	echo "a page whose exit status 2 differs passed" >> "$tmp/diag"
result control_different_option_is_caught "$tmp/diag"

# unknown PAGE: what PAGE names that no --help does.
unknown() {
	python3 "$here/man_options.py" "$1" --unknown "$KVERBS" "${cmds[@]}"
}

# The controls of the way back: an entry for an option of another
# command (ping's -C in devices' section), and one made up in the text.
: > "$tmp/diag"
awk '/^\.SS devices/ { print; print ".TP"; print ".BI \\-C \" COUNT\""; print "Made up."; next } 1' \
	"$page" > "$tmp/other.8"
unknown "$tmp/other.8" | grep -- "section 'devices' has an entry for -C" >/dev/null ||
	echo "a page with ping's -C under devices passed" >> "$tmp/diag"
sed -e 's/^times are in seconds/times (\\-\\-made\\-up) are in seconds/' "$page" > "$tmp/made-up.8"
unknown "$tmp/made-up.8" | grep -- "names --made-up, which no --help names" >/dev/null ||
	echo "a page naming --made-up passed" >> "$tmp/diag"
result control_unknown_option_is_caught "$tmp/diag"

unknown "$page" > "$tmp/diag"
result page_options_are_the_tools "$tmp/diag"

for c in "${cmds[@]}"; do
	{ missing "$page" "$c"; differs "$page" "$c"; } > "$tmp/diag"
	result "options_of_${c/#-/kverbs}" "$tmp/diag"
done

echo "KTAP version 1"
echo "1..$n"
printf '%s\n' "${results[@]}"
exit $failed
