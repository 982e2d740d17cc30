// Every row of WIRE.md's error table between two simulated hosts, each with two connected QPs.
// QP 0 of the requester (node 0) posts a WR that the responder (node 1) must reject, then a
// valid RDMA Write behind it, with one receive posted on its own side. Each case checks:
//   - the wire: exactly one Terminate, from the responder to requester QP 0, with the case's
//     layer / type / code, M = D = 1, R only for a Read Request, the offending segment's length
//     and DDP header (and Read Request header) as they went out; nothing more from the
//     responder's QP 0 after it;
//   - completions: the rejected WR with the requester's status, the WR behind it and the
//     requester's receive flushed; the responder's receives completed or flushed as the row says;
//   - async events: the responder's as the row says, none on the requester;
//   - QP states: both QP 0s in ERROR, both QP 1s still RTS and carrying an RDMA Write and a
//     Send after the error;
//   - the scoreboard: both hosts' buffers (and the responder's second MR) hold exactly what the
//     successful operations put there, guard bytes everywhere else.
#include <gtest/gtest.h>

#include <functional>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"
#include "testbench/common/wire_log.h"

namespace rnic {
namespace {

using rdmap::Layer;
using rdmap::Opcode;
using rdmap::TermCause;
using testbench::expect_bytes;
using testbench::kGuard;
using testbench::mem_fill;
using testbench::mem_write;
using testbench::pattern;
using testbench::qp_state;
using testbench::rdma_write_wr;
using testbench::wait_completions;
using testbench::WireFrame;
using testbench::WireLog;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

constexpr size_t kBuf = 1 << 20, kSecondMr = 64 << 10;
// Offsets in the 1 MiB buffers.
constexpr uint64_t kSrcOff = 0x1000;           // requester: the rejected WR's source / read sink
constexpr uint64_t kFollowSrcOff = 0x3000;     // requester: the WR queued behind it
constexpr uint64_t kReadsBeforeOff = 0x80000;  // requester: sinks of the Reads ahead of it
constexpr uint64_t kQp1SrcOff = 0x5000;        // requester: QP 1's Write and Send sources
constexpr uint64_t kTargetOff = 0x10000;       // responder: the rejected WR's remote target
constexpr uint64_t kFollowDstOff = 0x20000;    // responder: the queued Write's target
constexpr uint64_t kRecvOff = 0x30000;         // responder: QP 0's receives
constexpr uint64_t kQp1DstOff = 0x40000;       // responder: QP 1's Write target
constexpr uint64_t kQp1RecvOff = 0x50000;      // responder: QP 1's receive
constexpr uint32_t kQp1Write = 1000, kQp1Send = 500, kFollowLen = 64;
constexpr uint32_t kReadBeforeLen = 0x10000;  // long enough to stay in the response queue
constexpr ibv_event_type kNoEvent = ibv_event_type(-1);
// Guard bytes as an atomic's operand: a CmpSwap that ran would match them and swap.
constexpr uint64_t kGuardWord = 0xA5A5A5A5A5A5A5A5ull;

enum class Op { kWrite, kRead, kSend, kSendInv, kFetchAdd, kCmpSwap, kWriteImm };

struct Case {
  Op op = Op::kWrite;
  uint32_t len = 256;
  // The responder's receives on QP 0 (posted before the error) and their length.
  int recvs = 2;
  uint32_t recv_len = 4096;
  // The remote target: the responder's buffer, or a second MR with these rights (in the same
  // PD, or in another one).
  bool second_mr = false;
  int second_access = IBV_ACCESS_LOCAL_WRITE;
  bool second_other_pd = false;
  // rkey (or, for Send with Invalidate, the STag to invalidate) from the target's rkey.
  std::function<uint32_t(uint32_t)> rkey = [](uint32_t k) { return k; };
  uint64_t remote_off = 0;  // from the target's first byte
  // Rewrites the rejected WR's segment as it goes out (a faulty peer).
  std::function<void(std::vector<uint8_t>&)> fault;
  // Valid 64 KiB RDMA Reads posted ahead of the rejected WR (wr_id 20 + i; their source is
  // guard bytes, so what part of them lands leaves the scoreboard as it is), and a change to
  // both cards' configuration.
  int reads_before = 0;
  // The responder's QP 0 receives use an MR of their own, deregistered once they are posted.
  bool dereg_recv_mr = false;
  std::function<void(SystemConfig&)> config;
  // The responder's QP 0 access flags once connected (-1: as connected, remote write and read).
  int responder_qp_access = -1;
  // The requester sets its ORD without regard to the responder's IRD (a program that does not
  // exchange it).
  bool ignore_peer_ird = false;

  // Expected.
  TermCause cause;
  bool r = false;
  bool headers = true;  // the Terminate quotes the segment's DDP header (M, D)
  ibv_wc_status requester = IBV_WC_REM_ACCESS_ERR;
  ibv_event_type responder_event = IBV_EVENT_QP_ACCESS_ERR;
  int consumed_recv = -1;    // status of the receive the rejected Send consumed; -1: none
  bool recv_placed = false;  // the rejected Send's bytes are in that receive's buffer
};

void overlay(std::vector<uint8_t>& img, uint64_t off, const std::vector<uint8_t>& d) {
  std::copy(d.begin(), d.end(), img.begin() + off);
}

const ibv_wc* by_id(const std::vector<ibv_wc>& v, uint64_t id) {
  for (const ibv_wc& w : v)
    if (w.wr_id == id) return &w;
  return nullptr;
}

class RdmaErrors : public ::testing::Test {
 protected:
  void run(const Case& c, const std::string& transport = "efe");
};
// The same cases between cards of the MPA/TCP transport (card.transport: mpa_tcp).
class RdmaErrorsTcp : public RdmaErrors {};

// A case runs on both transports: RdmaErrors.<Name> on the EFE, RdmaErrorsTcp.<Name> on MPA/TCP.
#define RDMA_ERROR_CASE(Name)                                    \
  Case Name##_case();                                            \
  TEST_F(RdmaErrors, Name) { run(Name##_case()); }               \
  TEST_F(RdmaErrorsTcp, Name) { run(Name##_case(), "mpa_tcp"); } \
  Case Name##_case()

void RdmaErrors::run(const Case& c, const std::string& transport) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.set("card.transport", transport, "test");
  if (c.config) c.config(cfg);
  StatRegistry stats;
  Cluster cl(cfg, stats);
  WireLog wire(cl.link(0), testbench::test_name() + (transport == "efe" ? "" : "_" + transport));
  Oob oob;
  EndpointConfig ec;
  ec.qps = 2;
  Endpoint a, b;
  ibv_pd* other_pd = nullptr;
  ibv_mr* second = nullptr;
  void* second_buf = nullptr;
  const std::vector<uint8_t> bad_data = pattern(c.len, 1), follow = pattern(kFollowLen, 2),
                             qp1_write = pattern(kQp1Write, 3), qp1_send = pattern(kQp1Send, 4);
  std::vector<uint8_t> img_a(kBuf, kGuard), img_b(kBuf, kGuard);
  overlay(img_a, kSrcOff, bad_data);
  overlay(img_a, kFollowSrcOff, follow);
  overlay(img_a, kQp1SrcOff, qp1_write);
  overlay(img_a, kQp1SrcOff + kQp1Write, qp1_send);
  overlay(img_b, kQp1DstOff, qp1_write);
  overlay(img_b, kQp1RecvOff, qp1_send);
  if (c.recv_placed) overlay(img_b, kRecvOff, bad_data);

  auto open = [&](Endpoint& ep) {
    ep.open(ec);
    std::vector<uint8_t> g(kBuf, kGuard);
    mem_write(ep.buf, 0, g);
  };

  cl.run(
      {[&] {  // requester
         open(a);
         oob.put(1, a.info());
         const PeerInfo peer = oob.get(0);
         PeerInfo as_told = peer;
         if (c.ignore_peer_ird) as_told.ird = 0;
         a.connect(as_told);
         const PeerInfo target = oob.get(0);  // receives posted; the target MR
         mem_write(a.buf, kSrcOff, bad_data);
         mem_write(a.buf, kFollowSrcOff, follow);
         mem_write(a.buf, kQp1SrcOff, qp1_write);
         mem_write(a.buf, kQp1SrcOff + kQp1Write, qp1_send);

         ibv_sge rsge{a.addr() + kSrcOff + 0x800, 16, a.mr->lkey};
         ibv_recv_wr rwr{};
         rwr.wr_id = 3;
         rwr.sg_list = &rsge;
         rwr.num_sge = 1;
         ibv_recv_wr* bad_r = nullptr;
         ASSERT_EQ(ibv_post_recv(a.qps[0], &rwr, &bad_r), 0);

         ibv_sge sge{a.addr() + kSrcOff, c.len, a.mr->lkey};
         ibv_send_wr wr{};
         wr.wr_id = 1;
         wr.sg_list = &sge;
         wr.num_sge = 1;
         wr.send_flags = IBV_SEND_SIGNALED;
         switch (c.op) {
           case Op::kWrite:
           case Op::kRead:
             wr.opcode = c.op == Op::kWrite ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
             wr.wr.rdma.remote_addr = target.addr + c.remote_off;
             wr.wr.rdma.rkey = c.rkey(target.rkey);
             break;
           case Op::kSend:
             wr.opcode = IBV_WR_SEND;
             break;
           case Op::kSendInv:
             wr.opcode = IBV_WR_SEND_WITH_INV;
             wr.invalidate_rkey = c.rkey(target.rkey);
             break;
           case Op::kWriteImm:  // 0 bytes: the Immediate Data alone goes
             wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
             wr.num_sge = 0;
             wr.imm_data = 0x01020304;
             wr.wr.rdma.remote_addr = target.addr + c.remote_off;
             wr.wr.rdma.rkey = c.rkey(target.rkey);
             break;
           case Op::kFetchAdd:
           case Op::kCmpSwap:
             // Into the sink: the target's original value (guard bytes there: it must not come).
             wr.opcode =
                 c.op == Op::kFetchAdd ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
             wr.wr.atomic = {target.addr + c.remote_off, kGuardWord, 0x1234, c.rkey(target.rkey)};
             break;
         }
         ibv_sge fsge{a.addr() + kFollowSrcOff, kFollowLen, a.mr->lkey};
         ibv_send_wr fwr = rdma_write_wr(2, &fsge, 1, peer.addr + kFollowDstOff, peer.rkey);
         wr.next = &fwr;
         std::vector<ibv_sge> before_sge(size_t(c.reads_before));
         std::vector<ibv_send_wr> before(size_t(c.reads_before));
         for (int i = 0; i < c.reads_before; ++i) {
           before_sge[i] = {a.addr() + kReadsBeforeOff + kReadBeforeLen * uint64_t(i),
                            kReadBeforeLen, a.mr->lkey};
           before[i] = rdma_write_wr(20 + uint64_t(i), &before_sge[i], 1,
                                     target.addr + kReadBeforeLen * uint64_t(i), target.rkey, true);
           before[i].opcode = IBV_WR_RDMA_READ;
           before[i].next = i + 1 < c.reads_before ? &before[i + 1] : &wr;
         }
         if (c.fault) {
           // The first DATA frame after this point is the rejected WR's only segment.
           cl.nodes[0]->card.transport().tx_fault = [&](std::vector<uint8_t>& ddp) {
             c.fault(ddp);
             cl.nodes[0]->card.transport().tx_fault = nullptr;
           };
         }
         ibv_send_wr* bad = nullptr;
         ASSERT_EQ(ibv_post_send(a.qps[0], c.reads_before ? before.data() : &wr, &bad), 0);

         const std::vector<ibv_wc> wcs = wait_completions(a.cq, 3 + size_t(c.reads_before));
         for (int i = 0; i < c.reads_before; ++i) {
           const ibv_wc* r = by_id(wcs, 20 + uint64_t(i));
           ASSERT_TRUE(r);
           EXPECT_EQ(r->status, IBV_WC_WR_FLUSH_ERR) << "read " << i;
         }
         const ibv_wc* w1 = by_id(wcs, 1);
         const ibv_wc* w2 = by_id(wcs, 2);
         const ibv_wc* w3 = by_id(wcs, 3);
         ASSERT_TRUE(w1 && w2 && w3);
         EXPECT_EQ(w1->status, c.requester) << ibv_wc_status_str(w1->status);
         EXPECT_EQ(w1->qp_num, a.qps[0]->qp_num);
         EXPECT_EQ(w2->status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(w2->status);
         EXPECT_EQ(w3->status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(w3->status);
         EXPECT_EQ(qp_state(a.qps[0]), IBV_QPS_ERR);

         // QP 1 carries on: an RDMA Write, then a Send into the receive posted for it.
         oob.get(0);  // the responder has seen its side of the error
         EXPECT_EQ(qp_state(a.qps[1]), IBV_QPS_RTS);
         ibv_sge s1{a.addr() + kQp1SrcOff, kQp1Write, a.mr->lkey};
         ibv_send_wr w = rdma_write_wr(10, &s1, 1, peer.addr + kQp1DstOff, peer.rkey);
         ibv_sge s2{a.addr() + kQp1SrcOff + kQp1Write, kQp1Send, a.mr->lkey};
         ibv_send_wr snd{};
         snd.wr_id = 11;
         snd.sg_list = &s2;
         snd.num_sge = 1;
         snd.opcode = IBV_WR_SEND;
         snd.send_flags = IBV_SEND_SIGNALED;
         w.next = &snd;
         ASSERT_EQ(ibv_post_send(a.qps[1], &w, &bad), 0);
         for (const ibv_wc& x : wait_completions(a.cq, 2)) {
           EXPECT_EQ(x.status, IBV_WC_SUCCESS) << x.wr_id << ": " << ibv_wc_status_str(x.status);
           EXPECT_EQ(x.qp_num, a.qps[1]->qp_num);
         }
         oob.put(1, {});
         oob.get(0);  // the responder has its receive
         EXPECT_TRUE(cl.nodes[0]->driver.async_queue().empty())
             << "requester async event " << cl.nodes[0]->driver.async_queue().front().type;
         expect_bytes("requester buffer", a.buf, img_a);
       },
       [&] {  // responder
         open(b);
         const PeerInfo peer = oob.get(1);
         oob.put(0, b.info());
         b.connect(peer);
         if (c.responder_qp_access >= 0) {
           ibv_qp_attr at{};
           at.qp_access_flags = unsigned(c.responder_qp_access);
           ASSERT_EQ(ibv_modify_qp(b.qps[0], &at, IBV_QP_ACCESS_FLAGS), 0);
         }
         PeerInfo target = b.info();
         if (c.second_mr) {
           ibv_pd* pd = b.pd;
           if (c.second_other_pd) pd = other_pd = ibv_alloc_pd(b.ctx);
           second_buf = rnic_malloc(kSecondMr);
           mem_fill(second_buf, kSecondMr);
           second = ibv_reg_mr(pd, second_buf, kSecondMr, c.second_access);
           ASSERT_TRUE(second);
           target.addr = reinterpret_cast<uint64_t>(second_buf);
           target.rkey = second->rkey;
         }
         if (!c.second_mr && c.op != Op::kSend && c.op != Op::kSendInv) target.addr += kTargetOff;
         ibv_mr* recv_mr = b.mr;
         if (c.dereg_recv_mr) {
           recv_mr = ibv_reg_mr(b.pd, b.buf, kBuf, IBV_ACCESS_LOCAL_WRITE);
           ASSERT_TRUE(recv_mr);
         }
         for (int i = 0; i < c.recvs; ++i) {
           ibv_sge s{b.addr() + kRecvOff + uint64_t(i) * c.recv_len, c.recv_len, recv_mr->lkey};
           ibv_recv_wr r{};
           r.wr_id = 100 + uint64_t(i);
           r.sg_list = &s;
           r.num_sge = 1;
           ibv_recv_wr* bad = nullptr;
           ASSERT_EQ(ibv_post_recv(b.qps[0], &r, &bad), 0);
         }
         if (c.dereg_recv_mr) {
           ASSERT_EQ(ibv_dereg_mr(recv_mr), 0);
         }
         ibv_sge s{b.addr() + kQp1RecvOff, 4096, b.mr->lkey};
         ibv_recv_wr r{};
         r.wr_id = 200;
         r.sg_list = &s;
         r.num_sge = 1;
         ibv_recv_wr* bad = nullptr;
         ASSERT_EQ(ibv_post_recv(b.qps[1], &r, &bad), 0);
         oob.put(0, target);

         if (c.responder_event != kNoEvent) {
           ibv_async_event ev{};
           ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0);
           EXPECT_EQ(ev.event_type, c.responder_event);
           EXPECT_EQ(ev.element.qp, b.qps[0]);
           ibv_ack_async_event(&ev);
         }
         const std::vector<ibv_wc> wcs = wait_completions(b.cq, size_t(c.recvs));
         for (int i = 0; i < c.recvs; ++i) {
           const ibv_wc* w = by_id(wcs, 100 + uint64_t(i));
           ASSERT_TRUE(w);
           const int want = i == 0 && c.consumed_recv >= 0 ? c.consumed_recv : IBV_WC_WR_FLUSH_ERR;
           EXPECT_EQ(w->status, want) << "receive " << i << ": " << ibv_wc_status_str(w->status);
         }
         while (qp_state(b.qps[0]) != IBV_QPS_ERR) rnic_spend_ns(100);
         oob.put(0, {});
         oob.get(1);  // the requester's QP 1 traffic has completed
         const std::vector<ibv_wc> r1 = wait_completions(b.cq, 1);
         ASSERT_EQ(r1.size(), 1u);
         EXPECT_EQ(r1[0].wr_id, 200u);
         EXPECT_EQ(r1[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(r1[0].status);
         EXPECT_EQ(r1[0].byte_len, kQp1Send);
         EXPECT_EQ(qp_state(b.qps[0]), IBV_QPS_ERR);
         EXPECT_EQ(qp_state(b.qps[1]), IBV_QPS_RTS);
         EXPECT_TRUE(cl.nodes[1]->driver.async_queue().empty()) << "a second responder event";
         expect_bytes("responder buffer", b.buf, img_b);
         if (second_buf)
           expect_bytes("responder second MR", second_buf, std::vector<uint8_t>(kSecondMr, kGuard));
         oob.put(0, {});
       }});

  // The wire.
  const eth::Mac req = cl.nodes[0]->mac, resp = cl.nodes[1]->mac;
  const std::vector<const WireFrame*> terms = wire.with_opcode(Opcode::kTerminate);
  ASSERT_EQ(terms.size(), 1u) << "Terminates on the wire";
  const WireFrame& t = *terms[0];
  EXPECT_TRUE(t.from(resp));
  EXPECT_EQ(t.efe.dst_qpn, a.qps[0]->qp_num);
  EXPECT_EQ(t.seg.qn, rdmap::kQnTerminate);
  EXPECT_TRUE(t.seg.last);
  rdmap::Terminate term;
  ASSERT_TRUE(rdmap::decode(t.ddp.data() + rdmap::kUntaggedBytes,
                            t.ddp.size() - rdmap::kUntaggedBytes, &term));
  EXPECT_EQ(int(term.cause.layer), int(c.cause.layer));
  EXPECT_EQ(int(term.cause.etype), int(c.cause.etype));
  EXPECT_EQ(int(term.cause.code), int(c.cause.code));
  EXPECT_EQ(term.m, c.headers);
  EXPECT_EQ(term.d, c.headers);
  EXPECT_EQ(term.r, c.r);
  const std::vector<const WireFrame*> sent = wire.data(req, b.qps[0]->qp_num);
  ASSERT_GT(sent.size(), size_t(c.reads_before));
  if (c.headers) {
    // The rejected WR's segment, as it went out.
    const std::vector<uint8_t>& off = sent[size_t(c.reads_before)]->ddp;
    const size_t hb = (off[0] & rdmap::kDdpTagged) ? rdmap::kTaggedBytes : rdmap::kUntaggedBytes;
    // DDP Segment Length as siw fills it: the segment less its opcode's fixed headers.
    const bool untagged = hb == rdmap::kUntaggedBytes;
    const bool rreq = untagged && (off[1] & 0x0F) == uint8_t(Opcode::kReadRequest);
    const bool areq = untagged && (off[1] & 0x0F) == uint8_t(Opcode::kAtomicRequest);
    const size_t fixed =
        hb + (rreq ? rdmap::kReadRequestBytes : 0) + (areq ? rdmap::kAtomicRequestBytes : 0);
    EXPECT_EQ(term.ddp_seg_len, off.size() > fixed ? off.size() - fixed : 0);
    EXPECT_EQ(term.ddp_header, std::vector<uint8_t>(off.begin(), off.begin() + hb));
    if (c.r) {
      EXPECT_EQ(term.rdmap_header, std::vector<uint8_t>(off.begin() + rdmap::kUntaggedBytes,
                                                        off.begin() + rdmap::kUntaggedBytes +
                                                            rdmap::kReadRequestBytes));
    }
  }
  for (const WireFrame* f : wire.data(resp, a.qps[0]->qp_num))
    EXPECT_LE(f->t_ps, t.t_ps) << "the responder's QP 0 sent after its Terminate";
  EXPECT_EQ(stats.group("node1.core").counter("tx_terminates", "", "").value, 1u);
  EXPECT_EQ(stats.group("node0.core").counter("rx_terminates", "", "").value, 1u);
}

uint32_t other_index(uint32_t k) { return k + (1000u << 8); }
uint32_t other_key(uint32_t k) { return k ^ 0x5A; }

RDMA_ERROR_CASE(WriteInvalidStagIndex) {
  Case c;
  c.rkey = other_index;
  c.cause = {Layer::kDdp, 1, 0x00};
  return c;
}

RDMA_ERROR_CASE(WriteWrongKey) {
  Case c;
  c.rkey = other_key;
  c.cause = {Layer::kDdp, 1, 0x00};
  return c;
}

RDMA_ERROR_CASE(WriteOutsideMr) {
  Case c;
  c.remote_off = kBuf - kTargetOff - 100;  // the last 100 bytes, then 156 beyond
  c.cause = {Layer::kDdp, 1, 0x01};
  return c;
}

RDMA_ERROR_CASE(WriteMrOfAnotherPd) {
  Case c;
  c.second_mr = true;
  c.second_other_pd = true;
  c.second_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  c.cause = {Layer::kDdp, 1, 0x02};
  return c;
}

RDMA_ERROR_CASE(WriteWithoutRemoteWriteRight) {
  Case c;
  c.second_mr = true;
  c.second_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  c.cause = {Layer::kRdmap, 1, 0x02};
  return c;
}

// The MR grants the access but the responder's QP does not (rdma-core: both must).
RDMA_ERROR_CASE(WriteToAQpWithoutRemoteWriteAccess) {
  Case c;
  c.responder_qp_access = IBV_ACCESS_REMOTE_READ;
  c.cause = {Layer::kRdmap, 1, 0x02};
  return c;
}

Case read_case(TermCause cause) {
  Case c;
  c.op = Op::kRead;
  c.cause = cause;
  c.r = true;
  return c;
}

RDMA_ERROR_CASE(ReadSourceInvalidStagIndex) {
  Case c = read_case({Layer::kRdmap, 1, 0x00});
  c.rkey = other_index;
  return c;
}

RDMA_ERROR_CASE(ReadSourceWrongKey) {
  Case c = read_case({Layer::kRdmap, 1, 0x00});
  c.rkey = other_key;
  return c;
}

RDMA_ERROR_CASE(ReadSourceOutsideMr) {
  Case c = read_case({Layer::kRdmap, 1, 0x01});
  c.remote_off = kBuf - kTargetOff - 100;
  return c;
}

RDMA_ERROR_CASE(ReadSourceWithoutRemoteReadRight) {
  Case c = read_case({Layer::kRdmap, 1, 0x02});
  c.second_mr = true;
  c.second_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  return c;
}

RDMA_ERROR_CASE(ReadFromAQpWithoutRemoteReadAccess) {
  Case c = read_case({Layer::kRdmap, 1, 0x02});
  c.responder_qp_access = IBV_ACCESS_REMOTE_WRITE;
  return c;
}

RDMA_ERROR_CASE(ReadSourceMrOfAnotherPd) {
  Case c = read_case({Layer::kRdmap, 1, 0x03});
  c.second_mr = true;
  c.second_other_pd = true;
  c.second_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  return c;
}

// RFC 7306 atomics: the target must be 8-byte aligned, in an MR and a QP that grant remote
// atomics; a rejected one changes nothing at either end (guard bytes at the target and the sink).
Case atomic_case(Op op) {
  Case c;
  c.op = op;
  c.len = 8;
  c.second_mr = true;
  c.second_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
  c.responder_qp_access =
      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  c.remote_off = 0x100;
  return c;
}

Case misaligned(Op op) {
  Case c = atomic_case(op);
  c.remote_off = 0x104;
  c.cause = {Layer::kRdmap, 2, 0xFF};
  c.requester = IBV_WC_REM_OP_ERR;
  c.responder_event = IBV_EVENT_QP_REQ_ERR;
  return c;
}

RDMA_ERROR_CASE(FetchAddNotAligned) { return misaligned(Op::kFetchAdd); }
RDMA_ERROR_CASE(CmpSwapNotAligned) { return misaligned(Op::kCmpSwap); }

RDMA_ERROR_CASE(AtomicWithoutRemoteAtomicRight) {
  Case c = atomic_case(Op::kFetchAdd);
  c.second_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  c.cause = {Layer::kRdmap, 1, 0x02};
  return c;
}

RDMA_ERROR_CASE(AtomicToAQpWithoutRemoteAtomicAccess) {
  Case c = atomic_case(Op::kCmpSwap);
  c.responder_qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  c.cause = {Layer::kRdmap, 1, 0x02};
  return c;
}

RDMA_ERROR_CASE(AtomicInvalidStag) {
  Case c = atomic_case(Op::kFetchAdd);
  c.rkey = other_key;
  c.cause = {Layer::kRdmap, 1, 0x00};
  return c;
}

RDMA_ERROR_CASE(AtomicOutsideMr) {
  Case c = atomic_case(Op::kCmpSwap);
  c.remote_off = kSecondMr;  // aligned, just past the end
  c.cause = {Layer::kRdmap, 1, 0x01};
  return c;
}

RDMA_ERROR_CASE(SendWithNoReceivePosted) {
  Case c;
  c.op = Op::kSend;
  c.recvs = 0;
  c.cause = {Layer::kDdp, 2, 0x02};
  c.requester = IBV_WC_REM_OP_ERR;
  c.responder_event = IBV_EVENT_QP_FATAL;
  return c;
}

// RFC 7306 Immediate Data takes a receive like a Send.
RDMA_ERROR_CASE(WriteWithImmediateWithNoReceivePosted) {
  Case c;
  c.op = Op::kWriteImm;
  c.len = 0;
  c.recvs = 0;
  c.cause = {Layer::kDdp, 2, 0x02};
  c.requester = IBV_WC_REM_OP_ERR;
  c.responder_event = IBV_EVENT_QP_FATAL;
  return c;
}

RDMA_ERROR_CASE(SendLongerThanTheReceive) {
  Case c;
  c.op = Op::kSend;
  c.recv_len = 128;  // 256 bytes sent
  c.cause = {Layer::kDdp, 2, 0x05};
  c.requester = IBV_WC_REM_INV_REQ_ERR;
  c.responder_event = kNoEvent;
  c.consumed_recv = IBV_WC_LOC_LEN_ERR;
  return c;
}

RDMA_ERROR_CASE(SendWithInvalidateOfAnotherPdsStag) {
  Case c;
  c.op = Op::kSendInv;
  c.second_mr = true;
  c.second_other_pd = true;
  c.second_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  c.cause = {Layer::kRdmap, 2, 0x09};
  c.requester = IBV_WC_REM_OP_ERR;
  c.responder_event = IBV_EVENT_QP_FATAL;
  c.consumed_recv = IBV_WC_REM_OP_ERR;
  c.recv_placed = true;  // the bytes land before the last segment's invalidation fails
  return c;
}

RDMA_ERROR_CASE(SendWithInvalidateOfAnInvalidStag) {
  Case c;
  c.op = Op::kSendInv;
  c.rkey = other_index;
  c.cause = {Layer::kRdmap, 2, 0x09};
  c.requester = IBV_WC_REM_OP_ERR;
  c.responder_event = IBV_EVENT_QP_FATAL;
  c.consumed_recv = IBV_WC_REM_OP_ERR;
  c.recv_placed = true;
  return c;
}

Case header_case(Op op, TermCause cause, std::function<void(std::vector<uint8_t>&)> fault) {
  Case c;
  c.op = op;
  c.fault = std::move(fault);
  c.cause = cause;
  c.requester = IBV_WC_REM_INV_REQ_ERR;
  c.responder_event = IBV_EVENT_QP_FATAL;
  return c;
}

RDMA_ERROR_CASE(UnknownOpcode) {
  Case c = header_case(Op::kSend, {Layer::kRdmap, 2, 0x06},
                       [](std::vector<uint8_t>& d) { d[1] = uint8_t((d[1] & 0xF0) | 0xC); });
  c.headers = false;  // the layout is unknown: siw quotes no header
  return c;
}

RDMA_ERROR_CASE(OpcodeThatDoesNotMatchTheTBit) {
  // A Send opcode in a tagged header (an RDMA Write's bytes with opcode 3).
  Case c = header_case(Op::kWrite, {Layer::kRdmap, 2, 0x06},
                       [](std::vector<uint8_t>& d) { d[1] = uint8_t((d[1] & 0xF0) | 0x3); });
  c.headers = false;  // the layout is unknown: siw quotes no header
  return c;
}

RDMA_ERROR_CASE(BadRdmapVersion) {
  Case c = header_case(Op::kSend, {Layer::kRdmap, 2, 0x05},
                       [](std::vector<uint8_t>& d) { d[1] = uint8_t((d[1] & 0x3F) | 0x80); });
  c.headers = false;  // the layout is unknown: siw quotes no header
  return c;
}

RDMA_ERROR_CASE(BadDdpVersionUntagged) {
  Case c = header_case(Op::kSend, {Layer::kDdp, 2, 0x06},
                       [](std::vector<uint8_t>& d) { d[0] = uint8_t((d[0] & ~0x03) | 0x02); });
  c.headers = false;  // the layout is unknown: siw quotes no header
  return c;
}

RDMA_ERROR_CASE(BadDdpVersionTagged) {
  Case c = header_case(Op::kWrite, {Layer::kDdp, 1, 0x04},
                       [](std::vector<uint8_t>& d) { d[0] = uint8_t((d[0] & ~0x03) | 0x02); });
  c.headers = false;  // the layout is unknown: siw quotes no header
  return c;
}

RDMA_ERROR_CASE(BadQueueNumber) {
  return (header_case(Op::kSend, {Layer::kDdp, 2, 0x01}, [](std::vector<uint8_t>& d) {
    d[6] = d[7] = d[8] = 0;
    d[9] = 5;
  }));
}

// Responder rows docs/errors.md adds to WIRE.md's table: an MSN that is not the next expected
// and an MO that is not where the message stands (untagged bytes 10-13 MSN, 14-17 MO).
RDMA_ERROR_CASE(SendWithWrongMsn) {
  return (header_case(Op::kSend, {Layer::kDdp, 2, 0x03},
                      [](std::vector<uint8_t>& d) { d[13] = uint8_t(d[13] + 5); }));
}

RDMA_ERROR_CASE(SendWithWrongMo) {
  return (header_case(Op::kSend, {Layer::kDdp, 2, 0x04},
                      [](std::vector<uint8_t>& d) { d[17] = uint8_t(d[17] ^ 0x40); }));
}

RDMA_ERROR_CASE(ReadRequestWithWrongMsn) {
  Case c = header_case(Op::kRead, {Layer::kDdp, 2, 0x03},
                       [](std::vector<uint8_t>& d) { d[13] = uint8_t(d[13] + 3); });
  return c;
}

RDMA_ERROR_CASE(ReadRequestWithNonZeroMo) {
  Case c =
      header_case(Op::kRead, {Layer::kDdp, 2, 0x04}, [](std::vector<uint8_t>& d) { d[17] = 8; });
  return c;
}

// A Read Request beyond the responder's IRD (docs/errors.md): with IRD 2 on both cards and the
// requester's ORD at 16, the third of three Reads arrives while the first two 64 KiB responses
// are still queued (a response leaves the queue when its last segment is issued). The two Reads
// ahead of it are flushed at the requester.
RDMA_ERROR_CASE(ReadRequestBeyondIrd) {
  Case c = read_case({Layer::kRdmap, 2, 0x07});
  c.reads_before = 2;
  c.config = [](SystemConfig& cfg) {
    cfg.core.ird = 2;
    // The channel starts at line rate: with the default slow start the third Read arrives
    // after a response has left the queue, and all three complete.
    cfg.efe.cc_start_fraction = 1;
  };
  c.ignore_peer_ird = true;
  c.r = false;  // R quotes the Read Request for remote protection errors only (as siw)
  c.requester = IBV_WC_REM_OP_ERR;
  c.responder_event = IBV_EVENT_QP_FATAL;
  return c;
}

// A Read Response the responder never asked for (an RDMA Write's segment relabelled opcode 2):
// RDMAP / 2 / 0x06.
RDMA_ERROR_CASE(ReadResponseWithoutAnOutstandingRead) {
  Case c = header_case(Op::kWrite, {Layer::kDdp, 0, 0x00},  // DDP catastrophic, as siw
                       [](std::vector<uint8_t>& d) { d[1] = uint8_t((d[1] & 0xF0) | 0x2); });
  c.requester = IBV_WC_REM_OP_ERR;
  return c;
}

// A Read Request that is not exactly one segment of 28 payload bytes: Linux siw drops the stream
// without a Terminate (siw_proc_rreq: -EPROTO); here the responder closes it (a Terminate of
// layer LLP, quoting nothing), its QP fails with IBV_EVENT_QP_FATAL, and every WR of the
// requester, the Read included, flushes.
Case malformed_read_request(std::function<void(std::vector<uint8_t>&)> f) {
  Case c = header_case(Op::kRead, {Layer::kLlp, 0, 0x00}, std::move(f));
  c.headers = false;
  c.requester = IBV_WC_WR_FLUSH_ERR;
  return c;
}

RDMA_ERROR_CASE(ReadRequestShorterThanItsPayload) {
  return (malformed_read_request(
      [](std::vector<uint8_t>& d) { d.resize(rdmap::kUntaggedBytes + 10); }));
}

RDMA_ERROR_CASE(ReadRequestWithTrailingBytes) {
  return malformed_read_request([](std::vector<uint8_t>& d) { d.resize(d.size() + 8, 0xEE); });
}

RDMA_ERROR_CASE(ReadRequestWithoutTheLastFlag) {
  return malformed_read_request([](std::vector<uint8_t>& d) { d[0] &= uint8_t(~rdmap::kDdpLast); });
}

// A receive whose MR was deregistered after it was posted: the Send that consumes it cannot be
// placed. RDMAP / 0 / 0x00 (local catastrophic) to the requester, the receive completes
// IBV_WC_LOC_PROT_ERR, the responder's QP fails with IBV_EVENT_QP_FATAL.
RDMA_ERROR_CASE(SendIntoAReceiveWhoseMrWasDeregistered) {
  Case c;
  c.op = Op::kSend;
  c.dereg_recv_mr = true;
  c.cause = {Layer::kRdmap, 0, 0x00};
  c.requester = IBV_WC_REM_OP_ERR;
  c.responder_event = IBV_EVENT_QP_FATAL;
  c.consumed_recv = IBV_WC_LOC_PROT_ERR;
  c.headers = false;  // siw quotes no header
  return c;
}

}  // namespace
}  // namespace rnic
