#!/usr/bin/python3
"""Runs a libFuzzer target for N seconds from a seed corpus of real frames (the capture check's
frames, split out of its pcap). Fails on any crash, sanitizer report or broken property."""
import os
import struct
import subprocess
import sys

target, generator, work, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
# --stateful: the target takes sequences of records (fuzz_rx_stateful.cc); the seeds are the
# capture's frames from one sender in order, behind receive WQEs and outbound Reads.
stateful = len(sys.argv) > 5 and sys.argv[5] == "--stateful"
corpus = os.path.join(work, "corpus")
os.makedirs(corpus, exist_ok=True)
pcap = os.path.join(work, "seed.pcap")
subprocess.run([generator, pcap], check=True, capture_output=True)
with open(pcap, "rb") as f:
    data = f.read()
off, n = 24, 0  # pcap global header, then records of 16-byte headers
frames = []
while off + 16 <= len(data):
    _, _, caplen, _ = struct.unpack("<IIII", data[off:off + 16])
    frames.append(data[off + 16:off + 16 + caplen])
    off += 16 + caplen
if not stateful:
    for n, f in enumerate(frames):
        with open(os.path.join(corpus, f"seed{n:03d}"), "wb") as s:
            s.write(f)
    n = len(frames)
else:
    # RECV on QPs 1-3 (two SGEs in the receive region), a READ on each, then FRAME records.
    prefix = b""
    for q in (1, 2, 3):
        prefix += bytes([1, q, 2, 1, 0, 0, 0, 0x10, 1, 0, 0x10, 0, 0x10])
        prefix += bytes([2, q, 0, 0, 0, 0, 0x10])
        prefix += bytes([6, q, 0, 0, 0x10, 6, q, 1, 0, 0x01, 6, q, 2, 0, 0x08])
    by_src = {}
    for f in frames:
        by_src.setdefault(f[6:12], []).append(f)
    for src, fs in by_src.items():
        for start in range(0, len(fs), 8):
            rec = prefix
            for f in fs[start:start + 24]:
                rec += bytes([0]) + struct.pack("<H", len(f)) + f
            with open(os.path.join(corpus, f"seed{n:03d}"), "wb") as s:
                s.write(rec)
            n += 1
p = subprocess.run([target, corpus, f"-max_total_time={seconds}", "-print_final_stats=1",
                    f"-artifact_prefix={work}/"], capture_output=True, text=True)
tail = "\n".join(p.stderr.strip().split("\n")[-12:])
print(tail)
if p.returncode != 0:
    print(f"{os.path.basename(target)}: FAILED (exit {p.returncode}); artifacts in {work}")
    sys.exit(1)
print(f"{os.path.basename(target)}: {n} seeds, no failure in {seconds} s")
