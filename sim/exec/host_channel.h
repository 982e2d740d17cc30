// Messages from one simulated host's management-network service to another's (the sockets of
// sim/exec/mgmt_net.h, the connection manager of sim/exec/cm_net.h), addressed by the
// destination host's IPv4 address: handed to the service here when this process simulates that
// host, else sent to the rank that does (sim/ranks.h), whose service takes the bytes at the
// next exchange. Without span_ranks (one process) every host is here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "sim/ranks.h"

namespace rnic::exec {

class HostChannel {
 public:
  // `receive`: a message from another rank, as the sender packed it.
  explicit HostChannel(std::function<void(ranks::Unpacker&)> receive)
      : receive_(std::move(receive)) {}
  ~HostChannel();
  HostChannel(const HostChannel&) = delete;
  HostChannel& operator=(const HostChannel&) = delete;

  // Over several processes: the rank that simulates the host with address ip. Every rank makes
  // its channels in the same order and calls this before the run.
  void span_ranks(std::function<int(uint32_t ip)> rank_of);
  // Whether this process simulates the host with address ip.
  bool local(uint32_t ip) const;
  // To the rank of the host with address ip (not this one's); nothing it sets off there comes
  // before not_before_ps.
  void send(uint32_t ip, const ranks::Packer& m, uint64_t not_before_ps) const;

 private:
  std::function<void(ranks::Unpacker&)> receive_;
  std::function<int(uint32_t)> rank_of_;
  uint32_t channel_ = UINT32_MAX;
};

}  // namespace rnic::exec
