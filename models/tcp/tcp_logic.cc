#include "models/tcp/tcp_logic.h"

#include <algorithm>

namespace rnic::tcp {

TcpSender::TcpSender(const TcpLogicConfig& cfg, uint32_t iss)
    : cfg_(cfg),
      una_(iss),
      nxt_(iss),
      end_(iss),
      cwnd_(uint64_t(cfg.init_segments) * cfg.mss),
      rwnd_(cfg.rcv_buffer),
      rto_(cfg.rto_initial_ps),
      win_end_(iss) {}

void TcpSender::queue(uint32_t len) {
  segs_.push_back(Seg{end_, len});
  end_ += len;
}

TcpSender::Seg* TcpSender::find(uint32_t seq) {
  for (Seg& s : segs_)
    if (s.seq == seq) return &s;
  return nullptr;
}

uint32_t TcpSender::in_flight() const {
  uint32_t pipe = 0;
  for (const Seg& s : segs_) {
    if (!seq_lt(s.seq, nxt_)) break;
    if (!s.sacked && !s.lost) pipe += s.len;
  }
  return pipe;
}

std::optional<TcpSender::Tx> TcpSender::next() {
  const uint64_t pipe = in_flight();
  for (const Seg& s : segs_) {
    if (!seq_lt(s.seq, nxt_)) break;
    if (s.lost && !s.sacked) {
      if (!rtx_now_ && pipe > 0 && pipe + s.len > cwnd_) return std::nullopt;
      return Tx{s.seq, s.len, true, cwr_pending_};
    }
  }
  for (const Seg& s : segs_) {
    if (s.seq != nxt_) continue;
    if (pipe > 0 && pipe + s.len > cwnd_) return std::nullopt;
    if (uint64_t(s.seq + s.len - una_) > rwnd_ && outstanding()) return std::nullopt;
    return Tx{s.seq, s.len, false, cwr_pending_};
  }
  return std::nullopt;
}

void TcpSender::sent(const Tx& t, uint64_t now) {
  Seg* s = find(t.seq);
  if (!s) return;
  if (t.retransmit) {
    s->lost = false;
    s->retransmitted = true;
    rtx_now_ = false;
    ++retransmits_;
  } else {
    s->sent_ps = now;
    s->timed = true;
    nxt_ = t.seq + t.len;
  }
  if (t.cwr) cwr_pending_ = false;
  if (rto_at_ == UINT64_MAX) arm(now);
}

void TcpSender::rtt_sample(uint64_t r) {
  if (srtt_ == 0) {
    srtt_ = r;
    rttvar_ = r / 2;
  } else {
    const uint64_t d = srtt_ > r ? srtt_ - r : r - srtt_;
    rttvar_ = (3 * rttvar_ + d) / 4;
    srtt_ = (7 * srtt_ + r) / 8;
  }
  rto_ = std::clamp(srtt_ + std::max(cfg_.clock_ps, 4 * rttvar_), cfg_.rto_min_ps, cfg_.rto_max_ps);
}

void TcpSender::enter_recovery() {
  recovery_ = true;
  recover_ = nxt_;
  ssthresh_ = std::max<uint64_t>(in_flight() / 2, 2ull * cfg_.mss);
  // With SACK the pipe excludes what the receiver holds; without, NewReno inflates by the three
  // segments that left the network (RFC 6582).
  cwnd_ = cfg_.sack ? ssthresh_ : ssthresh_ + 3ull * cfg_.mss;
  if (!segs_.empty()) segs_.front().lost = true;
  rtx_now_ = true;
}

void TcpSender::react_to_ece(uint32_t acked, bool ece) {
  if (cfg_.dctcp) {
    win_acked_ += acked;
    if (ece) win_marked_ += acked;
    if (seq_le(win_end_, una_) && win_acked_ > 0) {
      const double f = double(win_marked_) / double(win_acked_);
      alpha_ = (1 - cfg_.dctcp_g) * alpha_ + cfg_.dctcp_g * f;
      if (win_marked_ > 0 && !recovery_) {
        cwnd_ = std::max<uint64_t>(cfg_.mss, uint64_t(double(cwnd_) * (1 - alpha_ / 2)));
        ssthresh_ = cwnd_;
        cwr_pending_ = true;
      }
      win_acked_ = win_marked_ = 0;
      win_end_ = nxt_;
    }
    return;
  }
  if (ece && !recovery_ && seq_le(ecn_until_, una_)) {
    ssthresh_ = std::max<uint64_t>(cwnd_ / 2, 2ull * cfg_.mss);
    cwnd_ = ssthresh_;
    cwr_pending_ = true;
    ecn_until_ = nxt_;
  }
}

uint32_t TcpSender::on_ack(const Ack& a, uint64_t now) {
  if (seq_lt(a.ack, una_) || seq_lt(nxt_, a.ack)) return 0;  // old, or for data never sent
  const bool window_update = a.window != rwnd_;
  rwnd_ = a.window;
  uint32_t highest_sacked = una_;
  bool any_sack = false;
  if (cfg_.sack)
    for (const SackBlock& b : a.sack)
      for (Seg& s : segs_)
        if (seq_le(b.left, s.seq) && seq_le(s.seq + s.len, b.right) && seq_lt(s.seq, nxt_)) {
          s.sacked = true;
          s.lost = false;
          any_sack = true;
          if (seq_lt(highest_sacked, s.seq + s.len)) highest_sacked = s.seq + s.len;
        }
  const uint32_t acked = a.ack - una_;
  if (acked > 0) {
    uint64_t sample = a.rtt_ps;
    while (!segs_.empty() && seq_le(segs_.front().seq + segs_.front().len, a.ack)) {
      const Seg& s = segs_.front();
      if (!a.rtt_ps && !s.retransmitted && s.timed && now >= s.sent_ps) sample = now - s.sent_ps;
      segs_.pop_front();
    }
    if (!segs_.empty() && seq_lt(segs_.front().seq, a.ack)) {  // a segment acknowledged in part
      Seg& s = segs_.front();
      s.len -= a.ack - s.seq;
      s.seq = a.ack;
    }
    una_ = a.ack;
    if (sample) rtt_sample(sample);
    dupacks_ = 0;
    first_expiry_ps_ = UINT64_MAX;
    react_to_ece(acked, a.ece);
    if (recovery_) {
      if (seq_le(recover_, a.ack)) {
        recovery_ = false;  // a full acknowledgement: recovery ends
        cwnd_ = ssthresh_;
      } else {
        // A partial one (RFC 6582): the next hole goes again; the window deflates by what was
        // acknowledged and grows by one segment.
        if (!segs_.empty() && !segs_.front().sacked) {
          segs_.front().lost = true;
          rtx_now_ = true;
        }
        if (!cfg_.sack) cwnd_ = cwnd_ > acked ? cwnd_ - acked + cfg_.mss : cfg_.mss;
      }
    } else if (cwnd_ < ssthresh_) {
      cwnd_ += std::min<uint64_t>(acked, 2ull * cfg_.mss);  // RFC 3465, L = 2
    } else {
      bytes_acked_ += acked;
      if (bytes_acked_ >= cwnd_) {
        bytes_acked_ -= cwnd_;
        cwnd_ += cfg_.mss;
      }
    }
    if (outstanding())
      arm(now);
    else
      rto_at_ = UINT64_MAX;
  } else if (outstanding() && (any_sack || !window_update)) {
    // A duplicate ACK (RFC 5681: nothing new acknowledged, the same window, or SACK news).
    react_to_ece(0, a.ece);
    ++dupacks_;
    if (!recovery_ && dupacks_ >= cfg_.dupack_threshold)
      enter_recovery();
    else if (recovery_ && !cfg_.sack)
      cwnd_ += cfg_.mss;  // NewReno: each further duplicate is a segment that left
  }
  // With SACK, in recovery every segment below the highest SACKed one that the receiver lacks
  // is lost.
  if (cfg_.sack && any_sack && recovery_)
    for (Seg& s : segs_) {
      if (!seq_lt(s.seq, highest_sacked)) break;
      if (!s.sacked && !s.retransmitted) s.lost = true;
    }
  return acked;
}

bool TcpSender::on_rto(uint64_t now) {
  if (!outstanding()) return true;
  if (first_expiry_ps_ == UINT64_MAX)
    first_expiry_ps_ = now;
  else if (now - first_expiry_ps_ >= cfg_.retry_budget_ps)
    return false;
  ssthresh_ = std::max<uint64_t>(in_flight() / 2, 2ull * cfg_.mss);
  cwnd_ = cfg_.mss;
  rto_ = std::min(rto_ * 2, cfg_.rto_max_ps);
  recovery_ = false;
  rtx_now_ = false;
  dupacks_ = 0;
  bytes_acked_ = 0;
  // Everything outstanding goes again, what the receiver reported it holds too: SACK is advice
  // the receiver may renege on, and a timeout forgets it (RFC 2018 section 8, RFC 6675 section
  // 5.1). Were the SACKed segments kept, a lost ACK that was to cover them all would leave
  // nothing to resend and the timer would expire for ever.
  for (Seg& s : segs_) {
    if (!seq_lt(s.seq, nxt_)) break;
    s.sacked = false;
    s.lost = true;
    s.retransmitted = true;  // Karn: no RTT sample from it
  }
  arm(now);
  return true;
}

TcpReceiver::TcpReceiver(const TcpLogicConfig& cfg, uint32_t irs) : cfg_(cfg), nxt_(irs) {}

TcpReceiver::Rx TcpReceiver::on_data(uint32_t seq, uint32_t len, bool ce, uint64_t now) {
  Rx r;
  if (cfg_.dctcp) {
    if (ce != ce_state_) r.ack_now = true;  // RFC 8257: an ACK at each change of CE state
    ce_state_ = ce;
    ece_ = ce;
  } else if (ce) {
    ece_ = true;  // until the sender's CWR
  }
  const uint32_t end = seq + len;
  if (seq_le(end, nxt_) || seq_lt(seq, nxt_)) {
    r.ack_now = true;  // a duplicate (FPDUs are whole segments: none arrives in part)
    return r;
  }
  if (seq_lt(nxt_ + window(), end)) {
    r.ack_now = true;  // beyond the window: dropped
    return r;
  }
  r.accepted = true;
  if (seq == nxt_) {
    r.deliver.emplace_back(seq, len);
    nxt_ = end;
    bool filled = false;
    for (auto it = ooo_.find(nxt_); it != ooo_.end(); it = ooo_.find(nxt_)) {
      r.deliver.emplace_back(it->first, it->second);
      nxt_ += it->second;
      ooo_.erase(it);
      filled = true;
    }
    if (filled) {
      const uint32_t n = nxt_;
      recent_.erase(std::remove_if(recent_.begin(), recent_.end(),
                                   [n](const SackBlock& b) { return seq_lt(b.left, n); }),
                    recent_.end());
    }
    if (filled || !ooo_.empty()) r.ack_now = true;
    if (len >= cfg_.mss && ++unacked_full_ >= 2) r.ack_now = true;
    if (!r.ack_now && delack_at_ == UINT64_MAX) delack_at_ = now + cfg_.delack_ps;
  } else {
    ooo_.emplace(seq, len);
    recent_.erase(std::remove_if(recent_.begin(), recent_.end(),
                                 [seq](const SackBlock& b) { return b.left == seq; }),
                  recent_.end());
    recent_.push_front(SackBlock{seq, end});
    r.ack_now = true;  // out of order: a duplicate ACK at once, with SACK
  }
  return r;
}

std::vector<SackBlock> TcpReceiver::sack_blocks() const {
  std::vector<SackBlock> out;
  for (const SackBlock& seg : recent_) {
    auto it = ooo_.find(seg.left);
    if (it == ooo_.end()) continue;  // delivered since
    // The run of kept segments that holds it.
    uint32_t left = it->first, right = it->first + it->second;
    for (auto b = it; b != ooo_.begin();) {
      --b;
      if (b->first + b->second != left) break;
      left = b->first;
    }
    for (auto f = std::next(it); f != ooo_.end() && f->first == right; ++f) right += f->second;
    const SackBlock blk{left, right};
    if (std::find(out.begin(), out.end(), blk) == out.end()) out.push_back(blk);
    if (out.size() == 3) break;
  }
  return out;
}

void TcpReceiver::acked() {
  unacked_full_ = 0;
  delack_at_ = UINT64_MAX;
}

}  // namespace rnic::tcp
