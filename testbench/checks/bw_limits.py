#!/usr/bin/python3
"""No bandwidth figure can beat the wire: across sizes, QPs, send depths and cq_mod, every
bandwidth test's average and peak stay at or below the 10 GbE limit of its payload (a 1500-byte
MTU frame carries 1466 payload bytes of a tagged segment, 1462 of a Send, in 1538 wire bytes)."""
import os
import sys

from common import check, finish, load, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
WIRE = 10e9 / 8 / 1538 / (1 << 20)  # frames' worth of MiB/s per payload byte
LIMIT = {"write_bw": WIRE * 1466, "read_bw": WIRE * 1466, "send_bw": WIRE * 1462}
EPS = 1e-6

cases = []
for test in ("write_bw", "send_bw", "read_bw"):
    for size in ("4096", "65536"):
        for q in ("1", "8"):
            cases.append((test, ["-s", size, "-n", "200", "-q", q, "-t", "128"]))
cases.append(("write_bw", ["-s", "4096", "-n", "500", "-q", "8"]))  # 1333 MiB/s peak before
for i, (test, args) in enumerate(cases):
    o = out_dir(base, f"bw_limits_{i}")
    rnicsim(binary, "perf", test, *args, "--out", o, "--quiet")
    for row in load(os.path.join(o, "results.json"))["rows"]:
        for k in ("bw_avg_mib_s", "bw_peak_mib_s"):
            check(row[k] <= LIMIT[test] * (1 + EPS),
                  f"{test} {' '.join(args)}: {k} {row[k]:.2f} above the wire's {LIMIT[test]:.2f}")

# A scenario with several QPs and a CQ moderation (3512 MiB/s peak before).
o = out_dir(base, "bw_limits_scenario")
scen = os.path.join(o, "qps_cq_mod.yaml")
with open(scen, "w") as f:
    f.write("name: bw_limits\npreset: rnic-10g\n"
            "topology:\n  hosts: [{name: a}, {name: b}]\n  links: [{between: [a, b]}]\n"
            "workloads:\n  - {name: w, test: write_bw, from: a, to: b, size: 4096, iters: 400,"
            " qps: 4, cq_mod: 10}\n")
rnicsim(binary, "run", scen, "--out", o, "--quiet")
for row in load(os.path.join(o, "results.json"))["rows"]:
    for k in ("bw_avg_mib_s", "bw_peak_mib_s"):
        check(row[k] <= LIMIT["write_bw"] * (1 + EPS),
              f"qps 4, cq_mod 10: {k} {row[k]:.2f} above the wire's {LIMIT['write_bw']:.2f}")
# A responder whose IRD is below the card's ORD: the traffic generators exchange IRD (as MPA
# would) and keep ORD within it, so the Reads run instead of failing the QP.
o = out_dir(base, "bw_limits_ird")
rnicsim(binary, "perf", "read_bw", "-s", "4096", "-n", "100", "-q", "2", "--set", "core.ird=4",
        "--out", o, "--quiet")
rows = load(os.path.join(o, "results.json"))["rows"]
check(len(rows) == 1 and rows[0]["bw_avg_mib_s"] > 1000, f"read_bw with core.ird=4: {rows}")
finish("bw_limits")
