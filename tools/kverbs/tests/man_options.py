#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# tools/kverbs/tests/man_options.py PAGE COMMAND < HELP: each option of
# 'kverbs COMMAND --help' (HELP) against COMMAND's section of the man page
# PAGE (the .SS whose title names COMMAND).  For each option the section
# must have a .TP entry whose tag names it, with the same argument written
# the same way (--out_json_file FILE, not --out_json_file=FILE), and a
# description.  An argument that is a number in --help (-s 8: the only
# value) must be in the entry's description; a description in --help that
# mentions suffixes (k, M, G) must have its counterpart name the same.
#
# man_options.py PAGE --exit-status < HELP: the codes of 'kverbs --help'
# under "exit status:" against the page's EXIT STATUS: the same codes,
# each described in the same words (case, fonts and the final period
# aside).
#
# man_options.py PAGE --unknown KVERBS CMD...: the other way round, what
# the page names that no --help of KVERBS has.  Each option of an entry
# (the .TP tags of a section titled with commands) must be an option of
# one of those commands' --help; each option written anywhere on the
# page must be one that a --help of CMD... ('-': 'kverbs --help') names.
#
# Prints one line for each difference; exits 0 either way (man.sh
# counts the lines).
import re
import shlex
import subprocess
import sys

HELP_OPT = re.compile(r"^ {1,8}(?:(-[A-Za-z]), )?\s*(--[A-Za-z][\w-]*)?(?:, (--[A-Za-z][\w-]*))?"
                      r"(?: ([A-Z][A-Z_]*|\d+))?(?: {2,}(\S.*))?$")
# A tag: -x, --long ARG (either name alone, the long one perhaps with an
# alias, --srq, --use-srq; ARG after a space or an '=').
TAG = re.compile(r"^(?:(-[A-Za-z])(?:, )?)?(--[A-Za-z][\w-]*)?(?:, (--[A-Za-z][\w-]*))?"
                 r"(?:([ =])(\S+))?$")
# An option anywhere in a text: -x or --long, not inside a word.
ANY_OPT = re.compile(r"(?:^|(?<=[][ (,|]))(--?[A-Za-z][A-Za-z0-9_-]*[A-Za-z0-9_]|-[A-Za-z])", re.M)


def help_options(text):
    """[(names, arg, description)] of a --help text's option lines."""
    opts = []
    for line in text.split("\n"):
        m = HELP_OPT.match(line)
        if m and (m.group(1) or m.group(2)):
            names = [n for n in (m.group(1), m.group(2), m.group(3)) if n]
            opts.append([names, m.group(4), m.group(5) or ""])
        elif opts and re.match(r"^ {10,}\S", line):
            opts[-1][2] += " " + line.strip()
    return opts


def unescape(s):
    s = re.sub(r"\\f[BIRP]", "", s)
    return s.replace("\\-", "-").replace("\\~", " ").replace("\\(em", "-")


def tag_text(line):
    """The words a tag line renders: alternating macros join their arguments."""
    macro, _, rest = line.partition(" ")
    words = shlex.split(unescape(rest))
    return ("" if macro in (".BR", ".BI", ".IR", ".RB", ".IB", ".RI") else " ").join(words)


def sections(page):
    """{title: [(tags, description)]} of the page's .SS sections."""
    out = {}
    entries = None
    state = None		# "tag" after .TP or .TQ, "desc" after a tag
    for line in open(page, encoding="utf-8").read().split("\n"):
        if line.startswith((".SS", ".SH")):
            entries = out.setdefault(unescape(line[3:].strip().strip('"')), []) \
                if line.startswith(".SS") else None
            state = None
        elif entries is None:
            continue
        elif line.startswith(".TP"):
            entries.append([[], ""])
            state = "tag"
        elif line.startswith(".TQ"):
            state = "tag"
        elif line.startswith((".PP", ".P ", ".LP")) or line == ".":
            state = None
        elif state == "tag":
            entries[-1][0].append(tag_text(line))
            state = "desc"
        elif state == "desc" and not line.startswith('.\\"'):
            entries[-1][1] += " " + unescape(line)
    return out


def suffixes(text):
    """The size suffixes a description names: k and M, k, M or G."""
    m = re.search(r"((?:\b[kMG]\b(?:,| and| or)? ?)+)[^.;]*suffix|suffix[^.;]*?:? "
                  r"((?:\b[kMG]\b(?:,| and| or)? ?)+)", text)
    return sorted(re.findall(r"\b[kMG]\b", (m.group(1) or m.group(2)) if m else ""))


def words(text):
    return " ".join(text.split()).rstrip(".").lower()


def exit_status(page):
    """Compare the exit codes of the main --help with the page's."""
    helped, code = {}, None
    lines = sys.stdin.read().split("\n")
    for line in lines[lines.index("exit status:") + 1:] if "exit status:" in lines else []:
        m = re.match(r"^  (\d+)\s+(\S.*)$", line)
        if m:
            code = m.group(1)
            helped[code] = m.group(2)
        elif code and re.match(r"^ {5,}\S", line):
            helped[code] += " " + line.strip()
        else:
            code = None
    if not helped:
        print("kverbs --help lists no exit status")
    paged, code, inside, state = {}, None, False, None
    for line in open(page, encoding="utf-8").read().split("\n"):
        if line.startswith((".SH", ".SS")):
            inside = line.startswith(".SH") and "EXIT STATUS" in line
            state = None
        elif not inside:
            continue
        elif line.startswith(".TP"):
            state = "tag"
        elif line.startswith((".PP", ".P ", ".LP")):
            state = None
        elif state == "tag":
            code = tag_text(line).strip()
            paged[code] = ""
            state = "desc"
        elif state == "desc":
            paged[code] += " " + (tag_text(line) if line.startswith(".") else unescape(line))
    for code in sorted(set(helped) | set(paged), key=int):
        if code not in paged:
            print(f"kverbs --help has exit status {code}, the page does not")
        elif code not in helped:
            print(f"the page has exit status {code}, kverbs --help does not")
        elif words(helped[code]) != words(paged[code]):
            print(f"exit status {code}: kverbs --help says '{words(helped[code])}', "
                  f"the page '{words(paged[code])}'")


def helped(kverbs, cmd):
    """'kverbs CMD --help' ('kverbs --help' for CMD -)."""
    args = [kverbs] + ([] if cmd == "-" else [cmd]) + ["--help"]
    return subprocess.run(args, capture_output=True, text=True).stdout


def unknown(page, kverbs, cmds):
    """The page's options that no --help names."""
    helps = {c: helped(kverbs, c) for c in cmds}
    for c, text in helps.items():
        if c != "-" and not help_options(text):
            print(f"no options found in kverbs {'' if c == '-' else c + ' '}--help")
    for title, entries in sections(page).items():
        section = re.split(r",\s*", title)
        if not all(c in helps for c in section):
            continue
        names = {n for c in section for opts, _, _ in help_options(helps[c]) for n in opts}
        for tags, _ in entries:
            for tag in tags:
                m = TAG.match(tag)
                for n in (m.group(1, 2, 3) if m else ()):
                    if n and n not in names:
                        print(f"section '{title}' has an entry for {n}, "
                              f"which no --help of {', '.join(section)} has")
    named = {o for text in helps.values() for o in ANY_OPT.findall(text)}
    text = unescape(open(page, encoding="utf-8").read())
    for no, line in enumerate(text.split("\n"), 1):
        for o in ANY_OPT.findall(line):
            if o not in named:
                print(f"line {no} names {o}, which no --help names")


def main(page, cmd):
    if cmd == "--exit-status":
        exit_status(page)
        return
    if cmd == "--unknown":
        unknown(page, sys.argv[3], sys.argv[4:])
        return
    secs = sections(page)
    title = next((t for t in secs if cmd in re.split(r",\s*", t)), None)
    if title is None:
        print(f"the page has no section for {cmd}")
        return
    entries = secs[title]
    for names, arg, desc in help_options(sys.stdin.read()):
        shown = ", ".join(names) + (" " + arg if arg else "")
        found = None
        for tags, text in entries:
            for tag in tags:
                m = TAG.match(tag)
                if m and set(names) & {m.group(1), m.group(2), m.group(3)}:
                    found = (tag, m, text)
                    break
            if found:
                break
        if not found:
            print(f"{cmd} --help has {shown}, section '{title}' has no entry for it")
            continue
        tag, m, text = found
        sep, marg = m.group(4), m.group(5)
        if {n for n in m.group(1, 2, 3) if n} != set(names):
            print(f"{cmd} --help has {shown}, the page '{tag}'")
        if not text.strip():
            print(f"{cmd}: the entry '{tag}' has no description")
        if arg and arg.isdigit():
            if not marg or not re.search(r"(?<![\d.])" + arg + r"(?![\d.])", text):
                print(f"{cmd} --help has {shown}, the only value: the entry '{tag}' "
                      f"does not say {arg}")
        elif (arg or None) != (marg if marg and not marg.isdigit() else None) or \
                (arg and sep != " "):
            print(f"{cmd} --help has {shown}, the page '{tag}'")
        if "suffix" in desc and "suffix" not in text:
            print(f"{cmd} --help says {shown} takes suffixes, the entry '{tag}' does not")
        elif "suffix" in desc and suffixes(desc) != suffixes(text):
            print(f"{cmd} --help gives {shown} the suffixes {suffixes(desc)}, "
                  f"the entry '{tag}' {suffixes(text)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
