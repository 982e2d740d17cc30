// The rnic_dmac block's boundary, written once (DESIGN.md §4), and what comes from it: the port
// list, the signal bundle, the check against a Verilated class, and the model's pin face. Between
// models the block is the PCIe I/F's DMA service (dma_read / dma_write: one call per request, the
// read's data handed over in one piece at its cycle); both faces run DmacLogic (rnic_dmac.h).
//
//   clk, rst                  clock, synchronous active-high reset
//   Engine side
//   rq_valid/rq_ready         a read request: rq_addr [64], rq_len [32], rq_id [8] (the engine's)
//   rd_valid/rd_ready         a finished read's data, in the order reads finish: rd_data
//                             [8*BYTES], rd_cnt, rd_last, rd_id [8], rd_status [2] (DmacStatus;
//                             a failed or 0-byte read is one beat of rd_cnt 0)
//   wq_valid/wq_ready         a write request: wq_addr [64], wq_len [32]; its bytes follow on
//   wd_valid/wd_ready         wd_data, wd_cnt, wd_last (a 0-byte write has no data beats)
//   TLP side (to and from the PCIe I/F)
//   tx_valid/tx_ready         TLPs out: tx_write (MWr; else MRd), tx_addr [64], tx_len [13],
//                             tx_tag [10] (MRd), then an MWr's payload on tx_data, tx_cnt, tx_last
//                             over its beats; an MRd is one beat with tx_last
//   cp_valid/cp_ready         completions in: cp_tag [10], cp_status [2] (DmacStatus),
//   cp_byte_count
//                             [13], cp_len [13] (this completion's payload), cp_data, cp_cnt,
//                             cp_last over its beats (a Cpl without data: one beat, cp_cnt 0)
//
// Pin timing (core_clk edges; if_cycles as the burst face's pcie.if_cycles): a read accepted at
// edge A joins DmacLogic at A + if_cycles and its MRds join the TX queue from then as tags free
// up; a write's MWrs join it if_cycles after its last data beat (at one edge, due MWrs before
// new MRds); the TX queue sends one beat per cycle in order. A completion counts at the edge that
// takes its last beat; a read that finishes there presents its first data beat if_cycles later, one
// beat per cycle. A piece outstanding for timeout_cycles fails its read with kTimeout. Queues:
// kReqFifo read and write requests each, kOutBeats TX and read-data beats each (the ready of a full
// queue is low).
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <systemc>
#include <vector>

#include "models/common/ports.h"
#include "models/rnic/rnic_dmac.h"

#define RNIC_DMAC_PORTS(X)                           \
  X(in, rst, 1)                                      \
  X(in, rq_valid, 1)                                 \
  X(out, rq_ready, 1)                                \
  X(in, rq_addr, 64)                                 \
  X(in, rq_len, 32)                                  \
  X(in, rq_id, 8)                                    \
  X(out, rd_valid, 1)                                \
  X(in, rd_ready, 1)                                 \
  X(out, rd_data, rnic::StreamWidths<BYTES>::DATA_W) \
  X(out, rd_cnt, rnic::StreamWidths<BYTES>::CNT_W)   \
  X(out, rd_last, 1)                                 \
  X(out, rd_id, 8)                                   \
  X(out, rd_status, 2)                               \
  X(in, wq_valid, 1)                                 \
  X(out, wq_ready, 1)                                \
  X(in, wq_addr, 64)                                 \
  X(in, wq_len, 32)                                  \
  X(in, wd_valid, 1)                                 \
  X(out, wd_ready, 1)                                \
  X(in, wd_data, rnic::StreamWidths<BYTES>::DATA_W)  \
  X(in, wd_cnt, rnic::StreamWidths<BYTES>::CNT_W)    \
  X(in, wd_last, 1)                                  \
  X(out, tx_valid, 1)                                \
  X(in, tx_ready, 1)                                 \
  X(out, tx_write, 1)                                \
  X(out, tx_addr, 64)                                \
  X(out, tx_len, 13)                                 \
  X(out, tx_tag, 10)                                 \
  X(out, tx_data, rnic::StreamWidths<BYTES>::DATA_W) \
  X(out, tx_cnt, rnic::StreamWidths<BYTES>::CNT_W)   \
  X(out, tx_last, 1)                                 \
  X(in, cp_valid, 1)                                 \
  X(out, cp_ready, 1)                                \
  X(in, cp_tag, 10)                                  \
  X(in, cp_status, 2)                                \
  X(in, cp_byte_count, 13)                           \
  X(in, cp_len, 13)                                  \
  X(in, cp_data, rnic::StreamWidths<BYTES>::DATA_W)  \
  X(in, cp_cnt, rnic::StreamWidths<BYTES>::CNT_W)    \
  X(in, cp_last, 1)

namespace rnic {

template <int BYTES>
struct DmacSignals : sc_core::sc_module {
  RNIC_DMAC_PORTS(RNIC_SIGNAL_DECL)

  explicit DmacSignals(sc_core::sc_module_name n) : sc_core::sc_module(n) {}

  template <class T>
  void connect(T& m) {
    RNIC_DMAC_PORTS(RNIC_SIGNAL_BIND)
  }
  void trace(sc_core::sc_trace_file* tf) const { RNIC_DMAC_PORTS(RNIC_SIGNAL_TRACE) }
  template <class F>
  void trace_fst(F& ft, const std::string& scope) const {
    RNIC_DMAC_PORTS(RNIC_SIGNAL_FST)
  }
};

// Compile-time proof that class V (a Verilated rnic_dmac, or the pin model) has the port list.
template <class V, int BYTES>
constexpr bool dmac_ports_match() {
  RNIC_CHECK_PORT(in, clk, 1)
  RNIC_DMAC_PORTS(RNIC_CHECK_PORT)
  return true;
}

// The model behind the rnic_dmac pin list: DmacLogic between the engine-side and TLP-side
// channels, with the pin timing above.
template <int BYTES>
class DmacPinModel : public sc_core::sc_module {
 public:
  static constexpr size_t kReqFifo = 4, kOutBeats = 512;
  sc_core::sc_in<bool> clk{"clk"};
  RNIC_DMAC_PORTS(RNIC_PORT_DECL)

  DmacPinModel(sc_core::sc_module_name n, uint64_t mrrs, uint64_t mps, int tags, uint64_t if_cycles,
               uint64_t timeout_cycles)
      : sc_core::sc_module(n),
        logic_(mrrs, tags),
        mps_(mps),
        if_cycles_(if_cycles),
        timeout_cycles_(timeout_cycles),
        fresh_(mrrs, tags) {
    SC_HAS_PROCESS(DmacPinModel);
    SC_METHOD(on_clock);
    sensitive << clk.pos();
    dont_initialize();
  }

 private:
  using Data = pin_t<8 * BYTES>;
  struct Beat {  // a TX or read-data beat
    bool write = false;
    uint64_t addr = 0;
    uint32_t len = 0;
    uint16_t tag = 0;
    Data data{};
    unsigned cnt = 0;
    bool last = false;
    uint8_t id = 0, status = 0;
  };
  struct Timed {
    uint64_t at;
    std::vector<Beat> beats;  // a whole TLP, or a whole read's data
  };
  struct Write {
    uint64_t addr;
    uint32_t len;
    std::vector<uint8_t> data;
  };

  void on_clock() {
    ++cycle_;
    if (rst.read()) {
      reset();
      return;
    }
    // Outputs taken at this edge.
    if (tx_on_ && tx_ready.read()) tx_q_.pop_front();
    if (rd_on_ && rd_ready.read()) rd_q_.pop_front();
    // Inputs.
    if (rq_valid.read() && rq_ready.read())
      reads_in_.push_back(
          {cycle_ + if_cycles_, rq_addr.read(), rq_len.read(), uint8_t(rq_id.read())});
    if (wq_valid.read() && wq_ready.read()) {
      writes_.push_back({wq_addr.read(), wq_len.read(), {}});
      if (wq_len.read() == 0) writes_.pop_back();  // nothing to send
    }
    if (wd_valid.read() && wd_ready.read() && !writes_.empty()) take_write_beat();
    if (cp_valid.read() && cp_ready.read()) take_completion_beat();
    // Reads due into the model, then MRds for the tags that are free.
    while (!reads_in_.empty() && reads_in_.front().at <= cycle_) {
      const ReqIn r = reads_in_.front();
      reads_in_.pop_front();
      ids_[logic_.read(r.addr, r.len)] = r.id;
    }
    // MWrs that are due, then the MRds of the tags free now, join the TX queue.
    while (!mwr_timed_.empty() && mwr_timed_.front().at <= cycle_) {
      for (Beat& b : mwr_timed_.front().beats) tx_q_.push_back(b);
      mwr_timed_.pop_front();
    }
    for (const DmacLogic::Mrd& m : logic_.issue(cycle_)) {
      Beat b;
      b.addr = m.addr;
      b.len = m.len;
      b.tag = m.tag;
      b.last = true;
      tx_q_.push_back(b);
    }
    if (cycle_ >= timeout_cycles_) logic_.expire_issued_by(cycle_ - timeout_cycles_);
    finish_reads();
    while (!rd_timed_.empty() && rd_timed_.front().at <= cycle_) {
      for (Beat& b : rd_timed_.front().beats) rd_q_.push_back(b);
      rd_timed_.pop_front();
    }
    drive();
  }

  void take_write_beat() {
    Write& w = writes_.front();
    const auto d = wd_data.read();
    const unsigned n = wd_last.read() ? unsigned(wd_cnt.read()) : unsigned(BYTES);
    unpack_beat(d, std::min<size_t>(n, w.len - w.data.size()), w.data);
    if (!wd_last.read()) return;
    // The whole write is in: its MWrs join the TX queue if_cycles later.
    w.data.resize(w.len);
    for (const DmacSpan& sp : dmac_split(w.addr, w.len, mps_, false)) {
      std::vector<Beat> tlp;
      const size_t beats = (sp.len + BYTES - 1) / BYTES;
      for (size_t k = 0; k < beats; ++k) {
        Beat b;
        b.write = true;
        b.addr = sp.addr;
        b.len = sp.len;
        b.cnt = unsigned(std::min<size_t>(BYTES, sp.len - k * BYTES));
        b.data = pack_beat<Data>(&w.data[sp.addr - w.addr + k * BYTES], b.cnt);
        b.last = k + 1 == beats;
        tlp.push_back(b);
      }
      mwr_timed_.push_back({cycle_ + if_cycles_, std::move(tlp)});
    }
    writes_.pop_front();
  }

  void take_completion_beat() {
    if (!in_cpl_) {
      in_cpl_ = true;
      cpl_tag_ = uint16_t(cp_tag.read());
      cpl_status_ = DmacStatus(cp_status.read());
      cpl_byte_count_ = cp_byte_count.read();
      cpl_len_ = cp_len.read();
      cpl_data_.clear();
    }
    const auto d = cp_data.read();
    const unsigned n = cp_last.read() ? unsigned(cp_cnt.read()) : unsigned(BYTES);
    unpack_beat(d, n, cpl_data_);
    if (!cp_last.read()) return;
    in_cpl_ = false;
    cpl_data_.resize(cpl_status_ == DmacStatus::kOk ? cpl_len_ : 0);
    logic_.completion(cpl_tag_, cpl_status_, cpl_byte_count_, cpl_data_.data(),
                      uint32_t(cpl_data_.size()));
  }

  void finish_reads() {
    for (DmacLogic::Finished& f : logic_.take_finished()) {
      std::vector<Beat> beats;
      const size_t n = f.data.empty() ? 1 : (f.data.size() + BYTES - 1) / BYTES;
      for (size_t k = 0; k < n; ++k) {
        Beat b;
        b.cnt =
            unsigned(std::min<size_t>(BYTES, f.data.size() - std::min(f.data.size(), k * BYTES)));
        if (b.cnt) b.data = pack_beat<Data>(&f.data[k * BYTES], b.cnt);
        b.last = k + 1 == n;
        b.id = ids_.at(f.id);
        b.status = uint8_t(f.status);
        beats.push_back(b);
      }
      ids_.erase(f.id);
      rd_timed_.push_back({cycle_ + if_cycles_, std::move(beats)});
    }
  }

  void drive() {
    tx_on_ = !tx_q_.empty();
    tx_valid.write(tx_on_);
    if (tx_on_) {
      const Beat& b = tx_q_.front();
      tx_write.write(b.write);
      tx_addr.write(b.addr);
      tx_len.write(b.len);
      tx_tag.write(b.tag);
      tx_data.write(b.data);
      tx_cnt.write(b.cnt);
      tx_last.write(b.last);
    }
    rd_on_ = !rd_q_.empty();
    rd_valid.write(rd_on_);
    if (rd_on_) {
      const Beat& b = rd_q_.front();
      rd_data.write(b.data);
      rd_cnt.write(b.cnt);
      rd_last.write(b.last);
      rd_id.write(b.id);
      rd_status.write(b.status);
    }
    rq_ready.write(reads_in_.size() < kReqFifo);
    wq_ready.write(writes_.size() < kReqFifo);
    wd_ready.write(!writes_.empty() && tx_q_.size() < kOutBeats);
    cp_ready.write(rd_q_.size() < kOutBeats);
  }

  void reset() {
    logic_ = fresh_;
    reads_in_.clear();
    writes_.clear();
    mwr_timed_.clear();
    rd_timed_.clear();
    tx_q_.clear();
    rd_q_.clear();
    ids_.clear();
    in_cpl_ = tx_on_ = rd_on_ = false;
    for (auto* p : {&rq_ready, &wq_ready, &wd_ready, &cp_ready, &tx_valid, &rd_valid})
      p->write(false);
  }

  struct ReqIn {
    uint64_t at, addr;
    uint32_t len;
    uint8_t id;
  };
  DmacLogic logic_;
  uint64_t mps_, if_cycles_, timeout_cycles_;
  const DmacLogic fresh_;  // the state a reset returns to
  uint64_t cycle_ = 0;
  std::deque<ReqIn> reads_in_;
  std::deque<Write> writes_;
  std::deque<Timed> mwr_timed_, rd_timed_;
  std::deque<Beat> tx_q_, rd_q_;
  std::map<uint64_t, uint8_t> ids_;  // DmacLogic read id -> engine id
  bool in_cpl_ = false, tx_on_ = false, rd_on_ = false;
  uint16_t cpl_tag_ = 0;
  DmacStatus cpl_status_ = DmacStatus::kOk;
  uint32_t cpl_byte_count_ = 0, cpl_len_ = 0;
  std::vector<uint8_t> cpl_data_;
};

}  // namespace rnic
