// Link captures read back with libpcap: nanosecond timestamps at each frame's first bit, the
// frames as sent, the FCS kept (wire order) only when asked.
#include "sim/link_capture.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <filesystem>

#include "models/eth/ethernet.h"

namespace rnic {
namespace {

struct Packet {
  uint64_t ns;
  std::vector<uint8_t> bytes;
};

std::vector<Packet> read_pcap(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  EXPECT_NE(p, nullptr) << err;
  std::vector<Packet> out;
  if (!p) return out;
  EXPECT_EQ(pcap_datalink(p), DLT_EN10MB);
  pcap_pkthdr* h;
  const u_char* d;
  while (pcap_next_ex(p, &h, &d) == 1)
    out.push_back(
        {uint64_t(h->ts.tv_sec) * 1000000000ull + uint64_t(h->ts.tv_usec), {d, d + h->caplen}});
  pcap_close(p);
  return out;
}

TEST(LinkCapture, TimestampsFramesAndFcs) {
  const auto dir = std::filesystem::temp_directory_path() / "rnicsim_link_capture";
  std::filesystem::create_directories(dir);
  SystemConfig cfg;
  StatRegistry stats;
  eth::EthLink link("eth", cfg, stats);
  auto plain = capture_link(link, (dir / "plain.pcap").string(), false);
  std::vector<uint8_t> f1(100, 0x11), f2(1514, 0x22);
  link.send(0, f1);
  link.send(1, f2);
  sc_core::sc_start();
  plain.reset();  // flush and close
  auto pk = read_pcap((dir / "plain.pcap").string());
  ASSERT_EQ(pk.size(), 2u);
  // Both leave at (ceil(L / 16) - 1 + 2) cycles of 4 ns: 100 B -> 7 beats, 1514 B -> 95.
  EXPECT_EQ(pk[0].ns, (6u + 2) * 4);
  EXPECT_EQ(pk[0].bytes, f1);
  EXPECT_EQ(pk[1].ns, (94u + 2) * 4);
  EXPECT_EQ(pk[1].bytes, f2);
  std::filesystem::remove_all(dir);
}

TEST(LinkCapture, KeepsTheFcsInWireOrderWhenAsked) {
  const auto dir = std::filesystem::temp_directory_path() / "rnicsim_link_capture_fcs";
  std::filesystem::create_directories(dir);
  SystemConfig cfg;
  StatRegistry stats;
  eth::EthLink link("eth", cfg, stats);
  auto w = capture_link(link, (dir / "fcs.pcap").string(), true);
  link.send(0, std::vector<uint8_t>(60, 0x33));
  sc_core::sc_start();
  w.reset();
  auto pk = read_pcap((dir / "fcs.pcap").string());
  ASSERT_EQ(pk.size(), 1u);
  ASSERT_EQ(pk[0].bytes.size(), 64u);
  EXPECT_TRUE(eth::fcs_ok(pk[0].bytes.data(), pk[0].bytes.size()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rnic
