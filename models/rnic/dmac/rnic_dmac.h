// rnic_dmac: the card's bus-master DMA (DESIGN.md §3.3, §4): reads split at MRRS and at 4 KiB
// into MRds under a tag pool, completions placed at their offsets, completion timeouts; writes
// split at MPS and at 4 KiB into MWrs. Its cycle contract and model are in dmac_core.h, the
// engines' face in dmac.h, the SystemC pin face in rnic_dmac_ports.h, the RTL in
// rtl/rnic/rnic_dmac.sv. This header holds what they share.
#pragma once

#include <cstdint>

namespace rnic {

enum class DmacStatus : uint8_t { kOk = 0, kUnsupported = 1, kAbort = 2, kTimeout = 3 };
const char* to_string(DmacStatus s);

}  // namespace rnic
