#!/usr/bin/python3
"""The EFE's loss and incast experiments on MPA/TCP cards (CI form). loss_goodput with
card.transport mpa_tcp: at 1% frame loss at least 90% of the lossless goodput, no completion
error at any loss, no retransmission without loss and more as loss grows. incast_tcp.yaml:
every point (8 and 32 senders; tcp, dctcp, tcp_pause, dctcp_pause) runs and reports at least
8 Gb/s at the receiver with no completion error; without loss nothing is resent at 8 senders
over the drop-tail switch; the transport's own counters are what the rows show."""
import os
import sys

from common import ROOT, check, check_loss_goodput, finish, load, out_dir, plot, rnicsim

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "tcp_loss_goodput")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "loss_goodput.yaml"), "--out", o,
        "--quiet", "--set", "card.transport=mpa_tcp")
check_loss_goodput(o, 9.0)
stats = load(os.path.join(o, "stats.json"))["stats"]
check("node0.toe" in stats and "node0.efe" not in stats, "the cards run the TCP engine, not the EFE")
plot(o, "loss_goodput")

o = out_dir(base, "tcp_incast")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "incast_tcp.yaml"), "--out", o,
        "--quiet")
rows = {(r["senders"], r["mode"]): r for r in load(os.path.join(o, "results.json"))["rows"]}
modes = ["tcp", "dctcp", "tcp_pause", "dctcp_pause"]
check(sorted(rows) == sorted((n, m) for n in (8, 32) for m in modes), f"points {sorted(rows)}")
for (n, m), r in sorted(rows.items()):
    check(r["completion_errors"] == 0, f"{n} {m}: completion errors")
    check(r["receiver_goodput_gbps"] >= 8.0, f"{n} {m}: {r['receiver_goodput_gbps']} Gb/s")
    check(0 <= r["jain_min"] <= r["jain_mean"] <= 1, f"{n} {m}: Jain's index")
check(rows[(8, "tcp")]["drops"] == 0 and rows[(8, "tcp")]["retransmissions"] == 0,
      "8 senders over the drop-tail switch: ECN keeps the queue below the buffer")
finish("tcp_experiments")
