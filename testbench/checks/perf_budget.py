#!/usr/bin/python3
"""The speed budget (label perfbudget): instructions per Ethernet frame of `perf write_bw -s 65536`
on each preset, measured with callgrind as the total of -n 60 minus that of -n 10 over the
frames between them, must not exceed the budget committed in perf_budget.json. Instruction
counts do not depend on the machine's load, so this can fail only when the code does more per
frame; the spin guard (sim.spin_guard_s), a second thread that wakes every 100 ms of wall time,
is off here, as its wakes grow with the load (with it on, a loaded machine added about 60
instructions a frame at 100 Gb/s). Writes OUT/perfbudget/report.json with every figure."""
import json
import os
import re
import shutil
import subprocess
import sys

from common import check, finish, load, out_dir

binary, work = sys.argv[1], out_dir(sys.argv[2], "perfbudget")
here = os.path.dirname(os.path.abspath(__file__))
budget = load(os.path.join(here, "perf_budget.json"))["budget"]
valgrind = shutil.which("valgrind")
if not check(valgrind is not None, "valgrind is not installed (scripts/setup installs it)"):
    finish("perfbudget")


def frames(stats):
    """Both MACs' tx_frames (every node's `<host>.mac` group)."""
    return sum(v["tx_frames"]["value"] for g, v in stats["stats"].items() if g.endswith(".mac"))


def measure(preset, n):
    o = os.path.join(work, f"{preset}_{n}")
    p = subprocess.run([valgrind, "--tool=callgrind", f"--callgrind-out-file={o}.callgrind",
                        binary, "perf", "write_bw", "-s", "65536", "-n", str(n), "--preset", preset,
                        "--set", "sim.spin_guard_s=0", "--quiet", "--out", o],
                       capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if not check(p.returncode == 0 and m, f"{preset} -n {n}: exit {p.returncode}: {p.stderr[-400:]}"):
        return None, None
    os.remove(o + ".callgrind")
    return int(m.group(1)), frames(load(os.path.join(o, "stats.json")))


report = {}
for preset, limit in budget.items():
    (i0, f0), (i1, f1) = measure(preset, 10), measure(preset, 60)
    if i0 is None or i1 is None:
        continue
    per_frame = (i1 - i0) / (f1 - f0)
    report[preset] = {"instructions": [i0, i1], "frames": [f0, f1],
                      "per_frame": round(per_frame), "budget": limit}
    print(f"perfbudget: {preset}: ({i1:,} - {i0:,}) / ({f1} - {f0}) = {per_frame:,.0f} "
          f"instructions per frame (budget {limit:,})")
    check(per_frame <= limit, f"{preset}: {per_frame:,.0f} instructions per frame, over the budget "
          f"of {limit:,} (testbench/checks/perf_budget.json; docs/performance.md)")
with open(os.path.join(work, "report.json"), "w") as f:
    json.dump(report, f, indent=2)
finish("perfbudget")
