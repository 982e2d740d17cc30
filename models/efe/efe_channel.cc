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

EfeTx::Frame* EfeTx::next(uint64_t now) {
  if (failed_ || now < resume_ps_ || send_seq_ == next_seq_) return nullptr;
  Frame& f = frames_[size_t(send_seq_ - base_)];
  f.retransmission = seq_before(f.seq, highest_sent_);
  return &f;
}

void EfeTx::sent(uint64_t now) {
  const Frame& f = frames_[size_t(send_seq_ - base_)];
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
  resume_ps_ = resume_ps;
  if (!retry) return;
  if (retries_++ == 0) first_retry_ps_ = resume_ps;
}

uint64_t EfeTx::rto_now() const {
  const uint64_t cap = cfg_.rto_max_ps > rto_ps_ ? cfg_.rto_max_ps : rto_ps_;
  uint64_t r = rto_ps_;
  for (uint32_t k = 0; k < backoff_ && r < cap; ++k) r *= 2;
  return r < cap ? r : cap;
}

void EfeTx::on_nack(uint32_t seq, uint64_t now) {
  ++nacks_;
  on_ack(seq, now);  // a NACK's ACK field acknowledges everything before the first missing
  go_back(seq, now, true);
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
  go_back(base_, now, true);
  ++backoff_;
}

EfeRx::Verdict EfeRx::on_data(uint32_t seq, bool sy) {
  if (sy && seq != expected_ && !seq_before(seq, expected_)) {
    ++resyncs_;
    expected_ = seq;
  }
  if (seq == expected_) {
    ++expected_;
    nacked_gap_ = false;  // the gap, if any, is closed
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
