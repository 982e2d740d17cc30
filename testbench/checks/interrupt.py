#!/usr/bin/python3
"""Ctrl-C during a long run: exit code 130, and stats.json / results.json hold what was
gathered so far."""
import json
import os
import signal
import subprocess
import sys
import time

from common import check, finish, out_dir

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "interrupt")
for f in ("stats.json", "results.json"):
    if os.path.exists(os.path.join(o, f)):
        os.remove(os.path.join(o, f))
p = subprocess.Popen([binary, "perf", "pcie_dma", "--out", o, "--quiet"], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
time.sleep(2.0)
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=60)
check(p.returncode == 130, f"exit {p.returncode}, expected 130; {err!r}")
check("interrupted" in err, f"stderr: {err!r}")
rows = json.load(open(os.path.join(o, "results.json")))["rows"]
check(0 < len(rows) < 3240, f"{len(rows)} rows: expected a part of the 3240-point sweep")
check("stats" in json.load(open(os.path.join(o, "stats.json"))), "stats.json without stats")
finish("interrupt")
