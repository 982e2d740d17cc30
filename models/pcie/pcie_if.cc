#include "models/pcie/pcie_if.h"

#include <algorithm>

#include "models/common/log.h"

namespace rnic::pcie {

const char* to_string(DmaStatus s) {
  switch (s) {
    case DmaStatus::kOk:
      return "ok";
    case DmaStatus::kUnsupported:
      return "unsupported request";
    case DmaStatus::kAbort:
      return "completer abort";
    case DmaStatus::kTimeout:
      return "completion timeout";
  }
  return "?";
}

PcieIf::PcieIf(sc_core::sc_module_name n, PcieLink& link, const PcieIfParams& cfg,
               StatRegistry& stats)
    : sc_core::sc_module(n),
      link_(link),
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      dmac_(uint64_t(cfg.pcie.mrrs), int(cfg.pcie.tags)),
      mmio_reads_(stats.group(name()).counter("mmio_reads", "TLPs", "host MRd to a BAR")),
      mmio_writes_(stats.group(name()).counter("mmio_writes", "TLPs", "host MWr to a BAR")),
      mmio_ur_(
          stats.group(name()).counter("mmio_ur", "TLPs", "host accesses answered UR or dropped")),
      dma_reads_(stats.group(name()).counter("dma_read_tlps", "TLPs", "MRd sent")),
      dma_read_bytes_(
          stats.group(name()).counter("dma_read_bytes", "B", "bytes read from the host")),
      dma_writes_(stats.group(name()).counter("dma_write_tlps", "TLPs", "MWr sent")),
      dma_write_bytes_(
          stats.group(name()).counter("dma_write_bytes", "B", "bytes written to the host")),
      dma_errors_(
          stats.group(name()).counter("dma_read_errors", "requests", "DMA reads that failed")),
      cpl_timeouts_(
          stats.group(name()).counter("cpl_timeouts", "TLPs", "MRd without completion in time")),
      read_ns_(stats.group(name()).histogram("dma_read_latency", "ns", "DMA read, request to data",
                                             Histogram::log2_edges(64, 20))) {
  link_.set_receiver(PcieLink::kCard, [this](Tlp&& t) { receive(std::move(t)); });
  SC_HAS_PROCESS(PcieIf);
  SC_METHOD(check_timeouts);
  sensitive << timeout_ev_;
  dont_initialize();
}

void PcieIf::configure(const PcieIfParams& cfg) {
  cfg_ = cfg;
  clk_ = ClockDomain::mhz(cfg.clk_mhz);
  dmac_ = DmacLogic(uint64_t(cfg.pcie.mrrs), int(cfg.pcie.tags));
}

void PcieIf::receive(Tlp&& t) {
  if (t.type == TlpType::kCplD || t.type == TlpType::kCpl) {
    if (!dmac_.outstanding(t.tag)) return;  // late or unexpected completion: dropped
    if (t.type == TlpType::kCpl || t.status != CplStatus::kSc) {
      dmac_.completion(t.tag,
                       t.status == CplStatus::kUr ? DmacStatus::kUnsupported : DmacStatus::kAbort,
                       t.byte_count, nullptr, 0);
    } else {
      dmac_.completion(t.tag, DmacStatus::kOk, t.byte_count, t.data.data(), t.len);
      dma_read_bytes_ += t.len;
    }
    finish_reads();
    issue_pieces();
    return;
  }
  int bar = -1;
  for (int i = 0; i < 6; ++i)
    if (bars_[i].size && t.addr >= bars_[i].base &&
        t.addr + std::max<uint32_t>(t.len, 1) <= bars_[i].base + bars_[i].size)
      bar = i;
  const uint64_t off = bar >= 0 ? t.addr - bars_[bar].base : 0;
  if (t.type == TlpType::kMWr) {
    ++mmio_writes_;
    eq_.at(edge(uint64_t(cfg_.pcie.if_cycles + cfg_.reg_write_cycles)),
           [this, bar, off, t = std::move(t)] {
             if (bar < 0 || !target_ || !target_->reg_write(bar, off, t.data.data(), t.len))
               ++mmio_ur_;
             link_.release(PcieLink::kCard, FcClass::kPosted, t.data_credits());
           });
    return;
  }
  ++mmio_reads_;
  eq_.at(edge(uint64_t(2 * cfg_.pcie.if_cycles + cfg_.reg_read_cycles)),
         [this, bar, off, t = std::move(t)] {
           Tlp c;
           c.tag = t.tag;
           c.requester = t.requester;
           c.byte_count = t.len;
           c.lower_addr = uint8_t(t.addr & 0x7F);
           c.data.resize(t.len);
           if (bar >= 0 && target_ && target_->reg_read(bar, off, t.len, c.data.data())) {
             c.type = TlpType::kCplD;
             c.len = t.len;
           } else {
             ++mmio_ur_;
             c.type = TlpType::kCpl;
             c.status = CplStatus::kUr;
             c.data.clear();
           }
           link_.release(PcieLink::kCard, FcClass::kNonPosted, 0);
           link_.send(PcieLink::kCard, std::move(c));
         });
}

static_assert(int(DmaStatus::kTimeout) == int(DmacStatus::kTimeout) &&
                  int(DmaStatus::kAbort) == int(DmacStatus::kAbort) &&
                  int(DmaStatus::kUnsupported) == int(DmacStatus::kUnsupported),
              "DmaStatus mirrors DmacStatus");

void PcieIf::dma_read(uint64_t addr, uint32_t len, ReadDone done) {
  const uint64_t start = now_ps();
  eq_.at(edge(uint64_t(cfg_.pcie.if_cycles)),
         [this, addr, len, start, done = std::move(done)]() mutable {
           pending_[dmac_.read(addr, len)] = {std::move(done), start};
           issue_pieces();
         });
}

void PcieIf::issue_pieces() {
  for (const DmacLogic::Mrd& m : dmac_.issue(now_ps())) {
    Tlp t;
    t.type = TlpType::kMRd;
    t.addr = m.addr;
    t.len = m.len;
    t.tag = m.tag;
    t.requester = 1;
    ++dma_reads_;
    link_.send(PcieLink::kCard, std::move(t));
  }
  finish_reads();  // 0-byte reads finish as their piece takes a tag
  arm_timeout();
}

// Each finished read's callback runs if_cycles later.
void PcieIf::finish_reads() {
  for (DmacLogic::Finished& f : dmac_.take_finished()) {
    auto it = pending_.find(f.id);
    Pending p = std::move(it->second);
    pending_.erase(it);
    if (f.status != DmacStatus::kOk) ++dma_errors_;
    eq_.at(edge(uint64_t(cfg_.pcie.if_cycles)),
           [this, p = std::move(p), st = DmaStatus(f.status), d = std::move(f.data)]() mutable {
             read_ns_.sample(double(now_ps() - p.start_ps) / 1000.0);
             p.done(st, std::move(d));
           });
  }
}

void PcieIf::arm_timeout() {
  uint64_t oldest = 0;
  if (!dmac_.oldest_issue(&oldest)) {
    timeout_ev_.cancel();
    timeout_armed_ = false;
  } else if (!timeout_armed_) {
    timeout_armed_ = true;
    const uint64_t now = now_ps();
    const uint64_t at = std::min(std::max(oldest + timeout_ps(), now), now + kTimeoutStepPs);
    timeout_ev_.notify(sc_core::sc_time::from_value(at - now));
  }
}

void PcieIf::check_timeouts() {
  timeout_armed_ = false;
  const uint64_t now = now_ps();
  if (now >= timeout_ps()) {
    for (const uint16_t tag : dmac_.expire_issued_by(now - timeout_ps())) {
      ++cpl_timeouts_;
      log::warn("{}: completion timeout, tag {}", name(), tag);
    }
  }
  finish_reads();
  issue_pieces();
}

void PcieIf::dma_write(uint64_t addr, std::vector<uint8_t> data) {
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
    for (auto& t : tlps) {
      ++dma_writes_;
      dma_write_bytes_ += t.len;
      link_.send(PcieLink::kCard, std::move(t));
    }
  });
}

void PcieIf::msi(uint64_t addr, uint32_t data) {
  std::vector<uint8_t> d(4);
  for (int i = 0; i < 4; ++i) d[i] = uint8_t(data >> (8 * i));
  dma_write(addr, std::move(d));
}

}  // namespace rnic::pcie
