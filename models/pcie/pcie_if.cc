#include "models/pcie/pcie_if.h"

#include <algorithm>

#include "sim/log.h"

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

PcieIf::PcieIf(sc_core::sc_module_name n, PcieLink& link, const SystemConfig& cfg,
               StatRegistry& stats)
    : sc_core::sc_module(n),
      link_(link),
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.core.clk_mhz)),
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

void PcieIf::configure(const SystemConfig& cfg) {
  cfg_ = cfg;
  clk_ = ClockDomain::mhz(cfg.core.clk_mhz);
}

void PcieIf::receive(Tlp&& t) {
  if (t.type == TlpType::kCplD || t.type == TlpType::kCpl) {
    auto it = tags_.find(t.tag);
    if (it == tags_.end()) return;  // late or unexpected completion: dropped
    Outstanding& o = it->second;
    if (t.type == TlpType::kCpl || t.status != CplStatus::kSc) {
      complete_piece(t.tag,
                     t.status == CplStatus::kUr ? DmaStatus::kUnsupported : DmaStatus::kAbort);
      return;
    }
    // Place this completion's bytes at their offset in the piece.
    const uint32_t off = o.piece.len - t.byte_count;
    std::copy(t.data.begin(), t.data.end(),
              o.piece.read->data.begin() + (o.piece.addr - o.piece.read->addr) + off);
    o.received += t.len;
    dma_read_bytes_ += t.len;
    if (t.byte_count == t.len) complete_piece(t.tag, DmaStatus::kOk);
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
    eq_.at(edge(uint64_t(cfg_.pcie.if_cycles + cfg_.core.reg_write_cycles)),
           [this, bar, off, t = std::move(t)] {
             if (bar < 0 || !target_ || !target_->reg_write(bar, off, t.data.data(), t.len))
               ++mmio_ur_;
             link_.release(PcieLink::kCard, FcClass::kPosted, t.data_credits());
           });
    return;
  }
  ++mmio_reads_;
  eq_.at(edge(uint64_t(2 * cfg_.pcie.if_cycles + cfg_.core.reg_read_cycles)),
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

void PcieIf::dma_read(uint64_t addr, uint32_t len, ReadDone done) {
  auto* r =
      new Read{addr, len, 0, DmaStatus::kOk, std::vector<uint8_t>(len), std::move(done), now_ps()};
  const uint64_t mrrs = uint64_t(cfg_.pcie.mrrs);
  std::vector<Piece> pieces;
  for (uint64_t a = addr, end = addr + len; a < end;) {
    const uint64_t stop = std::min({end, a + mrrs, (a / 4096 + 1) * 4096});
    pieces.push_back({r, a, uint32_t(stop - a)});
    a = stop;
  }
  if (len == 0) pieces.push_back({r, addr, 0});
  r->pieces_left = uint32_t(pieces.size());
  eq_.at(edge(uint64_t(cfg_.pcie.if_cycles)), [this, pieces = std::move(pieces)] {
    waiting_.insert(waiting_.end(), pieces.begin(), pieces.end());
    issue_pieces();
  });
}

void PcieIf::issue_pieces() {
  while (!waiting_.empty() && int64_t(tags_.size()) < cfg_.pcie.tags) {
    Piece p = waiting_.front();
    waiting_.pop_front();
    while (tags_.count(next_tag_)) ++next_tag_;
    const uint16_t tag = next_tag_++;
    const uint64_t deadline = now_ps() + uint64_t(cfg_.pcie.cpl_timeout_us) * 1000000;
    tags_[tag] = {p, 0, deadline};
    deadlines_.push_back({deadline, tag});
    if (p.len == 0) {  // a zero-length read needs no TLP
      complete_piece(tag, DmaStatus::kOk);
      continue;
    }
    Tlp t;
    t.type = TlpType::kMRd;
    t.addr = p.addr;
    t.len = p.len;
    t.tag = tag;
    t.requester = 1;
    ++dma_reads_;
    link_.send(PcieLink::kCard, std::move(t));
  }
  arm_timeout();
}

void PcieIf::arm_timeout() {
  auto live = [this](const std::pair<uint64_t, uint16_t>& d) {
    auto it = tags_.find(d.second);
    return it != tags_.end() && it->second.deadline_ps == d.first;
  };
  while (!deadlines_.empty() && !live(deadlines_.front())) deadlines_.pop_front();
  if (deadlines_.empty()) {
    timeout_ev_.cancel();
    timeout_armed_ = false;
  } else if (!timeout_armed_) {
    timeout_armed_ = true;
    const uint64_t now = now_ps();
    const uint64_t at = std::min(std::max(deadlines_.front().first, now), now + kTimeoutStepPs);
    timeout_ev_.notify(sc_core::sc_time::from_value(at - now));
  }
}

void PcieIf::check_timeouts() {
  timeout_armed_ = false;
  while (!deadlines_.empty() && deadlines_.front().first <= now_ps()) {
    const auto [deadline, tag] = deadlines_.front();
    deadlines_.pop_front();
    auto it = tags_.find(tag);
    if (it == tags_.end() || it->second.deadline_ps != deadline) continue;
    ++cpl_timeouts_;
    log::warn("{}: completion timeout, tag {}", name(), tag);
    complete_piece(tag, DmaStatus::kTimeout);
  }
  arm_timeout();
}

void PcieIf::complete_piece(uint16_t tag, DmaStatus st) {
  auto it = tags_.find(tag);
  Read* r = it->second.piece.read;
  tags_.erase(it);
  if (st != DmaStatus::kOk && r->status == DmaStatus::kOk) r->status = st;
  if (--r->pieces_left == 0) {
    if (r->status != DmaStatus::kOk) {
      ++dma_errors_;
      r->data.clear();
    }
    eq_.at(edge(uint64_t(cfg_.pcie.if_cycles)), [this, r] {
      read_ns_.sample(double(now_ps() - r->start_ps) / 1000.0);
      r->done(r->status, std::move(r->data));
      delete r;
    });
  }
  issue_pieces();
}

void PcieIf::dma_write(uint64_t addr, std::vector<uint8_t> data) {
  const uint64_t mps = uint64_t(cfg_.pcie.mps);
  std::vector<Tlp> tlps;
  for (uint64_t a = addr, end = addr + data.size(); a < end;) {
    const uint64_t stop = std::min({end, a + mps, (a / 4096 + 1) * 4096});
    Tlp t;
    t.type = TlpType::kMWr;
    t.addr = a;
    t.len = uint32_t(stop - a);
    t.data.assign(data.begin() + (a - addr), data.begin() + (stop - addr));
    tlps.push_back(std::move(t));
    a = stop;
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
