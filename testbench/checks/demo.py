#!/usr/bin/python3
"""The demo (scenarios/demo.yaml): two hosts, three workloads at once (writes, reads, sends). Each
workload gets its rows, the summary names them and the outputs, the link's capture decodes with
the shipped dissector without a malformed frame and holds RDMA Writes, Read Requests, Read
Responses and Sends, and scripts/plot draws a figure per workload axis and the time series."""
import os
import subprocess
import sys

from common import ROOT, check, finish, load, out_dir, rnicsim, tshark_fields

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "demo")
p = rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "demo.yaml"), "--out", o)
res = load(os.path.join(o, "results.json"))
names = [w["name"] for w in res.get("workloads", [])]
check(names == ["writes", "reads", "sends"], f"workloads {names}")
for name, n in (("writes", 4), ("reads", 3), ("sends", 2)):
    rows = [r for r in res["rows"] if r["workload"] == name]
    check(len(rows) == n, f"{name}: {len(rows)} rows, expected {n}")
    check(f"workload {name}:" in p.stdout, f"the summary does not show workload {name}")
for w in ("writes", "sends"):
    check(all(r["bw_avg_mib_s"] > 100 for r in res["rows"] if r["workload"] == w), f"{w}: bandwidth")
check(all(0 < r["t_min_us"] <= r["t_typical_us"] for r in res["rows"] if r["workload"] == "reads"),
      "reads: latency figures")
pcap = os.path.join(o, "l0.pcap")
check(f"wrote {pcap}" in p.stdout and "figures: scripts/plot" in p.stdout, f"summary: {p.stdout}")
lines = tshark_fields(pcap, ["iwarp_rdma.opcode", "_ws.malformed"]) or []
ops = {op for op, _ in lines}
check(not any(m for _, m in lines), "malformed frames in the demo capture")
for op, what in (("0x00", "RDMA Write"), ("0x01", "Read Request"), ("0x02", "Read Response"),
                 ("0x03", "Send")):
    check(op in ops, f"no {what} in the demo capture")
q = subprocess.run([os.path.join(ROOT, "scripts", "plot"), o], capture_output=True, text=True)
pngs = sorted(os.listdir(os.path.join(o, "plots"))) if q.returncode == 0 else []
check(q.returncode == 0 and all(any(n.startswith(w + "_") for n in pngs) for w in names)
      and any(n.startswith("timeseries_") for n in pngs), f"scripts/plot: {q.stdout}{q.stderr} {pngs}")
finish("demo")
