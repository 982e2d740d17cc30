#include "sim/exec/host_channel.h"

namespace rnic::exec {

HostChannel::~HostChannel() {
  if (channel_ != UINT32_MAX) ranks::drop_channel(channel_);
}

void HostChannel::span_ranks(std::function<int(uint32_t ip)> rank_of) {
  rank_of_ = std::move(rank_of);
  if (!ranks::parallel() || channel_ != UINT32_MAX) return;
  channel_ = ranks::channel([this](int, const uint8_t* p, size_t n) {
    ranks::Unpacker u(p, n);
    receive_(u);
  });
}

bool HostChannel::local(uint32_t ip) const { return !rank_of_ || rank_of_(ip) == ranks::rank(); }

void HostChannel::send(uint32_t ip, const ranks::Packer& m, uint64_t not_before_ps) const {
  ranks::send(rank_of_(ip), channel_, m.data(), m.size(), not_before_ps);
}

}  // namespace rnic::exec
