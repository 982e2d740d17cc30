#include "models/host/root_complex.h"

#include <algorithm>

#include "models/common/byte_pool.h"
#include "models/common/log.h"
#include "models/common/sim_time.h"
#include "models/host/host_wait.h"

namespace rnic::host {

using pcie::CplStatus;
using pcie::Tlp;
using pcie::TlpType;

RootComplex::RootComplex(sc_core::sc_module_name n, PhysMem& mem, pcie::PcieLink& link,
                         const PcieConfig& pcie, const CostConfig& cost, StatRegistry& stats)
    : sc_core::sc_module(n),
      mem_(mem),
      link_(link),
      pcie_(pcie),
      cost_(cost),
      reads_served_(stats.group(name()).counter("dma_reads", "TLPs", "card MRd served")),
      read_bytes_(stats.group(name()).counter("dma_read_bytes", "B", "bytes returned in CplD")),
      writes_(stats.group(name()).counter("dma_writes", "TLPs", "card MWr into memory")),
      write_bytes_(stats.group(name()).counter("dma_write_bytes", "B", "bytes written to memory")),
      dropped_writes_(stats.group(name()).counter("dropped_writes", "TLPs",
                                                  "card MWr to a hole or past memory")),
      ur_reads_(stats.group(name()).counter("ur_reads", "TLPs", "card MRd answered with UR")),
      unanswered_reads_(stats.group(name()).counter("unanswered_reads", "TLPs",
                                                    "card MRd to a hole left unanswered")),
      msis_(stats.group(name()).counter("msi", "interrupts", "MSI-X writes received")),
      mmio_reads_(stats.group(name()).counter("mmio_reads", "accesses", "CPU MMIO reads")),
      mmio_writes_(stats.group(name()).counter("mmio_writes", "accesses", "CPU MMIO writes")),
      mmio_read_ns_(stats.group(name()).histogram("mmio_read_latency", "ns",
                                                  "CPU MMIO read, issue to retire",
                                                  Histogram::linear_edges(100, 50, 40))) {
  // The link hands the root complex each card TLP when its latency is over (one wake-up for
  // the TLP's arrival and its action).
  link_.set_receiver(
      pcie::PcieLink::kRc, [this](Tlp&& t) { receive(std::move(t)); }, holds());
}

pcie::PcieLink::Hold RootComplex::holds() const {
  return {uint64_t(pcie_.rc_write_latency_ns) * 1000, uint64_t(pcie_.rc_read_latency_ns) * 1000, 0,
          0};
}

void RootComplex::configure(const PcieConfig& pcie, const CostConfig& cost) {
  pcie_ = pcie;
  cost_ = cost;
  link_.set_hold(pcie::PcieLink::kRc, holds());
}

void RootComplex::receive(Tlp&& t) {
  switch (t.type) {
    case TlpType::kMWr:
      write(std::move(t));
      break;
    case TlpType::kMRd:
      serve_read(std::move(t));
      break;
    case TlpType::kCplD:
    case TlpType::kCpl: {
      auto it = pending_.find(t.tag);
      if (it == pending_.end()) break;  // unexpected completion: dropped
      Pending* p = it->second;
      p->status = t.status;
      p->data.insert(p->data.end(), t.data.begin(), t.data.end());
      if (t.type == TlpType::kCpl || t.byte_count == t.len) {
        pending_.erase(it);
        notify_now(p->done);
      }
      break;
    }
  }
}

void RootComplex::write(Tlp t) {
  if (t.addr >= kMsiBase && t.addr < kMsiBase + kMsiSize) {
    ++msis_;
    uint32_t v = 0;
    std::copy_n(t.data.begin(), std::min<size_t>(4, t.data.size()), reinterpret_cast<uint8_t*>(&v));
    if (on_msi) on_msi(t.addr, v);
  } else if (mem_.region(t.addr, t.len) == Region::kMemory) {
    mem_.write(t.addr, t.data.data(), t.len);
    ++writes_;
    write_bytes_ += t.len;
    if (on_write) on_write(t.addr, t.len);
  } else {
    ++dropped_writes_;
    log::warn("{}: card write of {} B to 0x{:x} dropped (not memory)", name(), t.len, t.addr);
  }
  last_write_ps_ = now_ps();
  link_.release(pcie::PcieLink::kRc, pcie::FcClass::kPosted, t.data_credits());
  give_bytes(std::move(t.data));
}

void RootComplex::serve_read(Tlp req) {
  link_.release(pcie::PcieLink::kRc, pcie::FcClass::kNonPosted, 0);
  const Region r = mem_.region(req.addr, req.len);
  if (r != Region::kMemory) {
    if (r == Region::kHole && mem_.hole_reads_time_out()) {
      ++unanswered_reads_;
      return;
    }
    ++ur_reads_;
    log::info("{}: card read of {} B at 0x{:x} answered UR", name(), req.len, req.addr);
    Tlp c;
    c.type = TlpType::kCpl;
    c.tag = req.tag;
    c.requester = req.requester;
    c.status = CplStatus::kUr;
    c.byte_count = req.len;
    link_.send(pcie::PcieLink::kRc, std::move(c));
    return;
  }
  ++reads_served_;
  const uint64_t mps = uint64_t(pcie_.mps), rcb = uint64_t(pcie_.rcb);
  uint64_t a = req.addr;
  const uint64_t end = req.addr + req.len;
  while (a < end) {
    uint64_t stop = std::min(end, a + mps);
    if (stop < end) stop = std::max(a + 1, stop / rcb * rcb);  // end on an RCB multiple
    Tlp c;
    c.type = TlpType::kCplD;
    c.tag = req.tag;
    c.requester = req.requester;
    c.len = uint32_t(stop - a);
    c.byte_count = uint32_t(end - a);
    c.lower_addr = uint8_t(a & 0x7F);
    c.data = take_bytes(c.len);
    mem_.append(a, c.len, c.data);
    read_bytes_ += c.len;
    link_.send(pcie::PcieLink::kRc, std::move(c));
    a = stop;
  }
}

std::vector<uint8_t> RootComplex::mmio_read(uint64_t addr, uint32_t len, CplStatus* status) {
  ++mmio_reads_;
  const uint64_t t0 = now_ps();
  rnic::host::host_wait(sc_core::sc_time::from_value(uint64_t(cost_.mmio_issue_ns) * 1000));
  Pending p;
  const uint16_t tag = next_tag_++;
  pending_[tag] = &p;
  Tlp t;
  t.type = TlpType::kMRd;
  t.addr = addr;
  t.len = len;
  t.tag = tag;
  t.requester = 0;
  link_.send(pcie::PcieLink::kRc, std::move(t));
  rnic::host::host_wait(p.done);
  rnic::host::host_wait(sc_core::sc_time::from_value(uint64_t(cost_.mmio_return_ns) * 1000));
  mmio_read_ns_.sample(double(now_ps() - t0) / 1000.0);
  if (status) *status = p.status;
  if (p.status != CplStatus::kSc) return {};
  return p.data;
}

uint32_t RootComplex::mmio_read32(uint64_t addr) {
  const std::vector<uint8_t> d = mmio_read(addr, 4);
  uint32_t v = 0;
  for (size_t i = 0; i < d.size() && i < 4; ++i) v |= uint32_t(d[i]) << (8 * i);
  return v;
}

void RootComplex::mmio_write_le(uint64_t addr, uint64_t v, uint32_t bytes) {
  std::vector<uint8_t> d(bytes);
  for (uint32_t i = 0; i < bytes; ++i) d[i] = uint8_t(v >> (8 * i));
  mmio_write(addr, std::move(d));
}

void RootComplex::mmio_write(uint64_t addr, std::vector<uint8_t> data) {
  ++mmio_writes_;
  rnic::host::host_wait(sc_core::sc_time::from_value(uint64_t(cost_.mmio_issue_ns) * 1000));
  Tlp t;
  t.type = TlpType::kMWr;
  t.addr = addr;
  t.len = uint32_t(data.size());
  t.data = std::move(data);
  link_.send(pcie::PcieLink::kRc, std::move(t));
}

}  // namespace rnic::host
