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
# mentions suffixes (k and M) must have its counterpart mention them too.
#
# man_options.py PAGE --exit-status < HELP: the codes of 'kverbs --help'
# under "exit status:" against the page's EXIT STATUS: the same codes,
# each described in the same words (case, fonts and the final period
# aside).
#
# Prints one line for each difference; exits 0 either way (man.sh
# counts the lines).
import re
import shlex
import sys

HELP_OPT = re.compile(r"^ {1,8}(?:(-[A-Za-z]), )?\s*(--[A-Za-z][\w-]*)?"
                      r"(?: ([A-Z][A-Z_]*|\d+))?(?: {2,}(\S.*))?$")
# A tag: -x, --long ARG (either name alone; ARG after a space or an '=').
TAG = re.compile(r"^(?:(-[A-Za-z])(?:, )?)?(--[A-Za-z][\w-]*)?(?:([ =])(\S+))?$")


def help_options(text):
    """[(names, arg, description)] of a --help text's option lines."""
    opts = []
    for line in text.split("\n"):
        m = HELP_OPT.match(line)
        if m and (m.group(1) or m.group(2)):
            names = [n for n in (m.group(1), m.group(2)) if n]
            opts.append([names, m.group(3), m.group(4) or ""])
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


def main(page, cmd):
    if cmd == "--exit-status":
        exit_status(page)
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
                if m and set(names) & {m.group(1), m.group(2)}:
                    found = (tag, m, text)
                    break
            if found:
                break
        if not found:
            print(f"{cmd} --help has {shown}, section '{title}' has no entry for it")
            continue
        tag, m, text = found
        sep, marg = m.group(3), m.group(4)
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


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
