// The verbs library's answers that rdma-core's examples and tools read: what the device is
// (iWARP NIC, its GUID the EUI-64 of its MAC as the GID's interface half), rdma-core's strings
// for node types, port states and events, ibv_fork_init, the kernel's EBUSY for a PD that an
// MR or a QP still uses, inline sends, and rdma-core's provider interface: its inline verbs
// reach the card through the context's operations, a verb the card lacks gets EOPNOTSUPP
// (docs/verbs.md).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "models/host/verbs/verbs.h"
#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

// The calling process's card, opened (the device list freed again).
ibv_context* open_first_device() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_context* ctx = n > 0 ? ibv_open_device(list[0]) : nullptr;
  ibv_free_device_list(list);
  return ctx;
}

TEST(VerbsApi, TheDeviceSaysWhatItIs) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  cl.run({[&] {
    EXPECT_EQ(ibv_fork_init(), 0);
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    ASSERT_EQ(n, 1);
    ibv_device* dev = list[0];
    EXPECT_EQ(dev->node_type, IBV_NODE_RNIC);
    EXPECT_EQ(dev->transport_type, IBV_TRANSPORT_IWARP);
    EXPECT_STREQ(ibv_node_type_str(dev->node_type), "iWARP NIC");
    // node0's MAC 02:00:00:00:00:01: EUI-64 00:00:00:ff:fe:00:00:01, in network byte order.
    const uint64_t guid = ibv_get_device_guid(dev);
    uint8_t b[8];
    std::memcpy(b, &guid, 8);
    const uint8_t want[8] = {0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x01};
    EXPECT_EQ(std::memcmp(b, want, 8), 0);
    ibv_context* ctx = ibv_open_device(dev);
    ibv_free_device_list(list);
    ASSERT_NE(ctx, nullptr);
    ibv_gid gid{};
    ASSERT_EQ(ibv_query_gid(ctx, 1, 0, &gid), 0);
    EXPECT_EQ(std::memcmp(gid.raw + 8, want, 8), 0) << "the GUID is the GID's interface half";
    ibv_device_attr da{};
    ASSERT_EQ(ibv_query_device(ctx, &da), 0);
    EXPECT_EQ(da.node_guid, guid);
    ibv_port_attr pa{};
    ASSERT_EQ(ibv_query_port(ctx, 1, &pa), 0);
    EXPECT_STREQ(ibv_port_state_str(pa.state), "active");
    EXPECT_STREQ(ibv_port_state_str(ibv_port_state(42)), "unknown");
    EXPECT_STREQ(ibv_event_type_str(IBV_EVENT_QP_FATAL), "local work queue catastrophic error");
    EXPECT_STREQ(ibv_event_type_str(IBV_EVENT_WQ_FATAL), "unknown");
    EXPECT_STREQ(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), "transport retry counter exceeded");
    ibv_close_device(ctx);
  }});
}

TEST(VerbsApi, APdInUseIsNotDeallocated) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  cl.run({[&] {
    ibv_context* ctx = open_first_device();
    ibv_pd* pd = ibv_alloc_pd(ctx);
    ASSERT_NE(pd, nullptr);
    void* buf = rnic_malloc(4096);
    ibv_mr* mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY) << "an MR uses it";
    ibv_cq* cq = ibv_create_cq(ctx, 4, nullptr, nullptr, 0);
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = cq;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 2;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.qp_type = IBV_QPT_RC;
    ibv_qp* qp = ibv_create_qp(pd, &ia);
    ASSERT_NE(qp, nullptr);
    ASSERT_EQ(ibv_dereg_mr(mr), 0);
    EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY) << "a QP uses it";
    ASSERT_EQ(ibv_destroy_qp(qp), 0);
    EXPECT_EQ(ibv_dealloc_pd(pd), 0) << "nothing uses it any more";
    EXPECT_EQ(ibv_dealloc_pd(pd), EINVAL) << "deallocated already";
    ibv_destroy_cq(cq);
    ibv_close_device(ctx);
  }});
}

// rdma-core's inline verbs go through the context: rdma-core's verbs_context is in front of it
// (abi_compat says so) with the card's operations; ibv_query_device_ex reports on-demand
// paging; an older program's smaller ibv_port_attr gets its prefix only; what the card does not
// do is EOPNOTSUPP, as the return value or as errno with NULL.
TEST(VerbsApi, RdmaCoresInlineVerbsReachTheCardThroughTheContext) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  cl.run({[&] {
    ibv_context* ctx = open_first_device();
    ASSERT_NE(ctx, nullptr);
    verbs_context* v = verbs_get_ctx(ctx);
    ASSERT_NE(v, nullptr) << "abi_compat marks the extended context";
    EXPECT_EQ(v->sz, sizeof *v);
    EXPECT_NE(ctx->ops.post_send, nullptr);
    EXPECT_NE(ctx->ops.post_recv, nullptr);
    EXPECT_NE(ctx->ops.poll_cq, nullptr);
    EXPECT_NE(ctx->ops.req_notify_cq, nullptr);

    ibv_device_attr_ex dx{};
    ASSERT_EQ(ibv_query_device_ex(ctx, nullptr, &dx), 0);
    EXPECT_TRUE(dx.odp_caps.general_caps & IBV_ODP_SUPPORT);
    EXPECT_TRUE(dx.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE);
    EXPECT_EQ(dx.orig_attr.max_sge, kMaxSge);
    EXPECT_EQ(dx.phys_port_cnt_ex, 1u);
    ibv_query_device_ex_input in{};
    in.comp_mask = 1;
    EXPECT_EQ(ibv_query_device_ex(ctx, &in, &dx), EINVAL) << "an input it does not know";

    ibv_port_attr pa;
    std::memset(&pa, 0xAB, sizeof pa);
    ASSERT_EQ(v->query_port(ctx, 1, &pa, offsetof(ibv_port_attr, flags)), 0);
    EXPECT_EQ(pa.state, IBV_PORT_ACTIVE);
    EXPECT_EQ(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
    EXPECT_EQ(pa.flags, 0xAB) << "past the caller's length: untouched";
    EXPECT_EQ(ibv_query_port(ctx, 2, &pa), EINVAL) << "one port";

    ibv_pd* pd = ibv_alloc_pd(ctx);
    ibv_cq_init_attr_ex cq_attr{};
    cq_attr.cqe = 4;
    cq_attr.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;  // a field the card does not report
    errno = 0;
    EXPECT_EQ(ibv_create_cq_ex(ctx, &cq_attr), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    errno = 0;
    EXPECT_EQ(ibv_alloc_mw(pd, IBV_MW_TYPE_1), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    ibv_alloc_dm_attr dm{};
    dm.length = 64;
    errno = 0;
    EXPECT_EQ(ibv_alloc_dm(ctx, &dm), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    ibv_values_ex values{};
    EXPECT_EQ(ibv_query_rt_values_ex(ctx, &values), EOPNOTSUPP);
    // ibv_reg_mr_iova with the iova equal to the address is ibv_reg_mr; another is refused.
    void* buf = rnic_malloc(4096);
    ibv_mr* mr = ibv_reg_mr_iova(pd, buf, 4096, reinterpret_cast<uint64_t>(buf),
                                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(ibv_reg_mr_iova(pd, buf, 4096, 0, IBV_ACCESS_LOCAL_WRITE), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    EXPECT_EQ(ibv_dereg_mr(mr), 0);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
  }});
}

// IBV_SEND_INLINE: the bytes are taken at the post (the buffer is reused at once and needs no
// lkey: the program's own stack here), Send and RDMA Write alike; more than max_inline_data, or
// a QP created without it, is EINVAL; max_inline_data above the card's 256 B fails the QP.
TEST(VerbsApi, InlineSendsTakeTheirBytesAtThePost) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  traffic::Oob oob;
  traffic::Endpoint a, b, plain;
  traffic::EndpointConfig ec;
  ec.buf_bytes = 4096;
  ec.max_inline = 236;  // perftest's default for Sends
  std::vector<uint8_t> got;
  cl.run({[&] {
            a.open(ec);
            oob.put(1, a.info());
            const traffic::PeerInfo peer = oob.get(0);
            a.connect(peer);
            oob.get(0);  // the receive is posted
            char msg[200];
            std::memset(msg, 'A', sizeof msg);
            ibv_sge sge{reinterpret_cast<uint64_t>(msg), sizeof msg, 0};
            ibv_send_wr wr{};
            wr.opcode = IBV_WR_SEND;
            wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            std::memset(msg, 'B', sizeof msg);  // reused at once
            EXPECT_EQ(testbench::wait_one(a.cq).status, IBV_WC_SUCCESS);
            // An RDMA Write inline, 100 B at offset 1000 of the peer's buffer.
            std::memset(msg, 'C', sizeof msg);
            sge.length = 100;
            ibv_send_wr w = testbench::rdma_write_wr(2, &sge, 1, peer.addr + 1000, peer.rkey, true);
            w.send_flags |= IBV_SEND_INLINE;
            ASSERT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
            EXPECT_EQ(testbench::wait_one(a.cq).status, IBV_WC_SUCCESS);
            char big[300] = {};
            ibv_sge too{reinterpret_cast<uint64_t>(big), sizeof big, 0};
            wr.sg_list = &too;
            EXPECT_EQ(ibv_post_send(a.qps[0], &wr, &bad), EINVAL) << "more than max_inline_data";
            oob.put(1, {});
            // A QP without max_inline_data takes no inline send; one above the card's 256 B is
            // refused.
            plain.open({});
            ibv_sge one{reinterpret_cast<uint64_t>(msg), 8, 0};
            wr.sg_list = &one;
            EXPECT_EQ(ibv_post_send(plain.qps[0], &wr, &bad), EINVAL);
            ibv_qp_init_attr ia{};
            ia.send_cq = ia.recv_cq = plain.cq;
            ia.cap.max_send_wr = ia.cap.max_recv_wr = 2;
            ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
            ia.cap.max_inline_data = 257;
            ia.qp_type = IBV_QPT_RC;
            EXPECT_EQ(ibv_create_qp(plain.pd, &ia), nullptr);
            EXPECT_EQ(errno, EINVAL);
          },
          [&] {
            b.open(ec);
            oob.put(0, b.info());
            b.connect(oob.get(1));
            testbench::mem_fill(b.buf, 4096);
            ibv_sge sge{b.addr(), 4096, b.mr->lkey};
            ibv_recv_wr r{};
            r.sg_list = &sge;
            r.num_sge = 1;
            ibv_recv_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &r, &bad), 0);
            oob.put(0, {});
            const ibv_wc wc = testbench::wait_one(b.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
            EXPECT_EQ(wc.byte_len, 200u);
            oob.get(1);  // the Write is done
            got = testbench::mem_read(b.buf, 4096);
          }});
  std::vector<uint8_t> want(4096, testbench::kGuard);
  std::fill(want.begin(), want.begin() + 200, 'A');
  std::fill(want.begin() + 1000, want.begin() + 1100, 'C');
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace rnic
