#!/usr/bin/python3
"""rnicsim sweep (docs/scenarios.md, "Sweeps"): a parameter and a scenario path varied together
run every combination as processes of their own, two at a time, and merge into one results.json
with the varied keys as columns; scripts/plot draws each metric against each varied key; a
second run skips the points already done; a point that fails is reported with its command and
does not stop the others (exit 1); a bad key or a bad value is refused before anything runs
(exit 2, no folder left); --slurm writes a job array and a merge that a stub sbatch submits."""
import json
import os
import subprocess
import sys

from common import ROOT, check, finish, load, out_dir, rnicsim, write_file

binary, work = sys.argv[1], out_dir(sys.argv[2], "sweep")
build = os.path.dirname(binary)
scen = write_file(work, "sw.yaml", "workloads:\n  - {name: w, test: write_bw, size: 4096, iters: 30}\n")

o = os.path.join(work, "s1")
p = rnicsim(binary, "sweep", scen, "--vary", "workloads.0.size=4096,65536", "--vary",
            "pcie.mps=128,256", "-j", "2", "--out", o)
res = load(os.path.join(o, "results.json"))
check(res["sweep"]["vary"] == ["workloads.0.size", "pcie.mps"], f"vary: {res['sweep']['vary']}")
got = sorted((r["workloads.0.size"], r["pcie.mps"], r["bytes"]) for r in res["rows"])
check(got == [(4096, 128, 4096), (4096, 256, 4096), (65536, 128, 65536), (65536, 256, 65536)],
      f"merged rows: {got}")
check(all(pt["exit"] == 0 for pt in res["sweep"]["points"]), f"points: {res['sweep']['points']}")
# Each point is a run of its own, with the parameter as --set and the path in its scenario.
p0 = load(os.path.join(o, "points", "0003", "point.json"))
check("--set pcie.mps=256" in p0["command"], f"point 3's command: {p0['command']}")
check("size: 65536" in open(os.path.join(o, "points", "0003", "scenario.yaml")).read(),
      "point 3's scenario does not hold its size")
check(load(os.path.join(o, "points", "0003", "stats.json"))["config"]["pcie.mps"] == 256,
      "point 3 did not run with pcie.mps 256")
q = subprocess.run([os.path.join(ROOT, "scripts", "plot"), o], capture_output=True, text=True)
pngs = os.listdir(os.path.join(o, "plots")) if q.returncode == 0 else []
check(any("vs_workloads_0_size" in n for n in pngs) and any("vs_pcie_mps" in n for n in pngs),
      f"scripts/plot: {q.stdout}{q.stderr} {pngs}")
# Again: nothing runs (the points are done with the same scenario and command).
stamp = os.path.getmtime(os.path.join(o, "points", "0000", "results.json"))
p = rnicsim(binary, "sweep", scen, "--vary", "workloads.0.size=4096,65536", "--vary",
            "pcie.mps=128,256", "-j", "2", "--out", o)
check("4 of 4 points done already" in p.stdout, f"re-run: {p.stdout!r}")
check(os.path.getmtime(os.path.join(o, "points", "0000", "results.json")) == stamp,
      "re-run ran point 0 again")

# A point that fails: reported with its command, the others still run, exit 1.
prog = os.path.join(build, "testbench", "hostile", "misbehave.so")
fails = write_file(work, "fails.yaml", f"workloads:\n  - {{program: {prog}, hosts: [node0], args: [exit, '0']}}\n")
o = os.path.join(work, "s2")
p = rnicsim(binary, "sweep", fails, "--vary", "workloads.0.args.1=0,3,0", "--out", o, expect=1)
check("sweep point 1 failed with exit 1" in p.stderr and "rnicsim run" not in p.stderr.split("\n")[0]
      and os.path.join("points", "0001") in p.stderr, f"failed point: {p.stderr!r}")
pts = load(os.path.join(o, "results.json"))["sweep"]["points"]
check([pt["exit"] for pt in pts] == [0, 1, 0], f"point exits: {[pt['exit'] for pt in pts]}")

# Refused before anything runs.
for vary, words in (("nosuch.key=1,2", "neither a parameter"), ("pcie.mps=100,256", "out of range"),
                    ("workloads.5.size=1", "not an item of a list of 1")):
    o = os.path.join(work, "bad")
    p = rnicsim(binary, "sweep", scen, "--vary", vary, "--out", o, expect=2)
    check(words in p.stderr and p.stderr.count("\n") == 1, f"--vary {vary}: {p.stderr!r}")
    check(not os.path.exists(o), f"--vary {vary}: a refused sweep left {o}")

# Slurm: a job array of the points and a merge after them, submitted by submit.sh.
o = os.path.join(work, "slurm")
rnicsim(binary, "sweep", scen, "--vary", "workloads.0.size=4096,65536", "--seeds", "2", "--slurm",
        "--out", o)
for f in ("sweep.sbatch", "merge.sbatch", "submit.sh"):
    check(subprocess.run(["bash", "-n", os.path.join(o, f)]).returncode == 0, f"bash -n {f}")
check("#SBATCH --array=0-3" in open(os.path.join(o, "sweep.sbatch")).read(), "array of 4 tasks")
stub = os.path.join(work, "stub")
os.makedirs(stub, exist_ok=True)
log = os.path.join(work, "sbatch.log")
write_file(stub, "sbatch", f"#!/bin/bash\necho \"$@\" >> {log}\necho 4242\n")
os.chmod(os.path.join(stub, "sbatch"), 0o755)
if os.path.exists(log):
    os.remove(log)
p = subprocess.run(["bash", os.path.join(o, "submit.sh")], capture_output=True, text=True,
                   env={**os.environ, "PATH": stub + ":" + os.environ["PATH"]})
calls = open(log).read().splitlines() if os.path.exists(log) else []
check(p.returncode == 0 and len(calls) == 2 and "sweep.sbatch" in calls[0]
      and "--dependency=afterany:4242" in calls[1] and "merge.sbatch" in calls[1],
      f"submit.sh: exit {p.returncode}, sbatch calls {calls}, {p.stderr}")
# What an array task and the merge step run, run here by hand: the same results.
task = [l for l in open(os.path.join(o, "sweep.sbatch")) if "--point" in l][0]
for i in range(4):
    r = subprocess.run(["bash", "-c", task.replace('"$SLURM_ARRAY_TASK_ID"', str(i))],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"array task {i}: {r.stderr}")
merge = [l for l in open(os.path.join(o, "merge.sbatch")) if "--merge" in l][0]
r = subprocess.run(["bash", "-c", merge], capture_output=True, text=True)
rows = load(os.path.join(o, "results.json"))["rows"] if r.returncode == 0 else []
check(sorted({(x["workloads.0.size"], x["sim.seed"]) for x in rows}) ==
      [(4096, 1), (4096, 2), (65536, 1), (65536, 2)], f"merge: exit {r.returncode} {r.stderr} {rows}")
finish("sweep")
