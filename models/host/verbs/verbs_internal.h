// What the verbs library keeps behind rdma-core's structs (models/host/verbs/verbs.cc), for the
// simulator's and the tests' eyes only: a program sees rdma-core's public fields.
#pragma once

#include <cstdint>

#include "models/host/verbs/verbs.h"

namespace rnic::host {
class Driver;
class Process;
// The driver of the card a context was opened on, and the process that opened it.
Driver& context_driver(const ibv_context* context);
Process& context_process(const ibv_context* context);
// The PBL entries an MR's registration took (one per page of each extent).
uint32_t mr_pbl_count(const ibv_mr* mr);
}  // namespace rnic::host
