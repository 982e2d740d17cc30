#!/usr/bin/python3
"""Verbs programs in files of their own, run from scenarios (docs/verbs.md, "Programs"): the
shipped rc_pingpong and kv_put_get on two hosts; write_c, in C against rdma-core's header; a program on three processes (two on one host) each with its
own globals and errno; a program's exit code as the workload's result (exit 1 naming it); a
program file that is missing, or has no rnic_main, refused before the run (exit 2)."""
import os
import subprocess
import sys

from common import check, finish, load, out_dir, rnicsim, write_file

binary, work = sys.argv[1], out_dir(sys.argv[2], "programs")
build = os.path.dirname(binary)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
check_so = os.path.join(build, "testbench", "system", "check_program.so")
no_entry_so = os.path.join(build, "testbench", "system", "no_entry.so")


def scenario(name, text):
    return write_file(work, name, text)


# The shipped example, from the repository root as README says (its program path is relative to
# the working directory: the root when the build folder is build/).
o = os.path.join(work, "pingpong")
p = subprocess.run([binary, "run", "scenarios/examples/rc_pingpong.yaml", "--out", o], cwd=root,
                   capture_output=True, text=True)
check(p.returncode == 0, f"rc_pingpong: exit {p.returncode}: {p.stderr}")
check("rc_pingpong: 100 round trips of 64 bytes" in p.stdout, f"rc_pingpong output: {p.stdout!r}")
w = load(os.path.join(o, "results.json"))["workloads"][0]
check([h["exit"] for h in w["hosts"]] == [0, 0], f"rc_pingpong exits: {w}")

# The shipped key-value example: puts by RDMA Write, gets by RDMA Read, the table checked by the
# server with plain loads; the run ends when the programs do (no timer keeps it going).
o = os.path.join(work, "kv")
p = subprocess.run([binary, "run", "scenarios/examples/kv_put_get.yaml", "--out", o], cwd=root,
                   capture_output=True, text=True)
check(p.returncode == 0, f"kv_put_get: exit {p.returncode}: {p.stderr}")
check("server table holds the 32 values put" in p.stdout and "32 puts and gets" in p.stdout,
      f"kv_put_get output: {p.stdout!r}")
check(load(os.path.join(o, "stats.json"))["sim_time_ns"] < 1e6,
      "kv_put_get: the run went on after its programs ended")

# The C example, against rdma-core's <infiniband/verbs.h>: the device as rdma-core's inline
# ibv_query_device_ex / ibv_query_port reach it, 64 RDMA Writes checked byte by byte, an inline
# Send of the count.
o = os.path.join(work, "write_c")
p = subprocess.run([binary, "run", "scenarios/examples/write_c.yaml", "--out", o], cwd=root,
                   capture_output=True, text=True)
check(p.returncode == 0, f"write_c: exit {p.returncode}: {p.stderr}")
check("rnic0, iWARP NIC over Ethernet, port active" in p.stdout and "ODP yes" in p.stdout,
      f"write_c's device line: {p.stdout!r}")
check("64 blocks of 4096 bytes arrived intact" in p.stdout, f"write_c output: {p.stdout!r}")

# Three processes, two of them on node0: each its own globals and errno.
o = os.path.join(work, "globals")
s = scenario("globals.yaml", f"workloads:\n  - program: {check_so}\n    hosts: [node0, node1, node0]\n"
             "    args: [[globals, a], [globals, b], [globals, c]]\n")
p = rnicsim(binary, "run", s, "--out", o, "--quiet")
w = load(os.path.join(o, "results.json"))["workloads"][0]
check([h["exit"] for h in w["hosts"]] == [0, 0, 0], f"globals and errno per process: {w}")

# A program that fails: its exit code, the workload named, exit 1.
s = scenario("fails.yaml", f"workloads:\n  - {{name: failing, program: {check_so}, hosts: [node0], args: [exit, '3']}}\n")
p = rnicsim(binary, "run", s, "--out", os.path.join(work, "fails"), "--quiet", expect=1)
check("workload failing" in p.stderr and "exit 3" in p.stderr, f"failing program: {p.stderr!r}")

# Refused before the run.
s = scenario("missing.yaml", "workloads:\n  - {program: no/such/file.so, hosts: [node0]}\n")
p = rnicsim(binary, "run", s, "--out", os.path.join(work, "missing"), expect=2)
check("key 'workloads.program'" in p.stderr and "not a file" in p.stderr, f"missing program: {p.stderr!r}")
s = scenario("no_entry.yaml", f"workloads:\n  - {{program: {no_entry_so}, hosts: [node0]}}\n")
p = rnicsim(binary, "run", s, "--out", os.path.join(work, "no_entry"), expect=2)
check("no rnic_main" in p.stderr, f"program without rnic_main: {p.stderr!r}")
s = scenario("bad_host.yaml", f"workloads:\n  - {{program: {check_so}, hosts: [nowhere]}}\n")
p = rnicsim(binary, "run", s, "--out", os.path.join(work, "bad_host"), expect=2)
check("no host 'nowhere'" in p.stderr, f"program on an unknown host: {p.stderr!r}")
finish("programs")
