// rnic_xlat as the engines reach it (DESIGN.md §4): a request/response channel and the tables'
// write port. An engine sends a request and reacts when the result arrives, handed to it in its
// own event queue at the cycle the result is valid, so an implementation may
// answer in any number of cycles. Requests from different engines do not wait for each other
// (the model serves each requester as its own port).
//
// A check request (XlatRequest::check_only) asks only whether the whole range translates: the
// answer carries the status and no chunks, smt_cycles after the request (the SQ engine's SGE
// checks and the RX engine's Read Request source check).
//
// Implementations: XlatModelChannel (below: XlatBlock, rnic_xlat.h, answering after the cycles
// its translation takes); the RTL twin is rtl/rnic/rnic_xlat.sv behind the same channel
// (sim/blocks.h, docs/rtl.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/block.h"
#include "models/common/event_queue.h"
#include "models/rnic/abi/wqe.h"
#include "models/rnic/xlat/rnic_xlat.h"

namespace rnic {

class XlatChannel {
 public:
  using Reply = std::function<void(XlatResult&&)>;
  struct Params {
    size_t smt = 0, pbl = 0;  // table entries: core.stags, core.pbl_entries
  };
  class Recorded;
  virtual ~XlatChannel() = default;
  // The request port: `reply` runs in `to` (the requester's event queue) when the result is in.
  virtual void request(const XlatRequest& r, EventQueue& to, Reply reply) = 0;
  // The table-write port (rnic_xlat.h: XlatBlock's). Each answers at once whether it was taken.
  virtual bool write_smt(uint32_t index, const SmtEntry& e) = 0;
  virtual bool invalidate(uint32_t stag, const uint32_t* pd = nullptr) = 0;
  virtual bool free(uint32_t index) = 0;
  virtual bool write_pbl(uint32_t first, const std::vector<PblEntry>& entries) = 0;
  virtual size_t pbl_entries() const = 0;
  virtual const XlatTiming& timing() const = 0;
  // The SMT entry at `index` as last written (nullptr: outside the table): the write port's
  // read side, for a writer that must see an entry's state first.
  virtual const SmtEntry* entry(uint32_t index) const = 0;
};

// Makes the channel the core uses (BlockArgs: the core clock; no datapath-wide port).
using XlatFactory = BlockFactory<XlatChannel>;

class XlatModelChannel : public XlatChannel, public sc_core::sc_module {
 public:
  XlatModelChannel(sc_core::sc_module_name n, size_t smt, size_t pbl, ClockDomain clk,
                   XlatTiming t = {})
      : sc_core::sc_module(n), block_(smt, pbl, t), clk_(clk) {}
  void request(const XlatRequest& r, EventQueue& to, Reply reply) override;
  bool write_smt(uint32_t index, const SmtEntry& e) override { return block_.write_smt(index, e); }
  bool invalidate(uint32_t stag, const uint32_t* pd) override {
    return block_.invalidate(stag, pd);
  }
  bool free(uint32_t index) override { return block_.free(index); }
  bool write_pbl(uint32_t first, const std::vector<PblEntry>& e) override {
    return block_.write_pbl(first, e);
  }
  size_t pbl_entries() const override { return block_.pblmt().size(); }
  const XlatTiming& timing() const override { return block_.timing(); }
  const SmtEntry* entry(uint32_t index) const override { return block_.smt().find(index); }

 private:
  XlatBlock block_;
  ClockDomain clk_;
};

inline XlatFactory xlat_model_factory() {
  return [](const BlockArgs& a, const XlatChannel::Params& p) {
    return std::make_unique<XlatModelChannel>(a.name.c_str(), p.smt, p.pbl, a.clk);
  };
}

// The channel for the run record (block.h): each translation's status, chunks and fault offset
// with its cycles, and each table write with whether it was taken.
class XlatChannel::Recorded : public XlatChannel {
 public:
  Recorded(std::unique_ptr<XlatChannel> in, AnswerLog& log, const BlockArgs& a);
  void request(const XlatRequest& r, EventQueue& to, Reply reply) override;
  bool write_smt(uint32_t index, const SmtEntry& e) override;
  bool invalidate(uint32_t stag, const uint32_t* pd) override;
  bool free(uint32_t index) override;
  bool write_pbl(uint32_t first, const std::vector<PblEntry>& e) override;
  size_t pbl_entries() const override { return in_->pbl_entries(); }
  const XlatTiming& timing() const override { return in_->timing(); }
  const SmtEntry* entry(uint32_t index) const override { return in_->entry(index); }

 private:
  bool note(uint64_t a, uint64_t b, bool ok);
  std::unique_ptr<XlatChannel> in_;
  AnswerLog& log_;
  uint32_t src_, wr_;
};

// Translates bytes [off, off + len) of a WQE's SGE list through `xlat`, one request per SGE the
// range touches, each after the previous one's result (so the cycles add up); `done` gets the
// first failing SGE's status (and the chunks before it; for kPageFault where, in that SGE) or
// kOk and every chunk, in `to` when the last result is in. With nothing to translate (len 0)
// `done` runs at once. check_only: check requests (status only, no chunks).
using SgeListDone = std::function<void(XlatStatus, std::vector<XlatChunk>&&, const XlatFault&)>;
void translate_sge_list(XlatChannel& xlat, EventQueue& to, const Wqe& w, uint64_t off, uint32_t len,
                        uint8_t access, uint32_t pd, SgeListDone done, bool check_only = false);

}  // namespace rnic
