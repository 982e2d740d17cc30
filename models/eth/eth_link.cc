#include "models/eth/eth_link.h"

#include <fmt/format.h>

#include <cmath>

#include "models/common/log.h"

namespace rnic::eth {

EthLink::EthLink(sc_core::sc_module_name n, const LinkParams& p, LinkEnd& a, LinkEnd& b,
                 StatRegistry& stats)
    : sc_core::sc_module(n),
      cfg_(p),
      byte_ps_(uint64_t(8000 / p.rate_gbps)),
      rng_{std::mt19937_64(p.seed), std::mt19937_64(p.seed ^ 0x9e3779b97f4a7c15ull)},
      lost_down_(stats.group(name()).counter("lost_down", "frames",
                                             "frames lost while the link was down")),
      lost_random_(stats.group(name()).counter("lost_random", "frames",
                                               "frames lost at random (link.loss)")),
      corrupted_(stats.group(name()).counter(
          "corrupted", "frames", "frames given a bit error (link.ber): the receiver's FCS fails")),
      end_{&a, &b} {
  a.attach(this, 0, byte_ps_);
  b.attach(this, 1, byte_ps_);
  stats.group(name()).set_progress(false);  // the wire: resends as well as new frames
}

bool EthLink::down(uint64_t from_ps, uint64_t to_ps) const {
  for (const auto& [a, b] : cfg_.down_ps)
    if (from_ps < b && to_ps > a) return true;
  return false;
}

std::string EthLink::faults_text(const LinkParams& cfg, uint64_t now_ps, uint64_t lost_down,
                                 uint64_t lost_random, uint64_t corrupted) {
  if (!lost_down && !lost_random && !corrupted) return "";
  std::string s;
  for (const auto& [a, b] : cfg.down_ps)
    if (now_ps >= a && now_ps < b)
      s = fmt::format("down now, from {:.3f} us until {:.3f} us; ", double(a) / 1e6,
                      double(b) / 1e6);
  return s + fmt::format("lost {} frames while down, {} at random (loss {}), corrupted {} (ber {})",
                         lost_down, lost_random, cfg.loss, corrupted, cfg.ber);
}

void EthLink::carry(int end, LinkEnd::FramePtr f, std::array<uint8_t, 4> fcs, uint64_t start_ps,
                    uint64_t on_wire_ps) {
  if (remote_local_ >= 0 && end != remote_local_) return;  // the far end's stand-in
  if (!cfg_.down_ps.empty() && down(start_ps, start_ps + on_wire_ps)) {
    ++lost_down_;
    return;
  }
  std::mt19937_64& rng = rng_[end];
  if (cfg_.loss > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < cfg_.loss) {
    ++lost_random_;
    return;
  }
  if (cfg_.ber > 0) {
    const double bits = double(f->size() + fcs.size()) * 8;
    const double p_err = -std::expm1(bits * std::log1p(-cfg_.ber));
    if (std::uniform_real_distribution<double>(0, 1)(rng) < p_err) {
      ++corrupted_;
      std::vector<uint8_t> bad(*f);
      const size_t bit = std::uniform_int_distribution<size_t>(0, bad.size() * 8 - 1)(rng);
      bad[bit / 8] ^= uint8_t(1u << (bit % 8));
      f = std::make_shared<const std::vector<uint8_t>>(std::move(bad));
    }
  }
  const uint64_t first_bit = start_ps + uint64_t(cfg_.prop_ns) * 1000;
  if (remote_local_ >= 0)
    remote_send_(std::move(f), fcs, first_bit, first_bit + on_wire_ps);
  else
    end_[1 - end]->arrive(std::move(f), fcs, first_bit, first_bit + on_wire_ps);
}

}  // namespace rnic::eth
