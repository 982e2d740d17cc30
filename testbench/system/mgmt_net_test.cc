// The management network's timing and rules (sim/exec/mgmt_net.h): bytes readable at
// t + latency + bytes x 8 / rate, connect in one round trip, a connect that waits for a late
// listener or is refused after the wait (its reset one latency later), the end of stream behind
// the last bytes.
#include "sim/exec/mgmt_net.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "sim/cluster.h"

namespace rnic {
namespace {

uint64_t now_ns() { return sc_core::sc_time_stamp().value() / 1000; }

TEST(MgmtNet, StreamsAtLatencyAndRateAndConnectWaitsForAListener) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  exec::MgmtNet net({10000, 1, 50});  // 10 us one way, 1 Gb/s, a connect waits 50 us
  const uint32_t a = default_ip(0), b = default_ip(1);
  EXPECT_EQ(b, 0x0A000002u) << "node1 is 10.0.0.2";
  uint64_t connected_ns = 0, accepted_ns = 0, first_ns = 0, eof_ns = 0, refused = 0;
  cl.run({[&] {
            // The listener comes up 20 us late: the connect waits for it.
            const int64_t s = net.socket(a);
            const uint64_t t0 = now_ns();
            ASSERT_EQ(net.connect(s, b, 7000), 0);
            connected_ns = now_ns() - t0;
            std::vector<uint8_t> msg(1000, 7);
            ASSERT_EQ(net.send(s, msg.data(), msg.size()), 1000);
            ASSERT_EQ(net.close(s), 0);
            // Nothing ever listens on 7001: refused once the wait is over.
            const int64_t r = net.socket(a);
            const uint64_t t1 = now_ns();
            EXPECT_EQ(net.connect(r, b, 7001), -ECONNREFUSED);
            refused = now_ns() - t1;
          },
          [&] {
            sc_core::wait(sc_core::sc_time(20, sc_core::SC_US));
            const int64_t l = net.socket(b);
            ASSERT_EQ(net.bind(l, 0, 7000), 0);
            ASSERT_EQ(net.listen(l), 0);
            uint32_t ip = 0;
            uint16_t port = 0;
            const int64_t c = net.accept(l, &ip, &port, false);
            ASSERT_GE(c, 0);
            accepted_ns = now_ns();
            EXPECT_EQ(ip, a);
            uint8_t buf[2000];
            size_t got = 0;
            while (got < 1000) {
              const int64_t n = net.recv(c, buf, sizeof buf, false);
              ASSERT_GT(n, 0);
              if (got == 0) first_ns = now_ns();
              got += size_t(n);
            }
            EXPECT_EQ(net.recv(c, buf, sizeof buf, false), 0) << "end of stream";
            eof_ns = now_ns();
          }});
  EXPECT_EQ(connected_ns, 20000u + 20000u) << "the wait for the listener, then one round trip";
  EXPECT_EQ(accepted_ns, 20000u + 10000u) << "the SYN's latency after the listener came up";
  // Sent at 40 us: 1000 bytes at 1 Gb/s are 8 us on the wire, then 10 us of latency.
  EXPECT_EQ(first_ns, 40000u + 8000u + 10000u);
  EXPECT_EQ(eof_ns, first_ns) << "the close right behind the bytes";
  EXPECT_EQ(refused, 50000u + 10000u) << "refused one latency after the 50 us wait is over";
}

}  // namespace
}  // namespace rnic
