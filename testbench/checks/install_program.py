#!/usr/bin/python3
"""A verbs program written outside the tree against the installed package (docs/verbs.md,
"Programs"): `cmake --install` into a fresh prefix; in a new folder, a program (rc_pingpong's
source, copied there) built twice, with the documented pkg-config command and with
find_package(rnicsim) + rnicsim_add_program, and a program in C (write_c's source) built with
`cc` and pkg-config, once linking nothing and once with -libverbs as rdma-core's programs link
(rnicsim's own verbs answer it); each run from a scenario in that folder on two hosts by the
installed rnicsim; and ibv_devices as an `exec:` workload (the installed preload library)."""
import os
import shutil
import subprocess
import sys

from common import check, finish, out_dir

binary, work = sys.argv[1], out_dir(sys.argv[2], "install_program")
build = os.path.dirname(binary)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
prefix, proj = os.path.join(work, "prefix"), os.path.join(work, "project")
for d in (prefix, proj):
    shutil.rmtree(d, ignore_errors=True)
os.makedirs(proj)


def run(cmd, cwd=None, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, shell=isinstance(cmd, str))
    check(p.returncode == 0, f"{cmd}: exit {p.returncode}\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
    return p


run(["cmake", "--install", build, "--prefix", prefix])
shutil.copy(os.path.join(root, "examples", "rc_pingpong.cc"), os.path.join(proj, "pingpong.cc"))
env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
run("c++ $(pkg-config --cflags --libs rnicsim) pingpong.cc -o pingpong.so", cwd=proj, env=env)
shutil.copy(os.path.join(root, "examples", "write_c.c"), os.path.join(proj, "write_c.c"))
run("cc $(pkg-config --cflags --libs rnicsim) write_c.c -o write_c.so", cwd=proj, env=env)
run("cc $(pkg-config --cflags --libs rnicsim) write_c.c -o write_c_ibverbs.so -libverbs", cwd=proj, env=env)
with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
    f.write("cmake_minimum_required(VERSION 3.25)\nproject(pingpong CXX)\nfind_package(rnicsim REQUIRED)\n"
            "rnicsim_add_program(pingpong_cmake pingpong.cc)\n")
run(["cmake", "-S", proj, "-B", os.path.join(proj, "build"), f"-DCMAKE_PREFIX_PATH={prefix}"])
run(["cmake", "--build", os.path.join(proj, "build")])
for so in ("pingpong.so", os.path.join("build", "pingpong_cmake.so")):
    with open(os.path.join(proj, "scenario.yaml"), "w") as f:
        f.write(f"workloads:\n  - program: {so}\n    hosts: [node1, node0]\n"
                "    args: [[server, '10'], [client, '10']]\n")
    p = run([os.path.join(prefix, "bin", "rnicsim"), "run", "scenario.yaml", "--out", "out"], cwd=proj)
    check("rc_pingpong: 10 round trips of 64 bytes" in p.stdout, f"{so}: {p.stdout!r}")
for so in ("write_c.so", "write_c_ibverbs.so"):
    with open(os.path.join(proj, "scenario.yaml"), "w") as f:
        f.write(f"workloads:\n  - program: {so}\n    hosts: [node1, node0]\n"
                "    args: [[server, '8'], [client, '8']]\n")
    p = run([os.path.join(prefix, "bin", "rnicsim"), "run", "scenario.yaml", "--out", "out"], cwd=proj)
    check("8 blocks of 4096 bytes arrived intact" in p.stdout, f"{so}: {p.stdout!r}")
# An executable as a simulated process, the preload library found where install put it.
with open(os.path.join(proj, "devices.yaml"), "w") as f:
    f.write("workloads:\n  - {name: devices, exec: [ibv_devices], hosts: [node0]}\n")
run([os.path.join(prefix, "bin", "rnicsim"), "run", "devices.yaml", "--out", "out_exec"], cwd=proj)
with open(os.path.join(proj, "out_exec", "node0", "devices.out")) as f:
    check("rnic0" in f.read(), "the installed rnicsim runs ibv_devices")
finish("install_program")
