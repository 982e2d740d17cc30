// RNIC Core parameters (core.*): the core clock, its datapath, table sizes and engine cycle costs.
#pragma once

#include <cstdint>
#include <string>

#include "models/common/params.h"
#include "models/pcie/pcie_params.h"

namespace rnic {

struct CoreConfig {
  int64_t clk_mhz = 250;            // MHz, core_clk
  int64_t datapath_bytes = 16;      // B per core_clk beat
  int64_t dma_bytes = 32;           // B per core_clk beat of the DMAC (its TLP and data ports)
  int64_t reg_read_cycles = 4;      // core cycles from a BAR read TLP's arrival to its CplD
  int64_t reg_write_cycles = 2;     // core cycles to apply a BAR write
  int64_t qps = 1024;               // QPs (BAR2 pages)
  int64_t cqs = 1024;               // CQs
  int64_t stags = 65536;            // SMT entries
  int64_t pbl_entries = 1 << 20;    // PBLMT entries
  int64_t max_qp_wr = 512;          // WQEs each on-chip SQ and RQ holds
  int64_t max_cqe = 65536;          // CQEs a CQ ring may have
  int64_t ird = 16;                 // inbound RDMA Reads a QP may have outstanding (max)
  int64_t ord = 16;                 // outbound RDMA Reads a QP may have outstanding (max)
  int64_t tx_buffer_bytes = 65536;  // B of segments the SQ engine may have fetched, not sent
  int64_t sched_cycles = 2;         // cycles the SQ engine spends per segment it issues
  int64_t rx_parse_cycles = 2;      // cycles from a segment's arrival to its header checked
  int64_t cqe_cycles = 2;           // cycles to form a CQE before its DMA write
  // A Read Response whose DMA read fails (a hole that gives no completion, an Unsupported
  // Request): "silent", the responder sends nothing for it, nor anything of its QP after it
  // (the requester's Read Response timer ends the Read); "terminate", it answers the Read
  // Request with a Terminate (RDMAP remote operation error, catastrophic to the stream).
  std::string read_dma_error = "silent";
  // Fault injection (tests): the card drops every inbound Read Request without answering it.
  int64_t fault_drop_read_requests = 0;

  // Gb/s the core datapath carries (clock x width): at least the line rate of its port.
  double gbps() const { return double(clk_mhz) * double(datapath_bytes) * 8 / 1000.0; }

  // Lists every field under "core." (units, ranges, descriptions).
  void describe(ParamList& p) {
    p.i("clk_mhz", clk_mhz, "MHz", 1, 2000, "core_clk frequency");
    p.i("datapath_bytes", datapath_bytes, "B", 1, 64, "core datapath width per beat",
        {1, 2, 4, 8, 16, 32, 64});
    p.i("dma_bytes", dma_bytes, "B", 1, 64,
        "DMAC datapath width per beat (TLPs and DMA data; sized to the PCIe link)",
        {1, 2, 4, 8, 16, 32, 64});
    p.i("reg_read_cycles", reg_read_cycles, "cycles", 1, 1000,
        "core cycles from a register read request to its data");
    p.i("reg_write_cycles", reg_write_cycles, "cycles", 1, 1000,
        "core cycles to apply a register write");
    p.i("qps", qps, "QPs", 1, 1 << 16, "queue pairs (one BAR2 page each)");
    p.i("cqs", cqs, "CQs", 1, 1 << 16, "completion queues");
    p.i("stags", stags, "entries", 1, 1 << 24, "STag management table entries");
    p.i("pbl_entries", pbl_entries, "entries", 1, 1 << 26, "PBL management table entries");
    p.i("max_qp_wr", max_qp_wr, "WQEs", 1, 1 << 16, "WQEs each on-chip SQ and RQ holds");
    p.i("max_cqe", max_cqe, "CQEs", 1, 1 << 24, "largest CQ ring");
    p.i("ird", ird, "reads", 1, 256, "inbound RDMA Reads outstanding per QP (max)");
    p.i("ord", ord, "reads", 1, 256, "outbound RDMA Reads outstanding per QP (max)");
    p.i("tx_buffer_bytes", tx_buffer_bytes, "B", 2048, 1 << 24,
        "segments fetched by the SQ engine and not yet sent");
    p.i("sched_cycles", sched_cycles, "cycles", 1, 1000, "SQ engine cycles per segment");
    p.i("rx_parse_cycles", rx_parse_cycles, "cycles", 1, 1000, "segment arrival to header checked");
    p.i("cqe_cycles", cqe_cycles, "cycles", 1, 1000, "forming a CQE before its DMA write");
    p.s("read_dma_error", read_dma_error, {"silent", "terminate"},
        "a Read Response whose DMA read fails: nothing sent (the requester's timer ends the "
        "Read), or a Terminate");
    p.i("fault_drop_read_requests", fault_drop_read_requests, "flag", 0, 1,
        "fault injection: inbound Read Requests are dropped unanswered (1)");
  }
};

// What the DMAC (rnic_dmac) is built from: the core clock it runs at and the PCIe parameters
// that shape its requests (MRRS, MPS, tags, the I/F crossing, the completion timeout).
struct DmacParams {
  int64_t clk_mhz = 250;
  int64_t dma_bytes = 32;  // core.dma_bytes: B per beat
  PcieConfig pcie;
};

}  // namespace rnic
