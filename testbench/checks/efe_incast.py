#!/usr/bin/python3
"""The incast experiment as shipped (8 and 32 senders, with and without the EFE's congestion
control, and with 802.3x PAUSE instead): every point runs and reports, and congestion control is
what keeps the switch from dropping: with it, fewer drops, fewer retransmissions and more goodput
at the receiver than without, at each number of senders; with it at 8 senders, no completion
error. PAUSE drops nothing. With congestion control (and the scenario's slow start) the targets
hold at 8 and 32 senders: at least 90% of line rate at the receiver, a mean Jain index of at
least 0.95, and no drop."""
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
for n in (8, 32):
    cc = rows[(n, "efe_cc")]
    check(cc["completion_errors"] == 0, f"{n} senders: completion errors with CC")
    check(cc["receiver_goodput_gbps"] >= 9.0, f"{n} senders: {cc['receiver_goodput_gbps']} Gb/s")
    check(cc["jain_mean"] >= 0.95, f"{n} senders: mean Jain index {cc['jain_mean']}")
    check(cc["drops"] == 0, f"{n} senders: {cc['drops']} drops with CC")
for n in (8, 32):
    p = rows[(n, "pause")]
    check(p["drops"] == 0 and p["completion_errors"] == 0, f"{n} senders: PAUSE drops {p['drops']}")
finish("efe_incast")
