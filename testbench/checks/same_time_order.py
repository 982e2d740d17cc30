#!/usr/bin/python3
"""Results that do not hang on SystemC's order of same-time events (docs/decisions.md,
"Determinism between hosts"): the demo (three workloads at once: several threads per host),
incast, and scale64 for 400 us, each run with and without `sim.decoy_ns` (a process that wakes
every 97 ns, or at the next event when that comes first, and does nothing: it reshapes the kernel's queue of timed events and so the order in
which processes of one time run); incast and scale64 also with `efe.decoy_timer` (each EFE arms a second
retransmit timer, an event of its own, a picosecond after the real one and moves it with it,
so it never fires: the kernel's queue reshaped at exactly the EFE's deadlines). The rows,
wall-clock fields aside, and the captures must be the same. They catch the races this rule
fixed: with sc_mutex for the driver's ioctl lock the demo's pair differs with sim.decoy_ns, and
with the EFE choosing its next frame at each input scale64's differs with efe.decoy_timer
(48,755 frames against 48,848; sim.decoy_ns alone no longer shows that one).

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
    runs = [("none", ["sim.decoy_ns=0"]), ("decoy", ["sim.decoy_ns=97"])]
    if name != "demo":  # and a second retransmit timer in every EFE, that never fires
        runs.append(("decoy_timer", ["efe.decoy_timer=true"]))
    got = []
    for tag, sets in runs:
        o = out_dir(base, f"same_time_order_{name}_{tag}")
        rnicsim(binary, "run", scen, *[a for s in sets for a in ("--set", s)], "--pcap", "--out",
                o, "--quiet")
        got.append(outcome(o))
    for (tag, _), g in zip(runs[1:], got[1:]):
        check(got[0][0] == g[0], f"{name}: results.json differs with the {tag}")
        check(got[0][1] == g[1], f"{name}: a capture differs with the {tag}")
    check(len(got[0][1]) > 0, f"{name}: no capture")
finish("same_time_order")
