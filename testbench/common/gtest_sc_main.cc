// main() for GoogleTest binaries that use SystemC: SystemC owns main() and calls sc_main.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <systemc>

#include "models/common/sc_main_entry.h"
#include "sim/default_rtl.h"
#include "testbench/common/trace_option.h"

namespace rnic::tb {
std::string& trace_format() {
  static std::string f;
  return f;
}
}  // namespace rnic::tb

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // What GoogleTest left: `--trace fst`, and `--rtl LIST|all` (the blocks every Cluster of the
  // test runs as RTL, sim/default_rtl.h).
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--rtl") {
      std::string list = argv[i + 1];
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        if (comma > at) rnic::default_rtl().push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    }
    if (std::string(argv[i]) == "--trace") {
      rnic::tb::trace_format() = argv[i + 1];
      if (rnic::tb::trace_format() != "fst") {
        fprintf(stderr, "--trace: only fst is supported by the test benches\n");
        return 2;
      }
    }
  }
  return RUN_ALL_TESTS();
}

RNIC_SYSTEMC_MAIN
