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
#pragma once

#include <string>
#include <vector>

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

struct ExecRun {
  std::vector<std::string> argv;  // argv[0]: the resolved executable
  std::string out_file, err_file;
  // The CPU time the process may spend between two calls (sim.spin_guard_s; 0: no limit): past
  // it the process is killed and the run ends.
  double cpu_limit_s = 10;
};

// Starts the process and serves its calls on the calling simulated thread (bound to a host and
// a simulated process) until it ends. A failure to start is a kException.
traffic::ProgramEnd run_exec(const ExecRun& r);

}  // namespace rnic::exec
