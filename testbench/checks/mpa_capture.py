#!/usr/bin/python3
"""Wireshark's own dissectors (no Lua of the project) over a capture of one MPA/TCP connection
written by the transport's wire code (testbench/tools/mpa_capture.cc): the MPA request and
reply decode as iwarp_mpa, every FPDU (Write, Read Request and Response, Send, and RFC 7306's
Atomic Request and Response) as iwarp_mpa and iwarp_ddp_rdmap with the RDMAP opcode written and
its CRC reported good, and no frame is malformed or carries an expert error.
The same for a connection made by two ends of the TCP engine's connection logic
(tcp_connection.h), where Wireshark's TCP analysis must flag nothing either.
Wireshark 4.0 warns (a warning, not an error) that the request and reply set a reserved bit and
revision 2: RFC 6581's enhanced set-up, which its RFC 5044 checks predate."""
import os
import shutil
import subprocess
import sys

from common import check, expert_error, finish, out_dir

generator, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "mpa_capture")
tshark = shutil.which("tshark")


def decode(pcap, args):
    """The capture the generator writes with args: each MPA message decoded as written."""
    labels = [l for l in subprocess.run([generator] + args + [pcap], check=True,
                                        capture_output=True, text=True).stdout.split("\n") if l]
    p = subprocess.run([tshark, "-r", pcap, "-Y", "iwarp_mpa", "-T", "fields", "-E", "separator=|",
                        "-e", "frame.number", "-e", "iwarp_mpa.key.req", "-e", "iwarp_mpa.key.rep",
                        "-e", "iwarp_rdma.opcode", "-e", "_ws.malformed",
                        "-e", "_ws.expert.severity"], capture_output=True, text=True)
    check(p.returncode == 0, f"tshark: {p.stderr}")
    rows = [l.split("|") for l in p.stdout.strip().split("\n") if l]
    check(len(rows) == len(labels), f"{pcap}: {len(rows)} MPA messages decoded, {len(labels)} written")
    for row, label in zip(rows, labels):
        num, req, rep, opcode, malformed, severity = row
        if label == "req":
            check(req != "", f"frame {num}: not decoded as an MPA request")
        elif label == "rep":
            check(rep != "", f"frame {num}: not decoded as an MPA reply")
        else:
            check(opcode == f"0x{int(label):02x}", f"frame {num}: opcode {opcode!r}, expected {label}")
        check(malformed == "", f"frame {num} ({label}): malformed")
        check(not expert_error(severity), f"frame {num} ({label}): expert error {severity}")
    # Every FPDU's CRC32c as Wireshark checks it.
    v = subprocess.run([tshark, "-r", pcap, "-V", "-Y", "iwarp_mpa.fpdu"], capture_output=True,
                       text=True).stdout
    fpdus = len([l for l in labels if l not in ("req", "rep")])
    check(v.count("(Good CRC32)") == fpdus and "Bad CRC32" not in v,
          f"{pcap}: {v.count('(Good CRC32)')} good CRCs, {v.count('Bad CRC32')} bad, of {fpdus} FPDUs")
    # Nothing else in the capture is malformed (the TCP segments around the MPA messages).
    m = subprocess.run([tshark, "-r", pcap, "-Y", "_ws.malformed"], capture_output=True, text=True)
    check(m.stdout.strip() == "", f"{pcap}: malformed frames: {m.stdout}")


if check(tshark is not None, "tshark is not installed (scripts/setup installs it)"):
    decode(os.path.join(o, "mpa.pcap"), [])
    # The connection the TCP engine's ends make: besides, Wireshark's TCP analysis finds nothing
    # to say about it (no retransmission, duplicate ACK, unseen segment or window problem).
    eng = os.path.join(o, "engine.pcap")
    decode(eng, ["--engine"])
    a = subprocess.run([tshark, "-r", eng, "-Y", "tcp.analysis.flags"], capture_output=True,
                       text=True)
    check(a.stdout.strip() == "", f"TCP analysis flags frames of the engine's capture: {a.stdout}")
finish("mpa_capture")
