// main() for GoogleTest binaries that use SystemC: SystemC owns main() and calls sc_main.
#include <gtest/gtest.h>

#include <systemc>

#include "models/common/sc_main_entry.h"

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

RNIC_SYSTEMC_MAIN
