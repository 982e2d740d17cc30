#!/usr/bin/python3
"""The same scenario and seed give byte-identical stats.json and results.json, wall-clock fields
aside; another seed changes the physical layout (and so the results of a scattered buffer)."""
import json
import os
import sys

from common import check, finish, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def strip_wall(v):
    if isinstance(v, dict):
        return {k: strip_wall(x) for k, x in v.items() if not k.startswith("wall")}
    if isinstance(v, list):
        return [strip_wall(x) for x in v]
    return v


def canonical(path):
    with open(path) as f:
        return json.dumps(strip_wall(json.load(f)), indent=1)


for scen in ("demo.yaml", os.path.join("experiments", "pbl_acquisition.yaml")):
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
finish("determinism")
