#!/usr/bin/python3
"""The same scenario and seed give byte-identical stats.json and results.json, wall-clock fields
aside (the demo, pbl_acquisition and the memory experiments; Debian's ibv_rc_pingpong,
ibv_srq_pingpong and rping run as simulated processes), and byte-identical captures; another seed changes the physical layout (and so the results of a scattered buffer)."""
import json
import os
import sys

from common import check, finish, out_dir, rnicsim, strip_wall

binary, base = sys.argv[1], sys.argv[2]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def canonical(path):
    with open(path) as f:
        return json.dumps(strip_wall(json.load(f)), indent=1)


MEMORY = ("sg_registration", "sg_transfer", "reg_cache", "callbacks", "odp")
for scen in ("demo.yaml", os.path.join("experiments", "pbl_acquisition.yaml"),
             *(os.path.join("experiments", m + ".yaml") for m in MEMORY)):
    outs = []
    for run in ("a", "b"):
        o = out_dir(base, f"det_{os.path.basename(scen)}_{run}")
        rnicsim(binary, "run", os.path.join(root, "scenarios", scen), "--seed", "7", "--out", o, "--quiet")
        outs.append(o)
    for f in ("stats.json", "results.json"):
        check(canonical(os.path.join(outs[0], f)) == canonical(os.path.join(outs[1], f)),
              f"{scen}: {f} differs between two runs with the same seed")
        with open(os.path.join(outs[0], f)) as fa:
            check(len(fa.read()) > 100, f"{scen}: {f} is empty")
# Two nodes: the same seed gives the same stats, results and captures.
outs = []
for run in ("a", "b"):
    o = out_dir(base, f"det_send_bw_{run}")
    rnicsim(binary, "perf", "send_bw", "-s", "3000", "-n", "40", "--pcap", "--seed", "7", "--out", o, "--quiet")
    outs.append(o)
for f in ("stats.json", "results.json"):
    check(canonical(os.path.join(outs[0], f)) == canonical(os.path.join(outs[1], f)),
          f"perf send_bw: {f} differs between two runs with the same seed")
with open(os.path.join(outs[0], "eth0.pcap"), "rb") as fa, open(os.path.join(outs[1], "eth0.pcap"), "rb") as fb:
    a, b = fa.read(), fb.read()
    check(len(a) > 40 * 3000 and a == b, "perf send_bw: eth0.pcap differs between two runs with the same seed")
# Executables as simulated processes (Debian's programs): the same results, stats and captures.
for scen in ("ibv_rc_pingpong.yaml", "ibv_srq_pingpong.yaml", "rping.yaml"):
    outs = []
    for run in ("a", "b"):
        o = out_dir(base, f"det_{scen}_{run}")
        rnicsim(binary, "run", os.path.join(root, "scenarios", "examples", scen), "--pcap", "--seed", "7",
                "--out", o, "--quiet")
        outs.append(o)
    for f in ("stats.json", "results.json", "eth0.pcap"):
        if f.endswith(".pcap"):
            with open(os.path.join(outs[0], f), "rb") as fa, open(os.path.join(outs[1], f), "rb") as fb:
                a, b = fa.read(), fb.read()
            check(len(a) > 10000 and a == b, f"{scen}: {f} differs between two runs with the same seed")
        else:
            check(canonical(os.path.join(outs[0], f)) == canonical(os.path.join(outs[1], f)),
                  f"{scen}: {f} differs between two runs with the same seed")
finish("determinism")
