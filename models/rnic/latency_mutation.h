// One-cycle latency mutations, for the check that shows each engine's latency tests fail when
// that engine is one cycle off (testbench/checks/latency_mutation.py): a build with
// -DRNICSIM_LATENCY_MUTATION=<engine> adds one cycle to that engine's own latency. Included only
// by the engines' .cc files, so the tests keep the documented values. Product builds never set
// it (every extra() is 0).
#pragma once

#include <cstdint>

namespace rnic::mutation {

enum Engine : int {
  kNone = 0,
  kHostIf = 1,        // WQE copy-in into the on-chip queue
  kSq = 2,            // the SQ engine's issue slot (core.sched_cycles)
  kRx = 3,            // the RX engine's verdict after its translation
  kReadResponse = 4,  // the read-response engine's offer of a segment
  kCompletion = 5,    // the completion engine's CQE write (core.cqe_cycles)
  kXlat = 6,          // rnic_xlat's answer
};

#ifdef RNICSIM_LATENCY_MUTATION
constexpr int kMutated = RNICSIM_LATENCY_MUTATION;
#else
constexpr int kMutated = kNone;
#endif

// Extra cycles for `e`'s latency: 1 in the build that mutates it, else 0.
constexpr uint64_t extra(Engine e) { return kMutated == e ? 1 : 0; }

}  // namespace rnic::mutation
