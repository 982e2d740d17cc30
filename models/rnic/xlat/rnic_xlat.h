// rnic_xlat: translation of (STag, tagged offset, length, required access, PD) into physical
// chunks, or an error, for every SMT entry type (DESIGN.md §3.3). A chunk never crosses a page
// of a page list, nor the end of an extent; a physical region is one chunk.
//
// Checks, in this order (docs/errors.md maps each to its Terminate and completion):
//   1. the index is in the table and the entry is valid         -> kInvalidStag
//      (an invalidated entry -> kInvalidStag too)
//   2. the key matches                                          -> kInvalidStag
//   3. the PD matches                                           -> kPdMismatch
//   4. the entry grants the required access                     -> kAccess
//   5. offset + length does not wrap 2^64                       -> kToWrap
//   6. [offset, offset + length) lies inside [base_to, base_to + length) -> kBounds
//   7. (on-demand regions) every page is present                -> kPageFault (first absent page)
//   8. (scatter-gather handles) the extents cover the range     -> kBounds
//
// Timing (core_clk cycles): the SMT read and checks take kSmtCycles; the first PBLMT read
// kPblCycles more; then one chunk per cycle, plus kExtentSwitchCycles (xlat.extent_switch_cycles)
// whenever a scatter-gather handle moves to its next extent. A scatter-gather handle first scans
// its extents from the first to the one holding the offset, one cycle per extent passed over.
// An error of checks 1-6 is known after kSmtCycles. Checks 7 and 8 fail at the turn of the
// absent page or of the missing extent, and the chunks already out stay in the result, before
// the error: the burst ends with the error (a walk is not undone). The engines reach it through
// its request channel (xlat_channel.h); each requester's requests follow one another.
#pragma once

#include <cstdint>
#include <vector>

#include "models/rnic/xlat/smt.h"

namespace rnic {

enum class XlatStatus : uint8_t {
  kOk = 0,
  kInvalidStag,
  kPdMismatch,
  kAccess,
  kToWrap,
  kBounds,
  kPageFault,
};
const char* to_string(XlatStatus s);

struct XlatRequest {
  uint32_t stag = 0;
  uint64_t to = 0;
  uint32_t len = 0;
  uint8_t access = 0;  // rights required (access::*); 0 = local read
  uint32_t pd = 0;
  bool check_only = false;  // the status only, no chunks (xlat_channel.h)
};

// One beat of the burst: a chunk and the cycle (from the request) at which it is out.
struct XlatChunk {
  uint64_t pa;
  uint32_t len;
  uint64_t cycle = 0;
};

struct XlatResult {
  XlatStatus status = XlatStatus::kOk;
  std::vector<XlatChunk> chunks;  // on kPageFault and a short extent list: the chunks before it
  uint64_t fault_to = 0;          // kPageFault: the tagged offset of the first absent page
  uint64_t cycles = 0;            // from request to the last beat: chunk, error, or a 0-byte result
};

// Where a translation found an absent page (kPageFault): the STag, the first absent byte and
// one past the last byte the request needed.
struct XlatFault {
  uint32_t stag = 0;
  uint64_t to = 0, end = 0;
};

struct XlatTiming {
  uint64_t smt_cycles = 2;
  uint64_t pbl_cycles = 2;
  uint64_t extent_switch_cycles = 1;
};

class RnicXlat {
 public:
  RnicXlat(const Smt& smt, const Pblmt& pblmt, XlatTiming t = {})
      : smt_(smt), pblmt_(pblmt), t_(t) {}
  XlatResult translate(const XlatRequest& r) const;
  const XlatTiming& timing() const { return t_; }

 private:
  const Smt& smt_;
  const Pblmt& pblmt_;
  XlatTiming t_;
};

// rnic_xlat as the card holds it: the SMT and PBLMT live in the block (as the RTL's memories
// will) and are written only through its table-write port (the firmware's REG_MR, WRITE_STAG,
// INVALIDATE_STAG, FREE_STAG and LOAD_PBL, and the RX engine's Send with Invalidate); the
// engines translate through it. A write counts for requests made after it.
class XlatBlock {
 public:
  XlatBlock(size_t smt_entries, size_t pbl_entries, XlatTiming t = {})
      : smt_(smt_entries), pbl_(pbl_entries), xlat_(smt_, pbl_, t) {}
  XlatResult translate(const XlatRequest& r) const { return xlat_.translate(r); }
  const XlatTiming& timing() const { return xlat_.timing(); }

  // Table-write port. Each returns false, writing nothing, when the write does not fit:
  // write_smt an index outside the SMT or a PBL range outside the PBLMT; invalidate an STag
  // whose entry is not valid, has another key or (pd given) another PD; free an index outside
  // the SMT; write_pbl entries outside the PBLMT.
  bool write_smt(uint32_t index, const SmtEntry& e);
  bool invalidate(uint32_t stag, const uint32_t* pd = nullptr);
  bool free(uint32_t index);
  bool write_pbl(uint32_t first, const std::vector<PblEntry>& entries);

  const Smt& smt() const { return smt_; }
  const Pblmt& pblmt() const { return pbl_; }

 private:
  Smt smt_;
  Pblmt pbl_;
  RnicXlat xlat_;
};

}  // namespace rnic
