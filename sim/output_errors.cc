#include "sim/output_errors.h"

#include <fmt/format.h>

namespace rnic::output_errors {

namespace {
std::string g_first;
}

void failed(const std::string& path, const std::string& why) {
  if (g_first.empty())
    g_first = fmt::format("cannot write {}: {} (--out names where outputs go)", path, why);
}

const std::string& first() { return g_first; }

void clear() { g_first.clear(); }

}  // namespace rnic::output_errors
