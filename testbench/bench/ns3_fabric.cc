// The bench's peer for growth with the host count (docs/performance.md, "Growth with the host
// count"): ns-3's packet-level model of the fixed-load fabric of
// scenarios/experiments/scale_fixed_load.yaml, to see how its wall time per frame grows from 64
// to 1,024 hosts on the same machine. HOSTS hosts, 8 to a leaf switch, every leaf joined to 2
// spines, 10 Gb/s point-to-point links with a 1500 B MTU; each host sends to 4 others (the scale
// experiment's peers) over TCP (1448 B segments) at 250 Mb/s each (1 Gb/s in all), for SIM_US of
// simulated time. Routes by nix-vector routing (a path found once per source and destination and
// carried in the packet: ns-3's routing for large topologies), or with `global` by global routing,
// which spreads equal-cost paths at random but looks every packet up among all of a node's routes,
// one per link of the fabric. No tracing.
//
// Prints, as JSON: the hosts, the frames the hosts' devices sent (data and ACKs), the set-up and
// run wall times (s), the run's wall time per frame (us) and the bytes received.
//
// usage: ns3_fabric HOSTS SIM_US [nix|global]
#include <ns3/applications-module.h>
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/nix-vector-routing-module.h>
#include <ns3/point-to-point-module.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace ns3;

namespace {

constexpr uint32_t kHostsPerLeaf = 8, kSpines = 2, kPeers = 4;
constexpr uint16_t kPort = 9;

uint64_t g_host_frames = 0;
void host_sent(Ptr<const Packet>) { ++g_host_frames; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: ns3_fabric HOSTS SIM_US [nix|global]\n");
    return 2;
  }
  const long hosts = std::atol(argv[1]);
  const long sim_us = std::atol(argv[2]);
  const std::string routing = argc == 4 ? argv[3] : "nix";
  if (hosts < 2 * long(kHostsPerLeaf) || hosts % kHostsPerLeaf != 0 || sim_us <= 0 ||
      (routing != "nix" && routing != "global")) {
    std::fprintf(stderr,
                 "ns3_fabric: HOSTS must be a multiple of %u, at least %u; SIM_US > 0; routing "
                 "nix or global\n",
                 kHostsPerLeaf, 2 * kHostsPerLeaf);
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const uint32_t n = uint32_t(hosts), leaves = n / kHostsPerLeaf;
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
  NodeContainer host_nodes, leaf_nodes, spine_nodes;
  host_nodes.Create(n);
  leaf_nodes.Create(leaves);
  spine_nodes.Create(kSpines);
  InternetStackHelper stack;
  Ipv4NixVectorHelper nix;
  if (routing == "nix") stack.SetRoutingHelper(nix);
  stack.Install(host_nodes);
  stack.Install(leaf_nodes);
  stack.Install(spine_nodes);
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
  p2p.SetDeviceAttribute("Mtu", UintegerValue(1500));
  p2p.SetChannelAttribute("Delay", StringValue("5ns"));
  Ipv4AddressHelper ip;
  ip.SetBase("10.0.0.0", "255.255.255.252");
  std::vector<Ipv4Address> host_addr(n);
  for (uint32_t h = 0; h < n; ++h) {
    NetDeviceContainer d = p2p.Install(host_nodes.Get(h), leaf_nodes.Get(h / kHostsPerLeaf));
    d.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&host_sent));
    host_addr[h] = ip.Assign(d).GetAddress(0);
    ip.NewNetwork();
  }
  for (uint32_t l = 0; l < leaves; ++l)
    for (uint32_t s = 0; s < kSpines; ++s) {
      ip.Assign(p2p.Install(leaf_nodes.Get(l), spine_nodes.Get(s)));
      ip.NewNetwork();
    }
  if (routing == "global") Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  // Host h's peers, as the scale experiment's: h + k * step (mod HOSTS), k = 1..kPeers.
  const uint32_t step = std::max<uint32_t>(1, n / (kPeers + 1));
  ApplicationContainer sinks;
  for (uint32_t h = 0; h < n; ++h) {
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), kPort));
    sinks.Add(sink.Install(host_nodes.Get(h)));
    for (uint32_t p = 1; p <= kPeers; ++p) {
      const uint32_t to = (h + p * step) % n;
      OnOffHelper src("ns3::TcpSocketFactory", InetSocketAddress(host_addr[to], kPort));
      src.SetAttribute("DataRate", StringValue("250Mbps"));
      src.SetAttribute("PacketSize", UintegerValue(1448));
      src.SetAttribute("OnTime", StringValue("ns3::ConstantRandomVariable[Constant=1]"));
      src.SetAttribute("OffTime", StringValue("ns3::ConstantRandomVariable[Constant=0]"));
      src.Install(host_nodes.Get(h)).Start(Seconds(0));
    }
  }
  sinks.Start(Seconds(0));
  Simulator::Stop(MicroSeconds(sim_us));
  const auto t1 = std::chrono::steady_clock::now();
  Simulator::Run();
  const auto t2 = std::chrono::steady_clock::now();
  uint64_t rx = 0;
  for (uint32_t i = 0; i < sinks.GetN(); ++i)
    rx += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
  const double setup_s = std::chrono::duration<double>(t1 - t0).count();
  const double run_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf(
      "{\"hosts\": %u, \"routing\": \"%s\", \"host_frames\": %llu, \"setup_s\": %.3f, \"run_s\": "
      "%.3f, "
      "\"wall_per_frame_us\": %.3f, \"rx_bytes\": %llu}\n",
      n, routing.c_str(), static_cast<unsigned long long>(g_host_frames), setup_s, run_s,
      g_host_frames ? run_s * 1e6 / double(g_host_frames) : 0.0,
      static_cast<unsigned long long>(rx));
  Simulator::Destroy();
  return 0;
}
