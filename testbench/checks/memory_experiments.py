#!/usr/bin/python3
"""The memory experiments (CI form: scatter-gather handles, physical regions, the registration
cache, callbacks, on-demand paging). phys_scan as shipped: the preset's
map, readable below 3 GiB and above 4 GiB to the top (16 GiB), the device-reserved window
between not, as three merged rows. reg_cache as shipped: with the cache on, every buffer of the
pool misses once and hits after (968 of 1000), nothing is evicted (64 entries > 32 buffers) and
each round is faster than with the cache off. sg_transfer as shipped: every point, near line
rate with the registration excluded, and one handle faster than 32 MRs with it included.
callbacks as shipped: a callback costs the same host CPU at 64 B and 64 KiB (woken once per
completion) and less than polling at 64 KiB, while it adds latency (the interrupt and the
wake-up). sg_registration as shipped: every
point of 1-32 regions of 1, 2 and 4 KiB in both modes, every registration and deregistration
succeeding (the run's exit code); one handle of N regions registers in less time than N MRs for
N >= 2, and its time grows with N (pinning and walking each region's page); the time of one
region is the same in both modes within the firmware's per-entry cost; the kernel rows (kernel
memory locked as one handle, or registered one buffer per call at about 8 us a call) are flat
in N for the handle (32 regions within 1.5x of one) and grow with N per buffer; scripts/plot
draws it.
storage as shipped: data checked, stages adding up, registration per strategy as the paper's.
odp as shipped: pinned, prefetched and warm memory fault nothing and cost the same; memory the
card touches first faults (RNR at least once) and costs more, zeroing on top at 64 KiB; a QP to
the faulting peer waits behind the fault, a QP to another peer does not."""
import sys

from common import check, finish, plot, run_experiment

binary, base = sys.argv[1], sys.argv[2]
o, res = run_experiment(binary, base, "sg_registration")
rows = {(r["regions"], r["region_bytes"], r["mode"]): r for r in res["rows"]}
counts, sizes = [1, 2, 4, 8, 16, 32], [1024, 2048, 4096]
check(sorted(rows) == sorted((n, b, m) for n in counts for b in sizes
                             for m in ("sg", "per_region", "kernel_sg", "kernel_per_region")),
      f"points {sorted(rows)}")
for b in sizes:
    sg = [rows[(n, b, "sg")]["register_ns"] for n in counts]
    per = [rows[(n, b, "per_region")]["register_ns"] for n in counts]
    check(all(x > 0 for x in sg + per), f"{b} B: a time of 0")
    check(all(s < p for s, p in zip(sg[1:], per[1:])),
          f"{b} B: one handle is not cheaper than N MRs: sg {sg}, per_region {per}")
    check(all(a < c for a, c in zip(sg, sg[1:])), f"{b} B: sg time does not grow with N: {sg}")
    check(abs(sg[0] - per[0]) <= 100, f"{b} B, one region: sg {sg[0]} ns vs MR {per[0]} ns")
    dsg = [rows[(n, b, "sg")]["deregister_ns"] for n in counts]
    dper = [rows[(n, b, "per_region")]["deregister_ns"] for n in counts]
    check(len(set(dsg)) == 1, f"{b} B: one FREE_STAG should not depend on N: {dsg}")
    check(all(d > dsg[0] for d in dper[1:]), f"{b} B: N deregistrations vs one: {dper} vs {dsg}")
    ksg = [rows[(n, b, "kernel_sg")]["register_ns"] for n in counts]
    kper = [rows[(n, b, "kernel_per_region")]["register_ns"] for n in counts]
    check(ksg[-1] <= 1.5 * ksg[0], f"{b} B: kernel handle not flat in N: {ksg}")
    check(abs(kper[0] - 8000) <= 400, f"{b} B: a kernel Reg Mem call takes {kper[0]} ns, not about 8 us")
    check(all(a < c for a, c in zip(kper, kper[1:])) and kper[-1] >= 20 * kper[0],
          f"{b} B: kernel per-buffer registration does not grow with N: {kper}")
    kd = [rows[(n, b, "kernel_sg")]["deregister_ns"] for n in counts]
    check(len(set(kd)) == 1, f"{b} B: one kernel unlock should not depend on N: {kd}")
plot(o, "sg_registration")
o, res = run_experiment(binary, base, "phys_scan")
GiB = 1 << 30
want = [{"start": 0, "end": 3 * GiB, "readable": True},
        {"start": 3 * GiB, "end": 4 * GiB, "readable": False},
        {"start": 4 * GiB, "end": 16 * GiB, "readable": True}]
check(res["rows"] == want, f"phys_scan rows {res['rows']}")
plot(o, "phys_scan")
o, res = run_experiment(binary, base, "reg_cache")
rc = {r["cache"]: r for r in res["rows"]}
check(sorted(rc) == ["off", "on"], f"reg_cache modes {sorted(rc)}")
check(rc["on"]["misses"] == 32 and rc["on"]["hits"] == 968 and rc["on"]["evictions"] == 0,
      f"reg_cache on: {rc['on']}")
check(rc["off"]["hits"] == 0 and rc["off"]["misses"] == 1000, f"reg_cache off: {rc['off']}")
check(rc["on"]["us_per_op"] < rc["off"]["us_per_op"],
      f"a cache hit should make a round faster: {rc['on']['us_per_op']} vs {rc['off']['us_per_op']}")
plot(o, "reg_cache")
o, res = run_experiment(binary, base, "sg_transfer")
tr = {(r["mode"], r["op"], r["registration"]): r for r in res["rows"]}
check(len(tr) == 16 and all(r["bytes"] == 131072 for r in tr.values()), f"sg_transfer rows {tr}")
for op in ("read", "write"):
    for m in ("sg", "per_region", "kernel_sg", "kernel_per_region"):
        check(tr[(m, op, "excluded")]["mb_per_s"] > 1000, f"{m} {op}: {tr[(m, op, 'excluded')]}")
        check(tr[(m, op, "included")]["mb_per_s"] < tr[(m, op, "excluded")]["mb_per_s"],
              f"{m} {op}: registration costs nothing?")
    check(tr[("sg", op, "included")]["mb_per_s"] > tr[("per_region", op, "included")]["mb_per_s"],
          f"{op}: one handle should beat 32 MRs with registration included")
    # Kernel memory, 32 x 4 KiB: one handle locked with one call against 32 Reg Mem calls of
    # about 8 us each, registration included.
    ratio = tr[("kernel_sg", op, "included")]["mb_per_s"] / tr[("kernel_per_region", op, "included")]["mb_per_s"]
    check(ratio >= 2.5, f"{op}: a kernel handle is only {ratio:.2f}x faster than 32 kernel registrations")
plot(o, "sg_transfer")
# The storage path: every command's data checked and its stages adding up (the run's exit code:
# run_experiment fails otherwise); the stage means add up to the mean latency; registration
# per command costs n calls per buffer, one call per handle, none preregistered.
o, res = run_experiment(binary, base, "storage")
rows = {(r["op"], r["strategy"], r["depth"], r["bytes"]): r for r in res["rows"]}
check(len(rows) == 36 and all(r["commands"] == 20 for r in rows.values()), f"storage rows {sorted(rows)}")
st = {(o_, s_, b_): r for (o_, s_, d_, b_), r in rows.items() if d_ == 1}
STAGES = ("register_us", "command_us", "target_us", "response_us", "deregister_us")
for k, r in rows.items():
    check(abs(sum(r[s] for s in STAGES) - r["latency_us"]) <= 1e-6 * r["latency_us"],
          f"{k}: stages {[r[s] for s in STAGES]} do not add up to {r['latency_us']}")
    check(r["command_us"] > 0 and r["target_us"] > 0 and r["response_us"] > 0, f"{k}: a stage of 0: {r}")
for op in ("read", "write"):
    pre = [st[(op, "preregistered", b)] for b in (4096, 32768, 131072)]
    check(all(r["register_us"] == 0 and r["deregister_us"] == 0 for r in pre), f"{op}: preregistered registers: {pre}")
    sg = [st[(op, "sg_handle", b)]["register_us"] for b in (4096, 32768, 131072)]
    per = [st[(op, "per_buffer", b)]["register_us"] for b in (4096, 32768, 131072)]
    check(sg[2] <= 1.5 * sg[0], f"{op}: a handle's registration should be flat in the buffers: {sg}")
    check(abs(per[2] - 32 * per[0]) <= 0.05 * per[2], f"{op}: 32 buffers should take 32 calls: {per}")
    big = {s: st[(op, s, 131072)]["mb_per_s"] for s in ("per_buffer", "sg_handle", "preregistered")}
    check(big["preregistered"] >= big["sg_handle"] >= 2.5 * big["per_buffer"],
          f"{op} 128 KiB MB/s: {big}")
    # Four commands outstanding overlap one's registration and messages with another's data:
    # more IOPS at 4 KiB, never fewer at any size.
    for strat in ("per_buffer", "sg_handle", "preregistered"):
        one, four = st[(op, strat, 4096)], rows[(op, strat, 4, 4096)]
        check(four["iops"] >= 1.3 * one["iops"], f"{op} {strat} 4 KiB IOPS at depth 4: {four['iops']} against {one['iops']}")
        for b in (32768, 131072):
            check(rows[(op, strat, 4, b)]["mb_per_s"] >= st[(op, strat, b)]["mb_per_s"],
                  f"{op} {strat} {b}: depth 4 slower than depth 1")
pngs = plot(o, "storage")
check({"stages_read.png", "stages_write.png"} <= set(pngs), f"storage: no stage plots in {pngs}")
o, res = run_experiment(binary, base, "callbacks")
cb = {(r["mode"], r["size"]): r for r in res["rows"]}
check(sorted(cb) == sorted((m, z) for m in ("poll", "callback") for z in (64, 65536)),
      f"callbacks points {sorted(cb)}")
check(abs(cb[("callback", 64)]["cpu_us"] - cb[("callback", 65536)]["cpu_us"]) < 0.01,
      f"callback CPU should not depend on the wait: {cb}")
check(cb[("callback", 65536)]["cpu_us"] * 10 < cb[("poll", 65536)]["cpu_us"],
      f"64 KiB: polling should burn the wait: {cb}")
for z in (64, 65536):
    check(cb[("callback", z)]["latency_us"] > cb[("poll", z)]["latency_us"],
          f"{z} B: a callback adds the interrupt and the wake-up: {cb}")
plot(o, "callbacks")
o, res = run_experiment(binary, base, "odp")
touch = {(r["mode"], r["bytes"]): r for r in res["rows"] if r["workload"] == "touch"}
hol = {(r["case"], r["qp"]): r for r in res["rows"] if r["workload"] == "hol"}
modes = ("pinned", "first_touch", "resident", "prefetched", "warm")
check(sorted(touch) == sorted((m, z) for m in modes for z in (4096, 65536, 1048576)),
      f"odp touch points {sorted(touch)}")
check(sorted(hol) == sorted((c, q) for c in ("baseline", "fault")
                            for q in ("same_peer", "other_peer")), f"odp hol points {sorted(hol)}")
for z in (4096, 65536, 1048576):
    pin = touch[("pinned", z)]
    for m in ("pinned", "prefetched", "warm"):
        check(touch[(m, z)]["faults_per_write"] == 0 and touch[(m, z)]["rnrs_per_write"] == 0,
              f"odp {m} {z} B faulted: {touch[(m, z)]}")
        check(abs(touch[(m, z)]["latency_us"] - pin["latency_us"]) < 0.01,
              f"odp {m} {z} B should cost what pinned memory does: {touch[(m, z)]} vs {pin}")
    for m in ("first_touch", "resident"):
        check(touch[(m, z)]["faults_per_write"] >= 1 and touch[(m, z)]["rnrs_per_write"] >= 1,
              f"odp {m} {z} B: no fault or RNR: {touch[(m, z)]}")
        check(touch[(m, z)]["latency_us"] > pin["latency_us"],
              f"odp {m} {z} B: a fault costs nothing? {touch[(m, z)]} vs {pin}")
    check(touch[("first_touch", z)]["latency_us"] >= touch[("resident", z)]["latency_us"],
          f"odp {z} B: zeroing new pages should not be cheaper than none: {touch}")
check(touch[("first_touch", 65536)]["latency_us"] > touch[("resident", 65536)]["latency_us"],
      "odp 64 KiB: first touch should cost the pages' zeroing on top")
check(hol[("fault", "same_peer")]["latency_us"] > hol[("baseline", "same_peer")]["latency_us"] + 5,
      f"odp: a QP to the faulting peer should wait behind the fault: {hol}")
check(hol[("fault", "other_peer")]["latency_us"] <= hol[("baseline", "other_peer")]["latency_us"],
      f"odp: a QP to another peer should not wait: {hol}")
plot(o, "odp")
finish("memory_experiments")
