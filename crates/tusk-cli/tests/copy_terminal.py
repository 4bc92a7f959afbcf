"""Drives the interactive tusk shell in a pseudo-terminal through COPY:
data typed after COPY FROM STDIN (psql's words and `>> ` prompts), then a
long load from a file (the progress line on the terminal). Prints what
happened; used by tests/copy_terminal.rs.

Usage: copy_terminal.py TUSK DATADIR FILE
"""

import os
import pty
import select
import sys
import time

tusk, data, path = sys.argv[1], sys.argv[2], sys.argv[3]
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
                out += os.read(fd, 65536)
            except OSError:
                return


def wait_for(s, seconds=120):
    end = time.time() + seconds
    while s not in out and time.time() < end:
        read_for(0.2)
    return s in out


results = []
wait_for(b"tusk=> ")
os.write(fd, b"create table t (a int, b text);\r")
wait_for(b"CREATE TABLE")
os.write(fd, b"copy t from stdin;\r")
intro = wait_for(b"End with a backslash and a period on a line by itself, or an EOF signal.\r\n>> ")
os.write(fd, b"1\tone\r")
prompt = wait_for(b"1\tone\r\n>> ")
os.write(fd, b"\\.\r")
typed = wait_for(b"COPY 1\r\n")
results.append("typed" if intro and prompt and typed else "typed: no")
start = len(out)
os.write(fd, ("copy t from '%s';\r" % path).encode())
loaded = wait_for(b"COPY 400000\r\n")
tail = out[start:]
progress = b"\rCOPY: " in tail and b" rows/s, " in tail and b"\r\x1b[KCOPY 400000" in tail
results.append("progress" if loaded and progress else "progress: no")
os.write(fd, b"\\q\r")
read_for(0.5)
try:
    os.kill(pid, 9)
except ProcessLookupError:
    pass
os.waitpid(pid, 0)
print(" ".join(results))
if results != ["typed", "progress"]:
    sys.stderr.write(repr(out[-1500:]) + "\n")
