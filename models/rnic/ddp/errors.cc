#include "models/rnic/ddp/errors.h"

namespace rnic {

using rdmap::Layer;
using rdmap::TermCause;

TermCause term_for_tagged(XlatStatus s) {
  switch (s) {
    case XlatStatus::kInvalidStag:
      return {Layer::kDdp, 1, 0x00};
    case XlatStatus::kBounds:
      return {Layer::kDdp, 1, 0x01};
    case XlatStatus::kPdMismatch:
      return {Layer::kDdp, 1, 0x02};
    case XlatStatus::kToWrap:
      return {Layer::kDdp, 1, 0x03};
    case XlatStatus::kAccess:
      return {Layer::kRdmap, 1, 0x02};
    // A page fault is resolved by the firmware before a Terminate is considered; if it cannot
    // be, the region is out of bounds for this access.
    case XlatStatus::kPageFault:
      return {Layer::kDdp, 1, 0x01};
    case XlatStatus::kOk:
      break;
  }
  return {Layer::kRdmap, 0, 0x00};  // not an error: local catastrophic if ever sent
}

TermCause term_for_read_source(XlatStatus s) {
  switch (s) {
    case XlatStatus::kInvalidStag:
      return {Layer::kRdmap, 1, 0x00};
    case XlatStatus::kBounds:
      return {Layer::kRdmap, 1, 0x01};
    case XlatStatus::kAccess:
      return {Layer::kRdmap, 1, 0x02};
    case XlatStatus::kPdMismatch:
      return {Layer::kRdmap, 1, 0x03};
    case XlatStatus::kToWrap:
      return {Layer::kRdmap, 1, 0x04};
    case XlatStatus::kPageFault:
      return {Layer::kRdmap, 1, 0x01};
    case XlatStatus::kOk:
      break;
  }
  return {Layer::kRdmap, 0, 0x00};
}

}  // namespace rnic
