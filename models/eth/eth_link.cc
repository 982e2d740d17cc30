#include "models/eth/eth_link.h"

namespace rnic::eth {

EthLink::EthLink(sc_core::sc_module_name n, const LinkParams& p, EthMac& a, EthMac& b)
    : sc_core::sc_module(n), cfg_(p), byte_ps_(uint64_t(8000 / p.rate_gbps)), end_{&a, &b} {
  a.attach(this, 0, byte_ps_);
  b.attach(this, 1, byte_ps_);
}

void EthLink::carry(int end, EthMac::FramePtr f, std::array<uint8_t, 4> fcs, uint64_t start_ps,
                    uint64_t on_wire_ps) {
  const uint64_t first_bit = start_ps + uint64_t(cfg_.prop_ns) * 1000;
  end_[1 - end]->arrive(std::move(f), fcs, first_bit, first_bit + on_wire_ps);
}

}  // namespace rnic::eth
