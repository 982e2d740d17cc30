// The connection manager executables' librdmacm reaches (sim/exec/cm_net.h), on its own: a
// request that waits for a late listener reaches it one latency after it could, with the
// initiator's parameters; the accept reaches the initiator one latency later while the acceptor
// is established at once; an address resolves in a round trip, an unknown one fails; a request
// that no listener takes is rejected after the wait (one latency later, the reject's way back);
// a disconnect reaches both ends.
#include "sim/exec/cm_net.h"

#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>

#include <cerrno>

#include "sim/cluster.h"

namespace rnic {
namespace {

uint64_t now_ns() { return sc_core::sc_time_stamp().value() / 1000; }

TEST(CmNet, RequestAcceptRejectAndDisconnectInManagementLatencies) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  exec::CmNet cm({10000, 1, 50});  // 10 us one way, a request waits 50 us for a listener
  const uint32_t a = default_ip(0), b = default_ip(1);
  const MacAddr mac_a = default_mac(0), mac_b = default_mac(1);
  uint64_t resolved = 0, established_a = 0, request_b = 0, established_b = 0, rejected = 0;
  uint64_t disconnected_a = 0, disconnected_b = 0;
  exec::CmEvent req;
  cl.run({[&] {
            const int64_t ch = cm.create_channel();
            const int64_t id = cm.create_id(ch, a, mac_a);
            exec::CmEvent e;
            // An address no host has: ADDR_ERROR at once.
            ASSERT_EQ(cm.resolve_addr(id, 0x0A0000FFu, 7000, false, {}), 0);
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            EXPECT_EQ(e.type, RDMA_CM_EVENT_ADDR_ERROR);
            const int64_t c = cm.create_id(ch, a, mac_a);
            ASSERT_EQ(cm.resolve_addr(c, b, 7000, true, mac_b), 0);
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            EXPECT_EQ(e.type, RDMA_CM_EVENT_ADDR_RESOLVED);
            resolved = now_ns();
            ASSERT_EQ(cm.resolve_route(c), 0);
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            EXPECT_EQ(e.type, RDMA_CM_EVENT_ROUTE_RESOLVED);
            EXPECT_EQ(cm.peer_mac(c), mac_b);
            exec::CmParam p;
            p.private_data = {1, 2, 3};
            p.responder_resources = 4;
            p.initiator_depth = 2;
            p.qpn = 17;
            ASSERT_EQ(cm.connect(c, p), 0);  // at 20 us; node1 listens at 30 us
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            EXPECT_EQ(e.type, RDMA_CM_EVENT_ESTABLISHED);
            EXPECT_EQ(e.id, c);
            EXPECT_EQ(e.param.qpn, 33u) << "the acceptor's QP number";
            EXPECT_EQ(e.param.private_data, std::vector<uint8_t>{9});
            established_a = now_ns();
            // Port 7001: nobody listens; rejected once the 50 us wait is over.
            const int64_t r = cm.create_id(ch, a, mac_a);
            ASSERT_EQ(cm.resolve_addr(r, b, 7001, true, mac_b), 0);
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            ASSERT_EQ(cm.resolve_route(r), 0);
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            const uint64_t t0 = now_ns();
            ASSERT_EQ(cm.connect(r, p), 0);
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            EXPECT_EQ(e.type, RDMA_CM_EVENT_REJECTED);
            EXPECT_EQ(e.status, -ECONNREFUSED);
            rejected = now_ns() - t0;
            ASSERT_EQ(cm.disconnect(c), 0);
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            EXPECT_EQ(e.type, RDMA_CM_EVENT_DISCONNECTED);
            disconnected_a = now_ns();
          },
          [&] {
            sc_core::wait(sc_core::sc_time(30, sc_core::SC_US));
            const int64_t ch = cm.create_channel();
            const int64_t l = cm.create_id(ch, b, mac_b);
            ASSERT_EQ(cm.bind(l, 0, 7000), 0);
            ASSERT_EQ(cm.listen(l), 0);
            ASSERT_EQ(cm.get_event(ch, &req), 0);
            request_b = now_ns();
            EXPECT_EQ(req.type, RDMA_CM_EVENT_CONNECT_REQUEST);
            EXPECT_EQ(req.listen_id, l);
            EXPECT_EQ(cm.peer_mac(req.id), mac_a);
            EXPECT_EQ(cm.request_qpn(req.id), 17u);
            exec::CmParam p;
            p.private_data = {9};
            p.qpn = 33;
            ASSERT_EQ(cm.accept(req.id, p), 0);
            exec::CmEvent e;
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            EXPECT_EQ(e.type, RDMA_CM_EVENT_ESTABLISHED);
            established_b = now_ns();
            ASSERT_EQ(cm.get_event(ch, &e), 0);
            EXPECT_EQ(e.type, RDMA_CM_EVENT_DISCONNECTED);
            disconnected_b = now_ns();
          }});
  EXPECT_EQ(resolved, 20000u) << "ARP: a round trip";
  EXPECT_EQ(request_b, 40000u) << "the listener came at 30 us; the request one latency later";
  EXPECT_EQ(req.param.private_data, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(req.param.responder_resources, 4);
  EXPECT_EQ(req.param.initiator_depth, 2);
  EXPECT_EQ(established_b, 40000u) << "the acceptor: at its accept";
  EXPECT_EQ(established_a, 50000u) << "the initiator: the reply one latency later";
  EXPECT_EQ(rejected, 50000u + 10000u) << "the wait, then the reject's way back";
  EXPECT_EQ(disconnected_b - disconnected_a, 10000u);
}

}  // namespace
}  // namespace rnic
