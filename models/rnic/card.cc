#include "models/rnic/card.h"

#include <fmt/format.h>

#include <stdexcept>

#include "models/rnic/abi/regs.h"

namespace rnic {

CardPcie::CardPcie(const CardConfig& c, pcie::PcieLink& link, StatRegistry& stats,
                   const DmacCoreFactory& dmac_core)
    : pcie_if("card_pcie", link, c.pcie_if(), stats),
      dmac("card_dmac", pcie_if, c.dmac(), stats, dmac_core),
      regs(c.core),
      bar2_bytes_(uint64_t(c.core.qps) * reg::kQpPage) {
  pcie_if.set_target(&regs);
}

void CardPcie::map(uint64_t bar0, uint64_t bar2) {
  pcie_if.set_bar(0, {bar0, 64 * 1024});
  pcie_if.set_bar(2, {bar2, bar2_bytes_});
}

void CardPcie::configure(const CardConfig& c) {
  pcie_if.configure(c.pcie_if());
  dmac.configure(c.dmac());
}

void CardPcie::trace(TraceSink& t) const { dmac.trace(t); }

std::string CardPcie::dump_state() const {
  return fmt::format("  card_dmac: tags in use {}, reads in flight {}\n", dmac.tags_in_use(),
                     dmac.reads_in_flight());
}

namespace {

const CardConfig& checked(const CardConfig& c) {
  if (c.transport != "efe" && c.transport != "mpa_tcp")
    throw std::invalid_argument(
        fmt::format("card.transport '{}' is not efe or mpa_tcp", c.transport));
  return c;
}

}  // namespace

Card::Card(const CardConfig& c, pcie::PcieLink& link, const eth::Mac& mac, uint32_t ip,
           StatRegistry& stats, const CardBlocks& b)
    : mac_((checked(c), mac)),
      ip_(ip),
      pcie(c, link, stats, b.dmac),
      port("mac", c.eth_mac(), stats, b.crc32),
      efe(c.transport == "efe"
              ? std::make_unique<efe::Efe>("efe", port, mac, c.core.clk_mhz, c.efe, stats)
              : nullptr),
      toe(c.transport == "mpa_tcp"
              ? std::make_unique<tcp::Toe>("toe", port, mac, ip, c.toe(), stats)
              : nullptr),
      core("core", c.core, c.firmware, pcie.dmac, pcie.regs, transport(), stats, b.rx_parse,
           b.xlat) {}

void Card::add_peer(const eth::Mac& mac, uint32_t ip) {
  if (toe) toe->add_peer(mac, ip);
}

void Card::trace(TraceSink& t, const std::vector<eth::Mac>& peers) const {
  pcie.trace(t);
  port.trace(t);
  core.trace(t);
  if (efe) efe->trace(t, peers);
}

std::string Card::dump_state() const {
  return pcie.dump_state() + core.dump_state() + (efe ? efe->dump_state() : std::string());
}

}  // namespace rnic
