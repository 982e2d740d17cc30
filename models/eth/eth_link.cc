#include "models/eth/eth_link.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "models/common/log.h"
#include "models/eth/ethernet.h"

namespace rnic::eth {

EthLink::EthLink(sc_core::sc_module_name n, const EthLinkParams& cfg, StatRegistry& stats)
    : sc_core::sc_module(n),
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      byte_ps_(uint64_t(8000 / cfg.mac.rate_gbps)),
      crc_(Crc32::kPolyIeee, unsigned(cfg.datapath_bytes)) {
  for (int s = 0; s < 2; ++s) {
    StatGroup& g = stats.group(fmt::format("{}.{}", name(), s == 0 ? "a" : "b"));
    Side& sd = side_[s];
    sd.tx_frames = &g.counter("tx_frames", "frames", "frames sent");
    sd.tx_bytes =
        &g.counter("tx_wire_bytes", "B", "bytes on the wire: preamble, frame, padding, FCS, IFG");
    sd.tx_oversize = &g.counter("tx_oversize", "frames", "frames refused: longer than the MTU");
    sd.rx_frames = &g.counter("rx_frames", "frames", "frames received with a good FCS");
    sd.rx_fcs_errors = &g.counter("rx_fcs_errors", "frames", "frames dropped: FCS mismatch");
  }
}

bool EthLink::can_send(int s) const { return side_[s].fifo < cfg_.mac.tx_fifo_frames; }

bool EthLink::send(int s, Frame f) {
  Side& sd = side_[s];
  if (f.size() > size_t(cfg_.mac.mtu) + kHeaderBytes) {
    ++*sd.tx_oversize;
    log::warn("{}: {} B frame refused: MTU {}", name(), f.size(), cfg_.mac.mtu);
    return false;
  }
  sc_assert(can_send(s));
  if (f.size() < kMinFrameBytes) f.resize(kMinFrameBytes, 0);
  const uint64_t now = now_ps();
  // FCS through the crc32 block at the datapath width; the last beat is beats - 1 cycles in.
  const auto fcs_result = crc_.submit(f.data(), f.size(), 0);
  const uint64_t beats = crc_.beats(f.size());
  const uint64_t ready = clk_.edge_after(now, beats - 1 + uint64_t(cfg_.mac.tx_cycles));
  const uint64_t start = std::max(ready, sd.line_free_ps);
  const uint64_t on_wire = (kPreambleBytes + f.size() + kFcsBytes) * byte_ps_;
  sd.line_free_ps = start + on_wire + kIfgBytes * byte_ps_;
  sd.on_wire_until_ps = start + on_wire;
  ++sd.fifo;
  uint8_t fcs[4];
  for (int i = 0; i < 4; ++i) fcs[i] = uint8_t(fcs_result.crc >> (8 * i));
  if (sd.corrupt_bit >= 0) {
    const size_t bit = size_t(sd.corrupt_bit) % (f.size() * 8);
    f[bit / 8] ^= uint8_t(1u << (bit % 8));
    sd.corrupt_bit = -1;
  }
  ++*sd.tx_frames;
  *sd.tx_bytes += kPreambleBytes + f.size() + kFcsBytes + kIfgBytes;
  // First bit on the wire: the FIFO slot frees, the tap sees the frame. Both events share one
  // copy of the frame.
  std::array<uint8_t, 4> fcs_a{fcs[0], fcs[1], fcs[2], fcs[3]};
  auto frame = std::make_shared<const Frame>(std::move(f));
  eq_.at(start, [this, s, frame, fcs_a] {
    --side_[s].fifo;
    if (tap_) tap_(now_ps(), *frame, fcs_a.data());
    if (side_[s].space) side_[s].space();
  });
  // Last bit at the peer, then its FCS check and the hand-over.
  const int peer = 1 - s;
  const uint64_t last_bit = start + on_wire + uint64_t(cfg_.link.prop_ns) * 1000;
  const uint64_t deliver_at =
      clk_.edge_after(last_bit, Crc32Model::kLatency + uint64_t(cfg_.mac.rx_cycles));
  eq_.at(deliver_at, [this, peer, frame, fcs_a] {
    Side& rx = side_[peer];
    const uint32_t got = crc_.crc().compute(frame->data(), frame->size());
    const uint32_t sent = uint32_t(fcs_a[0]) | uint32_t(fcs_a[1]) << 8 | uint32_t(fcs_a[2]) << 16 |
                          uint32_t(fcs_a[3]) << 24;
    if (got != sent) {
      ++*rx.rx_fcs_errors;
      log::info("{}: FCS error, {} B frame dropped", name(), frame->size());
      return;
    }
    ++*rx.rx_frames;
    if (rx.deliver) rx.deliver(Frame(*frame));
  });
  return true;
}

void EthLink::trace(TraceSink& t) const {
  for (int s = 0; s < 2; ++s) {
    const Side& sd = side_[s];
    const std::string scope = std::string(name()) + (s == 0 ? ".a_tx" : ".b_tx");
    t.add_value(scope, "on_wire", 1, [&sd] { return now_ps() < sd.on_wire_until_ps ? 1 : 0; });
    t.add_value(scope, "fifo_frames", 16, [&sd] { return uint64_t(sd.fifo); });
  }
}

}  // namespace rnic::eth
