"""Helpers for the script-level CTest checks: run rnicsim, read its outputs, fail loudly."""
import json
import os
import subprocess
import sys

FAILURES = []


def rnicsim(binary, *args, expect=0):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
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


def finish(name):
    if FAILURES:
        print(f"{name}: {len(FAILURES)} check(s) failed")
        sys.exit(1)
    print(f"{name}: all checks passed")


def out_dir(base, name):
    d = os.path.join(base, name)
    os.makedirs(d, exist_ok=True)
    return d
