#!/usr/bin/python3
"""The progress line (README, "Running"): on a terminal, a run longer than two seconds shows
simulated time, wall time, slowdown, the share of the work done and an ETA learned from the
work's rate so far; silent with --quiet and when stderr is not a terminal. Drives perf write_bw
(about 5 s) on a pseudo-terminal."""
import os
import pty
import re
import select
import subprocess
import sys
import time

from common import check, finish, out_dir

binary, work = sys.argv[1], out_dir(sys.argv[2], "progress")
ARGS = ["perf", "write_bw", "-s", "65536", "-n", "14000", "--out", os.path.join(work, "o")]


def on_terminal(extra, args=ARGS):
    """Everything the run writes to its terminal, and its wall time."""
    master, slave = pty.openpty()
    t0 = time.monotonic()
    p = subprocess.Popen([binary, *args, *extra], stdin=slave, stdout=slave, stderr=slave,
                         close_fds=True)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            out += data
        elif p.poll() is not None:
            break
    p.wait()
    os.close(master)
    return out.decode(errors="replace"), time.monotonic() - t0, p.returncode


text, wall, rc = on_terminal([])
check(rc == 0, f"exit {rc}: {text[-500:]!r}")
pat = re.compile(r"sim ([\d.]+) us  wall ([\d.]+) s  slowdown \d+x  (\d+)% of the work  ETA (\d+) s")
lines = [m for m in (pat.search(x) for x in text.split("\r")) if m]
check(len(lines) >= 2, f"{len(lines)} progress lines on the terminal: {text[:600]!r}")
if len(lines) >= 2:
    shares = [int(m.group(3)) for m in lines]
    check(shares == sorted(shares) and 0 < shares[0] < 100, f"shares of the work: {shares}")
    check(all(float(m.group(2)) >= 2.0 for m in lines), "a line before two seconds of wall time")
    # The first line's prediction of the end against the end (a rate, so loose bounds).
    predicted = float(lines[0].group(2)) + int(lines[0].group(4))
    check(0.5 * wall <= predicted <= 2 * wall, f"ETA: predicted end {predicted:.1f} s, ended at {wall:.1f} s")
# Silent cases: a run as long (the line starts after two seconds).
text, _, rc = on_terminal(["--quiet"])
check(rc == 0 and "ETA" not in text and "% of the work" not in text, f"--quiet: {text[:300]!r}")
p = subprocess.run([binary, *ARGS], capture_output=True, text=True)
check(p.returncode == 0 and "ETA" not in p.stderr, f"not a terminal: {p.stderr[:300]!r}")
finish("progress")
