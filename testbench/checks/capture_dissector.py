#!/usr/bin/python3
"""The shipped Wireshark dissector over a capture with every opcode and every Terminate of
WIRE.md's error table: tshark decodes the expected opcode sequence, the DDP fields of the first
frame, and reports no malformed packet and no expert error (the Read Request protection
Terminates, a known limitation of Wireshark 4.0's dissector, excepted)."""
import os
import subprocess
import sys

from common import check, expert_error, finish, out_dir, tshark_fields

generator, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "capture")
pcap = os.path.join(o, "wire.pcap")
labels = subprocess.run([generator, pcap], check=True, capture_output=True, text=True).stdout.split("\n")
labels = [l for l in labels if l]
rows = tshark_fields(pcap, ["frame.number", "efe.type", "iwarp_rdma.opcode", "iwarp_ddp.stag",
                           "_ws.malformed", "_ws.expert.severity"]) or []
check(len(rows) == len(labels), f"{len(rows)} frames decoded, {len(labels)} written")
for row, label in zip(rows, labels):
    num, etype, opcode, stag, malformed, severity = row
    known = "term-rr-protection" in label
    want = label.split()[0]
    if want in ("ack", "nack"):
        check(etype == ("1" if want == "ack" else "2") and opcode == "", f"frame {num}: {row} is not an EFE {want}")
    else:
        check(etype == "0" and opcode == f"0x{int(want):02x}", f"frame {num}: opcode {opcode!r}, expected {want}")
    if not known:
        check(malformed == "", f"frame {num} ({label}): malformed")
        check(not expert_error(severity), f"frame {num}: expert error {severity}")
check(rows[0][3] == "0x00001201", f"first frame's STag decoded as {rows[0][3]!r}")
finish("capture_dissector")
