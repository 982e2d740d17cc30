// main() for GoogleTest binaries that use SystemC: SystemC owns main() and calls sc_main.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <systemc>

#include "models/common/sc_main_entry.h"
#include "testbench/common/trace_option.h"

namespace rnic::tb {
std::string& trace_format() {
  static std::string f;
  return f;
}
}  // namespace rnic::tb

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // What GoogleTest left: `--trace fst`.
  for (int i = 1; i + 1 < argc; ++i) {
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
