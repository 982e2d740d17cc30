#include "models/rnic/xlat/xlat_ports.h"

namespace rnic {

namespace {

template <int W>
void put(sc_dt::sc_bv<W>& v, int lo, int bits, uint64_t x) {
  for (int i = 0; i < bits; ++i) v[lo + i] = sc_dt::sc_logic(bool((x >> i) & 1));
}
template <int W>
uint64_t get(const sc_dt::sc_bv<W>& v, int lo, int bits) {
  uint64_t x = 0;
  for (int i = 0; i < bits; ++i) x |= uint64_t(v[lo + i].to_bool()) << i;
  return x;
}

}  // namespace

SmtWord smt_pack(const SmtEntry& e) {
  SmtWord w;
  put(w, 0, 2, uint64_t(e.state));
  put(w, 2, 2, uint64_t(e.type));
  put(w, 4, 8, e.key);
  put(w, 12, 32, e.pd);
  put(w, 44, 8, e.access);
  put(w, 52, 64, e.base_to);
  put(w, 116, 64, e.length);
  put(w, 180, 32, e.pbl_first);
  put(w, 212, 32, e.pbl_count);
  put(w, 244, 6, e.page_shift);
  put(w, 250, 64, e.first_page_offset);
  put(w, 314, 64, e.phys_base);
  return w;
}

SmtEntry smt_unpack(const SmtWord& w) {
  SmtEntry e;
  e.state = SmtEntry::State(get(w, 0, 2));
  e.type = SmtEntry::Type(get(w, 2, 2));
  e.key = uint8_t(get(w, 4, 8));
  e.pd = uint32_t(get(w, 12, 32));
  e.access = uint8_t(get(w, 44, 8));
  e.base_to = get(w, 52, 64);
  e.length = get(w, 116, 64);
  e.pbl_first = uint32_t(get(w, 180, 32));
  e.pbl_count = uint32_t(get(w, 212, 32));
  e.page_shift = uint8_t(get(w, 244, 6));
  e.first_page_offset = get(w, 250, 64);
  e.phys_base = get(w, 314, 64);
  return e;
}

PblWord pbl_pack(const PblEntry& e) {
  PblWord w;
  put(w, 0, 64, e.addr);
  put(w, 64, 64, e.len);
  return w;
}

PblEntry pbl_unpack(const PblWord& w) { return {get(w, 0, 64), get(w, 64, 64)}; }

XlatPinModel::XlatPinModel(sc_core::sc_module_name n, size_t smt_entries, size_t pbl_entries,
                           XlatTiming t)
    : sc_core::sc_module(n), smt_(smt_entries), pbl_(pbl_entries), xlat_(smt_, pbl_, t) {
  SC_HAS_PROCESS(XlatPinModel);
  SC_METHOD(on_clock);
  sensitive << clk.pos();
  dont_initialize();
}

void XlatPinModel::on_clock() {
  ++cycle_;
  if (rst.read()) {
    out_.clear();
    busy_ = presenting_ = false;
    req_ready.write(false);
    rsp_valid.write(false);
    return;
  }
  // The beat on the pins since the last edge is taken if rsp_ready was high.
  if (presenting_ && rsp_ready.read()) {
    if (out_.front().last) busy_ = false;
    out_.pop_front();
    presenting_ = false;
  }
  // A request accepted at this edge sees the tables as written before it.
  if (req_valid.read() && req_ready.read()) {
    XlatRequest r;
    r.stag = req_stag.read();
    r.to = req_to.read();
    r.len = req_len.read();
    r.access = uint8_t(req_access.read());
    r.pd = req_pd.read();
    const XlatResult x = xlat_.translate(r);
    busy_ = true;
    for (const XlatChunk& c : x.chunks) out_.push_back({cycle_ + c.cycle, c.pa, c.len, 0, false});
    if (x.status != XlatStatus::kOk) {  // the error beat ends the burst
      const uint64_t pa = x.status == XlatStatus::kPageFault ? x.fault_to : 0;
      out_.push_back({cycle_ + x.cycles, pa, 0, uint8_t(x.status), true});
    } else if (x.chunks.empty()) {
      out_.push_back({cycle_ + x.cycles, 0, 0, 0, true});
    } else {
      out_.back().last = true;
    }
  }
  if (smt_we.read() && smt_addr.read() < smt_.size())
    smt_.at(smt_addr.read()) = smt_unpack(smt_wdata.read());
  if (pbl_we.read() && pbl_addr.read() < pbl_.size())
    pbl_.at(pbl_addr.read()) = pbl_unpack(pbl_wdata.read());
  presenting_ = !out_.empty() && out_.front().due <= cycle_;
  rsp_valid.write(presenting_);
  if (presenting_) {
    const Beat& b = out_.front();
    rsp_pa.write(b.pa);
    rsp_len.write(b.len);
    rsp_status.write(b.status);
    rsp_last.write(b.last);
  }
  req_ready.write(!busy_);
}

static_assert(xlat_ports_match<XlatPinModel>(), "the pin model has the rnic_xlat port list");

}  // namespace rnic
