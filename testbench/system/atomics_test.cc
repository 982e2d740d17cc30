// RFC 7306 atomics between simulated hosts: host 1 holds the targets; hosts 0 and 2 each
// connect 4 QPs to it (host 1's card serves 8 QPs from two peers), and their atomics race.
//   - FetchAdd: 5,000 adds of 1 from each requester (10,000 on one 8-byte word, up to 16
//     outstanding per QP) leave the word at its start + 10,000, and the original values the
//     requesters got back are exactly start .. start + 9,999, each once: no two operations saw
//     the same value (one crosses the word's 32-bit boundary).
//   - CmpSwap: a spin lock (0 free, else its holder's id) guarding a counter beside it: each of
//     the 8 QPs takes the lock with CmpSwap, reads the counter, writes it + 1 and releases the
//     lock with CmpSwap, 25 times; the counter ends at 200 (no update lost) and every release
//     finds the lock held by its QP.
// Every completion is IBV_WC_SUCCESS with its opcode and byte_len 8.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::mem_read;
using testbench::mem_write;
using traffic::connect_qp;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

constexpr int kQps = 4;                   // per requester
constexpr uint64_t kWordOff = 0x100;      // at host 1: the FetchAdd word, the lock
constexpr uint64_t kCounterOff = 0x108;   // at host 1: the counter the lock guards
constexpr uint64_t kResultsOff = 0x1000;  // at a requester: the values fetched
constexpr uint64_t kStart = 0x00000000FFFFF000ull;

EndpointConfig atomic_config(int qps) {
  EndpointConfig ec;
  ec.qps = qps;
  ec.access |= IBV_ACCESS_REMOTE_ATOMIC;
  ec.qp_access |= IBV_ACCESS_REMOTE_ATOMIC;
  return ec;
}

uint64_t word(const void* base, uint64_t off) {
  const std::vector<uint8_t> b = mem_read(static_cast<const uint8_t*>(base) + off, 8);
  uint64_t v;
  std::memcpy(&v, b.data(), 8);
  return v;
}

void put_word(void* base, uint64_t off, uint64_t v) {
  std::vector<uint8_t> b(8);
  std::memcpy(b.data(), &v, 8);
  mem_write(base, off, b);
}

ibv_send_wr atomic_wr(ibv_wr_opcode op, uint64_t id, ibv_sge* sge, const PeerInfo& peer,
                      uint64_t off, uint64_t compare_add, uint64_t swap = 0) {
  ibv_send_wr w{};
  w.wr_id = id;
  w.opcode = op;
  w.sg_list = sge;
  w.num_sge = 1;
  w.send_flags = IBV_SEND_SIGNALED;
  w.wr.atomic = {peer.addr + off, compare_add, swap, peer.rkey};
  return w;
}

// Host 1's side: one endpoint of 8 QPs, the first 4 connected to host 0's, the others to host
// 2's (one PD and MR for both). Its programs only set up and wait.
struct Target {
  Endpoint e;
  void open_and_connect(Oob& oob) {
    e.open(atomic_config(2 * kQps));
    const PeerInfo a = oob.get(10), c = oob.get(12);
    PeerInfo mine = e.info();
    PeerInfo to_a = mine, to_c = mine;
    to_a.qpns.assign(mine.qpns.begin(), mine.qpns.begin() + kQps);
    to_c.qpns.assign(mine.qpns.begin() + kQps, mine.qpns.end());
    for (int i = 0; i < kQps; ++i) {
      connect_qp(e.qps[size_t(i)], a, size_t(i), e.cfg);
      connect_qp(e.qps[size_t(kQps + i)], c, size_t(i), e.cfg);
    }
    oob.put(0, to_a);
    oob.put(2, to_c);
  }
};

// A requester (host `me`: 0 or 2) connected to host 1.
PeerInfo open_requester(Endpoint& e, int me, Oob& oob) {
  e.open(atomic_config(kQps));
  oob.put(me == 0 ? 10 : 12, e.info());
  const PeerInfo peer = oob.get(me);
  e.connect(peer);
  return peer;
}

void expect_atomic_wc(const ibv_wc& wc, ibv_wc_opcode op) {
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, op);
  EXPECT_EQ(wc.byte_len, 8u);
}

TEST(Atomics, FetchAddsFromEightQpsOfTwoHostsEndWithTheExactSum) {
  constexpr int kPerQp = 1250, kWindow = 16;
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(leaf_spine(cfg, 3, 3, 1), cfg, stats);
  Oob oob;
  Target t;
  Endpoint req[2];
  std::vector<uint64_t> fetched;

  auto requester = [&](int me) {
    Endpoint& e = req[me / 2];
    const PeerInfo peer = open_requester(e, me, oob);
    oob.get(me);  // the word is set
    std::vector<ibv_sge> sge(size_t(kQps * kPerQp));
    std::vector<int> posted(kQps), out(kQps);
    int done = 0;
    while (done < kQps * kPerQp) {
      for (int q = 0; q < kQps; ++q)
        while (posted[q] < kPerQp && out[q] < kWindow) {
          const uint64_t n = uint64_t(q) * kPerQp + uint64_t(posted[q]);
          sge[n] = {e.addr() + kResultsOff + 8 * n, 8, e.mr->lkey};
          ibv_send_wr w = atomic_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, n, &sge[n], peer, kWordOff, 1);
          ibv_send_wr* bad = nullptr;
          ASSERT_EQ(ibv_post_send(e.qps[size_t(q)], &w, &bad), 0);
          ++posted[q];
          ++out[q];
        }
      for (const ibv_wc& wc : testbench::wait_completions(e.cq, 1)) {
        expect_atomic_wc(wc, IBV_WC_FETCH_ADD);
        ++done;
        --out[wc.wr_id / kPerQp];
      }
    }
    for (int n = 0; n < kQps * kPerQp; ++n)
      fetched.push_back(word(e.buf, kResultsOff + 8 * uint64_t(n)));
    oob.put(11, {});
  };
  cl.run({[&] { requester(0); },
          [&] {
            t.open_and_connect(oob);
            put_word(t.e.buf, kWordOff, kStart);
            oob.put(0, {});
            oob.put(2, {});
            oob.get(11);
            oob.get(11);
            EXPECT_EQ(word(t.e.buf, kWordOff), kStart + 2 * kQps * kPerQp);
          },
          [&] { requester(2); }});
  ASSERT_EQ(fetched.size(), size_t(2 * kQps * kPerQp));
  std::sort(fetched.begin(), fetched.end());
  for (size_t i = 0; i < fetched.size(); ++i)
    ASSERT_EQ(fetched[i], kStart + i) << "the " << i << "th value fetched";
}

TEST(Atomics, CmpSwapLockFromTwoHostsNeverLosesAnUpdate) {
  constexpr int kRounds = 25;
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(leaf_spine(cfg, 3, 3, 1), cfg, stats);
  Oob oob;
  Target t;
  Endpoint req[2];
  int bad_releases = 0, tries = 0;

  auto requester = [&](int me) {
    Endpoint& e = req[me / 2];
    const PeerInfo peer = open_requester(e, me, oob);
    oob.get(me);  // the lock and the counter are set
    // Per QP: its id (never 0), its step, the rounds done; its 16 bytes of results.
    enum Step { kAcquire, kRead, kWriteRelease };
    std::vector<Step> step(kQps, kAcquire);
    std::vector<int> rounds(kQps);
    std::vector<ibv_sge> sge(2 * kQps);
    auto id_of = [&](int q) { return uint64_t(me * 16 + q + 1); };
    auto res = [&](int q, int k) { return kResultsOff + 16 * uint64_t(q) + 8 * uint64_t(k); };
    auto post = [&](int q) {
      ibv_send_wr* bad = nullptr;
      sge[2 * q] = {e.addr() + res(q, 0), 8, e.mr->lkey};
      if (step[q] == kAcquire) {
        ibv_send_wr w = atomic_wr(IBV_WR_ATOMIC_CMP_AND_SWP, uint64_t(q), &sge[2 * q], peer,
                                  kWordOff, 0, id_of(q));
        ++tries;
        ASSERT_EQ(ibv_post_send(e.qps[size_t(q)], &w, &bad), 0);
      } else if (step[q] == kRead) {
        ibv_send_wr w = testbench::rdma_write_wr(uint64_t(q), &sge[2 * q], 1,
                                                 peer.addr + kCounterOff, peer.rkey, true);
        w.opcode = IBV_WR_RDMA_READ;
        ASSERT_EQ(ibv_post_send(e.qps[size_t(q)], &w, &bad), 0);
      } else {
        // counter + 1 from the second result slot, then the release behind it (in order).
        put_word(e.buf, res(q, 1), word(e.buf, res(q, 0)) + 1);
        sge[2 * q + 1] = {e.addr() + res(q, 1), 8, e.mr->lkey};
        ibv_send_wr rel = atomic_wr(IBV_WR_ATOMIC_CMP_AND_SWP, uint64_t(q), &sge[2 * q], peer,
                                    kWordOff, id_of(q), 0);
        ibv_send_wr w = testbench::rdma_write_wr(100 + uint64_t(q), &sge[2 * q + 1], 1,
                                                 peer.addr + kCounterOff, peer.rkey, false);
        w.next = &rel;
        ASSERT_EQ(ibv_post_send(e.qps[size_t(q)], &w, &bad), 0);
      }
    };
    for (int q = 0; q < kQps; ++q) post(q);
    int finished = 0;
    while (finished < kQps) {
      for (const ibv_wc& wc : testbench::wait_completions(e.cq, 1)) {
        const int q = int(wc.wr_id);
        ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
        const uint64_t got = word(e.buf, res(q, 0));
        if (step[q] == kAcquire) {
          expect_atomic_wc(wc, IBV_WC_COMP_SWAP);
          if (got == 0) step[q] = kRead;  // taken; else someone holds it: try again
        } else if (step[q] == kRead) {
          step[q] = kWriteRelease;
        } else {
          expect_atomic_wc(wc, IBV_WC_COMP_SWAP);
          if (got != id_of(q)) ++bad_releases;
          step[q] = kAcquire;
          if (++rounds[q] == kRounds) {
            ++finished;
            continue;
          }
        }
        post(q);
      }
    }
    oob.put(11, {});
  };
  cl.run({[&] { requester(0); },
          [&] {
            t.open_and_connect(oob);
            put_word(t.e.buf, kWordOff, 0);
            put_word(t.e.buf, kCounterOff, 0);
            oob.put(0, {});
            oob.put(2, {});
            oob.get(11);
            oob.get(11);
            EXPECT_EQ(word(t.e.buf, kCounterOff), uint64_t(2 * kQps * kRounds));
            EXPECT_EQ(word(t.e.buf, kWordOff), 0u);  // released
          },
          [&] { requester(2); }});
  EXPECT_EQ(bad_releases, 0);
  EXPECT_GT(tries, 2 * kQps * kRounds);  // there was contention: some acquisitions failed
}

}  // namespace
}  // namespace rnic
