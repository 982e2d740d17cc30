#!/usr/bin/python3
"""`rnicsim perf pcie_dma` (CI form: 64 KiB and 1 MiB transfers, every gen/lanes/MPS/MRRS of the
default sweep): large writes land within 2% below the lower of the TLP-overhead limit and the
DMAC's beat limit, nothing exceeds it."""
import os
import sys

from common import check, finish, load, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
rows = []
for size in (65536, 1048576):
    o = out_dir(base, f"pcie_dma_{size}")
    rnicsim(binary, "perf", "pcie_dma", "-s", str(size), "--out", o, "--quiet")
    rows += load(os.path.join(o, "results.json"))["rows"]
check(len(rows) == 2 * 3 * 3 * 3 * 4 * 2, f"{len(rows)} rows")
for r in rows:
    ratio = r["gbps"] / r["limit_gbps"]
    what = f"{r['op']} gen{r['gen']} x{r['lanes']} mps{r['mps']} mrrs{r['mrrs']} {r['bytes']} B: {r['gbps']:.2f} of {r['limit_gbps']:.2f} Gb/s"
    check(ratio <= 1.0 + 1e-9, "above the limit: " + what)
    if r["op"] == "write":
        check(ratio >= 0.98, "write more than 2% below the limit: " + what)
finish("pcie_dma")
