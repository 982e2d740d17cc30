// What this machine can give a run, checked before it starts (a run that outgrows it would end
// at the OOM killer, with no message and no outputs): the kernel's MemAvailable
// (/proc/meminfo) and, when the process has an address-space limit (ulimit -v), what that
// limit leaves beyond the address space already mapped.
#pragma once

#include <cstdint>
#include <string>

namespace rnic {

struct MachineMemory {
  uint64_t bytes = UINT64_MAX;  // UINT64_MAX: unknown (no /proc/meminfo, no limit)
  std::string bound;            // what sets it: "MemAvailable" or the address-space limit
};
MachineMemory machine_memory();

// What the simulator takes while it runs beyond what it holds when the check is made (the
// system is built by then; SystemC's thread stacks, statistics and transient buffers are not),
// besides the simulated memory a run touches. `perf write_bw -s 65536 -n 100` under `ulimit -v`
// runs with 70.3 MiB and runs out with 69.3 MiB, its VmSize at the check being 68.4 MiB: about
// 2 MiB. The bound keeps a wide margin.
constexpr uint64_t kSimulatorBaseBytes = uint64_t(32) << 20;

}  // namespace rnic
