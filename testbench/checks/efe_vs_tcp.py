#!/usr/bin/python3
"""scenarios/experiments/efe_vs_tcp.yaml as shipped (docs/transport.md, "EFE against TCP"): every
measure is there for both transports; the wire carries more besides payload on MPA/TCP than on
the EFE, and each at least its headers (EFE: 72 bytes a 1,466-byte frame; MPA/TCP: 110 bytes a
1,428-byte frame); the offload engine's per-segment costs show in MPA/TCP's latencies; both
carry at least 9 Gb/s of 64 KiB Writes without loss and keep 90% of it at 1% loss; no point
has a completion error; scripts/plot draws one figure per unit."""
import os
import sys

from common import ROOT, check, finish, load, out_dir, plot, rnicsim

binary, base = sys.argv[1], sys.argv[2]
o = out_dir(base, "efe_vs_tcp")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", "efe_vs_tcp.yaml"), "--out", o,
        "--quiet")
rows = load(os.path.join(o, "results.json"))["rows"]
v = {(r["transport"], r["measure"]): r for r in rows}
want = ["write_lat_2B", "read_lat_2B", "write_bw_65536B", "header_bytes_per_payload_byte",
        "goodput_loss_0", "goodput_loss_0.001", "goodput_loss_0.01", "goodput_loss_0.05",
        "incast_8_efe_cc", "incast_32_efe_cc"]
tcp_want = want[:8] + [f"incast_{n}_{m}" for n in (8, 32) for m in ("tcp", "dctcp", "tcp_pause", "dctcp_pause")]
check(sorted(v) == sorted([("efe", m) for m in want] + [("mpa_tcp", m) for m in tcp_want]),
      f"measures {sorted(v)}")
h = {t: v[(t, "header_bytes_per_payload_byte")]["value"] for t in ("efe", "mpa_tcp")}
check(h["efe"] >= 72 / 1466 and h["mpa_tcp"] >= 110 / 1428 and h["mpa_tcp"] > h["efe"],
      f"header bytes per payload byte {h}")
for m in ("write_lat_2B", "read_lat_2B"):
    check(v[("mpa_tcp", m)]["value"] > v[("efe", m)]["value"], f"{m}: {v[('mpa_tcp', m)]} vs {v[('efe', m)]}")
for t in ("efe", "mpa_tcp"):
    g0, g1 = v[(t, "goodput_loss_0")]["value"], v[(t, "goodput_loss_0.01")]["value"]
    check(g0 >= 9.0, f"{t}: lossless goodput {g0}")
    check(g1 >= 0.9 * g0, f"{t}: {g1} Gb/s at 1% loss, below 90% of {g0}")
check(all(r.get("completion_errors", 0) == 0 for r in rows), "completion errors")
plots = plot(o, "efe_vs_tcp")
check(plots == ["value_B_B.png", "value_Gb_s.png", "value_us.png"], f"plots {plots}")
finish("efe_vs_tcp")
