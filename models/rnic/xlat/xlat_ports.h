// The rnic_xlat block's boundary, written once (DESIGN.md §4), and what comes from it: the port
// list, the packing of the table entries onto the write ports, the signal bundle, the model's
// pin face and the check against a Verilated class. Between models the same block is the burst
// API of rnic_xlat.h (one call, every chunk stamped with its cycle); the pin face is where an
// RTL block or a waveform sits.
//
//   clk, rst                 clock, synchronous active-high reset
//   req_valid/req_ready      one translation request per beat
//   req_stag [32]            STag (index << 8 | key)
//   req_to   [64]            tagged offset
//   req_len  [32]            length in bytes
//   req_access [4]           rights required (abi::access bits; 0 = local read)
//   req_pd   [32]            protection domain of the requester
//   rsp_valid/rsp_ready      one beat per chunk, in order
//   rsp_pa   [64]            chunk's physical address (kPageFault: the absent page's tagged offset)
//   rsp_len  [32]            chunk's length (0 on an error beat and on a 0-byte request's beat)
//   rsp_status [3]           XlatStatus: 0 ok, else the error; an error beat ends the burst
//                            (a page fault's and a short extent list's come after the chunks
//                            before them, rnic_xlat.h; the others are the request's one beat)
//   rsp_last                 last beat of the request
//   smt_we, smt_addr [24], smt_wdata [384]   SMT entry write (smt_pack's layout)
//   pbl_we, pbl_addr [32], pbl_wdata [128]   PBLMT entry write: address 63..0, extent length
//   127..64
//
// Pin timing: a request accepted at edge A is translated against the tables as written before A
// (a table write at A counts from A + 1); its chunk k is presented on rsp_* from edge
// A + chunks[k].cycle (an error's beat from A + cycles), and each beat is held until rsp_ready.
// req_ready is low from the accepting edge until the edge that takes the last beat: one request
// at a time, as the block's header says.
#pragma once

#include <deque>
#include <systemc>

#include "models/common/ports.h"
#include "models/common/scheduler.h"
#include "models/rnic/xlat/rnic_xlat.h"

namespace rnic {

constexpr int kSmtEntryBits = 384;
using SmtWord = sc_dt::sc_bv<kSmtEntryBits>;
using PblWord = sc_dt::sc_bv<128>;

// SMT entry layout on smt_wdata (bit ranges, low..high):
//   1:0 state  3:2 type  11:4 key  43:12 pd  51:44 access  115:52 base_to  179:116 length
//   211:180 pbl_first  243:212 pbl_count  249:244 page_shift  313:250 first_page_offset
//   377:314 phys_base  383:378 zero
SmtWord smt_pack(const SmtEntry& e);
SmtEntry smt_unpack(const SmtWord& w);
PblWord pbl_pack(const PblEntry& e);
PblEntry pbl_unpack(const PblWord& w);

}  // namespace rnic

// clk is bound by whoever owns the clock; the bundle carries the rest.
#define RNIC_XLAT_PORTS(X)              \
  X(in, rst, 1)                         \
  X(in, req_valid, 1)                   \
  X(out, req_ready, 1)                  \
  X(in, req_stag, 32)                   \
  X(in, req_to, 64)                     \
  X(in, req_len, 32)                    \
  X(in, req_access, 4)                  \
  X(in, req_pd, 32)                     \
  X(out, rsp_valid, 1)                  \
  X(in, rsp_ready, 1)                   \
  X(out, rsp_pa, 64)                    \
  X(out, rsp_len, 32)                   \
  X(out, rsp_status, 3)                 \
  X(out, rsp_last, 1)                   \
  X(in, smt_we, 1)                      \
  X(in, smt_addr, 24)                   \
  X(in, smt_wdata, rnic::kSmtEntryBits) \
  X(in, pbl_we, 1)                      \
  X(in, pbl_addr, 32)                   \
  X(in, pbl_wdata, 128)

namespace rnic {

RNIC_SIGNAL_BUNDLE(XlatSignals, RNIC_XLAT_PORTS)

// Compile-time proof that class V (a Verilated rnic_xlat, or the pin model) has the port list.
RNIC_PORTS_MATCH(xlat_ports_match, RNIC_XLAT_PORTS)

// The model behind the rnic_xlat pin list: it holds its own SMT and PBLMT (written through the
// write ports, as the RTL's memories are), takes a request beat into one RnicXlat::translate()
// call and expands the burst onto rsp_* at the cycles the burst stamps.
class XlatPinModel : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk{"clk"};
  RNIC_XLAT_PORTS(RNIC_PORT_DECL)

  XlatPinModel(sc_core::sc_module_name n, size_t smt_entries, size_t pbl_entries,
               XlatTiming t = {});

  const Smt& smt() const { return smt_; }
  const Pblmt& pblmt() const { return pbl_; }

 private:
  struct Beat {
    uint64_t due;  // edge count from which it is presented
    uint64_t pa;
    uint32_t len;
    uint8_t status;
    bool last;
  };
  void on_clock();

  Smt smt_;
  Pblmt pbl_;
  RnicXlat xlat_;
  std::deque<Beat> out_;
  bool busy_ = false, presenting_ = false;
  uint64_t cycle_ = 0;
};

}  // namespace rnic
