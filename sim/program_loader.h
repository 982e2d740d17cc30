// Loading a verbs program (docs/verbs.md, "Programs"): a shared object with an `rnic_main`
// entry (RNIC_PROGRAM in verbs.h), a private copy per simulated process so that each has its
// own globals; and the check, in a child process, that a file loads as one.
#pragma once

#include <string>

namespace rnic {

struct LoadedProgram {
  void* handle = nullptr;
  int (*main)(int, char**) = nullptr;
};

// Loads a private copy of the shared object at `path` (throws std::runtime_error naming the
// file and the loader's reason: not a shared object, a symbol that does not resolve, no
// rnic_main, an rnic_main that is not a function).
LoadedProgram load_program(const std::string& path);

// Checks in a child process that `path` loads as a program: "" when it does, else the reason.
// The child runs the file's static constructors; one that ends the child (a signal, exit) is
// not a load error: `*ends_at_load` says so, with the reason (a run reports it as that
// program's failure).
std::string check_program(const std::string& path, bool* ends_at_load);

// "SIGSEGV", or "signal N" for a number with no name.
std::string signal_name(int sig);

}  // namespace rnic
