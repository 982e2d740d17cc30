#!/usr/bin/python3
"""Per-block RTL coverage from a Verilator coverage file (scripts/regress).

Line coverage is lcov's: `verilator_coverage --write-info` gives each source line the count of
the coverage points on it, and a line with a point is covered when a count is above zero.
Toggle coverage is the share of toggle points (each bit of each signal, each direction as
Verilator counts them) that were hit. A block is one RTL source file under rtl/.

usage: rtl_coverage.py COVERAGE.dat [--min-line PCT] [--json FILE]
Prints one row per block; exits 1 if a block's line coverage is under --min-line."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def points(dat):
    """Yields (fields, count) for every coverage point of a .dat file."""
    with open(dat, encoding="latin-1") as f:
        for line in f:
            m = re.match(r"C '(.*)' (\d+)$", line.rstrip("\n"))
            if not m:
                continue
            fields = {}
            for kv in m.group(1).split("\x01"):
                if "\x02" in kv:
                    k, v = kv.split("\x02", 1)
                    fields[k] = v
            yield fields, int(m.group(2))


def block_of(path):
    return os.path.splitext(os.path.basename(path))[0] if "/rtl/" in "/" + path else None


def line_coverage(dat):
    """{block: (lines hit, lines with a point, [uncovered line numbers])} through lcov's format."""
    with tempfile.TemporaryDirectory() as d:
        info = os.path.join(d, "cov.info")
        subprocess.run(["verilator_coverage", "--write-info", info, dat], check=True,
                       stdout=subprocess.DEVNULL)
        out, cur = {}, None
        for line in open(info):
            line = line.strip()
            if line.startswith("SF:"):
                cur = block_of(line[3:])
                if cur:
                    out.setdefault(cur, {})
            elif line.startswith("DA:") and cur:
                n, c = line[3:].split(",")[:2]
                out[cur][int(n)] = max(out[cur].get(int(n), 0), int(c))
            elif line == "end_of_record":
                cur = None
    return {b: (sum(1 for c in ls.values() if c > 0), len(ls),
                sorted(n for n, c in ls.items() if c == 0)) for b, ls in out.items()}


def toggle_coverage(dat):
    out = {}
    for f, count in points(dat):
        b = block_of(f.get("f", ""))
        if not b or not f.get("page", "").startswith("v_toggle"):
            continue
        hit, total = out.get(b, (0, 0))
        out[b] = (hit + (count > 0), total + 1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dat")
    ap.add_argument("--min-line", type=float, default=0)
    ap.add_argument("--json")
    a = ap.parse_args()
    lines, toggles = line_coverage(a.dat), toggle_coverage(a.dat)
    rows, ok = [], True
    print(f"{'block':16} {'line':>22} {'toggle':>22}  uncovered lines")
    for b in sorted(lines):
        lh, lf, missed = lines[b]
        th, tf = toggles.get(b, (0, 0))
        lp, tp = 100.0 * lh / lf if lf else 0.0, 100.0 * th / tf if tf else 0.0
        rows.append({"block": b, "lines_hit": lh, "lines": lf, "line_pct": round(lp, 2),
                     "toggles_hit": th, "toggles": tf, "toggle_pct": round(tp, 2),
                     "uncovered_lines": missed})
        shown = ", ".join(map(str, missed[:12])) + (" ..." if len(missed) > 12 else "")
        print(f"{b:16} {lh:6}/{lf:<6} {lp:6.2f}%   {th:6}/{tf:<6} {tp:6.2f}%   {shown}")
        if lp < a.min_line:
            ok = False
            print(f"FAIL: {b}: line coverage {lp:.2f}% is under {a.min_line}%")
    if not rows:
        ok = False
        print("FAIL: no RTL block in the coverage file")
    if a.json:
        json.dump({"min_line_pct": a.min_line, "blocks": rows}, open(a.json, "w"), indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
