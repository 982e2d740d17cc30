// Verbs programs in files of their own (docs/verbs.md, "Programs"): a shared object with an
// `rnic_main` entry (RNIC_PROGRAM in verbs.h), loaded once per simulated process so that each
// has its own copy of the program's globals: each load opens a private copy of the file. The
// program's verbs and rnic_* calls, and its free and munmap, resolve to the simulator's own
// (rnicsim exports them).
#pragma once

#include <string>
#include <vector>

namespace rnic::traffic {

struct LoadedProgram {
  void* handle = nullptr;
  int (*main)(int, char**) = nullptr;
};

// Loads a private copy of the shared object at `path` (throws std::runtime_error naming the
// file and the loader's reason).
LoadedProgram load_program(const std::string& path);

// Runs it as `path args...` on the calling simulated process; returns its exit code.
int run_program(const LoadedProgram& p, const std::string& path,
                const std::vector<std::string>& args);

}  // namespace rnic::traffic
