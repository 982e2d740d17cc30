// The traffic generators' out-of-band exchange (traffic::Oob) on the management network's model
// (docs/decisions.md, "Programs run as executables"): a put reaches the receiver one
// host.mgmt_latency_ns and its bytes at host.mgmt_gbps later, behind what the same host sent
// before; puts that arrive at one time are taken in their senders' MAC order.
#include <gtest/gtest.h>

#include <vector>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"

namespace rnic {
namespace {

using traffic::Oob;
using traffic::PeerInfo;

SystemConfig config() {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.host.mgmt_latency_ns = 10000;
  cfg.host.mgmt_gbps = 1;
  return cfg;
}

PeerInfo info(uint64_t tag, size_t qps) {
  PeerInfo i;
  i.addr = tag;
  i.qpns.resize(qps);
  return i;
}

uint64_t now_ns() { return uint64_t(rnic_now_ns()); }

TEST(Oob, APutArrivesOneLatencyAndItsBytesLaterBehindTheSendersEarlierPuts) {
  const SystemConfig cfg = config();
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  std::vector<uint64_t> at;
  ASSERT_EQ(Oob::wire_bytes(info(0, 2)), 52u);  // 44 bytes and 4 per QP: 416 ns at 1 Gb/s
  cl.run({[&] {
            rnic_spend_ns(1000);
            oob.put(1, info(1, 2));
            oob.put(1, info(2, 2));
          },
          [&] {
            for (int i = 0; i < 2; ++i) {
              EXPECT_EQ(oob.get(1).addr, uint64_t(i + 1));
              at.push_back(now_ns());
            }
          }});
  EXPECT_EQ(at, (std::vector<uint64_t>{1000 + 416 + 10000, 1000 + 2 * 416 + 10000}));
}

// h1 puts first, h0 later with fewer bytes: both arrive at 10,416 ns, and h0's (the lower MAC)
// is taken first whichever process ran first.
TEST(Oob, PutsArrivingTogetherAreTakenInTheirSendersMacOrder) {
  const SystemConfig cfg = config();
  const Topology topo = leaf_spine(cfg, 3, 3, 1);
  StatRegistry stats;
  Cluster cl(topo, cfg, stats);
  Oob oob;
  std::vector<uint64_t> from, at;
  cl.run({[&] {
            rnic_spend_ns(64);
            oob.put(2, info(0, 0));  // 44 bytes: 352 ns
          },
          [&] { oob.put(2, info(1, 2)); },  // 52 bytes: 416 ns
          [&] {
            for (int i = 0; i < 2; ++i) {
              from.push_back(oob.get(2).addr);
              at.push_back(now_ns());
            }
          }});
  EXPECT_EQ(from, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(at, (std::vector<uint64_t>{10416, 10416}));
}

}  // namespace
}  // namespace rnic
