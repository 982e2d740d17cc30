#!/usr/bin/python3
"""Four hosts as two linked pairs, each pair running its own workload at once (a write_bw on one,
a send_lat on the other): each workload's rows, and each link's capture, equal those of the same
workload alone on a two-host system (wall-clock fields aside). Also: results.json lists both
workloads with their hosts, the summary prints a table for each, and a link's capture holds only
its own pair's frames; a latency workload that ran beside another on its hosts says so (under its
table, and "competing" in results.json), one on hosts of its own does not."""
import json
import os
import sys

from common import check, finish, load, out_dir, rnicsim, strip_wall

binary, base = sys.argv[1], sys.argv[2]

WRITE = "{name: w_ab, test: write_bw, from: a, to: b, size: 65536, iters: 200}"
SEND = "{name: s_cd, test: send_lat, from: c, to: d, size: 64, iters: 200}"


# Each host keeps its MAC whichever system it is in (frames carry it).
MACS = {"a": "02:00:00:00:00:0a", "b": "02:00:00:00:00:0b", "c": "02:00:00:00:00:0c",
        "d": "02:00:00:00:00:0d"}


def scenario(name, hosts, links, workloads):
    host_list = ", ".join(f"{{name: {h}, mac: '{MACS[h]}'}}" for h in hosts)
    text = (f"name: {name}\ntopology:\n  hosts: [{host_list}]\n"
            "  links:\n" + "".join(f"    - {{name: {n}, between: [{a}, {b}]}}\n" for n, a, b in links)
            + "workloads:\n" + "".join(f"  - {w}\n" for w in workloads))
    d = out_dir(base, "four_hosts")
    path = os.path.join(d, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    o = out_dir(base, "four_hosts_" + name)
    p = rnicsim(binary, "run", path, "--pcap", "--out", o)
    return p, o


def rows_of(o, workload):
    return [strip_wall(r) for r in load(os.path.join(o, "results.json"))["rows"]
            if r["workload"] == workload]


p4, o4 = scenario("four", ["a", "b", "c", "d"], [("ab", "a", "b"), ("cd", "c", "d")], [WRITE, SEND])
p_ab, o_ab = scenario("pair_ab", ["a", "b"], [("ab", "a", "b")], [WRITE])
p_cd, o_cd = scenario("pair_cd", ["c", "d"], [("cd", "c", "d")], [SEND])

res = load(os.path.join(o4, "results.json"))
check([(w["name"], w["test"], w["from"], w["to"]) for w in res.get("workloads", [])] ==
      [("w_ab", "write_bw", "a", "b"), ("s_cd", "send_lat", "c", "d")],
      f"results.json workloads: {res.get('workloads')}")
check("workload w_ab: write_bw from a to b" in p4.stdout and "BW average[MiB/sec]" in p4.stdout,
      "the summary lacks w_ab's table")
check("workload s_cd: send_lat from c to d" in p4.stdout and "t_typical[usec]" in p4.stdout,
      "the summary lacks s_cd's table")
stats = load(os.path.join(o4, "stats.json"))["stats"]
for h in ("a", "b", "c", "d"):
    check(stats.get(f"{h}.mac", {}).get("tx_frames", {}).get("value", 0) > 0, f"host {h} sent no frame")

for name, solo, workload, link in (("w_ab", o_ab, "w_ab", "ab"), ("s_cd", o_cd, "s_cd", "cd")):
    together, alone = rows_of(o4, workload), rows_of(solo, workload)
    check(len(together) == 1 and together == alone,
          f"{name}: rows beside the other pair {together} differ from alone {alone}")
    a = open(os.path.join(o4, link + ".pcap"), "rb").read()
    b = open(os.path.join(solo, link + ".pcap"), "rb").read()
    check(len(a) > 10000 and a == b, f"{name}: {link}.pcap differs from the two-host run's")
r = rows_of(o4, "w_ab")
check(r and r[0]["bw_avg_mib_s"] > 1000, f"w_ab: {r}")

# A latency workload says when it was measured under competing traffic: not s_cd here (its hosts
# are its own), but one beside a write_bw on the same pair.
check(all("competing" not in w for w in res["workloads"]), f"four hosts: {res['workloads']}")
check("competing traffic" not in p4.stdout, "four hosts: s_cd said it competed")
SHARED = "{name: s_ab, test: send_lat, from: a, to: b, size: 64, iters: 200}"
p_sh, o_sh = scenario("shared", ["a", "b"], [("ab", "a", "b")], [WRITE, SHARED])
sh = {w["name"]: w for w in load(os.path.join(o_sh, "results.json"))["workloads"]}
check(sh.get("s_ab", {}).get("competing") == ["w_ab"], f"shared pair: {sh}")
check("measured under competing traffic: w_ab ran on its hosts" in p_sh.stdout,
      f"shared pair's summary: {p_sh.stdout[-600:]!r}")
finish("four_hosts")
