// A cycle bench for rnic_dmac's contract (models/rnic/dmac/dmac_core.h), for any implementation: an
// engine side that makes random reads and writes under random valid/ready, and a completer with a
// host memory that answers each MRd with completions split at a 64-byte RCB, delayed at random
// and interleaved across tags (in order within one), optionally failing, dropping (so the piece
// times out) or inventing a tag. It checks what must hold whatever the timing: every read
// finishes once with the memory's bytes or the failure it was given, every write lands, MRds and
// MWrs keep MRRS / MPS / 4 KiB and the tag limit, outputs hold while not taken. With a reference
// core it also compares every output pin after every edge (lockstep); with skip_idle the core
// under test is not clocked at edges where it is not busy and gets no input, and is told how
// many cycles it missed, while the reference is clocked at every edge.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "models/rnic/dmac/dmac_core.h"

namespace rnic::tb {

struct DmacBenchCfg {
  uint64_t seed = 1;
  uint32_t mrrs = 512, mps = 256, tags = 8, timeout = 4000;
  int reads = 200, writes = 200;
  uint32_t max_len = 3000;
  int stall_pct = 30;      // chance that a valid or ready is held low in a cycle
  int max_delay = 60;      // cycles from an MRd to its first completion
  int err_pct = 0;         // pieces answered with UR or CA
  int drop_pct = 0;        // pieces never answered (they time out)
  int junk_pct = 0;        // completions for a tag not in use, before a real one
  bool skip_idle = false;  // see the header
  bool zero_reads = true;  // some reads of 0 bytes
};

class DmacBench {
 public:
  static constexpr uint64_t kReadBase = 0x10000, kReadSpan = 0x40000, kWriteBase = 0x100000,
                            kWriteSpan = 0x40000;

  DmacBench(DmacCore& dut, const DmacBenchCfg& c, DmacCore* ref = nullptr)
      : dut_(dut), ref_(ref), c_(c), rng_(c.seed), B_(uint32_t(dut.bytes())) {
    mem_.resize(kWriteBase + kWriteSpan);
    for (auto& b : mem_) b = uint8_t(rng_());
    for (int i = 0; i < 256; ++i) free_ids_.push_back(uint8_t(i));
    for (int i = 0; i < c.reads; ++i) {
      Read r;
      r.len = (c.zero_reads && rng_() % 20 == 0) ? 0 : uint32_t(1 + rng_() % c.max_len);
      r.addr = kReadBase + rng_() % (kReadSpan - r.len);
      reads_.push_back(r);
    }
    for (int i = 0; i < c.writes; ++i) {
      Write w;
      w.len = rng_() % 30 == 0 ? 0 : uint32_t(1 + rng_() % c.max_len);
      w.addr = kWriteBase + rng_() % (kWriteSpan - w.len);
      w.data.resize(w.len);
      for (auto& b : w.data) b = uint8_t(rng_());
      writes_.push_back(w);
    }
  }

  // Runs until every read has finished and every write has landed, or max_edges.
  void run(uint64_t max_edges) {
    in_ = DmacIn{};
    in_.cfg_mrrs = c_.mrrs;
    in_.cfg_mps = c_.mps;
    in_.cfg_tags = c_.tags;
    in_.cfg_timeout = c_.timeout;
    in_.rst = true;
    clock_both(false);
    in_.rst = false;
    for (edge_ = 1; edge_ < max_edges && !done() && errors.size() < 20; ++edge_) cycle();
    if (!done()) error("did not finish in {} edges", max_edges);
  }

  bool done() const {
    return reads_done_ == reads_.size() && writes_landed_ == writes_.size() && cpls_.empty();
  }
  uint64_t edges() const { return edge_; }
  uint64_t clocked() const { return clocked_; }
  std::vector<std::string> errors;
  std::map<int, uint64_t> statuses;  // DmacStatus -> reads
  uint64_t mrds = 0, mwrs = 0, rw_beats = 0, timeouts = 0;
  uint32_t max_tags_seen = 0;

 private:
  struct Read {
    uint64_t addr;
    uint32_t len;
    int id = -1;
    std::vector<uint8_t> data;
    int want = 0;  // the status its pieces were given (0: none failed)
    bool done = false;
  };
  struct Write {
    uint64_t addr;
    uint32_t len;
    std::vector<uint8_t> data;
  };
  struct Cpl {
    uint64_t at;  // the first edge it may be presented
    uint16_t tag;
    uint8_t status;
    uint32_t byte_count, len;
    uint64_t addr;
  };
  struct Piece {
    size_t read;
    uint64_t addr;
    uint32_t len;
  };

  template <class... A>
  void error(fmt::format_string<A...> f, A&&... a) {
    errors.push_back(fmt::format("edge {}: ", edge_) + fmt::format(f, std::forward<A>(a)...));
  }
  bool chance(int pct) { return int(rng_() % 100) < pct; }
  bool go() { return !chance(c_.stall_pct); }

  void cycle() {
    const DmacOut pre = dut_.out();
    // Engine side: a valid stays up until taken.
    if (!in_.rq_valid && next_read_ < reads_.size() && !free_ids_.empty() && go()) {
      Read& r = reads_[next_read_];
      in_.rq_valid = true;
      in_.rq_addr = r.addr;
      in_.rq_len = r.len;
      in_.rq_id = free_ids_.front();
    }
    if (!in_.wq_valid && next_write_ < writes_.size() && go()) {
      const Write& w = writes_[next_write_];
      in_.wq_valid = true;
      in_.wq_addr = w.addr;
      in_.wq_len = w.len;
    }
    if (!in_.wd_valid && wd_write_ < next_write_ + (in_.wq_valid ? 1 : 0) && go()) {
      while (wd_write_ < writes_.size() && writes_[wd_write_].len == 0) ++wd_write_;
      if (wd_write_ < next_write_ + (in_.wq_valid ? 1 : 0)) {
        const Write& w = writes_[wd_write_];
        in_.wd_valid = true;
        in_.wd_data.fill(0);
        const uint32_t n = std::min(B_, w.len - wd_pos_);
        std::copy_n(w.data.begin() + wd_pos_, n, in_.wd_data.begin());
      }
    }
    in_.rd_ready = go();
    in_.tx_ready = go();
    // Completer: the front completion's beats, with gaps.
    if (!in_.cp_valid && !cpls_.empty() && cpls_.front().at <= edge_ && go()) present_cpl_beat();

    const bool any_input = in_.rq_valid || in_.wq_valid || in_.wd_valid || in_.cp_valid;
    const bool clock_dut =
        !c_.skip_idle || pre.busy || any_input || (pre.tmo_wait && pre.tmo_wait <= idle_ + 1);
    if (!clock_dut) {
      ++idle_;
      if (ref_) {
        in_.skip = 0;
        ref_->edge(in_);
        ++ref_edges_;
      }
      return;
    }
    clock_both(true);
    // What the pins did at this edge.
    if (in_.rq_valid && pre.rq_ready) {
      Read& r = reads_[next_read_];
      r.id = in_.rq_id;
      r.data.assign(r.len, 0);
      pieces_.push_back({next_read_, r.addr, r.len});
      id_read_[in_.rq_id] = next_read_++;
      free_ids_.pop_front();
      in_.rq_valid = false;
    }
    if (in_.wq_valid && pre.wq_ready) {
      ++next_write_;
      if (writes_[next_write_ - 1].len == 0) ++writes_landed_;
      in_.wq_valid = false;
    }
    if (in_.wd_valid && pre.wd_ready) {
      wd_pos_ += B_;
      if (wd_pos_ >= writes_[wd_write_].len) {
        ++wd_write_;
        wd_pos_ = 0;
      }
      in_.wd_valid = false;
    }
    if (in_.cp_valid && pre.cp_ready) {
      ++cp_k_;
      if (in_.cp_last) {
        cpls_.pop_front();
        cp_k_ = 0;
      }
      in_.cp_valid = false;
    }
    if (pre.tx_valid && in_.tx_ready) take_tx(pre);
    if (pre.rd_valid && in_.rd_ready) take_rd(pre);
    check_held(pre);
    const DmacOut& o = dut_.out();
    if (o.rw_valid) take_rw(o);
    max_tags_seen = std::max<uint32_t>(max_tags_seen, o.tags_used);
    if (o.tags_used > c_.tags) error("{} tags in use, cfg_tags {}", o.tags_used, c_.tags);
  }

  void clock_both(bool counted) {
    in_.skip = uint32_t(idle_);
    dut_.edge(in_);
    if (counted) ++clocked_;
    if (ref_) {
      DmacIn r = in_;
      r.skip = 0;
      ref_->edge(r);
      ++ref_edges_;
      if (!(dut_.out() == ref_->out()) && errors.size() < 20)
        error("{} differs from {}: {}", dut_.impl(), ref_->impl(), diff(dut_.out(), ref_->out()));
    }
    idle_ = 0;
  }

  static std::string diff(const DmacOut& a, const DmacOut& b) {
    std::string s;
    auto f = [&](const char* n, uint64_t x, uint64_t y) {
      if (x != y) s += fmt::format("{} {:#x} vs {:#x}; ", n, x, y);
    };
#define RNIC_DMAC_DIFF(n) f(#n, a.n, b.n);
#define RNIC_DMAC_DIFF_DATA(n) \
  if (a.n != b.n) s += #n "; ";
    RNIC_DMAC_OUT_SCALARS(RNIC_DMAC_DIFF)
    RNIC_DMAC_OUT_DATA(RNIC_DMAC_DIFF_DATA)
#undef RNIC_DMAC_DIFF
#undef RNIC_DMAC_DIFF_DATA
    return s;
  }

  void present_cpl_beat() {
    const Cpl& c = cpls_.front();
    const uint32_t beats = c.len ? (c.len + B_ - 1) / B_ : 1;
    in_.cp_valid = true;
    in_.cp_tag = c.tag;
    in_.cp_status = c.status;
    in_.cp_byte_count = c.byte_count;
    in_.cp_len = c.len;
    in_.cp_last = cp_k_ + 1 == beats;
    in_.cp_cnt = c.len ? std::min(B_, c.len - cp_k_ * B_) : 0;
    in_.cp_data.fill(0);
    for (uint32_t i = 0; i < in_.cp_cnt; ++i) in_.cp_data[i] = mem_[c.addr + cp_k_ * B_ + i];
  }

  // An MRd's answer joins the completer's queue: its completions in address order, each placed
  // at a random position after the last one of the same tag.
  void answer(uint16_t tag, uint64_t addr, uint32_t len, size_t read) {
    Read& r = reads_[read];
    const uint64_t at = edge_ + 1 + rng_() % uint64_t(c_.max_delay);
    if (c_.drop_pct && r.want == 0 && chance(c_.drop_pct)) {
      r.want = int(DmacStatus::kTimeout);
      return;
    }
    if (c_.junk_pct && c_.tags < 1024 && chance(c_.junk_pct)) {
      const uint16_t junk = uint16_t(c_.tags + rng_() % (1024 - c_.tags));
      insert({at, junk, 0, 64, std::min<uint32_t>(64, len), addr}, 0);
    }
    if (c_.err_pct && r.want == 0 && chance(c_.err_pct)) {
      const uint8_t st =
          chance(50) ? uint8_t(DmacStatus::kUnsupported) : uint8_t(DmacStatus::kAbort);
      r.want = st;
      insert({at, tag, st, len, 0, addr}, 0);
      return;
    }
    size_t after = 0;
    for (uint64_t a = addr, end = addr + len; a < end;) {
      const uint64_t stop = std::min(end, (a / 64 + 1) * 64);
      after = insert({at, tag, 0, uint32_t(end - a), uint32_t(stop - a), a}, after);
      a = stop;
    }
  }
  size_t insert(const Cpl& c, size_t after) {
    // Never ahead of the completion being presented (cpls_.front() once started).
    const size_t lo = std::max<size_t>(after, cp_k_ || in_.cp_valid ? 1 : 0);
    const size_t pos = lo + (cpls_.size() > lo ? rng_() % (cpls_.size() - lo + 1) : 0);
    cpls_.insert(cpls_.begin() + int64_t(std::min(pos, cpls_.size())), c);
    return std::min(pos, cpls_.size() - 1) + 1;
  }

  void take_tx(const DmacOut& o) {
    if (!o.tx_write) {
      ++mrds;
      if (!o.tx_last || o.tx_cnt) error("MRd of more than one beat");
      if (o.tx_len == 0 || o.tx_len > c_.mrrs || (o.tx_addr % 4096) + o.tx_len > 4096)
        error("MRd {:#x}+{} breaks MRRS {} or 4 KiB", o.tx_addr, o.tx_len, c_.mrrs);
      // Pieces go in read order, each read cut at MRRS and 4 KiB from its start.
      while (!pieces_.empty() && pieces_.front().len == 0) pieces_.pop_front();
      if (pieces_.empty()) return error("MRd {:#x}+{} belongs to no read", o.tx_addr, o.tx_len);
      Piece& pc = pieces_.front();
      const uint32_t want =
          uint32_t(std::min<uint64_t>({pc.len, c_.mrrs, 4096 - (pc.addr % 4096)}));
      if (o.tx_addr != pc.addr || o.tx_len != want)
        return error("MRd {:#x}+{}, expected {:#x}+{}", o.tx_addr, o.tx_len, pc.addr, want);
      const size_t read = pc.read;
      pc.addr += want;
      pc.len -= want;
      answer(o.tx_tag, o.tx_addr, o.tx_len, read);
      return;
    }
    if (tx_beats_.empty())
      tx_first_ = o;
    else if (o.tx_addr != tx_first_.tx_addr || o.tx_len != tx_first_.tx_len)
      error("MWr header changed within its beats");
    tx_beats_.insert(tx_beats_.end(), o.tx_data.begin(), o.tx_data.begin() + o.tx_cnt);
    if (!o.tx_last) return;
    ++mwrs;
    if (tx_beats_.size() != o.tx_len)
      error("MWr of {} bytes carries {}", o.tx_len, tx_beats_.size());
    if (o.tx_len == 0 || o.tx_len > c_.mps || (o.tx_addr % 4096) + o.tx_len > 4096)
      error("MWr {:#x}+{} breaks MPS {} or 4 KiB", o.tx_addr, o.tx_len, c_.mps);
    if (o.tx_addr < kWriteBase || o.tx_addr + tx_beats_.size() > mem_.size())
      error("MWr {:#x} outside the write region", o.tx_addr);
    else
      std::copy(tx_beats_.begin(), tx_beats_.end(), mem_.begin() + int64_t(o.tx_addr));
    // MWrs come in write order, each write's contiguous from its start.
    while (mwr_write_ < writes_.size() && writes_[mwr_write_].len == 0) ++mwr_write_;
    if (mwr_write_ >= writes_.size()) {
      error("MWr {:#x}+{} after every write was sent", o.tx_addr, o.tx_len);
    } else {
      const Write& w = writes_[mwr_write_];
      if (o.tx_addr != w.addr + mwr_pos_)
        error("MWr {:#x}+{}, expected {:#x} (write {} at {})", o.tx_addr, o.tx_len,
              w.addr + mwr_pos_, mwr_write_, mwr_pos_);
      mwr_pos_ += o.tx_len;
      if (mwr_pos_ >= w.len) {
        if (!std::equal(w.data.begin(), w.data.end(), mem_.begin() + int64_t(w.addr)))
          error("write {} ({:#x}+{}) landed wrong", mwr_write_, w.addr, w.len);
        ++writes_landed_;
        ++mwr_write_;
        mwr_pos_ = 0;
      }
    }
    tx_beats_.clear();
  }

  void take_rw(const DmacOut& o) {
    ++rw_beats;
    auto it = id_read_.find(o.rw_id);
    if (it == id_read_.end()) return error("rw for id {} not in flight", o.rw_id);
    Read& r = reads_[it->second];
    if (uint64_t(o.rw_off) + o.rw_cnt > r.len || o.rw_cnt == 0 || o.rw_cnt > B_)
      return error("rw {}+{} outside read of {}", o.rw_off, o.rw_cnt, r.len);
    std::copy_n(o.rw_data.begin(), o.rw_cnt, r.data.begin() + o.rw_off);
  }

  void take_rd(const DmacOut& o) {
    auto it = id_read_.find(o.rd_id);
    if (it == id_read_.end()) return error("rd for id {} not in flight", o.rd_id);
    Read& r = reads_[it->second];
    id_read_.erase(it);
    free_ids_.push_back(o.rd_id);
    r.done = true;
    ++reads_done_;
    ++statuses[o.rd_status];
    if (o.rd_status == uint8_t(DmacStatus::kTimeout)) ++timeouts;
    if (o.rd_status != r.want)
      error("read {:#x}+{} finished with status {}, its pieces were given {}", r.addr, r.len,
            o.rd_status, r.want);
    else if (r.want == 0 &&
             !std::equal(r.data.begin(), r.data.end(), mem_.begin() + int64_t(r.addr)))
      error("read {:#x}+{} returned other bytes", r.addr, r.len);
  }

  void check_held(const DmacOut& pre) {
    const DmacOut& o = dut_.out();
    if (pre.tx_valid && !in_.tx_ready &&
        (!o.tx_valid || o.tx_addr != pre.tx_addr || o.tx_len != pre.tx_len ||
         o.tx_data != pre.tx_data || o.tx_last != pre.tx_last || o.tx_tag != pre.tx_tag))
      error("tx beat changed while not taken");
    if (pre.rd_valid && !in_.rd_ready && (!o.rd_valid || o.rd_id != pre.rd_id))
      error("rd changed while not taken");
  }

  DmacCore& dut_;
  DmacCore* ref_;
  DmacBenchCfg c_;
  std::mt19937_64 rng_;
  uint32_t B_;
  DmacIn in_;
  uint64_t edge_ = 0, clocked_ = 0, ref_edges_ = 0, idle_ = 0;
  std::vector<uint8_t> mem_;
  std::vector<Read> reads_;
  std::vector<Write> writes_;
  size_t next_read_ = 0, next_write_ = 0, wd_write_ = 0, mwr_write_ = 0;
  uint64_t mwr_pos_ = 0;
  uint32_t wd_pos_ = 0, cp_k_ = 0;
  size_t reads_done_ = 0, writes_landed_ = 0;
  std::deque<uint8_t> free_ids_;
  std::map<uint8_t, size_t> id_read_;
  std::deque<Cpl> cpls_;
  std::deque<Piece> pieces_;  // what each accepted read has left to ask for
  DmacOut tx_first_;
  std::vector<uint8_t> tx_beats_;
};

}  // namespace rnic::tb
