#include "models/pcie/pcie_if.h"

#include <algorithm>

#include "models/common/log.h"

namespace rnic::pcie {

PcieIf::PcieIf(sc_core::sc_module_name n, PcieLink& link, const PcieIfParams& cfg,
               StatRegistry& stats)
    : sc_core::sc_module(n),
      link_(link),
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      mmio_reads_(stats.group(name()).counter("mmio_reads", "TLPs", "host MRd to a BAR")),
      mmio_writes_(stats.group(name()).counter("mmio_writes", "TLPs", "host MWr to a BAR")),
      mmio_ur_(
          stats.group(name()).counter("mmio_ur", "TLPs", "host accesses answered UR or dropped")),
      dma_reads_(stats.group(name()).counter("dma_read_tlps", "TLPs", "MRd sent")),
      dma_writes_(stats.group(name()).counter("dma_write_tlps", "TLPs", "MWr sent")),
      dma_write_bytes_(
          stats.group(name()).counter("dma_write_bytes", "B", "bytes written to the host")) {
  link_.set_receiver(PcieLink::kCard, [this](Tlp&& t) { receive(std::move(t)); });
}

void PcieIf::configure(const PcieIfParams& cfg) {
  cfg_ = cfg;
  clk_ = ClockDomain::mhz(cfg.clk_mhz);
}

void PcieIf::receive(Tlp&& t) {
  if (t.type == TlpType::kCplD || t.type == TlpType::kCpl) {
    if (completions_) completions_(std::move(t), link_.taken_at());
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

void PcieIf::send(Tlp t) {
  if (t.type == TlpType::kMWr) {
    ++dma_writes_;
    dma_write_bytes_ += t.len;
  } else {
    ++dma_reads_;
  }
  link_.send(PcieLink::kCard, std::move(t));
}

}  // namespace rnic::pcie
