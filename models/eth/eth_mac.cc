#include "models/eth/eth_mac.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "models/common/byte_pool.h"
#include "models/common/log.h"
#include "models/eth/eth_link.h"
#include "models/eth/ethernet.h"

namespace rnic::eth {

EthMac::EthMac(sc_core::sc_module_name n, const EthMacParams& cfg, StatRegistry& stats,
               const Crc32Factory& crc32)
    : sc_core::sc_module(n),
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      byte_ps_(uint64_t(8000 / cfg.mac.rate_gbps)),
      fcs_gen_(crc32({"fcs_gen", clk_, int(cfg.datapath_bytes)}, {Crc32::kPolyIeee})),
      fcs_check_(crc32({"fcs_check", clk_, int(cfg.datapath_bytes)}, {Crc32::kPolyIeee})),
      tx_frames_(stats.group(name()).counter("tx_frames", "frames", "frames sent")),
      tx_bytes_(stats.group(name()).counter(
          "tx_wire_bytes", "B", "bytes on the wire: preamble, frame, padding, FCS, IFG")),
      tx_oversize_(stats.group(name()).counter("tx_oversize", "frames",
                                               "frames refused: longer than the MTU")),
      rx_frames_(
          stats.group(name()).counter("rx_frames", "frames", "frames received with a good FCS")),
      rx_fcs_errors_(
          stats.group(name()).counter("rx_fcs_errors", "frames", "frames dropped: FCS mismatch")),
      rx_pause_(stats.group(name()).counter("rx_pause", "frames",
                                            "PAUSE frames received (802.3x; 0 quanta: resume)")) {
  stats.group(name()).set_progress(false);  // the wire: resends as well as new frames
}

void EthMac::attach(EthLink* link, int end, uint64_t byte_ps) {
  link_ = link;
  end_ = end;
  byte_ps_ = byte_ps;
}

bool EthMac::can_send() const { return fifo_ < cfg_.mac.tx_fifo_frames; }

bool EthMac::send(Frame f) {
  if (f.size() > size_t(cfg_.mac.mtu) + kHeaderBytes) {
    ++tx_oversize_;
    log::warn("{}: {} B frame refused: MTU {}", name(), f.size(), cfg_.mac.mtu);
    return false;
  }
  sc_assert(can_send() && link_);
  if (f.size() < kMinFrameBytes) f.resize(kMinFrameBytes, 0);
  const uint64_t period = clk_.period_ps;
  // The FCS generator takes one beat a cycle from the first edge at or after now, after the
  // previous frame's beats; the frame is ready to go mac.tx_cycles after its last beat.
  const uint64_t beats = fcs_gen_->beats(f.size());
  const uint64_t first = std::max(clk_.edge_after(now_ps(), 0) / period, fcs_gen_free_);
  fcs_gen_free_ = first + beats;
  if (fcs_gen_->last_beat_only()) {
    cycles_.assign(1, first + beats - 1);
  } else {
    cycles_.resize(beats);
    for (uint64_t i = 0; i < beats; ++i) cycles_[i] = first + i;
  }
  const uint64_t ready = (first + beats - 1 + uint64_t(cfg_.mac.tx_cycles)) * period;
  ++fifo_;
  FramePtr frame = share_bytes(std::move(f));
  tx_pending_.push_back({frame, ready, corrupt_bit_});
  corrupt_bit_ = -1;
  fcs_gen_->request(std::move(frame), cycles_, [this](uint32_t fcs, uint64_t valid) {
    TxPending p = tx_pending_.take_front();
    transmit(std::move(p.frame), fcs, std::max(p.ready, valid * clk_.period_ps), p.corrupt_bit);
  });
  return true;
}

void EthMac::transmit(FramePtr frame, uint32_t fcs, uint64_t ready, int64_t corrupt_bit) {
  if (!held_.empty() || paused_until_ps_ > std::max(ready, now_ps())) {
    held_.push_back({std::move(frame), fcs, ready, corrupt_bit});  // waits out the PAUSE
    return;
  }
  const size_t len = frame->size();
  const uint64_t start = std::max(ready, line_free_ps_);
  const uint64_t on_wire = (kPreambleBytes + len + kFcsBytes) * byte_ps_;
  line_free_ps_ = start + on_wire + kIfgBytes * byte_ps_;
  const std::array<uint8_t, 4> fcs_a{uint8_t(fcs), uint8_t(fcs >> 8), uint8_t(fcs >> 16),
                                     uint8_t(fcs >> 24)};
  if (corrupt_bit >= 0) {  // a wire error after the FCS was computed
    Frame bad = take_bytes(len);
    bad.assign(frame->begin(), frame->end());
    const size_t bit = size_t(corrupt_bit) % (len * 8);
    bad[bit / 8] ^= uint8_t(1u << (bit % 8));
    frame = share_bytes(std::move(bad));
  }
  ++tx_frames_;
  tx_bytes_ += kPreambleBytes + len + kFcsBytes + kIfgBytes;
  // First bit on the wire: the FIFO slot frees, the link's tap sees the frame.
  eq_.at(start, [this, frame, fcs_a] {
    --fifo_;
    link_->on_wire(*frame, fcs_a.data(), end_);
    if (space_) space_();
  });
  link_->carry(end_, frame, fcs_a, start, on_wire);
  if (traced_) {  // (those past their end go: outside the file's window no one reads them)
    while (!on_wire_.empty() && on_wire_.front().second <= now_ps()) on_wire_.pop_front();
    on_wire_.emplace_back(start, start + on_wire);
    eq_.at(start + on_wire, [] {});
  }
}

void EthMac::arrive(FramePtr frame, std::array<uint8_t, 4> fcs_a, uint64_t first_bit,
                    uint64_t last_bit) {
  // Each beat reaches the FCS checker as its bytes arrive, the last at the first edge at or
  // after the last bit (a checker that reads only the last beat's cycle is given that one); the
  // frame goes up mac.rx_cycles after the result.
  const uint64_t period = clk_.period_ps;
  const uint64_t beats = fcs_check_->beats(frame->size());
  const uint64_t width = uint64_t(cfg_.datapath_bytes);
  std::vector<uint64_t>& cycles = cycles_;
  const uint64_t last = (last_bit + period - 1) / period;
  if (fcs_check_->last_beat_only()) {
    cycles.assign(1, last);
  } else {
    cycles.resize(beats);
    cycles[beats - 1] = last;
    for (uint64_t i = beats - 1; i-- > 0;) {
      const uint64_t in = first_bit + (kPreambleBytes + (i + 1) * width) * byte_ps_;
      cycles[i] = std::min((in + period - 1) / period, cycles[i + 1] - 1);
    }
  }
  rx_pending_.push_back({frame, fcs_a});
  fcs_check_->request(std::move(frame), cycles, [this](uint32_t got, uint64_t valid) {
    RxPending p = rx_pending_.take_front();
    eq_.at((valid + uint64_t(cfg_.mac.rx_cycles)) * clk_.period_ps,
           [this, frame = std::move(p.frame), fcs_a = p.fcs, got] {
             const uint32_t sent = uint32_t(fcs_a[0]) | uint32_t(fcs_a[1]) << 8 |
                                   uint32_t(fcs_a[2]) << 16 | uint32_t(fcs_a[3]) << 24;
             if (got != sent) {
               ++rx_fcs_errors_;
               log::info("{}: FCS error, {} B frame dropped", name(), frame->size());
               return;
             }
             uint16_t quanta = 0;
             if (parse_pause(frame->data(), frame->size(), &quanta)) {
               ++rx_pause_;
               paused_until_ps_ = now_ps() + uint64_t(quanta) * 64 * byte_ps_;
               eq_.at(paused_until_ps_, [this] { resume(); });
               return;
             }
             ++rx_frames_;
             if (deliver_) deliver_(frame);
           });
  });
}

void EthMac::resume() {
  if (now_ps() < paused_until_ps_) return;  // a later PAUSE moved the end
  std::deque<Held> go;
  go.swap(held_);
  for (Held& h : go)
    transmit(std::move(h.frame), h.fcs, std::max(h.ready, now_ps()), h.corrupt_bit);
}

void EthMac::trace(TraceSink& t) const {
  const std::string scope = std::string(name()) + ".tx";
  traced_ = true;
  t.add_value(scope, "on_wire", 1, [this] {
    const uint64_t now = now_ps();
    while (!on_wire_.empty() && on_wire_.front().second <= now) on_wire_.pop_front();
    return !on_wire_.empty() && on_wire_.front().first <= now ? 1 : 0;
  });
  t.add_value(scope, "fifo_frames", 16, [this] { return uint64_t(fifo_); });
  fcs_gen_->trace(t);
  fcs_check_->trace(t);
}

}  // namespace rnic::eth
