#!/usr/bin/python3
"""802.3x PAUSE over a leaf/spine (the scale experiment with 16 hosts, 2 leaves of 8 and 2
spines, each host writing to 4 peers on the other leaf, 1 ms; PAUSE at 2 KiB, resume at 1 KiB):
the switches pause one another's ports across the uplinks, and every pause ends. No frame is
dropped, no channel fails, every frame a timer resent (a wait behind pauses longer than the
RTO: the congestion control lets a channel's queueing reach efe.cc_low_ns before it slows down)
reached its receiver twice, and the receivers get traffic over both spines. A switch whose
resume overtook the pause it answered (both waiting behind a frame on the wire) left the leaf's
uplink paused for 3.36 ms: channels failed and the run stopped.
Then a lossy link under a bounded pause that is refreshed (switch.pause_quanta): no channel
fails though PAUSE frames are lost."""
import os
import re
import sys

from common import ROOT, check, finish, load, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "pause_fabric")
with open(os.path.join(ROOT, "scenarios", "experiments", "scale64.yaml")) as f:
    text = f.read()
scenario = os.path.join(o, "pause16.yaml")
with open(scenario, "w") as f:
    f.write(re.sub(r"(?m)^(\s*hosts:) 64$", r"\1 16", text))
rnicsim(binary, "run", scenario, "--out", o, "--quiet", "--set", "switch.pause=true",
        "--set", "switch.pause_xoff_bytes=2048", "--set", "switch.pause_xon_bytes=1024")
rows = load(os.path.join(o, "results.json"))["rows"]
check(len(rows) == 1 and rows[0]["hosts"] == 16, f"rows {rows}")
stats = load(os.path.join(o, "stats.json"))["stats"]


def total(name, prefix="", suffix=""):
    return sum(v[name]["value"] for g, v in stats.items()
               if g.startswith(prefix) and g.endswith(suffix) and isinstance(v.get(name), dict)
               and "value" in v[name])


check(total("pause_tx") > 0, "the switches sent no PAUSE: the case is not exercised")
check(total("pause_rx", "leaf") > 0, "no leaf port was paused by a spine")
for name in ("tail_drops", "channel_failures", "failures"):
    check(total(name) == 0, f"{total(name)} {name}")

# Nothing lost: what the timers resent arrived twice (each EFE's own counts).
resent, dups = total("retransmissions", suffix=".efe"), total("rx_duplicates", suffix=".efe")
check(resent == dups, f"{resent} frames resent, {dups} duplicates")
check(rows[0]["goodput_gbps"] > 20, f"goodput {rows[0]['goodput_gbps']} Gb/s")

# A lossy link (switch_lossy.yaml: 1% loss and BER 1e-7 on h2's link) over the same PAUSE, with
# a bounded pause (1,024 quanta, 52 us) refreshed while the input stays paused: a resume lost on
# the way costs one such time, and no channel fails. (With the longest pause, 3.36 ms, h2's
# channel fails: its resume is lost and its retry budget, 1 ms, runs out.)
o2 = out_dir(base, "pause_lossy")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "examples", "switch_lossy.yaml"), "--out", o2,
        "--quiet", "--set", "switch.pause=true", "--set", "switch.pause_xoff_bytes=2048",
        "--set", "switch.pause_xon_bytes=1024", "--set", "switch.pause_quanta=1024")
stats = load(os.path.join(o2, "stats.json"))["stats"]
check(total("lost_random") > 0, "no frame lost: the case is not exercised")
check(total("pause_tx") > total("rx_pause"), "no PAUSE frame lost on the way")
for name in ("channel_failures", "failures"):
    check(total(name) == 0, f"lossy link: {total(name)} {name}")
finish("pause_fabric")
