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
  return freed;
}

void EfeTx::go_back(uint32_t seq, uint64_t resume_ps, bool retry) {
  if (seq_before(seq, base_) || seq_before(send_seq_, seq)) seq = base_;
  send_seq_ = seq;
  resume_ps_ = resume_ps;
  if (!retry) return;
  ++retries_;
  if (cfg_.retry_limit && retries_ > cfg_.retry_limit) failed_ = true;
}

void EfeTx::on_nack(uint32_t seq, uint64_t now) {
  ++nacks_;
  on_ack(seq, now);  // a NACK's ACK field acknowledges everything before the first missing
  go_back(seq, now, true);
}

void EfeTx::on_rnr(uint32_t seq, uint64_t now) {
  ++rnrs_;
  on_ack(seq, now);
  go_back(seq, now + cfg_.rnr_delay_ps, false);
  timer_from_ = now + cfg_.rnr_delay_ps;  // the back-off is not a timeout
}

uint64_t EfeTx::deadline() const {
  if (failed_ || frames_.empty() || send_seq_ == base_) return UINT64_MAX;
  return timer_from_ + rto_ps_;
}

void EfeTx::on_timeout(uint64_t now) {
  if (now < deadline()) return;
  ++timeouts_;
  timer_from_ = now;
  go_back(base_, now, true);
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
