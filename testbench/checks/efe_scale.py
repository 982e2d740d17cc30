#!/usr/bin/python3
"""scale64 as shipped (label experiment-long, which CI skips): 64 hosts on a leaf/spine run 1 ms
of writes on this machine, every Write succeeds, the traffic crosses both spines, and the row
reports wall time, peak memory and the goodput completed (within what the uplinks carry). With
the EFE's defaults (the scenario sets no efe.* key) the receivers get at least 75% of the 160
Gb/s the leaf uplinks carry, with Jain's index over the flows at least 0.9, and no switch drops.
scale_fixed_load as shipped: 64 hosts at 1 Gb/s each complete their load (64 Gb/s within 2%)
spread over their four peers (Jain's index over the flows at least 0.95), and the row reports frames and the wall time per frame after set-up."""
import os
import sys

from common import ROOT, check, check_untuned, finish, load, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
scenario = os.path.join(ROOT, "scenarios", "experiments", "scale64.yaml")
check_untuned(scenario)
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
# Whole Writes completed are delivered bytes too; Jain's index over 256 flows is in (1/256, 1].
check(0 < r["completed_gbps"] <= r["goodput_gbps"], f"completed {r['completed_gbps']} Gb/s")
check(1 / 256 <= r["jain"] <= 1, f"Jain {r['jain']}")
check(r["goodput_gbps"] >= 0.75 * 160, f"goodput {r['goodput_gbps']} Gb/s: below 75% of 160")
check(r["jain"] >= 0.9, f"Jain {r['jain']}: below 0.9")
stats = load(os.path.join(o, "stats.json"))["stats"]
drops = sum(v["tail_drops"]["value"] for g, v in stats.items()
            if isinstance(v, dict) and "tail_drops" in v)
check(drops == 0, f"{drops} tail drops")
for s in ("spine0", "spine1"):
    frames = sum(v["tx_frames"]["value"] for g, v in stats.items() if g.startswith(s + ".p"))
    check(frames > 0, f"{s} forwarded {frames} frames")

o = out_dir(base, "scale_fixed_load")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "scale_fixed_load.yaml"),
        "--out", o, "--quiet")
r = load(os.path.join(o, "results.json"))["rows"][0]
check(abs(r["goodput_gbps"] - 64) < 64 * 0.02, f"fixed load: {r['goodput_gbps']} Gb/s, not 64")
# Each host's load is spread over its four peers (its paced posts go to them in turn).
check(r["jain"] >= 0.95, f"fixed load: Jain's index over the flows {r['jain']:.3f}, below 0.95")
check(r["frames"] > 0 and 0 < r["setup_s"] < r["wall_s"] and r["wall_per_frame_us"] > 0,
      f"fixed load row {r}")
finish("efe_scale")
