// Random DDP segments for the ddp_rx_parse benches (the pin tests and the RTL lockstep): every
// header outcome the block has. Kinds, one in twelve each: a bad DDP version, a bad RDMAP
// version, an unknown opcode, the T bit wrong, the QN of an untagged opcode wrong, a Read
// Request cut inside its 28 bytes, a segment cut anywhere, one too short for its header; good
// segments with reserved control bits set (ignored), Read Requests with bytes after their 28;
// and two kinds of plain good segments. Payloads up to 1,500 bytes.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "models/rnic/ddp/ddp_rdmap.h"

namespace rnic::tb {

inline std::vector<uint8_t> random_ddp_segment(std::mt19937_64& rng) {
  using rdmap::Opcode;
  rdmap::Segment s;
  const int kind = int(rng() % 12);
  const Opcode ops[] = {
      Opcode::kWrite,          Opcode::kReadRequest, Opcode::kReadResponse,     Opcode::kSend,
      Opcode::kSendInvalidate, Opcode::kSendSe,      Opcode::kSendSeInvalidate, Opcode::kTerminate};
  const Opcode op = kind == 5 || kind == 9 ? Opcode::kReadRequest : ops[rng() % 8];
  s.opcode = uint8_t(op);
  s.tagged = rdmap::is_tagged(op);
  s.last = rng() % 2;
  s.stag = uint32_t(rng());
  s.to = rng();
  s.inv_stag = uint32_t(rng());
  s.qn = rdmap::queue_of(op);
  s.msn = uint32_t(rng());
  s.mo = uint32_t(rng());
  if (kind == 0) s.ddp_version = uint8_t(rng() % 4);
  if (kind == 1) s.rdmap_version = uint8_t(rng() % 4);
  if (kind == 2) s.opcode = uint8_t(rng() % 16);
  if (kind == 3) s.tagged = !s.tagged;
  if (kind == 4 && !s.tagged) s.qn = uint32_t(rng() % 5);
  std::vector<uint8_t> d(s.header_bytes());
  rdmap::encode(s, d.data());
  if (kind == 8) d[0] |= uint8_t(rng() & rdmap::kDdpReserved);  // reserved bits: ignored
  size_t payload = rng() % 3 ? rng() % 200 : rng() % 1500;
  if (op == Opcode::kReadRequest) {
    rdmap::ReadRequest rr{uint32_t(rng()), rng(), uint32_t(rng()), uint32_t(rng()), rng()};
    std::vector<uint8_t> p(rdmap::kReadRequestBytes);
    rdmap::encode(rr, p.data());
    d.insert(d.end(), p.begin(), p.end());
    payload = kind == 9 ? 1 + rng() % 40 : 0;  // bytes after the 28
  }
  for (size_t i = 0; i < payload; ++i) d.push_back(uint8_t(rng()));
  if (kind == 5) d.resize(d.size() - rng() % 28);     // a Read Request cut inside its payload
  if (kind == 6) d.resize(rng() % (d.size() + 1));    // cut anywhere
  if (kind == 7) d.resize(rng() % s.header_bytes());  // too short for its header
  return d;
}

}  // namespace rnic::tb
