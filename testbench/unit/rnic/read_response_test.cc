// The read-response engine's queues (ReadResponseLogic, read_response.h), driven directly with
// no SystemC: requests answered in order, each cut into segments of at most the payload with
// the right offsets and a last flag, the IRD limit, a 0-byte Read, and a flush.
#include "models/rnic/read_response/read_response.h"

#include <gtest/gtest.h>

namespace rnic {
namespace {

rdmap::ReadRequest request(uint32_t sink, uint32_t size) {
  rdmap::ReadRequest r;
  r.sink_stag = sink;
  r.sink_to = 0x1000;
  r.size = size;
  r.src_stag = 0x200 + sink;
  r.src_to = 0x9000;
  return r;
}

TEST(ReadResponseLogic, AnswersInOrderInSegments) {
  ReadResponseLogic r(4);
  r.accept(2, request(1, 3000));
  r.accept(2, request(2, 1466));
  r.accept(2, request(3, 0));
  std::vector<std::tuple<uint32_t, uint64_t, uint32_t, bool>> got;
  while (r.pending(2)) {
    const auto s = r.next(2, 1466);
    got.emplace_back(s.rr.sink_stag, s.off, s.len, s.last);
  }
  const std::vector<std::tuple<uint32_t, uint64_t, uint32_t, bool>> want = {
      {1, 0, 1466, false},
      {1, 1466, 1466, false},
      {1, 2932, 68, true},  // 3000 B in three
      {2, 0, 1466, true},   // exactly one payload
      {3, 0, 0, true}};     // a 0-byte Read
  EXPECT_EQ(got, want);
  EXPECT_FALSE(r.pending(1));
}

TEST(ReadResponseLogic, IrdLimitAndFlush) {
  ReadResponseLogic r(2);
  EXPECT_FALSE(r.full(1, 2));
  r.accept(1, request(1, 10));
  r.accept(1, request(2, 10));
  EXPECT_TRUE(r.full(1, 2));
  EXPECT_FALSE(r.full(0, 2));  // per QP
  (void)r.next(1, 1466);       // the first is answered in full: a slot frees
  EXPECT_FALSE(r.full(1, 2));
  EXPECT_EQ(r.depth(1), 1u);
  r.clear(1);
  EXPECT_FALSE(r.pending(1));
}

}  // namespace
}  // namespace rnic
