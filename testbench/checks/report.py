#!/usr/bin/python3
"""rnicsim report (README, "Running"): the demo's outputs (with a capture, a timeline and
scripts/plot's figures) become one self-contained report.html that headless Chromium (Debian's
`chromium`, installed by scripts/test) renders: its script counts a figure per workload metric,
the workloads' tables and the two hosts drawn; the page names each workload, links the capture
and the timeline, and embeds the PNGs; a folder without a run's outputs is refused (exit 1)."""
import os
import shutil
import subprocess
import sys

from common import ROOT, check, finish, load, out_dir, rnicsim

binary, work = sys.argv[1], out_dir(sys.argv[2], "report")
o = os.path.join(work, "demo")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "demo.yaml"), "--out", o, "--pcap",
        "--timeline", os.path.join(o, "timeline.json"), "--quiet")
q = subprocess.run([os.path.join(ROOT, "scripts", "plot"), o], capture_output=True, text=True)
check(q.returncode == 0, f"scripts/plot: {q.stdout}{q.stderr}")
p = rnicsim(binary, "report", o)
page = os.path.join(o, "report.html")
check(p.stdout.strip() == f"wrote {page}", f"report: {p.stdout}")
html = open(page).read()
res = load(os.path.join(o, "results.json"))
metrics = sum(len(w["y"]) for w in res["workloads"])
for w in res["workloads"]:
    check(f"{w['name']}: {w['test']} from {w['from']} to {w['to']}" in html, f"no heading for {w['name']}")
check('href="l0.pcap"' in html and 'href="timeline.json"' in html, "no link to the capture or timeline")
check(html.count("data:image/png;base64,") == len(os.listdir(os.path.join(o, "plots"))),
      "the plots are not all embedded")
check("src=\"http" not in html and "<link" not in html, "the page loads something from outside")

chromium = shutil.which("chromium")
if check(chromium, "chromium is not installed (scripts/test installs it)"):
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    d = subprocess.run(args + ["--dump-dom", "file://" + page], capture_output=True, text=True,
                       timeout=120)
    tables = len(res["workloads"]) + 1 + (0 if "None: no error" in html else 1)
    want = f"rendered: {metrics} figures, {tables} tables, 2 nodes drawn"
    check(want in d.stdout, f"Chromium's DOM lacks '{want}': "
          f"{[l for l in d.stdout.splitlines() if 'rendered:' in l]} {d.stderr[-500:]}")
    shot = os.path.join(work, "report.png")
    subprocess.run(args + ["--window-size=1200,1600", f"--screenshot={shot}", "file://" + page],
                   capture_output=True, timeout=120)
    check(os.path.exists(shot) and os.path.getsize(shot) > 20000,
          f"the screenshot is missing or blank: {shot}")

p = rnicsim(binary, "report", work, expect=1)
check("no results.json" in p.stderr, f"a folder with no run: {p.stderr}")
finish("report")
