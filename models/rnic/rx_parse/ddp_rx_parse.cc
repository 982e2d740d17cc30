#include "models/rnic/rx_parse/ddp_rx_parse.h"

#include <algorithm>

namespace rnic {

RxParseResult DdpRxParse::parse(const uint8_t* ddp, size_t len) const {
  RxParseResult r;
  size_t need = len;
  if (!rdmap::decode(ddp, len, &r.h)) {
    r.dropped = true;
  } else {
    need = r.h.header_bytes();
    r.payload_off = uint32_t(need);
    r.payload_len = uint32_t(len - need);
    r.ok = rdmap::check_header(r.h, &r.why);
    if (r.ok && rdmap::Opcode(r.h.opcode) == rdmap::Opcode::kReadRequest) {
      need = std::min(len, need + rdmap::kReadRequestBytes);
      r.rr_ok = r.payload_len >= rdmap::kReadRequestBytes &&
                rdmap::decode(ddp + r.payload_off, r.payload_len, &r.rr);
    }
  }
  // The header (and a Read Request's payload) must have arrived; a dropped segment is known
  // once all of it has.
  r.need = need;
  const uint64_t beats = r.dropped ? stream_cycles(len) : (need + dp_ - 1) / dp_;
  r.cycles = std::max(parse_cycles_, beats);
  return r;
}

}  // namespace rnic
