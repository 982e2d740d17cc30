"""Helpers for the script-level CTest checks: run rnicsim, read its outputs, fail loudly."""
import json
import os
import shutil
import subprocess
import sys

FAILURES = []


def rnicsim(binary, *args, expect=0, cwd=None, timeout=None):
    try:
        p = subprocess.run([binary, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        fail(f"rnicsim {' '.join(args)}: still running after {timeout} s (stopped)")
        return subprocess.CompletedProcess(e.cmd, None, e.stdout or "", e.stderr or "")
    if expect is not None and p.returncode != expect:
        fail(f"rnicsim {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}")
    return p


def load(path):
    with open(path) as f:
        return json.load(f)


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def check_untuned(scenario):
    """The shipped scenario sets no efe.* key: its figures are the EFE's defaults'."""
    with open(scenario) as f:
        tuned = [line.split(":")[0].strip() for line in f if line.strip().startswith("efe.")]
    check(not tuned, f"{os.path.basename(scenario)} tunes the EFE: {tuned}")


def strip_wall(v, also=()):
    """v without its wall-clock fields (keys starting with "wall") nor the keys in `also`, at
    every depth: what two runs of the same simulation must agree on."""
    if isinstance(v, dict):
        return {k: strip_wall(x, also) for k, x in v.items() if not k.startswith("wall") and k not in also}
    if isinstance(v, list):
        return [strip_wall(x, also) for x in v]
    return v


def finish(name):
    if FAILURES:
        print(f"{name}: {len(FAILURES)} check(s) failed")
        sys.exit(1)
    print(f"{name}: all checks passed")


def write_file(folder, name, text):
    """Writes text to folder/name (a scenario for a check); returns the path."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def out_dir(base, name):
    d = os.path.join(base, name)
    os.makedirs(d, exist_ok=True)
    return d


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DISSECTOR = os.path.join(ROOT, "scripts", "wireshark", "rnicsim.lua")
EXPERT_ERROR = 8388608  # Wireshark's PI_ERROR severity


def tshark_fields(pcap, fields):
    """The capture through tshark with the shipped dissector (and rpcordma off, WIRE.md): one
    list of the fields' values per frame, or None (and a failed check) if tshark cannot run."""
    tshark = shutil.which("tshark")
    if not check(tshark is not None, "tshark is not installed (scripts/setup installs it)"):
        return None
    cmd = [tshark, "-X", f"lua_script:{DISSECTOR}", "--disable-protocol", "rpcordma", "-r", pcap,
           "-T", "fields", "-E", "separator=|"]
    for f in fields:
        cmd += ["-e", f]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if not check(p.returncode == 0, f"tshark over {pcap}: {p.stderr}"):
        return None
    return [l.split("|") for l in p.stdout.strip().split("\n") if l]


def expert_error(severity):
    """Whether a frame's _ws.expert.severity field holds an error."""
    return any(s and int(s) >= EXPERT_ERROR for s in severity.split(","))


def run_experiment(binary, base, name):
    """Runs scenarios/experiments/<name>.yaml into an output folder of its own: (folder,
    results.json)."""
    o = out_dir(base, name)
    rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "experiments", name + ".yaml"), "--out", o,
            "--quiet")
    return o, load(os.path.join(o, "results.json"))


def plot(o, what):
    """scripts/plot draws the run in folder o (at least one plot); the plots' file names."""
    q = subprocess.run([os.path.join(ROOT, "scripts", "plot"), o], capture_output=True, text=True)
    d = os.path.join(o, "plots")
    pngs = sorted(os.listdir(d)) if q.returncode == 0 and os.path.isdir(d) else []
    check(bool(pngs), f"scripts/plot {what}: {q.stdout}{q.stderr}")
    return pngs


def check_loss_goodput(o, min_lossless, resend=None, at_1pct=0.9):
    """loss_goodput's rows in folder o as shipped (loss 0, 0.1, 1, 2 and 5%), those of resend mode
    `resend` (None: rows without one, MPA/TCP's): at least min_lossless Gb/s without loss, at 1%
    at least at_1pct of that, no completion error at any loss, no retransmission without loss and
    more as loss grows. Returns the rows by loss."""
    rows = {r["loss"]: r for r in load(os.path.join(o, "results.json"))["rows"]
            if r.get("resend") == resend}
    check(sorted(rows) == [0, 0.001, 0.01, 0.02, 0.05], f"loss points {sorted(rows)} ({resend})")
    if sorted(rows) != [0, 0.001, 0.01, 0.02, 0.05]:
        return rows
    base_gbps = rows[0]["goodput_gbps"]
    check(base_gbps > min_lossless, f"lossless goodput {base_gbps:.3f} Gb/s (10 GbE, 64 KiB writes)")
    check(rows[0.01]["goodput_gbps"] >= at_1pct * base_gbps,
          f"{resend}: at 1% loss {rows[0.01]['goodput_gbps']:.3f} Gb/s, below {at_1pct:.0%} of "
          f"{base_gbps:.3f}")
    check(all(r["completion_errors"] == 0 for r in rows.values()), "completion errors")
    check(rows[0]["retransmissions"] == 0, "retransmissions without loss")
    retx = [rows[p]["retransmissions"] for p in sorted(rows)]
    check(all(b > a for a, b in zip(retx[1:], retx[2:])), f"retransmissions do not grow with loss: {retx}")
    return rows


def text(path):
    """A file's whole text."""
    with open(path) as f:
        return f.read()


def host_entry(o, host):
    """The results.json entry of `host` in any workload of the run in folder o ({}: none)."""
    for w in load(os.path.join(o, "results.json"))["workloads"]:
        for h in w["hosts"]:
            if h["host"] == host:
                return h
    return {}
