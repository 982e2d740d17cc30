// A program whose static constructor calls exit(0) while it loads.
#include <cstdlib>

#include "models/host/verbs/verbs.h"

namespace {
struct Bad {
  Bad() { std::exit(0); }
} g_bad;
}  // namespace

RNIC_PROGRAM { return 0; }
