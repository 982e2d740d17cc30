// The bench's peer (docs/performance.md, "Against ns-3"): ns-3's packet-level TCP bulk flow over
// the same simulated time as an rnicsim run, to compare wall times on one machine. Two nodes, a
// point-to-point link at the preset's rate with a 1500 B MTU, TCP with 1448 B segments, one
// BulkSend flow, no tracing. Prints the simulated time, the bytes received and the goodput.
//
// usage: ns3_bulk RATE_GBPS SIM_NS
#include <ns3/applications-module.h>
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace ns3;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ns3_bulk RATE_GBPS SIM_NS\n");
    return 2;
  }
  const double gbps = std::atof(argv[1]);
  const double sim_ns = std::atof(argv[2]);
  if (gbps <= 0 || sim_ns <= 0) {
    std::fprintf(stderr, "ns3_bulk: RATE_GBPS and SIM_NS must be positive\n");
    return 2;
  }
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  NodeContainer nodes;
  nodes.Create(2);
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", StringValue(std::to_string(gbps) + "Gbps"));
  p2p.SetDeviceAttribute("Mtu", UintegerValue(1500));
  p2p.SetChannelAttribute("Delay", StringValue("5ns"));
  NetDeviceContainer devs = p2p.Install(nodes);
  InternetStackHelper stack;
  stack.Install(nodes);
  Ipv4AddressHelper ip;
  ip.SetBase("10.0.0.0", "255.255.255.0");
  Ipv4InterfaceContainer ifs = ip.Assign(devs);
  const uint16_t port = 9;
  BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
  src.SetAttribute("MaxBytes", UintegerValue(0));
  src.Install(nodes.Get(0)).Start(Seconds(0));
  PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
  ApplicationContainer sinks = sink.Install(nodes.Get(1));
  sinks.Start(Seconds(0));
  Simulator::Stop(NanoSeconds(int64_t(sim_ns)));
  Simulator::Run();
  const uint64_t rx = DynamicCast<PacketSink>(sinks.Get(0))->GetTotalRx();
  std::printf("{\"sim_ns\": %.0f, \"rx_bytes\": %llu, \"goodput_gbps\": %.4f}\n", sim_ns,
              static_cast<unsigned long long>(rx), double(rx) * 8 / sim_ns);
  Simulator::Destroy();
  return 0;
}
