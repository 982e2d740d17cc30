// The swappable datapath blocks (DESIGN.md §4) in one registry: each block's name, what it is,
// and which implementations exist. `--rtl`, the scenario key `rtl:`, the run summary and
// stats.json's `implementations` all read it; nothing else lists block names. Each block is
// described once in blocks.cc (its entry, its RTL builds, what its RTL refuses); its face, model
// and recorder come with the face (models/common/block.h).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/common/block.h"

namespace rnic {

struct SystemConfig;

struct BlockInfo {
  std::string name;
  std::string what;
  bool has_rtl;
  std::vector<int> rtl_widths;  // datapath widths (B per beat) the RTL is Verilated at; empty:
                                // any (the block has no datapath-wide port)
  std::string width_key;        // the parameter that sets its width
  // Why a traced run cannot show the block's RTL at this width ("": it can).
  std::function<std::string(int width)> waveform;
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

// The implementation of a block's face (Crc32Channel, RxParseChannel, XlatChannel, DmacCore)
// its users are given for a run: its RTL where `impl` says so (resolve_implementations refused
// what the RTL is not built for), else its model; wrapped in the face's recorder while the run
// record is on (sim/run_record.h).
template <class Face>
BlockFactory<Face> block_factory(const Implementations& impl);

}  // namespace rnic
