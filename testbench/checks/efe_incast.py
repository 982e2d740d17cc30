#!/usr/bin/python3
"""The incast experiment as shipped (8 and 32 senders, with and without the EFE's congestion
control, and with 802.3x PAUSE instead): every point runs and reports, and congestion control is
what keeps the switch from dropping: with it, fewer drops, fewer retransmissions and more goodput
at the receiver than without, at each number of senders; with it at 8 senders, no completion
error. PAUSE drops nothing. (The issue's
targets, 90% of line rate and a mean Jain index of 0.95, are reported in docs/efe.md, not
asserted: they are not met yet.)"""
import os
import sys

from common import ROOT, check, finish, load, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "incast")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "incast.yaml"), "--out", o, "--quiet")
rows = {(r["senders"], r["mode"]): r for r in load(os.path.join(o, "results.json"))["rows"]}
check(sorted(rows) == [(8, "efe_cc"), (8, "efe_no_cc"), (8, "pause"), (32, "efe_cc"),
                       (32, "efe_no_cc"), (32, "pause")], f"points {sorted(rows)}")
for n in (8, 32):
    cc, no = rows[(n, "efe_cc")], rows[(n, "efe_no_cc")]
    check(cc["drops"] < no["drops"], f"{n} senders: drops {cc['drops']} with CC, {no['drops']} without")
    check(cc["retransmissions"] < no["retransmissions"], f"{n} senders: retransmissions")
    check(cc["receiver_goodput_gbps"] > no["receiver_goodput_gbps"], f"{n} senders: goodput")
    for r in (cc, no):
        check(0 <= r["jain_min"] <= r["jain_mean"] <= 1, f"{n} {r['mode']}: Jain's index")
check(rows[(8, "efe_cc")]["completion_errors"] == 0, "completion errors with CC at 8 senders")
for n in (8, 32):
    p = rows[(n, "pause")]
    check(p["drops"] == 0 and p["completion_errors"] == 0, f"{n} senders: PAUSE drops {p['drops']}")
finish("efe_incast")
