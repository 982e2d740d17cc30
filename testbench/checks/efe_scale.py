#!/usr/bin/python3
"""scale64 as shipped (label experiment-long, which CI skips): 64 hosts on a leaf/spine run 1 ms
of writes on this machine, every Write succeeds, the traffic crosses both spines, and the row
reports wall time, peak memory and the goodput completed (within what the uplinks carry)."""
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
# Every peer is on another leaf, so the traffic crosses the spines, both of them (the MAC-pair
# hash spreads it), and the 16 leaf uplinks of 10 Gb/s bound the goodput.
check(0 < r["goodput_gbps"] <= 160, f"goodput {r['goodput_gbps']} Gb/s over 16 uplinks of 10 Gb/s")
stats = load(os.path.join(o, "stats.json"))["stats"]
for s in ("spine0", "spine1"):
    frames = sum(v["tx_frames"]["value"] for g, v in stats.items() if g.startswith(s + ".p"))
    check(frames > 0, f"{s} forwarded {frames} frames")
finish("efe_scale")
