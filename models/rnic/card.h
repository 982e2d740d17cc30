// The card (DESIGN.md §1, §3): everything on the RNIC, owned in one place. Its PCIe side
// (CardPcie: the card's PCIe I/F, the register file behind BAR0/BAR2, the DMAC) and, on a card
// with a network, its Ethernet port (MAC), the transport that carries the engines' segments over
// it (card.transport: the EFE, or MPA over TCP by the TCP offload engine) and the RNIC Core (the
// engines, rnic_xlat, ddp_rx_parse and the firmware controller). sim/ builds a host and a card and
// joins them: the host's PCIe link at the card's PCIe I/F, an Ethernet link at its port.
//
// Neither is a SystemC module of its own: each part keeps the module name it is given here
// under its host's module (card_pcie, card_dmac, mac, efe or toe, core), so statistics, waveforms
// and logs name the parts as before the card had an object. Construction order is the parts' order
// below (statistics groups are made in it). The latencies and queues are each part's own
// (docs/latency.md); the card adds none.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/common/crc32_channel.h"
#include "models/common/stats.h"
#include "models/efe/efe.h"
#include "models/eth/eth_mac.h"
#include "models/pcie/link.h"
#include "models/pcie/pcie_if.h"
#include "models/rnic/card_params.h"
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/host_if/rnic_regs.h"
#include "models/rnic/rnic_core.h"
#include "models/rnic/rx_parse/ddp_rx_parse_channel.h"
#include "models/rnic/xlat/xlat_channel.h"
#include "models/tcp/toe.h"

namespace rnic {

// Which implementation each swappable block of the card runs (model or RTL): factories the
// assembly makes from its choices (sim/blocks.h). Empty ones are the models.
struct CardBlocks {
  DmacCoreFactory dmac = dmac_model_factory();
  Crc32Factory crc32 = crc32_model_factory();
  RxParseFactory rx_parse = rx_parse_model_factory();
  XlatFactory xlat = xlat_model_factory();
};

// The card's PCIe side: what a host reaches over the link (BARs, registers) and the DMA the
// card masters over it.
struct CardPcie {
  CardPcie(const CardConfig& cfg, pcie::PcieLink& link, StatRegistry& stats,
           const DmacCoreFactory& dmac_core = dmac_model_factory());
  // Places BAR0 (64 KiB of RNIC registers) and BAR2 (one page per QP) where the host's
  // firmware put them, with the register file behind both.
  void map(uint64_t bar0, uint64_t bar2);
  // Changed PCIe parameters between the points of a sweep (the link must be idle).
  void configure(const CardConfig& cfg);
  void trace(TraceSink& t) const;
  std::string dump_state() const;  // the DMAC's tags and reads in flight

  pcie::PcieIf pcie_if;
  RnicDmac dmac;
  RnicRegs regs;

 private:
  uint64_t bar2_bytes_;
};

class Card {
 public:
  // ip: the card's IPv4 address (MPA/TCP's; the EFE has none).
  Card(const CardConfig& cfg, pcie::PcieLink& link, const eth::Mac& mac, uint32_t ip,
       StatRegistry& stats, const CardBlocks& blocks = {});

  const eth::Mac& mac() const { return mac_; }
  uint32_t ip() const { return ip_; }
  // The transport the engines send over: efe or toe, whichever card.transport made.
  Transport& transport() { return efe ? static_cast<Transport&>(*efe) : *toe; }
  // A peer card on the fabric (MPA/TCP learns its IPv4 address; the EFE needs nothing).
  void add_peer(const eth::Mac& mac, uint32_t ip);
  // The transport's statistics group (<host>.efe or <host>.toe; both count retransmissions),
  // and its group of what it exchanged with the card at mac (rx_bytes, tx_bytes,
  // retransmissions).
  std::string transport_group() const { return efe ? efe->name() : toe->name(); }
  std::string peer_group(const eth::Mac& mac) const {
    return efe ? efe->peer_group(mac) : toe->peer_group(mac);
  }
  // Waveform: the DMAC, the port, the core's engines, the EFE (with its channels to peers).
  void trace(TraceSink& t, const std::vector<eth::Mac>& peers) const;
  // Every queue and credit (the watchdog's report).
  std::string dump_state() const;

 private:
  eth::Mac mac_;
  uint32_t ip_;

 public:
  CardPcie pcie;
  eth::EthMac port;
  std::unique_ptr<efe::Efe> efe;  // card.transport efe
  std::unique_ptr<tcp::Toe> toe;  // card.transport mpa_tcp
  RnicCore core;
};

}  // namespace rnic
