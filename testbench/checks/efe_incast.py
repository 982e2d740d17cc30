#!/usr/bin/python3
"""The incast experiment as shipped (8 and 32 senders, with the EFE's congestion control, with
DCQCN in the same EFE, DCQCN over a switch that sends 802.3x PAUSE, HPCC in the same EFE on the
switch's utilisation stamps, without, and with PAUSE instead): every point runs and reports, and congestion control is what keeps the switch from
dropping: with it, fewer drops, fewer retransmissions and more goodput at the receiver than
without, at each number of senders; with it at 8 senders, no completion error. PAUSE drops
nothing, with DCQCN or without congestion control. With congestion control at the EFE's defaults
(the scenario sets no efe.* key) the targets hold at 8 and 32 senders: at least 90% of line rate
at the receiver, a mean Jain index of at least 0.95, and no drop. HPCC over PAUSE (a run of that
mode alone) drops nothing either."""
import os
import re
import sys

from common import ROOT, check, check_untuned, finish, load, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
scenario = os.path.join(ROOT, "scenarios", "experiments", "incast.yaml")
check_untuned(scenario)
o = out_dir(base, "incast")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "incast.yaml"), "--out", o, "--quiet")
rows = {(r["senders"], r["mode"]): r for r in load(os.path.join(o, "results.json"))["rows"]}
modes = ["efe_cc", "efe_dcqcn", "efe_dcqcn_pause", "efe_hpcc", "efe_no_cc", "pause"]
check(sorted(rows) == [(n, m) for n in (8, 32) for m in modes], f"points {sorted(rows)}")
# DCQCN is measured beside the EFE's own (docs/efe.md gives its rows), not held to its targets:
# its rows are whole, and its cuts do keep the switch from dropping as much as no congestion
# control does.
for n in (8, 32):
    d, no = rows[(n, "efe_dcqcn")], rows[(n, "efe_no_cc")]
    check(0 <= d["jain_min"] <= d["jain_mean"] <= 1, f"{n} efe_dcqcn: Jain's index")
    check(d["drops"] < no["drops"], f"{n} senders: DCQCN {d['drops']} drops, none {no['drops']}")
    # Over a switch that sends PAUSE, DCQCN drops nothing and its goodput is above DCQCN's alone.
    dp = rows[(n, "efe_dcqcn_pause")]
    check(dp["drops"] == 0 and dp["completion_errors"] == 0,
          f"{n} senders: DCQCN with PAUSE {dp['drops']} drops, {dp['completion_errors']} errors")
    check(dp["receiver_goodput_gbps"] > d["receiver_goodput_gbps"],
          f"{n} senders: DCQCN with PAUSE {dp['receiver_goodput_gbps']} Gb/s, "
          f"alone {d['receiver_goodput_gbps']}")
    check(0 <= dp["jain_min"] <= dp["jain_mean"] <= 1, f"{n} efe_dcqcn_pause: Jain's index")
    # HPCC on the stamps: fewer drops and more goodput than no congestion control.
    h = rows[(n, "efe_hpcc")]
    check(0 <= h["jain_min"] <= h["jain_mean"] <= 1, f"{n} efe_hpcc: Jain's index")
    check(h["drops"] < no["drops"], f"{n} senders: HPCC {h['drops']} drops, none {no['drops']}")
    check(h["receiver_goodput_gbps"] > no["receiver_goodput_gbps"],
          f"{n} senders: HPCC {h['receiver_goodput_gbps']} Gb/s, none {no['receiver_goodput_gbps']}")
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
# HPCC over a switch that sends PAUSE (as it runs over PFC), a mode the shipped list leaves out
# (a point more would move the rows after it): its line-rate start drops nothing there.
with open(scenario) as f:
    text = f.read()
one = os.path.join(o, "hpcc_pause.yaml")
with open(one, "w") as f:
    f.write(re.sub(r"(?m)^(\s*modes:).*$", r"\1 [efe_hpcc_pause]", text))
o2 = out_dir(base, "incast_hpcc_pause")
rnicsim(binary, "run", one, "--out", o2, "--quiet")
hp = {r["senders"]: r for r in load(os.path.join(o2, "results.json"))["rows"]}
check(sorted(hp) == [8, 32] and all(r["mode"] == "efe_hpcc_pause" for r in hp.values()),
      f"HPCC with PAUSE: points {sorted(hp)}")
for n, r in hp.items():
    check(r["drops"] == 0 and r["completion_errors"] == 0,
          f"{n} senders: HPCC with PAUSE {r['drops']} drops, {r['completion_errors']} errors")
    check(0 <= r["jain_min"] <= r["jain_mean"] <= 1, f"{n} efe_hpcc_pause: Jain's index")
finish("efe_incast")
