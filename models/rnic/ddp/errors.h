// The Terminate a responder sends for a failed translation (WIRE.md's error table; the rows it
// leaves open are chosen in docs/errors.md).
#pragma once

#include "models/rnic/ddp/ddp_rdmap.h"
#include "models/rnic/xlat/rnic_xlat.h"

namespace rnic {

// A tagged segment (RDMA Write, RDMA Read Response) whose sink STag failed translation.
rdmap::TermCause term_for_tagged(XlatStatus s);
// An RDMA Read Request whose source STag failed translation.
rdmap::TermCause term_for_read_source(XlatStatus s);

}  // namespace rnic
