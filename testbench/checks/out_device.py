#!/usr/bin/python3
"""--out on a device that cannot take the outputs: refused before the run when it is read-only or
has less than 1 MiB free (exit 2, key 'out', the reason); a capture that fills the device during
the run stops it (exit 1) with one line per file naming it and the system's reason, never a
traceback or a SystemC report. Needs small tmpfs mounts (root, mount allowed): without them the
check is skipped (exit 77, reported as skipped by CTest), never passed."""
import os
import subprocess
import sys

from common import check, finish, load, out_dir, rnicsim

binary, work = sys.argv[1], out_dir(sys.argv[2], "out_device")
SKIP = 77


def mount(path, opts):
    os.makedirs(path, exist_ok=True)
    subprocess.run(["umount", path], capture_output=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path], capture_output=True).returncode == 0


mounts = {name: os.path.join(work, name) for name in ("full", "readonly", "small")}
if os.geteuid() != 0 or not mount(mounts["full"], "size=64k"):
    print("out_device: skipped: cannot mount a tmpfs here (needs root and mount rights)")
    sys.exit(SKIP)
try:
    ok = mount(mounts["readonly"], "ro,size=1m") and mount(mounts["small"], "size=2m")
    check(ok, "could not mount the read-only and small tmpfs")
    # Less than 1 MiB free: refused before anything runs.
    p = rnicsim(binary, "perf", "write_bw", "-n", "5", "--out", os.path.join(mounts["full"], "o"), expect=2)
    check("key 'out'" in p.stderr and "KiB free" in p.stderr, f"--out on a 64 KiB device: {p.stderr!r}")
    # Read-only: refused (root's permissions do not help).
    p = rnicsim(binary, "perf", "write_bw", "-n", "5", "--out", mounts["readonly"], expect=2)
    check("key 'out'" in p.stderr and "Read-only" in p.stderr, f"--out on a read-only device: {p.stderr!r}")
    # A 2 MiB device and a capture of about 130 MB: the run stops when the capture cannot be
    # written, naming it.
    o = mounts["small"]
    p = rnicsim(binary, "perf", "write_bw", "-s", "65536", "-n", "2000", "--pcap", "--out", o, "--quiet",
                expect=1)
    lines = p.stderr.strip().split("\n")
    check(any("cannot write" in l and ".pcap" in l and "No space left on device" in l for l in lines),
          f"a capture filling the device: {p.stderr!r}")
    check(all(l.startswith("rnicsim: ") for l in lines) and "Error:" not in p.stderr
          and "Traceback" not in p.stderr, f"a capture filling the device: stray output {p.stderr!r}")
    # What could still be written records the failure; what could not was named on stderr and
    # is not left behind cut.
    for f in ("stats.json", "results.json"):
        path = os.path.join(o, f)
        if any(f in l for l in lines):
            check(not os.path.exists(path), f"{f}: named as unwritable but left behind")
        else:
            check(load(path).get("stopped", {}).get("exit") == 1, f"{f}: does not record the failure")
finally:
    for m in mounts.values():
        subprocess.run(["umount", m], capture_output=True)
finish("out_device")
