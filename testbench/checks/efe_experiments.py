#!/usr/bin/python3
"""The EFE network's experiments (CI form). loss_goodput as shipped: at 1% frame loss at least 98%
of the lossless goodput with selective resend and 90% with go-back-N, no completion error at any
loss, no retransmission without loss and more as loss grows; selective resends fewer frames than
go-back-N at every loss; scripts/plot draws its figure."""
import os
import sys

from common import ROOT, check, check_loss_goodput, finish, out_dir, plot, rnicsim

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
finish("efe_experiments")
