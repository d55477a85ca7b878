#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# selftests/walkthrough.py check|update DOC TRACE SERVER_PID
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
# again then.
#
# What must match, per side: the posts and the life events (all made by
# the side's own thread) in order; each completion with its status and
# length, between the same two posts as in the listing, but a SEND's
# anywhere before the drain; rdma_cm's events in order.  Free: the order
# of completions between the same two posts (a send and a receive queue
# complete independently, as rxe's requester and responder run apart),
# where a SEND's completion falls before the drain (see shape()), and
# where rdma_cm's events fall among the rest (they come from rdma_cm's
# work queue).  TIMEWAIT_EXIT is left out: it comes only when the ID
# outlives rdma_cm's time wait, which it does in some runs.
import difflib
import re
import sys

LINE = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*(?P<tgid>[\d-]+)\)\s+)?"
                  r"\[\d+\]\s+\S+\s+[\d.]+: (?P<event>kverbs_\w+): (?P<fields>.*)$")
ASYNC = ("kverbs_wc", "kverbs_cm_event")
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
        if event == "kverbs_wc":
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
    steps, done, cm, posts, drains = [], {}, [], 0, 0
    for line in lines:
        if line.startswith("kverbs_wc:"):
            # A SEND's completion says the peer acknowledged it; the test
            # waits for it only before it reuses the buffer, or not at
            # all, so it may come any time before the drain.  The rest
            # are waited for before the next post.
            where = ("drain", drains) if " SEND " in line else ("post", posts)
            done.setdefault(where, []).append(line)
        elif line.startswith("kverbs_cm_event:"):
            cm.append(line)
        else:
            steps.append(line)
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


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("check", "update"):
        sys.exit("usage: walkthrough.py check|update DOC TRACE SERVER_PID")
    mode, doc, trace, server_pid = sys.argv[1:]
    lists = listing(trace, int(server_pid))
    if any(line.startswith("kverbs_wc:") and " SEND WR_FLUSH_ERR " in line
           for line in lists["server"]):
        print("# the client hung up before the server saw its last go-ahead "
              "acknowledged, as the ping allows: nothing to compare")
        sys.exit(2)
    if mode == "check":
        sys.exit(0 if check(doc, lists) else 1)
    lines, begin, end, _ = read_doc(doc)
    with open(doc, "w") as f:
        f.write("\n".join(lines[:begin] + render(lists) + lines[end + 1:]))
    print(f"# wrote the trace listing into {doc}")


main()
