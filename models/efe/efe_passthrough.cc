#include "models/efe/efe_passthrough.h"

#include "models/common/log.h"

namespace rnic::efe {

EfePassThrough::EfePassThrough(sc_core::sc_module_name n, eth::EthMac& port, eth::Mac mac,
                               int64_t clk_mhz, StatRegistry& stats)
    : sc_core::sc_module(n),
      port_(port),
      mac_(mac),
      clk_(ClockDomain::mhz(clk_mhz)),
      tx_data_(stats.group(name()).counter("tx_data", "frames", "DATA frames sent")),
      tx_acks_(stats.group(name()).counter("tx_acks", "frames", "standalone ACK frames sent")),
      rx_data_(stats.group(name()).counter("rx_data", "frames", "DATA frames received in order")),
      rx_acks_(stats.group(name()).counter("rx_acks", "frames", "ACK frames received")),
      rx_dropped_(stats.group(name()).counter(
          "rx_dropped", "frames", "frames not for this MAC, not EFE, or with a malformed header")),
      rx_out_of_seq_(stats.group(name()).counter("rx_out_of_seq", "frames",
                                                 "DATA frames out of sequence (dropped)")) {
  port_.set_receiver([this](eth::EthMac::Frame&& f) { receive(std::move(f)); });
  port_.set_space_callback([this] { pump(); });
}

uint32_t EfePassThrough::send(const eth::Mac& dst, uint32_t dst_qpn, std::vector<uint8_t> ddp,
                              bool ar, bool rq) {
  Channel& c = ch_[dst];
  Header h;
  h.type = Type::kData;
  h.ar = ar;
  h.rq = rq;
  h.seq = c.tx_seq++;
  h.dst_qpn = dst_qpn & 0xFFFFFF;
  if (tx_fault) tx_fault(ddp);
  ++pending_;
  ++c.data_waiting;
  eq_.at(edge(kTxCycles), [this, dst, h, ddp = std::move(ddp)]() mutable {
    --pending_;
    data_q_.push_back({dst, h, std::move(ddp)});
    pump();
  });
  return h.seq;
}

void EfePassThrough::validated(const eth::Mac& peer, uint32_t seq, bool ar) {
  Channel& c = ch_[peer];
  if (seq == c.rx_validated) ++c.rx_validated;
  if (!ar || c.ack_owed) return;
  c.ack_owed = true;
  ack_q_.push_back(peer);
  pump();
}

void EfePassThrough::pump() {
  bool freed = false;
  while (port_.can_send()) {
    // A peer whose ACK a DATA frame will carry needs no standalone ACK.
    while (!ack_q_.empty() && (!ch_[ack_q_.front()].ack_owed || ch_[ack_q_.front()].data_waiting))
      ack_q_.pop_front();
    const bool ack = !ack_q_.empty();
    if (!ack && data_q_.empty()) break;
    Out o;
    if (ack) {
      o.dst = ack_q_.front();
      o.h.type = Type::kAck;
      ack_q_.pop_front();
    } else {
      o = std::move(data_q_.front());
      data_q_.pop_front();
    }
    Channel& c = ch_[o.dst];
    o.h.ack = c.rx_validated;
    c.ack_owed = false;
    if (ack)
      o.h.seq = c.tx_seq;
    else
      --c.data_waiting;
    o.h.ts = ts_now();
    port_.send(
        build_frame({o.dst, mac_, eth::kEtherTypeEfe}, o.h, o.payload.data(), o.payload.size()));
    ++(ack ? tx_acks_ : tx_data_);
    freed |= !ack;
  }
  if (freed && on_space) on_space();
}

void EfePassThrough::receive(eth::EthMac::Frame&& f) {
  eth::Header eh;
  Header h;
  if (!eth::parse_header(f.data(), f.size(), &eh) || eh.dst != mac_ ||
      eh.ethertype != eth::kEtherTypeEfe ||
      decode(f.data() + eth::kHeaderBytes, f.size() - eth::kHeaderBytes, &h) != ParseError::kOk) {
    ++rx_dropped_;
    return;
  }
  eq_.at(edge(kRxCycles), [this, eh, h, f = std::move(f)]() mutable {
    Channel& c = ch_[eh.src];
    if (h.type == Type::kData) {
      if (h.seq != c.rx_expected) {
        ++rx_out_of_seq_;
        log::warn("{}: DATA SEQ {} from {} dropped, expected {}", name(), h.seq,
                  eth::to_string(eh.src), c.rx_expected);
        return;
      }
      ++c.rx_expected;
      ++rx_data_;
      const size_t off = eth::kHeaderBytes + kHeaderBytes;
      RxSegment s{eh.src, h.seq, h.dst_qpn,
                  h.ar,   h.rq,  std::vector<uint8_t>(f.begin() + off, f.begin() + off + h.length)};
      if (on_segment) on_segment(std::move(s));
    } else {
      ++rx_acks_;
    }
    if (on_ack) on_ack(eh.src, h.ack);
  });
}

}  // namespace rnic::efe
