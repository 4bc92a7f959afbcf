"""Drives the interactive tusk shell in a pseudo-terminal: a long query,
Ctrl-C, then another query. Prints what happened; used by tests/ctrl_c.rs.

Usage: ctrl_c.py TUSK DATADIR
"""

import os
import pty
import select
import sys
import time

tusk, data = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(tusk, [tusk, "-D", data])
out = b""


def read_for(seconds):
    global out
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                return


def wait_for(s, seconds=60):
    end = time.time() + seconds
    while s not in out and time.time() < end:
        read_for(0.2)
    return s in out


wait_for(b"tusk=> ")
os.write(fd, b"select count(*) from generate_series(1, 100000000000) g;\r")
# The line is accepted once bracketed paste is switched off again; then
# the statement runs, and Ctrl-C reaches the terminal as SIGINT.
wait_for(b"g;\x1b[?2004l")
read_for(1.0)
os.write(fd, b"\x03")
canceled = wait_for(b"ERROR:  canceling statement due to user request")
os.write(fd, b"select 40 + 2;\r")
alive = wait_for(b"      42\r\n")
os.write(fd, b"\\q\r")
read_for(0.5)
try:
    os.kill(pid, 9)
except ProcessLookupError:
    pass
os.waitpid(pid, 0)
print("canceled" if canceled else "not canceled", "alive" if alive else "dead")
if not (canceled and alive):
    sys.stderr.write(repr(out[-1000:]) + "\n")
