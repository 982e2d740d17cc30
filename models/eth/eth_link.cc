#include "models/eth/eth_link.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "models/common/log.h"
#include "models/eth/ethernet.h"

namespace rnic::eth {

EthLink::EthLink(sc_core::sc_module_name n, const EthLinkParams& cfg, StatRegistry& stats,
                 const Crc32Factory& crc32)
    : sc_core::sc_module(n),
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      byte_ps_(uint64_t(8000 / cfg.mac.rate_gbps)) {
  for (int s = 0; s < 2; ++s) {
    StatGroup& g = stats.group(fmt::format("{}.{}", name(), s == 0 ? "a" : "b"));
    Side& sd = side_[s];
    const std::string side = s == 0 ? "a" : "b";  // children of this module
    sd.fcs_gen = crc32(side + "_fcs_gen", Crc32::kPolyIeee, unsigned(cfg.datapath_bytes), clk_);
    sd.fcs_check = crc32(side + "_fcs_check", Crc32::kPolyIeee, unsigned(cfg.datapath_bytes), clk_);
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
  const uint64_t period = clk_.period_ps;
  // The FCS generator takes one beat a cycle from the first edge at or after now, after the
  // previous frame's beats; the frame is ready to go mac.tx_cycles after its last beat.
  const uint64_t beats = sd.fcs_gen->beats(f.size());
  const uint64_t first = std::max(clk_.edge_after(now_ps(), 0) / period, sd.fcs_gen_free);
  sd.fcs_gen_free = first + beats;
  std::vector<uint64_t> cycles(beats);
  for (uint64_t i = 0; i < beats; ++i) cycles[i] = first + i;
  const uint64_t ready = (first + beats - 1 + uint64_t(cfg_.mac.tx_cycles)) * period;
  ++sd.fifo;
  const int64_t corrupt = sd.corrupt_bit;
  sd.corrupt_bit = -1;
  auto frame = std::make_shared<const Frame>(std::move(f));
  sd.fcs_gen->request(frame, std::move(cycles),
                      [this, s, frame, ready, corrupt, period](uint32_t fcs, uint64_t valid) {
                        transmit(s, frame, fcs, std::max(ready, valid * period), corrupt);
                      });
  return true;
}

void EthLink::transmit(int s, FramePtr frame, uint32_t fcs, uint64_t ready, int64_t corrupt_bit) {
  Side& sd = side_[s];
  const size_t len = frame->size();
  const uint64_t start = std::max(ready, sd.line_free_ps);
  const uint64_t on_wire = (kPreambleBytes + len + kFcsBytes) * byte_ps_;
  sd.line_free_ps = start + on_wire + kIfgBytes * byte_ps_;
  sd.on_wire_until_ps = start + on_wire;
  const std::array<uint8_t, 4> fcs_a{uint8_t(fcs), uint8_t(fcs >> 8), uint8_t(fcs >> 16),
                                     uint8_t(fcs >> 24)};
  if (corrupt_bit >= 0) {  // a wire error after the FCS was computed
    Frame bad(*frame);
    const size_t bit = size_t(corrupt_bit) % (len * 8);
    bad[bit / 8] ^= uint8_t(1u << (bit % 8));
    frame = std::make_shared<const Frame>(std::move(bad));
  }
  ++*sd.tx_frames;
  *sd.tx_bytes += kPreambleBytes + len + kFcsBytes + kIfgBytes;
  // First bit on the wire: the FIFO slot frees, the tap sees the frame.
  eq_.at(start, [this, s, frame, fcs_a] {
    --side_[s].fifo;
    if (tap_) tap_(now_ps(), *frame, fcs_a.data());
    if (side_[s].space) side_[s].space();
  });
  // At the peer: each beat of the frame reaches its FCS checker as its bytes arrive, the last at
  // the first edge at or after the last bit; the frame goes up mac.rx_cycles after the result.
  const int peer = 1 - s;
  Crc32Channel& check = *side_[peer].fcs_check;
  const uint64_t period = clk_.period_ps;
  const uint64_t first_bit = start + uint64_t(cfg_.link.prop_ns) * 1000;
  const uint64_t last_bit = first_bit + on_wire;
  const uint64_t beats = check.beats(len);
  const uint64_t width = uint64_t(cfg_.datapath_bytes);
  std::vector<uint64_t> cycles(beats);
  cycles[beats - 1] = (last_bit + period - 1) / period;
  for (uint64_t i = beats - 1; i-- > 0;) {
    const uint64_t in = first_bit + (kPreambleBytes + (i + 1) * width) * byte_ps_;
    cycles[i] = std::min((in + period - 1) / period, cycles[i + 1] - 1);
  }
  check.request(frame, std::move(cycles), [this, peer, frame, fcs_a](uint32_t got, uint64_t valid) {
    eq_.at((valid + uint64_t(cfg_.mac.rx_cycles)) * clk_.period_ps,
           [this, peer, frame, fcs_a, got] {
             Side& rx = side_[peer];
             const uint32_t sent = uint32_t(fcs_a[0]) | uint32_t(fcs_a[1]) << 8 |
                                   uint32_t(fcs_a[2]) << 16 | uint32_t(fcs_a[3]) << 24;
             if (got != sent) {
               ++*rx.rx_fcs_errors;
               log::info("{}: FCS error, {} B frame dropped", name(), frame->size());
               return;
             }
             ++*rx.rx_frames;
             if (rx.deliver) rx.deliver(Frame(*frame));
           });
  });
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
