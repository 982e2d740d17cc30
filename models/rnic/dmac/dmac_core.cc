#include "models/rnic/dmac/dmac_core.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace rnic {

bool DmacOut::operator==(const DmacOut& o) const {
#define RNIC_DMAC_SAME(f) &&f == o.f
  return true RNIC_DMAC_OUT_SCALARS(RNIC_DMAC_SAME) RNIC_DMAC_OUT_DATA(RNIC_DMAC_SAME);
#undef RNIC_DMAC_SAME
}

DmacModel::DmacModel(int bytes, int max_tags)
    : B_(bytes), tag_(size_t(max_tags)), free_tags_(size_t(max_tags)), wbuf_n_(wbuf_beats(bytes)) {
  if (bytes < 1 || bytes > kDmacMaxBytes) throw std::invalid_argument("rnic_dmac: datapath width");
  wbuf_.assign(wbuf_n_ * uint64_t(bytes), 0);
}

void DmacModel::put_wbuf(uint64_t beat, const uint8_t* from, uint64_t bytes) {
  const uint64_t B = uint64_t(B_), size = wbuf_n_ * B;
  const uint64_t padded = (bytes + B - 1) / B * B;
  uint64_t p = wpos(beat);
  const uint64_t first = std::min(bytes, size - p);
  std::memcpy(wbuf_.data() + p, from, first);
  if (first < bytes) std::memcpy(wbuf_.data(), from + first, bytes - first);
  if (padded > bytes) {
    p = (p + bytes) % size;
    std::memset(wbuf_.data() + p, 0, padded - bytes);  // within the last beat
  }
}

void DmacModel::reset(const DmacIn& in) {
  const int tags = int(std::min<uint32_t>(in.cfg_tags, uint32_t(tag_.size())));
  now_ = 0;
  n_live_ = 0;
  for (Entry& e : e_) e = Entry{};
  for (Tag& t : tag_) t = Tag{};
  free_tags_.clear();
  for (int t = 0; t < tags; ++t) free_tags_.push_back(uint16_t(t));
  tags_out_ = 0;
  by_issue_.clear();
  issue_q_.clear();
  cur_started_ = false;
  cur_addr_ = cur_left_ = 0;
  done_q_.clear();
  wq_.clear();
  wbase_next_ = data_wr_ = data_rel_ = 0;
  wr_pos_ = 0;
  mwr_on_ = false;
  mwr_off_ = mwr_tlp_len_ = mwr_k_ = 0;
  mwr_base_ = mwr_addr_ = 0;
  mwr_wlen_ = 0;
  mwr_end_ = false;
  last_write_ = false;
  in_cpl_ = cpl_match_ = false;
  cpl_tag_ = 0;
  cpl_status_ = 0;
  cpl_bc_ = cpl_len_ = cpl_k_ = 0;
  cpl_off_ = 0;
  out_ = DmacOut{};
  out_.busy = true;  // the first edge out of reset raises the readies
}

uint32_t DmacModel::mwr_len(const Write& w) const {
  const uint64_t a = w.addr + wr_pos_;
  return uint32_t(std::min<uint64_t>({w.len - wr_pos_, mps_, 4096 - (a & 4095)}));
}

bool DmacModel::mwr_ready() const {
  if (wq_.empty()) return false;
  const Write& w = wq_.front();
  return data_wr_ > w.base + (wr_pos_ + mwr_len(w) - 1) / uint32_t(B_);
}

bool DmacModel::mrd_ready() const {
  return !issue_q_.empty() && e_[issue_q_.front()].len > 0 && !free_tags_.empty();
}

bool DmacModel::zero_head() const { return !issue_q_.empty() && e_[issue_q_.front()].len == 0; }

void DmacModel::next_mwr_beat() {
  const uint32_t nbeats = (mwr_tlp_len_ + B_ - 1) / B_;
  const uint32_t o = mwr_off_ + mwr_k_ * uint32_t(B_);
  const uint32_t cnt = std::min<uint32_t>(B_, mwr_tlp_len_ - mwr_k_ * uint32_t(B_));
  out_.tx_valid = true;
  out_.tx_write = true;
  out_.tx_addr = mwr_addr_;
  out_.tx_len = mwr_tlp_len_;
  out_.tx_tag = 0;
  out_.tx_cnt = cnt;
  out_.tx_data.fill(0);
  // Bytes o.. of the write: the tail of one buffered beat, then the head of the next.
  const uint32_t lane = o % uint32_t(B_);
  const uint64_t beat = mwr_base_ + o / uint32_t(B_);
  const uint32_t first = std::min(cnt, uint32_t(B_) - lane);
  std::copy_n(wbuf_.data() + wpos(beat) + lane, first, out_.tx_data.begin());
  if (first < cnt)
    std::copy_n(wbuf_.data() + wpos(beat + 1), cnt - first, out_.tx_data.begin() + first);
  out_.tx_last = mwr_k_ + 1 == nbeats;
  ++mwr_k_;
  if (!out_.tx_last) return;
  mwr_on_ = false;
  data_rel_ = mwr_end_ ? mwr_base_ + (mwr_wlen_ + B_ - 1) / uint32_t(B_)
                       : mwr_base_ + (mwr_off_ + mwr_tlp_len_) / uint32_t(B_);
}

void DmacModel::start_mwr() {
  const Write w = wq_.front();
  const uint32_t l = mwr_len(w);
  mwr_on_ = true;
  mwr_off_ = wr_pos_;
  mwr_tlp_len_ = l;
  mwr_k_ = 0;
  mwr_base_ = w.base;
  mwr_addr_ = w.addr + wr_pos_;
  mwr_wlen_ = w.len;
  wr_pos_ += l;
  mwr_end_ = wr_pos_ == w.len;
  if (mwr_end_) {
    wq_.pop_front();
    wr_pos_ = 0;
  }
  last_write_ = true;
  next_mwr_beat();
}

void DmacModel::start_mrd() {
  const int ei = issue_q_.front();
  Entry& e = e_[ei];
  if (!cur_started_) {
    cur_started_ = true;
    cur_addr_ = e.addr;
    cur_left_ = e.len;
  }
  const uint32_t l = uint32_t(std::min<uint64_t>({cur_left_, mrrs_, 4096 - (cur_addr_ & 4095)}));
  const uint16_t t = free_tags_.front();
  free_tags_.pop_front();
  ++tags_out_;
  tag_[t] = Tag{true, now_, ei, uint32_t(cur_addr_ - e.addr), l};
  by_issue_.push_back({now_, t});
  ++e.out;
  out_.tx_valid = true;
  out_.tx_write = false;
  out_.tx_addr = cur_addr_;
  out_.tx_len = l;
  out_.tx_tag = t;
  out_.tx_cnt = 0;
  out_.tx_data.fill(0);
  out_.tx_last = true;
  cur_addr_ += l;
  cur_left_ -= l;
  if (cur_left_ == 0) {
    e.issued_all = true;
    issue_q_.pop_front();
    cur_started_ = false;
  }
  last_write_ = false;
}

void DmacModel::finish(int ei) {
  Entry& e = e_[ei];
  done_q_.push_back({e.id, e.status});
  e = Entry{};
  --n_live_;
}

void DmacModel::take_header(uint16_t tag, uint8_t status, uint32_t byte_count, uint32_t len) {
  cpl_tag_ = tag;
  cpl_status_ = status;
  cpl_bc_ = byte_count;
  cpl_len_ = len;
  cpl_k_ = 0;
  cpl_match_ = tag_out(tag);
  if (cpl_match_) {
    const Tag& t = tag_[tag];
    cpl_off_ = t.off + t.len - std::min(cpl_bc_, t.len);
  }
}

void DmacModel::piece_event(int t, uint8_t status) {
  Tag& tg = tag_[size_t(t)];
  tg.out = false;
  // Its entry in by_issue_ goes when it reaches the front (or the list is compacted).
  while (!by_issue_.empty() && !live(by_issue_.front())) by_issue_.pop_front();
  if (by_issue_.size() > 2 * tag_.size() + 64)
    by_issue_.erase(std::remove_if(by_issue_.begin(), by_issue_.end(),
                                   [this](const auto& p) { return !live(p); }),
                    by_issue_.end());
  --tags_out_;
  free_tags_.push_back(uint16_t(t));
  Entry& e = e_[tg.entry];
  --e.out;
  if (status != 0 && e.status == 0) e.status = status;
  if (e.issued_all && e.out == 0) finish(tg.entry);
}

void DmacModel::edge(const DmacIn& in) {
  mrrs_ = in.cfg_mrrs;
  mps_ = in.cfg_mps;
  timeout_ = in.cfg_timeout;
  if (in.rst) {
    reset(in);
    return;
  }
  now_ += 1 + uint64_t(in.skip);
  const bool tx_taken = out_.tx_valid && in.tx_ready;
  const bool rd_taken = out_.rd_valid && in.rd_ready;
  const bool rq_take = in.rq_valid && out_.rq_ready;
  const bool wq_take = in.wq_valid && out_.wq_ready;
  const bool wd_take = in.wd_valid && out_.wd_ready;
  const bool cp_take = in.cp_valid && out_.cp_ready;

  // Decisions, all from the state before the edge.
  bool cont = false, start_w = false, start_r = false;
  if (!out_.tx_valid || tx_taken) {
    if (mwr_on_) {
      cont = true;
    } else {
      const bool w = mwr_ready(), r = mrd_ready();
      if (w && r)
        (last_write_ ? start_r : start_w) = true;
      else
        (w ? start_w : start_r) = w || r;
    }
  }
  out_.rw_valid = false;
  int ev_tag = -1;
  uint8_t ev_status = 0;
  bool cp_last_ev = false;
  const bool in_cpl_pre = in_cpl_;
  if (cp_take) {
    if (!in_cpl_) take_header(in.cp_tag, in.cp_status, in.cp_byte_count, in.cp_len);
    const uint32_t n = in.cp_last ? std::min<uint32_t>(in.cp_cnt, uint32_t(B_)) : uint32_t(B_);
    if (cpl_match_ && cpl_status_ == 0) {
      const Entry& e = e_[tag_[cpl_tag_].entry];
      const uint64_t off = cpl_off_ + uint64_t(cpl_k_) * uint32_t(B_);
      if (n && off < e.len) {
        out_.rw_valid = true;
        out_.rw_id = e.id;
        out_.rw_off = uint32_t(off);
        out_.rw_cnt = uint32_t(std::min<uint64_t>(n, e.len - off));
        out_.rw_data.fill(0);
        std::copy_n(in.cp_data.begin(), B_, out_.rw_data.begin());
      }
    }
    ++cpl_k_;
    in_cpl_ = !in.cp_last;
    if (in.cp_last) {
      cp_last_ev = true;
      if (cpl_match_ && cpl_status_ != 0) {
        ev_tag = cpl_tag_;
        ev_status = cpl_status_;
      } else if (cpl_match_ && cpl_bc_ == cpl_len_) {
        ev_tag = cpl_tag_;
      }
    }
  }
  if (!cp_last_ev) {
    const int excl = cp_take ? (in_cpl_pre ? cpl_tag_ : in.cp_tag) : (in_cpl_pre ? cpl_tag_ : -1);
    for (auto it = by_issue_.begin(); it != by_issue_.end() && it->first + timeout_ <= now_; ++it)
      if (it->second != excl && live(*it)) {
        ev_tag = it->second;  // the oldest
        break;
      }
    if (ev_tag >= 0) ev_status = uint8_t(DmacStatus::kTimeout);
  }
  const bool zero_ev = !cp_last_ev && ev_tag < 0 && zero_head();

  // Updates.
  if (rd_taken) done_q_.pop_front();
  if (rq_take) {
    int ei = 0;
    while (e_[ei].live) ++ei;
    e_[ei] = Entry{true, in.rq_id, in.rq_addr, in.rq_len, 0, false, 0};
    ++n_live_;
    issue_q_.push_back(ei);
  }
  if (wq_take && in.wq_len > 0) {
    wq_.push_back({in.wq_addr, in.wq_len, wbase_next_});
    wbase_next_ += (in.wq_len + uint32_t(B_) - 1) / uint32_t(B_);
  }
  if (wd_take) {
    std::copy_n(in.wd_data.begin(), B_, wbuf_.data() + wpos(data_wr_));
    ++data_wr_;
  }
  if (cont)
    next_mwr_beat();
  else if (start_w)
    start_mwr();
  else if (start_r)
    start_mrd();
  else if (tx_taken)
    out_.tx_valid = false;
  if (ev_tag >= 0) {
    piece_event(ev_tag, ev_status);
  } else if (zero_ev) {
    const int ei = issue_q_.front();
    issue_q_.pop_front();
    finish(ei);
  }
  drive();
}

uint64_t DmacModel::quiet_edges() const {
  if (out_.rd_valid || (out_.tx_valid && out_.tx_last)) return 0;
  uint64_t q = UINT64_MAX;
  if (mwr_on_)
    q = (mwr_tlp_len_ + uint32_t(B_) - 1) / uint32_t(B_) - mwr_k_;  // its last beat, back to back
  else if (!wq_.empty() || !issue_q_.empty())
    q = 1;  // a TLP (or a 0-byte read's done) can start at the next edge and leave at the one after
  // The oldest piece's timeout: its read's done (or a freed tag's MRd) leaves after it.
  if (out_.tmo_wait) q = std::min<uint64_t>(q, out_.tmo_wait);
  return q;
}

uint64_t DmacModel::beat_edges(const DmacBeatRun& r) const {
  if (out_.rd_valid || zero_head()) return 0;
  // An MRd, or an MWr's last beat, presented: taken at the next edge.
  const bool last_shown = out_.tx_valid && out_.tx_last;
  if (last_shown && !(r.take_tlp && out_.tx_write)) return 0;
  const uint32_t B = uint32_t(B_);
  uint64_t n = r.max_edges, active = 0;
  uint64_t left = 0;  // the MWr's beats still to present
  if (mwr_on_ || last_shown) {
    // Its beats, the last one ending the run (its TLP is taken at the next edge) or taken at
    // the run's last edge.
    left = mwr_on_ ? (mwr_tlp_len_ + B - 1) / B - mwr_k_ : 0;
    const uint64_t span = left + (r.take_tlp ? 1 : 0);
    n = std::min(n, span);
    active = span;
  } else {  // TX stays idle: no MRd can take a tag, and the head write's next MWr lacks data
    if (mrd_ready()) return 0;
    if (!wq_.empty()) {
      const Write& w = wq_.front();
      const uint64_t need = w.base + (wr_pos_ + mwr_len(w) - 1) / B;  // its last beat
      if (data_wr_ > need) return 0;
      n = std::min(n, need - data_wr_ + 1);
    }
  }
  // A completion's first beat takes its header: only at the run's first edge.
  if (r.cp_first ? in_cpl_ || r.cp_beats == 0 : in_cpl_ != (r.cp_beats > 0)) return 0;
  if (r.cp_beats > 0) {  // its beats, the last one too (ending the run) when it cannot end a piece
    const bool match = r.cp_first ? tag_out(r.cp_tag) : cpl_match_;
    const bool ends = match && (r.cp_first ? r.cp_status != 0 || r.cp_byte_count == r.cp_len
                                           : cpl_status_ != 0 || cpl_bc_ == cpl_len_);
    const uint64_t beats = r.cp_beats - ends;
    if (beats == 0) return 0;
    n = std::min(n, beats);
    active = std::max(active, beats);
  }
  const uint64_t room = wbuf_n_ - (data_wr_ - data_rel_);
  const uint64_t wd = std::min<uint64_t>((r.wd_bytes + B - 1) / B, room);
  if (r.wd_more || wd < (r.wd_bytes + B - 1) / B) n = std::min(n, wd);
  active = std::max(active, wd);
  if (!by_issue_.empty()) {  // no piece times out
    const uint64_t at = by_issue_.begin()->first + timeout_, first = now_ + 1 + r.skip;
    if (at <= first) return 0;
    n = std::min(n, at - first);
  }
  n = std::min(n, active);
  // The TLP is taken only at the driver's bound, where the driver sends it.
  if ((mwr_on_ || last_shown) && n == left + 1 && n != r.max_edges) n = left;
  return n;
}

void DmacModel::take_tlp_edge(uint64_t data_before) {
  const uint64_t data_now = data_wr_;
  data_wr_ = data_before;
  const bool w = mwr_ready(), r = mrd_ready();
  data_wr_ = data_now;
  if (w && r)
    last_write_ ? start_mrd() : start_mwr();
  else if (w)
    start_mwr();
  else if (r)
    start_mrd();
  else
    out_.tx_valid = false;
}

// n bytes of the write whose first beat is `base`, from its byte `off`, through the data buffer.
void DmacModel::copy_wbuf(uint64_t base, uint64_t off, uint64_t n, std::vector<uint8_t>& to) const {
  const uint64_t B = uint64_t(B_), size = wbuf_n_ * B;
  const uint64_t p = wpos(base + off / B) + off % B;
  const uint64_t first = std::min(n, size - p);
  to.insert(to.end(), wbuf_.data() + p, wbuf_.data() + p + first);
  if (first < n) to.insert(to.end(), wbuf_.data(), wbuf_.data() + (n - first));
}

void DmacModel::beat_run(DmacBeatRun& r, uint64_t n, std::vector<uint8_t>& tx) {
  const uint32_t B = uint32_t(B_);
  // Whether the run's last edge takes the MWr's last beat (beat_edges allowed it).
  const bool last_shown = out_.tx_valid && out_.tx_last;
  r.took_tlp =
      r.take_tlp && (last_shown || (mwr_on_ && n == (mwr_tlp_len_ + B - 1) / B - mwr_k_ + 1));
  now_ += n + r.skip;
  if (mwr_on_ || r.took_tlp) {
    // The beat presented before the run, then each run edge's but the last (with took_tlp, the
    // rest of the MWr, its last beat too: presented below, taken at the run's last edge).
    tx.insert(tx.end(), out_.tx_data.begin(), out_.tx_data.begin() + out_.tx_cnt);
    if (mwr_on_) {
      const uint64_t from = uint64_t(mwr_k_) * B;
      const uint64_t bytes = r.took_tlp ? mwr_tlp_len_ - from : (n - 1) * B;
      if (bytes) copy_wbuf(mwr_base_, mwr_off_ + from, bytes, tx);
      mwr_k_ += uint32_t(n - 1 - (r.took_tlp ? 1 : 0));
    }
  }
  const uint64_t data_start = data_wr_;
  out_.rw_valid = false;
  r.rw_cnt = 0;
  if (r.cp_first) {  // the header, as edge() takes it
    take_header(r.cp_tag, r.cp_status, r.cp_byte_count, r.cp_len);
    in_cpl_ = true;
  }
  if (in_cpl_) {
    // The completion's bytes these beats carry, the last edge's last.
    const uint64_t bytes = std::min<uint64_t>(n * B, r.cp_bytes);
    const uint32_t cnt = uint32_t(bytes - (n - 1) * B);
    if (cpl_match_ && cpl_status_ == 0) {
      const Entry& e = e_[tag_[cpl_tag_].entry];
      const uint64_t off0 = cpl_off_ + uint64_t(cpl_k_) * B, last = off0 + (n - 1) * B;
      r.rw_id = e.id;
      r.rw_off = uint32_t(off0);
      r.rw_cnt = off0 < e.len ? uint32_t(std::min<uint64_t>(e.len - off0, bytes)) : 0;
      if (cnt && last < e.len) {  // the last edge's beat on rw
        out_.rw_valid = true;
        out_.rw_id = e.id;
        out_.rw_off = uint32_t(last);
        out_.rw_cnt = uint32_t(std::min<uint64_t>(cnt, e.len - last));
        out_.rw_data.fill(0);
        std::copy_n(r.cp + (n - 1) * B, cnt, out_.rw_data.begin());
      }
    }
    cpl_k_ += uint32_t(n);
    in_cpl_ = n < r.cp_beats;
  }
  const uint64_t room = wbuf_n_ - (data_wr_ - data_rel_);
  r.wd_beats = uint32_t(std::min<uint64_t>({n, room, (r.wd_bytes + B - 1) / B}));
  if (r.wd_beats) {
    put_wbuf(data_wr_, r.wd, std::min<uint64_t>(uint64_t(r.wd_beats) * B, r.wd_bytes));
    data_wr_ += r.wd_beats;
  }
  if (r.took_tlp) {
    if (mwr_on_) next_mwr_beat();  // its last beat's pins, at the edge before the last
    take_tlp_edge(data_start + std::min<uint64_t>(r.wd_beats, n - 1));
  } else if (mwr_on_) {
    next_mwr_beat();  // the last edge's beat, not its TLP's last
  }
  drive();
}

void DmacModel::drive() {
  out_.rd_valid = !done_q_.empty();
  out_.rd_id = out_.rd_valid ? done_q_.front().first : 0;
  out_.rd_status = out_.rd_valid ? done_q_.front().second : 0;
  out_.rq_ready = n_live_ + done_q_.size() < size_t(kReads);
  out_.wq_ready = wq_.size() < size_t(kWriteQueue);
  out_.wd_ready = data_wr_ - data_rel_ < wbuf_n_;
  out_.cp_ready = true;
  out_.tags_used = uint16_t(tags_out_);
  out_.busy = out_.tx_valid || out_.rd_valid || mwr_ready() || mrd_ready() || zero_head();
  if (by_issue_.empty()) {
    out_.tmo_wait = 0;
  } else {
    const uint64_t at = by_issue_.begin()->first + timeout_;
    out_.tmo_wait = at <= now_ ? 1 : uint32_t(at - now_);  // at most cfg_timeout
  }
}

}  // namespace rnic
