// The RX engine's decision logic and receive state, with no SystemC (rx_engine.h moves its
// segments and time): for each received segment, given its QP's context and its ddp_rx_parse
// result, what the engine does with it, checked in the order WIRE.md's error table and RFC
// 5040/5041 give (a remote Write or Read needs the QP's access right as well as the MR's), with
// the receive bookkeeping the next segment is checked against (RecvLogic:
// the RQ, the receive offset, the MSNs; OrdTable: the outbound Read Requests the responses
// must match; the inbound Read Requests held against IRD). Unit tests and the fuzzer drive it
// directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/common/bytes.h"
#include "models/rnic/engine_msgs.h"
#include "models/rnic/rx/recv_queue.h"
#include "models/rnic/rx_parse/ddp_rx_parse.h"
#include "models/rnic/sq/ord_table.h"
#include "models/rnic/xlat/rnic_xlat.h"

namespace rnic {

// The receive state of a segment's QP before its decision, to take the decision back
// (RxLogic::undo: a segment refused for a page fault, and those after it from its peer).
struct RxUndo {
  uint8_t tagged_open = 0;
  uint64_t off = 0;
  uint32_t send_msn = 0, read_msn = 0, atomic_msn = 0;
  bool imm_held = false;   // a Send with Immediate's Immediate Data was held ...
  uint32_t imm = 0;        // ... with this value
  bool ird_taken = false;  // the decision took an IRD slot
  bool had_read = false;   // an outbound Read was outstanding ...
  ReadOut oldest;          // ... this one, as it was
};

struct RxDecision {
  enum class Kind {
    kDrop,   // too short, a Terminate for no connected QP, or for a QP in ERROR: dropped
    kReset,  // for a QPN not connected to this peer here: answered with a reset
    kFail,   // answered with a Terminate; the QP fails
    kPlace,  // RDMA Write, Read Response or Atomic Response: translate `target`, place the payload
    kReadRequest,    // check `target` (the source), hand `rr` to the read-response engine
    kAtomicRequest,  // check `target`, hand `ar` to the read-response engine
    kTerminate,      // a Terminate from the peer
    kSend,           // a Send segment: translate the receive WQE's SGEs [mo, mo + len), place
    kImmediate,      // Immediate Data: completes the receive WQE (has_wqe), or is held for the Send
  };
  Kind kind = Kind::kDrop;
  // kFail: the Terminate's cause and the async event (kNoAsyncEvent: none); a receive WQE the
  // failure completes with recv_status (>= 0) when has_wqe.
  rdmap::TermCause why{};
  abi::AsyncEvent event = kNoAsyncEvent;
  int recv_status = -1;
  // kPlace, kReadRequest: the translation (len 0: none) or check (check_only) to make.
  XlatRequest target;
  bool response = false;    // kPlace: a Read Response or an Atomic Response
  int64_t answered = -1;    // kPlace: the WR whose Read Request it answers in full (SQ index)
  rdmap::ReadRequest rr;    // kReadRequest
  rdmap::AtomicRequest ar;  // kAtomicRequest
  // kPlace of an Atomic Response: the 8 bytes placed (the original value, little-endian), not
  // the segment's payload.
  bool atomic = false;
  uint8_t value[8] = {};
  // kSend: the receive WQE (whose SGEs take the bytes), where in it, whether the segment ends
  // the message (then the WQE is taken: has_wqe, placed = its bytes), Send with Invalidate.
  uint64_t mo = 0;
  uint32_t len = 0;
  bool last = false, invalidate = false, solicited = false;
  uint32_t inv_stag = 0;
  // kSend (its last segment), kImmediate: the receive completes with immediate data `imm`;
  // kImmediate: the byte count it reports.
  bool with_imm = false;
  uint32_t imm = 0, imm_len = 0;
  // kSend, kFail: the receive WQE concerned.
  bool has_wqe = false;
  RecvLogic::Entry wqe;
  uint64_t placed = 0;
  RxUndo undo;
  // Its translation found an absent page of an on-demand region (the RX engine refuses it).
  bool faulted = false;
  XlatFault fault;
};

class RxLogic {
 public:
  explicit RxLogic(size_t qps)
      : recv_(qps), ord_(qps), ird_used_(qps), tagged_open_(qps), imm_(qps) {}

  // A segment from `src` for QP qpn (context q) with its parse result: the decision, and the
  // receive state moved on as the segment asks (a Send's bytes counted, the WQE its last
  // segment completes taken; a Read Response's progress; a Read Request's MSN and IRD slot).
  // A segment for a QPN that is not connected to src here (out of range, never created,
  // destroyed, in RESET or INIT, or connected to another peer) is answered with a reset
  // (kReset), unless it is a Terminate itself.
  // payload: the segment's payload (pr.payload_len bytes; an Atomic Request's and Response's
  // fields are read from it).
  RxDecision decide(uint32_t qpn, const QpCtx& q, const MacAddr& src, const RxParseResult& pr,
                    const uint8_t* payload = nullptr);
  // Takes a decision back: the receive state of its QP is what it was before it (a WQE it took
  // back at the RQ's head, a Read Response's progress, a Read Request's MSN and IRD slot).
  // Decisions are taken back newest first.
  void undo(uint32_t qpn, const RxDecision& d);
  // The translation a decision asked for failed: the decision becomes a failure (the Terminate
  // and completion docs/errors.md gives for it).
  void xlat_failed(uint32_t qpn, RxDecision& d, XlatStatus st);
  // A Send with Invalidate's STag could not be invalidated.
  static void invalidate_failed(RxDecision& d);

  // The host interface's and the other engines' news.
  void post(uint32_t qpn, const Wqe& w, uint32_t index) { recv_.post(qpn, w, index); }
  std::vector<RecvLogic::Entry> flush(uint32_t qpn);  // entered ERROR: the RQ's WQEs
  // Created, destroyed or reset; from now on it takes its receive WQEs from SRQ srq
  // (QpCtx::kNoSrq: its own RQ).
  void reset(uint32_t qpn, uint32_t srq);
  void read_issued(uint32_t qpn, const ReadOut& r) { ord_.issued(qpn, r); }
  void ird_free(uint32_t qpn) {
    if (ird_used_[qpn] > 0) --ird_used_[qpn];
  }

  const RecvLogic& recv() const { return recv_; }
  const OrdTable& ord() const { return ord_; }
  uint32_t ird_used(uint32_t qpn) const { return ird_used_[qpn]; }

 private:
  RxDecision fail(uint32_t qpn, rdmap::TermCause why, abi::AsyncEvent ev, int recv_status = -1);
  RxDecision decide_segment(uint32_t qpn, const QpCtx& q, const MacAddr& src,
                            const RxParseResult& pr, const uint8_t* payload);

  RecvLogic recv_;
  OrdTable ord_;
  std::vector<uint32_t> ird_used_;
  // The opcode + 1 of the tagged message partly received (0: none): another tagged message may
  // not cut into it (as Linux siw).
  std::vector<uint8_t> tagged_open_;
  // A Send with Immediate's Immediate Data, held for the Send that follows it.
  struct HeldImm {
    bool held = false;
    uint32_t imm = 0;
  };
  std::vector<HeldImm> imm_;
};

}  // namespace rnic
