#!/usr/bin/python3
"""A polling host's rounds that can find nothing are worked out, not waited through
(`poll_skip`, rnic_poll_rounds): scale on 16 hosts for 300 us, with and without it, gives the
same rows (wall-clock fields aside), statistics and captures. Three loads: unpaced at poll_ns
196 and 50, and paced (8 KiB Writes at 3 Gb/s a host, one in flight a peer, poll_ns 123: rounds end where
a paced post may go). With PCIe gen 1 the card's writes land on whole nanoseconds, as the
loop's looks do: in these runs some CQEs land at the time of a look (in its first delta cycle,
which the look sees); taking them for the next look instead moves the statistics of the first
two.

usage: poll_skip.py RNICSIM OUT_BASE"""
import glob
import os
import sys

from common import check, finish, load, out_dir, rnicsim, strip_wall, write_file

binary, base = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
o = out_dir(base, "poll_skip")
MACHINE = ("setup_s", "peak_rss_mib", "wall_per_frame_us")


def scenario(name, poll_ns, skip, paced):
    extra = "  load_mbps: 3000\n  depth: 1\n" if paced else ""
    size = 8192 if paced else 65536
    return write_file(o, f"{name}_{skip}.yaml", f"""name: {name}
preset: rnic-10g
set:
  switch.ecn_bytes: 32768
  pcie.gen: 1
experiment:
  kind: scale
  hosts: 16
  hosts_per_leaf: 8
  spines: 2
  peers: 4
  size: {size}
  duration_us: 300
  poll_ns: {poll_ns}
  poll_skip: {skip}
{extra}""")


def outcome(d):
    rows = strip_wall(load(os.path.join(d, "results.json")), MACHINE)["rows"]
    stats = strip_wall(load(os.path.join(d, "stats.json")), ("scenario",))
    caps = {}
    for p in sorted(glob.glob(os.path.join(d, "*.pcap"))):
        with open(p, "rb") as f:
            caps[os.path.basename(p)] = f.read()
    return rows, stats, caps


for name, poll_ns, paced in (("unpaced196", 196, False), ("unpaced50", 50, False),
                             ("paced123", 123, True)):
    got = {}
    for skip in (0, 1):
        d = os.path.join(o, f"{name}_{skip}")
        rnicsim(binary, "run", scenario(name, poll_ns, skip, paced), "--out", d, "--quiet", "--pcap")
        got[skip] = outcome(d)
    rows, stats, caps = got[1]
    check(rows and rows[0]["frames"] > 0 and rows[0]["completed_gbps"] > 0, f"{name}: rows {rows}")
    check(len(caps) == 20, f"{name}: {len(caps)} captures, not 20")
    check(rows == got[0][0], f"{name}: rows {rows} against every round's {got[0][0]}")
    diff = [g for g in stats["stats"] if stats["stats"][g] != got[0][1]["stats"].get(g)]
    check(stats == got[0][1], f"{name}: statistics differ: {diff[:5]}")
    check(caps == got[0][2], f"{name}: captures differ: "
          f"{[c for c in caps if caps[c] != got[0][2].get(c)][:5]}")
finish("poll_skip")
