// rnic_dmac: the card's bus-master DMA (DESIGN.md §3.3, §4): reads split at MRRS and at 4 KiB
// into MRds under a tag pool, completions placed at their offsets, completion timeouts; writes
// split at MPS and at 4 KiB into MWrs. Its cycle contract and model are in dmac_core.h, the
// engines' face in dmac.h, the SystemC pin face in rnic_dmac_ports.h, the RTL in
// rtl/rnic/rnic_dmac.sv. This header holds what they share.
#pragma once

#include <cstdint>
#include <vector>

namespace rnic {

enum class DmacStatus : uint8_t { kOk = 0, kUnsupported = 1, kAbort = 2, kTimeout = 3 };
const char* to_string(DmacStatus s);

struct DmacSpan {
  uint64_t addr;
  uint32_t len;
};

// The pieces of a read (MRRS, 4 KiB) and the MWrs of a write (MPS, 4 KiB), as the block cuts
// them; 0 bytes are no pieces.
std::vector<DmacSpan> dmac_split(uint64_t addr, uint64_t len, uint64_t max_payload);

}  // namespace rnic
