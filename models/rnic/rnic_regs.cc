#include "models/rnic/rnic_regs.h"

namespace rnic {

RnicRegs::RnicRegs(const CoreConfig& c) : cfg_(c), qp_(size_t(c.qps)) {}

bool RnicRegs::find(int bar, uint64_t off, uint32_t len, Reg* r) const {
  if (len == 0 || len > 8) return false;
  if (bar == 0) {
    const uint64_t base = off & ~3ull;
    if (off + len > base + 4) return false;
    uint64_t v;
    bool rd = true, wr = false;
    switch (base) {
      case reg::kId:
        v = reg::kIdValue;
        break;
      case reg::kVersion:
        v = reg::kVersionValue;
        break;
      case reg::kCapQp:
        v = uint64_t(cfg_.qps);
        break;
      case reg::kCapCq:
        v = uint64_t(cfg_.cqs);
        break;
      case reg::kCapStag:
        v = uint64_t(cfg_.stags);
        break;
      case reg::kCapPbl:
        v = uint64_t(cfg_.pbl_entries);
        break;
      case reg::kControl:
        v = control_;
        wr = true;
        break;
      case reg::kStatus:
        v = control_ & 1;
        break;
      case reg::kIntCause:
        v = int_cause_;
        wr = true;
        break;
      case reg::kIntMask:
        v = int_mask_;
        wr = true;
        break;
      case reg::kScratch:
        v = scratch_;
        wr = true;
        break;
      default:
        return false;
    }
    *r = {base, 4, rd, wr, v};
    return true;
  }
  if (bar == 2) {
    const uint64_t qp = off / reg::kQpPage, o = off % reg::kQpPage;
    if (qp >= qp_.size()) return false;
    const QpRegs& q = qp_[qp];
    const uint64_t page = qp * reg::kQpPage;
    if (o < 0x010) {
      const uint64_t base = o & ~7ull;
      if (o + len > base + 8) return false;
      *r = {page + base, 8, false, true, base == reg::kSqDoorbell ? q.sq_db : q.rq_db};
      return true;
    }
    const uint64_t base = o & ~3ull;
    if (o + len > base + 4) return false;
    if (base == reg::kCqDoorbell)
      *r = {page + base, 4, true, true, q.cq_db};
    else if (base == reg::kQpStatus)
      *r = {page + base, 4, true, false, qp & 0xFFFFFF};
    else
      return false;
    return true;
  }
  return false;
}

bool RnicRegs::reg_read(int bar, uint64_t off, uint32_t len, uint8_t* out) {
  Reg r;
  if (!find(bar, off, len, &r) || !r.readable) return false;
  for (uint32_t i = 0; i < len; ++i) out[i] = uint8_t(r.value >> (8 * (off - r.base + i)));
  return true;
}

bool RnicRegs::reg_write(int bar, uint64_t off, const uint8_t* data, uint32_t len) {
  Reg r;
  if (!find(bar, off, len, &r) || !r.writable) return false;
  uint64_t v = r.value;
  for (uint32_t i = 0; i < len; ++i) {
    const unsigned sh = unsigned(8 * (off - r.base + i));
    v = (v & ~(0xFFull << sh)) | (uint64_t(data[i]) << sh);
  }
  if (bar == 0 && r.base == reg::kIntCause) v = int_cause_ & ~v;  // write 1 to clear
  store(bar, r, v);
  return true;
}

void RnicRegs::store(int bar, const Reg& r, uint64_t v) {
  if (bar == 0) {
    switch (r.base) {
      case reg::kControl:
        control_ = uint32_t(v);
        break;
      case reg::kIntCause:
        int_cause_ = uint32_t(v);
        break;
      case reg::kIntMask:
        int_mask_ = uint32_t(v);
        break;
      case reg::kScratch:
        scratch_ = uint32_t(v);
        break;
    }
    return;
  }
  QpRegs& q = qp_[r.base / reg::kQpPage];
  switch (r.base % reg::kQpPage) {
    case reg::kSqDoorbell:
      q.sq_db = v;
      break;
    case reg::kRqDoorbell:
      q.rq_db = v;
      break;
    case reg::kCqDoorbell:
      q.cq_db = uint32_t(v);
      break;
  }
}

}  // namespace rnic
