#include "models/rnic/dmac/dmac.h"

#include <algorithm>
#include <stdexcept>

#include "models/common/byte_pool.h"
#include "models/common/log.h"
#include "models/common/scheduler.h"

namespace rnic {

using pcie::Tlp;
using pcie::TlpType;

namespace {
constexpr uint64_t kNever = UINT64_MAX;
constexpr uint64_t kMaxSkip = 0xFFFFFFFFu;
constexpr int kIds = 256;  // rq_id / rd_id / rw_id: 8 bits

// A completion's data bytes (none unless a successful CplD) and the beats it takes into the block.
bool carries_data(const Tlp& t) {
  return t.type == TlpType::kCplD && t.status == pcie::CplStatus::kSc;
}
uint32_t cpl_bytes(const Tlp& t) {
  return carries_data(t) ? uint32_t(std::min<size_t>(t.len, t.data.size())) : 0;
}
uint32_t cpl_beats(const Tlp& t, int bytes) {
  const uint32_t len = cpl_bytes(t);
  return len ? (len + uint32_t(bytes) - 1) / uint32_t(bytes) : 1;
}
// Whether a completion's last beat can end a piece (a read request's TLP), and so finish a read
// or free a tag for the next MRd: a failed one, or the piece's last (its byte count its
// length). Any other only puts bytes in a read's buffer, which nothing outside sees.
bool can_end_piece(const Tlp& t) { return !carries_data(t) || t.byte_count == t.len; }
// The block's cp_status pin for a completion.
uint8_t cpl_status_pin(const Tlp& t) {
  return carries_data(t)                    ? 0
         : t.status == pcie::CplStatus::kUr ? uint8_t(DmacStatus::kUnsupported)
                                            : uint8_t(DmacStatus::kAbort);
}
}  // namespace

RnicDmac::RnicDmac(sc_core::sc_module_name n, pcie::PcieIf& pcie, const DmacParams& p,
                   StatRegistry& stats, const DmacCoreFactory& core)
    : sc_core::sc_module(n),
      pcie_(pcie),
      cfg_(p),
      clk_(ClockDomain::mhz(p.clk_mhz)),
      core_(core({name(), ClockDomain::mhz(p.clk_mhz), int(p.dma_bytes)}, {})),
      own_model_(dynamic_cast<DmacModel*>(core_.get()) != nullptr),
      B_(int(p.dma_bytes)),
      slots_(kIds),
      read_bytes_(stats.group(name()).counter(
          "read_bytes", "B", "bytes read from the host (counted as each read is done)")),
      errors_(stats.group(name()).counter("read_errors", "requests", "DMA reads that failed")),
      cpl_timeouts_(stats.group(name()).counter("cpl_timeouts", "requests",
                                                "DMA reads failed by a completion timeout")),
      read_ns_(stats.group(name()).histogram("read_latency", "ns", "DMA read, request to data",
                                             Histogram::log2_edges(64, 20))) {
  if (own_model_) model_ = static_cast<DmacModel*>(core_.get());
  out_ = &core_->out();
  pcie_.set_completion_sink([this](Tlp&& t, uint64_t at) { completion(std::move(t), at); });
  // A completion that cannot end a piece only fills a read's buffer: when the block's edges are
  // clocked in runs, it does not wake the block, which takes it before it clocks the edges it
  // enters at (run()). (Any TLP but a successful CplD can end one: the host's MMIO wakes.)
  pcie_.set_completions_later([this](const Tlp& t) { return batch_edges_ && !can_end_piece(t); });
  wake_id_ = sched_.add(std::string(name()) + ".run", [this] { run(); });
  reset_core();
}

DmacCoreFactory dmac_model_factory() {
  return [](const BlockArgs& a, const DmacCore::Params&) -> std::unique_ptr<DmacCore> {
    return std::make_unique<DmacModel>(a.bytes);
  };
}

DmacCore::Recorded::Recorded(std::unique_ptr<DmacCore> in, AnswerLog& log, const BlockArgs& a)
    : in_(std::move(in)),
      log_(log),
      tx_(log.source(a.name + " rnic_dmac tx", a.clk.period_ps)),
      rd_(log.source(a.name + " rnic_dmac rd", a.clk.period_ps)) {}

void DmacCore::Recorded::edge(const DmacIn& in) {
  in_->edge(in);
  if (in.rst) return;
  const DmacOut& o = in_->out();
  // The DMA service takes every beat the edge after it is presented (tx_ready, rd_ready high).
  if (o.tx_valid && o.tx_last)
    log_.add(tx_, in.t_ps, o.tx_addr, record_digest({o.tx_write, o.tx_len, o.tx_tag}));
  // A read's rw beats (edge, offset, bytes) fold into one digest, recorded with its done.
  if (o.rw_valid)
    rw_digest_[o.rw_id] =
        record_digest({rw_digest_[o.rw_id], in.t_ps, o.rw_off,
                       record_digest_bytes(o.rw_data.data(), o.rw_cnt, o.rw_cnt)});
  if (o.rd_valid) {
    log_.add(rd_, in.t_ps, (uint64_t(o.rd_id) << 8) | o.rd_status, rw_digest_[o.rd_id]);
    rw_digest_[o.rd_id] = 0;
  }
}

RnicDmac::~RnicDmac() { sched_.drop(wake_id_); }

DmacIn RnicDmac::cfg_pins() const {
  DmacIn in;
  in.cfg_mrrs = uint32_t(cfg_.pcie.mrrs);
  in.cfg_mps = uint32_t(cfg_.pcie.mps);
  in.cfg_tags = uint32_t(cfg_.pcie.tags);
  const uint64_t timeout = uint64_t(cfg_.pcie.cpl_timeout_us) * uint64_t(cfg_.clk_mhz);
  in.cfg_timeout = uint32_t(std::min<uint64_t>(timeout, kMaxSkip));
  return in;
}

void RnicDmac::reset_core() {
  if (cfg_.pcie.tags > core_->max_tags())
    throw std::invalid_argument(fmt::format("{}: {} is built for at most {} tags (pcie.tags {})",
                                            name(), core_->impl(), core_->max_tags(),
                                            cfg_.pcie.tags));
  if (int(cfg_.dma_bytes) != core_->bytes())
    throw std::invalid_argument(fmt::format("{}: {} is built for {} B beats, not {}", name(),
                                            core_->impl(), core_->bytes(), cfg_.dma_bytes));
  batch_edges_ = own_model_ && cfg_.pcie.if_cycles >= 2 && !traced_;
  in_ = cfg_pins();
  in_.rst = true;
  core_->edge(in_);
  in_.rst = false;
  core_->edge(in_);  // out of reset: the readies are up
  have_edge_ = false;
  free_ids_.clear();
  for (int i = 0; i < kIds; ++i) free_ids_.push_back(uint8_t(i));
}

void RnicDmac::configure(const DmacParams& p) {
  cfg_ = p;
  clk_ = ClockDomain::mhz(p.clk_mhz);
  reset_core();
}

// if_cycles after the request; with if_cycles 0 a request made at an edge the block has already
// clocked (a read's callback runs at its edge) is taken at the next one.
uint64_t RnicDmac::due_edge() const {
  const uint64_t due = edge_index(now_ps(), uint64_t(cfg_.pcie.if_cycles));
  return have_edge_ ? std::max(due, last_edge_ + 1) : due;
}

void RnicDmac::read(uint64_t addr, uint32_t len, ReadDone done) {
  const uint64_t now = now_ps();
  const uint64_t due = due_edge();
  rq_.push_back({due, addr, len, std::move(done), now});
  ++reads_in_flight_;
  wake_at(due, due + 1);
}

void RnicDmac::write(uint64_t addr, std::vector<uint8_t> data) {
  const uint64_t due = due_edge();
  const uint32_t len = uint32_t(data.size());
  wq_.push_back({due, addr, len, std::move(data)});
  wake_at(due, due + 1);
}

void RnicDmac::msi(uint64_t addr, uint32_t data) {
  std::vector<uint8_t> d(4);
  for (int i = 0; i < 4; ++i) d[i] = uint8_t(data >> (8 * i));
  write(addr, std::move(d));
}

void RnicDmac::completion(Tlp&& t, uint64_t at) {
  const uint64_t first = at / clk_.period_ps + 1;  // the first edge after its arrival
  const uint64_t beats = cpl_beats(t, B_);
  const bool ends = can_end_piece(t);
  cp_.push_back({first, std::move(t)});
  wake_at(first, ends ? first + beats : kNever);
}

// An input for edge e, which can make an output leave at edge `out` at the earliest (the C++
// model is woken by then; the RTL at e).
void RnicDmac::wake_at(uint64_t e, uint64_t out) {
  if (have_edge_ && e <= last_edge_)
    throw std::logic_error(
        fmt::format("{}: input for edge {} after edge {} was clocked", name(), e, last_edge_));
  next_edge_ = std::min(next_edge_, e);
  const uint64_t w = batch_edges_ ? out : e;
  if (w >= due_wake_) return;
  due_wake_ = w;
  arm();
}

// The wake for due_wake_ (none while it is kNever).
void RnicDmac::arm() {
  if (due_wake_ == armed_edge_) return;
  armed_edge_ = due_wake_;
  sched_.set(wake_id_, due_wake_ == kNever ? UINT64_MAX : due_wake_ * clk_.period_ps);
}

void RnicDmac::run() {
  armed_edge_ = kNever;  // the wake this runs for is spent
  const uint64_t now = now_ps() / clk_.period_ps;
  if (batch_edges_) pcie_.take_completions(now_ps());  // those that did not wake the block
  // Every edge up to now that has work. Their inputs are all known: a request made from now on
  // is due if_cycles (at least 1) edges on, and a completion arriving now enters at the next
  // edge. Those before now take no output (due_wake_ came by the first edge that could, and an
  // input that could make one earlier woke the block at its edge); now's go out at their time.
  while (next_edge_ <= now) {
    uint64_t e = next_edge_;
    if (have_edge_ && e - last_edge_ - 1 > kMaxSkip) e = last_edge_ + 1 + kMaxSkip;
    const DmacOut& o = *out_;
    if (e < now && ((o.tx_valid && o.tx_last) || o.rd_valid))
      throw std::logic_error(
          fmt::format("{}: edge {} takes an output, clocked late at edge {}", name(), e, now));
    if (!beats(e, now)) step(e);
    next_edge_ = next_edge(last_edge_);
  }
  // The C++ model is woken again at the first edge that can take an output (its edges before
  // then are clocked on the way), the RTL at its next edge with work.
  due_wake_ = next_edge_ == kNever || !batch_edges_ ? next_edge_
                                                    : std::max(next_edge_, first_output_edge());
  arm();
}

// The first edge after the last clocked one that may take a TLP's last beat or a read's done,
// from what the block and its input queues hold (an input that arrives later wakes the block
// at its edge).
uint64_t RnicDmac::first_output_edge() const {
  const uint64_t l = last_edge_;
  const uint64_t q = model_->quiet_edges();
  uint64_t w = q == kNever ? kNever : l + 1 + q;
  // The first completion that can end a piece: a read can finish at its last beat. The block
  // takes a beat a cycle, from each completion's first edge.
  uint64_t next = l + 1;
  for (size_t i = 0; i < cp_.size() && next < w; ++i) {
    const Cpl& c = cp_[i];
    next = std::max(next, c.first) + (cpl_beats(c.tlp, B_) - (i == 0 ? cp_k_ : 0));
    if (can_end_piece(c.tlp)) w = std::min(w, next);
  }
  // A request or a write not in the block yet: its TLP (or a 0-byte read's done) leaves two
  // edges after it enters at the earliest.
  if (!rq_.empty()) w = std::min(w, std::max(l + 1, rq_.front().due) + 1);
  if (!wq_.empty()) w = std::min(w, std::max(l + 1, wq_.front().due) + 1);
  return w;
}

// Edges from e (the first to clock, after any the block slept through) up to now at which only
// beats move (DmacModel::beat_edges), clocked at once when there are any; a run that reaches now
// may end with the edge that takes an MWr's last beat, and the MWr goes then.
bool RnicDmac::beats(uint64_t e, uint64_t now) {
  if (!batch_edges_ || !have_edge_) return false;
  const DmacOut& o = *out_;
  if (o.rd_valid || (o.tx_valid && o.tx_last && !o.tx_write)) return false;  // taken at e
  // The driver's inputs: none of its requests, writes or completions' first beats in the run.
  uint64_t lim = now - e + 1;
  auto before = [&](uint64_t due) { lim = std::min(lim, due > e ? due - e : 0); };
  if (!rq_.empty()) before(rq_.front().due);
  if (!wq_.empty()) before(wq_.front().due);
  DmacBeatRun r;
  if (!cp_.empty()) {
    const Tlp& t = cp_.front().tlp;
    if (cp_k_ > 0 || cp_.front().first <= e) {
      r.cp = t.data.data() + size_t(cp_k_) * size_t(B_);
      r.cp_beats = cpl_beats(t, B_) - cp_k_;
      r.cp_bytes = cpl_bytes(t) - cp_k_ * uint32_t(B_);
      if (cp_k_ == 0) {  // its first beat, with the header (as step() presents it)
        r.cp_first = true;
        r.cp_tag = t.tag;
        r.cp_status = cpl_status_pin(t);
        r.cp_byte_count = t.byte_count;
        r.cp_len = carries_data(t) ? t.len : 0;
      }
    } else {
      before(cp_.front().first);
    }
  }
  if (lim == 0) return false;
  r.take_tlp = lim == now - e + 1;
  if (!wd_.empty()) {
    r.wd = wd_.front().data() + wd_pos_;
    r.wd_bytes = uint32_t(wd_.front().size() - wd_pos_);
    r.wd_more = wd_.size() > 1;
  }
  r.max_edges = lim;
  r.skip = uint32_t(e - last_edge_ - 1);  // at most kMaxSkip (run())
  const uint64_t n = model_->beat_edges(r);
  if (n == 0) return false;
  if (o.tx_valid && tx_.data.empty()) tx_header(o);  // the MWr in progress: its first beat
  model_->beat_run(r, n, tx_.data);
  if (r.rw_cnt) {
    Slot& s = slots_[r.rw_id];
    std::copy_n(r.cp, r.rw_cnt, s.data.begin() + r.rw_off);
    s.got += r.rw_cnt;
  }
  if (r.cp_beats > 0) took_cpl_beats(uint32_t(n), n == r.cp_beats);
  if (r.wd_beats > 0) took_wd_beats(r.wd_beats);
  last_edge_ = e + n - 1;
  if (r.took_tlp) {
    pcie_.send(std::move(tx_));  // at the edge that takes its last beat: now
    tx_ = Tlp{};
  }
  return true;
}

// The TLP whose beats tx presents: its header from the pins; an MWr's payload buffer from its
// first beat on.
void RnicDmac::tx_header(const DmacOut& o) {
  tx_.type = o.tx_write ? TlpType::kMWr : TlpType::kMRd;
  tx_.addr = o.tx_addr;
  tx_.len = o.tx_len;
  tx_.tag = o.tx_tag;
  tx_.requester = 1;
  if (o.tx_write && tx_.data.empty()) tx_.data = take_bytes(o.tx_len);
}

// n beats of the completion at the queue's head taken by the block; after its last, it goes.
void RnicDmac::took_cpl_beats(uint32_t n, bool last) {
  cp_k_ += n;
  if (!last) return;
  give_bytes(std::move(cp_.front().tlp.data));
  cp_.pop_front();
  cp_k_ = 0;
}

// n beats of write data taken (a write's last beat ends its buffer, partial or not).
void RnicDmac::took_wd_beats(uint32_t n) {
  wd_pos_ += size_t(n) * size_t(B_);
  if (wd_pos_ < wd_.front().size()) return;
  give_bytes(std::move(wd_.front()));
  wd_.pop_front();
  wd_pos_ = 0;
}

void RnicDmac::step(uint64_t e) {
  const DmacOut& o = *out_;
  const uint64_t at = e * clk_.period_ps;
  // Outputs presented before the edge, taken at it (tx_ready and rd_ready are always high).
  if (o.tx_valid) {
    tx_header(o);
    if (o.tx_write)
      tx_.data.insert(tx_.data.end(), o.tx_data.begin(), o.tx_data.begin() + o.tx_cnt);
    if (o.tx_last) {
      pcie_.send(std::move(tx_));  // at the edge that takes its last beat: now
      tx_ = Tlp{};
    }
  }
  if (o.rd_valid) {
    Slot& s = slots_[o.rd_id];
    const auto st = DmacStatus(o.rd_status);
    if (st != DmacStatus::kOk) {
      s.data.clear();
      ++errors_;
      if (st == DmacStatus::kTimeout) {
        ++cpl_timeouts_;
        log::warn("{}: completion timeout on a DMA read", name());
      }
    }
    read_bytes_ += s.got;
    free_ids_.push_back(o.rd_id);
    eq_.at(
        (e + uint64_t(cfg_.pcie.if_cycles)) * clk_.period_ps,
        [this, done = std::move(s.done), start = s.start_ps, st, d = std::move(s.data)]() mutable {
          read_ns_.sample(double(now_ps() - start) / 1000.0);
          --reads_in_flight_;
          done(st, std::move(d));
          give_bytes(std::move(d));  // unless `done` kept it
        });
    s = Slot{};
  }
  const bool rq_ready = o.rq_ready, wq_ready = o.wq_ready, wd_ready = o.wd_ready,
             cp_ready = o.cp_ready;

  in_.t_ps = at;
  in_.skip = have_edge_ ? uint32_t(e - last_edge_ - 1) : 0;
  in_.tx_ready = true;
  in_.rd_ready = true;
  // Inputs presented at this edge.
  in_.rq_valid = !rq_.empty() && rq_.front().due <= e && !free_ids_.empty();
  if (in_.rq_valid) {
    in_.rq_addr = rq_.front().addr;
    in_.rq_len = rq_.front().len;
    in_.rq_id = free_ids_.front();
  }
  in_.wq_valid = !wq_.empty() && wq_.front().due <= e;
  if (in_.wq_valid) {
    Wr& w = wq_.front();
    in_.wq_addr = w.addr;
    in_.wq_len = w.len;
    if (!w.streamed) {
      w.streamed = true;
      if (w.len) wd_.push_back(std::move(w.data));
    }
  }
  in_.wd_valid = !wd_.empty();
  if (in_.wd_valid) {
    const std::vector<uint8_t>& d = wd_.front();
    const size_t n = std::min<size_t>(size_t(B_), d.size() - wd_pos_);
    std::copy_n(d.begin() + int64_t(wd_pos_), n, in_.wd_data.begin());
    std::fill(in_.wd_data.begin() + int64_t(n), in_.wd_data.begin() + B_, 0);
  }
  in_.cp_valid = !cp_.empty() && cp_.front().first <= e;
  if (in_.cp_valid) {
    const Tlp& t = cp_.front().tlp;
    const bool data = carries_data(t);
    in_.cp_tag = t.tag;
    in_.cp_status = cpl_status_pin(t);
    in_.cp_byte_count = t.byte_count;
    in_.cp_len = data ? t.len : 0;
    const uint32_t len = cpl_bytes(t);
    const uint32_t off = cp_k_ * uint32_t(B_);
    in_.cp_last = cp_k_ + 1 == cpl_beats(t, B_);
    in_.cp_cnt = len ? std::min<uint32_t>(uint32_t(B_), len - off) : 0;
    if (in_.cp_cnt) std::copy_n(t.data.begin() + off, in_.cp_cnt, in_.cp_data.begin());
    std::fill(in_.cp_data.begin() + in_.cp_cnt, in_.cp_data.begin() + B_, 0);
  }

  core_->edge(in_);

  // The bytes a completion put in a read (the cycle after its beat; the read's buffer takes them).
  if (o.rw_valid) {
    Slot& s = slots_[o.rw_id];
    std::copy_n(o.rw_data.begin(), o.rw_cnt, s.data.begin() + o.rw_off);
    s.got += o.rw_cnt;
  }
  // Inputs taken at this edge.
  if (in_.rq_valid && rq_ready) {
    Slot& s = slots_[in_.rq_id];
    free_ids_.pop_front();
    s.done = std::move(rq_.front().done);
    s.start_ps = rq_.front().start_ps;
    if (s.data.capacity() == 0) s.data = take_bytes(rq_.front().len);
    s.data.assign(rq_.front().len, 0);
    rq_.pop_front();
  }
  if (in_.wq_valid && wq_ready) wq_.pop_front();
  if (in_.wd_valid && wd_ready) took_wd_beats(1);
  if (in_.cp_valid && cp_ready) took_cpl_beats(1, in_.cp_last);
  have_edge_ = true;
  last_edge_ = e;
}

uint64_t RnicDmac::next_edge(uint64_t e) const {
  const DmacOut& o = *out_;
  uint64_t n = kNever;
  auto want = [&](uint64_t x) { n = std::min(n, std::max(x, e + 1)); };
  if (o.busy) want(e + 1);
  if (!rq_.empty() && o.rq_ready && !free_ids_.empty()) want(rq_.front().due);
  if (!wq_.empty() && o.wq_ready) want(wq_.front().due);
  if (!wd_.empty() && o.wd_ready) want(e + 1);
  if (!cp_.empty() && o.cp_ready) want(cp_.front().first);
  if (o.tmo_wait) want(e + o.tmo_wait);
  return n;
}

}  // namespace rnic

namespace rnic {

void RnicDmac::trace(TraceSink& t) const {
  traced_ = true;
  batch_edges_ = false;  // the waveform shows every edge at its own time
  const std::string n = name();
  t.add_value(n, "tags_in_use", 16, [this] { return uint64_t(tags_in_use()); });
  t.add_value(n, "reads_in_flight", 32, [this] { return uint64_t(reads_in_flight_); });
  const std::string p = n + ".pins";
  core_->trace(t);  // the RTL's internals, when it runs as its traced build
  auto in = [&](const char* what, int bits, auto get) {
    t.add_value(p, what, bits, [this, get] { return uint64_t(get(in_)); });
  };
  auto out = [&](const char* what, int bits, auto get) {
    t.add_value(p, what, bits, [this, get] { return uint64_t(get(core_->out())); });
  };
  auto data = [&](const char* what, auto get) {
    t.add_raw(p, what, 8 * B_, [this, get](uint32_t* w) {
      const DmacBeat& b = get();
      for (int i = 0; i < (B_ + 3) / 4; ++i) {
        w[i] = 0;
        for (int k = 0; k < 4 && 4 * i + k < B_; ++k)
          w[i] |= uint32_t(b[size_t(4 * i + k)]) << (8 * k);
      }
    });
  };
  in("skip", 32, [](const DmacIn& i) { return i.skip; });
  in("rq_valid", 1, [](const DmacIn& i) { return i.rq_valid; });
  out("rq_ready", 1, [](const DmacOut& o) { return o.rq_ready; });
  in("rq_addr", 64, [](const DmacIn& i) { return i.rq_addr; });
  in("rq_len", 32, [](const DmacIn& i) { return i.rq_len; });
  in("rq_id", 8, [](const DmacIn& i) { return i.rq_id; });
  out("rw_valid", 1, [](const DmacOut& o) { return o.rw_valid; });
  out("rw_id", 8, [](const DmacOut& o) { return o.rw_id; });
  out("rw_off", 32, [](const DmacOut& o) { return o.rw_off; });
  out("rw_cnt", 8, [](const DmacOut& o) { return o.rw_cnt; });
  data("rw_data", [this]() -> const DmacBeat& { return core_->out().rw_data; });
  out("rd_valid", 1, [](const DmacOut& o) { return o.rd_valid; });
  out("rd_id", 8, [](const DmacOut& o) { return o.rd_id; });
  out("rd_status", 2, [](const DmacOut& o) { return o.rd_status; });
  in("wq_valid", 1, [](const DmacIn& i) { return i.wq_valid; });
  out("wq_ready", 1, [](const DmacOut& o) { return o.wq_ready; });
  in("wq_addr", 64, [](const DmacIn& i) { return i.wq_addr; });
  in("wq_len", 32, [](const DmacIn& i) { return i.wq_len; });
  in("wd_valid", 1, [](const DmacIn& i) { return i.wd_valid; });
  out("wd_ready", 1, [](const DmacOut& o) { return o.wd_ready; });
  data("wd_data", [this]() -> const DmacBeat& { return in_.wd_data; });
  out("tx_valid", 1, [](const DmacOut& o) { return o.tx_valid; });
  out("tx_write", 1, [](const DmacOut& o) { return o.tx_write; });
  out("tx_addr", 64, [](const DmacOut& o) { return o.tx_addr; });
  out("tx_len", 13, [](const DmacOut& o) { return o.tx_len; });
  out("tx_tag", 10, [](const DmacOut& o) { return o.tx_tag; });
  out("tx_cnt", 8, [](const DmacOut& o) { return o.tx_cnt; });
  out("tx_last", 1, [](const DmacOut& o) { return o.tx_last; });
  data("tx_data", [this]() -> const DmacBeat& { return core_->out().tx_data; });
  in("cp_valid", 1, [](const DmacIn& i) { return i.cp_valid; });
  out("cp_ready", 1, [](const DmacOut& o) { return o.cp_ready; });
  in("cp_tag", 10, [](const DmacIn& i) { return i.cp_tag; });
  in("cp_status", 2, [](const DmacIn& i) { return i.cp_status; });
  in("cp_byte_count", 13, [](const DmacIn& i) { return i.cp_byte_count; });
  in("cp_len", 13, [](const DmacIn& i) { return i.cp_len; });
  in("cp_cnt", 8, [](const DmacIn& i) { return i.cp_cnt; });
  in("cp_last", 1, [](const DmacIn& i) { return i.cp_last; });
  data("cp_data", [this]() -> const DmacBeat& { return in_.cp_data; });
  out("busy", 1, [](const DmacOut& o) { return o.busy; });
  out("tmo_wait", 32, [](const DmacOut& o) { return o.tmo_wait; });
  out("tags_used", 11, [](const DmacOut& o) { return o.tags_used; });
}

}  // namespace rnic
