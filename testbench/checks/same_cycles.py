#!/usr/bin/python3
"""The same cycles, whatever makes them faster (docs/performance.md, "The same cycles"): each run
below gives the results and the statistics (wall-clock and machine fields aside) and captures,
byte for byte, that same_cycles.json holds. The figures were taken from the tree before the
speed work; a change that moves one on purpose re-takes them in the same commit and says why
(`same_cycles.py RNICSIM OUT --update` rewrites the file).

usage: same_cycles.py RNICSIM OUT_BASE [--update]"""
import glob
import hashlib
import json
import os
import sys

from common import ROOT, check, finish, load, out_dir, rnicsim, strip_wall

binary, base = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
update = "--update" in sys.argv[3:]
REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "same_cycles.json")
RUNS = {
    "write_bw": ["perf", "write_bw", "-s", "65536", "-n", "300"],
    "read_bw": ["perf", "read_bw", "-s", "65536", "-n", "300"],
    "send_bw": ["perf", "send_bw", "-s", "65536", "-n", "300"],
    "write_lat": ["perf", "write_lat", "-s", "64", "-n", "100"],
    "read_lat": ["perf", "read_lat", "-s", "64", "-n", "100"],
    "send_lat": ["perf", "send_lat", "-s", "64", "-n", "100"],
    "write_bw_100g": ["perf", "write_bw", "-s", "65536", "-n", "300", "--preset", "rnic-100g"],
    "demo": ["run", os.path.join(ROOT, "scenarios", "demo.yaml")],
    # Many hosts: same-time arrivals at switches (a change in the event structure must not
    # reorder them).
    "scale16": ["run", "SCALE16"],
    # Polling hosts on 8 leaves: a host's EFE meets validations and DATA frames at one time (a
    # change in the event structure must not reorder what it sends).
    "scale64": ["run", "SCALE64"],
}
# The machine's figures of the scale experiment's row are not the simulation's.
MACHINE = ("setup_s", "peak_rss_mib")


def digest(o):
    res = strip_wall(load(os.path.join(o, "results.json")), MACHINE)
    st = load(os.path.join(o, "stats.json"))
    stats = strip_wall(st["stats"], MACHINE)
    got = {"results": hashlib.sha256(json.dumps(res, sort_keys=True).encode()).hexdigest(),
           "stats": hashlib.sha256(json.dumps(stats, sort_keys=True).encode()).hexdigest(),
           "sim_time_ns": st["sim_time_ns"],
           "captures": {}}
    for p in sorted(glob.glob(os.path.join(o, "*.pcap"))):
        with open(p, "rb") as f:
            got["captures"][os.path.basename(p)] = hashlib.sha256(f.read()).hexdigest()
        os.remove(p)  # the many-host runs' captures are large; the digest is what is compared
    return got


ref = {} if update else load(REF)
now = {}
scale16 = os.path.join(out_dir(base, "same_cycles_scenarios"), "scale16.yaml")
with open(os.path.join(ROOT, "scenarios", "experiments", "scale_fixed_load.yaml")) as f:
    text = f.read().replace("hosts: 64", "hosts: 16").replace("duration_us: 1000", "duration_us: 300")
with open(scale16, "w") as f:
    f.write(text)
scale64 = os.path.join(out_dir(base, "same_cycles_scenarios"), "scale64.yaml")
with open(os.path.join(ROOT, "scenarios", "experiments", "scale64.yaml")) as f:
    text = f.read().replace("duration_us: 1000", "duration_us: 400")
with open(scale64, "w") as f:
    f.write(text)
for name, args in RUNS.items():
    args = [{"SCALE16": scale16, "SCALE64": scale64}.get(a, a) for a in args]
    o = out_dir(base, f"same_cycles_{name}")
    rnicsim(binary, *args, "--pcap", "--out", o, "--quiet")
    now[name] = digest(o)
    if not update:
        want = ref.get(name)
        if check(want is not None, f"{name}: no reference in same_cycles.json"):
            check(now[name]["sim_time_ns"] == want["sim_time_ns"],
                  f"{name}: sim_time_ns {now[name]['sim_time_ns']}, was {want['sim_time_ns']}")
            check(now[name]["results"] == want["results"], f"{name}: results.json differs")
            check(now[name]["stats"] == want.get("stats"), f"{name}: stats.json's statistics differ")
            check(now[name]["captures"] == want["captures"], f"{name}: a capture differs")
if update:
    with open(REF, "w") as f:
        json.dump(now, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {REF}")
finish("same_cycles")
