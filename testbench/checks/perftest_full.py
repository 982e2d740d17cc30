#!/usr/bin/python3
"""Debian's perftest set, unmodified, as simulated processes, against rnicsim's own perf on the
same card (label exec-long: CI runs the short form in exec_programs). Bandwidth through librdmacm
(-R, as an iWARP card is driven; path_mtu left to the link as perf leaves it): ib_write_bw,
ib_read_bw and ib_send_bw at 4 KiB and 64 KiB report a BW average within 2% of `rnicsim perf
write_bw`/`read_bw`/`send_bw`; ib_read_bw without -R (its server in RTR) completes. Latency:
ib_write_lat, ib_read_lat and ib_send_lat at 2 B and 4 KiB report a t_typical within 5% of
`rnicsim perf write_lat`/`read_lat`/`send_lat`. Atomics: ib_atomic_bw -R and ib_atomic_lat
(FETCH_AND_ADD, 8 bytes) within 2% and 5% of `rnicsim perf atomic_bw`/`atomic_lat`. Every pair
exits 0 and leaves no process."""
import os
import subprocess
import sys

from common import check, finish, load, out_dir, rnicsim, text, write_file

binary, work = sys.argv[1], out_dir(sys.argv[2], "perftest_full")
ITERS = "1000"


def row(path, first):
    rows = [l.split() for l in text(path).splitlines() if l.split()[:1] == [first]]
    return rows[0] if rows else []


def pair(name, prog, size, *opts):
    """One server/client pair of a perftest program; its client's table row for the size."""
    yaml = (f"workloads:\n  - name: {name}\n    exec: [{prog}, -s, '{size}', -n, '{ITERS}'"
            + "".join(f", '{o}'" for o in opts) + "]\n    hosts: [node1, node0]\n"
            "    args: [[], [node1]]\n")
    o = os.path.join(work, name)
    rnicsim(binary, "run", write_file(work, name + ".yaml", yaml), "--out", o, "--quiet")
    check(not subprocess.run(["pgrep", "-f", "/usr/bin/" + prog]).returncode == 0,
          f"{name}: {prog} left behind")
    for w in load(os.path.join(o, "results.json"))["workloads"]:
        for h in w["hosts"]:
            check(h.get("exit") == 0, f"{name} on {h['host']}: {h}")
    return row(os.path.join(o, "node0", name + ".out"), str(size))


def perf(test, size, column):
    o = os.path.join(work, f"perf_{test}_{size}")
    rnicsim(binary, "perf", test, "-s", str(size), "-n", ITERS, "--out", o, "--quiet")
    return load(os.path.join(o, "results.json"))["rows"][0][column]


for verb in ("write", "read", "send"):
    for size in (4096, 65536):
        r = pair(f"{verb}_bw_{size}", f"ib_{verb}_bw", size, "-R")
        got = float(r[3]) if len(r) > 3 else 0
        want = perf(f"{verb}_bw", size, "bw_avg_mib_s")
        check(abs(got - want) <= 0.02 * want, f"ib_{verb}_bw -R -s {size}: {got} against {want}")
        print(f"perftest_full: ib_{verb}_bw -R -s {size} {got} MB/s, perf {want:.2f} MiB/s")
    for size in (2, 4096):
        r = pair(f"{verb}_lat_{size}", f"ib_{verb}_lat", size)
        got = float(r[4]) if len(r) > 4 else 0
        want = perf(f"{verb}_lat", size, "t_typical_us")
        check(abs(got - want) <= 0.05 * want, f"ib_{verb}_lat -s {size}: {got} against {want}")
        print(f"perftest_full: ib_{verb}_lat -s {size} {got} us, perf {want:.3f} us")
r = pair("atomic_bw", "ib_atomic_bw", 8, "-R")
got, want = (float(r[3]) if len(r) > 3 else 0), perf("atomic_bw", 8, "bw_avg_mib_s")
check(abs(got - want) <= 0.02 * want, f"ib_atomic_bw -R: {got} against {want}")
print(f"perftest_full: ib_atomic_bw -R {got} MB/s, perf {want:.2f} MiB/s")
r = pair("atomic_lat", "ib_atomic_lat", 8)
got, want = (float(r[4]) if len(r) > 4 else 0), perf("atomic_lat", 8, "t_typical_us")
check(abs(got - want) <= 0.05 * want, f"ib_atomic_lat: {got} against {want}")
print(f"perftest_full: ib_atomic_lat {got} us, perf {want:.3f} us")
r = pair("read_bw_rtr", "ib_read_bw", 65536)
check(len(r) > 3 and float(r[3]) > 0, f"ib_read_bw without -R: {r}")
finish("perftest_full")
