// One FST file for the Verilated blocks' internals and the models' signals (DESIGN.md §6).
//
// Verilated blocks register themselves on the VerilatedFstSc through their trace(); this class
// registers the models' signals on the same file through Verilator's trace callbacks (init:
// declare the signals under a scope; full and change: dump their values), so both sit in one
// hierarchy with one time base. Add every signal before open(); the file is written on every
// SystemC time step.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/ports.h"
#include "models/common/trace_sink.h"

class VerilatedFstSc;

namespace rnic {

class FstTrace : public TraceSink {
 public:
  FstTrace();
  ~FstTrace();

  VerilatedFstSc& file() { return *file_; }

  using TraceSink::add;  // a model signal (trace_sink.h)
  // Any value of `bits` bits, read into 32-bit words (least significant first). Signals whose
  // "scope.name" does not match the scope filter are left out.
  void add_raw(const std::string& scope, const std::string& name, int bits,
               std::function<void(uint32_t*)> read) override;
  void add_verilated(std::function<void(VerilatedFstSc&)> register_block) override {
    verilated_.push_back(std::move(register_block));
  }
  // A glob (fnmatch) over "scope.name"; empty: everything.
  void set_scope_filter(std::string pattern) { filter_ = std::move(pattern); }
  size_t signals() const { return sigs_.size(); }
  // Nothing registered: the file would hold no variable.
  bool empty() const { return sigs_.empty() && verilated_.empty(); }
  bool is_open() const;

  // Opens the file (after elaboration: call sc_start(SC_ZERO_TIME) first).
  void open(const std::string& path);
  // A GTKWave save file for the model signals registered so far: one group per scope (each
  // block's boundary: an engine's channels, an EFE channel, a MAC, a PCIe link end), in the
  // order they were registered, counts in decimal, 1-bit signals as bits. dump_file: the FST's
  // name as the save file should refer to it. Throws std::runtime_error if it cannot write.
  void write_gtkw(const std::string& path, const std::string& dump_file) const {
    write_gtkw(sigs_, path, dump_file);
  }
  // RTL groups after the models' (scope, its variables as the save file names them).
  using Groups = std::vector<std::pair<std::string, std::vector<std::string>>>;
  void close();

 public:
  // One model signal in the file (the code Verilator's tracer gave it).
  struct Sig {
    std::string scope, name;
    int bits;
    std::function<void(uint32_t*)> read;
    uint32_t code = 0;
  };
  const std::vector<Sig>& sigs() const { return sigs_; }
  // The save file for these signals (their scope, name and bits), as above.
  static void write_gtkw(const std::vector<Sig>& sigs, const std::string& path,
                         const std::string& dump_file, const Groups& rtl = {});

 private:
  static void init_cb(void* self, void* tracep, uint32_t code);
  static void full_cb(void* self, void* bufp);
  static void chg_cb(void* self, void* bufp);

  std::unique_ptr<VerilatedFstSc> file_;
  std::vector<Sig> sigs_;
  std::vector<std::function<void(VerilatedFstSc&)>> verilated_;
  std::string filter_;
};

}  // namespace rnic
