#include "models/efe/efe_channel.h"

#include "models/common/byte_pool.h"

namespace rnic::efe {

uint32_t EfeTx::send(std::vector<uint8_t> payload) { return send(std::move(payload), Meta()); }

uint32_t EfeTx::send(std::vector<uint8_t> payload, const Meta& meta) {
  Frame f;
  f.seq = next_seq_++;
  f.meta = meta;
  f.sy = resync_ && f.seq == first_;
  buffered_ += payload.size();
  f.payload = std::move(payload);
  frames_.push_back(std::move(f));
  return frames_.back().seq;
}

EfeTx::Frame* EfeTx::first_lost() {
  if (!lost_) return nullptr;
  for (Frame& f : frames_)
    if (f.lost) return &f;
  return nullptr;
}

EfeTx::Frame* EfeTx::next(uint64_t now) {
  if (failed_ || now < resume_ps_) return nullptr;
  if (Frame* f = first_lost()) {
    f->retransmission = true;
    return f;
  }
  if (send_seq_ == next_seq_) return nullptr;
  Frame& f = frames_[size_t(send_seq_ - base_)];
  f.retransmission = seq_before(f.seq, highest_sent_);
  return &f;
}

void EfeTx::sent(uint64_t now) {
  if (Frame* l = first_lost()) {
    l->lost = false;
    flight_ += l->payload.size();
    l->sent_ts = uint32_t(now / 1000);
    --lost_;
    ++retransmissions_;
    if (l->seq == base_) timer_from_ = now;
    return;
  }
  Frame& f = frames_[size_t(send_seq_ - base_)];
  f.sent_ts = uint32_t(now / 1000);
  flight_ += f.payload.size();
  if (f.retransmission) ++retransmissions_;
  if (send_seq_ == base_) timer_from_ = now;  // the oldest went (again): its timer starts
  ++send_seq_;
  if (seq_before(highest_sent_, send_seq_)) highest_sent_ = send_seq_;
}

size_t EfeTx::on_ack(uint32_t ack, uint64_t now) {
  // Only an ACK inside (base, highest sent] moves the window; anything else is stale or bogus.
  if (!seq_before(base_, ack) || seq_before(highest_sent_, ack)) return 0;
  size_t freed = 0;
  while (base_ != ack) {
    const Frame& f = frames_.front();
    if (f.lost) --lost_;
    if (seq_before(f.seq, send_seq_) && !f.lost && !f.held) flight_ -= f.payload.size();
    buffered_ -= frames_.front().payload.size();
    give_bytes(std::move(frames_.front().payload));
    frames_.pop_front();
    ++base_;
    ++freed;
  }
  if (seq_before(send_seq_, base_)) send_seq_ = base_;
  timer_from_ = now;
  retries_ = 0;  // progress
  backoff_ = 0;
  return freed;
}

void EfeTx::go_back(uint32_t seq, uint64_t resume_ps, bool retry) {
  if (seq_before(seq, base_) || seq_before(send_seq_, seq)) seq = base_;
  send_seq_ = seq;
  // Everything from here goes again in order: what was marked is moot.
  for (Frame& f : frames_) f.lost = f.held = false;
  lost_ = 0;
  flight_ = flight_bytes_recounted();
  resume_ps_ = resume_ps;
  if (retry) count_retry(resume_ps);
}

uint64_t EfeTx::flight_bytes_recounted() const {
  uint64_t n = 0;
  for (const Frame& f : frames_)
    if (seq_before(f.seq, send_seq_) && !f.lost && !f.held) n += f.payload.size();
  return n;
}

uint64_t EfeTx::rto_now() const {
  const uint64_t cap = cfg_.rto_max_ps > rto_ps_ ? cfg_.rto_max_ps : rto_ps_;
  uint64_t r = rto_ps_;
  for (uint32_t k = 0; k < backoff_ && r < cap; ++k) r *= 2;
  return r < cap ? r : cap;
}

void EfeTx::on_nack(uint32_t seq, uint64_t now, const std::vector<Range>& ranges,
                    std::optional<uint32_t> echo_ts) {
  ++nacks_;
  on_ack(seq, now);  // a NACK's ACK field acknowledges everything before the first missing
  if (!cfg_.selective) return go_back(seq, now, true);
  count_retry(now);
  std::vector<Range> rs = ranges;
  if (rs.empty()) rs.push_back({seq, seq + 1});
  // Only frames on the wire already, inside the window, are marked; between the first range's
  // start and the last one's end, those in no range are held by the receiver.
  uint32_t at = base_;
  for (const Range& r : rs) {
    if (seq_before(r.end, r.first) || seq_before(r.first, at))
      continue;  // malformed, or out of order
    for (; seq_before(at, r.first) && seq_before(at, send_seq_); ++at) {
      Frame& f = frames_[size_t(at - base_)];
      if (!f.lost && !f.held && !seq_before(at, seq)) {
        flight_ -= f.payload.size();
        f.held = true;
      }
    }
    for (at = r.first; seq_before(at, r.end) && seq_before(at, send_seq_); ++at) {
      Frame& f = frames_[size_t(at - base_)];
      if (!f.retransmission || !echo_ts || !seq_before(*echo_ts, f.sent_ts)) mark_lost(f);
    }
    if (!seq_before(at, send_seq_)) break;
  }
}

void EfeTx::on_rnr(uint32_t seq, uint64_t now) {
  ++rnrs_;
  on_ack(seq, now);
  retries_ = 0;  // the peer is heard: no retry, and the back-off and the budget start again
  backoff_ = 0;
  go_back(seq, now + cfg_.rnr_delay_ps, false);
  timer_from_ = now + cfg_.rnr_delay_ps;  // the back-off is not a timeout
}

uint64_t EfeTx::deadline() const {
  if (failed_ || frames_.empty()) return UINT64_MAX;
  // The budget's end stands while retries without progress do, even with nothing on the wire
  // (a NACK went back, an RNR holds it).
  const uint64_t budget = this->budget();
  const uint64_t budget_end = retries_ && budget ? first_retry_ps_ + budget : UINT64_MAX;
  if (send_seq_ == base_) return budget_end;
  const uint64_t t = timer_from_ + rto_now();
  return t < budget_end ? t : budget_end;
}

void EfeTx::on_timeout(uint64_t now) {
  if (now < deadline()) return;
  if (retries_ && budget() && now >= first_retry_ps_ + budget()) {
    failed_ = true;  // the budget is spent
    return;
  }
  ++timeouts_;
  timer_from_ = now;
  ++backoff_;
  if (!cfg_.selective) return go_back(base_, now, true);
  count_retry(now);
  for (uint32_t s = base_; seq_before(s, send_seq_); ++s) {
    Frame& f = frames_[size_t(s - base_)];
    if (!f.held) mark_lost(f);
  }
}

EfeRx::Verdict EfeRx::on_data(uint32_t seq, bool sy) {
  if (sy && seq != expected_ && !seq_before(seq, expected_)) {
    ++resyncs_;
    expected_ = seq;
  }
  if (seq == expected_) {
    ++expected_;
    nacked_gap_ = holding_ = false;  // the gap, if any, is closed
    return Verdict::kDeliver;
  }
  if (seq_before(seq, expected_)) {
    ++duplicates_;
    return Verdict::kDuplicate;
  }
  ++out_of_order_;
  if (!nacked_gap_) nack_owed_ = nacked_gap_ = true;
  return Verdict::kGap;
}

}  // namespace rnic::efe
