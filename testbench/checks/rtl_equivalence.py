#!/usr/bin/python3
"""A block's RTL in the running card (--rtl BLOCK; `all`: every block with RTL) gives the same
run as the model: results.json rows (completion timestamps, bandwidth, latencies), every
statistic, and the captures byte for byte (frames, FCS, timestamps); stats.json names the block
as RTL. Runs cover the three presets' datapath widths (16, 64 and 8 bytes per beat), large
frames at line rate and small frames back to back, writes, reads and sends. On the first
difference the message names the file and the first differing field.

usage: rtl_equivalence.py RNICSIM OUT_BASE BLOCK"""
import json
import os
import sys

from common import check, finish, load, out_dir, rnicsim, strip_wall

binary, base, block = sys.argv[1], sys.argv[2], sys.argv[3]
BLOCKS = ["crc32", "ddp_rx_parse", "rnic_xlat", "rnic_dmac"] if block == "all" else [block]

RUNS = [
    ("write_bw", "-s", "65536", "-n", "300"),  # the acceptance run (rnic-10g, 16 B)
    ("send_bw", "-s", "100", "-n", "500", "--preset", "rnic-100g"),  # 2-beat frames at 64 B
    ("read_lat", "-s", "65", "-n", "100", "--preset", "rnic-100g"),
    ("read_bw", "-s", "4096", "-n", "100", "--preset", "expether-1g"),  # 8 B
    ("read_bw", "-s", "65536", "-n", "100"),
    ("send_bw", "-s", "65536", "-n", "100"),
]


def first_difference(a, b, path=""):
    if type(a) != type(b):
        return f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: present in one run only"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} entries"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: model {a!r}, rtl {b!r}"


for run in RUNS:
    name = "_".join(run[:3]) + ("_" + run[-1] if "--preset" in run else "")
    outs = {}
    for impl in ("model", "rtl"):
        o = out_dir(base, f"rtl_{block}_{name}_{impl}")
        extra = ["--rtl", block] if impl == "rtl" else []
        rnicsim(binary, "perf", *run, *extra, "--pcap", "--out", o, "--quiet")
        outs[impl] = o
    s_model = load(os.path.join(outs["model"], "stats.json"))
    s_rtl = load(os.path.join(outs["rtl"], "stats.json"))
    for b in BLOCKS:
        check(s_rtl["rnicsim"]["implementations"][b] == "rtl", f"{name}: stats.json does not name {b} as rtl")
        check(s_model["rnicsim"]["implementations"][b] == "model", f"{name}: the model run's {b} is not the model")
    for f in ("results.json", "stats.json"):
        d = first_difference(strip_wall(load(os.path.join(outs["model"], f)), ["implementations"]),
                             strip_wall(load(os.path.join(outs["rtl"], f)), ["implementations"]))
        check(d is None, f"{name}: {f} differs with --rtl {block} at {d}")
    rows = load(os.path.join(outs["model"], "results.json"))["rows"]
    check(len(rows) == 1 and rows[0].get("sim_time_ns", 0) > 0, f"{name}: no result row")
    pcaps = sorted(p for p in os.listdir(outs["model"]) if p.endswith(".pcap"))
    check(pcaps, f"{name}: no capture written")
    for p in pcaps:
        a = open(os.path.join(outs["model"], p), "rb").read()
        b = open(os.path.join(outs["rtl"], p), "rb").read()
        if not check(a == b, f"{name}: {p} differs with --rtl {block}"):
            i = next(i for i in range(min(len(a), len(b))) if a[i] != b[i]) if a[:len(b)] != b[:len(a)] else min(len(a), len(b))
            print(f"  first differing byte at offset {i} of {len(a)} / {len(b)}")
        check(len(a) > 10000, f"{name}: {p} is too small to mean anything ({len(a)} B)")
finish(f"rtl_{block}")
