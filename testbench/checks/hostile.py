#!/usr/bin/python3
"""The hostile corpus (testbench/hostile/README.md): each case file under testbench/hostile/cases
is a scenario whose comment lines say what `run` and `validate` must do with it (exit code and
words of the one stderr line). Nothing may crash, hang (every case has a time limit) or be
accepted silently. A run that fails (exit 1) must leave results.json and stats.json that record
it, and a readable capture. Then the generated cases: a valid 100,000-host topology validates
in under 30 s; 300 hosts get 300 different default MACs."""
import glob
import os
import re
import shutil
import subprocess
import sys
import time

from common import ROOT, check, finish, load, out_dir, write_file

binary, work = sys.argv[1], out_dir(sys.argv[2], "hostile")
build = os.path.dirname(binary)
cases_dir = os.path.join(ROOT, "testbench", "hostile", "cases")
LIMIT_S = 120  # a case still running then has hung
PCAP_MAGIC = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")

subst = {
    "@BUILD@": build,
    "@HOSTILE@": os.path.join(build, "testbench", "hostile"),
    "@EXAMPLES@": os.path.join(build, "examples"),
    "@WORK@": work,
    "@TRUE@": shutil.which("true") or "/bin/true",
}
write_file(work, "text.so", "not a shared object\n")


def fill(text):
    for k, v in subst.items():
        text = text.replace(k, v)
    return text


def parse(path):
    """(the case's text with its placeholders filled, {verb: (exit, words)}, extra args, and the
    row conditions [(key, op, value)] every results row of a run must meet)."""
    text = fill(open(path).read())
    expect, args, rows = {}, [], []
    for line in text.splitlines():
        m = re.match(r"#\s*(run|validate):\s*(\d+)\s*(.*)$", line)
        if m:
            expect[m.group(1)] = (int(m.group(2)), m.group(3).strip())
        m = re.match(r"#\s*args:\s*(.*)$", line)
        if m:
            args = m.group(1).split()
        m = re.match(r"#\s*row:\s*(\w+)\s*([<>])\s*([\d.]+)$", line)
        if m:
            rows.append((m.group(1), m.group(2), float(m.group(3))))
    # An input error is refused alike by both verbs unless the case says otherwise.
    if "run" in expect and expect["run"][0] == 2 and "validate" not in expect:
        expect["validate"] = expect["run"]
    return text, expect, args, rows


def failure_recorded(res):
    """Whether results.json says the run failed: a stop, or a program that did not end well."""
    if res.get("stopped", {}).get("exit") == 1:
        return True
    return any(w.get("failed") or any(h.get("failed") for h in w.get("hosts", []))
               for w in res.get("workloads", []))


def outputs_written(name, o, failed):
    for f in ("results.json", "stats.json"):
        check(os.path.exists(os.path.join(o, f)), f"{name}: no {f} after the run")
    if failed and os.path.exists(os.path.join(o, "results.json")):
        check(failure_recorded(load(os.path.join(o, "results.json"))),
              f"{name}: results.json does not record the failure")
    caps = glob.glob(os.path.join(o, "*.pcap"))
    check(caps, f"{name}: no capture after a run with --pcap")
    for c in caps:
        with open(c, "rb") as f:
            head = f.read(24)
        check(len(head) == 24 and head[:4] in PCAP_MAGIC, f"{name}: {c} is not a readable capture")


files = sorted(glob.glob(os.path.join(cases_dir, "*.yaml")))
check(len(files) > 0, "no hostile cases found")
for path in files:
    name = os.path.basename(path)
    text, expect, args, conditions = parse(path)
    check(expect, f"{name}: says neither '# run:' nor '# validate:'")
    scen = write_file(work, name, text)
    for verb, (code, words) in expect.items():
        o = os.path.join(work, "out_" + name[:-5])
        cmd = [binary, verb, scen, *args]
        if verb == "run":
            shutil.rmtree(o, ignore_errors=True)
            cmd += ["--out", o, "--quiet", "--pcap"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            check(False, f"{name}: {verb} still running after {LIMIT_S} s (a hang)")
            continue
        err = p.stderr.strip()
        if not check(p.returncode == code, f"{name}: {verb} exit {p.returncode}, expected {code}: {err!r}"):
            continue
        check(not words or words in err, f"{name}: {verb}: stderr lacks {words!r}: {err!r}")
        check("Fatal" not in err and "Error: (E" not in err, f"{name}: {verb}: a SystemC report: {err!r}")
        if code in (1, 2):
            lines = [l for l in err.splitlines()
                     if l.startswith("rnicsim:") and not l.startswith("rnicsim: note:")]
            check(len(lines) == 1, f"{name}: {verb}: {len(lines)} rnicsim lines on stderr, expected one: {err!r}")
        if verb == "run" and code in (0, 1):
            outputs_written(name, o, code == 1)
        if verb == "run" and conditions:
            got = load(os.path.join(o, "results.json")).get("rows", [])
            check(got, f"{name}: no rows")
            for key, op, value in conditions:
                for r in got:
                    v = r.get(key)
                    check(v is not None and (v > value if op == ">" else v < value),
                          f"{name}: row {key} = {v}, expected {op} {value}")
        if verb == "run" and code == 2:
            left = os.listdir(o) if os.path.exists(o) else []
            check(not left, f"{name}: a refused run left {left} in --out")

def star(hosts, per_switch, extra=""):
    """hosts h0.. behind switches of per_switch hosts each, the switches joined by `core`; a
    write_bw from h0 to the last host."""
    lines = ["topology:", "  hosts:"] + [f"    - {{name: h{i}}}" for i in range(hosts)]
    lines += ["  switches:"] + [f"    - {{name: s{i}}}" for i in range(hosts // per_switch)]
    lines += ["    - {name: core}", "  links:"]
    lines += [f"    - {{between: [h{i}, s{i // per_switch}]}}" for i in range(hosts)]
    lines += [f"    - {{between: [s{i}, core]}}" for i in range(hosts // per_switch)]
    lines += ["workloads:", f"  - {{test: write_bw, from: h0, to: h{hosts - 1}, iters: 5}}"]
    return "\n".join(lines) + "\n" + extra


# 300 hosts: default MACs never repeat (they once wrapped at 256: h256 had h0's); a repeat is
# refused, so this validates only if every host has its own.
p = subprocess.run([binary, "validate", write_file(work, "hosts_300.yaml", star(300, 100))],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"300 hosts: validate exit {p.returncode}: {p.stderr[-400:]!r}")

# A valid topology of 100,000 hosts (each linked to a switch of 1,000) validates in seconds.
big = write_file(work, "hosts_100k.yaml", star(100000, 1000))
t0 = time.monotonic()
try:
    p = subprocess.run([binary, "validate", big], capture_output=True, text=True, timeout=120)
    dt = time.monotonic() - t0
    check(p.returncode == 0, f"100,000 hosts: validate exit {p.returncode}: {p.stderr[-500:]!r}")
    check(dt < 30, f"100,000 hosts: validate took {dt:.1f} s (at most 30 s)")
    print(f"hostile: validate of 100,000 hosts took {dt:.1f} s")
except subprocess.TimeoutExpired:
    check(False, "100,000 hosts: validate still running after 120 s")

finish("hostile")
