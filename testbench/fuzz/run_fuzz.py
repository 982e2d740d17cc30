#!/usr/bin/python3
"""Runs a libFuzzer target for N seconds from a seed corpus of real frames (the capture check's
frames, split out of its pcap). Fails on any crash, sanitizer report or broken property."""
import os
import struct
import subprocess
import sys

target, generator, work, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
corpus = os.path.join(work, "corpus")
os.makedirs(corpus, exist_ok=True)
pcap = os.path.join(work, "seed.pcap")
subprocess.run([generator, pcap], check=True, capture_output=True)
with open(pcap, "rb") as f:
    data = f.read()
off, n = 24, 0  # pcap global header, then records of 16-byte headers
while off + 16 <= len(data):
    _, _, caplen, _ = struct.unpack("<IIII", data[off:off + 16])
    with open(os.path.join(corpus, f"seed{n:03d}"), "wb") as s:
        s.write(data[off + 16:off + 16 + caplen])
    off += 16 + caplen
    n += 1
p = subprocess.run([target, corpus, f"-max_total_time={seconds}", "-print_final_stats=1",
                    f"-artifact_prefix={work}/"], capture_output=True, text=True)
tail = "\n".join(p.stderr.strip().split("\n")[-12:])
print(tail)
if p.returncode != 0:
    print(f"fuzz_rx_parse: FAILED (exit {p.returncode}); artifacts in {work}")
    sys.exit(1)
print(f"fuzz_rx_parse: {n} seeds, no failure in {seconds} s")
