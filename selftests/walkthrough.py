#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# selftests/walkthrough.py check|update DOC TRACE SERVER_PID
# selftests/walkthrough.py --prose DOC
#
# The trace of one ping, as Documentation/walkthrough.rst lists it.
# TRACE is tracefs' "trace" file after "kverbs ping -s" (process
# SERVER_PID) served "kverbs ping -c ... -C 2" with kverbs' events on.
# Its kverbs events are split into the client's and the server's and
# normalized: what changes from run to run (QP numbers, CQ and MR ids,
# keys, remote addresses, times) becomes a name, and completion ids are
# renumbered per side in the order they were posted, so a post and its
# completion still share one.
#
# check: compare with the listing between DOC's ".. trace-begin" and
# ".. trace-end"; exit 1 and show both if they differ.  update: write
# the listing there instead.  Either exits 2, comparing nothing, when
# the ping took the other ending it allows: the client hung up before
# the server saw its last go-ahead acknowledged, and the server's last
# WRITE and SEND were flushed (kverbs_ping_server_iterate()).  Run it
# again then.  Both also check the prose against the listing, as
# --prose does.
#
# What must match, per side: the posts and the life events (all made by
# the side's own thread) in order; each completion with its status and
# length, between the same two posts as in the listing, but a SEND's
# anywhere before the drain and a drain's anywhere in it; rdma_cm's
# events in order.  Free: the order of completions between the same two
# posts (a send and a receive queue complete independently, as rxe's
# requester and responder run apart), where a SEND's completion falls
# before the drain and a flush within the drain (see shape()), and
# where rdma_cm's events fall among the rest (they come from rdma_cm's
# work queue).  TIMEWAIT_EXIT is left out: it comes only when the ID
# outlives rdma_cm's time wait, which it does in some runs.
#
# --prose: the steps of DOC's "Step by step" against its listing, no
# trace needed.  Each step's ":Trace:" field names the events the step
# fires, as ``kverbs_post_send REG_MR``: the event and its upper-case
# words (opcode, status, rdma_cm event), after "client:" or "server:".
# "Iteration N repeats steps A to B." repeats those steps' events.  Read
# in step order, the named events must be the listing's, each side's
# once each, and each in its place: posts and life events in the
# listing's order; a completion between the same two posts or life
# events, a SEND's anywhere before the drain, one within a drain
# anywhere in it; rdma_cm's events in order among themselves.  Exits 1 and says which step is wrong if not.
import difflib
import re
import sys

LINE = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*(?P<tgid>[\d-]+)\)\s+)?"
                  r"\[\d+\]\s+\S+\s+[\d.]+: (?P<event>kverbs_\w+): (?P<fields>.*)$")
ASYNC = ("kverbs_wc", "kverbs_drain_wc", "kverbs_cm_event")
COMPLETIONS = ("kverbs_wc", "kverbs_drain_wc")
SIDES = ("client", "server")
BEGIN, END = ".. trace-begin", ".. trace-end"
INTRO = {
    "client": "The client, ``kverbs ping -c -a ADDR -C 2 -V``::",
    "server": "The server, ``kverbs ping -s -a ADDR -V``::",
}


def fields(text):
    return dict(re.findall(r"([\w.]+)=(\S+)", text))


def parse(path, server_pid):
    events = []
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        tgid = m["tgid"] if m["tgid"] and m["tgid"] != "-----" else m["pid"]
        events.append((int(tgid), m["event"], m["fields"]))
    # The test's threads make every event but completions and rdma_cm's.
    side_of_pid = {}
    for pid, event, _ in events:
        if event not in ASYNC:
            side_of_pid.setdefault(pid, "server" if pid == server_pid else "client")
    if sorted(side_of_pid.values()) != ["client", "server"]:
        sys.exit(f"expected the events of one client and one server process, "
                 f"found processes {side_of_pid} (server {server_pid})")
    cq_side, ep_side = {}, {}
    for pid, event, text in events:
        if event == "kverbs_cq_alloc":
            f = fields(text)
            cq_side[f["cq.id"]] = ep_side[f["ep"]] = side_of_pid[pid]
    sides = {s: [] for s in SIDES}
    for pid, event, text in events:
        f = fields(text)
        if event in COMPLETIONS:
            side = cq_side.get(f["cq.id"])
        elif event == "kverbs_cm_event":
            # A connection request comes to the server's listener; any
            # other event of an endpoint not in this ping is not its.
            side = ep_side.get(f["ep"])
            if not side and text.endswith(" CONNECT_REQUEST status=0"):
                side = "server"
        else:
            side = side_of_pid[pid]
        if side and not text.endswith(" TIMEWAIT_EXIT status=0"):
            sides[side].append((event, text))
    return sides, cq_side, ep_side


class Names:
    """What varies between runs, named in the order it first appears."""

    def __init__(self, cq_side, ep_side):
        self.cq_side, self.ep_side = cq_side, ep_side
        self.qp_side = {}
        self.named = {}
        self.cids = {s: {} for s in SIDES}

    def name(self, kind, value, prefix):
        table = self.named.setdefault(kind, {})
        return table.setdefault(value, f"<{prefix}{len(table) + 1}>")

    def line(self, side, event, text):
        if event == "kverbs_qp_create":
            self.qp_side[fields(text)["qp"]] = side

        def sub(m):
            key, value = m[1], m[2]
            if key == "ep":
                return f"ep=<{self.ep_side.get(value, 'listener')}>"
            if key == "cq.id" and value != "0":
                return f"cq.id=<{self.cq_side.get(value, '?')}>"
            if key == "qp" and value != "0":
                return f"qp=<{self.qp_side.get(value, '?')}>"
            if key == "cid":
                cids = self.cids[side]
                return f"cid={cids.setdefault(value, len(cids) + 1)}"
            if key == "key" and int(value, 16):
                return f"key={self.name('key', value, 'k')}"
            # A receive that invalidated a key names it as its post did.
            if key == "invalidated":
                return f"invalidated={self.name('key', value, 'k')}"
            if key == "raddr" and int(value, 16):
                return f"raddr={self.name('raddr', value, 'a')}"
            if key == "mr.id":
                return f"mr.id={self.name('mr', value, 'm')}"
            if key == "ns":
                return "ns=<ns>"
            return m[0]
        return f"{event}: " + re.sub(r"([\w.]+)=(\S+)", sub, text)


def listing(path, server_pid):
    sides, cq_side, ep_side = parse(path, server_pid)
    names = Names(cq_side, ep_side)
    # The client's first: its keys and addresses get the first names.
    return {s: [names.line(s, e, t) for e, t in sides[s]] for s in SIDES}


def render(lists):
    out = [BEGIN, ""]
    for side in SIDES:
        out += [INTRO[side], ""] + ["    " + line for line in lists[side]] + [""]
    return out + [END]


def read_doc(doc):
    lines = open(doc).read().split("\n")
    try:
        begin, end = lines.index(BEGIN), lines.index(END)
    except ValueError:
        sys.exit(f"{doc}: no '{BEGIN}' ... '{END}' section")
    lists, side = {}, None
    for line in lines[begin + 1:end]:
        for s in SIDES:
            if line == INTRO[s]:
                side = s
                lists[side] = []
        if side and line.startswith("    "):
            lists[side].append(line[4:])
    return lines, begin, end, lists


def shape(lines):
    """The parts of one side's listing that must match."""
    steps, done, cm, posts, drains, draining = [], {}, [], 0, 0, False
    for line in lines:
        if line.startswith(tuple(e + ":" for e in COMPLETIONS)):
            # A SEND's completion says the peer acknowledged it; the test
            # waits for it only before it reuses the buffer, or not at
            # all, so it may come any time before the drain.  In a
            # drain, the device flushes as it goes, before or after the
            # markers are posted.  The rest are waited for before the
            # next post.
            if draining:
                where = ("in drain", drains)
            elif " SEND " in line:
                where = ("drain", drains)
            else:
                where = ("post", posts)
            done.setdefault(where, []).append(line)
        elif line.startswith("kverbs_cm_event:"):
            cm.append(line)
        else:
            steps.append(line)
            draining = line.startswith("kverbs_drain_start:") or (
                draining and not line.startswith("kverbs_drain_end:"))
            posts += line.startswith(("kverbs_post_", "kverbs_rw_post:"))
            drains += line.startswith("kverbs_drain_start:")
    return steps, {k: sorted(v) for k, v in done.items()}, cm


def check(doc, lists):
    _, _, _, want = read_doc(doc)
    bad = False
    for side in SIDES:
        got, exp = shape(lists[side]), shape(want.get(side, []))
        why = [what for what, g, e in zip(("posts and life events",
                                            "completions",
                                            "rdma_cm events"), got, exp) if g != e]
        if not why:
            continue
        bad = True
        print(f"# the {side}'s trace differs from {doc} in its {', '.join(why)}:")
        for line in difflib.unified_diff(want.get(side, []), lists[side],
                                         f"{doc} ({side})", f"trace ({side})",
                                         lineterm="", n=2):
            print("# " + line)
    if bad:
        print(f"# if the change is meant, KV_UPDATE_DOC=1 rewrites {doc} "
              "(Documentation/testing.rst)")
    return not bad


# The prose check (--prose).
STEPS, STEPS_END = "Step by step", "The teardown order, and why"
REPEAT = re.compile(r"Iteration \d+ repeats steps (\d+) to (\d+)\.")
LITERAL = re.compile(r"``([^`]+)``")
EVENT = re.compile(r"kverbs_[a-z_]+(?: [A-Z][A-Z_]*)*")
SIDE = re.compile(r"\b([Cc]lient|[Ss]erver):")


def event_key(line):
    """A listing line as the prose names it: the event and its upper-case words."""
    event, _, text = line.partition(": ")
    words = [w for w in text.split() if re.fullmatch(r"[A-Z][A-Z_]*", w)]
    return " ".join([event] + words)


def place_of(keys):
    """Where each event is held: what the trace check holds fixed."""
    places, synced, drains, cms, draining = [], 0, 0, 0, False
    for key in keys:
        event = key.split()[0]
        if event == "kverbs_cm_event":
            places.append(("rdma_cm event", cms))
            cms += 1
        elif event in COMPLETIONS:
            # A SEND's completion only says the peer acknowledged it; a
            # drain's flushes come as the device gets to them.
            if draining:
                places.append(("completion in drain", drains))
            elif key.split()[1:2] == ["SEND"]:
                places.append(("SEND completion before drain", drains))
            else:
                places.append(("completion after event", synced))
        else:
            places.append(("post or life event", synced))
            synced += 1
            drains += event == "kverbs_drain_start"
            draining = event == "kverbs_drain_start" or (
                draining and event != "kverbs_drain_end")
    return places


def read_steps(lines):
    """{side: [(step, key)]}, in step order, iterations repeated."""
    try:
        begin = lines.index(STEPS)
        end = lines.index(STEPS_END, begin)
    except ValueError:
        sys.exit(f"no '{STEPS}' ... '{STEPS_END}' sections")
    steps, fields, current, field = {}, [], None, None
    for no, line in enumerate(lines[begin:end], begin + 1):
        m = re.match(r"(\d+)\. ", line)
        if m:
            current, field = int(m[1]), None
            steps[current] = {s: [] for s in SIDES}
            continue
        if current is None:
            continue
        if re.match(r"\s+:Trace:", line):
            field = [current, no, line.split(":Trace:", 1)[1]]
            fields.append(field)
        elif field is not None and line.strip() and not re.match(r"\s+:\w+:", line):
            field[2] += " " + line.strip()
        else:
            field = None
    errors = []
    for step, no, text in fields:
        # Side labels and events, in the order they are written.
        side = None
        tokens = sorted([(m.start(), "side", m[1].lower()) for m in SIDE.finditer(text)] +
                        [(m.start(), "literal", m[1]) for m in LITERAL.finditer(text)])
        for _, kind, value in tokens:
            if kind == "side":
                side = value
            elif value.startswith("kverbs_") and not value.endswith("()"):
                if not EVENT.fullmatch(value):
                    errors.append(f"line {no}: step {step} names ``{value}``, "
                                  "which is not written as an event and its upper-case words")
                elif not side:
                    errors.append(f"line {no}: step {step} names ``{value}`` "
                                  "before saying client: or server:")
                else:
                    steps[step][side].append(value)
    if errors:
        return None, errors
    order = sorted(steps)
    text = "\n".join(lines[begin:end])
    for m in REPEAT.finditer(text):
        first, last = int(m[1]), int(m[2])
        if first not in steps or last not in steps or first > last:
            return None, [f"'{m[0]}' names steps that do not exist"]
        at = order.index(last) + 1
        order[at:at] = list(range(first, last + 1))
    return {s: [(n, key) for n in order for key in steps[n][s]] for s in SIDES}, []


def times(n):
    return {0: "no times", 1: "once", 2: "twice"}.get(n, f"{n} times")


def misplaced(side, prose, listed):
    """The first event of @prose, [(step, key)], not in its @listed place."""
    got, exp = place_of([key for _, key in prose]), place_of(listed)
    # Posts and life events in order, rdma_cm events in order.
    for kind in ("post or life event", "rdma_cm event"):
        named = [(step, key) for (step, key), where in zip(prose, got) if where[0] == kind]
        shown = [key for key, where in zip(listed, exp) if where[0] == kind]
        for i, ((step, key), want) in enumerate(zip(named, shown), 1):
            if key != want:
                return [f"step {step} names ``{key}`` as the {side}'s {kind} {i}; "
                        f"in the listing that is ``{want}``"]
    # Completions between the same two events.
    sync = [key for key, where in zip(listed, exp) if where[0] == "post or life event"]
    left = [(key, where) for key, where in zip(listed, exp)]
    for (step, key), where in zip(prose, got):
        if where[0] == "post or life event" or where[0] == "rdma_cm event":
            continue
        if (key, where) in left:
            left.remove((key, where))
            continue
        after = f"after ``{sync[where[1] - 1]}``" if where[1] else "first"
        if where[0] == "completion in drain":
            after = "in the drain"
        elif where[0] != "completion after event":
            after = "before the drain"
        return [f"step {step} names the {side}'s ``{key}`` {after} "
                f"(its post or life event {where[1]}); the listing has it elsewhere"]
    return []


def check_prose(doc):
    lines, _, _, want = read_doc(doc)
    named, errors = read_steps(lines)
    if errors:
        for e in errors:
            print(f"# {doc}: {e}")
        return False
    bad = []
    for side in SIDES:
        listed = [event_key(line) for line in want.get(side, [])]
        prose = named[side]
        keys = [key for _, key in prose]
        for key in sorted(set(keys) | set(listed)):
            n, m = keys.count(key), listed.count(key)
            if n > m:
                steps = sorted({s for s, k in prose if k == key})
                bad.append(f"the {side}'s ``{key}`` is named {times(n)} (step "
                           f"{', '.join(map(str, steps))}), the listing has it {times(m)}")
            elif n < m:
                bad.append(f"the listing has the {side}'s ``{key}`` {times(m)}, "
                           f"the steps name it {times(n)}")
        if bad:
            continue
        # Same events: now each in its place.
        bad += misplaced(side, prose, listed)
    for b in bad:
        print(f"# {doc}: {b}")
    if bad:
        print(f"# each step's :Trace: names its events in the listing's order "
              f"(selftests/walkthrough.py)")
    return not bad


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--prose":
        sys.exit(0 if check_prose(sys.argv[2]) else 1)
    if len(sys.argv) != 5 or sys.argv[1] not in ("check", "update"):
        sys.exit("usage: walkthrough.py check|update DOC TRACE SERVER_PID\n"
                 "       walkthrough.py --prose DOC")
    mode, doc, trace, server_pid = sys.argv[1:]
    lists = listing(trace, int(server_pid))
    if any(line.startswith("kverbs_wc:") and " SEND WR_FLUSH_ERR " in line
           for line in lists["server"]):
        print("# the client hung up before the server saw its last go-ahead "
              "acknowledged, as the ping allows: nothing to compare")
        sys.exit(2)
    if mode == "check":
        ok = check(doc, lists)
        sys.exit(0 if check_prose(doc) and ok else 1)
    lines, begin, end, _ = read_doc(doc)
    with open(doc, "w") as f:
        f.write("\n".join(lines[:begin] + render(lists) + lines[end + 1:]))
    print(f"# wrote the trace listing into {doc}")
    # A listing that changed may leave the steps behind.
    sys.exit(0 if check_prose(doc) else 1)


main()
