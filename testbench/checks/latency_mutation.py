#!/usr/bin/python3
"""Shows that the engines' latency tests fail when an engine is one cycle off: for each engine
of models/rnic/latency_mutation.h, builds the core timing tests with that engine's latency one
cycle longer (a separate build tree, -DRNICSIM_LATENCY_MUTATION=<n>), runs every CoreTiming test
in its own process and requires at least one to fail; prints which did. Label `mutation` (not
in CI: about a minute of rebuild per engine).

usage: latency_mutation.py SOURCE_DIR WORK_DIR"""
import os
import subprocess
import sys

ENGINES = {1: "host interface (WQE copy-in)", 2: "SQ engine (issue slot)",
           3: "RX engine (verdict)", 4: "read-response engine (offer)",
           5: "completion engine (CQE write)", 6: "rnic_xlat (answer)"}

src, work = sys.argv[1], sys.argv[2]
build = os.path.join(work, "build-mutation")
env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
failed_checks = []
for n, what in ENGINES.items():
    subprocess.run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    f"-DRNICSIM_LATENCY_MUTATION={n}"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", build, "--target", "core_timing_test"], check=True,
                   capture_output=True)
    binary = os.path.join(build, "testbench", "system", "core_timing_test")
    listing = subprocess.run([binary, "--gtest_list_tests"], check=True, capture_output=True,
                             text=True, env=env).stdout
    suite, tests = "", []
    for line in listing.splitlines():
        if not line.startswith(" "):
            suite = line.strip()
        else:
            tests.append(suite + line.strip())
    fails = [t for t in tests
             if subprocess.run([binary, f"--gtest_filter={t}"], capture_output=True,
                               env=env).returncode != 0]
    verdict = "fails" if fails else "DOES NOT FAIL"
    print(f"{what} one cycle longer: {verdict}: {', '.join(fails) or '-'}")
    if not fails:
        failed_checks.append(what)
if failed_checks:
    print(f"latency_mutation: no test catches {', '.join(failed_checks)}")
    sys.exit(1)
print(f"latency_mutation: every one of {len(ENGINES)} one-cycle mutations is caught")
