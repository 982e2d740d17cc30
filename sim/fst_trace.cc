#include "sim/fst_trace.h"

#include <fnmatch.h>
#include <systemc.h>  // Verilated SystemC headers expect the global names
#include <verilated.h>
#include <verilated_fst_sc.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "models/common/scheduler.h"

namespace rnic {

FstTrace::FstTrace() {
  Verilated::traceEverOn(true);
  file_ = std::make_unique<VerilatedFstSc>();
  auto* t = file_->spTrace();
  t->addInitCb(reinterpret_cast<VerilatedFst::initCb_t>(&FstTrace::init_cb), this);
  t->addFullCb(reinterpret_cast<VerilatedFst::dumpCb_t>(&FstTrace::full_cb), this);
  t->addChgCb(reinterpret_cast<VerilatedFst::dumpCb_t>(&FstTrace::chg_cb), this);
}

FstTrace::~FstTrace() { close(); }

void FstTrace::add_raw(const std::string& scope, const std::string& name, int bits,
                       std::function<void(uint32_t*)> read) {
  if (!filter_.empty() && fnmatch(filter_.c_str(), (scope + "." + name).c_str(), 0) != 0) return;
  sigs_.push_back({scope, name, bits, std::move(read), 0});
}

void FstTrace::open(const std::string& path) {
  for (auto& f : verilated_) f(*file_);
  Scheduler::get().need_kernel_steps();  // the file is written at each kernel time step
  file_->open(path.c_str());
}

void FstTrace::write_gtkw(const std::vector<Sig>& sigs, const std::string& path,
                          const std::string& dump_file, const Groups& rtl) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error(path + ": cannot write the GTKWave save file");
  std::fprintf(f, "[*] rnicsim: one group per block (docs/debugging.md)\n");
  std::fprintf(f, "[dumpfile] \"%s\"\n[timestart] 0\n[size] 1600 900\n", dump_file.c_str());
  std::fprintf(f, "[signals_width] 360\n[sst_width] 260\n");
  // Scopes in the order their first signal was registered.
  std::vector<std::string> order;
  for (const Sig& g : sigs)
    if (std::find(order.begin(), order.end(), g.scope) == order.end()) order.push_back(g.scope);
  for (const std::string& scope : order) {
    std::fprintf(f, "@800200\n-%s\n", scope.c_str());
    for (const Sig& g : sigs) {
      if (g.scope != scope) continue;
      const std::string full = (scope.empty() ? "" : scope + ".") + g.name;
      if (g.bits == 1)
        std::fprintf(f, "@28\n%s\n", full.c_str());
      else
        std::fprintf(f, "@24\n%s[%d:0]\n", full.c_str(), g.bits - 1);
    }
    std::fprintf(f, "@1000200\n-%s\n", scope.c_str());
  }
  // The Verilated blocks' ports and internals, closed (a block's internals are many).
  for (const auto& [scope, vars] : rtl) {
    std::fprintf(f, "@c00200\n-%s\n", scope.c_str());
    for (const std::string& v : vars)
      std::fprintf(f, "@%s\n%s\n", v.back() == ']' ? "24" : "28", v.c_str());
    std::fprintf(f, "@1401200\n-%s\n", scope.c_str());
  }
  std::fclose(f);
}

bool FstTrace::is_open() const { return file_->isOpen(); }

void FstTrace::close() {
  if (file_ && file_->isOpen()) file_->close();
}

void FstTrace::init_cb(void* self, void* tp, uint32_t code) {
  auto* me = static_cast<FstTrace*>(self);
  auto* tracep = static_cast<VerilatedFst*>(tp);
  for (Sig& s : me->sigs_) {
    s.code = code;
    std::string scope = s.scope;
    for (char& c : scope)
      if (c == '.') c = ' ';
    tracep->pushNamePrefix(scope + ' ');
    if (s.bits == 1) {
      tracep->declBit(code, s.name.c_str(), -1, FST_VD_IMPLICIT, FST_VT_VCD_WIRE, false, -1);
    } else if (s.bits <= 32) {
      tracep->declBus(code, s.name.c_str(), -1, FST_VD_IMPLICIT, FST_VT_VCD_WIRE, false, -1,
                      s.bits - 1, 0);
    } else if (s.bits <= 64) {
      tracep->declQuad(code, s.name.c_str(), -1, FST_VD_IMPLICIT, FST_VT_VCD_WIRE, false, -1,
                       s.bits - 1, 0);
    } else {
      tracep->declArray(code, s.name.c_str(), -1, FST_VD_IMPLICIT, FST_VT_VCD_WIRE, false, -1,
                        s.bits - 1, 0);
    }
    tracep->popNamePrefix(1);  // one push, whatever its depth
    code += uint32_t((s.bits + 31) / 32);
  }
}

namespace {

// Dumps every signal: all of them (full) or those that changed since the last dump.
template <bool kFull>
void dump(std::vector<FstTrace::Sig>& sigs, VerilatedFst::Buffer* b) {
  uint32_t w[64];
  for (FstTrace::Sig& s : sigs) {
    s.read(w);
    uint32_t* old = b->oldp(s.code);
    if (s.bits == 1) {
      if (kFull)
        b->fullBit(old, CData(w[0] & 1));
      else
        b->chgBit(old, CData(w[0] & 1));
    } else if (s.bits <= 32) {
      if (kFull)
        b->fullIData(old, w[0], s.bits);
      else
        b->chgIData(old, w[0], s.bits);
    } else if (s.bits <= 64) {
      const QData q = QData(w[0]) | QData(w[1]) << 32;
      if (kFull)
        b->fullQData(old, q, s.bits);
      else
        b->chgQData(old, q, s.bits);
    } else {
      if (kFull)
        b->fullWData(old, w, s.bits);
      else
        b->chgWData(old, w, s.bits);
    }
  }
}

}  // namespace

void FstTrace::full_cb(void* self, void* bufp) {
  dump<true>(static_cast<FstTrace*>(self)->sigs_, static_cast<VerilatedFst::Buffer*>(bufp));
}

void FstTrace::chg_cb(void* self, void* bufp) {
  dump<false>(static_cast<FstTrace*>(self)->sigs_, static_cast<VerilatedFst::Buffer*>(bufp));
}

}  // namespace rnic
