#!/usr/bin/python3
"""Bad input to `validate` and `run`: exit code 2 with file, line, key and reason."""
import os
import resource
import subprocess
import re
import sys

from common import check, finish, load, out_dir, rnicsim, write_file

binary, work = sys.argv[1], out_dir(sys.argv[2], "bad_input")
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
good = os.path.join(root, "scenarios", "experiments", "mmio_latency.yaml")


def scenario(name, text):
    return write_file(work, name, text)


TOPO = "topology:\n  hosts: [{name: a}, {name: b}, {name: c}]\n  links:\n    - {between: [a, b]}\n"

cases = [
    # (what, args after the verb, the file:line or option, the key, words of the reason)
    ("malformed YAML", [scenario("malformed.yaml", "preset: rnic-10g\nexperiment:\n  kind: mmio_latency\n  paths: [user\n")],
     "malformed.yaml:5", "(syntax)", "malformed YAML"),
    ("unknown top-level key", [scenario("unknown.yaml", "preset: rnic-10g\nbogus: 1\n")],
     "unknown.yaml:2", "bogus", "unknown key"),
    ("unknown key in set", [scenario("unknown_set.yaml", "set:\n  pcie:\n    mpss: 256\nexperiment: {kind: mmio_latency}\n")],
     "unknown_set.yaml:3", "pcie.mpss", "unknown key"),
    ("unknown experiment key", [scenario("unknown_exp.yaml", "experiment:\n  kind: mmio_latency\n  readz: 3\n")],
     "unknown_exp.yaml:3", "experiment.readz", "unknown key"),
    ("unknown preset", [scenario("preset.yaml", "\npreset: rnic-1t\nexperiment: {kind: mmio_latency}\n")],
     "preset.yaml:2", "preset", "unknown preset 'rnic-1t'"),
    ("unknown preset option", [good, "--preset", "nope"], "--preset", "preset", "unknown preset 'nope'"),
    ("out of range in file", [scenario("range.yaml", "set:\n  pcie.mps: 100\nexperiment: {kind: mmio_latency}\n")],
     "range.yaml:2", "pcie.mps", "out of range"),
    ("wrong type in file", [scenario("type.yaml", "set:\n  host.malloc_scatter: lots\nexperiment: {kind: mmio_latency}\n")],
     "type.yaml:2", "host.malloc_scatter", "not a number"),
    ("experiment value out of range", [scenario("exp_range.yaml", "experiment:\n  kind: mmio_latency\n  reads: 0\n")],
     "exp_range.yaml:3", "experiment.reads", "out of range"),
    ("bad --set value", [good, "--set", "pcie.lanes=3"], "--set pcie.lanes=3", "pcie.lanes", "not one of"),
    ("bad --set type", [good, "--set", "pcie.gen=four"], "--set pcie.gen=four", "pcie.gen", "not an integer"),
    ("bad --set form", [good, "--set", "pcie.gen"], "--set pcie.gen", "pcie.gen", "key=value"),
    ("unknown --set key", [good, "--set", "pcie.speed=9"], "--set pcie.speed=9", "pcie.speed", "unknown key"),
    ("unknown fault key", [scenario("faults.yaml", "faults:\n  - {kind: loss}\n")],
     "faults.yaml:2", "faults.kind", "unknown key"),
    ("fault on no link", [scenario("fl2.yaml", "faults:\n  - {link: l9, loss: 0.1}\nworkloads:\n  - {test: write_bw}\n")],
     "fl2.yaml:2", "faults.link", "no link 'l9'"),
    ("loss above 1", [scenario("fl3.yaml", "faults:\n  - {link: eth0, loss: 1.5}\nworkloads:\n  - {test: write_bw}\n")],
     "fl3.yaml:2", "link.loss", "out of range"),
    ("down interval backwards", [scenario("fl4.yaml", "faults:\n  - {link: eth0, down_us: [300, 100]}\nworkloads:\n  - {test: write_bw}\n")],
     "fl4.yaml:2", "faults.down_us", "not an interval"),
    ("fault with nothing to do", [scenario("fl5.yaml", "faults:\n  - {link: eth0}\nworkloads:\n  - {test: write_bw}\n")],
     "fl5.yaml:2", "faults", "give loss, ber or down_us"),
    ("workload without test", [scenario("w1.yaml", "workloads:\n  - {type: write_bw}\n")],
     "w1.yaml:2", "workloads.test", "missing"),
    ("unknown workload test", [scenario("w2.yaml", "workloads:\n  - {test: write_gbps}\n")],
     "w2.yaml:2", "workloads.test", "unknown test 'write_gbps'"),
    ("unknown workload key", [scenario("w3.yaml", "workloads:\n  - {test: write_bw, depth: 4}\n")],
     "w3.yaml:2", "workloads.depth", "unknown key"),
    ("workload size out of range", [scenario("w4.yaml", "workloads:\n  - {test: read_lat, size: 0}\n")],
     "w4.yaml:2", "workloads.size", "out of range"),
    ("workload to an unknown host", [scenario("w5.yaml", TOPO + "workloads:\n  - {test: write_bw, from: a, to: z}\n")],
     "w5.yaml:6", "workloads.to", "no host 'z'"),
    ("workload between unlinked hosts", [scenario("w6.yaml", TOPO + "workloads:\n  - {test: write_bw, from: a, to: c}\n")],
     "w6.yaml:6", "workloads", "no link joins 'a' and 'c'"),
    ("workload between different transports", [scenario("tr1.yaml", TOPO.replace("{name: b}", "{name: b, set: {card.transport: mpa_tcp}}") + "workloads:\n  - {test: write_bw, from: a, to: b}\n")],
     "tr1.yaml:6", "workloads", "must use the same transport"),
    ("unknown transport", [good, "--set", "card.transport=roce"], "--set card.transport=roce", "card.transport", "not one of"),
    ("two links on one port", [scenario("t1.yaml", TOPO.replace("[a, b]}", "[a, b]}\n    - {between: [a, c]}"))],
     "t1.yaml:5", "topology.links.between", "one Ethernet port"),
    ("link to an unknown host", [scenario("t2.yaml", TOPO.replace("[a, b]", "[a, x]"))],
     "t2.yaml:4", "topology.links.between", "no host or switch 'x'"),
    ("duplicate host", [scenario("t3.yaml", TOPO.replace("{name: c}", "{name: a}"))],
     "t3.yaml:2", "topology.hosts.name", "names two hosts"),
    ("bad host name", [scenario("t4.yaml", TOPO.replace("{name: c}", "{name: C-1}"))],
     "t4.yaml:2", "topology.hosts.name", "is not a name"),
    ("bad MAC", [scenario("t5.yaml", TOPO.replace("{name: c}", "{name: c, mac: '02:00:zz'}"))],
     "t5.yaml:2", "topology.hosts.mac", "six hex bytes"),
    ("host sets a sim key", [scenario("t6.yaml", TOPO.replace("{name: c}", "{name: c, set: {sim.seed: 3}}"))],
     "t6.yaml:2", "topology.hosts.set.sim.seed", "its own card"),
    ("link faster than a core", [scenario("t7.yaml", TOPO.replace("{name: b}", "{name: b, set: {core.datapath_bytes: 1}}"))],
     "t7.yaml:4", "topology.links.rate_gbps", "below the link's 10 Gb/s"),
    ("a switch with no hosts", [scenario("t8.yaml", "topology:\n  switches: [{name: s0}]\n")],
     "t8.yaml:2", "topology.hosts", "switches need hosts"),
    ("a switch sets a card key", [scenario("sw9.yaml", "topology:\n  hosts: [{name: a}, {name: b}]\n  switches:\n    - {name: s0, set: {core.qps: 4}}\n")],
     "sw9.yaml:4", "topology.switches.set.core.qps", "only its own switch. keys"),
    ("a link to no such switch", [scenario("sw10.yaml", TOPO.replace("[a, b]}", "[a, s9]}"))],
     "sw10.yaml:4", "topology.links.between", "no host or switch 's9'"),
    ("workloads beside an experiment", [scenario("t9.yaml", "workloads:\n  - {test: write_bw}\nexperiment: {kind: mmio_latency}\n")],
     "t9.yaml:2", "workloads", "an experiment or workloads, not both"),
    ("not a block", [good, "--rtl", "host"], "mmio_latency.yaml", "rtl", "is not a block"),
    ("RTL built for fewer tags", [good, "--rtl", "rnic_dmac", "--set", "pcie.tags=512"],
     "mmio_latency.yaml", "rtl", "rnic_dmac's RTL is built for at most 256 tags, not pcie.tags 512"),
    ("RTL built for smaller tables", [good, "--rtl", "rnic_xlat", "--set", "core.stags=65537"],
     "mmio_latency.yaml", "rtl", "rnic_xlat's RTL is built for at most 65536 STags"),
    ("RTL waveform at an unbuilt width", [good, "--rtl", "crc32", "--trace", "fst", "--set",
     "core.datapath_bytes=32"], "mmio_latency.yaml", "rtl",
     "a waveform of crc32's RTL at 32 bytes per beat is not built"),
    ("RTL waveform, rnic_xlat", [good, "--rtl", "rnic_xlat", "--trace", "fst"],
     "mmio_latency.yaml", "rtl", "a waveform of rnic_xlat's RTL in a run is not built (its adapter"),
    ("RTL built for another parse time", [good, "--rtl", "ddp_rx_parse", "--set",
     "core.rx_parse_cycles=3"], "mmio_latency.yaml", "rtl", "built for core.rx_parse_cycles 2, not 3"),
    ("RTL at an unbuilt DMAC width in a list", [good, "--rtl", "crc32,rnic_dmac", "--set",
     "core.dma_bytes=16"], "mmio_latency.yaml", "rtl",
     "rnic_dmac's RTL is not built for a 16-byte datapath (core.dma_bytes)"),
    ("trace format", [good, "--trace", "vcd"], "--trace vcd", "trace", "vcd is not built"),
    ("trace window", [good, "--trace", "fst", "--trace-window", "9:3"], "--trace-window 9:3",
     "trace_window", "ends before it starts"),
    ("window without trace", [good, "--trace-window", "1:3"], "--trace-window 1:3", "trace_window",
     "no effect without --trace fst"),
    ("NaN in a trace window", [good, "--trace", "fst", "--trace-window", "0:nan"], "--trace-window 0:nan",
     "trace_window", "not a time in ns"),
    ("trace window past 2^64 ps", [good, "--trace", "fst", "--trace-window", "0:1e17"], "--trace-window 0:1e17",
     "trace_window", "not a time in ns"),
    ("duplicate key", [scenario("dup.yaml", "preset: rnic-10g\npreset: rnic-100g\nexperiment: {kind: mmio_latency}\n")],
     "dup.yaml:2", "preset", "given twice (first on line 1)"),
    ("leading zero", [scenario("octal.yaml", "set:\n  core.clk_mhz: 0250\nexperiment: {kind: mmio_latency}\n")],
     "octal.yaml:2", "core.clk_mhz", "leading zero"),
    ("NaN for a number", [scenario("nan.yaml", "set:\n  pcie.link_latency_ns: nan\nexperiment: {kind: mmio_latency}\n")],
     "nan.yaml:2", "pcie.link_latency_ns", "not"),
    ("2^64", [scenario("big.yaml", "set:\n  firmware.mr_cycles: 18446744073709551616\nexperiment: {kind: mmio_latency}\n")],
     "big.yaml:2", "firmware.mr_cycles", "does not fit 64 bits"),
    ("a sequence as a key", [scenario("seqkey.yaml", "[1, 2]: 3\n")], "seqkey.yaml:1", "(key)",
     "a key must be a single value"),
    ("deep nesting", [scenario("deep.yaml", "set: " + "[" * 40 + "]" * 40 + "\n")], "deep.yaml:1",
     "(file)", "nested more than 32 levels"),
    ("the switch as a scalar", [scenario("sw.yaml", "topology:\n  switches: foo\n")], "sw.yaml:2",
     "topology.switches", "expected a list of switches"),
    ("faults as a scalar", [scenario("fl.yaml", "faults: none\nexperiment: {kind: mmio_latency}\n")],
     "fl.yaml:1", "faults", "expected a list of link faults"),
    ("workloads as a scalar", [scenario("wl.yaml", "workloads: write_bw\n")], "wl.yaml:1", "workloads",
     "expected a list of workloads"),
    ("no hosts", [scenario("h0.yaml", "topology:\n  hosts: []\n")], "h0.yaml:2", "topology.hosts",
     "the list is empty"),
    ("a list as a host name", [scenario("hn.yaml", "topology:\n  hosts: [{name: [1, 2]}, {name: b}]\n")],
     "hn.yaml:2", "topology.hosts.name", "expected a single value"),
    ("nothing to run", [scenario("empty.yaml", "name: nothing\n")], "empty.yaml", "workloads",
     "nothing to run"),
    ("seed out of range", [good, "--seed", "-1"], "--seed -1", "sim.seed", "out of range"),
    ("seed beyond 64 bits", [good, "--seed", "18446744073709551616"], "--seed", "sim.seed",
     "does not fit 64 bits"),
    ("alias bomb under set", [scenario("bomb.yaml", "a: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"{x}: &{x} [{', '.join(['*' + y] * 10)}]\n" for y, x in zip("abcdef", "bcdefg")) + "set: {x: *g}\n")],
     "bomb.yaml", "(file)", "more than 1000000 values once its aliases are expanded"),
]

for verb in ("validate", "run"):
    for what, args, where, key, reason in cases:
        extra = ["--out", os.path.join(work, "out")] if verb == "run" else []
        p = rnicsim(binary, verb, *args, *extra, expect=2)
        msg = p.stderr.strip()
        check(re.search(re.escape(where) + r".*: key '" + re.escape(key) + "': .*" + re.escape(reason), msg) is not None,
              f"{verb} / {what}: message lacks '{where}', key '{key}', '{reason}': {msg!r}")

p = rnicsim(binary, "run", "--bogus-option", good, expect=2)
p = rnicsim(binary, "perf", "write_bw", "-s", "2000000000", expect=2)
check("perf write_bw -s" in p.stderr and "size" in p.stderr, f"perf write_bw -s: {p.stderr!r}")
p = rnicsim(binary, "perf", "write_lat", "-q", "2", expect=2)
check("not an option of write_lat" in p.stderr, f"perf write_lat -q: {p.stderr!r}")
p = rnicsim(binary, "perf", "no_such_test", expect=2)
check("unknown test" in p.stderr, f"perf no_such_test: {p.stderr!r}")
p = rnicsim(binary, "perf", "pcie_dma", "-s", "64", "--pcap", "--out", os.path.join(work, "o"), expect=2)
check("no Ethernet link" in p.stderr, f"perf pcie_dma --pcap: {p.stderr!r}")
p = rnicsim(binary, "perf", "pcie_dma", "-n", "5", expect=2)
# An option given is honoured or refused, never replaced by its default.
for args, words in ((["write_bw", "-s", "0"], "size"), (["write_bw", "-n", "0"], "iters"),
                    (["write_bw", "-q", "0"], "qps"), (["send_bw", "-t", "0"], "tx_depth"),
                    (["pcie_dma", "-s", "-5"], "min_bytes"),
                    (["read_bw", "-s", "4096", "-a"], "exclude each other")):
    p = rnicsim(binary, "perf", *args, "--out", os.path.join(work, "o"), expect=2)
    check(words in p.stderr and "perf " + args[0] in p.stderr, f"perf {' '.join(args)}: {p.stderr!r}")
# A trace scope that matches nothing is refused when the system is built (validate builds none).
p = rnicsim(binary, "perf", "write_lat", "-n", "5", "--trace", "fst", "--trace-scope", "nothing*",
            "--out", os.path.join(work, "o"), expect=2)
check("key 'trace_scope'" in p.stderr and "matches no instance" in p.stderr, f"--trace-scope: {p.stderr!r}")
# --out must be a folder that can be written, checked before the run.
afile = os.path.join(work, "afile")
with open(afile, "w") as f:
    f.write("x")
for o in (afile, os.path.join(afile, "sub")):
    p = rnicsim(binary, "perf", "write_bw", "-n", "5", "--out", o, expect=2)
    check("key 'out'" in p.stderr and "is a file, not a folder" in p.stderr, f"--out {o}: {p.stderr!r}")
# A message size whose buffers cannot fit the host's memory is refused before the run, naming
# the option that changes it: 2 x 512 MiB on a 1 GiB host.
p = rnicsim(binary, "perf", "write_bw", "-s", "536870912", "-n", "1", "--set", "host.mem_mib=1024",
            "--set", "host.hole_mib=0", "--out", os.path.join(work, "o"), expect=2)
check("key 'host.mem_mib'" in p.stderr and "raise host.mem_mib" in p.stderr, f"perf -s 512 MiB: {p.stderr!r}")
# A host program that runs out of memory mid-run: one plain line on stderr naming what ran out
# and the option, exit 1, no SystemC report, and both outputs written with the failure in them.
o = os.path.join(work, "oom")
p = rnicsim(binary, "run", os.path.join(root, "scenarios", "experiments", "pbl_acquisition.yaml"),
            "--set", "host.mem_mib=64", "--set", "host.hole_mib=0", "--out", o, "--quiet", expect=1)
check(p.stderr.strip().count("\n") == 0 and "host physical memory exhausted" in p.stderr
      and "host.mem_mib" in p.stderr, f"out of host memory: stderr {p.stderr!r}")
check("E549" not in p.stdout + p.stderr, "a SystemC report reached the user")
for f in ("results.json", "stats.json"):
    check(load(os.path.join(o, f)).get("stopped", {}).get("exit") == 1, f"out of host memory: {f} does not record it")
# A run that would not fit this machine's memory is refused before it starts, naming the options
# that shrink it: here the machine is the process's address-space limit (ulimit -v, 1.2 GB), and
# 512 MiB messages need about 2 GiB.
def limited(kib):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (kib << 10, kib << 10))


o = os.path.join(work, "too_big")
p = subprocess.run([binary, "perf", "write_bw", "-s", "536870912", "-n", "1", "--set", "host.mem_mib=20000",
                    "--out", o, "--quiet"], capture_output=True, text=True, preexec_fn=limited(1200 << 10))
check(p.returncode == 2 and "key 'size'" in p.stderr and "ulimit -v" in p.stderr and "-s" in p.stderr,
      f"a run beyond the memory limit: exit {p.returncode}, stderr {p.stderr!r}")
p = subprocess.run([binary, "perf", "write_bw", "-s", "1048576", "-n", "5", "--out", o, "--quiet"],
                   capture_output=True, text=True, preexec_fn=limited(1200 << 10))
check(p.returncode == 0, f"a small run under the same limit: exit {p.returncode}, stderr {p.stderr!r}")
# The simulator itself running out of memory mid-run (std::bad_alloc, or SystemC unable to
# allocate a thread's stack): one plain line on stderr saying so, exit 1, no SystemC report, both
# outputs written with the failure. Address-space limits from 40 to 130 MB: each run finishes, is
# refused up front (exit 2, the estimate above), or fails that way (below the dynamic loader's own
# need, exit 127, is not ours), and at least one fails that way.
ran_out = 0
for mb in (40, 55, 70, 85, 100, 130):
    o = os.path.join(work, f"oom_{mb}")
    p = subprocess.run([binary, "perf", "write_bw", "-s", "65536", "-n", "100", "--out", o, "--quiet"],
                       capture_output=True, text=True, preexec_fn=limited(mb << 10))
    if p.returncode in (0, 127) or (p.returncode == 2 and "key 'size'" in p.stderr):
        continue
    ran_out += 1
    check(p.returncode == 1 and p.stderr.strip().count("\n") == 0 and "ran out of memory" in p.stderr
          and "Error:" not in p.stderr and "In file" not in p.stderr,
          f"ulimit -v {mb} MB: exit {p.returncode}, stderr {p.stderr!r}")
    for f in ("results.json", "stats.json"):
        path = os.path.join(o, f)
        check(os.path.exists(path) and load(path).get("stopped", {}).get("exit") == 1,
              f"ulimit -v {mb} MB: {f} does not record the failure")
check(ran_out > 0, "no address-space limit from 40 to 130 MB made the simulator run out of memory")
# A sampling interval far too short for the run is bounded, with a message.
o = os.path.join(work, "stats_bound")
p = rnicsim(binary, "perf", "write_bw", "-s", "65536", "-n", "200", "--set", "sim.stats_interval_ns=10",
            "--out", o, "--quiet")
check("time series stop after" in p.stderr, f"stats_interval_ns=10: {p.stderr!r}")
check(os.path.getsize(os.path.join(o, "stats.json")) < 50 << 20, "stats_interval_ns=10: stats.json over 50 MB")
check(load(os.path.join(o, "stats.json")).get("time_series_truncated") is True,
      "stats_interval_ns=10: stats.json does not say its time series were cut")
# pcie_dma runs the PCIe configuration a --preset or --set chooses instead of its sweep.
o = os.path.join(work, "pcie_dma_preset")
rnicsim(binary, "perf", "pcie_dma", "-s", "65536", "--preset", "rnic-100g", "--set", "pcie.mps=256",
        "--out", o, "--quiet")
rows = load(os.path.join(o, "results.json"))["rows"]
check(rows and {(r["gen"], r["lanes"], r["mps"]) for r in rows} == {(4, 16, 256)},
      f"perf pcie_dma --preset rnic-100g --set pcie.mps=256 ran {[(r['gen'], r['lanes'], r['mps']) for r in rows]}")
# A workload the card cannot serve (its QPs deeper than the server's SQ) fails with exit 1 and
# says why, instead of leaving its client waiting for the watchdog.
fail_yaml = scenario("fails.yaml", TOPO.replace("{name: b}", "{name: b, set: {core.max_qp_wr: 16}}")
                     + "workloads:\n  - {test: send_bw, from: a, to: b, size: 4096, iters: 100, tx_depth: 64}\n")
p = rnicsim(binary, "run", fail_yaml, "--out", os.path.join(work, "fails"), "--quiet", expect=1)
check("workload send_bw_0 (send_bw): ibv_create_qp failed" in p.stderr, f"failed workload: {p.stderr!r}")
finish("bad_input")
