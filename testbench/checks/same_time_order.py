#!/usr/bin/python3
"""Results that do not hang on SystemC's order of same-time events (docs/decisions.md,
"Determinism between hosts"): the demo (three workloads at once: several threads per host),
incast, and scale64 for 400 us, each run with and without `sim.decoy_ns` (a process that wakes
every 97 ns, or at the next event when that comes first, and does nothing: it reshapes the kernel's queue of timed events and so the order in
which processes of one time run). The rows, wall-clock fields aside, and the captures must be
the same. The decoy catches the races this rule fixed: with sc_mutex for the driver's ioctl lock
the demo's pair differs, and with the EFE choosing its next frame at each input scale64's does.

usage: same_time_order.py RNICSIM OUT_BASE"""
import glob
import hashlib
import os
import sys

from common import ROOT, check, finish, load, out_dir, rnicsim, strip_wall

binary, base = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
MACHINE = ("setup_s", "peak_rss_mib", "wall_per_frame_us")
scale64 = os.path.join(out_dir(base, "same_time_order_scenarios"), "scale64.yaml")
with open(os.path.join(ROOT, "scenarios", "experiments", "scale64.yaml")) as f:
    text = f.read().replace("duration_us: 1000", "duration_us: 400")
with open(scale64, "w") as f:
    f.write(text)


def outcome(o):
    caps = {}
    for p in sorted(glob.glob(os.path.join(o, "*.pcap"))):
        with open(p, "rb") as f:
            caps[os.path.basename(p)] = hashlib.sha256(f.read()).hexdigest()
        os.remove(p)  # hundreds of MB a run; the digest is what is compared
    return strip_wall(load(os.path.join(o, "results.json")), MACHINE), caps


for name, scen in (("demo", os.path.join(ROOT, "scenarios", "demo.yaml")),
                   ("incast", os.path.join(ROOT, "scenarios", "experiments", "incast.yaml")),
                   ("scale64", scale64)):
    got = []
    for decoy in ("0", "97"):
        o = out_dir(base, f"same_time_order_{name}_{decoy}")
        rnicsim(binary, "run", scen, "--set", f"sim.decoy_ns={decoy}", "--pcap", "--out", o,
                "--quiet")
        got.append(outcome(o))
    check(got[0][0] == got[1][0], f"{name}: results.json differs with the decoy")
    check(got[0][1] == got[1][1], f"{name}: a capture differs with the decoy")
    check(len(got[0][1]) > 0, f"{name}: no capture")
finish("same_time_order")
