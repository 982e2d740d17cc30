#!/usr/bin/python3
"""The shipped Wireshark dissector over a capture with every opcode and every Terminate of
WIRE.md's error table: tshark decodes the expected opcode sequence, the DDP fields of the first
frame, and reports no malformed packet and no expert error (the Read Request protection
Terminates, a known limitation of Wireshark 4.0's dissector, excepted)."""
import os
import shutil
import subprocess
import sys

from common import check, finish, out_dir

generator, base = sys.argv[1], sys.argv[2]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
lua = os.path.join(root, "scripts", "wireshark", "rnicsim.lua")
o = out_dir(base, "capture")
pcap = os.path.join(o, "wire.pcap")
labels = subprocess.run([generator, pcap], check=True, capture_output=True, text=True).stdout.split("\n")
labels = [l for l in labels if l]
tshark = shutil.which("tshark")
check(tshark is not None, "tshark is not installed (scripts/setup installs it)")
fields = ["frame.number", "efe.type", "iwarp_rdma.opcode", "iwarp_ddp.stag", "_ws.malformed",
          "_ws.expert.severity"]
cmd = [tshark, "-X", f"lua_script:{lua}", "--disable-protocol", "rpcordma", "-r", pcap, "-T", "fields",
       "-E", "separator=|"]
for fld in fields:
    cmd += ["-e", fld]
p = subprocess.run(cmd, capture_output=True, text=True)
check(p.returncode == 0, f"tshark failed: {p.stderr}")
rows = [l.split("|") for l in p.stdout.strip().split("\n")]
check(len(rows) == len(labels), f"{len(rows)} frames decoded, {len(labels)} written")
ERROR_SEVERITY = 8388608  # PI_ERROR
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
        check(all(s == "" or int(s) < ERROR_SEVERITY for s in severity.split(",")), f"frame {num}: expert error {severity}")
check(rows[0][3] == "0x00001201", f"first frame's STag decoded as {rows[0][3]!r}")
finish("capture_dissector")
