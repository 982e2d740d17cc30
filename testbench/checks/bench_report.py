#!/usr/bin/python3
"""Simulator speed report (label bench): runs the PCIe DMA sweep at one size and the PBL
experiment, and writes OUT/bench/report.json with wall time, simulated time and event rates.
Asserts only that the runs succeed and the report is complete: speed is measured, not tested."""
import json
import os
import sys
import time

from common import check, finish, load, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
bench = out_dir(base, "bench")
report = {"host_cpus": os.cpu_count(), "runs": []}

runs = [
    ("pcie_dma_1MiB", ["perf", "pcie_dma", "-s", "1048576"]),
    ("pbl_acquisition", ["run", os.path.join(root, "scenarios", "experiments", "pbl_acquisition.yaml")]),
    ("demo", ["run", os.path.join(root, "scenarios", "demo.yaml")]),
]
for name, args in runs:
    o = out_dir(bench, name)
    t0 = time.monotonic()
    rnicsim(binary, *args, "--out", o, "--quiet")
    wall = time.monotonic() - t0
    st = load(os.path.join(o, "stats.json"))
    tlps = sum(g.get("tlps", {}).get("value", 0) for k, g in st["stats"].items() if k.startswith("pcie."))
    entry = {"name": name, "command": "rnicsim " + " ".join(args), "wall_s": round(wall, 3),
             "sim_time_ns": st["sim_time_ns"], "tlps": tlps,
             "tlps_per_wall_s": round(tlps / wall) if wall > 0 else None,
             "rows": len(load(os.path.join(o, "results.json"))["rows"])}
    report["runs"].append(entry)
    check(entry["rows"] > 0, f"{name}: no rows")
with open(os.path.join(bench, "report.json"), "w") as f:
    json.dump(report, f, indent=2)
print(json.dumps(report, indent=2))
finish("bench_report")
