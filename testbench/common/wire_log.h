// A protocol checker's view of one Ethernet link: every frame as it goes on the wire, decoded
// as WIRE.md frames it (Ethernet, EFE header, DDP segment), for system tests that check what
// was sent. An MPA/TCP card's frames (docs/transport.md) are decoded too: a TCP segment that
// carries an FPDU (one per segment) is a DATA frame whose DDP segment is the FPDU's ULPDU and
// whose destination QPN is its destination port less 0x8000; a retransmitted one is not
// counted again; handshakes, MPA start frames and pure ACKs are not DATA frames. With
// RNICSIM_CAPTURE_DIR set in the environment it also writes the link to <dir>/<name>.pcap (the
// capture check runs the shipped dissector over those files).
#pragma once

#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/efe/efe_header.h"
#include "models/eth/eth_link.h"
#include "models/rnic/ddp/ddp_rdmap.h"
#include "models/tcp/ip_tcp.h"
#include "models/tcp/mpa.h"
#include "sim/pcap_writer.h"

namespace rnic::testbench {

struct WireFrame {
  uint64_t t_ps = 0;  // first bit on the wire
  eth::Header eth;
  bool efe_ok = false;
  efe::Header efe;
  std::vector<uint8_t> ddp;  // DATA frames: the DDP segment
  rdmap::Segment seg;        // DATA frames: its header (seg_ok)
  bool seg_ok = false;

  bool data() const { return efe_ok && efe.type == efe::Type::kData; }
  bool from(const eth::Mac& m) const { return eth.src == m; }
  uint8_t opcode() const { return seg.opcode; }
};

class WireLog {
 public:
  WireLog(eth::EthLink& link, const std::string& name) {
    if (const char* dir = std::getenv("RNICSIM_CAPTURE_DIR"))
      pcap_ = std::make_unique<PcapWriter>(std::string(dir) + "/" + name + ".pcap", false);
    link.add_wire_tap([this](uint64_t t, const eth::EthLink::Frame& f, const uint8_t*, int) {
      if (pcap_) pcap_->write(t, f.data(), f.size());
      WireFrame w;
      w.t_ps = t;
      if (!eth::parse_header(f.data(), f.size(), &w.eth)) {
        frames.push_back(std::move(w));
        return;
      }
      const uint8_t* p = f.data() + eth::kHeaderBytes;
      const size_t avail = f.size() - eth::kHeaderBytes;
      if (w.eth.ethertype == tcp::kEtherTypeIpv4) {
        fpdu(p, avail, &w);
        frames.push_back(std::move(w));
        return;
      }
      w.efe_ok = w.eth.ethertype == eth::kEtherTypeEfe &&
                 efe::decode(p, avail, &w.efe) == efe::ParseError::kOk;
      if (w.data()) {
        w.ddp.assign(p + efe::kHeaderBytes, p + efe::kHeaderBytes + w.efe.length);
        w.seg_ok = rdmap::decode(w.ddp.data(), w.ddp.size(), &w.seg);
      }
      frames.push_back(std::move(w));
    });
  }
  ~WireLog() {
    if (pcap_) pcap_->flush();
  }

  // DATA frames from `src` to QP `dst_qpn`, in wire order.
  std::vector<const WireFrame*> data(const eth::Mac& src, uint32_t dst_qpn) const {
    std::vector<const WireFrame*> v;
    for (const WireFrame& f : frames)
      if (f.data() && f.from(src) && f.efe.dst_qpn == dst_qpn) v.push_back(&f);
    return v;
  }
  std::vector<const WireFrame*> with_opcode(rdmap::Opcode op) const {
    std::vector<const WireFrame*> v;
    for (const WireFrame& f : frames)
      if (f.data() && f.seg_ok && f.opcode() == uint8_t(op)) v.push_back(&f);
    return v;
  }

  std::vector<WireFrame> frames;

 private:
  // An IPv4/TCP frame: a DATA frame when it carries an FPDU not seen before.
  void fpdu(const uint8_t* p, size_t avail, WireFrame* w) {
    tcp::Ipv4Header ip;
    tcp::TcpHeader th;
    size_t off = 0;
    if (tcp::decode_ipv4(p, avail, &ip) != tcp::Ipv4Error::kOk) return;
    const uint8_t* t = p + tcp::kIpv4HeaderBytes;
    const size_t tl = ip.total_length - tcp::kIpv4HeaderBytes;
    if (tcp::decode_tcp(t, tl, ip.src, ip.dst, &th, &off) != tcp::TcpError::kOk || off >= tl)
      return;
    const uint8_t* pl = t + off;
    const size_t n = tl - off;
    if (n >= mpa::kKeyBytes && std::string(reinterpret_cast<const char*>(pl), 7) == "MPA ID ")
      return;  // a start frame
    size_t ulpdu = 0, used = 0;
    if (mpa::parse_fpdu(pl, n, &ulpdu, &used) != mpa::FpduError::kOk) return;
    if (!seen_.insert({ip.src, th.sport, th.seq}).second) return;  // a retransmission
    w->efe_ok = true;
    w->efe.type = efe::Type::kData;
    w->efe.dst_qpn = uint32_t(th.dport) - 0x8000;
    w->efe.length = uint16_t(ulpdu);
    w->ddp.assign(pl + mpa::kLengthBytes, pl + mpa::kLengthBytes + ulpdu);
    w->seg_ok = rdmap::decode(w->ddp.data(), w->ddp.size(), &w->seg);
  }

  std::set<std::tuple<uint32_t, uint16_t, uint32_t>> seen_;  // (source IP, port, sequence)
  std::unique_ptr<PcapWriter> pcap_;
};

}  // namespace rnic::testbench
