#!/usr/bin/python3
"""Captures of simulated runs with every RDMAP opcode and every error case, through the shipped
Wireshark dissector. Runs each case of the verbs system tests (every opcode) and of the error
tests (every row of WIRE.md's error table) with RNICSIM_CAPTURE_DIR set, so each writes its
link to a pcap, then requires of tshark: the expected opcodes (every opcode 0-7 across the
captures, RFC 7306's Immediate Data and Atomic Request among them; in each error case the offending opcode first, one Terminate, and the other QP's
Write and Send after it) and no malformed packet or expert error. Excepted, as WIRE.md names:
the frames a test corrupts on purpose, and Terminates whose error type disagrees with the T bit
of the header they carry (Wireshark 4.0 sizes that header from the error type)."""
import glob
import os
import subprocess
import sys

from common import check, expert_error, finish, out_dir, tshark_fields

ops_test, errors_test, base = sys.argv[1], sys.argv[2], sys.argv[3]
o = out_dir(base, "error_capture")
for f in glob.glob(os.path.join(o, "*.pcap")):
    os.remove(f)

# Offending opcode of each error case as it goes on the wire; which cases corrupt their segment;
# which Terminates carry a header whose T bit disagrees with their error type.
OFFENDING = {
    "WriteInvalidStagIndex": 0, "WriteWrongKey": 0, "WriteOutsideMr": 0, "WriteMrOfAnotherPd": 0,
    "WriteWithoutRemoteWriteRight": 0, "WriteToAQpWithoutRemoteWriteAccess": 0,
    "ReadFromAQpWithoutRemoteReadAccess": 1, "ReadSourceInvalidStagIndex": 1, "ReadSourceWrongKey": 1,
    "ReadSourceOutsideMr": 1, "ReadSourceWithoutRemoteReadRight": 1, "ReadSourceMrOfAnotherPd": 1,
    "SendWithNoReceivePosted": 3, "SendLongerThanTheReceive": 3,
    "SendWithInvalidateOfAnotherPdsStag": 4, "SendWithInvalidateOfAnInvalidStag": 4,
    "UnknownOpcode": 12, "OpcodeThatDoesNotMatchTheTBit": 3, "BadRdmapVersion": 3,
    "BadDdpVersionUntagged": 3, "BadDdpVersionTagged": 0, "BadQueueNumber": 3,
    "SendWithWrongMsn": 3, "SendWithWrongMo": 3, "ReadRequestWithWrongMsn": 1,
    "ReadRequestWithNonZeroMo": 1, "ReadRequestBeyondIrd": 1,
    "ReadResponseWithoutAnOutstandingRead": 2, "ReadRequestShorterThanItsPayload": 1,
    "ReadRequestWithTrailingBytes": 1, "ReadRequestWithoutTheLastFlag": 1,
    "SendIntoAReceiveWhoseMrWasDeregistered": 3,
    "FetchAddNotAligned": 10, "CmpSwapNotAligned": 10, "AtomicWithoutRemoteAtomicRight": 10,
    "AtomicToAQpWithoutRemoteAtomicAccess": 10, "AtomicInvalidStag": 10, "AtomicOutsideMr": 10,
    "WriteWithImmediateWithNoReceivePosted": 8,
}
CORRUPTED = {"UnknownOpcode", "OpcodeThatDoesNotMatchTheTBit", "BadRdmapVersion",
             "BadDdpVersionUntagged", "BadDdpVersionTagged", "BadQueueNumber", "SendWithWrongMsn",
             "SendWithWrongMo", "ReadRequestWithWrongMsn", "ReadRequestWithNonZeroMo",
             "ReadResponseWithoutAnOutstandingRead", "ReadRequestShorterThanItsPayload",
             "ReadRequestWithTrailingBytes", "ReadRequestWithoutTheLastFlag"}
TERM_TYPE_MISMATCH = {"OpcodeThatDoesNotMatchTheTBit",  # RDMAP type 2 over a 14-byte header
                      "ReadResponseWithoutAnOutstandingRead"}
READ_PROTECTION = {k for k, v in OFFENDING.items() if v == 1}  # WIRE.md's named limitation


def cases(binary):
    out = subprocess.run([binary, "--gtest_list_tests"], check=True, capture_output=True,
                         text=True).stdout
    suite, names = "", []
    for line in out.split("\n"):
        if line and not line.startswith(" "):
            suite = line.strip()
        elif line.strip() and suite != "RdmaErrorsTcp.":  # MPA/TCP: Wireshark's own dissectors
            names.append(suite + line.strip().split()[0])
    return names


env = dict(os.environ, RNICSIM_CAPTURE_DIR=o, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
for binary in (ops_test, errors_test):
    for name in cases(binary):
        p = subprocess.run([binary, f"--gtest_filter={name}"], env=env, capture_output=True, text=True)
        check(p.returncode == 0, f"{name} failed:\n{p.stdout[-2000:]}")

seen = set()
pcaps = sorted(glob.glob(os.path.join(o, "*.pcap")))
check(len(pcaps) == len(OFFENDING) + len(cases(ops_test)), f"{len(pcaps)} captures written")
for pcap in pcaps:
    name = os.path.basename(pcap)[:-5]
    rows = tshark_fields(pcap, ["frame.number", "efe.type", "iwarp_rdma.opcode", "_ws.malformed",
                                "_ws.expert.severity"])
    if rows is None:
        continue
    data = [r for r in rows if r[1] == "0"]
    check(all(r[1] in ("0", "1") for r in rows), f"{name}: a frame is neither EFE DATA nor ACK")
    opcodes = [int(r[2], 16) if r[2] else None for r in data]
    seen.update(x for x in opcodes if x is not None)
    for i, (num, _, opcode, malformed, severity) in enumerate(data):
        first_of_error_case = name in OFFENDING and i == 0
        if first_of_error_case and name in CORRUPTED:
            continue
        if opcode == "0x07" and (name in TERM_TYPE_MISMATCH or name in READ_PROTECTION):
            continue
        check(malformed == "", f"{name}: frame {num} malformed")
        check(not expert_error(severity), f"{name}: frame {num}: expert error {severity}")
    for num, _, opcode, malformed, severity in (r for r in rows if r[1] == "1"):
        check(malformed == "" and severity == "", f"{name}: ACK frame {num} not clean")
    if name in OFFENDING:
        check(opcodes[:1] == [OFFENDING[name]], f"{name}: first opcode {opcodes[:1]}, expected {OFFENDING[name]}")
        check(opcodes.count(7) == 1, f"{name}: {opcodes.count(7)} Terminates")
        check(opcodes[-2:] == [0, 3], f"{name}: the other QP's Write and Send do not end the capture: {opcodes}")
check(seen >= set(range(9)) | {10}, f"opcodes seen: {sorted(seen)}, every one of 0-8 and 10 expected")
finish("error_capture")
