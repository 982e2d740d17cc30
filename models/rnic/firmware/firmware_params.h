// The firmware controller's parameters (firmware.*): its clock and what each handler costs.
#pragma once

#include <cstdint>
#include <string>

#include "models/common/params.h"

namespace rnic {

struct FirmwareConfig {
  int64_t clk_mhz = 250;               // MHz, the embedded controller's clock
  int64_t dispatch_cycles = 40;        // fetching a command's slot, decoding, dispatching it
  int64_t cq_cycles = 160;             // CREATE_CQ / DESTROY_CQ handler
  int64_t qp_cycles = 160;             // CREATE_QP / MODIFY_QP / DESTROY_QP handler
  int64_t mr_cycles = 160;             // REG_MR, LOAD_PBL, WRITE_STAG, INVALIDATE_STAG, FREE_STAG
  int64_t pbl_entry_cycles = 1;        // per page address written into the PBLMT
  int64_t extent_entry_cycles = 2;     // per extent (address, length) written into the PBLMT
  bool pipelined = false;              // run the next command while one waits for its DMA read
  std::string extent_switch = "xlat";  // who moves a scatter-gather handle to its next extent
  int64_t extent_switch_cycles = 20;   // firmware cycles per switch (extent_switch "firmware")
  int64_t fault_cycles = 80;           // a page fault: its record written, the interrupt raised

  void describe(ParamList& p) {
    p.i("clk_mhz", clk_mhz, "MHz", 1, 2000, "the firmware controller's clock");
    p.i("dispatch_cycles", dispatch_cycles, "cycles", 1, 1000000,
        "per command: fetching its queue slot, decoding and dispatching it");
    p.i("cq_cycles", cq_cycles, "cycles", 0, 1000000, "CREATE_CQ / DESTROY_CQ handler");
    p.i("qp_cycles", qp_cycles, "cycles", 0, 1000000, "CREATE_QP / MODIFY_QP / DESTROY_QP handler");
    p.i("mr_cycles", mr_cycles, "cycles", 0, 1000000,
        "REG_MR / LOAD_PBL / WRITE_STAG / INVALIDATE_STAG / FREE_STAG handler");
    p.i("pbl_entry_cycles", pbl_entry_cycles, "cycles", 0, 1000,
        "per page address a registration writes into the PBLMT");
    p.i("extent_entry_cycles", extent_entry_cycles, "cycles", 0, 1000,
        "per extent a scatter-gather registration writes into the PBLMT");
    p.b("pipelined", pipelined,
        "while a command waits for its DMA read, the next one runs (completions stay in order)");
    p.s("extent_switch", extent_switch, {"xlat", "firmware"},
        "a scatter-gather handle's switch to its next extent: xlat's (1 core cycle) or the "
        "firmware's (extent_switch_cycles more per switch)");
    p.i("extent_switch_cycles", extent_switch_cycles, "cycles", 0, 1000000,
        "firmware cycles per extent switch (extent_switch firmware)");
    p.i("fault_cycles", fault_cycles, "cycles", 1, 1000000,
        "on-demand paging: from an engine's page fault to its record's DMA write and interrupt");
  }
};

}  // namespace rnic
