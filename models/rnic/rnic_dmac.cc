#include "models/rnic/rnic_dmac.h"

#include <algorithm>

namespace rnic {

const char* to_string(DmacStatus s) {
  switch (s) {
    case DmacStatus::kOk:
      return "ok";
    case DmacStatus::kUnsupported:
      return "unsupported request";
    case DmacStatus::kAbort:
      return "completer abort";
    case DmacStatus::kTimeout:
      return "completion timeout";
  }
  return "?";
}

std::vector<DmacSpan> dmac_split(uint64_t addr, uint64_t len, uint64_t max_payload) {
  std::vector<DmacSpan> v;
  for (uint64_t a = addr, end = addr + len; a < end;) {
    const uint64_t stop = std::min({end, a + max_payload, (a / 4096 + 1) * 4096});
    v.push_back({a, uint32_t(stop - a)});
    a = stop;
  }
  return v;
}

}  // namespace rnic
