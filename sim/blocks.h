// The swappable datapath blocks (DESIGN.md §4) in one registry: each block's name, what it is,
// and which implementations exist. `--rtl`, the scenario key `rtl:`, the run summary and
// stats.json's `implementations` all read it; nothing else lists block names.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/common/crc32_channel.h"
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/rx_parse/ddp_rx_parse_channel.h"
#include "models/rnic/xlat/xlat_channel.h"

namespace rnic {

struct SystemConfig;

struct BlockInfo {
  std::string name;
  std::string what;
  bool has_rtl;
  std::vector<int> rtl_widths;  // datapath widths (B per beat) the RTL is Verilated at; empty:
                                // any (the block has no datapath-wide port)
  std::string width_key = "core.datapath_bytes";  // the parameter that sets its width
};
const std::vector<BlockInfo>& blocks();

// Which implementation each block runs: "model" or "rtl".
struct Implementations {
  std::map<std::string, std::string> of;  // block name -> "model" | "rtl"
  bool traced = false;  // the run writes a waveform: RTL blocks run as their traced builds
  bool rtl(const std::string& block) const;
  std::string summary() const;  // "crc32 rtl, ddp_rx_parse model, ..."
};

// Resolves a --rtl / rtl: list ("all": every block that has RTL) for a configuration. Throws
// InputError(where, "rtl", reason) for an unknown block, a block without RTL, a datapath width
// its RTL is not built at, or a run-time parameter its RTL fixes at another value.
Implementations resolve_implementations(const std::vector<std::string>& rtl,
                                        const SystemConfig& cfg, const std::string& where);

// The implementation each block's users are given for a run (the model where the registry has
// no RTL for the block yet: resolve_implementations refused the rest), wrapped in a recorder
// while the run record is on (sim/run_record.h).
Crc32Factory crc32_factory(const Implementations& impl);
RxParseFactory rx_parse_factory(const Implementations& impl);
XlatFactory xlat_factory(const Implementations& impl);
DmacCoreFactory dmac_factory(const Implementations& impl);
// The same without the recorder.
Crc32Factory crc32_impl_factory(const Implementations& impl);
RxParseFactory rx_parse_impl_factory(const Implementations& impl);
XlatFactory xlat_impl_factory(const Implementations& impl);
DmacCoreFactory dmac_impl_factory(const Implementations& impl);

}  // namespace rnic
