// The card's capabilities as the driver reads them at probe from BAR0's CAP_* registers and
// the device's fixed limits (docs/registers.md). The system assembly hands them to the driver
// at elaboration instead of the probe's MMIO reads, which the simulation does not time.
#pragma once

#include <cstdint>

namespace rnic::abi {

struct CardCaps {
  uint32_t qps = 1024;             // CAP_QP: QPs (one BAR2 page each; QP 0 is reserved)
  uint32_t cqs = 1024;             // CAP_CQ
  uint32_t stags = 65536;          // CAP_STAG: SMT entries (index 0 is reserved)
  uint32_t pbl_entries = 1 << 20;  // CAP_PBL: PBLMT entries
  uint32_t max_qp_wr = 512;        // WQEs each on-chip SQ and RQ holds
  uint32_t max_cqe = 65536;        // CQEs a CQ ring may have
  uint32_t ird = 16;               // inbound RDMA Reads per QP (max)
  uint32_t ord = 16;               // outbound RDMA Reads per QP (max)
  uint32_t port_mtu = 1500;        // B, the Ethernet port's MTU
};

}  // namespace rnic::abi
