#include "models/rnic/sq/sq_segmenter.h"

#include <algorithm>

#include "models/rnic/abi/codes.h"

namespace rnic {

using rdmap::Opcode;

SqSegment next_sq_segment(const Wqe& w, SqProgress& p, uint32_t max_tagged, uint32_t max_untagged) {
  SqSegment s;
  if (w.opcode == abi::kOpRdmaRead) {
    const int n = std::max<int>(w.num_sge, 1);
    const Sge g = w.num_sge ? w.sge[p.sge] : Sge{};
    uint64_t src_off = 0;
    for (int i = 0; i < p.sge; ++i) src_off += w.sge[i].length;
    s.read_request = true;
    s.first = p.sge == 0;
    s.h.tagged = false;
    s.h.opcode = uint8_t(Opcode::kReadRequest);
    s.h.qn = rdmap::kQnReadRequest;
    s.h.msn = p.read_msn++;
    s.rr = {g.lkey, g.addr, g.length, w.rkey, w.remote_addr + src_off};
    if (++p.sge >= n) {
      p.sge = 0;
      s.wqe_done = true;
    }
    return s;
  }
  if (abi::is_atomic(w.opcode)) {
    const bool cas = w.opcode == abi::kOpAtomicCmpSwp;
    s.atomic_request = true;
    s.first = true;
    s.wqe_done = true;
    s.h.tagged = false;
    s.h.opcode = uint8_t(Opcode::kAtomicRequest);
    s.h.qn = rdmap::kQnReadRequest;
    s.h.msn = p.read_msn++;
    s.ar.op = uint8_t(cas ? rdmap::AtomicOp::kCmpSwap : rdmap::AtomicOp::kFetchAdd);
    s.ar.req_id = s.h.msn;
    s.ar.stag = w.rkey;
    s.ar.to = w.remote_addr;
    s.ar.add_swap = cas ? w.swap : w.compare_add;
    s.ar.add_swap_mask = cas ? ~0ull : 0;
    s.ar.compare = cas ? w.compare_add : 0;
    s.ar.compare_mask = cas ? ~0ull : 0;
    return s;
  }
  const uint64_t total = w.total_length();
  const bool write_imm = w.opcode == abi::kOpRdmaWriteWithImm;
  const bool send_imm = w.opcode == abi::kOpSendWithImm;
  if ((write_imm && (p.imm_next || total == 0)) || (send_imm && !p.imm_sent)) {
    s.immediate = true;
    s.first = !p.imm_next;
    s.wqe_done = write_imm;
    s.h.tagged = false;
    s.h.last = true;
    const bool se = write_imm && (w.flags & abi::kWqeSolicited) != 0;
    s.h.opcode = uint8_t(se ? Opcode::kImmediateSe : Opcode::kImmediate);
    s.h.qn = rdmap::kQnSend;
    s.h.msn = p.send_msn++;
    s.imm.imm = w.imm;
    s.imm.len = uint32_t(total);
    s.imm.with_send = send_imm;
    p.imm_next = false;
    p.imm_sent = send_imm;
    return s;
  }
  const bool tagged = w.opcode == abi::kOpRdmaWrite || write_imm;
  s.first = p.off == 0;
  s.off = p.off;
  s.len = uint32_t(std::min<uint64_t>(total - p.off, tagged ? max_tagged : max_untagged));
  const bool last = p.off + s.len == total;
  s.h.tagged = tagged;
  s.h.last = last;
  if (tagged) {
    s.h.opcode = uint8_t(Opcode::kWrite);
    s.h.stag = w.rkey;
    s.h.to = w.remote_addr + p.off;
  } else {
    const bool inv = w.opcode == abi::kOpSendWithInv;
    s.first = p.off == 0 && !send_imm;
    const bool se = (w.flags & abi::kWqeSolicited) != 0;
    s.h.opcode = uint8_t(inv ? (se ? Opcode::kSendSeInvalidate : Opcode::kSendInvalidate)
                             : (se ? Opcode::kSendSe : Opcode::kSend));
    s.h.inv_stag = inv ? w.invalidate_rkey : 0;
    s.h.qn = rdmap::kQnSend;
    s.h.msn = p.send_msn;
    s.h.mo = uint32_t(p.off);
    if (last) ++p.send_msn;
  }
  p.off += s.len;
  if (last) {
    p.off = 0;
    p.imm_sent = false;
    if (write_imm)
      p.imm_next = true;  // the Immediate Data ends the WR
    else
      s.wqe_done = true;
  }
  return s;
}

}  // namespace rnic
