// Every RDMAP operation between two simulated hosts, through verbs: the bytes that arrive, the
// completions on both sides, and guard bytes around every target untouched (the scoreboard).
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "sim/cluster.h"
#include "testbench/traffic/endpoint.h"

namespace rnic {
namespace {

using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

constexpr uint8_t kGuard = 0xA5;

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937 r(seed);
  for (auto& b : v) b = uint8_t(r());
  return v;
}

void fill(void* base, size_t len, uint8_t v) {
  std::vector<uint8_t> g(len, v);
  ASSERT_EQ(rnic_mem_write(base, g.data(), len), 0);
}

std::vector<uint8_t> read(uint64_t addr, size_t len) {
  std::vector<uint8_t> v(len);
  EXPECT_EQ(rnic_mem_read(reinterpret_cast<void*>(addr), v.data(), len), 0);
  return v;
}

// Bytes [0, off) and [off+len, total) of the buffer still hold the guard value.
void expect_guards(uint64_t base, size_t total, size_t off, size_t len) {
  const std::vector<uint8_t> all = read(base, total);
  for (size_t i = 0; i < total; ++i)
    if (i < off || i >= off + len) {
      ASSERT_EQ(all[i], kGuard) << "guard byte " << i << " overwritten";
    }
}

ibv_wc wait_one(ibv_cq* cq) {
  ibv_wc wc{};
  for (;;) {
    if (ibv_poll_cq(cq, 1, &wc) == 1) return wc;
    if (!rnic_wait_cq(cq, 10'000'000)) {
      ADD_FAILURE() << "no completion in 10 ms";
      return wc;
    }
  }
}

class VerbsOps : public ::testing::Test {
 protected:
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Oob oob;
  // Each side opens an endpoint with the buffer filled with guard bytes and connects.
  void connect(Endpoint& ep, int me, const EndpointConfig& c = {}) {
    ep.open(c);
    fill(ep.buf, c.buf_bytes, kGuard);
    oob.put(1 - me, ep.info());
    ep.connect(oob.get(me));
  }
};

TEST_F(VerbsOps, RdmaWriteLandsExactlyAndCompletes) {
  Cluster cl(cfg, stats);
  constexpr size_t kLen = 65536 + 123, kSrcOff = 4096 + 7, kDstOff = 8192 + 5;
  const std::vector<uint8_t> data = pattern(kLen, 1);
  PeerInfo server;
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0);
            server = oob.get(0);
            ASSERT_EQ(rnic_mem_write(static_cast<uint8_t*>(a.buf) + kSrcOff, data.data(), kLen), 0);
            ibv_sge sge{a.addr() + kSrcOff, uint32_t(kLen), a.mr->lkey};
            ibv_send_wr wr{};
            wr.wr_id = 42;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            wr.opcode = IBV_WR_RDMA_WRITE;
            wr.send_flags = IBV_SEND_SIGNALED;
            wr.wr.rdma.remote_addr = server.addr + kDstOff;
            wr.wr.rdma.rkey = server.rkey;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
            EXPECT_EQ(wc.wr_id, 42u);
            oob.put(1, {});
          },
          [&] {
            connect(b, 1);
            oob.put(0, b.info());
            oob.get(1);  // the writer's completion
            EXPECT_EQ(read(b.addr() + kDstOff, kLen), data);
            expect_guards(b.addr(), EndpointConfig{}.buf_bytes, kDstOff, kLen);
          }});
  EXPECT_EQ(stats.group("node1.core").counter("rx_payload_bytes", "", "").value, kLen);
}

TEST_F(VerbsOps, SendGathersAndScattersAcrossSges) {
  Cluster cl(cfg, stats);
  const std::vector<uint8_t> data = pattern(10000, 2);
  EndpointConfig c;
  c.sge = 3;
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0, c);
            oob.get(0);  // receives posted
            ASSERT_EQ(rnic_mem_write(a.buf, data.data(), 3000), 0);
            ASSERT_EQ(
                rnic_mem_write(static_cast<uint8_t*>(a.buf) + 100000, data.data() + 3000, 7000), 0);
            ibv_sge sge[2] = {{a.addr(), 3000, a.mr->lkey}, {a.addr() + 100000, 7000, a.mr->lkey}};
            ibv_send_wr wr{};
            wr.wr_id = 7;
            wr.sg_list = sge;
            wr.num_sge = 2;
            wr.opcode = IBV_WR_SEND;
            wr.send_flags = IBV_SEND_SIGNALED;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(wc.opcode, IBV_WC_SEND);
          },
          [&] {
            connect(b, 1, c);
            // Receive into three pieces: 1000 B, 5000 B, 6000 B (room for 12000).
            ibv_sge sge[3] = {{b.addr() + 0, 1000, b.mr->lkey},
                              {b.addr() + 20000, 5000, b.mr->lkey},
                              {b.addr() + 50000, 6000, b.mr->lkey}};
            ibv_recv_wr rwr{};
            rwr.wr_id = 9;
            rwr.sg_list = sge;
            rwr.num_sge = 3;
            ibv_recv_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &rwr, &bad), 0);
            oob.put(0, {});
            const ibv_wc wc = wait_one(b.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(wc.opcode, IBV_WC_RECV);
            EXPECT_EQ(wc.byte_len, 10000u);
            EXPECT_EQ(wc.wr_id, 9u);
            std::vector<uint8_t> got = read(b.addr(), 1000);
            const std::vector<uint8_t> g2 = read(b.addr() + 20000, 5000);
            const std::vector<uint8_t> g3 = read(b.addr() + 50000, 4000);
            got.insert(got.end(), g2.begin(), g2.end());
            got.insert(got.end(), g3.begin(), g3.end());
            EXPECT_EQ(got, data);
            const std::vector<uint8_t> rest = read(b.addr() + 54000, 2000);
            EXPECT_EQ(rest, std::vector<uint8_t>(2000, kGuard));
          }});
}

TEST_F(VerbsOps, RdmaReadFetchesRemoteBytes) {
  Cluster cl(cfg, stats);
  constexpr size_t kLen = 100000;
  const std::vector<uint8_t> data = pattern(kLen, 3);
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0);
            const PeerInfo server = oob.get(0);
            ibv_sge sge{a.addr() + 64, uint32_t(kLen), a.mr->lkey};
            ibv_send_wr wr{};
            wr.wr_id = 5;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            wr.opcode = IBV_WR_RDMA_READ;
            wr.send_flags = IBV_SEND_SIGNALED;
            wr.wr.rdma.remote_addr = server.addr + 300;
            wr.wr.rdma.rkey = server.rkey;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(wc.opcode, IBV_WC_RDMA_READ);
            EXPECT_EQ(read(a.addr() + 64, kLen), data);
            expect_guards(a.addr(), EndpointConfig{}.buf_bytes, 64, kLen);
          },
          [&] {
            connect(b, 1);
            ASSERT_EQ(rnic_mem_write(static_cast<uint8_t*>(b.buf) + 300, data.data(), kLen), 0);
            oob.put(0, b.info());
          }});
}

}  // namespace
}  // namespace rnic
