#!/usr/bin/python3
"""The request timeline and the latency breakdown (docs/debugging.md, "Timeline";
docs/performance.md, "Breakdown"):
- `perf write_lat -s 2 -n 50 --timeline t.json` writes Chrome trace-event JSON with every stage of
  every WR in both directions, each WR's stages chained in time (each starts where the one before
  it ended) and joined by one flow (s, t..., f) whose points sit on the spans' starts, queue-depth
  counters, and the same results.json as without it; a window keeps only the spans it overlaps;
- `perf write_lat|send_lat|read_lat --breakdown` writes OUT/breakdown.json whose stages add up to
  each sample exactly (their mean is the workload's t_avg) and prints the table;
- a window that ends before it starts, a window without a timeline and a breakdown of a run with
  no latency workload are refused (exit 2)."""
import collections
import os
import sys

from common import check, finish, load, out_dir, rnicsim, strip_wall

binary, work = sys.argv[1], out_dir(sys.argv[2], "timeline")

# write_lat's WR, in the order its stages happen; each begins where the one before it ended.
CHAIN = ["post", "doorbell", "WQE fetch", "SQ issue", "translation", "payload DMA", "to EFE",
         "EFE + MAC tx", "frame", "MAC + EFE rx", "RX checks", "placement xlat", "placement DMA",
         "poll"]

o0 = os.path.join(work, "plain")
rnicsim(binary, "perf", "write_lat", "-s", "2", "-n", "50", "--out", o0, "--quiet")
o1 = os.path.join(work, "traced")
tl = os.path.join(work, "t.json")
p = rnicsim(binary, "perf", "write_lat", "-s", "2", "-n", "50", "--timeline", tl, "--out", o1)
check(f"wrote {tl} (100 work requests" in p.stdout, f"summary: {p.stdout}")
check(strip_wall(load(os.path.join(o1, "results.json"))) ==
      strip_wall(load(os.path.join(o0, "results.json"))), "results.json differs with --timeline")

doc = load(tl)
events = doc["traceEvents"]
kinds = collections.Counter(e["ph"] for e in events)
check(set(kinds) <= {"M", "X", "s", "t", "f", "C"}, f"event kinds: {kinds}")
names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events if e["ph"] == "M"}
procs = sorted(n for (pid, tid), n in names.items() if tid is None)
check(procs == ["link eth0", "node0", "node1"], f"processes: {procs}")
spans = [e for e in events if e["ph"] == "X"]
check(len(spans) >= 1000, f"{len(spans)} spans, expected about 1,000")
for e in spans:
    if not check(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and (e["pid"], e["tid"]) in names,
                 f"a malformed span: {e}"):
        break
by_wr = collections.defaultdict(list)
for e in spans:
    by_wr[(e["args"]["host"], e["args"]["qp"], e["args"]["wqe"])].append(e)
check(len(by_wr) == 100, f"{len(by_wr)} WRs, expected 50 each way")
check(collections.Counter(h for h, _, _ in by_wr) == {"node0": 50, "node1": 50},
      f"WRs per host: {collections.Counter(h for h, _, _ in by_wr)}")
flows = collections.defaultdict(list)
for e in events:
    if e["ph"] in "stf":
        flows[e["id"]].append(e)
check(len(flows) == 100, f"{len(flows)} flows, expected one per WR")
starts = {(e["pid"], e["tid"], e["ts"]) for e in spans}
bad = 0
for key, ss in by_wr.items():
    stage = {}
    for e in ss:
        stage.setdefault(e["name"], e)  # the first "poll" is the peer's (it ends the chain)
    polls = sorted((e for e in ss if e["name"] == "poll"), key=lambda e: e["ts"])
    missing = [n for n in CHAIN + ["CQE write"] if n not in stage]
    if missing:
        bad += 1
        if bad < 4:
            fail_msg = f"WR {key}: no span for {missing}"
            check(False, fail_msg)
        continue
    # The peer's poll of the written byte is the one on the other host.
    peer_poll = [e for e in polls if e["pid"] != stage["post"]["pid"]]
    chain = [stage[n] for n in CHAIN[:-1]] + peer_poll[:1]
    for a, b in zip(chain, chain[1:]):
        if abs(a["ts"] + a["dur"] - b["ts"]) > 1e-6:
            bad += 1
            if bad < 4:
                check(False, f"WR {key}: {a['name']} ends at {a['ts'] + a['dur']} but {b['name']} "
                      f"starts at {b['ts']}")
check(bad == 0, f"{bad} WRs whose stages do not chain")
for fid, fl in flows.items():
    phs = "".join(e["ph"] for e in fl)
    ts = [e["ts"] for e in fl]
    if not (check(phs[0] == "s" and phs[-1] == "f" and set(phs[1:-1]) <= {"t"},
                  f"flow {fid}: {phs}") and
            check(ts == sorted(ts), f"flow {fid} goes back in time: {ts}") and
            check(all((e["pid"], e["tid"], e["ts"]) in starts for e in fl),
                  f"flow {fid}: a point on no span's start")):
        break
check(kinds["s"] == 100 and kinds["f"] == 100 and kinds["t"] >= 900, f"flow events: {kinds}")
counters = {e["name"] for e in events if e["ph"] == "C"}
check(len(counters) == 2, f"counters: {counters}")

# A window keeps the spans that overlap it.
tw = os.path.join(work, "w.json")
rnicsim(binary, "perf", "write_lat", "-s", "2", "-n", "50", "--timeline", tw, "--timeline-window",
        "40000:42000", "--out", os.path.join(work, "win"), "--quiet")
ws = [e for e in load(tw)["traceEvents"] if e["ph"] == "X"]
check(0 < len(ws) < len(spans) / 4, f"window: {len(ws)} spans of {len(spans)}")
check(all(e["ts"] <= 42.0 + 1e-9 and e["ts"] + e["dur"] >= 40.0 - 1e-9 for e in ws),
      "a span outside the window")

# Breakdowns add up to the sample.
for test, size in [("write_lat", "2"), ("send_lat", "64"), ("read_lat", "64")]:
    o = os.path.join(work, f"bd_{test}")
    p = rnicsim(binary, "perf", test, "-s", size, "-n", "30", "--breakdown", "--out", o)
    check(f"breakdown of {test} {size} B, mean of 30 iterations" in p.stdout, f"{test}: {p.stdout}")
    bd = load(os.path.join(o, "breakdown.json"))["workloads"][0]["points"][0]
    check(bd["iterations"] == 30 and "iterations_not_traced" not in bd, f"{test}: {bd}")
    total = sum(s.get("forward_ns", 0) + s.get("back_ns", 0) for s in bd["stages"])
    want = bd["sample_ns"] * (2 if test != "read_lat" else 1) - bd.get("turnaround_ns", 0)
    check(abs(total - want) < 1e-6, f"{test}: the stages add up to {total}, the sample to {want}")
    check(abs(bd["sample_ns"] - bd["t_avg_us"] * 1000) < 1e-6,
          f"{test}: mean sample {bd['sample_ns']} ns, t_avg {bd['t_avg_us']} us")
    check(len(bd["stages"]) >= 14 and all(s.get("forward_ns", 0) >= 0 for s in bd["stages"]),
          f"{test}: stages {bd['stages']}")

# Refused.
p = rnicsim(binary, "perf", "write_lat", "-n", "5", "--timeline", tl, "--timeline-window", "5:1",
            "--out", os.path.join(work, "bad1"), expect=2)
check("timeline_window" in p.stderr and "ends before it starts" in p.stderr, p.stderr)
p = rnicsim(binary, "perf", "write_lat", "-n", "5", "--timeline-window", "0:10",
            "--out", os.path.join(work, "bad2"), expect=2)
check("without --timeline" in p.stderr, p.stderr)
p = rnicsim(binary, "perf", "write_bw", "-n", "5", "--breakdown", "--out", os.path.join(work, "bad3"),
            expect=2)
check("takes latency workloads apart" in p.stderr, p.stderr)
finish("timeline")
