// An executable as it ships (ibv_devinfo, a user's own verbs program with a main) run as a
// simulated process: a real operating-system process that rnicsim starts, whose verbs calls
// the simulated card of its host serves in simulated time (docs/verbs.md, "Your own
// programs"). The preload library (sim/exec/exec_preload.cc) interposes over rdma-core's
// libibverbs and sends each call here (sim/exec/exec_abi.h); the process's simulated thread
// performs it with the verbs library, as an in-process program's call, and answers. The process
// runs only while its thread waits for its next call (lockstep), so its computing between calls
// takes no simulated time, and what it does cannot depend on the machine's load.
//
// Started with address-space randomisation off, a fixed environment (PATH, HOME, LANG and the
// preload library), stdin from /dev/null, stdout and stderr to files, in a process group of its
// own that dies with rnicsim; reaped (the group killed first) however its run ends.
//
// Its environment is simulated where a run's outcome could depend on it: the clock
// (gettimeofday, clock_gettime, time) reads simulated time, kept in the process between calls
// and advanced cost.clock_read_ns by each read (the simulator spends what the reads added before
// serving the next call), from 2026-01-01 00:00:00 UTC at time 0; getpid is a pid of its own;
// sleeps (nanosleep, usleep, sleep) are simulated; TCP sockets to the scenario's hosts, by name
// or address, go over the management network (sim/exec/mgmt_net.h).
//
// Busy polling: a process polls its CQ in a loop, each ibv_poll_cq a call. After
// kEmptyPollsBeforeWait empty polls of one CQ in a row, with no other call between, the next
// empty poll waits in simulated time for that CQ's next completion, up to sim.exec_quantum_ns,
// as the loop would see it (at the first cost.cq_poll_ns step after it lands), and returns it:
// the same completion at the same simulated time for far fewer calls. What the loop does
// between polls without a call (another CQ's polls are calls and break the run) is seen up to
// one quantum late.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/common/bytes.h"
#include "models/common/stats.h"
#include "sim/exec/cm_net.h"
#include "sim/exec/mgmt_net.h"
#include "sim/traffic/program.h"

namespace rnic::exec {

// The PATH an executable is looked up on, and that it runs with.
constexpr const char* kPath = "/usr/local/bin:/usr/bin:/bin";

// The executable a scenario's `exec:` names: a path with a '/' as it is, else the first match on
// kPath. "" with *why set when there is none or it is not executable.
std::string resolve_executable(const std::string& name, std::string* why);

// The preload library: beside the rnicsim binary (a build tree), else in its
// ../lib/rnicsim/ (an installed one). "" if neither has it.
std::string preload_library();

constexpr int kEmptyPollsBeforeWait = 4;

struct ExecRun {
  std::vector<std::string> argv;  // argv[0]: the resolved executable
  std::string out_file, err_file;
  // The CPU time the process may spend between two calls (sim.spin_guard_s; 0: no limit): past
  // it the process is killed and the run ends.
  double cpu_limit_s = 10;
  // Its environment: the pid it sees (getpid), what a clock read costs it (cost.clock_read_ns),
  // its host's address on the management network and the network, and the hosts by name.
  int64_t quantum_ns = 10000;  // sim.exec_quantum_ns
  int vpid = 1000;
  int64_t clock_read_ns = 20;
  int64_t cpu_mhz = 3000;  // host.cpu_mhz: its cycle counter's rate
  uint32_t ip = 0;
  std::string host;  // its host's name (gethostname, uname)
  MgmtNet* net = nullptr;
  CmNet* cm = nullptr;  // librdmacm's connection manager (one per run, like net)
  MacAddr mac{};        // its host's card
  std::function<bool(uint32_t ip, MacAddr* mac)> mac_of_ip;  // a host's card, by its address
  std::function<uint32_t(const std::string&)> host_ip;       // a host's address (0: none)
  std::function<std::string(uint32_t ip)> host_name;         // the host at an address ("": none)
  // Statistics (the run's "exec" group): calls served, and simulated time slept or spent on
  // clock reads, counted every sleep_slice_ns of it (a process sleeping or timing itself is not
  // a hung run: the watchdog sees it move).
  Counter* calls = nullptr;
  Counter* slept_us = nullptr;
  Counter* clock_us = nullptr;       // simulated time spent on clock reads between calls
  Counter* spins = nullptr;          // spins on memory the process was seen in (kSpin)
  Counter* start_wait_us = nullptr;  // simulated time waited for start_us (set by the caller)
  // Looks of waits with no end of their own at the process's kernel's descriptors
  // (exec::kLookAgain), and the simulated time they slept: not progress (not in calls, slept_us).
  Counter* looks = nullptr;
  Counter* looked_us = nullptr;
  uint64_t sleep_slice_ns = 25000000;
};

// Starts the process and serves its calls on the calling simulated thread (bound to a host and
// a simulated process) until it ends. A failure to start is a kException.
traffic::ProgramEnd run_exec(const ExecRun& r);

}  // namespace rnic::exec
