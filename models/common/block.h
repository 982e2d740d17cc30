// The seam every swappable block (DESIGN.md §4) is reached through, model and RTL alike
// (docs/rtl.md, "Adding a block"). A block is:
//   - a face: the class its users call (Crc32Channel, RxParseChannel, XlatChannel, DmacCore),
//     with a nested Params (what its user gives it besides BlockArgs) and a nested Recorded (the
//     face wrapped so that every answer it gives goes to an AnswerLog);
//   - a model behind the face, made by the face's model_factory();
//   - its pins, written once as an X-macro port list (ports.h), from which come the signal
//     bundle, the port checks and the pin model's ports;
//   - its RTL behind the face: a C++-mode adapter over CcRtl (rtl_cc.h), made at each width it
//     is Verilated at by its entry in sim/blocks.cc, which also gives its name and what it is.
// Every face is made through the one factory shape below, so sim/ chooses model or RTL, and adds
// the recorder, the same way for all of them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/common/event_queue.h"

namespace rnic {

// What every block is made with.
struct BlockArgs {
  std::string name;  // its SystemC instance name
  ClockDomain clk;   // the clock it runs on
  int bytes = 0;     // bytes per beat of its datapath (0: it has no datapath-wide port)
};

// Makes a block's face: (BlockArgs, the face's own parameters).
template <class Face>
using BlockFactory =
    std::function<std::unique_ptr<Face>(const BlockArgs&, const typename Face::Params&)>;

// Where the answers of recorded blocks go (sim/run_record.h's RunRecord): each answer is a time,
// a source (one per block instance and kind of answer, with its clock for cycle numbers) and two
// 64-bit values.
class AnswerLog {
 public:
  virtual ~AnswerLog() = default;
  virtual uint32_t source(const std::string& name, uint64_t period_ps) = 0;
  virtual void add(uint32_t src, uint64_t t_ps, uint64_t a, uint64_t b) = 0;
};

// 64-bit digests for answer values (FNV-1a over the words' bytes, then a finaliser).
inline uint64_t record_digest(const std::vector<uint64_t>& words) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t w : words)
    for (int i = 0; i < 8; ++i) h = (h ^ ((w >> (8 * i)) & 0xFF)) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

inline uint64_t record_digest_bytes(const uint8_t* p, size_t n, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

}  // namespace rnic
