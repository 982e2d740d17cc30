// The rnic_dmac block's boundary, written once (DESIGN.md §4), and what comes from it: the port
// list, the signal bundle, the check against a Verilated class, and the model's SystemC pin face.
// The pins are dmac_core.h's DmacIn / DmacOut, whose header gives the behaviour per edge; every
// output is a register or a function of registers (no path from an input to an output).
//
//   clk, rst                  clock, synchronous active-high reset
//   skip [32]                 cycles that passed without an edge before this one
//   cfg_mrrs, cfg_mps [13]    B; cfg_tags [11]; cfg_timeout [32] cycles (static out of reset)
//   Engine side
//   rq_valid/rq_ready         a read: rq_addr [64], rq_len [32], rq_id [8]
//   rw_valid                  a completion's bytes for read rw_id [8] at rw_off [32]: rw_data,
//                             rw_cnt (no ready)
//   rd_valid/rd_ready         a finished read: rd_id [8], rd_status [2] (DmacStatus)
//   wq_valid/wq_ready         a write: wq_addr [64], wq_len [32]
//   wd_valid/wd_ready         write bytes: wd_data, each write from a new beat
//   TLP side (to and from the PCIe I/F)
//   tx_valid/tx_ready         TLP beats: tx_write (MWr; else MRd), tx_addr [64], tx_len [13],
//                             tx_tag [10] (MRd), tx_data, tx_cnt, tx_last (an MRd is one beat)
//   cp_valid/cp_ready         completion beats: cp_tag [10], cp_status [2] (DmacStatus),
//                             cp_byte_count [13], cp_len [13] (this completion's payload),
//                             cp_data, cp_cnt, cp_last (a Cpl without data: one beat, cp_cnt 0)
//   Clock gate
//   busy                      the next edge changes state without input
//   tmo_wait [32]             cycles to the oldest piece's timeout (0: none in flight)
//   tags_used [11]            tags in use
#pragma once

#include <systemc>

#include "models/common/ports.h"
#include "models/common/scheduler.h"
#include "models/rnic/dmac/dmac_core.h"

#define RNIC_DMAC_PORTS(X)                           \
  X(in, rst, 1)                                      \
  X(in, skip, 32)                                    \
  X(in, cfg_mrrs, 13)                                \
  X(in, cfg_mps, 13)                                 \
  X(in, cfg_tags, 11)                                \
  X(in, cfg_timeout, 32)                             \
  X(in, rq_valid, 1)                                 \
  X(out, rq_ready, 1)                                \
  X(in, rq_addr, 64)                                 \
  X(in, rq_len, 32)                                  \
  X(in, rq_id, 8)                                    \
  X(out, rw_valid, 1)                                \
  X(out, rw_id, 8)                                   \
  X(out, rw_off, 32)                                 \
  X(out, rw_data, rnic::StreamWidths<BYTES>::DATA_W) \
  X(out, rw_cnt, rnic::StreamWidths<BYTES>::CNT_W)   \
  X(out, rd_valid, 1)                                \
  X(in, rd_ready, 1)                                 \
  X(out, rd_id, 8)                                   \
  X(out, rd_status, 2)                               \
  X(in, wq_valid, 1)                                 \
  X(out, wq_ready, 1)                                \
  X(in, wq_addr, 64)                                 \
  X(in, wq_len, 32)                                  \
  X(in, wd_valid, 1)                                 \
  X(out, wd_ready, 1)                                \
  X(in, wd_data, rnic::StreamWidths<BYTES>::DATA_W)  \
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
  X(in, cp_last, 1)                                  \
  X(out, busy, 1)                                    \
  X(out, tmo_wait, 32)                               \
  X(out, tags_used, 11)

namespace rnic {

template <int BYTES>
RNIC_SIGNAL_BUNDLE(DmacSignals, RNIC_DMAC_PORTS)

// Compile-time proof that class V (a Verilated rnic_dmac, or the pin model) has the port list.
RNIC_PORTS_MATCH(dmac_ports_match, RNIC_DMAC_PORTS)

    // DmacModel behind the port list, clocked by clk.
    template <int BYTES>
    class DmacPinModel : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk{"clk"};
  RNIC_DMAC_PORTS(RNIC_PORT_DECL)

  DmacPinModel(sc_core::sc_module_name n, int max_tags = 1024)
      : sc_core::sc_module(n), model_(BYTES, max_tags) {
    SC_HAS_PROCESS(DmacPinModel);
    SC_METHOD(on_clock);
    sensitive << clk.pos();
    dont_initialize();
  }

 private:
  using Data = pin_t<8 * BYTES>;
  static DmacBeat beat(const Data& d) {
    DmacBeat b{};
    for (int i = 0; i < BYTES; ++i) b[size_t(i)] = pin_byte(d, i);
    return b;
  }
  static Data data(const DmacBeat& b) { return pack_beat<Data>(b.data(), BYTES); }

  void on_clock() {
    DmacIn in;
#define RNIC_DMAC_READ(f) in.f = f.read();
#define RNIC_DMAC_READ_DATA(f) in.f = beat(f.read());
#define RNIC_DMAC_WRITE(f) f.write(o.f);
#define RNIC_DMAC_WRITE_DATA(f) f.write(data(o.f));
    RNIC_DMAC_IN_SCALARS(RNIC_DMAC_READ)
    RNIC_DMAC_IN_DATA(RNIC_DMAC_READ_DATA)
    model_.edge(in);
    const DmacOut& o = model_.out();
    RNIC_DMAC_OUT_SCALARS(RNIC_DMAC_WRITE)
    RNIC_DMAC_OUT_DATA(RNIC_DMAC_WRITE_DATA)
#undef RNIC_DMAC_READ
#undef RNIC_DMAC_READ_DATA
#undef RNIC_DMAC_WRITE
#undef RNIC_DMAC_WRITE_DATA
  }

  DmacModel model_;
};

}  // namespace rnic
