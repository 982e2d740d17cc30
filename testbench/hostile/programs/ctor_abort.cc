// A program whose static constructor calls abort() while it loads.
#include <cstdlib>

#include "models/host/verbs/verbs.h"

namespace {
struct Bad {
  Bad() { std::abort(); }
} g_bad;
}  // namespace

RNIC_PROGRAM { return 0; }
