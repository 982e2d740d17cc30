// main() for every rnicsim binary: silences SystemC's banner (it prints before sc_main runs
// unless the environment says otherwise), then hands over to SystemC, which calls sc_main.
#pragma once

#include <cstdlib>
#include <systemc>

#define RNIC_SYSTEMC_MAIN                                \
  int main(int argc, char** argv) {                      \
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); \
    return sc_core::sc_elab_and_sim(argc, argv);         \
  }
