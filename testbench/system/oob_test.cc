// The traffic generators' out-of-band exchange (traffic::Oob) on the management network's model
// (docs/decisions.md, "Programs run as executables"): a put reaches the receiver one
// host.mgmt_latency_ns and its bytes at host.mgmt_gbps later, behind what the same host sent
// before; puts that arrive at one time are taken in their senders' MAC order. The programs'
// board (rnic_oob_put / rnic_oob_get) on the same model: a key put again is seen from the new
// put's arrival, the old value until then; puts of one key that arrive together are ordered by
// their senders' MACs, so the order the processes ran in (or the rank each ran on) decides
// nothing.
#include <gtest/gtest.h>

#include <string>
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

std::string board_get(const char* key) {
  char v[16] = {};
  const size_t n = rnic_oob_get(key, v, sizeof v);
  return std::string(v, n);
}

// h0 puts "a" (1 byte: 8 ns at 1 Gb/s) at 0 and "bb" at 1,000 ns; a get at 10,500 ns sees "a"
// (the second arrives at 1,000 + 16 + 10,000 ns = 11,016 ns) and one at 11,016 ns sees "bb".
TEST(OobBoard, AKeyPutAgainIsSeenFromTheNewPutsArrivalTheOldValueUntilThen) {
  const SystemConfig cfg = config();
  StatRegistry stats;
  Cluster cl(cfg, stats);
  std::vector<std::string> seen;
  std::vector<uint64_t> at;
  cl.run({[&] {
            rnic_oob_put("k", "a", 1);
            rnic_spend_ns(1000);
            rnic_oob_put("k", "bb", 2);
          },
          [&] {
            seen.push_back(board_get("k"));
            at.push_back(now_ns());
            rnic_spend_ns(10500 - now_ns());
            seen.push_back(board_get("k"));
            rnic_spend_ns(516);
            seen.push_back(board_get("k"));
            at.push_back(now_ns());
          }});
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "a", "bb"}));
  EXPECT_EQ(at, (std::vector<uint64_t>{10008, 11016}));
}

// h1 puts "1" at 0, h0 puts "0" 8 ns later with no bytes: both arrive at 10,008 ns. h1's (the
// higher MAC) is the one seen, although h0's was put last.
TEST(OobBoard, PutsOfOneKeyArrivingTogetherAreOrderedByTheirSendersMacs) {
  const SystemConfig cfg = config();
  const Topology topo = leaf_spine(cfg, 3, 3, 1);
  StatRegistry stats;
  Cluster cl(topo, cfg, stats);
  std::string seen;
  uint64_t at = 0;
  cl.run({[&] {
            rnic_spend_ns(8);
            rnic_oob_put("k", "0", 0);
          },
          [&] { rnic_oob_put("k", "1", 1); },
          [&] {
            rnic_spend_ns(10008);
            seen = board_get("k");
            at = now_ns();
          }});
  EXPECT_EQ(seen, "1");
  EXPECT_EQ(at, 10008u);
}

}  // namespace
}  // namespace rnic
