#include "models/rnic/dmac.h"

#include <algorithm>

#include "models/common/log.h"

namespace rnic {

using pcie::Tlp;
using pcie::TlpType;

RnicDmac::RnicDmac(sc_core::sc_module_name n, pcie::PcieIf& pcie, const DmacParams& p,
                   StatRegistry& stats)
    : sc_core::sc_module(n),
      pcie_(pcie),
      cfg_(p),
      clk_(ClockDomain::mhz(p.clk_mhz)),
      logic_(uint64_t(p.pcie.mrrs), int(p.pcie.tags)),
      read_bytes_(stats.group(name()).counter("read_bytes", "B", "bytes read from the host")),
      errors_(stats.group(name()).counter("read_errors", "requests", "DMA reads that failed")),
      cpl_timeouts_(
          stats.group(name()).counter("cpl_timeouts", "TLPs", "MRd without completion in time")),
      read_ns_(stats.group(name()).histogram("read_latency", "ns", "DMA read, request to data",
                                             Histogram::log2_edges(64, 20))) {
  pcie_.set_completion_sink([this](Tlp&& t) { completion(std::move(t)); });
  SC_HAS_PROCESS(RnicDmac);
  SC_METHOD(check_timeouts);
  sensitive << timeout_ev_;
  dont_initialize();
}

void RnicDmac::configure(const DmacParams& p) {
  cfg_ = p;
  clk_ = ClockDomain::mhz(p.clk_mhz);
  logic_ = DmacLogic(uint64_t(p.pcie.mrrs), int(p.pcie.tags));
}

void RnicDmac::completion(Tlp&& t) {
  if (!logic_.outstanding(t.tag)) return;  // late or unexpected completion: dropped
  if (t.type == TlpType::kCpl || t.status != pcie::CplStatus::kSc) {
    logic_.completion(
        t.tag, t.status == pcie::CplStatus::kUr ? DmacStatus::kUnsupported : DmacStatus::kAbort,
        t.byte_count, nullptr, 0);
  } else {
    logic_.completion(t.tag, DmacStatus::kOk, t.byte_count, t.data.data(), t.len);
    read_bytes_ += t.len;
  }
  finish_reads();
  issue_pieces();
}

void RnicDmac::read(uint64_t addr, uint32_t len, ReadDone done) {
  const uint64_t start = now_ps();
  eq_.at(edge(uint64_t(cfg_.pcie.if_cycles)),
         [this, addr, len, start, done = std::move(done)]() mutable {
           pending_[logic_.read(addr, len)] = {std::move(done), start};
           issue_pieces();
         });
}

void RnicDmac::issue_pieces() {
  for (const DmacLogic::Mrd& m : logic_.issue(now_ps())) {
    Tlp t;
    t.type = TlpType::kMRd;
    t.addr = m.addr;
    t.len = m.len;
    t.tag = m.tag;
    t.requester = 1;
    pcie_.send(std::move(t));
  }
  finish_reads();  // 0-byte reads finish as their piece takes a tag
  arm_timeout();
}

// Each finished read's callback runs if_cycles later.
void RnicDmac::finish_reads() {
  for (DmacLogic::Finished& f : logic_.take_finished()) {
    auto it = pending_.find(f.id);
    Pending p = std::move(it->second);
    pending_.erase(it);
    if (f.status != DmacStatus::kOk) ++errors_;
    eq_.at(edge(uint64_t(cfg_.pcie.if_cycles)),
           [this, p = std::move(p), st = f.status, d = std::move(f.data)]() mutable {
             read_ns_.sample(double(now_ps() - p.start_ps) / 1000.0);
             p.done(st, std::move(d));
           });
  }
}

void RnicDmac::arm_timeout() {
  uint64_t oldest = 0;
  if (!logic_.oldest_issue(&oldest)) {
    timeout_ev_.cancel();
    timeout_armed_ = false;
  } else if (!timeout_armed_) {
    timeout_armed_ = true;
    const uint64_t now = now_ps();
    const uint64_t at = std::min(std::max(oldest + timeout_ps(), now), now + kTimeoutStepPs);
    timeout_ev_.notify(sc_core::sc_time::from_value(at - now));
  }
}

void RnicDmac::check_timeouts() {
  timeout_armed_ = false;
  const uint64_t now = now_ps();
  if (now >= timeout_ps()) {
    for (const uint16_t tag : logic_.expire_issued_by(now - timeout_ps())) {
      ++cpl_timeouts_;
      log::warn("{}: completion timeout, tag {}", name(), tag);
    }
  }
  finish_reads();
  issue_pieces();
}

void RnicDmac::write(uint64_t addr, std::vector<uint8_t> data) {
  std::vector<Tlp> tlps;
  for (const DmacSpan& sp : dmac_split(addr, data.size(), uint64_t(cfg_.pcie.mps), false)) {
    Tlp t;
    t.type = TlpType::kMWr;
    t.addr = sp.addr;
    t.len = sp.len;
    t.data.assign(data.begin() + int64_t(sp.addr - addr),
                  data.begin() + int64_t(sp.addr - addr + sp.len));
    tlps.push_back(std::move(t));
  }
  eq_.at(edge(uint64_t(cfg_.pcie.if_cycles)), [this, tlps = std::move(tlps)]() mutable {
    for (auto& t : tlps) pcie_.send(std::move(t));
  });
}

void RnicDmac::msi(uint64_t addr, uint32_t data) {
  std::vector<uint8_t> d(4);
  for (int i = 0; i < 4; ++i) d[i] = uint8_t(data >> (8 * i));
  write(addr, std::move(d));
}

}  // namespace rnic
