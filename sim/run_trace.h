// The waveform of a run: `--trace fst` writes OUT/trace.fst with the models' signals and
// OUT/trace.gtkw, GTKWave's save file grouping them by block, `--trace-window T0:T1` (ns; either
// end may be left out) limits it in time, `--trace-scope PATTERN` (a glob over "scope.name") in
// space.
#pragma once

#include <cstdint>
#include <string>

#include "sim/fst_trace.h"
#include "sim/scenario.h"

namespace rnic {

struct HostCard;
class Cluster;
class Background;

class RunTrace {
 public:
  RunTrace(const OutputSpec& o, const std::string& out_dir);
  // Registers the system's signals and opens/closes the file at the window's ends.
  void attach(HostCard& sys);
  void attach(Cluster& sys);
  void close() { fst_.close(); }
  const std::string& path() const { return path_; }
  // OUT/trace.gtkw: GTKWave's save file for trace.fst, a group per block (FstTrace::write_gtkw).
  const std::string& gtkw_path() const { return gtkw_path_; }
  size_t signals() const { return fst_.signals(); }
  bool opened() const { return opened_; }

 private:
  void window(Background& bg);
  void check_scope() const;  // a scope that matches no signal is refused (InputError)
  void write_gtkw();
  FstTrace fst_;
  std::string scope_;
  std::string path_, gtkw_path_;
  uint64_t t0_ps_, t1_ps_;
  bool opened_ = false;
};

// Parses "T0:T1" in ns (either may be empty: from the start, to the end); throws InputError
// naming `key`.
void parse_trace_window(const std::string& text, const std::string& where, uint64_t* t0_ps,
                        uint64_t* t1_ps, const char* key = "trace_window");

}  // namespace rnic
