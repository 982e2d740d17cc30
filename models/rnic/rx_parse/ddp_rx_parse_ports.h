// The ddp_rx_parse block's boundary, written once (DESIGN.md §4), and what comes from it: the
// port list, the signal bundle, the check against a Verilated class, and the model's pin face.
// Between models the block is the burst API of ddp_rx_parse.h (one call per segment, the header
// result stamped with its cycle; the payload stays in the segment's buffer).
//
//   clk, rst                    clock, synchronous active-high reset
//   s_valid/s_ready             segment beats in (byte 0 in bits 7..0 is the first byte)
//   s_data [8*BYTES], s_last, s_cnt [clog2(BYTES+1)]   as crc32's stream (s_cnt: last beat only)
//   s_len [16]                  the segment's length in bytes, with its first beat
//   h_valid/h_ready             one header result per segment:
//     h_dropped                 too short for its header: nothing else is valid
//     h_ok                      header checks passed; else h_layer [2], h_etype [4], h_code [8]
//                               give the Terminate cause
//     h_tagged h_last h_opcode [4] h_stag [32] h_to [64] h_inv_stag [32] h_qn h_msn h_mo [32]
//     h_rr_ok, h_rr_sink_stag [32] h_rr_sink_to [64] h_rr_size [32] h_rr_src_stag [32]
//     h_rr_src_to [64]          a Read Request's payload (h_rr_ok: all 28 bytes there)
//     h_payload_len [16]        payload bytes after the header
//   p_valid/p_ready             the payload of a segment with h_ok, realigned to byte 0 of the
//   p_data, p_last, p_cnt       first beat; no beats for an empty payload or a failed header
//
// Pin timing: with the first beat accepted at edge F, the header result is presented from edge
// max(F + rx_parse_cycles, E + 1), E being the edge that brought the last byte it depends on
// (RxParseResult::need): with back-to-back beats, F + the burst's cycles. A payload beat is
// presented from the edge after its last byte arrived, not before the header result, one per
// cycle. The next segment's first beat is taken no earlier than F + max(result cycles, beats)
// (the burst model's spacing). Queues: kHeaderFifo results and kPayloadFifo beats; s_ready is
// low while either is full.
#pragma once

#include <algorithm>
#include <cstring>
#include <deque>
#include <systemc>
#include <vector>

#include "models/common/ports.h"
#include "models/common/scheduler.h"
#include "models/rnic/rx_parse/ddp_rx_parse.h"

#define RNIC_RX_PARSE_PORTS(X)                      \
  X(in, rst, 1)                                     \
  X(in, s_valid, 1)                                 \
  X(out, s_ready, 1)                                \
  X(in, s_data, rnic::StreamWidths<BYTES>::DATA_W)  \
  X(in, s_last, 1)                                  \
  X(in, s_cnt, rnic::StreamWidths<BYTES>::CNT_W)    \
  X(in, s_len, 16)                                  \
  X(out, h_valid, 1)                                \
  X(in, h_ready, 1)                                 \
  X(out, h_dropped, 1)                              \
  X(out, h_ok, 1)                                   \
  X(out, h_layer, 2)                                \
  X(out, h_etype, 4)                                \
  X(out, h_code, 8)                                 \
  X(out, h_tagged, 1)                               \
  X(out, h_last, 1)                                 \
  X(out, h_opcode, 4)                               \
  X(out, h_stag, 32)                                \
  X(out, h_to, 64)                                  \
  X(out, h_inv_stag, 32)                            \
  X(out, h_qn, 32)                                  \
  X(out, h_msn, 32)                                 \
  X(out, h_mo, 32)                                  \
  X(out, h_rr_ok, 1)                                \
  X(out, h_rr_sink_stag, 32)                        \
  X(out, h_rr_sink_to, 64)                          \
  X(out, h_rr_size, 32)                             \
  X(out, h_rr_src_stag, 32)                         \
  X(out, h_rr_src_to, 64)                           \
  X(out, h_payload_len, 16)                         \
  X(out, p_valid, 1)                                \
  X(in, p_ready, 1)                                 \
  X(out, p_data, rnic::StreamWidths<BYTES>::DATA_W) \
  X(out, p_last, 1)                                 \
  X(out, p_cnt, rnic::StreamWidths<BYTES>::CNT_W)

namespace rnic {

template <int BYTES>
RNIC_SIGNAL_BUNDLE(RxParseSignals, RNIC_RX_PARSE_PORTS)

// Compile-time proof that class V (a Verilated ddp_rx_parse, or the pin model) has the port list.
RNIC_PORTS_MATCH(rx_parse_ports_match, RNIC_RX_PARSE_PORTS)

    // The model behind the ddp_rx_parse pin list: it assembles the segment's beats, calls
    // DdpRxParse::parse() as soon as the bytes the result depends on are in, and presents the
    // result and the realigned payload at the cycles the pin timing above gives.
    template <int BYTES>
    class RxParsePinModel : public sc_core::sc_module {
 public:
  static constexpr size_t kHeaderFifo = 4, kPayloadFifo = 64;
  sc_core::sc_in<bool> clk{"clk"};
  RNIC_RX_PARSE_PORTS(RNIC_PORT_DECL)

  RxParsePinModel(sc_core::sc_module_name n, uint64_t parse_cycles)
      : sc_core::sc_module(n), parse_(parse_cycles, BYTES) {
    SC_HAS_PROCESS(RxParsePinModel);
    SC_METHOD(on_clock);
    sensitive << clk.pos();
    dont_initialize();
  }

 private:
  struct Header {
    uint64_t due;
    RxParseResult r;
  };
  struct Payload {
    uint64_t due;
    pin_t<8 * BYTES> data;
    bool last;
    unsigned cnt;
  };

  void on_clock() {
    ++cycle_;
    if (rst.read()) {
      hq_.clear();
      pq_.clear();
      in_seg_ = false;
      h_on_ = p_on_ = false;
      s_ready.write(false);
      h_valid.write(false);
      p_valid.write(false);
      return;
    }
    if (h_on_ && h_ready.read()) hq_.pop_front();
    if (p_on_ && p_ready.read()) pq_.pop_front();
    if (s_valid.read() && s_ready.read()) take_beat();
    h_on_ = !hq_.empty() && hq_.front().due <= cycle_;
    h_valid.write(h_on_);
    if (h_on_) drive_header(hq_.front().r);
    p_on_ = !pq_.empty() && pq_.front().due <= cycle_;
    p_valid.write(p_on_);
    if (p_on_) {
      p_data.write(pq_.front().data);
      p_last.write(pq_.front().last);
      p_cnt.write(pq_.front().cnt);
    }
    s_ready.write(hq_.size() < kHeaderFifo && pq_.size() < kPayloadFifo &&
                  (in_seg_ || cycle_ + 1 >= next_start_));
  }

  void take_beat() {
    if (!in_seg_) {
      in_seg_ = true;
      first_ = cycle_;
      buf_.assign(s_len.read(), 0);
      got_ = 0;
      arrived_.clear();
      have_header_ = false;
      sent_ = 0;
    }
    const auto d = s_data.read();
    const unsigned n = s_last.read() ? unsigned(s_cnt.read()) : unsigned(BYTES);
    for (unsigned i = 0; i < n && got_ < buf_.size(); ++i) buf_[got_++] = pin_byte(d, int(i));
    arrived_.push_back(cycle_);
    const bool last = s_last.read();
    if (!have_header_) {
      const RxParseResult r = parse_.parse(buf_.data(), buf_.size());
      if (r.need <= got_ || last) {
        have_header_ = true;
        hdr_ = r;
        header_due_ = std::max(first_ + r.cycles, cycle_ + 1);
        hq_.push_back({header_due_, r});
      }
    }
    if (have_header_ && hdr_.ok) emit_payload(last);
    if (last) {
      in_seg_ = false;
      next_start_ = first_ + std::max(hdr_.cycles, parse_.stream_cycles(buf_.size()));
    }
  }

  // Queues every payload beat whose bytes are all in (or, at the last beat, what is left).
  void emit_payload(bool last) {
    const size_t plen = hdr_.payload_len, off = hdr_.payload_off;
    while (sent_ < plen) {
      const size_t n = std::min<size_t>(BYTES, plen - sent_);
      if (off + sent_ + n > got_ && !last) return;
      Payload p{};
      p.data = pack_beat<pin_t<8 * BYTES>>(&buf_[off + sent_], n);
      const size_t last_byte = off + sent_ + n - 1;
      const uint64_t in_at = arrived_[std::min(last_byte / BYTES, arrived_.size() - 1)];
      p.due = std::max({in_at + 1, header_due_, pq_.empty() ? 0 : pq_.back().due + 1});
      sent_ += n;
      p.last = sent_ == plen;
      p.cnt = unsigned(n);
      pq_.push_back(p);
    }
  }

  void drive_header(const RxParseResult& r) {
    h_dropped.write(r.dropped);
    h_ok.write(r.ok);
    h_layer.write(uint32_t(r.why.layer));
    h_etype.write(r.why.etype);
    h_code.write(r.why.code);
    h_tagged.write(r.h.tagged);
    h_last.write(r.h.last);
    h_opcode.write(r.h.opcode & 0xF);
    h_stag.write(r.h.stag);
    h_to.write(r.h.to);
    h_inv_stag.write(r.h.inv_stag);
    h_qn.write(r.h.qn);
    h_msn.write(r.h.msn);
    h_mo.write(r.h.mo);
    h_rr_ok.write(r.rr_ok);
    h_rr_sink_stag.write(r.rr.sink_stag);
    h_rr_sink_to.write(r.rr.sink_to);
    h_rr_size.write(r.rr.size);
    h_rr_src_stag.write(r.rr.src_stag);
    h_rr_src_to.write(r.rr.src_to);
    h_payload_len.write(r.payload_len);
  }

  DdpRxParse parse_;
  std::deque<Header> hq_;
  std::deque<Payload> pq_;
  bool h_on_ = false, p_on_ = false;
  bool in_seg_ = false, have_header_ = false;
  uint64_t cycle_ = 0, first_ = 0, header_due_ = 0, next_start_ = 0;
  std::vector<uint8_t> buf_;
  size_t got_ = 0, sent_ = 0;
  std::vector<uint64_t> arrived_;
  RxParseResult hdr_;
};

}  // namespace rnic
