#include "models/rnic/host_if/rnic_regs.h"

#include <cstring>

#include "models/rnic/abi/wqe.h"

namespace rnic {

RnicRegs::RnicRegs(const CoreConfig& c) : cfg_(c), qp_(size_t(c.qps)) {}

bool RnicRegs::find(int bar, uint64_t off, uint32_t len, Reg* r) const {
  if (len == 0 || len > 8) return false;
  if (bar == 0) {
    if (off >= reg::kCmdDone && off < reg::kCmdDone + 8 * reg::kCmdSlots) {
      const uint64_t base = off & ~7ull;
      if (off + len > base + 8) return false;
      *r = {base, 8, true, false, cmd_done_[(base - reg::kCmdDone) / 8]};
      return true;
    }
    if (off >= reg::kCmdQueue && off < reg::kCmdQueue + sizeof(cmd_slots_)) {
      const uint64_t base = off & ~3ull;
      if (off + len > base + 4) return false;
      uint32_t v;
      std::memcpy(&v, cmd_slots_.data() + (base - reg::kCmdQueue), 4);
      *r = {base, 4, false, true, v};
      return true;
    }
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
      case reg::kEvent:
        v = 0;  // read pops through the listener
        break;
      case reg::kMsiAddrLo:
        v = uint32_t(msi_addr_);
        wr = true;
        break;
      case reg::kMsiAddrHi:
        v = msi_addr_ >> 32;
        wr = true;
        break;
      case reg::kCmdProducer:
        v = cmd_producer_;
        wr = true;
        break;
      case reg::kCmdConsumer:
        v = cmd_consumer_;
        break;
      case reg::kFaultRingLo:
        v = uint32_t(fault_ring_);
        wr = true;
        break;
      case reg::kFaultRingHi:
        v = fault_ring_ >> 32;
        wr = true;
        break;
      case reg::kFaultProducer:
        v = fault_producer_;
        break;
      case reg::kFaultConsumer:
        v = fault_consumer_;
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
    if (o < 0x018) {
      const uint64_t base = o & ~7ull;
      if (o + len > base + 8) return false;
      const uint64_t v = base == reg::kSqDoorbell   ? q.sq_db
                         : base == reg::kRqDoorbell ? q.rq_db
                                                    : q.cq_db;
      *r = {page + base, 8, false, true, v};
      return true;
    }
    const uint64_t base = o & ~3ull;
    if (o + len > base + 4) return false;
    if (base != reg::kQpStatus) return false;
    const uint32_t state = listener_ ? listener_->qp_state(uint32_t(qp)) : 0;
    *r = {page + base, 4, true, false, (qp & 0xFFFFFF) | uint64_t(state & 0xF) << 24};
    return true;
  }
  return false;
}

bool RnicRegs::reg_read(int bar, uint64_t off, uint32_t len, uint8_t* out) {
  Reg r;
  if (!find(bar, off, len, &r) || !r.readable) return false;
  if (bar == 0 && r.base == reg::kEvent && listener_) r.value = listener_->pop_event();
  for (uint32_t i = 0; i < len; ++i) out[i] = uint8_t(r.value >> (8 * (off - r.base + i)));
  return true;
}

const uint8_t* RnicRegs::window_slot(uint32_t qp, bool rq, uint32_t slot) {
  std::vector<uint8_t>& w = windows_[qp];
  if (w.empty()) w.resize(2 * reg::kWindowSlots * kWqeBytes);
  return w.data() + ((rq ? reg::kWindowSlots : 0) + slot % reg::kWindowSlots) * kWqeBytes;
}

// The WQE windows and the command queue take writes of any length inside them (the host writes
// whole 64-byte lines there).
bool RnicRegs::window_write(uint64_t off, const uint8_t* data, uint32_t len) {
  const uint64_t qp = off / reg::kQpPage, o = off % reg::kQpPage;
  const uint64_t span = reg::kWindowSlots * kWqeBytes;
  if (qp >= qp_.size()) return false;
  for (bool rq : {false, true}) {
    const uint64_t base = rq ? reg::kRqWindow : reg::kSqWindow;
    if (o >= base && o + len <= base + span) {
      uint8_t* w = const_cast<uint8_t*>(window_slot(uint32_t(qp), rq, 0));
      std::memcpy(w + (o - base), data, len);
      return true;
    }
  }
  return false;
}

bool RnicRegs::reg_write(int bar, uint64_t off, const uint8_t* data, uint32_t len) {
  if (bar == 2 && off % reg::kQpPage >= reg::kSqWindow) return window_write(off, data, len);
  if (bar == 0 && off >= reg::kCmdQueue && off + len <= reg::kCmdQueue + sizeof(cmd_slots_)) {
    std::memcpy(cmd_slots_.data() + (off - reg::kCmdQueue), data, len);
    return true;
  }
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
      case reg::kMsiAddrLo:
        msi_addr_ = (msi_addr_ & ~0xFFFFFFFFull) | uint32_t(v);
        break;
      case reg::kMsiAddrHi:
        msi_addr_ = (msi_addr_ & 0xFFFFFFFFull) | (v << 32);
        break;
      case reg::kCmdProducer:
        cmd_producer_ = uint32_t(v);
        if (cmd_listener_) cmd_listener_->command_doorbell(cmd_producer_);
        break;
      case reg::kFaultRingLo:
        fault_ring_ = (fault_ring_ & ~0xFFFFFFFFull) | uint32_t(v);
        break;
      case reg::kFaultRingHi:
        fault_ring_ = (fault_ring_ & 0xFFFFFFFFull) | (v << 32);
        break;
      case reg::kFaultConsumer:
        // Taken records only: a consumer past the producer, or going backwards, is ignored.
        if (uint32_t(v) - fault_consumer_ <= fault_producer_ - fault_consumer_) {
          fault_consumer_ = uint32_t(v);
          if (cmd_listener_) cmd_listener_->fault_consumer(fault_consumer_);
        }
        break;
    }
    return;
  }
  const uint32_t qpn = uint32_t(r.base / reg::kQpPage);
  QpRegs& q = qp_[r.base / reg::kQpPage];
  switch (r.base % reg::kQpPage) {
    case reg::kSqDoorbell:
      q.sq_db = v;
      if (listener_) listener_->sq_doorbell(qpn, v);
      break;
    case reg::kRqDoorbell:
      q.rq_db = v;
      if (listener_) listener_->rq_doorbell(qpn, v);
      break;
    case reg::kCqDoorbell:
      q.cq_db = v;
      if (listener_) listener_->cq_doorbell(qpn, v);
      break;
  }
}

}  // namespace rnic
