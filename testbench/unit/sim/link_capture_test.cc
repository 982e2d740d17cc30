// Link captures read back with libpcap: nanosecond timestamps at each frame's first bit, the
// frames as sent, the FCS kept (wire order) only when asked, same-time frames by sending end.
#include "sim/link_capture.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <filesystem>

#include "models/eth/eth_mac.h"
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

// One link with a capture of it in a fresh folder.
struct Captured {
  std::filesystem::path dir;
  EthMacParams cfg;
  StatRegistry stats;
  eth::EthMac a{"a", cfg, stats}, b{"b", cfg, stats};
  eth::EthLink link{"eth", LinkParams{}, a, b, stats};
  std::unique_ptr<PcapWriter> writer;
  explicit Captured(bool keep_fcs)
      : dir(std::filesystem::temp_directory_path() /
            (keep_fcs ? "rnicsim_cap_fcs" : "rnicsim_cap")) {
    std::filesystem::create_directories(dir);
    writer = capture_link(link, (dir / "link.pcap").string(), keep_fcs);
  }
  // Simulates, closes the capture and reads it back.
  std::vector<Packet> run() {
    sc_core::sc_start();
    writer.reset();
    auto pk = read_pcap((dir / "link.pcap").string());
    std::filesystem::remove_all(dir);
    return pk;
  }
};

TEST(LinkCapture, TimestampsFramesAndFcs) {
  Captured c(false);
  std::vector<uint8_t> f1(100, 0x11), f2(1514, 0x22);
  c.a.send(f1);
  c.b.send(f2);
  auto pk = c.run();
  ASSERT_EQ(pk.size(), 2u);
  // Both leave at (ceil(L / 16) - 1 + 2) cycles of 4 ns: 100 B -> 7 beats, 1514 B -> 95.
  EXPECT_EQ(pk[0].ns, (6u + 2) * 4);
  EXPECT_EQ(pk[0].bytes, f1);
  EXPECT_EQ(pk[1].ns, (94u + 2) * 4);
  EXPECT_EQ(pk[1].bytes, f2);
}

TEST(LinkCapture, KeepsTheFcsInWireOrderWhenAsked) {
  Captured c(true);
  c.a.send(std::vector<uint8_t>(60, 0x33));
  auto pk = c.run();
  ASSERT_EQ(pk.size(), 1u);
  ASSERT_EQ(pk[0].bytes.size(), 64u);
  EXPECT_TRUE(eth::fcs_ok(pk[0].bytes.data(), pk[0].bytes.size()));
}

// Frames that leave both ends at one time are written end 0's first, whichever MAC ran first:
// b (end 1) is handed its frame before a (end 0), both leave at 32 ns.
TEST(LinkCapture, SameTimeFramesFromBothEndsGoEndZeroFirst) {
  Captured c(false);
  std::vector<uint8_t> fa(100, 0xAA), fb(100, 0xBB);
  c.b.send(fb);
  c.a.send(fa);
  auto pk = c.run();
  ASSERT_EQ(pk.size(), 2u);
  EXPECT_EQ(pk[0].ns, pk[1].ns);
  EXPECT_EQ(pk[0].bytes, fa) << "end 0's frame first";
  EXPECT_EQ(pk[1].bytes, fb);
}

}  // namespace
}  // namespace rnic
