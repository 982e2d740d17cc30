#!/usr/bin/python3
"""Simulator speed report (label bench): runs the PCIe DMA sweep at one size and the PBL
experiment, and writes OUT/bench/report.json with wall time, simulated time and event rates;
the cost of each block's RTL in the running card against the models (write_bw 64 KiB); and
an executable's call round trip and ib_write_bw's wall time against perf write_bw's; and
write_bw's wall time against ns-3's TCP bulk flow over the same simulated time; scale64's wall
time in one process and on 2 MPI ranks (best of three each); the wall time per frame of a
fabric at a fixed load per host at 64 and 1,024 hosts, rnicsim's and ns-3's.
Asserts only that the runs succeed and the report is complete: speed is measured, not tested."""
import json
import os
import shutil
import subprocess
import sys
import time

from common import check, finish, load, out_dir, rnicsim, strip_wall

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

# RTL co-simulation cost (docs/rtl.md): write_bw 64 KiB on rnic-10g with models only, each
# block's RTL alone and every block's, side by side in this one run, interleaved, best of three.
# The budget (5x the model-only wall time with --rtl all) is reported, not asserted.
RTL_RUN = ["perf", "write_bw", "-s", "65536", "-n", "300"]
impls = [("model", []), ("crc32", ["--rtl", "crc32"]), ("ddp_rx_parse", ["--rtl", "ddp_rx_parse"]),
         ("rnic_xlat", ["--rtl", "rnic_xlat"]), ("rnic_dmac", ["--rtl", "rnic_dmac"]),
         ("all", ["--rtl", "all"])]
best, model_ns = {}, None
for rep in range(3):
    for name, extra in impls:
        o = out_dir(bench, f"rtl_{name}")
        t0 = time.monotonic()
        rnicsim(binary, *RTL_RUN, *extra, "--out", o, "--quiet")
        wall = time.monotonic() - t0
        best[name] = min(best.get(name, wall), wall)
        sim_ns = load(os.path.join(o, "stats.json"))["sim_time_ns"]
        model_ns = sim_ns if model_ns is None else model_ns
        check(sim_ns == model_ns, f"rtl {name}: sim_time_ns {sim_ns}, the model run's {model_ns}")
report["rtl"] = {"command": "rnicsim " + " ".join(RTL_RUN) + " [--rtl BLOCK|all]",
                 "budget_x": 5.0,
                 "wall_s": {n: round(best[n], 3) for n, _ in impls},
                 "x_model": {n: round(best[n] / best["model"], 2) for n, _ in impls if n != "model"}}
report["rtl"]["within_budget"] = report["rtl"]["x_model"]["all"] <= 5.0
# Executables as simulated processes (docs/verbs.md, "Your own programs"): the wall-clock cost of
# one call's round trip between a process and the simulator (20,000 ibv_query_port calls less
# none, best of three), and ib_write_bw's wall time against perf write_bw's over the same
# simulated test (the target, at most 1.5x, is reported, not asserted).
prog = os.path.join(os.path.dirname(binary), "testbench", "system", "exec_verbs")


def exec_wall(args, extra=""):
    text = f"workloads:\n  - {{name: x, exec: [{', '.join(args)}], hosts: [node0]{extra}}}\n"
    path = os.path.join(bench, "exec.yaml")
    with open(path, "w") as f:
        f.write(text)
    t0 = time.monotonic()
    rnicsim(binary, "run", path, "--out", out_dir(bench, "exec"), "--quiet")
    return time.monotonic() - t0


calls = 20000
per_call = min((exec_wall([prog, "calls", str(calls)]) - exec_wall([prog, "calls", "0"])) / calls
               for _ in range(3))
WBW = ["-s", "65536", "-n", "1000"]
o = out_dir(bench, "exec_ib_write_bw")
wbw_yaml = os.path.join(bench, "ib_write_bw.yaml")
with open(wbw_yaml, "w") as f:
    f.write("workloads:\n  - name: write_bw\n    exec: [ib_write_bw, " + ", ".join(f"'{a}'" for a in WBW)
            + "]\n    hosts: [node1, node0]\n    args: [[], [node1]]\n")
t0 = time.monotonic()
rnicsim(binary, "run", wbw_yaml, "--out", o, "--quiet")
t_pt = time.monotonic() - t0
t0 = time.monotonic()
rnicsim(binary, "perf", "write_bw", *WBW, "--out", out_dir(bench, "own_write_bw"), "--quiet")
t_own = time.monotonic() - t0
report["exec"] = {"round_trip_us": round(per_call * 1e6, 2),
                  "round_trip_command": f"exec_verbs calls {calls} less calls 0, one host",
                  "ib_write_bw_wall_s": round(t_pt, 3),
                  "perf_write_bw_wall_s": round(t_own, 3),
                  "x_perf": round(t_pt / t_own, 2),
                  "target_x": 1.5,
                  "command": "ib_write_bw " + " ".join(WBW) + " (exec:, two hosts) against "
                             "rnicsim perf write_bw " + " ".join(WBW),
                  "note": "ib_write_bw's wall time includes its start-up, its CPU-clock "
                          "calibration and its 1 s sleep (simulated); the simulated test is the same"}
check(per_call > 0, "exec round trip: no time measured")

# Against ns-3 (docs/performance.md, "Against ns-3"): rnicsim's write_bw at 64 KiB, and ns-3's
# TCP bulk flow over the same simulated time at the preset's rate (testbench/bench/ns3_bulk.cc),
# one after the other in this run. The goals (rnicsim at most 0.10 of ns-3's wall time at
# 10 Gb/s, 0.05 at 100 Gb/s) are reported, not asserted.
ns3 = os.path.join(os.path.dirname(binary), "testbench", "bench", "ns3_bulk")
NS3_RUN = ["perf", "write_bw", "-s", "65536", "-n", "2000"]
if not os.path.exists(ns3):
    report["ns3"] = {"missing": "ns3_bulk was not built (Debian's libns3-dev: scripts/setup)"}
else:
    report["ns3"] = {"command": "rnicsim " + " ".join(NS3_RUN) + " [--preset P] against "
                                "ns3_bulk RATE SIM_NS (the row's simulated time)",
                     "note": "rnicsim's wall is its row's (connection set-up excluded); ns-3's "
                             "is the whole process's",
                     "presets": {}}
    for preset, gbps, goal in (("rnic-10g", 10, 0.10), ("rnic-100g", 100, 0.05)):
        o = out_dir(bench, f"ns3_rnicsim_{preset}")
        rnicsim(binary, *NS3_RUN, "--preset", preset, "--out", o, "--quiet")
        row = load(os.path.join(o, "results.json"))["rows"][0]
        t0 = time.monotonic()
        got = subprocess.run([ns3, str(gbps), str(int(row["sim_time_ns"]))], capture_output=True,
                             text=True)
        ns3_wall = time.monotonic() - t0
        check(got.returncode == 0, f"ns3_bulk {gbps}: exit {got.returncode}: {got.stderr[-300:]}")
        peer = json.loads(got.stdout) if got.returncode == 0 else {}
        report["ns3"]["presets"][preset] = {
            "sim_time_ns": row["sim_time_ns"], "rnicsim_wall_s": round(row["wall_s"], 3),
            "ns3_wall_s": round(ns3_wall, 3),
            "ratio": round(row["wall_s"] / ns3_wall, 3) if ns3_wall > 0 else None,
            "goal_ratio": goal, "rnicsim_bw_mib_s": round(row["bw_avg_mib_s"], 2),
            "ns3_goodput_gbps": peer.get("goodput_gbps")}
        check(peer.get("rx_bytes", 0) > 0, f"ns3_bulk {gbps}: nothing received")

# A run over 2 processes (mpirun; docs/performance.md, "Runs over several processes"): scale64
# in one process and on 2 ranks, the whole process's wall time and the experiment's own (its
# row's wall_s: elaboration and simulation, without MPI's start-up), each the best of three
# runs, alternating, and the outputs' identity in every pair.
SCALE = os.path.join(root, "scenarios", "experiments", "scale64.yaml")
mpirun = shutil.which("mpirun")
if not mpirun:
    report["ranks"] = {"missing": "mpirun not found (Debian's openmpi-bin: scripts/setup)"}
else:
    walls, exps, identical = {}, {}, True
    for _ in range(3):
        rows, stats = {}, {}
        for n in (1, 2):
            o = out_dir(bench, f"ranks_{n}")
            cmd = [binary, "run", SCALE, "--out", o, "--quiet"]
            if n > 1:
                cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(n)] + cmd
            t0 = time.monotonic()
            got = subprocess.run(cmd, capture_output=True, text=True)
            walls[n] = min(walls.get(n, float("inf")), time.monotonic() - t0)
            check(got.returncode == 0,
                  f"scale64 on {n} rank(s): exit {got.returncode}: {got.stderr[-300:]}")
            rows[n] = load(os.path.join(o, "results.json"))["rows"][0]
            exps[n] = min(exps.get(n, float("inf")), rows[n]["wall_s"])
            stats[n] = strip_wall(load(os.path.join(o, "stats.json"))["stats"],
                                  ("setup_s", "peak_rss_mib"))
        identical &= stats[1] == stats[2] and strip_wall(rows[1], ("setup_s", "peak_rss_mib")) \
            == strip_wall(rows[2], ("setup_s", "peak_rss_mib"))
    report["ranks"] = {
        "command": "[mpirun --allow-run-as-root -n 2] rnicsim run scenarios/experiments/scale64.yaml",
        "note": "best of three runs of each, alternating",
        "wall_s": {"1": round(walls[1], 3), "2": round(walls[2], 3)},
        "speedup": round(walls[1] / walls[2], 3),
        "experiment_wall_s": {"1": round(exps[1], 3), "2": round(exps[2], 3)},
        "experiment_speedup": round(exps[1] / exps[2], 3),
        "identical": identical}
    check(report["ranks"]["identical"], "scale64 on 2 ranks differs from one process")

# Growth with the host count (docs/performance.md, "Growth with the host count"): the fixed-load
# fabric at 64 and 1,024 hosts, rnicsim's wall time per frame after set-up, and ns-3's
# packet-level model of the same fabric and load (testbench/bench/ns3_fabric.cc) for 1 ms each.
# The target (at most 1.3x from 64 to 1,024 hosts) is reported, not asserted.
FIXED = os.path.join(root, "scenarios", "experiments", "scale_fixed_load.yaml")
fabric = os.path.join(os.path.dirname(binary), "testbench", "bench", "ns3_fabric")
growth = {"command": "rnicsim run scale_fixed_load.yaml (hosts: N) against ns3_fabric N 1000",
          "target_growth": 1.3, "rnicsim": {}, "ns3": {}}
with open(FIXED) as f:
    fixed = f.read()
for hosts in (64, 1024):
    path = os.path.join(bench, f"fixed_load_{hosts}.yaml")
    with open(path, "w") as f:
        f.write(fixed.replace("  hosts: 64\n", f"  hosts: {hosts}\n"))
    o = out_dir(bench, f"fixed_load_{hosts}")
    rnicsim(binary, "run", path, "--out", o, "--quiet")
    row = load(os.path.join(o, "results.json"))["rows"][0]
    growth["rnicsim"][str(hosts)] = {k: row.get(k) for k in ("frames", "setup_s", "wall_s",
                                                            "wall_per_frame_us", "peak_rss_mib")}
    check(row.get("frames", 0) > 0 and row.get("hosts") == hosts,
          f"fixed load at {hosts} hosts: {row.get('frames')} frames, {row.get('hosts')} hosts")
    if os.path.exists(fabric):
        got = subprocess.run([fabric, str(hosts), "1000"], capture_output=True, text=True)
        check(got.returncode == 0, f"ns3_fabric {hosts}: exit {got.returncode}: {got.stderr[-300:]}")
        if got.returncode == 0:
            growth["ns3"][str(hosts)] = json.loads(got.stdout)
for who in ("rnicsim", "ns3"):
    g = growth[who]
    if "64" in g and "1024" in g and g["64"]["wall_per_frame_us"]:
        g["growth"] = round(g["1024"]["wall_per_frame_us"] / g["64"]["wall_per_frame_us"], 2)
if not os.path.exists(fabric):
    growth["ns3"] = {"missing": "ns3_fabric was not built (Debian's libns3-dev: scripts/setup)"}
report["growth"] = growth

with open(os.path.join(bench, "report.json"), "w") as f:
    json.dump(report, f, indent=2)
print(json.dumps(report, indent=2))
finish("bench_report")
