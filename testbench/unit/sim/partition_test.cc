// How a topology is split over ranks (sim/partition.h): a leaf goes with its hosts, the groups
// balance the hosts, spines spread, pins win, and what cannot be split is refused.
#include "sim/partition.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "sim/cluster.h"
#include "sim/config.h"

namespace rnic {
namespace {

constexpr uint64_t kMgmtPs = 15'000'000;

SystemConfig config() { return preset_config("rnic-10g", "test"); }

TEST(Partition, ALeafGoesWithItsHostsAndTheHostsBalance) {
  const Topology t = leaf_spine(config(), 64, 8, 2);  // 8 leaves, 2 spines
  const Partition p = partition_topology(t, 2, {}, kMgmtPs);
  EXPECT_EQ(p.hosts_per_rank(), (std::vector<int>{32, 32}));
  for (size_t i = 0; i < 64; ++i)
    EXPECT_EQ(p.host_rank[i], p.switch_rank[i / 8]) << "h" << i << " with its leaf";
  EXPECT_NE(p.switch_rank[8], p.switch_rank[9]) << "one spine each";
  // Every leaf-spine link to the other rank's spine crosses; no host link does.
  for (int i : p.crossing) EXPECT_GE(i, 64);
  EXPECT_EQ(p.crossing.size(), 8u);
  EXPECT_EQ(p.lookahead_ps, 5000u + 72 * 800 + 300'000)
      << "the links' 5 ns, the shortest frame at 10 Gb/s and the far switch's latency, below the "
         "management network's 15 us";
}

TEST(Partition, UnevenGroupsGoLargestFirstToTheLeastLoadedRank) {
  const Topology t = leaf_spine(config(), 20, 8, 1);  // leaves of 8, 8 and 4 hosts
  const Partition p = partition_topology(t, 2, {}, kMgmtPs);
  EXPECT_EQ(p.hosts_per_rank(), (std::vector<int>{12, 8}));
  EXPECT_EQ(p.switch_rank[0], 0);
  EXPECT_EQ(p.switch_rank[1], 1);
  EXPECT_EQ(p.switch_rank[2], 0);
}

TEST(Partition, OneRankHasEverythingAndNothingCrosses) {
  const Topology t = leaf_spine(config(), 16, 8, 2);
  const Partition p = partition_topology(t, 1, {}, kMgmtPs);
  EXPECT_TRUE(p.crossing.empty());
  EXPECT_EQ(p.lookahead_ps, UINT64_MAX);
}

// Hosts joined by a link stay together, unless that leaves a rank without a host.
TEST(Partition, HostsOnOneLinkSplitOnlyWhereARankWouldHaveNone) {
  const Topology t = two_hosts(config());
  const Partition p = partition_topology(t, 2, {}, kMgmtPs);
  EXPECT_EQ(p.host_rank, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.crossing, (std::vector<int>{0}));
  EXPECT_THROW(partition_topology(t, 3, {}, kMgmtPs), InputError) << "two hosts, three ranks";

  Topology four = two_hosts(config());  // two pairs, each on a link of its own
  four.hosts.push_back(four.hosts[0]);
  four.hosts.push_back(four.hosts[1]);
  four.hosts[2].name = "node2";
  four.hosts[2].mac = default_mac(2);
  four.hosts[3].name = "node3";
  four.hosts[3].mac = default_mac(3);
  four.links.push_back(four.links[0]);
  four.links[1].name = "l1";
  four.links[1].a = 2;
  four.links[1].b = 3;
  const Partition q = partition_topology(four, 2, {}, kMgmtPs);
  EXPECT_EQ(q.host_rank[0], q.host_rank[1]) << "a pair stays together";
  EXPECT_EQ(q.host_rank[2], q.host_rank[3]);
  EXPECT_NE(q.host_rank[0], q.host_rank[2]);
  EXPECT_TRUE(q.crossing.empty());
}

TEST(Partition, PinsPlaceHostsAndSwitchesAndASwitchTakesItsHosts) {
  const Topology t = two_hosts(config());
  const Partition p = partition_topology(t, 2, {"node0=1"}, kMgmtPs);
  EXPECT_EQ(p.host_rank, (std::vector<int>{1, 0}));
  EXPECT_EQ(p.crossing, (std::vector<int>{0}));

  const Topology ls = leaf_spine(config(), 16, 8, 1);
  const Partition q = partition_topology(ls, 2, {"leaf0=1", "h15=1"}, kMgmtPs);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(q.host_rank[i], 1) << "h" << i << " follows leaf0";
  EXPECT_EQ(q.host_rank[15], 1);
  for (size_t i = 8; i < 15; ++i) EXPECT_EQ(q.host_rank[i], 0);
}

TEST(Partition, TheLookaheadIsTheSmallestCrossingLinksOrTheManagementLatency) {
  Topology t = leaf_spine(config(), 16, 8, 1);
  for (LinkSpec& l : t.links) l.params.prop_ns = 2000;
  t.links[16].params.prop_ns = 700;  // leaf0_spine0
  t.links[17].params.prop_ns = 900;  // leaf1_spine0
  const Partition p = partition_topology(t, 2, {"spine0=1"}, kMgmtPs);
  EXPECT_EQ(p.lookahead_ps, 700'000u + 72 * 800 + 300'000);
  EXPECT_EQ(partition_topology(t, 2, {"spine0=1"}, 500'000).lookahead_ps, 500'000u);
  // A cut-through switch at either end acts its latency after the preamble and header.
  for (SwitchSpec& sw : t.switches) sw.cfg.mode = "cut_through";
  t.switches[2].cfg.latency_ns = 10;  // spine0
  EXPECT_EQ(partition_topology(t, 2, {"spine0=1"}, kMgmtPs).lookahead_ps,
            700'000u + 22 * 800 + 10'000);
}

// A waveform of crc32's RTL: a host's MAC takes a frame's beats from its first bit, so a crossing
// link with a host at an end is ahead by its propagation delay alone; switch-to-switch links keep
// theirs.
TEST(Partition, AHostThatActsFromTheFirstBitLeavesThePropagationDelay) {
  Topology t = leaf_spine(config(), 16, 8, 1);
  for (LinkSpec& l : t.links) l.params.prop_ns = 2000;
  for (LinkSpec& l : t.links)
    if (l.sw_a < 0 || l.sw_b < 0) l.params.prop_ns = 300;  // a host's
  EXPECT_EQ(partition_topology(t, 2, {"spine0=1"}, kMgmtPs, true).lookahead_ps,
            2'000'000u + 72 * 800 + 300'000)
      << "only switches at the crossing links' ends";
  EXPECT_EQ(partition_topology(t, 2, {"h0=1", "leaf0=0"}, kMgmtPs, true).lookahead_ps, 300'000u)
      << "h0's link crosses";
  EXPECT_EQ(partition_topology(t, 2, {"h0=1", "leaf0=0"}, kMgmtPs, false).lookahead_ps,
            300'000u + 72 * 800);
}

// One switch with every host (an incast), or fewer leaves than ranks: the hosts go alone, in
// turn, and the switches as spines do.
TEST(Partition, ASwitchsHostsSplitWhereARankWouldHaveNone) {
  const Topology star = leaf_spine(config(), 9, 9, 1);
  const Partition p = partition_topology(star, 2, {}, kMgmtPs);
  EXPECT_EQ(p.hosts_per_rank(), (std::vector<int>{5, 4}));
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(p.host_rank[i], int(i % 2)) << "h" << i;
  EXPECT_EQ(p.switch_rank[0], 0);
  EXPECT_EQ(p.crossing.size(), 4u) << "the links of rank 1's hosts";
  const Partition q = partition_topology(leaf_spine(config(), 16, 8, 1), 3, {}, kMgmtPs);
  EXPECT_EQ(q.hosts_per_rank(), (std::vector<int>{6, 5, 5})) << "2 leaves, 3 ranks";
  const Partition kept = partition_topology(leaf_spine(config(), 16, 8, 1), 2, {}, kMgmtPs);
  for (size_t i = 0; i < 16; ++i)
    EXPECT_EQ(kept.host_rank[i], kept.switch_rank[i / 8]) << "2 leaves, 2 ranks: kept whole";
}

// A store-and-forward switch queues a frame from another switch a latency after its last bit,
// unless the frame could act sooner: a PAUSE of the sender's, a frame the link corrupted, or
// one the far switch has no route for. Each direction holds for its own far switch's latency.
TEST(Partition, AFarSwitchThatCanOnlyQueueAFrameHoldsItForItsLatency) {
  Topology t = leaf_spine(config(), 16, 8, 1);  // links 16 (leaf0_spine0) and 17: a leaf, b spine
  t.switches[0].cfg.latency_ns = 400;           // leaf0
  t.switches[2].cfg.latency_ns = 200;           // spine0
  const auto routes = t.routes();
  EXPECT_EQ(far_hold_ps(t, 16, 0, routes), 200'000u) << "leaf0 to spine0";
  EXPECT_EQ(far_hold_ps(t, 16, 1, routes), 400'000u) << "spine0 to leaf0";
  EXPECT_EQ(far_hold_ps(t, 0, 0, routes), 0u) << "a host's MAC acts at the last bit";
  EXPECT_EQ(far_hold_ps(t, 0, 1, routes), 0u) << "a switch to a host";
  Partition p = partition_topology(t, 2, {"spine0=1"}, kMgmtPs);
  ASSERT_EQ(p.crossing, (std::vector<int>{16})) << "leaf1 goes with spine0";
  EXPECT_EQ(p.crossing_hold_ps[0], (std::array<uint64_t, 2>{200'000, 400'000}));
  EXPECT_EQ(p.crossing_send_ps[0],
            (std::array<uint64_t, 2>{5000 + 72 * 800 + 200'000, 5000 + 72 * 800 + 400'000}));
  EXPECT_EQ(p.lookahead_ps, 5000u + 72 * 800 + 200'000);

  Topology paused = t;  // leaf0 sends PAUSE frames: spine0 acts on those at their last bit
  paused.switches[0].cfg.pause = true;
  EXPECT_EQ(far_hold_ps(paused, 16, 0, routes), 0u);
  EXPECT_EQ(far_hold_ps(paused, 16, 1, routes), 400'000u);
  Topology shared = t;  // a shared buffer pauses its inputs too
  shared.switches[2].cfg.shared_buffer_bytes = 1 << 20;
  EXPECT_EQ(far_hold_ps(shared, 16, 1, routes), 0u);
  EXPECT_EQ(far_hold_ps(shared, 16, 0, routes), 200'000u);
  Topology noisy = t;  // a corrupt frame fails the far switch's FCS at its last bit
  noisy.links[16].params.ber = 1e-9;
  EXPECT_EQ(far_hold_ps(noisy, 16, 0, routes), 0u);
  EXPECT_EQ(far_hold_ps(noisy, 17, 0, routes), 200'000u) << "another link";
  Topology cut = t;  // a cut-through sender forwards a frame whatever its FCS
  cut.switches[0].cfg.mode = "cut_through";
  EXPECT_EQ(far_hold_ps(cut, 16, 0, routes), 0u);
  EXPECT_EQ(far_hold_ps(cut, 16, 1, routes), 0u) << "a cut-through receiver";
  // A spine without a route to h0 would drop, at the last bit, what leaf1 sends it for h0.
  auto gap = routes;
  gap[2][0].clear();
  EXPECT_EQ(far_hold_ps(t, 17, 0, gap), 0u) << "leaf1 routes h0 over its uplink";
  EXPECT_EQ(far_hold_ps(t, 16, 0, gap), 200'000u) << "leaf0 sends h0's frames to h0";
}

TEST(Partition, WhatCannotBeSplitIsRefused) {
  Topology t = leaf_spine(config(), 16, 8, 1);
  EXPECT_THROW(partition_topology(t, 2, {"nobody=1"}, kMgmtPs), InputError);
  EXPECT_THROW(partition_topology(t, 2, {"h0=2"}, kMgmtPs), InputError);
  EXPECT_THROW(partition_topology(t, 2, {"h0"}, kMgmtPs), InputError);
  EXPECT_THROW(partition_topology(t, 2, {"h0=x"}, kMgmtPs), InputError);
  EXPECT_THROW(partition_topology(t, 17, {}, kMgmtPs), InputError) << "16 hosts, 17 ranks";
  t.links[16].params.prop_ns = 0;
  EXPECT_THROW(partition_topology(t, 2, {"spine0=1"}, kMgmtPs), InputError)
      << "a crossing link without delay";
  EXPECT_NO_THROW(partition_topology(t, 2, {"spine0=0"}, kMgmtPs)) << "the same link, not crossing";
}

}  // namespace
}  // namespace rnic
