// The waveform of a run: `--trace fst` writes OUT/trace.fst with the models' signals and
// OUT/trace.gtkw, GTKWave's save file grouping them by block, `--trace-window T0:T1` (ns; either
// end may be left out) limits it in time, `--trace-scope PATTERN` (a glob over "scope.name") in
// space. Over several processes each rank writes the waveform of its own hosts beside it, and
// rank 0 merges them into OUT/trace.fst once the run is over (sim/fst_merge.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  // Closes the file; over several processes (a collective call: every rank makes it, once) rank 0
  // then merges the ranks' files into one. Returns what went wrong ("" if nothing did).
  std::string close();
  const std::string& path() const { return path_; }
  // OUT/trace.gtkw: GTKWave's save file for trace.fst, a group per block (FstTrace::write_gtkw);
  // once the file is closed, a closed group more for each scope of the Verilated blocks' (their
  // ports, then their internals, as the file holds them).
  const std::string& gtkw_path() const { return gtkw_path_; }
  size_t signals() const { return signals_; }  // every rank's
  bool opened() const { return opened_; }

 private:
  void window(Background& bg);
  void check_scope() const;  // a scope that matches no signal is refused (InputError)
  void write_gtkw(const std::vector<FstTrace::Sig>& sigs);
  // The save file again with the RTL's groups read from the closed file (none: as it is).
  std::string add_rtl_groups();
  FstTrace fst_;
  std::vector<FstTrace::Sig> gtkw_sigs_;  // what the save file lists (every rank's, on rank 0)
  std::string scope_;
  std::string path_, gtkw_path_;
  std::string part_;                // over several processes: this rank's file
  std::vector<std::string> hosts_;  // every host's name, by index (the merged file's order)
  size_t signals_ = 0;
  uint64_t t0_ps_, t1_ps_;
  bool opened_ = false;
};

// Parses "T0:T1" in ns (either may be empty: from the start, to the end); throws InputError
// naming `key`.
void parse_trace_window(const std::string& text, const std::string& where, uint64_t* t0_ps,
                        uint64_t* t1_ps, const char* key = "trace_window");

}  // namespace rnic
