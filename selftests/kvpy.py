#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""selftests/kvpy.py REQUESTS REPLIES: one Python interpreter for a suite.

The shell suites check their results in Python (lib.sh's kv_python and
json_check), in almost every test case.  On the debug lane's kernel,
under KASAN and TCG, starting python3 takes five seconds, more than most
of those test cases spend on RDMA.  So lib.sh starts this once per suite
and sends it the scripts instead.

Each script runs as "python3 - ARG..." would run it, in a namespace of
its own: sys.argv is ["-", ARG...], what it prints (stdout and stderr) is
its output, and its exit status is 0 unless it raises SystemExit with
another status, or any other exception, whose traceback it prints.

REQUESTS and REPLIES are FIFOs.  A request is the number of arguments,
the script and the arguments, each ended by a NUL byte; the reply is the
output, a NUL byte, the exit status and a newline.  The server ends when
REQUESTS has no writer left, or on SIGTERM.
"""
import contextlib
import io
import os
import sys
import traceback


def tokens(fd):
    """Yield the NUL-terminated strings read from fd until end of file."""
    buf = b""
    while True:
        end = buf.find(b"\0")
        if end >= 0:
            yield buf[:end].decode(errors="replace")
            buf = buf[end + 1:]
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        buf += chunk


def run(script, args):
    """Run one script; return its output and exit status."""
    out = io.StringIO()
    status = 0
    saved_argv = sys.argv
    sys.argv = ["-"] + args
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                exec(compile(script, "<stdin>", "exec"), {"__name__": "__main__"})
            except SystemExit as e:
                if e.code is None:
                    status = 0
                elif isinstance(e.code, int):
                    status = e.code
                else:
                    print(e.code, file=sys.stderr)
                    status = 1
            except BaseException:  # pylint: disable=broad-except
                traceback.print_exc()
                status = 1
    finally:
        sys.argv = saved_argv
    return out.getvalue(), status & 0xff


def main():
    requests = os.open(sys.argv[1], os.O_RDONLY)
    with open(sys.argv[2], "w", encoding="utf-8") as replies:
        stream = tokens(requests)
        for count in stream:
            try:
                script = next(stream)
                args = [next(stream) for _ in range(int(count))]
            except (StopIteration, ValueError):
                return
            text, status = run(script, args)
            replies.write(text.replace("\0", "") + "\0" + str(status) + "\n")
            replies.flush()


if __name__ == "__main__":
    main()
