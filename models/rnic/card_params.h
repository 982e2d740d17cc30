// What the card (card.h) is built from: the RNIC Core's and firmware's parameters, the PCIe
// parameters its interface and DMAC shape their requests by, and its transport's over the
// Ethernet MAC (the EFE, or MPA over TCP). Each block's own parameter struct is derived here,
// once.
#pragma once

#include <string>

#include "models/efe/efe_params.h"
#include "models/eth/eth_params.h"
#include "models/pcie/pcie_params.h"
#include "models/rnic/abi/caps.h"
#include "models/rnic/firmware/firmware_params.h"
#include "models/rnic/rnic_params.h"
#include "models/tcp/tcp_params.h"

namespace rnic {

struct CardConfig {
  CoreConfig core;
  FirmwareConfig firmware;
  PcieConfig pcie;
  EfeConfig efe;
  MacConfig mac;
  std::string transport = "efe";  // efe | mpa_tcp (card.transport)
  TcpConfig tcp;

  EthMacParams eth_mac() const { return {mac, core.clk_mhz, core.datapath_bytes}; }
  PcieIfParams pcie_if() const {
    return {pcie, core.clk_mhz, core.reg_read_cycles, core.reg_write_cycles};
  }
  DmacParams dmac() const { return {core.clk_mhz, core.dma_bytes, pcie}; }
  tcp::ToeParams toe() const {
    return tcp.toe(core.clk_mhz, mac.mtu, core.ird, core.ord, mac.rate_gbps);
  }
  // What the card reports of itself (its CAP_* registers and the port's MTU).
  abi::CardCaps caps() const {
    return {uint32_t(core.qps),         uint32_t(core.cqs),       uint32_t(core.stags),
            uint32_t(core.pbl_entries), uint32_t(core.max_qp_wr), uint32_t(core.max_cqe),
            uint32_t(core.ird),         uint32_t(core.ord),       uint32_t(mac.mtu)};
  }
};

}  // namespace rnic
