// The verbs library's answers that rdma-core's examples and tools read: what the device is
// (iWARP NIC, its GUID the EUI-64 of its MAC as the GID's interface half), rdma-core's strings
// for node types, port states and events, ibv_fork_init, and the kernel's EBUSY for a PD that
// an MR or a QP still uses (docs/verbs.md).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "models/host/verbs/verbs.h"
#include "sim/cluster.h"

namespace rnic {
namespace {

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
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    ibv_context* ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
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

}  // namespace
}  // namespace rnic
