#!/usr/bin/python3
"""A run's waveform (docs/debugging.md): `--trace fst` writes trace.fst and trace.gtkw; the save
file has one group per block (every engine's input channels, the QP states, the EFE's channel
to each peer, the MAC, the PCIe link ends, the DMAC) and names only signals the FST holds; the
signals move as the traffic does (fst_at reads them at the end of the run), and every TLP and
ACK on the PCIe link is in it, on a busy link too. With `--rtl crc32,rnic_dmac,ddp_rx_parse`
the traced run holds the RTL's pins and internals, each edge at its own time (the C++-mode
builds' clk a pulse at each edge clocked), and gives the model run's results and captures.

usage: waveform.py RNICSIM OUT_BASE"""
import os
import re
import subprocess
import sys

from common import check, finish, load, out_dir, rnicsim, strip_wall

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
          "node1.core.sq", "node1.core.rx", "node1.core.rx.intake"]:
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

# Every packet on the PCIe link is in the file: in a write_lat, whose packets have gaps between
# them, each side's TLPs and ACK DLLPs begin as many times as the link's statistics count them
# (two UpdateFCs in a row show as one), and the wire is idle at the end.
o2 = out_dir(base, "waveform_pcie")
rnicsim(binary, "perf", "write_lat", "-s", "2", "-n", "5", "--trace", "fst", "--out", o2, "--quiet")
stats = load(os.path.join(o2, "stats.json"))["stats"]
for host in ("node0", "node1"):
    for side in ("rc_tx", "card_tx"):
        p = subprocess.run([fst_at, os.path.join(o2, "trace.fst"), "changes",
                            f"{host}.pcie.{side}.packet"], capture_output=True, text=True)
        seq = [int(l.rsplit(" = ", 1)[1]) for l in p.stdout.splitlines()]
        starts = {k: sum(1 for a, b in zip(seq, seq[1:]) if b == k and a != k) for k in (1, 2, 3)}
        st = stats[f"{host}.pcie.{side}"]
        check(p.returncode == 0 and starts[1] == st["tlps"]["value"] > 10 and
              starts[2] == st["ack_dllps"]["value"] and
              0 < starts[3] <= st["updatefc_dllps"]["value"] and seq[-1] == 0,
              f"{host}.pcie.{side}: the waveform's packets {starts} (last {seq[-1:]}) against the "
              f"statistics' {st['tlps']['value']} TLPs, {st['ack_dllps']['value']} ACKs and "
              f"{st['updatefc_dllps']['value']} UpdateFCs")

# crc32's RTL in the traced run: its SystemC-mode build, clocked in simulated time, with its pins
# and internals in the same file; rnic_dmac's and ddp_rx_parse's C++-mode builds with tracing,
# their ports and internals under <instance>.rtl; rnic_dmac's pins (under the DMA service); the
# run is the model run's, byte for byte.
m, r = out_dir(base, "waveform_model"), out_dir(base, "waveform_rtl")
rnicsim(binary, "perf", "write_bw", "-s", "65536", "-n", "20", "--pcap", "--out", m, "--quiet")
rnicsim(binary, "perf", "write_bw", "-s", "65536", "-n", "20", "--pcap", "--rtl",
        "crc32,rnic_dmac,ddp_rx_parse", "--trace", "fst", "--out", r, "--quiet")
st_r = load(os.path.join(r, "stats.json"))
for b in ("crc32", "rnic_dmac", "ddp_rx_parse"):
    check(st_r["rnicsim"]["implementations"][b] == "rtl", f"the traced run's {b} is RTL")
check(strip_wall(load(os.path.join(m, "results.json"))) == strip_wall(load(os.path.join(r, "results.json"))),
      "results.json differs with the traced RTL")
for p in sorted(f for f in os.listdir(m) if f.endswith(".pcap")):
    check(open(os.path.join(m, p), "rb").read() == open(os.path.join(r, p), "rb").read(),
          f"{p} differs with the traced RTL")
# Its save file: after the models' groups, a closed group for each scope of a Verilated block's
# (ports, internals) with every variable the FST holds there, and nothing the FST lacks (a loop's
# index in an unnamed block left out).
p = subprocess.run([fst_at, os.path.join(r, "trace.fst"), str(int(st_r["sim_time_ns"]))],
                   capture_output=True, text=True)
in_fst = {l.split(" = ")[0] for l in p.stdout.splitlines()}
closed, listed, group = {}, [], None
for line in open(os.path.join(r, "trace.gtkw")).read().splitlines():
    if line.startswith("@c00200"):
        group = "open"
    elif group == "open" and line.startswith("-"):
        group = line[1:]
        closed[group] = []
    elif line.startswith("@1401200"):
        group = None
    elif group and line[0] not in "@-[":
        closed[group].append(re.sub(r"\[\d+:\d+\]$", "", line))
        listed.append(closed[group][-1])
for g, n in (("node1.card_dmac.rtl", "node1.card_dmac.rtl.clk"),
             ("node1.card_dmac.rtl.rnic_dmac", "node1.card_dmac.rtl.rnic_dmac.tags_out"),
             ("node1.core.rx.rx_parse.rtl.ddp_rx_parse",
              "node1.core.rx.rx_parse.rtl.ddp_rx_parse.have_header"),
             ("node0.mac.fcs_gen.rtl.crc32", "node0.mac.fcs_gen.rtl.crc32.state_reg")):
    check(n in closed.get(g, []), f"trace.gtkw's closed group {g} lists {n}: {closed.get(g, [])[:6]}")
rtl_vars = {v for v in in_fst if ".rtl." in v and ".unnamedblk" not in v}
check(set(listed) == rtl_vars, f"trace.gtkw's RTL groups: {sorted(set(listed) - rtl_vars)[:4]} not "
      f"in the FST, {sorted(rtl_vars - set(listed))[:4]} left out")
p = subprocess.run([fst_at, os.path.join(r, "trace.fst"), str(int(st_r["sim_time_ns"])),
                    "node0.mac.fcs_gen.*"], capture_output=True, text=True)
names = [l.split(" = ")[0] for l in p.stdout.splitlines()]
for n in ["node0.mac.fcs_gen.pins.s_valid", "node0.mac.fcs_gen.pins.m_crc",
          "node0.mac.fcs_gen.rtl.crc32.state_reg", "node0.mac.fcs_gen.rtl.crc32.out_crc_reg"]:
    check(n in names, f"{n} in the traced run's FST: {names[:12]}")
p = subprocess.run([fst_at, os.path.join(r, "trace.fst"), str(int(st_r["sim_time_ns"])),
                    "node1.card_dmac.pins.*"], capture_output=True, text=True)
dmac = dict(l.split(" = ", 1) for l in p.stdout.splitlines() if " = " in l)
for n in ["tx_valid", "tx_addr", "tx_data", "rw_valid", "cp_valid", "rq_ready", "tmo_wait"]:
    check(f"node1.card_dmac.pins.{n}" in dmac, f"node1.card_dmac.pins.{n} in the traced run's FST: {list(dmac)[:8]}")
check(dmac.get("node1.card_dmac.pins.tx_addr", "0").strip("0x ") != "",
      f"node1's DMAC sent TLPs (tx_addr {dmac.get('node1.card_dmac.pins.tx_addr')})")


def changes(sig):
    p = subprocess.run([fst_at, os.path.join(r, "trace.fst"), "changes", sig], capture_output=True,
                       text=True)
    return [(l.split()[0], l.rsplit(" = ", 1)[1]) for l in p.stdout.splitlines() if " = " in l]


def rises(sig):
    ch = changes(sig)
    return [t for (t, v), (_, was) in zip(ch[1:], ch) if v == "1" and was == "0"]


# rnic_dmac's RTL: its own ports change as the pins its DMA service drives and reads, edge for
# edge, and its internals are there.
p = subprocess.run([fst_at, os.path.join(r, "trace.fst"), str(int(st_r["sim_time_ns"])),
                    "node1.card_dmac.rtl.*"], capture_output=True, text=True)
rtl = [l.split(" = ")[0] for l in p.stdout.splitlines()]
check(sum(n.startswith("node1.card_dmac.rtl.rnic_dmac.") for n in rtl) > 50,
      f"rnic_dmac's internals under node1.card_dmac.rtl.rnic_dmac: {rtl[:8]}")
for n in ["tx_valid", "rw_valid", "cp_valid", "rd_valid"]:
    ours, pins = changes(f"node1.card_dmac.rtl.{n}"), changes(f"node1.card_dmac.pins.{n}")
    check(len(ours) > 2 and ours == pins,
          f"node1's rnic_dmac {n}: the RTL's {len(ours)} changes {ours[:3]} against the pins' "
          f"{len(pins)} {pins[:3]}")
# ddp_rx_parse's RTL, clocked in simulated time: a header result (h_valid) for each segment node1
# received, each at the time the RX engine takes its verdict; its internals are there.
p = subprocess.run([fst_at, os.path.join(r, "trace.fst"), str(int(st_r["sim_time_ns"])),
                    "node1.core.rx.rx_parse.rtl.*"], capture_output=True, text=True)
rtl = [l.split(" = ")[0] for l in p.stdout.splitlines()]
check(sum(n.startswith("node1.core.rx.rx_parse.rtl.ddp_rx_parse.") for n in rtl) > 20,
      f"ddp_rx_parse's internals under node1.core.rx.rx_parse.rtl.ddp_rx_parse: {rtl[:8]}")
h = rises("node1.core.rx.rx_parse.rtl.h_valid")
verdicts = [t for t, v in changes("node1.core.rx.intake.verdicts_pending") if v == "1"]
segs = st_r["stats"]["node1.core"]["rx_segments"]["value"]
check(len(h) == segs > 100 and h == verdicts,
      f"node1's ddp_rx_parse: {len(h)} results for {segs} segments; at {h[:3]}, the verdicts at "
      f"{verdicts[:3]}")
# Both C++-mode builds show their clock: each edge clocked is a pulse of clk, high at the edge
# (a multiple of the 4 ns core period) and low half a period on; the blocks' outputs change at
# those rises.
for blk, out in (("node1.card_dmac.rtl", "rnic_dmac.tx_valid"),
                 ("node1.core.rx.rx_parse.rtl", "h_valid")):
    clk = [(t, v) for t, v in changes(f"{blk}.clk") if float(t) > 0 or v == "1"]  # (low at 0)
    ups = [float(t) for t, v in clk if v == "1"]
    downs = [float(t) for t, v in clk if v == "0"]
    check(len(ups) > 100 and len(downs) == len(ups)
          and all(v == ("1" if i % 2 == 0 else "0") for i, (_, v) in enumerate(clk)),
          f"{blk}.clk: {len(ups)} rises and {len(downs)} falls, {clk[:4]}")
    check(all(u % 4 == 0 and d == u + 2 for u, d in zip(ups, downs)),
          f"{blk}.clk: rises at edges and falls 2 ns later: {list(zip(ups, downs))[:4]}")
    moved = [float(t) for t, _ in changes(f"{blk}.{out}")[1:]]
    check(moved and set(moved) <= set(ups), f"{blk}.{out} changes at {moved[:4]}, not at rises of "
          f"clk ({ups[:4]})")
# On a busy link too: the receiver's root complex sends an ACK DLLP at the arrival of the TLP that
# completes its ACK factor, and each of them, and each UpdateFC, begins in the file at its time.
p = subprocess.run([fst_at, os.path.join(r, "trace.fst"), "changes", "node1.pcie.rc_tx.packet"],
                   capture_output=True, text=True)
seq = [int(l.rsplit(" = ", 1)[1]) for l in p.stdout.splitlines()]
starts = {k: sum(1 for a, b in zip(seq, seq[1:]) if b == k and a != k) for k in (2, 3)}
st = st_r["stats"]["node1.pcie.rc_tx"]
check(starts[2] == st["ack_dllps"]["value"] > 1000 and starts[3] == st["updatefc_dllps"]["value"],
      f"node1.pcie.rc_tx under write_bw: the waveform's ACKs and UpdateFCs {starts} against the "
      f"statistics' {st['ack_dllps']['value']} and {st['updatefc_dllps']['value']}")
# The sender's MAC: on_wire is high for each frame from its first bit to the end of its last, a
# whole number of byte times at 10 Gb/s (0.8 ns) for a frame's preamble, bytes and FCS, and low in
# the inter-frame gap between frames sent back to back: as many pulses as frames sent.
p = subprocess.run([fst_at, os.path.join(r, "trace.fst"), "changes", "node0.mac.tx.on_wire"],
                   capture_output=True, text=True)
ch = [(float(l.split()[0]), int(l.rsplit(" = ", 1)[1])) for l in p.stdout.splitlines()]
highs = [b[0] - a[0] for a, b in zip(ch, ch[1:]) if a[1] == 1 and b[1] == 0]
odd = [h for h in highs if abs(h / 0.8 - round(h / 0.8)) > 1e-6 or not 72 <= round(h / 0.8) <= 1538]
frames = st_r["stats"]["node0.mac"]["tx_frames"]["value"]
check(len(highs) == frames > 100 and not odd,
      f"node0.mac.tx.on_wire: {len(highs)} pulses for {frames} frames, of other lengths {odd[:5]}")
finish("waveform")
