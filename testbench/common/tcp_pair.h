// Two MPA/TCP connection ends (models/tcp/tcp_connection.h) joined by a wire that delays every
// segment by `delay` and loses the ones `lose` names; `arrive` sees each segment as it reaches
// its end (the capture tool writes it). No SystemC: run() steps the ends' own times. Each end
// stands for engines that validate every FPDU the moment it is handed up.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include "models/tcp/tcp_connection.h"

namespace rnic::tcp {

struct TcpPair {
  TcpConnection a, b;  // a is the active end
  uint64_t now = 0;
  uint64_t delay = 5'000'000;                                                  // ps
  std::function<bool(bool to_b, const TcpConnection::Out&)> lose;              // true: lost
  std::function<void(bool to_b, const TcpConnection::Out&, uint64_t)> arrive;  // at its time
  uint64_t sent[2] = {0, 0}, lost = 0;

  TcpPair(const TcpConnConfig& ca, const TcpConnConfig& cb, uint32_t iss_a = 1000,
          uint32_t iss_b = 0xFFFFFF00u)
      : a(ca, iss_a, true), b(cb, iss_b, false) {}

  // Runs until neither end has anything left to do, or `until`.
  void run(uint64_t until = UINT64_MAX - 1) {
    for (;;) {
      emit(a, true);
      emit(b, false);
      uint64_t t = std::min(a.next_timer(), b.next_timer());
      if (!flying_.empty()) t = std::min(t, flying_.begin()->first);
      if (t == UINT64_MAX || t > until) return;
      now = std::max(now, t);
      while (!flying_.empty() && flying_.begin()->first <= now) {
        auto [to_b, o] = std::move(flying_.begin()->second);
        flying_.erase(flying_.begin());
        if (arrive) arrive(to_b, o, now);
        TcpConnection& to = to_b ? b : a;
        to.on_segment(o.h, o.payload.data(), o.payload.size(), false, now);
        to.validated(SIZE_MAX);
      }
      if (a.next_timer() <= now) a.on_timer(now);
      if (b.next_timer() <= now) b.on_timer(now);
    }
  }

 private:
  void emit(TcpConnection& c, bool to_b) {
    for (auto& o : c.poll(now)) {
      ++sent[to_b ? 0 : 1];
      if (lose && lose(to_b, o)) {
        ++lost;
        continue;
      }
      flying_.emplace(now + delay, std::pair{to_b, std::move(o)});
    }
  }
  std::multimap<uint64_t, std::pair<bool, TcpConnection::Out>> flying_;
};

}  // namespace rnic::tcp
