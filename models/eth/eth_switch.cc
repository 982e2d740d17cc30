#include "models/eth/eth_switch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>

#include "models/common/log.h"

namespace rnic::eth {

namespace {

uint32_t fcs_value(const std::array<uint8_t, 4>& f) {
  return uint32_t(f[0]) | uint32_t(f[1]) << 8 | uint32_t(f[2]) << 16 | uint32_t(f[3]) << 24;
}

constexpr size_t kEfeFlagsByte = kHeaderBytes + 1;  // the EFE header's AR/CE/ECE/RTX byte
constexpr uint8_t kEfeCe = 0x40;
constexpr uint8_t kEfeUt = 0x01;                    // byte 15 carries a utilisation
constexpr size_t kEfeUtilByte = kHeaderBytes + 15;  // ... in 1/64ths
constexpr double kUtilScale = 64;

}  // namespace

EthSwitch::EthSwitch(sc_core::sc_module_name n, int ports, const SwitchConfig& cfg,
                     StatRegistry& stats)
    : sc_core::sc_module(n), stats_(&stats), cfg_(cfg), cut_through_(cfg.mode == "cut_through") {
  for (int i = 0; i < ports; ++i) {
    auto p = std::make_unique<Port>();
    p->sw = this;
    p->index = i;
    StatGroup& g = stats.group(fmt::format("{}.p{}", name(), i));
    g.set_progress(false);  // the wire: resends as well as new frames
    p->rx_frames = &g.counter("rx_frames", "frames", "frames received");
    p->tx_frames = &g.counter("tx_frames", "frames", "frames sent");
    p->fcs_drops = &g.counter("fcs_drops", "frames", "frames received with a bad FCS, dropped");
    p->tail_drops =
        &g.counter("tail_drops", "frames", "frames for this output dropped: its queue was full");
    p->ce_marked = &g.counter("ce_marked", "frames",
                              "frames marked CE at this output (EFE DATA, ECN-capable IPv4)");
    p->no_route = &g.counter("no_route", "frames", "frames received for an unknown MAC, dropped");
    p->queue_max = &g.counter("queue_max_bytes", "B", "largest output queue");
    p->pause_tx = &g.counter("pause_tx", "frames", "PAUSE frames sent (resumes too)");
    p->pause_rx = &g.counter("pause_rx", "frames", "PAUSE frames received");
    if (cfg.pause && cfg.shared_buffer_bytes > 0)
      p->ingress_drops =
          &g.counter("ingress_drops", "frames",
                     "frames this input brought that fit neither the shared pool nor its headroom");
    if (cfg.int_window_ns > 0) add_int_counter(*p);
    const Port* raw = p.get();
    g.series("queue_bytes", "B", "output queue", [raw] { return double(raw->queued); });
    ports_.push_back(std::move(p));
  }
}

int EthSwitch::route(const Mac& src, const Mac& dst) const {
  auto it = routes_.find(mac_value(dst));
  if (it == routes_.end() || it->second.empty()) return -1;
  // FNV-1a over the pair, then mixed (MurmurHash3's finaliser), so the same pair always takes
  // the same path. Unmixed, FNV-1a's low bit is the parity of the bytes' low bits: with two
  // paths every pair whose MACs' last bytes share a parity took the same one.
  uint32_t h = 2166136261u;
  for (const Mac* m : {&src, &dst})
    for (uint8_t b : *m) h = (h ^ b) * 16777619u;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return it->second[h % it->second.size()];
}

void EthSwitch::Port::arrive(FramePtr frame, std::array<uint8_t, 4> fcs, uint64_t first_bit_ps,
                             uint64_t last_bit_ps) {
  // What the frame will do is worked out now, but it is counted and acts at the switch's own
  // times (its last bit, or when it joins its output queue), as ranked actions: a link may hand
  // a frame over any time before its first bit (a run over several processes does so at the end
  // of a window) and nothing changes.
  EthSwitch& s = *sw;
  const uint64_t rank = 1 + uint64_t(index);
  uint16_t quanta = 0;
  if (parse_pause(frame->data(), frame->size(), &quanta)) {
    // Each PAUSE restarts the pause with its own time (802.3x): a resume (0 quanta) ends it at
    // once, and a start waiting for the old end is made again.
    s.eq_.at_ranked(last_bit_ps, rank,
                    [this, &s, until = last_bit_ps + uint64_t(quanta) * 64 * byte_ps] {
                      ++*rx_frames;
                      ++*pause_rx;
                      const bool sooner = until < paused_until;
                      paused_until = until;
                      if (sooner && starting) {
                        ++start_gen;
                        starting = false;
                        s.start_next(*this);
                      }
                    });
    return;
  }
  Header h;
  const int out = parse_header(frame->data(), frame->size(), &h) ? s.route(h.src, h.dst) : -1;
  if (out < 0) {
    s.eq_.at_ranked(last_bit_ps, rank, [this] {
      ++*rx_frames;
      ++*no_route;
    });
    return;
  }
  const uint64_t lat = uint64_t(s.cfg_.latency_ns) * 1000;
  uint64_t at = last_bit_ps + lat;
  if (s.cut_through_ && s.ports_[size_t(out)]->byte_ps >= byte_ps) {
    at = first_bit_ps + (kPreambleBytes + kHeaderBytes) * byte_ps + lat;
  } else if (s.crc_.compute(frame->data(), frame->size()) != fcs_value(fcs)) {
    s.eq_.at_ranked(last_bit_ps, rank, [this] {
      ++*rx_frames;
      ++*fcs_drops;
    });
    return;
  }
  // Frames that reach output queues at the same time join them in input-port order, after the
  // frames leaving then (rank 0): the order never depends on which sender SystemC ran first.
  if (s.track_) s.ports_[size_t(out)]->coming.insert(at);
  s.eq_.at_ranked(at, rank, [this, &s, out, frame, fcs, at] {
    ++*rx_frames;
    if (s.track_) {
      auto& c = s.ports_[size_t(out)]->coming;
      c.erase(c.find(at));
    }
    s.enqueue(out, index, frame, fcs);
  });
}

void EthSwitch::send_pause(Port& p, uint16_t quanta) {
  const std::vector<uint8_t> f = pause_frame(mac_, quanta);
  const uint32_t v = crc_.compute(f.data(), f.size());
  ++*p.pause_tx;
  // Ahead of the frames waiting (MAC control goes first) but behind the PAUSE frames still
  // there, in the order they were made: a resume that passed the pause it answers would leave
  // the peer paused. Not held by a PAUSE this port received (802.3 Annex 31B: a paused MAC
  // still sends MAC control frames): a start that waits one out is made again for it, or two
  // switches that pause each other over one link would each hold the other's resume.
  auto at = p.q.begin();
  while (at != p.q.end() && at->from < 0) ++at;
  p.q.insert(at, {std::make_shared<const std::vector<uint8_t>>(f),
                  {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)},
                  -1});
  if (p.starting && p.paused_until > std::max(now_ps(), p.line_free_ps)) {
    ++p.start_gen;
    p.starting = false;
  }
  start_next(p);
}

// A PAUSE to an input that holds too much, for switch.pause_quanta; below the longest, sent
// again every half of that while the input stays paused (a resume lost on the way then costs
// at most one such time).
void EthSwitch::pause_input(Port& in) {
  const auto quanta = uint16_t(cfg_.pause_quanta);
  send_pause(in, quanta);
  if (quanta == 0xFFFF) return;
  refresh_pause(in, ++in.xoff_gen);
}

void EthSwitch::refresh_pause(Port& in, uint64_t gen) {
  const uint64_t half = uint64_t(cfg_.pause_quanta) * 64 * in.byte_ps / 2;
  eq_.at(now_ps() + half, [this, &in, gen] {
    if (!cfg_.pause || !in.xoff || in.xoff_gen != gen) return;
    send_pause(in, uint16_t(cfg_.pause_quanta));
    refresh_pause(in, gen);
  });
}

void EthSwitch::enqueue(int out, int from, LinkEnd::FramePtr frame, std::array<uint8_t, 4> fcs) {
  Port& p = *ports_[size_t(out)];
  if (p.queued + frame->size() > uint64_t(cfg_.port_buffer_bytes)) {
    ++*p.tail_drops;
    return;
  }
  const bool mark = cfg_.ecn_bytes > 0 && p.queued >= uint64_t(cfg_.ecn_bytes);
  const bool is_efe_data =
      frame->size() > kEfeUtilByte && (*frame)[12] == uint8_t(kEtherTypeEfe >> 8) &&
      (*frame)[13] == uint8_t(kEtherTypeEfe & 0xFF) && ((*frame)[kHeaderBytes] & 0xF) == 0;
  const bool efe_data = mark && is_efe_data && !((*frame)[kEfeFlagsByte] & kEfeCe);
  // Utilisation: stamped where the frame has none yet, raised where this port's is higher.
  bool stamp = false;
  uint8_t util = 0;
  if (cfg_.int_window_ns > 0 && is_efe_data) {
    const double u = (double(p.queued) + sent_in_window(p, now_ps())) * double(p.byte_ps) /
                     (double(cfg_.int_window_ns) * 1000);
    util = uint8_t(std::min(255.0, std::round(u * kUtilScale)));
    stamp = !((*frame)[kEfeFlagsByte] & kEfeUt) || (*frame)[kEfeUtilByte] < util;
  }
  if (efe_data || stamp || (mark && ipv4_ect(frame->data(), frame->size()))) {
    // CE on an EFE DATA frame, or in an ECN-capable IPv4 header, and the utilisation stamp;
    // the FCS follows (an error the frame had stays an error).
    std::vector<uint8_t> marked(*frame);
    const uint32_t syndrome = crc_.compute(frame->data(), frame->size()) ^ fcs_value(fcs);
    if (efe_data)
      marked[kEfeFlagsByte] |= kEfeCe;
    else if (mark && !is_efe_data)
      mark_ipv4_ce(marked.data());
    if (stamp) {
      marked[kEfeFlagsByte] |= kEfeUt;
      marked[kEfeUtilByte] = util;
      ++*p.int_stamped;
    }
    const uint32_t v = crc_.compute(marked.data(), marked.size()) ^ syndrome;
    fcs = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    frame = std::make_shared<const std::vector<uint8_t>>(std::move(marked));
    if (efe_data || (mark && !is_efe_data)) ++*p.ce_marked;
  }
  Port& in = *ports_[size_t(from)];
  const uint64_t size = frame->size();
  bool headroom = false;
  if (in.ingress_drops) {
    // The shared pool while the input is not paused and it fits, else the input's headroom.
    if (!in.xoff && shared_used_ + size <= uint64_t(cfg_.shared_buffer_bytes)) {
      shared_used_ += size;
      in.in_shared += size;
    } else if (in.in_headroom + size <= uint64_t(cfg_.pause_headroom_bytes)) {
      headroom = true;
      in.in_headroom += size;
    } else {
      ++*in.ingress_drops;
      return;
    }
  }
  p.queued += size;
  p.queue_max->value = std::max(p.queue_max->value, p.queued);
  in.in_bytes += size;
  p.q.push_back({std::move(frame), fcs, from, headroom});
  if (in.ingress_drops) {
    // Past its threshold, or the pool is full: paused.
    if (!in.xoff && (headroom || in.in_shared > threshold())) {
      in.xoff = true;
      in.pause_level = in.in_headroom;
      pause_input(in);
    } else if (in.xoff &&
               in.in_headroom > in.pause_level + uint64_t(cfg_.pause_headroom_bytes) / 2) {
      // Still sending (its PAUSE was lost): pause it again.
      in.pause_level = in.in_headroom;
      pause_input(in);
    }
  } else if (cfg_.pause && in.in_bytes > uint64_t(cfg_.pause_xoff_bytes) &&
             (!in.xoff || in.in_bytes > in.pause_level + uint64_t(cfg_.pause_xoff_bytes) / 2)) {
    // Paused, or still sending (its PAUSE was lost): pause it (again).
    in.xoff = true;
    in.pause_level = in.in_bytes;
    pause_input(in);
  }
  start_next(p);
}

void EthSwitch::start_next(Port& p) {
  if (p.starting || p.q.empty() || !p.link) return;
  p.starting = true;
  const bool control = p.q.front().from < 0;  // a PAUSE of this switch's: not held by one
  const uint64_t start = std::max({now_ps(), p.line_free_ps, control ? 0 : p.paused_until});
  eq_.at(start, [this, &p, start, gen = p.start_gen] {
    if (gen != p.start_gen) return;  // a resume (or a PAUSE to send) made it again, sooner
    if (p.paused_until > start && p.q.front().from >= 0) {  // a PAUSE arrived: wait it out
      p.starting = false;
      start_next(p);
      return;
    }
    Port::Entry e = std::move(p.q.front());
    p.q.pop_front();
    LinkEnd::FramePtr frame = std::move(e.frame);
    const std::array<uint8_t, 4> fcs = e.fcs;
    if (e.from >= 0) {
      p.queued -= frame->size();
      Port& in = *ports_[size_t(e.from)];
      in.in_bytes -= frame->size();
      if (in.ingress_drops) {
        if (e.headroom) {
          in.in_headroom -= frame->size();
        } else {
          in.in_shared -= frame->size();
          shared_used_ -= frame->size();
        }
        // Every paused input, not only this one: the pool's free bytes, and so each
        // threshold, grew.
        for (auto& q : ports_)
          if (q->xoff && q->in_headroom == 0 &&
              q->in_shared + uint64_t(cfg_.pause_xon_bytes) <= threshold()) {
            q->xoff = false;
            send_pause(*q, 0);
          }
      } else if (in.xoff && in.in_bytes <= uint64_t(cfg_.pause_xon_bytes)) {
        in.xoff = false;
        send_pause(in, 0);
      }
    }
    p.starting = false;
    if (cfg_.int_window_ns > 0) {
      p.sent_est =
          sent_in_window(p, start) + double(kPreambleBytes + frame->size() + kFcsBytes + kIfgBytes);
      p.sent_est_ps = start;
    }
    const uint64_t on_wire = (kPreambleBytes + frame->size() + kFcsBytes) * p.byte_ps;
    p.line_free_ps = start + on_wire + kIfgBytes * p.byte_ps;
    ++*p.tx_frames;
    p.link->on_wire(*frame, fcs.data(), p.end);
    p.link->carry(p.end, std::move(frame), fcs, start, on_wire);
    start_next(p);
  });
}

void EthSwitch::set_pause(bool on) {
  if (on && no_pause_)
    throw std::logic_error(fmt::format(
        "{}: PAUSE turned on, but a run over several processes counts on this switch sending "
        "none (its far switch holds its frames for its latency)",
        name()));
  cfg_.pause = on;
}

LinkEnd::NextStart EthSwitch::next_start(const Port& p) const {
  // With PAUSE a port may send at any time (a resume when another port's frame leaves, a
  // refresh); a cut-through frame joins its queue a latency after its header, not its last bit.
  if (cfg_.pause || cfg_.shared_buffer_bytes > 0 || cut_through_) return {};
  // Frames are waiting: the next one starts once the line is free (or later, if paused).
  if (!p.q.empty()) return {p.line_free_ps, p.q.front().frame->size(), UINT64_MAX};
  // None: one must join the queue first, either one already on its way (its action queued
  // here) or one whose last bit comes at E or later (E - late_ps_ for a frame handed over
  // late), switch.latency_ns after it.
  const uint64_t joins = !track_            ? eq_.next_at()
                         : p.coming.empty() ? UINT64_MAX
                                            : *p.coming.begin();
  const uint64_t latency = uint64_t(cfg_.latency_ns) * 1000;
  return {std::max(p.line_free_ps, joins), 0, latency - std::min(latency, late_ps_)};
}

void EthSwitch::add_int_counter(Port& p) {
  p.int_stamped = &stats_->group(fmt::format("{}.p{}", name(), p.index))
                       .counter("int_stamped", "frames",
                                "EFE DATA frames whose utilisation stamp this output raised");
}

void EthSwitch::set_int_window(int64_t ns) {
  cfg_.int_window_ns = ns;
  if (ns > 0)
    for (auto& p : ports_)
      if (!p->int_stamped) add_int_counter(*p);
}

double EthSwitch::sent_in_window(const Port& p, uint64_t now) const {
  const double w = double(cfg_.int_window_ns) * 1000;
  return p.sent_est * std::max(0.0, 1 - double(now - p.sent_est_ps) / w);
}

}  // namespace rnic::eth
