// Writes a capture of one MPA/TCP connection built by the transport's wire code (models/tcp/):
// the TCP three-way handshake with MSS, SACK-permitted, timestamps and window scale, the MPA
// request and reply (RFC 6581 IRD/ORD), then FPDUs carrying an RDMA Write of three segments, a
// Read Request and its two Read Response segments, and a Send, each acknowledged, and the
// close. Prints one line per MPA message it wrote: "req", "rep", or the FPDU's RDMAP opcode.
// With --engine the connection is made by two TcpConnection ends (models/tcp/tcp_connection.h).
// The capture check (mpa_capture.py) runs Wireshark's own dissectors over it.
//   mpa_capture OUT.pcap
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "models/rnic/ddp/ddp_rdmap.h"
#include "models/tcp/ip_tcp.h"
#include "models/tcp/mpa.h"
#include "models/tcp/tcp_connection.h"
#include "sim/pcap_writer.h"
#include "testbench/common/tcp_pair.h"

using namespace rnic;

namespace {

struct End {
  eth::Mac mac;
  uint32_t ip;
  uint16_t port;
  uint32_t seq;  // next sequence number to send
  uint32_t ts = 1000;
};

struct Conn {
  PcapWriter pcap;
  uint64_t t_ps = 0;
  End e[2] = {{{0x02, 0, 0, 0, 0, 0x0A}, 0x0A000001, 40000, 0x10000000},
              {{0x02, 0, 0, 0, 0, 0x0B}, 0x0A000002, 4791, 0x20000000}};
  explicit Conn(const char* path) : pcap(path, false) {}

  // One segment from side s with these flags and payload.
  void send(int s, uint8_t flags, const std::vector<uint8_t>& payload, bool syn_options = false) {
    End& a = e[s];
    const End& b = e[1 - s];
    tcp::TcpHeader th;
    th.sport = a.port;
    th.dport = b.port;
    th.seq = a.seq;
    th.ack = (flags & tcp::kAck) ? b.seq : 0;
    th.flags = flags;
    th.window = syn_options ? 65535 : 2048;  // unscaled on a SYN; then in units of 2^7
    th.opt.timestamps = true;
    th.opt.ts_val = a.ts++;
    th.opt.ts_ecr = (flags & tcp::kAck) ? b.ts - 1 : 0;
    if (syn_options) {
      th.opt.mss = 1460;
      th.opt.sack_permitted = true;
      th.opt.wscale = 7;
    }
    tcp::Ipv4Header ip;
    ip.src = a.ip;
    ip.dst = b.ip;
    ip.ecn = syn_options ? tcp::kNotEct : tcp::kEct0;
    const auto f = tcp::build_frame({b.mac, a.mac, tcp::kEtherTypeIpv4}, ip, th, payload.data(),
                                    payload.size());
    pcap.write(t_ps, f.data(), f.size());
    t_ps += 1000000;
    a.seq += uint32_t(payload.size()) + ((flags & (tcp::kSyn | tcp::kFin)) ? 1 : 0);
  }

  void fpdu(int s, const rdmap::Segment& seg, const std::vector<uint8_t>& rest) {
    std::vector<uint8_t> ulpdu(seg.header_bytes());
    rdmap::encode(seg, ulpdu.data());
    ulpdu.insert(ulpdu.end(), rest.begin(), rest.end());
    std::vector<uint8_t> payload;
    mpa::append_fpdu(ulpdu.data(), ulpdu.size(), payload);
    send(s, tcp::kAck | tcp::kPsh, payload);
    send(1 - s, tcp::kAck, {});
    fmt::print("{}\n", seg.opcode);
  }
};

rdmap::Segment tagged(rdmap::Opcode op, uint32_t stag, uint64_t to, bool last) {
  rdmap::Segment s;
  s.tagged = true;
  s.last = last;
  s.opcode = uint8_t(op);
  s.stag = stag;
  s.to = to;
  return s;
}

rdmap::Segment untagged(rdmap::Opcode op, uint32_t msn) {
  rdmap::Segment s;
  s.opcode = uint8_t(op);
  s.qn = rdmap::queue_of(op);
  s.msn = msn;
  return s;
}

}  // namespace

// The same exchange made by two TcpConnection ends (models/tcp/tcp_connection.h,
// testbench/common/tcp_pair.h): every segment as it reaches the other end, 5 us after it was sent.
int engine_capture(const char* path) {
  PcapWriter pcap(path, false);
  tcp::TcpConnConfig cfg;
  tcp::TcpPair w(cfg, cfg, 0x10000000, 0x20000000);
  tcp::TcpConnection &a = w.a, &b = w.b;
  const End ea{{0x02, 0, 0, 0, 0, 0x0A}, 0x0A000001, 40000, 0};
  const End eb{{0x02, 0, 0, 0, 0, 0x0B}, 0x0A000002, 4791, 0};
  bool a_rdma = false, b_rdma = false;
  w.arrive = [&](bool to_b, const tcp::TcpConnection::Out& o, uint64_t now) {
    const End& src = to_b ? ea : eb;
    const End& dst = to_b ? eb : ea;
    tcp::TcpHeader h = o.h;
    h.sport = src.port;
    h.dport = dst.port;
    tcp::Ipv4Header ip;
    ip.src = src.ip;
    ip.dst = dst.ip;
    const auto fr = tcp::build_frame({dst.mac, src.mac, tcp::kEtherTypeIpv4}, ip, h,
                                     o.payload.data(), o.payload.size());
    pcap.write(now, fr.data(), fr.size());
    // What Wireshark will show as an MPA message: the start-up frames, then each FPDU.
    if (o.payload.empty()) return;
    bool& rdma = to_b ? a_rdma : b_rdma;
    if (!rdma)
      fmt::print("{}\n", to_b ? "req" : "rep");
    else
      fmt::print("{}\n", o.payload[3] & 0x0F);  // the RDMAP opcode after the length
    rdma = true;
  };
  auto run = [&] { w.run(); };
  a.open(0);
  b.open(0);
  run();
  if (!a.rdma_mode() || !b.rdma_mode()) return 1;
  auto seg = [](const rdmap::Segment& s, const std::vector<uint8_t>& rest) {
    std::vector<uint8_t> u(s.header_bytes());
    rdmap::encode(s, u.data());
    u.insert(u.end(), rest.begin(), rest.end());
    return u;
  };
  const size_t full = a.max_ulpdu() - rdmap::kTaggedBytes;
  uint64_t to = 0x1000;
  for (int i = 0; i < 3; ++i) {
    const size_t n = i < 2 ? full : 100;
    a.send(seg(tagged(rdmap::Opcode::kWrite, 0x00001201, to, i == 2),
               std::vector<uint8_t>(n, uint8_t(0x40 + i))));
    to += n;
  }
  a.send(seg(untagged(rdmap::Opcode::kSend, 1), std::vector<uint8_t>(61, 0x33)));
  b.send(seg(untagged(rdmap::Opcode::kSend, 1), std::vector<uint8_t>(500, 0x34)));
  run();
  a.close(w.now);
  run();
  b.close(w.now);
  run();
  return a.state() == tcp::TcpConnection::State::kDone &&
                 b.state() == tcp::TcpConnection::State::kDone
             ? 0
             : 1;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--engine") return engine_capture(argv[2]);
  if (argc != 2) {
    std::fprintf(stderr, "usage: mpa_capture [--engine] OUT.pcap\n");
    return 2;
  }
  Conn c(argv[1]);
  c.send(0, tcp::kSyn, {}, true);
  c.send(1, tcp::kSyn | tcp::kAck, {}, true);
  c.send(0, tcp::kAck, {});
  mpa::StartFrame req;
  req.ird = 16;
  req.ord = 16;
  c.send(0, tcp::kAck | tcp::kPsh, mpa::encode_start(req));
  fmt::print("req\n");
  mpa::StartFrame rep = req;
  rep.reply = true;
  c.send(1, tcp::kAck | tcp::kPsh, mpa::encode_start(rep));
  fmt::print("rep\n");
  c.send(0, tcp::kAck, {});
  // An RDMA Write of three segments: the largest payload an FPDU in a 1460-byte MSS carries with
  // the timestamps option (1448 bytes of TCP payload), then a shorter last one.
  const size_t full = mpa::max_ulpdu(1448) - rdmap::kTaggedBytes;
  uint64_t to = 0x1000;
  for (int i = 0; i < 3; ++i) {
    const size_t n = i < 2 ? full : 100;
    c.fpdu(0, tagged(rdmap::Opcode::kWrite, 0x00001201, to, i == 2),
           std::vector<uint8_t>(n, uint8_t(0x40 + i)));
    to += n;
  }
  rdmap::ReadRequest rr{0x00003401, 0x2000, uint32_t(full + 64), 0x00001201, 0x1000};
  std::vector<uint8_t> rrb(rdmap::kReadRequestBytes);
  rdmap::encode(rr, rrb.data());
  c.fpdu(0, untagged(rdmap::Opcode::kReadRequest, 1), rrb);
  c.fpdu(1, tagged(rdmap::Opcode::kReadResponse, 0x00003401, 0x2000, false),
         std::vector<uint8_t>(full, 0x51));
  c.fpdu(1, tagged(rdmap::Opcode::kReadResponse, 0x00003401, 0x2000 + full, true),
         std::vector<uint8_t>(64, 0x52));
  c.fpdu(0, untagged(rdmap::Opcode::kSend, 1), std::vector<uint8_t>(61, 0x33));  // padded
  // RFC 7306: a CmpSwap (queue 1, the MSN after the Read Request's) and its Atomic Response.
  rdmap::AtomicRequest ar;
  ar.op = uint8_t(rdmap::AtomicOp::kCmpSwap);
  ar.req_id = 2;
  ar.stag = 0x00001201;
  ar.to = 0x1008;
  ar.add_swap = 7;
  ar.add_swap_mask = ~0ull;
  ar.compare = 0;
  ar.compare_mask = ~0ull;
  std::vector<uint8_t> arb(rdmap::kAtomicRequestBytes);
  rdmap::encode(ar, arb.data());
  c.fpdu(0, untagged(rdmap::Opcode::kAtomicRequest, 2), arb);
  std::vector<uint8_t> resp(rdmap::kAtomicResponseBytes);
  rdmap::encode(rdmap::AtomicResponse{2, 0}, resp.data());
  c.fpdu(1, untagged(rdmap::Opcode::kAtomicResponse, 1), resp);
  c.send(0, tcp::kFin | tcp::kAck, {});
  c.send(1, tcp::kFin | tcp::kAck, {});
  c.send(0, tcp::kAck, {});
  return 0;
}
