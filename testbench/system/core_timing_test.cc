// The RNIC Core's and the EFE's latencies and spacings as rnic_core.h,
// efe.h and docs/latency.md give them, pinned from the core's timing probe, the wire
// and the host memory writes between two simulated hosts; and the breakdown of write_lat's
// 2-byte round trip (docs/performance.md prints it from WriteLatencyBreakdown's output).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"
#include "testbench/common/wire_log.h"

namespace rnic {
namespace {

using Probe = RnicCore::Probe;
constexpr XlatTiming kXlat{};  // the core's rnic_xlat timing
using testbench::rdma_write_wr;
using testbench::test_name;
using testbench::wait_one;
using testbench::WireFrame;
using testbench::WireLog;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

// Every probe point of one node, in order of occurrence, per point.
struct Probes {
  std::map<Probe, std::vector<std::pair<uint32_t, uint64_t>>> at;
  void attach(RnicCore& core) {
    core.probe = [this](const ProbeEvent& e) { at[e.point].push_back({e.id, e.t_ps}); };
  }
  // Time of the n-th occurrence of p for `id` (every id when id < 0).
  uint64_t t(Probe p, size_t n, int64_t id = -1) const {
    size_t k = 0;
    auto it = at.find(p);
    if (it != at.end())
      for (const auto& [i, t] : it->second)
        if ((id < 0 || i == uint32_t(id)) && k++ == n) return t;
    ADD_FAILURE() << "probe " << int(p) << " #" << n << " did not happen";
    return 0;
  }
  size_t count(Probe p) const {
    auto it = at.find(p);
    return it == at.end() ? 0 : it->second.size();
  }
};

// Two nodes (the test's configuration), each core's probe recorded, and their endpoints.
struct Probed {
  StatRegistry stats;
  Cluster cl;
  Probes pr[2];
  Endpoint ep[2];
  explicit Probed(const SystemConfig& c) : cl(c, stats) {
    pr[0].attach(cl.nodes[0]->card.core);
    pr[1].attach(cl.nodes[1]->card.core);
  }
};

class CoreTiming : public ::testing::Test {
 protected:
  SystemConfig cfg = preset_config("rnic-10g", "test");
  uint64_t cycle() const { return ClockDomain::mhz(cfg.core.clk_mhz).period_ps; }
};

// write_lat's loop (sim/traffic/perftest.cc), 2 bytes, with the times each side's
// program sees; then one iteration in steady state taken apart stage by stage, both ways.
TEST_F(CoreTiming, WriteLatencyBreakdown) {
  StatRegistry stats;
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  Probes pr[2];
  pr[0].attach(cl.nodes[0]->card.core);
  pr[1].attach(cl.nodes[1]->card.core);
  constexpr int kIters = 30, kSample = 20;
  constexpr uint32_t kSize = 2, kRegion = 4096;
  // Memory writes that reached each host, with their time.
  std::vector<std::pair<uint64_t, uint64_t>> mem[2];  // (pa, t)
  for (int n = 0; n < 2; ++n) {
    auto prev = cl.nodes[n]->host.rc.on_write;
    cl.nodes[n]->host.rc.on_write = [&mem, n, prev](uint64_t addr, uint32_t len) {
      mem[n].push_back({addr, now_ps()});
      if (prev) prev(addr, len);
    };
  }
  std::vector<uint64_t> posted[2], seen[2];  // ps
  std::vector<double> samples;
  Oob oob;
  Endpoint ep[2];
  auto program = [&](int me) {
    Endpoint& e = ep[me];
    e.open(EndpointConfig{});
    oob.put(1 - me, e.info());
    const PeerInfo peer = oob.get(me);
    e.connect(peer);
    oob.put(1 - me, {});
    oob.get(me);
    const uint64_t poll_at = e.addr() + kRegion + kSize - 1;
    ibv_sge sge{e.addr(), kSize, e.mr->lkey};
    for (int i = 0; i < kIters; ++i) {
      const uint8_t tag = uint8_t(i + 1);
      auto send = [&] {
        rnic_mem_write(reinterpret_cast<void*>(e.addr() + kSize - 1), &tag, 1);
        posted[me].push_back(now_ps());
        ibv_send_wr wr = rdma_write_wr(uint64_t(i), &sge, 1, peer.addr + kRegion, peer.rkey, true);
        ibv_send_wr* bad = nullptr;
        ASSERT_EQ(ibv_post_send(e.qps[0], &wr, &bad), 0);
      };
      auto receive = [&] {
        ASSERT_TRUE(rnic_wait_mem(reinterpret_cast<void*>(poll_at), tag, 100'000'000));
        seen[me].push_back(now_ps());
      };
      const uint64_t t0 = now_ps();
      if (me == 0) {
        send();
        receive();
        samples.push_back((now_ps() - t0) / 2.0);
      } else {
        receive();
        send();
      }
      EXPECT_EQ(wait_one(e.cq).status, IBV_WC_SUCCESS);
    }
  };
  cl.run({[&] { program(0); }, [&] { program(1); }});
  ASSERT_EQ(samples.size(), size_t(kIters));

  const uint64_t c = cycle();
  struct Stage {
    const char* name;
    uint64_t ps[2];
  };
  std::vector<Stage> stages;
  uint64_t one_way[2] = {};
  for (int s = 0; s < 2; ++s) {
    const int d = 1 - s;
    const Probes& ps = pr[s];
    const Probes& pd = pr[d];
    const uint32_t sq = ep[s].qps[0]->qp_num, rq = ep[d].qps[0]->qp_num;
    const size_t k = kSample;
    const uint64_t post = posted[s][k];
    const uint64_t db = ps.t(Probe::kDoorbell, k, sq);
    const uint64_t wqe = ps.t(Probe::kWqeQueued, k, sq);
    const uint64_t issue = ps.t(Probe::kSegIssue, k, sq);
    const uint64_t fetch = ps.t(Probe::kSegFetch, k, sq);
    const uint64_t dma = ps.t(Probe::kSegDma, k, sq);
    const uint64_t data = ps.t(Probe::kSegData, k, sq);
    const uint64_t ready = ps.t(Probe::kSegReady, k, sq);
    const uint64_t sent = ps.t(Probe::kSegSent, k, sq);
    const std::vector<const WireFrame*> frames = wire.data(cl.nodes[s]->mac, rq);
    ASSERT_GT(frames.size(), k);
    const WireFrame& f = *frames[k];
    const uint64_t first_bit = f.t_ps;
    const uint64_t rx = pd.t(Probe::kRxStart, k, rq);
    const uint64_t checked = pd.t(Probe::kRxChecked, k, rq);
    const uint64_t place = pd.t(Probe::kRxPlace, k, rq);
    // The placement write reaching host memory: the first write at or after `place` to the
    // polled region.
    uint64_t in_mem = 0;
    for (const auto& [pa, t] : mem[d])
      if (t >= place) {
        in_mem = t;
        break;
      }
    const uint64_t seen_at = seen[d][k];

    // Pinned: rnic_core.h, efe.h, eth_link.h.
    EXPECT_EQ(wqe - db, 8 * c) << "doorbell: a 128-byte WQE at 16 B per cycle";
    EXPECT_EQ(issue, wqe) << "the idle SQ engine issues on the WQE's arrival";
    EXPECT_EQ(fetch - issue, kXlat.smt_cycles * c) << "one SGE check";
    EXPECT_EQ(dma - fetch, (kXlat.smt_cycles + kXlat.pbl_cycles + 1) * c)
        << "xlat: SMT, PBLMT, one chunk";
    EXPECT_EQ(ready - data, RnicCore::kHeaderCycles * c);
    EXPECT_EQ(sent, ready) << "the EFE has room";
    const uint64_t frame_len = 14 + 20 + f.ddp.size();
    const uint64_t dp = uint64_t(cfg.core.datapath_bytes);
    EXPECT_EQ(
        first_bit - sent,
        (efe::Efe::kTxCycles + (frame_len + dp - 1) / dp - 1 + uint64_t(cfg.mac.tx_cycles)) * c);
    const uint64_t byte_ps = cl.link(0).byte_ps();
    const uint64_t last_bit = first_bit + (8 + std::max<uint64_t>(frame_len, 60) + 4) * byte_ps +
                              uint64_t(cfg.link.prop_ns) * 1000;
    const ClockDomain clk = ClockDomain::mhz(cfg.core.clk_mhz);
    // FCS at the next edge + 1 cycle, rx_cycles, the EFE's kRxCycles; the RX engine starts on
    // that edge.
    EXPECT_EQ(rx, clk.edge_after(last_bit, 1 + uint64_t(cfg.mac.rx_cycles) + efe::Efe::kRxCycles));
    EXPECT_EQ(checked - rx, uint64_t(cfg.core.rx_parse_cycles) * c);
    EXPECT_EQ(place - checked, (kXlat.smt_cycles + kXlat.pbl_cycles + 1) * c);
    EXPECT_GT(in_mem, place);
    EXPECT_GE(seen_at, in_mem);

    const uint64_t v[] = {db - post,     wqe - db,    fetch - wqe,      dma - fetch,
                          data - dma,    sent - data, first_bit - sent, last_bit - first_bit,
                          rx - last_bit, place - rx,  in_mem - place,   seen_at - in_mem};
    const char* names[] = {"host: WQE build, MMIO writes, doorbell to the card",
                           "doorbell: WQE into the on-chip SQ",
                           "SQ engine: issue, SGE check",
                           "xlat of the source",
                           "DMA read of the payload (PCIe round trip)",
                           "segment ready, to the EFE",
                           "EFE + MAC transmit to first bit",
                           "wire: preamble, frame, FCS, propagation",
                           "MAC FCS check + EFE receive",
                           "RX engine: header checks, xlat",
                           "DMA write to host memory (PCIe)",
                           "host polling sees the byte"};
    if (stages.empty())
      for (const char* n : names) stages.push_back({n, {0, 0}});
    for (size_t i = 0; i < stages.size(); ++i) {
      stages[i].ps[s] = v[i];
      one_way[s] += v[i];
    }
    EXPECT_EQ(one_way[s], seen_at - post);
  }
  // The round trip the sample measures: node 0's post to node 0 seeing the reply.
  const uint64_t turnaround = posted[1][kSample] - seen[1][kSample];
  const uint64_t rtt = one_way[0] + turnaround + one_way[1];
  // The sample runs from before node 0's tag write (which costs no simulated time) to its
  // seeing the reply: exactly the stages above.
  EXPECT_EQ(seen[0][kSample] - posted[0][kSample], rtt);
  EXPECT_DOUBLE_EQ(samples[kSample], rtt / 2.0);
  std::string table =
      fmt::format("| stage | node0→node1 (ns) | node1→node0 (ns) |\n|---|---|---|\n");
  for (const Stage& st : stages)
    table +=
        fmt::format("| {} | {:.1f} | {:.1f} |\n", st.name, st.ps[0] / 1000.0, st.ps[1] / 1000.0);
  table += fmt::format("| one way | {:.1f} | {:.1f} |\n", one_way[0] / 1000.0, one_way[1] / 1000.0);
  table +=
      fmt::format("| node1: sees the byte → posts its write | {:.1f} | |\n", turnaround / 1000.0);
  table += fmt::format("| round trip / 2 = write_lat sample | {:.1f} | |\n", rtt / 2000.0);
  // Not on write_lat's path: node 0's completion of the same write, from the ACK that
  // completes it.
  const uint64_t cqe_issue = pr[0].t(Probe::kCqe, kSample);
  uint64_t ack = 0, cqe_mem = 0;
  for (const auto& [id, t] : pr[0].at[Probe::kAck])
    if (t <= cqe_issue) ack = t;
  for (const auto& [pa, t] : mem[0])
    if (t > cqe_issue) {
      cqe_mem = t;
      break;
    }
  EXPECT_EQ(cqe_issue - ack, uint64_t(cfg.core.cqe_cycles) * c);
  table += fmt::format(
      "\nnode 0's CQE for its write: post → ACK taken by the RX engine {:.1f} ns, → CQE write "
      "issued {:.1f} ns, → CQE in host memory {:.1f} ns (post → CQE in memory {:.1f} ns)\n",
      (ack - posted[0][kSample]) / 1000.0, (cqe_issue - ack) / 1000.0,
      (cqe_mem - cqe_issue) / 1000.0, (cqe_mem - posted[0][kSample]) / 1000.0);
  std::printf("%s", table.c_str());
}

// Two connected hosts; `client` runs on node 0 after both sides are connected, node 1 posts
// `recvs` receives of 8 KiB first and then waits for the client to finish.
void run_pair(Cluster& cl, Endpoint ep[2], int recvs,
              const std::function<void(Endpoint&, const PeerInfo&)>& client,
              const std::function<void(Endpoint&)>& server_after = {},
              const EndpointConfig& ec = {}) {
  Oob oob;
  auto setup = [&](int me) {
    ep[me].open(ec);
    oob.put(1 - me, ep[me].info());
    const PeerInfo peer = oob.get(me);
    ep[me].connect(peer);
    return peer;
  };
  cl.run({[&] {
            const PeerInfo peer = setup(0);
            oob.get(0);
            client(ep[0], peer);
            oob.put(1, {});
          },
          [&] {
            setup(1);
            for (int i = 0; i < recvs; ++i) {
              ibv_sge sg{ep[1].addr() + uint64_t(i) * 8192, 8192, ep[1].mr->lkey};
              ibv_recv_wr r{};
              r.wr_id = uint64_t(i);
              r.sg_list = &sg;
              r.num_sge = 1;
              ibv_recv_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_recv(ep[1].qps[0], &r, &bad), 0);
            }
            oob.put(0, {});
            oob.get(1);
            if (server_after) server_after(ep[1]);
          }});
}

// Node 0 posts one 64-byte WR (`op`) to node 1's region, its rkey XOR `key_flip`, and waits
// for its completion with `status`.
void run_one_wr(Cluster& cl, Endpoint ep[2], ibv_wr_opcode op, uint32_t key_flip,
                ibv_wc_status status) {
  run_pair(cl, ep, 0, [&](Endpoint& e, const PeerInfo& p) {
    ibv_sge sge{e.addr(), 64, e.mr->lkey};
    ibv_send_wr wr = rdma_write_wr(1, &sge, 1, p.addr, p.rkey ^ key_flip, true);
    wr.opcode = op;
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(e.qps[0], &wr, &bad), 0);
    EXPECT_EQ(wait_one(e.cq).status, status);
  });
}

// Firmware: every command completes firmware.dispatch_cycles + its handler's cycles after its
// producer write (the driver waits for each, so none queues); REG_MR (one per registered MR)
// later, after its DMA read of the list and one firmware.pbl_entry_cycles per page.
TEST_F(CoreTiming, CommandsCompleteTheirHandlerCyclesAfterTheProducerWrite) {
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Probes pr;
  pr.attach(cl.nodes[0]->card.core);
  Endpoint ep[2];
  run_pair(cl, ep, 0, [](Endpoint&, const PeerInfo&) {});
  // Create CQ, REG_MR, create QP, 3 x modify QP.
  ASSERT_EQ(pr.count(Probe::kCommand), 6u);
  ASSERT_EQ(pr.count(Probe::kCommandDone), 6u);
  const uint64_t f = ClockDomain::mhz(cfg.firmware.clk_mhz).period_ps;
  const uint64_t d0 = uint64_t(cfg.firmware.dispatch_cycles);
  const uint64_t handler[6] = {
      d0 + uint64_t(cfg.firmware.cq_cycles), d0 + uint64_t(cfg.firmware.mr_cycles),
      d0 + uint64_t(cfg.firmware.qp_cycles), d0 + uint64_t(cfg.firmware.qp_cycles),
      d0 + uint64_t(cfg.firmware.qp_cycles), d0 + uint64_t(cfg.firmware.qp_cycles)};
  for (size_t i = 0; i < 6; ++i) {
    const uint64_t d = pr.t(Probe::kCommandDone, i) - pr.t(Probe::kCommand, i);
    if (i == 1) {
      // The endpoint's region: one page per 4 KiB, each one cycle, after the list's DMA read.
      const uint64_t pages = (ep[0].cfg.buf_bytes + 4095) / 4096;
      EXPECT_GT(d, (handler[i] + pages * uint64_t(cfg.firmware.pbl_entry_cycles)) * f) << "REG_MR";
      continue;
    }
    EXPECT_EQ(d, handler[i] * f) << "command " << i;
  }
}

// Doorbell: WQEs of one doorbell reach the on-chip SQ 8 cycles apart. SQ engine: a WQE's first
// segment starts its translation smt_cycles after its issue (one SGE), the next issue follows
// core.sched_cycles later. RX engine: with its queue non-empty it starts a segment every
// max(rx_parse_cycles, ceil(bytes / datapath)) cycles (here the parse time, made longer than a
// frame's wire time so that segments queue).
TEST_F(CoreTiming, DoorbellSqIssueAndRxSpacing) {
  cfg.core.rx_parse_cycles = 500;  // 2 µs > 1230 ns per full frame at 10 Gb/s
  cfg.efe.cc_start_fraction = 1;   // frames at line rate from the first (no slow start)
  Probed sys(cfg);
  auto& [stats, cl, pr, ep] = sys;
  constexpr int kWrs = 3;
  constexpr uint32_t kLen = 4000;  // 3 segments each at MTU 1500
  run_pair(cl, ep, 0, [&](Endpoint& e, const PeerInfo& p) {
    ibv_sge sge{e.addr(), kLen, e.mr->lkey};
    ibv_send_wr wr[kWrs];
    for (int i = 0; i < kWrs; ++i) {
      wr[i] =
          rdma_write_wr(uint64_t(i), &sge, 1, p.addr + uint64_t(i) * kLen, p.rkey, i + 1 == kWrs);
      wr[i].next = i + 1 < kWrs ? &wr[i + 1] : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(e.qps[0], wr, &bad), 0);
    EXPECT_EQ(wait_one(e.cq).status, IBV_WC_SUCCESS);
  });
  const uint64_t c = cycle();
  const uint32_t sq = ep[0].qps[0]->qp_num, rq = ep[1].qps[0]->qp_num;
  const uint64_t db = pr[0].t(Probe::kDoorbell, 0, sq);
  for (int i = 0; i < kWrs; ++i)
    EXPECT_EQ(pr[0].t(Probe::kWqeQueued, size_t(i), sq), db + 8 * c * uint64_t(i + 1));
  constexpr size_t kSegs = 9;
  ASSERT_EQ(pr[0].count(Probe::kSegIssue), kSegs);
  EXPECT_EQ(pr[0].t(Probe::kSegIssue, 0), pr[0].t(Probe::kWqeQueued, 0));
  for (size_t n = 0; n < kSegs; ++n) {
    const bool first = n % 3 == 0;
    EXPECT_EQ(pr[0].t(Probe::kSegFetch, n) - pr[0].t(Probe::kSegIssue, n),
              first ? kXlat.smt_cycles * c : 0)
        << "segment " << n;
    if (n + 1 < kSegs) {
      EXPECT_EQ(pr[0].t(Probe::kSegIssue, n + 1) - pr[0].t(Probe::kSegFetch, n),
                uint64_t(cfg.core.sched_cycles) * c)
          << "segment " << n + 1;
    }
  }
  ASSERT_EQ(pr[1].count(Probe::kRxStart), kSegs);
  for (size_t n = 1; n < kSegs; ++n)
    EXPECT_EQ(pr[1].t(Probe::kRxStart, n, rq) - pr[1].t(Probe::kRxStart, n - 1, rq), 500 * c)
        << "segment " << n;
  EXPECT_GT(stats.group("node1.core").counter("rx_fifo_max", "", "").value, 1u);
}

// Host-ring WQE mode: kRingFetchCycles after the doorbell the card reads the new WQEs from the
// ring by DMA (one read of the 3 slots here); once the data is in, they enter the on-chip SQ
// ceil(128 / datapath) cycles apart, and the SQ engine issues the first at once.
TEST_F(CoreTiming, HostRingFetchThenCopyIn) {
  cfg.host.wqe_mode = "ring";
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Probes pr;
  pr.attach(cl.nodes[0]->card.core);
  Endpoint ep[2];
  constexpr int kWrs = 3;
  run_pair(cl, ep, 0, [&](Endpoint& e, const PeerInfo& p) {
    ibv_sge sge{e.addr(), 64, e.mr->lkey};
    ibv_send_wr wr[kWrs];
    for (int i = 0; i < kWrs; ++i) {
      wr[i] = rdma_write_wr(uint64_t(i), &sge, 1, p.addr + uint64_t(i) * 64, p.rkey, i + 1 == kWrs);
      wr[i].next = i + 1 < kWrs ? &wr[i + 1] : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(e.qps[0], wr, &bad), 0);
    EXPECT_EQ(wait_one(e.cq).status, IBV_WC_SUCCESS);
  });
  const uint64_t c = cycle();
  const uint32_t sq = ep[0].qps[0]->qp_num;
  ASSERT_EQ(pr.count(Probe::kDoorbell), 1u);
  ASSERT_EQ(pr.count(Probe::kWqeFetch), 1u);
  ASSERT_EQ(pr.count(Probe::kWqeFetched), 1u);
  const uint64_t db = pr.t(Probe::kDoorbell, 0, sq);
  const uint64_t fetch = pr.t(Probe::kWqeFetch, 0, sq);
  const uint64_t fetched = pr.t(Probe::kWqeFetched, 0, sq);
  EXPECT_EQ(fetch, db + 1 * c);  // RnicCore::kRingFetchCycles
  EXPECT_GT(fetched, fetch);
  EXPECT_EQ(fetched % c, 0u) << "the DMA read's data is handed over on a core clock edge";
  for (int i = 0; i < kWrs; ++i)
    EXPECT_EQ(pr.t(Probe::kWqeQueued, size_t(i), sq), fetched + 8 * c * uint64_t(i + 1));
  EXPECT_EQ(pr.t(Probe::kSegIssue, 0), pr.t(Probe::kWqeQueued, 0));
  EXPECT_EQ(stats.group("node0.core").counter("wqe_fetches", "", "").value, 1u);
}

// ddp_rx_parse: a Read Request's header checks wait for its 28-byte payload (46 bytes: 3 beats
// of 16 B, one more than rx_parse_cycles); its tagged Read Response needs rx_parse_cycles.
TEST_F(CoreTiming, ReadRequestChecksWaitForItsPayload) {
  Probed sys(cfg);
  auto& [stats, cl, pr, ep] = sys;
  run_one_wr(cl, ep, IBV_WR_RDMA_READ, 0, IBV_WC_SUCCESS);
  const uint64_t c = cycle();
  ASSERT_EQ(pr[1].count(Probe::kRxStart), 1u);
  EXPECT_EQ(pr[1].t(Probe::kRxChecked, 0) - pr[1].t(Probe::kRxStart, 0), 3 * c);
  ASSERT_EQ(pr[0].count(Probe::kRxStart), 1u);
  EXPECT_EQ(pr[0].t(Probe::kRxChecked, 0) - pr[0].t(Probe::kRxStart, 0), 2 * c);
}

// Completion engine: a CQE's write is issued core.cqe_cycles after what completes it (the ACK
// of an RDMA Write), and CQEs formed together (a flush) leave cqe_cycles apart.
TEST_F(CoreTiming, CqesFollowTheirCauseByCqeCycles) {
  Probed sys(cfg);
  auto& [stats, cl, pr, ep] = sys;
  constexpr int kRecvs = 4;
  run_pair(
      cl, ep, kRecvs,
      [&](Endpoint& e, const PeerInfo& p) {
        ibv_sge sge{e.addr(), 64, e.mr->lkey};
        ibv_send_wr wr = rdma_write_wr(1, &sge, 1, p.addr, p.rkey, true);
        ibv_send_wr* bad = nullptr;
        ASSERT_EQ(ibv_post_send(e.qps[0], &wr, &bad), 0);
        EXPECT_EQ(wait_one(e.cq).status, IBV_WC_SUCCESS);
      },
      [&](Endpoint& e) {
        ibv_qp_attr a{};
        a.qp_state = IBV_QPS_ERR;
        ASSERT_EQ(ibv_modify_qp(e.qps[0], &a, IBV_QP_STATE), 0);
        for (int i = 0; i < kRecvs; ++i) EXPECT_EQ(wait_one(e.cq).status, IBV_WC_WR_FLUSH_ERR);
      });
  const uint64_t c = cycle(), cqe = uint64_t(cfg.core.cqe_cycles) * c;
  // Requester: the Write's CQE follows the ACK that completes it.
  ASSERT_EQ(pr[0].count(Probe::kCqe), 1u);
  const uint64_t t = pr[0].t(Probe::kCqe, 0);
  bool cause = false;
  for (const auto& [id, ta] : pr[0].at[Probe::kAck]) cause |= ta + cqe == t;
  EXPECT_TRUE(cause) << "no ACK " << cqe << " ps before the CQE";
  // Responder: the flush's CQEs, cqe_cycles apart, the first cqe_cycles after the command.
  ASSERT_EQ(pr[1].count(Probe::kCqe), size_t(kRecvs));
  const uint64_t modify_done = pr[1].t(Probe::kCommandDone, pr[1].count(Probe::kCommandDone) - 1);
  EXPECT_EQ(pr[1].t(Probe::kCqe, 0), modify_done + cqe);
  for (size_t i = 1; i < size_t(kRecvs); ++i)
    EXPECT_EQ(pr[1].t(Probe::kCqe, i) - pr[1].t(Probe::kCqe, i - 1), cqe);
}

// Read-response engine: a Read Request's source check (xlat, smt_cycles) ends its RX verdict;
// the engine offers the first response segment on that edge and the idle SQ engine issues it
// there; its source translation (one chunk) precedes its DMA read.
TEST_F(CoreTiming, ReadResponseIssuesOnTheRequestsVerdict) {
  Probed sys(cfg);
  auto& [stats, cl, pr, ep] = sys;
  run_one_wr(cl, ep, IBV_WR_RDMA_READ, 0, IBV_WC_SUCCESS);
  const uint64_t c = cycle();
  ASSERT_EQ(pr[1].count(Probe::kRxChecked), 1u);
  ASSERT_EQ(pr[1].count(Probe::kSegIssue), 1u);
  const uint64_t checked = pr[1].t(Probe::kRxChecked, 0);
  EXPECT_EQ(pr[1].t(Probe::kSegIssue, 0) - checked, kXlat.smt_cycles * c)
      << "source check, then the offer and the issue on the same edge";
  EXPECT_EQ(pr[1].t(Probe::kSegDma, 0) - pr[1].t(Probe::kSegFetch, 0),
            (kXlat.smt_cycles + kXlat.pbl_cycles + 1) * c);
  // Requester: the response is placed once its sink is translated (its verdict).
  ASSERT_EQ(pr[0].count(Probe::kRxPlace), 1u);
  EXPECT_EQ(pr[0].t(Probe::kRxPlace, 0) - pr[0].t(Probe::kRxChecked, 0),
            (kXlat.smt_cycles + kXlat.pbl_cycles + 1) * c);
}

// Atomic unit (SQ engine): an Atomic Request's target check (smt_cycles) ends its RX verdict and
// its response is issued on that edge; the target's translation (one chunk) precedes its 8-byte
// DMA read; the result's write is issued and the response ready kHeaderCycles after the read's
// data. The requester places the original value once its sink is translated.
TEST_F(CoreTiming, AtomicResponseReadyAHeaderCycleAfterItsTargetRead) {
  Probed sys(cfg);
  auto& [stats, cl, pr, ep] = sys;
  EndpointConfig ec;
  ec.access |= IBV_ACCESS_REMOTE_ATOMIC;
  ec.qp_access |= IBV_ACCESS_REMOTE_ATOMIC;
  run_pair(
      cl, ep, 0,
      [&](Endpoint& e, const PeerInfo& p) {
        ibv_sge sge{e.addr(), 8, e.mr->lkey};
        ibv_send_wr wr = rdma_write_wr(1, &sge, 1, p.addr, p.rkey, true);
        wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
        wr.wr.atomic = {p.addr, 1, 0, p.rkey};
        ibv_send_wr* bad = nullptr;
        ASSERT_EQ(ibv_post_send(e.qps[0], &wr, &bad), 0);
        EXPECT_EQ(wait_one(e.cq).status, IBV_WC_SUCCESS);
      },
      {}, ec);
  const uint64_t c = cycle();
  ASSERT_EQ(pr[1].count(Probe::kRxChecked), 1u);
  ASSERT_EQ(pr[1].count(Probe::kSegIssue), 1u);
  EXPECT_EQ(pr[1].t(Probe::kSegIssue, 0) - pr[1].t(Probe::kRxChecked, 0), kXlat.smt_cycles * c)
      << "target check, then the offer and the issue on the same edge";
  EXPECT_EQ(pr[1].t(Probe::kSegDma, 0) - pr[1].t(Probe::kSegFetch, 0),
            (kXlat.smt_cycles + kXlat.pbl_cycles + 1) * c);
  EXPECT_EQ(pr[1].t(Probe::kSegReady, 0) - pr[1].t(Probe::kSegData, 0),
            RnicCore::kHeaderCycles * c);
  ASSERT_EQ(pr[0].count(Probe::kRxPlace), 1u);
  EXPECT_EQ(pr[0].t(Probe::kRxPlace, 0) - pr[0].t(Probe::kRxChecked, 0),
            (kXlat.smt_cycles + kXlat.pbl_cycles + 1) * c);
}

// RX engine: an RDMA Write whose STag fails translation is known smt_cycles after its header
// checks (its verdict); the SQ engine sends the Terminate kHeaderCycles later, ahead of the
// segment's acknowledgement, and the requester completes the WR with the remote access error.
TEST_F(CoreTiming, TerminateLeavesOnTheFailedVerdict) {
  Probed sys(cfg);
  auto& [stats, cl, pr, ep] = sys;
  run_one_wr(cl, ep, IBV_WR_RDMA_WRITE, 0xFF, IBV_WC_REM_ACCESS_ERR);  // another key
  const uint64_t c = cycle();
  ASSERT_EQ(pr[1].count(Probe::kRxChecked), 1u);
  ASSERT_EQ(pr[1].count(Probe::kSegSent), 1u);  // the Terminate
  EXPECT_EQ(pr[1].t(Probe::kSegSent, 0) - pr[1].t(Probe::kRxChecked, 0),
            (kXlat.smt_cycles + RnicCore::kHeaderCycles) * c);
  EXPECT_EQ(pr[1].count(Probe::kRxPlace), 0u);
  EXPECT_EQ(stats.group("node1.core").counter("rx_errors", "", "").value, 1u);
}

}  // namespace
}  // namespace rnic

namespace rnic {
namespace {

// A segment for a QPN that does not exist: the reset leaves kHeaderCycles after the segment's
// header checks (no translation to wait for), ahead of everything queued.
TEST_F(CoreTiming, ResetLeavesKHeaderCyclesAfterTheChecks) {
  Probed sys(cfg);
  auto& [stats, cl, pr, ep] = sys;
  run_pair(cl, ep, 0, [&](Endpoint& e, const PeerInfo& p) {
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = e.cq;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.qp_type = IBV_QPT_RC;
    ibv_qp* qp = ibv_create_qp(e.pd, &ia);
    ASSERT_TRUE(qp);
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    ASSERT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
    a = ibv_qp_attr{};
    a.qp_state = IBV_QPS_RTR;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = p.gid;
    a.dest_qp_num = p.qpns[0] + 0x100;  // no such QP at the peer
    ASSERT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN), 0);
    a = ibv_qp_attr{};
    a.qp_state = IBV_QPS_RTS;
    ASSERT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
    ibv_sge sge{e.addr(), 64, e.mr->lkey};
    ibv_send_wr wr = rdma_write_wr(1, &sge, 1, p.addr, p.rkey, true);
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(qp, &wr, &bad), 0);
    EXPECT_EQ(wait_one(e.cq).status, IBV_WC_WR_FLUSH_ERR);
  });
  ASSERT_EQ(pr[1].count(Probe::kRxChecked), 1u);
  ASSERT_EQ(pr[1].count(Probe::kSegSent), 1u);  // the reset
  EXPECT_EQ(pr[1].t(Probe::kSegSent, 0) - pr[1].t(Probe::kRxChecked, 0),
            RnicCore::kHeaderCycles * cycle());
  EXPECT_EQ(stats.group("node1.core").counter("rx_resets", "", "").value, 1u);
}

}  // namespace
}  // namespace rnic
