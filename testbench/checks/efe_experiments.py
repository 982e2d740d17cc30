#!/usr/bin/python3
"""The EFE network's experiments (CI form). loss_goodput as shipped: at 1% frame loss at least 90%
of the lossless goodput, no completion error at any loss, no retransmission without loss and
more as loss grows; scripts/plot draws its figure."""
import os
import sys

from common import ROOT, check, finish, load, out_dir, plot, rnicsim

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "loss_goodput")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "loss_goodput.yaml"), "--out", o,
        "--quiet")
res = load(os.path.join(o, "results.json"))
rows = {r["loss"]: r for r in res["rows"]}
check(sorted(rows) == [0, 0.001, 0.01, 0.02, 0.05], f"loss points {sorted(rows)}")
base_gbps = rows[0]["goodput_gbps"]
check(base_gbps > 9.4, f"lossless goodput {base_gbps:.3f} Gb/s (10 GbE, 64 KiB writes)")
check(rows[0.01]["goodput_gbps"] >= 0.9 * base_gbps,
      f"at 1% loss {rows[0.01]['goodput_gbps']:.3f} Gb/s, below 90% of {base_gbps:.3f}")
check(all(r["completion_errors"] == 0 for r in rows.values()), "completion errors")
check(rows[0]["retransmissions"] == 0, "retransmissions without loss")
retx = [rows[p]["retransmissions"] for p in sorted(rows)]
check(all(b > a for a, b in zip(retx[1:], retx[2:])), f"retransmissions do not grow with loss: {retx}")
plot(o, "loss_goodput")
finish("efe_experiments")
