#!/usr/bin/python3
"""rnicsim perf end to end (short form): write_bw, read_bw and send_bw at 64 KiB reach 97% of
the wire-limited goodput on rnic-10g and rnic-100g (payload = MTU - 20 - DDP header per frame of
MTU + 38 wire bytes); every results row has perftest's keys; the latency tests give a table of
positive, ordered figures; -D runs a size for a simulated duration; send_bw --pcap writes a capture the shipped dissector decodes with no
malformed frame, holding Send opcodes and EFE ACKs; atomic_lat and atomic_bw (8 bytes, FetchAdd)
give their tables, refuse another size, and atomic_bw --pcap decodes as RFC 7306 Atomic Requests
and Responses (FetchAdd of 1, the responses' original values counting up)."""
import json
import os
import sys

from common import check, finish, out_dir, rnicsim, tshark_fields

binary, base = sys.argv[1], sys.argv[2]
work = out_dir(base, "perf")
BW_KEYS = ["bytes", "iterations", "bw_peak_mib_s", "bw_avg_mib_s", "msg_rate_mpps", "sim_time_ns", "wall_s"]
LAT_KEYS = ["bytes", "iterations", "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us",
            "p99_us", "p999_us", "sim_time_ns", "wall_s"]


def run(test, *args):
    o = os.path.join(work, test + "_" + "_".join(a.strip("-") for a in args))
    p = rnicsim(binary, "perf", test, *args, "--out", o, expect=0)
    with open(os.path.join(o, "results.json")) as f:
        return p, json.load(f)["rows"], o


for preset, gbps in (("rnic-10g", 10), ("rnic-100g", 100)):
    limit = gbps * 1e9 / 8 * (1500 - 20 - 14) / (1500 + 38) / 2**20
    for test in ("write_bw", "read_bw", "send_bw"):
        p, rows, _ = run(test, "-s", "65536", "-n", "300", "--preset", preset)
        check("BW average[MiB/sec]" in p.stdout, f"{test}: no perftest table")
        check(len(rows) == 1 and all(k in rows[0] for k in BW_KEYS), f"{test}: row keys {rows}")
        bw = rows[0]["bw_avg_mib_s"]
        check(bw >= 0.97 * limit and bw <= limit * 1.0001,
              f"{test} {preset}: {bw:.1f} MiB/s, wire limit {limit:.1f} (needs >= 97%)")

# A signalled batch (cq_mod = 100 WRs of 2 MiB: 176 ms at 10 Gb/s) takes longer than the run's
# 100 ms watchdog window of no progress; the data moving meanwhile is progress.
p, rows, _ = run("write_bw", "-s", "2097152", "-n", "100")
check(len(rows) == 1 and rows[0]["bytes"] == 2097152, f"write_bw 2 MiB x 100: rows {rows}")

for test in ("write_lat", "read_lat", "send_lat", "atomic_lat"):
    p, rows, o = run(test, "-s", "8" if test == "atomic_lat" else "2", "-n", "100")
    check("t_typical[usec]" in p.stdout, f"{test}: no perftest table")
    r = rows[0]
    check(all(k in r for k in LAT_KEYS), f"{test}: row keys {r}")
    check(0 < r["t_min_us"] <= r["t_typical_us"] <= r["t_max_us"] and r["t_min_us"] <= r["p99_us"] <= r["t_max_us"],
          f"{test}: figures out of order {r}")
    with open(os.path.join(o, "stats.json")) as f:
        h = json.load(f)["stats"][f"perf.{test}"]["latency_8B" if test == "atomic_lat" else "latency_2B"]
    check(h["count"] == 100, f"{test}: latency histogram holds {h.get('count')} samples")

# -D: each size runs for the duration (then one last WR per QP and the drain of what is in
# flight); latency tests stop after the iteration in which the time ran out.
for test, size, dur in (("write_bw", "4096", 2000), ("send_bw", "4096", 2000), ("read_lat", "64", 50),
                        ("send_lat", "64", 50)):
    p, rows, o = run(test, "-s", size, "-n", "1000000", "-D", str(dur))
    r = rows[0]
    drain_ns = 130 * int(size) * 8 / 10 if test.endswith("bw") else 20000  # 128 WRs in flight
    check(1 < r["iterations"] < 1000000 and dur * 1000 <= r["sim_time_ns"] <= dur * 1000 + drain_ns,
          f"{test} -D {dur}: {r['iterations']} iterations in {r['sim_time_ns']} ns")

p, rows, o = run("send_bw", "-s", "4096", "-n", "64", "--pcap")
pcap = os.path.join(o, "eth0.pcap")
check(os.path.exists(pcap), "send_bw --pcap wrote no eth0.pcap")
lines = tshark_fields(pcap, ["efe.type", "iwarp_rdma.opcode", "_ws.malformed"]) or []
check(not any(m for _, _, m in lines), "malformed frames in the send_bw capture")
sends = sum(1 for e, op, _ in lines if e == "0" and op == "0x03")
check(sends >= 64 * 3, f"{sends} Send segments decoded, expected at least 192 (64 x 4096 B)")
check(any(e == "1" for e, _, _ in lines), "no EFE ACK in the capture")
p = rnicsim(binary, "perf", "atomic_bw", "-s", "64", "--out", os.path.join(work, "atomic_bad"), expect=2)
check("moves 8 bytes" in p.stderr, f"atomic_bw -s 64: {p.stderr.strip()}")
p, rows, o = run("atomic_bw", "-n", "64", "--pcap")
check("BW average[MiB/sec]" in p.stdout and rows[0]["bytes"] == 8, f"atomic_bw: rows {rows}")
lines = tshark_fields(os.path.join(o, "eth0.pcap"),
                      ["efe.type", "iwarp_rdma.opcode", "iwarp_rdma.atomic.opcode", "iwarp_rdma.atomic.add_data",
                       "iwarp_rdma.atomic.original_remote_data_value", "_ws.malformed"]) or []
check(not any(r[5] for r in lines), "malformed frames in the atomic_bw capture")
reqs = [r for r in lines if r[0] == "0" and r[1] == "0x0a"]
resps = [r for r in lines if r[0] == "0" and r[1] == "0x0b"]
check(len(reqs) == 64 and all(r[2] == "0" and int(r[3], 0) == 1 for r in reqs),
      f"{len(reqs)} Atomic Requests decoded as FetchAdd of 1, expected 64")
values = [int(r[4], 0) for r in resps if r[4]]
check(values == list(range(64)), f"Atomic Responses' original values: {values[:8]}..., expected 0..63")
finish("perf_tests")
