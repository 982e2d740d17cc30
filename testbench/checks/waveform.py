#!/usr/bin/python3
"""A run's waveform (docs/debugging.md): `--trace fst` writes trace.fst and trace.gtkw; the save
file has one group per block (every engine's input channels, the QP states, the EFE's channel
to each peer, the MAC, the PCIe link ends, the DMAC) and names only signals the FST holds; the
signals move as the traffic does (fst_at reads them at the end of the run).

usage: waveform.py RNICSIM OUT_BASE"""
import os
import subprocess
import sys

from common import check, finish, load, out_dir, rnicsim

binary, base = sys.argv[1], sys.argv[2]
fst_at = os.path.join(os.path.dirname(binary), "testbench", "tools", "fst_at")
o = out_dir(base, "waveform")
rnicsim(binary, "perf", "write_bw", "-s", "4096", "-n", "20", "--trace", "fst", "--out", o, "--quiet")
fst, gtkw = os.path.join(o, "trace.fst"), os.path.join(o, "trace.gtkw")
check(os.path.exists(fst) and os.path.exists(gtkw), "trace.fst and trace.gtkw written")

groups, signals = [], []
for line in open(gtkw):
    line = line.rstrip("\n")
    if line.startswith("-"):
        if line[1:] not in groups:
            groups.append(line[1:])
    elif line and line[0] not in "@[":
        signals.append(line.split("[")[0])
for g in ["node0.core.sq", "node0.core.rx", "node0.core.read_response", "node0.core.completion",
          "node0.core.host_if", "node0.core.qp", "node0.mac.tx", "node0.pcie.card_tx", "node0.card_dmac",
          "node1.core.sq", "node1.core.rx"]:
    check(g in groups, f"trace.gtkw has a group {g}: {groups}")
check(any(g.startswith("node0.efe.peer_") for g in groups), f"an EFE channel group: {groups}")

sim_ns = load(os.path.join(o, "stats.json"))["sim_time_ns"]
p = subprocess.run([fst_at, fst, str(int(sim_ns))], capture_output=True, text=True)
check(p.returncode == 0, f"fst_at: exit {p.returncode}: {p.stderr}")
values = dict(l.split(" = ", 1) for l in p.stdout.splitlines() if " = " in l)
missing = [s for s in signals if s not in values]
check(not missing, f"trace.gtkw names signals the FST lacks: {missing[:5]}")
check(len(signals) > 100, f"{len(signals)} signals in trace.gtkw")


def value(name):
    v = values.get(name, "0")
    return int(v) if v.isdigit() else 0


# The traffic moved them: the requester's SQ took WQEs, its EFE sent frames, a QP is in RTS
# (abi::QpState 3); the responder's RX engine took its receive WQEs' updates.
check(value("node0.core.sq.wqe_sent") >= 20, f"node0.core.sq.wqe_sent {values.get('node0.core.sq.wqe_sent')}")
efe = [k for k in values if k.startswith("node0.efe.peer_") and k.endswith(".tx_next_seq")]
check(efe and value(efe[0]) > 0, f"the EFE's next SEQ moved: {[values.get(k) for k in efe]}")
check(any(value(f"node0.core.qp.qp{q}_state") == 3 for q in range(8)), "a QP of node0 in RTS")
finish("waveform")
