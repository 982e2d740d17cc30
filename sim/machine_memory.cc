#include "sim/machine_memory.h"

#include <sys/resource.h>

#include <fstream>
#include <sstream>

namespace rnic {

namespace {

// A "Key:   N kB" line of a /proc file, in bytes; UINT64_MAX when absent.
uint64_t proc_kb(const char* file, const std::string& key) {
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size() + 1, key + ":") != 0) continue;
    std::istringstream s(line.substr(key.size() + 1));
    uint64_t kb = 0;
    if (s >> kb) return kb * 1024;
  }
  return UINT64_MAX;
}

}  // namespace

MachineMemory machine_memory() {
  MachineMemory m;
  const uint64_t avail = proc_kb("/proc/meminfo", "MemAvailable");
  if (avail != UINT64_MAX) {
    m.bytes = avail;
    m.bound = "MemAvailable in /proc/meminfo";
  }
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
    const uint64_t mapped = proc_kb("/proc/self/status", "VmSize");
    const uint64_t used = mapped == UINT64_MAX ? 0 : mapped;
    const uint64_t left = uint64_t(r.rlim_cur) > used ? uint64_t(r.rlim_cur) - used : 0;
    if (left < m.bytes) {
      m.bytes = left;
      m.bound = "the process's address-space limit (ulimit -v)";
    }
  }
  return m;
}

}  // namespace rnic
