#!/usr/bin/python3
"""Ctrl-C (and SIGTERM, as a batch system sends) during a long run: the run stops within a
second of wall time, exits 130, and stats.json / results.json hold what was gathered so far;
a capture of an earlier run in the same folder is not left beside them."""
import json
import os
import signal
import subprocess
import sys
import time

from common import check, finish, out_dir

binary, base = sys.argv[1], sys.argv[2]
for sig, name in ((signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")):
    o = out_dir(base, f"interrupt_{name}")
    for f in ("stats.json", "results.json"):
        if os.path.exists(os.path.join(o, f)):
            os.remove(os.path.join(o, f))
    stale = os.path.join(o, "eth0.pcap")
    with open(stale, "wb") as f:
        f.write(b"an earlier run's capture")
    p = subprocess.Popen([binary, "perf", "pcie_dma", "--out", o, "--quiet"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(2.0)
    t0 = time.monotonic()
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    took = time.monotonic() - t0
    check(p.returncode == 130, f"{name}: exit {p.returncode}, expected 130; {err!r}")
    check(took < 1.0, f"{name}: the run took {took:.2f} s of wall time to stop")
    check("interrupted" in err, f"{name}: stderr: {err!r}")
    rows = json.load(open(os.path.join(o, "results.json")))["rows"]
    check(0 < len(rows) < 3240, f"{name}: {len(rows)} rows: expected a part of the 3240-point sweep")
    check("stats" in json.load(open(os.path.join(o, "stats.json"))), f"{name}: stats.json without stats")
    check(not os.path.exists(stale), f"{name}: an earlier run's capture is left in the output folder")
finish("interrupt")
