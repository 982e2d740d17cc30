// Running a verbs program (sim/program_loader.h loads it) on a simulated thread.
//
// A program runs in the simulator's own process, so what it does to that process is caught
// where it can be (docs/robustness.md, "Programs that misbehave"): while a program's thread
// runs, a fault signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT from abort()) or a call of
// exit/_exit/_Exit ends that program, not rnicsim; its static constructors run inside the same
// guard (the file is loaded on the program's thread). An exception out of rnic_main ends it too.
#pragma once

#include <string>
#include <vector>

namespace rnic::traffic {

// How a program's run ended.
struct ProgramEnd {
  enum Kind { kNotRun, kReturned, kExited, kSignal, kException } kind = kNotRun;
  int code = 0;             // kReturned, kExited: its exit code; kSignal: the signal number
  std::string what;         // kException: its text; kSignal: why rnicsim sent it, if it did
  std::string last_stderr;  // an executable's: the last line it wrote to its stderr
  bool at_load = false;     // it ended while loading (its static constructors), before rnic_main
  bool failed() const { return kind == kNotRun || at_load || code != 0 || abnormal(); }
  bool abnormal() const { return kind == kSignal || kind == kException; }
  // "exit 7", "exit(7)", "killed by SIGSEGV (signal 11)", "threw: ...", with " while loading
  // (a static constructor)" when it did so at load.
  std::string describe() const;
};

// Loads `path` and runs it as `path args...` on the calling simulated thread, inside the guard
// above. A load error is a kException. SystemC's unwind of a killed thread passes through.
ProgramEnd run_program(const std::string& path, const std::vector<std::string>& args);

}  // namespace rnic::traffic
