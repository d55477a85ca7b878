#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# tools/kverbs/tests/suites.py [TOP]: every suite of the tree (TOP,
# default this one) is run, by selftests/run.sh and by every lane.
#
# A suite is a script selftests/NAME.sh that ends in lib.sh's ktap_main,
# or a C program selftests/NAME.c on the harness (KV_HARNESS_MAIN), which
# selftests/Makefile must build (PROGS).  run.sh runs the suites its
# default lists name: a guest's, or with --pair guest A's.  The lanes:
#  - make check (scripts/check on the Makefile's KERNELS and
#    HOSTS_PAIRS): each kernel's guest runs run.sh's default list, the
#    newest kernel's without newest_suites_skipped; the pairs run theirs;
#  - make check-hosts (scripts/check-hosts on HOSTS_PAIRS, or its own
#    default pairs): the pairs' suites;
#  - make check-debug: the full tier runs run.sh's default list in each
#    guest, and its pair_suites; the ci tier (what CI runs) the
#    suites of rxe_ci_suites and siw_ci_suites, and in each guest the
#    tests of its KV_ONLY list (ci_only_rxe, ci_only_siw), of which a
#    name for a suite the guest does not run is dropped (only_of).
# A suite no lane runs, a name of a list that is no suite, a KV_ONLY
# name that every guest drops, and a guest's KV_ONLY that names a test
# of a suite but not the suite's control (CONTROLS) each fail.  Prints KTAP; exits 1 if a test
# failed.
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
top = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(here)))
PAIR_SUITES_DEFAULT = "hosts,hosts_faults"   # scripts/check-hosts: a pair's default suites
# A suite's control: the test that shows its negative tests can pass,
# which a KV_ONLY list that names any test of the suite names too.
# security.sh's fair peer completes a ping with the hostile peer that
# its attacks fail with: without it an attack passes on a broken harness.
CONTROLS = {"security": "fair_peer"}


def read(rel):
    with open(os.path.join(top, rel)) as f:
        return f.read()


def words(text):
    return text.split()


def one(pattern, text, what):
    """The first group of pattern's one match in text, or exit saying so."""
    m = re.search(pattern, text, re.M)
    if not m:
        raise LookupError(f"{what}: no match for {pattern!r}")
    return m.group(1)


def suites():
    """The suites of the tree: {name: file}."""
    found = {}
    sel = os.path.join(top, "selftests")
    progs = words(one(r"^PROGS :=(.*)$", read("selftests/Makefile"), "selftests/Makefile"))
    for f in sorted(os.listdir(sel)):
        name, ext = os.path.splitext(f)
        text = read(os.path.join("selftests", f)) if ext in (".sh", ".c") else ""
        if ext == ".sh" and re.search(r"^ktap_main ", text, re.M):
            found[name] = f
        elif ext == ".c" and re.search(r"^KV_HARNESS_MAIN\b", text, re.M):
            found[name] = f
            if name not in progs:
                found[name] += " (not in selftests/Makefile's PROGS: never built)"
    return found


def pair_suites(pairs):
    """The suites a list of pairs A:B[:MTU[:SUITE,...]] runs."""
    out = set()
    for p in pairs:
        fields = p.split(":")
        out |= set((fields[3] if len(fields) > 3 and fields[3] else PAIR_SUITES_DEFAULT).split(","))
    return out


def shell_vars(path, first, names):
    """The values of the variables NAMES that PATH assigns in double quotes
    from the line that starts with FIRST=, as strings: read, not
    run.  A value may hold $VAR of one assigned before it, and
    $(printf 'FORMAT' WORD...) with one %s in FORMAT, which gives FORMAT
    once per WORD."""
    text = read(path)
    at = text.find(f"\n{first}=")
    if at < 0:
        raise LookupError(f"{path}: no {first}=")
    vals = {}
    for m in re.finditer(r'^(\w+)="((?:[^"\\]|\\.)*)"$', text[at + 1:], re.M | re.S):
        value = m.group(2)
        value = re.sub(r"\$\(printf '([^'%]*%s[^'%]*)' ([^()]*)\)",
                       lambda p: "".join(p.group(1).replace("%s", w)
                                         for w in p.group(2).replace("\\\n", " ").split()),
                       value)
        value = re.sub(r"\$\{?(\w+)\}?", lambda v: vals.get(v.group(1), "$" + v.group(1)), value)
        if "$" in value:
            raise LookupError(f"{path}: {m.group(1)}: cannot read {value.strip()[:80]!r}")
        vals[m.group(1)] = value
        if all(n in vals for n in names):
            return {n: vals[n] for n in names}
    raise LookupError(f"{path}: no {[n for n in names if n not in vals]} after {first}=")


results = []


def result(name, diags):
    n = len(results) + 1
    results.append((n, name, diags))


def check(name, fn):
    try:
        diags = fn()
    except (LookupError, OSError) as e:
        diags = [str(e)]
    result(name, diags)


all_suites = {}
run_sh = {}


def t_suites_in_run_sh():
    all_suites.update(suites())
    text = read("selftests/run.sh")
    run_sh["guest"] = words(one(r"^\ttests=\(([^)]*)\)$", text, "run.sh's default list"))
    run_sh["pair"] = words(one(r"\|\| tests=\(([^)]*)\)$", text, "run.sh's --pair default list"))
    listed = set(run_sh["guest"]) | set(run_sh["pair"])
    diags = []
    for s, f in sorted(all_suites.items()):
        if "never built" in f:
            diags.append(f"selftests/{f}")
        if s not in listed:
            diags.append(f"selftests/{f} is in neither of run.sh's default lists: no lane runs it")
    for s in sorted(listed - set(all_suites)):
        diags.append(f"run.sh's default lists name {s}, which is no suite of selftests/")
    return diags


def t_check():
    make = read("Makefile")
    kernels = words(one(r"^KERNELS \?=(.*)$", make, "Makefile"))
    pairs = words(one(r"^HOSTS_PAIRS \?=(.*)$", make, "Makefile"))
    text = read("scripts/check")
    script_kernels = words(one(r"^\[ \$\{#kernels\[@\]\} -gt 0 \] \|\| kernels=\(([^)]*)\)$",
                               text, "scripts/check's default kernels"))
    script_pairs = words(one(r"^pairs=\(\$\{HOSTS_PAIRS-([^}]*)\}\)$", text,
                             "scripts/check's default pairs"))
    skipped = words(one(r'^newest_suites_skipped="([^"]*)"$', text, "scripts/check"))
    diags = []
    for s in skipped:
        if s not in run_sh.get("guest", []):
            diags.append(f"scripts/check's newest_suites_skipped names {s}, no suite of run.sh's list")
    for what, ks in (("the Makefile's KERNELS", kernels), ("scripts/check's default kernels",
                                                             script_kernels)):
        if all(k == "newest" for k in ks):
            diags.append(f"{what} ({' '.join(ks)}): only the newest kernel, which leaves out "
                         f"{' '.join(skipped)}")
    for what, ps in (("the Makefile's HOSTS_PAIRS", pairs), ("scripts/check's default pairs",
                                                           script_pairs)):
        for s in sorted(set(run_sh.get("pair", [])) - pair_suites(ps)):
            diags.append(f"{what} ({' '.join(ps)}) never run {s}")
    return diags


def t_check_hosts():
    text = read("scripts/check-hosts")
    pairs = words(one(r"^\[ \$\{#pairs\[@\]\} -gt 0 \] \|\| pairs=\(([^)]*)\)$", text,
                      "scripts/check-hosts's default pairs"))
    default = one(r'^\t\tsuites=\$\{suites:-([^}]*)\}$', text, "scripts/check-hosts's default suites")
    diags = []
    if default != PAIR_SUITES_DEFAULT:
        diags.append(f"scripts/check-hosts's default suites are {default}, not {PAIR_SUITES_DEFAULT}")
    for s in sorted(set(run_sh.get("pair", [])) - pair_suites(pairs)):
        diags.append(f"scripts/check-hosts's default pairs ({' '.join(pairs)}) never run {s}")
    return diags


debug = {}


def t_check_debug():
    text = read("scripts/check-debug")
    debug.update(shell_vars("scripts/check-debug", "rxe_ci_suites",
                            ["rxe_ci_suites", "siw_ci_suites", "ci_only_rxe", "ci_only_siw"]))
    pairs = one(r"^pair_suites=\$\{KVERBS_DEBUG_HOSTS-([^}]*)\}$", text, "scripts/check-debug")
    diags = []
    for s in sorted(set(run_sh.get("pair", [])) - set(pairs.split(","))):
        diags.append(f"scripts/check-debug's full tier never runs {s} (pair_suites: {pairs})")
    ci = {"rxe": words(debug["rxe_ci_suites"]), "siw": words(debug["siw_ci_suites"])}
    for t, ss in ci.items():
        for s in ss:
            if s not in run_sh.get("guest", []):
                diags.append(f"scripts/check-debug's {t}_ci_suites names {s}, no suite of run.sh's list")
    for s in run_sh.get("guest", []):
        if s not in ci["rxe"] + ci["siw"]:
            diags.append(f"scripts/check-debug's ci tier runs {s} in neither guest")
    # A name of the lists common to both guests runs in the guest that
    # runs its suite; one that neither guest keeps runs nowhere.
    only = {t: words(debug[f"ci_only_{t}"]) for t in ci}
    for name in sorted(set(only["rxe"]) | set(only["siw"])):
        if ":" not in name:
            diags.append(f"scripts/check-debug's ci lists name {name} without its suite")
        elif not any(name in only[t] and name.split(":")[0] in ci[t] for t in ci):
            diags.append(f"scripts/check-debug's ci lists name {name}, but no guest that has "
                         f"it in its KV_ONLY runs {name.split(':')[0]}: only_of drops it")
    return diags


def t_check_debug_controls():
    diags = []
    for t in ("rxe", "siw"):
        ci = words(debug.get(f"{t}_ci_suites", ""))
        only = [n for n in words(debug.get(f"ci_only_{t}", "")) if n.split(":")[0] in ci]
        for suite, control in CONTROLS.items():
            named = [n for n in only if n.startswith(suite + ":")]
            if named and f"{suite}:{control}" not in named:
                diags.append(f"scripts/check-debug's ci tier runs {' '.join(named)} in {t}'s guest "
                             f"without their control {suite}:{control}")
    return diags


check("suites_listed_in_run_sh", t_suites_in_run_sh)
check("check_runs_every_suite", t_check)
check("check_hosts_runs_every_pair_suite", t_check_hosts)
check("check_debug_runs_every_suite", t_check_debug)
check("check_debug_runs_controls", t_check_debug_controls)

print("KTAP version 1")
print(f"1..{len(results)}")
failed = 0
for n, name, diags in results:
    for d in diags:
        print(f"# {d}")
    print(f"{'not ok' if diags else 'ok'} {n} {name}")
    failed |= bool(diags)
sys.exit(failed)
