// The SQ engine's segmentation (DESIGN.md §3.3, WIRE.md), as a plain function of a WQE and where
// the engine is in it: the next DDP/RDMAP segment's header and what it carries. No SystemC, no
// timing: the SQ engine (rnic_core.h) schedules what this decides.
//   RDMA Write: tagged segments of at most max_tagged payload bytes, STag = rkey, TO = remote
//               address + offset; the last has L set.
//   Send (SE, with Invalidate): untagged on queue 0, at most max_untagged bytes each, MSN =
//               the queue's next (the same for every segment of the message, advanced after its
//               last), MO = offset; the opcode from the solicited and invalidate flags.
//   RDMA Read: one Read Request per local SGE (one for none), untagged on queue 1, each with the
//               queue's next MSN; its sink is the SGE, its source the remote range at the SGE's
//               offset in the message.
//   Atomic (CmpSwap, FetchAdd): one RFC 7306 Atomic Request, untagged on queue 1 with the
//               queue's next MSN (also its request identifier): remote STag = rkey, TO = remote
//               address; FetchAdd adds compare_add (add mask 0), CmpSwap compares compare_add and
//               swaps in swap (both masks all ones).
//   with Immediate (RFC 7306, docs/decisions.md): an RDMA Write with Immediate is the Write's
//               segments (none for 0 bytes), then an Immediate Data message on queue 0 carrying
//               imm_data and the Write's length; a Send with Immediate is an Immediate Data
//               message marked for the Send, then the Send. Immediate Data has the queue's next
//               MSN, opcode 9 (with SE) when a Write with Immediate is solicited.
// A 0-byte Write or Send is one segment without payload.
#pragma once

#include <cstdint>

#include "models/rnic/abi/wqe.h"
#include "models/rnic/ddp/ddp_rdmap.h"

namespace rnic {

// Where the SQ engine is in the WQE at the head of a QP's SQ, and the MSNs its queues send next.
struct SqProgress {
  uint64_t off = 0;  // Write, Send: the message's next byte
  int sge = 0;       // Read: the next Read Request (local SGE)
  uint32_t send_msn = 1, read_msn = 1;
  bool imm_next = false;  // Write with Immediate: its Write is out, the Immediate Data next
  bool imm_sent = false;  // Send with Immediate: its Immediate Data is out, the Send next
  // Flush: the WQE in progress is abandoned (the MSNs keep counting).
  void restart() {
    off = 0;
    sge = 0;
    imm_next = imm_sent = false;
  }
};

struct SqSegment {
  rdmap::Segment h;
  bool read_request = false;
  rdmap::ReadRequest rr;  // read_request: what it asks for
  bool atomic_request = false;
  rdmap::AtomicRequest ar;  // atomic_request: what it asks for
  bool immediate = false;
  rdmap::Immediate imm;  // immediate: what it carries
  uint64_t off = 0;      // Write, Send: its payload is the message's bytes [off, off + len)
  uint32_t len = 0;
  bool first = false;     // the WQE's first segment or request
  bool wqe_done = false;  // the WQE is fully issued with this one
};

// The next segment of WQE w; advances p past it.
SqSegment next_sq_segment(const Wqe& w, SqProgress& p, uint32_t max_tagged, uint32_t max_untagged);

}  // namespace rnic
