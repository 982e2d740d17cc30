#!/usr/bin/python3
"""The EFE network's experiments (CI form). loss_goodput as shipped: at 1% frame loss at least 90%
of the lossless goodput, no completion error at any loss, no retransmission without loss and
more as loss grows; scripts/plot draws its figure."""
import os
import sys

from common import ROOT, check_loss_goodput, finish, out_dir, plot, rnicsim

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "loss_goodput")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "loss_goodput.yaml"), "--out", o,
        "--quiet")
check_loss_goodput(o, 9.4)
plot(o, "loss_goodput")
finish("efe_experiments")
