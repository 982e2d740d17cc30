#!/usr/bin/python3
"""Observing never changes a run: each shipped scenario and perf test runs without observers and
with each of them (a waveform with a window reaching past the run's end, a time series sampled
every microsecond, a capture, the request timeline), and results.json (wall-clock fields aside) and
every capture's bytes, timestamps included, must be the same. The short form (label `system`, in CI)
runs the demo scenario and three perf tests; `--full` (label `observers-long`, not in CI) every
shipped scenario and all six perf tests.

usage: observers.py RNICSIM OUT_BASE [--full]"""
import glob
import os
import sys

from common import ROOT, check, finish, load, out_dir, rnicsim, strip_wall

binary, base = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
full = "--full" in sys.argv[3:]
# Shipped scenarios run from the repository root (the example programs' paths are relative to it).
os.chdir(ROOT)

OBSERVERS = {
    "trace": ["--trace", "fst", "--trace-window", "0:1000000000"],
    "stats": ["--set", "sim.stats_interval_ns=1000"],
    "timeline": ["--timeline", "{out}/timeline.json"],
}

runs = [("demo", ["run", os.path.join(ROOT, "scenarios", "demo.yaml")])]
perf = [("write_lat", ["-s", "64", "-n", "20"]), ("read_bw", ["-s", "65536", "-n", "20"]),
        ("send_bw", ["-s", "4096", "-n", "50"])]
if full:
    runs += [(os.path.splitext(os.path.basename(p))[0], ["run", p])
             for p in sorted(glob.glob(os.path.join(ROOT, "scenarios", "examples", "*.yaml")))]
    perf += [("write_bw", ["-s", "65536", "-n", "50"]), ("read_lat", ["-s", "64", "-n", "20"]),
             ("send_lat", ["-s", "64", "-n", "20"])]
runs += [(f"perf_{t}", ["perf", t, *a, "--pcap"]) for t, a in perf]


def outputs(o):
    """results.json without wall-clock fields, and each capture's bytes."""
    caps = {}
    for p in sorted(glob.glob(os.path.join(o, "*.pcap"))):
        with open(p, "rb") as f:
            caps[os.path.basename(p)] = f.read()
    return strip_wall(load(os.path.join(o, "results.json"))), caps


# A shipped scenario may fail on purpose (program_fault, link_cut: exit 1): its exit code must not
# move.
FAILS = {"program_fault": 1, "link_cut": 1}
for name, args in runs:
    o = out_dir(base, f"observers_{name}_none")
    code = FAILS.get(name, 0)
    want_out = rnicsim(binary, *args, "--out", o, "--quiet", expect=code).stdout  # its prints
    want = outputs(o)
    check(want[0].get("rows") or want[0].get("workloads"), f"{name}: no rows nor workloads")
    for obs, extra in OBSERVERS.items():
        o2 = out_dir(base, f"observers_{name}_{obs}")
        extra = [a.format(out=o2) for a in extra]
        p = rnicsim(binary, *args, *extra, "--out", o2, "--quiet", expect=None)
        if obs == "timeline" and p.returncode == 2 and "builds no hosts joined by links" in p.stderr:
            continue  # a host-only experiment has no timeline (refused, as docs/scenarios.md says)
        check(p.returncode == code, f"{name} with {' '.join(extra)}: exit {p.returncode}\n{p.stderr}")
        got_out = p.stdout
        got = outputs(o2)
        check(got[0] == want[0], f"{name}: results.json differs with {' '.join(extra)}")
        check(got_out == want_out, f"{name}: the programs printed otherwise with {' '.join(extra)}:"
              f"\n{got_out}instead of\n{want_out}")
        check(got[1] == want[1], f"{name}: a capture differs with {' '.join(extra)}")
    if name.startswith("perf_"):
        # The capture itself is an observer: without it the results are the same.
        o3 = out_dir(base, f"observers_{name}_nopcap")
        rnicsim(binary, *[a for a in args if a != "--pcap"], "--out", o3, "--quiet")
        check(outputs(o3)[0] == want[0], f"{name}: results.json differs without --pcap")
finish("observers")
