#include "models/tcp/tcp_connection.h"

#include <algorithm>

namespace rnic::tcp {

TcpConnection::TcpConnection(const TcpConnConfig& cfg, uint32_t iss, bool active)
    : cfg_(cfg), active_(active), iss_(iss), syn_rto_(cfg.logic.rto_initial_ps) {}

void TcpConnection::open(uint64_t) {
  if (active_) {
    state_ = State::kSynSent;
    syn_due_ = true;
  } else {
    state_ = State::kListen;
  }
}

uint32_t TcpConnection::max_ulpdu() const {
  const uint32_t seg = uint32_t(snd_ ? peer_mss_ : cfg_.mss) - (use_ts_ ? 12 : 0);
  return uint32_t(mpa::max_ulpdu(seg));
}

TcpHeader TcpConnection::header(uint8_t flags, uint64_t now) const {
  TcpHeader h;
  h.flags = flags;
  h.seq = snd_ ? snd_->nxt() : iss_ + 1;
  if (rcv_) {
    h.ack = ack_value();
    h.window = uint16_t(std::min<uint32_t>(rcv_->window() >> rcv_scale_, 0xFFFF));
    if (use_sack_) {
      for (const SackBlock& b : rcv_->sack_blocks()) h.opt.sack.emplace_back(b.left, b.right);
      if (use_ts_ && h.opt.sack.size() > 3) h.opt.sack.resize(3);
    }
    if (rcv_->ece()) h.flags |= kEce;
  } else {
    h.ack = irs_ + 1;
    h.window = 0xFFFF;
  }
  if (use_ts_) {
    h.opt.timestamps = true;
    h.opt.ts_val = ts(now);
    h.opt.ts_ecr = ts_recent_;
  }
  return h;
}

void TcpConnection::established(uint64_t) {
  state_ = State::kEstablished;
  TcpLogicConfig l = cfg_.logic;
  l.mss = uint32_t(peer_mss_) - (use_ts_ ? 12 : 0);
  l.sack = use_sack_;
  snd_.emplace(l, iss_ + 1);
  rcv_.emplace(l, irs_ + 1);
  if (active_) {
    mpa::StartFrame req;
    req.ird = cfg_.ird;
    req.ord = cfg_.ord;
    const auto b = mpa::encode_start(req);
    push_.insert(snd_->end());
    tx_bytes_[snd_->end()] = b;
    snd_->queue(uint32_t(b.size()));
  }
}

// A RST ends the connection only where the peer's own would be (RFC 9293, RFC 5961 section 3):
// in SYN-SENT one that acknowledges the SYN; once the peer's SYN is in, one whose sequence
// number is rcv_nxt exactly. One elsewhere in the receive window is answered with an ACK (a
// peer that did reset sends its RST again at that acknowledgement); any other is dropped, and
// so is a RST to a listening, closed or failed end.
void TcpConnection::on_rst(const TcpHeader& h) {
  switch (state_) {
    case State::kSynSent:
      if ((h.flags & kAck) && h.ack == iss_ + 1)
        state_ = State::kFailed;
      else
        ++refusals_.rst_dropped;
      return;
    case State::kClosed:
    case State::kListen:
    case State::kDone:
    case State::kFailed:
      ++refusals_.rst_dropped;
      return;
    default:
      break;
  }
  const uint32_t nxt = rcv_ ? rcv_->rcv_nxt() + (peer_fin_ ? 1 : 0) : irs_ + 1;
  // (What this end acknowledges may stop short of rcv_nxt while the engines validate: a peer
  // that answers an ACK with a RST puts it there, which is as exact.)
  if (h.seq == nxt || (rcv_ && h.seq == ack_value())) {
    state_ = State::kFailed;
  } else if (rcv_ && seq_lt(nxt, h.seq) && seq_lt(h.seq, nxt + rcv_->window())) {
    ack_due_ = true;  // the challenge ACK
    ++refusals_.rst_challenged;
  } else {
    ++refusals_.rst_dropped;
  }
}

void TcpConnection::on_segment(const TcpHeader& h, const uint8_t* payload, size_t len, bool ce,
                               uint64_t now) {
  if (h.flags & kRst) return on_rst(h);
  const auto negotiate = [&] {
    irs_ = h.seq;
    use_ts_ = cfg_.timestamps && h.opt.timestamps;
    use_sack_ = cfg_.sack && h.opt.sack_permitted;
    if (h.opt.wscale >= 0) {  // scaling only when both ends offer it (RFC 7323)
      use_ws_ = true;
      snd_scale_ = uint8_t(h.opt.wscale);
      rcv_scale_ = cfg_.wscale;
    }
    peer_mss_ = h.opt.mss ? h.opt.mss : 536;
    max_snd_wnd_ = h.window;  // (a SYN's window is not scaled)
    if (use_ts_) ts_recent_ = h.opt.ts_val;
  };
  switch (state_) {
    case State::kListen:
      if ((h.flags & (kSyn | kAck)) == kSyn) {
        negotiate();
        state_ = State::kSynRcvd;
        syn_due_ = true;
      }
      return;
    case State::kSynSent:
      if ((h.flags & kAck) && h.ack != iss_ + 1) {  // it acknowledges nothing we sent
        rst_due_ = h.ack;
        ++refusals_.ack_reset;
        return;
      }
      if ((h.flags & (kSyn | kAck)) == (kSyn | kAck) && h.ack == iss_ + 1) {
        negotiate();
        established(now);
        ack_due_ = true;
      }
      return;
    case State::kSynRcvd:
      if ((h.flags & kSyn) && !(h.flags & kAck)) {
        syn_due_ = true;  // its SYN again: our SYN-ACK was lost
        return;
      }
      if (!(h.flags & kAck) || h.ack != iss_ + 1) return;
      established(now);
      break;  // the ACK may carry data (the MPA request)
    case State::kDone:
      // The peer's FIN again: our ACK of it was lost, and the peer waits for it (TIME-WAIT's
      // duty, kept for as long as the connection stays, until its stream's next connection).
      if ((h.flags & kFin) && rcv_ && peer_fin_ && h.seq + uint32_t(len) == rcv_->rcv_nxt())
        ack_due_ = true;
      return;
    case State::kClosed:
    case State::kFailed:
      return;
    default:
      break;
  }
  if (!snd_ || !rcv_) return;
  if (h.flags & kSyn) {  // the peer's SYN-ACK again (our ACK was lost), or a SYN: an ACK
    ack_due_ = true;
    if (!(h.flags & kAck)) ++refusals_.syn_challenged;
    return;
  }
  if (h.flags & kAck) {
    // An acknowledgement of data not sent (RFC 9293), or older than the largest window the peer
    // gave (RFC 5961 section 5): not the peer's; the segment is dropped and answered.
    if (seq_lt(snd_->nxt(), h.ack) || seq_lt(h.ack, snd_->una() - max_snd_wnd_)) {
      ack_due_ = true;
      ++refusals_.ack_challenged;
      return;
    }
    max_snd_wnd_ = std::max(max_snd_wnd_, uint32_t(h.window) << snd_scale_);
  }
  if (use_ts_ && h.opt.timestamps) ts_recent_ = h.opt.ts_val;
  if ((h.flags & kAck) && (len == 0 || seq_lt(snd_->una(), h.ack))) {
    TcpSender::Ack a;
    a.ack = std::min(h.ack, snd_->end(), [](uint32_t x, uint32_t y) { return seq_lt(x, y); });
    a.window = uint32_t(h.window) << snd_scale_;
    for (const auto& [l, r] : h.opt.sack) a.sack.push_back({l, r});
    a.ece = h.flags & kEce;
    if (use_ts_ && h.opt.timestamps && h.opt.ts_ecr)
      a.rtt_ps = std::max<uint64_t>(cfg_.logic.clock_ps,
                                    uint64_t(uint32_t(ts(now) - h.opt.ts_ecr)) * 1'000'000);
    snd_->on_ack(a, now);
    for (auto it = tx_bytes_.begin(); it != tx_bytes_.end() && seq_lt(it->first, snd_->una());)
      it = tx_bytes_.erase(it);
    for (auto it = push_.begin(); it != push_.end() && seq_lt(*it, snd_->una());)
      it = push_.erase(it);
    if (fin_acked() && peer_fin_) state_ = State::kDone;
  }
  if (h.flags & kCwr) rcv_->on_cwr();
  if (len > 0) {
    const TcpReceiver::Rx rx = rcv_->on_data(h.seq, uint32_t(len), ce, now);
    if (rx.accepted) rx_held_.emplace(h.seq, std::vector<uint8_t>(payload, payload + len));
    for (const auto& [seq, n] : rx.deliver) {
      auto it = rx_held_.find(seq);
      if (it == rx_held_.end()) continue;
      deliver(seq, it->second.data(), it->second.size());
      rx_held_.erase(it);
    }
    // At once: what the receiver's rules ask for, and a segment sent with PSH (the end of a
    // message, which its sender completes only when acknowledged).
    if (rx.ack_now || (rx.accepted && (h.flags & kPsh))) ack_when_validated();
  }
  if ((h.flags & kFin) && h.seq + uint32_t(len) == rcv_->rcv_nxt()) {
    peer_fin_ = true;  // (again, when our ACK of it was lost: acknowledged again)
    if (state_ == State::kEstablished) state_ = State::kCloseWait;
    if (state_ == State::kFinWait) state_ = State::kClosing;
    if (state_ == State::kClosing && fin_acked()) state_ = State::kDone;
    ack_due_ = true;
  }
}

void TcpConnection::deliver(uint32_t seq, const uint8_t* p, size_t len) {
  if (mpa_ == Mpa::kRdma) {
    size_t u = 0, n = 0;
    if (mpa::parse_fpdu(p, len, &u, &n) != mpa::FpduError::kOk || n != len) {
      ++crc_errors_;  // MPA: a bad FPDU ends the connection (the engine sends a Terminate)
      state_ = State::kFailed;
      return;
    }
    received_.emplace_back(p + mpa::kLengthBytes, p + mpa::kLengthBytes + u);
    unvalidated_.push_back({seq, seq + uint32_t(len)});
    return;
  }
  if (mpa_ != Mpa::kStartup) return;
  startup_.insert(startup_.end(), p, p + len);
  mpa::StartFrame f;
  size_t used = 0;
  const mpa::StartError e = mpa::decode_start(startup_.data(), startup_.size(), &f, &used);
  if (e == mpa::StartError::kShort) return;
  if (e != mpa::StartError::kOk || f.reply != active_) {
    mpa_ = Mpa::kRejected;
    state_ = State::kFailed;
    return;
  }
  startup_.clear();
  peer_ird_ = f.ird;
  peer_ord_ = f.ord;
  if (active_) {
    mpa_ = f.reject ? Mpa::kRejected : Mpa::kRdma;
    if (f.reject) state_ = State::kFailed;
    return;
  }
  // The passive side answers: a reject when the request asks for markers (not supported) or no
  // CRC, else its own IRD/ORD.
  mpa::StartFrame rep;
  rep.reply = true;
  rep.ird = cfg_.ird;
  rep.ord = cfg_.ord;
  rep.reject = f.markers || !f.crc;
  const auto b = mpa::encode_start(rep);
  push_.insert(snd_->end());
  tx_bytes_[snd_->end()] = b;
  snd_->queue(uint32_t(b.size()));
  mpa_ = rep.reject ? Mpa::kRejected : Mpa::kRdma;
}

bool TcpConnection::send(const std::vector<uint8_t>& ulpdu, bool push) {
  if (!rdma_mode() || ulpdu.size() > max_ulpdu() || fin_queued_) return false;
  std::vector<uint8_t> b;
  mpa::append_fpdu(ulpdu.data(), ulpdu.size(), b);
  const uint32_t seq = snd_->end();
  snd_->queue(uint32_t(b.size()));
  tx_bytes_[seq] = std::move(b);
  if (push) push_.insert(seq);
  return true;
}

// An ACK due now goes at once if everything handed up is validated, else with the next
// validation (so its value has moved on: a pure ACK never repeats one for that wait).
void TcpConnection::ack_when_validated() {
  if (unvalidated_.empty()) {
    ack_due_ = true;
  } else if (!ack_deferred_) {
    ack_deferred_ = true;
    validated_since_defer_ = 0;
  }
}

void TcpConnection::validated(size_t n) {
  for (; n > 0 && !unvalidated_.empty(); --n, ++validated_since_defer_) unvalidated_.pop_front();
  // A deferred ACK goes once everything handed up is validated, or every second FPDU validated
  // meanwhile (as TCP acknowledges every second full segment), each with a value that moved on.
  if (ack_deferred_ && (unvalidated_.empty() || validated_since_defer_ >= 2)) {
    ack_deferred_ = !unvalidated_.empty();
    validated_since_defer_ = 0;
    ack_due_ = true;
  }
}

void TcpConnection::refuse(size_t k) {
  if (!rcv_ || k >= unvalidated_.size()) return;
  // The FPDUs not yet taken by take_received() are the newest: those go first.
  size_t back = unvalidated_.size() - k;
  received_.resize(received_.size() - std::min(back, received_.size()));
  rcv_->rewind(unvalidated_[k].first);
  unvalidated_.erase(unvalidated_.begin() + int64_t(k), unvalidated_.end());
  // A deferred ACK of FPDUs validated meanwhile goes now that nothing handed up waits.
  if (ack_deferred_ && unvalidated_.empty()) {
    ack_deferred_ = false;
    if (validated_since_defer_ > 0) ack_due_ = true;
    validated_since_defer_ = 0;
  }
}

std::vector<std::vector<uint8_t>> TcpConnection::take_received() {
  std::vector<std::vector<uint8_t>> r;
  r.swap(received_);
  return r;
}

void TcpConnection::close(uint64_t) {
  if (fin_queued_ || !snd_ || (state_ != State::kEstablished && state_ != State::kCloseWait))
    return;
  state_ = state_ == State::kEstablished ? State::kFinWait : State::kClosing;
  fin_queued_ = true;
  fin_seq_ = snd_->end();
  tx_bytes_[fin_seq_] = {};
  snd_->queue(1);
}

std::vector<TcpConnection::Out> TcpConnection::poll(uint64_t now, size_t max_data, bool* more) {
  std::vector<Out> out;
  if (more) *more = false;
  if (rst_due_) {
    Out o;
    o.h.flags = kRst;
    o.h.seq = *rst_due_;
    o.h.window = 0;
    out.push_back(std::move(o));
    rst_due_.reset();
  }
  if (syn_due_ && (state_ == State::kSynSent || state_ == State::kSynRcvd)) {
    Out o;
    o.h.flags = state_ == State::kSynSent ? kSyn : kSyn | kAck;
    o.h.seq = iss_;
    o.h.ack = state_ == State::kSynSent ? 0 : irs_ + 1;
    o.h.window = 0xFFFF;
    o.h.opt.mss = cfg_.mss;
    const bool offer = state_ == State::kSynSent;
    o.h.opt.wscale = int8_t(offer || use_ws_ ? cfg_.wscale : -1);
    o.h.opt.sack_permitted = offer ? cfg_.sack : use_sack_;
    if (offer ? cfg_.timestamps : use_ts_) {
      o.h.opt.timestamps = true;
      o.h.opt.ts_val = ts(now);
      o.h.opt.ts_ecr = offer ? 0 : ts_recent_;
    }
    out.push_back(std::move(o));
    syn_due_ = false;
    syn_at_ = now + syn_rto_;
    return out;
  }
  if (!snd_) return out;
  size_t taken = 0;
  while (auto t = snd_->next()) {
    if (taken == max_data) {
      if (more) *more = true;
      break;
    }
    ++taken;
    auto it = tx_bytes_.find(t->seq);
    if (it == tx_bytes_.end()) break;
    Out o;
    const bool fin = fin_queued_ && t->seq == fin_seq_;
    o.h = header(fin ? kFin | kAck : kAck | (push_.count(t->seq) ? kPsh : 0), now);
    o.h.seq = t->seq;
    if (t->cwr) o.h.flags |= kCwr;
    o.payload = it->second;
    snd_->sent(*t, now);
    out.push_back(std::move(o));
    ack_due_ = false;  // the data carries the ACK
    rcv_->acked();
  }
  if (ack_due_) {
    out.push_back({header(kAck, now), {}});
    ack_due_ = false;
    rcv_->acked();
  }
  return out;
}

uint64_t TcpConnection::next_timer() const {
  uint64_t t = UINT64_MAX;
  if (state_ == State::kFailed) return t;  // nothing more is sent
  if (state_ == State::kSynSent || state_ == State::kSynRcvd) t = syn_at_;
  if (snd_) t = std::min(t, snd_->rto_deadline());
  if (rcv_) t = std::min(t, rcv_->delack_deadline());
  return t;
}

void TcpConnection::on_timer(uint64_t now) {
  if ((state_ == State::kSynSent || state_ == State::kSynRcvd) && syn_at_ <= now) {
    // The handshake has the data's retry budget: it fails at the first expiry that long after
    // its first.
    if (syn_first_expiry_ == UINT64_MAX) {
      syn_first_expiry_ = now;
    } else if (now - syn_first_expiry_ >= cfg_.logic.retry_budget_ps) {
      state_ = State::kFailed;
      return;
    }
    syn_due_ = true;
    syn_rto_ = std::min(syn_rto_ * 2, cfg_.logic.rto_max_ps);
    syn_at_ = UINT64_MAX;
  }
  if (snd_ && snd_->rto_deadline() <= now && !snd_->on_rto(now)) state_ = State::kFailed;
  if (rcv_ && rcv_->delack_deadline() <= now) {
    rcv_->acked();  // (the timer is spent either way)
    ack_when_validated();
  }
}

}  // namespace rnic::tcp
