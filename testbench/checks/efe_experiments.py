#!/usr/bin/python3
"""The EFE network's experiments (CI form). loss_goodput as shipped: at 1% frame loss at least 98%
of the lossless goodput with selective resend and 90% with go-back-N, no completion error at any
loss, no retransmission without loss and more as loss grows; selective resends fewer frames than
go-back-N at every loss; scripts/plot draws its figure. two_flows as shipped (two flows each way
over one 10 Gb/s uplink, the EFE's defaults): each direction at least 90% of the uplink (twice
the least flow's goodput: two flows a direction), and no less in all than with congestion control
off, with the switches' CE marks and without them."""
import os
import sys

from common import ROOT, check, check_loss_goodput, check_untuned, finish, load, out_dir, plot, rnicsim

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "loss_goodput")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "loss_goodput.yaml"), "--out", o,
        "--quiet")
sel = check_loss_goodput(o, 9.4, "selective", 0.98)
gbn = check_loss_goodput(o, 9.4, "go_back_n", 0.9)
for loss in (0.001, 0.01, 0.02, 0.05):
    if loss in sel and loss in gbn:
        check(sel[loss]["retransmissions"] < gbn[loss]["retransmissions"],
              f"at {loss}: selective resent {sel[loss]['retransmissions']}, go-back-N "
              f"{gbn[loss]['retransmissions']}")
plot(o, "loss_goodput")

two = os.path.join(ROOT, "scenarios", "experiments", "two_flows.yaml")
check_untuned(two)


def two_flows(name, *sets):
    o = out_dir(base, name)
    args = [a for kv in sets for a in ("--set", kv)]
    rnicsim(binary, "run", two, "--out", o, "--quiet", *args)
    return load(os.path.join(o, "results.json"))["rows"][0]


for marks, tag, extra in (("CE marks", "", []),
                          ("no CE marks", "_nomarks", ["switch.ecn_bytes=0"])):
    cc = two_flows("two_flows_cc" + tag, *extra)
    off = two_flows("two_flows_off" + tag, "efe.cc=off", *extra)
    print(f"two_flows, {marks}: {cc['goodput_gbps']:.2f} Gb/s "
          f"(least flow {cc['min_flow_gbps']:.2f}), off {off['goodput_gbps']:.2f}")
    check(2 * cc["min_flow_gbps"] >= 9.0,
          f"two_flows, {marks}: a direction carries {2 * cc['min_flow_gbps']:.2f} Gb/s or less")
    check(cc["goodput_gbps"] >= off["goodput_gbps"],
          f"two_flows, {marks}: {cc['goodput_gbps']:.2f} Gb/s, {off['goodput_gbps']:.2f} with "
          "congestion control off")
finish("efe_experiments")
