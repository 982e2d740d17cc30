#!/usr/bin/python3
"""The layers of docs/architecture.md, enforced: every project include in models/, sim/ and
testbench/, and every project library a CMakeLists.txt links, must point down. A violation is
named with its file and line. Usage: layering.py [ROOT]; layering.py --self-test runs the checker
over a small tree with known violations and fails unless it finds exactly those."""
import os
import re
import sys
import tempfile

# Layers by path prefix, most specific first: (name, prefix).
LAYERS = [
    ("abi", "models/rnic/abi/"),
    ("common", "models/common/"),
    ("eth", "models/eth/"),
    ("efe", "models/efe/"),
    ("tcp", "models/tcp/"),
    ("pcie", "models/pcie/"),
    ("card", "models/rnic/card"),  # card.h, card.cc, card_params.h: the card's assembly
    ("rnic", "models/rnic/"),
    ("host", "models/host/"),
    ("sim", "sim/"),
    ("testbench", "testbench/"),
]
MODELS = {"common", "abi", "eth", "efe", "tcp", "pcie", "card", "rnic", "host"}
# What each layer may include or link (itself included). "rtl" is the Verilated headers
# (V*.h, generated from rtl/): the simulator's assembly and the tests bind them, models stay
# generic over them (templates and port lists).
ALLOWED = {
    "common": {"common"},
    "abi": {"common", "abi"},
    "eth": {"common", "eth"},
    "pcie": {"common", "pcie"},
    "efe": {"common", "eth", "efe"},
    "tcp": {"common", "eth", "tcp"},
    # The engines reach their transport only through models/common/transport.h; the card makes
    # the EFE (and its MAC) and hands it to them.
    "rnic": {"common", "abi", "pcie", "rnic"},
    "card": {"common", "abi", "eth", "efe", "tcp", "pcie", "rnic", "card"},
    "host": {"common", "abi", "pcie", "host"},
    "sim": MODELS | {"sim", "rtl"},
    "testbench": MODELS | {"sim", "rtl", "testbench"},
}
# Project libraries and the layer each one is.
LIBRARIES = {
    "rnicsim_common": "common",
    "rnicsim_abi": "abi",
    "rnicsim_eth": "eth",
    "rnicsim_efe": "efe",
    "rnicsim_tcp": "tcp",
    "rnicsim_pcie": "pcie",
    "rnicsim_rnic": "card",  # the engines and the card that assembles them
    "rnicsim_host": "host",
    "rnicsim_models": "sim",  # every model together: what the assembly links
    "rnicsim_rtl": "rtl",
    "rnicsim_sim": "sim",
    "rnicsim_traffic": "sim",
    "rnicsim_gtest_main": "testbench",
}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
LINK = re.compile(r"target_link_libraries\(\s*(\S+)([^)]*)\)", re.S)


def layer_of(path):
    for name, prefix in LAYERS:
        if path.startswith(prefix):
            return name
    return None


def target_layer(inc):
    if "/" not in inc and re.match(r"V\w+\.h$", inc):
        return "rtl"
    return layer_of(inc)


def check_tree(root):
    errors = []
    for top in ("models", "sim", "testbench"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                full = os.path.join(d, f)
                rel = os.path.relpath(full, root)
                src = layer_of(rel)
                if f.endswith((".h", ".cc", ".cpp", ".hpp")):
                    for n, line in enumerate(open(full, errors="replace"), 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        dst = target_layer(m.group(1))
                        if dst is None:
                            # A bare name beside the file (same folder) is the same layer.
                            if os.path.exists(os.path.join(d, m.group(1))):
                                continue
                            errors.append(f"{rel}:{n}: includes '{m.group(1)}', which is not a "
                                          "path from the project root")
                        elif dst not in ALLOWED[src]:
                            errors.append(f"{rel}:{n}: {src} includes {dst} ('{m.group(1)}'): "
                                          "against the layers")
                elif f == "CMakeLists.txt":
                    text = open(full).read()
                    for m in LINK.finditer(text):
                        lib = m.group(1)
                        if lib not in LIBRARIES:
                            continue
                        n = text.count("\n", 0, m.start()) + 1
                        lib_layer = LIBRARIES[lib]
                        for dep in m.group(2).split():
                            if dep in LIBRARIES and LIBRARIES[dep] not in ALLOWED.get(lib_layer, {lib_layer}) | {lib_layer}:
                                errors.append(f"{rel}:{n}: {lib} ({lib_layer}) links {dep} "
                                              f"({LIBRARIES[dep]}): against the layers")
    return errors


def self_test():
    """A tree with one violation of each kind; the checker must name exactly these."""
    with tempfile.TemporaryDirectory() as t:
        files = {
            "models/common/a.h": '#include "models/common/b.h"\n',
            "models/common/b.h": '#include "sim/config.h"\n',                   # 1
            "models/host/driver.cc": '#include "models/rnic/abi/regs.h"\n'
                                      '#include "models/rnic/xlat/smt.h"\n',         # 2
            "models/pcie/pcie_if.h": '#include "models/rnic/dmac/rnic_dmac.h"\n',    # 3
            "models/rnic/core.h": '#include "models/host/verbs/verbs_enums.h"\n',  # 4
            "sim/main.cc": '#include "testbench/traffic/perftest.h"\n',         # 5
            "testbench/t.cc": '#include "sim/main.h"\n#include "Vcrc32_w8.h"\n',
            "models/eth/CMakeLists.txt": "target_link_libraries(rnicsim_eth PUBLIC rnicsim_efe)\n",  # 6
            "models/rnic/sq/sq_engine.h": '#include "models/efe/efe.h"\n',  # 7: an engine
            "models/rnic/card.h": '#include "models/efe/efe.h"\n#include "models/rnic/sq/sq_engine.h"\n',
        }
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(t, rel)), exist_ok=True)
            open(os.path.join(t, rel), "w").write(text)
        got = sorted(e.split(":")[0] + ":" + e.split(":")[1] for e in check_tree(t))
        want = sorted(["models/common/b.h:1", "models/host/driver.cc:2", "models/pcie/pcie_if.h:1",
                       "models/rnic/core.h:1", "sim/main.cc:1", "models/eth/CMakeLists.txt:1",
                       "models/rnic/sq/sq_engine.h:1"])
        if got != want:
            print(f"FAIL: self-test: found {got}, expected {want}")
            return 1
    print("layering self-test: every planted violation found, nothing else")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    errors = check_tree(root)
    for e in errors:
        print("FAIL:", e)
    if errors:
        print(f"layering: {len(errors)} includes or links against the layers (docs/architecture.md)")
        return 1
    print("layering: every include and link points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
