// ddp_rx_parse: the RX datapath's first block (DESIGN.md §3.3, §4). It takes a DDP segment as
// the EFE hands it up (the whole frame is buffered behind the FCS check, so its length is known
// with the first beat) and gives the segment's header fields, the outcome of the header checks
// WIRE.md orders (DDP version, RDMAP version, opcode, QN: rdmap::check_header), a Read Request's
// 28-byte payload decoded, and the payload. The checks that need the QP context (MSN, MO, STag,
// receive length) are the RX engine's.
//
// Timing (core_clk cycles, beats of `datapath` bytes arriving back to back from cycle 0): the
// header result is out max(core.rx_parse_cycles, beats holding the header and, for a Read
// Request, its 28-byte payload) cycles after the first beat; the block takes one beat per cycle,
// so the next segment can start ceil(bytes / datapath) cycles after this one (the RX engine
// steps at the larger of the two). Queue depth: one segment at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/rnic/ddp/ddp_rdmap.h"

namespace rnic {

struct RxParseResult {
  bool dropped = false;  // fewer bytes than the header its T bit announces: no header, dropped
  bool ok = false;       // header decoded and its checks passed
  rdmap::TermCause why;  // when neither: the failed check's Terminate cause
  rdmap::Segment h;
  bool rr_ok = false;  // a Read Request whose 28-byte payload is all there (then rr is valid)
  rdmap::ReadRequest rr;
  uint32_t payload_off = 0, payload_len = 0;
  size_t need = 0;      // bytes from the start the result depends on (all, when dropped)
  uint64_t cycles = 0;  // first beat -> header result
};

class DdpRxParse {
 public:
  DdpRxParse(uint64_t parse_cycles, uint64_t datapath_bytes)
      : parse_cycles_(parse_cycles), dp_(datapath_bytes) {}
  RxParseResult parse(const uint8_t* ddp, size_t len) const;
  // Cycles the segment's beats occupy the block's input.
  uint64_t stream_cycles(size_t len) const { return len ? (len + dp_ - 1) / dp_ : 1; }

 private:
  uint64_t parse_cycles_, dp_;
};

}  // namespace rnic
