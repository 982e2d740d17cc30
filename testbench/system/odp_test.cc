// On-demand paging (ibv_reg_mr with IBV_ACCESS_ON_DEMAND, ibv_advise_mr, rnic_page_out;
// docs/memory.md). An on-demand MR pins nothing and starts with every page absent on the card:
//   - a remote Write into it faults at the responder: the segment is answered RNR (the sender
//     backs off and resends, no retry spent), the driver faults the pages in (first touch:
//     zeroed frames), the firmware loads them, and the Write lands; written again (warm), it
//     faults no more;
//   - a Write from it and a Read into it park the requester's SQ until the pages are there; a
//     Read from it parks the responder (its Read Request answered RNR) the same way;
//   - paging the memory out makes its pages absent on the card first; the next Write faults
//     them back in from swap;
//   - a prefetch (ibv_advise_mr) makes them present ahead: no fault, no RNR;
//   - memory unmapped under the MR cannot be paged in: the Write is refused with the remote
//     access error and nothing of the responder's memory changes;
//   - bad prefetches (a range outside the MR, an MR that is not on demand) are EINVAL.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "sim/cluster.h"
#include "sim/run_record.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::counter;
using testbench::pattern;
using testbench::wait_one;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::open_connected;
using traffic::PeerInfo;

constexpr size_t kBytes = 64 * 1024;
constexpr int kRemote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

EndpointConfig odp_config(bool lazy) {
  EndpointConfig c;
  c.buf_bytes = kBytes;
  c.access = kRemote | IBV_ACCESS_ON_DEMAND;
  c.lazy = lazy;
  return c;
}

EndpointConfig plain_config() {
  EndpointConfig c;
  c.buf_bytes = kBytes;
  return c;
}

ibv_wc_status post_and_wait(Endpoint& a, int opcode, uint64_t local, uint32_t lkey,
                            const PeerInfo& p, size_t len) {
  ibv_sge s{local, uint32_t(len), lkey};
  ibv_send_wr w = testbench::rdma_write_wr(1, &s, 1, p.addr, p.rkey, true);
  w.opcode = ibv_wr_opcode(opcode);
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
  const ibv_wc_status st = wait_one(a.cq, 100'000'000).status;
  if (st != IBV_WC_SUCCESS || opcode != IBV_WR_RDMA_WRITE) return st;
  // A 0-byte Read behind a Write: its answer comes once the Write is placed.
  ibv_send_wr r = testbench::rdma_write_wr(2, &s, 0, p.addr, p.rkey, true);
  r.opcode = IBV_WR_RDMA_READ;
  EXPECT_EQ(ibv_post_send(a.qps[0], &r, &bad), 0);
  EXPECT_EQ(wait_one(a.cq, 100'000'000).status, IBV_WC_SUCCESS);
  return st;
}

struct Counts {
  uint64_t faults, refused, rnrs, timeouts, zeroed, swap_ins;
};
Counts counts(StatRegistry& s, Cluster& cl, int node) {
  const std::string n = "node" + std::to_string(node);
  const int other = 1 - node;
  const std::string peer =
      cl.nodes[size_t(other)]->card.efe->peer_group(cl.nodes[size_t(node)]->mac);
  return {counter(s, n + ".driver", "odp_faults"), counter(s, n + ".core", "rx_refused"),
          counter(s, n + ".efe", "tx_rnrs"),       counter(s, peer, "timeouts"),
          counter(s, n + ".os", "page_faults"),    counter(s, n + ".os", "swap_ins")};
}

// node0 writes 64 KiB into node1's on-demand buffer (never touched): the Write lands, node1
// faulted (RNR sent, pages zeroed), node0 spent no retransmission timeout. A second Write
// (warm) faults no more.
//
// On MPA/TCP cards the refused FPDUs are taken back unacknowledged (rcv_nxt goes back), what
// arrives for the QP while it waits is dropped unacknowledged, and node0's TCP sends them again
// (docs/transport.md): the same bytes land, no connection fails.
SystemConfig odp_cluster_config(bool tcp) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  if (tcp) cfg.set("card.transport", "mpa_tcp", "test");
  return cfg;
}

void expect_tcp_took_back(StatRegistry& stats) {
  EXPECT_GT(counter(stats, "node1.toe", "rx_refused"), 0u) << "FPDUs taken back";
  EXPECT_GT(counter(stats, "node0.toe", "retransmissions"), 0u) << "and sent again";
  EXPECT_EQ(counter(stats, "node0.toe", "failures") + counter(stats, "node1.toe", "failures"), 0u);
}

void first_touch_write(bool tcp) {
  SystemConfig cfg = odp_cluster_config(tcp);
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  const std::vector<uint8_t> d1 = pattern(kBytes, 1), d2 = pattern(kBytes, 2);
  ibv_wc_status first = IBV_WC_GENERAL_ERR, warm = IBV_WC_GENERAL_ERR;
  std::vector<uint8_t> seen1, seen2;
  Counts after_first{}, after_warm{};
  cl.run({[&] {
            open_connected(a, 0, plain_config(), oob);
            const PeerInfo p = oob.get(0);
            rnic_mem_write(a.buf, d1.data(), kBytes);
            first = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, kBytes);
            oob.put(1, {});
            oob.get(0);
            if (!tcp) after_first = counts(stats, cl, 1);
            rnic_mem_write(a.buf, d2.data(), kBytes);
            warm = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, kBytes);
            oob.put(1, {});
          },
          [&] {
            open_connected(b, 1, odp_config(true), oob);
            oob.put(0, b.info());
            oob.get(1);
            seen1 = testbench::mem_read(b.buf, kBytes);
            oob.put(0, {});
            oob.get(1);
            seen2 = testbench::mem_read(b.buf, kBytes);
          }});
  EXPECT_EQ(first, IBV_WC_SUCCESS);
  EXPECT_EQ(warm, IBV_WC_SUCCESS);
  EXPECT_EQ(seen1, d1);
  EXPECT_EQ(seen2, d2);
  if (tcp) {
    EXPECT_GE(counter(stats, "node1.driver", "odp_faults"), 1u);
    EXPECT_GT(counter(stats, "node1.core", "rx_refused"), 0u);
    return expect_tcp_took_back(stats);
  }
  after_warm = counts(stats, cl, 1);
  EXPECT_GE(after_first.faults, 1u);
  EXPECT_GT(after_first.refused, 0u);
  EXPECT_GT(after_first.rnrs, 0u);
  EXPECT_EQ(after_first.timeouts, 0u);  // RNRs cost no retry
  EXPECT_EQ(after_first.zeroed, kBytes / 4096);
  EXPECT_GE(counter(stats, "node1.driver", "odp_pages_mapped"), kBytes / 4096);
  EXPECT_EQ(after_warm.faults, after_first.faults);
  EXPECT_EQ(after_warm.refused, after_first.refused);
  EXPECT_EQ(after_warm.timeouts, 0u);
}
TEST(Odp, FirstTouchWriteFaultsThenWarmDoesNot) { first_touch_write(false); }
TEST(OdpTcp, FirstTouchWriteIsTakenBackUnacknowledgedAndComesAgain) { first_touch_write(true); }

// The fault's timing on the card (rnic-10g: core and firmware clocks both 4 ns): the firmware
// writes the record fault_cycles after the RX engine hands it the fault; the waiting segment
// resumes on the edge the ODP_MAP command completes; the sender's resend, efe.rnr_delay_ns
// after the RNR, is placed after that.
TEST(Odp, FaultTimingOnTheCard) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  std::vector<uint64_t> fault, record, resume, done, place;
  cl.nodes[1]->card.core.probe = [&](const ProbeEvent& e) {
    const CoreProbe p = e.point;
    const uint64_t t = e.t_ps;
    if (p == CoreProbe::kPageFault) fault.push_back(t);
    if (p == CoreProbe::kFaultRecord) record.push_back(t);
    if (p == CoreProbe::kFaultResume) resume.push_back(t);
    if (p == CoreProbe::kCommandDone) done.push_back(t);
    if (p == CoreProbe::kRxPlace) place.push_back(t);
  };
  Oob oob;
  Endpoint a, b;
  ibv_wc_status st = IBV_WC_GENERAL_ERR;
  cl.run({[&] {
            open_connected(a, 0, plain_config(), oob);
            st = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, oob.get(0), 1024);
            oob.put(1, {});
          },
          [&] {
            open_connected(b, 1, odp_config(true), oob);
            oob.put(0, b.info());
            oob.get(1);
          }});
  EXPECT_EQ(st, IBV_WC_SUCCESS);
  ASSERT_EQ(fault.size(), 1u);
  ASSERT_EQ(record.size(), 1u);
  ASSERT_EQ(resume.size(), 1u);
  const uint64_t fw = ClockDomain::mhz(cfg.firmware.clk_mhz).period_ps;
  EXPECT_EQ(record[0] - fault[0], uint64_t(cfg.firmware.fault_cycles) * fw);
  // The resume is the completion of the last command before it (ODP_MAP).
  uint64_t map_done = 0;
  for (uint64_t t : done)
    if (t <= resume[0]) map_done = t;
  EXPECT_EQ(resume[0], map_done);
  // Placed once, after the resume and at least the RNR delay after the fault.
  ASSERT_EQ(place.size(), 1u);  // the Write (the 0-byte Read behind it places nothing)
  EXPECT_GT(place[0], resume[0]);
  EXPECT_GE(place[0] - fault[0], uint64_t(cfg.efe.rnr_delay_ns) * 1000);
}

// The requester's side: a Write from an on-demand buffer (the program filled it: resident, but
// absent on the card) parks node0's SQ until its pages are loaded; a Read into another one
// parks it for the sink's pages; a Read from node1's on-demand buffer parks node1's responder
// (the Read Request answered RNR). Every byte arrives.
void source_sink_and_read_responder(bool tcp) {
  SystemConfig cfg = odp_cluster_config(tcp);
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  const std::vector<uint8_t> d1 = pattern(kBytes, 3), d2 = pattern(kBytes, 4);
  ibv_wc_status wr = IBV_WC_GENERAL_ERR, rd = IBV_WC_GENERAL_ERR;
  std::vector<uint8_t> at_b, at_a;
  cl.run({[&] {
            open_connected(a, 0, odp_config(false), oob);
            const PeerInfo p = oob.get(0);
            rnic_mem_write(a.buf, d1.data(), kBytes);
            wr = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, kBytes);
            oob.put(1, {});
            oob.get(0);  // node1 filled its second half
            // Read node1's second half into a fresh on-demand sink.
            void* sink = rnic_malloc_lazy(kBytes);
            ibv_mr* smr = ibv_reg_mr(a.pd, sink, kBytes, kRemote | IBV_ACCESS_ON_DEMAND);
            ASSERT_NE(smr, nullptr);
            PeerInfo half = p;
            half.addr += kBytes + kBytes / 2;
            rd = post_and_wait(a, IBV_WR_RDMA_READ, reinterpret_cast<uint64_t>(sink), smr->lkey,
                               half, kBytes / 2);
            at_a = testbench::mem_read(sink, kBytes / 2);
            oob.put(1, {});
          },
          [&] {
            EndpointConfig c = odp_config(true);
            c.buf_bytes = 2 * kBytes;
            open_connected(b, 1, c, oob);
            oob.put(0, b.info());
            oob.get(1);
            at_b = testbench::mem_read(b.buf, kBytes);
            // The second half: written by the program (resident), absent on the card.
            rnic_mem_write(static_cast<uint8_t*>(b.buf) + kBytes + kBytes / 2, d2.data(),
                           kBytes / 2);
            oob.put(0, {});
            oob.get(1);
          }});
  EXPECT_EQ(wr, IBV_WC_SUCCESS);
  EXPECT_EQ(rd, IBV_WC_SUCCESS);
  EXPECT_EQ(at_b, d1);
  EXPECT_EQ(at_a, std::vector<uint8_t>(d2.begin(), d2.begin() + kBytes / 2));
  EXPECT_GE(counter(stats, "node0.driver", "odp_faults"), 2u);  // the source, the sink
  EXPECT_GE(counter(stats, "node1.driver", "odp_faults"), 2u);  // the Write, the Read's source
  EXPECT_GT(counter(stats, "node1.core", "rx_refused"), 0u);
  EXPECT_EQ(counter(stats, "node0.driver", "odp_failed"), 0u);
  EXPECT_EQ(counter(stats, "node1.driver", "odp_failed"), 0u);
  if (tcp) expect_tcp_took_back(stats);
}
TEST(Odp, SourceSinkAndReadResponderFault) { source_sink_and_read_responder(false); }
TEST(OdpTcp, SourceSinkAndReadResponderFault) { source_sink_and_read_responder(true); }

// A Send into node1's receive buffer on an on-demand MR (never touched): its segments are
// refused until the pages are in; the receive WQE takes the message once, whole, in order (the
// decisions of refused segments are taken back); a second Send behind it lands in the next
// receive.
void send_into_on_demand_receive_buffer(bool tcp) {
  SystemConfig cfg = odp_cluster_config(tcp);
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  const std::vector<uint8_t> d1 = pattern(kBytes / 2, 8), d2 = pattern(kBytes / 2, 9);
  std::vector<ibv_wc> recvs;
  std::vector<uint8_t> got;
  ibv_wc_status s1 = IBV_WC_GENERAL_ERR, s2 = IBV_WC_GENERAL_ERR;
  cl.run({[&] {
            open_connected(a, 0, plain_config(), oob);
            oob.get(0);  // receives posted
            for (const auto* d : {&d1, &d2}) {
              rnic_mem_write(a.buf, d->data(), d->size());
              ibv_sge s{a.addr(), uint32_t(d->size()), a.mr->lkey};
              ibv_send_wr w{};
              w.wr_id = d == &d1 ? 1 : 2;
              w.sg_list = &s;
              w.num_sge = 1;
              w.opcode = IBV_WR_SEND;
              w.send_flags = IBV_SEND_SIGNALED;
              ibv_send_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
              (d == &d1 ? s1 : s2) = wait_one(a.cq, 100'000'000).status;
            }
          },
          [&] {
            open_connected(b, 1, odp_config(true), oob);
            for (uint64_t i = 0; i < 2; ++i) {
              ibv_sge s{b.addr() + i * (kBytes / 2), uint32_t(kBytes / 2), b.mr->lkey};
              ibv_recv_wr r{};
              r.wr_id = 10 + i;
              r.sg_list = &s;
              r.num_sge = 1;
              ibv_recv_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_recv(b.qps[0], &r, &bad), 0);
            }
            oob.put(0, {});
            recvs = testbench::wait_completions(b.cq, 2, 100'000'000);
            got = testbench::mem_read(b.buf, kBytes);
          }});
  EXPECT_EQ(s1, IBV_WC_SUCCESS);
  EXPECT_EQ(s2, IBV_WC_SUCCESS);
  ASSERT_EQ(recvs.size(), 2u);
  for (uint64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(recvs[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(recvs[i].wr_id, 10 + i);
    EXPECT_EQ(recvs[i].byte_len, kBytes / 2);
  }
  std::vector<uint8_t> want = d1;
  want.insert(want.end(), d2.begin(), d2.end());
  EXPECT_EQ(got, want);
  EXPECT_GT(counter(stats, "node1.core", "rx_refused"), 0u);
  if (tcp) expect_tcp_took_back(stats);
}
TEST(Odp, SendIntoAnOnDemandReceiveBuffer) { send_into_on_demand_receive_buffer(false); }
TEST(OdpTcp, SendIntoAnOnDemandReceiveBuffer) { send_into_on_demand_receive_buffer(true); }

// Paging out: node1's warm on-demand pages go out (made absent on the card first); node0's next
// Write faults them back in from swap and lands. A prefetch then makes them present ahead:
// the Write after it faults nothing.
TEST(Odp, PageOutInvalidatesAndPrefetchAvoidsFaults) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  const std::vector<uint8_t> d1 = pattern(kBytes, 5), d2 = pattern(kBytes, 6),
                             d3 = pattern(kBytes, 7);
  std::vector<ibv_wc_status> st;
  std::vector<uint8_t> seen2, seen3;
  long paged = -1;
  uint64_t unmapped = 0, faults_before_prefetch = 0, refused_before_prefetch = 0;
  int bad_range = 0, not_odp = 0;
  cl.run({[&] {
            open_connected(a, 0, plain_config(), oob);
            const PeerInfo p = oob.get(0);
            for (const auto* d : {&d1, &d2, &d3}) {
              rnic_mem_write(a.buf, d->data(), kBytes);
              st.push_back(post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, kBytes));
              oob.put(1, {});
              oob.get(0);
            }
          },
          [&] {
            open_connected(b, 1, odp_config(false), oob);
            oob.put(0, b.info());
            oob.get(1);  // d1 written: warm
            paged = rnic_page_out(b.buf, kBytes);
            unmapped = counter(stats, "node1.driver", "odp_pages_unmapped");
            oob.put(0, {});
            oob.get(1);  // d2 written: faulted back in from swap
            seen2 = testbench::mem_read(b.buf, kBytes);
            rnic_page_out(b.buf, kBytes);
            ibv_sge s{b.addr(), uint32_t(kBytes), b.mr->lkey};
            EXPECT_EQ(ibv_advise_mr(b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                                    IBV_ADVISE_MR_FLAG_FLUSH, &s, 1),
                      0);
            faults_before_prefetch = counter(stats, "node1.driver", "odp_faults");
            refused_before_prefetch = counter(stats, "node1.core", "rx_refused");
            ibv_sge out{b.addr() + kBytes - 4096, 8192, b.mr->lkey};
            bad_range = ibv_advise_mr(b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &out, 1);
            void* plain = rnic_malloc(4096);
            ibv_mr* pm = ibv_reg_mr(b.pd, plain, 4096, kRemote);
            ibv_sge ps{reinterpret_cast<uint64_t>(plain), 4096, pm->lkey};
            not_odp = ibv_advise_mr(b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &ps, 1);
            oob.put(0, {});
            oob.get(1);  // d3 written
            seen3 = testbench::mem_read(b.buf, kBytes);
            oob.put(0, {});
          }});
  ASSERT_EQ(st.size(), 3u);
  for (ibv_wc_status s : st) EXPECT_EQ(s, IBV_WC_SUCCESS);
  EXPECT_EQ(paged, long(kBytes / 4096));
  EXPECT_EQ(unmapped, kBytes / 4096);
  EXPECT_EQ(seen2, d2);
  EXPECT_EQ(seen3, d3);
  EXPECT_GE(counter(stats, "node1.os", "swap_ins"), kBytes / 4096);
  EXPECT_EQ(counter(stats, "node1.driver", "odp_faults"), faults_before_prefetch);
  EXPECT_EQ(counter(stats, "node1.core", "rx_refused"), refused_before_prefetch);
  EXPECT_EQ(bad_range, EINVAL);
  EXPECT_EQ(not_odp, EINVAL);
}

// A page of a Write's source goes out while the Write is under way (its WQE checks passed):
// the segment whose gather meets the absent page waits in the transmit buffer, the driver reads
// the page back from swap, and the segment goes on. Every byte arrives.
TEST(Odp, SourcePagedOutDuringAWriteIsFetchedAgain) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  constexpr size_t kBig = 1 << 20;
  const std::vector<uint8_t> d = pattern(kBig, 12);
  ibv_wc_status st = IBV_WC_GENERAL_ERR;
  long paged = -1;
  uint64_t faults_before = 0;
  std::vector<uint8_t> seen;
  bool sent = false;
  sc_core::sc_event posted;
  EndpointConfig src = odp_config(false);
  src.buf_bytes = kBig;
  EndpointConfig dst = plain_config();
  dst.buf_bytes = kBig;
  cl.run(std::vector<Cluster::Program>{
      {0,
       [&] {
         open_connected(a, 0, src, oob);
         const PeerInfo p = oob.get(0);
         rnic_mem_write(a.buf, d.data(), kBig);
         ibv_sge s{a.addr(), 4096, a.mr->lkey};  // warm: every page present on the card
         ASSERT_EQ(
             ibv_advise_mr(a.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &s, 1),
             0);
         s.length = uint32_t(kBig);
         ASSERT_EQ(
             ibv_advise_mr(a.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &s, 1),
             0);
         faults_before = counter(stats, "node0.driver", "odp_faults");
         sent = true;
         posted.notify(sc_core::SC_ZERO_TIME);
         st = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, kBig);
         oob.put(1, {});
       }},
      {0,
       [&] {
         while (!sent) sc_core::wait(posted);
         rnic_spend_ns(200'000);  // the Write is well under way (it takes about 880 us)
         paged = rnic_page_out(static_cast<uint8_t*>(a.buf) + kBig / 2, kBig / 2);
       }},
      {1, [&] {
         open_connected(b, 1, dst, oob);
         oob.put(0, b.info());
         oob.get(1);
         seen = testbench::mem_read(b.buf, kBig);
       }}});
  EXPECT_EQ(st, IBV_WC_SUCCESS);
  EXPECT_EQ(paged, long(kBig / 2 / 4096));
  EXPECT_EQ(seen, d);
  EXPECT_GT(counter(stats, "node0.driver", "odp_faults"), faults_before);
  EXPECT_GT(counter(stats, "node0.os", "swap_ins"), 0u);
  EXPECT_EQ(counter(stats, "node0.driver", "odp_failed"), 0u);
}

// Memory pressure (host.free_mib 1: 256 pages free for pages faulted in): node0 writes 2 MiB
// into node1's never-touched on-demand memory. Once the free pages are used, each page faulted
// in first reclaims the oldest one (its translation made absent on the card first, then paged
// out). The Write lands whole; writing its first 64 KiB again (reclaimed by then) brings those
// pages back from swap.
TEST(Odp, ReclaimUnderMemoryPressure) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.host.free_mib = 1;
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  constexpr size_t kBig = 2 << 20;
  const std::vector<uint8_t> d1 = pattern(kBig, 10), d2 = pattern(kBytes, 11);
  ibv_wc_status s1 = IBV_WC_GENERAL_ERR, s2 = IBV_WC_GENERAL_ERR;
  std::vector<uint8_t> seen1;
  uint64_t reclaimed = 0, swap_ins_before = 0;
  cl.run({[&] {
            EndpointConfig c = plain_config();
            c.buf_bytes = kBig;
            open_connected(a, 0, c, oob);
            const PeerInfo p = oob.get(0);
            rnic_mem_write(a.buf, d1.data(), kBig);
            s1 = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, kBig);
            oob.put(1, {});
            oob.get(0);
            rnic_mem_write(a.buf, d2.data(), kBytes);
            s2 = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, kBytes);
            oob.put(1, {});
          },
          [&] {
            EndpointConfig c = odp_config(true);
            c.buf_bytes = kBig;
            open_connected(b, 1, c, oob);
            oob.put(0, b.info());
            oob.get(1);
            reclaimed = counter(stats, "node1.os", "reclaimed");
            swap_ins_before = counter(stats, "node1.os", "swap_ins");
            oob.put(0, {});
            oob.get(1);
            seen1 = testbench::mem_read(b.buf, kBig);  // (the program's reads cost nothing)
          }});
  EXPECT_EQ(s1, IBV_WC_SUCCESS);
  EXPECT_EQ(s2, IBV_WC_SUCCESS);
  std::vector<uint8_t> want = d1;
  std::copy(d2.begin(), d2.end(), want.begin());
  EXPECT_EQ(seen1, want);
  EXPECT_GE(reclaimed, kBig / 4096 - 256);
  EXPECT_GE(counter(stats, "node1.driver", "odp_pages_unmapped"), reclaimed);
  EXPECT_GT(counter(stats, "node1.os", "swap_ins"), swap_ins_before);
  EXPECT_EQ(counter(stats, "node1.driver", "odp_failed"), 0u);
}

// Memory unmapped under an on-demand MR cannot be paged in: the driver fails the fault, and
// node0's Write completes with the remote access error (a Terminate); node1's memory around it
// is untouched.
TEST(Odp, UnmappedMemoryFailsTheFaultWithATerminate) {
  // The region is the program's own memory at its real address (the Terminate quotes it), which
  // ASLR moves from process to process: the RTL run is not compared record by record.
  RunRecord::get().not_comparable("Odp.UnmappedMemory... registers the process's own memory");
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  ibv_wc_status st = IBV_WC_SUCCESS;
  std::vector<uint8_t> guard_after;
  uint8_t* keep = nullptr;
  cl.run({[&] {
            open_connected(a, 0, plain_config(), oob);
            const PeerInfo p = oob.get(0);
            st = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, 4096);
            oob.put(1, {});
          },
          [&] {
            open_connected(b, 1, plain_config(), oob);
            // Three pages of the program's own memory: the middle one registered on demand,
            // then unmapped; the outer ones are guards.
            void* m =
                mmap(nullptr, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            ASSERT_NE(m, MAP_FAILED);
            keep = static_cast<uint8_t*>(m);
            std::memset(keep, 0x5A, 3 * 4096);
            ibv_mr* mr = ibv_reg_mr(b.pd, keep + 4096, 4096, kRemote | IBV_ACCESS_ON_DEMAND);
            ASSERT_NE(mr, nullptr);
            munmap(keep + 4096, 4096);
            PeerInfo pi = b.info();
            pi.addr = reinterpret_cast<uint64_t>(keep + 4096);
            pi.rkey = mr->rkey;
            oob.put(0, pi);
            oob.get(1);
            guard_after.assign(keep, keep + 4096);
            guard_after.insert(guard_after.end(), keep + 8192, keep + 12288);
          }});
  EXPECT_EQ(st, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(guard_after, std::vector<uint8_t>(8192, 0x5A));
  EXPECT_GE(counter(stats, "node1.driver", "odp_failed"), 1u);
  munmap(keep, 4096);
  munmap(keep + 8192, 4096);
}

// Unmapping memory whose pages the card has mapped: the program's munmap runs the MMU notifier
// first (the page made absent on the card), so node0's next Write faults, cannot be paged in
// and is refused; without the notifier it would land in the frame the page left.
TEST(Odp, MunmapInvalidatesTheCardsTranslationsFirst) {
  RunRecord::get().not_comparable("Odp.Munmap... registers the process's own memory (ASLR)");
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  ibv_wc_status first = IBV_WC_GENERAL_ERR, after = IBV_WC_SUCCESS;
  uint64_t unmapped = 0;
  uint8_t* keep = nullptr;
  cl.run({[&] {
            open_connected(a, 0, plain_config(), oob);
            const PeerInfo p = oob.get(0);
            first = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, 4096);
            oob.put(1, {});
            oob.get(0);  // unmapped
            after = post_and_wait(a, IBV_WR_RDMA_WRITE, a.addr(), a.mr->lkey, p, 4096);
            oob.put(1, {});
          },
          [&] {
            open_connected(b, 1, plain_config(), oob);
            void* m =
                mmap(nullptr, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            ASSERT_NE(m, MAP_FAILED);
            keep = static_cast<uint8_t*>(m);
            ibv_mr* mr = ibv_reg_mr(b.pd, keep + 4096, 4096, kRemote | IBV_ACCESS_ON_DEMAND);
            ASSERT_NE(mr, nullptr);
            PeerInfo pi = b.info();
            pi.addr = reinterpret_cast<uint64_t>(keep + 4096);
            pi.rkey = mr->rkey;
            oob.put(0, pi);
            oob.get(1);  // written: the page is mapped on the card
            const uint64_t before = counter(stats, "node1.driver", "odp_pages_unmapped");
            munmap(keep + 4096, 4096);
            unmapped = counter(stats, "node1.driver", "odp_pages_unmapped") - before;
            oob.put(0, {});
            oob.get(1);
          }});
  EXPECT_EQ(first, IBV_WC_SUCCESS);
  EXPECT_EQ(unmapped, 1u);
  EXPECT_EQ(after, IBV_WC_REM_ACCESS_ERR);
  munmap(keep, 4096);
  munmap(keep + 8192, 4096);
}

}  // namespace
}  // namespace rnic
