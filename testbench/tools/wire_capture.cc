// Writes a capture of hand-built frames covering every RDMAP opcode, the Terminate of every
// row of WIRE.md's error table, and EFE ACK / NACK frames; prints, one per line, the opcode
// (or "ack"/"nack") of each frame and whether it is the known dissector limitation
// ("term-rr-protection"). The capture check runs tshark over it.
//   wire_capture OUT.pcap
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "models/efe/efe_header.h"
#include "models/rnic/ddp/ddp_rdmap.h"
#include "sim/pcap_writer.h"

using namespace rnic;

namespace {

const eth::Header kAtoB{{0x02, 0, 0, 0, 0, 0x0B}, {0x02, 0, 0, 0, 0, 0x0A}, eth::kEtherTypeEfe};
const eth::Header kBtoA{{0x02, 0, 0, 0, 0, 0x0A}, {0x02, 0, 0, 0, 0, 0x0B}, eth::kEtherTypeEfe};

struct Capture {
  PcapWriter pcap;
  uint64_t t_ps = 0;
  uint32_t seq[2] = {1, 1};
  explicit Capture(const char* path) : pcap(path, false) {}

  void frame(const eth::Header& eh, efe::Header h, const std::vector<uint8_t>& payload,
             const std::string& label) {
    const auto f = efe::build_frame(eh, h, payload.data(), payload.size());
    pcap.write(t_ps, f.data(), f.size());
    t_ps += 1000000;
    fmt::print("{}\n", label);
  }
  void data(const rdmap::Segment& s, const std::vector<uint8_t>& rest, const std::string& label,
            bool b_to_a = false) {
    std::vector<uint8_t> p(s.header_bytes());
    rdmap::encode(s, p.data());
    p.insert(p.end(), rest.begin(), rest.end());
    efe::Header h;
    h.seq = seq[b_to_a]++;
    h.ack = seq[!b_to_a];
    h.dst_qpn = 0x11;
    h.ts = uint32_t(t_ps / 1000);
    frame(b_to_a ? kBtoA : kAtoB, h, p, label);
  }
};

rdmap::Segment tagged(rdmap::Opcode op, uint32_t stag, uint64_t to) {
  rdmap::Segment s;
  s.tagged = true;
  s.opcode = uint8_t(op);
  s.stag = stag;
  s.to = to;
  return s;
}

rdmap::Segment untagged(rdmap::Opcode op, uint32_t msn, uint32_t mo = 0, uint32_t inv = 0) {
  rdmap::Segment s;
  s.opcode = uint8_t(op);
  s.qn = rdmap::queue_of(op);
  s.msn = msn;
  s.mo = mo;
  s.inv_stag = inv;
  return s;
}

// A Terminate (from B back to A) for an offending segment.
void terminate(Capture& c, rdmap::TermCause cause, const rdmap::Segment& bad,
               const rdmap::ReadRequest* rr, uint32_t msn) {
  rdmap::Terminate t;
  t.cause = cause;
  t.m = t.d = true;
  t.ddp_header.resize(bad.header_bytes());
  rdmap::encode(bad, t.ddp_header.data());
  t.ddp_seg_len = uint16_t(bad.header_bytes() + (rr ? rdmap::kReadRequestBytes : 64));
  if (rr) {
    t.r = true;
    t.rdmap_header.resize(rdmap::kReadRequestBytes);
    rdmap::encode(*rr, t.rdmap_header.data());
  }
  // Wireshark 4.0 sizes the terminated DDP header from the error type (1 -> 14 bytes), so an
  // RDMAP protection error on a Read Request (an 18-byte untagged header under type 1) is its
  // known limitation (WIRE.md).
  const bool limitation = rr && cause.layer == rdmap::Layer::kRdmap && cause.etype == 1;
  c.data(untagged(rdmap::Opcode::kTerminate, msn), rdmap::encode(t),
         limitation ? "7 term-rr-protection" : "7", true);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: wire_capture OUT.pcap\n");
    return 2;
  }
  Capture c(argv[1]);
  const std::vector<uint8_t> data(64, 0x5A);
  // Every opcode.
  c.data(tagged(rdmap::Opcode::kWrite, 0x00001201, 0x1000), data, "0");
  rdmap::ReadRequest rr{0x00003401, 0x2000, 4096, 0x00001201, 0x1000};
  std::vector<uint8_t> rrb(28);
  rdmap::encode(rr, rrb.data());
  c.data(untagged(rdmap::Opcode::kReadRequest, 1), rrb, "1");
  c.data(tagged(rdmap::Opcode::kReadResponse, 0x00003401, 0x2000), data, "2", true);
  c.data(untagged(rdmap::Opcode::kSend, 1), data, "3");
  c.data(untagged(rdmap::Opcode::kSendInvalidate, 2, 0, 0x00005601), data, "4");
  c.data(untagged(rdmap::Opcode::kSendSe, 3), data, "5");
  c.data(untagged(rdmap::Opcode::kSendSeInvalidate, 4, 0, 0x00005701), data, "6");
  // EFE ACK and NACK.
  efe::Header ack;
  ack.type = efe::Type::kAck;
  ack.seq = 3;
  ack.ack = 8;
  c.frame(kBtoA, ack, {}, "ack");
  ack.type = efe::Type::kNack;
  ack.ece = true;
  c.frame(kBtoA, ack, {}, "nack");
  // The Terminate of each row of WIRE.md's error table.
  const auto w = tagged(rdmap::Opcode::kWrite, 0x0000AB01, 0x1000);
  uint32_t msn = 1;
  for (uint8_t code : {0x00, 0x01, 0x02})
    terminate(c, {rdmap::Layer::kDdp, 1, code}, w, nullptr, msn++);
  terminate(c, {rdmap::Layer::kRdmap, 1, 0x02}, w, nullptr, msn++);
  const auto rq = untagged(rdmap::Opcode::kReadRequest, 2);
  for (uint8_t code : {0x00, 0x01, 0x02, 0x03})
    terminate(c, {rdmap::Layer::kRdmap, 1, code}, rq, &rr, msn++);
  const auto send = untagged(rdmap::Opcode::kSend, 5);
  terminate(c, {rdmap::Layer::kDdp, 2, 0x02}, send, nullptr, msn++);
  terminate(c, {rdmap::Layer::kDdp, 2, 0x05}, send, nullptr, msn++);
  terminate(c, {rdmap::Layer::kRdmap, 2, 0x09},
            untagged(rdmap::Opcode::kSendInvalidate, 6, 0, 0x77), nullptr, msn++);
  auto unknown = untagged(rdmap::Opcode::kSend, 7);
  unknown.opcode = 0x9;
  terminate(c, {rdmap::Layer::kRdmap, 2, 0x06}, unknown, nullptr, msn++);
  terminate(c, {rdmap::Layer::kRdmap, 2, 0x05}, send, nullptr, msn++);
  auto bad_qn = send;
  bad_qn.qn = 5;
  terminate(c, {rdmap::Layer::kDdp, 2, 0x01}, bad_qn, nullptr, msn++);
  terminate(c, {rdmap::Layer::kDdp, 2, 0x06}, send, nullptr, msn++);
  c.pcap.flush();
  return 0;
}
