#include "models/common/log.h"

#include <cstdio>
#include <systemc>

#include "models/common/sim_time.h"

namespace rnic::log {

namespace {
Level g_level = Level::kWarn;
const char* const kNames[] = {"error", "warn", "info", "debug", "trace"};
}  // namespace

void set_level(Level l) { g_level = l; }
Level level() { return g_level; }

bool parse_level(const std::string& s, Level* out) {
  for (int i = 0; i < 5; ++i) {
    if (s == kNames[i]) {
      *out = Level(i);
      return true;
    }
  }
  return false;
}

void emit(Level l, const std::string& msg) {
  const double ns = double(now_ps()) / 1000.0;
  fmt::print(stderr, "[{:>12.3f} ns] {:5} {}\n", ns, kNames[int(l)], msg);
}

}  // namespace rnic::log
