#!/usr/bin/python3
"""Executables run as simulated processes (`exec:`; docs/verbs.md, "Your own programs"): Debian's
ibv_devices and ibv_devinfo -v, as they ship, list the simulated card; Debian's ibv_rc_pingpong
(scenarios/examples/ibv_rc_pingpong.yaml: TCP over the management network, its clock simulated)
completes 1000 round trips of 4096 bytes and reports a usec/iter within 5% of the in-process
examples/rc_pingpong's on the same card and size, the same in two runs; Debian's ib_write_bw and
ib_send_lat (scenarios/examples/perftest.yaml: their cycle counter simulated) report a BW average
within 2% of `rnicsim perf write_bw -s 65536 -n 1000` and a t_typical within 5% of `rnicsim perf
send_lat -s 2 -n 1000`, ib_write_lat (it spins on its buffer between calls) a t_typical within 5%
of `rnicsim perf write_lat -s 2 -n 1000` with each of its 2000 spins seen; ib_send_bw -R and
ib_write_bw -R (scenarios/examples/perftest_rdma_cm.yaml: connected through librdmacm) report a
BW average within 2% of `rnicsim perf send_bw`/`write_bw`, the same in two runs; Debian's rping
(scenarios/examples/rping.yaml: librdmacm from three threads a side) completes 100 ping-pongs,
the same in two runs; ib_write_bw --odp moves the page-fault counters in stats.json; Debian's
ibv_srq_pingpong (scenarios/examples/ibv_srq_pingpong.yaml: 16 QPs a side on one shared receive
queue) completes with every buffer checked; an executable of the
project's own with a main (testbench/system/programs/exec_verbs.c, linked with -libverbs) moves
data between two hosts through the card, which reads and writes the processes' own memory (heap
and stack); two runs give the same results.json and stats.json; a process that exits non-zero,
faults, spins on the CPU, forks or passes a forged object gets its answer, with its status and last
stderr line in results.json and no process left behind; a missing or non-executable program is
refused before the run (exit 2); alarm and setitimer run in simulated time (a timer ends a loop
of clock reads, cuts a sleep short and ends a poll; ppoll's mask holds it off), and so do poll, ppoll, select, pselect and epoll (epoll_pwait2
too, to the nanosecond) on sockets, copies of their descriptors (dup), non-blocking sockets
(fcntl, SOCK_NONBLOCK), the vectored and addressed sends and receives, getpeername, getsockname, shutdown, non-blocking connects, MSG_PEEK, MSG_WAITALL and
SO_ERROR, and epoll registrations of copied descriptors and copies of an instance; completion
and rdma_cm event channels' descriptors poll in simulated time, non-blocking ones answer EAGAIN;
waits on no descriptor or on the kernel's only keep simulated time, and so do clock_nanosleep and
threads' timed waits on condition variables, semaphores, mutexes and joins; a timer's signal ends a blocking
accept, connect or recv (EINTR) unless its handler restarts them;
a wait with no timeout on a descriptor nothing writes ends the run with where it waits;
every acceptance binary (ibverbs-utils, perftest, rping) loads
and prints its usage as a simulated process."""
import os
import shutil
import stat
import subprocess
import sys

from common import check, finish, host_entry, load, out_dir, rnicsim, strip_wall, text, write_file

binary, work = sys.argv[1], out_dir(sys.argv[2], "exec_programs")
build = os.path.dirname(binary)
prog = os.path.join(build, "testbench", "system", "exec_verbs")


def leftovers():
    """Processes of this check still alive (the test program's path in their command line)."""
    p = subprocess.run(["pgrep", "-f", prog], capture_output=True, text=True)
    return p.stdout.split()


def run(name, text, *extra, expect=0, out=None, timeout=None):
    s = write_file(work, name + ".yaml", text)
    o = os.path.join(work, out or name)
    p = rnicsim(binary, "run", s, "--out", o, "--quiet", *extra, expect=expect, timeout=timeout)
    check(not leftovers(), f"{name}: processes left behind: {leftovers()}")
    return p, o


# Debian's ibverbs-utils, unmodified: the device list and the device's attributes.
if shutil.which("ibv_devinfo"):
    p, o = run("devices", "workloads:\n  - {name: devices, exec: [ibv_devices], hosts: [node0]}\n"
               "  - {name: devinfo, exec: [ibv_devinfo, -v], hosts: [node1]}\n")
    out = text(os.path.join(o, "node0", "devices.out"))
    check("rnic0" in out and "000000fffe000001" in out, f"ibv_devices: {out!r}")
    info = text(os.path.join(o, "node1", "devinfo.out"))
    for want in ("hca_id:\trnic0", "transport:\t\t\tiWARP (1)", "node_guid:\t\t\t0000:00ff:fe00:0002",
                 "ODP_SUPPORT", "state:\t\t\tPORT_ACTIVE (4)", "link_layer:\t\tEthernet"):
        check(want in info, f"ibv_devinfo -v lacks {want!r}: {info[:2000]!r}")
else:
    check(False, "ibv_devinfo is not installed (./scripts/setup installs ibverbs-utils)")

# Every acceptance binary loads under the preload library (its libibverbs, librdmacm and
# providers resolved) and runs as a simulated process: its usage text, a plain exit.
helps = [("ibv_devinfo", "--help"), ("ibv_rc_pingpong", "-h"), ("ibv_srq_pingpong", "-h"),
         ("ib_write_bw", "--help"), ("ib_send_bw", "--help"), ("ib_write_lat", "--help"),
         ("ib_send_lat", "--help"), ("rping", "-h")]
missing = [b for b, _ in helps if not shutil.which(b)]
check(not missing, f"not installed (./scripts/setup installs them): {missing}")
if not missing:
    yaml = "workloads:\n" + "".join(f"  - {{name: {b}, exec: [{b}, '{f}'], hosts: [node0]}}\n"
                                     for b, f in helps)
    p, o = run("helps", yaml, expect=1)
    for (b, _), w in zip(helps, load(os.path.join(o, "results.json"))["workloads"]):
        h = w["hosts"][0]
        said = text(os.path.join(o, "node0", b + ".out")) + text(os.path.join(o, "node0", b + ".err"))
        check("exit" in h and "signal" not in h and "stopped" not in h, f"{b}: {h}")
        check("usage" in said.lower() or f"{b} -s" in said, f"{b}'s usage: {said[:300]!r}")

# Debian's ibv_rc_pingpong against the in-process example, same card and size; twice, the same.
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
scen = os.path.join(root, "scenarios", "examples", "ibv_rc_pingpong.yaml")
outs = []
for n in ("rc_pingpong", "rc_pingpong_again"):
    o = os.path.join(work, n)
    rnicsim(binary, "run", scen, "--out", o, "--quiet")
    outs.append(o)
    check(not leftovers() and not subprocess.run(["pgrep", "-x", "ibv_rc_pingpong"]).returncode == 0,
          "ibv_rc_pingpong processes left behind")
line = [l for l in text(os.path.join(outs[0], "node0", "pingpong.out")).splitlines() if "usec/iter" in l]
check(len(line) == 1 and line[0].startswith("1000 iters in"), f"ibv_rc_pingpong's client: {line}")
exec_us = float(line[0].split("=")[1].split()[0]) if line else 0
ipp = write_file(work, "inproc.yaml",
                 f"workloads:\n  - program: {os.path.join(build, 'examples', 'rc_pingpong.so')}\n"
                 "    hosts: [node1, node0]\n    args: [[server, '1000', '4096'], [client, '1000', '4096']]\n")
p = rnicsim(binary, "run", ipp, "--out", os.path.join(work, "inproc"))
inproc = [l for l in p.stdout.splitlines() if "round trips of 4096 bytes" in l]
inproc_us = float(inproc[0].split(":")[-1].split()[0]) if inproc else 0
check(inproc_us > 0 and abs(exec_us - inproc_us) <= 0.05 * inproc_us,
      f"ibv_rc_pingpong {exec_us} usec/iter against the in-process {inproc_us} us")
print(f"exec_programs: ibv_rc_pingpong {exec_us} usec/iter, in-process rc_pingpong {inproc_us} us")
for f in ("results.json", "stats.json"):
    check(strip_wall(load(os.path.join(outs[0], f))) == strip_wall(load(os.path.join(outs[1], f))),
          f"two ibv_rc_pingpong runs differ in {f}")
for h in ("node0", "node1"):
    check(text(os.path.join(outs[0], h, "pingpong.out")) == text(os.path.join(outs[1], h, "pingpong.out")),
          f"two ibv_rc_pingpong runs print differently on {h}")

# Debian's ibv_srq_pingpong: 16 QPs a side sharing one SRQ, every received buffer checked (-c).
o = os.path.join(work, "srq_pingpong")
rnicsim(binary, "run", os.path.join(root, "scenarios", "examples", "ibv_srq_pingpong.yaml"), "--out", o,
        "--quiet")
check(not subprocess.run(["pgrep", "-f", "/usr/bin/ibv_srq_pingpong"]).returncode == 0,
      "ibv_srq_pingpong processes left behind")
for h in ("node0", "node1"):
    out = text(os.path.join(o, h, "pingpong.out"))
    check(out.count("remote address:") == 16 and "100 iters in" in out,
          f"ibv_srq_pingpong on {h}: {out[-400:]!r}")
    check(host_entry(o, h).get("exit") == 0, f"ibv_srq_pingpong on {h}: {host_entry(o, h)}")

# Debian's perftest against rnicsim's own perf, same card and sizes.
def table_row(path, first):
    rows = [l.split() for l in text(path).splitlines() if l.split()[:1] == [first]]
    return rows[0] if rows else []


o = os.path.join(work, "perftest")
rnicsim(binary, "run", os.path.join(root, "scenarios", "examples", "perftest.yaml"), "--out", o, "--quiet")
check(not subprocess.run(["pgrep", "-x", "ib_write_bw"]).returncode == 0, "ib_write_bw left behind")
wbw = table_row(os.path.join(o, "node0", "write_bw.out"), "65536")
slat = table_row(os.path.join(o, "node0", "send_lat.out"), "2")
wlat = table_row(os.path.join(o, "node0", "write_lat.out"), "2")
st = load(os.path.join(o, "stats.json"))["stats"]
check(st["exec"]["spins"]["value"] == 2000, f"ib_write_lat: spins seen {st['exec']['spins']}")
p = rnicsim(binary, "perf", "write_bw", "-s", "65536", "-n", "1000", "--out", os.path.join(work, "own_bw"),
            "--quiet")
own_bw = load(os.path.join(work, "own_bw", "results.json"))["rows"][0]["bw_avg_mib_s"]
p = rnicsim(binary, "perf", "send_lat", "-s", "2", "-n", "1000", "--out", os.path.join(work, "own_lat"),
            "--quiet")
own_lat = load(os.path.join(work, "own_lat", "results.json"))["rows"][0]["t_typical_us"]
p = rnicsim(binary, "perf", "write_lat", "-s", "2", "-n", "1000", "--out", os.path.join(work, "own_wlat"),
            "--quiet")
own_wlat = load(os.path.join(work, "own_wlat", "results.json"))["rows"][0]["t_typical_us"]
ib_bw = float(wbw[3]) if len(wbw) > 3 else 0
ib_lat = float(slat[4]) if len(slat) > 4 else 0
check(abs(ib_bw - own_bw) <= 0.02 * own_bw, f"ib_write_bw {ib_bw} MB/s against perf write_bw {own_bw} MiB/s")
check(abs(ib_lat - own_lat) <= 0.05 * own_lat, f"ib_send_lat {ib_lat} us against perf send_lat {own_lat} us")
ib_wlat = float(wlat[4]) if len(wlat) > 4 else 0
check(abs(ib_wlat - own_wlat) <= 0.05 * own_wlat,
      f"ib_write_lat {ib_wlat} us against perf write_lat {own_wlat} us")
print(f"exec_programs: ib_write_bw {ib_bw} MB/s, perf write_bw {own_bw} MiB/s; "
      f"ib_send_lat {ib_lat} us, perf send_lat {own_lat} us; "
      f"ib_write_lat {ib_wlat} us, perf write_lat {own_wlat} us")
# perftest through librdmacm (-R): ib_send_bw (iWARP's receive credits need it) and ib_write_bw
# against rnicsim's perf on the same card; the -R path leaves path_mtu to the link, as perf does.
o = os.path.join(work, "perftest_rdma_cm")
rnicsim(binary, "run", os.path.join(root, "scenarios", "examples", "perftest_rdma_cm.yaml"), "--out", o,
        "--quiet")
check(not subprocess.run(["pgrep", "-x", "ib_send_bw"]).returncode == 0, "ib_send_bw left behind")
sbw = table_row(os.path.join(o, "node0", "send_bw.out"), "65536")
rwbw = table_row(os.path.join(o, "node0", "write_bw.out"), "65536")
rnicsim(binary, "perf", "send_bw", "-s", "65536", "-n", "1000", "--out", os.path.join(work, "own_sbw"),
        "--quiet")
own_sbw = load(os.path.join(work, "own_sbw", "results.json"))["rows"][0]["bw_avg_mib_s"]
ib_sbw = float(sbw[3]) if len(sbw) > 3 else 0
ib_rwbw = float(rwbw[3]) if len(rwbw) > 3 else 0
check(abs(ib_sbw - own_sbw) <= 0.02 * own_sbw, f"ib_send_bw -R {ib_sbw} MB/s against perf send_bw {own_sbw}")
check(abs(ib_rwbw - own_bw) <= 0.02 * own_bw, f"ib_write_bw -R {ib_rwbw} MB/s against perf write_bw {own_bw}")
print(f"exec_programs: ib_send_bw -R {ib_sbw} MB/s, perf send_bw {own_sbw} MiB/s; "
      f"ib_write_bw -R {ib_rwbw} MB/s")
cm_yaml = ("workloads:\n  - name: cm\n    exec: [ib_send_bw, -R, -s, '4096', -n, '100']\n"
           "    hosts: [node1, node0]\n    args: [[], [node1]]\n")
cm_runs = [run("cm", cm_yaml)[1], run("cm", cm_yaml, out="cm_again")[1]]
for f in ("results.json", "stats.json"):
    check(strip_wall(load(os.path.join(cm_runs[0], f))) == strip_wall(load(os.path.join(cm_runs[1], f))),
          f"two ib_send_bw -R runs differ in {f}")

# Debian's rping: librdmacm with three threads a side (main, the CM events', the completions');
# 100 ping-pongs, every one's data printed on both sides, both exit 0, and the same twice.
rp = [os.path.join(work, "rping"), os.path.join(work, "rping_again")]
for o in rp:
    rnicsim(binary, "run", os.path.join(root, "scenarios", "examples", "rping.yaml"), "--out", o, "--quiet")
check(not subprocess.run(["pgrep", "-x", "rping"]).returncode == 0, "rping processes left behind")
for h in ("node0", "node1"):
    check(text(os.path.join(rp[0], h, "rping.out")).count("ping data: rdma-ping-") == 100,
          f"rping on {h}: {text(os.path.join(rp[0], h, 'rping.out'))[-300:]!r}")
    check(host_entry(rp[0], h).get("exit") == 0, f"rping on {h}: {host_entry(rp[0], h)}")
for f in ("results.json", "stats.json"):
    check(strip_wall(load(os.path.join(rp[0], f))) == strip_wall(load(os.path.join(rp[1], f))),
          f"two rping runs differ in {f}")

# ib_write_lat's spins are caught by its own accesses, never by when a tick came: two runs, the same.
wl = ("workloads:\n  - name: wlat\n    exec: [ib_write_lat, -s, '2', -n, '100']\n"
      "    hosts: [node1, node0]\n    args: [[], [node1]]\n")
wl_runs = [run("wlat", wl)[1], run("wlat", wl, out="wlat_again")[1]]
for f in ("results.json", "stats.json"):
    check(strip_wall(load(os.path.join(wl_runs[0], f))) == strip_wall(load(os.path.join(wl_runs[1], f))),
          f"two ib_write_lat runs differ in {f}")
check(text(os.path.join(wl_runs[0], "node0", "wlat.out")) == text(os.path.join(wl_runs[1], "node0", "wlat.out")),
      "two ib_write_lat runs print differently")
odp = (f"workloads:\n  - name: odp\n    exec: [ib_write_bw, -s, '65536', -n, '50', --odp]\n"
       "    hosts: [node1, node0]\n    args: [[], [node1]]\n")
p, o = run("odp", odp)
st = load(os.path.join(o, "stats.json"))["stats"]
check(st["node0.driver"]["odp_faults"]["value"] > 0 and st["node1.driver"]["odp_faults"]["value"] > 0,
      "ib_write_bw --odp: no page faults counted")

# Data through the card, into and out of the processes' own memory; twice, the same.
xfer = (f"workloads:\n  - name: xfer\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
        "    args: [[server, '16'], [client, '16']]\n")
p, o = run("xfer", xfer)
check("count 16, 16 blocks of 4096 bytes arrived intact" in text(os.path.join(o, "node1", "xfer.out")),
      "the server's check")
check("wrote 16 blocks" in text(os.path.join(o, "node0", "xfer.out")), "the client's line")
check([h["exit"] for h in load(os.path.join(o, "results.json"))["workloads"][0]["hosts"]] == [0, 0],
      "both exit 0")
# The same through rdma-core's extended verbs (ibv_create_cq_ex, ibv_create_qp_ex, ibv_wr_*).
xfer_ex = xfer.replace("[client, '16']", "[client-ex, '16']")
p, o3 = run("xfer_ex", xfer_ex)
check("count 16, 16 blocks of 4096 bytes arrived intact" in text(os.path.join(o3, "node1", "xfer.out")),
      "the server's check (extended verbs)")
check("wrote 16 blocks and sent the count (extended verbs)" in text(os.path.join(o3, "node0", "xfer.out")),
      "the extended client's line")
p2, o2 = run("xfer", xfer, out="xfer_again")
for f in ("results.json", "stats.json"):
    check(strip_wall(load(os.path.join(o, f))) == strip_wall(load(os.path.join(o2, f))),
          f"two runs differ in {f}")

# The real-time timer in simulated time: 2 ms of 20 ns clock reads, then a 1 s sleep cut at 5 ms,
# a poll with no timeout ended at 3 ms, a ppoll whose mask blocks SIGALRM not ended by it, and
# pause and sigsuspend ended by it.
p, o = run("alarm", "workloads:\n  - {{name: alarm, exec: [{}, alarm], hosts: [node0]}}\n".format(prog))
check("the timer ended the loop after 2000 us (100000 reads); usleep returned -1 (Interrupted "
      "system call) after 5000 us, alarm rang; poll returned -1 (Interrupted system call) after "
      "3000 us, alarm rang; ppoll with SIGALRM masked returned 0 after 1000 us, alarm rang; pause -1 "
      "(Interrupted system call) after 4000 us, alarm rang; sigsuspend -1 after 1000 us, alarm rang"
      in text(os.path.join(o, "node0", "alarm.out")),
      f"alarm: {text(os.path.join(o, 'node0', 'alarm.out'))!r}")

# poll and select on management-network sockets wait in simulated time (a timeout too).
p, o = run("poll", f"workloads:\n  - name: poll\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
           "    args: [[poll-server], [poll-client, node1]]\n")
# ppoll, pselect and epoll_pwait2 wait to the nanosecond of their timeouts; the 20 ns more are the
# clock read that times them (cost.clock_read_ns). The server works on a copy of the connection's
# descriptor (dup) from its first read on, then makes it non-blocking (fcntl). The client writes
# with writev and sendto, the server reads with readv and recvfrom (the client's port, its first
# ephemeral one) and asks getpeername and SO_ERROR.
check("listener ready after 15 us; poll 0 after 1000 us (1 ms timeout), poll 1 after 2029 us more, "
      "select 1 after 2000 us more, ppoll 0 after 500020 ns more (0.5 ms timeout), pselect 0 after "
      "250020 ns more (0.25 ms timeout); non-blocking 1, read -1 (Resource temporarily "
      "unavailable) after 20 ns more; a non-blocking listener's accept -1 (Resource temporarily "
      "unavailable) after 20 ns more, by FIONBIO -1 (Resource temporarily unavailable) after 20 "
      "ns more; from port 40000, peer port 40000, SO_ERROR 0: 'xy'"
      in text(os.path.join(o, "node1", "poll.out")),
      f"poll: {text(os.path.join(o, 'node1', 'poll.out'))!r}")
# epoll too: a one-shot fires once until re-armed, a timeout runs in simulated time, a pipe in
# the same instance is seen, and epoll_ctl's errors are the kernel's.
p, o = run("epoll", f"workloads:\n  - name: epoll\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
           "    args: [[epoll-server], [epoll-client, node1]]\n")
check("epoll: listener after 15 us; none 0 after 1000 us (1 ms timeout); one-shot 1 (data 2) after "
      "2029 us more; 0 after 3000 us more (3 ms timeout, not re-armed); re-armed 1 after 0 us more; "
      "pipe 1 (data 9) after 0 us more; epoll_pwait2 0 after 1500020 ns more (1.5 ms timeout); a "
      "second add: File exists; a delete of one not there: No such file or directory: 'xy'"
      in text(os.path.join(o, "node1", "epoll.out")),
      f"epoll: {text(os.path.join(o, 'node1', 'epoll.out'))!r}")
# getsockname and shutdown: each side's address, a read side shut answers 0 at once, a write
# side shut sends the end of stream and fails later sends with EPIPE (SIGPIPE unless
# MSG_NOSIGNAL), and the kernel's errors; MSG_PEEK leaves a byte in the stream and MSG_WAITALL
# waits for all it asks (two writes 100 us apart). A listener shut down while a thread waits in
# its accept, as Linux's (the same lines natively): SHUT_WR does nothing, SHUT_RDWR ends the
# accept with EINVAL at once, then poll says POLLHUP (0x10) and accept EINVAL.
p, o = run("shutdown", f"workloads:\n  - name: sd\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
           "    args: [[shutdown-server], [shutdown-client, node1]]\n")
check("shutdown client: unbound 0.0.0.0:0, connected 10.0.0.1:40000; SHUT_RD: read 0 after 20 ns; "
      "after SHUT_WR: send -1 (Broken pipe), write -1 (Broken pipe, SIGPIPE 1); unconnected: "
      "Transport endpoint is not connected; how 7: Invalid argument"
      in text(os.path.join(o, "node0", "sd.out")), f"shutdown: {text(os.path.join(o, 'node0', 'sd.out'))!r}")
check("shutdown server: unbound 0.0.0.0:0, listener 0.0.0.0:19995, connection 10.0.0.2:19995; "
      "peek 1 'a' after 30 us, waitall 3 'abc' after 100 us more, then 0; listener: SHUT_WR "
      "Success, SHUT_RDWR Success after 100 us, the waiting accept Invalid argument 100 us after, "
      "poll 1 0x10, accept Invalid argument" in text(os.path.join(o, "node1", "sd.out")),
      f"shutdown: {text(os.path.join(o, 'node1', 'sd.out'))!r}")

# Two processes of one host: the sender's kill and sigqueue (its value too) reach the target,
# whose pause and sigsuspend end at the sender's time (its pid by UDP on the loopback, 15 us,
# then 123 and 7 us of sleeps; they ended at the next 10 us look: 140 and 10 us), sigqueue's
# from the sender's pid; a pid no process has answers ESRCH.
p, o = run("kills", f"workloads:\n  - {{name: kt, exec: [{prog}, kill-target], hosts: [node0]}}\n"
           f"  - {{name: ks, exec: [{prog}, kill-sender], hosts: [node0]}}\n")
check("kill target: pause -1 after 138 us, SIGUSR1 1; sigsuspend -1 after 7 us more, value 42 "
      "from 4001"
      in text(os.path.join(o, "node0", "kt.out")), f"kills: {text(os.path.join(o, 'node0', 'kt.out'))!r}")
check("kill sender: target 4000; kill 0, sigqueue 0, probe 0; pid 5000: -1 (No such process)"
      in text(os.path.join(o, "node0", "ks.out")), f"kills: {text(os.path.join(o, 'node0', 'ks.out'))!r}")

# UDP on the management network (the same lines natively on the loopback, but for the addresses,
# the ports and the time): a ping's pong a round trip later (2 x (15 us + 4 bytes at 1 Gb/s)),
# the source's address and ephemeral port, a datagram cut to 2 bytes (MSG_TRUNC: its length 5),
# recvmsg's source, a connected socket's sends, and the kernel's EACCES and EMSGSIZE.
p, o = run("udp", f"workloads:\n  - name: ud\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
           "    args: [[udp-server], [udp-client, node1]]\n")
check("udp client: SO_TYPE 2; pong 4 'pong' from 10.0.0.2:19990 after 30 us; bound 0.0.0.0:40000; "
      "connected, sent 10; broadcast -1 (Permission denied); 70000 bytes -1 (Message too long)"
      in text(os.path.join(o, "node0", "ud.out")), f"udp: {text(os.path.join(o, 'node0', 'ud.out'))!r}")
check("udp server: ping from 10.0.0.1:40000; truncated 5 'he'; recvmsg 5 'again' from port 40000 "
      "(same 1); poll 1 0x4" in text(os.path.join(o, "node1", "ud.out")),
      f"udp: {text(os.path.join(o, 'node1', 'ud.out'))!r}")

# A listener closed with a connection no accept took resets it, as Linux's (the same line
# natively, but for the time): the reset reaches the client one latency after the close (100 ms
# after the listen, the client connected 2 x 15 us after it), its poll sees POLLIN, POLLERR and
# POLLHUP (0x19), recv fails with ECONNRESET once, then reads the end, and send fails with EPIPE
# (it was an end of stream: 0x11, 0 and a send that went).
p, o = run("reset", f"workloads:\n  - name: rs\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
           "    args: [[reset-server], [reset-client, node1]]\n")
check("reset client: poll 1 0x19 after 99985 us; recv -1 (Connection reset by peer), then 0; send -1 "
      "(Broken pipe); SO_ERROR 0; poll 1 0x15" in text(os.path.join(o, "node0", "rs.out")),
      f"reset: {text(os.path.join(o, 'node0', 'rs.out'))!r}")

# Non-blocking connects: refused after the connect wait (50 us) and the reset's way back (15 us),
# connected after a round trip (2 x 15 us), with the kernel's answers meanwhile and after.
p, o = run("nbconnect", f"set: {{host.mgmt_connect_wait_us: 50}}\nworkloads:\n  - name: nb\n"
           f"    exec: [{prog}]\n    hosts: [node1, node0]\n"
           "    args: [[nbconnect-server], [nbconnect-client, node1]]\n")
check("nbconnect client: refused: connect -1 (Operation now in progress), poll 1 (POLLOUT POLLERR "
      "POLLHUP) after 65 us, SO_ERROR Connection refused, then 0; connected: connect -1 (Operation "
      "now in progress), again: Operation already in progress, send -1 (Resource temporarily "
      "unavailable), getpeername: Transport endpoint is not connected; poll 1 (POLLOUT) after 30 "
      "us, SO_ERROR 0, peer 10.0.0.2:19994, connect again: Transport endpoint is already connected"
      in text(os.path.join(o, "node0", "nb.out")), f"nbconnect: {text(os.path.join(o, 'node0', 'nb.out'))!r}")
check("nbconnect server: read 'z'" in text(os.path.join(o, "node1", "nb.out")),
      f"nbconnect: {text(os.path.join(o, 'node1', 'nb.out'))!r}")

# An epoll registration outlives the descriptor it named while a copy keeps the socket open,
# and a copy of the instance is the same instance (as the kernel's).
p, o = run("epoll_copies", f"workloads:\n  - name: ec\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
           "    args: [[epoll-copy-server], [epoll-copy-client, node1]]\n", timeout=60)
check("epoll copies: 1 (data 5) after 1030 us, 'q'; a delete by the closed descriptor: Bad file "
      "descriptor" in text(os.path.join(o, "node1", "ec.out")),
      f"epoll copies: {text(os.path.join(o, 'node1', 'ec.out'))!r}")

# The descriptors of a completion channel, a context's async events and an rdma_cm event channel
# poll in simulated time: readable when an event is there to get; made non-blocking, their gets
# answer EAGAIN. The client's last Write names a wrong STag: its completion is a remote access
# error, and the server's async_fd polls readable for its QP's access error.
p, o = run("chan_events", f"workloads:\n  - name: xfer\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
           "    args: [[server-events, '16', bad], [client, '16', bad]]\n", timeout=60)
out = text(os.path.join(o, "node1", "xfer.out"))
check("events: ibv_get_cq_event -1 (Resource temporarily unavailable) before any, poll 0; async: -1 "
      "(Resource temporarily unavailable), poll 0" in out and
      "events: epoll 1 (data 7) after 79 us, the event's CQ ours" in out and
      "count 16, 16 blocks of 4096 bytes arrived intact" in out and
      "async: poll 1 (0x1) after 2 us: local access violation work queue error on our QP; then -1 "
      "(Resource temporarily unavailable)" in out, f"completion channel: {out!r}")
check("a Write to a wrong STag: remote access error" in text(os.path.join(o, "node0", "xfer.out")),
      f"completion channel: {text(os.path.join(o, 'node0', 'xfer.out'))!r}")
p, o = run("cm_poll", f"workloads:\n  - name: cm\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
           "    args: [[cm-poll-server], [cm-poll-client, node1]]\n", timeout=60)
check("cm: rdma_get_cm_event -1 (Resource temporarily unavailable) before any; poll 1 after 53 us: "
      "RDMA_CM_EVENT_CONNECT_REQUEST" in text(os.path.join(o, "node1", "cm.out")) and
      "cm: rejected" in text(os.path.join(o, "node0", "cm.out")),
      f"rdma_cm channel: {text(os.path.join(o, 'node1', 'cm.out'))!r}")


def alone(name, mode, want):
    """exec_verbs MODE alone on node0, stopped after 60 s: its output must hold `want`."""
    p, o = run(name, f"workloads:\n  - {{name: {name}, exec: [{prog}, {mode}], hosts: [node0]}}\n",
               timeout=60)
    out = text(os.path.join(o, "node0", name + ".out"))
    check(want in out, f"{mode}: {out!r}")


# Waits on no descriptor, or on the kernel's only, keep simulated time too (they took wall time),
# and so does clock_nanosleep, relative and to an absolute time.
alone("kernel_waits", "kernel-waits",
      "kernel waits: poll(NULL, 0, 5) 0 after 5000 us, select's sleep 0 after 2500 us, a pipe's "
      "poll 0 after 3000 us, epoll 0 after 2000 us, written 1 after 20 ns; clock_nanosleep 0 after "
      "1000 us, to an absolute time 0 after 1500 us")
# Threads' timed waits keep simulated time: deadlines on the simulated clocks (they were past
# on the real ones, so every such wait timed out at once). The post ends the semaphore's wait at
# its own time, 7,500 us in less the main thread's clock reads: 1,499.9 us into the wait.
alone("timed_waits", "timed-waits",
      "timed waits: signalled 0 (flag 1) after 2000 us; Connection timed out after 3000 us more; "
      "monotonic Connection timed out after 1000 us more; sem 0 after 1499 us more; -1 (Connection "
      "timed out) after 500 us more; mutex Connection timed out after 500 us more; join 0")
# The host's identity (the same line natively, with the machine's): its name, lo and eth0 with
# the host's address and its card's MAC, by getifaddrs, if_nametoindex, if_indextoname and a
# socket's SIOCGIF* ioctls (they gave the machine's, whose addresses no simulated host reaches);
# gethostbyname, gethostbyaddr and getnameinfo by the simulated hosts' names (the machine's
# resolver knew none of them).
alone("identity", "identity",
      "identity: node0, uname node0; lo 127.0.0.1/255.0.0.0 loopback, eth0 10.0.0.1/255.0.0.0; "
      "eth0 index 2, index 1 lo; SIOCGIFCONF 0: 2 interfaces; eth0 0 10.0.0.1, hardware 0 "
      "02:00:00:00:00:01; nosuch0: No such device; node1 10.0.0.2, 10.0.0.2 node1, getnameinfo 0 "
      "node1:19990, 10.9.9.9 Name or service not known")

# Another thread's write to a pipe, eventfd_write, close of a pipe's write end and write to a
# pipe polled beside a socket end the waits on them (poll, epoll, poll with a timeout, poll
# with the simulator's socket) at its own time, between two of the waits' 10 us looks (they
# ended at the next look: 1240, 570, 80 and 50 us). The same line natively, but for the times.
alone("fd_wakes", "fd-wakes",
      "fd wakes: pipe 1 after 1234 us, eventfd 1 (5) after 567 us more, hangup 1 (POLLHUP) after "
      "89 us more, beside a socket 1 (pipe POLLIN) after 43 us more")
# Another thread's pthread_cond_signal, sem_post, pthread_kill, kill(getpid()), mutex unlock and
# end end the waits on them at its own time, between two of the waits' 10 us looks (they ended
# at the next look: 1240, 570, 80, 50, 30 and 70 us); kill(getpid()) reaches the thread in
# pause, as natively, not the sender, which does not block the signal; any pid but its own
# answers ESRCH (pid 1 is this machine's init).
alone("exact_wakes", "exact-wakes",
      "exact wakes: cond 0 after 1234 us, sem 0 after 567 us more, pause -1 (Interrupted system "
      "call) after 89 us more, again -1 after 43 us more, SIGUSR1 1, SIGUSR2 1; lock 0 after 29 "
      "us more, join 0 after 71 us more; kill(1, 0) -1 (No such process)")
# A timer's signal ends blocking socket calls (EINTR), unless its handler restarts them.
alone("signal_calls", "signal-calls",
      "signal calls: accept -1 (Interrupted system call) after 2000 us, alarm rang; connect -1 "
      "(Interrupted system call) after 1000 us, alarm rang; with SA_RESTART recv 1 'r' after 3015 us, "
      "alarm rang")

# pause and sigsuspend with no timer pending end at a signal another thread sends (the same lines
# natively, but for the times); a pause that nothing can end ends the run, named, once the
# watchdog's 100 ms pass with nothing else moving (before, it waited in the kernel for ever).
alone("signal_waits", "signal-waits",
      "signal waits: pause -1 (Interrupted system call) after 200 us, SIGUSR1 1; sigsuspend -1 "
      "(Interrupted system call) after 300 us, SIGUSR2 1, SIGUSR1 1 then 1")
p, o = run("pause_alone", f"workloads:\n  - {{name: pa, exec: [{prog}, signal-waits, alone], "
           "hosts: [node0]}\n", expect=1, timeout=60)
check("on node0: still waiting at 100000.000 us in a wait for a signal and nothing is left that "
      "could end it" in p.stderr, f"a pause nothing can end: {p.stderr!r}")
# The same in a process that has had a second thread: the look's settling call is not progress
# either (it was, and the run went on for ever), and the main thread's wait names the process's.
p, o = run("pause_threads", f"workloads:\n  - {{name: pa, exec: [{prog}, signal-waits, "
           "alone-threads], hosts: [node0]}\n", expect=1, timeout=60)
check("on node0: still waiting at 100000.000 us in a wait for a signal and nothing is left that "
      "could end it" in p.stderr, f"a pause nothing can end, after a thread: {p.stderr!r}")

# A wait with no timeout on a pipe nothing writes (poll: beside a listener; epoll: the pipe alone
# left) ends the run with where it waits once nothing else moves: the looks at the pipe are not
# progress (they would run for ever). A second thread that sleeps 300 ms, longer than the
# watchdog's 100 ms, and then writes the pipe ends the same epoll wait: a sleep is progress.
fv = (f"workloads:\n  - name: fv\n    exec: [{prog}]\n    hosts: [node1, node0]\n"
      "    args: [[forever-server, {how}], [forever-client, node1]]\n")
for how, where in (("poll", "poll on sockets"), ("epoll", "a wait on descriptors of its kernel")):
    p, o = run("forever_" + how, fv.format(how=how), expect=1, timeout=60)
    stats = os.path.join(o, "stats.json")
    ex = load(stats)["stats"]["exec"] if p.returncode is not None and os.path.exists(stats) else {}
    check("on node1: still waiting at " in p.stderr and
          f"in {where} and nothing is left that could end it" in p.stderr,
          f"forever ({how}): {p.stderr!r}")
    check(ex and ex["looks"]["value"] >= 10000 and ex["looked_us"]["value"] >= 100000 and
          ex["calls"]["value"] < 20, f"forever ({how}): exec's counters {ex}")
p, o = run("forever_late", fv.format(how="late"))
check("exec_verbs: forever: epoll 1 (data 9) after 300000 us" in text(os.path.join(o, "node1", "fv.out")),
      f"forever (late): {text(os.path.join(o, 'node1', 'fv.out'))!r}")

# What goes wrong: each its answer, named, with the process's status and last stderr line.
one = "workloads:\n  - {{name: {n}, exec: [{prog}, {mode}], hosts: [node0]}}\n"
p, o = run("exits", one.format(n="exits", prog=prog, mode="exit, '3'"), expect=1)
h = host_entry(o, "node0")
check(h.get("exit") == 3 and h.get("stderr_last") == "exec_verbs: leaving with 3", f"exit 3: {h}")
check("workload exits" in p.stderr and "on node0" in p.stderr and "exit 3" in p.stderr,
      f"exit 3's message: {p.stderr!r}")

p, o = run("crash", one.format(n="crash", prog=prog, mode="crash"), expect=1)
h = host_entry(o, "node0")
check(h.get("signal") == 11 and h.get("stderr_last") == "exec_verbs: about to fault", f"crash: {h}")
check("killed by SIGSEGV" in p.stderr and "node0" in p.stderr, f"crash's message: {p.stderr!r}")

p, o = run("spin", one.format(n="spin", prog=prog, mode="spin"), "--set", "sim.spin_guard_s=1",
           expect=1)
h = host_entry(o, "node0")
check(h.get("signal") == 9 and "without a call the simulator serves" in h.get("stopped", ""),
      f"spin: {h}")
check("without a call the simulator serves" in p.stderr, f"spin's message: {p.stderr!r}")

# The same with the spin on a second thread (the process's threads are watched together).
p, o = run("thread_spin", one.format(n="thread_spin", prog=prog, mode="thread-spin"), "--set",
           "sim.spin_guard_s=1", expect=1)
h = host_entry(o, "node0")
check(h.get("signal") == 9 and "without a call the simulator serves" in h.get("stopped", "")
      and h.get("stderr_last") == "exec_verbs: a thread spins", f"thread spin: {h}")

p, o = run("fork", one.format(n="fork", prog=prog, mode="fork"), expect=1)
h = host_entry(o, "node0")
check(h.get("exit") == 125 and "cannot fork" in h.get("stderr_last", ""), f"fork: {h}")
check("fork returned" not in text(os.path.join(o, "node0", "fork.out")), "the fork went ahead")

p, o = run("forged", one.format(n="forged", prog=prog, mode="forged"))
check("forged PD: dealloc 22, reg_mr refused" in text(os.path.join(o, "node0", "forged.out")),
      "a forged PD is refused")

# Refused before the run.
p = rnicsim(binary, "run", write_file(work, "missing.yaml",
                                      "workloads:\n  - {exec: [no_such_program_here], hosts: [node0]}\n"),
            "--out", os.path.join(work, "missing"), expect=2)
check("workloads.exec" in p.stderr and "no_such_program_here" in p.stderr, f"missing: {p.stderr!r}")
plain = write_file(work, "not_exec.txt", "text\n")
os.chmod(plain, stat.S_IRUSR | stat.S_IWUSR)
p = rnicsim(binary, "run", write_file(work, "not_exec.yaml",
                                      f"workloads:\n  - {{exec: [{plain}], hosts: [node0]}}\n"),
            "--out", os.path.join(work, "not_exec"), expect=2)
check("is not an executable file" in p.stderr, f"not executable: {p.stderr!r}")
finish("exec_programs")
