#include "models/rnic/dmac/rnic_dmac.h"

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

}  // namespace rnic
