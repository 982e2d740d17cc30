#!/usr/bin/python3
"""Unmodified programs on MPA/TCP cards (card.transport mpa_tcp, docs/transport.md): Debian's
ibv_rc_pingpong (scenarios/examples/ibv_rc_pingpong.yaml) completes its 1000 round trips on both
hosts, and Debian's rping (scenarios/examples/rping.yaml: connected through librdmacm) its 100
ping-pongs; both exit 0 on both hosts, the cards run the TCP engine (one connection per QP,
nothing resent on a clean link) and no EFE, and Wireshark's own dissectors decode the
ping-pong's capture as MPA/DDP/RDMAP with good CRCs and nothing malformed. With rping's server
on node0 and its client on node1, the client (rdma_connect: the active side, as MPA defines it)
sends the SYN and the MPA request, though its MAC is the higher (the role rule for QPs
connected without the connection manager would pick node0). That run gives the hosts addresses
of its own (topology.hosts ip), and rping is given the server's address, not its name."""
import os
import shutil
import subprocess
import sys

from common import ROOT, check, finish, host_entry, load, out_dir, rnicsim, text


binary, base = sys.argv[1], sys.argv[2]
pp = out_dir(base, "mpa_tcp_pingpong")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "examples", "ibv_rc_pingpong.yaml"), "--out", pp,
        "--quiet", "--pcap", "--set", "card.transport=mpa_tcp")
for h in ("node0", "node1"):
    out = text(os.path.join(pp, h, "pingpong.out"))
    check("1000 iters in" in out, f"ibv_rc_pingpong on {h}: {out[-300:]!r}")
    check(host_entry(pp, h).get("exit") == 0, f"ibv_rc_pingpong on {h}: {host_entry(pp, h)}")
stats = load(os.path.join(pp, "stats.json"))["stats"]
for h in ("node0", "node1"):
    check(f"{h}.efe" not in stats, f"{h} has an EFE")
    toe = stats.get(f"{h}.toe", {})
    check(toe.get("connections", {}).get("value", 0) >= 1, f"{h}: no TCP connection: {toe}")
    check(toe.get("retransmissions", {}).get("value") == 0, f"{h}: resent on a clean link")
tshark = shutil.which("tshark")
if check(tshark is not None, "tshark is not installed (scripts/setup installs it)"):
    pcap = os.path.join(pp, "eth0.pcap")
    v = subprocess.run([tshark, "-r", pcap, "-V", "-Y", "iwarp_mpa.fpdu"], capture_output=True,
                       text=True).stdout
    check(v.count("(Good CRC32)") > 2000 and "Bad CRC32" not in v,
          f"{v.count('(Good CRC32)')} good CRCs, {v.count('Bad CRC32')} bad (1000 round trips)")
    m = subprocess.run([tshark, "-r", pcap, "-Y", "_ws.malformed"], capture_output=True, text=True)
    check(m.stdout.strip() == "", f"malformed frames: {m.stdout[:400]}")

rp = out_dir(base, "mpa_tcp_rping")
rnicsim(binary, "run", os.path.join(ROOT, "scenarios", "examples", "rping.yaml"), "--out", rp, "--quiet",
        "--set", "card.transport=mpa_tcp")
for h in ("node0", "node1"):
    check(text(os.path.join(rp, h, "rping.out")).count("ping data: rdma-ping-") == 100,
          f"rping on {h}: {text(os.path.join(rp, h, 'rping.out'))[-300:]!r}")
    check(host_entry(rp, h).get("exit") == 0, f"rping on {h}: {host_entry(rp, h)}")

# The connection manager's roles and ports: the initiator opens the TCP connection, from its
# id's port to the listener's, and sends MPA's request.
sw = out_dir(base, "mpa_tcp_rping_swapped")
scen = os.path.join(sw, "rping_swapped.yaml")
with open(scen, "w") as f:
    f.write("name: rping_swapped\n"
            "topology:\n  hosts: [{name: node0, ip: 192.168.7.10}, {name: node1, ip: 192.168.7.20}]\n"
            "  links: [{name: eth0, between: [node0, node1]}]\n"
            "workloads:\n  - name: rping\n    exec: [rping, -v, -C, '10']\n"
            "    hosts: [node0, node1]\n"
            "    args: [[-s, -a, 192.168.7.10, -p, '20886'], [-c, -a, 192.168.7.10, -p, '20886']]\n")
rnicsim(binary, "run", scen, "--out", sw, "--quiet", "--pcap", "--set", "card.transport=mpa_tcp")
for h in ("node0", "node1"):
    check(text(os.path.join(sw, h, "rping.out")).count("ping data: rdma-ping-") == 10,
          f"swapped rping on {h}: {text(os.path.join(sw, h, 'rping.out'))[-300:]!r}")
if tshark:
    def first(flt, field="ip.src"):
        p = subprocess.run([tshark, "-r", os.path.join(sw, "eth0.pcap"), "-Y", flt, "-T", "fields",
                            "-e", field], capture_output=True, text=True)
        return (p.stdout.split("\n") or [""])[0].strip()
    check(first("tcp.flags.syn == 1 && tcp.flags.ack == 0") == "192.168.7.20",
          "the SYN does not come from rping's client (node1, 192.168.7.20)")
    check(first("iwarp_mpa.key.req") == "192.168.7.20", "the MPA request does not come from node1")
    # The connection runs on the connection manager's ports: to the port rping listens on, from
    # the port rdma_resolve_addr bound the client's id to; no segment on other ports.
    syn = "tcp.flags.syn == 1 && tcp.flags.ack == 0"
    check(first(syn, "tcp.dstport") == "20886", "the SYN is not to rping's port 20886: "
          f"{first(syn, 'tcp.dstport')}")
    sport = first(syn, "tcp.srcport")
    check(first(f"tcp && !(tcp.port == 20886 && tcp.port == {sport})", "frame.number") == "",
          f"a TCP segment not between ports 20886 and {sport}")
finish("mpa_tcp_programs")
