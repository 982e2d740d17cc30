#include "models/rnic/firmware/firmware.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "models/common/log.h"
#include "models/rnic/abi/commands.h"

namespace rnic {

Firmware::Firmware(sc_core::sc_module_name n, const FirmwareConfig& cfg, uint32_t cq_count,
                   RnicDmac& dmac, RnicRegs& regs, Ports ports, const ProbeFn& probe,
                   StatRegistry& stats, const std::string& g)
    : sc_core::sc_module(n),
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      vector_(reg::cmd_vector(cq_count)),
      fault_vector_(reg::fault_vector(cq_count)),
      dmac_(dmac),
      regs_(regs),
      ports_(ports),
      mark_(probe),
      commands_(stats.group(g).counter("commands", "commands", "commands the firmware completed")),
      errors_(stats.group(g).counter("command_errors", "commands",
                                     "commands completed with an error result")),
      bad_doorbells_(stats.group(g).counter(
          "bad_doorbells", "writes",
          "command producer writes ignored (backwards, or more than the queue's slots)")),
      busy_cycles_(
          stats.group(g).counter("busy_cycles", "cycles", "cycles the firmware's processor ran")),
      local_ops_(stats.group(g).counter("local_ops", "WRs",
                                        "fast registrations and local invalidations done")),
      extent_switches_(stats.group(g).counter(
          "extent_switches", "switches",
          "scatter-gather extent switches the firmware made (extent_switch firmware)")),
      page_faults_(stats.group(g).counter(
          "page_faults", "faults", "engines' page faults on on-demand regions (each parks one)")),
      fault_records_(stats.group(g).counter("fault_records", "records",
                                            "page-fault records written into the host's ring")),
      fault_resumes_(stats.group(g).counter("fault_resumes", "operations",
                                            "parked operations resumed by ODP_MAP or FREE_STAG")) {
  regs_.set_command_listener(this);
  if (cfg.extent_switch == "firmware") {
    switch_ = std::make_unique<ExtentSwitchXlat>(
        ports_.xlat, eq_, clk_, uint64_t(cfg.extent_switch_cycles), extent_switches_);
    switch_->occupy = [this](uint64_t c, std::function<void()> done) {
      occupy(c, std::move(done));
    };
  }
}

void Firmware::command_doorbell(uint32_t producer) {
  const uint32_t posted = producer - taken_;
  if (int32_t(posted) < 0 || producer - done_ > reg::kCmdSlots) {
    log::warn("{}: command producer {} (taken {}, completed {}): ignored", name(), producer, taken_,
              done_);
    ++bad_doorbells_;
    return;
  }
  for (; taken_ != producer; ++taken_) {
    const uint8_t* s = regs_.cmd_slot(taken_);
    uint32_t w[16];
    std::memcpy(w, s, sizeof(w));
    Cmd c;
    c.seq = taken_ + 1;
    c.op = w[0] & 0xFF;
    c.flags = w[0] & ~0xFFu;
    std::copy(w + 1, w + 16, c.a.begin());
    mark_(CoreProbe::kCommand, 0, now_ps());
    cmds_.push_back(std::move(c));
  }
  kick();
}

Firmware::Cmd* Firmware::find(uint32_t seq) {
  for (std::deque<Cmd>* q : {&cmds_, &ops_})
    for (Cmd& c : *q)
      if (c.seq == seq) return &c;
  return nullptr;
}

void Firmware::local_op(uint32_t qpn, uint32_t pd, const Wqe& w, EventQueue& to,
                        std::function<void(uint8_t)> done) {
  Cmd c;
  c.seq = op_seq_++;
  c.local = true;
  c.op = w.opcode;
  c.pd = pd;
  c.w = w;
  c.to = &to;
  c.reply = std::move(done);
  ops_.push_back(std::move(c));
  kick();
}

uint64_t Firmware::handler_cycles(const Cmd& c) const {
  if (c.local) return uint64_t(cfg_.mr_cycles);
  switch (c.op) {
    case abi::kCmdCreateCq:
    case abi::kCmdDestroyCq:
      return uint64_t(cfg_.cq_cycles);
    case abi::kCmdCreateQp:
    case abi::kCmdModifyQp:
    case abi::kCmdDestroyQp:
      return uint64_t(cfg_.qp_cycles);
    case abi::kCmdWriteStag:
    case abi::kCmdInvalidateStag:
    case abi::kCmdLoadPbl:
    case abi::kCmdFreeStag:
    case abi::kCmdRegMr:
    case abi::kCmdAllocFastMr:
    case abi::kCmdOdpMap:
      return uint64_t(cfg_.mr_cycles);
    case abi::kCmdOdpUnmap:
      return uint64_t(cfg_.mr_cycles) +
             uint64_t(abi::OdpUnmap::decode(c.a.data()).count) * uint64_t(cfg_.pbl_entry_cycles);
    default:
      return 0;  // refused at dispatch
  }
}

bool Firmware::list_of(const Cmd& c, List* l) const {
  if (c.local) {
    if (c.w.opcode != abi::kOpFastRegMr) return false;
    auto it = fast_.find(abi::stag_index(c.w.invalidate_rkey));
    *l = {it == fast_.end() ? 0 : it->second.pbl_first, c.w.sge[0].lkey, c.w.sge[0].addr, false};
    return true;
  }
  if (c.op == abi::kCmdLoadPbl) {
    const auto m = abi::LoadPbl::decode(c.a.data());
    *l = {m.first, m.count, m.list, m.extents};
    return true;
  }
  if (c.op == abi::kCmdRegMr) {
    const auto m = abi::RegMr::decode(c.a.data());
    *l = {m.stag.pbl_first, m.stag.pbl_count, m.list, m.extents()};
    return true;
  }
  if (c.op == abi::kCmdOdpMap) {
    const auto m = abi::OdpMap::decode(c.a.data());
    *l = {m.first, m.count, m.list, false};
    return true;
  }
  return false;
}

uint64_t Firmware::entry_cycles(const Cmd& c) const {
  List l;
  list_of(c, &l);
  return uint64_t(l.count) * uint64_t(l.extents ? cfg_.extent_entry_cycles : cfg_.pbl_entry_cycles);
}

// The processor takes its next piece of work: one at a time, the oldest command's; pipelined, a
// command whose list has arrived first, else the oldest command not yet started.
void Firmware::kick() {
  if (busy_) return;
  if (!switch_q_.empty()) {  // the datapath's extent switches first
    auto [cycles, done] = std::move(switch_q_.front());
    switch_q_.pop_front();
    busy_ = true;
    busy_cycles_ += cycles;
    eq_.at(edge(cycles), [this, done = std::move(done)] {
      busy_ = false;
      done();
      retire();
      kick();
    });
    return;
  }
  Cmd* next = nullptr;
  if (!ops_.empty() && (ops_.front().stage == Stage::kNew || ops_.front().stage == Stage::kData))
    next = &ops_.front();
  if (next || cmds_.empty()) {
  } else if (!cfg_.pipelined) {
    if (cmds_.front().stage == Stage::kNew || cmds_.front().stage == Stage::kData)
      next = &cmds_.front();
  } else {
    for (Cmd& c : cmds_)
      if (!next && c.stage == Stage::kData) next = &c;
    for (Cmd& c : cmds_)
      if (!next && c.stage == Stage::kNew) next = &c;
  }
  if (!next) return;
  busy_ = true;
  const uint32_t seq = next->seq;
  const bool handler = next->stage == Stage::kNew;
  const uint64_t cycles =
      handler ? uint64_t(cfg_.dispatch_cycles) + handler_cycles(*next) : entry_cycles(*next);
  busy_cycles_ += cycles;
  eq_.at(edge(cycles), [this, seq, handler] {
    busy_ = false;
    if (handler)
      handler_done(seq);
    else
      entries_done(seq);
    retire();
    kick();
  });
}

void Firmware::handler_done(uint32_t seq) {
  Cmd& c = *find(seq);
  c.stage = Stage::kReady;
  List l;
  if (!list_of(c, &l)) return;  // no list: its table writes come at completion
  if (c.local) {
    // A fast registration: an STag allocated for it in the QP's PD, 1 to max_pages pages.
    auto it = fast_.find(abi::stag_index(c.w.invalidate_rkey));
    // ... and not valid now: it must be invalidated first (as Linux siw refuses it).
    const SmtEntry* cur = ports_.xlat.entry(abi::stag_index(c.w.invalidate_rkey));
    if (it == fast_.end() || it->second.pd != c.pd ||
        (cur && cur->state == SmtEntry::State::kValid)) {
      c.result = abi::kCqeLocProtError;
      return;
    }
    if (l.count == 0 || l.count > it->second.max_pages) {
      c.result = abi::kCqeLocLenError;
      return;
    }
  } else if (c.op == abi::kCmdOdpMap &&
             (abi::OdpMap::decode(c.a.data()).flags & abi::OdpMap::kFailed)) {
    return;  // nothing to load: the driver could not page the range in
  } else if (l.count == 0 || uint64_t(l.first) + l.count > ports_.xlat.pbl_entries()) {
    c.result = EINVAL;
    return;
  } else if (c.op == abi::kCmdRegMr && l.addr == 0 &&
             abi::RegMr::decode(c.a.data()).stag.type == abi::kStagOnDemand) {
    c.data.assign(uint64_t(l.count) * 8, 0);  // every page absent: nothing to read
    c.stage = Stage::kData;
    return;
  }
  c.stage = Stage::kDma;
  dmac_.read(l.addr, l.count * (l.extents ? 16u : 8u),
             [this, seq](DmacStatus st, std::vector<uint8_t>&& d) {
               Cmd& c = *find(seq);
               if (st != DmacStatus::kOk) {
                 c.result = c.local ? uint32_t(abi::kCqeLocQpOpError) : uint32_t(EIO);
                 c.stage = Stage::kReady;
                 retire();
               } else {
                 c.data = std::move(d);
                 c.stage = Stage::kData;
               }
               kick();
             });
}

void Firmware::entries_done(uint32_t seq) { find(seq)->stage = Stage::kReady; }

// Completes the ready commands at the head of the queue, in order, and the ready local
// operations at the head of theirs.
void Firmware::retire() {
  while (!ops_.empty() && ops_.front().stage == Stage::kReady) {
    Cmd& c = ops_.front();
    const uint8_t st = c.result ? uint8_t(c.result) : apply_local(c);
    if (st) ++errors_;
    ++local_ops_;
    c.to->at(now_ps(), [reply = std::move(c.reply), st] { reply(st); });
    ops_.pop_front();
  }
  while (!cmds_.empty() && cmds_.front().stage == Stage::kReady) {
    Cmd& c = cmds_.front();
    const uint32_t result = c.result ? c.result : apply(c);
    ++commands_;
    if (result) {
      ++errors_;
      log::debug("{}: command {} (op {}) failed: errno {}", name(), c.seq - 1, c.op, result);
    }
    regs_.complete_command(c.seq - 1, reg::cmd_done_word(c.seq, c.op, result, c.value));
    ++done_;
    mark_(CoreProbe::kCommandDone, 0, now_ps());
    if ((c.flags & reg::kCmdFlagInterrupt) && regs_.raise(reg::kIntCommand) && regs_.msi_addr())
      dmac_.msi(regs_.msi_addr(), vector_);
    cmds_.pop_front();
  }
}

namespace {
SmtEntry smt_entry(const abi::WriteStag& w) {
  SmtEntry e;
  e.state = SmtEntry::State::kValid;
  e.key = w.key;
  e.type = SmtEntry::Type(w.type);
  e.access = w.access;
  e.pd = w.pd;
  e.base_to = w.base_to;
  e.length = w.length;
  e.pbl_first = w.pbl_first;
  e.pbl_count = w.pbl_count;
  e.page_shift = w.page_shift;
  e.first_page_offset = w.first_page_offset;
  e.phys_base = w.phys_base;
  return e;
}
std::vector<PblEntry> pbl_entries(const std::vector<uint8_t>& d, uint32_t count, bool extents) {
  const uint32_t stride = extents ? 16 : 8;
  std::vector<PblEntry> e(count);
  for (uint32_t i = 0; i < count; ++i) {
    std::memcpy(&e[i].addr, d.data() + uint64_t(i) * stride, 8);
    if (extents) std::memcpy(&e[i].len, d.data() + uint64_t(i) * stride + 8, 8);
  }
  return e;
}
}  // namespace

// The command's table writes, through the tables' write ports; its result.
uint32_t Firmware::apply(const Cmd& c) {
  const uint32_t* a = c.a.data();
  auto ok = [](bool b) { return b ? 0u : uint32_t(EINVAL); };
  switch (c.op) {
    case abi::kCmdCreateCq: {
      const auto m = abi::CreateCq::decode(a);
      return ok(ports_.cqs.create(m.cqn, m.ring, m.entries));
    }
    case abi::kCmdDestroyCq:
      return ok(ports_.cqs.destroy(abi::DestroyCq::decode(a).cqn));
    case abi::kCmdCreateQp:
      return ok(ports_.qps.create_qp(abi::CreateQp::decode(a)));
    case abi::kCmdModifyQp:
      return ok(ports_.qps.modify_qp(abi::ModifyQp::decode(a)));
    case abi::kCmdDestroyQp:
      return ok(ports_.qps.destroy_qp(abi::DestroyQp::decode(a).qpn));
    case abi::kCmdWriteStag: {
      const auto w = abi::WriteStag::decode(a);
      return ok(ports_.xlat.write_smt(w.index, smt_entry(w)));
    }
    case abi::kCmdInvalidateStag:
      return ok(ports_.xlat.invalidate(abi::InvalidateStag::decode(a).stag));
    case abi::kCmdFreeStag: {
      const uint32_t index = abi::FreeStag::decode(a).index;
      if (!ports_.xlat.free(index)) return EINVAL;
      fast_.erase(index);
      if (auto it = odp_.find(index); it != odp_.end()) {
        // Operations parked on it try again and meet the freed STag.
        resume(it->second.pbl_first, it->second.pbl_count, true);
        odp_.erase(it);
      }
      if (switch_) switch_->forget(index);
      return 0;
    }
    case abi::kCmdAllocFastMr: {
      const auto m = abi::AllocFastMr::decode(a);
      if (m.max_pages == 0 || uint64_t(m.pbl_first) + m.max_pages > ports_.xlat.pbl_entries())
        return EINVAL;
      SmtEntry e;
      e.state = SmtEntry::State::kInvalid;
      e.pd = m.pd;
      e.pbl_first = m.pbl_first;
      if (!ports_.xlat.write_smt(m.index, e)) return EINVAL;
      fast_[m.index] = {m.pd, m.pbl_first, m.max_pages};
      return 0;
    }
    case abi::kCmdLoadPbl: {
      const auto l = abi::LoadPbl::decode(a);
      return ok(ports_.xlat.write_pbl(l.first, pbl_entries(c.data, l.count, l.extents)));
    }
    case abi::kCmdRegMr: {
      const auto r = abi::RegMr::decode(a);
      const std::vector<PblEntry> e = pbl_entries(c.data, r.stag.pbl_count, r.extents());
      if (!ports_.xlat.write_pbl(r.stag.pbl_first, e)) return EINVAL;
      if (!ports_.xlat.write_smt(r.stag.index, smt_entry(r.stag))) return EINVAL;
      if (r.stag.type == abi::kStagOnDemand)
        odp_[r.stag.index] = {r.stag.base_to, r.stag.first_page_offset, r.stag.pbl_first,
                              r.stag.pbl_count};
      if (switch_ && r.extents()) {
        std::vector<uint64_t> lengths;
        for (const PblEntry& p : e) lengths.push_back(p.len);
        switch_->learn(r.stag.index, r.stag.base_to, lengths);
      }
      return 0;
    }
    case abi::kCmdOdpMap: {
      const auto m = abi::OdpMap::decode(a);
      const bool ok = !(m.flags & abi::OdpMap::kFailed);
      if (ok && !ports_.xlat.write_pbl(m.first, pbl_entries(c.data, m.count, false))) return EINVAL;
      resume(m.first, m.count, ok);
      return 0;
    }
    case abi::kCmdOdpUnmap: {
      const auto m = abi::OdpUnmap::decode(a);
      return ok(m.count && ports_.xlat.write_pbl(m.first, std::vector<PblEntry>(m.count)));
    }
    default:
      return EINVAL;
  }
}

void Firmware::page_fault(uint32_t qpn, const XlatFault& f, bool write, EventQueue& to,
                          std::function<void(bool)> resume_fn) {
  ++page_faults_;
  mark_(CoreProbe::kPageFault, qpn, now_ps());
  const auto it = odp_.find(abi::stag_index(f.stag));
  if (it == odp_.end() || f.to < it->second.base_to) {
    // Not an on-demand region (any more): the operation tries again and meets what it is.
    to.at(now_ps(), [r = std::move(resume_fn)] { r(true); });
    return;
  }
  const OdpMr& m = it->second;
  const uint32_t entry = m.pbl_first + uint32_t((f.to - m.base_to + m.first_page_offset) >> 12);
  bool reported = false;
  for (const Waiter& w : waiting_) reported |= w.entry == entry;
  waiting_.push_back({entry, &to, std::move(resume_fn)});
  if (reported) return;
  if (!regs_.fault_ring()) {  // no driver takes faults: the operation fails
    resume(entry, 1, false);
    return;
  }
  faults_.push_back(
      {qpn, f.stag, write ? reg::kFaultWrite : 0, f.to, f.end, edge(uint64_t(cfg_.fault_cycles))});
  if (faults_.size() == 1) eq_.at(faults_.front().due, [this] { write_faults(); });
}

// Writes the records that are due while the ring has room, then raises the interrupt.
void Firmware::occupy(uint64_t cycles, std::function<void()> done) {
  switch_q_.emplace_back(cycles, std::move(done));
  kick();
}

void Firmware::write_faults() {
  const uint64_t now = now_ps();
  bool wrote = false;
  while (!faults_.empty() && faults_.front().due <= now &&
         regs_.fault_producer() - regs_.fault_consumer() < reg::kFaultSlots) {
    const FaultRecord& r = faults_.front();
    const uint32_t seq = regs_.fault_producer() + 1;
    std::vector<uint8_t> b(reg::kFaultRecordBytes);
    std::memcpy(b.data(), &seq, 4);
    std::memcpy(b.data() + 4, &r.qpn, 4);
    std::memcpy(b.data() + 8, &r.stag, 4);
    std::memcpy(b.data() + 12, &r.flags, 4);
    std::memcpy(b.data() + 16, &r.to, 8);
    std::memcpy(b.data() + 24, &r.end, 8);
    dmac_.write(
        regs_.fault_ring() + uint64_t((seq - 1) % reg::kFaultSlots) * reg::kFaultRecordBytes,
        std::move(b));
    regs_.fault_written();
    ++fault_records_;
    mark_(CoreProbe::kFaultRecord, r.qpn, now);
    faults_.pop_front();
    wrote = true;
  }
  if (wrote && regs_.raise(reg::kIntPageFault) && regs_.msi_addr())
    dmac_.msi(regs_.msi_addr(), fault_vector_);
  if (!faults_.empty() && faults_.front().due > now)
    eq_.at(faults_.front().due, [this] { write_faults(); });
}

void Firmware::fault_consumer(uint32_t) {
  if (!faults_.empty() && faults_.front().due <= now_ps()) write_faults();
}

void Firmware::resume(uint32_t first, uint32_t count, bool ok) {
  for (size_t i = 0; i < waiting_.size();) {
    Waiter& w = waiting_[i];
    if (w.entry < first || w.entry - first >= count) {
      ++i;
      continue;
    }
    ++fault_resumes_;
    mark_(CoreProbe::kFaultResume, w.entry, now_ps());
    w.to->at(now_ps(), [r = std::move(w.resume), ok] { r(ok); });
    waiting_.erase(waiting_.begin() + long(i));
  }
}

// A local operation's table writes; its CQE status.
uint8_t Firmware::apply_local(const Cmd& c) {
  const Wqe& w = c.w;
  if (w.opcode == abi::kOpLocalInv)
    return ports_.xlat.invalidate(w.invalidate_rkey, &c.pd) ? uint8_t(abi::kCqeSuccess)
                                                            : uint8_t(abi::kCqeLocProtError);
  if (w.opcode != abi::kOpFastRegMr) return abi::kCqeLocQpOpError;
  const uint32_t index = abi::stag_index(w.invalidate_rkey);
  const FastMr& f = fast_.at(index);  // checked by the handler
  const uint32_t pages = w.sge[0].lkey;
  SmtEntry e;
  e.state = SmtEntry::State::kValid;
  e.key = abi::stag_key(w.invalidate_rkey);
  e.type = SmtEntry::Type::kMemoryRegion;
  e.access = uint8_t(w.rkey);
  e.pd = f.pd;
  e.base_to = w.remote_addr;
  e.length = w.sge[0].length;
  e.pbl_first = f.pbl_first;
  e.pbl_count = pages;
  e.page_shift = 12;
  e.first_page_offset = uint32_t(w.remote_addr & 4095);
  if (!ports_.xlat.write_pbl(f.pbl_first, pbl_entries(c.data, pages, false)) ||
      !ports_.xlat.write_smt(index, e))
    return abi::kCqeLocProtError;
  return abi::kCqeSuccess;
}

std::string Firmware::dump_state() const {
  std::string s = fmt::format("  {}: {} commands taken, {} completed, processor {}\n", name(),
                              taken_, done_, busy_ ? "busy" : "idle");
  static const char* const kStage[] = {"new", "dma", "data", "ready"};
  for (const Cmd& c : cmds_)
    s += fmt::format("    command {} op {} {}\n", c.seq - 1, c.op, kStage[int(c.stage)]);
  return s;
}

}  // namespace rnic
