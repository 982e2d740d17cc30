// The blocks a Cluster runs as RTL when it is given no implementations (sim/blocks.h): empty,
// every block its model. rnicsim's own runs always pass theirs (from --rtl and `rtl:`); the test
// binaries set this from their `--rtl LIST` option, so any system test can run with RTL. Header
// only, so that the test binaries' main can set it without linking the simulator.
#pragma once

#include <string>
#include <vector>

namespace rnic {

inline std::vector<std::string>& default_rtl() {
  static std::vector<std::string> v;
  return v;
}

}  // namespace rnic
