#!/usr/bin/python3
"""A run over several processes (mpirun; docs/performance.md, "Runs over several processes") gives
what one process gives: a 4-host leaf/spine scale run (two leaves, one per rank, the spine with one
of them) on 2 ranks against the same run in one process, lossless, with 0.1% loss on every link,
with a spine that forwards between two links to the other rank (frames handed over late),
and with hosts pinned across the leaves (each rank builds only its own hosts, switches and links,
and rank 0 puts the statistics groups in one process's order), and with keepalive probes (timers
that do not keep the run going), also with every time series sampled each microsecond (side tasks
at their own times), results.json (wall-clock fields aside), stats.json's statistics in the same
order, the simulated time and every link's capture (--pcap) identical; the partition line names 2
ranks. The demo's workloads (traffic generators between two hosts, one a rank) give the same
outputs as in one process too, and so do an incast (one switch's hosts split over the ranks),
loss_goodput and efe_vs_tcp. scripts/slurm-scale.sbatch gives the same under a stand-in srun
(mpirun). A channel failing on rank 1 stops both, and rank 0 reports it. Programs of the user's
(rc_pingpong, kv_put_get: shared objects that exchange their details on the out-of-band board) give
what one process gives; one that faults on rank 1 is reported by rank 0 as one process reports it.
Workloads limited by time (write_bw, read_lat, write_lat, send_lat, send_bw, its 1-byte Sends
too) give what one process gives, and so do executables whose TCP socket (ibv_rc_pingpong) or rdma_cm connection (rping)
crosses the ranks. The watchdog stops a program that idles for ever on 2 ranks too. A waveform
(--trace fst, also of crc32's RTL) merged by rank 0 holds one process's value changes. Refused under
mpirun with exit 2: a pin to no such host.

usage: ranks.py RNICSIM OUT_BASE"""
import json
import os
import shutil
import subprocess
import sys

from common import ROOT, check, fail, finish, load, out_dir, rnicsim, strip_wall, write_file

binary, base = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
base = out_dir(base, "ranks")
MPIRUN = shutil.which("mpirun")
MACHINE = ("setup_s", "peak_rss_mib")
SCENARIO = write_file(base, "scale4.yaml", """name: scale4
preset: rnic-10g
set:
  switch.ecn_bytes: 32768
experiment:
  kind: scale
  hosts: 4
  hosts_per_leaf: 2
  spines: 1
  peers: 1
  size: 65536
  duration_us: 400
""")


def mpirun(n, *args, cwd=None):
    return subprocess.run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", str(n), binary,
                           *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def outputs(o):
    st = load(os.path.join(o, "stats.json"))
    return (strip_wall(load(os.path.join(o, "results.json")), MACHINE),
            strip_wall(st["stats"], MACHINE), st["sim_time_ns"])


def timeline(out, on):
    """--timeline into the run's own folder (compared as timeline.json), or nothing."""
    return ["--timeline", os.path.join(out, "timeline.json")] if on else []


def same_outputs(name, one, two, files=()):
    """Checks that the run in `two` (over ranks) wrote what the one in `one` (one process) wrote:
    results.json, stats.json's statistics in the same order, the simulated time and each of
    `files` (paths under both) byte for byte. Returns both runs' outputs."""
    a, b = outputs(one), outputs(two)
    check(a[0] == b[0], f"{name}: results.json differs: {a[0].get('rows')} vs {b[0].get('rows')}")
    check(list(a[1]) == list(b[1]), f"{name}: stats.json lists its groups in another order")
    diff = sorted(g for g in set(a[1]) | set(b[1]) if a[1].get(g) != b[1].get(g))
    check(not diff, f"{name}: {len(diff)} statistics groups differ, e.g. {diff[:5]}")
    check(a[2] == b[2], f"{name}: sim_time_ns {a[2]} vs {b[2]}")
    for f in files:
        with open(os.path.join(one, f), "rb") as f1, open(os.path.join(two, f), "rb") as f2:
            check(f1.read() == f2.read(), f"{name}: {f} differs")
    return a, b


if not MPIRUN:
    fail("mpirun not found: ./scripts/setup installs openmpi-bin")
    finish("ranks")

# "split": hosts pinned across the leaves (h0 and h3 on rank 1), so each rank builds hosts of
# both leaves and rank 0 interleaves the ranks' statistics groups.
# "keepalive": probes every 2 us of an idle channel, timers that do not keep the run going, which
# the ranks agree on with the next event. "sampled": the same with every statistic's time series
# sampled each microsecond (a side task each rank runs at its time, before that time's events).
for name, extra, pins in (("lossless", [], []), ("loss", ["--set", "link.loss=0.001"], []),
                          ("split", [], ["--partition", "h0=1,h1=0,h2=0,h3=1"]),
                          ("keepalive", ["--set", "efe.keepalive_ns=2000"],
                           ["--partition", "h0=1,h1=0,h2=0,h3=1"]),
                          ("sampled", ["--set", "efe.keepalive_ns=2000", "--set",
                                       "sim.stats_interval_ns=1000"],
                           ["--partition", "h0=1,h1=0,h2=0,h3=1"])):
    one, two = out_dir(base, name + "_1"), out_dir(base, name + "_2")
    # ("split" with the request timeline too: rank 0 takes every rank's probe records.)
    tl = name == "split"
    rnicsim(binary, "run", SCENARIO, "--out", one, "--quiet", "--pcap", *extra, *timeline(one, tl))
    p = mpirun(2, "run", SCENARIO, "--out", two, "--quiet", "--pcap", *extra, *pins,
               *timeline(two, tl))
    if not check(p.returncode == 0, f"{name}: mpirun -n 2: exit {p.returncode}\n{p.stdout}{p.stderr}"):
        continue
    check("2 ranks, hosts 2/2" in p.stderr, f"{name}: no partition line for 2 ranks:\n{p.stderr}")
    caps = sorted(f for f in os.listdir(one) if f.endswith(".pcap"))
    check(len(caps) == 6 and caps == sorted(f for f in os.listdir(two) if f.endswith(".pcap")),
          f"{name}: captures {caps} vs {os.listdir(two)}")
    a, b = same_outputs(name, one, two, caps + (["timeline.json"] if tl else []))
    if tl:
        spans = [e for e in load(os.path.join(two, "timeline.json"))["traceEvents"]
                 if e["ph"] == "X"]
        hosts = {e["args"]["host"] for e in spans}
        check({"frame", "placement DMA", "poll"} <= {e["name"] for e in spans} and len(hosts) == 4,
              f"split: the timeline has {len(spans)} spans of hosts {sorted(hosts)}")
    check(not any(f.startswith(".rank") for f in os.listdir(two)), f"{name}: ranks' records left")
    if name == "loss":
        lost = sum(g.get("lost_random", {}).get("value", 0) for g in b[1].values())
        check(lost > 0, "loss: the links lost nothing")
    if name in ("keepalive", "sampled"):
        probes = sum(g.get("keepalives", {}).get("value", 0) for g in b[1].values())
        check(probes > 0, f"{name}: no probe went")
    if name == "sampled":
        points = sum(len(v.get("t_ns", [])) for g in b[1].values() for v in g.values()
                     if isinstance(v, dict))
        check(points > 0, "sampled: no time series point")

# A switch between two links to the other rank (one spine, four leaves of one host, the spine with
# two of them): what it takes from one, handed over as late as its latency after the last bit
# (the crossing links' lookahead holds it: 5 ns, the shortest frame and the leaves' and spine's
# 300 ns), it forwards over the other, and every frame between the two leaves of the rank
# without the spine crosses twice. The outputs and captures are one process's.
fwd = write_file(base, "forward.yaml", open(SCENARIO).read().replace(
    "hosts_per_leaf: 2", "hosts_per_leaf: 1").replace("peers: 1", "peers: 3"))
one, two = out_dir(base, "forward_1"), out_dir(base, "forward_2")
rnicsim(binary, "run", fwd, "--out", one, "--quiet", "--pcap")
p = mpirun(2, "run", fwd, "--out", two, "--quiet", "--pcap")
if check(p.returncode == 0, f"forward: mpirun -n 2: exit {p.returncode}\n{p.stderr}"):
    check("2 links between ranks, lookahead 362.600 ns" in p.stderr,
          f"forward: not two crossing links held for the switches' latency:\n{p.stderr}")
    caps = sorted(f for f in os.listdir(one) if f.endswith(".pcap"))
    check(len(caps) == 8, f"forward: captures {caps}")
    same_outputs("forward", one, two, caps)

# A waveform over ranks (--trace fst; with --rtl crc32, whose checker takes a frame's beats from
# its first bit, so the crossing links' lookahead is their propagation delay): rank 0 merges the
# ranks' files into one whose value changes (fst_at ... changes: every change, in time order, at
# one time in the file's order) and GTKWave save file are one process's, line for line, the hosts
# split across the leaves. Each host's process has one process's id, so its buffers land on the
# same physical pages and the DMA addresses in the file are the same.
FST_AT = os.path.join(os.path.dirname(binary), "testbench", "tools", "fst_at")
short = write_file(base, "scale4_short.yaml", open(SCENARIO).read().replace(
    "duration_us: 400", "duration_us: 100"))
for name, extra in (("trace", []), ("trace_rtl", ["--rtl", "crc32"])):
    one, two = out_dir(base, name + "_1"), out_dir(base, name + "_2")
    rnicsim(binary, "run", short, "--out", one, "--quiet", "--trace", "fst", *extra)
    p = mpirun(2, "run", short, "--out", two, "--quiet", "--trace", "fst", *extra, "--partition",
               "h0=1,h1=0,h2=0,h3=1")
    if not check(p.returncode == 0, f"{name}: mpirun -n 2: exit {p.returncode}\n{p.stderr}"):
        continue
    if extra:
        check("lookahead 5.000 ns" in p.stderr, f"{name}: the lookahead is not the links' 5 ns:\n"
              f"{p.stderr}")
    same_outputs(name, one, two, ["trace.gtkw"])
    changes = [subprocess.run([FST_AT, os.path.join(o, "trace.fst"), "changes"], capture_output=True,
                              text=True) for o in (one, two)]
    a, b = (c.stdout.splitlines() for c in changes)
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    check(changes[1].returncode == 0 and len(a) == len(b) > 100000 and not diff,
          f"{name}: the merged waveform's changes differ from one process's: {len(a)} against "
          f"{len(b)} lines, first {diff[:2]}")
    check(any("card_dmac.pins.tx_addr" in l for l in a) and
          (not extra or any(".mac.fcs_check.rtl." in l for l in a)),
          f"{name}: the waveform lacks the DMA addresses or the RTL's signals")
    check(not any(f.startswith(".rank") for f in os.listdir(two)), f"{name}: ranks' files left")

# The Slurm batch script, with a stand-in `srun` (no Slurm here: it starts the ranks through
# mpirun, SLURM_NTASKS of them) from a folder whose build/rnicsim is this binary: the script's
# command and arguments give the one-process outputs.
job = out_dir(base, "slurm_job")
os.makedirs(os.path.join(job, "build"), exist_ok=True)
os.makedirs(os.path.join(job, "bin"), exist_ok=True)
link = os.path.join(job, "build", "rnicsim")
if not os.path.lexists(link):
    os.symlink(binary, link)
srun = os.path.join(job, "bin", "srun")
write_file(os.path.join(job, "bin"), "srun", """#!/bin/bash
# stand-in for Slurm's srun: the job's tasks as mpirun ranks (--mpi=... dropped)
[[ "$1" == --mpi=* ]] && shift
exec "%s" --allow-run-as-root --oversubscribe -n "${SLURM_NTASKS:-1}" "$@"
""" % MPIRUN)
os.chmod(srun, 0o755)
script = os.path.join(ROOT, "scripts", "slurm-scale.sbatch")
o = os.path.join(job, "out")
env = dict(os.environ, PATH=os.path.join(job, "bin") + os.pathsep + os.environ["PATH"],
           SLURM_NTASKS="2", SLURM_JOB_ID="7")
p = subprocess.run(["bash", script, SCENARIO, o], cwd=job, env=env, capture_output=True, text=True,
                   timeout=600)
if check(p.returncode == 0, f"slurm script: exit {p.returncode}\n{p.stdout}{p.stderr}"):
    check("2 ranks, hosts 2/2" in p.stderr, f"slurm script: no partition line:\n{p.stderr}")
    same_outputs("slurm script", out_dir(base, "lossless_1"), o)

# A program that fails on rank 1 (h0's channel gives up at 0.2% loss with a 20 us retry budget,
# as in one process) stops both ranks; rank 0 says so and writes the outputs with the failure.
o = out_dir(base, "fail")
p = mpirun(2, "run", SCENARIO, "--out", o, "--quiet", "--set", "link.loss=0.002", "--set",
           "efe.retry_budget_ns=20000", "--partition", "h0=1,leaf0=1")
check(p.returncode == 1 and "rank 1 stopped" in p.stderr and "retry" in p.stderr,
      f"a failure on rank 1: exit {p.returncode}\n{p.stderr}")
check(load(os.path.join(o, "results.json")).get("stopped", {}).get("exit") == 1,
      "a failure on rank 1: results.json does not record it")
p = mpirun(2, "run", os.path.join(os.path.dirname(SCENARIO), "scale4.yaml"), "--out",
           out_dir(base, "pin"), "--partition", "nobody=1", "--quiet")
check(p.returncode == 2 and "no host or switch is called nobody" in p.stderr,
      f"a pin to no such host: exit {p.returncode}\n{p.stderr}")

# The traffic generators' workloads: the demo's three (write_bw, read_lat and send_bw over a size
# sweep between two hosts on one link, a host a rank), with its time series and capture, give
# what one process gives.
demo = os.path.join(ROOT, "scenarios", "demo.yaml")
one, two = out_dir(base, "demo_1"), out_dir(base, "demo_2")
rnicsim(binary, "run", demo, "--out", one, "--quiet")
p = mpirun(2, "run", demo, "--out", two, "--quiet")  # a host a rank by default
if check(p.returncode == 0, f"demo: mpirun -n 2: exit {p.returncode}\n{p.stdout}{p.stderr}"):
    check("2 ranks, hosts 1/1" in p.stderr, f"demo: no partition line for 2 ranks:\n{p.stderr}")
    a, b = same_outputs("demo", one, two, ["l0.pcap"])
    check(len(a[0]["rows"]) == 9, f"demo: {len(a[0]['rows'])} rows, not 9")
# Programs of the user's (shared objects, a host a rank), whose connection details go over the
# out-of-band board between the ranks, give what one process gives: rc_pingpong, kv_put_get and
# write_c. (Their buffers are aligned to 2 MiB: where the heap puts a buffer differs between
# processes, and one across a 2 MiB boundary takes a page-walk read more; docs/verbs.md.)
for name in ("rc_pingpong", "kv_put_get", "write_c"):
    scenario = os.path.join(ROOT, "scenarios", "examples", name + ".yaml")
    one, two = out_dir(base, name + "_1"), out_dir(base, name + "_2")
    rnicsim(binary, "run", scenario, "--out", one, "--quiet", cwd=ROOT)  # (the program's path is
    p = mpirun(2, "run", scenario, "--out", two, "--quiet", cwd=ROOT)  # from there)
    if check(p.returncode == 0, f"{name}: mpirun -n 2: exit {p.returncode}\n{p.stdout}{p.stderr}"):
        check("2 ranks, hosts 1/1" in p.stderr, f"{name}: no partition line:\n{p.stderr}")
        a, b = same_outputs(name, one, two)
        check(all(h["exit"] == 0 for h in b[0]["workloads"][0]["hosts"]),
              f"{name}: a program failed: {b[0]['workloads']}")
# A program that faults on rank 1: rank 0 reports it as one process does, and the program on
# rank 0 that waits for it is named with where it waits.
fault = os.path.join(ROOT, "scenarios", "examples", "program_fault.yaml")
one, two = out_dir(base, "fault_1"), out_dir(base, "fault_2")
p1 = rnicsim(binary, "run", fault, "--out", one, "--quiet", cwd=ROOT, expect=1)
p = mpirun(2, "run", fault, "--out", two, "--quiet", "--partition", "node0=1,node1=0", cwd=ROOT)
line = "on node0: killed by SIGSEGV"
check(p1.returncode == 1 and p.returncode == 1 and line in p.stderr,
      f"a program faulting on rank 1: exit {p1.returncode} / {p.returncode}\n{p.stderr}")
check(outputs(one)[0] == outputs(two)[0], "a program faulting on rank 1: results.json differs")
# An incast (4 and 8 senders through one switch, three modes, each point its own run): the
# default split puts the switch's hosts on both ranks in turn; the rows and statistics are one
# process's.
incast = write_file(base, "incast.yaml", """name: incast
preset: rnic-10g
set: {switch.port_buffer_bytes: 262144, switch.ecn_bytes: 32768, switch.pause_xoff_bytes: 2048,
      switch.pause_xon_bytes: 1024}
experiment: {kind: incast, senders: [4, 8], modes: [efe_cc, pause, efe_hpcc], warmup_us: 100,
             measure_us: 400, join_us: 200, leave_us: 350, window_us: 100}
""")
one, two = out_dir(base, "incast_1"), out_dir(base, "incast_2")
rnicsim(binary, "run", incast, "--out", one, "--quiet")
p = mpirun(2, "run", incast, "--out", two, "--quiet")
if check(p.returncode == 0, f"incast: mpirun -n 2: exit {p.returncode}\n{p.stderr}"):
    check("2 ranks, hosts 5/4" in p.stderr, f"incast: not split 5/4:\n{p.stderr}")
    a, b = same_outputs("incast", one, two)
    check(len(a[0]["rows"]) == 6 and all(r["receiver_goodput_gbps"] > 5 for r in a[0]["rows"]),
          f"incast: rows {a[0]['rows']}")
# loss_goodput (a host a rank, the lossy link between them) and efe_vs_tcp (each transport's
# island on a rank of its own, nothing crossing but the management network): one process's rows,
# statistics and simulated time.
for name, text in (("loss_goodput", """name: lg
preset: rnic-10g
experiment: {kind: loss_goodput, loss_ppm: [0, 10000], iters: 50}
"""), ("efe_vs_tcp", """name: ev
preset: rnic-10g
set: {switch.port_buffer_bytes: 262144, switch.ecn_bytes: 32768}
experiment: {kind: efe_vs_tcp, transports: [efe, mpa_tcp], size: 65536, iters: 30,
             loss_ppm: [0, 10000], senders: [4], efe_modes: [efe_cc], tcp_modes: [dctcp],
             warmup_us: 100, measure_us: 300, join_us: 150, leave_us: 250, window_us: 100}
""")):
    scenario = write_file(base, name + ".yaml", text)
    one, two = out_dir(base, name + "_1"), out_dir(base, name + "_2")
    rnicsim(binary, "run", scenario, "--out", one, "--quiet")
    p = mpirun(2, "run", scenario, "--out", two, "--quiet")
    if check(p.returncode == 0, f"{name}: mpirun -n 2: exit {p.returncode}\n{p.stderr}"):
        a, b = same_outputs(name, one, two)
        check(len(a[0]["rows"]) >= 4, f"{name}: rows {a[0]['rows']}")
# The watchdog over several processes: a program that spends simulated time for ever while
# nothing moves (misbehave idle) is stopped by sim.watchdog_us, as in one process (where it stops
# at 200 us; the ranks look at the agreed next event, here the microsecond before).
idle = write_file(base, "idle.yaml", """name: idle
set: {sim.watchdog_us: 200}
workloads:
  - {name: idling, program: build/testbench/hostile/misbehave.so, hosts: [node0, node1],
     args: [[idle], [ok]]}
""")
p = mpirun(2, "run", idle, "--out", out_dir(base, "idle"), "--quiet", cwd=ROOT)
check(p.returncode == 1 and "on node0: still waiting at 199.000 us" in p.stderr,
      f"a program idling for ever under mpirun: exit {p.returncode}\n{p.stderr}")
# Workloads limited by time give what one process gives: write_bw and read_lat (whose server takes
# no part), write_lat and send_lat (their client's last message carries a mark, which is how the
# server learns it was the last) and send_bw over 2 QPs and several sizes (its last Send on a QP
# carries the QP's count). (1-byte Sends: below.)
timed = write_file(base, "timed.yaml", """name: timed
topology:
  hosts: [{name: h0}, {name: h1}, {name: h2}, {name: h3}]
  links: [{name: l0, between: [h0, h1]}, {name: l1, between: [h2, h3]}]
workloads:
  - {name: w, test: write_bw, from: h0, to: h1, size: 4096, duration_us: 100}
  - {name: r, test: read_lat, from: h1, to: h0, size: 64, duration_us: 50, start_us: 20}
  - {name: wl, test: write_lat, from: h2, to: h3, sizes: [2, 4096], duration_us: 30}
  - {name: sl, test: send_lat, from: h2, to: h3, sizes: [1, 64], duration_us: 30, start_us: 200}
  - {name: sb, test: send_bw, from: h0, to: h1, sizes: [2, 4096], qps: 2, duration_us: 100,
     start_us: 300}
""")
# With the latency workloads taken apart (--breakdown; each side's probes on its own rank).
one, two = out_dir(base, "timed_1"), out_dir(base, "timed_2")
rnicsim(binary, "run", timed, "--out", one, "--quiet", "--pcap", "--breakdown")
p = mpirun(2, "run", timed, "--out", two, "--quiet", "--pcap", "--breakdown", "--partition",
           "h0=0,h1=1,h2=0,h3=1")
if check(p.returncode == 0, f"workloads limited by time: exit {p.returncode}\n{p.stderr}"):
    a, b = same_outputs("workloads limited by time", one, two,
                        ["l0.pcap", "l1.pcap", "breakdown.json"])
    rows = a[0]["rows"]
    check(len(rows) == 8 and all(r["iterations"] < 1000 for r in rows),
          f"workloads limited by time: rows {rows}")
    parts = load(os.path.join(two, "breakdown.json"))["workloads"]
    check([w["workload"] for w in parts] == ["r", "wl", "sl"] and
          all(p.get("stages") for w in parts for p in w["points"]),
          f"workloads limited by time: breakdown {json.dumps(parts)[:400]}")
# send_bw limited by time with 1-byte Sends (no room for a mark of the count: the client's rank
# sends the server's its total when the time is up), one QP and two, each way between the ranks.
send = write_file(base, "timed_send.yaml", """name: timed_send
topology:
  hosts: [{name: h0}, {name: h1}]
  links: [{name: l0, between: [h0, h1]}]
workloads:
  - {name: s, test: send_bw, from: h0, to: h1, sizes: [1, 64], duration_us: 100}
  - {name: s2, test: send_bw, from: h1, to: h0, sizes: [1], qps: 2, duration_us: 60,
     start_us: 150}
""")
one, two = out_dir(base, "timed_send_1"), out_dir(base, "timed_send_2")
rnicsim(binary, "run", send, "--out", one, "--quiet", "--pcap")
p = mpirun(2, "run", send, "--out", two, "--quiet", "--pcap")
if check(p.returncode == 0, f"1-byte send_bw limited by time: exit {p.returncode}\n{p.stderr}"):
    a, b = same_outputs("1-byte send_bw limited by time", one, two, ["l0.pcap"])
    rows = [(r["workload"], r["bytes"]) for r in a[0]["rows"]]
    check(rows == [("s", 1), ("s", 64), ("s2", 1)] and
          all(0 < r["iterations"] < 5000 for r in a[0]["rows"]),
          f"1-byte send_bw limited by time: rows {a[0]['rows']}")
# Executables, a host a rank: Debian's ibv_rc_pingpong exchanges its QP details over a TCP socket
# of the management network between the ranks, rping connects through rdma_cm between them: the
# same outputs as one process, the programs' own output files too (and rping's request timeline,
# from the verbs library's probes in each process).
for name, out, whole in (("ibv_rc_pingpong", "pingpong.out", "1000 iters"),
                         ("rping", "rping.out", "ping data")):
    scenario = os.path.join(ROOT, "scenarios", "examples", name + ".yaml")
    one, two = out_dir(base, name + "_1"), out_dir(base, name + "_2")
    tl = name == "rping"
    rnicsim(binary, "run", scenario, "--out", one, "--quiet", *timeline(one, tl), cwd=ROOT)
    p = mpirun(2, "run", scenario, "--out", two, "--quiet", *timeline(two, tl), cwd=ROOT)
    if check(p.returncode == 0, f"{name}: mpirun -n 2: exit {p.returncode}\n{p.stderr}"):
        outs = [os.path.join(host, out) for host in ("node0", "node1")]
        same_outputs(name, one, two, outs + (["timeline.json"] if tl else []))
        texts = [open(os.path.join(one, f)).read() for f in outs]
        check(any(whole in t for t in texts), f"{name}: no whole run in its output: {texts}")

# UDP datagrams between hosts on two ranks (exec_verbs udp-server/udp-client): the same outputs
# and program output files as one process.
prog = os.path.join(os.path.dirname(binary), "testbench", "system", "exec_verbs")
udp = out_dir(base, "udp_scenario")
scenario = write_file(udp, "udp.yaml",
                      f"workloads:\n  - name: ud\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
                      "    args: [[udp-server], [udp-client, node1]]\n")
one, two = out_dir(base, "udp_1"), out_dir(base, "udp_2")
rnicsim(binary, "run", scenario, "--out", one, "--quiet")
p = mpirun(2, "run", scenario, "--out", two, "--quiet", "--partition", "node0=0,node1=1")
if check(p.returncode == 0, f"udp: mpirun -n 2: exit {p.returncode}\n{p.stderr}"):
    same_outputs("udp", one, two, [os.path.join(h, "ud.out") for h in ("node0", "node1")])
    with open(os.path.join(two, "node0", "ud.out")) as f:
        said = f.read()
    check("pong 4 'pong'" in said, f"udp: {said!r}")
finish("ranks")
