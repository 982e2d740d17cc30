// What the verbs system tests share: test data, waiting for completions, a QP's state, an RDMA
// Write WR, a statistics counter's value. For use inside simulated processes of GoogleTest cases.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "models/common/stats.h"
#include "models/host/verbs/verbs.h"

namespace rnic::testbench {

// The value of counter `name` of statistics group `group` (0 if the run never made it).
inline uint64_t counter(StatRegistry& s, const std::string& group, const std::string& name) {
  return s.group(group).counter(name, "", "").value;
}

// The value every system test fills around its targets (the scoreboard's guard bytes).
constexpr uint8_t kGuard = 0xA5;

// The simulated process's memory: read, write at an offset, fill.
inline std::vector<uint8_t> mem_read(const void* base, size_t len) {
  std::vector<uint8_t> v(len);
  EXPECT_EQ(rnic_mem_read(base, v.data(), len), 0);
  return v;
}
inline void mem_write(void* base, uint64_t off, const std::vector<uint8_t>& d) {
  ASSERT_EQ(rnic_mem_write(static_cast<uint8_t*>(base) + off, d.data(), d.size()), 0);
}
inline void mem_fill(void* base, size_t len, uint8_t v = kGuard) {
  mem_write(base, 0, std::vector<uint8_t>(len, v));
}

// Memory at base holds exactly `want`; the first differing byte fails the test.
inline void expect_bytes(const char* what, const void* base, const std::vector<uint8_t>& want) {
  const std::vector<uint8_t> got = mem_read(base, want.size());
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      ADD_FAILURE() << what << ": byte " << i << " is " << int(got[i]) << ", expected "
                    << int(want[i]);
      return;
    }
}

// The running GoogleTest case's name (a capture's file name).
// The running test's name, usable as a file name ("Case" or, parametrized, "Case_param").
inline std::string test_name() {
  std::string n = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(n.begin(), n.end(), '/', '_');
  return n;
}

// n pseudo-random bytes, the same for the same seed: a mix of each 8-byte word's index (no two
// words alike within a buffer; fast enough for 1 GiB).
inline std::vector<uint8_t> pattern(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t z = (i / 8) * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    std::memcpy(v.data() + i, &z, std::min<size_t>(8, n - i));
  }
  return v;
}

// Polls until n completions have arrived; `limit_ns` of simulated time (10 ms unless given)
// without one fails the test and returns what arrived.
inline std::vector<ibv_wc> wait_completions(ibv_cq* cq, size_t n, uint64_t limit_ns = 10'000'000) {
  std::vector<ibv_wc> v;
  while (v.size() < n) {
    ibv_wc wc{};
    if (ibv_poll_cq(cq, 1, &wc) == 1) {
      v.push_back(wc);
      continue;
    }
    if (!rnic_wait_cq(cq, limit_ns)) {
      ADD_FAILURE() << "only " << v.size() << " of " << n << " completions in " << limit_ns
                    << " ns";
      break;
    }
  }
  return v;
}

// The next completion (a zeroed one, and a test failure, if none comes).
inline ibv_wc wait_one(ibv_cq* cq, uint64_t limit_ns = 10'000'000) {
  const std::vector<ibv_wc> v = wait_completions(cq, 1, limit_ns);
  return v.empty() ? ibv_wc{} : v[0];
}

inline ibv_qp_state qp_state(ibv_qp* qp) {
  ibv_qp_attr a{};
  ibv_qp_init_attr i{};
  EXPECT_EQ(ibv_query_qp(qp, &a, IBV_QP_STATE, &i), 0);
  return a.qp_state;
}

// Posts one receive of `sge` (which must outlive the call only) with wr_id `id`.
inline int post_recv(ibv_qp* qp, ibv_sge* sge, uint64_t id) {
  ibv_recv_wr r{};
  r.wr_id = id;
  r.sg_list = sge;
  r.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return ibv_post_recv(qp, &r, &bad);
}

// Posts one signaled Send of `sge` (which must outlive the call only) with wr_id `id`.
inline int post_send(ibv_qp* qp, ibv_sge* sge, uint64_t id) {
  ibv_send_wr w{};
  w.wr_id = id;
  w.sg_list = sge;
  w.num_sge = 1;
  w.opcode = IBV_WR_SEND;
  w.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, &w, &bad);
}

inline ibv_send_wr rdma_write_wr(uint64_t id, ibv_sge* sge, int num_sge, uint64_t raddr,
                                 uint32_t rkey, bool signaled = true) {
  ibv_send_wr wr{};
  wr.wr_id = id;
  wr.sg_list = sge;
  wr.num_sge = num_sge;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  return wr;
}

}  // namespace rnic::testbench
