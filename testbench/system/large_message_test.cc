// The largest messages the issue asks for: 1 GiB by RDMA Write, RDMA Read and Send, each one
// WR, between two simulated hosts (jumbo frames, to keep the run short: the message path is the
// same at any MTU). Scoreboard: the destination holds exactly the source bytes, the guard pages
// on both sides of every buffer are untouched, and each side's completion carries the length.
// The responder checks the Write once a 0-byte Send posted after it has completed there: the
// Write's completion at the requester says only that the card is done with its source (RFC
// 5040), and at 64 MiB the responder used to look while the last placements were in flight.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::kGuard;
using testbench::pattern;
using testbench::wait_one;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

constexpr uint64_t kMsg = 1ull << 30;
constexpr uint64_t kGuardBytes = 4096;
constexpr uint64_t kWaitNs = 5'000'000'000;  // 5 s simulated for one message

// The buffer holds the message at kGuardBytes, guard bytes before and after.
void expect_message(const char* what, const Endpoint& e, const std::vector<uint8_t>& want) {
  const std::vector<uint8_t> got = testbench::mem_read(e.buf, size_t(kMsg + 2 * kGuardBytes));
  for (uint64_t i = 0; i < kGuardBytes; ++i) {
    ASSERT_EQ(got[i], kGuard) << what << ": guard byte " << i << " before the message";
    ASSERT_EQ(got[kGuardBytes + kMsg + i], kGuard) << what << ": guard byte " << i << " after";
  }
  ASSERT_EQ(std::memcmp(got.data() + kGuardBytes, want.data(), kMsg), 0)
      << what << ": the message differs";
}

TEST(LargeMessages, OneGibWriteReadAndSend) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.mac.mtu = 9000;
  cfg.host.mem_mib = 8192;  // a 1 GiB buffer per host, its pages scattered by small gaps
  cfg.host.malloc_max_gap = 2;
  StatRegistry stats;
  Cluster cl(cfg, stats);
  EndpointConfig ec;
  ec.buf_bytes = size_t(kMsg + 2 * kGuardBytes);
  const std::vector<uint8_t> data = pattern(kMsg, 1);
  Oob oob;
  Endpoint a, b;
  uint64_t sim_ns[3] = {};
  cl.run({[&] {
            a.open(ec);
            testbench::mem_fill(a.buf, ec.buf_bytes);
            testbench::mem_write(a.buf, kGuardBytes, data);
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            oob.get(0);  // the responder is ready
            ibv_sge sge{a.addr() + kGuardBytes, uint32_t(kMsg), a.mr->lkey};
            ibv_send_wr* bad = nullptr;
            // RDMA Write of 1 GiB.
            uint64_t t0 = rnic_now_ns();
            ibv_send_wr w =
                testbench::rdma_write_wr(1, &sge, 1, peer.addr + kGuardBytes, peer.rkey, true);
            ASSERT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
            ibv_wc wc = wait_one(a.cq, kWaitNs);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
            sim_ns[0] = rnic_now_ns() - t0;
            // The Write's completion says the card is done with the source, not that the
            // responder has placed it (RFC 5040); a Send after it completes at the responder
            // only once every byte of the Write is placed.
            ibv_send_wr fence{};
            fence.wr_id = 9;
            fence.opcode = IBV_WR_SEND;
            fence.send_flags = IBV_SEND_SIGNALED;
            ASSERT_EQ(ibv_post_send(a.qps[0], &fence, &bad), 0);
            EXPECT_EQ(wait_one(a.cq, kWaitNs).status, IBV_WC_SUCCESS);
            oob.put(1, {});  // check the Write
            oob.get(0);
            // RDMA Read of 1 GiB back into a buffer of guard bytes.
            testbench::mem_fill(a.buf, ec.buf_bytes);
            t0 = rnic_now_ns();
            ibv_send_wr r = w;
            r.wr_id = 2;
            r.opcode = IBV_WR_RDMA_READ;
            ASSERT_EQ(ibv_post_send(a.qps[0], &r, &bad), 0);
            wc = wait_one(a.cq, kWaitNs);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
            sim_ns[1] = rnic_now_ns() - t0;
            expect_message("Read destination", a, data);
            // Send of 1 GiB into the responder's receive.
            testbench::mem_write(a.buf, kGuardBytes, data);
            oob.put(1, {});
            oob.get(0);  // the receive is posted
            t0 = rnic_now_ns();
            ibv_send_wr s = w;
            s.wr_id = 3;
            s.opcode = IBV_WR_SEND;
            ASSERT_EQ(ibv_post_send(a.qps[0], &s, &bad), 0);
            wc = wait_one(a.cq, kWaitNs);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
            sim_ns[2] = rnic_now_ns() - t0;
            oob.put(1, {});
          },
          [&] {
            b.open(ec);
            testbench::mem_fill(b.buf, ec.buf_bytes);
            const PeerInfo peer = oob.get(1);
            oob.put(0, b.info());
            b.connect(peer);
            ibv_recv_wr fence{9, nullptr, nullptr, 0};
            ibv_recv_wr* bad_fence = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &fence, &bad_fence), 0);
            oob.put(0, {});
            EXPECT_EQ(wait_one(b.cq, kWaitNs).status, IBV_WC_SUCCESS);  // the Send after the Write
            oob.get(1);
            expect_message("Write destination", b, data);
            oob.put(0, {});
            oob.get(1);
            testbench::mem_fill(b.buf, ec.buf_bytes);
            ibv_sge sge{b.addr() + kGuardBytes, uint32_t(kMsg), b.mr->lkey};
            ibv_recv_wr rw{7, nullptr, &sge, 1};
            ibv_recv_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &rw, &bad), 0);
            oob.put(0, {});
            const ibv_wc wc = wait_one(b.cq, kWaitNs);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
            EXPECT_EQ(wc.wr_id, 7u);
            EXPECT_EQ(wc.byte_len, uint32_t(kMsg));
            oob.get(1);
            expect_message("Send destination", b, data);
          }});
  // Each took at least its wire time at 10 Gb/s (1 GiB of payload: 0.86 s).
  for (uint64_t t : sim_ns) EXPECT_GT(t, 858'993'459u);
  fmt::print("1 GiB: Write {:.3f} ms, Read {:.3f} ms, Send {:.3f} ms simulated\n", sim_ns[0] / 1e6,
             sim_ns[1] / 1e6, sim_ns[2] / 1e6);
}

}  // namespace
}  // namespace rnic
