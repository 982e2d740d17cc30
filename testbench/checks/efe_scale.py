#!/usr/bin/python3
"""scale64 as shipped (label experiment-long, which CI skips): 64 hosts on a leaf/spine run 1 ms
of writes on this machine, every Write succeeds, and the row reports wall time, peak memory and
the goodput completed."""
import os
import sys

from common import ROOT, check, finish, load, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "scale64")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "scale64.yaml"), "--out", o, "--quiet")
rows = load(os.path.join(o, "results.json"))["rows"]
check(len(rows) == 1, f"{len(rows)} rows")
r = rows[0]
check(r["hosts"] == 64 and r["sim_ms"] == 1, f"row {r}")
check(r["wall_s"] > 0 and r["peak_rss_mib"] > 0, f"row {r}")
check(r["peak_rss_mib"] < 24 * 1024, f"peak RSS {r['peak_rss_mib']} MiB: beyond this machine")
check(r["goodput_gbps"] > 100, f"goodput {r['goodput_gbps']} Gb/s over 64 hosts")
finish("efe_scale")
